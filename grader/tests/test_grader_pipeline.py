"""The grader end to end on fake lab binaries (grader/tests/fakes.py): points, timeouts and
process-group kills, sanitizer verdicts, interleaved timing, the command line's exit codes, and
batch mode's safety and resume; and on real lab binaries built in CPU mode (RealHarness) for the
correctness path: a pass, not implemented, wrong answers, an out-of-bounds write. No nvcc or GPU
needed."""
import concurrent.futures as cf
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import unittest
import zipfile
from unittest import mock

import fakes
import fixturelib
from classroom import batch, submissions
from gradelib import build, config, cores, evaluate as ev, proc, session, stage_cases
from gradelib.grading import Grader
from gradelib.outcomes import BuildOutcome, LabResult, StaticOutcome
from gradelib.stage_build import BuiltLab
from gradelib.status import Status

GRADE = os.path.join(fakes.GRADER, "grade.py")
ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
# its own: modules may run at once
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "pipeline")
CONFIG = os.path.join(fakes.GRADER, "config.json")


def alive(pid):
    """True while pid runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class Processes(unittest.TestCase):
    def setUp(self):
        self.tmp = fakes.shared_tmp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_timeout_kills_the_whole_group(self):
        pidfile = os.path.join(self.tmp, "pid")
        lab = fakes.fake_lab(self.tmp, "hang", status="hang", grandchild_pidfile=pidfile)
        t0 = time.monotonic()
        r = proc.run([lab, "--n", "5"], 1.5)
        self.assertTrue(r.timed_out)
        self.assertLess(time.monotonic() - t0, 10)
        with open(pidfile) as f:
            child = int(f.read())
        for _ in range(50):
            if not alive(child):
                break
            time.sleep(0.1)
        self.assertFalse(alive(child), "the forked grandchild outlived the timeout")
        kind, msg, _ = ev.diagnose(r, 1.5)
        self.assertEqual((kind, msg), ("timeout", "timed out after 1.5 s (the process group was killed)"))

    def test_a_grandchild_holding_stdout_does_not_block(self):
        script = os.path.join(self.tmp, "leak.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n(sleep 100; echo late) &\necho '{\"status\": \"ok\"}'\nexit 0\n")
        os.chmod(script, 0o755)
        t0 = time.monotonic()
        r = proc.run([script], 30)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertFalse(r.timed_out)
        self.assertIn('"ok"', r.stdout)

    def test_report_channel(self):
        script = os.path.join(self.tmp, "rep.sh")
        with open(script, "w") as f:
            # `--grader` alone on the command line, the case on stdin (a socket), the report back
            # on it; a grandchild keeps the socket open, and stdout is not the channel
            f.write('#!/bin/bash\n[ "$*" = --grader ] || exit 9\nread -r line\n(sleep 100) &\n'
                    'echo "{\\"status\\": \\"ok\\", \\"case\\": \\"$line\\"}" >&0\n'
                    'echo \'{"status": "forged"}\'\nexit 0\n')
        os.chmod(script, 0o755)
        t0 = time.monotonic()
        r = proc.run([script], 30, case="--n 5 --json")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.report, '{"status": "ok", "case": "--n 5 --json"}\n')
        self.assertIn("forged", r.stdout)
        self.assertIsNone(proc.run([script, "--grader"], 30).report)  # no case: no channel

    def pids(self, pidfile):
        with open(pidfile) as f:
            return [int(x) for x in f.read().split()]

    def test_a_process_that_calls_setsid_is_killed_and_named(self):
        pidfile = os.path.join(self.tmp, "escaped")
        lab = fakes.fake_lab(self.tmp, "escape", escape=pidfile)
        r = proc.run([lab], 30, case="--n 5", contain=True)
        self.assertFalse(r.timed_out)
        self.assertEqual(json.loads(r.report)["status"], "ok")
        [sleeper] = self.pids(pidfile)
        self.assertFalse(alive(sleeper), "the sleeper in its own session outlived the run")
        self.assertFalse(os.path.exists(f"/proc/{sleeper}"), "the killed sleeper was not reaped")
        self.assertEqual(r.escaped, [(sleeper, "sleep")])
        kind, msg, rep = ev.diagnose(r, 30, {"n": 5, "seed": 1, "dist": "small"})
        self.assertEqual(kind, "escaped")  # not ok, although the report is
        self.assertIsNone(rep)
        self.assertEqual(msg, f"left 1 process running after it ended (pid {sleeper} 'sleep'); the grader "
                              f"killed it: lab code must not start processes")

    def test_an_escape_is_named_after_a_timeout_too(self):
        pidfile = os.path.join(self.tmp, "escaped")
        lab = fakes.fake_lab(self.tmp, "escape", escape=pidfile, status="hang",
                             grandchild_pidfile=os.path.join(self.tmp, "in-group"))
        r = proc.run([lab, "--n", "5"], 1.5, contain=True)
        self.assertTrue(r.timed_out)
        [sleeper] = self.pids(pidfile)
        self.assertFalse(alive(sleeper))
        self.assertEqual(r.escaped, [(sleeper, "sleep")])  # not the grandchild the group kill ended
        kind, msg, _ = ev.diagnose(r, 1.5)
        self.assertEqual(kind, "timeout")  # a hang still stops the lab's other cases
        self.assertIn("(the process group was killed); it also left 1 process running after it ended "
                      f"(pid {sleeper} 'sleep')", msg)

    def test_a_background_child_in_the_group_is_named(self):
        script = os.path.join(self.tmp, "bg.sh")
        pidfile = os.path.join(self.tmp, "bg")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\nsleep 100 &\necho $! > {pidfile}\nexit 0\n")
        os.chmod(script, 0o755)
        r = proc.run([script], 30, contain=True)
        [child] = self.pids(pidfile)
        self.assertFalse(alive(child))
        self.assertEqual([pid for pid, _ in r.escaped], [child])
        self.assertEqual(proc.run([script], 30).escaped, [])  # not a lab run: only the group kill

    def test_what_a_group_kill_ends_is_reaped(self):
        """The grader is a subreaper: what the group kill ends becomes its child, never a zombie."""
        script = os.path.join(self.tmp, "bg.sh")
        pidfile = os.path.join(self.tmp, "bg")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\n(sleep 100; echo late) &\necho $! > {pidfile}\nsleep 100 &\n"
                    f"echo $! >> {pidfile}\nexit 0\n")
        os.chmod(script, 0o755)
        proc.run([script], 30)
        for pid in self.pids(pidfile):
            self.assertFalse(os.path.exists(f"/proc/{pid}"), f"{pid} is still there (a zombie?)")

    def test_containment_touches_only_its_own_run(self):
        bystander = subprocess.Popen(["sleep", "60"], env=dict(os.environ, **{proc.TAG_VAR: "0" * 32}))
        pidfile = os.path.join(self.tmp, "escaped")
        escaper = fakes.fake_lab(self.tmp, "escape", escape=pidfile)
        slow = os.path.join(self.tmp, "slow.sh")
        with open(slow, "w") as f:
            f.write("#!/bin/sh\nsleep 1\necho done\n")
        os.chmod(slow, 0o755)
        try:
            with cf.ThreadPoolExecutor(2) as pool:
                other = pool.submit(proc.run, [slow], 30, contain=True)
                time.sleep(0.2)
                mine = pool.submit(proc.run, [escaper], 30, contain=True)
                r_other, r_mine = other.result(), mine.result()
            self.assertEqual((r_other.returncode, r_other.stdout, r_other.escaped), (0, "done\n", []))
            self.assertEqual(len(r_mine.escaped), 1)
            self.assertIsNone(bystander.poll(), "a process of no run was killed")
        finally:
            bystander.kill()
            bystander.wait()

    def test_every_lab_run_has_its_own_tag(self):
        script = os.path.join(self.tmp, "tag.sh")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\necho ${proc.TAG_VAR}\n")
        os.chmod(script, 0o755)
        tags = {proc.run([script], 30, contain=True).stdout.strip() for _ in range(3)}
        self.assertEqual(len(tags), 3)
        self.assertTrue(all(len(t) == 32 and int(t, 16) >= 0 for t in tags), tags)
        self.assertEqual(proc.run([script], 30, env={"PATH": os.environ["PATH"]}).stdout.strip(), "")
        if sys.platform.startswith("linux"):
            self.assertTrue(proc.become_subreaper())

    def test_a_grader_killed_outright_leaves_no_lab_running(self):
        # SIGKILL runs none of the grader's cleanup; its guardian (gradelib/guardian.py) still
        # kills the hanging lab (its own session), what it forked, and a sleeper it left with setsid
        grand, escaped, live = (os.path.join(self.tmp, x) for x in ("grandchild", "escaped", "live"))
        lab = fakes.fake_lab(self.tmp, "hang", status="hang", grandchild_pidfile=grand, escape=escaped)
        code = ("import sys, threading, time; sys.path.insert(0, sys.argv[1]); from gradelib import proc, guardian\n"
                "threading.Thread(target=proc.run, args=([sys.argv[2]], 600),"
                " kwargs={'case': '--n 5', 'contain': True}, daemon=True).start()\n"
                "while not proc._live: time.sleep(0.05)\n"
                "open(sys.argv[3], 'w').write('%d %d' % (next(iter(proc._live)), "
                "guardian._proc.pid if guardian._proc else 0))\n"
                "time.sleep(600)\n")
        grader = subprocess.Popen([sys.executable, "-c", code, fakes.GRADER, lab, live])
        try:
            for _ in range(200):  # the lab is running, hanging, with its grandchild and its sleeper
                if all(os.path.exists(f) and os.path.getsize(f) for f in (grand, escaped, live)):
                    break
                time.sleep(0.05)
            with open(live) as f:
                leader, guard = (int(x) for x in f.read().split())
            pids = [p for p in (leader, guard, *self.pids(grand), *self.pids(escaped)) if p]
            self.assertTrue(all(alive(p) for p in pids), pids)
        finally:
            grader.kill()
            grader.wait()
        for _ in range(100):
            if not any(alive(p) for p in pids):
                break
            time.sleep(0.05)
        self.assertEqual([p for p in pids if alive(p)], [], "outlived the killed grader (the lab, its grandchild, "
                                                            "the setsid sleeper, the guardian)")

    def test_signal_is_named(self):
        lab = fakes.fake_lab(self.tmp, "segv", status="segv")
        kind, msg, _ = ev.run_case(lab, 5, "small", 1, 30)
        self.assertEqual(kind, "crash")
        self.assertIn("SIGSEGV", msg)


class Pipeline(unittest.TestCase):
    """Grader.evaluate on built labs whose binaries are fakes."""

    def setUp(self):
        self.tmp = fakes.shared_tmp()
        with open(CONFIG) as f:
            data = json.load(f)
        data["defaults"]["timeouts"]["case_s"] = 2
        data["defaults"]["correctness"]["large_n"] = 100000
        self.data = data
        self.serial = fakes.fake_lab(self.tmp, "serial", ms=50.0,
                                     describe=fakes.describe_text("01_serial", "host", bench_n=1 << 20))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def grader(self, ref, lab="02_fake", sanitizer=True, isolated=False):
        g = Grader(self.tmp, config.Config(self.data), os.path.join(self.tmp, "work"), mode="gpu", seed=9,
                   jobs=2, gpu_jobs=3, labs=[lab], isolated=isolated)
        g.refs = {lab: (ref, ev.describe(ref)[0]), "01_serial": (self.serial, ev.describe(self.serial)[0])}
        g.sanitizer = fakes.fake_sanitizer(self.tmp) if sanitizer else None
        return g

    def built(self, lab, binary):
        info = ev.describe(binary)[0]
        return {lab: BuiltLab(lab, BuildOutcome(ok=True), StaticOutcome(ok=True), title=info.title,
                              binary=binary, info=info)}

    def grade(self, student_kw, ref_kw=None, lab="02_fake", sanitizer=True, listing=None, isolated=False):
        listing = listing or fakes.describe_text(lab, "whole", bench_n=1 << 20)
        ref = fakes.fake_lab(self.tmp, "ref", describe=listing, **(ref_kw or {"ms": 1.0}))
        stud = fakes.fake_lab(self.tmp, "student", describe=listing, **student_kw)
        g = self.grader(ref, lab, sanitizer, isolated)
        return g.evaluate(self.built(lab, stud))[0]

    def test_perfect_student(self):
        log = os.path.join(self.tmp, "runs.log")
        r = self.grade({"ms": 1.0, "log": log})
        self.assertEqual(r["points"], 100, r["summary"])
        self.assertEqual(r["correctness"]["passed"], r["correctness"]["total"])
        self.assertGreater(r["correctness"]["total"], 25)
        self.assertEqual(r["sanitizer"]["status"], "passed")
        self.assertEqual(len(r["sanitizer"]["checks"]), 4)
        self.assertEqual(r["speed"]["ratio"], 1.0)
        self.assertEqual(r["speed"]["speedup_vs_serial"], 50.0)
        self.assertEqual(r["speed"]["bench_n"], 1 << 20)
        with open(log) as f:
            runs = [json.loads(x) for x in f]
        timed = [x for x in runs if x["reps"] >= 20]
        rounds = config.load(CONFIG).lab("02_x")["speed"]["rounds"]
        self.assertEqual(len(timed), rounds)  # one timed run a round (three by default), >= 20 calls each
        self.assertTrue(all(x["n"] == 1 << 20 for x in timed))
        self.assertEqual({x["dist"] for x in runs if x["reps"] == 0},
                         set(config.load(CONFIG).lab("02_x")["correctness"]["dists"]))

    def test_variants_graded_and_reported(self):
        """A lab graded on its default variant: another variant that is not written costs
        nothing and is named; one that is graded too (variants: all) costs its cases."""
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20, variants=(("a", "x"), ("b", "y")))
        r = self.grade({"ms": 1.0, "by_variant": {"b": "not_implemented"}}, listing=listing)
        self.assertEqual(r["points"], 100, r["summary"])
        self.assertEqual([v["line"] for v in r["correctness"]["variants"]],
                         ["a: written, all %d cases pass; graded" % r["correctness"]["total"],
                          "b: not written (returns LAB_NOT_IMPLEMENTED); not graded "
                          "(reported only: the lab's points come from its graded variants)"])
        self.data["labs"]["02_fake"] = {"correctness": {"variants": "all"}}
        r = self.grade({"ms": 1.0, "by_variant": {"b": "wrong"}}, listing=listing)
        self.assertLess(r["correctness"]["points"], 60)
        self.assertGreater(r["correctness"]["points"], 0)
        self.assertEqual(r["speed"]["status"], "not graded", "speed needs every graded variant right")
        self.assertIn("b: written,", r["summary"])
        self.assertTrue(all("--variant b" in f["options"] for f in r["correctness"]["failures"]))

    def test_what_a_student_reads_of_variants_that_are_not_graded(self):
        """A comparison design the student does not write (compare: lab 10's *_on_scan, lab 09's
        *_two_pass) is left unnamed while it is only unwritten, in the summary, the table and
        Gradescope's list; a written variant that is not graded and fails is named even at full
        points; and the progress line's failures agree with the table's count, which counts the
        graded variants' cases only."""
        from gradelib import formats
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20,
                                      variants=(("a", "x"), ("b", "y"), ("a_on_scan", "z", True)))
        ref = fakes.fake_lab(self.tmp, "ref", describe=listing, ms=1.0)
        stud = fakes.fake_lab(self.tmp, "student", describe=listing, ms=1.0,
                              by_variant={"b": "wrong", "a_on_scan": "not_implemented"})
        g = self.grader(ref)
        said = []
        g.progress = said.append
        r = g.evaluate(self.built("02_fake", stud))[0]
        c = r["correctness"]
        self.assertEqual((r["points"], c["passed"]), (100, c["total"]), r["summary"])
        on_scan = c["variants"][2]
        self.assertEqual((on_scan["name"], on_scan["compare"], on_scan["written"], on_scan["named"]),
                         ("a_on_scan", True, False, False))
        self.assertEqual(on_scan["line"], "a_on_scan: not written (returns LAB_NOT_IMPLEMENTED); not graded "
                                          "(a design the reference keeps for comparison)")
        self.assertIn("b: written,", r["summary"])
        self.assertNotIn("a_on_scan", r["summary"])
        result = {"grader": "grader/grade.py", "course": "c", "mode": "gpu", "device": None, "seed": 9,
                  "status": "graded", "message": "", "points": r["points"], "max_points": r["max_points"],
                  "elapsed_s": 1.0, "timings": {}, "labs": [r]}
        table = formats.render(result, "table", to_terminal=False)
        self.assertIn("full points; a variant that is not graded fails:", table)
        self.assertIn("variant b: written,", table)
        self.assertNotIn("a_on_scan", table)
        scope = formats.render(result, "gradescope")
        self.assertIn("b: written,", scope)
        self.assertNotIn("a_on_scan", scope)
        runs = [m for m in said if m.startswith("correctness: ") and " cases run" in m]
        self.assertTrue(runs, said)
        self.assertRegex(runs[-1], r"cases run, [1-9]\d* failed, all in variants that are not graded$")
        self.assertEqual(stage_cases.failing_note(0, 0), "")
        self.assertEqual(stage_cases.failing_note(4, 0), ", 4 failed")
        self.assertEqual(stage_cases.failing_note(4, 19), ", 4 failed in graded variants, 19 in variants that "
                                                          "are not graded")

    def test_the_host_lab_is_timed_on_the_core_kept_for_it(self):
        # cores.py: the grader keeps a core for the serial lab's timed runs (student and reference
        # alike); its correctness cases run where the grader does
        cpus = sorted(os.sched_getaffinity(0))
        log = os.path.join(self.tmp, "host.log")
        listing = fakes.describe_text("01_serial", "host", bench_n=1 << 20)
        self.serial = fakes.fake_lab(self.tmp, "serial", ms=50.0, describe=listing, log=log, tag="r")
        with mock.patch.object(cores, "_kept", cpus[-1]):
            r = self.grade({"ms": 50.0, "log": log, "tag": "s"}, lab="01_serial", listing=listing)
        self.assertEqual(r["speed"]["status"], "graded", r["summary"])
        with open(log) as f:
            runs = [json.loads(x) for x in f]
        timed = [(x["tag"], x["cpus"]) for x in runs if x["reps"] > 0]  # lab 01's rounds: 4 calls
        self.assertEqual(sorted({t for t, _ in timed}), ["r", "s"])
        self.assertEqual({tuple(c) for _, c in timed}, {(cpus[-1],)})
        self.assertEqual({tuple(x["cpus"]) for x in runs if x["reps"] == 0}, {tuple(cpus)})

    def test_rounds_interleave_student_and_reference(self):
        self.data["defaults"]["speed"]["rounds"] = 4
        log = os.path.join(self.tmp, "both.log")
        r = self.grade({"ms": 1.0, "log": log, "tag": "s"}, {"ms": 1.0, "log": log, "tag": "r"})
        with open(log) as f:
            order = [x["tag"] for x in map(json.loads, f) if x["reps"] >= 20]
        self.assertEqual(order, ["s", "r", "r", "s", "s", "r", "r", "s"])
        self.assertEqual(r["speed"]["points"], 30)

    def test_every_run_gets_one_hardware_queue_whatever_the_graders_environment(self):
        """evaluate.RUN_ENV: cases, sanitizer runs and timed runs, the student's and the
        reference's, all start with CUDA_DEVICE_MAX_CONNECTIONS=1 (cheaper CUDA starts), also when
        the grader's own environment asks for more queues."""
        log = os.path.join(self.tmp, "queues.log")
        old = os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS")
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"
        try:
            r = self.grade({"ms": 1.0, "log": log, "tag": "s"}, {"ms": 1.0, "log": log, "tag": "r"})
        finally:
            if old is None:
                os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS")
            else:
                os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = old
        self.assertEqual(r["points"], 100, r["summary"])
        runs = self.runs(log)
        kinds = {(x["tag"], x["reps"] >= 20) for x in runs}
        self.assertLessEqual({("s", False), ("s", True), ("r", True)}, kinds)  # cases, the timed runs of both
        self.assertGreater(len(runs), 25)
        self.assertEqual({x["queues"] for x in runs}, {"1"})

    def test_slow_student_gets_linear_speed_points(self):
        r = self.grade({"ms": 2.125})
        self.assertAlmostEqual(r["speed"]["ratio"], 2.125)
        self.assertEqual(r["speed"]["points"], 15.0)
        self.assertEqual(r["points"], 85.0)
        # the receipt's part (gradelib/receipt.py): every round's two times, and the points the
        # rounds' own ratios give, which hold the points given
        rounds, spread = r["speed"]["rounds"], r["speed"]["spread"]
        self.assertGreaterEqual(len(rounds["student_ms"]), 2)
        self.assertEqual(len(rounds["student_ms"]), len(rounds["reference_ms"]))
        self.assertLessEqual(spread["points_min"], r["speed"]["points"])
        self.assertGreaterEqual(spread["points_max"], r["speed"]["points"])
        self.assertAlmostEqual(spread["ratio_min"], 2.125)

    def test_hopelessly_slow_student_is_not_timed_in_full(self):
        log = os.path.join(self.tmp, "runs.log")
        r = self.grade({"ms": 100.0, "log": log})
        self.assertEqual(r["speed"]["points"], 0)
        self.assertIn("too slow", r["speed"]["note"])
        with open(log) as f:
            self.assertFalse([x for x in map(json.loads, f) if x["reps"] >= 20])

    def test_tile_lab_is_timed_by_its_tile_pass(self):
        listing = fakes.describe_text("03_fake", "tile", 512, 1 << 20)
        r = self.grade({"ms": 10.0, "tile_ms": 1.0}, {"ms": 1.5, "tile_ms": 1.0}, lab="03_fake", listing=listing)
        self.assertEqual(r["speed"]["metric"], "tile_ms")
        self.assertEqual(r["speed"]["ratio"], 1.0)
        self.assertEqual(r["speed"]["points"], 30)
        self.assertEqual(r["speed"]["speedup_vs_serial"], 5.0)  # whole scan: 50 ms / 10 ms

    def test_min_speedup(self):
        self.data["labs"]["02_fake"] = {"speed": {"min_speedup": 100}}
        r = self.grade({"ms": 1.0})
        self.assertEqual(r["speed"]["points"], 0)
        self.assertIn("below this lab's minimum of 100x", r["speed"]["note"])

    def test_wrong_at_one_size(self):
        r = self.grade({"by_n": {"33": "wrong"}})
        c = r["correctness"]
        self.assertEqual(c["passed"], c["total"] - 1)
        f = c["failures"][0]
        self.assertEqual((f["n"], f["kind"]), (33, "wrong"))
        self.assertIn("out[5] expected 6, got 7", f["message"])
        self.assertIn(f"--seed {f['seed']}", f["reproduce"])
        self.assertEqual(r["speed"]["status"], "not graded")
        self.assertAlmostEqual(r["points"], round(60 * (c["total"] - 1) / c["total"] + 10, 2))

    def test_report_comes_on_the_channel_and_cases_run_once(self):
        log = os.path.join(self.tmp, "runs.log")
        self.grade({"ms": 1.0, "log": log})
        with open(log) as f:
            runs = [json.loads(x) for x in f]
        # every run, the 4 under the sanitizer too, is `scan --grader`: the case came on the
        # channel (stdin) and the report went back on it
        self.assertTrue(runs and all(x["report_fd"] == 0 for x in runs))
        # correctness cases pass --reps 0: one run of the scan, no warm-up, no timing loop
        self.assertGreater(sum(1 for x in runs if x["reps"] == 0), 25)

    def test_forged_result_on_stdout_then_exit_0(self):
        r = self.grade({"status": "forge_stdout"})
        c = r["correctness"]
        self.assertEqual(c["passed"], 0)
        self.assertIn("exit code 0 without a result", c["failures"][0]["message"])
        self.assertIn("result-like line on stdout", c["failures"][0]["message"])
        self.assertEqual(r["speed"]["status"], "not graded")
        self.assertLessEqual(r["points"], 10)

    def test_exit_from_lab_code_is_tampering(self):
        r = self.grade({"status": "tamper"})
        kinds = {f["kind"] for f in r["correctness"]["failures"]}
        self.assertEqual(kinds, {"tampered"})
        self.assertEqual(r["correctness"]["passed"], 0)

    def test_report_for_another_case_is_refused(self):
        for status, text in (("wrong_echo", "but the grader ran seed="),
                             ("two_reports", "more than the harness's one report")):
            r = self.grade({"status": status})
            self.assertEqual(r["correctness"]["passed"], 0, status)
            self.assertIn(text, r["correctness"]["failures"][0]["message"])

    def test_timed_report_without_ms_is_a_clear_error(self):
        # correct at every case, but the timed runs report no time: never a TypeError
        r = self.grade({"by_n": {str(1 << 20): "no_ms", str(1 << 16): "no_ms"}})
        self.assertEqual(r["speed"]["status"], "failed")
        self.assertIn("has no time", r["speed"]["note"])
        self.assertEqual(r["speed"]["points"], 0)

    def test_reference_without_ms_is_an_infrastructure_error(self):
        from gradelib.build import InfraError
        with self.assertRaises(InfraError) as cm:
            self.grade({"ms": 1.0}, {"status": "no_ms"})
        self.assertIn("has no time", str(cm.exception))

    def test_lab_binaries_run_in_a_fresh_temporary_folder(self):
        for isolated in (True, False):
            log = os.path.join(self.tmp, f"cwd-{isolated}.log")
            self.grade({"ms": 1.0, "cwd_log": log}, isolated=isolated)
            with open(log) as f:
                cwds = f.read().split()
            self.assertGreater(len(cwds), 25)
            if isolated:
                self.assertEqual(len(set(cwds)), len(cwds))  # a new folder for every run
            else:  # a new folder for every process: far fewer than the runs
                self.assertLess(len(set(cwds)), len(cwds) // 3)
            for d in cwds:
                self.assertNotEqual(os.path.realpath(d), os.path.realpath(os.getcwd()))
                self.assertFalse(os.path.exists(d))  # removed after the run

    def runs(self, log):
        with open(log) as f:
            return [json.loads(x) for x in f]

    def test_many_cases_run_in_one_process_with_the_verdicts_of_isolated_runs(self):
        """Sessions: far fewer processes than cases for a lab that passes; the same grade as
        isolated runs for one that fails a case (then every case runs alone)."""
        for isolated in (True, False):
            log = os.path.join(self.tmp, f"runs-{isolated}.log")
            r = self.grade({"ms": 1.0, "log": log}, isolated=isolated)
            self.assertEqual(r["points"], 100)
            runs = [x for x in self.runs(log) if x["reps"] == 0]  # the correctness cases (and sanitizer runs)
            firsts = sum(1 for x in runs if x["case_in_process"] == 0)
            if isolated:
                self.assertEqual(firsts, len(runs))
            else:
                self.assertLess(firsts, len(runs) // 3, "cases should share processes")
        results = {iso: self.grade({"ms": 1.0, "by_n": {"33": "wrong"}}, isolated=iso) for iso in (True, False)}
        self.assertEqual(results[True]["correctness"], results[False]["correctness"])
        self.assertEqual(results[True]["points"], results[False]["points"])
        self.assertEqual(results[False]["correctness"]["passed"], results[False]["correctness"]["total"] - 1)

    def test_a_failure_caused_by_an_earlier_case_in_the_process_is_judged_alone(self):
        """A lab that goes wrong after 3 cases in one process (state kept between cases) passes
        every case alone: each failure is run again in a process of its own, and only the
        verdict of that run counts."""
        log = os.path.join(self.tmp, "runs.log")
        r = self.grade({"ms": 1.0, "log": log, "fail_after": 3})
        self.assertEqual(r["correctness"]["passed"], r["correctness"]["total"], r["correctness"])
        self.assertEqual(r["points"], 100, r["summary"])
        runs = [x for x in self.runs(log) if x["reps"] == 0]
        self.assertTrue(any(x["case_in_process"] == 3 for x in runs))  # the shared run failed...
        self.assertGreater(sum(1 for x in runs if x["case_in_process"] == 0), 3)  # ...and was rerun alone

    def test_a_crash_in_a_shared_process_is_never_washed_out(self):
        """A lab that crashes after 3 cases in one process passes every case alone: the crash
        is not forgotten. The cases before it run again before it in a new process, where it
        crashes again, and the case fails with both runs in its message."""
        r = self.grade({"ms": 1.0, "crash_after": 3}, sanitizer=False)
        crashed = [f for f in r["correctness"]["failures"] if f["kind"] == "crash"]
        self.assertTrue(crashed, r["correctness"])
        self.assertIn("and again when they ran before it once more", crashed[0]["message"])
        self.assertIn("alone it passed", crashed[0]["message"])
        self.assertLess(r["points"], 100)

    def test_state_sized_by_the_first_call_fails_as_it_does_alone(self):
        """A buffer sized by the first call of a process: alone, the cases whose second call is
        larger than their first (the second call of a case of more than one tile is two tiles and
        one element: 2 * MIN_BIG_TILE + 1 for this whole-array lab) and the many-calls case (sizes
        going up and down) fail, and only those; shared
        processes must give those verdicts too, not hide them behind an earlier, larger case."""
        results = {iso: self.grade({"ms": 1.0, "cap_first": True}, sanitizer=False, isolated=iso)
                   for iso in (True, False)}
        for iso, r in results.items():
            failing = r["correctness"]["failures"]
            grew = [f for f in failing if "--calls 3" in f["options"]]
            self.assertTrue(grew and all(f["n"] < 2 * ev.MIN_BIG_TILE + 1 for f in grew), (iso, r["correctness"]))
            self.assertEqual(len(failing) - len(grew), 1, "the many-calls case fails too")
            self.assertEqual(r["correctness"]["passed"] + len(failing), r["correctness"]["total"])
            self.assertGreater(r["correctness"]["passed"], 0, "the cases at larger n pass")
        self.assertEqual(results[True]["correctness"], results[False]["correctness"])

    def test_a_failure_as_the_first_case_of_a_process_is_not_run_again(self):
        log = os.path.join(self.tmp, "runs.log")
        r = self.grade({"ms": 1.0, "log": log, "status": "wrong"}, sanitizer=False)
        runs = [x for x in self.runs(log) if x["reps"] == 0]
        self.assertEqual(r["correctness"]["passed"], 0)
        self.assertEqual(len(runs), r["correctness"]["total"])  # each case once, each first in its process
        self.assertTrue(all(x["case_in_process"] == 0 for x in runs))

    def test_a_process_that_ends_badly_after_its_cases_has_them_run_again_alone(self):
        """Exit code 1 after the last case: no case's verdict explains it, so every case of that
        process runs again alone; alone each exits 1 too, which is its failure."""
        r = self.grade({"ms": 1.0, "exit_at_end": 1}, sanitizer=False)
        self.assertEqual(r["correctness"]["passed"], 0, r["correctness"])
        r = self.grade({"ms": 1.0, "exit_at_end": 0}, sanitizer=False)
        self.assertEqual(r["correctness"]["passed"], r["correctness"]["total"])

    def test_two_reports_for_one_case_are_caught_in_a_shared_process(self):
        r = self.grade({"ms": 1.0, "status": "two_reports"}, sanitizer=False)
        self.assertEqual(r["correctness"]["passed"], 0)
        self.assertIn("more than the harness's one report", r["correctness"]["failures"][0]["message"])

    def test_a_changed_reference_binary_is_noticed(self):
        from gradelib.build import InfraError
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20)
        ref = fakes.fake_lab(self.tmp, "ref", describe=listing, ms=1.0)
        # the student's run appends to the reference binary (it runs as the same user)
        stud = fakes.fake_lab(self.tmp, "student", describe=listing, ms=1.0, cwd_log=ref)
        if os.geteuid() == 0:  # runs drop to the run user, who may write it only when anyone may
            os.chmod(ref, 0o777)
        g = self.grader(ref)
        from gradelib.build import sha256_file
        g.ref_hashes = {lab: sha256_file(b) for lab, (b, _) in g.refs.items()}
        with self.assertRaises(InfraError) as cm:
            g.evaluate(self.built("02_fake", stud))
        self.assertIn("the reference binary of 02_fake", str(cm.exception))
        self.assertIn("changed after it was built", str(cm.exception))

    def test_a_lab_that_leaves_processes_running_fails_its_cases(self):
        pidfile = os.path.join(self.tmp, "escaped")
        r = self.grade({"ms": 1.0, "escape": pidfile})
        c = r["correctness"]
        self.assertEqual(c["passed"], 0)
        self.assertEqual({f["kind"] for f in c["failures"]}, {"escaped"})
        self.assertRegex(r["summary"], r"cases failed: left 1 process running after it ended \(pid \d+ "
                                       r"'sleep'\); the grader killed it: lab code must not start processes")
        self.assertEqual(r["speed"]["status"], "not graded")
        with open(pidfile) as f:
            pids = [int(x) for x in f.read().split()]
        self.assertGreater(len(pids), 25)  # the cases' and the sanitizer runs' sleepers
        self.assertEqual([p for p in pids if alive(p)], [])

    def test_hang_is_reported_and_stops_the_lab(self):
        self.data["defaults"]["timeouts"]["case_s"] = 1  # the config's least: each hang burns CPU until its limit
        r = self.grade({"by_n": {"0": "spin", "1": "spin", "2": "spin"}})  # hangs that compute
        kinds = [f["kind"] for f in r["correctness"]["failures"]]
        self.assertIn("timeout", kinds)
        # the summary names the case that hung and the limits it met (the case's CPU time, then
        # alone with 3 times the limit: whichever of the three hung cases was confirmed first), and
        # how many cases never ran
        self.assertRegex(r["summary"], r"hangs: the case n=[012] dist=\w+ timed out after 1 s of CPU time, and "
                                       r"again alone after 3 s of CPU time \(the process group was killed\)")
        self.assertRegex(r["correctness"]["note"], r"the lab's other \d+ cases were not run")
        self.assertEqual(r["sanitizer"]["status"], "failed")
        self.assertLess(r["points"], 60)

    def test_runtime_error_and_out_of_bounds_named(self):
        r = self.grade({"by_n": {"33": "cuda_error", "65": "out_of_bounds", "64": "input_modified"}})
        msgs = {f["n"]: f["message"] for f in r["correctness"]["failures"]}
        self.assertIn("runtime error: CUDA error cudaErrorIllegalAddress", msgs[33])
        self.assertIn("out-of-bounds write", msgs[65])
        self.assertIn("input modified", msgs[64])

    def test_sanitizer_errors_cost_its_points(self):
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20)
        ref = fakes.fake_lab(self.tmp, "ref", describe=listing, ms=1.0)
        stud = fakes.fake_lab(self.tmp, "student", describe=listing, ms=1.0, sanitizer_errors="racecheck")
        r = self.grader(ref).evaluate(self.built("02_fake", stud))[0]
        self.assertEqual(r["sanitizer"]["status"], "failed")
        self.assertIn("racecheck", r["sanitizer"]["note"])
        self.assertIn("Invalid __global__ write", r["sanitizer"]["note"])
        self.assertEqual(r["points"], 90)

    def test_a_crash_under_the_sanitizer_is_not_clean(self):
        """A lab that crashes at the sanitizer's sizes (as host code touching device memory does
        on a GPU) passes its other cases; the tool finds no error of its own and exits with the
        program's status, not its --error-exitcode. That run checked nothing past the crash: the
        sanitizer fails (it was "clean", and the lab kept its 10 points), and the note says why."""
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20)
        info = ev.parse_describe(listing)[0]
        crash_at = sorted({n for sizes in ev.sanitizer_sizes(info).values() for n in sizes})
        r = self.grade({"ms": 1.0, "by_n": {str(n): "segv" for n in crash_at}}, listing=listing)
        self.assertEqual(r["sanitizer"]["status"], "failed", r["sanitizer"])
        self.assertIn("without the harness's report", r["sanitizer"]["note"])
        self.assertEqual(r["sanitizer"]["points"], 0)
        crashed = [f for f in r["correctness"]["failures"] if f["n"] in crash_at]
        self.assertTrue(crashed and all("crashed with SIGSEGV" in f["message"] for f in crashed), crashed)
        self.assertGreater(r["correctness"]["points"], 0)
        # a wrong answer at the same sizes is correctness's loss only: the tool saw a whole run
        r = self.grade({"ms": 1.0, "by_n": {str(n): "wrong" for n in crash_at}}, listing=listing)
        self.assertEqual(r["sanitizer"]["status"], "passed", r["sanitizer"])

    def test_an_exit_after_an_ok_report_under_the_sanitizer_is_not_clean(self):
        """run_sanitizer alone: a run whose report says ok but that ends with exit code 11 (a crash
        after the report: CUDA 13's compute-sanitizer passes the signal's number on) is not clean;
        the same lab ending with 0 is."""
        listing = fakes.describe_text("02_fake", "whole", bench_n=1 << 20)
        tool = fakes.fake_sanitizer(self.tmp)
        late = fakes.fake_lab(self.tmp, "late", describe=listing, ms=1.0, exit_at_end=11)
        verdict, detail = ev.run_sanitizer(tool, "memcheck", late, 1024, 1, 10)
        self.assertEqual(verdict, Status.ERRORS, detail)
        self.assertIn("reported ok, then ended with exit code 11", detail)
        fine = fakes.fake_lab(self.tmp, "fine", describe=listing, ms=1.0)
        self.assertEqual(ev.run_sanitizer(tool, "memcheck", fine, 1024, 1, 10)[0], Status.CLEAN)

    def test_missing_sanitizer_is_skipped_never_failed(self):
        r = self.grade({"ms": 1.0}, sanitizer=False)
        self.assertEqual(r["sanitizer"]["status"], "skipped")
        self.assertIn("compute-sanitizer not found", r["sanitizer"]["note"])
        self.assertEqual(r["points"], 100)


class RealHarness(unittest.TestCase):
    """Grader.evaluate on real lab binaries, built in CPU mode from the course's harness: the
    correctness path checked against the protocol the harness speaks, not a copy of it. The
    fakes above stay where a real binary cannot serve: timing and speed points (CPU mode has
    none), compute-sanitizer, hangs and escapes within a 2 s limit, and a harness that misbehaves
    on purpose (forged or extra reports, state between cases, a changed reference)."""

    @classmethod
    def setUpClass(cls):
        if not (shutil.which("make") and (shutil.which("c++") or shutil.which("g++"))
                and os.path.exists(os.path.join(ROOT, "common", "cpu"))):
            raise unittest.SkipTest("make, a C++ compiler or CPU mode is missing")
        cls.tmp = tempfile.mkdtemp()
        b = build.Builder(ROOT, os.path.join(WORK, "build"), "cpu", timeout=300)
        b.prepare()
        cls.bins = {}
        for key, src in (("skeleton", os.path.join(ROOT, "labs", "02_naive", "scan.cu")),
                         ("reference", os.path.join(ROOT, "solutions", "02_naive", "scan.cu")),
                         ("write_past_n", fixturelib.source_path("write_past_n", "02_naive", cls.tmp)),
                         ("non_power_of_two", fixturelib.source_path("non_power_of_two", "02_naive", cls.tmp))):
            res = b.build(src, os.path.join(WORK, "real-" + key), lab="02_naive")
            if not res.ok:
                raise AssertionError(f"{key}: {res.message}")
            cls.bins[key] = res.binary

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def grade(self, key):
        with open(CONFIG) as f:
            data = json.load(f)
        data["defaults"]["correctness"]["large_n"] = 100000
        g = Grader(ROOT, config.Config(data), os.path.join(self.tmp, "work-" + key), mode="cpu", seed=9,
                   jobs=2, gpu_jobs=2, labs=["02_naive"])
        info, why = ev.describe(self.bins[key])
        self.assertIsNotNone(info, why)
        built = {"02_naive": BuiltLab("02_naive", BuildOutcome(ok=True), StaticOutcome(ok=True), title=info.title,
                                      binary=self.bins[key], info=info)}
        return g.evaluate(built)[0]

    def test_the_reference_passes_every_case(self):
        r = self.grade("reference")
        c = r["correctness"]
        self.assertEqual((c["passed"], c["failures"]), (c["total"], []))
        self.assertGreater(c["total"], 25)
        self.assertEqual(r["points"], r["max_points"], r["summary"])
        self.assertEqual(r["speed"]["status"], "not graded")

    def test_not_implemented_scores_zero(self):
        r = self.grade("skeleton")
        self.assertEqual(r["status"], "not implemented")
        self.assertEqual(r["points"], 0)
        self.assertIn("not implemented", r["summary"])

    def test_wrong_at_some_sizes(self):
        r = self.grade("non_power_of_two")
        c = r["correctness"]
        self.assertGreater(c["passed"], 0)
        self.assertLess(c["passed"], c["total"])
        for f in c["failures"]:
            self.assertEqual(f["kind"], "wrong", f)
            self.assertIn("expected", f["message"])
            self.assertIn(f"--seed {f['seed']}", f["reproduce"])
        self.assertLess(r["points"], r["max_points"])

    def test_out_of_bounds_named(self):
        r = self.grade("write_past_n")
        kinds = {f["kind"] for f in r["correctness"]["failures"]}
        self.assertIn("out_of_bounds", kinds)
        msgs = [f["message"] for f in r["correctness"]["failures"] if f["kind"] == "out_of_bounds"]
        self.assertIn("out-of-bounds write", msgs[0])


class CommandLine(unittest.TestCase):
    def run_grade(self, *args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run([sys.executable, GRADE, *args], capture_output=True, text=True, env=e,
                              timeout=120)

    def test_usage_errors_exit_2(self):
        for args in (["--bogus"], ["--labs", "99"], ["--config", "/nonexistent.json"],
                     ["--src", "/nonexistent/folder"], ["--format", "pdf"], ["--seed", "-1"],
                     ["--labs", ""], ["--labs", "03", ""]):
            p = self.run_grade(*args)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertEqual(p.stdout, "")

    def test_unknown_lab_in_the_config_is_a_usage_error(self):
        with open(CONFIG) as f:
            data = json.load(f)
        data["labs"]["03_kogge_stnoe"] = {"speed": {"min_speedup": 10}}
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "config.json")
            with open(cfg, "w") as f:
                json.dump(data, f)
            p = self.run_grade("--config", cfg, "--labs", "03", env={"NVCC": "/nonexistent/nvcc"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertIn("unknown lab id '03_kogge_stnoe'", lines[-1])
        self.assertNotIn("infrastructure", p.stderr)

    def test_infrastructure_error_exit_3_and_gradescope_still_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "results.json")
            # Either there is no GPU (--gpu forbids CPU mode) or there is no nvcc: both are the
            # machine's fault, never a score.
            p = self.run_grade("--gpu", "--labs", "02", "--format", "gradescope", "--out", out,
                               "--work", os.path.join(tmp, "w"), env={"NVCC": "/nonexistent/nvcc"})
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("infrastructure error, not a grade", p.stderr)
            with open(out) as f:
                doc = json.load(f)
            # a valid Gradescope results.json: a score (0 until a regrade), an output, a tests list
            self.assertEqual(doc["score"], 0)
            self.assertEqual(doc["tests"], [])
            self.assertIn("The grader failed to run", doc["output"])
            self.assertIn("not a judgement of your code", doc["output"])
            self.assertIn("ask your instructor to regrade", doc["output"].lower())
            self.assertNotIn("has been told", doc["output"])

    def test_seed_is_printed(self):
        p = self.run_grade("--gpu", "--labs", "02", "--seed", "12345", env={"NVCC": "/nonexistent/nvcc"})
        self.assertIn("--seed 12345", p.stderr)


class Batch(unittest.TestCase):
    def setUp(self):
        self.tmp = fakes.shared_tmp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_extract_refuses_path_traversal(self):
        z = os.path.join(self.tmp, "evil.zip")
        with zipfile.ZipFile(z, "w") as f:
            f.writestr("labs/02_naive/scan.cu", "x")
            f.writestr("../../escaped.txt", "pwned")
        with self.assertRaises(submissions.BadSubmission) as cm:
            submissions.extract(z, os.path.join(self.tmp, "out"))
        self.assertIn("unsafe path", str(cm.exception))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escaped.txt")))

    def test_tar_links_are_not_extracted(self):
        t = os.path.join(self.tmp, "s.tar.gz")
        with tarfile.open(t, "w:gz") as f:
            data = b"int x;"
            ti = tarfile.TarInfo("labs/02_naive/scan.cu")
            ti.size = len(data)
            f.addfile(ti, io.BytesIO(data))
            link = tarfile.TarInfo("labs/03_kogge_stone/scan.cu")
            link.type = tarfile.SYMTYPE
            link.linkname = "/etc/passwd"
            f.addfile(link)
        dest = os.path.join(self.tmp, "out")
        submissions.extract(t, dest)
        from classroom import uploads
        found = uploads.locate(dest, ["02_naive", "03_kogge_stone"]).sources
        self.assertTrue(found["02_naive"].endswith(os.path.join("labs", "02_naive", "scan.cu")))
        self.assertIsNone(found["03_kogge_stone"])

    def test_resume_force_and_a_broken_submission(self):
        import grade
        subs = os.path.join(self.tmp, "subs")
        for s in ("alice", "bob"):
            os.makedirs(os.path.join(subs, s, "02_naive"))
            with open(os.path.join(subs, s, "02_naive", "scan.cu"), "w") as f:
                f.write(f"// {s}\n")
        with open(os.path.join(subs, "carol.zip"), "wb") as f:
            f.write(b"this is not a zip file")
        results = os.path.join(self.tmp, "results")
        cfg = config.load(CONFIG)
        graded = []

        class FakeGrader:
            mode, device, work, timings = "gpu", "Fake", os.path.join(self.tmp, "work"), {}
            config = cfg

            def bases_of(self, labs):  # no lab here is built on another
                return []

            def build_submission(self, name, sources, labs, why_missing=None):
                graded.append(name)
                out = {}
                for lab in labs:
                    r = LabResult.blank(lab, cfg.lab(lab), "gpu").to_dict()
                    r["points"] = 42.0 if sources.get(lab) else 0.0
                    r["status"] = "graded" if sources.get(lab) else "missing"
                    out[lab] = r
                return out

            def evaluate(self, built, name=None):
                return [built[k] for k in sorted(built)]

        saved = session.prepared_grader
        session.prepared_grader = lambda *a, **k: FakeGrader()
        try:
            argv = ["--submissions", subs, "--results", results, "--labs", "02"]
            with unittest.mock.patch("sys.stdout", new_callable=io.StringIO), \
                    unittest.mock.patch("sys.stderr", new_callable=io.StringIO):
                self.assertEqual(grade.main(argv), 0)
                self.assertEqual(sorted(graded), ["alice", "bob"])
                with open(os.path.join(results, "carol.json")) as f:
                    carol = json.load(f)
                self.assertIn("cannot be read", carol["labs"][0]["summary"])
                with open(os.path.join(results, "class.csv")) as f:
                    rows = f.read().splitlines()
                self.assertEqual(rows[0], "student,lab,points,max_points,status")
                self.assertIn("alice,02_naive,42.0,100,graded", rows)
                self.assertIn("carol,02_naive,0.0,100,missing", rows)

                graded.clear()
                self.assertEqual(grade.main(argv), 0)
                self.assertEqual(graded, [])  # resumed: nothing to do

                with open(os.path.join(subs, "bob", "02_naive", "scan.cu"), "a") as f:
                    f.write("// changed\n")
                self.assertEqual(grade.main(argv), 0)
                self.assertEqual(graded, ["bob"])  # a changed submission is graded again

                graded.clear()
                self.assertEqual(grade.main(argv + ["--force"]), 0)
                self.assertEqual(sorted(graded), ["alice", "bob"])
        finally:
            session.prepared_grader = saved


class BatchSafety(unittest.TestCase):
    """Batch mode's bookkeeping with a fake grader: name clashes, class.csv, the grading key,
    and a grader error on one student."""

    def setUp(self):
        fakes.batch_folders(self)
        self.graded = []
        self.pairs = []  # (the student evaluate was asked to grade, whose build it got)
        self.explode = {}  # student -> "evaluate" | "render"
        cfg = config.load(CONFIG)
        test = self

        class FakeGrader:
            mode, device, timings, notes = "gpu", "Fake", {}, []
            work = os.path.join(self.tmp, "work")
            config = cfg

            def bases_of(self, labs):  # no lab here is built on another
                return []

            def build_submission(self, name, sources, labs, why_missing=None):
                test.graded.append(name)
                out = {}
                for lab in labs:
                    r = LabResult.blank(lab, cfg.lab(lab), "gpu").to_dict()
                    r["points"] = 42.0 if sources.get(lab) else 0.0
                    r["status"] = "graded" if sources.get(lab) else "missing"
                    r["_student"] = name
                    out[lab] = r
                return out

            def evaluate(self, built, name=None):
                out = [built[k] for k in sorted(built)]
                who = out[0].pop("_student") if out else None
                test.pairs.append((name, who))
                for r in out:
                    r.pop("_student", None)
                if test.explode.get(who) == "evaluate":
                    raise KeyError("mode")
                if test.explode.get(who) == "infra":
                    from gradelib.build import InfraError
                    raise InfraError("the GPU disappeared while grading")
                if test.explode.get(who) == "render":
                    for r in out:
                        del r["correctness"]  # the Gradescope rendering then fails
                return out

        fakes.use_prepared_grader(self, lambda *a, **k: FakeGrader())

    def student(self, name, text="// x\n"):
        os.makedirs(os.path.join(self.subs, name, "02_naive"), exist_ok=True)
        with open(os.path.join(self.subs, name, "02_naive", "scan.cu"), "w") as f:
            f.write(text)

    def main(self, *extra):
        argv = ["--submissions", self.subs, "--results", self.results, "--labs", "02", *extra]
        err = io.StringIO()
        with unittest.mock.patch("sys.stdout", new_callable=io.StringIO), \
                unittest.mock.patch("sys.stderr", err):
            rc = self.grade.main(argv)
        return rc, err.getvalue()

    def csv_rows(self):
        with open(os.path.join(self.results, "class.csv")) as f:
            return f.read().splitlines()

    def test_submissions_build_ahead_each_graded_with_its_own_build(self):
        """Where there are cores, the next submissions build while one is graded (builds_ahead):
        several builds at once, each student graded with their own build, in order."""
        names = [f"s{i}" for i in range(6)]
        for name in names:
            self.student(name)
        state, lock = {"now": 0, "most": 0}, threading.Lock()
        real = batch.unpack_and_build

        def slow(run, student, path):
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.15)
            try:
                return real(run, student, path)
            finally:
                with lock:
                    state["now"] -= 1
        with unittest.mock.patch.object(batch, "builds_ahead", lambda jobs: 3), \
                unittest.mock.patch.object(batch, "unpack_and_build", slow):
            rc, err = self.main()
        self.assertEqual(rc, 0, err)
        self.assertEqual(state["most"], 3, "three builds at once")
        self.assertEqual(self.pairs, [(name, name) for name in names], "each graded in order, with its own build")
        rows = self.csv_rows()
        for name in names:
            self.assertIn(f"{name},TOTAL,42.0,100,graded", rows)

    def test_an_infrastructure_error_is_a_row_and_a_nonzero_exit(self):
        for name in ("alice", "bob", "carol"):
            self.student(name)
        self.explode["bob"] = "infra"
        rc, err = self.main()
        self.assertEqual(rc, 3, err)
        rows = self.csv_rows()
        self.assertIn("alice,TOTAL,42.0,100,graded", rows)
        self.assertIn("bob,TOTAL,,,infrastructure error", rows)  # no points: not a grade
        self.assertIn("carol,TOTAL,0,0,no result", rows)
        self.assertIn("1 submission not graded", err)
        self.assertIn("this run: 1 graded now, 1 error (grader or machine: no grade), 0 skipped (already graded), "
                      "1 not reached;", err)
        self.assertIn("class: 3 submissions: 1 graded, 1 infrastructure error, 1 without a result", err)
        self.explode.clear()
        self.graded.clear()
        rc, err = self.main()  # resumed: bob (an infrastructure error is no grade) and carol
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(self.graded), ["bob", "carol"])

    def test_gradebook_with_a_roster(self):
        for name in ("alice", "bob", "zed"):
            self.student(name)
        roster = os.path.join(self.tmp, "roster.csv")
        with open(roster, "w") as f:
            f.write("Student ID,First Name,Last Name,Email,Login\n"
                    "s1,Alice,Ng,alice@u.edu,alice\ns2,Bob,Ray,bob@u.edu,bob\ns3,Cy,Lo,cy@u.edu,cy\n")
        # "Login" names the submission column; the name is first + last
        rc, err = self.main("--roster", roster)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.results, "gradebook.csv")) as f:
            rows = [ln.split(",") for ln in f.read().splitlines()]
        self.assertEqual(rows[0], ["student_id", "name", "email", "submission", "02_naive", "total", "max", "status",
                                   "late"])
        self.assertEqual(rows[1], ["s1", "Alice Ng", "alice@u.edu", "alice", "42", "42", "100", "graded", ""])
        self.assertEqual(rows[3], ["s3", "Cy Lo", "cy@u.edu", "cy", "", "", "", "no submission", ""])
        self.assertEqual(rows[4][3], "zed")  # graded, not on the roster: a row and a warning
        self.assertIn("1 submission not on the roster: zed", err)

    def test_a_new_visibility_regrades_nobody_and_reaches_the_gradescope_files(self):
        for name in ("alice", "bob"):
            self.student(name)
        rc, err = self.main("--format", "gradescope")
        self.assertEqual(rc, 0, err)
        self.assertIn("this run: 2 graded now, 0 skipped (already graded);", err)
        self.assertIn("points: mean 42.0, median 42, min 42, max 42 (of 100)", err)
        with open(CONFIG) as f:
            data = json.load(f)
        data["defaults"]["visibility"]["speed"] = "after_due_date"
        data["gradescope"] = {"numbers": False}
        cfg = os.path.join(self.tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(data, f)
        self.graded.clear()
        rc, err = self.main("--format", "gradescope", "--config", cfg)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.graded, [])  # who sees what is not how it is graded
        self.assertIn("this run: 0 graded now, 2 skipped (already graded);", err)
        with open(os.path.join(self.results, "bob.gradescope.json")) as f:
            doc = json.load(f)
        self.assertEqual({t["tags"][1]: t["visibility"] for t in doc["tests"]},
                         {"correctness": "visible", "sanitizer": "visible", "speed": "after_due_date"})
        self.assertTrue(all("number" not in t for t in doc["tests"]))
        self.assertEqual(doc["stdout_visibility"], "after_due_date")

    def test_a_roster_needs_a_batch(self):
        with unittest.mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            with self.assertRaises(SystemExit) as cm:
                self.grade.main(["--src", self.subs, "--roster", "r.csv"])
        self.assertEqual(cm.exception.code, 2)
        self.assertIn("--roster needs --submissions DIR", err.getvalue())

    def test_a_roster_without_a_submission_column_is_refused(self):
        self.student("alice")
        roster = os.path.join(self.tmp, "roster.csv")
        with open(roster, "w") as f:
            f.write("name,email\nAlice,a@u.edu\n")
        rc, err = self.main("--roster", roster)
        self.assertEqual(rc, 5)  # a bad input file (grade.py's exit codes)
        self.assertIn(f"{roster}:1:3: the roster has no submission column", err)
        with open(roster, "w") as f:
            f.write("submission,id\nalice,1\nalice,2\n")
        rc, err = self.main("--roster", roster)
        self.assertEqual(rc, 5)
        self.assertIn(f"{roster}:3:1: submission 'alice' is on lines 2 and 3", err)

    def test_a_folder_and_an_archive_of_the_same_name_are_refused(self):
        self.student("alice")
        with zipfile.ZipFile(os.path.join(self.subs, "alice.zip"), "w") as z:
            z.writestr("02_naive/scan.cu", "// other alice\n")
        rc, err = self.main()
        self.assertEqual(rc, 4, err)
        line = err.strip().splitlines()[-1]
        self.assertIn("'alice' and 'alice.zip' are both student 'alice'", line)
        self.assertEqual(self.graded, [])
        self.assertFalse(os.path.exists(os.path.join(self.results, "alice.json")))

    def test_a_name_that_clashes_with_a_side_file_is_refused(self):
        self.student("x")
        self.student("x.gradescope")
        rc, err = self.main("--format", "gradescope")
        self.assertEqual(rc, 4, err)
        self.assertIn("x.gradescope.json", err)

    def test_names_that_sanitise_alike_get_their_own_work_folders(self):
        self.assertNotEqual(build.work_tag("a b"), build.work_tag("a_b"))
        self.assertNotEqual(build.work_tag("a b"), build.work_tag("a?b"))
        self.assertEqual(build.work_tag("alice"), "alice")

    def test_names_print_as_valid_utf8_and_never_alike(self):
        latin1 = os.fsdecode(b"caf\xe9")  # what os.listdir gives for a name that is not UTF-8
        self.assertEqual(submissions.printable_name(latin1), "caf\\xe9")
        self.assertEqual(submissions.printable_name("caf\\xe9"), "caf\\\\xe9")  # typed in: not the same
        self.assertEqual(submissions.printable_name("café alice"), "café alice")
        self.assertEqual(submissions.printable_name("a\nb\x1b"), "a\\u000ab\\u001b")
        self.assertEqual(submissions.student_name(os.fsdecode(b"d\xfcrer.tar.gz")), "d\\xfcrer")
        for name in (latin1, submissions.printable_name(latin1)):
            tag = build.work_tag(name)
            self.assertTrue(tag.isascii(), tag)
        self.assertNotEqual(build.work_tag(submissions.printable_name(latin1)), build.work_tag("caf_xe9"))

    def test_a_name_that_is_not_utf8_is_graded(self):
        subs = os.fsencode(self.subs)
        for raw in (b"caf\xe9", b"caf\\xe9"):  # a Latin-1 name, and its printed form as a real name
            d = os.path.join(subs, raw, b"w\xfcrk", b"02_naive")  # a folder inside that is not UTF-8
            os.makedirs(d)
            with open(os.path.join(d, b"scan.cu"), "wb") as f:
                f.write(b"// \xe9\n")
        with open(os.path.join(subs, b"d\xfcrer.zip"), "wb") as f, zipfile.ZipFile(f, "w") as z:
            z.writestr("02_naive/scan.cu", "// x\n")
        out, err = io.StringIO(), io.StringIO()
        argv = ["--submissions", self.subs, "--results", self.results, "--labs", "02",
                "--format", "gradescope"]
        with unittest.mock.patch("sys.stdout", out), unittest.mock.patch("sys.stderr", err):
            rc = self.grade.main(argv)
        self.assertEqual(rc, 0, err.getvalue())
        names = ["caf\\xe9", "caf\\\\xe9", "d\\xfcrer"]
        self.assertEqual(sorted(self.graded), sorted(names))
        for text in (out.getvalue(), err.getvalue()):
            text.encode("utf-8")  # no surrogates reach the terminal
        self.assertIn("caf\\xe9", out.getvalue())
        with open(os.path.join(self.results, "class.csv"), "rb") as f:
            rows = f.read().decode("utf-8").splitlines()
        self.assertIn("caf\\xe9,02_naive,42.0,100,graded", rows)
        self.assertIn("caf\\xe9,TOTAL,42.0,100,graded", rows)
        self.assertIn("caf\\\\xe9,TOTAL,42.0,100,graded", rows)
        self.assertIn("d\\xfcrer,TOTAL,42.0,100,graded", rows)
        for name in names:
            for fn in (name + ".json", name + ".gradescope.json"):
                with open(os.path.join(self.results, fn), "rb") as f:
                    doc = json.loads(f.read().decode("utf-8"))
                json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no lone surrogates either
            with open(os.path.join(self.results, name + ".json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["student"], name)
        self.graded.clear()
        with unittest.mock.patch("sys.stdout", io.StringIO()), \
                unittest.mock.patch("sys.stderr", io.StringIO()):
            self.assertEqual(self.grade.main(argv), 0)
        self.assertEqual(self.graded, [])  # resumed under the same names

    def test_a_latin1_folder_and_its_archive_are_one_student(self):
        subs = os.fsencode(self.subs)
        os.makedirs(os.path.join(subs, b"caf\xe9", b"02_naive"))
        with open(os.path.join(subs, b"caf\xe9.zip"), "wb") as f, zipfile.ZipFile(f, "w") as z:
            z.writestr("02_naive/scan.cu", "// x\n")
        rc, err = self.main()
        self.assertEqual(rc, 4, err)
        self.assertIn("'caf\\xe9' and 'caf\\xe9.zip' are both student 'caf\\xe9'", err)

    def test_class_csv_has_only_this_runs_students(self):
        self.student("alice")
        self.student("bob")
        os.makedirs(self.results)
        with open(os.path.join(self.results, "mallory.json"), "w") as f:  # injected, not a student
            json.dump({"student": "mallory", "points": 999, "max_points": 100, "status": "graded",
                       "labs": [{"lab": "02_naive", "points": 999, "max_points": 100, "status": "graded"}]}, f)
        rc, err = self.main("--format", "gradescope")
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(os.path.join(self.results, "alice.gradescope.json")))
        rows = self.csv_rows()
        self.assertEqual(rows[0], "student,lab,points,max_points,status")
        self.assertEqual(sorted({r.split(",")[0] for r in rows[1:]}), ["alice", "bob"])
        self.assertEqual(len(rows), 1 + 2 * 2)  # one lab and a TOTAL per student

    def test_resume_regrades_when_the_grading_key_changes(self):
        self.student("alice")
        self.assertEqual(self.main()[0], 0)
        self.assertEqual(self.graded, ["alice"])
        with open(os.path.join(self.results, "alice.json")) as f:
            key = json.load(f)["grading_key"]
        self.assertEqual(key["labs"], ["02_naive"])
        self.assertEqual(key["mode"], "gpu")
        self.graded.clear()
        self.assertEqual(self.main()[0], 0)
        self.assertEqual(self.graded, [])  # same key: resumed
        self.assertEqual(self.main("--case-timeout", "7")[0], 0)
        self.assertEqual(self.graded, ["alice"])  # another config
        self.graded.clear()
        self.assertEqual(self.main("--case-timeout", "7", "--no-sanitizer")[0], 0)
        self.assertEqual(self.graded, ["alice"])
        self.graded.clear()
        self.assertEqual(self.main("--labs", "02", "03")[0], 0)
        self.assertEqual(self.graded, ["alice"])  # other labs
        self.graded.clear()
        # another --format: no regrade, but the side file is written from the stored result
        self.assertEqual(self.main("--labs", "02", "03", "--format", "junit")[0], 0)
        self.assertEqual(self.graded, [])
        self.assertTrue(os.path.exists(os.path.join(self.results, "alice.junit.xml")))
        # a result written by another grader version
        with open(os.path.join(self.results, "alice.json")) as f:
            r = json.load(f)
        r["grading_key"]["grader_sha256"] = "0" * 64
        with open(os.path.join(self.results, "alice.json"), "w") as f:
            json.dump(r, f)
        self.assertEqual(self.main("--labs", "02", "03")[0], 0)
        self.assertEqual(self.graded, ["alice"])

    def test_a_grader_error_on_one_student_is_an_error_row(self):
        for name in ("alice", "bob", "carol"):
            self.student(name)
        self.explode = {"alice": "evaluate", "bob": "render"}
        rc, err = self.main("--format", "gradescope")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(self.graded), ["alice", "bob", "carol"])
        for name in ("alice", "bob"):
            with open(os.path.join(self.results, name + ".json")) as f:
                r = json.load(f)
            self.assertEqual(r["status"], "grader error")
            for k in ("mode", "course", "device", "seed", "grader", "points", "max_points", "labs"):
                self.assertIn(k, r)
            self.assertEqual(r["max_points"], 100)
            with open(os.path.join(self.results, name + ".gradescope.json")) as f:
                doc = json.load(f)
            self.assertEqual((doc["score"], doc["tests"]), (0, []))
            self.assertIn("ask your instructor to regrade", doc["output"].lower())
        rows = self.csv_rows()
        self.assertIn("alice,TOTAL,0.0,100,grader error", rows)
        self.assertIn("bob,TOTAL,0.0,100,grader error", rows)
        self.assertIn("carol,TOTAL,42.0,100,graded", rows)
        # a grader error is graded again on the next run
        self.graded.clear()
        self.explode = {}
        self.assertEqual(self.main("--format", "gradescope")[0], 0)
        self.assertEqual(sorted(self.graded), ["alice", "bob"])


import unittest.mock  # noqa: E402

if __name__ == "__main__":
    unittest.main()
