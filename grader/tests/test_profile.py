"""make profile (grader/profile.py): ncu's CSV read per kernel, the harness's kernels left out,
launches summed or weighted by their time, the top stalls; and every way it can stop, with its
message and exit code, driven through fake lab binaries and a fake ncu (no GPU needed)."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "profile.py")
sys.path.insert(0, os.path.dirname(HERE))
import profile as prof  # noqa: E402 (grader/profile.py, not the standard library's: path first)

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"')


def row(launch, kernel, metric, value):
    return (f'"{launch}","1","scan","h","{kernel}","1","7","(128, 1, 1)","(4096, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{metric}","","{value}"')


LAB_K = "void lab_kernel<1>(const int *, int *, unsigned long)"
CSV = "\n".join([
    "==PROF== Connected to process 1",
    "05_blelloch/padded n=1048576 seed=1 dist=small: ok",
    HEADER,
    row(0, "gen_input_kernel(int *, unsigned long, unsigned long, unsigned long, int, const unsigned long *)",
        prof.DURATION, "9,000"),
    row(1, LAB_K, prof.DURATION, "1,000"),
    row(1, LAB_K, prof.DRAM, "80"),
    row(1, LAB_K, prof.REGISTERS, "32"),
    row(1, LAB_K, prof.SHARED[0], "1,000"),
    row(1, LAB_K, prof.CONFLICTS[0], "10"),
    row(1, LAB_K, "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "4"),
    row(1, LAB_K, "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", "99"),
    row(1, LAB_K, "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "1"),
    row(1, LAB_K, "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "0"),
    row(2, LAB_K, prof.DURATION, "3,000"),
    row(2, LAB_K, prof.DRAM, "40"),
    row(2, LAB_K, prof.REGISTERS, "40"),
    row(2, LAB_K, prof.SHARED[1], "500"),
    row(2, LAB_K, prof.CONFLICTS[1], "5"),
    row(2, LAB_K, "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "0"),
    row(2, LAB_K, "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "8"),
    row(2, LAB_K, "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "1"),
])


class Parse(unittest.TestCase):
    def setUp(self):
        self.kernels = prof.parse(CSV, prof.harness_kernels())

    def test_the_harness_kernels_are_left_out(self):
        self.assertIn("gen_input_kernel", prof.harness_kernels())
        self.assertEqual(list(self.kernels), [LAB_K])
        self.assertEqual(self.kernels[LAB_K]["launches"], 2)

    def test_totals_and_duration_weighted_means(self):
        k = self.kernels[LAB_K]
        self.assertEqual(prof.total(k, prof.DURATION), 4000)
        self.assertAlmostEqual(prof.weighted(k, prof.DRAM), (80 * 1000 + 40 * 3000) / 4000)
        self.assertIsNone(prof.weighted(k, prof.OCCUPANCY))

    def test_top_stalls_leave_out_issuing(self):
        stalls = prof.top_stalls(self.kernels[LAB_K])
        self.assertEqual([r for r, _ in stalls], ["long_scoreboard", "wait", "barrier"])
        self.assertAlmostEqual(dict(stalls)["long_scoreboard"], 6.0)  # 8 over 3/4 of the time

    def test_table(self):
        text = "\n".join(prof.table(self.kernels))
        self.assertIn("2 launches, 0.004 ms in all", text)
        self.assertIn(" 50.0 % of peak", text)
        self.assertIn("   40 per thread", text)  # the most registers any launch used
        self.assertIn("   15 extra shared-memory passes over 1500 accesses (1.0 % of them)", text)
        self.assertIn("waiting for a global (or local) memory load", text)
        self.assertIn("n/a % achieved", text)

    def test_no_table_in_the_output(self):
        self.assertEqual(prof.parse("==PROF== error\n", set()), {})


def executable(path, text):
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class Runs(unittest.TestCase):
    """profile.py end to end with a fake lab binary (its --describe) and a fake ncu."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        with open(os.path.join(self.d, "out.csv"), "w") as f:
            f.write(CSV)

    def tearDown(self):
        self.tmp.cleanup()

    def lab(self, shape="tile", mode="gpu"):
        desc = json.dumps({"id": "05_blelloch", "shape": shape, "bench_n": 1 << 28, "mode": mode})
        return executable(os.path.join(self.d, "scan"), f"""\
            #!/bin/sh
            [ "$1" = --describe ] && echo '{desc}'
            """)

    def ncu(self, extra=""):
        return executable(os.path.join(self.d, "ncu"), f"""\
            #!/bin/sh
            echo "$@" > {self.d}/args
            {extra}
            cat {self.d}/out.csv
            """)

    def run_profile(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                              timeout=60)

    def test_a_profile(self):
        r = self.run_profile("--binary", self.lab(), "--ncu", self.ncu())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(LAB_K, r.stdout)
        self.assertIn("dist=small: ok", r.stdout)  # the lab's own result line
        with open(os.path.join(self.d, "args")) as f:
            args = f.read()
        self.assertIn("--n 67108864 --reps 0 --warmup 0", args)  # 2^28 capped at 2^26
        self.assertIn(prof.DRAM, args)

    def test_the_lab_options_pass_through(self):
        r = self.run_profile("--binary", self.lab(), "--ncu", self.ncu(), "--", "--n", "1000",
                             "--variant", "plain")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.d, "args")) as f:
            self.assertTrue(f.read().strip().endswith("--n 1000 --variant plain"))

    def test_no_ncu(self):
        r = self.run_profile("--binary", self.lab(), "--ncu", os.path.join(self.d, "missing"))
        self.assertEqual(r.returncode, prof.EXIT_NO_NCU)
        self.assertIn("Nsight Compute (ncu) was not found", r.stderr)

    def test_no_permission(self):
        r = self.run_profile("--binary", self.lab(), "--ncu",
                             self.ncu("echo '==ERROR== ERR_NVGPUCTRPERM - no access' >&2"))
        self.assertEqual(r.returncode, prof.EXIT_NO_PERMISSION)
        self.assertIn("performance counters", r.stderr)

    def test_host_lab_and_cpu_build(self):
        r = self.run_profile("--binary", self.lab(shape="host"), "--ncu", self.ncu())
        self.assertEqual(r.returncode, prof.EXIT_USAGE)
        self.assertIn("no kernel to profile", r.stderr)
        r = self.run_profile("--binary", self.lab(mode="cpu"), "--ncu", self.ncu())
        self.assertEqual(r.returncode, prof.EXIT_NO_DEVICE)
        self.assertIn("CPU-mode build", r.stderr)

    def test_nothing_profiled(self):
        with open(os.path.join(self.d, "out.csv"), "w") as f:
            f.write("==PROF== no kernels were profiled\n")
        r = self.run_profile("--binary", self.lab(), "--ncu", self.ncu("exit 1"))
        self.assertEqual(r.returncode, prof.EXIT_FAILED)
        self.assertIn("profiled none of the lab's kernels", r.stderr)

    def test_missing_binary(self):
        r = self.run_profile("--binary", os.path.join(self.d, "nope"))
        self.assertEqual(r.returncode, prof.EXIT_USAGE)
        self.assertIn("does not exist", r.stderr)


if __name__ == "__main__":
    unittest.main()
