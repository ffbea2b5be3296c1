"""Running a built lab binary: its description, the correctness cases, the sanitizers, timing.

Everything here talks to a lab binary only through its command line (--describe, --json): the
harness owns main, the buffers, the inputs and the timers, and reports one JSON object per run
(common/report.c: lab_print_report_json; exit codes in common/contract.json). Every graded run
has the same command line, `scan --grader`: the case comes on a private channel (a socket on
stdin, see proc.run) and the report goes back on it, never on stdout, which the lab's code can
print to; it must be the only thing on that channel and name the case that was asked for. So timed, checked
and sanitizer runs look the same to the lab's code, and every call in them is checked.

Every lab process runs from a run folder of its own (RunDir), removed after: a copy of the
binary in a folder the run user can only traverse, and an empty cwd (also HOME and TMPDIR) that
the run user owns. When the grader is root the process runs as that unprivileged user
(runuser.run_user), which can read nothing of the grader's work folder (0700: builds, private
copies of scan.cu, results) nor, deployed, of the course; a reference binary's copy is
executable but not readable (0711). Every run is contained (proc.run's contain=True): a process
it leaves running, also one that called setsid(), is killed, and the run is diagnosed "escaped".

Its parts: the run folder, the one process and the judge (rundir.py), the lab's description
(labinfo.py), the case matrix (cases.py), and here what a run said (parse_report, diagnose) and
the runs themselves (run_case, LabSession, the sanitizers, Timer). The stages reach all of it as
ev.X: this module hands on the names of the other three (__all__).
"""
import json
import os
import re
import time

from . import contract
from . import feedback
from . import proc, procfs
from .status import Status
from .labinfo import (Variant, MAX_WORK_TILE, MIN_BIG_TILE, LabInfo, parse_describe)
from .rundir import (TRACE_VAR, trace, TRACE_OPENS_VAR, RUN_ENV, mark_reference, is_reference, private_folder,
                     _traversable, RunDir, JUDGE_SUFFIX, NoJudge, UNJUDGED_VAR, judge_for, _graded_argv,
                     run_lab, describe)
from .cases import (ALGORITHM, ALGORITHM_N, algorithm_case, EXTRA_TILE_SIZES, edge_sizes, case_seed,
                    OFFSET_CASES, second_size, case_calls, CASE_CALLS_MAX, is_many_calls, MULTI_CALLS, multi_sizes,
                    graded_variants, report_variants,
                    make_cases, CPU_RESIDENT_BLOCKS, CPU_REPEAT_TILES, cpu_repeat_size, ordering_cases, REPORT_MAX_N,
                    report_cases, reproduce_cmd)

# Exit codes of a lab binary (common/contract.json; the harness's LAB_EXIT_*).
EXIT_OK = contract.EXIT["OK"]
EXIT_WRONG = contract.EXIT["WRONG"]
EXIT_USAGE = contract.EXIT["USAGE"]
EXIT_NOT_IMPLEMENTED = contract.EXIT["NOT_IMPLEMENTED"]
EXIT_CUDA_ERROR = contract.EXIT["CUDA_ERROR"]
EXIT_NO_DEVICE = contract.EXIT["NO_DEVICE"]
EXIT_NO_MEMORY = contract.EXIT["NO_MEMORY"]
EXIT_TOO_LARGE = contract.EXIT["TOO_LARGE"]
EXIT_TAMPERED = contract.EXIT["TAMPERED"]  # the process ended before the harness reported
EXIT_SANDBOX = contract.EXIT["SANDBOX"]    # the sandbox stopped a system call of the lab's code
SANITIZER_EXIT = contract.SANITIZER_EXIT   # the --error-exitcode the grader gives compute-sanitizer

# What the stages and tools reach through this module (ev.X): its own names, and those of the
# three modules it was split into (labinfo.py, rundir.py, cases.py), which it hands on.
__all__ = [
    "EXIT_OK", "EXIT_WRONG", "EXIT_USAGE", "EXIT_NOT_IMPLEMENTED", "EXIT_CUDA_ERROR", "EXIT_NO_DEVICE",
    "EXIT_NO_MEMORY", "EXIT_TOO_LARGE", "EXIT_TAMPERED", "EXIT_SANDBOX", "SANITIZER_EXIT", "FORGED",
    "parse_report", "escaped_message", "CASE_WALL_FACTOR", "HANG_RERUN_FACTOR", "case_limits",
    "timeout_message", "KILLED", "confirmed_timeout", "diagnose", "case_line", "run_case", "LabSession",
    "case_session", "run_case_in", "sanitizer_sizes", "run_sanitizer", "run_sanitizer_sizes", "run_timed",
    "Timer", "Variant", "MAX_WORK_TILE", "MIN_BIG_TILE", "LabInfo", "parse_describe", "TRACE_VAR", "trace",
    "TRACE_OPENS_VAR", "RUN_ENV", "mark_reference", "is_reference", "private_folder", "_traversable",
    "RunDir", "JUDGE_SUFFIX", "NoJudge", "UNJUDGED_VAR", "judge_for", "_graded_argv", "run_lab", "describe",
    "ALGORITHM", "ALGORITHM_N", "algorithm_case", "EXTRA_TILE_SIZES", "edge_sizes", "case_seed",
    "OFFSET_CASES", "second_size", "case_calls",
    "CASE_CALLS_MAX", "is_many_calls", "MULTI_CALLS", "multi_sizes", "graded_variants", "report_variants",
    "make_cases", "CPU_RESIDENT_BLOCKS", "CPU_REPEAT_TILES", "cpu_repeat_size", "ordering_cases", "REPORT_MAX_N",
    "report_cases", "reproduce_cmd",
]


FORGED = {"status": "forged"}


def _result_lines(text):
    """JSON objects with a "status" among the lines of text."""
    found = []
    for ln in text.strip().splitlines():
        ln = ln.strip()
        if ln.startswith("{"):
            try:
                obj = json.loads(ln)
            except ValueError:
                continue
            if isinstance(obj, dict) and "status" in obj:
                found.append(obj)
    return found


def parse_report(text, channel=False):
    """The harness's JSON object, or None when there is none. On the report channel
    (channel=True) the harness writes exactly one line and nothing else may be there: anything
    more gives FORGED. On stdout (a run without a channel) lines that are not results are the
    lab's own output; more than one result gives FORGED."""
    if channel:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines:
            return None
        found = _result_lines(text)
        return found[0] if len(lines) == 1 and len(found) == 1 else FORGED
    found = _result_lines(text)
    if len(found) > 1:
        return FORGED
    return found[0] if found else None


def _tail(text, lines=3, what="stderr"):
    """The end of a program's output as a case message quotes it (feedback.program_tail: cleaned,
    cut to the config's feedback.case_tail_bytes, marked as the program's): 'its stderr ended:
    «...»'."""
    return feedback.program_tail(text, what, lines)


def escaped_message(escaped, limit=3):
    """What a run that left processes running is told (escaped: [(pid, name)]): how many, the
    first few by pid and name, and that the grader killed them."""
    n = len(escaped)
    # a name is the kernel's comm (at most 15 bytes), cleaned and capped all the same
    shown = ", ".join(f"pid {pid} '{feedback.head(feedback.clean(name, newlines=False), 64)}'"
                      for pid, name in escaped[:limit])
    if n > limit:
        shown += f" and {n - limit} more"
    return (f"left {n} process{'' if n == 1 else 'es'} running after it ended ({shown}); the grader "
            f"killed {'it' if n == 1 else 'them'}: lab code must not start processes")


# ---- time limits of a case ---------------------------------------------------------------------
#
# A case's limit (timeouts.case_s) counts the lab process's CPU time (procfs.cpu_seconds: user and
# system time of all its threads), so a machine that other jobs keep busy does not make an honest
# lab "hang": its CPU time grows only while it runs. A process that waits without using the CPU
# (blocked in a read, or in a CUDA call that sleeps until a kernel ends) is stopped by a wall-time
# cap CASE_WALL_FACTOR times larger. On a GPU a kernel that never ends keeps the host thread in
# cudaDeviceSynchronize: the CUDA runtime spins (or yields) there by default, which is CPU time,
# so such a hang meets the CPU limit; under blocking sync it meets the wall cap. A case that
# times out is run once more alone (stage_cases._Pool) with HANG_RERUN_FACTOR times the limit
# before it is called a hang.
CASE_WALL_FACTOR = 4
HANG_RERUN_FACTOR = 3


def case_limits(case_s):
    """(wall-clock cap, CPU-time limit) of a case whose limit is case_s seconds."""
    return case_s * CASE_WALL_FACTOR, case_s


def timeout_message(r, timeout):
    """What a run that timed out met (r: its proc.Result; timeout: its wall-clock limit): "timed
    out after 20 s of CPU time", or for a wall-clock cap "timed out after 80 s (wall clock; it used
    0.2 s of CPU time: blocked, not computing)", or for a run with no CPU limit "timed out after
    60 s"."""
    limit = getattr(r, "limit", None)
    cpu = getattr(r, "cpu_limit", None)
    if limit == "cpu" and cpu is not None:
        return f"timed out after {cpu:g} s of CPU time"
    used = getattr(r, "cpu_s", None)
    if cpu is not None and used is not None:
        return (f"timed out after {timeout:g} s (wall clock; it used {used:.1f} s of CPU time, under the "
                f"{cpu:g} s limit: blocked, not computing)")
    return f"timed out after {timeout:g} s"


KILLED = " (the process group was killed)"


def confirmed_timeout(first, again):
    """The message of a case that timed out (first) and timed out again when run alone with a
    larger limit (again): "timed out after 20 s of CPU time, and again alone after 60 s of CPU
    time (the process group was killed)"."""
    head = first.split(KILLED, 1)[0]
    return f"{head}, and again alone after {again[len('timed out after '):]}" if again.startswith(
        "timed out after ") else f"{head}, and again alone: {again}"


def diagnose(r, timeout, expect=None):
    """(kind, message, report) for one finished run of a lab binary. kind is a Status: ok,
    not_implemented, wrong, out_of_bounds, input_modified, runtime_error, timeout, crash,
    tampered, escaped, sandbox, leak, no_device, no_memory, error. A run that left processes running
    (r.escaped) is "escaped" whatever it reported, since it is not ok; only a timeout comes
    first (a hang stops the lab), and its message then says it too. The report is read from the
    private channel when the run had one (r.report is not None), else from stdout. expect: {"n":
    .., "seed": .., "dist": ..} the case that was asked for, which the report must name."""
    escaped = getattr(r, "escaped", None) or []
    if r.timed_out:
        also = f"; it also {escaped_message(escaped)}" if escaped else ""
        return Status.TIMEOUT, f"{timeout_message(r, timeout)}{KILLED}{also}", None
    if escaped:
        return Status.ESCAPED, escaped_message(escaped), None
    if r.returncode == EXIT_SANDBOX:
        why = [ln for ln in r.stderr.splitlines() if "sandbox:" in ln]
        detail = why[-1].split("sandbox:", 1)[1].strip() if why else "(no message)"
        detail = feedback.line(detail, feedback.limit("case_tail_bytes"))
        return Status.SANDBOX, f"the sandbox stopped the run (exit code {EXIT_SANDBOX}): {detail}", None
    if r.returncode == EXIT_TAMPERED:
        # the judge's own words when the lab process broke its channel (common/harness/port.c);
        # a line the lab printed that looks like them changes only the wording of this failure
        judge = [ln for ln in r.stderr.splitlines() if ln.startswith("harness: the lab's process")]
        if judge:
            detail = feedback.line(judge[-1].split(": ", 1)[1], feedback.limit("case_tail_bytes"))
            return Status.TAMPERED, f"the judge stopped the run: {detail}", None
        return Status.TAMPERED, ("the process ended before the harness reported a result (exit code "
                                 f"{EXIT_TAMPERED}): the lab's code must not end the process (no exit(); "
                                 "CUDA_CHECK reports errors)"), None
    channel = r.report is not None
    rep = parse_report(r.report if channel else r.stdout, channel)
    sig = r.signal_name()
    if sig == "SIGXFSZ":  # the limit judge_argv sets on what a lab process writes
        return Status.CRASH, (f"printed more than {proc.LAB_OUTPUT_LIMIT >> 20} MiB on stdout or stderr, the "
                              f"limit of a graded run's output: the process was stopped (print less, or "
                              f"only while debugging)"), None
    if rep is None:
        if sig:
            tail = _tail(r.stderr)
            return Status.CRASH, f"crashed with {sig}" + (f"; {tail}" if tail else ""), None
        tail = _tail(r.stderr)
        why = f"; {tail}" if tail else ""
        if channel and _result_lines(r.stdout):
            why = (" (a result-like line on stdout is the lab's own output, not the harness's "
                   "report)") + why
        return Status.ERROR, f"exit code {r.returncode} without a result" + why, None
    if rep is FORGED:
        if channel:
            return Status.ERROR, ("the report channel holds more than the harness's one report: the "
                                  "lab's code must not write results"), None
        return Status.ERROR, "more than one result on stdout: the lab's code must not print results", None
    for key, want in (expect or {}).items():
        if rep.get(key) != want:
            return Status.ERROR, (f"the report names {key}={rep.get(key)!r} but the grader ran "
                                  f"{key}={want!r}: not the harness's report"), None
    kind, msg = _reported(rep, r.returncode, sig)
    return kind, feedback.line(msg, feedback.limit("case_message_bytes")), rep


# How a harness status reads as a case's kind, and its message from the harness's.
_REPORTED = {
    Status.NOT_IMPLEMENTED: (Status.NOT_IMPLEMENTED,
                             lambda m: "not implemented: " + re.sub(r"^call \d+ of \d+: ", "", m) if m
                             else "not implemented (the lab's code returns LAB_NOT_IMPLEMENTED)"),
    Status.WRONG: (Status.WRONG, lambda m: "wrong answer: " + m),
    Status.OUT_OF_BOUNDS: (Status.OUT_OF_BOUNDS, lambda m: "out-of-bounds write: " + m),
    Status.INPUT_MODIFIED: (Status.INPUT_MODIFIED, lambda m: "input modified: " + m),
    Status.LEAK: (Status.LEAK, lambda m: m),
    Status.CUDA_ERROR: (Status.RUNTIME_ERROR, lambda m: "runtime error: " + m),
    Status.NO_DEVICE: (Status.NO_DEVICE, lambda m: m or "no CUDA device"),
    Status.NO_MEMORY: (Status.NO_MEMORY, lambda m: "out of memory: " + m),
}


def _reported(rep, returncode, sig):
    """(kind, message) of a run from the harness's report (the report is the case's)."""
    st = rep.get("status")
    msg = rep.get("message") or ""
    if st == Status.OK and returncode == EXIT_OK:
        return Status.OK, ""
    if isinstance(st, str) and st in _REPORTED:
        kind, message = _REPORTED[st]
        return kind, message(msg)
    if sig:
        return Status.CRASH, f"crashed with {sig} after reporting {st}"
    return Status.ERROR, f"status {st} (exit code {returncode}): {msg}"


def case_line(n, dist, seed, reps=0, warmup=0, options=()):
    """The options of one graded run, as the harness reads them on its case channel."""
    return " ".join(["--n", str(n), "--dist", dist, "--seed", str(seed), "--reps", str(reps),
                     "--warmup", str(warmup), "--json", "--force", *options])


def run_case(binary, n, dist, seed, timeout, options=()):
    """One correctness case in its own process: (kind, message, report). timeout: the case's
    limit, in seconds of CPU time, with a wall-clock cap CASE_WALL_FACTOR times larger
    (case_limits). --reps 0: the checked calls only (one, or --calls), no timing loop (in CPU mode
    too)."""
    wall, cpu = case_limits(timeout)
    r = run_lab([binary], wall, case=case_line(n, dist, seed, options=options), kind="case", cpu_limit=cpu)
    r.cpu_limit = cpu
    return diagnose(r, wall, {"n": n, "seed": seed, "dist": dist})


class LabSession:
    """Several graded runs of one lab binary in one process (proc.Session; the harness reads the
    next case after each report), each diagnosed as it would be alone: a case that is ok leaves
    the process running for the next; a case that is not ok ends it, and is diagnosed with the
    process's exit code, its stderr since the case began, what else was on the channel and what
    it left running (as a run of its own would be). clean turns False when the process did
    something no case's verdict accounts for (a second line on the report channel, an unclean
    exit after its last case, a process left running): the caller then runs the cases that came
    back ok again, each alone, and keeps those verdicts. argv: the binary, or a tool and its
    options before it (compute-sanitizer). The process runs from a RunDir of its own (see
    run_lab); tool: a function (binary, log) -> the argv of a tool that runs the binary, whose
    log tool_log() reads."""

    def __init__(self, binary, kind="case", tool=None):
        self.kind = kind
        self.prog = [os.path.abspath(binary)]
        self.dir = RunDir(self.prog[0], tool=tool is not None)
        try:
            argv, judged = _graded_argv(self.prog[0], self.dir, tool)
            self.session = proc.Session(argv, cwd=self.dir.cwd, env=self.dir.env(), judged=judged)
        except BaseException:
            self.dir.remove()
            raise
        self.log_text = ""
        self.cases = 0
        self.clean = True
        self.ended = False

    def run(self, line, timeout, expect=None, cpu_limit=None):
        """(kind, message, report) of one case (line: case_line's options), as diagnose gives;
        timeout: its wall-clock limit; cpu_limit: a limit on the CPU time the process uses for
        it (proc.Session.ask). Call only while not ended."""
        if self.session.pending().strip():  # more than one report for the case before
            self.clean = False
        t0 = time.monotonic()
        off = self.session.err_offset()
        cpu0 = procfs.cpu_seconds(self.session.p.pid)
        state, text = self.session.ask(line, timeout, cpu_limit)
        cpu1 = procfs.cpu_seconds(self.session.p.pid)
        used = {"cpu": round(cpu1 - cpu0, 3)} if cpu0 is not None and cpu1 is not None else {}
        self.cases += 1
        rep = parse_report(text, channel=True) if state == "report" else None
        if state == "report" and isinstance(rep, dict) and rep is not FORGED and rep.get("status") == Status.OK:
            r = proc.Result(EXIT_OK, "", self.session.stderr_since(off), False, time.monotonic() - t0, text)
        else:  # the process ends with this case: its exit code and leftovers are the case's
            final, err = self._end(timeout, kill=state == "timeout", err_from=off)
            channel = (text + "\n" if text is not None else "") + final.report
            asked = state == "timeout"
            r = proc.Result(final.returncode, final.stdout, err, asked or final.timed_out,
                            time.monotonic() - t0, channel, final.escaped,
                            self.session.limit if asked else "wall", self.session.cpu_used if asked else None)
        r.cpu_limit = cpu_limit
        trace(self.kind, self.prog, time.monotonic() - t0, case=line, session=self.cases, **used)
        return diagnose(r, timeout, expect)

    def _end(self, timeout, kill=False, err_from=0):
        """(the process's final Result, its stderr from offset err_from on)."""
        final = self.session.finish(timeout, kill=kill)
        err = self.session.stderr_since(err_from)
        self.session.release()
        self.ended = True
        self.log_text = self.dir.read_log()
        self.dir.remove()
        if final.escaped:
            self.clean = False
        return final, err

    def close(self, timeout=30):
        """Ends the process after its last case; returns clean (see the class)."""
        if not self.ended:
            final, _ = self._end(timeout)
            if final.returncode != EXIT_OK or final.timed_out or final.report.strip():
                self.clean = False
        return self.clean


def case_session(binary):
    """A LabSession for correctness cases of binary (LabSession.run with case_line(...))."""
    return LabSession(binary, "case")


def run_case_in(session, n, dist, seed, timeout, options=()):
    """One correctness case in a running LabSession: (kind, message, report), as run_case (the
    same limits: case_limits)."""
    wall, cpu = case_limits(timeout)
    return session.run(case_line(n, dist, seed, options=options), wall, {"n": n, "seed": seed, "dist": dist}, cpu)


# ---- sanitizers ----------------------------------------------------------------------------

def sanitizer_sizes(info, default=True):
    """{tool: [n]}: memcheck on one tile and on a few tiles with a ragged tail; racecheck (the
    expensive one) on one tile and on two tiles plus one element. A graded variant other than
    the default: the multi-tile size of each tool only."""
    t = info.tile_or_default
    if not default:
        return {"memcheck": [3 * t + 5], "racecheck": [2 * t + 1]}
    return {"memcheck": [t, 3 * t + 5], "racecheck": [t, 2 * t + 1]}


def _sanitizer_findings(log, limit=4):
    keep = []
    for ln in log.splitlines():
        s = ln.strip("= ").strip()
        if not s:
            continue
        if re.search(r"(Invalid|hazard|Race|race|Error|error|detected|SUMMARY|at 0x|by thread)", s):
            keep.append(s)
    summary = [s for s in keep if "SUMMARY" in s]
    other = [s for s in keep if "SUMMARY" not in s][:limit]
    return other + summary[:1]


def _tool_said(log):
    """'it said: ...' with the sanitizer log's findings, quoted and capped; "" when it has none."""
    found = _sanitizer_findings(log)
    if not found:
        return ""
    return f"it said: {feedback.quote(' | '.join(found), feedback.limit('case_message_bytes') // 2, end=False)}"


def _sanitizer_argv(sanitizer, tool, binary, log):
    argv = [sanitizer, "--tool", tool, "--error-exitcode", str(SANITIZER_EXIT), "--log-file", log,
            "--print-limit", "10", os.path.abspath(binary)]
    if tool == "racecheck":
        argv[3:3] = ["--racecheck-report", "hazard"]
    return argv


def _sanitizer_tool(sanitizer, tool):
    """run_lab's tool= for compute-sanitizer: (binary, log) -> its argv."""
    return lambda binary, log: _sanitizer_argv(sanitizer, tool, binary, log)


def _sanitizer_case(n, seed, info, options=()):
    calls = case_calls(info, n) if info is not None else ("--calls", "2")
    return case_line(n, "small", seed, options=calls + tuple(options))


def run_sanitizer(sanitizer, tool, binary, n, seed, timeout, info=None, options=()):
    """(verdict, detail): verdict a Status: clean (the run reported and the tool found nothing),
    errors (the tool exited with the grader's --error-exitcode, or the run did not finish under
    it: a crash, a sandbox stop, no report from the harness, a report of ok and then an exit
    other than 0) or timeout (could not check)."""
    r = run_lab([binary], timeout, case=_sanitizer_case(n, seed, info, options), kind="sanitizer",
                tool=_sanitizer_tool(sanitizer, tool))
    text = r.tool_log
    if r.timed_out:
        return Status.TIMEOUT, f"{tool} at n={n} timed out after {timeout:g} s"
    if r.returncode == SANITIZER_EXIT:
        said = (_tool_said(text) or _tail(text or r.stderr, 4, "log" if text.strip() else "stderr")
                or "no message")
        return Status.ERRORS, f"{tool} at n={n}: {said}"
    if r.returncode in (EXIT_TAMPERED, EXIT_SANDBOX) or r.returncode < 0:
        kind, msg, _ = diagnose(r, timeout)
        return Status.ERRORS, f"{tool} at n={n}: the run did not finish under the tool: {msg}"
    channel = r.report is not None
    rep = parse_report(r.report if channel else r.stdout, channel)
    if rep is None:
        # The lab's process ended before the harness reported: a crash (host code that touches
        # device memory, say) that the tool does not count as an error of its own. The tool
        # checked only part of the run, so it is not clean.
        # (CUDA 13's compute-sanitizer exits with the signal's number: "exit code 11" is a SIGSEGV)
        _, msg, _ = diagnose(r, timeout)
        said = _tool_said(text)
        return Status.ERRORS, (f"{tool} at n={n}: the program ended without the harness's report, "
                               f"so the tool could not check the whole run: {msg}"
                               + (f"; {said}" if said else ""))
    if rep is not FORGED and rep.get("status") == Status.OK and r.returncode != EXIT_OK:
        # the harness reported ok and exits 0 after it; anything else came after the report (a
        # crash in a destructor or an atexit handler of the lab's code), which the tool saw only
        # in part
        return Status.ERRORS, (f"{tool} at n={n}: the program reported ok, then ended with exit "
                               f"code {r.returncode} under the tool: something after the report "
                               f"crashed or ended it")
    return Status.CLEAN, f"{tool} at n={n}: no errors"


def run_sanitizer_sizes(sanitizer, tool, binary, sizes, timeout, info=None, isolated=False, options=()):
    """[(n, verdict, detail)] for every (n, seed) or (n, seed, options) of sizes (options: the
    harness options of that run, else options) under one tool: all in one process (a
    LabSession under the tool, each size a case, timeout seconds each); when that process reports
    no error and ends cleanly, every size is clean. Otherwise (errors, a case that is not ok, a
    timeout), and with isolated=True, each size runs alone (run_sanitizer), so that every verdict
    and message is the one a run of that size alone gives."""
    if not isolated and len(sizes) > 1:
        session = LabSession(binary, "sanitizer", tool=_sanitizer_tool(sanitizer, tool))
        ok = True
        for n, seed, *opts in sizes:
            kind, _, _ = session.run(_sanitizer_case(n, seed, info, opts[0] if opts else options), timeout,
                                     {"n": n, "seed": seed, "dist": "small"})
            if kind != Status.OK:
                ok = False
                break
        ok = session.close(timeout) and ok
        if ok:
            return [(n, Status.CLEAN, f"{tool} at n={n}: no errors") for n, *_ in sizes]
    return [(n, *run_sanitizer(sanitizer, tool, binary, n, seed, timeout, info, opts[0] if opts else options))
            for n, seed, *opts in sizes]


# ---- timing ----------------------------------------------------------------------------------

def run_timed(binary, n, reps, warmup, seed, timeout, options=()):
    """One timed run at n: (kind, message, report) as diagnose gives; the report holds ms,
    tile_ms, memcpy_ms and gbps when kind is 'ok' (the output was checked again after timing).
    options: more of the run's options (["--variant", "add_two_pass"])."""
    r = run_lab([binary], timeout, case=case_line(n, "small", seed, reps, warmup, options), kind="timed")
    return diagnose(r, timeout, {"n": n, "seed": seed, "dist": "small"})


class Timer:
    """Timed runs of one binary: in one process (a LabSession) unless isolated. timed() gives
    (kind, message, report) as run_timed; a run that is not ok ends the process (the next run
    starts another), and unless it was its process's first, its verdict is that of the same run
    alone (run_timed). close() ends the process and says whether it was clean (LabSession).
    options: more options of every timed run (the variant to time, when not the default)."""

    def __init__(self, binary, isolated=False, options=()):
        self.binary = binary
        self.isolated = isolated
        self.options = tuple(options)
        self.session = None
        self.first = True
        self.clean = True
        self.renewed = False  # renew(): the next run passes --new-buffers

    def timed(self, n, reps, warmup, seed, timeout):
        if self.isolated:
            return run_timed(self.binary, n, reps, warmup, seed, timeout, self.options)
        if self.session is not None and self.session.ended:
            self._close()
        self.start()
        options = self.options + (("--new-buffers",) if self.renewed else ())
        self.renewed = False
        kind, msg, rep = self.session.run(case_line(n, "small", seed, reps, warmup, options), timeout,
                                          {"n": n, "seed": seed, "dist": "small"})
        first, self.first = self.first, False
        if kind != Status.OK and not first:
            return run_timed(self.binary, n, reps, warmup, seed, timeout, self.options)
        return kind, msg, rep

    def start(self):
        """Starts the process now, before its first timed run (not isolated): the speed stage
        starts both sides' at once, so that one's start (its CUDA contexts) is not waited for
        after the other's."""
        if not self.isolated and self.session is None:
            self.session, self.first, self.renewed = LabSession(self.binary, "timed"), True, False

    def fresh(self):
        """The next timed run in a new process (the one so far ends, its cleanliness kept)."""
        self._close()

    def renew(self):
        """The next timed run with its arrays in newly allocated device memory (--new-buffers:
        the judge moves the buffers it kept to new memory), in the same process: where the arrays
        land is what a new process would change, without the cost of starting one. A run in a
        new process, or an isolated one, has new memory anyway."""
        self.renewed = self.session is not None and not self.session.ended

    def _close(self):
        if self.session is not None:
            self.clean = self.session.close() and self.clean
            self.session = None

    def close(self):
        self._close()
        return self.clean
