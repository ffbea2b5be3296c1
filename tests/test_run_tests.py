"""tests/run_tests.py, the summary that make test prints: counts from a Criterion TAP report, the
failed tests with their first messages, and the per-lab lines of make test TEST_SRC=labs.
A fake Criterion binary (a shell script that writes a TAP file) stands in for a real one.
"""
import contextlib
import importlib.util
import io
import os
import stat
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("run_tests", os.path.join(ROOT, "tests", "run_tests.py"))
run_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_tests)

TAP = """TAP version 13
1..5
# Criterion v2.4.1
#
# Running 5 tests from kernel
ok - kernel::huge_n extended suite  # SKIP extended suite only (make test-extended)
ok - kernel::descriptor LAB is well formed (0.00s)
not ok - kernel::small_values edge sizes (0.10s)
  ---
  assertions: 4
  failures:
  - test_lab.c:38: |+
      Assertion failed: 03_kogge_stone/double_buffer n=513 dist=small seed=1: wrong: out[512] expected 9, got 7
  - test_lab.c:38: |+
      Assertion failed: 03_kogge_stone/double_buffer n=33 dist=small seed=1: wrong: out[32] expected 5, got 4
  ...
not ok - kernel::tile_totals unexpected signal after test_lab.c:140[----] crashed
ok - kernel::all_ones edge sizes  # SKIP 03_kogge_stone: not implemented yet (labs/03_kogge_stone/scan.cu still returns LAB_NOT_IMPLEMENTED)
"""


def fake_binary(folder, name, tap_text, status):
    """A script that writes tap_text to the --tap= file it is given and exits with status."""
    path = os.path.join(folder, name)
    with open(path + ".tap.txt", "w") as f:
        f.write(tap_text)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nfor a; do case $a in --tap=*) cp '%s.tap.txt' \"${a#--tap=}\";; esac; done\n"
                "exit %d\n" % (path, status))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class Summary(unittest.TestCase):
    def test_counts_failures_and_first_messages(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "labs"))
            b = fake_binary(os.path.join(d, "labs"), "kernels_03_kogge_stone", TAP, 1)
            self.assertEqual(run_tests.suite_name(b), "labs: kernels_03_kogge_stone")
            with contextlib.redirect_stderr(io.StringIO()):  # a green make test shows no such lines
                p, f, s, reasons, failures = run_tests.run_criterion(b)
        self.assertEqual((p, f, s), (1, 2, 2))
        self.assertIn("extended suite only (make test-extended)", reasons)
        names = [n for n, _ in failures]
        self.assertEqual(names, ["labs: kernels_03_kogge_stone: kernel::small_values",
                                 "labs: kernels_03_kogge_stone: kernel::tile_totals"])
        # the first failure in the order the test met it (Criterion lists the latest first)
        self.assertEqual(failures[0][1][0], "03_kogge_stone/double_buffer n=33 dist=small seed=1: "
                         "wrong: out[32] expected 5, got 4")
        self.assertEqual(failures[1][1], ["crashed (a signal) after test_lab.c:140"])

    def test_a_binary_that_dies_without_a_report_fails(self):
        with tempfile.TemporaryDirectory() as d:
            b = fake_binary(d, "kernels_01_serial", "TAP version 13\n", 4)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):  # a green make test shows no such lines
                p, f, s, _, failures = run_tests.run_criterion(b)
        self.assertEqual((p, f, s), (0, 1, 0))
        self.assertIn("exited with status 4", failures[0][1][0])
        self.assertIn("kernels_01_serial: exited with status 4 without a failing test", err.getvalue())

    def test_a_python_failure_is_named_by_its_exception_line(self):
        trace = ("Traceback (most recent call last):\n  File \"t.py\", line 3, in test_x\n"
                 "    self.assertEqual(p.returncode, 0, out)\n"
                 "AssertionError: 1 != 0 : | table |\n| row 1 |\ngrade: [ 9.0 s] done\n")
        self.assertEqual(run_tests.exception_line(trace), "AssertionError: 1 != 0 : | table |")
        self.assertEqual(run_tests.exception_line("KeyError: 'x'"), "KeyError: 'x'")
        self.assertEqual(run_tests.exception_line("odd\ntext"), "text")

    def test_lab_verdicts(self):
        ni = "03_kogge_stone: not implemented yet (labs/03_kogge_stone/scan.cu still returns ...)"
        rows = [("labs: kernels_01_serial", 8, 0, 2, ["extended suite only"]),
                ("labs: kernels_02_naive", 6, 2, 0, []),
                ("labs: kernels_03_kogge_stone", 1, 0, 10, [ni] * 10),
                ("labs: kernels_04_brent_kung", 1, 0, 13, ["no CUDA device: no driver"] * 13),
                ("labs: kernels_07_hierarchical", 15, 0, 3,
                 ["07_hierarchical: variants not written yet: reduce_then_scan (they still ...)"] * 2
                 + ["extended suite only"])]
        lines = run_tests.lab_verdicts(rows)
        self.assertRegex(lines[0], r"labs/01_serial\s+passed \(8 tests, 2 skipped\)")
        self.assertRegex(lines[1], r"labs/02_naive\s+FAILED \(2 of 8 tests")
        self.assertRegex(lines[2], r"labs/03_kogge_stone\s+not implemented yet")
        self.assertRegex(lines[3], r"labs/04_brent_kung\s+NOT RUN: no CUDA device")
        self.assertRegex(lines[4], r"labs/07_hierarchical\s+passed \(15 tests, 3 skipped\); "
                                   r"not written yet: reduce_then_scan$")


if __name__ == "__main__":
    unittest.main()
