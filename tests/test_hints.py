"""Tests of the hints (labs/NN_name/HINTS.md) and of make hint / tools/hint.py (unittest, standard
library, no GPU).

Every lab has a HINTS.md whose every <details> block is a hint tools/hint.py reads, numbered
1, 2, 3, ...; at least three tiers per lab, lab 08's look-back split into several near-code
steps and lab 10 tiered per job. tools/hint.py prints the next unseen hint, hint N on request,
"no more hints" after the last, forgets on N=reset, and refuses a bad LAB or N with one line
and exit code 2 (a lab without hints: 3).
"""
import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("hint", os.path.join(ROOT, "tools", "hint.py"))
hint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hint)

MIN_HINTS = {"08_decoupled_lookback": 5, "10_applications": 8}


def run(argv, root=ROOT):
    """(exit code, stdout, stderr) of tools/hint.py's main."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = hint.main(argv, root=root, out=out)
    return code, out.getvalue(), err.getvalue()


class HintFiles(unittest.TestCase):
    def test_every_lab_has_tiered_hints(self):
        for lab in hint.labs():
            with self.subTest(lab=lab):
                path = os.path.join(ROOT, "labs", lab, "HINTS.md")
                self.assertTrue(os.path.exists(path), "labs/%s/HINTS.md is missing" % lab)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                hints = hint.parse_hints(text)
                self.assertEqual(len(hints), text.count("<details>"), "labs/%s/HINTS.md: a "
                                 "<details> block that make hint cannot read (want "
                                 "'<details><summary>Hint K — title</summary>')" % lab)
                self.assertGreaterEqual(len(hints), MIN_HINTS.get(lab, 3),
                                        "labs/%s/HINTS.md has %d hints" % (lab, len(hints)))
                for number, title, body in hints:
                    self.assertTrue(title and body, "labs/%s/HINTS.md: hint %d is empty" % (lab, number))
                self.assertNotIn("near code", hints[0][1], "labs/%s: hint 1 should be the idea" % lab)

    def test_parse_refuses_gaps(self):
        block = "<details><summary>Hint %d — t</summary>\n\nbody\n</details>\n"
        self.assertEqual(len(hint.parse_hints(block % 1 + block % 2)), 2)
        with self.assertRaises(ValueError):
            hint.parse_hints(block % 1 + block % 3)


class MakeHint(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.state)

    def call(self, *args):
        return run(list(args) + ["--state", self.state])

    def test_one_at_a_time_then_no_more(self):
        with open(os.path.join(ROOT, "labs", "03_kogge_stone", "HINTS.md"), encoding="utf-8") as f:
            n = len(hint.parse_hints(f.read()))
        for k in range(1, n + 1):
            code, out, _ = self.call("03")
            self.assertEqual(code, 0)
            self.assertTrue(out.startswith("Lab 03, hint %d of %d — " % (k, n)), out)
            self.assertEqual(out.count("Hint"), 0, "one hint only, without its <details> markup")
        code, out, _ = self.call("03")
        self.assertEqual(code, 0)
        self.assertIn("no more hints", out)
        code, out, _ = self.call("03_kogge_stone", "2")  # again on request
        self.assertTrue(out.startswith("Lab 03, hint 2 of"), out)
        self.assertEqual(self.call("03", "reset")[0], 0)
        self.assertTrue(self.call("03")[1].startswith("Lab 03, hint 1 of"))

    def test_n_counts_as_seen_per_lab(self):
        self.call("08", "3")
        self.assertTrue(self.call("08")[1].startswith("Lab 08, hint 4 of"))
        self.assertTrue(self.call("07")[1].startswith("Lab 07, hint 1 of"), "state is per lab")

    def test_bad_input_is_one_line_and_exit_2(self):
        for args in (["99"], [""], ["03", "0"], ["03", "9"], ["03", "x"]):
            with self.subTest(args=args):
                code, out, err = self.call(*args)
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertTrue(err.startswith("make hint: "), err)

    def test_missing_hints_exit_3(self):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "labs", "01_x"))
        self.assertEqual(run(["01", "--state", self.state], root=root)[0], 3)

    def test_make_target(self):
        if not shutil.which("make"):
            self.skipTest("no make")
        env = dict(os.environ, HINT_STATE=self.state)  # not the checkout's build/hints
        proc = subprocess.run(["make", "--no-print-directory", "hint", "LAB=05", "N=1"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("Lab 05, hint 1 of"), proc.stdout)
        proc = subprocess.run(["make", "--no-print-directory", "hint", "LAB=77"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, env=env)
        self.assertFalse(os.path.exists(os.path.join(self.state, "77")))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("make hint: no lab matches LAB=77", proc.stderr)


if __name__ == "__main__":
    unittest.main()
