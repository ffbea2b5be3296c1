"""The Slurm job scripts of grade.py --slurm for a real cluster (classroom/cluster.py): the config's
"slurm" section (time, mem, account, partition, throttle, prologue), --sbatch-args for the array
only and --merge-sbatch-args for the merge job only, and what the array script does when it runs
(bash, with a stand-in for grade.py): its work folder is removed after success and kept after a
failure, and a failing prologue line stops it. The whole path on a real cluster is test_slurm.py."""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
sys.path.insert(0, GRADER)

from classroom import cluster  # noqa: E402
from gradelib import config as configmod  # noqa: E402

SLURM = {"time": "02:00:00", "mem": "8G", "account": "cs149", "partition": "gpu", "throttle": 4,
         "prologue": ["module load cuda/12.4", "export SCAN_SITE=1"]}

# A stand-in for grade.py: records its --work folder, writes a file there, exits with $FAKE_RC.
FAKE_GRADE = r'''import os, sys
a = sys.argv[1:]
work = a[a.index("--work") + 1]
with open(os.path.join(work, "built.o"), "w") as f:
    f.write("x")
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(work + "\n")
with open(os.environ["FAKE_LOG"] + ".cache", "a") as f:
    f.write(os.environ.get("LAB_GRADER_CACHE", "(none)") + "\n")
sys.exit(int(os.environ.get("FAKE_RC", "0")))
'''


def args(**kw):
    base = dict(submissions="/class/subs", labs=["01"], cpu=True, gpu=False, no_sanitizer=False, force=False,
                only_submitted=False, isolated=False, format=None, config=None, case_timeout=None, gpu_jobs=None,
                roster=None, report=None, similarity=False, merge_sbatch_args=None, slurm_settings=None)
    base.update(kw)
    return argparse.Namespace(**base)


def directives(script):
    return re.findall(r"^#SBATCH (\S+)$", script, re.M)


class Text(unittest.TestCase):
    def test_config_keys_go_to_the_array_and_the_account_to_both(self):
        array, merge = cluster.sbatch_scripts("/c/grade.py", args(slurm_settings=SLURM), 7, 10, "/r", "/w", None)
        a, m = directives(array), directives(merge)
        for d in ("--time=02:00:00", "--mem=8G", "--account=cs149", "--partition=gpu", "--array=0-9%4"):
            self.assertIn(d, a)
        self.assertEqual([d for d in m if d.startswith(("--time", "--mem", "--partition", "--array"))], [])
        self.assertIn("--account=cs149", m)
        for script in (array, merge):
            self.assertIn("module load cuda/12.4 || {", script)
            self.assertLess(script.index("module load"), script.index("/c/grade.py"))

    def test_sbatch_args_for_the_array_and_merge_sbatch_args_for_the_merge(self):
        array, merge = cluster.sbatch_scripts("/c/grade.py",
                                              args(cpu=False, merge_sbatch_args="--time=10 --qos=short"), 7, 2,
                                              "/r", "/w", "--gres=gpu:a100:1 --time=4:00:00")
        self.assertIn("--gres=gpu:a100:1", directives(array))
        self.assertEqual(len([d for d in directives(array) if d.startswith("--gres")]), 1)  # not gpu:1 as well
        self.assertNotIn("--gres=gpu:a100:1", directives(merge))
        self.assertIn("--qos=short", directives(merge))
        self.assertNotIn("--qos=short", directives(array))
        self.assertNotIn("--array=0-1%", array)  # no throttle unless asked for

    def test_the_merge_job_writes_the_report(self):
        _, merge = cluster.sbatch_scripts("/c/grade.py", args(report="/r/class.html", similarity=True), 7, 2,
                                          "/r", "/w", None)
        self.assertRegex(merge, r"--report /r/class\.html --similarity --merge\n")

    def test_bad_slurm_settings_are_refused(self):
        with open(os.path.join(GRADER, "config.json")) as f:
            base = json.load(f)
        for bad, words in (({"throttle": 0}, "slurm.throttle"), ({"time": "1:00; rm -rf /"}, "slurm.time"),
                           ({"prologue": [3]}, "slurm.prologue"), ({"qos": "x"}, "unknown key"),
                           ({"python": "python3; rm -rf /"}, "slurm.python"), ({"cache": ""}, "slurm.cache"),
                           ({"cache": True}, "slurm.cache")):
            with self.assertRaises(configmod.ConfigError) as e:
                configmod.Config(dict(base, slurm=bad))
            self.assertIn(words, str(e.exception))
        self.assertEqual(configmod.Config(dict(base, slurm={"prologue": "module load cuda"})).slurm["prologue"],
                         "module load cuda")

    def test_the_tasks_share_one_build(self):
        """slurm.cache: null is RESULTS/cache (or the --slurm run's LAB_GRADER_CACHE), a path is
        that folder, false is none (each task builds its own); the merge job builds nothing."""
        with mock.patch.dict(os.environ):
            os.environ.pop("LAB_GRADER_CACHE", None)
            for settings, want in ((SLURM, "/r/cache"),
                                   (dict(SLURM, cache="/shared/scan cache"), "'/shared/scan cache'"),
                                   (dict(SLURM, cache=False), None)):
                array, merge = cluster.sbatch_scripts("/c/grade.py", args(slurm_settings=settings), 7, 2, "/r", "/w",
                                                      None)
                lines = [ln for ln in array.splitlines() if "LAB_GRADER_CACHE" in ln]
                if want is None:
                    self.assertEqual(lines, [])
                else:
                    self.assertEqual(lines[0], f"export LAB_GRADER_CACHE={want}")
                    self.assertLess(array.index("export LAB_GRADER_CACHE"), array.index("/c/grade.py"))
                self.assertNotIn("LAB_GRADER_CACHE", merge)
            os.environ["LAB_GRADER_CACHE"] = "/site/cache"
            array, _ = cluster.sbatch_scripts("/c/grade.py", args(slurm_settings=SLURM), 7, 2, "/r", "/w", None)
            self.assertIn("export LAB_GRADER_CACHE=/site/cache\n", array)

    def test_the_jobs_run_the_python_the_config_names(self):
        # by default the interpreter that ran --slurm, by its absolute path; with "python", the
        # one the prologue sets up on the nodes, found on PATH after it
        for settings, want in ((SLURM, sys.executable), (dict(SLURM, python="python3"), "python3")):
            array, merge = cluster.sbatch_scripts("/c/grade.py", args(slurm_settings=settings), 7, 2, "/r", "/w", None)
            for script in (array, merge):
                run = [ln for ln in script.splitlines() if "/c/grade.py" in ln]
                self.assertTrue(run and all(ln.removeprefix("exec ").startswith(shlex.quote(want) + " /c/grade.py")
                                            for ln in run), script)
            self.assertLess(array.index("module load cuda/12.4"), array.index(shlex.quote(want) + " /c/grade.py"))


class Behaviour(unittest.TestCase):
    """The array script run by bash as one task would run it."""

    def setUp(self):
        # the script's cache is then RESULTS/cache, whatever cache the test run itself uses
        env = mock.patch.dict(os.environ)
        env.start()
        self.addCleanup(env.stop)
        os.environ.pop("LAB_GRADER_CACHE", None)
        self.d = tempfile.mkdtemp()
        self.tmp = os.path.join(self.d, "nodetmp")
        os.makedirs(self.tmp)
        self.fake = os.path.join(self.d, "grade.py")
        with open(self.fake, "w") as f:
            f.write(FAKE_GRADE)
        self.log = os.path.join(self.d, "calls")

    def tearDown(self):
        shutil.rmtree(self.d)

    def task(self, rc, prologue=()):
        settings = dict(SLURM, prologue=list(prologue) + [f"echo prologue-ran >> {self.log}"])
        array, _ = cluster.sbatch_scripts(self.fake, args(slurm_settings=settings), 7, 2, self.d, "/w", None)
        path = os.path.join(self.d, "grade.sbatch")
        with open(path, "w") as f:
            f.write(array)
        env = dict(os.environ, TMPDIR=self.tmp, SLURM_ARRAY_TASK_ID="1", SLURM_ARRAY_JOB_ID="41", SLURM_JOB_ID="42",
                   FAKE_RC=str(rc), FAKE_LOG=self.log)
        return subprocess.run(["bash", path], capture_output=True, text=True, env=env, timeout=60)

    def calls(self):
        try:
            with open(self.log) as f:
                return f.read().split()
        except FileNotFoundError:
            return []

    def test_success_removes_the_work_folder(self):
        r = self.task(0)
        self.assertEqual(r.returncode, 0, r.stderr)
        calls = self.calls()
        self.assertEqual(calls[0], "prologue-ran")
        self.assertTrue(os.path.basename(calls[1]).startswith("scan-grade-41_1."), calls)
        self.assertEqual(os.path.dirname(calls[1]), self.tmp)
        self.assertEqual(os.listdir(self.tmp), [])
        # the shared build: RESULTS/cache (self.d is the results folder here), made private
        cache = os.path.join(self.d, "cache")
        with open(self.log + ".cache") as f:
            self.assertEqual(f.read().split(), [cache])
        self.assertEqual(os.stat(cache).st_mode & 0o777, 0o700)

    def test_failure_keeps_it_and_says_where(self):
        r = self.task(3)
        self.assertEqual(r.returncode, 3)
        work = self.calls()[1]
        self.assertTrue(os.path.isfile(os.path.join(work, "built.o")))
        self.assertIn("grade.py exited with 3; its work folder is kept: ", r.stderr)
        self.assertIn(work, r.stderr)

    def test_a_failing_prologue_stops_the_task(self):
        r = self.task(0, prologue=["false"])
        self.assertEqual(r.returncode, 3)
        self.assertIn("prologue failed: false", r.stderr)
        self.assertEqual(self.calls(), [])  # neither the next prologue line nor grade.py ran
        self.assertEqual(os.listdir(self.tmp), [])


class Submission(unittest.TestCase):
    """grade.py --slurm when sbatch refuses: an infrastructure error (exit 3) that quotes sbatch,
    not a usage error; the job scripts stay where the line says."""

    def test_sbatch_refusing_the_array_is_an_infrastructure_error(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "bin"))
            fake = os.path.join(d, "bin", "sbatch")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\necho "sbatch: error: invalid partition specified: gpu-nope" >&2\nexit 1\n')
            os.chmod(fake, 0o755)
            sub = os.path.join(d, "subs", "alice", "02_naive")
            os.makedirs(sub)
            shutil.copy(os.path.join(GRADER, "..", "labs", "02_naive", "scan.cu"), sub)
            env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
            r = subprocess.run([sys.executable, os.path.join(GRADER, "grade.py"), "--submissions",
                                os.path.join(d, "subs"), "--slurm", "--cpu", "--work", os.path.join(d, "w"),
                                "--seed", "1"], capture_output=True, text=True, env=env, timeout=120)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("infrastructure error, not a grade: --slurm: sbatch refused the array: "
                          "sbatch: error: invalid partition specified: gpu-nope", r.stderr)
            self.assertIn("--slurm: 1 shard of 1 submission; job scripts: ", r.stderr)
            self.assertTrue(os.path.isfile(os.path.join(d, "subs-results", "slurm", "grade.sbatch")))


if __name__ == "__main__":
    unittest.main()
