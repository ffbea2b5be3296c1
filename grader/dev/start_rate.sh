#!/usr/bin/env bash
# start_rate.sh — how many CUDA processes a second this machine can start: one GPU, then all.
#
# Every graded run is a process, and each one creates a CUDA context when it starts. The driver
# does part of that work one process at a time for the whole machine, so a machine has a ceiling
# on process starts a second that adding GPUs does not raise. A class graded with --gpus all goes
# no faster than that ceiling allows: bench_grader.py prints how many lab processes a submission
# starts (K), and 3600 * RATE / K is the most submissions an hour this machine can grade.
#
# Usage: grader/dev/start_rate.sh [SECONDS] [PROCESSES_PER_GPU] [-- COMMAND ...]
#   SECONDS            how long each measurement runs (default 8)
#   PROCESSES_PER_GPU  processes starting at once on each GPU (default 8, about the grader's
#                      --gpu-jobs)
#   COMMAND            the process to start instead of the tiny program below, e.g. a lab:
#                      -- build/solutions/02_naive/scan --n 1024 (what a start of a real lab
#                      costs, its harness and module loading included)
# It builds a tiny CUDA program (nvcc: $NVCC, else on PATH, else /usr/local/cuda/bin) in a
# temporary folder and starts it in loops: one loop alone on the first GPU, PROCESSES_PER_GPU
# loops on the first GPU, then PROCESSES_PER_GPU loops on every GPU. Each process runs with the
# environment the grader gives a lab run (CUDA_DEVICE_MAX_CONNECTIONS=1). Run it on an idle
# machine: it measures the machine, not a grade.
# Exit codes: 0 measured, 2 bad arguments, 3 no nvcc, no GPU, or the program does not run.
set -u
die() { # exit code, message
    echo "start_rate: $2" >&2
    exit "$1"
}
usage="usage: start_rate.sh [SECONDS>=1] [PROCESSES_PER_GPU>=1] [-- COMMAND ...]"
secs=8
per=8
[ $# -gt 0 ] && [ "$1" != -- ] && { secs=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { per=$1; shift; }
cmd=()
if [ $# -gt 0 ]; then
    [ "$1" = -- ] && [ $# -ge 2 ] || die 2 "$usage"
    shift
    cmd=("$@")
fi
[[ $secs =~ ^[0-9]+$ && $per =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] && [ "$per" -ge 1 ] || die 2 "$usage"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ ${#cmd[@]} -gt 0 ] || [ -x "$nvcc" ] || die 3 "no nvcc (set NVCC, or put the CUDA toolkit's bin on PATH)"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${gpus:-0}" -ge 1 ] || die 3 "no GPU (nvidia-smi lists none): this measures CUDA process starts"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/start-rate.XXXXXX")
# the loops (in rate's subshell) stop at the stop file, or when the program is gone
trap 'touch "$tmp/stop" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if [ ${#cmd[@]} -eq 0 ]; then
    cat > "$tmp/start.cu" <<'EOF'
// What a graded run's start costs the driver: a context, a small buffer, one kernel, exit.
#include <cuda_runtime.h>
__global__ void touch(int *p) { p[threadIdx.x] = (int)threadIdx.x; }
int main()
{
    int *p = 0;
    if (cudaMalloc(&p, 32 * sizeof(int)) != cudaSuccess) return 1;
    touch<<<1, 32>>>(p);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    cudaFree(p);
    return 0;
}
EOF
    "$nvcc" -O2 -arch=native -o "$tmp/start" "$tmp/start.cu" 2> "$tmp/nvcc.log" ||
        die 3 "nvcc failed: $(tail -1 "$tmp/nvcc.log")"
    cmd=("$tmp/start")
fi
export CUDA_DEVICE_MAX_CONNECTIONS=1  # evaluate.RUN_ENV: what every lab run gets
CUDA_VISIBLE_DEVICES=0 "${cmd[@]}" > /dev/null || die 3 "${cmd[*]} fails on GPU 0 (is the GPU usable?)"

# rate LOOPS_PER_GPU GPUS: starts counted over $secs seconds; prints "starts ms_per_start"
rate() {
    rm -f "$tmp/stop" "$tmp"/n.*
    local g j loops=()
    for ((g = 0; g < $2; g++)); do
        for ((j = 0; j < $1; j++)); do
            (n=0; while [ ! -f "$tmp/stop" ]; do CUDA_VISIBLE_DEVICES=$g "${cmd[@]}" > /dev/null || break; n=$((n + 1)); done
             echo $n > "$tmp/n.$g.$j") &
            loops+=($!)
        done
    done
    sleep "$secs"
    touch "$tmp/stop"
    wait "${loops[@]}"
    local total
    total=$(cat "$tmp"/n.* | awk '{s += $1} END {print s + 0}')
    awk -v t="$total" -v s="$secs" -v l=$(($1 * $2)) \
        'BEGIN {printf "%5.1f starts a second, %6.0f ms a start (%d in %d s)", t / s, t ? 1000 * s * l / t : 0, t, s}'
}

echo "start_rate: ${cmd[*]##*/} on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $gpus, $(nproc) cores, ${secs} s each"
printf '  %-30s %s\n' "1 process alone on GPU 0:" "$(rate 1 1)"
printf '  %-30s %s\n' "$per at once on GPU 0:" "$(rate "$per" 1)"
if [ "$gpus" -gt 1 ]; then
    printf '  %-30s %s\n' "$per at once on each of $gpus GPUs:" "$(rate "$per" "$gpus")"
fi
echo "A class graded with --gpus all cannot start more processes a second than the last line;"
echo "bench_grader.py says how many a submission starts."
