"""A grade anyone can check: the receipt of a graded submission, and its replay.

A receipt (make) names what was graded and how, without the seed: the SHA-256 of each lab's
scan.cu, of the course tree (the Makefile, common/, grader/ but its tests and fixtures, the
reference solutions) and of the config, the seed's SHA-256, the mode, the GPU with its driver
and clocks, and per lab its verdicts (status, cases passed, sanitizer, points) and its speed:
each timed round's times, the ratio, and the spread of the speed points the rounds' ratios
would have given. `grade.py --replay RECEIPT --src DIR --seed SEED` grades DIR again with SEED
(which must hash to the receipt's) and says, lab by lab, whether the verdicts match and the
speed points fall within the recorded spread (compare).
"""
import hashlib
import json
import os
import shutil
import subprocess

from .build import sha256_file

FORMAT = 1
POINTS_SLACK = 0.5  # speed points a replay may differ by beyond the recorded spread
SKIP_DIRS = {"tests", "fixtures", "__pycache__", "dev"}


def course_sha256(root):
    """The SHA-256 of what grades: the Makefile, common/, grader/ (not its tests or fixtures; a
    student release's reference objects among it) and solutions/*/scan.cu, each file's path and
    content hash in path order."""
    files = [os.path.join(root, "Makefile")]
    for top in ("common", "grader"):
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            files += [os.path.join(dirpath, n) for n in names if not n.endswith(".pyc")]
    sol = os.path.join(root, "solutions")
    if os.path.isdir(sol):
        files += [os.path.join(sol, d, "scan.cu") for d in os.listdir(sol)
                  if os.path.isfile(os.path.join(sol, d, "scan.cu"))]
    h = hashlib.sha256()
    for path in sorted(files):
        if os.path.isfile(path):
            h.update(f"{os.path.relpath(path, root)}\0{sha256_file(path)}\n".encode())
    return h.hexdigest()


def seed_sha256(seed):
    return hashlib.sha256(str(int(seed)).encode()).hexdigest()


def gpu_identity():
    """The GPU, its driver and its clocks now (nvidia-smi), or {} without one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {}
    try:
        out = subprocess.run([smi, "--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    first = out.strip().splitlines()[:1]
    if not first:
        return {}
    keys = ("name", "driver", "sm_clock", "mem_clock", "max_sm_clock")
    return dict(zip(keys, (x.strip() for x in first[0].split(","))))


def _lab_entry(lab):
    sp = lab.get("speed", {})
    return {"status": lab.get("status"), "points": lab.get("points"),
            "correctness": [lab["correctness"]["passed"], lab["correctness"]["total"]],
            "sanitizer": lab.get("sanitizer", {}).get("status"),
            "speed": {"status": sp.get("status"), "points": sp.get("points"), "ratio": sp.get("ratio"),
                      "spread": sp.get("spread"), "rounds": sp.get("rounds")}}


def make(result, root, config_path, sources):
    """The receipt of result (a GradeResult dict); sources: {lab: its scan.cu, or None}."""
    return {"format": FORMAT,
            "course_sha256": course_sha256(root),
            "config_sha256": sha256_file(config_path) if config_path and os.path.isfile(config_path) else None,
            "seed_sha256": seed_sha256(result["seed"]),
            "mode": result["mode"],
            "device": result.get("device"),
            "gpu": gpu_identity() if result["mode"] == "gpu" else {},
            "submission": {lab: (sha256_file(src) if src and os.path.isfile(src) else None)
                           for lab, src in sorted(sources.items())},
            "labs": {lab["lab"]: _lab_entry(lab) for lab in result["labs"]}}


def load(path):
    """The receipt in path; ValueError with a one-line reason when it is not one."""
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable receipt ({e})") from None
    r = r.get("receipt", r)  # a whole result (--format json) carries its receipt
    if not isinstance(r, dict) or r.get("format") != FORMAT or not isinstance(r.get("labs"), dict):
        raise ValueError(f"{path}: not a receipt of format {FORMAT}")
    return r


def compare(old, new):
    """(all_match, lines): lab by lab, whether new (a receipt of the replay) has old's verdicts and
    speed points within old's spread (POINTS_SLACK beyond it), and what else differs."""
    lines, ok = [], True
    for key, what in (("course_sha256", "the course tree"), ("config_sha256", "the config"),
                      ("mode", "the mode")):
        if old.get(key) != new.get(key):
            lines.append(f"note: {what} differs from the receipt's")
    if old.get("gpu", {}).get("name") != new.get("gpu", {}).get("name"):
        lines.append(f"note: the GPU differs ({old.get('gpu', {}).get('name')} then, "
                     f"{new.get('gpu', {}).get('name')} now)")
    for lab in sorted(old["labs"]):
        a, b = old["labs"][lab], new["labs"].get(lab)
        if old["submission"].get(lab) != new["submission"].get(lab):
            ok = False
            lines.append(f"{lab}: the submitted scan.cu differs from the receipt's")
            continue
        if b is None:
            ok = False
            lines.append(f"{lab}: not graded in the replay")
            continue
        same = [k for k in ("status", "correctness", "sanitizer") if a[k] != b[k]]
        verdict = "verdicts match" if not same else "verdicts differ (" + ", ".join(
            f"{k}: {a[k]} then, {b[k]} now" for k in same) + ")"
        speed = _speed_line(a["speed"], b["speed"])
        if same or speed.startswith("speed outside"):
            ok = False
        lines.append(f"{lab}: {verdict}; {speed}")
    return ok, lines


def _speed_line(a, b):
    if a.get("status") != "graded" and b.get("status") != "graded":
        return "speed not graded, then or now"
    spread = a.get("spread") or {}
    lo = spread.get("points_min", a.get("points"))
    hi = spread.get("points_max", a.get("points"))
    got = b.get("points")
    if got is None or lo is None or hi is None:
        return f"speed outside the recorded spread (then {a.get('points')}, now {got})"
    inside = lo - POINTS_SLACK <= got <= hi + POINTS_SLACK
    return (f"speed {'within' if inside else 'outside'} the recorded spread: {got:g} points now, "
            f"{lo:g}-{hi:g} then (ratio {b.get('ratio')} now, {a.get('ratio')} then)")
