"""make bench-grader (grader/bench_grader.py) on a small class in CPU mode: the mix of
submissions, one row per submission with its points, and the class's line."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "bench_grader.py")


class BenchGrader(unittest.TestCase):
    def test_a_small_class_in_cpu_mode(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "bench.json")
            r = subprocess.run([sys.executable, SCRIPT, "--n", "4", "--labs", "01", "02", "--cpu", "--json", out,
                                "--work", os.path.join(d, "work")], capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(out) as f:
                doc = json.load(f)
        kinds = [row["kind"] for row in doc["rows"]]
        self.assertEqual(kinds, ["full", "broken", "full", "partial"])
        points = {row["kind"]: row["points"] for row in doc["rows"]}
        self.assertEqual(points["full"], 120.0)     # both labs from solutions/
        self.assertEqual(points["partial"], 60.0)   # lab 02 left as the skeleton
        self.assertLess(points["broken"], 120.0)    # lab 02 from a buggy fixture
        self.assertIn("02_naive: ", doc["rows"][1]["broken"])
        self.assertEqual(doc["summary"]["graded"], 4)
        self.assertIn("class: 4/4 graded in", r.stdout)


if __name__ == "__main__":
    unittest.main()
