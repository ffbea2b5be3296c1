"""The lab binaries as a user meets them: exit codes and one-line messages for bad input.

Uses the 01_serial reference (host only, so this runs on any machine) and, where a device is
present, 02_naive.
"""
import json
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
SERIAL = os.path.join(BUILD, "solutions", "01_serial", "scan")
NAIVE = os.path.join(BUILD, "solutions", "02_naive", "scan")


def run(binary, *args):
    if not os.path.exists(binary):
        raise unittest.SkipTest(f"{binary} is not built (run make test)")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


class BadInput(unittest.TestCase):
    def check_usage(self, *args):
        p = run(SERIAL, *args)
        self.assertEqual(p.returncode, 2, f"{args}: {p.stdout}{p.stderr}")
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{args}: one line expected, got {p.stderr!r}")
        return lines[0]

    def test_negative_n(self):
        self.assertIn("negative", self.check_usage("--n", "-5"))

    def test_non_numeric_n(self):
        self.assertIn("whole number", self.check_usage("--n", "lots"))

    def test_absurd_n(self):
        self.assertIn("absurdly large", self.check_usage("--n", "2^45"))

    def test_unknown_flag(self):
        self.assertIn("unknown option", self.check_usage("--fast"))

    def test_missing_value(self):
        self.assertIn("needs a value", self.check_usage("--seed"))

    def test_unknown_variant(self):
        self.assertIn("unknown variant", self.check_usage("--variant", "quantum"))


class Runs(unittest.TestCase):
    def test_serial_correct_with_timing(self):
        p = run(SERIAL, "--n", "2^20+7", "--reps", "20", "--json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["n"], 2**20 + 7)
        self.assertEqual(r["reps"], 20)
        self.assertGreater(r["ms"], 0)
        self.assertGreater(r["gbps"], 0)

    def test_serial_overflow_wraps(self):
        p = run(SERIAL, "--n", "100000", "--dist", "large", "--reps", "0")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_help(self):
        p = run(SERIAL, "--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("exit codes", p.stdout)

    def test_gpu_lab_without_device_or_with_one(self):
        p = run(NAIVE, "--n", "4097", "--reps", "0", "--json")
        r = json.loads(p.stdout)
        if p.returncode == 5:
            self.assertEqual(r["status"], "no_device")
            self.assertIn("no CUDA device", r["message"])
            self.skipTest("no CUDA device")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(r["status"], "ok")

    def test_naive_refuses_huge_n(self):
        p = run(NAIVE, "--n", "2^24", "--reps", "0")
        self.assertEqual(p.returncode, 7, p.stdout + p.stderr)
        self.assertIn("--force", p.stdout)


if __name__ == "__main__":
    unittest.main()
