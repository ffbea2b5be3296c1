"""grade.py --receipt and --replay (gradelib/receipt.py): a receipt names the submission, course,
config and seed by their hashes; a replay with the same seed and files matches it, one with a
changed scan.cu or another seed says so. Lab 01 in CPU mode (the speed comparison itself is
compare()'s, tested on receipts made by hand)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import fakes
from gradelib import receipt  # (fakes puts grader/ on the path)

ROOT = os.path.dirname(fakes.GRADER)

BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))


# its CPU-mode grades are not about nvcc's checks
setUpModule, tearDownModule = fakes.nvcc_hidden_module()


def lab(points, speed_points=None, lo=None, hi=None, passed=10):
    sp = {"status": "graded" if speed_points is not None else "not graded", "points": speed_points,
          "ratio": 1.0, "spread": {"points_min": lo, "points_max": hi} if lo is not None else None,
          "rounds": None}
    return {"status": "graded", "points": points, "correctness": [passed, 10], "sanitizer": "clean",
            "speed": sp}


def rec(labs, sub="abc"):
    return {"format": 1, "course_sha256": "c", "config_sha256": "k", "seed_sha256": "s", "mode": "gpu",
            "gpu": {"name": "H100"}, "submission": {k: sub for k in labs}, "labs": labs}


class Compare(unittest.TestCase):
    def test_points_within_the_spread_match(self):
        ok, lines = receipt.compare(rec({"08": lab(100, 30, 29.2, 30)}), rec({"08": lab(99.9, 29.9, 29.9, 30)}))
        self.assertTrue(ok, lines)
        self.assertIn("08: verdicts match; speed within the recorded spread", lines[0])

    def test_points_past_the_spread_and_other_verdicts_differ(self):
        ok, lines = receipt.compare(rec({"08": lab(100, 30, 29.5, 30)}), rec({"08": lab(90, 20, 20, 20)}))
        self.assertFalse(ok)
        self.assertIn("speed outside the recorded spread", lines[0])
        ok, lines = receipt.compare(rec({"08": lab(100, 30, 30, 30)}), rec({"08": lab(50, 30, 30, 30, passed=5)}))
        self.assertFalse(ok)
        self.assertIn("verdicts differ (correctness: [10, 10] then, [5, 10] now)", lines[0])

    def test_another_submission_is_named(self):
        ok, lines = receipt.compare(rec({"08": lab(100)}), rec({"08": lab(100)}, sub="xyz"))
        self.assertFalse(ok)
        self.assertEqual(lines, ["08: the submitted scan.cu differs from the receipt's"])

    def test_the_seed_is_only_hashed(self):
        self.assertNotIn("12345", receipt.seed_sha256(12345))
        self.assertEqual(receipt.seed_sha256(12345), receipt.seed_sha256("12345"))


@unittest.skipUnless(os.path.isdir(os.path.join(BUILD, "judge")) and shutil.which("make"),
                     "needs the judges (make test builds them)")
class Replay(unittest.TestCase):
    def grade(self, src, *extra):
        return subprocess.run([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--src", src, "--cpu",
                               "--labs", "01", "--work", self.work, "--no-sanitizer", *extra],
                              capture_output=True, text=True, timeout=600)

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.work = os.path.join(self.tmp, "work")
        self.src = os.path.join(self.tmp, "src", "01_serial")
        os.makedirs(self.src)
        shutil.copyfile(os.path.join(ROOT, "solutions", "01_serial", "scan.cu"), os.path.join(self.src, "scan.cu"))
        self.receipt = os.path.join(self.tmp, "receipt.json")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_a_replay_matches_and_a_change_is_found(self):
        src = os.path.dirname(self.src)
        r = self.grade(src, "--seed", "41", "--receipt", self.receipt)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        with open(self.receipt) as f:
            got = json.load(f)
        self.assertEqual(got["seed_sha256"], receipt.seed_sha256(41))
        self.assertNotIn("41", json.dumps(got["labs"]))
        r = self.grade(src, "--seed", "41", "--replay", self.receipt)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-2000:])
        self.assertIn("01_serial: verdicts match", r.stdout)
        r = self.grade(src, "--seed", "42", "--replay", self.receipt)
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not the receipt's seed", r.stderr)
        with open(os.path.join(self.src, "scan.cu"), "a") as f:
            f.write("\n/* changed */\n")
        r = self.grade(src, "--seed", "41", "--replay", self.receipt)
        self.assertEqual(r.returncode, 6, r.stdout + r.stderr[-2000:])
        self.assertIn("01_serial: the submitted scan.cu differs", r.stdout)


if __name__ == "__main__":
    unittest.main()
