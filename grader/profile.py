#!/usr/bin/env python3
"""make profile: one lab's kernels under Nsight Compute, a short table per kernel.

    profile.py --binary build/solutions/05_blelloch/scan [--ncu PATH] [--csv FILE] [-- ARGS...]

Runs the lab binary once (ARGS, by default `--n N --reps 0 --warmup 0` with N the lab's benchmark
size, at most 2^26: one checked call) under `ncu` with one fixed set of metrics, leaves out the harness's own kernels
(common/driver.cu, common/verify.cu: input, checks, carries) and prints, per kernel of the lab:
DRAM throughput as % of peak, achieved and theoretical occupancy, registers and spilled
accesses, shared-memory bank conflicts, and the three warp-stall reasons that cost most, each
with one line on what it means. Launches of one kernel are summed (times, counts) or weighted by
their duration (percentages, stalls). --csv keeps ncu's raw output.

Exit codes: 0 done; 1 the lab run or ncu failed; 2 usage (a host-only lab, a missing binary);
5 no CUDA device; 10 no ncu; 11 ncu may not read the GPU's counters (permissions).
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "grader") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402 (the path above first)

EXIT_OK, EXIT_USAGE, EXIT_NO_DEVICE = (contract.EXIT[k] for k in ("OK", "USAGE", "NO_DEVICE"))
EXIT_FAILED, EXIT_NO_NCU, EXIT_NO_PERMISSION = 1, 10, 11
DEFAULT_N = 1 << 26

DURATION = "gpu__time_duration.sum"
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
REGISTERS = "launch__registers_per_thread"
LOCAL = ("smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum")
SHARED = ("smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum")
CONFLICTS = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
METRICS = [DURATION, DRAM, OCCUPANCY, THEORETICAL, REGISTERS, *LOCAL, *SHARED, *CONFLICTS,
           r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"]

# What each stall reason means, in one line (Nsight Compute's "Warp State" names).
STALL_MEANING = {
    "barrier": "waiting at __syncthreads() for the rest of the block",
    "long_scoreboard": "waiting for a global (or local) memory load: DRAM/L2 latency",
    "short_scoreboard": "waiting for shared memory or a slow math unit (MUFU)",
    "wait": "a fixed wait after an instruction (dependent arithmetic, a short chain)",
    "mio_throttle": "the shared-memory/special-instruction queue is full",
    "lg_throttle": "the global-memory instruction queue is full: too many loads/stores in flight",
    "math_pipe_throttle": "the arithmetic unit it needs is busy",
    "not_selected": "ready, but another warp was picked: plenty of work (harmless)",
    "selected": "issuing an instruction (not a stall)",
    "membar": "waiting at a memory fence (__threadfence)",
    "sleeping": "asleep in __nanosleep (a polite spin-wait)",
    "branch_resolving": "waiting for a branch target or a warp's divergence to resolve",
    "dispatch_stall": "the dispatcher could not issue (a pipeline conflict)",
    "drain": "at exit, waiting for its stores to drain to memory",
    "no_instruction": "instruction cache miss, or waiting after a branch",
    "imc_miss": "constant-cache miss (kernel arguments, __constant__)",
    "misc": "other reasons",
    "tex_throttle": "the texture unit's queue is full",
    "gmma": "waiting for a warpgroup matrix operation",
}


def fail(code, msg):
    print(f"make profile: {msg}", file=sys.stderr)
    sys.exit(code)


def harness_kernels():
    """Names of the harness's own kernels, read from common/driver.cu and common/verify.cu."""
    names = set()
    for f in ("driver.cu", "verify.cu"):
        with open(os.path.join(ROOT, "common", f), encoding="utf-8") as src:
            names.update(re.findall(r"__global__\s+void\s+(\w+)", src.read()))
    return names


def base_name(kernel):
    """The function name in ncu's "void name<args>(params)": name."""
    m = re.match(r"(?:void\s+)?([A-Za-z_]\w*)", kernel.strip())
    return m.group(1) if m else kernel


def number(text):
    """ncu's CSV value ("2,869", "74.29", "n/a") as a float, or None."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse(csv_text, skip):
    """{kernel: {"launches": k, "metrics": {name: [(value, duration)]}}} from ncu's --csv
    output, in order of first launch, leaving out the kernels whose base name is in skip."""
    start = csv_text.find('"ID"')
    if start < 0:
        return {}
    kernels = {}
    launches = {}
    for row in csv.DictReader(io.StringIO(csv_text[start:])):
        name = row.get("Kernel Name", "")
        if base_name(name) in skip:
            continue
        k = kernels.setdefault(name, {"launches": set(), "rows": {}})
        k["launches"].add(row["ID"])
        value = number(row.get("Metric Value", ""))
        if value is not None:
            launches.setdefault((name, row["ID"]), {})[row["Metric Name"]] = value
    for (name, _), metrics in launches.items():
        dur = metrics.get(DURATION, 0.0)
        for metric, value in metrics.items():
            kernels[name]["rows"].setdefault(metric, []).append((value, dur))
    return {name: {"launches": len(k["launches"]), "metrics": k["rows"]}
            for name, k in kernels.items()}


def total(k, metric):
    return sum(v for v, _ in k["metrics"].get(metric, []))


def weighted(k, metric):
    """The duration-weighted mean of a metric over the kernel's launches (None when missing)."""
    rows = k["metrics"].get(metric, [])
    if not rows:
        return None
    weight = sum(d for _, d in rows)
    return sum(v * d for v, d in rows) / weight if weight else sum(v for v, _ in rows) / len(rows)


def top_stalls(k, count=3):
    """The `count` stall reasons with the most cycles per issued instruction, "selected" left
    out (it is issuing, not stalled)."""
    stalls = []
    for metric in k["metrics"]:
        m = STALL.match(metric)
        if m and m.group(1) != "selected":
            stalls.append((weighted(k, metric), m.group(1)))
    stalls.sort(reverse=True)
    return [(reason, value) for value, reason in stalls[:count] if value]


def fmt(value, spec, missing="n/a"):
    return missing if value is None else format(value, spec)


def table(kernels):
    """The report's lines, one block per kernel."""
    lines = []
    for name, k in kernels.items():
        ms = total(k, DURATION) / 1e6
        regs = max((v for v, _ in k["metrics"].get(REGISTERS, [])), default=None)
        spilled = total(k, LOCAL[0]) + total(k, LOCAL[1])
        shared = total(k, SHARED[0]) + total(k, SHARED[1])
        conflicts = total(k, CONFLICTS[0]) + total(k, CONFLICTS[1])
        launches = k["launches"]
        lines.append(f"{name}")
        lines.append(f"  {launches} launch{'es' if launches != 1 else ''}, {ms:.3f} ms in all")
        lines.append(f"  DRAM throughput     {fmt(weighted(k, DRAM), '5.1f')} % of peak"
                     "      near 80-90 %: the kernel is as fast as device memory lets it be")
        lines.append(f"  occupancy           {fmt(weighted(k, OCCUPANCY), '5.1f')} % achieved, "
                     f"{fmt(weighted(k, THEORETICAL), '.1f')} % possible"
                     "   resident warps per SM, as % of the 64 an SM holds")
        lines.append(f"  registers           {fmt(regs, '5.0f')} per thread, "
                     f"{spilled:.0f} local loads/stores"
                     "   local memory traffic > 0: registers spilled (or a local array)")
        ratio = f" ({100 * conflicts / shared:.1f} % of them)" if shared else ""
        lines.append(f"  bank conflicts      {conflicts:5.0f} extra shared-memory passes over "
                     f"{shared:.0f} accesses{ratio}")
        stalls = top_stalls(k)
        if stalls:
            lines.append("  top stalls (cycles per issued instruction):")
            for reason, value in stalls:
                lines.append(f"    {reason:18} {value:6.2f}   {STALL_MEANING.get(reason, '')}")
    return lines


def find_ncu(explicit):
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    path = os.path.join(cuda, "bin", "ncu")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def describe(binary):
    """The lab's --describe JSON (its id, shape and benchmark n)."""
    out = subprocess.run([binary, "--describe"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        fail(EXIT_USAGE, f"{binary} --describe failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the lab binary (build/<src>/<NN_name>/scan)")
    ap.add_argument("--ncu", help="the ncu program (default: on PATH, or $CUDA_HOME/bin/ncu)")
    ap.add_argument("--csv", help="also write ncu's raw CSV here")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the lab binary's options")
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if not os.path.isfile(a.binary):
        fail(EXIT_USAGE, f"{a.binary} does not exist: build it first (make all LAB=NN)")
    lab = describe(a.binary)
    if lab.get("mode") == "cpu":
        fail(EXIT_NO_DEVICE, "this is a CPU-mode build: Nsight Compute measures a GPU (CPU mode "
             "counts bank conflicts: make run LAB=NN CPU=1)")
    if lab.get("shape") == "host":
        fail(EXIT_USAGE, f"lab {lab.get('id', '?')} runs on the CPU: it has no kernel to profile")
    ncu = find_ncu(a.ncu)
    if not ncu:
        fail(EXIT_NO_NCU, "Nsight Compute (ncu) was not found: it comes with the CUDA Toolkit "
             "(nsight-compute); put it on PATH or set CUDA_HOME")
    if not args:  # one checked call at the benchmark size, at most 2^26 (steady state by then)
        args = ["--n", str(min(lab.get("bench_n") or DEFAULT_N, DEFAULT_N)), "--reps", "0",
                "--warmup", "0"]
    cmd = [ncu, "--csv", "--metrics", ",".join(METRICS), a.binary, *args]
    print(f"make profile: {' '.join(cmd[:1] + cmd[3:])}", file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if a.csv:
        with open(a.csv, "w", encoding="utf-8") as f:
            f.write(p.stdout)
    said = p.stdout + p.stderr
    if "ERR_NVGPUCTRPERM" in said:
        fail(EXIT_NO_PERMISSION, "ncu may not read the GPU's performance counters "
             "(ERR_NVGPUCTRPERM): run as root, or ask the administrator to allow profiling "
             "(NVreg_RestrictProfilingToAdminUsers=0)")
    result = [ln for ln in p.stdout.splitlines() if not ln.startswith(("==", '"'))]
    kernels = parse(p.stdout, harness_kernels())
    if not kernels:
        if "no CUDA device" in said or p.returncode == EXIT_NO_DEVICE:
            fail(EXIT_NO_DEVICE, "no CUDA device: Nsight Compute measures a GPU")
        tail = "\n".join(said.strip().splitlines()[-5:])
        fail(EXIT_FAILED, f"ncu profiled none of the lab's kernels (exit {p.returncode}):\n{tail}")
    if result:
        print("\n".join(result))
    print("\n".join(table(kernels)))
    return EXIT_OK if p.returncode == 0 else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
