"""A lab process's run folder and its command line: the one process a graded run is (run_lab), its
folder of its own (RunDir: a copy of the binary the run user can only traverse, an empty cwd that
it owns), its judge (judge_for: graded runs are judged), the reference binaries' marking, the
timing trace, and a binary's own description (describe: `scan --describe`). evaluate.py runs
cases, sanitizers and timed runs through these."""
import json
import os
import shutil
import stat
import tempfile
import threading
import time

from . import feedback, proc, runuser
from .labinfo import parse_describe

TRACE_VAR = "LAB_GRADER_TRACE"  # a file to append one JSON line per lab process to (timings)
_trace_lock = threading.Lock()


def trace(kind, argv, seconds, **extra):
    """Appends one line about a finished lab process to $LAB_GRADER_TRACE, when it is set: what
    it was (kind), its program, when it ended and how long it took (the grader's own timing
    breakdown; grader/docs/MAINTAINERS.md, "Where the time goes"), and which grader process wrote it (pid:
    each --gpus worker is one, so a class's trace splits into each worker's timeline)."""
    path = os.environ.get(TRACE_VAR)
    if not path:
        return
    line = json.dumps({"kind": kind, "prog": "/".join(argv[0].split("/")[-2:]), "end": round(time.time(), 3),
                       "s": round(seconds, 3), "pid": os.getpid(), **extra})
    with _trace_lock, open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


# ---- the run folder ---------------------------------------------------------------------------

# The harness's measuring switch (common/sandbox.c): every file a run opens after the sandbox
# is in is logged on stderr and opened ("harness: sandbox-trace: ..."). Graded runs never get it;
# grader/dev/measure_opens.py sets TRACE_OPENS.
TRACE_OPENS_VAR = "LAB_SANDBOX_TRACE_OPEN"
TRACE_OPENS = False
# Every lab process gets one hardware work queue to its GPU instead of CUDA's default eight. The
# driver creates CUDA contexts one at a time for the whole machine, and the queues are most of a
# context's cost: 32 processes started at once on one GPU took 8.6 s with eight queues and 3.5 s
# with one (H200 host, two GPUs, 2026-11-27; the same with the 32 split over both GPUs), and a
# submission starts ~60 of them. A lab's code runs on one stream (the harness's), so nothing it
# may rely on changes; kernels on two streams are still correct, only never concurrent (CUDA
# never promises that they are). Set for every run, the reference's too, whatever the grader's
# own environment says, so that every submission is graded under the same conditions.
RUN_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}

_references = set()  # real paths of the course's reference binaries (mark_reference)
_references_lock = threading.Lock()


def mark_reference(binary):
    """Marks binary as one of the course's reference binaries: its run copies are executable but
    not readable by the run user (0711), and it never runs under a tool (RunDir)."""
    with _references_lock:
        _references.add(os.path.realpath(binary))


def is_reference(binary):
    with _references_lock:
        return os.path.realpath(binary) in _references


def private_folder(path):
    """Creates path (and its parents) and makes it the grader's alone (0700): the grader's work
    folder holds builds, private copies of every scan.cu (the references' too) and results, none
    of which a lab run may read."""
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o700)


def _traversable(path):
    """True when every folder from / down to path lets others through (o+x)."""
    path = os.path.realpath(path)
    while True:
        try:
            if not os.stat(path).st_mode & 0o001:
                return False
        except OSError:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def _run_base():
    """Where run folders go: the temporary folder, or /tmp when the run user could not reach it."""
    base = tempfile.gettempdir()
    return base if runuser.run_user() is None or _traversable(base) else "/tmp"


class RunDir:
    """The folder one lab process runs from: `scan`, a copy of the binary (0755; a reference
    binary's 0711: the run user may execute it, not read it), and `cwd/`, empty, owned by the run
    user (the process's cwd, HOME and TMPDIR); with tool=True also `tool/` (the run user's) for
    a tool's log. The folder itself is 0711: the run user can reach what is in it by name, not
    list it. remove() deletes it all. A reference binary never runs under a tool (ValueError):
    compute-sanitizer runs the student's binaries only. Raises runuser.RunUserError when the grader
    is root without a user to run as."""

    def __init__(self, binary, tool=False):
        user = runuser.run_user()
        reference = is_reference(binary)
        if tool and reference:
            raise ValueError(f"{binary} is a reference binary: it never runs under a tool")
        self.path = tempfile.mkdtemp(prefix="lab-run-", dir=_run_base())
        try:
            os.chmod(self.path, 0o711)
            self.binary = os.path.join(self.path, os.path.basename(binary))
            shutil.copyfile(binary, self.binary)
            os.chmod(self.binary, 0o711 if reference else 0o755)
            self.cwd = os.path.join(self.path, "cwd")
            os.mkdir(self.cwd, 0o700)
            owned = [self.cwd]
            self.log = None
            if tool:
                os.mkdir(os.path.join(self.path, "tool"), 0o700)
                owned.append(os.path.join(self.path, "tool"))
                self.log = os.path.join(self.path, "tool", "sanitizer.log")
            if user is not None:
                for d in owned:
                    os.chown(d, user.uid, user.gid)
        except BaseException:
            self.remove()
            raise
        self.user = user

    def env(self):
        """The run's environment: the grader's, with HOME and TMPDIR in the run's cwd (the
        harness empties it before the lab's code runs), RUN_ENV, and without the sandbox's
        measuring switch unless TRACE_OPENS is set (grader/dev/measure_opens.py)."""
        env = dict(os.environ, HOME=self.cwd, TMPDIR=self.cwd, **RUN_ENV)
        if TRACE_OPENS:
            env[TRACE_OPENS_VAR] = "1"
        else:
            env.pop(TRACE_OPENS_VAR, None)
        return env

    def read_log(self, limit=200000):
        """The tool's log, when it is a regular file of the run user's (never a link the run
        made to a file the grader can read and the run user cannot); "" otherwise."""
        if self.log is None:
            return ""
        try:
            fd = os.open(self.log, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return ""
        try:
            st = os.fstat(fd)
            owner = self.user.uid if self.user is not None else os.geteuid()
            if not stat.S_ISREG(st.st_mode) or st.st_uid != owner or st.st_nlink != 1:
                return ""
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read(limit).decode("utf-8", errors="replace")
        except OSError:
            return ""
        finally:
            os.close(fd)

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


JUDGE_SUFFIX = ".judge"  # beside a lab binary the grader built: the path of its lab's judge


class NoJudge(Exception):
    """A graded run of a binary whose judge cannot be found (one line: how to build it)."""


# Set to 1 only by the grader's own tests of its pipeline, whose stand-in "lab binaries" are
# scripts with no lab and so no judge: such a binary then runs unjudged, as one process.
UNJUDGED_VAR = "LAB_GRADER_UNJUDGED"
_judges = {}  # binary -> its judge, found by describe (judge_for)
_judges_lock = threading.Lock()


def judge_for(binary):
    """The judge of a lab binary (common/harness/port.h: graded runs are always judged): the path
    written beside it by the grader's build (build.Builder.build: <binary>.judge), else the one
    the Makefile builds beside its layout (BUILD/<tree>/<dir>/scan: BUILD/judge/<lab>/judge, the
    lab the folder's name or the binary's --describe names). Raises NoJudge when there is none,
    unless UNJUDGED_VAR is 1 (None: run it unjudged)."""
    binary = os.path.abspath(binary)
    side = binary + JUDGE_SUFFIX
    if os.path.isfile(side):
        with open(side) as f:
            path = f.read().strip()
        if os.path.isfile(path):
            return path
    lab_dir = os.path.dirname(binary)
    build = os.path.dirname(os.path.dirname(lab_dir))
    with _judges_lock:
        lab = _judges.get(binary)
    for name in filter(None, (os.path.basename(lab_dir), lab)):
        path = os.path.join(build, "judge", name, "judge")
        if os.path.isfile(path):
            return path
    if lab is None and os.path.isdir(os.path.join(build, "judge")):
        info, _ = describe(binary)
        if info is not None:
            with _judges_lock:
                _judges[binary] = info.id
            path = os.path.join(build, "judge", info.id, "judge")
            if os.path.isfile(path):
                return path
    if os.environ.get(UNJUDGED_VAR) == "1":
        return None
    raise NoJudge(f"no judge for {binary}: graded runs are judged by the lab's judge "
                  f"(make judges builds build/judge/<lab>/judge)")


def _graded_argv(prog, d, tool):
    """The command line of a graded run of prog from run folder d, and whether it is judged: its
    judge, running d's copy of the binary (under tool, when given, as its lab process's wrapper);
    unjudged only where judge_for allows it."""
    inner = tool(d.binary, d.log) if tool else [d.binary]
    judge = judge_for(prog)
    if judge is None:
        return inner, False
    return proc.judge_argv(judge, inner[-1], inner[:-1]), True


def run_lab(argv, timeout, case=None, kind="run", tool=None, cpu_limit=None):
    """proc.run for a lab binary (argv: the binary and its options) from a RunDir of its own:
    nothing the binary writes by a relative path lands in the grader's folders, it runs as the
    run user when the grader is root, and it is contained, so that nothing it starts outlives
    it. case: a graded run (the case line). tool: a function (binary, log) -> the argv of a tool
    that runs the binary (compute-sanitizer); the Result's tool_log then holds the tool's log."""
    prog = os.path.abspath(argv[0])
    judged = case is not None
    d = RunDir(prog, tool=tool is not None)
    t0 = time.monotonic()
    r = None
    try:
        if judged:  # the verdict is the judge's, which no lab code shares a process with
            full, judged = _graded_argv(prog, d, tool)
        else:
            full = tool(d.binary, d.log) if tool else [d.binary] + list(argv[1:])
        r = proc.run(full, timeout, cwd=d.cwd, env=d.env(), contain=True, case=case,
                     cpu_limit=cpu_limit, judged=judged)
        r.tool_log = d.read_log() if tool else ""
        return r
    finally:
        d.remove()
        used = getattr(r, "cpu_s", None)  # the CPU time it used, in the trace too
        trace(kind, [prog], time.monotonic() - t0, case=case or " ".join(argv[1:])[:200],
              **({"cpu": round(used, 3)} if used is not None else {}))


def describe(binary, timeout=30):
    """LabInfo of a built binary; None with the reason when --describe fails."""
    try:
        r = run_lab([binary, "--describe"], timeout)
    except OSError as e:
        return None, f"cannot run the lab binary: {e.strerror}"
    if r.timed_out:
        return None, f"`scan --describe` timed out after {timeout:g} s"
    if r.returncode != 0:
        why = feedback.program_tail(r.stderr or r.stdout, "stderr" if r.stderr.strip() else "stdout", lines=1)
        return None, "`scan --describe` failed: " + (why or f"exit code {r.returncode}")
    info, why = parse_describe(r.stdout)
    if info is None:
        return None, f"`scan --describe` gave no lab description: {why}"
    return info, ""
