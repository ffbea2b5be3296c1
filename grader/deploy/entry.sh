#!/usr/bin/env bash
# The container's entry (grader/deploy/Dockerfile): PrairieLearn-style external grading, or any
# runner that mounts a submission and collects one results file. The upload is in
# $GRADE_ROOT/student (default /grade; any shape grade.py accepts: lab folders, labs/, one scan.cu
# with GRADE_LABS=NN, an archive), the result goes to $GRADE_ROOT/results/results.json in
# PrairieLearn's format (score 0..1, gradable, tests). The upload is copied first, never written
# to. GRADE_MODE: gpu (the image's default: no GPU is an infrastructure error, never a quiet
# CPU-mode grade) or cpu. results.json is always written, once $GRADE_ROOT/results can be made:
# PrairieLearn bind-mounts /grade, so the folder is made here, first; where it cannot be, this
# says so on stderr and exits 1 (the only non-zero exit).
#
# The deadline: PrairieLearn kills the job at the question's timeout, which cannot exceed 600 s.
# PLATFORM_TIMEOUT (default 600) is that setting; the grader gets 10% less (at least 60 s less,
# at most half): 540 s of 600, leaving time for the fallback result. GRADE_TIMEOUT sets the
# grader's deadline directly.
#
# It runs as root (the image has no USER line): the grader drops every graded run of student code
# to the unprivileged run user (config "sandbox", created by the Dockerfile), which cannot read
# /course or /work (0700); only root can make that drop for each run.
set -u
G=${GRADE_ROOT:-/grade}
COURSE=${COURSE:-/course}
WORK=${GRADE_WORK:-/work}
if ! mkdir -p "$G/results" 2>/dev/null || [ ! -w "$G/results" ]; then
    echo "entry.sh: cannot create or write $G/results (the runner's results mount): no result can be written" >&2
    exit 1
fi
out=$G/results/results.json
platform=${PLATFORM_TIMEOUT:-600}
margin=$((platform / 10))
[ "$margin" -lt 60 ] && margin=60
[ "$margin" -gt $((platform / 2)) ] && margin=$((platform / 2))
deadline=${GRADE_TIMEOUT:-$((platform - margin))}
echo "entry.sh: the grader has $deadline s (the platform's timeout: $platform s)" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$G/student" "$tmp/student" 2>/dev/null || mkdir -p "$tmp/student"
labs=()
[ -n "${GRADE_LABS:-}" ] && labs=(--labs $GRADE_LABS)
mode=--gpu
[ "${GRADE_MODE:-gpu}" = cpu ] && mode=--cpu
rm -f "$out"
# an empty upload, or one without lab folders, is found by grade.py (status "no labs found") and
# is gradable: false with the reason (formats/prairielearn.py): it costs the student no attempt
timeout -k 10 "$deadline" python3 "$COURSE/grader/grade.py" --src "$tmp/student" "${labs[@]}" $mode \
    --work "$WORK" --format prairielearn --out "$out"
rc=$?
if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))["gradable"]' "$out" 2>/dev/null; then
    case $rc in
        124|137) why="it ran out of time after $deadline s, before the platform's limit of $platform s" ;;
        *) why="exit code $rc" ;;
    esac
    python3 - "$out" "$why" <<'PY' || printf '%s\n' '{"gradable": false, "score": 0.0, "tests": [], "message": "The grader failed to run; this is not a judgement of your code: ask for a regrade."}' >"$out"
import json, sys
json.dump({"gradable": False, "score": 0.0, "tests": [],
           "message": f"The grader failed to run ({sys.argv[2]}); this is not a judgement of your "
                      "code: ask for a regrade."}, open(sys.argv[1], "w"), indent=2)
PY
fi
exit 0
