"""Single mode (grade_one: one submission, --src; replay: --replay RECEIPT) and grade.py's exit
codes. What single and batch mode share of the engine (the prepared Grader, a graded, failed or
impossible run's result, the grading key) is gradelib/session.py; batch mode is batch.py; grade.py
parses the options and calls one of them.
"""
import json
import os
import sys
import time

from gradelib import formats, receipt, session
from gradelib.build import work_tag
from gradelib.progress import log
from gradelib.session import ROOT, assemble, emit
from gradelib.status import Status

from . import hooks, uploads
from . import submissions as subsmod

# grade.py's exit codes (its docstring says what each means)
EXIT_GRADED, EXIT_INTERNAL, EXIT_USAGE, EXIT_INFRA, EXIT_NAME_CLASH = 0, 1, 2, 3, 4
EXIT_BAD_INPUT = 5  # a roster or extensions file refused (file:line:column)


def resolve_src(src):
    """'labs' / 'solutions' name the course's folders; anything else is a path."""
    if src in ("labs", "solutions") and not os.path.isdir(src):
        return os.path.join(ROOT, src)
    if os.path.isdir(src) or os.path.isfile(src):  # a folder, an archive, one scan.cu (uploads)
        return os.path.abspath(src)
    if os.path.isdir(os.path.join(ROOT, src)):
        return os.path.join(ROOT, src)
    return None


EXIT_REPLAY_DIFFERS = 6


def replay(args, config, seed, say):
    """--replay RECEIPT: grades --src again with --seed, the labs the receipt names, and prints,
    lab by lab, whether the verdicts match and the speed falls within the recorded spread."""
    try:
        old = receipt.load(args.replay)
    except ValueError as e:
        say(str(e))
        return EXIT_USAGE
    if receipt.seed_sha256(seed) != old["seed_sha256"]:
        say(f"--seed {seed} is not the receipt's seed (its SHA-256 differs): ask the instructor for the "
            f"published seed")
        return EXIT_USAGE
    args.replay_into = []
    rc = grade_one(args, config, seed, sorted(old["labs"]))
    if rc != EXIT_GRADED or not args.replay_into:
        return rc
    ok, lines = receipt.compare(old, args.replay_into[0]["receipt"])
    sys.stdout.write("\n".join(lines) + "\n" + ("replay: every lab matches its receipt\n" if ok else
                                                "replay: some lab differs from its receipt\n"))
    return EXIT_GRADED if ok else EXIT_REPLAY_DIFFERS


def grade_one(args, config, seed, labs):
    """Single mode: grades the submission of --src and writes its result; the exit code."""
    src_dir = resolve_src(args.src)
    if src_dir is None:
        log(f"--src {args.src}: no such folder or file (use labs, solutions, a folder laid out like labs/, "
            f"an archive of one, or one scan.cu with --labs NN)")
        return EXIT_USAGE
    instead = hooks.before_submission(config, args, log)
    if instead is not None:
        emit(instead, args.out)
        return EXIT_GRADED
    t0 = time.monotonic()
    grader = session.prepared_grader(args, config, seed, labs, log)
    name = subsmod.student_name(os.path.basename(src_dir.rstrip("/"))) or "src"
    try:
        found = uploads.open_submission(src_dir, os.path.join(grader.work, "unpacked", work_tag(name)), labs,
                                        grader.bases_of(labs))
    except subsmod.BadSubmission as e:
        found = uploads.Found({lab: None for lab in labs}, f"the submission cannot be read: {e}")
    if found.problem:
        log(f"--src {args.src}: {found.problem}")
    chosen = [lab for lab in labs if found.sources[lab]] if args.only_submitted else labs
    log(f"building {len(chosen)} labs from {os.path.relpath(src_dir)}")
    built = grader.build_submission(name, found.sources, chosen, found.problem)
    results = grader.evaluate(built, name)
    nothing = found.problem and found.nothing
    result = assemble(grader, results, seed, t0, status=Status.NO_LABS_FOUND if nothing else Status.GRADED,
                      why=found.problem if nothing else "")
    hooks.after_submission(args, result, name, log, submission=src_dir)
    result["receipt"] = receipt.make(result, ROOT, getattr(args, "config", None),
                                     {lab: found.sources[lab] for lab in labs})
    if getattr(args, "receipt", None):
        with open(args.receipt, "w") as f:
            json.dump(result["receipt"], f, indent=1)
            f.write("\n")
    log(f"done in {result['elapsed_s']} s")
    if getattr(args, "replay_into", None) is not None:  # replay: the caller compares, nothing printed
        args.replay_into.append(result)
        return EXIT_GRADED
    emit(formats.render(result, args.format, sys.stdout, to_terminal=not args.out, config=config), args.out)
    if args.out and args.format != formats.DEFAULT:
        sys.stdout.write(formats.render(result, formats.DEFAULT, sys.stdout, config=config))
    return EXIT_GRADED
