#!/usr/bin/env python3
"""make bench: every lab of a tree against CUB's DeviceScan and a device-to-device memcpy.

For each n (2^10 ... 2^28, and 2^31 + 7 where the host has the memory for it) this runs the CUB anchor
(build/bench/bench_cub, common/bench_cub.cu) and each lab binary build/<src>/<NN_name>/scan with
`--json --n N`. Every program validates its output, then times itself the same way: warm-up runs,
then the median of `reps` rounds, each round timing a device memcpy of the same bytes and the scan
with CUDA events, each after a write that flushes L2 (see grader/BENCH.md). A lab that reports
not_implemented, too_large (over its max_n) or no_memory at some n is left out at that n.

Writes, under --out (build/bench by default):
  bench.csv   one row per (program, n): status, ms, GB/s, memcpy ms, % of memcpy, x CUB
  bench.svg   GB/s against n, one line per lab, CUB and memcpy as reference lines
and prints the table to stdout (progress goes to stderr).

Exit codes: 0 done; 1 a program failed (wrong output, CUDA error, crash, timeout); 2 usage;
5 no CUDA device (the anchor could not run).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "grader") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402 (the path above first)
from gradelib import evaluate  # noqa: E402

# This program's exit codes: 0 and 2 as a lab binary's, 1 for any program's failure, and a lab
# binary's "no device" when the anchor found none.
EXIT_OK, EXIT_USAGE, EXIT_NO_DEVICE = (contract.EXIT[k] for k in ("OK", "USAGE", "NO_DEVICE"))
EXIT_FAILED = 1
SKIP_STATUSES = {"not_implemented", "too_large", "no_memory", "missing"}
HUGE_N = (1 << 31) + 7
HUGE_HOST_BYTES = 40 << 30  # a lab process at 2^31 + 7 holds ~35 GB of host buffers
CUB = "cub"

# Line colours for the plot (labs cycle through them).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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
    """(lab id, binary path) for every labs/NN_* directory, in order; only: prefixes to keep."""
    labs = sorted(d for d in os.listdir(os.path.join(ROOT, "labs"))
                  if d[:2].isdigit() and os.path.isdir(os.path.join(ROOT, "labs", d)))
    if only:
        labs = [d for d in labs if any(d.startswith(p) for p in only)]
    return [(d, os.path.join(build, src, d, "scan")) for d in labs]


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


def expand_variants(labs, timeout=30, every=True):
    """Programs (name, binary, variant, op): with every, each variant of every lab; otherwise each
    lab's default, plus every variant of a lab whose variants compute different operators (lab
    09: its default alone says nothing about max or float +). The default keeps the plain lab
    id, the others are named 'lab/variant'. A binary that cannot describe its variants (missing,
    skeleton that fails) is kept as its default only."""
    out = []
    for name, binary in labs:
        variants = variant_names(binary, timeout)
        ops = variant_ops(binary, timeout)
        out.append((name, binary, None, ops.get(variants[0], "add") if variants else "add"))
        if every or len(set(ops.values())) > 1:
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


def measure(programs, ns, args):
    """Runs every program at every n; returns rows (dicts) in run order."""
    rows = []
    for n in ns:
        reps = args.huge_reps if n == HUGE_N else args.reps
        common = ["--json", "--n", str(n), "--dist", args.dist, "--reps", str(reps),
                  "--warmup", str(args.warmup)]
        cub_ms = {}  # operator -> the CUB anchor's time at this n
        for name, binary, variant, op in programs:
            if (variant is not None or op != "add") and n == HUGE_N:
                continue  # other variants and operators are measured up to 2^MAX only
            if not os.path.exists(binary):
                rep = {"status": "missing", "message": f"{binary} is not built"}
            else:
                log(f"bench: {name} n={size_label(n)}")
                argv = [binary, *common] + (["--variant", variant] if variant else [])
                if name.startswith(CUB) and op != "add":
                    argv += ["--op", op]
                rep = run_json(argv, args.timeout)
            row = {"lab": name, "n": n, "status": rep.get("status", "?"),
                   "mode": rep.get("mode") or "", "device": rep.get("device") or "",
                   "message": rep.get("message") or "", "ms": rep.get("ms"),
                   "memcpy_ms": rep.get("memcpy_ms"), "tile_ms": rep.get("tile_ms")}
            row["default"] = variant is None
            if row["status"] == "ok" and row["ms"]:
                row["gbps"] = gbps(n, row["ms"])
                row["pct_memcpy"] = (100.0 * row["memcpy_ms"] / row["ms"]
                                     if row["memcpy_ms"] else None)
                if row["tile_ms"] and row["memcpy_ms"]:
                    row["tile_pct_memcpy"] = 100.0 * row["memcpy_ms"] / row["tile_ms"]
                if name.startswith(CUB):
                    cub_ms[op] = row["ms"]
                row["x_cub"] = cub_ms[op] / row["ms"] if cub_ms.get(op) else None
            rows.append(row)
            if name == CUB and row["status"] == "no_device":
                return rows
    return rows


# ---- output -------------------------------------------------------------------------------------

CSV_FIELDS = ["lab", "n", "status", "mode", "ms", "gbps", "memcpy_ms", "pct_memcpy", "x_cub",
              "tile_ms", "tile_pct_memcpy", "device", "message"]


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            out = dict(r)
            for k, spec in (("ms", ".5f"), ("gbps", ".2f"), ("memcpy_ms", ".5f"),
                            ("pct_memcpy", ".1f"), ("x_cub", ".3f"), ("tile_ms", ".5f"),
                            ("tile_pct_memcpy", ".1f")):
                out[k] = fmt(r.get(k), spec)
            w.writerow(out)


def table(rows):
    """The table as text: ok rows only, then one line per skipped or failed case."""
    head = (f"{'lab':<34} {'n':>10} {'ms':>10} {'GB/s':>8} {'% memcpy':>9} {'x CUB':>7} "
            f"{'tile pass %':>11}")
    lines = [head, "-" * len(head)]
    last_n = None
    for r in rows:
        if r["status"] != "ok" or not r.get("ms"):
            continue
        if last_n is not None and r["n"] != last_n:
            lines.append("")
        last_n = r["n"]
        name = r["lab"] + (" (host)" if r.get("mode") == "host" else "")
        lines.append(f"{name:<34} {size_label(r['n']):>10} {r['ms']:>10.4f} "
                     f"{fmt(r.get('gbps'), '.1f'):>8} {fmt(r.get('pct_memcpy'), '.1f'):>9} "
                     f"{fmt(r.get('x_cub'), '.3f'):>7} {fmt(r.get('tile_pct_memcpy'), '.1f'):>11}")
    skipped = [r for r in rows if r["status"] != "ok"]
    if skipped:
        lines.append("")
        lines.append("not in the table:")
        for r in skipped:
            lines.append(f"  {r['lab']} n={size_label(r['n'])}: {r['status']}"
                         + (f" ({r['message']})" if r["message"] else ""))
    return "\n".join(lines)


def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def svg_plot(rows, title):
    """GB/s against log2(n): one polyline per lab, CUB dashed, memcpy (from the anchor's own
    process) dotted. Standard library only: the SVG is written as text."""
    W, H, L, R, T, B = 900, 540, 70, 230, 50, 60
    series = {}
    memcpy = []
    for r in rows:
        if r["status"] != "ok" or not r.get("gbps") or not r.get("default", True):
            continue  # one line per lab: its default variant (the CSV has every variant)
        series.setdefault(r["lab"], []).append((r["n"], r["gbps"]))
        if r["lab"] == CUB and r.get("memcpy_ms"):
            memcpy.append((r["n"], gbps(r["n"], r["memcpy_ms"])))
    pts = [p for s in series.values() for p in s] + memcpy
    if not pts:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="120">'
                f'<text x="20" y="60">{esc(title)}: no results</text></svg>\n')
    xs = [math.log2(n) for n, _ in pts]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    if x1 == x0:
        x1 = x0 + 1
    ymax = max(g for _, g in pts) * 1.08
    step = 10 ** math.floor(math.log10(ymax / 5)) if ymax > 0 else 1
    for m in (1, 2, 5, 10):
        if ymax / (step * m) <= 8:
            step *= m
            break
    ymax = math.ceil(ymax / step) * step

    def px(n):
        return L + (math.log2(n) - x0) / (x1 - x0) * (W - L - R)

    def py(g):
        return T + (1 - g / ymax) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="28" font-size="16">{esc(title)}</text>']
    y = 0.0
    while y <= ymax + 1e-9:
        out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    for k in range(x0, x1 + 1):
        out.append(f'<line x1="{px(1 << k):.1f}" y1="{T}" x2="{px(1 << k):.1f}" y2="{H - B}" '
                   f'stroke="#eee"/>')
        out.append(f'<text x="{px(1 << k):.1f}" y="{H - B + 16}" text-anchor="middle">2^{k}</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" '
               f'stroke="#444"/>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 18}" text-anchor="middle">'
               f'n (int32 elements, log scale)</text>')
    out.append(f'<text transform="translate(18 {(T + H - B) / 2:.0f}) rotate(-90)" '
               f'text-anchor="middle">GB/s (8n bytes / time)</text>')

    legend = []
    labs = [k for k in series if k != CUB]
    styles = [(name, PALETTE[i % len(PALETTE)], "", 2) for i, name in enumerate(labs)]
    if CUB in series:
        styles.append((CUB, "#000", "8 4", 2.5))
    lines = dict(series)
    if memcpy:
        lines["memcpy"] = memcpy
        styles.append(("memcpy", "#888", "2 3", 2.5))
    for name, colour, dash, width in styles:
        p = sorted(lines[name])
        d = " ".join(f"{px(n):.1f},{py(g):.1f}" for n, g in p)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr} '
                   f'points="{d}"><title>{esc(name)}</title></polyline>')
        for n, g in p:
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(g):.1f}" r="2.5" fill="{colour}"/>')
        legend.append((name, colour, dash, width))
    for i, (name, colour, dash, width) in enumerate(legend):
        yy = T + 10 + 20 * i
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        label = {CUB: "CUB DeviceScan", "memcpy": "device memcpy"}.get(name, name)
        out.append(f'<line x1="{W - R + 15}" y1="{yy}" x2="{W - R + 45}" y2="{yy}" '
                   f'stroke="{colour}" stroke-width="{width}"{dash_attr}/>')
        out.append(f'<text x="{W - R + 52}" y="{yy + 4}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---- main ---------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description="Every lab against CUB DeviceScan and a memcpy.")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory")
    ap.add_argument("--src", default="solutions", choices=["solutions", "labs"],
                    help="which tree's binaries (default: the reference solutions)")
    ap.add_argument("--labs", default="", help="comma-separated lab prefixes, e.g. 07,08")
    ap.add_argument("--min", type=int, default=10, help="smallest n is 2^MIN (default 10)")
    ap.add_argument("--max", type=int, default=28, help="largest n is 2^MAX (default 28)")
    ap.add_argument("--step", type=int, default=2, help="exponent step (default 2; 1 for all)")
    huge = ap.add_mutually_exclusive_group()
    huge.add_argument("--huge", dest="huge", action="store_const", const="yes", default="auto",
                      help="always add n = 2^31 + 7 (default: when ~40 GiB of RAM are free)")
    huge.add_argument("--no-huge", dest="huge", action="store_const", const="no",
                      help="never add n = 2^31 + 7")
    ap.add_argument("--reps", type=int, default=20, help="timed rounds per case (default 20)")
    ap.add_argument("--huge-reps", type=int, default=5, help="timed rounds at 2^31 + 7")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    ap.add_argument("--variants", default="default", choices=["default", "all"],
                    help="default: each lab's default (graded) variant; all: every variant "
                         "(up to 2^MAX; n = 2^31 + 7 stays default-only)")
    ap.add_argument("--dist", default="random", help="input distribution (default random)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per program run")
    ap.add_argument("--out", default=None, help="output folder (default BUILD/bench)")
    ap.add_argument("--cub", default=None, help="the anchor binary (default BUILD/bench/bench_cub)")
    args = ap.parse_args(argv)
    if not 0 <= args.min <= args.max <= 34 or args.step < 1:
        ap.error("need 0 <= --min <= --max <= 34 and --step >= 1")
    if args.reps < 1 or args.huge_reps < 1 or args.warmup < 0:
        ap.error("--reps and --huge-reps must be at least 1, --warmup at least 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    build = os.path.abspath(args.build)
    out_dir = args.out or os.path.join(build, "bench")
    cub = args.cub or os.path.join(build, "bench", "bench_cub")
    only = [p.strip() for p in args.labs.split(",") if p.strip()]
    labs = find_labs(args.src, build, only)
    lab_programs = expand_variants(labs, every=args.variants == "all")
    programs = anchors(cub, lab_programs) + lab_programs
    if not lab_programs:
        log(f"bench: no lab matches --labs {args.labs}")
        return EXIT_USAGE
    if not os.path.exists(cub):
        log(f"bench: the CUB anchor {cub} is not built: run make bench")
        return EXIT_USAGE

    rows = measure(programs, sizes(args.min, args.max, args.step, want_huge(args.huge)), args)
    if rows and rows[-1]["lab"] == CUB and rows[-1]["status"] == "no_device":
        log(f"bench: needs a CUDA GPU: {rows[-1]['message']}")
        return EXIT_NO_DEVICE

    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "bench.csv"), rows)
    device = next((r["device"] for r in rows if r["lab"] == CUB and r["device"]), "GPU")
    with open(os.path.join(out_dir, "bench.svg"), "w") as f:
        f.write(svg_plot(rows, f"Inclusive scan, int32, {args.src}: throughput on {device}"))
    print(f"device: {device}   tree: {args.src}   (x CUB = time of CUB with the same operator / lab time; "
          f"% memcpy = memcpy time / scan time, both measured in the lab's own process)")
    print(table(rows))
    print(f"\nwrote {os.path.join(out_dir, 'bench.csv')} and {os.path.join(out_dir, 'bench.svg')}")
    failed = [r for r in rows if r["status"] not in SKIP_STATUSES | {"ok"}]
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
