#!/usr/bin/env python3
"""What a graded run opens after the sandbox is in: the list common/sandbox.c's OPEN_PATHS holds.

Builds the harness and every lab's reference solution the way the grader does (in --work), then
runs each reference binary as the grader runs graded code (rundir.run_lab: its own run folder,
as the unprivileged run user when this runs as root) with the harness's measuring switch on
(LAB_SANDBOX_TRACE_OPEN=1: every open, openat, creat, openat2, name_to_handle_at and
open_by_handle_at after the filter is logged on stderr, and read-only ones are made, so the run
goes on). Per lab: a correctness case (tile + 1), a shared process of three cases (as the grader
deals cases into processes), the many-calls case, and a timed run (20 timed calls after 3
warm-ups). Prints one table at the end: each path (or "none"), the call, its flags, and the labs
and runs that opened it; with $OUT set also writes it to $OUT/open_measurement.txt and the raw
data to $OUT/open_measurement.json.

    python3 grader/dev/measure_opens.py --cpu            # CPU mode (no GPU needed)
    python3 grader/dev/measure_opens.py --gpu            # the GPU runtime (nvcc and a GPU)

Exit codes: 0 measured, every run ok; 1 measured, but some run was not ok (its verdict is in
the table: the sandbox may have refused what the runtime needs); 2 bad command line; 3 the
references could not be built or run (no toolchain, no GPU).
"""
import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
sys.path.insert(0, GRADER)

from gradelib import config as configmod  # noqa: E402
from gradelib import evaluate as ev  # noqa: E402
from gradelib import rundir, runuser  # noqa: E402
from gradelib.build import InfraError  # noqa: E402
from gradelib.grading import Grader, course_labs, gpu_visible, select_labs  # noqa: E402
from gradelib.status import Status  # noqa: E402

TRACE = re.compile(r"harness: sandbox-trace: (\S+) (.*) flags=(0x[0-9a-f]+)$")
RC_MEASURED, RC_NOT_OK, RC_USAGE, RC_INFRA = 0, 1, 2, 3


def log(msg):
    print(f"measure_opens: {msg}", file=sys.stderr, flush=True)


def runs_of(info, mode, seed=7):
    """[(name, kind, [case lines])] of one lab: kind 'run' (one process per line) or 'session'
    (all lines in one process)."""
    t = info.tile_or_default
    n1 = min(t + 1, info.max_n or t + 1)
    shared = [ev.case_line(n, d, seed, options=ev.case_calls(info, n))
              for n, d in ((n1, "small"), (min(2 * t + 1, info.max_n or 2 * t + 1), "random"), (33, "large"))]
    multi = ",".join(str(n) for n in ev.multi_sizes(info))
    timed_n = min(info.bench_n, 1 << 16) if mode == "cpu" else min(info.bench_n, 1 << 24)
    return [
        ("case", "run", [ev.case_line(n1, "small", seed, options=ev.case_calls(info, n1))]),
        ("shared", "session", shared),
        ("many-calls", "run", [ev.case_line(t + 1, "random", seed,
                                            options=("--sizes", multi, "--calls", str(ev.MULTI_CALLS[mode])))]),
        ("timed", "run", [ev.case_line(timed_n, "small", seed, reps=20, warmup=3)]),
    ]


def measure(binary, info, mode, timeout):
    """[(run name, verdict, [(call, path, flags)])] of one reference binary."""
    out = []
    for name, kind, lines in runs_of(info, mode):
        if kind == "run":
            r = ev.run_lab([binary], timeout, case=lines[0], kind="measure")
            verdict = ev.diagnose(r, timeout)[:2]
            err = r.stderr
        else:
            s = ev.LabSession(binary, "measure")
            verdict = (None, "")
            for line in lines:
                verdict = s.run(line, timeout)[:2]
                if verdict[0] != Status.OK:
                    break
            s.close(timeout)
            err = s.session.result.stderr if s.session.result else ""
        opens = [m.groups() for m in (TRACE.match(ln.strip()) for ln in err.splitlines()) if m]
        out.append((name, verdict, opens))
    return out


def table(results, mode, device):
    """The summary: one row per (call, path, flags), with the labs and runs that opened it."""
    rows = {}
    for lab, runs in results.items():
        for name, _, opens in runs:
            for call, path, flags in opens:
                rows.setdefault((path, call, flags), set()).add(f"{lab[:2]}:{name}")
    user = runuser.run_user()
    who = f"as {user.name} (uid {user.uid})" if user else f"as uid {os.geteuid()} (not root: no drop)"
    lines = [f"files opened after the sandbox is in ({mode} mode, {device}, {who})",
             f"{'path':<48} {'call':<18} {'flags':<8} runs"]
    if not rows:
        lines.append(f"{'none':<48} {'-':<18} {'-':<8} every run of every lab")
    for (path, call, flags), where in sorted(rows.items()):
        lines.append(f"{path:<48} {call:<18} {flags:<8} {', '.join(sorted(where))}")
    bad = [(lab, name, v) for lab, runs in results.items() for name, v, _ in runs if v[0] != Status.OK]
    lines.append(f"runs: {sum(len(r) for r in results.values())} in {len(results)} labs, "
                 f"{'all ok' if not bad else f'{len(bad)} not ok'}")
    for lab, name, (kind, msg) in bad:
        lines.append(f"  not ok: {lab} {name}: {kind}: {msg}")
    return "\n".join(lines) + "\n", bool(bad)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    m = ap.add_mutually_exclusive_group()
    m.add_argument("--cpu", action="store_true", help="CPU mode (the default without a GPU)")
    m.add_argument("--gpu", action="store_true", help="the GPU runtime (the default with a GPU)")
    ap.add_argument("--labs", nargs="*", help="lab numbers or ids (default: every lab)")
    ap.add_argument("--work", help="where to build (default: build/measure-opens-MODE)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    args = ap.parse_args(argv)
    mode = "cpu" if args.cpu else "gpu" if args.gpu else ("gpu" if gpu_visible() else "cpu")
    work = args.work or os.path.join(ROOT, "build", f"measure-opens-{mode}")
    try:
        config = configmod.load(os.path.join(GRADER, "config.json"))
        labs = course_labs(ROOT)
        if args.labs:
            labs = select_labs(labs, args.labs)
    except (configmod.ConfigError, ValueError) as e:
        log(str(e))
        return RC_USAGE
    rundir.TRACE_OPENS = True
    t0 = time.monotonic()
    try:
        g = Grader(ROOT, config, work, mode=mode, labs=labs, progress=log)
        g.build_course()
    except (InfraError, runuser.RunUserError) as e:
        log(f"cannot build the references: {e}")
        return RC_INFRA
    # one run first: the device, and whether the harness has a sandbox to measure at all
    probe = next((b for lab, (b, info) in sorted(g.refs.items()) if info.device), g.refs[sorted(g.refs)[0]][0])
    r = ev.run_lab([probe], 60, case=ev.case_line(1, "ones", 1), kind="measure")
    rep = ev.parse_report(r.report or "", channel=True)
    if not isinstance(rep, dict) or rep.get("status") != Status.OK:
        log(f"the first reference does not run: {ev.diagnose(r, 60)[1]}")
        return RC_INFRA
    if not rep.get("sandbox"):
        log("the harness was built without libseccomp, so there is no sandbox to measure: install "
            "libseccomp-dev or pass SECCOMP_PREFIX=DIR (DIR/include/seccomp.h, DIR/lib/libseccomp.a), "
            f"and remove {work}")
        return RC_INFRA
    device = rep.get("device") or "?"
    results = {}
    for lab in sorted(g.refs):
        binary, info = g.refs[lab]
        log(f"{lab}: measuring")
        results[lab] = measure(binary, info, mode, args.timeout)
    text, bad = table(results, mode, device)
    sys.stdout.write(text)
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "open_measurement.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        with open(os.path.join(out, "open_measurement.json"), "w", encoding="utf-8") as f:
            json.dump({"mode": mode, "device": device,
                       "labs": {lab: [{"run": n, "verdict": list(v), "opens": [list(o) for o in opens]}
                                      for n, v, opens in runs] for lab, runs in results.items()}}, f, indent=1)
        log(f"wrote {os.path.join(out, 'open_measurement.txt')}")
    log(f"done in {time.monotonic() - t0:.0f} s")
    return RC_NOT_OK if bad else RC_MEASURED


if __name__ == "__main__":
    sys.exit(main())
