"""The course's pytest plugin: what `make test` adds to pytest (tests/rules.mk loads it with
`-p course_plugin`, tests/ on PYTHONPATH).

- A Criterion binary named on the command line is one test item: it runs once (Criterion runs its
  tests in parallel, each in a process of its own), with --tap, and its TAP report is read: the
  item fails when one of its tests failed, naming each with its first messages; a test that died
  without an assertion's message (a CUDA error's exit, a CPU-mode report, a signal) gets the line
  it printed instead (printed_lines). Its whole output goes to $LAB_BUILD_DIR/test-output/.
- With pytest-xdist (-n N --dist loadgroup): each test module runs whole in one worker (each
  class of a module with CLASSES_APART = True), the modules, classes and binaries handed out
  longest first, by what their tests took last time ($LAB_BUILD_DIR/test-seconds.json, else the
  table tests/test-seconds.json: a fresh clone's).
- ALONE_MODULES run last, and alone: each of their tests holds a lock that every other test
  shares (test_load_hangs keeps every core busy on purpose; its timeouts are tested under its own
  load, not under the other workers').
- Two tiers. `make test` is the gate CI runs (10 minutes on its 2 cores); `make test-full` (here:
  LAB_TEST_FULL=1) adds the tests that grade a whole corpus or a whole deployment end to end. A
  module or a class says it is one of them with FULL_SUITE = "what it runs" at its top; under
  `make test` each of its tests is skipped with that reason (pytest's -rs lists them).
- The summary ends the run: a row per suite, the Criterion tests' skip reasons with their counts
  (pytest's -rs lists the Python tests'), each failed test with its first message, for
  TEST_SRC=labs one line per lab, and last "summary: N passed, N failed, N skipped", counting
  each Criterion test as one test.
"""
import collections
import contextlib
import fcntl
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED_SECONDS = os.path.join(ROOT, "tests", "test-seconds.json")
ALONE_MODULES = ("test_load_hangs",)
UNKNOWN_SECONDS = 0.2
FULL_ONLY = "the full suite only (make test-full)"  # the start of a full-suite test's skip reason
MESSAGES_PER_FAILURE = 3

# Criterion's own lines in its --verbose output: a test starts, ends, or says more.
CRITERION_LINE = re.compile(r"\[(----|====|RUN |PASS|FAIL|SKIP|WARN|ERR )\] ")
TEST_START = re.compile(r"\[RUN \] (\S+)\s*$")
TEST_END = re.compile(r"\[(PASS|FAIL|SKIP)\] (\S+): ")
# A report of a CUDA error or of CPU mode (out of bounds, a barrier, a warp operation, a timeout)
REPORT_LINE = re.compile(r"CPU mode: |CUDA error|cudaError[A-Z]")


def build_dir():
    return os.environ.get("LAB_BUILD_DIR") or os.path.join(ROOT, "build")


def short(line, limit=300):
    return line if len(line) <= limit else line[:limit - 3] + "..."


def suite_name(binary):
    """A Criterion binary's row name: its file name, marked "labs: " for the student's kernel
    tests (build/tests/labs/kernels_03_kogge_stone)."""
    name = os.path.basename(binary)
    return f"labs: {name}" if os.path.basename(os.path.dirname(os.path.abspath(binary))) == "labs" else name


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


def read_tap(tap_text, printed):
    """(passed, failed, skipped, skip reasons, [(test, [first messages])]) of a Criterion TAP
    report; printed: printed_lines of its output, for a failed test without an assertion."""
    passed = failed = skipped = 0
    reasons, failures = [], []
    for line in tap_text.splitlines():
        m = re.match(r"(not ok|ok) - (\S+)(.*)", line)
        if not m:
            # Criterion's YAML block under a failed test: "      Assertion failed: <msg>", the
            # latest failure first
            msg = re.match(r"\s+Assertion failed: (.*)", line)
            if msg and failures:
                failures[-1][1].insert(0, msg.group(1).strip())
            continue
        if m.group(1) == "not ok":
            failed += 1
            crash = re.search(r"unexpected signal after (\S+?)(\[|$)", m.group(3))
            said = printed.get(m.group(2))
            messages = [f"crashed (a signal) after {crash.group(1)}" + (f"; it printed: {said}" if said else "")] \
                if crash else []
            failures.append((m.group(2), messages, said))
        elif "# SKIP" in m.group(3):
            skipped += 1
            reasons.append(m.group(3).split("# SKIP", 1)[1].strip())
        else:
            passed += 1
    failures = [(t, (msgs or ([said] if said else []))[:MESSAGES_PER_FAILURE]) for t, msgs, said in failures]
    return passed, failed, skipped, reasons, failures


def run_criterion(binary, log_path):
    """Runs one Criterion binary (its output into log_path); the dict the summary reads: passed,
    failed, skipped, reasons, failures [(test, [messages])]. A binary that exits with an error
    without a failed test (a crash before its report) counts as one failure."""
    tap = os.path.abspath(binary) + ".tap"
    with contextlib.suppress(FileNotFoundError):
        os.remove(tap)
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    proc = subprocess.run([binary, "--short-filename", "--verbose", f"--tap={tap}"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, encoding="utf-8", errors="replace")
    with open(log_path, "w", encoding="utf-8") as f:
        f.write(proc.stdout)
    try:
        with open(tap, encoding="utf-8", errors="replace") as f:
            tap_text = f.read()
    except OSError:
        tap_text = ""
    p, f, s, reasons, failures = read_tap(tap_text, printed_lines(proc.stdout))
    if proc.returncode != 0 and f == 0:
        said = [ln.strip() for ln in proc.stdout.splitlines() if REPORT_LINE.search(ln)]
        f, failures = 1, failures + [("(the binary)", [f"exited with status {proc.returncode} without a failing "
                                                       "test" + (f": {short(said[0])}" if said else "")])]
    return {"passed": p, "failed": f, "skipped": s, "reasons": reasons, "failures": failures}


class CriterionFailed(Exception):
    pass


class CriterionItem(pytest.Item):
    """A Criterion binary: its tests run as one item (see the module's docstring)."""

    def runtest(self):
        log_path = os.path.join(build_dir(), "test-output", suite_name(self.path).replace("labs: ", "labs-") + ".log")
        result = run_criterion(str(self.path), log_path)
        self.user_properties.append(("criterion", result))
        if result["failed"]:
            raise CriterionFailed(result, log_path)
        if result["skipped"] and not result["passed"]:
            pytest.skip(f"all {result['skipped']} tests: {result['reasons'][0]}")

    def repr_failure(self, excinfo):
        if not isinstance(excinfo.value, CriterionFailed):
            return super().repr_failure(excinfo)
        result, log_path = excinfo.value.args
        total = result["passed"] + result["failed"]
        lines = [f"{result['failed']} of {total} tests failed:"]
        for test, messages in result["failures"]:
            lines.append(f"  {test}: {messages[0] if messages else '(no message)'}")
            lines += [f"      {m}" for m in messages[1:]]
        lines.append(f"the binary's whole output: {os.path.relpath(log_path)}")
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, None, suite_name(self.path)


class CriterionFile(pytest.File):
    def collect(self):
        yield CriterionItem.from_parent(self, name=suite_name(self.path))


def is_criterion_binary(path):
    return path.suffix == "" and os.access(path, os.X_OK) and path.is_file()


def pytest_collect_file(file_path, parent):
    # only binaries named on the command line: pytest calls this for every file it walks, too
    if is_criterion_binary(file_path) and parent.session.isinitpath(file_path):
        return CriterionFile.from_parent(parent, path=file_path)
    return None


def pytest_configure(config):
    # one hardware queue per test process, as the grader's runs have (gradelib/evaluate.py:
    # RUN_ENV): CUDA contexts with fewer queues start 2.5x faster when many start at once
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    # the grader's end-to-end tests share one build of the harness and the references per course
    # tree (grader/gradelib/build.py: the cache), under its lock
    os.environ.setdefault("LAB_GRADER_CACHE", os.path.join(build_dir().rstrip("/").removesuffix("/cpu"),
                                                           "grader-cache"))
    config.course_results = {}


_CONFIG = {}  # the session's config (pytest_runtest_logreport is given only the report)


# --- grouping, order and the lone modules -------------------------------------------------------

def recorded_seconds():
    """{group (group_of: a module, a class or a binary): seconds its tests took}: the table in
    tests/, updated by the last run's record."""
    seconds = {}
    for path in (SEED_SECONDS, os.path.join(build_dir(), "test-seconds.json")):
        with contextlib.suppress(OSError, ValueError):
            with open(path, encoding="utf-8") as f:
                seconds.update({k: float(v) for k, v in json.load(f).items()})
    return seconds


def full_suite_reason(item):
    """Why item runs only in the full suite (its class's or module's FULL_SUITE), or None."""
    for owner in (getattr(item, "cls", None), getattr(item, "module", None)):
        why = getattr(owner, "FULL_SUITE", None)
        if why:
            return why
    return None


def full_suite():
    return os.environ.get("LAB_TEST_FULL") == "1"


def module_name(item):
    return os.path.splitext(os.path.basename(str(item.path)))[0]


def group_of(item):
    """The unit of work item belongs to: its module (a module's tests share its work folders and
    its class and module fixtures: two of its classes in two workers at once would fight over
    them), its class in a module that says its classes share nothing (CLASSES_APART = True at
    its top: each may run in a worker of its own), or a Criterion binary."""
    parts = item.nodeid.split("::")
    if len(parts) > 2 and getattr(getattr(item, "module", None), "CLASSES_APART", False):
        return "::".join(parts[:2])
    return parts[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group marks
def pytest_collection_modifyitems(session, config, items):
    """Each item in its group (an xdist_group mark), the groups longest first, the lone modules'
    last; each group's items in the order they were collected. Without LAB_TEST_FULL=1 the full
    suite's tests are skipped, each saying why."""
    seconds = recorded_seconds()
    groups = collections.OrderedDict()
    for item in items:
        why = None if full_suite() else full_suite_reason(item)
        if why:
            item.add_marker(pytest.mark.skip(reason=f"{FULL_ONLY}: {why}"))
        groups.setdefault(group_of(item), []).append(item)

    def key(name):
        alone = any(module_name(i) in ALONE_MODULES for i in groups[name])
        return (alone, -seconds.get(name, UNKNOWN_SECONDS * len(groups[name])))

    order = sorted(groups, key=key)
    items[:] = [i for name in order for i in groups[name]]
    for name in order:
        for item in groups[name]:
            item.add_marker(pytest.mark.xdist_group(name=name))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A lone module's test holds the machine's test lock alone (unless it is skipped: the full
    suite's, under make test); every other test shares it."""
    path = os.path.join(build_dir(), "test-alone.lock")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    alone = module_name(item) in ALONE_MODULES and not item.get_closest_marker("skip")
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --- what each test took, and the summary (in the process that reports: xdist's controller) -----

def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):
        return
    nodeid, _, group = report.nodeid.partition("@")  # xdist adds "@group" to a grouped test's id
    r = config.course_results.setdefault(nodeid, {"seconds": 0.0, "outcome": "passed", "criterion": None,
                                                  "group": group or nodeid.split("::")[0]})
    r["seconds"] += report.duration
    if report.failed:
        r["outcome"] = "failed"
    elif report.skipped and r["outcome"] != "failed":
        r["outcome"] = "skipped"
        r["reason"] = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    for name, value in report.user_properties:
        if name == "criterion":
            r["criterion"] = value
    if report.failed and report.when != "teardown" and "message" not in r:
        r["message"] = failure_line(report)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG["config"] = session.config


def failure_line(report):
    """A failed Python test's one line: its exception's line."""
    text = str(report.longrepr) if report.longrepr is not None else ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.match(r"E\s+", ln):
            return short(re.sub(r"^E\s+", "", ln))
    return short(lines[-1]) if lines else "(no message)"


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not config.course_results:
        return
    took = collections.Counter()
    for r in config.course_results.values():
        if r["outcome"] != "skipped":  # a group the gate skips keeps what the full suite took
            took[r["group"]] += r["seconds"]
    seconds = recorded_seconds()
    seconds.update({k: round(t, 1) for k, t in took.items()})
    with contextlib.suppress(OSError):
        os.makedirs(build_dir(), exist_ok=True)
        with open(os.path.join(build_dir(), "test-seconds.json"), "w", encoding="utf-8") as f:
            json.dump(dict(sorted(seconds.items())), f, indent=0)


def lab_verdicts(rows):
    """For the student's kernel tests: one line per lab, from (name, result) of
    build/tests/labs/kernels_* binaries."""
    lines = []
    for name, r in rows:
        p, f, s, reasons = r["passed"], r["failed"], r["skipped"], r["reasons"]
        lab = name.split("kernels_", 1)[1]
        unwritten = next((x.split("variants not written yet: ", 1)[1].split(" (", 1)[0]
                          for x in reasons if "variants not written yet: " in x), None)
        if f:
            verdict = f"FAILED ({f} of {p + f} tests; their first messages are under 'failed')"
        elif any("not implemented yet" in x for x in reasons):
            verdict = "not implemented yet (skipped: its scan.cu still returns LAB_NOT_IMPLEMENTED)"
        elif any(x.startswith("no CUDA device") for x in reasons):
            verdict = "NOT RUN: no CUDA device (CPU=1 runs the tests in CPU mode)"
        else:
            verdict = f"passed ({p} test{'s' if p != 1 else ''}" + (f", {s} skipped)" if s else ")")
        if unwritten and not f:
            verdict += f"; not written yet: {unwritten}"
        if os.environ.get("LAB_TEST_PART"):  # make test ... PART=x: what was tested, said
            verdict += f" [PART={os.environ['LAB_TEST_PART']}: only its variants]"
        lines.append(f"  labs/{lab:24} {verdict}")
    return lines


def summary_lines(results):
    """The summary's lines from {node id: result} (pytest_runtest_logreport's)."""
    rows, student, reasons, failures = [], [], collections.Counter(), []
    py = [0, 0, 0]
    for nodeid, r in results.items():
        c = r["criterion"]
        if c is None:
            py[("passed", "failed", "skipped").index(r["outcome"])] += 1
            if r["outcome"] == "failed":
                failures.append((nodeid, r.get("message", "(no message)")))
            continue
        name = nodeid.split("::")[-1]
        rows.append((name, c["passed"], c["failed"], c["skipped"]))
        if name.startswith("labs: "):
            student.append((name, c))
        reasons.update(c["reasons"])
        failures += [(f"{name}: {t}", m[0] if m else "(no message)") for t, m in c["failures"]]
    if sum(py):
        rows.append(("python (tests/, grader/tests/)", *py))
    lines = ["", f"{'suite':40} {'passed':>7} {'failed':>7} {'skipped':>8}"]
    lines += [f"{n:40} {p:7d} {f:7d} {s:8d}" for n, p, f, s in rows]
    if reasons:
        lines.append("Criterion tests skipped, by reason" + (" (the Python tests' are above):" if sum(py) else ":"))
        lines += [f"  {count:4d} x {reason}" for reason, count in reasons.most_common()]
    if failures:
        lines.append("failed (each test's first message; the details are above):")
        lines += [f"  {name}: {message}" for name, message in failures]
    if student:
        lines.append("your labs (TEST_SRC=labs):")
        lines += lab_verdicts(sorted(student))
    full = sum(1 for r in results.values() if r["criterion"] is None and r["outcome"] == "skipped"
               and FULL_ONLY in r.get("reason", ""))
    if full:
        lines.append(f"{full} of the skipped tests are the full suite's: make test-full runs them too")
    totals = [sum(row[k] for row in rows) for k in (1, 2, 3)]
    lines.append(f"summary: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return lines


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """The summary, after pytest's own (its skip reasons, -rs): its last line is the verdict."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if hasattr(config, "workerinput") or not getattr(config, "course_results", None) or reporter is None:
        return
    for line in summary_lines(config.course_results):
        reporter.write_line(line)
    sys.stdout.flush()
