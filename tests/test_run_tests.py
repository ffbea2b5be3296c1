"""tests/run_tests.py, the summary that make test prints: counts from a Criterion TAP report, the
failed tests with their first messages, and the per-lab lines of make test TEST_SRC=labs.
A fake Criterion binary (a shell script that writes a TAP file) stands in for a real one.
"""
import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

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
ok - kernel::all_ones edge sizes  # SKIP 03_kogge_stone: not implemented yet \
(labs/03_kogge_stone/scan.cu still returns LAB_NOT_IMPLEMENTED)
"""


def fake_binary(folder, name, tap_text, status, output=""):
    """A script that writes tap_text to the --tap= file it is given, prints output (Criterion's
    own, with the tests' stderr) and exits with status."""
    path = os.path.join(folder, name)
    with open(path + ".tap.txt", "w") as f:
        f.write(tap_text)
    with open(path + ".out.txt", "w") as f:
        f.write(output)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nfor a; do case $a in --tap=*) cp '%s.tap.txt' \"${a#--tap=}\";; esac; done\n"
                "cat '%s.out.txt' >&2\nexit %d\n" % (path, path, status))
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
        with mock.patch.dict(os.environ, {"LAB_TEST_PART": "compact"}):  # make test ... PART=compact
            [line] = run_tests.lab_verdicts(rows[:1])
        self.assertTrue(line.endswith("passed (8 tests, 2 skipped) [PART=compact: only its variants]"), line)


# A kernel test that died of CPU mode's report (exit code 4, no assertion), one that crashed
# after printing a CUDA error, and one that failed an assertion while the others ran beside it.
DIED_TAP = """TAP version 13
1..3
not ok - kernel::oob  (0.01s)
  ---
  assertions: 0
  failures:
  ...
not ok - kernel::crash unexpected signal after test_lab.c:88
not ok - kernel::wrong  (0.01s)
  ---
  assertions: 1
  failures:
  - test_lab.c:38: |+
      Assertion failed: out[3] expected 4, got 5
  ...
"""
OOB = ("CPU mode: kernel ks_kernel<true>, block (3,0,0), thread (255,0,0): out-of-bounds "
       "shared-memory index 256 in the s __shared__ array of 256 elements at scan.cu:41 "
       "(CPU_SCHED_SEED=1)")
DIED_OUTPUT = f"""[----] Criterion v2.4.1
[====] Running 3 tests from kernel:
[RUN ] kernel::oob
[RUN ] kernel::wrong
unrelated noise of kernel::wrong
{OOB}
tests/lab_cases.c:70: CUDA error in 'cudaDeviceSynchronize()': {OOB} (cudaErrorIllegalAddress)
[----] test_lab.c:38: Assertion Failed
[FAIL] kernel::wrong: (0.01s)
[FAIL] kernel::oob: (0.01s)
[RUN ] kernel::crash
tests/lab_cases.c:70: CUDA error in 'cudaMalloc(&p, n)': out of memory (cudaErrorMemoryAllocation)
[----] test_lab.c:88: Unexpected signal caught below this line!
[FAIL] kernel::crash: CRASH!
[====] Synthesis: Tested: 3 | Passing: 0 | Failing: 3 | Crashing: 1
"""


class Reports(unittest.TestCase):
    """A test that dies of a CUDA error or a CPU-mode report shows that report in the summary,
    not "(no message)" (the report is on the test's stderr, not in the TAP file)."""

    def summary(self, binary):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = type("Args", (), {"src": "solutions", "no_python": True, "binaries": [binary]})
            with tempfile.TemporaryFile("w+") as log:
                code = run_tests.run_all(args, log)
        return code, out.getvalue()

    def test_a_died_test_shows_its_report(self):
        with tempfile.TemporaryDirectory() as d:
            b = fake_binary(d, "kernels_03_kogge_stone", DIED_TAP, 1, DIED_OUTPUT)
            code, text = self.summary(b)
        self.assertEqual(code, 1)
        self.assertNotIn("(no message)", text)
        self.assertIn(f"kernels_03_kogge_stone: kernel::oob: {OOB}\n", text)
        self.assertIn("kernels_03_kogge_stone: kernel::crash: crashed (a signal) after test_lab.c:88; "
                      "it printed: tests/lab_cases.c:70: CUDA error in 'cudaMalloc(&p, n)': out of "
                      "memory (cudaErrorMemoryAllocation)\n", text)
        self.assertIn("kernels_03_kogge_stone: kernel::wrong: out[3] expected 4, got 5\n", text)

    def test_printed_lines_keep_to_their_test(self):
        found = run_tests.printed_lines(DIED_OUTPUT)
        self.assertEqual(found["kernel::oob"], OOB)
        # kernel::wrong ran beside kernel::oob: the report is in its window too (the assertion's
        # message wins for it); nothing of kernel::crash's window leaks into the others
        self.assertNotIn("cudaMalloc", found["kernel::oob"] + found["kernel::wrong"])
        self.assertEqual(run_tests.printed_lines("[RUN ] k::quiet\n[FAIL] k::quiet: (0.00s)\n"), {})

    def test_a_test_that_printed_nothing_still_says_so(self):
        tap = "TAP version 13\n1..1\nnot ok - kernel::silent  (0.00s)\n"
        with tempfile.TemporaryDirectory() as d:
            b = fake_binary(d, "kernels_02_naive", tap, 1, "[RUN ] kernel::silent\n"
                            "[FAIL] kernel::silent: (0.00s)\n")
            _, text = self.summary(b)
        self.assertIn("kernels_02_naive: kernel::silent: (no message)", text)

    def test_a_real_criterion_test_that_exits_shows_its_report(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        src = (
            "#include <criterion/criterion.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
            "Test(kernel, passes) { cr_assert(1); }\n"
            "Test(kernel, exits) { fprintf(stderr, \"noise\\n%s\\n\", \"" + OOB + "\"); exit(4); }\n"
            "Test(kernel, aborts) { fputs(\"CUDA error cudaErrorLaunchFailure in k\\n\", stderr); "
            "abort(); }\n")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "t.c"), "w") as f:
                f.write(src)
            b = os.path.join(d, "kernels_real")
            p = subprocess.run([cc, os.path.join(d, "t.c"), "-o", b, "-lcriterion"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                self.skipTest(f"Criterion is not installed: {p.stderr.strip()[:200]}")
            # one Criterion worker: with several, the two tests that end at once write to the
            # same stderr side by side, and neither's lines can be told apart (a CI run on a
            # loaded machine once showed each with the other's); what is tested here is how one
            # test's report is found in its own output
            with mock.patch.dict(os.environ, {"CRITERION_JOBS": "1"}):
                code, text = self.summary(b)
        self.assertEqual(code, 1)
        self.assertNotIn("(no message)", text)
        self.assertIn(f"kernels_real: kernel::exits: {OOB}\n", text)
        self.assertRegex(text, r"kernels_real: kernel::aborts: crashed \(a signal\) after \S+; it "
                               r"printed: CUDA error cudaErrorLaunchFailure in k\n")


# Python test modules for run_unittests: a pass, a skip with its reason and a printed line; a
# failure and an error; and one whose process dies in the middle of it.
FAKE_MODULES = {
    "test_a": "import unittest\n"
              "class A(unittest.TestCase):\n"
              "    def test_one(self):\n        print('printed by test_a')\n"
              "    def test_two(self):\n        pass\n"
              "    @unittest.skip('no sanitizer here')\n"
              "    def test_three(self):\n        pass\n",
    "test_b": "import unittest\n"
              "class B(unittest.TestCase):\n"
              "    def test_fails(self):\n        self.assertEqual(1, 2, 'one is not two')\n"
              "    def test_errors(self):\n        raise KeyError('x')\n"
              "    def test_passes(self):\n        pass\n",
    "test_c": "import os, unittest\n"
              "class C(unittest.TestCase):\n"
              "    def test_dies(self):\n        os._exit(3)\n",
}


# A module whose setUpClass skips, one whose setUpClass fails, a test with two failing subTests
# (one failed test) and two that pass.
SKIPPED_SET_UP = (
    "import unittest\n"
    "class Skipped(unittest.TestCase):\n"
    "    @classmethod\n"
    "    def setUpClass(cls):\n        raise unittest.SkipTest('no GPU here')\n"
    "    def test_never(self):\n        pass\n"
    "class Broken(unittest.TestCase):\n"
    "    @classmethod\n"
    "    def setUpClass(cls):\n        raise OSError('no folder')\n"
    "    def test_never(self):\n        pass\n"
    "class Runs(unittest.TestCase):\n"
    "    def test_after(self):\n        pass\n"
    "    def test_sub(self):\n"
    "        for i in (1, 2):\n"
    "            with self.subTest(i=i):\n                self.assertEqual(i, 0)\n"
    "    def test_passes(self):\n        pass\n")


class Workers(unittest.TestCase):
    """The Python suites in worker processes: the modules balanced across them, a module that
    must run alone after them, and one summary (counts, skip reasons, failures in discovery
    order) as a single process would give, plus a worker that died; the log holds every worker's
    report."""

    def test_balance_puts_the_longest_first_on_the_least_loaded(self):
        mods = [("t", m) for m in ("test_a", "test_b", "test_c", "test_d", "test_e")]
        seconds = {"test_a": 100, "test_b": 60, "test_c": 50, "test_d": 5}  # test_e: unknown (1 s)
        # a 100, b 60, c 50 (on b: 110), d 5 (on a: 105), e 1 (on a: 106)
        groups = run_tests.balance(mods, seconds, 2)
        self.assertEqual([[m for _, m in g] for g in groups], [["test_a", "test_d", "test_e"], ["test_b", "test_c"]])
        self.assertEqual(run_tests.balance(mods[:1], seconds, 4), [mods[:1]])  # no empty worker
        self.assertEqual(run_tests.balance(mods, seconds, 1), [mods])

    def test_the_module_that_runs_alone_goes_beside_the_others_on_cores_of_its_own_on_a_big_machine(self):
        mods = [("t", m) for m in ("test_a", "test_b", "test_c", "test_load")]
        seconds = {"test_a": 100, "test_b": 60, "test_c": 50}
        big = list(range(16))

        def whole(modules):
            return {}  # no module here splits

        (phase,), units = run_tests.plan_phases(mods, seconds, None, ("test_load",), big, whole)
        self.assertEqual(units, mods)
        self.assertEqual(phase[-1], ([("t", "test_load")], [14, 15]))  # its own two cores, the last
        self.assertEqual([cpus for _, cpus in phase[:-1]], [big[:14]] * 3)  # the others kept off them
        self.assertEqual(sorted(m for g, _ in phase[:-1] for _, m in g), ["test_a", "test_b", "test_c"])
        for cpus in (list(range(run_tests.ALONE_BESIDE_CORES - 1)), [0, 1], None):  # small, or cannot pin
            phases, _ = run_tests.plan_phases(mods, seconds, 2, ("test_load",), cpus, whole)
            self.assertEqual([[[m for _, m in g] for g, _ in p] for p in phases],
                             [[["test_a"], ["test_b", "test_c"]], [["test_load"]]])  # after the others
            self.assertTrue(all(c is None for p in phases for _, c in p))
        # none alone
        self.assertEqual(len(run_tests.plan_phases(mods[:3], seconds, 2, ("test_load",), big, whole)[0]), 1)

    def test_the_modules_that_mostly_wait_get_a_worker_of_their_own_beside_the_others(self):
        mods = [("t", m) for m in ("test_a", "test_b", "test_slurm", "test_c", "test_load")]
        seconds = {"test_a": 100, "test_b": 60, "test_c": 50, "test_slurm": 50}

        def whole(modules):
            return {}

        phases, units = run_tests.plan_phases(mods, seconds, 2, ("test_load",), [0, 1], whole, ("test_slurm",))
        self.assertEqual(units, mods)
        self.assertEqual([[[m for _, m in g] for g, _ in p] for p in phases],
                         [[["test_a"], ["test_b", "test_c"], ["test_slurm"]], [["test_load"]]])
        (phase,), _ = run_tests.plan_phases(mods, seconds, None, ("test_load",), list(range(16)), whole,
                                            ("test_slurm",))
        self.assertEqual(phase[-2], ([("t", "test_slurm")], list(range(14))))  # with the others' cores
        self.assertEqual(phase[-1], ([("t", "test_load")], [14, 15]))

    def test_a_worker_runs_on_the_cores_it_is_given(self):
        if not run_tests.allowed_cores():
            self.skipTest("no sched_setaffinity here")
        core = run_tests.allowed_cores()[-1]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "test_where.py"), "w") as f:
                f.write("import os, unittest\nclass W(unittest.TestCase):\n    def test_where(self):\n"
                        "        print('cores', sorted(os.sched_getaffinity(0)))\n")
            w = run_tests.start_worker(1, 1, [(d, "test_where")], d, True, [core])
            w["proc"].wait()
            done, failure = run_tests.finish_worker(w)
            w["part"].seek(0)
            self.assertIn(f"cores [{core}]", w["part"].read())
        self.assertEqual(failure, [])

    def test_a_skipped_or_failed_set_up_class_counts_no_test_as_run(self):
        # a setUpClass that raises SkipTest (or fails) is recorded under a stand-in that testsRun
        # does not count: the module's line must say 0 passed, not -1
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "test_skips.py"), "w") as f:
                f.write(SKIPPED_SET_UP)
            log, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stderr(err):
                p, f, s, reasons, failures = run_tests.run_unittests(log, 1, None, dirs=(d,), alone=())
        # passed: test_after and test_passes; failed: Broken's setUpClass and test_sub's two
        # subTests (each a failure of its own, as listed); skipped: Skipped's setUpClass
        self.assertEqual((p, f, s), (2, 3, 1))
        self.assertEqual(reasons, ["no GPU here"])
        self.assertEqual(sorted(n for n, _ in failures), ["python: setUpClass (test_skips.Broken)",
                                                          "python: test_skips.Runs.test_sub (i=1)",
                                                          "python: test_skips.Runs.test_sub (i=2)"])
        self.assertRegex(err.getvalue(), r"python unittest \[1/1\]: 2 passed, 3 failed, 1 skipped")

    def test_workers_add_up_to_one_summary(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in FAKE_MODULES.items():
                with open(os.path.join(d, name + ".py"), "w") as f:
                    f.write(text)
            record = os.path.join(d, "seconds.json")
            log, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stderr(err):
                p, f, s, reasons, failures = run_tests.run_unittests(log, 2, record, dirs=(d,), alone=("test_a",))
            with open(record) as rec:
                # the modules and their classes; test_c never ended
                self.assertEqual(sorted(json.load(rec)), ["test_a", "test_a.A", "test_b", "test_b.B"])
        self.assertEqual((p, f, s), (3, 3, 1))
        self.assertEqual(reasons, ["no sanitizer here"])
        self.assertEqual([n for n, _ in failures[:2]], ["python: test_b.B.test_fails", "python: test_b.B.test_errors"])
        self.assertEqual(failures[0][1], ["AssertionError: 1 != 2 : one is not two"])
        self.assertRegex(failures[2][0], r"^python: python unittest \[[12]/3\]$")
        self.assertEqual(failures[2][1], ["exited with status 3 before it finished test_c"])
        self.assertIn("printed by test_a", log.getvalue())
        self.assertIn("AssertionError: 1 != 2 : one is not two", log.getvalue())
        lines = re.findall(r"==> python unittest \[(\d)/3\]: (\d) passed, (\d) failed, (\d) skipped", err.getvalue())
        self.assertEqual(sorted(line[1:] for line in lines[:2]), [("0", "1", "0"), ("1", "2", "0")])  # test_c, test_b
        self.assertEqual(lines[2], ("3", "2", "0", "1"))  # test_a, after both
        self.assertIn("==> python unittest [3/3]: test_a\n", log.getvalue())


# A module long enough to be split: a class with class fixtures (its tests stay together), a long
# class without (its tests go apart) and a short one; one of its tests fails, one skips.
SPLIT_MODULE = (
    "import unittest\n"
    "class Fixture(unittest.TestCase):\n"
    "    @classmethod\n"
    "    def setUpClass(cls):\n        cls.ready = True\n"
    "    def test_f1(self):\n        self.assertTrue(self.ready)\n"
    "    def test_f2(self):\n        self.assertTrue(self.ready)\n"
    "class Long(unittest.TestCase):\n"
    "    def test_l1(self):\n        pass\n"
    "    def test_l2(self):\n        self.assertEqual(1, 2, 'split or not')\n"
    "    @unittest.skip('skipped apart')\n"
    "    def test_l3(self):\n        pass\n"
    "class Short(unittest.TestCase):\n"
    "    def test_s(self):\n        pass\n")


class Split(unittest.TestCase):
    """A module longer than a worker's share runs as its classes, and a long class without class
    fixtures as its tests, in several workers; the summary is the one a whole module gives."""

    def test_a_long_module_splits_by_class_and_a_long_class_without_fixtures_by_test(self):
        mods = [("t", "test_big"), ("t", "test_small")]
        classes = {"test_big": [("Fixture", ["test_f1", "test_f2"], True),
                                ("Long", ["test_l1", "test_l2", "test_l3"], False),
                                ("Short", ["test_s"], False)]}
        asked = []

        def classes_of(modules):
            asked.append(modules)
            return classes

        seconds = {"test_big": 90, "test_small": 10, "test_big.Long": 60}
        units, est = run_tests.split_units(mods, seconds, 2, classes_of)  # share: 50 s
        self.assertEqual(asked, [[("t", "test_big")]])  # only the module over its share is looked into
        self.assertEqual([u for _, u in units], ["test_big.Fixture", "test_big.Long.test_l1", "test_big.Long.test_l2",
                                                 "test_big.Long.test_l3", "test_big.Short", "test_small"])
        self.assertEqual(est["test_big.Fixture"], 30)  # 2 of the module's 6 tests
        self.assertEqual(est["test_big.Long.test_l2"], 20)  # a third of its class's 60
        self.assertEqual(seconds, {"test_big": 90, "test_small": 10, "test_big.Long": 60})  # not changed
        # a class with fixtures stays whole however long; nothing splits when each fits a share
        units, _ = run_tests.split_units(mods, dict(seconds, **{"test_big.Fixture": 80}), 2, classes_of)
        self.assertIn(("t", "test_big.Fixture"), units)
        units, _ = run_tests.split_units(mods, seconds, 1, classes_of)
        self.assertEqual(units, mods)
        # a module that cannot be split (module_classes left it out) runs whole
        self.assertEqual(run_tests.split_units(mods, seconds, 2, lambda m: {})[0], mods)
        # with no time of its own, a class or test listed in PART_SHARES gets that part of its module's
        shares = {"test_big.Long": 0.8, "test_big.Long.test_l1": 0.5}
        with mock.patch.dict(run_tests.PART_SHARES, shares):
            units, est = run_tests.split_units(mods, {"test_big": 90, "test_small": 10}, 2, classes_of)
        self.assertEqual((est["test_big.Long"], est["test_big.Long.test_l1"], est["test_big.Long.test_l2"]),
                         (72, 45, 24))

    def test_module_classes_lists_classes_and_tests_in_order_and_refuses_what_it_cannot_split(self):
        with tempfile.TemporaryDirectory() as d:
            texts = {"test_split_listed": SPLIT_MODULE,
                     "test_split_fixture": "import unittest\ndef setUpModule():\n    pass\n"
                                           "class A(unittest.TestCase):\n    def test_a(self):\n        pass\n",
                     "test_split_broken": "import no_such_module_here\n"}
            for name, text in texts.items():
                with open(os.path.join(d, name + ".py"), "w") as f:
                    f.write(text)
            found = run_tests.module_classes([(d, m) for m in texts])
        self.assertEqual(found, {"test_split_listed": [("Fixture", ["test_f1", "test_f2"], True),
                                                       ("Long", ["test_l1", "test_l2", "test_l3"], False),
                                                       ("Short", ["test_s"], False)]})
        self.assertNotIn("test_split_listed", sys.modules)  # imported in a process of its own

    def test_a_split_module_gives_the_summary_of_a_whole_one(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "test_split_run.py"), "w") as f:
                f.write(SPLIT_MODULE)
            with open(os.path.join(d, "test_split_other.py"), "w") as f:
                f.write("import unittest\nclass O(unittest.TestCase):\n    def test_o(self):\n        pass\n")
            record = os.path.join(d, "seconds.json")
            with open(record, "w") as f:  # last time: the module far over a share, Long most of it
                json.dump({"test_split_run": 100, "test_split_other": 1, "test_split_run.Long": 90}, f)
            runs = {}
            for jobs in (1, 3):
                log, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stderr(err):
                    runs[jobs] = run_tests.run_unittests(log, jobs, record if jobs == 3 else None,
                                                         dirs=(d,), alone=())
                if jobs == 3:
                    self.assertIn("==> python unittest: test_split_run.Long.test_l2 took", log.getvalue())
                    self.assertIn("==> python unittest: test_split_run.Fixture took", log.getvalue())
            with open(record) as f:
                recorded = json.load(f)
        self.assertEqual(runs[1][:4], runs[3][:4])  # counts and skip reasons
        self.assertEqual(runs[3][:3], (5, 1, 1))
        self.assertEqual(runs[1][4], runs[3][4])  # the failures, named and in order
        self.assertEqual([n for n, _ in runs[3][4]], ["python: test_split_run.Long.test_l2"])
        # the split module's time is what its units took together; its parts are kept
        parts = [recorded[k] for k in ("test_split_run.Fixture", "test_split_run.Long.test_l1",
                                       "test_split_run.Long.test_l2", "test_split_run.Long.test_l3",
                                       "test_split_run.Short")]
        self.assertAlmostEqual(recorded["test_split_run"], sum(parts), places=1)
        self.assertEqual(recorded["test_split_run.Long"], 90)  # a unit of one test is not its whole class


if __name__ == "__main__":
    unittest.main()
