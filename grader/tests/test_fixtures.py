"""The bad-submission fixtures (grader/fixtures/) graded for real, in CPU mode so that this runs
without a GPU: each must get the diagnosis recorded beside it (grader/fixtures/submissions/NAME/expected.json). All of
them as the Gradescope package grades (CPU mode, nvcc hidden: CPU mode's own checks on the C++
it compiles); where nvcc is installed, those whose verdict also has an nvcc-side check of its
own (a header nvcc reads, inline assembly in nvcc's host translation, a clock in the PTX, a
compile error) a second time with nvcc, which CPU mode then builds and checks as well. nvcc's
checks themselves are tested on code nvcc compiles in test_static_checks.py; the GPU grades every
fixture with `python3 grader/check_fixtures.py` on a GPU machine. Here the CPU-mode fixtures are
graded in CPU_SHARES shares, each one grade.py and a class of its own, which pytest-xdist runs
beside the other suites (check_fixtures.py alone grades them as several grade.py shards at once
on a machine with many cores: one per 4 CPUs).

The whole corpus is the full suite's (`make test-full`: 5-8 minutes of CPU time on two cores, too
much for CI's gate). `make test` grades GATE: a fixture for each way a diagnosis is reached (the
static checks, the build, each kind of failed case, the judge's channel, the algorithm check) and
each attack on the judge, about a tenth of the corpus's cost."""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
from unittest import mock

import fakes
import check_fixtures
import fixturelib
from gradelib import build, proc

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
# Fixtures whose verdict nvcc's side checks too, each its own way (gradelib/checks/nvcc.py): the
# headers nvcc reads (-M), inline assembly in its host translation (cudafe++), a clock in its PTX,
# and a compile error nvcc reports as well.
# CPU mode's whole check: 5-8 minutes of CPU time on CI's two cores (the fixtures of labs 09 and
# 10 the most); a share's limit, kept well under CI's own of 90 minutes
TIMEOUT_S = 1800
NVCC_SIDE = ("thrust_call", "macro_include_cub", "asm_syscall_forge", "clock_sanitizer_sniff", "compile_error")
# The CPU-mode fixtures in this many shares of about equal cost (check_fixtures.split), each a class
# of its own that pytest-xdist may give a worker of its own (CLASSES_APART: each class grades in a
# work folder of its own; the harness and reference builds are shared through the build cache).
CPU_SHARES = 3
CLASSES_APART = True
# make test's share of the corpus: each path to a verdict once, the cheapest fixture that takes it
GATE = (
    "honest_blocked_host", "honest_grid_barrier",  # honest controls: full marks (labs 01, 02)
    "overwritten_reference", "forged_report_file",  # the judge's reference and report, out of reach
    "forged_result", "forged_channel_reply",  # the judge's channel: a result or a reply forged
    "idle_when_timed",  # work skipped only when the call looks timed
    "host_side_scan", "compile_error",  # a static check, a failed build
    "host_deref", "leak_per_call", "write_past_n", "input_mutation",  # a crash, a leak, out of bounds, input
    "wrong_algorithm_03_brent_kung", "honest_algorithm_03_shuffles",  # the algorithm check, both ways
    "lookback_stale_epoch",  # lab 08's look-back across calls
)
FULL_CORPUS = "every CPU-mode fixture graded (make test grades GATE)"


def cpu_fixtures():
    return sorted(k for k, v in fixturelib.every_expected().items() if "cpu" in v["modes"])


def cpu_share(k):
    """The names of the CPU-mode fixtures in share k of CPU_SHARES."""
    return check_fixtures.split(cpu_fixtures(), fixturelib.every_expected(), CPU_SHARES)[k]


def check(case, work, *options):
    """check_fixtures.py --cpu with options in the work folder BUILD/../grader-<work>, which must
    exit 0 (case skips where CPU mode cannot build)."""
    if not shutil.which("make") or not (shutil.which("c++") or shutil.which("g++")):
        case.skipTest("make or a C++ compiler is missing")
    if not os.path.exists(os.path.join(ROOT, "common", "cpu")):
        case.skipTest("this checkout has no CPU mode")
    work = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-" + work)
    # proc.run kills the check's whole process group past its time, its grade.py too, which
    # would otherwise keep the work folder locked for the next check
    p = proc.run([sys.executable, os.path.join(fakes.GRADER, "check_fixtures.py"), "--cpu",
                  "--work", work, *options], TIMEOUT_S)
    case.assertFalse(p.timed_out, f"check_fixtures.py {' '.join(options)} took more than {TIMEOUT_S} s: "
                                  f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
    case.assertEqual(p.returncode, 0, p.stdout + p.stderr[-3000:])
    return p


def check_all(case, work, names):
    """The fixtures names graded by one check_fixtures.py --cpu as Gradescope grades (nvcc hidden),
    each of them with its diagnosis."""
    p = check(case, work, "--no-nvcc", "--shards", "1", "--only", *names)
    done = re.search(r"^(\d+)/(\d+) fixtures diagnosed as expected \(cpu mode\)$", p.stdout, re.M)
    case.assertIsNotNone(done, p.stdout[-2000:])
    case.assertEqual((int(done.group(1)), int(done.group(2))), (len(names), len(names)), p.stdout[-2000:])


class Gate(unittest.TestCase):
    """GATE's fixtures, as the Gradescope package grades them (nvcc hidden)."""

    def test_the_gates_fixtures_get_their_diagnosis(self):
        self.assertLessEqual(set(GATE), set(cpu_fixtures()))
        check_all(self, "gate", GATE)


class CpuShare:
    """Every fixture CPU mode can diagnose, as the Gradescope package grades (nvcc hidden): share
    `share` of them."""
    share = None
    FULL_SUITE = FULL_CORPUS

    def test_cpu_mode_fixtures_get_their_diagnosis(self):
        check_all(self, f"cpu{self.share}", cpu_share(self.share))


class CpuShare0(CpuShare, unittest.TestCase):
    share = 0


class CpuShare1(CpuShare, unittest.TestCase):
    share = 1


class CpuShare2(CpuShare, unittest.TestCase):
    share = 2


class NvccSide(unittest.TestCase):
    FULL_SUITE = "the fixtures with a check on nvcc's side graded again, with nvcc"

    def test_fixtures_with_an_nvcc_side_check_get_their_diagnosis_with_nvcc_too(self):
        if not build.find_nvcc():
            self.skipTest("no nvcc here: CPU mode builds nothing with it")
        p = check(self, "nvcc", "--only", *NVCC_SIDE, "--shards", "1")  # one grade.py: its progress is ours
        self.assertIn("building the harness with nvcc too", p.stderr)
        self.assertIn(f"{len(NVCC_SIDE)}/{len(NVCC_SIDE)} fixtures diagnosed as expected (cpu mode)", p.stdout)


class NoNvcc(unittest.TestCase):
    def test_no_nvcc_hides_it_from_the_grade(self):
        with mock.patch.dict(os.environ):
            check_fixtures.hide_nvcc(check_fixtures.parse_args(["--cpu", "--no-nvcc"]))
            self.assertIsNone(build.find_nvcc())
        with mock.patch.dict(os.environ, {"NVCC": "/bin/true"}):
            check_fixtures.hide_nvcc(check_fixtures.parse_args(["--cpu"]))
            self.assertEqual(build.find_nvcc(), "/bin/true")  # without it, untouched
        with self.assertRaises(SystemExit), mock.patch("sys.stderr"):
            check_fixtures.parse_args(["--no-nvcc"])  # a GPU grade needs nvcc

    def test_a_static_check_that_did_not_run_is_a_quiet_pass(self):
        quiet = {"static": {"ok": True, "violations": [], "note": "inline-assembly check skipped"}}
        self.assertEqual(len(check_fixtures.skipped_checks(quiet)), 1)
        quiet["static"]["note"] = "nvcc kept no PTX: the device-clock check was not run"
        self.assertEqual(len(check_fixtures.skipped_checks(quiet)), 1)
        self.assertEqual(check_fixtures.skipped_checks({"static": {"ok": True, "violations": []}}), [])
        self.assertEqual(check_fixtures.skipped_checks({"static": {"ok": False, "note": ""}}), [])


class Expectations(unittest.TestCase):
    def test_the_sanitizer_is_expected_on_a_gpu_only(self):
        """expect's sanitizer is a GPU verdict: CPU mode, which has no sanitizer, does not fail a
        fixture for it (host_deref expects a failed sanitizer and runs in both modes)."""
        lab = {"status": "graded", "points": 1.46, "max_points": 100,
               "correctness": {"points": 1.46, "passed": 1, "total": 41, "failures": []},
               "sanitizer": {"status": "passed", "note": ""}, "speed": {"points": 0}}
        expect = {"sanitizer": "failed"}
        self.assertEqual(check_fixtures.check(lab, expect, "gpu"), ["sanitizer is 'passed', expected 'failed'"])
        lab["sanitizer"]["status"] = "not graded"
        self.assertEqual(check_fixtures.check(lab, expect, "cpu"), [])
        lab["sanitizer"]["status"] = "failed"
        self.assertEqual(check_fixtures.check(lab, expect, "gpu"), [])


class Shards(unittest.TestCase):
    """How check_fixtures.py splits a batch (shard_count) and the config it grades with."""

    def test_one_shard_per_four_cpus_in_cpu_mode_only(self):
        cpu, gpu = argparse.Namespace(cpu=True, shards=None), argparse.Namespace(cpu=False, shards=None)
        for cpus, want in ((1, 1), (2, 1), (7, 1), (8, 2), (16, 4), (64, 16)):
            with mock.patch.object(check_fixtures, "usable_cpus", return_value=cpus):
                self.assertEqual(check_fixtures.shard_count(cpu, 51), want, cpus)
                self.assertEqual(check_fixtures.shard_count(gpu, 51), 1, cpus)  # one GPU, one grade.py
        with mock.patch.object(check_fixtures, "usable_cpus", return_value=64):
            self.assertEqual(check_fixtures.shard_count(cpu, 3), 3)  # never more than the fixtures
        self.assertEqual(check_fixtures.shard_count(argparse.Namespace(cpu=True, shards=2), 51), 2)

    def test_the_shares_cost_about_the_same_and_cover_every_fixture_once(self):
        expected = {"a": {"lab": "10_applications"}, "b": {"lab": "10_applications"},
                    **{f"x{i}": {"lab": "02_naive"} for i in range(10)},
                    **{f"y{i}": {"lab": "09_operators"} for i in range(5)}}
        shares = check_fixtures.split(sorted(expected), expected, 3)
        self.assertEqual(sorted(n for share in shares for n in share), sorted(expected))
        costs = [sum(check_fixtures.LAB_COST.get(expected[n]["lab"][:2], 1) for n in share) for share in shares]
        self.assertLessEqual(max(costs) - min(costs), 2, shares)  # 40 in all: 13 or 14 each
        self.assertFalse(any("a" in s and "b" in s for s in shares))  # the two costliest apart
        self.assertEqual(check_fixtures.split(["x1", "x0"], expected, 1), [["x0", "x1"]])

    def test_the_cpu_shares_cover_every_cpu_mode_fixture_once(self):
        shares = [cpu_share(k) for k in range(CPU_SHARES)]
        self.assertEqual(sorted(n for share in shares for n in share), cpu_fixtures())  # each once
        self.assertEqual(CPU_SHARES, len([c for c in globals().values()
                                          if isinstance(c, type) and issubclass(c, CpuShare) and c.share is not None]))

    def test_the_config_cuts_the_default_case_limit_and_keeps_a_labs_own(self):
        with open(os.path.join(fakes.GRADER, "config.json"), encoding="utf-8") as f:
            shipped = json.load(f)
        for cpu, limit in ((False, check_fixtures.CASE_TIMEOUT_S), (True, check_fixtures.CPU_CASE_TIMEOUT_S)):
            with tempfile.TemporaryDirectory() as tmp:
                with open(check_fixtures.fixture_config(argparse.Namespace(config=None, cpu=cpu), tmp),
                          encoding="utf-8") as f:
                    got = json.load(f)
            self.assertEqual(got["defaults"]["timeouts"]["case_s"], limit)
            self.assertLess(limit, shipped["defaults"]["timeouts"]["case_s"])
            self.assertEqual(got["labs"], shipped["labs"])  # lab 10's own case_s among them
            got["defaults"]["timeouts"]["case_s"] = shipped["defaults"]["timeouts"]["case_s"]
            self.assertEqual(got, shipped)


if __name__ == "__main__":
    unittest.main()
