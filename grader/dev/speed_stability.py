#!/usr/bin/env python3
"""How stable the speed points are: the reference solutions timed against themselves, as many
times as asked, each time exactly as a grade times a submission (the grader's speed stage:
the probe, the rounds, the confirmation of a loss, every timed run through the judge).

Builds the harness and the references as grade.py does (in --work), then grades the speed of
every lab --times times, each with its own seed, the reference binary standing for the student's.
Prints one row per lab: the ratio of each grading, their range, and the speed points each time;
the spread of the points is the number that matters (a grade regraded must give the same speed
points). Needs a GPU.

    python3 grader/dev/speed_stability.py --times 10
    python3 grader/dev/speed_stability.py --times 3 --labs 06 08
    python3 grader/dev/speed_stability.py --times 3 --config my-config.json

A lab with a `speed.variant` (labs 09 and 10: the design the handout asks for) is timed at that
variant on both sides, as a grade times it.

Exit codes: 0 measured, every lab's points within --tolerance over the gradings; 1 measured,
some lab's points spread wider; 2 bad command line; 3 no GPU, or the references did not build.
"""
import argparse
import json
import os
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
sys.path.insert(0, GRADER)

from gradelib import config as configmod  # noqa: E402
from gradelib import evaluate as ev  # noqa: E402
from gradelib import scoring  # noqa: E402
from gradelib import stage_speed  # noqa: E402
from gradelib.build import InfraError  # noqa: E402
from gradelib.grading import Grader, course_labs, gpu_visible, select_labs  # noqa: E402
from gradelib.outcomes import CorrectnessOutcome  # noqa: E402
from gradelib.status import Status  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--times", type=int, default=10, help="gradings of the speed (default 10)")
    ap.add_argument("--labs", nargs="+", help="only these labs (03 or 03_kogge_stone)")
    ap.add_argument("--seed", type=int, default=1, help="the first grading's seed (then +1 each)")
    ap.add_argument("--tolerance", type=float, default=0.5, help="points a lab's speed may spread (0.5)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "stability"), help="build folder")
    ap.add_argument("--json", help="also write every grading's outcome here")
    ap.add_argument("--config", default=os.path.join(GRADER, "config.json"), help="the grader's config")
    ap.add_argument("--new-processes", action="store_true",
                    help="each round after the first in new processes of both sides, not in new "
                         "buffers of the same processes (to compare what the two cost and spread)")
    args = ap.parse_args(argv)
    if args.times < 1:
        ap.error("--times must be at least 1")
    if not gpu_visible():
        print("speed_stability: no GPU: the speed is graded on a GPU only", file=sys.stderr)
        return 3
    cfg = configmod.load(args.config)
    try:
        labs = select_labs(course_labs(ROOT), args.labs)
    except ValueError as e:
        ap.error(str(e))
    g = Grader(ROOT, cfg, args.work, mode="gpu", seed=args.seed, labs=labs,
               progress=lambda m: print(f"  {m}", file=sys.stderr), sanitizer=False)
    try:
        g.prepare()
    except InfraError as e:
        print(f"speed_stability: {e}", file=sys.stderr)
        return 3
    labs = [lab for lab in labs if lab in g.refs]
    timers(args.new_processes)
    built = {lab: SimpleNamespace(binary=g.refs[lab][0]) for lab in labs}
    checked = {lab: SimpleNamespace(correctness=CorrectnessOutcome(1, 1)) for lab in labs}
    rows = {lab: [] for lab in labs}
    t0 = time.monotonic()
    for i in range(args.times):
        g.seed = args.seed + i
        for lab, out in g._speed(built, checked, labs).items():
            settings = cfg.lab(lab)
            points = None
            if out.status == Status.GRADED:
                points = scoring.speed_award(out, settings["speed"], scoring.maxima(settings, "gpu").speed)[0]
            rows[lab].append({"status": out.status.value, "ratio": out.ratio, "points": points,
                              "note": out.note, "spread": out.spread})
        print(f"grading {i + 1} of {args.times}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
        for lab in labs:
            sp = rows[lab][-1]["spread"]
            if sp:
                print(f"  {lab}: ratio {rows[lab][-1]['ratio']:.4f}, its rounds' {sp['ratio_min']:.4f}-"
                      f"{sp['ratio_max']:.4f}", file=sys.stderr)
    worst = 0.0
    print(f"{'lab':<24}{'ratio min':>10}{'ratio max':>10}  points (each grading)")
    for lab in labs:
        ratios = [r["ratio"] for r in rows[lab] if r["ratio"]]
        points = [r["points"] for r in rows[lab]]
        graded = [p for p in points if p is not None]
        spread = max(graded) - min(graded) if len(graded) == len(points) else float("inf")
        worst = max(worst, spread)
        lo, hi = (f"{min(ratios):.3f}", f"{max(ratios):.3f}") if ratios else ("-", "-")
        shown = " ".join("-" if p is None else f"{p:g}" for p in points)
        print(f"{lab:<24}{lo:>10}{hi:>10}  {shown}")
    print(f"{args.times} gradings in {time.monotonic() - t0:.0f} s; widest spread of a lab's speed points: "
          f"{worst:g} (tolerance {args.tolerance:g})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": g.device, "labs": rows}, f, indent=1)
    return 0 if worst <= args.tolerance else 1


def timers(new_processes):
    """The speed stage's Timer, changed as asked: new_processes, a round's renew() is fresh()."""
    if not new_processes:
        return

    class Changed(ev.Timer):
        def renew(self):
            return self.fresh()

    stage_speed.ev = SimpleNamespace(**{**vars(ev), "Timer": Changed})


if __name__ == "__main__":
    sys.exit(main())
