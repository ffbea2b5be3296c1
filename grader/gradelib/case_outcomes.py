"""What a lab's runs (stage_cases: the correctness cases and the sanitizer runs) come to: the
correctness stage's outcome (correctness_outcome: passed of total, every failure with the command
that reruns it, a hang's note), the sanitizer stage's (sanitizer_outcome), a variant's CPU-mode
ordering cases counted with its own (with_ordering), and a lab of several variants as one
(lab_outcomes)."""
import dataclasses
from dataclasses import dataclass
from typing import Optional

from . import evaluate as ev
from .outcomes import AlgorithmCheck, CaseFailure, CorrectnessOutcome, SanitizerCheck, SanitizerOutcome, VariantReport
from .status import Status

HANGS = "hangs:"  # how a correctness note that names a hung case begins
ORDERING = "@cpu"  # the key of a variant's CPU-mode plan (stage_cases.cpu_plans): its own key and this
ALGORITHM_PLAN = "@algorithm"  # the key of a variant's algorithm plan (stage_cases.algorithm_plans)


@dataclass(frozen=True)
class LabRuns:
    """What one lab's runs said: cases [(n, dist, seed, options, kind, message)] and sanitizer
    checks [(tool, n, verdict, detail)], both sorted; stop: the kind that stopped the lab's other
    runs, or None; reason: why it is not implemented, as a report named it (contract.json's
    not_implemented_reasons: "todo", "base_unwritten"), or None; algorithm: what its algorithm
    case's report said of the first call's algorithm (stage_cases._Pool._algorithm), or None."""
    cases: tuple = ()
    checks: tuple = ()
    stop: Optional[Status] = None
    reason: Optional[str] = None
    algorithm: Optional[dict] = None  # the "algorithm" of its algorithm case's report (a passed one)


def correctness_outcome(plan, runs, mode):
    """The correctness stage's outcome from a lab's runs: passed of total, every failure with the
    command that reruns it; a lab that is not implemented has no failures, a lab that hangs a
    note naming the case, the limit and how many cases never ran."""
    total = len(plan.cases)
    if runs.stop == Status.NOT_IMPLEMENTED:
        return CorrectnessOutcome(0, total, (), Status.LAB_NOT_IMPLEMENTED.value, Status.NOT_IMPLEMENTED)
    passed = sum(1 for *_, k, _ in runs.cases if k == Status.OK)
    failures = tuple(CaseFailure(n, dist, seed, kind, " ".join(options), msg,
                                 ev.reproduce_cmd(plan.lab, n, dist, seed, mode, options))
                     for n, dist, seed, options, kind, msg in runs.cases if kind != Status.OK)
    note = ""
    if runs.stop == Status.TIMEOUT:
        timeouts = [f for f in failures if f.kind == Status.TIMEOUT]
        # the case whose hang was confirmed by a run alone (others that timed out meanwhile were
        # not each run again: _Pool._confirmed)
        hung = next((f for f in timeouts if ", and again alone" in f.message), timeouts[0])
        not_run = total - len(runs.cases)
        note = (f"{HANGS} the case n={hung.n} dist={hung.dist} {hung.message}"
                + (f"; the lab's other {not_run} cases were not run" if not_run else ""))
    return CorrectnessOutcome(passed, total, failures, note, runs.stop, algorithm=_algorithm(plan, runs))


def _algorithm(plan, runs):
    """(AlgorithmCheck,) of a plan with an algorithm case (cases.algorithm_case), else (). A
    report without a well-formed "algorithm" (the case failed, or the judge named none) is a
    variant not recognised."""
    if not any(ev.ALGORITHM in options for *_, options in plan.cases):
        return ()
    name = plan.variant or plan.info.variants[0].name
    a = runs.algorithm if isinstance(runs.algorithm, dict) else {}
    if not all(isinstance(a.get(k), str) for k in ("asked", "found", "measured", "verdict")):
        return (AlgorithmCheck(name, None, None, False),)
    return (AlgorithmCheck(name, a["asked"], a["found"], a.get("same") is True, a["measured"], a["verdict"]),)


def sanitizer_outcome(plan, runs, correctness, mode):
    """The sanitizer stage's outcome: errors in any run fail it (only the sanitizer's exit code
    means errors); a run that timed out is noted and not held against the student (a hang is
    caught by the cases); a lab whose cases hang fails it, whether or not a sanitizer run got in
    before the hang was confirmed (the verdict must not depend on that race)."""
    if mode != "gpu":
        return plan.sanitizer_preset
    if correctness.stopped_by == Status.NOT_IMPLEMENTED:
        return SanitizerOutcome(Status.NOT_GRADED, note=Status.LAB_NOT_IMPLEMENTED.value)
    if runs.checks:
        checks = tuple(SanitizerCheck(*c) for c in runs.checks)
        bad = [c.detail for c in checks if c.verdict == Status.ERRORS]
        slow = [c.detail for c in checks if c.verdict == Status.TIMEOUT]
        if bad:
            return SanitizerOutcome(Status.FAILED, checks, bad[0])
        if correctness.stopped_by == Status.TIMEOUT:
            return SanitizerOutcome(Status.FAILED, checks, "the code hangs (a correctness case timed out), so "
                                                           "its sanitizer runs do not count")
        if slow:
            return SanitizerOutcome(Status.PASSED, checks, "inconclusive, not held against you: " + slow[0])
        return SanitizerOutcome(Status.PASSED, checks, "memcheck and racecheck found no errors")
    if plan.sanitizer_preset is not None:
        return plan.sanitizer_preset
    if correctness.stopped_by == Status.TIMEOUT:
        return SanitizerOutcome(Status.FAILED, note="not run: the code hangs (a correctness case timed out)")
    return SanitizerOutcome()


def _first_problem(outcome):
    """What went wrong first in a variant's outcome: its first failure's message, or its note."""
    if outcome.failures:
        f = outcome.failures[0]
        return f"n={f.n} dist={f.dist}: {f.message}"
    return outcome.note


def _sanitizer_errors(runs):
    """What the sanitizer found in a variant's runs (its first error), or ""."""
    found = next((detail for _, _, verdict, detail in runs.checks if verdict == Status.ERRORS), "")
    return found.split(": ", 1)[1] if found.startswith("variant ") else found


ON_CPU = ("in CPU mode, whose scheduler pauses a block between any two of its steps (a race a GPU shows "
          "by luck fails there every time): ")


def with_ordering(outcome, plan, runs):
    """outcome (a variant's, on the GPU) with the cases of its CPU-mode ordering plan counted in:
    their passes and total added, each failure named as CPU mode's with its CPU=1 command. A plan
    CPU mode found unwritten or hung adds its cases as failed, with its note."""
    own = correctness_outcome(plan, runs, "cpu")
    failures = tuple(dataclasses.replace(f, message=ON_CPU + f.message) for f in own.failures)
    note = outcome.note
    if own.stopped_by is not None and own.note:
        note = "; ".join(x for x in (note, ON_CPU + own.note) if x)
    return dataclasses.replace(outcome, passed=outcome.passed + own.passed, total=outcome.total + own.total,
                               failures=outcome.failures + failures, note=note,
                               algorithm=outcome.algorithm + own.algorithm)


def _compare(plan):
    """Whether plan's variant is a design the reference keeps for comparison (its descriptor's
    compare), which a student does not write; a graded variant never is."""
    name = plan.variant or plan.info.variants[0].name
    return not plan.graded and any(v.name == name and v.compare for v in plan.info.variants)


def lab_outcomes(plans, runs, mode):
    """(CorrectnessOutcome, SanitizerOutcome) of a lab from its variants' plans (plan_lab's, the
    default's first) and runs ({plan.lab: LabRuns}). A lab with one variant: that variant's
    outcomes. With several: the graded variants' cases together (the failures in variant order,
    the notes named by variant), a VariantReport per variant; the lab counts as not implemented
    only when every graded variant is, and as hung when any graded variant hung; the sanitizer's
    runs of every graded variant together. A variant's CPU-mode plans (on_cpu: a GPU grade's
    ordering cases, the algorithm case) are counted into that variant's outcome (with_ordering)."""
    extra = {}  # a variant's key -> its CPU-mode plans (ordering, algorithm)
    for p in plans:
        if p.on_cpu:
            extra.setdefault(p.lab.split("@")[0], []).append(p)
    plans = [p for p in plans if not p.on_cpu]
    main = plans[0]
    outs = []
    for p in plans:
        c = correctness_outcome(p, runs[p.lab], mode)
        for q in extra.get(p.lab, ()) if c.stopped_by is None else ():
            c = with_ordering(c, q, runs[q.lab])
        outs.append((p, c))
    if len(plans) == 1:
        c = outs[0][1]
        return c, sanitizer_outcome(main, runs[main.lab], c, mode)
    graded = [(p, c) for p, c in outs if p.graded]
    reports = tuple(VariantReport(p.variant or p.info.variants[0].name, p.graded,
                                  c.stopped_by != Status.NOT_IMPLEMENTED, c.passed, c.total, p.points,
                                  _first_problem(c), _sanitizer_errors(runs[p.lab]), _compare(p))
                    for p, c in outs)
    unwritten = [p for p, c in graded if c.stopped_by == Status.NOT_IMPLEMENTED]
    hung = [(p, c) for p, c in graded if c.stopped_by == Status.TIMEOUT]
    if len(unwritten) == len(graded):
        stopped, note = Status.NOT_IMPLEMENTED, Status.LAB_NOT_IMPLEMENTED.value
    elif hung:
        p, c = hung[0]
        stopped, note = Status.TIMEOUT, c.note.replace(HANGS, f"{HANGS} variant {p.variant or reports[0].name}:", 1)
    else:
        stopped = None
        note = "; ".join(f"{p.variant or reports[0].name}: {c.note}" for p, c in graded if c.note)
    correctness = CorrectnessOutcome(sum(c.passed for _, c in graded), sum(c.total for _, c in graded),
                                     tuple(f for _, c in graded for f in c.failures), note, stopped, reports,
                                     tuple(a for _, c in graded for a in c.algorithm))
    checks = tuple(x for p, _ in graded for x in runs[p.lab].checks)
    combined = LabRuns(checks=checks, stop=stopped)
    return correctness, sanitizer_outcome(main, combined, correctness, mode)
