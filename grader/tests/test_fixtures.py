"""The bad-submission fixtures (grader/fixtures/) graded for real, in CPU mode so that this runs
without a GPU: each must get the diagnosis recorded in grader/fixtures/expected.json (with nvcc
where it is installed, which CPU mode then uses as well; test_static_parity.py builds them
without it). On a machine with many cores check_fixtures.py grades them as several grade.py
shards at once (one per 4 CPUs; one on 2 cores). The fixtures
that need the GPU (sanitizer, timing, a kernel that really faults) are checked on a GPU machine
with `python3 grader/check_fixtures.py`."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import fakes
import check_fixtures

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))


class Fixtures(unittest.TestCase):
    def test_cpu_mode_fixtures_get_their_diagnosis(self):
        if not shutil.which("make") or not (shutil.which("c++") or shutil.which("g++")):
            self.skipTest("make or a C++ compiler is missing")
        if not os.path.exists(os.path.join(ROOT, "common", "cpu")):
            self.skipTest("this checkout has no CPU mode")
        work = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader")
        p = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "check_fixtures.py"), "--cpu",
                            "--work", work], capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr[-3000:])
        self.assertIn("fixtures diagnosed as expected (cpu mode)", p.stdout)


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

    def test_the_config_cuts_the_default_case_limit_and_keeps_a_labs_own(self):
        with open(os.path.join(fakes.GRADER, "config.json"), encoding="utf-8") as f:
            shipped = json.load(f)
        with tempfile.TemporaryDirectory() as tmp:
            with open(check_fixtures.fixture_config(argparse.Namespace(config=None), tmp), encoding="utf-8") as f:
                got = json.load(f)
        self.assertEqual(got["defaults"]["timeouts"]["case_s"], check_fixtures.CASE_TIMEOUT_S)
        self.assertEqual(got["labs"], shipped["labs"])  # lab 10's own case_s among them
        got["defaults"]["timeouts"]["case_s"] = shipped["defaults"]["timeouts"]["case_s"]
        self.assertEqual(got, shipped)


if __name__ == "__main__":
    unittest.main()
