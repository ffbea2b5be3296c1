"""Stage 3 and 4: the correctness cases and the compute-sanitizer runs (GPU, a few processes at a
time).

One pool of processes for every lab of a submission, the cases and the sanitizer runs of every
lab together, the longest first, so the slow sanitizer runs of one lab overlap the cases of
another; a lab's sanitizer runs wait until its cases show the code is written, and a lab's
remaining runs are skipped once it is known to be unimplemented or to hang. plan_lab says what
to run, run_plans runs it and records what each run said (LabRuns), and case_outcomes.py
turns that record into the two stages' outcomes.

Starting a CUDA process costs far more than most cases (about 2 s with ten starting at once on
an H100, against a few milliseconds for a case of a few thousand elements; the driver starts
them one at a time), so cases share processes, a lab's variants too: a lab process runs case
after case (the harness reads the next after each report) until one is not ok. Every verdict is
still the one the case gets in a process of its own; the
rule that makes it so is _Pool's.

Size: about 570 lines, over the house's 400: the plan and the shared pool are one stage, and the
pool's rule (when a process may go on to the next case) needs the plan's view of a case beside the
run's. What the runs come to (the two outcomes) is case_outcomes.py.
"""
import concurrent.futures as cf
import contextlib
import threading
from dataclasses import dataclass
from typing import Optional

from . import contract
from . import evaluate as ev
from . import scheduling
from .build import InfraError
from .case_outcomes import ALGORITHM_PLAN, ORDERING, LabRuns
from .outcomes import SanitizerOutcome
from .status import STOPS_A_LAB, Status


@dataclass(frozen=True)
class LabPlan:
    """What to run for one variant of a lab: its cases [(n, dist, seed, options)] and sanitizer
    runs [(tool, n)] with their time limits; sanitizer_preset: the sanitizer's outcome when it
    runs nothing (CPU mode, a host lab, --no-sanitizer, no compute-sanitizer, a variant that is
    only reported), else None. lab: the plan's key in the pool, the lab's id for its default
    variant, "<lab>/<variant>" for another (variant: its name, "" for the default); graded:
    whether its cases count; points: its own share of the correctness points, or None.
    on_cpu: the plan of a GPU grade's CPU-mode cases (cpu_plans): binary is the
    lab's CPU-mode build, lab "<variant's key>@cpu", and its cases count with its variant's."""
    lab: str
    binary: str
    info: object
    cases: tuple
    case_s: float
    sanitizer_runs: tuple = ()
    sanitizer_s: float = 0.0
    sanitizer_preset: Optional[SanitizerOutcome] = None
    variant: str = ""
    graded: bool = True
    points: Optional[float] = None
    on_cpu: bool = False

    @property
    def options(self):
        """The harness options that choose the plan's variant."""
        return ("--variant", self.variant) if self.variant else ()


# CPU mode's largest graded n unless the lab's correctness.cpu_max_n says otherwise.
CPU_MAX_N = (1 << 20) + 1


def _cpu_limit(info, mode, settings=None):
    """In CPU mode (kernels as fibers) cases go only up to a sixteenth of a size-limited lab's
    limit, or the lab's correctness.cpu_max_n (CPU_MAX_N when it has none); None on a GPU."""
    if mode != "cpu":
        return None
    cap = ((settings or {}).get("correctness") or {}).get("cpu_max_n", CPU_MAX_N)
    return min(info.max_n // 16, cap) if info.max_n else cap


def failing_note(graded, reported):
    """The progress line's tail for failed cases: those that count (the table's correctness cell
    counts only the graded variants' cases) apart from those of variants that are only reported."""
    if not graded and not reported:
        return ""
    if not reported:
        return f", {graded} failed"
    if not graded:
        return f", {reported} failed, all in variants that are not graded"
    return f", {graded} failed in graded variants, {reported} in variants that are not graded"


def plan_cases(info, settings, seed, mode, variant=None, graded=True):
    """The cases of one variant of a lab (None: the default; info: the course's LabInfo, whose
    size limit make_cases keeps to): the whole matrix for a graded variant, the small sizes for
    one that is only reported."""
    limit = _cpu_limit(info, mode, settings)
    if not graded:
        return tuple(ev.report_cases(info, settings, seed, variant, limit, mode))
    return tuple(ev.make_cases(info, settings, seed, limit, mode, variant))


def sanitizer_preset(info, mode, wanted, tool):
    """The sanitizer's outcome when it runs nothing for this lab (CPU mode, a host lab,
    --no-sanitizer, no compute-sanitizer found), else None."""
    if mode != "gpu":
        return SanitizerOutcome(Status.NOT_GRADED, note="not graded in CPU mode")
    if not info.device:
        return SanitizerOutcome(Status.PASSED, note="host lab: no device code; the harness's canary "
                                                    "words check its memory")
    if not wanted:
        return SanitizerOutcome(Status.SKIPPED, note="skipped (--no-sanitizer)")
    if not tool:
        return SanitizerOutcome(Status.SKIPPED, note="compute-sanitizer not found: memory and race "
                                                     "checks skipped")
    return None


def plan_lab(lab, binary, info, settings, seed, mode, sanitizer_wanted, sanitizer_tool):
    """The LabPlans of a lab that built (settings: Config.lab(lab)), one per variant, the
    default's first: every graded variant's (cases.graded_variants) with the whole matrix and
    the sanitizer, then every other variant's, checked at small sizes and only reported."""
    preset = sanitizer_preset(info, mode, sanitizer_wanted, sanitizer_tool)
    timeouts = settings["timeouts"]
    shares = settings["correctness"].get("variant_points") or {}
    default = info.variants[0].name
    plans = []
    for name in ev.graded_variants(info, settings):
        runs = ()
        if preset is None:
            sizes = ev.sanitizer_sizes(info, name == default)
            runs = tuple((tool, n) for tool in settings["sanitizer"]["tools"] for n in sizes[tool])
        variant = "" if name == default else name
        plans.append(LabPlan(f"{lab}/{variant}" if variant else lab, binary, info,
                             plan_cases(info, settings, seed, mode, name), timeouts["case_s"], runs,
                             timeouts["sanitizer_s"], preset, variant, True, shares.get(name)))
    for name in ev.report_variants(info, settings):
        # racecheck at one tile and one element, in the lab's racecheck process: a race the
        # cases may not show on a GPU (a missing barrier) is named too
        runs = (("racecheck", info.tile_or_default + 1),) if (
            preset is None and "racecheck" in settings["sanitizer"]["tools"]) else ()
        plans.append(LabPlan(f"{lab}/{name}", binary, info, plan_cases(info, settings, seed, mode, name, False),
                             timeouts["case_s"], runs, timeouts["sanitizer_s"],
                             SanitizerOutcome(Status.NOT_GRADED, note="not graded: a variant that is only reported"),
                             name, False))
    return tuple(plans)


def algorithm_plans(plans, profile_binary, seed, asked):
    """The algorithm case of each graded variant of plans (plan_lab's) that the course's asks for
    an algorithm (asked: {variant: algorithm}, from the reference's --describe: the course's
    descriptor, which a submission's own binary could misdescribe), a plan of its own run by
    profile_binary (the lab's CPU-mode build with the counting hooks: stage_build), in a GPU
    grade and in CPU mode alike; its case counts with its variant's (case_outcomes). () without
    that build."""
    if not profile_binary:
        return ()
    out = []
    for p in plans:
        name = p.variant or p.info.variants[0].name
        if p.graded and asked.get(name, "none") != "none":
            out.append(LabPlan(p.lab + ALGORITHM_PLAN, profile_binary, p.info,
                               (ev.algorithm_case(p.info, seed, name),), p.case_s,
                               sanitizer_preset=p.sanitizer_preset or SanitizerOutcome(), variant=p.variant,
                               on_cpu=True))
    return tuple(out)


def cpu_plans(plans, cpu_binary, settings, seed):
    """A GPU grade's CPU-mode plans for a lab whose config has correctness.cpu_ordering, one per
    graded variant of plans (plan_lab's), each the cases evaluate.ordering_cases gives, run by
    cpu_binary (the lab's CPU-mode build, the same scan.cu). () without a CPU-mode build."""
    if not cpu_binary:
        return ()
    out = []
    for p in plans:
        if not p.graded:
            continue
        cases = tuple(ev.ordering_cases(p.info, settings, seed, p.variant or None))
        if cases:
            out.append(LabPlan(p.lab + ORDERING, cpu_binary, p.info, cases, p.case_s,
                               sanitizer_preset=p.sanitizer_preset or SanitizerOutcome(), variant=p.variant,
                               on_cpu=True))
    return tuple(out)


def runs_alone(case):
    """True for the case that must be the first of its process, as if alone: the many-calls case,
    whose sizes go up and down within one process (a state sized for the first call shows there,
    not hidden by an earlier, larger case)."""
    return ev.is_many_calls(case[3])


# What a graded run costs, in seconds, for the order runs start in and how cases are dealt
# (measured on an H100 with ten processes at once, 2026-11-27: a process's first case waits
# ~1.3 s for its CUDA start, a case of n elements takes ~0.01 s plus ~2e-8 s an element, a
# compute-sanitizer process ~1.5 s to start and ~0.3 s a run). Estimates only: they order the
# work (the longest first) and never change what runs.
START_S, CASE_S, ELEMENT_S = 1.3, 0.01, 2e-8
SANITIZER_START_S, SANITIZER_RUN_S = 1.5, 0.3


def case_cost(case):
    """Estimated seconds of one case (n, dist, seed, options), every call of it counted."""
    options = case[3]
    sizes = options[options.index("--sizes") + 1] if "--sizes" in options else str(case[0])
    return CASE_S + ELEMENT_S * sum(int(x) for x in sizes.split(",") if x.strip().isdigit())


def chunks(plans, jobs):
    """The cases of every plan dealt into chunks, one process each (a LabSession), the plans of
    one binary (a lab's variants) sharing them: about one chunk per job in all, by estimated cost
    (case_cost), at least one per binary, and each runs_alone case first in a chunk (nothing
    runs before it in that process, so it is run as it would be alone, without a process
    started for it alone: starting CUDA processes is what a grade waits on most). A chunk's
    cases are dealt largest first, round-robin, so the large ones spread; a graded plan's
    before any plan that is only reported, so a variant left unwritten ends a process late.
    [((plan, case), ...)]."""
    by_binary = {}
    for p in plans.values():
        by_binary.setdefault(p.binary, []).append(p)
    total = sum(case_cost(c) for p in plans.values() for c in p.cases) or 1.0
    out = []
    for group in by_binary.values():
        firsts = [(p, c) for p in group for c in p.cases if runs_alone(c)]
        rest = [(p, c) for p in group for c in p.cases if not runs_alone(c)]
        cost = sum(case_cost(c) for _, c in rest)
        k = max(len(firsts), 1, round(jobs * cost / total)) if rest else len(firsts)
        k = min(k, len(firsts) + len(rest))
        parts = [[] for _ in range(k)]
        for i, x in enumerate(sorted(rest, key=lambda x: -case_cost(x[1]))):
            parts[i % k].append(x)
        # in each chunk the graded plans' cases first, those only reported after, and within
        # that plan after plan, the plans in an order rotated from chunk to chunk: a plan whose
        # code is not written ends a process at its first case, and the chunks find that out
        # for different plans at once instead of each for every plan in turn
        rank = {p.lab: i for i, p in enumerate(group)}
        for j, part in enumerate(parts):
            part.sort(key=lambda x: (not x[0].graded, (rank[x[0].lab] - j) % len(group)))
        for j, x in enumerate(firsts):
            parts[j].insert(0, x)
        out.extend(tuple(part) for part in parts if part)
    return out


def chunk_cost(items):
    """Estimated seconds of a chunk: its process's start and its cases."""
    return START_S + sum(case_cost(c) for _, c in items)


class _Pool:
    """Runs the plans' cases and their sanitizer runs, gpu_jobs at a time, and records what each
    said per lab; a lab's stop (not implemented, a hang, no device) skips its other runs.

    Unless isolated, a lab's cases run in chunks, many cases per process (evaluate.LabSession),
    the variants of a lab sharing processes and each variant's many-calls case first in one
    (runs_alone, chunks). The work starts longest first (tasks), a lab's sanitizer runs once its
    cases show its code is written (_ready). A case's verdict must be the one it gets alone, so
    shared processes only ever say "every case passed": a lab all of whose cases pass in clean
    shared processes (LabSession.clean) keeps those verdicts; a lab with any case that is not ok
    there, or with a process that did something no verdict accounts for, becomes suspect: its
    other shared runs stop, and then every case of it runs alone (the first case of a process
    that ended with it already did: its verdict is kept), and only those verdicts count.
    isolated=True: every case alone from the start.

    A case that times out (alone, or as the first case of a process that ended with it) is run
    once more before it is called a hang: alone in its process, with no other run of the grade
    going on meanwhile (self.gate: the runs in flight end first, and none starts until it is
    done), and with HANG_RERUN_FACTOR times the limit (evaluate.case_limits); that run's verdict
    is the case's, and a second timeout's message names both limits it met.

    A case that crashed in a shared process after other cases and passes alone is not washed out
    (_not_washed_out): the cases before it run before it again in a new process, and it fails
    as a crash either way, its message saying whether the crash came back."""

    def __init__(self, plans, sanitizer, seed, progress, isolated=False):
        self.plans = plans
        self.sanitizer = sanitizer
        self.seed = seed
        self.progress = progress
        self.isolated = isolated
        self.lock = threading.Lock()
        self.alone = {lab: {} for lab in plans}      # case -> (kind, message) of a run alone
        self.shared_ok = {lab: [] for lab in plans}  # cases that passed in clean shared processes
        self.shared_crash = {lab: {} for lab in plans}  # case -> (message, the cases before it there)
        self.suspect = {lab: False for lab in plans}
        self.checks = {lab: [] for lab in plans}
        self.stop = {lab: None for lab in plans}
        self.reasons = {lab: None for lab in plans}  # lab -> the not-implemented reason its reports gave
        self.algorithms = {lab: None for lab in plans}  # lab -> its algorithm case's report's "algorithm"
        self.n_cases = sum(len(p.cases) for p in plans.values())
        self.done = 0
        self.failed = 0  # cases of graded plans that failed
        self.failed_reported = 0  # cases of variants only reported that failed (not in the table's count)
        self.gate = scheduling.Gate()  # every run shares it; a timed-out case's second run is alone
        self.confirming = {lab: threading.Lock() for lab in plans}
        self.seen_ok = set()  # plans with a case that passed: their code is written
        self.trying = {}  # plan -> processes whose first case, of that plan, is running (_tried)
        self.cond = threading.Condition()  # run_all's: a task ended, or what a plan is became known
        self.pending = []
        self.cases_left = {}  # binary -> its case tasks pending or running

    def run_all(self, tasks, jobs):
        """Runs tasks, jobs at a time, each in the order given once it is ready (_ready);
        returns when every one has run (an exception in one is raised here, after)."""
        self.pending = list(tasks)
        self.cases_left = {}
        for what, plan, _ in self.pending:
            if what != "sanitizer":
                self.cases_left[plan.binary] = self.cases_left.get(plan.binary, 0) + 1
        with cf.ThreadPoolExecutor(jobs) as ex:
            for f in [ex.submit(self._worker) for _ in range(jobs)]:
                f.result()

    def _ready(self, task):
        """A task may start: any case task; a lab's sanitizer runs once each of their variants
        is known to be written (a case passed) or stopped or failing (then they run, or are left
        out, as _sanitizer says), or once the lab has no case task left: a sanitizer process
        is not started for code the cases are about to find unwritten."""
        what, plan, arg = task
        if what != "sanitizer" or not self.cases_left.get(plan.binary):
            return True
        return all(p.lab in self.seen_ok or self.suspect[p.lab] or self.stop[p.lab] is not None
                   for p, _ in arg[1])

    def _worker(self):
        while True:
            with self.cond:
                while True:
                    if not self.pending:
                        return
                    task = next((t for t in self.pending if self._ready(t)), None)
                    if task is not None:
                        self.pending.remove(task)
                        break
                    self.cond.wait(0.5)
            try:
                self.run(task)
            finally:
                with self.cond:
                    if task[0] != "sanitizer":
                        self.cases_left[task[1].binary] -= 1
                    self.cond.notify_all()

    def _known(self):
        """Wakes the workers waiting for a task to become ready."""
        with self.cond:
            self.cond.notify_all()

    def _written(self, lab):
        """A case of lab passed: its code is written (its sanitizer runs may start)."""
        with self.lock:
            self.seen_ok.add(lab)
        self._known()

    def tasks(self, jobs):
        """The first round: chunks of shared cases (or every case alone), and the sanitizer runs,
        the longest first by estimate (a lab's long sanitizer runs and its many cases start
        early rather than last)."""
        if self.isolated:
            out = [(case_cost(c), ("alone", p, c)) for p in self.plans.values() for c in p.cases]
        else:
            out = [(chunk_cost(items), ("chunk", items[0][0], items)) for items in chunks(self.plans, jobs)]
        # a lab's sanitizer runs, those of all its graded variants, in one process per tool
        by_binary = {}
        for p in self.plans.values():
            for tool, n in p.sanitizer_runs:
                by_binary.setdefault(p.binary, {}).setdefault(tool, []).append((p, n))
        for tools in by_binary.values():
            out += [(SANITIZER_START_S + SANITIZER_RUN_S * len(runs), ("sanitizer", runs[0][0], (tool, tuple(runs))))
                    for tool, runs in tools.items()]
        return [task for _, task in sorted(out, key=lambda x: -x[0])]

    def rerun_tasks(self):
        """The second round: every case of a suspect lab that has no verdict of a run alone yet."""
        out = []
        for lab, p in self.plans.items():
            if self.suspect[lab] and not self.stop[lab]:
                todo = [c for c in p.cases if c not in self.alone[lab]]
                with self.lock:  # their passes in shared processes no longer count: counted again
                    self.done -= len(set(self.shared_ok[lab]) & set(todo))
                if todo:
                    self.progress(f"correctness: {lab}: a case failed, so its {len(todo)} other cases "
                                  f"run again, each in a process of its own")
                out += [("alone", p, c) for c in todo]
        return out

    def _halted(self, lab):
        with self.lock:
            return self.stop[lab] is not None

    def run(self, task):
        what, plan, arg = task
        if what == "chunk":
            self._chunk(arg)
            return
        if what != "sanitizer" and self._halted(plan.lab):
            return
        if what == "alone":
            n, dist, seed, options = arg
            with self.gate.shared():
                kind, msg, rep = ev.run_case(plan.binary, n, dist, seed, plan.case_s, options)
            self._reason(plan, kind, rep)
            self._algorithm(plan, arg, kind, rep)
            self._verdict(plan, arg, *self._not_washed_out(plan, arg, *self._confirmed(plan, arg, kind, msg)))
        else:
            with self.gate.shared():
                self._sanitizer(plan, *arg)

    def _confirmed(self, plan, case, kind, msg):
        """(kind, message) of a case whose run alone gave kind and msg: a timeout is run once more,
        alone in the whole grade, with HANG_RERUN_FACTOR times the limit, and that run decides."""
        if kind != Status.TIMEOUT:
            return kind, msg
        # one confirmation at a time per lab: once a hang is confirmed, the lab stops, and the
        # other cases that timed out meanwhile keep their first verdict (no rerun of each)
        with self.confirming[plan.lab]:
            if self._halted(plan.lab):
                return kind, msg
            n, dist, seed, options = case
            limit = plan.case_s * ev.HANG_RERUN_FACTOR
            self.progress(f"correctness: {plan.lab}: the case n={n} dist={dist} {msg.split(ev.KILLED)[0]}; "
                          f"running it again alone, with a limit of {limit:g} s")
            with self.gate.alone():
                again, again_msg, _ = ev.run_case(plan.binary, n, dist, seed, limit, options)
            if again != Status.TIMEOUT:
                return again, again_msg
            with self.lock:
                self.stop[plan.lab] = self.stop[plan.lab] or Status.TIMEOUT
            return again, ev.confirmed_timeout(msg, again_msg)

    def _not_washed_out(self, plan, case, kind, msg):
        """(kind, message) of a case that crashed in a shared process and gave kind, msg alone:
        when it passed alone, the cases that ran before it in that process run again before it in
        a new one (the same sequence of calls); a crash there is the case's verdict, and a crash
        that does not come back is still one, reported with both runs, never forgotten."""
        with self.lock:
            shared = self.shared_crash[plan.lab].get(case)
        if kind != Status.OK or shared is None:
            return kind, msg
        first_msg, before = shared
        session = ev.case_session(plan.binary)
        again = None
        try:
            for p, c in before + [(plan, case)]:
                if session.ended:
                    break
                with self.gate.shared():
                    k, _, _ = ev.run_case_in(session, *c[:3], p.case_s, c[3])
                if (p, c) == (plan, case):
                    again = k
        finally:
            session.close(plan.case_s)
        cases = f"the {len(before)} case{'s' if len(before) != 1 else ''} before it in one process"
        if again == Status.CRASH:
            return Status.CRASH, (f"crashed after {cases}, and again when they ran before it once more; "
                                  f"alone it passed (state its earlier calls left crashes it): {first_msg}")
        return Status.CRASH, (f"crashed after {cases}, not when they ran before it again "
                              f"({'it passed' if again == Status.OK else 'it could not run'}), nor alone: a "
                              f"crash that does not come back is still a crash of the lab's code: {first_msg}")

    def _live(self, plan):
        with self.lock:
            return self.stop[plan.lab] is None and not self.suspect[plan.lab]

    def _chunk(self, items):
        """A chunk's cases ((plan, case), ...) in shared processes until they are done or their
        plans are suspect or stopped. A case that is not ok ends its process; the chunk's
        remaining cases of other plans go on in a new one."""
        todo, later = list(items), False
        while True:
            todo = self._untried_first(todo) if later else [(p, c) for p, c in todo if self._live(p)]
            if not todo:
                return
            later = True
            session = ev.case_session(todo[0][0].binary)
            ok_here, first, labs, ran = [], True, set(), []
            while todo and not session.ended:
                plan, case = todo.pop(0)
                if not self._live(plan):
                    continue
                labs.add(plan.lab)
                with self.gate.shared(), (self._tried(plan) if first else contextlib.nullcontext()):
                    kind, msg, rep = ev.run_case_in(session, *case[:3], plan.case_s, case[3])
                self._reason(plan, kind, rep)
                self._algorithm(plan, case, kind, rep)
                if kind == Status.CRASH and not first:  # kept, for its run alone (_not_washed_out)
                    with self.lock:
                        self.shared_crash[plan.lab][case] = (msg, [(p, c) for p, c in ran if p.binary == plan.binary])
                ran.append((plan, case))
                if kind == Status.OK:
                    ok_here.append((plan, case))
                    if plan.lab not in self.seen_ok:
                        self._written(plan.lab)
                else:
                    if first and session.ended:  # the whole life of a process: a run alone
                        self._verdict(plan, case, *self._confirmed(plan, case, kind, msg))
                    self._suspect(plan.lab)
                first = False
            if session.close(plan.case_s):
                with self.lock:
                    for p, c in ok_here:
                        self.shared_ok[p.lab].append(c)
                self._count(len(ok_here), 0)
            else:  # the process did something no verdict accounts for: every plan it ran is suspect
                for lab in labs:
                    self._suspect(lab)

    @contextlib.contextmanager
    def _tried(self, plan):
        """While a process's first case runs: its plan is being tried."""
        with self.lock:
            self.trying[plan.lab] = self.trying.get(plan.lab, 0) + 1
        try:
            yield
        finally:
            with self.lock:
                self.trying[plan.lab] -= 1
            self._known()

    def _untried_first(self, todo):
        """A chunk's cases for a process after its first (the one before ended at a case that
        was not ok), its live plans only, a plan first that no other process is trying now:
        one whose first case is running elsewhere and has none passed yet would most likely
        end this process too, the same way and at once (an unwritten variant: each chunk of
        lab 09's skeleton used to find each of its ten variants unwritten for itself, 29
        processes where 10 tell). Waits while every plan left is being tried elsewhere; []
        once none is live. Only a later process's order changes: the first case of a chunk's
        first process (its many-calls case) is never moved."""
        while True:
            todo = [(p, c) for p, c in todo if self._live(p)]
            with self.lock:
                busy = {lab for lab, k in self.trying.items() if k} - self.seen_ok
            pick = next((p for p, _ in todo if p.lab not in busy), None)
            if pick is not None:
                return [x for x in todo if x[0] is pick] + [x for x in todo if x[0] is not pick]
            if not todo:
                return todo
            with self.cond:
                self.cond.wait(0.5)

    def _suspect(self, lab):
        with self.lock:
            self.suspect[lab] = True
        self._known()

    def _count(self, done, failed, graded=True):
        """Counts cases run and failed for the progress line; failed: of a plan that is graded, or
        (graded False) of a variant only reported, which the line tells apart, so that its count
        agrees with the table's, where only the graded cases count."""
        with self.lock:
            before = self.done
            self.done += done
            self.failed += failed if graded else 0
            self.failed_reported += 0 if graded else failed
            if self.done // 50 != before // 50 or self.done == self.n_cases:
                self.progress(f"correctness: {self.done}/{self.n_cases} cases run"
                              + failing_note(self.failed, self.failed_reported))

    def _reason(self, plan, kind, report):
        """Keeps the first reason a lab's reports give for a LAB_NOT_IMPLEMENTED (contract.json's
        not_implemented_reasons: lab 10's base_unwritten; one the contract lacks is not kept)."""
        reason = (report or {}).get("reason") if kind == Status.NOT_IMPLEMENTED else None
        if reason in contract.NOT_IMPLEMENTED_REASONS:
            with self.lock:
                self.reasons[plan.lab] = self.reasons[plan.lab] or reason

    def _algorithm(self, plan, case, kind, report):
        """Keeps what the algorithm case's report says of the first call's algorithm: {"asked",
        "found", "same", "measured", "verdict"} as the judge wrote it (also when an answer was wrong: the
        call ran to its end)."""
        found = (report or {}).get("algorithm") if ev.ALGORITHM in case[3] else None
        if isinstance(found, dict):
            with self.lock:
                self.algorithms[plan.lab] = found

    def _verdict(self, plan, case, kind, msg):
        """A case's verdict from a run alone."""
        with self.lock:
            self.alone[plan.lab][case] = (kind, msg)
            if kind in STOPS_A_LAB and not self.stop[plan.lab]:
                self.stop[plan.lab] = kind
            if kind != Status.OK:
                self.suspect[plan.lab] = True
        if kind == Status.OK:
            self._written(plan.lab)
        else:
            self._known()
        self._count(1, kind != Status.OK, plan.graded)

    def verdicts(self, lab):
        """[(n, dist, seed, options, kind, message)] of a lab's cases: a suspect lab's from runs
        alone only; another's also the shared processes' passes."""
        found = dict(self.alone[lab])
        if not self.suspect[lab]:
            for case in self.shared_ok[lab]:
                found.setdefault(case, (Status.OK, ""))
        return [(*case, kind, msg) for case, (kind, msg) in found.items()]

    def _sanitizer(self, plan, tool, runs):
        """The tool's runs of a lab, runs: [(plan of a graded variant, n)], in one process unless
        isolated (evaluate.run_sanitizer_sizes); a variant that stopped (not implemented, a hang)
        is left out. Each verdict is recorded with its variant's plan."""
        runs = [(p, n) for p, n in runs if not self._halted(p.lab)]
        if not runs:
            return
        verdicts = ev.run_sanitizer_sizes(self.sanitizer, tool, plan.binary,
                                          [(n, ev.case_seed(self.seed, p.lab, n, tool), p.options) for p, n in runs],
                                          plan.sanitizer_s, plan.info, self.isolated)
        with self.lock:
            for (p, _), (n, verdict, detail) in zip(runs, verdicts):
                if p.variant:
                    detail = f"variant {p.variant}: {detail}"
                self.progress(f"sanitizer: {p.lab} {tool} n={n}: {verdict}")
                self.checks[p.lab].append((tool, n, verdict, detail))


def run_plans(plans, jobs, sanitizer, seed, progress, isolated=False):
    """{lab: LabRuns} for {lab: LabPlan}. Raises InfraError when a case found no device (the GPU
    went away while grading). isolated: one process per case (_Pool)."""
    pool = _Pool(plans, sanitizer, seed, progress, isolated)
    pool.run_all(pool.tasks(jobs), jobs)
    pool.run_all(pool.rerun_tasks(), jobs)
    out = {}
    for lab in plans:
        cases = tuple(sorted(pool.verdicts(lab)))
        if any(k == Status.NO_DEVICE for *_, k, _ in cases):
            raise InfraError("the GPU disappeared while grading (a case reported no CUDA device)")
        out[lab] = LabRuns(cases, tuple(sorted(pool.checks[lab], key=lambda x: (x[0], x[1]))), pool.stop[lab],
                           pool.reasons[lab], pool.algorithms[lab])
    return out
