#!/usr/bin/env bash
# On a GPU machine: does the speed stage wait for another job to leave the GPU
# (and say so when it does not leave), instead of scoring the noise or calling it tampering?
# Run from the repository root on a machine with nvcc and nvidia-smi:
#   bash grader/dev/busy_gpu_check.sh
# 1. A tiny CUDA program (built here) keeps the GPU busy (a spinning kernel, relaunched) until a
#    stop file appears, or 300 s at most. It is started by this script, not by the grader: to the
#    grader it is another job.
# 2. grade.py --src solutions --gpu --labs 03 06 runs meanwhile; once its log says it is waiting
#    for the GPU, the load goes on 20 s more and stops. Expected: full marks (it waited).
# 3. The same with gpu_wait_s = 5 and the load left running: expected exit code 3, an
#    infrastructure error "speed not graded: the GPU was busy (...); regrade with: ...".
# 4. grade.py --labs 01 08 09 with no load; the load starts once lab 08's timing has begun and runs
#    10 s. Expected: "used the GPU while it was timed" in the log, full marks (timed again). Lab 01,
#    a host lab, is timed in a thread beside the GPU labs: its end must not end their watch (on
#    2026-11-28 it did, and the grader crashed on every whole grade; only a grade with a host lab
#    and GPU labs shows it).
# None may say "tampered", and the first and last may lose no points. The last line says PASS or FAIL.
set -u
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
T=$(mktemp -d)
WORK=${WORK:-$T/work}  # the grader's build folder: WORK=build/grader reuses the built references
LOAD_PID=
cleanup() { [ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "busy_gpu_check: FAIL: $*"; exit 1; }

cat > "$T/load.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
__global__ void spin(long long cycles, int *out)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = 1;
}
int main(int argc, char **argv)
{
    const char *stop = argv[1];
    double most = atof(argv[2]);
    int *d = 0;
    if (cudaMalloc(&d, 4096 * sizeof(int)) != cudaSuccess)
        return 1;
    time_t t0 = time(0);
    while (difftime(time(0), t0) < most && access(stop, F_OK) != 0) {
        spin<<<4096, 256>>>(50000000LL, d);
        cudaDeviceSynchronize();
    }
    return 0;
}
CU
"$NVCC" -O2 -o "$T/load" "$T/load.cu" || fail "cannot build the GPU load with $NVCC"

start_load() { rm -f "$T/stop"; "$T/load" "$T/stop" 300 & LOAD_PID=$!; sleep 3;
  apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader)
  echo "busy_gpu_check: nvidia-smi sees: ${apps:-nothing}"
  [ -n "$apps" ] || echo "busy_gpu_check: WARNING: nvidia-smi lists no compute process while the load runs: the grader cannot see other jobs on this machine (a container that hides them?)"; }
stop_load() { touch "$T/stop"; wait "$LOAD_PID" 2>/dev/null; LOAD_PID=; }

# every lab of a result (grade.py --format json) at full marks, each printed
full_marks() { python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for lab in d["labs"]:
    print(f"busy_gpu_check: {lab['lab']}: {lab['points']}/{lab['max_points']} speed {lab['speed']['points']}/{lab['speed']['max']} ({lab['speed']['note']})")
sys.exit(0 if all(l["points"] == l["max_points"] for l in d["labs"]) else 1)
PY
}

# --- 1: the grader waits for the GPU ---------------------------------------------------------
start_load
python3 grader/grade.py --src solutions --gpu --labs 03 06 --work "$WORK" --format json --out "$T/a.json" 2> "$T/a.log" &
G=$!
while kill -0 $G 2>/dev/null && ! grep -q "the GPU is in use by" "$T/a.log"; do sleep 1; done
if grep -q "the GPU is in use by" "$T/a.log"; then
  grep "the GPU is in use by" "$T/a.log" | head -1
  sleep 20
fi
stop_load
wait $G; rc=$?
tail -5 "$T/a.log"
[ $rc -eq 0 ] || fail "grade with the load ending: exit code $rc (want 0)"
grep -q "the GPU is in use by" "$T/a.log" || fail "the grader never saw the GPU busy (it did not wait)"
grep -qi "tampered" "$T/a.json" && fail "a result says tampered"
full_marks "$T/a.json" || fail "not full marks after waiting for the GPU"

# --- 2: the wait cap is hit: not graded, regrade ------------------------------------------------
python3 - "$T/cfg.json" <<'PY'
import json, sys
d = json.load(open("grader/config.json"))
d["defaults"]["timeouts"]["gpu_wait_s"] = 5
json.dump(d, open(sys.argv[1], "w"))
PY
start_load
python3 grader/grade.py --src solutions --gpu --labs 03 06 --work "$WORK" --config "$T/cfg.json" --format json --out "$T/b.json" 2> "$T/b.log"
rc=$?
stop_load
tail -3 "$T/b.log"
[ $rc -eq 3 ] || fail "grade with the GPU kept busy: exit code $rc (want 3, an infrastructure error)"
grep -q "speed not graded: the GPU was busy" "$T/b.json" || fail "no 'speed not graded: the GPU was busy' in the result"
grep -q "regrade with: " "$T/b.json" || fail "no regrade command in the result"
grep -qi "tampered" "$T/b.json" && fail "a result says tampered"

# --- 3: a job that starts while a lab is timed: timed again once the GPU is free -----------------
python3 grader/grade.py --src solutions --gpu --labs 01 08 09 --work "$WORK" --format json --out "$T/c.json" 2> "$T/c.log" &
G=$!
while kill -0 $G 2>/dev/null && ! grep -q "speed: 08_decoupled_lookback at n=" "$T/c.log"; do sleep 0.2; done
start_load  # lab 08 is being timed meanwhile
sleep 10
stop_load
wait $G; rc=$?
grep "used the GPU while it was timed" "$T/c.log" | head -2
tail -3 "$T/c.log"
[ $rc -eq 0 ] || fail "grade with a job arriving mid-timing: exit code $rc (want 0)"
grep -q "used the GPU while it was timed" "$T/c.log" || fail "the grader did not see the job that came while a lab was timed"
grep -qi "tampered" "$T/c.json" && fail "a result says tampered"
full_marks "$T/c.json" || fail "not full marks after a job came while a lab was timed"
echo "busy_gpu_check: PASS (waited for the GPU and got full marks; with the cap hit: not graded, regrade command given; a job arriving mid-timing: timed again, full marks)"
