#!/usr/bin/env python3
"""Runs the whole test suite and prints one summary: Criterion binaries (their TAP reports are
counted), then the Python unittest suites in tests/ and grader/tests/.

Usage: run_tests.py [--src solutions|labs] [--no-python] [--log FILE] [--verbose] [--jobs N] BINARY...
(make test calls it)
--src says which code the kernel-test binaries were linked with (make test TEST_SRC=labs: the
student's labs/); with labs, one line per lab says whether it passed, failed or is not written yet.
Everything the tests print goes to the log (--log, default $LAB_BUILD_DIR/test.log); the terminal
gets one line per suite and the summary (--verbose: the tests' own output instead of the log).
The Python suites run in --jobs worker processes (default: one per core), spread by what they
took last time (run_unittests): whole modules, except that a module longer than a worker's share
runs as its test classes (and such a class without class fixtures as its tests) in several
workers at once; the summary is the same as one process's.
Exit code: 0 when nothing failed, 1 otherwise.
The last line is "summary: N passed, N failed, N skipped"; above it, the skip reasons, one line
per failed test (its name and first message) and the path of the log.
"""
import argparse
import collections
import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


MESSAGES_PER_FAILURE = 3


def suite_name(binary):
    """The row name of a Criterion binary: its file name, with the tree for the student's
    kernel tests (build/tests/labs/kernels_03_kogge_stone: "labs: kernels_03_kogge_stone")."""
    name = os.path.basename(binary)
    parent = os.path.basename(os.path.dirname(os.path.abspath(binary)))
    return f"labs: {name}" if parent == "labs" else name


# Criterion's own lines in its output (--verbose): a test starts, ends, or says more.
CRITERION_LINE = re.compile(r"\[(----|====|RUN |PASS|FAIL|SKIP|WARN|ERR )\] ")
TEST_START = re.compile(r"\[RUN \] (\S+)\s*$")
TEST_END = re.compile(r"\[(PASS|FAIL|SKIP)\] (\S+): ")
# A report of a CUDA error or of CPU mode (out of bounds, a barrier, a warp operation, a timeout)
REPORT_LINE = re.compile(r"CPU mode: |CUDA error|cudaError[A-Z]")


def short(line, limit=300):
    return line if len(line) <= limit else line[:limit - 3] + "..."


def printed_lines(output):
    """{test name: the line it printed that says the most} from a Criterion binary's --verbose
    output: between the test's [RUN ] and its [PASS]/[FAIL] line (tests run in parallel, so other
    tests' lines may be there too), the first CUDA error or CPU-mode report, else the last line
    that is not Criterion's own."""
    windows, found = {}, {}
    for line in output.splitlines():
        line = line.rstrip()
        start, end = TEST_START.match(line), TEST_END.match(line)
        if start:
            windows[start.group(1)] = []
        elif end:
            lines = [ln for ln in windows.pop(end.group(2), []) if ln.strip()]
            reports = [ln for ln in lines if REPORT_LINE.search(ln)]
            if reports or lines:
                found[end.group(2)] = short((reports or lines[-1:])[0].strip())
        elif not CRITERION_LINE.match(line):
            for lines in windows.values():
                lines.append(line)
    return found


def run_criterion(binary, log=None):
    """Runs one Criterion binary, its output into log (a file; None: the terminal); returns
    (passed, failed, skipped, skip reasons, failures), with failures a list of (test name,
    [first messages]). A test that died without an assertion's message (a CUDA error's exit, a
    signal) gets the report it printed on stderr (printed_lines) as its first message."""
    name = suite_name(binary)
    tap = os.path.abspath(binary) + ".tap"
    if os.path.exists(tap):
        os.remove(tap)
    if log:
        print(f"==> {name}", file=log, flush=True)
    proc = subprocess.Popen([binary, "--short-filename", "--verbose", f"--tap={tap}"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            encoding="utf-8", errors="replace")
    output = []
    for line in proc.stdout:
        output.append(line)
        print(line, end="", file=log or sys.stdout, flush=True)
    proc.wait()
    printed = printed_lines("".join(output))
    passed = failed = skipped = 0
    reasons = []
    failures = []
    if os.path.exists(tap):
        with open(tap, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"(not ok|ok) - (\S+)(.*)", line)
                if not m:
                    # Criterion's YAML block under a failed test: "      Assertion failed: <msg>",
                    # the latest failure first
                    msg = re.match(r"\s+Assertion failed: (.*)", line)
                    if msg and failures:
                        failures[-1][1].insert(0, msg.group(1).strip())
                    continue
                if m.group(1) == "not ok":
                    failed += 1
                    crash = re.search(r"unexpected signal after (\S+?)(\[|$)", m.group(3))
                    said = printed.get(m.group(2))
                    if crash:
                        messages = [f"crashed (a signal) after {crash.group(1)}"
                                    + (f"; it printed: {said}" if said else "")]
                    else:
                        messages = []
                    failures.append((f"{name}: {m.group(2)}", messages, said))
                elif "# SKIP" in m.group(3):
                    skipped += 1
                    reasons.append(m.group(3).split("# SKIP", 1)[1].strip())
                else:
                    passed += 1
    # a test that ended without an assertion's message (a CUDA error's exit): what it printed
    failures = [(test, messages or ([said] if said else [])) for test, messages, said in failures]
    if proc.returncode != 0 and failed == 0:
        failed = 1  # the binary itself failed (crashed before reporting, say)
        said = [ln.strip() for ln in output if REPORT_LINE.search(ln)]
        why = f"exited with status {proc.returncode} without a failing test" + (
            f": {short(said[0])}" if said else "")
        print(f"{name}: {why}", file=sys.stderr)
        failures.append((name, [why]))
    failures = [(test, messages[:MESSAGES_PER_FAILURE]) for test, messages in failures]
    return passed, failed, skipped, reasons, failures


def exception_line(trace):
    """The line of a traceback that names the exception and starts its message
    ("AssertionError: 2 != 1 : ..."), cut at 300 characters; a message may go on for many lines
    (a subprocess's output), and its last line says little."""
    lines = [ln for ln in trace.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Failure|Interrupt|Exit)\b", ln):
            return ln if len(ln) <= 300 else ln[:297] + "..."
    return lines[-1] if lines else "(no message)"


# The folders whose test_*.py modules are the Python suites, in the order their results are listed.
UNITTEST_DIRS = ("tests", os.path.join("grader", "tests"))
# Seconds each module took in a fresh clone's make test on a 2-core machine (CPU mode, the modules
# in two workers at once, 2026-12-06, the course's kernels in CPU mode one thread each), for the
# first run of a fresh clone;
# every run records what each took in $LAB_BUILD_DIR/unittest-seconds.json and the next balances
# by that. The modules not listed took under a second; one in neither place counts
# UNKNOWN_MODULE_SECONDS.
MODULE_SECONDS = {"test_fixtures": 315, "test_static_checks": 114, "test_deploy": 89,
                  "test_grader_pipeline": 72, "test_slurm": 61, "test_bench_grader": 54,
                  "test_grader_builds": 45, "test_cpu_mode": 40, "test_load_hangs": 39,
                  "test_cli": 34, "test_static_parity": 30, "test_timing_trust": 18,
                  "test_snippets": 14, "test_bench": 10, "test_similarity": 10,
                  "test_start_rate": 9, "test_report": 6, "test_cluster": 5, "test_receipt": 4,
                  "test_feedback": 3, "test_run_tests": 3, "test_layers": 3, "test_contract": 1,
                  "test_diagrams": 1, "test_leaderboard": 1}
UNKNOWN_MODULE_SECONDS = 1.0
# What part of its module's time a long class or test took (make -j16 test on an H200 host with 16
# cores, 2026-11-28), for splitting a module on a fresh clone, before any run was recorded; the
# classes and tests not listed share the rest of the time by how many tests each has.
PART_SHARES = {"test_fixtures.Fixtures": 0.99,
               "test_fixtures.Fixtures.test_cpu_mode_fixtures_get_their_diagnosis": 0.89,
               "test_fixtures.Fixtures.test_fixtures_with_an_nvcc_side_check_get_their_diagnosis_with_nvcc_too": 0.11,
               "test_deploy.Gradescope": 0.41, "test_deploy.GradescopeGpu": 0.42, "test_deploy.Container": 0.17,
               "test_grader_pipeline.Pipeline": 0.85,
               "test_grader_pipeline.Pipeline.test_hang_is_reported_and_stops_the_lab": 0.12,
               "test_grader_pipeline.Pipeline."
               "test_many_cases_run_in_one_process_with_the_verdicts_of_isolated_runs": 0.12,
               "test_similarity.RealClass": 0.5, "test_static_checks.HonestCode": 0.49,
               "test_static_checks.Snippets": 0.51, "test_cpu_mode.Corpus": 0.48, "test_cli.CpuDefaultRun": 0.97}
# Units that took more than this many seconds last time are also remembered by class and by test
# (below it only the modules and the classes), so that a module longer than a worker's share can be split.
RECORD_TEST_SECONDS = 1.0
# Modules that run after the others, in a worker of their own: test_load_hangs keeps every core
# busy on purpose for about a minute (a worker beside it would barely move, and its own timeouts
# would be tested under that load).
ALONE_MODULES = ("test_load_hangs",)
# On a machine of at least ALONE_BESIDE_CORES cores, those modules run beside the others instead,
# on ALONE_CORES cores of their own that the others' workers are kept off (sched_setaffinity):
# test_load_hangs's loops then load the cores its grade runs on, as on a 2-core machine, and the
# rest of the suite does not wait a minute for it (on 16 cores it was the last 63 s of make test).
ALONE_BESIDE_CORES = 8
ALONE_CORES = 2
# Modules that mostly wait (on a Slurm cluster's scheduling, on sleeps and timed children: each
# used under a tenth of its wall time in CPU on 2 cores, test_timing_trust under half): they run
# in one more worker beside the first phase's, so that no worker of the CPU-bound modules sits
# idle through their waits (on 2 cores, test_slurm alone idled one of the two for 53 s).
WAITING_MODULES = ("test_slurm", "test_start_rate", "test_timing_trust")


def unittest_modules(dirs=UNITTEST_DIRS):
    """The Python test modules, as (folder, module name), in discovery order: the folders in
    order (relative to the repository, or absolute), each folder's test_*.py sorted by name."""
    found = []
    for d in dirs:
        path = os.path.join(ROOT, d)
        if os.path.isdir(path):
            found += [(d, f[:-3]) for f in sorted(os.listdir(path))
                      if f.startswith("test_") and f.endswith(".py")]
    return found


def balance(modules, seconds, workers):
    """Splits modules into at most `workers` groups of about equal total cost, longest first onto
    the group with the least so far (seconds: {module: cost}); each group keeps discovery order.
    Returns the groups, none of them empty."""
    groups = [[] for _ in range(max(1, min(workers, len(modules))))]
    load = [0.0] * len(groups)
    order = {m: i for i, m in enumerate(modules)}
    for m in sorted(modules, key=lambda m: (-cost(m, seconds), order[m])):
        k = load.index(min(load))
        groups[k].append(m)
        load[k] += cost(m, seconds)
    return [sorted(g, key=order.get) for g in groups if g]


def cost(unit, seconds):
    """What unit (folder, "module", "module.Class" or "module.Class.test") took last time: seconds'
    entry for it, else UNKNOWN_MODULE_SECONDS."""
    return seconds.get(unit[1], UNKNOWN_MODULE_SECONDS)


def module_classes(modules):
    """{module: [(class name, [its test names], whether it has class fixtures)]} of the test
    modules [(folder, module)], in the order one process runs them; a module is missing when it
    cannot be split that way. The modules are imported in a process of their own (run_tests.py
    --list-classes), not in this one, so that nothing they do at import reaches the workers."""
    if not modules:
        return {}
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--list-classes",
                        *(os.path.join(d, m) for d, m in modules)], cwd=ROOT, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True)
    try:
        found = json.loads(p.stdout) if p.returncode == 0 else {}
    except ValueError:
        found = {}
    return {m: [(c, t, f) for c, t, f in classes] for m, classes in found.items() if classes}


def add_test_paths(folders):
    """Puts on sys.path what discovery of both UNITTEST_DIRS puts there in one process, and
    folders (relative to the repository, or absolute), for the test modules' imports."""
    for d in list(UNITTEST_DIRS) + list(folders):
        path = os.path.join(ROOT, d)
        if path not in sys.path:
            sys.path.insert(0, path)


def list_classes(folder, module):
    """module_classes' answer for one module, in this process: a list, or None when the module
    does not import, has module fixtures, or holds tests that are not methods of a class it names."""
    where = os.path.join(ROOT, folder)
    add_test_paths([folder])  # as a worker's sys.path
    try:
        suite = unittest.TestLoader().discover(where, pattern=module + ".py", top_level_dir=where)
    except Exception:  # noqa: BLE001 -- whatever stops it, the module then runs whole, as before
        return None
    mod = sys.modules.get(module)
    if mod is None or hasattr(mod, "setUpModule") or hasattr(mod, "tearDownModule"):
        return None
    classes, stack = [], [suite]
    while stack:  # depth first, in order: the order unittest runs them
        item = stack.pop(0)
        if isinstance(item, unittest.TestSuite):
            stack[:0] = list(item)
            continue
        cls = type(item)
        if getattr(mod, cls.__name__, None) is not cls or not hasattr(item, "_testMethodName"):
            return None  # a _FailedTest (an import error) or a class under another name
        if not classes or classes[-1][0] != cls.__name__:
            fixtures = any(getattr(cls, f).__func__ is not getattr(unittest.TestCase, f).__func__
                           for f in ("setUpClass", "tearDownClass"))
            classes.append((cls.__name__, [], fixtures))
        classes[-1][1].append(item._testMethodName)
    return classes if len({c for c, _, _ in classes}) == len(classes) else None


def split_units(modules, seconds, workers, classes_of=module_classes):
    """The units to balance over `workers` workers, in discovery order: each module of modules
    whole, except one that took more than a worker's share (the total over workers) last time,
    which runs as its classes; of those, one still over a share and without setUpClass or
    tearDownClass, as its tests. A class or test with no time of its own gets its PART_SHARES of
    its module's time, else its module's (or class's) time shared out by tests. classes_of:
    module_classes. Returns (units, seconds with the estimates added)."""
    seconds = dict(seconds)
    share = sum(cost(m, seconds) for m in modules) / max(1, workers)
    over = [m for m in modules if cost(m, seconds) > share]
    split = classes_of(over) if over else {}
    units = []
    for folder, module in modules:
        classes = split.get(module) if (folder, module) in over else None
        if not classes:
            units.append((folder, module))
            continue
        tests, whole = sum(len(t) for _, t, _ in classes), cost((folder, module), seconds)
        for name, methods, fixtures in classes:
            key = f"{module}.{name}"
            seconds.setdefault(key, whole * PART_SHARES.get(key, len(methods) / tests))
            if seconds[key] <= share or fixtures or len(methods) < 2:
                units.append((folder, key))
                continue
            for t in methods:
                part = PART_SHARES.get(f"{key}.{t}")
                seconds.setdefault(f"{key}.{t}", whole * part if part else seconds[key] / len(methods))
                units.append((folder, f"{key}.{t}"))
    return units, seconds


def counted_test(test):
    """The test that testsRun counted for a failure's or skip's entry: the test itself, the test
    of a subTest, or None for an error or skip of a setUpClass/setUpModule (unittest records it
    under a stand-in, suite._ErrorHolder, and runs none of the class's tests)."""
    test = getattr(test, "test_case", test)  # a subTest's failure: its test
    return test if isinstance(test, unittest.TestCase) else None


def unittest_result(result):
    """(passed, failed, skipped, skip reasons, failures) of a unittest result, in the tuple
    run_criterion returns. passed: the tests run with no failure, error, unexpected success or
    skip (a test with several failing subTests counts once); a setUpClass or setUpModule that
    failed or skipped counts as one failure or skip, and none of its tests as run."""
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    entries = result.failures + result.errors + result.skipped + [(t, "") for t in result.unexpectedSuccesses]
    not_passed = {id(t) for t in (counted_test(t) for t, _ in entries) if t is not None}
    passed = result.testsRun - len(not_passed)
    failures = [(f"python: {test.id()}", [exception_line(trace)]) for test, trace in result.failures + result.errors]
    failures += [(f"python: {test.id()}", ["unexpected success"]) for test in result.unexpectedSuccesses]
    return passed, failed, skipped, [reason for _, reason in result.skipped], failures


class TimedResult(unittest.TextTestResult):
    """A text result that also times each test class and each test: seconds {"module.Class": s,
    "module.Class.test": s}; a class's time includes its setUpClass (the time since the test
    before, when the class changes)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seconds, self.last, self.cls = {}, time.monotonic(), None

    def startTest(self, test):
        now = time.monotonic()
        cls = test.id().rsplit(".", 1)[0]
        if cls != self.cls:  # the time since the test before: this class's setUpClass
            self.cls = cls
            self.seconds[cls] = self.seconds.get(cls, 0.0) + now - self.last
        self.t0 = now
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        self.seconds[test.id()] = now - self.t0
        self.seconds[self.cls] += now - self.t0
        self.last = now


def unittest_worker(result_path, names):
    """One worker of run_unittests (run_tests.py --unittest-worker): runs the units it is given
    ("tests/test_cli" a whole module, "grader/tests/test_deploy.Gradescope" a class of it,
    "....Class.test_x" one test; in that order, each alone), their report on stderr, and writes
    {unit: {"counts": [passed, failed, skipped], "reasons", "failures", "seconds", "cpu",
    "timed": {class or test: seconds}}} as JSON to result_path, after each unit (cpu: its CPU
    time, the processes it waited for included). Returns 0."""
    add_test_paths([os.path.dirname(name) for name in names])
    results = {}
    for name in names:
        d, unit = os.path.split(name)
        print(f"==> python unittest: {unit}", file=sys.stderr, flush=True)
        t0, cpu0 = time.monotonic(), cpu_seconds()
        if "." in unit:  # a class or a test of a module
            suite = unittest.TestLoader().loadTestsFromName(unit)
        else:
            suite = unittest.TestLoader().discover(os.path.join(ROOT, d), pattern=unit + ".py",
                                                   top_level_dir=os.path.join(ROOT, d))
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1, resultclass=TimedResult).run(suite)
        p, f, s, r, fl = unittest_result(result)
        results[unit] = {"counts": [p, f, s], "reasons": r, "failures": fl,
                         "seconds": round(time.monotonic() - t0, 1), "cpu": round(cpu_seconds() - cpu0, 1),
                         "timed": {k: round(v, 1) for k, v in result.seconds.items()}}
        print(f"==> python unittest: {unit} took {results[unit]['seconds']:.1f} s "
              f"({results[unit]['cpu']:.1f} s of CPU time)", file=sys.stderr, flush=True)
        with open(result_path, "w", encoding="utf-8") as out:  # after each module: a crash keeps the rest
            json.dump(results, out)
    return 0


def cpu_seconds():
    """The CPU time (user and system) of this process and of the children it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def recorded_seconds(path):
    """{module: seconds} that the run before recorded in path ({} when there is no such file)."""
    try:
        with open(path, encoding="utf-8") as f:
            return {m: float(t) for m, t in json.load(f).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def run_unittests(log=None, jobs=None, record=None, dirs=UNITTEST_DIRS, alone=ALONE_MODULES):
    """Runs the test_*.py modules of dirs (tests/ and grader/tests/) in `jobs` worker processes
    at once (default: one per core), each module whole in one of them (a long one split by
    class or test: split_units), balanced by what they took last time (record: that file,
    rewritten at the end; None: MODULE_SECONDS only); then the modules named in alone, in one
    more worker with nothing beside it (on a machine of ALONE_BESIDE_CORES cores or more:
    beside them, on cores of its own). Their report goes
    into log (None: the terminal, each line marked with its worker's number), worker by worker;
    one line per worker on stderr as it ends. Returns the same tuple as run_criterion, the
    failures in discovery order, then any worker that died (as one failure)."""
    modules = unittest_modules(dirs)
    if not modules:
        return 0, 0, 0, [], []
    seconds = dict(MODULE_SECONDS, **(recorded_seconds(record) if record else {}))
    phases, units = plan_phases(modules, seconds, jobs, alone, allowed_cores())
    count = sum(len(groups) for groups in phases)
    tmp = tempfile.mkdtemp(prefix="unittest-workers-")
    workers, per_module, worker_failures = [], {}, []
    try:
        for groups in phases:
            started = [start_worker(len(workers) + i, count, group, tmp, log is not None, cpus)
                       for i, (group, cpus) in enumerate(groups, 1)]
            workers += started
            while started:  # each worker's line as it ends
                time.sleep(0.2)
                for w in [w for w in started if w["proc"].poll() is not None]:
                    started.remove(w)
                    done, failure = finish_worker(w)
                    per_module.update(done)
                    worker_failures += failure
        if log is not None:
            for w in workers:
                print(f"==> {w['tag']}: {' '.join(m for _, m in w['group'])}", file=log)
                w["part"].seek(0)
                shutil.copyfileobj(w["part"], log)
            log.flush()
    finally:
        for w in workers:
            if w["proc"].poll() is None:
                w["proc"].kill()
                w["proc"].wait()
            if w["part"]:
                w["part"].close()
        shutil.rmtree(tmp, ignore_errors=True)
    if record:
        seconds = recorded_seconds(record)
        for unit, r in per_module.items():  # classes always (not from a unit of one of their
            # tests: that is only part of the class), tests that took a while, the unit itself
            timed = r.get("timed", {}).items()
            seconds.update({k: t for k, t in timed if k.count(".") == 1 and unit.count(".") < 2})
            seconds.update({k: t for k, t in timed if k.count(".") == 2 and t >= RECORD_TEST_SECONDS})
            seconds[unit] = r["seconds"]
        for folder, module in modules:  # a split module: what its units took together
            parts = [r["seconds"] for u, r in per_module.items() if u.split(".")[0] == module and "." in u]
            if parts:
                seconds[module] = round(sum(parts), 1)
        with contextlib.suppress(OSError):
            with open(record, "w", encoding="utf-8") as f:
                json.dump(dict(sorted(seconds.items())), f, indent=1)
    totals, reasons, failures = [0, 0, 0], [], []
    for _, m in units:
        r = per_module.get(m)
        if r:
            totals = [t + c for t, c in zip(totals, r["counts"])]
            reasons += r["reasons"]
            failures += [(name, list(messages)) for name, messages in r["failures"]]
    return totals[0], totals[1] + len(worker_failures), totals[2], reasons, failures + worker_failures


def allowed_cores():
    """The sorted ids of the cores this process may run on; None where that cannot be told or set."""
    if not hasattr(os, "sched_getaffinity") or not hasattr(os, "sched_setaffinity"):
        return None
    return sorted(os.sched_getaffinity(0))


def cores():
    """How many cores this process may run on (what nproc prints)."""
    allowed = allowed_cores()
    return len(allowed) if allowed else (os.cpu_count() or 1)


def plan_phases(modules, seconds, jobs, alone, cpus, classes_of=module_classes, waiting=WAITING_MODULES):
    """The workers to run, phase after phase, and every unit they run in discovery order:
    ([[(group, cores or None), ...], ...], units). The modules neither in alone nor in waiting,
    split into units (split_units), balanced over `jobs` workers (default: one per core); those in
    waiting in one more worker beside them; those in alone in one more worker, after the others,
    or (ALONE_BESIDE_CORES cores or more in cpus) beside them on the last ALONE_CORES cores of
    cpus, the others' workers on the rest."""
    idle = [m for m in modules if m[1] in waiting and m[1] not in alone]
    shared = [m for m in modules if m[1] not in alone and m not in idle]
    lone = [m for m in modules if m[1] in alone]
    beside = bool((shared or idle) and lone and cpus and len(cpus) >= ALONE_BESIDE_CORES)
    workers = jobs or (len(cpus) - ALONE_CORES if beside else cores())
    units, seconds = split_units(shared, seconds, workers, classes_of) if shared else ([], seconds)
    order = {m: i for i, m in enumerate(modules)}
    # stable: a module's units in order
    ordered = sorted(units + idle + lone, key=lambda u: order[(u[0], u[1].split(".")[0])])
    groups = balance(units, seconds, workers) + ([idle] if idle else [])
    if beside:
        rest, own = cpus[:-ALONE_CORES], cpus[-ALONE_CORES:]
        return [[(g, rest) for g in groups] + [(lone, own)]], ordered
    phases = [[(g, None) for g in groups]] if groups else []
    return phases + ([[(lone, None)]] if lone else []), ordered


def start_worker(k, count, group, tmp, to_file, cpus=None):
    """Starts worker k of count on group ([(folder, module)]), on the cores cpus (None: wherever
    this process may run), its result and (to_file: else the terminal) its report in tmp;
    returns what finish_worker needs."""
    part = open(os.path.join(tmp, f"{k}.log"), "w+", encoding="utf-8", errors="replace") if to_file else None
    result = os.path.join(tmp, f"{k}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--unittest-worker", result]
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    proc = subprocess.Popen(cmd + [os.path.join(d, m) for d, m in group], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, encoding="utf-8", errors="replace",
                            preexec_fn=pin)
    copier = threading.Thread(target=copy_lines, args=(proc.stdout, part, f"[{k}] "), daemon=True)
    copier.start()
    return {"tag": f"python unittest [{k}/{count}]", "group": group, "proc": proc, "copier": copier,
            "part": part, "result": result, "t0": time.monotonic()}


def finish_worker(w):
    """After worker w ended: prints its line; returns ({module: result} of the modules it
    finished, [its own failure when it died before the end or exited with an error])."""
    w["copier"].join()
    try:
        with open(w["result"], encoding="utf-8") as f:
            done = json.load(f)
    except (OSError, ValueError):
        done = {}
    p, f, s = (sum(done[m]["counts"][i] for m in done) for i in range(3))
    missing = [m for _, m in w["group"] if m not in done]
    failure = []
    if w["proc"].returncode != 0 or missing:  # it died (killed, say)
        f += 1
        failure = [(f"python: {w['tag']}", [f"exited with status {w['proc'].returncode}" + (
            f" before it finished {', '.join(missing)}" if missing else "")])]
    n = len(w["group"])
    print(suite_line(w["tag"], p, f, s, time.monotonic() - w["t0"]) + f" ({n} module{'s' if n != 1 else ''})",
          file=sys.stderr, flush=True)
    return done, failure


def copy_lines(stream, out, prefix):
    """Copies a worker's output line by line into out (a file), or onto the terminal after
    prefix when out is None."""
    for line in stream:
        if out is None:
            sys.stderr.write(prefix + line)
            sys.stderr.flush()
        else:
            out.write(line)
    stream.close()


def lab_verdicts(rows):
    """For the student's kernel tests: one line per lab, from (name, passed, failed, skipped,
    reasons) rows of build/tests/labs/kernels_* binaries."""
    lines = []
    for name, p, f, s, reasons in rows:
        lab = name.split("kernels_", 1)[1]
        unwritten = next((r.split("variants not written yet: ", 1)[1].split(" (", 1)[0]
                          for r in reasons if "variants not written yet: " in r), None)
        if f:
            verdict = f"FAILED ({f} of {p + f} tests; their first messages are under 'failed')"
        elif any("not implemented yet" in r for r in reasons):
            verdict = "not implemented yet (skipped: its scan.cu still returns LAB_NOT_IMPLEMENTED)"
        elif any(r.startswith("no CUDA device") for r in reasons):
            verdict = "NOT RUN: no CUDA device (CPU=1 runs the tests in CPU mode)"
        else:
            verdict = f"passed ({p} test{'s' if p != 1 else ''}" + (f", {s} skipped)" if s else ")")
        if unwritten and not f:
            verdict += f"; not written yet: {unwritten}"
        if os.environ.get("LAB_TEST_PART"):  # make test ... PART=x: what was tested, said
            verdict += f" [PART={os.environ['LAB_TEST_PART']}: only its variants]"
        lines.append(f"  labs/{lab:24} {verdict}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default="solutions", choices=["solutions", "labs"],
                    help="the code the kernel tests are linked with (default: solutions)")
    ap.add_argument("--no-python", action="store_true", help="skip the Python unittest suites")
    ap.add_argument("--log", help="where the tests' own output goes (default: "
                    "$LAB_BUILD_DIR/test.log, or build/test.log)")
    ap.add_argument("--verbose", action="store_true",
                    help="the tests' own output on the terminal instead of the log")
    ap.add_argument("--jobs", type=int, metavar="N",
                    help="Python test processes at once (default: one per core)")
    ap.add_argument("--unittest-worker", nargs="+", metavar=("RESULT", "MODULE"), help=argparse.SUPPRESS)
    ap.add_argument("--list-classes", nargs="+", metavar="MODULE", help=argparse.SUPPRESS)
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()
    if args.unittest_worker:  # one of run_unittests' processes
        return unittest_worker(args.unittest_worker[0], args.unittest_worker[1:])
    if args.list_classes:  # module_classes' process
        print(json.dumps({os.path.basename(m): list_classes(*os.path.split(m)) for m in args.list_classes}))
        return 0
    # one hardware queue per test process, as the grader's runs have (gradelib/evaluate.py:
    # RUN_ENV): Criterion runs every test in a process of its own, and CUDA contexts with fewer
    # queues start 2.5x faster when many start at once
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    log_path = args.log or os.path.join(os.environ.get("LAB_BUILD_DIR") or os.path.join(ROOT, "build"),
                                        "test.log")
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        code = run_all(args, None if args.verbose else log)
    if not args.verbose:
        print(f"full log: {os.path.relpath(log_path)}")
    return code


def suite_line(name, p, f, s, seconds):
    """The terminal's line for one finished suite."""
    return (f"==> {name}: {p} passed, {f} failed, {s} skipped ({seconds:.0f} s)"
            + ("   <- FAILED" if f else ""))


def run_all(args, log):
    """Runs every suite (output into log, or the terminal when log is None) and prints the
    summary; returns the exit code."""

    if args.src == "labs":
        print("==> testing YOUR code in labs/ (TEST_SRC=labs); labs not written yet are skipped",
              file=sys.stderr, flush=True)
    totals = [0, 0, 0]
    reasons = collections.Counter()
    rows, student_rows, failures = [], [], []
    for b in args.binaries:
        t0 = time.monotonic()
        p, f, s, r, fl = run_criterion(b, log)
        print(suite_line(suite_name(b), p, f, s, time.monotonic() - t0), file=sys.stderr, flush=True)
        rows.append((suite_name(b), p, f, s))
        if suite_name(b).startswith("labs: "):
            student_rows.append((suite_name(b), p, f, s, r))
        reasons.update(r)
        failures += fl
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]
    if not args.no_python:
        t0 = time.monotonic()
        build = os.environ.get("LAB_BUILD_DIR") or os.path.join(ROOT, "build")
        # the grader's end-to-end tests share one build of the harness and the references per
        # course tree (grader/gradelib/build.py: the cache), instead of one per test's work folder;
        # so do the workers, under its lock
        os.environ.setdefault("LAB_GRADER_CACHE", os.path.join(build.rstrip("/").removesuffix("/cpu"),
                                                               "grader-cache"))
        p, f, s, r, fl = run_unittests(log, getattr(args, "jobs", None),
                                       os.path.join(build, "unittest-seconds.json"))
        print(suite_line("python unittest", p, f, s, time.monotonic() - t0), file=sys.stderr,
              flush=True)
        rows.append(("python unittest", p, f, s))
        reasons.update(r)
        failures += fl
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]

    print("")
    print(f"{'suite':40} {'passed':>7} {'failed':>7} {'skipped':>8}")
    for name, p, f, s in rows:
        print(f"{name:40} {p:7d} {f:7d} {s:8d}")
    if reasons:
        print("skipped, by reason:")
        for reason, count in reasons.most_common():
            print(f"  {count:4d} x {reason}")
    if failures:
        print("failed (each test's first message; all of them are in the log):")
        for name, messages in failures:
            print(f"  {name}: {messages[0] if messages else '(no message)'}")
    if student_rows:
        print("your labs (TEST_SRC=labs):")
        print("\n".join(lab_verdicts(student_rows)))
    print(f"summary: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
