"""A class over several GPUs or machines (classroom/cluster.py, grade.py --gpus/--shard/--merge/
--slurm) and Ctrl-C during a batch. The Slurm test with a real cluster is tests/test_slurm.py."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
sys.path.insert(0, GRADER)

import fakes  # noqa: E402
from classroom import cluster  # noqa: E402

GRADE = os.path.join(GRADER, "grade.py")

# A stand-in for grade.py that records what a worker was started with.
FAKE_GRADE = r'''#!PYTHON
import json, os, sys
a = sys.argv[1:]
out = a[a.index("--results") + 1]
claims = a[a.index("--claim") + 1]
with open(os.path.join(out, "worker-%d.json" % os.getpid()), "w") as f:
    json.dump({"gpu": os.environ.get("CUDA_VISIBLE_DEVICES"), "argv": a,
               "claims_exist": os.path.isdir(claims)}, f)
'''


# its CPU-mode grades are not about nvcc's checks
setUpModule, tearDownModule = fakes.nvcc_hidden_module()


class Units(unittest.TestCase):
    def test_shards_split_the_sorted_list_round_robin(self):
        subs = [f"s{k}" for k in range(7)]
        parts = [cluster.shard_of(subs, i, 3) for i in range(3)]
        self.assertEqual(parts, [["s0", "s3", "s6"], ["s1", "s4"], ["s2", "s5"]])
        self.assertEqual(sorted(sum(parts, [])), subs)
        self.assertEqual(cluster.parse_shard("2/3"), (2, 3))
        for bad in ("3/3", "-1/2", "1", "a/b", "0/0"):
            with self.assertRaises(cluster.ClusterError):
                cluster.parse_shard(bad)

    def test_gpu_lists(self):
        self.assertEqual(cluster.parse_gpus("0,2"), ["0", "2"])
        self.assertEqual(cluster.parse_gpus("0,0"), ["0", "0"])  # two workers on one GPU
        for bad in ("", "0,,1", "x"):
            with self.assertRaises(cluster.ClusterError):
                cluster.parse_gpus(bad)

    def test_a_submission_is_claimed_once(self):
        d = tempfile.mkdtemp()
        try:
            self.assertTrue(cluster.claim(d, "alice"))
            self.assertFalse(cluster.claim(d, "alice"))
            self.assertTrue(cluster.claim(d, "a b"))
            self.assertTrue(cluster.claim(d, "a_b"))  # different students, different claims
        finally:
            shutil.rmtree(d)

    def test_workers_see_one_gpu_each_and_share_seed_and_options(self):
        d = tempfile.mkdtemp()
        try:
            fake = os.path.join(d, "grade.py")
            with open(fake, "w") as f:
                f.write(FAKE_GRADE.replace("#!PYTHON", "#!" + sys.executable))
            args = cluster_args(d, labs=["01", "02"], cpu=True, format="json")
            w = cluster.Workers(fake, args, 1234, ["0", "3"], d, os.path.join(d, "work"), 8, lambda m: None)
            w.start()
            self.assertEqual(w.wait(lambda n: None), 0)
            seen = [read_json(os.path.join(d, fn)) for fn in os.listdir(d) if fn.startswith("worker-")]
            self.assertEqual(sorted(x["gpu"] for x in seen), ["0", "3"])
            for x in seen:
                a = x["argv"]
                self.assertTrue(x["claims_exist"])
                self.assertEqual(a[a.index("--seed") + 1], "1234")
                self.assertEqual(a[a.index("--jobs") + 1], "4")  # the cores split between workers
                self.assertIn("--cpu", a)
                self.assertEqual(a[a.index("--labs") + 1:a.index("--labs") + 3], ["01", "02"])
            self.assertEqual(len({x["argv"][x["argv"].index("--work") + 1] for x in seen}), 2)
        finally:
            shutil.rmtree(d)

    def test_sbatch_scripts(self):
        args = cluster_args("/class/subs", labs=None, cpu=False)
        array, merge = cluster.sbatch_scripts("/course/grader/grade.py", args, 7, 4, "/class/res", "/tmp/w",
                                              "--partition=gpu --time=01:00:00")
        self.assertIn("#SBATCH --array=0-3", array)
        self.assertIn("#SBATCH --gres=gpu:1", array)
        self.assertIn("#SBATCH --partition=gpu", array)
        self.assertIn('--shard "$SLURM_ARRAY_TASK_ID/4"', array)
        self.assertIn("--seed 7", array)
        self.assertIn(" --gpu ", array)  # a node without a GPU: an infrastructure error, not CPU mode
        self.assertIn("${TMPDIR:-/tmp}", array)  # builds on the node's own disk
        self.assertIn("--merge", merge)
        self.assertNotIn("--shard", merge)
        cpu_array, _ = cluster.sbatch_scripts("/g.py", cluster_args("/s", cpu=True), 7, 2, "/r", "/w", None)
        self.assertNotIn("--gres", cpu_array)
        self.assertIn("--cpu", cpu_array)

    def test_slurm_submission_makes_the_merge_wait_for_the_array(self):
        d = tempfile.mkdtemp()
        try:
            log = os.path.join(d, "calls")
            sbatch = os.path.join(d, "sbatch")
            with open(sbatch, "w") as f:
                f.write(f"#!/bin/sh\necho \"$@\" >> {log}\nif [ -f {log}.n ]; then echo 102; else touch {log}.n; "
                        f"echo 101\\;cluster; fi\n")
            os.chmod(sbatch, 0o755)
            old = os.environ["PATH"]
            os.environ["PATH"] = d + os.pathsep + old
            try:
                ids = cluster.submit_slurm("/x/grade.sbatch", "/x/merge.sbatch", lambda m: None)
            finally:
                os.environ["PATH"] = old
            self.assertEqual(ids, ("101", "102"))
            with open(log) as f:
                calls = f.read().splitlines()
            self.assertEqual(calls[0], "--parsable /x/grade.sbatch")
            self.assertEqual(calls[1], "--parsable --dependency=afterany:101 /x/merge.sbatch")
        finally:
            shutil.rmtree(d)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def cluster_args(subs, labs=None, cpu=False, format=None):
    import argparse
    return argparse.Namespace(submissions=subs, labs=labs, cpu=cpu, gpu=not cpu, no_sanitizer=False, force=False,
                              only_submitted=False, isolated=False, format=format, config=None, case_timeout=None,
                              gpu_jobs=None)


class Interrupt(unittest.TestCase):
    """Ctrl-C in a batch (CPU mode, lab 01 only): the grader stops within 2 s, writes a partial
    class.csv, exits 130, and the same command resumes with what was finished kept."""

    def test_ctrl_c_stops_quickly_and_the_rerun_resumes(self):
        d = tempfile.mkdtemp()
        try:
            subs = os.path.join(d, "subs")
            for s in ("alice", "bob", "carol"):
                shutil.copytree(os.path.join(ROOT, "solutions", "01_serial"), os.path.join(subs, s, "01_serial"))
            res = os.path.join(d, "res")
            cmd = [sys.executable, GRADE, "--submissions", subs, "--results", res, "--cpu", "--labs", "01",
                   "--work", os.path.join(d, "work"), "--seed", "5"]
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 400
            while not os.path.exists(os.path.join(res, "alice.json")) and time.monotonic() < deadline:
                if p.poll() is not None:
                    self.fail(f"the batch ended early: {p.stderr.read()[-2000:]}")
                time.sleep(0.05)
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            err = p.communicate(timeout=30)[1]
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 130, err[-2000:])
            self.assertLess(took, 2.0, f"Ctrl-C took {took:.2f} s")
            self.assertIn("run the same command again to resume", err)
            with open(os.path.join(res, "class.csv")) as f:
                rows = list(csv.reader(f))
            totals = {r[0]: r[4] for r in rows[1:] if r[1] == "TOTAL"}
            self.assertEqual(totals["alice"], "graded")
            self.assertEqual(set(totals), {"alice", "bob", "carol"})
            again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            self.assertEqual(again.returncode, 0, again.stderr[-2000:])
            self.assertIn("already graded", again.stderr)
            with open(os.path.join(res, "class.csv")) as f:
                totals = {r[0]: r[4] for r in csv.reader(f) if r[1] == "TOTAL"}
            self.assertEqual(totals, {"alice": "graded", "bob": "graded", "carol": "graded"})
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
