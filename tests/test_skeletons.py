"""Every untouched skeleton in labs/ builds, runs and reports not_implemented: never garbage.

Needs the lab binaries built (make test builds them first). On a machine without a CUDA device
the GPU labs cannot reach their code, so those cases are skipped with that reason.
"""
import json
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
LABS = sorted(d for d in os.listdir(os.path.join(ROOT, "labs")) if d[:2].isdigit())

EXIT_NOT_IMPLEMENTED = 3
EXIT_NO_DEVICE = 5


def run_lab(tree, lab, *args):
    binary = os.path.join(BUILD, tree, lab, "scan")
    if not os.path.exists(binary):
        raise unittest.SkipTest(f"{binary} is not built (run make test)")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


class Skeletons(unittest.TestCase):
    """One test per lab, added below, so a skip on one lab does not hide the others."""


def _not_implemented_test(lab):
    def test(self):
        for n in ("1000", "0"):
            p = run_lab("labs", lab, "--n", n, "--reps", "0", "--json")
            if p.returncode == EXIT_NO_DEVICE:
                self.skipTest("no CUDA device")
            self.assertEqual(p.returncode, EXIT_NOT_IMPLEMENTED, f"{lab} n={n}: {p.stdout}{p.stderr}")
            lines = p.stdout.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{lab}: expected one JSON line, got {p.stdout!r}")
            report = json.loads(lines[0])
            self.assertEqual(report["status"], "not_implemented")
            self.assertEqual(report["lab"], lab)
    return test


def _same_lab_test(lab):
    def test(self):
        """The skeleton and the reference declare the same lab: id, variants, shape, sizes."""
        a = run_lab("labs", lab, "--list")
        b = run_lab("solutions", lab, "--list")
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
    return test


for _lab in LABS:
    setattr(Skeletons, f"test_{_lab}_reports_not_implemented", _not_implemented_test(_lab))
    setattr(Skeletons, f"test_{_lab}_declares_same_lab_as_solution", _same_lab_test(_lab))


if __name__ == "__main__":
    unittest.main()
