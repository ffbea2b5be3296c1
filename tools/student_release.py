#!/usr/bin/env python3
"""make student-release DEST=folder: the repository a course hands to its students.

It is this tree's tracked files without the answers and without what only the course's own
maintenance needs (LEFT_OUT, each with its reason), plus each lab's reference solution as a
compiled object, grader/references/<mode>/<NN_name>.o, in place of its source:

  cpu   CPU mode's object (always): `make grade` in CPU mode builds its reference from it
  gpu   nvcc's object for the GPUs in ARCH (default RELEASE_ARCH: each one's machine code and
        the last one's PTX, which the driver compiles for any newer GPU): `make grade` on a GPU
        times the student's lab against it, on the student's own GPU, and `make bench SRC=labs`
        draws it beside the student's curve

Why objects and not measured times: a speed ratio is only fair when both sides run on the same
GPU in the same grading session (the grader times both through its judge, alternating); a table
of reference times from one GPU would grade a student on another GPU against the wrong number.
An object can be disassembled, as any binary can; it is not the source, its comments or its
answers, and reading SASS is more work than the lab.

Usage: student_release.py --dest DIR [--modes cpu gpu] [--arch "sm_80 sm_90"] [--work DIR]
Exit codes: 0 written; 1 a reference did not build or the check found an answer in the release;
2 bad usage (DEST inside this tree, not empty, or gpu asked for without nvcc).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import build as buildmod, grading  # noqa: E402
from gradelib import config as configmod  # noqa: E402

RELEASE_ARCH = "sm_80 sm_90"  # A100 and H100/H200 machine code, PTX for anything newer

# What the release leaves out, and why (a path, or a folder ending in /; "*/NAME": that name
# anywhere).
LEFT_OUT = [
    ("solutions/", "the reference solutions and their ANSWERS.md: the answers"),
    ("grader/fixtures/", "red-team and honest submissions, most of them patches of the references"),
    ("grader/check_fixtures.py", "grades the fixtures (left out)"),
    ("grader/fixturelib.py", "reads the fixtures (left out)"),
    ("grader/tests/", "the grader's own tests, which grade the references and the fixtures"),
    ("grader/deploy/", "builds an instructor's autograder from the references"),
    ("grader/dev/", "the maintainers' measurements"),
    ("tools/dev/", "the maintainers' sweeps of the reference kernels"),
    ("tests/cpu_fixtures/", "broken and unusual whole kernels that test CPU mode"),
    ("tests/cpu_corpus/", "broken and unusual whole kernels that test CPU mode"),
    ("tests/test_", "the course's own suites (they run the references); the kernel tests stay"),
    (".ci/", "the course repository's CI"),
    ("CONTRIBUTING.md", "the maintainers' recipes"),
]
KEEP_TESTS = {"tests/test_lab.c"}  # the kernel tests' main, which make test TEST_SRC=labs links

PREFACE = """> **Student release.** This copy of the course has no `solutions/`: each lab's reference is
> shipped compiled (`grader/references/`), so `make grade` still times your lab against it on
> your own GPU (or grades correctness in CPU mode), and `make bench SRC=labs LAB=NN` draws it
> beside your curve. `make test` runs your labs' kernel tests (`TEST_SRC=labs`). Built from
> {commit}.

"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def left_out(path):
    """The reason path (relative, /-separated) is left out, or None."""
    if path in KEEP_TESTS:
        return None
    for prefix, why in LEFT_OUT:
        if path == prefix or path.startswith(prefix):
            return why
    return None


def tracked_files(root):
    """The tree's tracked files (git ls-files), or every file but build outputs without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return sorted(p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, subs, names in os.walk(root):
            subs[:] = sorted(s for s in subs if s not in {".git", "build", "node_modules", "__pycache__"})
            files += [os.path.relpath(os.path.join(d, n), root) for n in sorted(names)]
        return files


def commit_of(root):
    try:
        return subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip() or "an unknown commit"
    except (OSError, subprocess.CalledProcessError):
        return "a tree without git"


def given_code(root):
    """The code the course gives every student: common/, every lab's skeleton and the kernel
    tests' hooks (a line a reference shares with these is no answer)."""
    paths = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(root, "common")) for n in names]
    for top, name in (("labs", "scan.cu"), ("tests/hooks", None)):
        base = os.path.join(root, top)
        for d in sorted(os.listdir(base)):
            path = os.path.join(base, d, name) if name else os.path.join(base, d)
            if os.path.isfile(path):
                paths.append(path)
    return paths


def answer_lines(root):
    """{line: lab} of the lines only a reference has: each solutions/NN/scan.cu line of 30 or more
    characters, not a comment, that is not in the course's given code (given_code)."""
    given = set()
    for path in given_code(root):
        given |= _lines(path)
    out = {}
    for lab in sorted(os.listdir(os.path.join(root, "solutions"))):
        for line in _lines(os.path.join(root, "solutions", lab, "scan.cu")):
            if len(line) >= 30 and not line.startswith(("//", "/*", "*")) and line not in given:
                out.setdefault(line, lab)
    return out


def _lines(path):
    try:
        with open(path, errors="replace") as f:
            return {line.strip() for line in f}
    except OSError:
        return set()


def leaked(dest, answers):
    """[(release file, lab, line)] of the reference-only lines found in the release's files other
    than the given code and the hints (whose last tier is near-code by design)."""
    skip = {os.path.relpath(p, ROOT) for p in given_code(ROOT)}
    found = []
    for d, _, names in os.walk(dest):
        for n in sorted(names):
            path = os.path.join(d, n)
            rel = os.path.relpath(path, dest)
            if n == "HINTS.md" or n.endswith(".o") or rel in skip or rel.split(os.sep)[0] == "build":
                continue
            for line in sorted(_lines(path) & answers.keys()):
                found.append((rel, answers[line], line))
    return found


def build_references(root, mode, work, arch, labs, config):
    """{lab: its reference's object as compiled} in mode, built by the grader's own builder (so the
    objects are exactly what a grade links); a lab built on others gets their objects first."""
    if arch and mode == "gpu":
        os.environ["ARCH"] = arch  # the Makefile's ARCH ?= reads it
    cache = os.environ.get("LAB_GRADER_CACHE") or None
    builder = buildmod.Builder(root, os.path.join(work, "build"), mode,
                               config.lab(None)["timeouts"]["build_s"] * 2, cache=cache)
    log(f"student release: building the harness ({mode} mode{', ' + builder.arch if builder.arch else ''})")
    builder.prepare()

    def built_on(lab):
        return list(config.lab(lab).get("built_on") or [])

    order = [lab for lab in labs if not built_on(lab)] + [lab for lab in labs if built_on(lab)]
    objects = {}
    for lab in order:
        log(f"student release: the reference of {lab} ({mode} mode)")
        bases = {b: builder.reference_dir(b, work) for b in built_on(lab)} if built_on(lab) else None
        res = grading.build_reference(builder, root, work, lab, bases)
        if not res.ok:
            raise RuntimeError(f"the reference of {lab} does not build in {mode} mode: {res.message}")
        objects[lab] = os.path.join(builder.reference_dir(lab, work), "scan.o")
    return objects


def main(argv=None):
    ap = argparse.ArgumentParser(description="Writes the student release of this course to DEST.")
    ap.add_argument("--dest", required=True, help="an empty or new folder outside this tree")
    ap.add_argument("--modes", nargs="+", choices=["cpu", "gpu"], default=None,
                    help="the references to ship compiled (default: cpu, and gpu where nvcc is found)")
    ap.add_argument("--arch", default=RELEASE_ARCH, help=f"the GPUs of the gpu objects (default \"{RELEASE_ARCH}\")")
    ap.add_argument("--work", default=None, help="build folder (default: a temporary one)")
    args = ap.parse_args(argv)

    if not args.dest.strip():
        log("student_release: say where, e.g. make student-release DEST=../scan-labs-student")
        return 2
    dest = os.path.abspath(args.dest)
    if os.path.commonpath([dest, ROOT]) == ROOT:
        log(f"student_release: DEST={args.dest} is inside this tree: choose a folder outside {ROOT}")
        return 2
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        log(f"student_release: DEST={args.dest} exists and is not an empty folder")
        return 2
    modes = args.modes or (["cpu", "gpu"] if buildmod.find_nvcc() else ["cpu"])
    if "gpu" in modes and not buildmod.find_nvcc():
        log("student_release: --modes gpu needs nvcc (the CUDA toolkit), which is not on PATH")
        return 2
    if "gpu" not in modes and not args.modes:
        log("student release: no nvcc here, so CPU mode's references only: its make grade on a GPU "
            "will have no reference to time against (build the release where nvcc is installed)")

    config = configmod.load(os.path.join(ROOT, "grader", "config.json"))
    labs = sorted(d for d in os.listdir(os.path.join(ROOT, "solutions"))
                  if os.path.isfile(os.path.join(ROOT, "solutions", d, "scan.cu")))
    work = args.work or tempfile.mkdtemp(prefix="student-release-")
    objects = {}
    try:
        for mode in modes:
            objects[mode] = build_references(ROOT, mode, os.path.join(work, mode), args.arch, labs, config)
    except (RuntimeError, buildmod.InfraError) as e:
        log(f"student_release: {e}")
        return 1

    kept, dropped = [], {}
    for path in tracked_files(ROOT):
        why = left_out(path)
        if why:
            dropped.setdefault(why, 0)
            dropped[why] += 1
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, path)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, path), os.path.join(dest, path))  # times kept: make sees them as now
        kept.append(path)
    for mode, objs in objects.items():
        for lab, obj in objs.items():
            out = os.path.join(dest, buildmod.REFERENCE_OBJECTS, mode, lab + ".o")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copyfile(obj, out)
    readme = os.path.join(dest, "README.md")
    with open(readme) as f:
        text = f.read()
    with open(readme, "w") as f:
        f.write(PREFACE.format(commit=commit_of(ROOT)) + text)

    found = leaked(dest, answer_lines(ROOT))
    for path, lab, line in found[:20]:
        log(f"student_release: {path} has a line of {lab}'s reference: {line[:100]}")
    if found:
        log(f"student_release: {len(found)} reference lines in the release: not a release to hand out")
        return 1
    print(f"student release in {dest}: {len(kept)} files, the references of {len(labs)} labs as "
          f"{' and '.join(modes)} objects (grader/references/); left out:")
    for why, n in dropped.items():
        print(f"  {n:4d} {why}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
