"""grader/dev/start_rate.sh: its arguments, its exit codes, and its arithmetic, with a stand-in
nvidia-smi (two GPUs) and `sleep 0.1` as the process it starts (no GPU is needed)."""
import os
import re
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "dev", "start_rate.sh")


def fake_smi(folder, gpus):
    """A nvidia-smi on PATH in folder that lists gpus GPUs."""
    path = os.path.join(folder, "nvidia-smi")
    listing = "".join(f'echo "GPU {g}: Stand-in (UUID: GPU-{g})"; ' for g in range(gpus))
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\ncase "$1" in -L) {listing}:;; *) echo "Stand-in GPU";; esac\n')
    os.chmod(path, 0o755)
    return dict(os.environ, PATH=folder + os.pathsep + os.environ.get("PATH", ""))


def run(args, env=None):
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, timeout=60, env=env)


def run_with_gpus(gpus, args):
    """run(args) with a stand-in nvidia-smi that lists gpus GPUs."""
    with tempfile.TemporaryDirectory() as d:
        return run(args, env=fake_smi(d, gpus))


class StartRate(unittest.TestCase):
    def test_bad_arguments_exit_2_with_the_usage(self):
        for args in (["x"], ["0"], ["3", "4", "5"], ["3", "--"]):
            r = run(args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("usage: start_rate.sh", r.stderr)

    def test_no_gpu_exits_3_saying_so(self):
        r = run_with_gpus(0, ["1", "1", "--", "true"])
        self.assertEqual(r.returncode, 3)
        self.assertIn("no GPU", r.stderr)

    def test_no_nvcc_exits_3_unless_a_command_is_given(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(fake_smi(d, 1), NVCC=os.path.join(d, "no-nvcc"))
            r = run(["1", "1"], env=env)
            self.assertEqual(r.returncode, 3)
            self.assertIn("no nvcc", r.stderr)
            r = run(["1", "1", "--", "true"], env=env)  # nothing to build
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 process alone on GPU 0", r.stdout)

    def test_a_program_that_fails_exits_3_naming_it(self):
        r = run_with_gpus(1, ["1", "1", "--", "false"])
        self.assertEqual(r.returncode, 3)
        self.assertIn("false fails on GPU 0", r.stderr)

    def test_starts_are_counted_alone_on_one_gpu_and_on_every_gpu(self):
        r = run_with_gpus(2, ["2", "2", "--", "sleep", "0.1"])
        self.assertEqual(r.returncode, 0, r.stderr)
        rates = [float(x) for x in re.findall(r"([\d.]+) starts a second", r.stdout)]
        ms = [int(x) for x in re.findall(r"(\d+) ms a start", r.stdout)]
        self.assertEqual(len(rates), 3, r.stdout)  # alone, 2 on GPU 0, 2 on each of 2 GPUs
        # a start of `sleep 0.1` takes ~100 ms however many run at once, so the rate grows with them
        for got, want in zip(rates, (10, 20, 40)):
            self.assertGreater(got, want * 0.6, r.stdout)
            self.assertLessEqual(got, want * 1.05, r.stdout)
        for m in ms:
            self.assertGreaterEqual(m, 95, r.stdout)
            self.assertLess(m, 170, r.stdout)
        self.assertIn("2 at once on each of 2 GPUs", r.stdout)


if __name__ == "__main__":
    unittest.main()
