"""Stage 5: speed (GPU, one process at a time, student and reference interleaved).

Only for a lab whose every correctness case passed. The student's binary and the reference are
timed at the lab's benchmark size, the order alternating from lab to lab and round to round.
SpeedStage.run returns a SpeedOutcome of measurements; the points, and the note that explains
them, are scoring.speed_award's. A wrong answer at the benchmark size is the outcome's failure,
which scoring counts against correctness: the correctness outcome itself is never changed.

Before a lab is timed, the GPU must be free of other jobs (gpu_guard.GpuGuard: it waits up to
timeouts.gpu_wait_s); a GPU still busy then gives the outcome GPU_BUSY, "speed not graded: the
GPU was busy (...); regrade with: <command>", which the Grader reports as an infrastructure
problem, never as the student's. The GPU is asked again while the lab is timed (after a timed
run once WATCH_S have passed since the last ask, and at the end): a job found there makes the
whole measurement again once the GPU is free, and a job found during that one too gives GPU_BUSY
(SpeedStage.run).

A time is plausible when it is no faster than PLAUSIBLE_FRACTION_OF_COPY of a device copy of
the same bytes (scoring.plausible). The copy is the student's own: the harness times one right
after each timed call, in the same process, on the same buffers (common/harness/call.c: lab_time_copy
after each timed call; a host lab a memcpy after each call), and reports their median as
memcpy_ms, so the scan and the copy it is held to share whatever else the GPU was doing. An
implausible time is measured again in a process of its own (evaluate.run_timed) before anything
is said: only when that measurement is implausible too is it called tampered with (the message
gives both times and both copies); otherwise the second measurement is the lab's.
"""
import contextlib
import dataclasses
import threading
from dataclasses import dataclass

from . import evaluate as ev
from . import gpu_guard
from . import scheduling
from . import scoring
from .build import InfraError
from .outcomes import CaseFailure, SpeedOutcome
from .status import Status

GPU_BUSY = "speed not graded: the GPU was busy"
PROBE_REPS, PROBE_WARMUP = 3, 1
SERIAL_MAX_N = 1 << 24  # the serial baseline's largest measured size (_serial_ms)
WATCH_S = 1.0  # while a lab is timed, the GPU is asked at most this often (and at the end)


def _copy_ms(runs):
    """The median of the copies timed next to the student's timed calls, or None (_rounds)."""
    return scoring.median(runs["copy"]) if runs["copy"] else None


def _positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def _variant_options(settings):
    """The timed runs' options: speed.variant's, the same on both sides and in every re-measure."""
    variant = settings["speed"].get("variant")
    return ["--variant", variant] if variant else []


@dataclass(frozen=True)
class _Timing:
    """One timed run: (kind, message, report) as evaluate.diagnose gives, and the time of the
    metric (None unless kind is ok)."""
    kind: Status
    message: str
    report: object
    value: object


class SpeedStage:
    """Times labs against the course's references. refs: {lab: (binary, LabInfo)};
    ref_binary(lab): the reference binary after checking it is unchanged; serial_cache: {n: ms}
    of the serial lab, kept for the grading session."""

    def __init__(self, config, refs, ref_binary, seed, mode, progress, serial_cache, isolated=False,
                 guard=None, regrade=None):
        self.isolated = isolated
        self.guard = guard  # a gpu_guard.GpuGuard (None: the GPU is not checked)
        # while run() times a device lab: .intruders {pid: what} of other jobs seen and .asked (the
        # guard's clock at the last ask). Per thread: Grader._speed times the host lab in a thread
        # of its own beside the device labs, and its run() must not end their watch.
        self._watch = threading.local()
        self._runs = threading.local()  # .last: this thread's last rounds (_with_rounds)
        self.regrade = regrade or "python3 grader/grade.py --gpu"  # the command that grades again
        self.config = config
        self.refs = refs
        self.ref_binary = ref_binary
        self.seed = seed
        self.mode = mode
        self.progress = progress
        self.serial_cache = serial_cache
        # a GPU lab's timed runs share it; a host lab confirming a loss holds it alone (_quiet)
        self.gate = scheduling.Gate()

    def run(self, lab, binary, correctness, student_first=True):
        """The SpeedOutcome of lab (binary: the student's) given its correctness outcome."""
        if correctness.stopped_by == Status.NOT_IMPLEMENTED:
            return SpeedOutcome(Status.NOT_GRADED, Status.LAB_NOT_IMPLEMENTED.value)
        if correctness.passed < correctness.total:
            # every graded variant must be right, not only the one timed: speed points are for a
            # lab that works (lab 09 with only `add` written earns none)
            bad = [v.name for v in correctness.variants if v.graded and (not v.written or v.passed < v.total)]
            what = f" ({', '.join(bad)})" if bad else ""
            return SpeedOutcome(Status.NOT_GRADED, f"not graded: correctness cases failed{what}")
        if lab not in self.refs:
            return SpeedOutcome(Status.NOT_GRADED, "not graded: the course has no reference solution for this lab")
        settings = self.config.lab(lab)
        rinfo = self.refs[lab][1]
        n = settings["speed"]["n"] or rinfo.bench_n
        metric = "tile_ms" if rinfo.shape == "tile" else "ms"
        seed = ev.case_seed(self.seed, lab, n, "bench")
        busy = self._busy(lab, settings)
        if busy:
            return busy
        self.progress(f"speed: {lab} at n={n}")
        self._watch.device = rinfo.device  # this thread's lab: a GPU lab's timed runs share the gate
        watch = self.guard is not None and rinfo.device
        w = self._watch
        for attempt in (1, 2):
            w.intruders = {} if watch else None
            if watch:
                w.asked = self.guard.clock()
            # a host lab is timed on its own kept core beside the GPU labs' timed runs, which make
            # and check their inputs on the GPU (the judges' host work is a few launches a call);
            # only its confirming rounds hold them off (_quiet)
            out = self._measure(lab, binary, settings, n, metric, seed, student_first, self.isolated)
            if watch:
                self._look()
            found, w.intruders = list((w.intruders or {}).values()), None
            if not found:
                return out
            what = gpu_guard.describe(found)
            if attempt == 2:
                return SpeedOutcome(Status.NOT_GRADED, f"{GPU_BUSY} ({what} used it while {lab} was timed, "
                                                       f"twice); regrade with: {self.regrade}")
            self.progress(f"speed: {lab}: {what} used the GPU while it was timed: timing it again "
                          f"once the GPU is free")
            busy = self._busy(lab, settings)
            if busy:
                return busy

    def _busy(self, lab, settings):
        """None when the GPU is free of other jobs (within timeouts.gpu_wait_s) or cannot be
        checked, or lab is a host lab (it uses no GPU); else the outcome GPU_BUSY, with what was
        using it and the command that regrades."""
        if self.guard is None or not self.refs[lab][1].device:
            return None
        wait_s = settings["timeouts"]["gpu_wait_s"]
        busy = self.guard.wait_idle(wait_s, self.progress)
        if not busy:
            return None
        return SpeedOutcome(Status.NOT_GRADED, f"{GPU_BUSY} ({busy}, still after waiting {wait_s:g} s); "
                                               f"regrade with: {self.regrade}")

    def _measure(self, lab, binary, settings, n, metric, seed, student_first, isolated):
        """The probe, then the rounds, with the student's runs in one process and the
        reference's in another (evaluate.Timer) unless isolated; when either process did
        something no run's verdict accounts for, the whole measurement again, one process a run."""
        options = _variant_options(settings)
        student = ev.Timer(binary, isolated, options)
        reference = ev.Timer(self.ref_binary(lab), isolated, options)
        clean = False
        try:
            self._start(student, reference)
            out = self._probe(lab, student, reference, settings, n, metric, seed)
            if out is None:
                out = self._rounds(lab, student, reference, settings, n, metric, seed, student_first)
        finally:
            clean = student.close()
            clean = reference.close() and clean
        if not clean and not isolated:
            return self._measure(lab, binary, settings, n, metric, seed, student_first, True)
        return out

    def _start(self, *timers):
        """Starts the timers' processes at once, before this lab's first timed run (evaluate.Timer.start):
        the reference's start is not waited for after the student's probe."""
        for t in timers:
            t.start()

    def _ref_timed(self, lab, reference, n, reps, warmup, metric, seed, timeout):
        """A timed run of the reference, its binary checked first (Grader._ref_binary)."""
        self.ref_binary(lab)
        return self._timed(reference, n, reps, warmup, metric, seed, timeout)

    def _timed(self, timer, n, reps, warmup, metric, seed, timeout):
        """One timed run at n (timer: an evaluate.Timer), then, while run() watches the GPU and
        WATCH_S have passed since it was last asked, the other jobs on it now (_look). A report
        without a time is an error of that run, never a TypeError."""
        with self.gate.shared() if self._on_device() else contextlib.nullcontext():
            t = self._timed_run(timer, n, reps, warmup, metric, seed, timeout)
        w = self._watch
        if getattr(w, "intruders", None) is not None and self.guard.clock() - w.asked >= WATCH_S:
            self._look()
        return t

    def _look(self):
        """Asks which other jobs use the GPU now, keeping them by pid in this thread's watch."""
        self._watch.asked = self.guard.clock()
        self._watch.intruders.update((f[0], f) for f in self.guard.others() or [])

    def _timed_run(self, timer, n, reps, warmup, metric, seed, timeout):
        """The timed run itself, as a _Timing."""
        kind, msg, rep = timer.timed(n, reps, warmup, seed, timeout)
        val = rep.get(metric) if rep and kind == Status.OK else None
        if kind == Status.OK and not _positive(val):
            val = rep.get("ms")
        if kind == Status.OK and not _positive(val):
            kind, msg, val = Status.ERROR, (f"the report of a timed run at n={n} has no time "
                                            f"({metric}: {rep.get(metric)!r}, ms: {rep.get('ms')!r})"), None
        if kind == Status.OK and not (_positive(rep.get("ms")) and _positive(rep.get("memcpy_ms"))):
            # the judge writes both on every timed run: a report without them was not its own,
            # and a check that would be skipped for it fails the run instead
            kind, msg, val = Status.ERROR, (f"the report of a timed run at n={n} is malformed (ms: "
                                            f"{rep.get('ms')!r}, memcpy_ms: {rep.get('memcpy_ms')!r}): "
                                            f"a timed run's report always has both"), None
        return _Timing(kind, msg, rep, val)

    def _probe(self, lab, student, reference, settings, n, metric, seed):
        """A cheap probe at a sixteenth of the size first, so that a hopelessly slow kernel (one
        thread doing everything, say) is not run 20 times at the full size: the outcome of a lab
        too slow to time in full, else None (a probe that fails is left to the full run). A probe
        that says "too slow" is made once more, and each side's better time counts (see
        _rounds: no lab loses points on one measurement)."""
        to = settings["timeouts"]["speed_s"]
        probe_n = max(min(n, 1 << 20), n // 16)
        s_best = r_best = None
        for attempt in (1, 2):
            s = self._timed(student, probe_n, PROBE_REPS, PROBE_WARMUP, metric, seed, to)
            if s.kind != Status.OK:
                return None
            r = self._ref_timed(lab, reference, probe_n, PROBE_REPS, PROBE_WARMUP, metric, seed, to)
            if r.kind != Status.OK:
                raise InfraError(f"the reference solution of {lab} fails at n={probe_n}: {r.message}")
            s_best = s if s_best is None or s.value < s_best.value else s_best
            r_best = r if r_best is None or r.value < r_best.value else r_best
            ratio = s_best.value / r_best.value if r_best.value else None
            if not scoring.too_slow_to_time(ratio, settings["speed"]):
                return None
        serial = self._serial_ms(probe_n, settings)
        known = bool(serial) and _positive(s_best.report.get("ms"))
        return SpeedOutcome(Status.GRADED,
                            f"too slow to time in full: {ratio:.1f}x the reference's time at n={probe_n}",
                            metric=metric, bench_n=probe_n, ratio=ratio, student_ms=s_best.value,
                            reference_ms=r_best.value, serial_ms=serial if known else None,
                            speedup=serial / s_best.report["ms"] if known else None, too_slow=True)

    def _rounds(self, lab, student, reference, settings, n, metric, seed, student_first):
        """Student and reference timed in turn (rounds of both, the order alternating), then
        judged: a failed timed run, a time a scan cannot reach, or the measured outcome. A time
        that would cost speed points is confirmed first: one more round (the order reversed), and
        then each side's best time over all rounds counts; up to confirm_rounds more rounds while
        it still would (3 for the serial lab, timed on a CPU core, whose times vary more).
        Whatever else runs on the machine (another GPU's grading, builds, the driver's work for
        other processes) only ever adds time, so the better of two measurements of the same code
        is the truer one, and no lab loses points on one measurement; a lab that is slow is slow
        twice. Each confirming round runs in new processes of both sides (Timer.fresh: where a
        process's buffers landed in memory is part of its luck, and a loss must not be the luck
        of one pair of processes measured again). The confirming rounds run quiet (_quiet): the
        grader's own builds of the next submissions stopped (and for a host lab the GPU labs' timed
        runs held off), so a loss that stands was measured with nothing of the grader's beside it."""
        out = self._rounds_judged(lab, student, reference, settings, n, metric, seed, student_first)
        return self._with_rounds(out, settings)

    def _with_rounds(self, out, settings):
        """out with its rounds' times and the spread of the points their ratios would give (the
        receipt's, gradelib/receipt.py): every round is a student's time and the reference's
        measured side by side, so each pair's ratio is one measurement of the lab's ratio."""
        runs = getattr(self._runs, "last", None)
        if out.status != Status.GRADED or not runs or not runs["s"] or not runs["r"]:
            return out
        pairs = list(zip(runs["s"], runs["r"]))
        ratios = [s / r for s, r in pairs if r]
        maximum = scoring.maxima(settings, self.mode).speed
        points = [scoring.speed_award(dataclasses.replace(out, ratio=x), settings["speed"], maximum)[0]
                  for x in ratios]
        spread = {"ratio_min": round(min(ratios), 4), "ratio_max": round(max(ratios), 4),
                  "points_min": min(points), "points_max": max(points)} if ratios else None
        return dataclasses.replace(out, rounds={"student_ms": [round(x, 6) for x in runs["s"]],
                                                "reference_ms": [round(x, 6) for x in runs["r"]]},
                                   spread=spread)

    def _rounds_judged(self, lab, student, reference, settings, n, metric, seed, student_first):
        """_rounds' work (its rounds kept in this thread's self._runs.last for _with_rounds)."""
        spc = settings["speed"]
        runs = self._runs.last = {"s": [], "r": [], "full": [], "copy": []}
        for rnd in range(spc["rounds"]):
            if rnd:  # each round with both sides' arrays in new memory: where they landed is part
                student.renew()  # of a measurement's luck, which the rounds' median is to average
                reference.renew()  # out, not to measure again (Timer.renew; BENCH.md measures it)
            t = self._round(lab, student, reference, settings, n, metric, seed, (rnd % 2 == 0) == student_first, runs)
            if t is not None:
                return self._failed(lab, n, metric, seed, t)
        pick, out = scoring.median, None
        for extra in range(spc.get("confirm_rounds", 1) + 1):
            if extra:  # a loss to confirm: one more round, in the order the next round would have
                if extra == 1:
                    ratio = f"{out.ratio:.2f}x the reference's time" if out.ratio else "a loss"
                    self.progress(f"speed: {lab}: {ratio}: confirming it with the grader's other work paused")
                student.fresh()  # a loss is confirmed in processes of its own: a process's luck
                reference.fresh()  # (where its arrays landed) is not measured twice
                with self._quiet():
                    t = self._round(lab, student, reference, settings, n, metric, seed,
                                    ((spc["rounds"] + extra - 1) % 2 == 0) == student_first, runs)
                if t is not None:
                    return self._failed(lab, n, metric, seed, t)
            out = self._judged(lab, student, settings, n, metric, seed, runs, pick)
            remeasured = not scoring.plausible(pick(runs["s"]), _copy_ms(runs))  # _judged's own verdict
            if extra and out.status == Status.GRADED:
                out = dataclasses.replace(out, quiet_rounds=extra)
            if remeasured or out.status != Status.GRADED or scoring.speed_share(out, spc)[0] >= 1.0:
                return out
            pick = min
        return out

    @contextlib.contextmanager
    def _quiet(self):
        """The grader's other work held off while a loss is confirmed: its background builds
        stopped (scheduling.quiet), and for a host lab the GPU labs' timed runs too (the one in
        flight ends first)."""
        with (contextlib.nullcontext() if self._on_device() else self.gate.alone()), scheduling.quiet():
            yield

    def _on_device(self):
        """Whether this thread times a GPU lab (run() says which; True for a thread it never saw)."""
        return getattr(self._watch, "device", True)

    def _round(self, lab, student, reference, settings, n, metric, seed, student_first, runs):
        """One round: the student's timed run and the reference's, in that order or the other,
        their values added to runs; the student's failed _Timing, or None."""
        spc, to = settings["speed"], settings["timeouts"]["speed_s"]
        for who in ("s", "r") if student_first else ("r", "s"):
            if who == "r":
                t = self._ref_timed(lab, reference, n, spc["reps"], spc["warmup"], metric, seed, to)
                if t.kind != Status.OK:
                    raise InfraError(f"the reference solution of {lab} fails while timed: {t.message}")
                runs["r"].append(t.value)
                continue
            t = self._timed(student, n, spc["reps"], spc["warmup"], metric, seed, to)
            if t.kind != Status.OK:  # a failure at the full size, or found when re-validated after timing
                return t
            runs["s"].append(t.value)
            runs["full"].append(t.report["ms"] if _positive(t.report.get("ms")) else t.value)
            if _positive(t.report.get("memcpy_ms")):  # the copy timed next to each of its calls
                runs["copy"].append(t.report["memcpy_ms"])
        return None

    def _judged(self, lab, student, settings, n, metric, seed, runs, pick):
        """The outcome of the runs so far, each side's time pick()ed over its runs (the median, or
        min when confirming a loss): measured again alone when the student's is faster than its
        copy allows (_remeasure), else judged."""
        s_ms, r_ms, full_ms = pick(runs["s"]), pick(runs["r"]), pick(runs["full"])
        copy_ms = _copy_ms(runs)
        if not scoring.plausible(s_ms, copy_ms):
            return self._remeasure(lab, student.binary, settings, n, metric, seed, s_ms, r_ms, copy_ms)
        return self._judge(settings, n, metric, s_ms, r_ms, full_ms)

    def _remeasure(self, lab, binary, settings, n, metric, seed, s_ms, r_ms, copy_ms):
        """A time faster than its own copy allows, measured again in a process of its own: tampered
        with only when that agrees; otherwise the second measurement is the lab's."""
        spc, to = settings["speed"], settings["timeouts"]["speed_s"]
        busy = self._busy(lab, settings)
        if busy:
            return busy
        self.progress(f"speed: {lab}: {s_ms:.4f} ms is faster than its copy of the same bytes "
                      f"({copy_ms:.4f} ms): measuring it again in a process of its own")
        t = self._timed(ev.Timer(binary, isolated=True, options=_variant_options(settings)), n, spc["reps"],
                        spc["warmup"], metric, seed, to)
        if t.kind != Status.OK:
            return self._failed(lab, n, metric, seed, t)
        again = t.report.get("memcpy_ms") if _positive(t.report.get("memcpy_ms")) else None
        if scoring.plausible(t.value, again):
            full = t.report["ms"] if _positive(t.report.get("ms")) else t.value
            return self._judge(settings, n, metric, t.value, r_ms, full)
        copy2 = f"{again:.4f} ms" if again else "none"
        return SpeedOutcome(Status.FAILED, (f"timing not plausible: {s_ms:.4f} ms is faster than a copy of the "
                                            f"same bytes ({copy_ms:.4f} ms, timed after each timed call in the "
                                            f"same process), and again in a process of its own: {t.value:.4f} ms "
                                            f"against its copy's {copy2}; a scan must read and write every "
                                            f"element, so the measurement was tampered with"),
                            metric=metric, bench_n=n, student_ms=t.value, reference_ms=r_ms)

    def _failed(self, lab, n, metric, seed, t):
        """A student's timed run that failed: the speed part fails, and the failure is reported
        (scoring counts it as a failed case)."""
        failure = CaseFailure(n, "small", seed, t.kind, "timed run", t.message,
                              ev.reproduce_cmd(lab, n, "small", seed, self.mode))
        return SpeedOutcome(Status.FAILED, f"at the benchmark size n={n}: {t.message}", metric=metric, bench_n=n,
                            failure=failure)

    def _judge(self, settings, n, metric, s_ms, r_ms, full_ms):
        """The measured outcome of a plausible time."""
        serial = self._serial_ms(n, settings)
        return SpeedOutcome(Status.GRADED, metric=metric, bench_n=n, ratio=s_ms / r_ms if r_ms else None,
                            student_ms=s_ms, reference_ms=r_ms, full_ms=full_ms, serial_ms=serial,
                            speedup=serial / full_ms if serial and full_ms else None)

    def _serial_ms(self, n, settings):
        """Median time of the reference serial lab (01) at n: measured once per session at
        min(n, SERIAL_MAX_N) and scaled linearly to n (a serial scan streams its input once, so
        its time is linear in n once the arrays are past the caches; measuring 2^28 elements
        would take the serial lab ten seconds per submission)."""
        serial = next((lab for lab in self.refs if not self.refs[lab][1].device), None)
        if serial is None:
            return None
        m = min(n, SERIAL_MAX_N)
        if m not in self.serial_cache:
            kind, msg, rep = ev.run_timed(self.ref_binary(serial), m, settings["speed"]["serial_reps"], 1,
                                          1, settings["timeouts"]["speed_s"])
            self.serial_cache[m] = rep["ms"] if kind == Status.OK and _positive(rep.get("ms")) else None
        return self.serial_cache[m] * n / m if self.serial_cache[m] else None
