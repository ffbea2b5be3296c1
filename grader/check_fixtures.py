#!/usr/bin/env python3
"""Grades the bad submissions in grader/fixtures/submissions/ and checks that each gets the
diagnosis recorded beside it (grader/fixtures/submissions/NAME/expected.json). Prints a table (fixture, lab, expected,
got, points, verdict). Each fixture is written out first (grader/fixturelib.py: most are a patch
against a reference solution); one whose patch no longer applies is a wrong row, named.

Usage: check_fixtures.py [--cpu [--no-nvcc]] [--only NAME ...] [--work DIR] [--json FILE]
                         [--record FILE] [--results DIR] [--check-only] [--isolated] [--shards N]
--no-nvcc grades in CPU mode as the Gradescope package does, nvcc hidden (NVCC=/nonexistent/nvcc):
no nvcc build and no nvcc checks beside CPU mode's own (where nvcc is installed, CPU mode builds
every lab with nvcc as well, which about doubles the time of a fixture); CPU mode's own checks
then all run, so a static note saying one was skipped or not run makes a fixture's row wrong.
The fixtures that need a GPU are graded first (a separate batch), so a run cut short still has
their results; --check-only re-reads the results of such a run from --results DIR.
CPU mode on a machine with many cores grades a batch as several grade.py batches at once, each a
share of the fixtures of about equal cost (--shards; default one per 4 usable CPUs, so one on a
small machine), with its share of the CPUs, its own work folder and the shared build cache; the
verdicts are the same.
Exit codes: 0 every fixture diagnosed as expected, 1 some were not, 2 usage error,
3 infrastructure error (as grade.py).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
sys.path.insert(0, HERE)

import fixturelib  # noqa: E402
from gradelib.build import find_nvcc  # noqa: E402
from gradelib.resources import usable_cpus  # noqa: E402
from gradelib.status import STOPPED, Status  # noqa: E402


# CPU mode: one grade.py shard per this many usable CPUs (each builds and runs its fixtures with
# that many jobs: one fixture's build is one lab, mostly one compiler at a time, so a single
# grade.py leaves most of a large machine idle).
CPUS_PER_SHARD = 4
# A fixture's cost by its lab, for splitting them (split): one of lab 10 took about 10 times as
# long as most (its largest cases take seconds in CPU mode), of lab 09 or 08 two to four times
# (2-core machine, CPU mode with nvcc, 2026-12).
LAB_COST = {"10": 10, "09": 4, "08": 2}
# The CPU time (seconds) a correctness case may take, for the labs without a limit of their own
# in the config (the fixture that never ends is timed out after it, then again alone after 3x).
# CPU mode's honest cases take at most about 1.2 s of CPU time there (its sizes are capped), a
# GPU's up to a few (the host's fill and check of 2^28 elements); a case over the limit is only run
# again alone, so a tight limit costs time, never a verdict. The infinite loop costs 5x the limit.
CASE_TIMEOUT_S = 8
CPU_CASE_TIMEOUT_S = 2


def lab_text(lab):
    return json.dumps(lab)


def check(lab, expect, mode="gpu"):
    """[] when the lab result matches expect, else the reasons it does not. A bad submission
    must never get full marks; one marked full_marks (an honest submission that the grader must
    not fail, such as a source file in Latin-1) must get them. expect's sanitizer is checked in
    gpu mode only: CPU mode has no sanitizer, so it grades none."""
    expect = {**expect, **expect.get("by_mode", {}).get(mode, {})}  # a mode's own verdict wins
    bad = []
    c = lab["correctness"]
    kinds = {f["kind"] for f in c["failures"]}
    if "status" in expect and lab["status"] != expect["status"]:
        bad.append(f"status is {lab['status']!r}, expected {expect['status']!r}")
    if "kind" in expect and expect["kind"] not in kinds:
        bad.append(f"no {expect['kind']} failure (got {sorted(kinds) or 'none'})")
    if "contains" in expect and expect["contains"] not in lab_text(lab):
        bad.append(f"the result does not mention {expect['contains']!r}")
    if "not_contains" in expect and expect["not_contains"] in lab_text(lab):
        bad.append(f"the result mentions {expect['not_contains']!r}")
    if "correctness_points" in expect and c["points"] != expect["correctness_points"]:
        bad.append(f"correctness points are {c['points']}, expected {expect['correctness_points']}")
    if "contains_any" in expect and not any(t in lab_text(lab) for t in expect["contains_any"]):
        bad.append(f"the result mentions none of {expect['contains_any']!r}")
    if "sanitizer" in expect and mode == "gpu" and lab["sanitizer"]["status"] != expect["sanitizer"]:
        bad.append(f"sanitizer is {lab['sanitizer']['status']!r}, expected {expect['sanitizer']!r}")
    if "speed_points" in expect and lab["speed"]["points"] != expect["speed_points"]:
        bad.append(f"speed points are {lab['speed']['points']}, expected {expect['speed_points']}")

    def failed_n(f):  # the n of the call that failed: a later call of a case may have its own
        m = re.search(r"^call \d+ of \d+: .*\(n=(\d+)", f["message"].split(": ", 1)[-1])
        return int(m.group(1)) if m else f["n"]

    if "all_pass_up_to" in expect:
        if c["total"] == 0:
            bad.append("no correctness cases ran")
        low = [f for f in c["failures"] if failed_n(f) <= expect["all_pass_up_to"]]
        if low:
            bad.append(f"a case at n={low[0]['n']} failed: {low[0]['message']}")
    if expect.get("powers_of_two_pass"):
        p2 = [f for f in c["failures"] if failed_n(f) and failed_n(f) & (failed_n(f) - 1) == 0]
        if p2:
            bad.append(f"failed at the power of two n={p2[0]['n']}")
    full = bool(lab["max_points"]) and lab["points"] >= lab["max_points"]
    if expect.get("full_marks"):  # an honest submission: anything less is a false alarm
        if not full:
            bad.append(f"it did not get full marks ({lab['points']:g}/{lab['max_points']:g}): "
                       f"{lab.get('summary') or got_text(lab)}")
    elif full:
        bad.append("it got full marks")
    return bad


def got_text(lab):
    if lab["status"] in STOPPED:
        return lab["summary"]
    c = lab["correctness"]
    parts = [f"{c['passed']}/{c['total']} cases"]
    if c["failures"]:
        parts.append(c["failures"][0]["message"])
    if lab["sanitizer"]["status"] == Status.FAILED:
        parts.append("sanitizer: " + lab["sanitizer"]["note"])
    if lab["speed"]["status"] in (Status.GRADED, Status.FAILED):
        parts.append(f"speed {lab['speed']['points']}/{lab['speed']['max']}: {lab['speed']['note']}")
    return "; ".join(parts)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="store_true", help="CPU mode: only the fixtures marked for it")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these fixtures")
    ap.add_argument("--work", default=None, help="grade.py's private build folder")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON here")
    ap.add_argument("--record", metavar="FILE",
                    help="also write the verdicts as a record (grader/fixtures/verdicts/: the mode, the device, "
                         "the commit, and each fixture's verdict with its fingerprint)")
    ap.add_argument("--config", help="grade.py --config")
    ap.add_argument("--results", metavar="DIR", help="keep grade.py's results here")
    ap.add_argument("--check-only", action="store_true", help="only check the results already in --results")
    ap.add_argument("--isolated", action="store_true", help="grade.py --isolated: one process per graded run")
    ap.add_argument("--no-nvcc", action="store_true",
                    help="CPU mode: hide nvcc from grade.py, as on Gradescope (no nvcc build beside CPU mode's)")
    ap.add_argument("--shards", type=int, metavar="N",
                    help="CPU mode: grade.py batches at once, each with a share of the fixtures and of the CPUs "
                         f"(default: one per {CPUS_PER_SHARD} usable CPUs; 1: one grade.py, as on a GPU)")
    args = ap.parse_args(argv)
    if args.shards is not None and args.shards < 1:
        ap.error("--shards must be at least 1")
    if args.no_nvcc and not args.cpu:
        ap.error("--no-nvcc needs --cpu (a GPU grade builds with nvcc)")
    return args


def hide_nvcc(args):
    """--no-nvcc: nvcc hidden from this process and every grade.py it starts (find_nvcc reads
    NVCC first, and the Makefile's CPU mode compiles with g++)."""
    if args.no_nvcc:
        os.environ["NVCC"] = "/nonexistent/nvcc"


def chosen_fixtures(args, expected):
    """The names of the fixtures to grade in this mode (and --only), or None after a usage error
    (printed). In CPU mode, those that need an nvcc object only where nvcc is installed."""
    modes = {"cpu" if args.cpu else "gpu"}
    if args.cpu:
        if find_nvcc():  # CPU mode then checks an nvcc object too (grader/README.md)
            modes.add("cpu+nvcc")
        else:
            skipped = [n for n in sorted(expected) if "cpu+nvcc" in expected[n]["modes"]]
            print(f"check_fixtures: nvcc not found, so {len(skipped)} fixtures that need an nvcc "
                  f"object are not graded: {', '.join(skipped)}", file=sys.stderr)
    names = [n for n in sorted(expected) if modes & set(expected[n]["modes"])]
    if args.only:
        unknown = [n for n in args.only if n not in expected]
        if unknown:
            print(f"check_fixtures: unknown fixture {unknown[0]} (known: {', '.join(sorted(expected))})",
                  file=sys.stderr)
            return None
        other = [n for n in args.only if n not in names]
        if other:
            print(f"check_fixtures: not graded in {'cpu' if args.cpu else 'gpu'} mode: "
                  + ", ".join(f"{n} (its modes: {', '.join(expected[n]['modes'])})" for n in other),
                  file=sys.stderr)
        names = [n for n in names if n in args.only]
    if args.check_only and not args.results:
        print("check_fixtures: --check-only needs --results DIR", file=sys.stderr)
        return None
    return names


def grade_fixtures(args, names, expected, results, tmp, unpatched):
    """Grades the fixtures with grade.py into results: those that need a GPU first (a batch of
    their own, so that a run cut short still has their results). A fixture whose patch does not
    apply is not graded: unpatched gets its name and why. Returns grade.py's exit code when it
    failed (2, 3, or 1 for anything else), else None."""
    gpu_only = [n for n in names if "cpu" not in expected[n]["modes"] and not args.cpu]
    groups = [gpu_only, [n for n in names if n not in gpu_only]]
    for i, group in enumerate(groups):
        if args.check_only or not group:
            continue
        shards = split(group, expected, shard_count(args, len(group)))
        folders = [os.path.join(tmp, f"submissions{i}" + (f"-{k}" if len(shards) > 1 else ""))
                   for k in range(len(shards))]
        for subs, share in zip(folders, shards):
            for n in share:
                try:
                    fixturelib.write(n, os.path.join(subs, n))
                except fixturelib.PatchError as e:
                    print(f"check_fixtures: {e}", file=sys.stderr)
                    unpatched[n] = str(e)
        folders = [f for f in folders if os.path.isdir(f)]
        if not folders:
            continue
        cmd = [sys.executable, os.path.join(HERE, "grade.py"), "--results", results, "--only-submitted",
               "--force", "--seed", "1", "--config", fixture_config(args, tmp)]
        cmd.append("--cpu" if args.cpu else "--gpu")
        if args.isolated:
            cmd.append("--isolated")
        rc = run_grade(cmd, args, folders, tmp)
        if rc != 0:
            print(f"check_fixtures: grade.py exited with {rc}", file=sys.stderr)
            return rc if rc in (2, 3) else 1
    return None


def shard_count(args, count):
    """How many grade.py batches at once grade count fixtures: --shards, else in CPU mode one
    per CPUS_PER_SHARD usable CPUs; always 1 on the GPU (one device: the speed stage must have
    it alone); never more than the fixtures."""
    if not args.cpu:
        return 1
    n = args.shards or usable_cpus() // CPUS_PER_SHARD
    return max(1, min(n, count))


def split(names, expected, n):
    """names in n shares of about equal cost (LAB_COST of each fixture's lab), the costliest
    first onto the share with the least so far; each share in name order."""
    shares, load = [[] for _ in range(n)], [0] * n

    def cost(name):
        return LAB_COST.get(expected[name]["lab"][:2], 1)

    for name in sorted(names, key=lambda name: (-cost(name), name)):
        k = load.index(min(load))
        shares[k].append(name)
        load[k] += cost(name)
    return [sorted(share) for share in shares if share]


def run_grade(cmd, args, folders, tmp):
    """Runs grade.py cmd on each folder of fixtures (--submissions): one folder as one process
    (its progress on stderr), several at once, each with its share of the CPUs (--jobs,
    --gpu-jobs) and its own work folder (grade.py's work folder holds one session's builds),
    all sharing the results folder (one file per fixture; no class files) and the harness and
    reference builds (LAB_GRADER_CACHE: built once, under its lock); each one's progress goes
    to a log, shown when it fails. Returns the worst exit code (0 when all graded)."""
    if len(folders) == 1:
        cmd = cmd + ["--submissions", folders[0]] + (["--work", args.work] if args.work else [])
        return subprocess.run(cmd, stdout=subprocess.PIPE).returncode
    n = len(folders)
    work = os.path.abspath(args.work or os.path.join(os.path.dirname(HERE), "build", "grader"))
    env = dict(os.environ, LAB_GRADER_CACHE=os.environ.get("LAB_GRADER_CACHE") or os.path.join(work, "cache"))
    jobs = max(1, usable_cpus() // n)
    print(f"check_fixtures: {sum(len(os.listdir(f)) for f in folders)} fixtures in {n} grade.py batches "
          f"at once, {jobs} jobs each", file=sys.stderr)
    procs = []
    for k, subs in enumerate(folders):
        log = open(os.path.join(tmp, f"shard-{k}.log"), "w+", encoding="utf-8", errors="replace")
        # --shard 0/1: all of this folder, but no class files (class.csv, gradebook.csv: each
        # batch would write its own into the shared results folder)
        own = ["--submissions", subs, "--shard", "0/1", "--jobs", str(jobs), "--gpu-jobs", str(jobs),
               "--work", os.path.join(work, f"shard-{k}")]
        procs.append((subprocess.Popen(cmd + own, stdout=subprocess.DEVNULL, stderr=log, env=env), log))
    worst = 0
    for k, (p, log) in enumerate(procs):
        rc = p.wait()
        log.seek(0)
        lines = log.read().replace("\r", "\n").splitlines()
        log.close()
        if rc != 0:
            print(f"check_fixtures: batch {k + 1} of {n} exited with {rc}; its last lines:", file=sys.stderr)
            print("\n".join(lines[-20:]), file=sys.stderr)
        worst = worst or rc
    return worst


def fixture_config(args, tmp):
    """The config the fixtures are graded with: --config (default grader/config.json) with the
    default case time limit cut to CASE_TIMEOUT_S (CPU_CASE_TIMEOUT_S in CPU mode), so that a
    fixture that hangs costs little; a lab's own limit (lab 10's, whose largest cases take most of
    that in CPU mode) is kept, since grade.py --case-timeout would replace it too and time those
    cases out, each then run again alone (no verdict changes, only the wasted runs). Written into
    tmp; returns its path."""
    with open(args.config or os.path.join(HERE, "config.json"), encoding="utf-8") as f:
        data = json.load(f)
    data.setdefault("defaults", {}).setdefault("timeouts", {})["case_s"] = (CPU_CASE_TIMEOUT_S if args.cpu
                                                                            else CASE_TIMEOUT_S)
    path = os.path.join(tmp, "config.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    return path


def skipped_checks(lab):
    """[] unless the lab's static note says a check was skipped or not run: with nvcc hidden
    (--no-nvcc) CPU mode runs every static check on every fixture (test_static_parity.py says the
    same of the fixtures CPU mode cannot grade), so such a note is a quiet pass."""
    note = (lab.get("static") or {}).get("note") or ""
    return [f"a static check did not run: {note}"] if re.search(r"skipped|not run", note) else []


def checked_row(name, spec, results, unpatched, quiet_pass=False):
    """The table row of one fixture from its result in results; quiet_pass: a static check that
    did not run makes it wrong (skipped_checks)."""
    try:
        if name in unpatched:
            raise fixturelib.PatchError(unpatched[name])
        with open(os.path.join(results, name + ".json"), encoding="utf-8") as f:
            res = json.load(f)
        lab = next(lab for lab in res["labs"] if lab["lab"] == spec["lab"])
        bad = check(lab, spec["expect"], res.get("mode", "gpu")) + (skipped_checks(lab) if quiet_pass else [])
        got, pts = got_text(lab), f"{lab['points']:g}/{lab['max_points']:g}"
    except fixturelib.PatchError as e:
        bad, got, pts = [f"not graded: {e}"], "-", "-"
    except (OSError, ValueError, StopIteration, KeyError) as e:
        bad, got, pts = [f"no result: {e}"], "-", "-"
    return {"fixture": name, "lab": spec["lab"], "bug": spec["bug"], "expect": spec["expect"],
            "got": got, "points": pts, "ok": not bad, "why": bad}


def record_mode(args):
    """The name of the machine kind a run grades as: "gpu", "cpu with nvcc" or "cpu without nvcc"."""
    if not args.cpu:
        return "gpu"
    return "cpu without nvcc" if args.no_nvcc or not find_nvcc() else "cpu with nvcc"


def write_record(args, rows):
    """--record FILE: the verdicts of this run, added to those FILE already holds for the same mode
    (a run of some fixtures replaces theirs only): the mode, and per fixture its verdict, points,
    diagnosis, expectation and fingerprint (fixturelib.fingerprint), the device (nvidia-smi's
    name and driver, or none), the commit and the date (grader/fixtures/verdicts/README.md)."""
    def out(cmd):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=HERE)
            return p.stdout.strip().splitlines()[0] if p.returncode == 0 and p.stdout.strip() else None
        except (OSError, subprocess.SubprocessError):
            return None
    mode = record_mode(args)
    record = {"mode": mode, "fixtures": {}}
    try:
        with open(args.record, encoding="utf-8") as f:
            old = json.load(f)
        if old.get("mode") == mode:
            record["fixtures"] = old.get("fixtures", {})
    except (OSError, ValueError):
        pass
    device = None if args.cpu else out(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    # LAB_RECORD_COMMIT: the commit of the tree graded, where this copy's git history is not its
    # own (a tree carried to a GPU machine); "none" records none
    commit = os.environ.get("LAB_RECORD_COMMIT") or out(["git", "rev-parse", "HEAD"])
    commit, date = (None if commit == "none" else commit), time.strftime("%Y-%m-%d", time.gmtime())
    for r in rows:
        record["fixtures"][r["fixture"]] = {
            "ok": r["ok"], "points": r["points"], "got": r["got"][:300], "expect": r["expect"],
            "fingerprint": fixturelib.fingerprint(r["fixture"]), "device": device, "commit": commit, "date": date}
    with open(args.record, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


def print_table(rows):
    print("| fixture | lab | bug | diagnosis | points | verdict |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        got = r["got"].replace("|", "/").replace("\n", " ")
        if len(got) > 160:
            got = got[:157] + "..."
        verdict = "ok" if r["ok"] else "WRONG: " + "; ".join(r["why"])
        print(f"| {r['fixture']} | {r['lab'][:2]} | {r['bug']} | {got} | {r['points']} | {verdict} |")


def main(argv=None):
    args = parse_args(argv)
    hide_nvcc(args)
    try:
        expected = fixturelib.every_expected()
    except fixturelib.PatchError as e:
        print(f"check_fixtures: {e}", file=sys.stderr)
        return 2
    names = chosen_fixtures(args, expected)
    if names is None:
        return 2
    tmp = tempfile.mkdtemp(prefix="fixtures-")
    try:
        results = os.path.abspath(args.results) if args.results else os.path.join(tmp, "results")
        unpatched = {}
        rc = grade_fixtures(args, names, expected, results, tmp, unpatched)
        if rc is not None:
            return rc
        rows = [checked_row(n, expected[n], results, unpatched, quiet_pass=args.no_nvcc) for n in names]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    if args.record:
        write_record(args, rows)
    failed = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(failed)}/{len(rows)} fixtures diagnosed as expected ({'cpu' if args.cpu else 'gpu'} mode)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
