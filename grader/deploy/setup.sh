#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu). It installs
# what the image lacks and builds the harness and the reference solutions ahead, so that each
# submission builds only its own labs; then it grades the reference solutions once, and fails the
# image if they do not get full marks (a broken autograder is found now, not by the students).
# It also creates the user graded code runs as and makes the course unreadable to it.
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
COURSE=$ROOT/source/course
. "$ROOT/source/autograder.env"
if [ -z "${SKIP_APT:-}" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq make g++ python3 libseccomp-dev >/dev/null
    if [ "${WANT_NVCC:-0}" = 1 ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
        # nvcc (never a GPU) for the static checks that read an nvcc object; NVIDIA's own repository
        . /etc/os-release
        repo="ubuntu${VERSION_ID/./}"
        apt-get install -y -qq wget >/dev/null
        wget -q "https://developer.download.nvidia.com/compute/cuda/repos/$repo/x86_64/cuda-keyring_1.1-1_all.deb"
        dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb
        apt-get update -qq
        apt-get install -y -qq cuda-nvcc-13-0 cuda-cudart-dev-13-0 >/dev/null
    fi
fi
# Graded code runs as an unprivileged user (grader/config.json "sandbox": {"user": "scan-run"}; the
# grader, as root, drops each lab process to it): no login, no home. The course (its reference
# solutions, the grader) is root's alone, as is the grader's work folder (grade.py makes it 0700).
RUN_USER=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("sandbox", {}).get("user", "scan-run"))' \
    "$COURSE/grader/config.json")
if [ -z "${SKIP_USERADD:-}" ] && ! id -u "$RUN_USER" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$RUN_USER"
fi
chmod go= "$ROOT/source"
export PATH=/usr/local/cuda/bin:$PATH
labs=()
[ -n "${GRADE_LABS:-}" ] && labs=(--labs $GRADE_LABS)
python3 "$COURSE/grader/grade.py" --prepare-only "${labs[@]}" --config "$COURSE/grader/config.json" --work "$ROOT/work"
python3 "$COURSE/grader/grade.py" --src "$COURSE/solutions" "${labs[@]}" --config "$COURSE/grader/config.json" \
    --work "$ROOT/work" --format json --out "$ROOT/work/setup-check.json"
python3 - "$ROOT/work/setup-check.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if r["points"] != r["max_points"]:
    sys.exit(f"setup.sh: the reference solutions got {r['points']}/{r['max_points']}: this autograder is broken")
print(f"setup.sh: the reference solutions get {r['points']}/{r['max_points']} ({r['mode']} mode): ready")
PY
