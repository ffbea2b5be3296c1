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
(proc.run_user), which can read nothing of the grader's work folder (0700: builds, private
copies of scan.cu, results) nor, deployed, of the course; a reference binary's copy is
executable but not readable (0711). Every run is contained (proc.run's contain=True): a process
it leaves running, also one that called setsid(), is killed, and the run is diagnosed "escaped".

Size: about 900 lines, over the house's 400. It holds five jobs that share the protocol above:
the run folder and one process (RunDir, run_lab), the lab's description (LabInfo, describe),
the case matrix (edge_sizes, make_cases), what a run said (parse_report, diagnose), and the
runs themselves (LabSession, the sanitizers, Timer). Those are the seams to split it along,
as build.py and grade.py were split.
"""
import dataclasses
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time

from . import contract
from . import feedback
from . import proc
from .status import Status

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


TRACE_VAR = "LAB_GRADER_TRACE"  # a file to append one JSON line per lab process to (timings)
_trace_lock = threading.Lock()


def trace(kind, argv, seconds, **extra):
    """Appends one line about a finished lab process to $LAB_GRADER_TRACE, when it is set: what
    it was (kind), its program, when it ended and how long it took (the grader's own timing
    breakdown; grader/README.md, "Where the time goes"), and which grader process wrote it (pid:
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
# grader/tools/measure_opens.py sets TRACE_OPENS.
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
    return base if proc.run_user() is None or _traversable(base) else "/tmp"


class RunDir:
    """The folder one lab process runs from: `scan`, a copy of the binary (0755; a reference
    binary's 0711: the run user may execute it, not read it), and `cwd/`, empty, owned by the run
    user (the process's cwd, HOME and TMPDIR); with tool=True also `tool/` (the run user's) for
    a tool's log. The folder itself is 0711: the run user can reach what is in it by name, not
    list it. remove() deletes it all. A reference binary never runs under a tool (ValueError):
    compute-sanitizer runs the student's binaries only. Raises proc.RunUserError when the grader
    is root without a user to run as."""

    def __init__(self, binary, tool=False):
        user = proc.run_user()
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
        measuring switch unless TRACE_OPENS is set (grader/tools/measure_opens.py)."""
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


@dataclasses.dataclass(frozen=True)
class Variant:
    """One variant of a lab, as `scan --describe` lists it (variants[0] is graded)."""
    name: str
    summary: str
    temp: bool  # it asks the harness for scratch memory


# A whole-array lab's reported tiles above this are ignored (sizes of several such tiles would only
# run out of memory); its multi-tile sizes span at least MIN_BIG_TILE elements whatever it reports.
MAX_WORK_TILE = 1 << 20
MIN_BIG_TILE = 4096


@dataclasses.dataclass(frozen=True)
class LabInfo:
    """What `scan --describe` says about a lab (common/harness/session.c)."""
    contract: int
    id: str
    title: str
    shape: str       # one of contract.SHAPES (host arrays, the whole scan, tile by tile)
    type: str        # one of contract.SCAN_TYPES
    tile: int        # 0 unless shape == "tile"
    bench_n: int
    max_n: int       # 0: no limit
    element: str
    operator: str
    variants: tuple  # of Variant
    mode: str        # one of contract.MODES: how the binary was built
    work_tiles: tuple = ()  # a whole-array lab's internal tiles (lab.h: lab_work_tiles), () unknown

    @property
    def device(self):
        return self.shape != "host"

    @property
    def tiles(self):
        """The tiles the sizes are made from: a tile lab's tile (the course's); a whole-array
        lab's internal tiles as it reports them (lab 10: its own and its scan's; up to
        MAX_WORK_TILE), then contract.DEFAULT_TILE. A lab 07 or 08 reports its own tile from its
        scan.cu, so a report can only add sizes: the default tile's sizes stay, and the multi-tile
        sizes span at least MIN_BIG_TILE (big_tile)."""
        if self.tile:
            return (self.tile,)
        reported = tuple(t for t in self.work_tiles if t <= MAX_WORK_TILE)
        return reported + ((contract.DEFAULT_TILE,) if contract.DEFAULT_TILE not in reported else ())

    @property
    def tile_or_default(self):
        """The tile the edge sizes are made from (the first of tiles)."""
        return self.tiles[0]

    @property
    def big_tile(self):
        """The largest of tiles, at least MIN_BIG_TILE for a whole-array lab (whose tiles are its
        own report): the multi-tile sizes are multiples of it."""
        return max(self.tiles) if self.tile else max(self.tiles + (MIN_BIG_TILE,))


def parse_describe(text):
    """(LabInfo, "") from the output of `scan --describe`, or (None, why) when it is not one JSON
    object of that form, or names another contract version than the grader's."""
    try:
        d = json.loads(text)
    except ValueError:
        return None, "not JSON"
    if not isinstance(d, dict):
        return None, "not a JSON object"
    if d.get("contract") != contract.VERSION:
        return None, (f"built against contract version {d.get('contract')!r}, the grader has "
                      f"{contract.VERSION}: rebuild the lab")
    fields = {"id": str, "title": str, "shape": str, "type": str, "tile": int, "bench_n": int,
              "max_n": int, "element": str, "operator": str, "variants": list, "mode": str}
    for key, kind in fields.items():
        if not isinstance(d.get(key), kind) or isinstance(d.get(key), bool):
            return None, f"'{key}' is missing or not a {kind.__name__}"
    for key, allowed in (("shape", contract.SHAPES), ("type", contract.SCAN_TYPES),
                         ("mode", contract.MODES), ("element", (contract.ELEMENT,)),
                         ("operator", (contract.OPERATOR,))):
        if d[key] not in allowed:
            return None, f"{key} {d[key]!r} is not one of {', '.join(allowed)}"
    variants = []
    for v in d["variants"]:
        if not (isinstance(v, dict) and isinstance(v.get("name"), str)
                and isinstance(v.get("summary"), str) and isinstance(v.get("temp"), bool)):
            return None, f"variant {v!r} needs a name, a summary and temp"
        variants.append(Variant(v["name"], v["summary"], v["temp"]))
    if not variants:
        return None, "no variants"
    work = d.get("work_tiles", [])
    if not isinstance(work, list) or any(isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in work):
        return None, "'work_tiles' is not a list of positive whole numbers"
    return LabInfo(d["contract"], d["id"], d["title"], d["shape"], d["type"], d["tile"],
                   d["bench_n"], d["max_n"], d["element"], d["operator"], tuple(variants),
                   d["mode"], tuple(work)), ""


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


# ---- the correctness matrix ------------------------------------------------------------------

def _cap(info, limit):
    cap = info.max_n or None
    if limit is not None:
        cap = min(cap, limit) if cap else limit
    return cap


# Sizes made from each further tile of a lab that reports several (lab 10: its own and its scan's),
# the contract's tile-relative family: exact multiples and sizes one off them, (tiles, plus).
EXTRA_TILE_SIZES = tuple((r["tiles"], r["plus"]) for r in contract.DATA["edge_sizes"]["tile_relative"])


def edge_sizes(info, large_n, limit=None):
    """The edge sizes for a lab (contract.edge_sizes, the same families as tests/lab_cases.c,
    made from info.tiles[0]), with names for the ones the config can refer to: {n: name}, none
    over the lab's max_n or limit; and, for every further tile a whole-array lab reports, its
    multiples and the sizes one off them (EXTRA_TILE_SIZES), named by their value."""
    cap = _cap(info, limit)
    sizes = contract.edge_sizes(info.tile_or_default, large_n, cap)
    for t in info.tiles[1:]:
        for k, plus in EXTRA_TILE_SIZES:
            n = k * t + plus
            if (cap is None or n <= cap) and n not in sizes:
                sizes[n] = str(n)
    return dict(sorted(sizes.items()))


def case_seed(run_seed, lab_id, n, dist):
    """The seed of one case: a fixed function of the run's seed, so --seed reproduces it."""
    h = hashlib.sha256(f"{run_seed}:{lab_id}:{n}:{dist}".encode()).hexdigest()
    return int(h[:8], 16)


# Unaligned pointers: (size name, words past 16-byte alignment for in, for out). Offsets of 4, 8
# and 12 bytes, each for the input and the output.
OFFSET_CASES = (("tile+1", 1, 3), ("3tile+5", 2, 2), ("2^16+1", 3, 1))
# Every case makes two calls: call 1 scans the case's own input (the seed the grader prints, the
# CPU reference's), call 2 an input drawn on the GPU from a secret seed, so that an answer made
# on the host from the harness's own data (its seed) is caught too. In a case of more than one
# tile, call 2 spans several of the lab's real tiles (second_size): larger than call 1 in a case
# of a few tiles (scratch sized by the first call is caught), smaller in a large one (state left
# by a multi-tile call is caught), and short enough that a correct but slow lab is not timed out
# for it.


def second_size(info, limit=None):
    """The n of every case's second call: two of the lab's largest tiles and one element."""
    n = 2 * info.big_tile + 1
    cap = _cap(info, limit)
    return min(n, cap) if cap else n


def case_calls(info, n, limit=None):
    """The options that make a case its calls. A case of one tile or less: n twice (a
    remembered answer; growth is the many-calls case's), so that a lab whose single-tile path is
    right still passes its single-tile cases. A case of more than one tile: n, then second_size
    twice. The second call, at a new n (growing or shrinking, several tiles long), shows state
    the first left behind; the harness zeroes the scratch for each new n (lab.h), so only the
    third, at the same n as the second, shows state never reset for the next call (lab 08's
    ticket counter). Repeating the small second size, not n, keeps the cost of a case low."""
    if n <= info.tile_or_default:
        return ("--sizes", f"{n},{n}", "--calls", "2")
    second = second_size(info, limit)
    return ("--sizes", f"{n},{second},{second}", "--calls", "3")


# A case makes at most this many calls (case_calls); the many-calls case makes more.
CASE_CALLS_MAX = 3


def is_many_calls(options):
    """True for the options of a case of more calls than case_calls makes: the many-calls case
    (MULTI_CALLS calls) and a stress case of more than CASE_CALLS_MAX, each of which runs first in
    a process of its own and is not made for reported variants."""
    return "--calls" in options and int(options[options.index("--calls") + 1]) > CASE_CALLS_MAX


# The many-calls case: one process, calls cycling through these sizes (two calls of the same n in
# a row, then smaller and larger ones, most of them several tiles long): a remembered answer,
# state sized for the first call's n, or a leak shows here.
MULTI_CALLS = {"gpu": 100, "cpu": 12}
assert min(MULTI_CALLS.values()) > CASE_CALLS_MAX


def multi_sizes(info):
    """The sizes of the many-calls case: multiples of the lab's largest tile and sizes one off,
    growing and shrinking (a leak that only a multi-tile call makes is counted call after call)."""
    t = info.big_tile
    return [2 * t + 1, 2 * t + 1, 33, 5 * t + 3, t, 3 * t - 1]


def graded_variants(info, settings):
    """The names of the variants the lab is graded on: every variant when the config says "all",
    the lab's variants named in a list (labs 09 and 10, whose variants are different operators
    and applications; the default always among them), else the default (variants[0]) alone; the
    others are only checked and reported (report_variants)."""
    chosen = settings["correctness"]["variants"]
    if chosen == "all":
        return tuple(v.name for v in info.variants)
    if isinstance(chosen, list):
        return tuple(v.name for k, v in enumerate(info.variants) if k == 0 or v.name in chosen)
    return (info.variants[0].name,)


def report_variants(info, settings):
    """The variants that are checked and named in the result but not graded."""
    graded = graded_variants(info, settings)
    return tuple(v.name for v in info.variants if v.name not in graded)


def _variant_opts(info, variant):
    """The harness options that choose variant: none for the default one."""
    if variant is None or variant == info.variants[0].name:
        return ()
    return ("--variant", variant)


def make_cases(info, settings, run_seed, limit=None, mode="gpu", variant=None, every_dist=True):
    """[(n, dist, seed, options)] of one variant of a lab (None: the default), the whole matrix:
    every edge size with one distribution (rotating through the list), the sizes named in
    all_dists_sizes with every distribution (and the variant's variant_dists), a few sizes with
    unaligned input and output (OFFSET_CASES), and one process of many calls of several sizes
    (MULTI_CALLS; the device-memory leak check). options: extra harness options, a tuple.

    On a GPU, a lab whose config has correctness.stress (the single-pass labs) also gets its
    stress cases: for each number of tiles listed, that many of its largest tiles and one element,
    `calls` calls at that n in one process, each with the lab's kernels kept to `sms` SMs
    (--squeeze: many more tiles than resident blocks, and the same n again, so that a look-back
    that accepts an earlier call's descriptor or waits on a tile not yet running fails here).

    A variant other than the default meets every size and every distribution too, but the
    large size (the costly one: 2^24 elements) with one distribution only, a different one for
    each variant, the others at every smaller all_dists size. every_dist=False: no size with
    every distribution (a variant that is only reported)."""
    c = settings["correctness"]
    dists = c["dists"]
    extra = [d for d in c.get("variant_dists", {}).get(variant or info.variants[0].name, []) if d not in dists]
    sizes = edge_sizes(info, c["large_n"], limit)
    every = set(c.get("all_dists_sizes", [])) if every_dist else set()
    vopts = _variant_opts(info, variant)
    if vopts:
        every.discard("large")
    shift = next((k for k, v in enumerate(info.variants) if v.name == variant), 0)
    salt = f"/{variant}" if vopts else ""
    cases = []
    for i, (n, name) in enumerate(sizes.items()):
        chosen = dists + extra if name in every else [dists[(i + shift) % len(dists)]]
        for d in chosen:
            cases.append((n, d, case_seed(run_seed, info.id, n, d + salt), case_calls(info, n, limit) + vopts))
    by_name = {name: n for n, name in sizes.items()}
    for j, (name, off_in, off_out) in enumerate(OFFSET_CASES):
        if name in by_name:
            n, d = by_name[name], dists[(j + 1) % len(dists)]
            cases.append((n, d, case_seed(run_seed, info.id, n, f"{d}+off{off_in}{off_out}{salt}"),
                          ("--offset-in", str(off_in), "--offset-out", str(off_out)) + case_calls(info, n, limit)
                          + vopts))
    stress = c.get("stress") if mode == "gpu" else None
    if stress:
        for tiles in stress["tiles"]:
            n = tiles * info.big_tile + 1
            if (info.max_n and n > info.max_n) or (limit is not None and n > limit):
                continue
            d = dists[tiles % len(dists)]
            cases.append((n, d, case_seed(run_seed, info.id, n, f"{d}+squeeze{salt}"),
                          ("--calls", str(stress["calls"]), "--squeeze", str(stress["sms"])) + vopts))
    multi = [n for n in multi_sizes(info) if not info.max_n or n <= info.max_n]
    if multi and (limit is None or max(multi) <= limit):
        n = multi[0]
        cases.append((n, "random", case_seed(run_seed, info.id, n, "multi" + salt),
                      ("--sizes", ",".join(map(str, multi)), "--calls", str(MULTI_CALLS[mode])) + vopts))
    return cases


# The blocks CPU mode's scheduler keeps resident at once (common/cpu/launch.cpp g_resident, unless
# CPU_RESIDENT_BLOCKS says otherwise; the grader never sets it).
CPU_RESIDENT_BLOCKS = 4


def ordering_cases(info, settings, run_seed, variant=None):
    """The cases a GPU grade also runs in CPU mode for a lab whose config has
    correctness.cpu_ordering (the single-pass labs): make_cases's CPU-mode cases of more tiles
    than CPU mode keeps resident, up to its max_n, one distribution each, and for the default
    variant the many-calls case (the same n again, then others). CPU mode's scheduler suspends a
    block between any two of its steps and starts blocks out of order, so a look-back that reads
    a flag before the value it guards, or accepts an earlier call's descriptor, fails these
    cases every time; on a GPU such a race shows by luck, or, for some, never (the H100 never
    showed lab 08's flag-before-value store order in 9,000 squeezed calls). [] without the key."""
    ordering = settings["correctness"].get("cpu_ordering")
    if not ordering:
        return []
    limit = ordering["max_n"]
    if info.max_n:
        limit = min(limit, info.max_n)
    several = CPU_RESIDENT_BLOCKS * info.big_tile
    default = variant is None or variant == info.variants[0].name
    salt = "cpu-ordering"
    out = []
    for n, dist, seed, options in make_cases(info, settings, run_seed, limit, "cpu", variant, every_dist=False):
        if is_many_calls(options):
            if default:
                out.append((n, dist, seed ^ case_seed(run_seed, info.id, n, salt), options))
        elif n > several and "--offset-in" not in options:
            out.append((n, dist, seed ^ case_seed(run_seed, info.id, n, salt), options))
    return out


# A variant that is only reported (not graded) is checked at the edge sizes up to this one, one
# distribution each: enough to say "written and passing" or what fails. In CPU mode (every GPU
# thread a fiber) a quarter of it, still more than two of every lab's largest tile (lab 10's
# sort: 6144): lab 10's reported radix_sort_on_scan alone cost 3.8 of a full submission's ~47
# CPU-seconds at the GPU's sizes.
REPORT_MAX_N = {"gpu": (1 << 16) + 1, "cpu": (1 << 14) + 1}


def report_cases(info, settings, run_seed, variant, limit=None, mode="gpu"):
    """The cases of a reported variant: make_cases's up to REPORT_MAX_N[mode], one distribution
    per size, and no many-calls case (a process of its own: the graded variant's has that
    check)."""
    top = REPORT_MAX_N[mode]
    cap = top if limit is None else min(limit, top)
    return [c for c in make_cases(info, settings, run_seed, cap, mode, variant, every_dist=False)
            if not is_many_calls(c[3])]


def reproduce_cmd(lab_id, n, dist, seed, mode="gpu", options=()):
    """The command that reruns one case by hand (in CPU mode too, when that is how it ran)."""
    cpu = " CPU=1" if mode == "cpu" else ""
    extra = (" " + " ".join(options)) if options else ""
    return f"make run LAB={lab_id[:2]}{cpu} ARGS='--n {n} --dist {dist} --seed {seed} --reps 0{extra}'"


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
# A case's limit (timeouts.case_s) counts the lab process's CPU time (proc.cpu_seconds: user and
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
        cpu0 = proc.cpu_seconds(self.session.p.pid)
        state, text = self.session.ask(line, timeout, cpu_limit)
        cpu1 = proc.cpu_seconds(self.session.p.pid)
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

    def timed(self, n, reps, warmup, seed, timeout):
        if self.isolated:
            return run_timed(self.binary, n, reps, warmup, seed, timeout, self.options)
        if self.session is None or self.session.ended:
            self._close()
            self.session, self.first = LabSession(self.binary, "timed"), True
        kind, msg, rep = self.session.run(case_line(n, "small", seed, reps, warmup, self.options), timeout,
                                          {"n": n, "seed": seed, "dist": "small"})
        first, self.first = self.first, False
        if kind != Status.OK and not first:
            return run_timed(self.binary, n, reps, warmup, seed, timeout, self.options)
        return kind, msg, rep

    def fresh(self):
        """The next timed run in a new process (the one so far ends, its cleanliness kept)."""
        self._close()

    def _close(self):
        if self.session is not None:
            self.clean = self.session.close() and self.clean
            self.session = None

    def close(self):
        self._close()
        return self.clean
