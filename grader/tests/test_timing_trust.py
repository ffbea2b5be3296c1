"""What the speed stage trusts, with fakes (no GPU, no nvcc): a time faster than its own copy is
measured again alone before anyone is accused; a GPU that another job uses is waited for, and
then reported as busy with the command that regrades, never scored; without nvidia-smi the
session's notes say so once; a case's limit counts CPU time, a case that times out runs once
more alone with a larger limit, and the message names both limits it met."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import fakes
from gradelib import case_outcomes, config, evaluate, gpu_guard, proc, procfs, scheduling, scoring, stage_cases
from gradelib.build import InfraError
from gradelib.grading import Grader
from gradelib.outcomes import CorrectnessOutcome, SpeedOutcome
from gradelib.stage_cases import LabPlan, run_plans
from gradelib.stage_speed import GPU_BUSY, SpeedStage, _Timing
from gradelib.status import Status

CFG = config.load(os.path.join(fakes.GRADER, "config.json"))
LAB = "03_kogge_stone"
# The scripted stages below are written for one round of LAB (the course's default is three, each
# after the first in new buffers: test_grader_units and BENCH.md); the other keys stay the course's.
CFG.labs[LAB] = {**CFG.labs.get(LAB, {}), "speed": {**CFG.labs.get(LAB, {}).get("speed", {}), "rounds": 1}}
INFO = fakes.lab_info(LAB, shape="tile", tile=1024, bench_n=1 << 20)


def never(*a, **k):
    return None


class ScriptedStage(SpeedStage):
    """A SpeedStage whose timed runs answer from a script instead of a process: shared[who] and
    alone[who] (who: "s" for the student's binary, "r" for the reference's) are lists of
    (ms, memcpy_ms) taken in turn; every call is logged as (who, isolated)."""

    def __init__(self, shared, alone=None, guard=None, regrade=None, tick=None):
        refs = {LAB: ("ref", INFO)}
        super().__init__(CFG, refs, lambda lab: "ref", 1, "gpu", never, {}, guard=guard, regrade=regrade)
        self.shared, self.alone, self.calls = shared, alone or {"s": [], "r": []}, []
        self.tick = tick or (lambda: None)  # a timed run's passing time (the guard's fake clock)

    def _timed_run(self, timer, n, reps, warmup, metric, seed, timeout):
        self.tick()
        who = "r" if timer.binary == "ref" else "s"
        self.calls.append((who, timer.isolated))
        script = self.alone if timer.isolated else self.shared
        ms, copy = script[who].pop(0) if len(script[who]) > 1 else script[who][0]
        rep = {"ms": ms, "tile_ms": ms, "memcpy_ms": copy}
        return _Timing(Status.OK, "", rep, ms)

    def _serial_ms(self, n, settings):
        return None

    def _start(self, *timers):  # the script runs no process
        pass


PASSED = CorrectnessOutcome(10, 10)


class Plausibility(unittest.TestCase):
    def test_the_bound_is_the_student_s_own_copy_not_the_reference_s(self):
        # the reference's run had a slow copy (another job on the GPU): it no longer matters
        st = ScriptedStage({"s": [(0.50, 0.45)], "r": [(0.50, 5.0)]})
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)
        self.assertAlmostEqual(out.ratio, 1.0)
        self.assertNotIn(("s", True), st.calls)  # plausible: nothing measured again

    def test_implausible_then_plausible_alone_uses_the_second_measurement(self):
        st = ScriptedStage({"s": [(0.10, 0.45)], "r": [(0.50, 0.45)]}, {"s": [(0.55, 0.45)], "r": [(9, 9)]})
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)
        self.assertIn(("s", True), st.calls)
        self.assertAlmostEqual(out.student_ms, 0.55)
        self.assertAlmostEqual(out.ratio, 1.1)
        self.assertNotIn("tampered", out.note)

    def test_accused_only_when_the_run_alone_agrees(self):
        st = ScriptedStage({"s": [(0.10, 0.45)], "r": [(0.50, 0.45)]}, {"s": [(0.12, 0.40)], "r": [(9, 9)]})
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.FAILED)
        self.assertIn("tampered", out.note)
        for said in ("0.1000 ms", "0.4500 ms", "same process", "process of its own", "0.1200 ms", "0.4000 ms"):
            self.assertIn(said, out.note)  # both times, both copies, where each came from

    def test_a_plausible_time_alone_is_never_called_tampered(self):
        # just under the bound in the shared process, just over it alone
        st = ScriptedStage({"s": [(0.30, 0.41)], "r": [(0.50, 0.45)]}, {"s": [(0.31, 0.41)], "r": [(9, 9)]})
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)


class ConfirmedLoss(unittest.TestCase):
    """No lab loses speed points on one measurement: a ratio that would cost points is measured
    once more (order reversed) and each side's best time counts; a probe that says "too slow" is
    probed again. (Seen on 4 H200s: an untouched copy of the solutions lost 7.6 points in a class
    graded on every GPU of the host.)"""
    OK, SLOW = (0.5, 0.45), (0.85, 0.45)  # (ms, memcpy_ms): 1.7x the reference's 0.5 ms
    PER = 2 + 2 * 1  # timed runs of one measurement of one round: the probe and the round, each side

    def setUp(self):
        self.assertEqual(CFG.lab(LAB)["speed"]["rounds"], 1, "the scripts below assume one round")

    def test_one_disturbed_run_is_measured_again_and_the_better_time_counts(self):
        st = ScriptedStage({"s": [self.OK, self.SLOW, self.OK], "r": [self.OK]})  # probe, round, extra
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)
        self.assertAlmostEqual(out.ratio, 1.0)
        self.assertEqual(st.calls[4:], [("r", False), ("s", False)])  # one more round, order reversed

    def test_a_slow_lab_is_slow_twice(self):
        st = ScriptedStage({"s": [self.SLOW], "r": [self.OK]})
        out = st.run(LAB, "student", PASSED)
        self.assertAlmostEqual(out.ratio, 1.7)
        self.assertEqual(len(st.calls), self.PER + 2)

    def test_a_disturbed_reference_run_in_the_extra_round_does_not_help(self):
        st = ScriptedStage({"s": [self.SLOW], "r": [self.OK, self.OK, (2.0, 0.45)]})
        self.assertAlmostEqual(st.run(LAB, "student", PASSED).ratio, 1.7)  # the reference's best

    def test_the_serial_lab_confirms_a_loss_up_to_three_rounds_more(self):
        # lab 01 runs on a CPU core, whose times vary more than a GPU's (on an H200 host shared by
        # two graders the same reference scan took 3.9-7.2 ms): confirm_rounds 3 in config.json
        self.assertEqual(CFG.lab("01_serial")["speed"]["confirm_rounds"], 3)
        self.assertEqual(CFG.lab(LAB)["speed"]["confirm_rounds"], 1)
        with mock.patch.dict(CFG.labs, {LAB: {"speed": {"rounds": 1, "confirm_rounds": 3}}}):
            # disturbed in the round and the first two extra rounds, quiet in the third: full points
            st = ScriptedStage({"s": [self.OK, self.SLOW, self.SLOW, self.SLOW, self.OK], "r": [self.OK]})
            out = st.run(LAB, "student", PASSED)
            self.assertAlmostEqual(out.ratio, 1.0)
            self.assertEqual(len(st.calls), self.PER + 3 * 2)
            self.assertEqual(st.calls[4:], [("r", False), ("s", False), ("s", False), ("r", False),
                                            ("r", False), ("s", False)])  # the order alternates
            # a slow lab is slow in every round: three more rounds, the loss stands
            st = ScriptedStage({"s": [self.SLOW], "r": [self.OK]})
            self.assertAlmostEqual(st.run(LAB, "student", PASSED).ratio, 1.7)
            self.assertEqual(len(st.calls), self.PER + 3 * 2)
            # a loss the first extra round clears costs one round, not three
            st = ScriptedStage({"s": [self.OK, self.SLOW, self.OK], "r": [self.OK]})
            self.assertAlmostEqual(st.run(LAB, "student", PASSED).ratio, 1.0)
            self.assertEqual(len(st.calls), self.PER + 2)

    def test_full_speed_is_measured_once(self):
        st = ScriptedStage({"s": [(0.6, 0.45)], "r": [self.OK]})  # 1.2x: within full_at
        self.assertAlmostEqual(st.run(LAB, "student", PASSED).ratio, 1.2)
        self.assertEqual(len(st.calls), self.PER)  # the probe and the configured round

    def test_a_probe_that_says_too_slow_once_is_probed_again(self):
        st = ScriptedStage({"s": [(4.0, 0.45), self.OK], "r": [self.OK]})  # 8x, then 1x
        out = st.run(LAB, "student", PASSED)
        self.assertFalse(out.too_slow)
        self.assertAlmostEqual(out.ratio, 1.0)
        self.assertEqual(len(st.calls), self.PER + 2)  # two probes, the configured round

    def test_too_slow_twice_is_too_slow(self):
        st = ScriptedStage({"s": [(4.0, 0.45)], "r": [self.OK]})
        out = st.run(LAB, "student", PASSED)
        self.assertTrue(out.too_slow)
        self.assertIn("too slow to time in full: 8.0x", out.note)
        self.assertEqual(len(st.calls), 4)  # two probes, nothing at the full size


def _state(pid):
    """A process's state letter ("T": stopped), or None when it is gone."""
    info = procfs.proc_info(pid)
    return info.state if info else None


def _cmdline(pid):
    return (procfs.read(f"/proc/{pid}/cmdline") or b"").decode(errors="replace")


def student_timer():
    """A stand-in evaluate.Timer of the student's binary (ScriptedStage answers its runs)."""
    class T:
        binary, isolated = "student", False
    return T()


def _wait_for(cond, limit=10.0):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > limit:
            return False
        time.sleep(0.02)
    return True


# a run that needs 0.4 s of CPU time (not of wall time: a stopped process uses none) and says so
BUSY_CPU = [sys.executable, "-c", "import time\nwhile time.process_time() < 0.4: pass\nprint('done')"]


class QuietConfirmation(unittest.TestCase):
    """A speed loss is confirmed with the grader's other work paused. Measured on one H200 with
    a grader alone on it (the class of 100, 2026-11-29, part 3/4): three copies of the solutions
    lost 0.04, 2.58 and 5.07 points on lab 01, timed on the core the grader keeps, while the
    other 15 compiled the next submissions and the GPU labs' harnesses filled and checked arrays
    of 2^28 elements on the host: a serial scan at 2^23 shares the memory bus with all of them,
    and every one of its five rounds did. Now the confirming rounds stop the grader's builds
    (scheduling.quiet) and, for the host lab, hold off the GPU labs' timed runs (SpeedStage.gate)."""

    def _background_run(self, timeout, out):
        with scheduling.background():
            out.append(proc.run(BUSY_CPU, timeout))

    def _pid_of_child(self):
        """The pid of this process's one BUSY_CPU child, or None while there is not exactly one."""
        kids = [pid for pid, info in procfs.processes().items()
                if info.ppid == os.getpid() and "process_time" in _cmdline(pid)]
        return kids[0] if len(kids) == 1 else None

    def test_background_runs_stop_while_quiet_and_their_limit_waits_out_the_pause(self):
        out = []
        t = threading.Thread(target=self._background_run, args=(3.0, out))
        t.start()
        self.assertTrue(_wait_for(lambda: self._pid_of_child() is not None))
        pid = self._pid_of_child()
        with scheduling.quiet():
            self.assertTrue(_wait_for(lambda: _state(pid) == "T"), "stopped while quiet")
            time.sleep(3.5)  # longer than the run's whole limit
            self.assertEqual(_state(pid), "T")
        t.join(30)
        self.assertFalse(t.is_alive())
        r = out[0]
        self.assertFalse(r.timed_out, "the pause does not count against its limit")
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "done"))
        self.assertGreater(r.seconds, 3.5)

    def test_a_background_run_started_while_quiet_starts_stopped(self):
        out = []
        with scheduling.quiet():
            t = threading.Thread(target=self._background_run, args=(30.0, out))
            t.start()
            self.assertTrue(_wait_for(lambda: self._pid_of_child() is not None))
            pid = self._pid_of_child()
            self.assertTrue(_wait_for(lambda: _state(pid) == "T"))
            time.sleep(0.6)
            self.assertEqual(_state(pid), "T", "still stopped: it has had no CPU time")
            self.assertEqual(out, [])
        t.join(30)
        self.assertEqual(out[0].stdout.strip(), "done")

    def test_a_foreground_run_is_never_stopped(self):
        with scheduling.quiet():
            r = proc.run(BUSY_CPU, 20)  # a timed run, a case: not background work
        self.assertEqual((r.returncode, r.stdout.strip(), r.timed_out), (0, "done", False))

    def test_a_background_run_that_overstays_its_limit_still_times_out(self):
        with scheduling.background():
            r = proc.run([sys.executable, "-c", "import time; time.sleep(5)"], 0.5)
        self.assertTrue(r.timed_out)
        self.assertLess(r.seconds, 3.0)

    def test_a_loss_of_a_fraction_of_a_point_is_confirmed_too(self):
        # Measured on a host of four H200s (2026-11-29, the class of 40 on one GPU): an untouched
        # copy of the solutions lost 0.07 of lab 01's 30 speed points (1.254x the reference's
        # time) without a confirming round: the stage asked whether the loss was worth one from
        # the points rounded to hundredths at a maximum of 1 (0.9977 is 1.0), and the lab's 30
        # points rounded only at the end (29.93).
        slight, ok = (0.627, 0.45), (0.5, 0.45)  # 1.254x: 0.07 of 30 points
        out = ScriptedStage({"s": [(0.5, 0.45), slight], "r": [ok]}).run(LAB, "student", PASSED)
        self.assertEqual(scoring.speed_award(out, CFG.lab(LAB)["speed"], 30)[0], 29.93)  # slow every round
        self.assertEqual(out.quiet_rounds, 1, "the loss was confirmed")
        st = ScriptedStage({"s": [(0.5, 0.45), slight, ok], "r": [ok]})  # probe, round, confirming round
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(st.calls.count(("s", False)), 3, "a confirming round ran")
        self.assertAlmostEqual(out.ratio, 1.0)
        self.assertEqual(scoring.speed_award(out, CFG.lab(LAB)["speed"], 30)[0], 30.0)

    def test_a_loss_is_confirmed_in_new_processes(self):
        """A process's luck (where its buffers landed in memory) is one measurement: the rounds
        that confirm a loss run in new processes of both sides; a lab with no loss stays in its
        two processes."""
        slow, ok = (0.85, 0.45), (0.5, 0.45)
        st = ScriptedStage({"s": [ok, slow, ok], "r": [ok]})  # probe, round (a loss), confirming round

        def fresh(timer):
            return st.calls.append(("fresh", timer.binary == "ref"))

        with mock.patch.object(evaluate.Timer, "fresh", fresh):
            out = st.run(LAB, "student", PASSED)
            self.assertAlmostEqual(out.ratio, 1.0)
            self.assertEqual(sorted(st.calls[4:6]), [("fresh", False), ("fresh", True)], st.calls)
            self.assertEqual(sorted(c[0] for c in st.calls[6:]), ["r", "s"])
            st = ScriptedStage({"s": [ok], "r": [ok]})
            st.run(LAB, "student", PASSED)
            self.assertNotIn("fresh", [c[0] for c in st.calls])

    def test_the_rounds_that_confirm_a_loss_are_quiet_and_the_note_says_so(self):
        seen = []

        class Watched(ScriptedStage):
            def _timed_run(self, *a):
                seen.append(scheduling._quiet["depth"] > 0)
                return super()._timed_run(*a)
        slow, ok = (0.85, 0.45), (0.5, 0.45)
        st = Watched({"s": [ok, slow, ok], "r": [ok]})  # probe, round (a loss), the confirming round
        out = st.run(LAB, "student", PASSED)
        self.assertAlmostEqual(out.ratio, 1.0)
        self.assertEqual(seen, [False] * 4 + [True, True])
        self.assertEqual(scheduling._quiet["depth"], 0)
        seen.clear()
        st = Watched({"s": [slow], "r": [ok]})  # slow in the quiet round too: the loss stands
        out = st.run(LAB, "student", PASSED)
        self.assertEqual((out.ratio, out.quiet_rounds), (1.7, 1))
        pts, note = scoring.speed_award(out, CFG.lab(LAB)["speed"], 30)
        self.assertLess(pts, 30)
        self.assertIn("1 of its rounds measured with the grader's builds of other submissions stopped", note)
        seen.clear()
        st = Watched({"s": [ok], "r": [ok]})  # no loss: nothing paused
        st.run(LAB, "student", PASSED)
        self.assertEqual(seen, [False] * 4)

    def test_a_host_lab_is_timed_beside_the_gpu_labs_and_confirms_a_loss_alone(self):
        """The host lab (a host core, its own kept core) is timed beside the GPU labs: a GPU lab's
        timed run asked for while a host run is in flight goes on at once (a GPU lab's timed run
        does its checking on the GPU; holding them off cost a class about 6 s a submission). A
        host lab confirming a loss holds them off for its quiet rounds (and only then)."""
        host = "01_serial"
        st = ScriptedStage({"s": [(5.0, 4.5)], "r": [(5.0, 4.5)]})
        st.refs[host] = ("ref", fakes.lab_info(host, shape="host", bench_n=1 << 20))
        inside, events = threading.Event(), []
        scripted = st._timed_run

        def timed_run(timer, *a):
            if not st._on_device():
                inside.set()
                time.sleep(0.3)
                events.append("host")
            return scripted(timer, *a)
        st._timed_run = timed_run

        def gpu_lab():
            st._watch.device = True
            inside.wait(5)
            st._timed(student_timer(), 1 << 20, 1, 0, "ms", 1, 10)
            events.append("gpu")
        gpu = threading.Thread(target=gpu_lab)
        gpu.start()
        out = st.run(host, "student", PASSED)
        gpu.join(10)
        self.assertEqual(out.status, Status.GRADED)
        self.assertGreaterEqual(events.count("host"), 4)  # the probe's pair and a round's at least
        self.assertEqual(events[0], "gpu", events)  # it did not wait for the host lab's runs
        # the host lab's confirming rounds hold the GPU labs' timed runs off ...
        st._watch.device = False
        waited = []

        def gpu_asks():
            with st.gate.shared():
                waited.append(time.monotonic())
        with st._quiet():
            asker = threading.Thread(target=gpu_asks)
            asker.start()
            time.sleep(0.2)
            self.assertEqual(waited, [], "a GPU lab's timed run went on beside a host lab's confirmation")
            left = time.monotonic()
        asker.join(5)
        self.assertGreaterEqual(waited[0], left)
        # ... and a GPU lab's confirmation pauses the builds only: it holds no one off
        st._watch.device = True
        with st._quiet():
            with st.gate.shared():  # would block if the quiet rounds held the gate alone
                pass


class BuildsAreBackground(unittest.TestCase):
    def test_a_submission_built_ahead_is_background_work_in_every_build_thread(self):
        """batch.unpack_and_build marks its thread; Grader.build_submission's own pool (one thread
        a lab) must start its processes as background work too, or quiet() misses them."""
        seen = {}

        class Stage:
            def __init__(self, *a):
                pass

            def run(self, lab, src, out_dir, bases=None):
                seen[lab] = (scheduling.in_background(), threading.current_thread() is threading.main_thread())
                return mock.Mock(binary=None)
        g = Grader.__new__(Grader)
        g.work, g.builder, g.symbol_builder, g.mode, g.refs = tempfile.mkdtemp(), None, None, "gpu", {}
        g.cpu_builder = None
        g.labs, g.jobs, g.build_seconds, g.timings = ["02_naive", "03_kogge_stone", "10_applications"], 3, {}, {}
        g.config = CFG
        with mock.patch("gradelib.grading.BuildStage", Stage):
            g.build_submission("s", {lab: "x" for lab in g.labs})
            self.assertTrue(seen and not any(bg for bg, _ in seen.values()), "a student's own grade: foreground")
            seen.clear()
            with scheduling.background():
                g.build_submission("s", {lab: "x" for lab in g.labs})
        self.assertEqual(sorted(seen), sorted(g.labs + ["07_hierarchical", "08_decoupled_lookback"]))
        self.assertTrue(all(bg and not main for bg, main in seen.values()), seen)
        shutil.rmtree(g.work)

    def test_batch_builds_the_next_submissions_as_background_work(self):
        from classroom import batch
        run = mock.Mock()
        run.labs, run.args.only_submitted, run.grader.work = ["02_naive"], False, tempfile.gettempdir()
        run.grader.bases_of.return_value = []
        run.grader.build_submission.side_effect = lambda *a: scheduling.in_background()
        found = mock.Mock(sources={"02_naive": "x"}, problem=None)
        with mock.patch("classroom.batch.uploads.open_submission", return_value=found):
            self.assertEqual(batch.unpack_and_build(run, "s", "path"), (found, True))
        self.assertFalse(scheduling.in_background(), "the thread's own mark is restored")


class FakeSmi:
    """nvidia-smi's answers in turn (the last one repeats); None: it fails."""

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    def __call__(self, argv, timeout):
        self.asked.append(argv)
        text = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if text is None:
            return proc.Result(9, "", "NVIDIA-SMI has failed", False, 0.0)
        return proc.Result(0, text, "", False, 0.0)


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def guard(smi, notes=None, ours=lambda pid: False, env=None, nvml=None):
    """A guard on the scripted nvidia-smi; NVML off unless the test gives one (or sets the variable):
    on a GPU machine the real library would answer instead of the script."""
    clock = Clock()
    env = {gpu_guard.NVML_VAR: "0", **(env or {})}
    return gpu_guard.GpuGuard(notes if notes is not None else [], smi="/fake/nvidia-smi", run=smi,
                              sleep=clock.sleep, clock=clock, ours=ours, env=env, nvml=nvml), clock


BUSY = "GPU-aaaa, 4242, python3, 1200 MiB\n"


class FakeNvml:
    """Nvml's apps() answers in turn (the last one repeats); None: the call fails."""

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), 0

    def apps(self):
        self.asked += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


OTHER = ("GPU-aaaa", 4242, "python3", "1200 MiB")
# The functions Nvml calls, as libnvidia-ml.so.1 declares them, for two GPUs with processes.
STAND_IN_NVML = r"""
#include <stdio.h>
#include <string.h>
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
static int devs[2];
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { *h = &devs[i]; return i < 2 ? 0 : 2; }
int nvmlDeviceGetUUID(void *h, char *uuid, unsigned int len) {
    snprintf(uuid, len, "%s", h == &devs[0] ? "GPU-aaaa" : "GPU-bbbb"); return 0; }
int nvmlDeviceGetComputeRunningProcesses(void *h, unsigned int *count, nvmlProcessInfo_v1_t *p) {
    if (h == &devs[0]) {
        if (*count < 2) { *count = 2; return 7; }
        p[0].pid = 4242; p[0].usedGpuMemory = 1200ull << 20;
        p[1].pid = 77; p[1].usedGpuMemory = ~0ull;
        *count = 2;
    } else {
        p[0].pid = 5; p[0].usedGpuMemory = 1ull << 20; *count = 1;
    }
    return 0;
}
int nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int len) {
    snprintf(name, len, "proc-%u", pid); return 0; }
"""


class NvmlWatch(unittest.TestCase):
    """NVML (the default; LAB_GRADER_NVML=0 turns it off) in the grader's process answers instead of
    nvidia-smi, once it has
    agreed with nvidia-smi about another job; any failure or disagreement hands back to nvidia-smi."""

    def test_an_empty_answer_needs_no_nvidia_smi(self):
        smi, nvml = FakeSmi(BUSY), FakeNvml([])
        g, _ = guard(smi, nvml=nvml)
        self.assertEqual(g.others(), [])
        self.assertEqual((nvml.asked, len(smi.asked)), (1, 0))

    def test_another_job_is_confirmed_by_nvidia_smi_once_then_nvml_answers(self):
        smi, nvml = FakeSmi(BUSY), FakeNvml([OTHER])
        g, _ = guard(smi, nvml=nvml)
        for _ in range(3):
            self.assertEqual(g.others(), [(4242, "python3", "1200 MiB")])
        self.assertEqual((nvml.asked, len(smi.asked)), (3, 1))

    def test_a_disagreement_hands_the_session_to_nvidia_smi(self):
        notes = []
        smi, nvml = FakeSmi(BUSY), FakeNvml([("GPU-aaaa", 7, "?", "N/A")])  # a pid nvidia-smi does not name
        g, _ = guard(smi, notes, nvml=nvml)
        self.assertEqual(g.others(), [(4242, "python3", "1200 MiB")])  # nvidia-smi's answer
        self.assertIsNone(g.nvml)
        self.assertIn("NVML named pids [7] where nvidia-smi named [4242]", notes[0])
        g.others()
        self.assertEqual((nvml.asked, len(smi.asked)), (1, 2))

    def test_a_failed_nvml_call_falls_back_to_nvidia_smi(self):
        notes = []
        smi, nvml = FakeSmi(""), FakeNvml(None)
        g, _ = guard(smi, notes, nvml=nvml)
        self.assertEqual(g.others(), [])
        self.assertIsNone(g.nvml)
        self.assertEqual(len(smi.asked), 1)
        self.assertIn("an NVML call failed", notes[0])

    def test_only_the_grader_s_gpu_and_not_its_own_processes(self):
        nvml = FakeNvml([OTHER, ("GPU-bbbb", 5, "x", "1 MiB"), ("GPU-aaaa", 6, "scan", "2 MiB")])
        g, _ = guard(FakeSmi(BUSY), ours=lambda pid: pid == 6, env={"CUDA_VISIBLE_DEVICES": "GPU-aaaa"}, nvml=nvml)
        self.assertEqual(g.others(), [(4242, "python3", "1200 MiB")])

    def test_the_records_are_read_as_the_v1_layout(self):
        buf = (gpu_guard.Nvml.RECORD.pack(4242, 1200 << 20)
               + gpu_guard.Nvml.RECORD.pack(7, gpu_guard.Nvml.NOT_AVAILABLE)
               + b"\xff" * 64)
        self.assertEqual(gpu_guard.Nvml.RECORD.size, 16)
        self.assertEqual(gpu_guard.Nvml.records(buf, 2), [(4242, "1200 MiB"), (7, "N/A")])

    def test_nvml_is_the_default_and_zero_turns_it_off(self):
        opened = FakeNvml([])
        with mock.patch.object(gpu_guard.Nvml, "open", return_value=opened) as op:
            self.assertIs(gpu_guard.GpuGuard([], smi="/fake/nvidia-smi", run=FakeSmi(BUSY), env={}).nvml, opened)
            self.assertIsNone(gpu_guard.GpuGuard([], smi="/fake/nvidia-smi", run=FakeSmi(BUSY),
                                                 env={gpu_guard.NVML_VAR: "0"}).nvml)
            self.assertEqual(op.call_count, 1)

    def test_without_the_library_nvidia_smi_answers(self):
        self.assertIsNone(gpu_guard.Nvml.open("libno-such-nvml.so.1"))
        if gpu_guard.Nvml.open() is None:  # no NVML here (CI): the switch changes nothing
            g, _ = guard(FakeSmi(BUSY), env={gpu_guard.NVML_VAR: "1"})
            self.assertIsNone(g.nvml)
            self.assertEqual(len(g.others()), 1)

    def test_the_ctypes_calls_against_a_stand_in_library(self):
        """Nvml.open and apps() through ctypes, against a C library of the same functions whose
        record is the v1 struct as a C compiler lays it out (NVML itself needs a GPU)."""
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler to build the stand-in libnvidia-ml")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "nvml.c"), "w") as f:
                f.write(STAND_IN_NVML)
            lib = os.path.join(d, "libnvidia-ml.so.1")
            subprocess.run([cc, "-shared", "-fPIC", "-o", lib, os.path.join(d, "nvml.c")], check=True)
            nvml = gpu_guard.Nvml.open(lib)
            self.assertIsNotNone(nvml)
            self.assertEqual([u for u, _ in nvml.devices], ["GPU-aaaa", "GPU-bbbb"])
            self.assertEqual(nvml.apps(), [("GPU-aaaa", 4242, "proc-4242", "1200 MiB"),
                                           ("GPU-aaaa", 77, "proc-77", "N/A"), ("GPU-bbbb", 5, "proc-5", "1 MiB")])
            g, _ = guard(FakeSmi(BUSY), env={"CUDA_VISIBLE_DEVICES": "GPU-aaaa"}, nvml=nvml)
            g.nvml_confirmed = True
            self.assertEqual([pid for pid, *_ in g.others()], [4242, 77])

    def test_a_wait_for_the_gpu_is_in_the_trace_and_no_wait_is_not(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.jsonl")
            with mock.patch.dict(os.environ, {evaluate.TRACE_VAR: path}):
                g, _ = guard(FakeSmi(BUSY, BUSY, ""))   # busy twice, then free
                self.assertEqual(g.wait_idle(60), "")
                g, _ = guard(FakeSmi(""))
                self.assertEqual(g.wait_idle(60), "")   # free at once: no wait line
                g, _ = guard(FakeSmi(BUSY))
                self.assertIn("4242", g.wait_idle(7))    # still busy at the deadline
            with open(path) as f:
                waits = [json.loads(x) for x in f if '"gpu-wait"' in x]
        self.assertEqual([(w["s"], w["case"]) for w in waits],
                         [(2 * gpu_guard.POLL_S, "free"), (7.0, "pid 4242 'python3' 1200 MiB")])
        self.assertEqual({w["pid"] for w in waits}, {os.getpid()})  # the worker that waited

    def test_nvml_questions_are_in_the_trace(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.jsonl")
            with mock.patch.dict(os.environ, {evaluate.TRACE_VAR: path}):
                g, _ = guard(FakeSmi(BUSY), nvml=FakeNvml([]))
                g.others()
            with open(path) as f:
                self.assertEqual([json.loads(x)["kind"] for x in f], ["nvml"])


class BusyGpu(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(gpu_guard.parse_apps(BUSY + "No running processes found\n"),
                         [("GPU-aaaa", 4242, "python3", "1200 MiB")])

    def test_each_question_to_nvidia_smi_is_in_the_grader_s_trace(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.jsonl")
            with mock.patch.dict(os.environ, {evaluate.TRACE_VAR: path}):
                g, _ = guard(FakeSmi(BUSY, None))
                self.assertEqual(len(g.others()), 1)
                self.assertIsNone(g.others())  # a failed question is traced too
            with open(path) as f:
                lines = [json.loads(x) for x in f]
        self.assertEqual([x["kind"] for x in lines], ["nvidia-smi", "nvidia-smi"])
        self.assertEqual(lines[0]["case"], gpu_guard.QUERY[0])
        self.assertTrue(all(x["s"] >= 0 for x in lines))

    def test_waits_for_the_gpu_then_times(self):
        smi = FakeSmi(BUSY, BUSY, "")
        g, clock = guard(smi)
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g)
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)
        # three asks before the lab is timed (busy, busy, free); its runs took no time, so one at
        # the end of the measurement and none between its runs
        self.assertEqual(len(smi.asked), 4)
        self.assertGreater(clock.t, 0)

    PER = 2 + 2 * 1  # timed runs of one measurement of one round: the probe and the round, each side

    def test_a_job_that_comes_while_the_lab_is_timed_makes_it_timed_again_once_the_gpu_is_free(self):
        # runs of 0.6 s: asked after the 2nd and 4th runs (1 s apart at least) and at the end
        smi = FakeSmi("", BUSY, "")  # free before; busy after the 2nd run; free from then on
        g, clock = guard(smi)
        said = []
        slow, right = (1.1, 0.45), (0.5, 0.45)  # the student's runs while the other job ran
        # (2.2x: the first measurement confirms that loss with one more round, also slow)
        st = ScriptedStage({"s": [slow] * (self.PER // 2 + 1) + [right], "r": [right]}, guard=g,
                           tick=lambda: clock.sleep(0.6))
        st.progress = said.append
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.GRADED)
        self.assertAlmostEqual(out.ratio, 1.0)  # the second measurement's, not 2.2x
        self.assertEqual(len(st.calls), 2 * self.PER + 2)
        self.assertTrue(any("pid 4242 'python3' 1200 MiB used the GPU while it was timed" in m for m in said), said)

    def test_a_job_found_while_timed_in_both_measurements_is_a_busy_gpu_not_a_score(self):
        asks = self.PER // 2 + 1  # per measurement: every other run, and the end
        smi = FakeSmi("", BUSY, *[""] * (asks - 1), "", BUSY, "")  # before, 1st, the wait, 2nd, rest
        g, clock = guard(smi)
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g, regrade="python3 grader/grade.py --gpu",
                           tick=lambda: clock.sleep(0.6))
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.NOT_GRADED)
        self.assertTrue(out.note.startswith(GPU_BUSY), out.note)
        self.assertIn("pid 4242 'python3' 1200 MiB used it while 03_kogge_stone was timed, twice", out.note)
        self.assertIn("regrade with: python3 grader/grade.py --gpu", out.note)
        self.assertEqual(len(st.calls), 2 * self.PER)

    def test_a_job_still_there_at_the_end_of_a_short_measurement_is_seen(self):
        smi = FakeSmi("", BUSY, "")  # the runs take no time: the only ask while timed is the last
        g, _ = guard(smi)
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g)
        self.assertEqual(st.run(LAB, "student", PASSED).status, Status.GRADED)
        self.assertEqual(len(st.calls), 2 * self.PER)  # measured again
        self.assertEqual(len(smi.asked), 1 + 1 + 1 + 1)  # before, at the end, the wait, at the end

    def test_nothing_else_on_the_gpu_while_timed_measures_once_asking_once_a_second_at_most(self):
        smi = FakeSmi("")
        g, clock = guard(smi)
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g, tick=lambda: clock.sleep(0.6))
        self.assertEqual(st.run(LAB, "student", PASSED).status, Status.GRADED)
        self.assertEqual(len(st.calls), self.PER)
        self.assertEqual(len(smi.asked), 1 + self.PER // 2 + 1)

    def test_still_busy_after_the_wait_is_not_graded_with_the_regrade_command(self):
        g, clock = guard(FakeSmi(BUSY))
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g,
                           regrade="python3 grader/grade.py --src solutions --gpu --labs 03")
        out = st.run(LAB, "student", PASSED)
        self.assertEqual(out.status, Status.NOT_GRADED)
        self.assertTrue(out.note.startswith(GPU_BUSY), out.note)
        self.assertIn("pid 4242 'python3' 1200 MiB", out.note)
        self.assertIn("regrade with: python3 grader/grade.py --src solutions --gpu --labs 03", out.note)
        self.assertEqual(st.calls, [])  # nothing was timed
        self.assertGreaterEqual(clock.t, CFG.lab(LAB)["timeouts"]["gpu_wait_s"])

    def test_the_grader_reports_a_busy_gpu_as_an_infrastructure_problem(self):
        g, _ = guard(FakeSmi(BUSY))
        grader = Grader.__new__(Grader)  # only what _speed reads
        grader.mode, grader.config, grader.refs, grader.seed = "gpu", CFG, {LAB: ("ref", INFO)}, 1
        grader._ref_binary = lambda lab: "ref"
        grader.progress, grader.serial_cache, grader.isolated, grader.timings = never, {}, False, {}
        grader.gpu_guard, grader.regrade, grader.notes = g, "python3 grader/grade.py --gpu", []

        class Built:
            binary = "student"

        class Checked:
            correctness = PASSED
        with self.assertRaises(InfraError) as e:
            grader._speed({LAB: Built()}, {LAB: Checked()}, [LAB])
        self.assertIn("the GPU was busy", str(e.exception))
        self.assertIn("regrade with: python3 grader/grade.py --gpu", str(e.exception))

    def test_the_serial_lab_is_timed_beside_the_gpu_labs_and_never_waits_for_the_gpu(self):
        """A host lab uses no GPU: it is measured in a thread of its own while the GPU labs are
        (they stay one at a time; SpeedStage.run holds their timed runs off while it is timed),
        and a busy GPU does not stop it."""
        host = fakes.lab_info("01_serial", shape="host", tile=0, bench_n=1 << 20)
        gpu_labs = ["03_kogge_stone", "04_brent_kung", "05_blelloch"]
        spans, lock = {}, threading.Lock()

        def run(stage, lab, binary, correctness, student_first=True):
            t0 = time.monotonic()
            time.sleep(0.3 if lab == "01_serial" else 0.1)
            with lock:
                spans[lab] = (t0, time.monotonic())
            return SpeedOutcome(Status.GRADED)
        grader = Grader.__new__(Grader)
        grader.mode, grader.config, grader.seed = "gpu", CFG, 1
        grader.refs = dict({lab: ("ref", INFO) for lab in gpu_labs}, **{"01_serial": ("ref", host)})
        grader._ref_binary = lambda lab: "ref"
        grader.progress, grader.serial_cache, grader.isolated, grader.timings = never, {}, False, {}
        grader.gpu_guard, grader.regrade, grader.notes = guard(FakeSmi(""))[0], "", []

        class Built:
            binary = "student"

        class Checked:
            correctness = PASSED
        labs = ["01_serial"] + gpu_labs
        with mock.patch.object(SpeedStage, "run", run):
            grader._speed({lab: Built() for lab in labs}, {lab: Checked() for lab in labs}, labs)
        self.assertGreater(spans["01_serial"][1], spans["03_kogge_stone"][0], "timed beside the GPU labs")
        gpu = sorted(spans[lab] for lab in gpu_labs)
        self.assertTrue(all(a[1] <= b[0] for a, b in zip(gpu, gpu[1:])), "the GPU labs one at a time")
        # and a busy GPU is not the serial lab's concern
        g, _ = guard(FakeSmi(BUSY))
        st = SpeedStage(CFG, {"01_serial": ("ref", host)}, lambda lab: "ref", 1, "gpu", never, {}, guard=g)
        st._measure = lambda *a: "measured"
        self.assertEqual(st.run("01_serial", "student", PASSED), "measured")

    def test_the_serial_lab_timed_in_its_thread_does_not_end_a_gpu_lab_s_watch(self):
        """Grader._speed times the host lab in a thread beside the GPU labs: its run, start to
        end, between two timed runs of a GPU lab's measurement must leave that lab's watch as it was (on the GPU, a
        shared watch was ended under the GPU lab's feet: AttributeError at its last ask)."""
        host = fakes.lab_info("01_serial", shape="host", tile=0, bench_n=1 << 20)
        smi = FakeSmi("", BUSY, "")  # free before; busy at the GPU lab's end; then free
        g, clock = guard(smi)
        serial, gpu_runs, threads = [], [], []

        def tick():
            if threading.current_thread() is not threading.main_thread():
                return
            gpu_runs.append(1)
            if not threads:  # the whole serial lab between the GPU lab's first timed run and its next
                threads.append(threading.Thread(target=lambda: serial.append(st.run("01_serial", "student", PASSED))))
                threads[0].start()
                while not st.gate._waiting and threads[0].is_alive():  # it waits for this run to end
                    time.sleep(0.01)
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g, tick=tick)
        st.refs["01_serial"] = ("ref", host)
        out = st.run(LAB, "student", PASSED)
        threads[0].join(10)
        self.assertEqual(serial[0].status, Status.GRADED)
        self.assertEqual(out.status, Status.GRADED)
        # the job seen at the end of the GPU lab's measurement was still counted: measured again
        self.assertEqual(len(gpu_runs), 2 * self.PER)

    def test_our_own_processes_and_other_gpus_do_not_count(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            text = f"GPU-aaaa, {child.pid}, scan, 300 MiB\nGPU-bbbb, 4242, python3, 1200 MiB\n"
            g, _ = guard(FakeSmi(text), ours=lambda pid: gpu_guard.descends_from(pid, os.getpid()),
                         env={"CUDA_VISIBLE_DEVICES": "GPU-aaaa"})
            self.assertEqual(g.others(), [])  # our child on our GPU; another job on another GPU
            g, _ = guard(FakeSmi(text), ours=lambda pid: gpu_guard.descends_from(pid, os.getpid()))
            self.assertEqual(g.others(), [(4242, "python3", "1200 MiB")])  # no CUDA_VISIBLE_DEVICES: all GPUs
            index = FakeSmi("0, GPU-bbbb\n1, GPU-aaaa\n")
            g, _ = guard(lambda argv, t: (index if "--query-gpu=index,uuid" in argv else FakeSmi(text))(argv, t),
                         ours=lambda pid: gpu_guard.descends_from(pid, os.getpid()),
                         env={"CUDA_VISIBLE_DEVICES": "1"})
            self.assertEqual(g.others(), [])
        finally:
            child.kill()
            child.wait()
        self.assertFalse(gpu_guard.descends_from(1, os.getpid()))

    def test_without_nvidia_smi_timed_anyway_and_noted_once(self):
        notes = []
        g = gpu_guard.GpuGuard(notes, smi="")
        st = ScriptedStage({"s": [(0.5, 0.45)], "r": [(0.5, 0.45)]}, guard=g)
        self.assertEqual(st.run(LAB, "student", PASSED).status, Status.GRADED)
        self.assertEqual(st.run(LAB, "student", PASSED).status, Status.GRADED)
        self.assertEqual(len(notes), 1)
        self.assertIn("nvidia-smi not found", notes[0])
        failing = []
        g, _ = guard(FakeSmi(None), notes=failing)
        self.assertEqual(g.wait_idle(60), "")
        self.assertIn("NVIDIA-SMI has failed", failing[0])


class Gate(unittest.TestCase):
    def test_a_run_alone_waits_for_those_in_flight_and_holds_off_new_ones(self):
        gate, log, lock = scheduling.Gate(), [], threading.Lock()

        def shared(tag, hold):
            with gate.shared():
                with lock:
                    log.append(("start", tag))
                time.sleep(hold)
                with lock:
                    log.append(("end", tag))
        first = threading.Thread(target=shared, args=("a", 0.3))
        first.start()
        time.sleep(0.05)

        def alone():
            with gate.alone():
                with lock:
                    log.append(("start", "alone"))
                time.sleep(0.2)
                with lock:
                    log.append(("end", "alone"))
        t_alone = threading.Thread(target=alone)
        t_alone.start()
        time.sleep(0.05)
        later = threading.Thread(target=shared, args=("b", 0.0))
        later.start()
        for t in (first, t_alone, later):
            t.join()
        self.assertEqual(log, [("start", "a"), ("end", "a"), ("start", "alone"), ("end", "alone"),
                               ("start", "b"), ("end", "b")])


class UnwrittenVariants(unittest.TestCase):
    """A process that ended at an unwritten variant's case is not followed by one for a variant
    that another process is trying right then: lab 09's skeleton started 29 processes for its
    ten variants on a GPU, each chunk finding each variant unwritten for itself."""

    def test_a_variant_being_tried_elsewhere_is_not_tried_again_at_once(self):
        tmp = fakes.shared_tmp()
        log = os.path.join(tmp, "log.jsonl")
        # every variant unwritten; the "slow" one takes a second to say so
        binary = fakes.fake_lab(tmp, "unwritten", status="not_implemented", log=log,
                                sleep_by_variant={"slow": 1.0})
        info = fakes.lab_info()
        cases = ((1025, "small", 1, ()), (1026, "small", 1, ()))
        slow = ((1027, "small", 1, ("--variant", "slow")), (1028, "small", 1, ("--variant", "slow")))
        plans = {"02_fake": LabPlan("02_fake", binary, info, cases, 10.0),
                 "02_fake/slow": LabPlan("02_fake/slow", binary, info, slow, 10.0, variant="slow")}
        # two chunks of both variants, one starting with the default, the other with "slow"; the
        # first hears "not implemented" at once and, before, started the slow variant's case in
        # a second process while the other chunk's was still trying it
        self.assertEqual([[p.lab for p, _ in chunk] for chunk in stage_cases.chunks(plans, 2)],
                         [["02_fake", "02_fake/slow"], ["02_fake/slow", "02_fake"]])
        runs = run_plans(plans, 2, None, 1, lambda m: None)
        with open(log) as f:
            starts = [json.loads(line) for line in f if json.loads(line)["case_in_process"] == 0]
        self.assertEqual(len(starts), 2, starts)
        for lab in plans:
            self.assertEqual(runs[lab].stop, Status.NOT_IMPLEMENTED)
        shutil.rmtree(tmp, ignore_errors=True)


class Hangs(unittest.TestCase):
    def setUp(self):
        self.tmp = fakes.shared_tmp()

    def plan(self, binary, case_s, cases=((1025, "small", 1, ()),)):
        return LabPlan("02_fake", binary, fakes.lab_info(), tuple(cases), case_s)

    def grade(self, binary, case_s, cases=((1025, "small", 1, ()),), isolated=True):
        said = []
        plan = self.plan(binary, case_s, cases)
        runs = run_plans({"02_fake": plan}, 2, None, 1, said.append, isolated=isolated)["02_fake"]
        return case_outcomes.correctness_outcome(plan, runs, "cpu"), said

    def test_a_case_that_times_out_once_runs_again_alone_with_a_larger_limit(self):
        for isolated in (True, False):
            marker = os.path.join(self.tmp, f"spun-{isolated}")
            binary = fakes.fake_lab(self.tmp, f"once-{isolated}", spin_once=marker)
            c, said = self.grade(binary, 0.5, isolated=isolated)
            self.assertTrue(os.path.exists(marker))  # the first run spun ...
            self.assertEqual((c.passed, c.total, c.stopped_by), (1, 1, None))  # ... the second passed
            self.assertTrue(any("running it again alone, with a limit of 1.5 s" in m for m in said), said)

    def test_a_cpu_hang_names_both_limits(self):
        binary = fakes.fake_lab(self.tmp, "spin", status="spin")
        t0 = time.monotonic()
        c, _ = self.grade(binary, 0.5, cases=((1025, "small", 1, ()), (2049, "small", 2, ())))
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(c.stopped_by, Status.TIMEOUT)
        self.assertIn("timed out after 0.5 s of CPU time, and again alone after 1.5 s of CPU time "
                      "(the process group was killed)", c.note)
        self.assertTrue(c.note.startswith(case_outcomes.HANGS))

    def test_a_blocked_process_meets_the_wall_clock_cap(self):
        binary = fakes.fake_lab(self.tmp, "sleeper", status="hang")
        r = evaluate.run_case(binary, 1025, "small", 1, 0.25)
        self.assertEqual(r[0], Status.TIMEOUT)
        self.assertRegex(r[1], r"^timed out after 1 s \(wall clock; it used \d+\.\d s of CPU time, under the "
                               r"0\.25 s limit: blocked, not computing\) \(the process group was killed\)")

    def test_cpu_time_not_wall_time_is_the_limit(self):
        # a process that waits 1.2 s without computing, under a 0.5 s limit: not a hang
        binary = fakes.fake_lab(self.tmp, "slow", status="ok")
        waiter = os.path.join(self.tmp, "slow", "scan")
        with open(waiter) as f:
            text = f.read()
        with open(waiter, "w") as f:
            f.write(text.replace("    if st == \"hang\":", "    time.sleep(1.2)\n    if st == \"hang\":", 1))
        kind, msg, _ = evaluate.run_case(binary, 1025, "small", 1, 0.5)
        self.assertEqual(kind, Status.OK, msg)
        wall, cpu = evaluate.case_limits(0.5)
        self.assertEqual((wall, cpu), (0.5 * evaluate.CASE_WALL_FACTOR, 0.5))

    def test_cpu_seconds_reads_proc(self):
        p = subprocess.Popen([sys.executable, "-c", "import time\nt=time.time()\nwhile time.time()-t<0.6: pass"])
        try:
            p.wait()
        finally:
            pass
        self.assertIsNone(procfs.cpu_seconds(p.pid))  # reaped: gone
        self.assertGreater(procfs.cpu_seconds(os.getpid()), 0)

    def test_confirmed_message(self):
        self.assertEqual(evaluate.confirmed_timeout(
            "timed out after 20 s of CPU time (the process group was killed)",
            "timed out after 60 s of CPU time (the process group was killed)"),
            "timed out after 20 s of CPU time, and again alone after 60 s of CPU time (the process group was killed)")


if __name__ == "__main__":
    unittest.main()
