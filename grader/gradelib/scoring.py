"""The points policy, all of it: what each part of a lab is worth, partial credit for cases, the
speed curve and its caps, what a refusal, a hang or a sanitizer failure costs. The stages
(grading.py and the stage_*.py modules) measure and report; the functions here decide points
from what they measured, and are tested on their own (grader/tests/test_stages.py).

Nothing here runs anything or imports a stage: outcomes come in as the objects of outcomes.py,
read by attribute.
"""
from dataclasses import dataclass

from .status import STOPPED, Status

# A scan reads and writes every element, so it cannot beat a device-to-device copy of the same
# bytes; the fastest reference (lab 08) runs at ~0.9x a copy's speed. A time under this fraction
# of the copy the harness times after each timed call, in the same process (memcpy_ms), is not
# plausible; the speed stage measures it again alone and calls it forged only if that agrees.
PLAUSIBLE_FRACTION_OF_COPY = 0.75
# A probe (a sixteenth of the benchmark size) slower than this many times zero_at (the ratio at
# which speed points reach 0) earns no speed points: the lab is not timed in full.
TOO_SLOW_FACTOR = 2


@dataclass(frozen=True)
class Maxima:
    """What each part of one lab is worth in a mode: sanitizer and speed only on a GPU."""
    correctness: float
    sanitizer: float
    speed: float
    total: float


@dataclass(frozen=True)
class LabScore:
    """The points a lab earned, part by part, and what scoring says about its speed points (a
    note that replaces the speed stage's own, or "")."""
    correctness: float = 0.0
    sanitizer: float = 0.0
    speed: float = 0.0
    total: float = 0.0
    speed_note: str = ""
    algorithm: float = 0.0  # of correctness: the algorithm part's points (algorithm_award)
    algorithm_max: float = 0.0  # 0: the lab has no algorithm part


def maxima(settings, mode):
    """Maxima of a lab from its config (settings: Config.lab(...)) in mode 'gpu' or 'cpu'."""
    p = settings["points"]
    gpu = mode == "gpu"
    return Maxima(correctness=p["correctness"], sanitizer=p["sanitizer"] if gpu else 0,
                  speed=p["speed"] if gpu else 0,
                  total=p["correctness"] + (p["sanitizer"] + p["speed"] if gpu else 0))


def speed_fraction(ratio, full_at, zero_at):
    """Share of the speed points for a time ratio (student / reference): 1 at or below full_at,
    0 at or above zero_at, linear in between."""
    if ratio is None:
        return 0.0
    if ratio <= full_at:
        return 1.0
    if ratio >= zero_at:
        return 0.0
    return (zero_at - ratio) / (zero_at - full_at)


def correctness_points(passed, total, points):
    """Points for passing `passed` of `total` correctness cases (proportional)."""
    if total <= 0:
        return 0.0
    return points * passed / total


def median(values):
    """Median of a non-empty list of numbers."""
    v = sorted(values)
    if not v:
        raise ValueError("median of nothing")
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def round_points(x):
    return round(x + 0.0, 2)


# ---- rules the speed stage asks about while it measures ------------------------------------------

def too_slow_to_time(probe_ratio, speed_settings):
    """True when the probe's time ratio is so far past zero_at that timing in full is moot."""
    return bool(probe_ratio) and probe_ratio > TOO_SLOW_FACTOR * speed_settings["zero_at"]


def plausible(student_ms, copy_ms):
    """False when the student's time beats what a copy of the same bytes allows (copy_ms: the
    copy timed in the same run, None when it measured none)."""
    return not (copy_ms and student_ms < PLAUSIBLE_FRACTION_OF_COPY * copy_ms)


# ---- a lab's points ------------------------------------------------------------------------------

def counted_cases(correctness, speed):
    """(passed, failures) as they count: the correctness stage's, plus the wrong answer the speed
    stage found at the benchmark size (speed.failure), which counts as one more failing case
    and one passed case fewer. The speed stage never changes the correctness outcome; this is the
    only place the two meet."""
    if speed.failure is None:
        return correctness.passed, tuple(correctness.failures)
    return max(0, correctness.passed - 1), tuple(correctness.failures) + (speed.failure,)


def correctness_award(correctness, speed, maximum):
    """Correctness points: proportional to the cases passed (counted_cases); for a lab whose
    graded variants each carry points of their own (config variant_points: lab 10's
    applications), each variant's points in proportion to its own cases, so an unwritten or
    broken application costs its share only. A wrong answer at the benchmark size counts against
    the default variant, the one timed."""
    graded = [v for v in correctness.variants if v.graded]
    if graded and all(v.points is not None for v in graded):
        pts = 0.0
        for v in graded:
            passed = v.passed - (1 if v is correctness.variants[0] and speed.failure is not None else 0)
            pts += correctness_points(max(0, passed), v.total, v.points)
        return min(maximum, pts)
    passed, _ = counted_cases(correctness, speed)
    return correctness_points(passed, correctness.total, maximum)


def algorithm_award(correctness, settings, maximum):
    """(points, of): the algorithm part of the correctness points (config correctness.
    algorithm_points, at most maximum) and what it is worth, shared by the graded variants whose
    algorithm was checked (CorrectnessOutcome.algorithm): each one's share when its first call
    was the algorithm it asks for. score_lab scales the part like the rest by the cases passed,
    so that the right algorithm costs nothing and the wrong one costs that part. (0, 0) for a lab
    without it: no variant asks for an algorithm, a CPU-mode build could not run its algorithm
    case (not held against the student), the part is set to 0, or variant_points share the
    points (lab 10)."""
    c = settings["correctness"]
    part = min(maximum, c.get("algorithm_points") or 0)
    checks = correctness.algorithm
    if not part or not checks or c.get("variant_points"):
        return 0.0, 0.0
    return part * sum(1 for a in checks if a.same) / len(checks), part


def speed_share(speed, speed_settings):
    """(share, note): the share of a lab's speed points (0 to 1, unrounded) a speed outcome earns.
    Only a timed lab (status graded, not stopped at the probe) earns any: linear between full_at
    and zero_at, none below min_speedup over the serial lab. note is "" when the speed stage's
    own note stands. Whether a time loses points is share < 1, never the rounded points: a share
    of 0.9977 is 1.0 in hundredths of one point and 29.93 of 30 points."""
    if speed.status != Status.GRADED or speed.too_slow:
        return 0.0, ""
    full_at, zero_at = speed_settings["full_at"], speed_settings["zero_at"]
    frac = speed_fraction(speed.ratio, full_at, zero_at)
    what = "tile pass" if speed.metric == "tile_ms" else "time"
    if speed_settings.get("variant"):  # the design the handout asks for, timed on both sides
        what = f"{speed_settings['variant']} {what}, the handout's design on both sides,"
    note = (f"{speed.ratio:.2f}x the reference's {what} "
            f"(full points at <= {full_at:g}x, none at >= {zero_at:g}x)")
    if speed.quiet_rounds and frac < 1.0:
        note += (f"; each side's best time, {speed.quiet_rounds} of its rounds measured with the grader's builds of "
                 f"other submissions stopped")
    floor = speed_settings["min_speedup"]
    if floor is not None and speed.speedup is not None and speed.speedup < floor:
        frac = 0.0
        note = f"speedup {speed.speedup:.1f}x over the serial lab is below this lab's minimum of {floor:g}x"
    return frac, note


def speed_award(speed, speed_settings, maximum):
    """(points, note) for a speed outcome: maximum times its speed_share, rounded."""
    frac, note = speed_share(speed, speed_settings)
    return round_points(maximum * frac), note


def score_lab(result, settings):
    """The LabScore of a lab result (outcomes.LabResult) under its config. A lab that stopped
    (missing, build failed, static check failed, not implemented) scores 0 in every part.
    Correctness is proportional to the cases passed (counted_cases), less the share of its
    algorithm part (algorithm_award) that the variants' first calls did not earn; the sanitizer's points
    need a passed (or, when the machine lacks the tool, skipped) sanitizer and at least one
    passed case; speed follows speed_award."""
    limits = result.limits
    if result.status in STOPPED:
        return LabScore()
    passed, _ = counted_cases(result.correctness, result.speed)
    alg, alg_max = algorithm_award(result.correctness, settings, limits.correctness)
    cases = correctness_award(result.correctness, result.speed, limits.correctness)
    lost = (alg_max - alg) / limits.correctness if limits.correctness else 0.0
    corr = round_points(cases * (1.0 - lost))
    san = 0.0
    if result.sanitizer.status in (Status.PASSED, Status.SKIPPED) and passed > 0:
        san = limits.sanitizer  # skipped: the machine lacks the tool, never the student's loss
    speed, note = speed_award(result.speed, settings["speed"], limits.speed)
    return LabScore(correctness=corr, sanitizer=san, speed=speed,
                    total=round_points(corr + san + speed), speed_note=note, algorithm=round_points(alg),
                    algorithm_max=alg_max)
