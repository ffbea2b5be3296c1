"""What each grading stage returns, a lab's whole result, and a grading run's result.

Every stage returns its own outcome (frozen: nothing edits it afterwards) and reads the others
only as inputs; grading.py composes them into a LabResult, scoring.py decides its points. The
plain dicts that every output format and the stored JSON are written from are made here and
only here (the to_dict methods), with the keys in the order the JSON has always had, and with
every text that can hold what a submission printed (a compiler message, a case message, a
sanitizer's findings, the static checks' lines) bounded and cleaned here (feedback.py: the limits
of config.json "feedback").
"""
from dataclasses import dataclass, field
from typing import Optional

from . import contract, feedback, scoring
from .status import STOPPED, Status


def _plain(status):
    """A Status as the plain string the JSON holds."""
    return status.value if isinstance(status, Status) else status


def _line(text):
    """A one-line message that may quote a program (a case's, a sanitizer run's), bounded."""
    return feedback.line(text, feedback.limit("case_message_bytes"))


def _block(text):
    """A multi-line text that may hold program output (a compiler message), bounded: each line
    to the case message limit, the whole to the lab output limit."""
    return feedback.cap_lines(text, feedback.limit("case_message_bytes"), feedback.limit("lab_output_bytes"))


def _lines(lines):
    """One-line messages (the static checks' violations), each bounded, as many as fit in the lab
    output limit, then one line that says how many more there were."""
    out, room = [], feedback.limit("lab_output_bytes")
    for i, ln in enumerate(lines):
        ln = _line(ln)
        room -= len(ln.encode("utf-8")) + 1
        if room < 0:
            out.append(f"... and {len(lines) - i} more")
            break
        out.append(ln)
    return out


# ---- build and static checks -------------------------------------------------------------------

@dataclass(frozen=True)
class BuildOutcome:
    """The compile: ok, how long it took (the nvcc build for CPU mode's checks included), the
    compiler's message (or why there was nothing to build)."""
    ok: bool = False
    seconds: float = 0.0
    message: str = ""

    def to_dict(self):
        return {"ok": self.ok, "seconds": self.seconds, "message": _block(self.message)}


@dataclass(frozen=True)
class StaticOutcome:
    """The static checks: ok, the violations (one line each), a note about checks that could not
    run. deferred: violations that count only once the lab is known to be implemented (a
    skeleton launches no kernel either); they are not part of the JSON until they count."""
    ok: bool = False
    violations: tuple = ()
    note: str = ""
    deferred: tuple = ()

    def refused(self, violations):
        """This outcome failed with violations (the note kept)."""
        return StaticOutcome(ok=False, violations=tuple(violations), note=self.note)

    def to_dict(self):
        d = {"ok": self.ok, "violations": _lines(self.violations)}
        if self.note:
            d["note"] = _block(self.note)
        return d


# ---- correctness and sanitizer -------------------------------------------------------------------

@dataclass(frozen=True)
class CaseFailure:
    """One failed case (or timed run): its input, what went wrong, how to rerun it by hand."""
    n: int
    dist: str
    seed: int
    kind: Status
    options: str
    message: str
    reproduce: str

    def to_dict(self):
        return {"n": self.n, "dist": self.dist, "seed": self.seed, "kind": _plain(self.kind),
                "options": self.options, "message": _line(self.message), "reproduce": self.reproduce}


@dataclass(frozen=True)
class AlgorithmCheck:
    """Which of the course's algorithms a graded variant's first call was (its algorithm case:
    CPU mode counted what its kernels did, the judge named it): the variant, the algorithm the
    course asks for and the one found (found None: the case did not run to its end, so nothing
    was profiled), whether they agree, what was measured and the judge's verdict on it."""
    variant: str
    asked: Optional[str]
    found: Optional[str]
    same: bool
    measured: str = ""
    verdict: str = ""

    def line(self):
        """One line for the result: what was measured and what it is (make run CPU=1's two lines)."""
        if self.found is None:
            return (f"{self.variant}: not recognised: its algorithm case (CPU mode) did not run to its end, "
                    f"so its algorithm was not profiled")
        return f"{self.variant}: {self.measured} -> {self.verdict}"

    def to_dict(self):
        return {"variant": self.variant, "asked": self.asked, "found": self.found, "same": self.same,
                "measured": _line(self.measured), "line": _line(self.line())}


@dataclass(frozen=True)
class VariantReport:
    """One variant of a lab with several: graded (its cases count; points: its own share of the
    correctness points, or None when every case of the lab counts alike) or only checked and
    reported; written (False: it returns LAB_NOT_IMPLEMENTED); its cases passed of total; what
    went wrong first ("" when nothing did); compare: a design the reference keeps for comparison
    (--describe's "compare": lab 09's *_two_pass, lab 10's *_on_scan), which a student does not
    write: in a student's file it runs the student's own variant of the same operator or
    application, so it is unwritten exactly when that one is, and is then left unnamed."""
    name: str
    graded: bool
    written: bool
    passed: int
    total: int
    points: Optional[float] = None
    first: str = ""
    sanitizer: str = ""  # what a sanitizer found in a run of this variant, "" when nothing
    compare: bool = False

    @property
    def clean(self):
        """Written, every case passed, and no sanitizer error."""
        return self.written and self.passed == self.total and not self.sanitizer

    @property
    def named(self):
        """Whether the result names this variant to the student: one that is not clean, unless it
        is a comparison design that is only unwritten (its own variant's line says so already)."""
        return not self.clean and (self.written or not self.compare)

    def line(self):
        """One line for the result: "two_barrier: written, 3 of 31 cases fail (out[2] ...); not
        graded"."""
        if not self.written:
            what = "not written (returns LAB_NOT_IMPLEMENTED)"
        elif self.passed == self.total:
            what = f"written, all {self.total} cases pass"
        else:
            what = f"written, {self.total - self.passed} of {self.total} cases fail ({self.first})"
        if self.written and self.sanitizer:
            what += f"; {self.sanitizer}"
        if not self.graded and self.compare:
            return f"{self.name}: {what}; not graded (a design the reference keeps for comparison)"
        if not self.graded:
            return f"{self.name}: {what}; not graded (reported only: the lab's points come from its graded variants)"
        share = f" (worth {self.points:g} points)" if self.points is not None else ""
        return f"{self.name}: {what}; graded{share}"

    def to_dict(self):
        return {"name": self.name, "graded": self.graded, "written": self.written, "passed": self.passed,
                "total": self.total, "points": self.points, "first_failure": _line(self.first),
                "sanitizer": _line(self.sanitizer), "line": _line(self.line()), "compare": self.compare,
                "named": self.named}


@dataclass(frozen=True)
class CorrectnessOutcome:
    """The correctness cases: how many ran and passed, the failures in case order, a note (a
    hang, or not implemented). stopped_by: the kind of case that stopped the lab's other cases
    (not_implemented, timeout), or None. variants: a VariantReport per variant of a lab with
    several (the default first), () for a lab with one; passed, total and failures are those of
    the graded variants together."""
    passed: int = 0
    total: int = 0
    failures: tuple = ()
    note: str = ""
    stopped_by: Optional[Status] = None
    variants: tuple = ()
    algorithm: tuple = ()  # an AlgorithmCheck per graded variant with an algorithm case


@dataclass(frozen=True)
class SanitizerCheck:
    """One compute-sanitizer run: the tool, the size, its verdict (clean, errors, timeout,
    failed) and what it said."""
    tool: str
    n: int
    verdict: Status
    detail: str

    def to_dict(self):
        return {"tool": self.tool, "n": self.n, "verdict": _plain(self.verdict), "detail": _line(self.detail)}


@dataclass(frozen=True)
class SanitizerOutcome:
    """Memory safety and races: the part's status (not run, passed, failed, skipped, not
    graded), its runs, a note."""
    status: Status = Status.NOT_RUN
    checks: tuple = ()
    note: str = ""


# ---- speed -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpeedOutcome:
    """What the speed stage measured (times unrounded; to_dict rounds as the JSON has them).
    ratio: student / reference; speedup: over the serial lab; full_ms: the whole scan's time
    (gbps); too_slow: stopped at the probe. failure: a wrong answer (or failed run) at the
    benchmark size, which scoring counts as a failed correctness case (counted_cases).
    quiet_rounds: the rounds that confirmed a loss with the grader's other work paused."""
    status: Status = Status.NOT_RUN
    note: str = ""
    metric: Optional[str] = None
    bench_n: Optional[int] = None
    ratio: Optional[float] = None
    student_ms: Optional[float] = None
    reference_ms: Optional[float] = None
    full_ms: Optional[float] = None
    serial_ms: Optional[float] = None
    speedup: Optional[float] = None
    too_slow: bool = False
    failure: Optional[CaseFailure] = None
    quiet_rounds: int = 0
    rounds: Optional[dict] = None  # each timed round's times: {"student_ms": [...], "reference_ms": [...]}
    spread: Optional[dict] = None  # the ratios of the rounds and the speed points each would give


# ---- a lab -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LabResult:
    """A lab's whole result: the stages' outcomes, its status and summary, and its score
    (scoring.score_lab; zeros until grading.finish_lab). limits: scoring.Maxima."""
    lab: str
    limits: scoring.Maxima
    title: str = ""
    status: Status = Status.GRADED
    summary: str = ""
    build: BuildOutcome = field(default_factory=BuildOutcome)
    static: StaticOutcome = field(default_factory=StaticOutcome)
    correctness: CorrectnessOutcome = field(default_factory=CorrectnessOutcome)
    sanitizer: SanitizerOutcome = field(default_factory=SanitizerOutcome)
    speed: SpeedOutcome = field(default_factory=SpeedOutcome)
    score: scoring.LabScore = field(default_factory=scoring.LabScore)

    @classmethod
    def blank(cls, lab, settings, mode, **outcomes):
        """A lab's result before any stage ran (settings: Config.lab(lab))."""
        return cls(lab=lab, limits=scoring.maxima(settings, mode), **outcomes)

    def summary_line(self):
        """What went wrong, in one line: a stopped lab's own summary, else the failed cases, the
        sanitizer's errors and the speed points lost, or "all checks passed"."""
        if self.status in STOPPED:
            return self.summary
        c, s, sp = self.correctness, self.sanitizer, self.speed
        passed, failures = scoring.counted_cases(c, sp)
        parts = []
        if passed < c.total:
            if c.note.startswith("hangs:"):
                parts.append(f"{c.note} ({passed} of {c.total} cases passed)")
            else:
                first = failures[0].message if failures else ""
                parts.append(f"{c.total - passed} of {c.total} cases failed: {first}")
        if s.status == Status.FAILED:
            parts.append("sanitizer: " + s.note)
        if sp.status in (Status.GRADED, Status.FAILED) and self.score.speed < self.limits.speed:
            parts.append("speed: " + self._speed_note())
        parts += [v.line() for v in c.variants if v.named]
        if self.score.algorithm < self.score.algorithm_max:
            parts += [f"algorithm ({self.score.algorithm:g} of {self.score.algorithm_max:g} points): {a.line()}"
                      for a in c.algorithm if not a.same]
        return "; ".join(parts) if parts else "all checks passed"

    def _speed_note(self):
        return self.score.speed_note or self.speed.note

    def to_dict(self):
        """The plain dict of the result (the JSON's lab entry)."""
        c, s, sp, score = self.correctness, self.sanitizer, self.speed, self.score
        passed, failures = scoring.counted_cases(c, sp)
        return {
            "lab": self.lab,
            "title": self.title,
            "status": _plain(self.status),
            "summary": _block(self.summary),
            "points": score.total,
            "max_points": self.limits.total,
            "build": self.build.to_dict(),
            "static": self.static.to_dict(),
            "correctness": {"passed": passed, "total": c.total, "points": score.correctness,
                            "max": self.limits.correctness, "failures": [f.to_dict() for f in failures],
                            "note": _block(c.note), "variants": [v.to_dict() for v in c.variants],
                            "algorithm": {"points": score.algorithm, "max": score.algorithm_max,
                                          "checks": [a.to_dict() for a in c.algorithm]}},
            "sanitizer": {"status": _plain(s.status), "points": score.sanitizer, "max": self.limits.sanitizer,
                          "checks": [x.to_dict() for x in s.checks], "note": _block(s.note)},
            "speed": {"status": _plain(sp.status), "points": score.speed, "max": self.limits.speed,
                      "ratio": round(sp.ratio, 3) if sp.ratio else None, "metric": sp.metric,
                      "student_ms": sp.student_ms, "reference_ms": sp.reference_ms,
                      "gbps": round(contract.bytes_moved(sp.bench_n) / (sp.full_ms * 1e6), 2) if sp.full_ms else None,
                      "serial_ms": sp.serial_ms,
                      "speedup_vs_serial": round(sp.speedup, 3) if sp.speedup else None,
                      "bench_n": sp.bench_n, "note": _block(self._speed_note()),
                      "rounds": sp.rounds, "spread": sp.spread},
        }


# ---- a grading run -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class GradeResult:
    """The result of grading one submission (or of failing to): what grade.py writes, every
    output format reads (formats/). labs: lab result dicts (LabResult.to_dict). student,
    submission_sha256 and grading_key only in batch mode (None: left out)."""
    course: str
    mode: str
    seed: int
    status: Status = Status.GRADED
    message: str = ""
    device: Optional[str] = None
    points: Optional[float] = None
    max_points: Optional[float] = None
    elapsed_s: float = 0.0
    timings: dict = field(default_factory=dict)
    labs: list = field(default_factory=list)
    student: Optional[str] = None
    submission_sha256: Optional[str] = None
    grading_key: Optional[dict] = None

    def to_dict(self):
        d = {"grader": "grader/grade.py", "course": self.course, "mode": self.mode, "device": self.device,
             "seed": self.seed, "status": _plain(self.status), "message": _block(self.message),
             "points": self.points, "max_points": self.max_points, "elapsed_s": self.elapsed_s,
             "timings": dict(self.timings), "labs": list(self.labs)}
        for key in ("student", "submission_sha256", "grading_key"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        return d
