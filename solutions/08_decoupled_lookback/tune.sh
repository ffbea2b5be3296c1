#!/usr/bin/env bash
# tune.sh — builds the lab 08 reference with several tile shapes (LB_THREADS x LB_VECS int4 per
# thread, plus any other LB_* macro of scan.cu) and times each against the CUB anchor at a few
# sizes, with the harness's method. Instructors' tool for choosing the defaults; needs a GPU.
#   usage: solutions/08_decoupled_lookback/tune.sh [BUILD] ["CONFIG ..."] ["n ..."]
#   CONFIG: threads:vecs[:MACRO=V,MACRO=V], e.g. 256:4 or 256:4:LB_ORDERED=1,LB_PERSISTENT=0
# The last two lines name the fastest config at the largest size and its -D flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
CONFIGS=${2:-"128:12 128:8 128:16 256:6 128:12:LB_FIRST_DELAY_NS=0,LB_BACKOFF_NS=0 128:12:LB_FIRST_DELAY_NS=700,LB_BACKOFF_NS=0 128:12:LB_ORDERED=1 128:12:LB_PERSISTENT=1,LB_PREFETCH=0"}
SIZES=${3:-"2^20 2^24 2^28"}
NVCC=${NVCC:-nvcc}
make --no-print-directory BUILD="$B" "$B/common/check.o" "$B/common/cuda_check.o" \
    "$B/common/harness.o" "$B/common/driver.o" "$B/common/main.o" "$B/bench/bench_cub" >/dev/null
# dir_of CONFIG: a folder name for it; defs_of CONFIG: its -D flags
dir_of() { echo "$B/tune08/$(echo "$1" | sed 's/[:,=]/_/g')"; }
defs_of() {
    IFS=: read -r t v extra <<<"$1"
    echo "-DLB_THREADS=$t -DLB_VECS=$v"
    for m in ${extra//,/ }; do echo "-D$m"; done
}
for c in $CONFIGS; do
    d=$(dir_of "$c")
    mkdir -p "$d"
    # shellcheck disable=SC2046
    ( $NVCC -std=c++17 -arch="${ARCH:-sm_90}" -O3 -Icommon $(defs_of "$c") \
        -c solutions/08_decoupled_lookback/scan.cu -o "$d/scan.o" &&
      $NVCC -arch="${ARCH:-sm_90}" "$d/scan.o" "$B"/common/{check,cuda_check,harness,driver,main}.o \
        -o "$d/scan" ) &
done
wait
printf '%-34s %8s %10s %8s %9s %7s\n' config n ms GB/s '%memcpy' 'x CUB'
best="" best_ms=""
for n in $SIZES; do
    cub=$("$B/bench/bench_cub" --json --n "$n" --dist random --reps 30)
    cub_ms=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ms"])' "$cub")
    for c in cub $CONFIGS; do
        if [ "$c" = cub ]; then r=$cub; else
            r=$("$(dir_of "$c")/scan" --json --n "$n" --dist random --reps 30) || true
            [ -n "$r" ] || r='{"status": "failed", "message": "did not build, or crashed"}'
        fi
        python3 - "$c" "$n" "$cub_ms" "$r" <<'PY'
import json, sys
c, n, cub_ms, r = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
if r["status"] != "ok":
    print(f"{c:<34} {n:>8} {r['status']}: {r['message']}")
else:
    ms = r["ms"]
    print(f"{c:<34} {n:>8} {ms:>10.4f} {8 * r['n'] / ms / 1e6:>8.1f} "
          f"{100 * r['memcpy_ms'] / ms:>9.1f} {cub_ms / ms:>7.3f}")
PY
        if [ "$c" != cub ] && [ "$n" = "${SIZES##* }" ]; then
            ms=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["ms"] if r["status"] == "ok" else "")' "$r")
            if [ -n "$ms" ] && { [ -z "$best_ms" ] || python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$ms" "$best_ms"; }; then
                best=$c best_ms=$ms
            fi
        fi
    done
done
echo "best: $best"
echo "best_flags: $(defs_of "$best" | tr '\n' ' ')"
