#!/usr/bin/env python3
"""Runs the whole test suite and prints one summary: Criterion binaries (their TAP reports are
counted), then the Python unittest suites in tests/ and grader/tests/.

Usage: run_tests.py --build DIR BINARY...       (make test calls it)
Exit code: 0 when nothing failed, 1 otherwise.
The last line is "summary: N passed, N failed, N skipped"; skip reasons are listed above it.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_criterion(binary, build):
    """Runs one Criterion binary; returns (passed, failed, skipped, skip reasons)."""
    name = os.path.basename(binary)
    tap = os.path.join(build, "tests", name + ".tap")
    if os.path.exists(tap):
        os.remove(tap)
    print(f"==> {name}", file=sys.stderr, flush=True)
    proc = subprocess.run([binary, "--short-filename", f"--tap={tap}"], cwd=ROOT)
    passed = failed = skipped = 0
    reasons = []
    if os.path.exists(tap):
        with open(tap, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"(not ok|ok) - (\S+)(.*)", line)
                if not m:
                    continue
                if m.group(1) == "not ok":
                    failed += 1
                elif "# SKIP" in m.group(3):
                    skipped += 1
                    reasons.append(m.group(3).split("# SKIP", 1)[1].strip())
                else:
                    passed += 1
    if proc.returncode != 0 and failed == 0:
        failed = 1  # the binary itself failed (crashed before reporting, say)
        print(f"{name}: exited with status {proc.returncode} without a failing test", file=sys.stderr)
    return passed, failed, skipped, reasons


def run_unittests():
    """Discovers tests/test_*.py and grader/tests/test_*.py; returns the same tuple."""
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for d in ("tests", os.path.join("grader", "tests")):
        path = os.path.join(ROOT, d)
        if os.path.isdir(path) and any(f.startswith("test_") and f.endswith(".py") for f in os.listdir(path)):
            suite.addTests(loader.discover(path, pattern="test_*.py", top_level_dir=path))
    if suite.countTestCases() == 0:
        return 0, 0, 0, []
    print("==> python unittest", file=sys.stderr, flush=True)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    return passed, failed, skipped, [reason for _, reason in result.skipped]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--no-python", action="store_true", help="skip the Python unittest suites")
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()

    totals = [0, 0, 0]
    reasons = collections.Counter()
    rows = []
    for b in args.binaries:
        p, f, s, r = run_criterion(b, args.build)
        rows.append((os.path.basename(b), p, f, s))
        reasons.update(r)
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]
    p, f, s, r = (0, 0, 0, []) if args.no_python else run_unittests()
    if not args.no_python:
        rows.append(("python unittest", p, f, s))
    reasons.update(r)
    totals = [totals[0] + p, totals[1] + f, totals[2] + s]

    print("")
    print(f"{'suite':34} {'passed':>7} {'failed':>7} {'skipped':>8}")
    for name, p, f, s in rows:
        print(f"{name:34} {p:7d} {f:7d} {s:8d}")
    if reasons:
        print("skipped, by reason:")
        for reason, count in reasons.most_common():
            print(f"  {count:4d} x {reason}")
    print(f"summary: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
