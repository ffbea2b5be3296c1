#!/usr/bin/env bash
# tools/dev/tune_lookback.sh — builds the lab 08 reference with several tile shapes (LB_THREADS x LB_VECS int4 per
# thread, plus any other LB_* macro of scan.cu) and times each against CUB's scan, in rounds
# that alternate the builds (tools/dev/sweep.sh does the building and timing: one process a
# build, size and input; the medians over the rounds). Instructors' tool for choosing the
# defaults; needs a GPU.
#   usage: tools/dev/tune_lookback.sh [BUILD] ["CONFIG ..."] ["n ..."]
#   CONFIG: threads:vecs[:MACRO=V,MACRO=V], e.g. 256:4 or 256:4:LB_ORDERED=1,LB_PERSISTENT=0;
#           "" in the list (or "shipped") is the file as shipped
#   n:      sizes as powers of two, 2^20 2^24 2^28 (the default)
# SWEEP_ROUNDS, SWEEP_DISTS, SWEEP_REPS and SWEEP_JOBS pass through (tools/dev/sweep.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
CONFIGS=${2:-"shipped 128:8 128:16 256:6 128:12:LB_FIRST_DELAY_NS=0,LB_BACKOFF_NS=0 128:12:LB_ORDERED=1"}
SIZES=${3:-"2^20 2^24 2^28"}
flags=()
for c in $CONFIGS; do
    if [ "$c" = shipped ]; then
        flags+=("")
        continue
    fi
    IFS=: read -r t v extra <<<"$c"
    if ! [[ $t =~ ^[0-9]+$ && $v =~ ^[0-9]+$ ]]; then
        echo "tune_lookback.sh: config '$c': write threads:vecs[:MACRO=V,...], e.g. 256:4 or 128:12:LB_ORDERED=1" >&2
        exit 2
    fi
    f="-DLB_THREADS=$t -DLB_VECS=$v"
    for m in ${extra//,/ }; do f+=" -D$m"; done
    flags+=("$f")
done
exps=""
for n in $SIZES; do
    if ! [[ $n =~ ^2\^([0-9]+)$ ]]; then
        echo "tune_lookback.sh: size '$n': write a power of two, 2^K" >&2
        exit 2
    fi
    exps+="${BASH_REMATCH[1]} "
done
SWEEP_LAB=08_decoupled_lookback SWEEP_BUILD="$B/tune08" SWEEP_SIZES="$exps" \
    SWEEP_DISTS=${SWEEP_DISTS:-random} exec tools/dev/sweep.sh lookback add "${flags[@]}"
