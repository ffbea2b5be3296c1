#!/usr/bin/env python3
"""bench_grader.py — how long grading a class takes (`make bench-grader`).

Makes N synthetic submissions in a temporary folder, a mix of what a class hands in:
  full     every lab from solutions/
  partial  the first half of the labs from solutions/, the rest the untouched skeletons
  broken   the solutions with one lab replaced by a buggy submission of the grader's fixtures
           (grader/fixtures/submissions/: a compile error, a missing barrier, a write past n,
           a wrong last tile total, a kernel that hangs, ...)
then grades them with `grade.py --submissions` (one GPU, or --gpus; --cpu for CPU mode) and
prints the wall time of every submission (its result's elapsed_s), of the whole class, the
GPUs used and submissions per hour (and the steady state: the rate from the first result to the
last, which compares classes on different GPUs, cut ones too), and how many lab processes a
submission started (over the submissions graded, for a class cut short; from the
grader's trace, LAB_GRADER_TRACE: its own file unless that is set): on a GPU each one but a host
lab's creates a CUDA context, and a machine starts only so many a second whatever its GPU count
(grader/dev/start_rate.sh measures that rate; 3600 * rate / starts is the most submissions an
hour the machine can grade), how often the speed stage's GPU watch asked who else uses the
GPU and what those asks took (NVML, or nvidia-smi with LAB_GRADER_NVML=0 or where NVML is missing),
and where the speed stage's wall time went (its timed processes, the watch, the rest).

--part K/M grades only the K-th of M parts of the class, a run of consecutive submissions (the
K-th M-th of them: with 100 in 10 parts, part 3 is s020-s029; a run of 10 is the class's mix of
kinds exactly, so parts of 10 or 20 each have it), so that a class too long for one sitting (100 submissions on one GPU
take most of an hour) can be measured in M sittings on the same kind of machine, each written
with --json; --merge FILE ... then prints the whole class from the parts: every submission's
row, the class's wall time as the sum of the parts' (the parts graded back to back on one
machine; each part starts cold, so the sum overstates the class by about one build a part),
submissions an hour from that, and every submission's verdicts against the isolated ones of its
lab twins from any part graded with --check-isolated or from an --isolated-only check (below:
the first 20 submissions hold every lab content, so checking part 1 of 5 checks the class). The
parts must be of the same class (--n,
--labs, --seed, mode and GPUs) and hold each submission exactly once (exit 2 otherwise, naming
the submissions in none or in two), in parts of any size: a half whose machine was lost can be
graded again as two quarters (--part 1/2 with --part 3/4 and --part 4/4).

A class of N also measures the classes of 10, 20 and 40 of its seed: those are its first
submissions, byte for byte, graded with the same cases; the line "the class's first 10 / 20 / 40
submissions graded in ..." gives when each of them was done (from the results' write times),
so one class of 100 on one GPU (or its part 1) gives every class size's wall time.

--check-isolated grades the class again with `grade.py --isolated` (one process per graded run:
the slow way the shared processes must agree with; on the GPUs of --isolated-gpus, default
--gpus) on the same seed, and compares every lab's verdict: its status, its correctness,
sanitizer and static points, and its speed status (the speed points are a measurement, so they
may differ by the noise of two timings). Each lab content is graded again once (--isolated-all:
every submission, whole): a lab is built and run as a binary of its own, from its own files and
those of the labs it links (lab 10: 08 and 07, common/contract.json), and a case's inputs depend
on the seed, the lab, n and the distribution, never on the submission (gradelib/evaluate.py:
case_seed), so two labs of the same files (lab_contents) get the same verdict in whatever
submission. The check grades each in a submission of its own, with --only-submitted, and every
submission's shared-process verdict of each lab is compared with its lab twin's. The generated
class has 21 lab contents (the solutions' 10, the skeletons of labs 06-10, one per planted bug),
so the check costs about one and a half submissions however large the class, spread over 17
small submissions (--isolated-gpus shares them out). Exit code: grade.py's, or 6 when a verdict
differs (--merge: 7 when a part or check is a snapshot, below; 2 for files that are not one class).

--parts-on GPUS grades the class in as many parts as GPUs listed, all at once: one bench_grader
a part, with CUDA_VISIBLE_DEVICES set to its GPU and its own share of the cores, and with
--check-on GPUS the check (--isolated-only) beside them on those GPUs and a share of its own;
then the merge. On a host of 2 GPUs and 32 cores, `--parts-on 0,1 --part-cpus 16` measures a
class of 100 as two parts of 50, each a one-GPU grader on 16 cores, in the time of one part. Do
not run more than two graders at once on a host: the host's process starts are shared, and four
one-GPU graders at once each took about twice as long a submission (grader/README.md). Each
part's file and log are beside --json (<json>.part-K.json and .log; <json>.check.json and .log).

--isolated-only does only the check's grading (the lab twins of the class, or of --part, with
--isolated on --isolated-gpus) and writes it with --json, for --merge to compare every part with:
so the parts can be timed each on its own GPU while the check runs later, or on other GPUs,
without disturbing a timing. A check must be of the same labs, seed and mode, not of the same n
or on the same GPUs: the check of a class of 100 checks the class of 20 of its seed too. A check
cut short can be finished later: --checked CHECK.json skips the lab contents graded alone there.

--json is also written while grading runs, every 30 s (SNAPSHOT_S), with "running": true: what
is graded so far and when. A run whose machine is lost (a device lease, a Slurm job's end)
leaves that snapshot: --merge takes it as a part cut short there (it says so, counts the class's
wall time as a lower bound and exits 7), a check's snapshot serves --checked, and a snapshot of
a class's first 20 or 40 submissions already holds their first_wall_s.

Usage: bench_grader.py [--n 20] [--labs 01 02 ...] [--cpu] [--gpus LIST] [--isolated]
                       [--check-isolated [--isolated-gpus LIST] [--isolated-all]] [--seed S]
                       [--part K/M] [--keep] [--work DIR] [--json FILE]
       bench_grader.py --isolated-only [--isolated-gpus LIST] [--part K/M] [--checked CHECK.json ...]
                       --n N --seed S --json CHECK.json
       bench_grader.py --parts-on GPUS [--check-on GPUS] [--part-cpus N] --n N [--seed S] --json CLASS.json
       bench_grader.py --merge PART.json ... [CHECK.json ...] [--json FILE]
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/ (this file is in grader/dev/)
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import fixturelib  # noqa: E402
from gradelib.grading import course_labs, select_labs  # noqa: E402
from gradelib.contract import BUILT_ON  # noqa: E402 -- the labs a lab's binary links (lab 10: 08, 07)
from classroom.submissions import fingerprint  # noqa: E402 -- grade.py's hash of every scan.cu under a folder

# Buggy labs to plant in "broken" submissions, in turn: (fixture, what it does wrong).
BROKEN = [("compile_error", "does not compile"), ("missing_barrier", "a missing barrier"),
          ("write_past_n", "writes past n"), ("bad_last_tile_total", "a wrong last tile total"),
          ("off_by_one_tile", "an off-by-one at tile edges"), ("infinite_loop", "hangs")]
# The mix, repeated: out of every 10, 5 full, 2 partial, 3 broken.
MIX = ["full", "broken", "full", "partial", "full", "broken", "full", "partial", "full", "broken"]


def broken_labs(labs):
    """[(fixture, lab, what)] of BROKEN whose lab is graded."""
    out = []
    for fixture, what in BROKEN:
        lab = fixturelib.expected(fixture)["lab"]
        if lab in labs:
            out.append((fixture, lab, what))
    return out


def in_part(k, part, n):
    """Whether submission k (from 0) of a class of n is in part (K, M): the K-th of M runs of
    consecutive submissions, [(K-1) n / M, K n / M) rounded down."""
    return part is None or (part[0] - 1) * n // part[1] <= k < part[0] * n // part[1]


def make_class(folder, n, labs, part=None):
    """Writes the class's n submissions, or only those of part (K, M), into folder; returns
    [(name, kind, what is broken)] of those written. A submission is the same whatever the part."""
    made, bugs, broken = [], broken_labs(labs), 0
    for k in range(n):
        kind = MIX[k % len(MIX)]
        name = f"s{k:03d}-{kind}"
        if not in_part(k, part, n):
            broken += kind == "broken"
            continue
        dest = os.path.join(folder, name)
        for i, lab in enumerate(labs):
            tree = "labs" if kind == "partial" and i >= len(labs) // 2 else "solutions"
            os.makedirs(os.path.join(dest, lab))
            shutil.copyfile(os.path.join(ROOT, tree, lab, "scan.cu"), os.path.join(dest, lab, "scan.cu"))
        detail = ""
        if kind == "broken":
            nth, broken = broken, broken + 1
            if bugs:
                fixture, lab, what = bugs[nth % len(bugs)]
                with open(os.path.join(dest, lab, "scan.cu"), "wb") as f:  # a patched reference
                    f.write(fixturelib.source(fixture, lab))
            else:  # none of the fixtures' labs is graded: a compile error in the first lab
                lab, what = labs[0], "does not compile"
                with open(os.path.join(dest, lab, "scan.cu"), "a") as f:
                    f.write("\nthis is not C++;\n")
            detail = f"{lab}: {what}"
        made.append((name, kind, detail))
    return made


def lab_contents(folder, labs):
    """{lab: a hash of what its verdict depends on in the submission at folder}: the scan.cu of the
    lab's folder and of the labs it is built on (BUILT_ON), each as grade.py fingerprints a folder.
    Each lab is built and run as a binary of its own, its cases drawn from the seed, the lab, n and
    the distribution (gradelib/cases.py: case_seed), so two labs of the same hash get the same
    verdict whatever the rest of their submissions hold."""
    out = {}
    for lab in labs:
        parts = [lab] + sorted(BUILT_ON.get(lab, []))
        key = "\0".join(f"{part}:{fingerprint(os.path.join(folder, part))}" for part in parts)
        out[lab] = hashlib.sha256(key.encode()).hexdigest()[:16]
    return out


def verdicts(result):
    """{lab: its verdict} of a result: what must be the same however the runs were shared out
    (status, the correctness, sanitizer and static points, the speed status), not the timings."""
    def fields(lab, part, *keys):
        found = lab.get(part) or {}
        return [found.get(k) for k in keys]
    return {lab.get("lab"): {"status": lab.get("status"),
                             "correctness": fields(lab, "correctness", "passed", "total", "points"),
                             "sanitizer": fields(lab, "sanitizer", "status", "points"),
                             "static": fields(lab, "static", "status")[0],
                             "speed": fields(lab, "speed", "status")[0]}
            for lab in result.get("labs") or []}


def speed_lost(result):
    """{lab: [speed points lost, the lab's speed note]} of a result's labs timed below full points."""
    out = {}
    for lab in result.get("labs") or []:
        sp = lab.get("speed") or {}
        pts, most = sp.get("points"), sp.get("max")
        if sp.get("status") == "graded" and isinstance(pts, (int, float)) and isinstance(most, (int, float)) \
                and pts < most:
            out[lab.get("lab")] = [round(most - pts, 2), sp.get("note") or ""]
    return out


# The kinds whose graded labs are the solutions' own (partial: the other half is the skeletons,
# which no stage times): any speed point one of them loses is a point an honest student loses.
HONEST = ("full", "partial")


def honest_losses(rows):
    """(the honest rows with a result, [(submission, lab, points lost, note)]) of rows: every speed
    point an untouched copy of a solution lost. A row from a file written before its labs' speed
    points were recorded, full and below its maximum, is listed with lab None."""
    mine = [r for r in rows if r.get("kind") in HONEST and r.get("points") is not None]
    lost = []
    for r in mine:
        if "speed_lost" in r:
            lost += [(r["submission"], lab, pts, note) for lab, (pts, note) in sorted(r["speed_lost"].items())]
        elif r["kind"] == "full" and r["points"] < r.get("max_points", r["points"]):
            lost.append((r["submission"], None, round(r["max_points"] - r["points"], 2), ""))
    return mine, lost


def print_honest(rows):
    """The line on the honest submissions' speed points (honest_losses), and one per loss."""
    mine, lost = honest_losses(rows)
    if not mine:
        return
    print(f"honest submissions (full and partial: the solutions' own labs): {len(mine)} graded; "
          + ("none lost a point" if not lost else
             f"{len({x[0] for x in lost})} lost points"
             + (f" in {len(lost)} lab{'s' if len(lost) != 1 else ''}" if all(x[1] for x in lost) else "")))
    for sub, lab, pts, note in lost:
        print(f"  LOST: {sub} {lab or '(lab not recorded in this file)'}: {pts} points" + (f": {note}" if note else ""))


def read_rows(res, made, contents=None, since=None, cache=None):
    """One row per submission from its stored result: points, elapsed_s, phase timings, device,
    each lab's verdict, each lab's content (contents: {submission: lab_contents}, when given), and
    with since (time.time() when the grading began) finished_s: when its result was written,
    from since. cache ({path: (mtime, result)}, kept by the caller between snapshots): a result
    not written again since is not read again."""
    rows = []
    for name, kind, detail in made:
        path = os.path.join(res, name + ".json")
        try:
            done = os.path.getmtime(path)
            if cache is not None and cache.get(path, (None,))[0] == done:
                r = cache[path][1]
            else:
                with open(path, encoding="utf-8") as f:
                    r = json.load(f)
                if cache is not None:
                    cache[path] = (done, r)
        except (OSError, ValueError):  # not written yet, or being written
            r, done = {}, None
        rows.append({"submission": name, "kind": kind, "broken": detail, "points": r.get("points"),
                     "max_points": r.get("max_points"), "elapsed_s": r.get("elapsed_s"),
                     "timings": r.get("timings"), "device": r.get("device"), "verdicts": verdicts(r),
                     "speed_lost": speed_lost(r)})
        if contents:
            rows[-1]["lab_content"] = contents[name]
        if since is not None and done is not None:
            rows[-1]["finished_s"] = round(done - since, 1)
    return rows


# The class sizes whose wall time a larger class of the same seed also measures (first_walls).
FIRST = (10, 20, 40)


def first_walls(rows):
    """{K: when the first K submissions were all graded, from the start}, for each K of FIRST that
    rows (a class, or its first part, in order) hold: a class of K of the same seed is those K
    submissions, so this is its wall time on the same GPUs (builds of the next submissions
    ahead overlapped it, so it is not less than the class of K alone would take)."""
    out = {}
    for k in FIRST:
        got = [r.get("finished_s") for r in rows[:k]]
        if len(got) == k and all(t is not None for t in got):
            out[str(k)] = max(got)
    return out


def print_firsts(firsts):
    """The line of first_walls, if any."""
    if firsts:
        print("the class's first " + " / ".join(firsts) + " submissions graded in "
              + " / ".join(f"{t} s" for t in firsts.values())
              + " (each the wall time of a class of that size of the same seed on the same GPUs)")


def summarize(rows, wall, gpus, code):
    """The class's summary from its rows, its wall time, the GPUs it had and grade.py's exit code."""
    times = [r["elapsed_s"] for r in rows if r["elapsed_s"]]
    return {"submissions": len(rows), "graded": len(times), "wall_s": round(wall, 1),
            "per_submission_median_s": round(statistics.median(times), 1) if times else None,
            "per_submission_max_s": max(times) if times else None,
            "submissions_per_hour": round(3600 * len(times) / wall, 1) if wall else None,
            "gpus": gpus, "devices": sorted({r["device"] for r in rows if r["device"]}),
            "grade_exit_code": code,
            "honest_lost": [list(x) for x in honest_losses(rows)[1]]}


def print_report(rows, summary):
    """Prints the table of rows and the class's line."""
    print(f"{'submission':18} {'kind':8} {'points':>12} {'s':>7}  build/check/speed s   broken lab")
    for r in rows:
        t = r["timings"] or {}
        phases = "/".join(str(t.get(k, "-")) for k in ("build_s", "correctness_and_sanitizer_s", "speed_s"))
        pts = f"{r['points']}/{r['max_points']}" if r["points"] is not None else "no result"
        print(f"{r['submission']:18} {r['kind']:8} {pts:>12} {r['elapsed_s'] or '-':>7}  {phases:20} {r['broken']}")
    print(f"class: {summary['graded']}/{len(rows)} graded in {summary['wall_s']} s wall "
          f"({summary['submissions_per_hour']} submissions/hour); per submission median "
          f"{summary['per_submission_median_s']} s, max {summary['per_submission_max_s']} s; "
          f"GPUs: {summary['gpus']}; device: {', '.join(summary['devices']) or '-'}; "
          + (f"grade.py exit code {summary['grade_exit_code']}" if summary.get("grade_exit_code") is not None
             else "grade.py still running (a snapshot)"))
    print_honest(rows)


# The trace's kinds of lab process (evaluate.trace) that grading starts: the correctness cases,
# the sanitizer runs and the timed runs (not `scan --describe`, kind "run").
STARTED = ("case", "sanitizer", "timed")


# The trace's kinds of the speed stage's questions about the GPU's other users (gpu_guard).
WATCH = ("nvidia-smi", "nvml")


def trace_lines(trace, since):
    """The trace's lines (dicts) that ended at or after since (time.time()); None without it."""
    out = []
    try:
        with open(trace, encoding="utf-8") as f:
            for line in f:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a worker stopped mid-write
                if d.get("end", 0) >= since:
                    out.append(d)
    except OSError:
        return None
    return out


def result_times(rows):
    """When each graded row's result was written (finished_s), in row order."""
    return [r["finished_s"] for r in rows if r.get("points") is not None and r.get("finished_s") is not None]


def graded_window(lines, rows, since):
    """(lines, n): the trace's lines (trace_lines) and how many submissions they are the work
    of, for the per-submission figures. A whole class: every line, every row. A class cut short
    (some rows have no result; the device call's limit, a lost machine): the lines that ended by
    the time its last result was written (rows' finished_s, from since), over the rows graded;
    the work then in flight (one submission a worker, at most) counts too, so the figures are
    over by at most that over the graded. Dividing the whole trace by every row instead put a
    class of 40 cut after 19 at 33.9 processes a submission, half the truth."""
    done = result_times(rows)
    if lines is None or len(done) in (0, len(rows)):
        return lines, len(done)
    upto = since + max(done)
    return [d for d in lines if d.get("end", 0) <= upto], len(done)


def steady_rate(rows):
    """Submissions an hour between the class's first result and its last (rows' finished_s:
    (results - 1) / that span), the rate of a class past its cold start (the first build, not
    hidden behind a GPU phase, and each worker's first submission) and before a cut; for
    comparing classes on different GPUs, a cut one too. None with fewer than three results."""
    done = sorted(result_times(rows))
    if len(done) < 3 or done[-1] <= done[0]:
        return None
    return round(3600 * (len(done) - 1) / (done[-1] - done[0]), 1)


def process_starts(lines, submissions):
    """{kind: processes started per submission, ..., "all": their sum} from the trace's lines
    (trace_lines): a line with no shared session (a run alone) or a session's first case is one
    process; None without a trace or submissions."""
    if lines is None or not submissions:
        return None
    counts = dict.fromkeys(STARTED, 0)
    for d in lines:
        if d.get("kind") in counts and d.get("session") in (None, 1):
            counts[d["kind"]] += 1
    out = {k: round(v / submissions, 1) for k, v in counts.items()}
    out["all"] = round(sum(counts.values()) / submissions, 1)
    return out


def watch_cost(lines, submissions):
    """{"asks": the GPU watch's questions per submission, "seconds": their time per submission,
    "by": the kinds asked, "waits" and "wait_s": its waits for another job to leave the GPU per
    submission, and their time} from the trace's lines (trace_lines), or None without a trace or
    submissions."""
    if lines is None or not submissions:
        return None
    asks = [d for d in lines if d.get("kind") in WATCH]
    waits = [d for d in lines if d.get("kind") == "gpu-wait"]
    return {"asks": round(len(asks) / submissions, 1),
            "seconds": round(sum(d.get("s", 0) for d in asks) / submissions, 2),
            "by": sorted({d["kind"] for d in asks}), "waits": round(len(waits) / submissions, 1),
            "wait_s": round(sum(d.get("s", 0) for d in waits) / submissions, 2)}


# The trace's kinds written during the speed stage: its lab processes' timed runs, the GPU watch's
# asks and its waits for the GPU; any other kind (a correctness case, a sanitizer run) ends a
# stretch of speed stage.
SPEED_KINDS = ("timed",) + WATCH + ("gpu-wait",)


def covered(intervals):
    """Seconds of the union of [start, end] intervals."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def speed_time(lines, submissions):
    """Where the speed stage's wall time goes, per submission, from the trace's lines
    (trace_lines; each names its grader process, pid: one per --gpus worker): each worker's
    stretches of speed-stage lines, from the first one's start to the last one's end, and how
    much of them the timed processes, the watch's asks and its waits cover (an interval union:
    the serial lab's runs beside a GPU lab's count once); "other" is the rest, the grader's own
    time between runs. None without a trace, submissions or pids (a trace from before them)."""
    if lines is None or not submissions or any("pid" not in d for d in lines):
        return None
    out = dict.fromkeys(("span", "timed", "asks", "waits", "other"), 0.0)
    by_pid = {}
    for d in lines:
        by_pid.setdefault(d["pid"], []).append((d["end"] - d.get("s", 0), d["end"], d["kind"]))
    for events in by_pid.values():
        events.sort()
        stretch = []
        for ev in events + [(float("inf"), float("inf"), "end")]:
            if ev[2] in SPEED_KINDS:
                stretch.append(ev)
                continue
            if stretch:
                span = max(e for _, e, _ in stretch) - stretch[0][0]
                out["span"] += span
                out["timed"] += covered([(b, e) for b, e, k in stretch if k == "timed"])
                out["asks"] += covered([(b, e) for b, e, k in stretch if k in WATCH])
                out["waits"] += covered([(b, e) for b, e, k in stretch if k == "gpu-wait"])
                out["other"] += span - covered([(b, e) for b, e, _ in stretch])
                stretch = []
    return {k: round(v / submissions, 2) for k, v in out.items()}


def twin(row, lab):
    """What a row's lab is matched on with the isolated rows: the lab's content (lab_contents),
    else the submission's name with the lab."""
    return (row.get("lab_content") or {}).get(lab) or (row["submission"], lab)


def is_graded(row):
    """Whether an isolated row has a result: a check cut short (a time limit, Ctrl-C) leaves the
    submissions it did not finish without one, and those are not twins of anything."""
    return row.get("points") is not None or bool(row.get("verdicts"))


def graded(isolated_rows):
    """The isolated rows with a result (is_graded)."""
    return [r for r in isolated_rows if is_graded(r)]


def row_labs(row):
    """The labs a row is compared on: those it holds (lab_content) and those it has a verdict of."""
    return sorted(set(row.get("lab_content") or {}) | set(row["verdicts"]))


def alone_verdicts(isolated_rows):
    """{twin: [(isolated submission, its verdict)]} of every lab graded alone."""
    alone = {}
    for r in graded(isolated_rows):
        for lab, v in r["verdicts"].items():
            alone.setdefault(twin(r, lab), []).append((r["submission"], v))
    return alone


def differences(rows, isolated_rows):
    """Lines naming every lab whose verdict in rows differs from the isolated verdict of a twin:
    each isolated grading of the same lab content (or of the same submission and lab, for rows
    without lab contents). Labs with no graded twin there are not compared (unchecked names
    their submissions)."""
    lines, alone = [], alone_verdicts(isolated_rows)
    for a in rows:
        for lab in row_labs(a):
            va = a["verdicts"].get(lab)
            for name, vb in alone.get(twin(a, lab), []):
                if va != vb:
                    lines.append(f"{a['submission']} {lab}: shared processes {va}, isolated {vb}"
                                 + (f" (isolated: {name})" if name != a["submission"] else ""))
    return lines


def unchecked(rows, isolated_rows):
    """The submissions of rows with a lab whose twin is not among isolated_rows."""
    alone, out = alone_verdicts(isolated_rows), []
    for r in rows:
        labs = row_labs(r)
        if not labs or any(twin(r, lab) not in alone for lab in labs):
            out.append(r["submission"])
    return out


def compared(rows, isolated_rows):
    """How many lab verdicts of rows have an isolated twin."""
    alone = alone_verdicts(isolated_rows)
    return sum(twin(r, lab) in alone for r in rows for lab in row_labs(r))


# Seconds between two snapshots of a class being graded (--json, written while grade.py runs).
SNAPSHOT_S = 30


def grade(subs, res, work, labs, args, isolated=False, trace=None, gpus=None, only_submitted=False, tick=None):
    """Runs grade.py on the class (its trace appended to trace, when given), on gpus (grade.py
    --gpus; None: one GPU, or CPU mode), with --only-submitted when asked; every SNAPSHOT_S
    seconds while it runs, tick(seconds so far) when given; returns (wall seconds, exit code)."""
    cmd = [sys.executable, os.path.join(HERE, "grade.py"), "--submissions", subs, "--results", res,
           "--work", work, "--labs", *labs, "--format", "json"]
    cmd += ["--cpu"] if args.cpu else ["--gpu"]
    if gpus:
        cmd += ["--gpus", gpus]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    if isolated:
        cmd += ["--isolated"]
    if only_submitted:
        cmd += ["--only-submitted"]
    env = dict(os.environ, LAB_GRADER_TRACE=trace) if trace else None
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)

    def stop(signum, frame):
        """Ctrl-C or SIGTERM (a time limit): grade.py stops and keeps what it finished, and the
        table below reports those submissions (the others as "no result")."""
        p.send_signal(signal.SIGTERM)
    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                code = p.wait(timeout=SNAPSHOT_S if tick else None)
                break
            except subprocess.TimeoutExpired:
                tick(time.monotonic() - t0)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    return time.monotonic() - t0, code


def parse_part(text):
    """(K, M) of "K/M" with 1 <= K <= M; ValueError otherwise."""
    k, _, m = text.partition("/")
    if not (k.isdigit() and m.isdigit() and 1 <= int(k) <= int(m)):
        raise ValueError(f"--part {text}: K/M with 1 <= K <= M, e.g. 1/5")
    return int(k), int(m)


# What the parts of one class must share (their summaries' "class"). Not how many parts it was
# cut into: a half lost with its machine can be graded again as two quarters (--part 3/4 and
# 4/4 beside --part 1/2), as long as every submission is in exactly one part (part_gaps).
CLASS_KEYS = ("n", "labs", "seed", "mode", "gpus")
# What a check (--isolated-only) must share with the parts: its verdicts depend on neither the GPUs
# nor the class's size (twins are matched lab by lab, by content; a lab with none is unchecked).
CHECK_KEYS = ("labs", "seed", "mode")


def part_label(cls):
    """A part's "K/M" (its summary's class)."""
    return f"{cls['part']}/{cls['parts']}"


def part_start(cls):
    """The class index of a part's first submission."""
    return (cls["part"] - 1) * cls["n"] // cls["parts"]


def spans(ks):
    """Submission indices as runs of names: [2, 3, 4, 9] -> "s002-s004, s009"."""
    out = []
    for k in sorted(ks):
        if out and out[-1][1] == k - 1:
            out[-1][1] = k
        else:
            out.append([k, k])
    return ", ".join(f"s{a:03d}" if a == b else f"s{a:03d}-s{b:03d}" for a, b in out)


def part_gaps(classes):
    """"" when the parts (their summaries' classes, of one class of n) hold each submission
    once; else why not: the submissions in none of them, or in more than one."""
    n, held = classes[0]["n"], {}
    for c in classes:
        for k in range(n):
            if in_part(k, (c["part"], c["parts"]), n):
                held[k] = held.get(k, 0) + 1
    labels = ", ".join(part_label(c) for c in sorted(classes, key=lambda c: (part_start(c), c["parts"])))
    none = [k for k in range(n) if k not in held]
    twice = [k for k, c in held.items() if c > 1]
    if twice:
        return f"parts {labels}: {spans(twice)} of the class of {n} are in more than one of them"
    if none:
        return (f"parts {labels}: {spans(none)} of the class of {n} are in none of them "
                f"(each submission in exactly one part is needed)")
    return ""


def exit_code(codes):
    """The worst of grade.py's exit codes, None (still running when written) left out; None if
    every one is."""
    known = [c for c in codes if c is not None]
    return max(known) if known else None


# --merge's exit code when a part or check was written while it still ran (a snapshot: the
# class is not all graded), after 6 (a verdict differs) and before grade.py's own.
EXIT_SNAPSHOT = 7


def finished_elsewhere(isolated_rows):
    """The id()s of the isolated rows without a result (a check cut short) all of whose lab
    contents another row graded: the check that finished the first one's work (--checked), so
    neither cut short nor still running."""
    done = set(alone_verdicts(isolated_rows))
    return {id(r) for r in isolated_rows
            if not is_graded(r) and r.get("lab_content")
            and all(twin(r, lab) in done for lab in r["lab_content"])}


def solutions_differ(docs):
    """{lab: [[content, [part labels]], ...]} for each lab whose full submissions (copies of the
    course's solutions) have more than one content across the parts: parts graded at different
    versions of the course, whose times are of different code."""
    seen = {}
    for d in docs:
        label = part_label(d["summary"]["class"])
        for r in d["rows"]:
            if r.get("kind") == "full":
                for lab, content in (r.get("lab_content") or {}).items():
                    labels = seen.setdefault(lab, {}).setdefault(content, [])
                    if label not in labels:
                        labels.append(label)
    return {lab: [[c, labels] for c, labels in by.items()] for lab, by in sorted(seen.items()) if len(by) > 1}


def merge(docs):
    """The whole class from its parts' --json documents: (doc, "") with the merged summary and
    rows, or (None, why) when they are not the parts of one class, each once."""
    classes = [d.get("summary", {}).get("class") for d in docs]
    if not all(classes):
        return None, "a file is not a --part result of bench_grader.py --json"
    checks = [d for d, c in zip(docs, classes) if c.get("check")]  # --isolated-only: no rows, a check
    docs = [d for d, c in zip(docs, classes) if not c.get("check")]
    classes = [c for c in classes if not c.get("check")]
    if not docs:
        return None, "only --isolated-only checks: the parts graded with their times are needed too"
    first = {k: classes[0].get(k) for k in CLASS_KEYS}
    for c in checks:  # of the same class; checked on any GPUs, in any parts
        c = c["summary"]["class"]
        bad = [f"{k} {first[k]!r} against {c.get(k)!r}" for k in CHECK_KEYS if first[k] != c.get(k)]
        if bad:
            return None, "a check is of another class: " + ", ".join(bad)
    for c in classes[1:]:
        other = {k: c.get(k) for k in CLASS_KEYS}
        if other != first:
            bad = [f"{k} {first[k]!r} against {other[k]!r}" for k in CLASS_KEYS if first[k] != other[k]]
            return None, "the parts are of different classes: " + ", ".join(bad)
    why = part_gaps(classes)
    if why:
        return None, why
    rows = sorted((r for d in docs for r in d["rows"]), key=lambda r: r["submission"])
    sums = [d["summary"] for d in docs]
    summary = summarize(rows, sum(s["wall_s"] for s in sums), first["gpus"],
                        exit_code(s["grade_exit_code"] for s in sums))
    sums.sort(key=lambda s: part_start(s["class"]))  # in class order: the first holds s000
    summary["parts_wall_s"] = [s["wall_s"] for s in sums]
    summary["part_labels"] = [part_label(s["class"]) for s in sums]
    summary["running_parts"] = [part_label(s["class"]) for s in sums if s.get("running")]
    summary["first_wall_s"] = sums[0].get("first_wall_s") or {}
    summary["class"] = dict(first, parts=len(sums), part=None)
    summary["solutions_differ"] = solutions_differ(docs)
    for key in ("starts_per_submission", "gpu_watch_per_submission", "speed_stage_per_submission"):  # per submission
        parts = [(s[key], s["submissions"]) for s in sums if s.get(key)]
        if len(parts) == len(sums):
            summary[key] = {k: (round(sum(p[k] * n for p, n in parts) / len(rows), 2)
                                if isinstance(parts[0][0][k], (int, float)) else parts[0][0][k])
                            for k in parts[0][0]}
    doc = {"summary": summary, "rows": rows}
    isolated = [d["isolated"] for d in docs + checks if d.get("isolated")]
    if isolated:  # every part's rows against the isolated twins of any part
        # a check cut short and the one that finished it (--checked): the first's unfinished rows
        # are neither cut short nor still running once the second graded their labs
        moved = finished_elsewhere([r for i in isolated for r in i["rows"]])
        alone = sorted((r for i in isolated for r in i["rows"] if id(r) not in moved), key=lambda r: r["submission"])
        unfinished = [i for i in isolated if any(id(r) not in moved and not is_graded(r) for r in i["rows"])]
        doc["isolated"] = {"wall_s": round(sum(i["wall_s"] for i in isolated), 1),
                           "grade_exit_code": exit_code(i["grade_exit_code"] for i in isolated),
                           "running": any(i.get("running") for i in unfinished),
                           "rows": alone, "differences": differences(rows, alone),
                           "unchecked": unchecked(rows, alone)}
    return doc, ""


def print_merged(doc):
    """The merged class's rows and lines (report's, and the isolated comparison's)."""
    s = doc["summary"]
    print_report(doc["rows"], s)
    print(f"parts: {len(s['parts_wall_s'])}, graded back to back: "
          f"{' + '.join(f'{w} ({k})' for w, k in zip(s['parts_wall_s'], s['part_labels']))} = {s['wall_s']} s")
    if s.get("running_parts"):
        print(f"parts {' '.join(map(str, s['running_parts']))}: snapshots written while still grading (the machine "
              f"was lost, or the part stopped before its end): their wall time is up to the snapshot, and their "
              f"submissions not yet graded have no result; the class's wall time above is a lower bound")
    print_firsts(s.get("first_wall_s"))
    for lab, versions in (s.get("solutions_differ") or {}).items():
        print(f"NOTE: the parts graded different versions of the course: {lab}'s solution is "
              + "; ".join(f"{c[:8]} in {', '.join(labels)}" for c, labels in versions)
              + " (the class's times are not all of the same code; the check needs each version's twin)")
    iso = doc.get("isolated")
    if iso:
        diff, left = iso["differences"], iso.get("unchecked", [])
        done = len(graded(iso["rows"]))
        cut = len(iso["rows"]) - done
        print(f"isolated: {done} graded alone{f' ({cut} more cut short)' if cut else ''}"
              f"{' (a snapshot of a check still running: finish it with --checked)' if iso.get('running') else ''} "
              f"in {iso['wall_s']} s wall (the checks' sum); "
              f"verdicts: {'identical' if not diff else f'{len(diff)} differ'} ({compared(doc['rows'], iso['rows'])} "
              f"lab verdicts of {len(doc['rows'])} submissions compared with their twins'"
              + (f"; {len(left)} with a lab of no isolated twin: {' '.join(left)})" if left else ")"))
        for line in diff:
            print(f"  DIFFERS: {line}")


def write_json(path, doc):
    """doc as indented JSON in path, replaced whole (a copy taken while it is written, of a
    snapshot say, finds the last one or this one, never half of one)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def check_plan(made, contents, labs, checked=()):
    """The check's submissions, each lab content of made graded alone once, except those of
    checked (graded alone in an earlier check): [(name, source submission, [its labs])]. A lab
    built on others comes first with the labs it links (they are graded with it, and their
    contents count as checked), then every other lab whose content is not yet checked, alone in a
    submission of its own (grade.py --only-submitted grades just it)."""
    plan, done = [], set(checked)
    order = [lab for lab in labs if BUILT_ON.get(lab)] + [lab for lab in labs if not BUILT_ON.get(lab)]
    for lab in order:
        for name, _, _ in made:
            if contents[name][lab] in done:
                continue
            held = [lab] + [b for b in BUILT_ON.get(lab, []) if b in labs]
            done.update(contents[name][x] for x in held)
            plan.append((f"{name}-lab{lab[:2]}", name, held))
    return plan


def earlier_checks(paths, cls):
    """The graded isolated rows of the --json files at paths (earlier checks of the same labs,
    seed and mode as cls), or raises ValueError saying why one cannot be used."""
    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise ValueError(f"--checked {path}: {e}")
        if not doc.get("isolated"):
            raise ValueError(f"--checked {path}: not a check of bench_grader.py --json")
        other = (doc.get("summary") or {}).get("class") or {}
        bad = [f"{k} {cls[k]!r} against {other.get(k)!r}" for k in CHECK_KEYS if cls[k] != other.get(k)]
        if bad:
            raise ValueError(f"--checked {path}: a check of another class: " + ", ".join(bad))
        out += graded(doc["isolated"]["rows"])
    return out


def check_alone(made, contents, rows, subs, tmp, work, labs, args, before=(), snapshot=None):
    """Grades again with --isolated each lab content of made once (check_plan; every submission
    whole with --isolated-all), on --isolated-gpus (default --gpus); returns the "isolated"
    section of the --json document: the isolated rows, and how rows (the shared-process grading,
    or none with --isolated-only) differ from their twins', these or before's (the graded rows of
    earlier checks, --checked: their lab contents are not graded again). While it grades,
    snapshot(the section so far, with "running": true) every SNAPSHOT_S seconds, when given."""
    subs_iso = os.path.join(tmp, "subs-isolated")
    if args.isolated_all:
        again, held = made, {name: contents[name] for name, _, _ in made}
        for name, _, _ in made:
            shutil.copytree(os.path.join(subs, name), os.path.join(subs_iso, name))
        what = f"{len(made)} submissions {'again' if rows else 'graded'} with --isolated (one process per graded run)"
    else:
        checked = {twin(r, lab) for r in before for lab in r["verdicts"]}
        plan = check_plan(made, contents, labs, checked)
        again, held = [], {}  # held: each check submission's labs (copies of its source's) and their contents
        for check, src, its in plan:
            held[check] = {lab: contents[src][lab] for lab in its if os.path.isdir(os.path.join(subs, src, lab))}
            for lab in held[check]:
                shutil.copytree(os.path.join(subs, src, lab), os.path.join(subs_iso, check, lab))
            again.append((check, "lab", f"{' '.join(its)} of {src}"))
        distinct = {k for c in contents.values() for k in c.values()}
        left = len(distinct - checked)
        what = (f"{left} lab contents of the {len(made)} submissions {'again' if rows else 'graded'} with "
                f"--isolated (one process per graded run), as {len(plan)} submissions of one lab (and those "
                f"it is built on): a lab's verdict depends on its files and theirs only"
                + (f"; {len(distinct) - left} were graded alone in the --checked files" if before else ""))
    print(f"bench-grader: {what}", file=sys.stderr, flush=True)
    res_iso = os.path.join(tmp, "results-isolated")
    cache = {}

    def section(wall, code):
        """The "isolated" section from the results written so far."""
        rows_iso = read_rows(res_iso, again, contents=held, cache=cache)
        for r in rows_iso:  # only the labs it holds: the others are "not submitted" there
            r["verdicts"] = {lab: v for lab, v in r["verdicts"].items() if lab in r["lab_content"]}
        everything = list(before) + rows_iso
        return {"wall_s": round(wall, 1), "grade_exit_code": code, "rows": rows_iso,
                "differences": differences(rows, everything), "unchecked": unchecked(rows, everything)}
    tick = (lambda wall: snapshot(dict(section(wall, None), running=True))) if snapshot else None
    wall_iso, code_iso = 0.0, 0
    if again:
        wall_iso, code_iso = grade(subs_iso, res_iso, work, labs, args, isolated=True,
                                   gpus=args.isolated_gpus or args.gpus, only_submitted=not args.isolated_all,
                                   tick=tick)
    done = section(wall_iso, code_iso)
    rows_iso, diff = done["rows"], done["differences"]
    everything = list(before) + rows_iso
    if rows:
        print(f"isolated: {len(graded(rows_iso))}/{len(rows_iso)} graded alone in {wall_iso:.1f} s wall; verdicts: "
              f"{'identical' if not diff else f'{len(diff)} differ'} ({compared(rows, everything)} lab verdicts of "
              f"{len(rows)} submissions compared with their twins')")
    else:
        print(f"isolated: {len(graded(rows_iso))}/{len(rows_iso)} graded alone in {wall_iso:.1f} s wall; "
              f"--merge compares the parts' verdicts with these")
    for line in diff:
        print(f"  DIFFERS: {line}")
    return done


def merge_files(paths, out):
    """--merge: the whole class from the --json files at paths, printed (and written to out);
    returns the exit code."""
    docs = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"bench_grader.py: --merge {path}: {e}", file=sys.stderr)
            return 2
    doc, why = merge(docs)
    if doc is None:
        print(f"bench_grader.py: --merge: {why}", file=sys.stderr)
        return 2
    print_merged(doc)
    if out:
        write_json(out, doc)
    if doc.get("isolated", {}).get("differences"):
        return 6
    if doc["summary"]["running_parts"] or doc.get("isolated", {}).get("running"):
        return EXIT_SNAPSHOT
    return doc["summary"]["grade_exit_code"]


def core_shares(cpus, parts, check, per_part=None):
    """The cores of each of --parts-on's jobs (the parts, then the check): per_part each for
    the parts (--part-cpus: 16 measures a 16-core grader) and the rest for the check, else an
    equal share each; all of cpus for every job when there are fewer cores than jobs."""
    jobs = parts + (1 if check else 0)
    if per_part and per_part * parts + (1 if check else 0) <= len(cpus):
        out = [cpus[k * per_part:(k + 1) * per_part] for k in range(parts)]
        return out + ([cpus[parts * per_part:]] if check else [])
    share = len(cpus) // jobs
    if not share:
        return [cpus] * jobs
    return [cpus[k * share:(k + 1) * share] for k in range(jobs)]


def at_once(args):
    """--parts-on: one bench_grader per GPU listed, each grading its part of the class
    (--part K/M) with CUDA_VISIBLE_DEVICES set to its GPU and its own share of the cores, and
    with --check-on the isolated check beside them on its GPUs and cores; then the merge. Each
    writes <json>.part-K.json (.check.json) and its output to the .log beside it. A part on a
    GPU and 16 cores of its own measures what one grader there takes; the merged wall time is
    the parts' sum, as graded back to back."""
    gpus = [g.strip() for g in args.parts_on.split(",") if g.strip()]
    base = args.json[:-5] if args.json.endswith(".json") else args.json
    common = ["--n", str(args.n), "--seed", str(args.seed)] + (["--labs", *args.labs] if args.labs else []) \
        + (["--cpu"] if args.cpu else []) + (["--keep"] if args.keep else [])
    jobs = [(["--part", f"{k + 1}/{len(gpus)}"], {"CUDA_VISIBLE_DEVICES": g}, f"{base}.part-{k + 1}")
            for k, g in enumerate(gpus)]
    if args.check_on:
        check = (["--isolated-only", "--isolated-gpus", args.check_on]
                 + (["--isolated-all"] if args.isolated_all else []))
        jobs.append((check, {}, f"{base}.check"))
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = []
    shares = core_shares(cpus, len(gpus), bool(args.check_on), args.part_cpus)
    procs = []
    for k, (extra, env, stem) in enumerate(jobs):
        argv = [sys.executable, os.path.abspath(__file__), *common, *extra, "--json", stem + ".json"]
        if args.work:
            argv += ["--work", os.path.join(args.work, os.path.basename(stem))]
        mine = shares[k]
        with open(stem + ".log", "w") as log:
            if mine:  # the child inherits the mask it is forked with (this process has no threads)
                os.sched_setaffinity(0, mine)
            try:
                procs.append(subprocess.Popen(argv, env=dict(os.environ, **env), stdout=log, stderr=subprocess.STDOUT))
            finally:
                if mine:
                    os.sched_setaffinity(0, cpus)
        where = f"GPU {env['CUDA_VISIBLE_DEVICES']}" if env else f"GPUs {args.check_on}"
        span = f", CPUs {mine[0]}-{mine[-1]}" if mine else ""
        print(f"bench-grader: {' '.join(extra)} on {where}{span}: {stem}.log", file=sys.stderr, flush=True)

    def stop(signum, frame):  # Ctrl-C or a time limit: every part stops and writes what it finished
        for p in procs:
            p.send_signal(signal.SIGTERM)
    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        codes = [p.wait() for p in procs]
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    print(f"bench-grader: the parts and the check ended with exit codes {codes}", file=sys.stderr, flush=True)
    found = [stem + ".json" for _, _, stem in jobs if os.path.exists(stem + ".json")]
    return merge_files(found, args.json)


def finish(tmp, keep, code):
    """Removes the class's temporary folder (or says where it is kept); returns code."""
    if keep:
        print(f"bench-grader: kept {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="submissions (default 20)")
    ap.add_argument("--labs", nargs="+", metavar="LAB", help="only these labs (default: all)")
    ap.add_argument("--cpu", action="store_true", help="grade in CPU mode")
    ap.add_argument("--gpus", metavar="LIST", help="grade.py --gpus (all, or 0,1): a worker per GPU")
    ap.add_argument("--keep", action="store_true", help="keep the submissions and results")
    ap.add_argument("--work", help="grade.py --work (default: a temporary folder)")
    ap.add_argument("--json", metavar="FILE", help="also write the measurements here")
    ap.add_argument("--isolated", action="store_true", help="grade.py --isolated: one process per graded run")
    ap.add_argument("--check-isolated", action="store_true",
                    help="grade the class again with --isolated and compare every lab's verdict "
                         "(exit 6 if one differs)")
    ap.add_argument("--isolated-gpus", metavar="LIST",
                    help="grade.py --gpus for the --check-isolated grading (default: --gpus): it takes about "
                         "4x the class and its verdicts do not depend on the GPUs, so a class timed on one GPU "
                         "(--gpus 0) may be checked on all of them")
    ap.add_argument("--isolated-all", action="store_true",
                    help="--check-isolated grades every submission again, whole, not each lab content once")
    ap.add_argument("--isolated-only", action="store_true",
                    help="only the check's grading: each lab content of the class (or --part) once "
                         "with --isolated, written with --json for --merge to compare the parts with (a check on "
                         "other GPUs, or at another time, than the timed parts)")
    ap.add_argument("--checked", nargs="+", metavar="CHECK.json",
                    help="with --isolated-only or --check-isolated: lab contents graded alone in these earlier "
                         "checks (cut short, say) are not graded again; give them to --merge too")
    ap.add_argument("--seed", type=int, help="the class seed (default: grade.py's; --check-isolated or --part: 1)")
    ap.add_argument("--part", metavar="K/M", help="grade only the K-th of M parts of the class (--merge joins them)")
    ap.add_argument("--merge", nargs="+", metavar="FILE", help="print the whole class from its parts' --json files")
    ap.add_argument("--parts-on", metavar="GPUS",
                    help="grade the class in as many parts as GPUs listed (0,1), all at once, each on its GPU and "
                         "its own share of the cores, then merge them (as if graded back to back on one GPU)")
    ap.add_argument("--check-on", metavar="GPUS",
                    help="with --parts-on: the isolated check (--isolated-only) at the same time, on these GPUs "
                         "and a share of the cores of its own")
    ap.add_argument("--part-cpus", type=int, metavar="N",
                    help="with --parts-on: N cores for each part (the check gets the rest; default: equal shares)")
    args = ap.parse_args(argv)
    if args.merge:
        return merge_files(args.merge, args.json)
    if (args.check_on or args.part_cpus) and not args.parts_on:
        ap.error("--check-on and --part-cpus go with --parts-on")
    if args.parts_on:
        if not args.json:
            ap.error("--parts-on needs --json FILE: the merged class goes there, each part and the check beside it")
        if args.part or args.isolated_only or args.check_isolated or args.gpus:
            ap.error("--parts-on makes the parts (and --check-on the check) itself: no --part, --isolated-only, "
                     "--check-isolated or --gpus with it")
        if args.seed is None:
            args.seed = 1
        return at_once(args)
    try:
        part = parse_part(args.part) if args.part else None
    except ValueError as e:
        ap.error(str(e))
    if part and not any(in_part(k, part, args.n) for k in range(args.n)):
        ap.error(f"--part {args.part}: no submission of a class of {args.n} is in it")
    if args.isolated_only and not args.json:
        ap.error("--isolated-only needs --json FILE: --merge reads the check from it")
    if (args.check_isolated or args.isolated_only or part) and args.seed is None:
        args.seed = 1  # both gradings (every part) must draw the same cases
    if args.n < 1:
        ap.error("--n must be at least 1")
    try:
        labs = select_labs(course_labs(ROOT), args.labs)
    except ValueError as e:
        ap.error(str(e))
    before = []
    if args.checked:
        if not (args.isolated_only or args.check_isolated):
            ap.error("--checked goes with --isolated-only or --check-isolated")
        try:
            before = earlier_checks(args.checked, {"labs": labs, "seed": args.seed,
                                                   "mode": "cpu" if args.cpu else "gpu"})
        except ValueError as e:
            ap.error(str(e))
    tmp = tempfile.mkdtemp(prefix="bench-grader-")
    subs, res = os.path.join(tmp, "subs"), os.path.join(tmp, "results")
    os.makedirs(subs)
    made = make_class(subs, args.n, labs, part)
    contents = {name: lab_contents(os.path.join(subs, name), labs) for name, _, _ in made}
    work = args.work or os.path.join(tmp, "work")
    print(f"bench-grader: {len(made)} submissions"
          f"{f' (part {part[0]} of {part[1]} of a class of {args.n})' if part else ''} "
          f"({', '.join(f'{sum(1 for m in made if m[1] == k)} {k}' for k in ('full', 'partial', 'broken'))}), "
          f"labs {' '.join(lab[:2] for lab in labs)}, {'CPU mode' if args.cpu else 'GPU ' + (args.gpus or 'one')}",
          file=sys.stderr, flush=True)
    if args.isolated_only:
        cls = {"n": args.n, "labs": labs, "seed": args.seed, "mode": "cpu" if args.cpu else "gpu",
               "gpus": args.isolated_gpus or args.gpus or "1", "parts": part[1] if part else 1,
               "part": part[0] if part else 1, "check": True}
        doc = {"summary": {"class": cls}, "rows": []}
        doc["isolated"] = check_alone(made, contents, [], subs, tmp, work, labs, args, before,
                                      snapshot=lambda sec: write_json(args.json, dict(doc, isolated=sec)))
        write_json(args.json, doc)
        return finish(tmp, args.keep, doc["isolated"]["grade_exit_code"])
    trace = os.environ.get("LAB_GRADER_TRACE") or os.path.join(tmp, "trace.jsonl")
    since = time.time()
    cache = {}

    def measured(wall, code):
        """(rows, summary) of the results written so far, after wall seconds; code: grade.py's
        exit code, None while it runs."""
        rows = read_rows(res, made, contents, since, cache)
        summary = summarize(rows, wall, args.gpus or ("none (CPU mode)" if args.cpu else "1"), code)
        if not part or in_part(0, part, args.n):  # the class's first submissions
            summary["first_wall_s"] = first_walls(rows)
        if part:
            summary["class"] = {"n": args.n, "labs": labs, "seed": args.seed, "mode": "cpu" if args.cpu else "gpu",
                                "gpus": summary["gpus"], "parts": part[1], "part": part[0]}
        return rows, summary

    def snapshot(wall):
        """--json while grade.py runs: what is graded so far ("running": a machine lost before the
        end leaves it, and --merge takes it as a part cut short there)."""
        rows, summary = measured(wall, None)
        write_json(args.json, {"summary": dict(summary, running=True), "rows": rows})
    wall, code = grade(subs, res, work, labs, args, isolated=args.isolated, trace=trace, gpus=args.gpus,
                       tick=snapshot if args.json else None)
    rows, summary = measured(wall, code)
    print_report(rows, summary)
    print_firsts(summary.get("first_wall_s"))
    summary["steady_per_hour"] = steady = steady_rate(rows)
    if steady:
        print(f"steady state: {steady} submissions an hour, from the first result to the last")
    lines, counted = graded_window(trace_lines(trace, since), rows, since)
    if counted and counted < len(rows):
        print(f"the class was cut short: the per-submission figures below are over the {counted} graded, from "
              f"the trace up to the last result (work then in flight, at most a submission a worker, counts too)")
    summary["starts_per_submission"] = starts = process_starts(lines, counted)
    if starts:
        print(f"lab processes started: {starts['all']} a submission ({starts['case']} for the cases, "
              f"{starts['sanitizer']} for the sanitizer, {starts['timed']} timed); on a GPU each but a host "
              f"lab's (01's) creates a CUDA context, and a machine starts only so many a second "
              f"(grader/dev/start_rate.sh): at most 3600 x that rate / {starts['all']} submissions an hour")
    summary["gpu_watch_per_submission"] = watch = watch_cost(lines, counted)
    if watch and (watch["asks"] or watch["waits"]):
        print(f"GPU watch: {watch['asks']} asks a submission ({', '.join(watch['by']) or '-'}), {watch['seconds']} s a "
              f"submission between the timed runs; {watch['waits']} waits a submission for another job to leave "
              f"the GPU, {watch['wait_s']} s a submission")
    summary["speed_stage_per_submission"] = speed = speed_time(lines, counted)
    if speed and speed["span"]:
        print(f"speed stage: {speed['span']} s a submission: timed processes {speed['timed']} s, the GPU watch's "
              f"asks {speed['asks']} s, its waits {speed['waits']} s, the rest (the grader between runs) "
              f"{speed['other']} s")
    doc = {"summary": summary, "rows": rows}
    if args.json:  # now, and again with the check: a check cut short leaves the class measured
        write_json(args.json, doc)
    if args.check_isolated:
        doc["isolated"] = check_alone(made, contents, rows, subs, tmp, work, labs, args, before,
                                      snapshot=(lambda sec: write_json(args.json, dict(doc, isolated=sec)))
                                      if args.json else None)
        if doc["isolated"]["differences"]:
            code = 6
    if args.json and args.check_isolated:
        write_json(args.json, doc)
    return finish(tmp, args.keep, code)


if __name__ == "__main__":
    sys.exit(main())
