#!/usr/bin/env bash
# tools/dev/sweep.sh — one of a lab's reference variants (lab 10's, or SWEEP_LAB's) built with each
# set of tuning macros, timed against CUB doing the same job, for the tuning sweeps of the references (GPU only).
#
# Usage: tools/dev/sweep.sh VARIANT OP FLAGS...
#        tools/dev/sweep.sh --table TSV FLAGS...   (the table of a sweep's sweep.tsv, one cut short too)
#   VARIANT  the variant to time (lab 10: radix_sort, compact; lab 09: add, max, min, fadd, segmented)
#   OP       bench_cub's job for it (sort, compact; add, max, min, fadd, seg_add)
#   FLAGS    one argument per build: the -D options of the lab's solutions/LAB/scan.cu tuning
#            macros ("" builds it as shipped), e.g. "" "-DOS_HIST_PARTS=4"
# Each build goes to $SWEEP_BUILD/K (K = its place in FLAGS, from 1; CUB's to $SWEEP_BUILD/0).
# Then every round times CUB and each build, one process each, at every size and input, the order
# of the builds turned by one each round; a table of the medians over the rounds closes it (ms,
# and x CUB: CUB's median over the build's, so above 1 is faster than CUB).
# Environment: SWEEP_LAB (the lab's folder, default 10_applications), SWEEP_SIZES (exponents,
# default "24 26 28"), SWEEP_DISTS (default "small random"), SWEEP_REPS (timed calls a process,
# default 5), SWEEP_ROUNDS (default 2), SWEEP_BUILD (default build-sweep), SWEEP_JOBS (make -j,
# default 16). Exit code: 2 for bad usage, 1 when a build fails, else 0 (a run with no report is
# shown as such in the table).
set -u
cd "$(dirname "$0")/../.."
table() { # table TSV FLAGS...: the medians of a sweep's rows (those written so far, if cut short)
    python3 - "$@" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
flags = ["CUB"] + [f or "as shipped" for f in sys.argv[2:]]
times = {}
for _, e, dist, what in rows:
    who, t = what.split(" ")
    if t != "-":
        times.setdefault((e, dist, who), []).append(float(t))
print(f"{'n':>5} {'input':<7} {'build':<44} {'ms':>9} {'x CUB':>6}")
for e, dist in sorted({(e, d) for _, e, d, _ in rows}, key=lambda x: (int(x[0]), x[1])):
    cub = times.get((e, dist, "cub"))
    for k, name in enumerate(flags):
        got = times.get((e, dist, "cub" if k == 0 else str(k)))
        med = statistics.median(got) if got else None
        ratio = f"{statistics.median(cub) / med:.2f}" if cub and med else "-"
        print(f"2^{e:<3} {dist:<7} {name:<44} {f'{med:.4f}' if med else 'no report':>9} {ratio:>6}")
EOF
}
if [ "${1:-}" = "--table" ] && [ $# -ge 2 ]; then # --table TSV FLAGS...: a cut-short sweep's rows
    [ -f "$2" ] || { echo "sweep.sh: --table $2: no such file" >&2; exit 2; }
    shift
    table "$@"
    exit 0
fi
if [ $# -lt 3 ]; then
    echo "usage: tools/dev/sweep.sh VARIANT OP FLAGS... (see the top of this file)" >&2
    exit 2
fi
VARIANT=$1 OP=$2
shift 2
B=${SWEEP_BUILD:-build-sweep}
LAB=${SWEEP_LAB:-10_applications}
if [ ! -f "solutions/$LAB/scan.cu" ]; then
    echo "sweep.sh: SWEEP_LAB=$LAB: no solutions/$LAB/scan.cu" >&2
    exit 2
fi
JOBS=${SWEEP_JOBS:-16}
SIZES=${SWEEP_SIZES:-24 26 28}
DISTS=${SWEEP_DISTS:-small random}
REPS=${SWEEP_REPS:-5}
ROUNDS=${SWEEP_ROUNDS:-2}
OUT=$B/sweep.tsv
mkdir -p "$B"
make -s -j"$JOBS" BUILD="$B/0" "$B/0/bench/bench_cub" || exit 1
k=0
for flags in "$@"; do
    k=$((k + 1))
    echo "== build $k: ${flags:-as shipped}"
    make -s -j"$JOBS" BUILD="$B/$k" DEBUG_FLAGS="-O3 $flags" "$B/$k/solutions/$LAB/scan" || exit 1
done
builds=$k

ms() { # ms COMMAND...: the median ms of one process's timed calls, or "-"
    local line
    line=$(timeout 150 "$@" --json --reps "$REPS" --warmup 2 2>/dev/null | tail -n 1)
    [[ $line =~ \"ms\":([0-9.]+) ]] && echo "${BASH_REMATCH[1]}" || echo "-"
}
: >"$OUT"
for ((r = 0; r < ROUNDS; r++)); do
    for e in $SIZES; do
        n=$((1 << e))
        for dist in $DISTS; do
            printf '%s\t%s\t%s\t%s\n' "$r" "$e" "$dist" \
                "cub $(ms "$B/0/bench/bench_cub" --op "$OP" --n "$n" --dist "$dist")" >>"$OUT"
            for ((i = 0; i < builds; i++)); do
                j=$(((i + r) % builds + 1))
                printf '%s\t%s\t%s\t%s\n' "$r" "$e" "$dist" \
                    "$j $(ms "$B/$j/solutions/$LAB/scan" --variant "$VARIANT" --n "$n" --dist "$dist")" >>"$OUT"
            done
            echo "   round $((r + 1)), 2^$e $dist: $(awk -F'\t' -v r="$r" -v e="$e" -v d="$dist" \
                '$1==r && $2==e && $3==d {printf "%s  ", $4}' "$OUT")" >&2
        done
    done
done
table "$OUT" "$@"
