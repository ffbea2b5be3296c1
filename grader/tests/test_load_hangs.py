"""For real in CPU mode: on a machine that other jobs keep busy, an honest lab is not a hang, and a
lab that never ends still is.

A first grade without load (solutions' lab 03, with the course's config but CPU mode's default
sizes) measures the CPU time of its slowest case. The second grade (lab 03 again, and the
infinite_loop fixture as lab 02) runs with case_s at twice that (the infinite loop's lab at the
config's smallest, 1 s), while 4 busy-loop processes per core (started here once its first case
has run, so that its builds are not slowed; each ending by itself after LOAD_S seconds, killed in
tearDown) keep the machine busy: lab 03 must get full correctness
marks, a case of it must have taken longer than case_s of wall time (the old wall-clock limit
would have called it a hang: asserted), and the infinite loop must still time out, twice (the
second time alone, with the larger limit). About 40 s on 2 cores."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import fakes
import fixturelib

ROOT = os.path.dirname(fakes.GRADER)
# it holds the machine alone, its cores kept busy for minutes: too costly for CI's gate
FULL_SUITE = "a grade under load, with the whole machine to itself for two to three minutes"
LOAD_S = 240  # longer than the loaded grade (its builds included); ended as soon as it is done
LARGE_N = 3 * 2**20 + 5  # lab 03's large case here: about 0.8 s of CPU time in CPU mode
SPIN = "import time, sys\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass\n"


# its CPU-mode grades are not about nvcc's checks
setUpModule, tearDownModule = fakes.nvcc_hidden_module()


def cases(trace, lab):
    rows = []
    with open(trace) as f:
        for ln in f:
            r = json.loads(ln)
            if r["kind"] == "case" and lab in r["prog"] and "cpu" in r:
                rows.append(r)
    return rows


class HangsUnderLoad(unittest.TestCase):
    def setUp(self):
        if not shutil.which("make") or not (shutil.which("c++") or shutil.which("g++")):
            self.skipTest("make or a C++ compiler is missing")
        if not os.path.exists(os.path.join(ROOT, "common", "cpu")):
            self.skipTest("this checkout has no CPU mode")
        self.tmp = tempfile.mkdtemp()
        self.load = []

    def tearDown(self):
        for p in self.load:
            p.kill()
            p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def grade(self, cfg, trace, out, labs, on_first_case=None):
        """Grades labs of self.src in CPU mode; on_first_case() is called once the first case has
        run (the builds are done by then: the load need not slow them)."""
        env = dict(os.environ, LAB_GRADER_TRACE=trace)
        with tempfile.TemporaryFile("w+") as err:
            p = subprocess.Popen([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--cpu", "--src",
                                  self.src, "--labs", *labs, "--config", cfg, "--work", os.path.join(self.tmp, "work"),
                                  "--seed", "5", "--format", "json", "--out", out],
                                 stdout=subprocess.DEVNULL, stderr=err, text=True, env=env)
            try:
                end = time.monotonic() + 300
                while on_first_case and p.poll() is None and time.monotonic() < end:
                    try:
                        started = os.path.exists(trace) and cases(trace, "")
                    except ValueError:  # a line being written
                        started = False
                    if started:
                        on_first_case()
                        break
                    time.sleep(0.05)
                p.wait(max(1, end - time.monotonic()))
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            err.seek(0)
            self.assertEqual(p.returncode, 0, err.read()[-3000:])
        with open(out) as f:
            return {lab["lab"]: lab for lab in json.load(f)["labs"]}

    def config(self, name, case_s=None):
        with open(os.path.join(fakes.GRADER, "config.json")) as f:
            data = json.load(f)
        if case_s is not None:
            data["defaults"]["timeouts"]["case_s"] = case_s
            # the infinite loop (lab 02) hangs at any limit: the smallest the config allows, since
            # it costs 4x its limit of CPU time, which the load stretches about fivefold in wall time
            data["labs"].setdefault("02_naive", {}).setdefault("timeouts", {})["case_s"] = 1
        # lab 03 at CPU mode's default sizes (up to 2^20 + 1) and a large size of LARGE_N, not
        # the course's cap for it: the large case, its slowest by far, is what the load must slow
        # past case_s (twice its CPU time), and it takes long enough that case_s is not the
        # config's 1 s floor, which would leave the load's fivefold slowdown little margin;
        # one distribution a size (no size with every distribution): about half the cases, so
        # the load, which costs the machine 4 busy loops a core, lasts half as long
        data["labs"].setdefault("03_kogge_stone", {}).setdefault("correctness", {})["cpu_max_n"] = LARGE_N
        data["defaults"]["correctness"]["large_n"] = LARGE_N
        data["defaults"]["correctness"]["all_dists_sizes"] = []
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def test_an_honest_lab_passes_under_load_and_an_infinite_loop_still_hangs(self):
        self.src = os.path.join(self.tmp, "src")
        shutil.copytree(os.path.join(ROOT, "solutions", "03_kogge_stone"), os.path.join(self.src, "03_kogge_stone"))
        fixturelib.write("infinite_loop", self.src)  # its 02_naive, a patched reference

        quiet = os.path.join(self.tmp, "quiet.jsonl")
        first = self.grade(self.config("quiet.json"), quiet, os.path.join(self.tmp, "quiet.json"), ["03"])
        self.assertEqual(first["03_kogge_stone"]["correctness"]["passed"],
                         first["03_kogge_stone"]["correctness"]["total"])
        slowest = max(r["cpu"] for r in cases(quiet, "03_kogge_stone"))
        case_s = max(1.0, round(2 * slowest, 1))

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        # each in a session of its own, as other users' jobs are: with the kernel's autogroup
        # scheduling, loops sharing the test's session would share one CPU share between them

        def load():  # from the first case on: the builds before it need not run under the load
            self.load = [subprocess.Popen([sys.executable, "-c", SPIN, str(LOAD_S)], start_new_session=True)
                         for _ in range(4 * cores)]
        busy = os.path.join(self.tmp, "busy.jsonl")
        labs = self.grade(self.config("busy.json", case_s), busy, os.path.join(self.tmp, "busy.json"), ["02", "03"],
                          on_first_case=load)
        self.assertTrue(self.load, "the grade ran no case")
        for p in self.load:  # the load lasts exactly as long as the grade
            p.kill()
            p.wait()
        self.load = []

        honest = labs["03_kogge_stone"]
        self.assertEqual(honest["correctness"]["passed"], honest["correctness"]["total"], honest["summary"])
        self.assertEqual(honest["correctness"]["points"], honest["correctness"]["max"])
        rows = cases(busy, "03_kogge_stone")
        walls = max(r["s"] for r in rows)
        print(f"\nload: {4 * cores} busy loops on {cores} cores; lab 03 case_s {case_s:g} s of CPU time; slowest case "
              f"{slowest:.2f} s of CPU time alone, under load up to {walls:.2f} s of wall time and "
              f"{max(r['cpu'] for r in rows):.2f} s of CPU time", file=sys.stderr)
        self.assertGreater(walls, case_s, "the load did not slow a case past case_s of wall time: this test "
                                          "shows nothing (the old wall-clock limit would have passed too)")

        loop = labs["02_naive"]
        kinds = [f["kind"] for f in loop["correctness"]["failures"]]
        self.assertIn("timeout", kinds, loop["summary"])
        self.assertIn("and again alone after", loop["summary"])
        self.assertTrue(loop["correctness"]["note"].startswith("hangs:"), loop["correctness"]["note"])


if __name__ == "__main__":
    unittest.main()
