"""Similarity (grade.py --similarity, classroom/similarity.py) with Debian's sim_c: a near-copy
with other names and layout is found, with its matched lines; two untouched skeletons are not
alike (the skeleton's text is taken out); a copy of the reference is found against it; an own
solution is not. Without sim_c: one warning line, the report says so, exit code 0. Nothing
changes a grade. RealClass grades a small generated class in CPU mode (labs 01 and 02) with
--report --similarity, end to end (a minute or two)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
sys.path.insert(0, GRADER)
sys.path.insert(0, HERE)

import classgen  # noqa: E402
from classroom import similarity, settings  # noqa: E402
from gradelib import config as configmod  # noqa: E402

GRADE = os.path.join(GRADER, "grade.py")
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
# its own: modules may run at once
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "similarity")
HAVE_SIM = shutil.which("sim_c") is not None
LAB = "02_naive"
SETTINGS = dict(settings.SIMILARITY_DEFAULTS)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def sources(d, **texts):
    """{student: path} of lab 02 files with the given texts ("skeleton"/"reference": the course's)."""
    out = {}
    for student, text in texts.items():
        path = os.path.join(d, student + ".cu")
        if text in ("skeleton", "reference"):
            shutil.copyfile(os.path.join(ROOT, "labs" if text == "skeleton" else "solutions", LAB, "scan.cu"), path)
        else:
            with open(path, "w") as f:
                f.write(text)
        out[student] = path
    return out


@unittest.skipUnless(HAVE_SIM, "sim_c not found (Debian: apt-get install similarity-tester)")
class Pairs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp()
        src = sources(cls.d, own=classgen.OWN_02, copy=classgen.COPY_02, sk1="skeleton", sk2="skeleton",
                      ref="reference")
        cls.lab = similarity.compare_lab(LAB, src, os.path.join(ROOT, "labs", LAB, "scan.cu"),
                                         os.path.join(ROOT, "solutions", LAB, "scan.cu"), SETTINGS)
        cls.pairs = {(p["a"], p["b"]): p for p in cls.lab["pairs"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d)

    def test_a_near_copy_is_found_with_its_lines(self):
        p = self.pairs[("copy", "own")]
        self.assertGreaterEqual(min(p["a_in_b"], p["b_in_a"]), 90)
        text = "\n".join(m["a_text"] for m in p["matches"])
        self.assertIn("acc = acc + (unsigned)(*q)", text)  # the copy's own words, quoted
        self.assertIn(["copy", "own"], self.lab["groups"])

    def test_the_skeleton_is_no_match(self):
        self.assertEqual(self.lab["too_short"], ["sk1", "sk2"])
        self.assertFalse([k for k in self.pairs if "sk1" in k or "sk2" in k])

    def test_a_copy_of_the_reference_is_found_and_own_work_is_not(self):
        self.assertEqual(self.pairs[("ref", similarity.REFERENCE)]["a_in_b"], 100)
        self.assertNotIn(("own", similarity.REFERENCE), self.pairs)
        self.assertNotIn(("own", "ref"), self.pairs)

    def test_the_threshold_is_the_configs(self):
        d = tempfile.mkdtemp()
        try:
            half = classgen.OWN_02.replace("    LAUNCH_CHECK();", "    for (int k = 0; k < 3; k++) { blocks += k * 7; }"
                                           "\n    blocks = blocks % 999 + 1;\n    LAUNCH_CHECK();")
            src = sources(d, a=classgen.OWN_02, b=half)
            skel, ref = os.path.join(ROOT, "labs", LAB, "scan.cu"), os.path.join(ROOT, "solutions", LAB, "scan.cu")
            low = similarity.compare_lab(LAB, src, skel, ref, dict(SETTINGS, threshold_percent=50))
            self.assertEqual([(p["a"], p["b"]) for p in low["pairs"]], [("a", "b")])
            high = similarity.compare_lab(LAB, src, skel, ref, dict(SETTINGS, threshold_percent=100))
            top = max(low["pairs"][0]["a_in_b"], low["pairs"][0]["b_in_a"])
            self.assertEqual(high["pairs"] != [], top >= 100)
        finally:
            shutil.rmtree(d)

    def test_copies_of_the_reference_are_one_group_and_only_shown_pairs_get_lines(self):
        d = tempfile.mkdtemp()
        try:
            src = sources(d, a="reference", b="reference", c="reference", p=classgen.OWN_02, q=classgen.OWN_02)
            lab = similarity.compare_lab(LAB, src, os.path.join(ROOT, "labs", LAB, "scan.cu"),
                                         os.path.join(ROOT, "solutions", LAB, "scan.cu"), dict(SETTINGS, max_pairs=2))
            got = [(p["a"], p["b"]) for p in lab["pairs"]]
            self.assertEqual(got, [("p", "q")] + [(x, similarity.REFERENCE) for x in "abc"])  # students first
            self.assertEqual(lab["through_reference"], 3)  # a-b, a-c, b-c: alike through the reference
            self.assertEqual([bool(p["matches"]) for p in lab["pairs"]], [True, True, False, False])
            self.assertEqual(lab["groups"], [[similarity.REFERENCE, "a", "b", "c"], ["p", "q"]])
        finally:
            shutil.rmtree(d)


class Config(unittest.TestCase):
    def test_bad_similarity_settings_are_refused(self):
        base = json.load(open(os.path.join(GRADER, "config.json")))
        for bad, words in (({"threshold_percent": 101}, "at most 100"), ({"min_run": 0}, "similarity.min_run"),
                           ({"nope": 1}, "unknown key")):
            with self.assertRaises(configmod.ConfigError) as e:
                configmod.Config(dict(base, similarity=bad))
            self.assertIn(words, str(e.exception))
        self.assertEqual(configmod.Config(dict(base, similarity={"threshold_percent": 75}))
                         .similarity["threshold_percent"], 75)


class CommandLine(unittest.TestCase):
    """grade.py --merge --report --similarity on a class without grading it (results written by
    hand): the results are byte-for-byte the same afterwards; without sim_c, a warning."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.subs = os.path.join(self.d, "subs")
        classgen.make_class(self.subs, 6)
        self.res = self.subs + "-results"
        os.makedirs(self.res)
        for s in os.listdir(self.subs):
            with open(os.path.join(self.res, s + ".json"), "w") as f:
                json.dump({"student": s, "status": "graded", "points": 1.0, "max_points": 2.0, "labs": []}, f)
        self.page = os.path.join(self.d, "class.html")

    def tearDown(self):
        shutil.rmtree(self.d)

    def grade(self, env=None):
        return subprocess.run([sys.executable, GRADE, "--submissions", self.subs, "--merge", "--labs", "01", "02",
                               "--report", self.page, "--similarity"], capture_output=True, text=True, timeout=120,
                              env=env)

    def snapshot(self):
        return {f: read(os.path.join(self.res, f), "rb") for f in sorted(os.listdir(self.res)) if f.endswith(".json")}

    @unittest.skipUnless(HAVE_SIM, "sim_c not found")
    def test_pairs_in_the_report_and_no_grade_changed(self):
        before = self.snapshot()
        r = self.grade()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.snapshot(), before)
        page = read(self.page)
        for want in ("s01-own and s02-copy: 100%", "alike: s01-own, s02-copy",
                     "alike: (reference), s00-full, s03-broken, s04-full",  # s03: the reference and a typo
                     "too little own code to compare: s05-skeleton"):
            self.assertTrue(want in page, want)

    def test_without_sim_c_a_warning_and_the_report(self):
        bindir = os.path.join(self.d, "bin")
        os.makedirs(bindir)
        os.symlink(sys.executable, os.path.join(bindir, "python3"))
        r = self.grade(env=dict(os.environ, PATH=bindir))
        self.assertEqual(r.returncode, 0, r.stderr)
        warn = [ln for ln in r.stderr.splitlines() if "sim_c not found" in ln]
        self.assertEqual(len(warn), 1, r.stderr)
        self.assertIn("warning: similarity not checked", warn[0])
        self.assertTrue("similarity not checked: sim_c not found" in read(self.page))


class RealClass(unittest.TestCase):
    """A class of five graded in CPU mode, labs 01 and 02, with --report --similarity (nvcc hidden:
    what is tested here is the report, not nvcc's build, which CPU mode adds where it is installed)."""
    FULL_SUITE = "a class of five graded whole, its report and similarity written"

    def test_graded_class_report(self):
        d = tempfile.mkdtemp()
        try:
            subs = os.path.join(d, "subs")
            classgen.make_class(subs, 5)  # full, own, copy, broken (compile error), full
            page = os.path.join(d, "class.html")
            r = subprocess.run([sys.executable, GRADE, "--submissions", subs, "--cpu", "--labs", "01", "02",
                                "--work", WORK, "--seed", "3", "--jobs", "2", "--report", page]
                               + (["--similarity"] if HAVE_SIM else []), capture_output=True, text=True, timeout=1200,
                               # as on Gradescope: CPU mode's build only
                               env=dict(os.environ, NVCC="/nonexistent/nvcc"))
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            text = read(page)
            self.assertIn("<td>build failed</td><td class='num'>1</td>".replace("'", '"'),
                          text.replace("'", '"'))  # s03's compile error, one student
            self.assertIn("<td>s03-broken</td><td>graded</td><td>60</td>", text)
            if HAVE_SIM:
                self.assertIn("alike: s01-own, s02-copy", text)
            self.assertEqual(text.count('<svg class="histogram"'), 2)
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
