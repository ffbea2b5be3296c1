#!/usr/bin/env python3
"""Runs the whole test suite and prints one summary: Criterion binaries (their TAP reports are
counted), then the Python unittest suites in tests/ and grader/tests/.

Usage: run_tests.py [--src solutions|labs] [--no-python] [--log FILE] [--verbose] BINARY...
(make test calls it)
--src says which code the kernel-test binaries were linked with (make test TEST_SRC=labs: the
student's labs/); with labs, one line per lab says whether it passed, failed or is not written yet.
Everything the tests print goes to the log (--log, default $LAB_BUILD_DIR/test.log); the terminal
gets one line per suite and the summary (--verbose: the tests' own output instead of the log).
Exit code: 0 when nothing failed, 1 otherwise.
The last line is "summary: N passed, N failed, N skipped"; above it, the skip reasons, one line
per failed test (its name and first message) and the path of the log.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
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


def run_unittests(log=None):
    """Discovers tests/test_*.py and grader/tests/test_*.py, their report into log (None: the
    terminal); returns the same tuple as run_criterion."""
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for d in ("tests", os.path.join("grader", "tests")):
        path = os.path.join(ROOT, d)
        if os.path.isdir(path) and any(f.startswith("test_") and f.endswith(".py") for f in os.listdir(path)):
            suite.addTests(loader.discover(path, pattern="test_*.py", top_level_dir=path))
    if suite.countTestCases() == 0:
        return 0, 0, 0, [], []
    if log:
        print("==> python unittest", file=log, flush=True)
    result = unittest.TextTestRunner(stream=log or sys.stderr, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    failures = []
    for test, trace in result.failures + result.errors:
        failures.append((f"python: {test.id()}", [exception_line(trace)]))
    failures += [(f"python: {test.id()}", ["unexpected success"]) for test in result.unexpectedSuccesses]
    return passed, failed, skipped, [reason for _, reason in result.skipped], failures


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
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()
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
        # the grader's end-to-end tests share one build of the harness and the references per
        # course tree (grader/gradelib/build.py: the cache), instead of one per test's work folder
        os.environ.setdefault("LAB_GRADER_CACHE", os.path.join(
            (os.environ.get("LAB_BUILD_DIR") or os.path.join(ROOT, "build")).rstrip("/").removesuffix("/cpu"),
            "grader-cache"))
        p, f, s, r, fl = run_unittests(log)
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
