#!/usr/bin/env bash
# The container's entry (grader/deploy/Dockerfile): PrairieLearn-style external grading, or any
# runner that mounts a submission and collects one results file. The upload is in
# $GRADE_ROOT/student (default /grade; any shape grade.py accepts: lab folders, labs/, one scan.cu
# with GRADE_LABS=NN, an archive), the result goes to $GRADE_ROOT/results/results.json in
# PrairieLearn's format (score 0..1, gradable, tests). The upload is copied first, never written
# to. GRADE_MODE: gpu (the image's default: no GPU is an infrastructure error, never a quiet
# CPU-mode grade) or cpu. results.json is always written.
set -u
G=${GRADE_ROOT:-/grade}
COURSE=${COURSE:-/course}
WORK=${GRADE_WORK:-/work}
mkdir -p "$G/results"
out=$G/results/results.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$G/student" "$tmp/student" 2>/dev/null || mkdir -p "$tmp/student"
labs=()
[ -n "${GRADE_LABS:-}" ] && labs=(--labs $GRADE_LABS)
mode=--gpu
[ "${GRADE_MODE:-gpu}" = cpu ] && mode=--cpu
rm -f "$out"
timeout -k 10 "${GRADE_TIMEOUT:-2400}" python3 "$COURSE/grader/grade.py" --src "$tmp/student" "${labs[@]}" $mode \
    --work "$WORK" --format prairielearn --out "$out"
rc=$?
if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))["gradable"]' "$out" 2>/dev/null; then
    python3 - "$out" "$rc" <<'PY'
import json, sys
json.dump({"gradable": False, "score": 0.0, "tests": [],
           "message": f"The grader failed to run (exit code {sys.argv[2]}); this is not a judgement of "
                      "your code: ask for a regrade."}, open(sys.argv[1], "w"), indent=2)
PY
fi
exit 0
