"""tests/course_plugin.py, what make test adds to pytest: a Criterion binary read through its TAP
report (counts, each failed test's first messages, the report a test that died printed), the
per-lab lines of make test TEST_SRC=labs, the summary, the order and grouping of the work, and the
lone module that runs with no other test beside it. A fake Criterion binary (a shell script that
writes a TAP file) stands in for a real one, except in the last test of Reports.
"""
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import course_plugin  # noqa: E402

TAP = """TAP version 13
1..5
# Criterion v2.4.1
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


def run_pytest(folder, args, env=None):
    """make test's pytest (its ini, the plugin) on args in folder; (exit code, output)."""
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests"), LAB_BUILD_DIR=os.path.join(folder, "build"),
             **(env or {}))
    e.pop("PYTEST_XDIST_WORKER", None)
    p = subprocess.run([sys.executable, "-m", "pytest", "-c", os.path.join(ROOT, "tests", "pytest.ini"),
                        "--rootdir", folder, "-p", "no:cacheprovider", *args], cwd=folder, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


class Tap(unittest.TestCase):
    def test_counts_failures_and_first_messages(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "labs"))
            b = fake_binary(os.path.join(d, "labs"), "kernels_03_kogge_stone", TAP, 1)
            self.assertEqual(course_plugin.suite_name(b), "labs: kernels_03_kogge_stone")
            r = course_plugin.run_criterion(b, os.path.join(d, "out.log"))
        self.assertEqual((r["passed"], r["failed"], r["skipped"]), (1, 2, 2))
        self.assertIn("extended suite only (make test-extended)", r["reasons"])
        self.assertEqual([t for t, _ in r["failures"]], ["kernel::small_values", "kernel::tile_totals"])
        # the first failure in the order the test met it (Criterion lists the latest first)
        self.assertEqual(r["failures"][0][1][0], "03_kogge_stone/double_buffer n=33 dist=small seed=1: "
                         "wrong: out[32] expected 5, got 4")
        self.assertEqual(r["failures"][1][1], ["crashed (a signal) after test_lab.c:140"])

    def test_a_binary_that_dies_without_a_report_fails(self):
        with tempfile.TemporaryDirectory() as d:
            r = course_plugin.run_criterion(fake_binary(d, "kernels_01_serial", "TAP version 13\n", 4),
                                            os.path.join(d, "out.log"))
        self.assertEqual((r["passed"], r["failed"], r["skipped"]), (0, 1, 0))
        self.assertIn("exited with status 4 without a failing test", r["failures"][0][1][0])

    def test_printed_lines_keep_to_their_test(self):
        found = course_plugin.printed_lines(DIED_OUTPUT)
        self.assertEqual(found["kernel::oob"], OOB)
        # kernel::wrong ran beside kernel::oob: the report is in its window too (the assertion's
        # message wins for it); nothing of kernel::crash's window leaks into the others
        self.assertNotIn("cudaMalloc", found["kernel::oob"] + found["kernel::wrong"])
        self.assertEqual(course_plugin.printed_lines("[RUN ] k::quiet\n[FAIL] k::quiet: (0.00s)\n"), {})

    def test_lab_verdicts(self):
        ni = "03_kogge_stone: not implemented yet (labs/03_kogge_stone/scan.cu still returns ...)"

        def row(name, p, f, s, reasons):
            return name, {"passed": p, "failed": f, "skipped": s, "reasons": reasons}
        rows = [row("labs: kernels_01_serial", 8, 0, 2, ["extended suite only"]),
                row("labs: kernels_02_naive", 6, 2, 0, []),
                row("labs: kernels_03_kogge_stone", 1, 0, 10, [ni] * 10),
                row("labs: kernels_04_brent_kung", 1, 0, 13, ["no CUDA device: no driver"] * 13),
                row("labs: kernels_07_hierarchical", 15, 0, 3,
                    ["07_hierarchical: variants not written yet: reduce_then_scan (they still ...)"] * 2
                    + ["extended suite only"])]
        lines = course_plugin.lab_verdicts(rows)
        self.assertRegex(lines[0], r"labs/01_serial\s+passed \(8 tests, 2 skipped\)")
        self.assertRegex(lines[1], r"labs/02_naive\s+FAILED \(2 of 8 tests")
        self.assertRegex(lines[2], r"labs/03_kogge_stone\s+not implemented yet")
        self.assertRegex(lines[3], r"labs/04_brent_kung\s+NOT RUN: no CUDA device")
        self.assertRegex(lines[4], r"labs/07_hierarchical\s+passed \(15 tests, 3 skipped\); "
                                   r"not written yet: reduce_then_scan$")
        with mock.patch.dict(os.environ, {"LAB_TEST_PART": "compact"}):  # make test ... PART=compact
            [line] = course_plugin.lab_verdicts(rows[:1])
        self.assertTrue(line.endswith("passed (8 tests, 2 skipped) [PART=compact: only its variants]"), line)


class Reports(unittest.TestCase):
    """The summary pytest prints with the plugin: a test that died of a CUDA error or a CPU-mode
    report shows that report, not "(no message)" (it is on the test's stderr, not in the TAP
    file); Criterion's tests are counted one by one beside the Python tests."""

    def test_a_died_test_shows_its_report_and_every_test_is_counted(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "labs"))
            b = fake_binary(os.path.join(d, "labs"), "kernels_03_kogge_stone", DIED_TAP, 1, DIED_OUTPUT)
            with open(os.path.join(d, "test_small.py"), "w") as f:
                f.write("import unittest\nclass S(unittest.TestCase):\n"
                        "    def test_passes(self):\n        pass\n"
                        "    def test_skips(self):\n        self.skipTest('no GPU here')\n"
                        "    def test_fails(self):\n        self.assertEqual(1, 2, 'one is not two')\n")
            code, text = run_pytest(d, ["test_small.py", b])
        self.assertEqual(code, 1, text)
        self.assertNotIn("(no message)", text)
        self.assertIn(f"labs: kernels_03_kogge_stone: kernel::oob: {OOB}\n", text)
        self.assertIn("labs: kernels_03_kogge_stone: kernel::crash: crashed (a signal) after test_lab.c:88; "
                      "it printed: tests/lab_cases.c:70: CUDA error in 'cudaMalloc(&p, n)': out of "
                      "memory (cudaErrorMemoryAllocation)\n", text)
        self.assertIn("labs: kernels_03_kogge_stone: kernel::wrong: out[3] expected 4, got 5\n", text)
        self.assertRegex(text, r"test_small.py::S::test_fails: AssertionError: 1 != 2 : one is not two")
        self.assertRegex(text, r"SKIPPED \[1\] .*no GPU here")  # -rs
        self.assertRegex(text, r"labs/03_kogge_stone\s+FAILED \(3 of 3 tests")
        self.assertRegex(text, r"labs: kernels_03_kogge_stone\s+0\s+3\s+0\n")
        self.assertRegex(text, r"python \(tests/, grader/tests/\)\s+1\s+1\s+1\n")
        self.assertTrue(text.rstrip().endswith("summary: 1 passed, 4 failed, 1 skipped"), text[-400:])

    def test_a_green_run_exits_0(self):
        with tempfile.TemporaryDirectory() as d:
            b = fake_binary(d, "kernels_02_naive", "TAP version 13\n1..2\nok - k::a (0.0s)\n"
                            "ok - k::b  # SKIP no CUDA device: none\n", 0)
            code, text = run_pytest(d, [b])
        self.assertEqual(code, 0, text)
        self.assertIn("1 x no CUDA device: none", text)
        self.assertTrue(text.rstrip().endswith("summary: 1 passed, 0 failed, 1 skipped"), text[-400:])

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
            p = subprocess.run([cc, os.path.join(d, "t.c"), "-o", b, "-lcriterion"], capture_output=True, text=True)
            if p.returncode != 0:
                self.skipTest(f"Criterion is not installed: {p.stderr.strip()[:200]}")
            # one Criterion worker: with several, two tests that end at once write to the same
            # stderr side by side; what is tested here is how one test's report is found
            code, text = run_pytest(d, [b], {"CRITERION_JOBS": "1"})
        self.assertEqual(code, 1, text)
        self.assertNotIn("(no message)", text)
        self.assertIn(f"kernels_real: kernel::exits: {OOB}\n", text)
        self.assertRegex(text, r"kernels_real: kernel::aborts: crashed \(a signal\) after \S+; it "
                               r"printed: CUDA error cudaErrorLaunchFailure in k\n")
        self.assertTrue(text.rstrip().endswith("summary: 1 passed, 2 failed, 0 skipped"), text[-400:])


# Each test notes its worker's pid and when it started and ended (in LOG): a module whose class
# has class fixtures, one of two classes, and the lone module.
RECORDER = ("import json, os, time, unittest\nLOG = os.environ['SCHED_LOG']\n"
            "def note(name, wait=0.3):\n    t0 = time.time(); time.sleep(wait)\n"
            "    with open(LOG, 'a') as f:\n"
            "        f.write(json.dumps([name, os.getpid(), t0, time.time()]) + '\\n')\n")
MODULES = {
    "test_short.py": RECORDER + "class F(unittest.TestCase):\n    @classmethod\n"
    "    def setUpClass(cls):\n        cls.ready = True\n"
    + "".join(f"    def test_f{k}(self):\n        note('F.{k}')\n" for k in range(3)),
    "test_long.py": RECORDER + "".join(f"class L{c}(unittest.TestCase):\n" + "".join(
        f"    def test_l{k}(self):\n        note('L{c}.{k}')\n" for k in range(2)) for c in range(2)),
    "test_other.py": RECORDER + "class O(unittest.TestCase):\n    def test_o(self):\n        note('O', 0.6)\n",
    # a module whose classes share nothing: each class is a group of its own
    "test_apart.py": RECORDER + "CLASSES_APART = True\n" + "".join(
        f"class A{c}(unittest.TestCase):\n    def test_a(self):\n        note('A{c}')\n" for c in range(2)),
    "test_load_hangs.py": RECORDER + "class H(unittest.TestCase):\n"
    "    def test_alone(self):\n        note('alone', 1.0)\n",
}


class Schedule(unittest.TestCase):
    """Work goes out longest first by the recorded times, each module whole to one worker, the
    lone module last with nothing beside it."""

    def folder(self, d):
        for name, text in MODULES.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        os.makedirs(os.path.join(d, "build"))
        # the long module took 30 s last time, the lone one 90 s, one class of the apart one 50 s
        seconds = {"test_long.py": 30.0, "test_load_hangs.py": 90.0, "test_other.py": 2.0,
                   "test_apart.py::A1": 50.0}
        with open(os.path.join(d, "build", "test-seconds.json"), "w") as f:
            json.dump(seconds, f)

    def test_order(self):
        with tempfile.TemporaryDirectory() as d:
            self.folder(d)
            code, text = run_pytest(d, ["--collect-only", "-v", *sorted(MODULES)],
                                    {"SCHED_LOG": os.path.join(d, "log")})
        self.assertEqual(code, 0, text)
        modules = [ln.split("::")[0] for ln in text.splitlines() if "::" in ln]
        # the longest first, each module's tests together (each class of the apart module on its
        # own: A1 first by its own time, A0 with an unknown one last but the lone module), the
        # lone module last whatever it took
        self.assertEqual(modules, ["test_apart.py"] + ["test_long.py"] * 4 + ["test_other.py"]
                         + ["test_short.py"] * 3 + ["test_apart.py"] + ["test_load_hangs.py"])
        classes = [ln.split("::")[1] for ln in text.splitlines() if ln.startswith("test_apart.py::")]
        self.assertEqual(classes, ["A1", "A0"])

    def test_each_module_in_one_worker_and_the_lone_module_alone(self):
        if importlib.util.find_spec("xdist") is None:
            self.skipTest("pytest-xdist is not installed (Debian: python3-pytest-xdist)")
        with tempfile.TemporaryDirectory() as d:
            self.folder(d)
            log = os.path.join(d, "log")
            code, text = run_pytest(d, ["-n", "3", "--dist", "loadgroup", *sorted(MODULES)], {"SCHED_LOG": log})
            with open(log) as f:
                runs = [json.loads(ln) for ln in f]
        self.assertEqual(code, 0, text)
        self.assertTrue(text.rstrip().endswith("summary: 11 passed, 0 failed, 0 skipped"), text[-400:])
        pids = {name: pid for name, pid, _, _ in runs}
        self.assertEqual(len({pids[f"L{c}.{k}"] for c in range(2) for k in range(2)}), 1, runs)
        self.assertEqual(len({pids[f"F.{k}"] for k in range(3)}), 1, runs)
        self.assertGreater(len(set(pids.values())), 1, runs)  # the modules do spread
        [(_, _, a0, a1)] = [r for r in runs if r[0] == "alone"]
        beside = [r[0] for r in runs if r[0] != "alone" and r[2] < a1 and r[3] > a0]
        self.assertEqual(beside, [], runs)


class Tiers(unittest.TestCase):
    """make test skips the full suite's tests (FULL_SUITE on a module or a class), each with its
    reason, and keeps what they took last time; make test-full (LAB_TEST_FULL=1) runs them."""
    MODULE = ("import unittest\n"
              "class Quick(unittest.TestCase):\n    def test_q(self):\n        pass\n"
              "class Whole(unittest.TestCase):\n    FULL_SUITE = 'a whole corpus graded'\n"
              "    @classmethod\n    def setUpClass(cls):\n        open('set_up', 'w').close()\n"
              "    def test_w(self):\n        open('ran', 'w').close()\n")

    def run_tier(self, d, full):
        code, text = run_pytest(d, ["test_tiers.py"], {"LAB_TEST_FULL": "1" if full else ""})
        self.assertEqual(code, 0, text)
        return text

    def test_the_gate_skips_them_saying_why_and_the_full_suite_runs_them(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "test_tiers.py"), "w") as f:
                f.write(self.MODULE)
            os.makedirs(os.path.join(d, "build"))
            with open(os.path.join(d, "build", "test-seconds.json"), "w") as f:
                json.dump({"test_tiers.py": 99.0}, f)
            text = self.run_tier(d, full=False)
            self.assertRegex(text, r"SKIPPED \[1\] .*the full suite only \(make test-full\): a whole corpus graded")
            self.assertIn("1 of the skipped tests are the full suite's: make test-full runs them too", text)
            self.assertTrue(text.rstrip().endswith("summary: 1 passed, 0 failed, 1 skipped"), text[-400:])
            self.assertFalse(os.path.exists(os.path.join(d, "set_up")))  # not even its class's setup
            with open(os.path.join(d, "build", "test-seconds.json")) as f:
                self.assertLess(json.load(f)["test_tiers.py"], 99.0)  # the module's quick test ran
            text = self.run_tier(d, full=True)
            self.assertTrue(text.rstrip().endswith("summary: 2 passed, 0 failed, 0 skipped"), text[-400:])
            self.assertNotIn("the full suite's", text)
            self.assertTrue(os.path.exists(os.path.join(d, "ran")))

    def test_without_a_gpu_both_tiers_run_in_cpu_mode_and_the_full_one_is_whole(self):
        smi = shutil.which("nvidia-smi")
        if smi and subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip():
            self.skipTest("a GPU here: make builds for it")
        env = {k: v for k, v in os.environ.items() if k not in ("CPU", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        for goal in ("test", "test-full"):
            p = subprocess.run(["make", "-n", "--no-print-directory", "-C", ROOT, goal], env=env,
                               capture_output=True, text=True, timeout=300)
            said = (p.stdout + p.stderr)[:1000]  # make's own line comes first
            self.assertIn("so the kernels run in CPU mode", said, goal)
        p = subprocess.run(["make", "-n", "--no-print-directory", "-C", ROOT, "test-full", "LAB=03"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("make test-full runs the repository's whole suite", p.stderr)

    def test_a_group_the_gate_skips_keeps_its_recorded_time(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "test_tiers.py"), "w") as f:
                f.write("import unittest\nFULL_SUITE = 'all of it'\n"
                        "class Whole(unittest.TestCase):\n    def test_w(self):\n        pass\n")
            os.makedirs(os.path.join(d, "build"))
            with open(os.path.join(d, "build", "test-seconds.json"), "w") as f:
                json.dump({"test_tiers.py": 99.0}, f)
            text = self.run_tier(d, full=False)
            self.assertIn("the full suite only (make test-full): all of it", text)
            with open(os.path.join(d, "build", "test-seconds.json")) as f:
                self.assertEqual(json.load(f)["test_tiers.py"], 99.0)


if __name__ == "__main__":
    unittest.main()
