#!/usr/bin/env python3
"""make_gradescope.py — builds the Gradescope autograder (`make gradescope`).

Writes OUT (default build/gradescope/autograder.zip): setup.sh and run_autograder at the top (as
Gradescope wants them), autograder.env (the labs to grade and the assignment's autograder timeout
on Gradescope, of which run_autograder gives the grader 10% less), and under course/
what grading needs and nothing else: the Makefile, common/, grader/ (not its tests and fixtures),
and labs/ and solutions/ (their scan.cu files). The config in the package is grader/config.json
with "mode" set by --mode: Gradescope's machines have no GPU, so the default is cpu (correctness
only, said in every results.json); gpu for a Gradescope that runs on a machine with an NVIDIA
GPU (then no GPU is an infrastructure error, never a quiet CPU-mode grade).

Usage: make_gradescope.py [--out FILE] [--mode cpu|gpu] [--labs 03 ...] [--timeout S] [--nvcc]
"""
import argparse
import json
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
sys.path.insert(0, GRADER)

from gradelib.grading import course_labs, select_labs  # noqa: E402

SKIP_DIRS = {"__pycache__", "tests", "fixtures", "dev", "node_modules"}  # dev/: the maintainers' benches and tools


def course_files():
    """(path in the zip below course/, path here) of every file grading needs."""
    out = [("Makefile", os.path.join(ROOT, "Makefile"))]
    for top in ("common", "grader"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for fn in sorted(filenames):
                if fn.endswith((".pyc", ".o")):
                    continue
                path = os.path.join(dirpath, fn)
                out.append((os.path.relpath(path, ROOT), path))
    for tree in ("labs", "solutions"):
        for lab in course_labs(ROOT):
            path = os.path.join(ROOT, tree, lab, "scan.cu")
            if os.path.isfile(path):
                out.append((f"{tree}/{lab}/scan.cu", path))
    return out


# Gradescope's autograder timeout: 10 minutes unless the assignment says otherwise, 40 at most
GRADESCOPE_DEFAULT_TIMEOUT, GRADESCOPE_MAX_TIMEOUT = 600, 2400


def build(out, mode, labs, timeout, nvcc):
    with open(os.path.join(GRADER, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config["mode"] = mode
    env = (f"# written by make gradescope\nGRADE_LABS=\"{' '.join(labs)}\"\n"
           f"# the assignment's autograder timeout on Gradescope, in seconds (run_autograder stops the grader\n"
           f"# 10% earlier, at least 60 s, to write a result that says it ran out of time)\n"
           f"GRADESCOPE_TIMEOUT={timeout}\nWANT_NVCC={1 if nvcc or mode == 'gpu' else 0}\n")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name in ("setup.sh", "run_autograder"):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            with open(os.path.join(HERE, name), "rb") as f:
                z.writestr(info, f.read())
        z.writestr("autograder.env", env)
        for arc, path in course_files():
            if arc == "grader/config.json":
                z.writestr("course/" + arc, json.dumps(config, indent=2) + "\n")
                continue
            info = zipfile.ZipInfo.from_file(path, "course/" + arc)
            with open(path, "rb") as f:
                z.writestr(info, f.read())
    os.replace(tmp, out)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "gradescope", "autograder.zip"))
    ap.add_argument("--mode", choices=("cpu", "gpu"), default="cpu",
                    help="cpu (default: Gradescope has no GPU; correctness only) or gpu")
    ap.add_argument("--labs", nargs="+", metavar="LAB", help="the labs of this assignment (default: all)")
    ap.add_argument("--timeout", type=int, default=GRADESCOPE_DEFAULT_TIMEOUT, metavar="S",
                    help="the assignment's autograder timeout as set on Gradescope, in seconds (default "
                         f"{GRADESCOPE_DEFAULT_TIMEOUT}, Gradescope's own default; "
                         f"at most {GRADESCOPE_MAX_TIMEOUT}): the "
                         "grader stops 10%% earlier (at least 60 s) and results.json says it ran out of time")
    ap.add_argument("--nvcc", action="store_true", help="setup.sh installs nvcc for the static checks that "
                                                        "read an nvcc object (always with --mode gpu)")
    args = ap.parse_args(argv)
    if not 60 <= args.timeout <= GRADESCOPE_MAX_TIMEOUT:
        ap.error(f"--timeout must be between 60 and {GRADESCOPE_MAX_TIMEOUT} seconds (Gradescope's limit), "
                 f"as set in the assignment's autograder settings")
    try:
        labs = select_labs(course_labs(ROOT), args.labs) if args.labs else []
    except ValueError as e:
        ap.error(str(e))
    out = build(args.out, args.mode, labs, args.timeout, args.nvcc)
    print(f"make gradescope: {out} ({os.path.getsize(out) // 1024} KiB; mode {args.mode}; labs "
          f"{' '.join(lab[:2] for lab in labs) or 'all'}): upload it as the assignment's autograder, and set "
          f"its autograder timeout to {args.timeout} s on Gradescope")
    return 0


if __name__ == "__main__":
    sys.exit(main())
