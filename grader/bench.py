#!/usr/bin/env python3
"""make bench: every lab of a tree against CUB's DeviceScan and a device-to-device memcpy.

For each n (by default 2^20, 2^22, ... 2^28; with --full 2^10 ... 2^28, and 2^31 + 7 where the
host has the memory for it) this runs the CUB anchor (build/bench/bench_cub, common/bench_cub.cu)
and each lab binary build/<src>/<NN_name>/scan with `--json --n N`. Every program validates its
output, then times itself the same way: warm-up runs,
then the median of `reps` rounds, each round timing a device memcpy of the same bytes and the scan
with CUDA events, each after a write that flushes L2 (see grader/BENCH.md). A lab that reports
not_implemented, too_large (over its max_n) or no_memory at some n is left out at that n.

Writes, under --out (build/bench by default):
  bench.csv   one row per (program, n): status, ms, GB/s, memcpy ms, % of memcpy, % of the job's
              byte floor (FLOOR_X_SCAN), x CUB
  bench.md    the same table in Markdown
  bench.svg   GB/s against n, one line per lab, CUB and memcpy as reference lines
Each row is printed (stdout) and appended to bench.csv and bench.md as soon as it is measured, so
an interrupted run keeps what it measured; the plot is drawn at the end, and on Ctrl-C from the
rows so far. Progress, with an estimate of the time left, goes to stderr.

Exit codes: 0 done; 1 a program failed (wrong output, CUDA error, crash, timeout); 2 usage;
5 no CUDA device (the anchor could not run); 130 interrupted (Ctrl-C; what was measured is kept).

Size: about 500 lines, over the house's 400, because it is one program from the sweep to the
page: the runs, the rows as they come, the ETA, and the CSV and Markdown writers that must agree
on one row's columns; each part is a few functions of its own. The plot is bench_plot.py.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "grader") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402 (the path above first)
from gradelib import evaluate  # noqa: E402
import bench_plot  # noqa: E402

# This program's exit codes: 0 and 2 as a lab binary's, 1 for any program's failure, and a lab
# binary's "no device" when the anchor found none.
EXIT_OK, EXIT_USAGE, EXIT_NO_DEVICE = (contract.EXIT[k] for k in ("OK", "USAGE", "NO_DEVICE"))
EXIT_FAILED = 1
SKIP_STATUSES = {"not_implemented", "too_large", "no_memory", "missing"}
HUGE_N = (1 << 31) + 7
HUGE_HOST_BYTES = 40 << 30  # a lab process at 2^31 + 7 holds ~35 GB of host buffers
CUB = "cub"
REFERENCE = "reference"  # a student tree's lab is timed beside its reference solution


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# The bytes a job cannot move fewer of (its floor), as a multiple of a scan's (contract.bytes_moved:
# read n, write n), by operator: the segmented scan also reads a head or key per element (1.5x),
# a compaction reads n and writes the kept half of the random inputs (0.75x), a onesweep radix
# sort reads the keys once for its histograms and reads and writes them in each of its four 8-bit
# passes (4.5x). csr: none (its rows are not a multiple of n). "% floor" is the time a copy of
# those bytes would take, at the rate of the copy timed in the same process (which moves a scan's
# bytes), over the job's time.
FLOOR_X_SCAN = {"add": 1.0, "max": 1.0, "min": 1.0, "fadd": 1.0, "seg_add": 1.5, "compact": 0.75,
                "sort": 4.5}


def pct_floor(op, ms, memcpy_ms):
    """The job's time against its byte floor (FLOOR_X_SCAN) at the copy's rate, in %, or None."""
    x = FLOOR_X_SCAN.get(op)
    if not x or not ms or not memcpy_ms:
        return None
    return 100.0 * memcpy_ms * x / ms


def gbps(n, ms):
    """GB/s for a scan of n elements (contract.bytes_moved: read n, write n) in ms milliseconds."""
    return contract.bytes_moved(n) / (ms * 1e6) if ms and ms > 0 else None


def sizes(lo, hi, step, huge):
    """2^lo, 2^(lo+step), ... up to 2^hi, then 2^31 + 7 when huge."""
    out = [1 << k for k in range(lo, hi + 1, step)]
    if out and out[-1] != 1 << hi:
        out.append(1 << hi)
    if huge:
        out.append(HUGE_N)
    return out


def host_bytes_available():
    """MemAvailable from /proc/meminfo in bytes, or None where there is no such file."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def want_huge(choice):
    """Whether to add n = 2^31 + 7: 'yes', 'no', or 'auto' (when the host has the memory;
    a GPU with too little memory makes each program report no_memory, which leaves it out)."""
    if choice != "auto":
        return choice == "yes"
    avail = host_bytes_available()
    if avail is not None and avail >= HUGE_HOST_BYTES:
        log(f"bench: n = 2^31 + 7 included ({avail / 2**30:.0f} GiB of host memory available; "
            f"--no-huge leaves it out)")
        return True
    have = "unknown" if avail is None else f"{avail / 2**30:.0f} GiB"
    log(f"bench: n = 2^31 + 7 left out: it needs ~{HUGE_HOST_BYTES >> 30} GiB of host memory "
        f"available, this machine has {have} (--huge runs it anyway)")
    return False


def size_label(n):
    """2^k for powers of two, 2^k+d just above one, else the number."""
    k = n.bit_length() - 1
    if n == 1 << k:
        return f"2^{k}"
    d = n - (1 << k)
    if d < 1024 and d * 64 < (1 << k):  # just above a power of two: 2^31+7
        return f"2^{k}+{d}"
    return str(n)


def find_labs(src, build, only):
    """(name, binary path) for every labs/NN_* directory, in order; only: prefixes to keep. A
    student's tree (src labs) also gets each lab's reference solution beside it, named
    'NN_name reference', where it is built (make bench SRC=labs builds it)."""
    labs = sorted(d for d in os.listdir(os.path.join(ROOT, "labs"))
                  if d[:2].isdigit() and os.path.isdir(os.path.join(ROOT, "labs", d)))
    if only:
        labs = [d for d in labs if any(d.startswith(p) for p in only)]
    out = []
    for d in labs:
        out.append((d, os.path.join(build, src, d, "scan")))
        ref = os.path.join(build, "solutions", d, "scan")
        if src == "labs" and os.path.exists(ref):
            out.append((d + " " + REFERENCE, ref))
    return out


def variant_names(binary, timeout=30):
    """The variant names of a lab binary, default first, from `scan --describe`; [] when it cannot
    describe itself (missing, a skeleton that fails, another contract version)."""
    if not os.path.exists(binary):
        return []
    try:
        p = subprocess.run([binary, "--describe"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return []
    info, _ = evaluate.parse_describe(p.stdout) if p.returncode == 0 else (None, "")
    return [v.name for v in info.variants] if info else []


def variant_ops(binary, timeout=30):
    """{variant name: operator} of a lab binary, from `scan --describe` ("add" when a variant
    does not say; {} when the binary cannot describe itself)."""
    if not os.path.exists(binary):
        return {}
    try:
        p = subprocess.run([binary, "--describe"], capture_output=True, text=True, timeout=timeout)
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}
    return {v.get("name"): v.get("op", "add") for v in doc.get("variants", [])}


def expand_variants(labs, timeout=30, every=True, by_op=True):
    """Programs (name, binary, variant, op): with every, each variant of every lab; otherwise each
    lab's default, plus (by_op) every variant of a lab whose variants compute different operators
    (lab 09: its default alone says nothing about max or float +). The default keeps the plain lab
    id, the others are named 'lab/variant'. A binary that cannot describe its variants (missing,
    skeleton that fails) is kept as its default only."""
    out = []
    for name, binary in labs:
        variants = variant_names(binary, timeout)
        ops = variant_ops(binary, timeout)
        out.append((name, binary, None, ops.get(variants[0], "add") if variants else "add"))
        if every or (by_op and len(set(ops.values())) > 1):
            out.extend((f"{name}/{v}", binary, v, ops.get(v, "add")) for v in variants[1:])
    return out


def anchors(cub, programs):
    """The CUB anchor for int + and one more for every other operator a program computes."""
    ops = sorted({op for _, _, _, op in programs if op != "add"})
    return [(CUB, cub, None, "add")] + [(f"{CUB}/{op}", cub, None, op) for op in ops]


def run_json(argv, timeout):
    """Runs one program and returns its JSON report, or a synthetic one saying why there is none."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"no answer within {timeout} s"}
    except OSError as e:
        return {"status": "missing", "message": str(e)}
    for line in reversed(p.stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
    return {"status": "crashed", "message": f"exit {p.returncode}: {tail}"}


def planned_runs(programs, ns):
    """The (program, n) pairs measure() runs, in its order: n by n, every program at each n
    (other variants and operators than the default add stop below 2^31 + 7)."""
    return [(prog, n) for n in ns for prog in programs
            if not ((prog[2] is not None or prog[3] != "add") and n == HUGE_N)]


class Eta:
    """The time left, from the runs so far: a run of n elements is taken to cost a fixed start
    (the fastest run seen) plus a part in proportion to n, fitted on the largest n run yet."""

    def __init__(self, plan):
        self.left = [n for _, n in plan]
        self.spent = []  # (n, seconds)

    def done(self, n, seconds):
        self.left.remove(n)
        self.spent.append((n, seconds))

    def seconds(self):
        if not self.spent:
            return None
        start = min(t for _, t in self.spent)
        top = max(n for n, _ in self.spent)
        at_top = [t for n, t in self.spent if n == top]
        per_elem = max(0.0, sum(at_top) / len(at_top) - start) / top
        return sum(start + per_elem * n for n in self.left)


def clock(seconds):
    """42 s, 3 min 05 s."""
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def measure(programs, ns, args, on_row=None):
    """Runs every program at every n; returns rows (dicts) in run order, handing each to on_row
    as soon as it is measured. Logs progress with the time left to stderr."""
    rows = []
    plan = planned_runs(programs, ns)
    eta, started = Eta(plan), time.monotonic()
    for k, ((name, binary, variant, op), n) in enumerate(plan):
        reps = args.huge_reps if n == HUGE_N else args.reps
        common = ["--json", "--n", str(n), "--dist", args.dist, "--reps", str(reps),
                  "--warmup", str(args.warmup)]
        if k == 0 or plan[k - 1][1] != n:
            cub_ms = {}  # operator -> the CUB anchor's time at this n
        left = eta.seconds()
        log(f"bench: [{k + 1}/{len(plan)}] {name} n={size_label(n)}   "
            f"({clock(time.monotonic() - started)} so far"
            + (f", about {clock(left)} left)" if left is not None else ")"))
        t0 = time.monotonic()
        if not os.path.exists(binary):
            rep = {"status": "missing", "message": f"{binary} is not built"}
        else:
            argv = [binary, *common] + (["--variant", variant] if variant else [])
            if name.startswith(CUB) and op != "add":
                argv += ["--op", op]
            rep = run_json(argv, args.timeout)
        eta.done(n, time.monotonic() - t0)
        row = {"lab": name, "n": n, "status": rep.get("status", "?"),
               "mode": rep.get("mode") or "", "device": rep.get("device") or "",
               "message": rep.get("message") or "", "ms": rep.get("ms"),
               "memcpy_ms": rep.get("memcpy_ms"), "tile_ms": rep.get("tile_ms")}
        row["default"] = variant is None
        if row["status"] == "ok" and row["ms"]:
            row["gbps"] = gbps(n, row["ms"])
            row["pct_memcpy"] = (100.0 * row["memcpy_ms"] / row["ms"]
                                 if row["memcpy_ms"] else None)
            row["pct_floor"] = pct_floor(op, row["ms"], row["memcpy_ms"])
            if row["tile_ms"] and row["memcpy_ms"]:
                row["tile_pct_memcpy"] = 100.0 * row["memcpy_ms"] / row["tile_ms"]
            if name.startswith(CUB):
                cub_ms[op] = row["ms"]
            row["x_cub"] = cub_ms[op] / row["ms"] if cub_ms.get(op) else None
        rows.append(row)
        if on_row:
            on_row(row)
        if name == CUB and row["status"] == "no_device":
            return rows
    log(f"bench: {len(plan)} runs in {clock(time.monotonic() - started)}")
    return rows


# ---- output -------------------------------------------------------------------------------------

CSV_FIELDS = ["lab", "n", "status", "mode", "ms", "gbps", "memcpy_ms", "pct_memcpy", "pct_floor", "x_cub",
              "tile_ms", "tile_pct_memcpy", "device", "message"]


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def csv_cells(r):
    out = dict(r)
    for k, spec in (("ms", ".5f"), ("gbps", ".2f"), ("memcpy_ms", ".5f"), ("pct_memcpy", ".1f"), ("pct_floor", ".1f"),
                    ("x_cub", ".3f"), ("tile_ms", ".5f"), ("tile_pct_memcpy", ".1f")):
        out[k] = fmt(r.get(k), spec)
    return out


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(csv_cells(r))


TABLE_HEAD = (f"{'lab':<34} {'n':>10} {'ms':>10} {'GB/s':>8} {'% memcpy':>9} {'% floor':>8} "
              f"{'x CUB':>7} {'tile pass %':>11}")


def table_line(r):
    """One ok row as a line of the table."""
    name = r["lab"] + (" (host)" if r.get("mode") == "host" else "")
    return (f"{name:<34} {size_label(r['n']):>10} {r['ms']:>10.4f} "
            f"{fmt(r.get('gbps'), '.1f'):>8} {fmt(r.get('pct_memcpy'), '.1f'):>9} "
            f"{fmt(r.get('pct_floor'), '.1f'):>8} "
            f"{fmt(r.get('x_cub'), '.3f'):>7} {fmt(r.get('tile_pct_memcpy'), '.1f'):>11}")


def skipped_lines(rows):
    """The cases not in the table, one line each (after a heading), or []."""
    skipped = [r for r in rows if r["status"] != "ok"]
    if not skipped:
        return []
    return ["", "not in the table:"] + [
        f"  {r['lab']} n={size_label(r['n'])}: {r['status']}" + (f" ({r['message']})" if r["message"] else "")
        for r in skipped]


def table(rows):
    """The table as text: ok rows only, then one line per skipped or failed case."""
    lines = [TABLE_HEAD, "-" * len(TABLE_HEAD)]
    last_n = None
    for r in rows:
        if r["status"] != "ok" or not r.get("ms"):
            continue
        if last_n is not None and r["n"] != last_n:
            lines.append("")
        last_n = r["n"]
        lines.append(table_line(r))
    return "\n".join(lines + skipped_lines(rows))


MD_HEAD = ("| lab | n | status | ms | GB/s | % memcpy | % floor | x CUB | tile pass % |\n"
           "|---|---|---|---|---|---|---|---|---|\n")


def md_line(r):
    return (f"| {r['lab']} | {size_label(r['n'])} | {r['status']} | {fmt(r.get('ms'), '.4f')} | "
            f"{fmt(r.get('gbps'), '.1f')} | {fmt(r.get('pct_memcpy'), '.1f')} | "
            f"{fmt(r.get('pct_floor'), '.1f')} | "
            f"{fmt(r.get('x_cub'), '.3f')} | {fmt(r.get('tile_pct_memcpy'), '.1f')} |\n")


class Stream:
    """Prints each row as it comes (ok rows as table lines, a blank line between sizes) and
    appends it to bench.csv and bench.md at once, flushed, so an interrupted run keeps it."""

    def __init__(self, out_dir, title):
        os.makedirs(out_dir, exist_ok=True)
        self.csv_file = open(os.path.join(out_dir, "bench.csv"), "w", newline="")
        self.csv = csv.DictWriter(self.csv_file, fieldnames=CSV_FIELDS, extrasaction="ignore")
        self.csv.writeheader()
        self.md = open(os.path.join(out_dir, "bench.md"), "w")
        self.md.write(f"# {title}\n\n" + MD_HEAD)
        self.last_n = None
        print(TABLE_HEAD)
        print("-" * len(TABLE_HEAD), flush=True)

    def __call__(self, r):
        self.csv.writerow(csv_cells(r))
        self.csv_file.flush()
        self.md.write(md_line(r))
        self.md.flush()
        if r["status"] == "ok" and r.get("ms"):
            if self.last_n is not None and r["n"] != self.last_n:
                print()
            self.last_n = r["n"]
            print(table_line(r), flush=True)

    def close(self):
        self.csv_file.close()
        self.md.close()


def plot_series(rows):
    """({lab: [(n, GB/s)]} of each lab's default variant, [(n, GB/s)] of memcpy timed in the
    anchor's own process)."""
    series, memcpy = {}, []
    for r in rows:
        if r["status"] != "ok" or not r.get("gbps") or not r.get("default", True):
            continue  # one line per lab: its default variant (the CSV has every variant)
        series.setdefault(r["lab"], []).append((r["n"], r["gbps"]))
        if r["lab"] == CUB and r.get("memcpy_ms"):
            memcpy.append((r["n"], gbps(r["n"], r["memcpy_ms"])))
    return series, memcpy


# ---- main ---------------------------------------------------------------------------------------

# The default run (a few minutes on an H100) and --full, today's exhaustive sweep; an option given
# on the command line wins over either.
# The default leaves out the operator variants of labs 09 and 10: on an H200 their host-side check
# of every call (the ops harness checks each call on the host) made them 290 of 366 seconds.
QUICK = {"min": 20, "max": 28, "step": 2, "reps": 10, "warmup": 2, "huge": "no", "variants": "default"}
FULL = {"min": 10, "max": 28, "step": 2, "reps": 20, "warmup": 3, "huge": "auto", "variants": "ops"}


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Every lab against CUB DeviceScan and a memcpy.")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory")
    ap.add_argument("--src", default="solutions", choices=["solutions", "labs"],
                    help="which tree's binaries (default: the reference solutions)")
    ap.add_argument("--labs", default="", help="comma-separated lab prefixes, e.g. 07,08")
    ap.add_argument("--full", action="store_true",
                    help="the exhaustive sweep: n = 2^10 ... 2^28 (and 2^31 + 7 when the RAM is "
                         "there), 20 timed rounds after 3 warm-ups")
    ap.add_argument("--min", type=int, default=None, help="smallest n is 2^MIN (default 20; --full 10)")
    ap.add_argument("--max", type=int, default=None, help="largest n is 2^MAX (default 28)")
    ap.add_argument("--step", type=int, default=None, help="exponent step (default 2; 1 for all)")
    huge = ap.add_mutually_exclusive_group()
    huge.add_argument("--huge", dest="huge", action="store_const", const="yes", default=None,
                      help="always add n = 2^31 + 7 (default: no; --full: when ~40 GiB of RAM "
                           "are free)")
    huge.add_argument("--no-huge", dest="huge", action="store_const", const="no",
                      help="never add n = 2^31 + 7")
    ap.add_argument("--reps", type=int, default=None, help="timed rounds per case (default 10; --full 20)")
    ap.add_argument("--huge-reps", type=int, default=5, help="timed rounds at 2^31 + 7")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs first (default 2; --full 3)")
    ap.add_argument("--variants", default=None, choices=["default", "ops", "all"],
                    help="default: each lab's default (graded) variant; ops (--full's): also each "
                         "operator of labs 09 and 10 against CUB's; all: every variant "
                         "(up to 2^MAX; n = 2^31 + 7 stays default-only)")
    ap.add_argument("--dist", default="random", help="input distribution (default random)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per program run")
    ap.add_argument("--out", default=None, help="output folder (default BUILD/bench)")
    ap.add_argument("--cub", default=None, help="the anchor binary (default BUILD/bench/bench_cub)")
    args = ap.parse_args(argv)
    for key, value in (FULL if args.full else QUICK).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if not 0 <= args.min <= args.max <= 34 or args.step < 1:
        ap.error("need 0 <= --min <= --max <= 34 and --step >= 1")
    if args.reps < 1 or args.huge_reps < 1 or args.warmup < 0:
        ap.error("--reps and --huge-reps must be at least 1, --warmup at least 0")
    return args


def write_plot(out_dir, rows, src):
    device = next((r["device"] for r in rows if r["lab"] == CUB and r["device"]), "GPU")
    with open(os.path.join(out_dir, "bench.svg"), "w") as f:
        series, memcpy = plot_series(rows)
        f.write(bench_plot.svg_plot(series, memcpy, f"Inclusive scan, int32, {src}: throughput on {device}",
                                    anchor=CUB))
    return device


def main(argv=None):
    args = parse_args(argv)
    build = os.path.abspath(args.build)
    out_dir = args.out or os.path.join(build, "bench")
    cub = args.cub or os.path.join(build, "bench", "bench_cub")
    only = [p.strip() for p in args.labs.split(",") if p.strip()]
    labs = find_labs(args.src, build, only)
    lab_programs = expand_variants(labs, every=args.variants == "all", by_op=args.variants != "default")
    programs = anchors(cub, lab_programs) + lab_programs
    if not lab_programs:
        log(f"bench: no lab matches --labs {args.labs}")
        return EXIT_USAGE
    if not os.path.exists(cub):
        log(f"bench: the CUB anchor {cub} is not built: run make bench")
        return EXIT_USAGE

    print(f"tree: {args.src}   (x CUB = time of CUB with the same operator / lab time; % memcpy = "
          f"memcpy time / scan time, both measured in the lab's own process)", flush=True)
    stream = Stream(out_dir, f"Inclusive scan, int32, {args.src}")
    rows = []
    try:
        rows = measure(programs, sizes(args.min, args.max, args.step, want_huge(args.huge)), args,
                       on_row=lambda r: (rows.append(r), stream(r)))
    except KeyboardInterrupt:
        stream.close()
        write_plot(out_dir, rows, args.src)
        print("\n".join(skipped_lines(rows)))
        log(f"bench: interrupted after {len(rows)} runs; they are in {out_dir}/bench.csv, bench.md "
            f"and bench.svg")
        return 130
    stream.close()
    if rows and rows[-1]["lab"] == CUB and rows[-1]["status"] == "no_device":
        log(f"bench: needs a CUDA GPU: {rows[-1]['message']}")
        return EXIT_NO_DEVICE

    device = write_plot(out_dir, rows, args.src)
    for line in skipped_lines(rows):
        print(line)
    print(f"\ndevice: {device}; wrote {os.path.join(out_dir, 'bench.csv')}, bench.md and bench.svg")
    failed = [r for r in rows if r["status"] not in SKIP_STATUSES | {"ok"}]
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
