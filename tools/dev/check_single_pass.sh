#!/usr/bin/env bash
# tools/dev/check_single_pass.sh — the GPU check of labs 09 and 10's single-pass references, for one
# run on a GPU machine: builds both labs and the CUB anchor, runs their kernel tests, then times
# every variant and CUB with the same job at n = 2^20 .. 2^28 and prints one table: ms, GB/s (a
# scan's 8n bytes over the time), % of the job's byte floor (bench.py's FLOOR_X_SCAN: the time a
# copy of the bytes the job cannot avoid would take, at the rate of the copy timed in the same
# process), and x CUB (CUB's time with the same job over the variant's). Then the speed thresholds
# the grader's config should hold (grader/config.json: labs 09 and 10), from the measured ratio of
# the two-pass design to the single-pass reference, timed again on the grader's own input.
#
# Every step runs on its own (a failure is printed and the next step still runs); the exit code
# is the number of failed steps (0: all passed). Honours the Makefile's CRITERION_PREFIX and
# SECCOMP_PREFIX (a carried folder with include/ and lib/ where the packages are not installed).
#
# Environment: CHECK_SIZES (exponents, default "20 22 24 26 28"), CHECK_REPS (timed rounds, default
# 5: every call is also checked on the host, which dominates at 2^28), CHECK_JOBS (make -j, default 16), CHECK_BUILD (default build-check), CHECK_SKIP_TESTS=1 (timing only),
# CHECK_OUT (the raw JSON lines, default $CHECK_BUILD/check.jsonl), CHECK_CPU=1 (a dry run of the steps
# in CPU mode, without CUB: CHECK_SIZES="10 12" CHECK_REPS=1 CHECK_SKIP_TESTS=1 tools/dev/check_single_pass.sh),
# CHECK_ONLY (a regular expression of the jobs to time, matched whole: CHECK_ONLY='compact|sort').
# Run: tools/dev/check_single_pass.sh 2>&1 | tee check.log     (estimated 5 to 7 minutes on an H100: the build
# about 1, the kernel tests 1 to 2, the timing the rest; to split it over two calls of a time
# limit, CHECK_SKIP_TESTS=1 in one and CHECK_SIZES= (no timing) in the other)
set -u
cd "$(dirname "$0")/../.."
SIZES=${CHECK_SIZES-20 22 24 26 28} # set and empty: no timing
REPS=${CHECK_REPS:-5}
JOBS=${CHECK_JOBS:-16}
B=${CHECK_BUILD:-build-check}
OUT=${CHECK_OUT:-$B/check.jsonl}
CPUFLAG=${CHECK_CPU:-0}
BIN=$B$([ "$CPUFLAG" = 1 ] && echo /cpu) # the Makefile builds CPU mode under BUILD/cpu
mkdir -p "$B"
failed=0

step() { # step NAME COMMAND...: runs it, prints its status and time
    local name=$1 t0=$SECONDS rc
    shift
    echo "== $name"
    "$@"
    rc=$?
    echo "== $name: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || failed=$((failed + 1))
    return 0
}

if [ "$CPUFLAG" = 1 ]; then # a dry run: CPU mode has no CUB (the anchor's rows are left out)
    echo "== device: none (CHECK_CPU=1: CPU mode, no CUB)"
    step "build (labs 09 and 10, CPU mode)" make -j"$JOBS" CPU=1 BUILD="$B" \
        "$BIN/solutions/09_operators/scan" "$BIN/solutions/10_applications/scan"
else
    step "device" nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    step "build (labs 09, 10 and the CUB anchor, GPU, sm_90)" \
        make -j"$JOBS" BUILD="$B" "$BIN/solutions/09_operators/scan" \
        "$BIN/solutions/10_applications/scan" "$BIN/bench/bench_cub"
fi
if [ "${CHECK_SKIP_TESTS:-0}" != 1 ]; then
    step "kernel tests, lab 09 (solutions)" timeout 300 make -j"$JOBS" CPU="$CPUFLAG" BUILD="$B" test LAB=09
    step "kernel tests, lab 10 (solutions)" timeout 300 make -j"$JOBS" CPU="$CPUFLAG" BUILD="$B" test LAB=10
fi

L09=$BIN/solutions/09_operators/scan
L10=$BIN/solutions/10_applications/scan
CUB=$BIN/bench/bench_cub
# program|variant or --op|op: the lab variants and the anchors, in table order
RUNS="
$CUB|add|add
$L09|add|add
$L09|add_two_pass|add
$CUB|max|max
$L09|max|max
$L09|max_two_pass|max
$CUB|min|min
$L09|min|min
$L09|min_two_pass|min
$CUB|fadd|fadd
$L09|fadd|fadd
$L09|fadd_two_pass|fadd
$CUB|seg_add|seg_add
$L09|segmented|seg_add
$L09|segmented_two_pass|seg_add
$CUB|compact|compact
$L10|compact|compact
$L10|compact_on_scan|compact
$CUB|sort|sort
$L10|radix_sort|sort
$L10|radix_sort_on_scan|sort
"
# record FILE WHAT OP CUB N DIST COMMAND...: one timed run of COMMAND at n = N on input DIST,
# its JSON line appended to FILE tagged with the job (job: the variant or CUB's op, job_op,
# job_cub: true or false); a run that prints none gets a line saying why
record() {
    local file=$1 what=$2 op=$3 cub=$4 n=$5 dist=$6 rc out
    shift 6
    timeout 150 "$@" --json --n "$n" --dist "$dist" --reps "$REPS" --warmup 2 >"$B/check.run" 2>/dev/null
    rc=$?
    out=$(tail -n 1 "$B/check.run")
    case $out in
    "{"*) echo "$out" | sed "s/^{/{\"job\":\"$what\",\"job_op\":\"$op\",\"job_cub\":$cub,/" >>"$file" ;;
    *) echo "{\"job\":\"$what\",\"job_op\":\"$op\",\"job_cub\":$cub,\"n\":$n,\"status\":\"no report (exit $rc)\"}" >>"$file" ;;
    esac
}
time_all() {
    local e n prog what op line
    : >"$OUT"
    for e in $SIZES; do
        n=$((1 << e))
        for line in $RUNS; do
            IFS='|' read -r prog what op <<<"$line"
            [[ $op =~ ^(${CHECK_ONLY:-.*})$ ]] || continue
            [ "$prog" = "$CUB" ] && [ "$CPUFLAG" = 1 ] && continue
            if [ "$prog" = "$CUB" ]; then
                record "$OUT" "$what" "$op" true "$n" random "$prog" --op "$what"
            else
                record "$OUT" "$what" "$op" false "$n" random "$prog" --variant "$what"
            fi
            # progress with the time, so that a run cut short still shows what it measured
            echo "   n=2^$e $(basename "$(dirname "$prog")")/$what: $(tail -n 1 "$OUT" | grep -o '"status":"[^"]*"\|"ms":[0-9.]*' | tr '\n' ' ')" >&2
        done
    done
}
step "timing (sizes 2^{${SIZES// /,}}, $REPS rounds each)" time_all
# The speed thresholds come from the ratio of the two-pass design to the reference at the size and
# input the grader times with (gradelib/evaluate.run_timed: --dist small; grader/config.json's
# n, else the lab's bench_n): the table above uses random keys, on which the sort's ratio differs
# (2026-11-28, H200, 2^24: 1.11 random against 1.7 small).
THRESH_OUT=$B/thresholds.jsonl
threshold_runs() {
    local prog what op n
    : >"$THRESH_OUT"
    for line in "$L09|add|add|67108864" "$L09|add_two_pass|add|67108864" \
        "$L10|radix_sort|sort|16777216" "$L10|radix_sort_on_scan|sort|16777216"; do
        IFS='|' read -r prog what op n <<<"$line"
        [[ $op =~ ^(${CHECK_ONLY:-.*})$ ]] || continue
        record "$THRESH_OUT" "$what" "$op" false "$n" small "$prog" --variant "$what"
    done
}
[ -n "$SIZES" ] && [ "$CPUFLAG" != 1 ] && step "threshold timing (the grader's input: --dist small)" threshold_runs
step "table" python3 - "$OUT" "$THRESH_OUT" <<'EOF'
import json, sys
FLOOR_X_SCAN = {"add": 1.0, "max": 1.0, "min": 1.0, "fadd": 1.0, "seg_add": 1.5, "compact": 0.75,
                "sort": 4.5}  # grader/bench.py's
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
device = next((r.get("device") for r in rows if r.get("device")), "?")
print(f"device: {device}")
print(f"{'job / variant':<28} {'n':>6} {'ms':>9} {'GB/s':>7} {'% floor':>8} {'x CUB':>6}")
cub, bad = {}, []
for r in rows:
    n, op, name = r["n"], r["job_op"], ("CUB " if r.get("job_cub") else "") + r["job"]
    if r.get("status") != "ok" or not r.get("ms"):
        bad.append(f"{name} n={n}: {r.get('status')} {r.get('message', '')[:200]}")
        continue
    ms = r["ms"]
    if r.get("job_cub"):
        cub[(op, n)] = ms
    floor = 100.0 * r["memcpy_ms"] * FLOOR_X_SCAN[op] / ms if r.get("memcpy_ms") else None
    x = cub.get((op, n)) / ms if cub.get((op, n)) else None
    e = n.bit_length() - 1
    print(f"{name:<28} {'2^%d' % e:>6} {ms:>9.4f} {8 * n / ms / 1e6:>7.0f} "
          f"{'' if floor is None else '%.1f' % floor:>8} {'' if x is None else '%.3f' % x:>6}")
for b in bad:
    print("not timed:", b)
print()
small = {}
try:
    for line in open(sys.argv[2]):
        r = json.loads(line)
        if r.get("status") == "ok" and r.get("ms"):
            small[(r["job"], r["n"])] = r["ms"]
except OSError:
    pass
labs = json.load(open("grader/config.json"))["labs"]
for lab, fast, slow, n in (("09_operators", "add", "add_two_pass", 1 << 26),
                           ("10_applications", "radix_sort", "radix_sort_on_scan", 1 << 24)):
    f, s = small.get((fast, n)), small.get((slow, n))
    now = labs.get(lab, {}).get("speed", {})
    if f and s:
        k = s / f
        print(f"{lab}: {slow} / {fast} at n=2^{n.bit_length() - 1}, --dist small (as graded) = {k:.2f}: "
              f"speed thresholds full_at = 1.25 x {k:.2f} = {1.25 * k:.2f}, zero_at = 3 x {k:.2f} = "
              f"{3 * k:.2f} (grader/config.json now: {now.get('full_at')}/{now.get('zero_at')})")
    elif not small:
        print(f"{lab}: no thresholds (no threshold timing in this run: CPU mode, or cut short)")
    else:
        print(f"{lab}: no thresholds (the timing at n=2^{n.bit_length() - 1} with --dist small is missing)")
EOF
echo "== check_single_pass: $failed step(s) failed; raw reports in $OUT"
exit "$failed"
