"""What single and batch mode share: the prepared Grader (GPU mode, or CPU mode when there is no
GPU), the results of a run (a graded submission, a grader error, an infrastructure error), the
grading key a stored result is kept under, writing an output, and single mode itself (grade_one:
one submission, --src). Batch mode is batch.py; grade.py parses the options and calls one of them.
"""
import hashlib
import json
import os
import shlex
import sys
import time

from . import formats, policy, receipt, scoring, uploads
from . import submissions as subsmod
from .build import InfraError, NoGpu
from .formats.gradescope import present, rate_limited
from .grading import Grader
from .outcomes import GradeResult
from .progress import T0, log
from .status import Status

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(GRADER)
GRADE_PY = os.path.join(GRADER, "grade.py")  # the command line (batch workers and Slurm jobs run it too)

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


def emit(text, out):
    """Writes text to out (atomically) or stdout."""
    if out:
        d = os.path.dirname(os.path.abspath(out))
        os.makedirs(d, exist_ok=True)
        tmp = out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def infra_result(args, seed, message, config):
    """The result of a run the grader could not do (no points: not a grade)."""
    return GradeResult(course=config.course if config else "", mode="cpu" if args.cpu else "gpu", seed=seed,
                       status=Status.INFRASTRUCTURE_ERROR, message=message,
                       elapsed_s=round(time.monotonic() - T0, 1)).to_dict()


def regrade_command(argv=None):
    """The command that grades again what this run graded: this one (in batch mode it resumes,
    grading what has no result yet)."""
    argv = sys.argv[1:] if argv is None else argv
    return shlex.join(["python3", os.path.relpath(GRADE_PY)] + list(argv))


def make_grader(args, config, seed, labs, mode, progress):
    """A Grader for mode with the options of args (not prepared yet)."""
    g = Grader(ROOT, config, args.work, mode=mode, seed=seed, jobs=args.jobs, gpu_jobs=args.gpu_jobs,
               labs=labs, progress=progress, sanitizer=not args.no_sanitizer, isolated=args.isolated)
    g.regrade = regrade_command(getattr(args, "argv", None))
    return g


def prepared_grader(args, config, seed, labs, progress):
    """A Grader with the harness and references built, in GPU mode or (with --cpu, or when there
    is no GPU and --gpu was not given) CPU mode."""
    if args.cpu or (config.mode == "cpu" and not args.gpu):
        g = make_grader(args, config, seed, labs, "cpu", progress)
        g.prepare()
        return g
    g = make_grader(args, config, seed, labs, "gpu", progress)
    try:
        g.prepare()
        return g
    except NoGpu as e:
        if args.gpu or config.mode == "gpu":
            if config.mode == "gpu" and not args.gpu:
                raise NoGpu(f"{e} (the config says \"mode\": \"gpu\": this deployment never falls back "
                            f"to CPU mode; set it to \"cpu\" to grade correctness only)")
            raise
        log(f"{e}; trying CPU mode (correctness only)")
        g = make_grader(args, config, seed, labs, "cpu", progress)
        try:
            g.prepare()
        except InfraError as e2:
            raise InfraError(f"{e}, and CPU mode is unavailable: {e2}")
        log("speed not graded: no GPU")
        return g


def _sha256_files(paths):
    """One hash of the files' names (below ROOT) and contents."""
    h = hashlib.sha256()
    for p in paths:
        h.update(os.path.relpath(p, ROOT).encode() + b"\0")
        try:
            with open(p, "rb") as f:
                h.update(f.read())
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


def grading_key(args, config, labs, mode):
    """What a result depends on besides the submission: the labs, the mode, the effective
    config (after --case-timeout), the sanitizer switch, --only-submitted, and the grader itself
    (its sources, the harness, the Makefile and the reference solutions). A stored result
    graded under another key is graded again when a batch resumes. The seed is not part of it
    (a fresh one is drawn per run unless --seed is given), nor is --format: a resumed student's
    Gradescope or JUnit file is written again from the stored result."""
    def graded(settings):  # who sees what (visibility) is not how it is graded: left out
        return {k: v for k, v in settings.items() if k != "visibility"}
    cfg = json.dumps({"course": config.course, "defaults": graded(config.defaults),
                      "labs": {lab: graded(over) for lab, over in config.labs.items() if graded(over)},
                      "static": config.static, "feedback": config.feedback}, sort_keys=True)
    files = [os.path.join(ROOT, "Makefile"), GRADE_PY]
    for d in (os.path.join(GRADER, "gradelib"), os.path.join(ROOT, "common")):
        for dirpath, dirnames, filenames in os.walk(d):
            dirnames[:] = sorted(x for x in dirnames if x != "__pycache__")
            files += [os.path.join(dirpath, f) for f in sorted(filenames) if not f.endswith(".pyc")]
    files += [os.path.join(ROOT, "solutions", lab, "scan.cu") for lab in labs]
    return {"labs": list(labs), "mode": mode, "config_sha256": hashlib.sha256(cfg.encode()).hexdigest(),
            "sanitizer": not args.no_sanitizer, "only_submitted": bool(args.only_submitted),
            "grader_sha256": _sha256_files(files)}


def error_result(grader, config, labs, seed, t0, student, fp, message, key=None):
    """A result for a submission the grader failed on (a bug, not the student's doing): the same
    keys as a graded result, no lab results, 0 points out of the labs' total."""
    mode = getattr(grader, "mode", "gpu")
    try:
        max_points = round(sum(scoring.maxima(config.lab(lab), mode).total for lab in labs), 2)
    except Exception:  # noqa: BLE001 (the error result must always be built)
        max_points = 0
    return GradeResult(course=config.course, mode=mode, device=getattr(grader, "device", None), seed=seed,
                       status=Status.GRADER_ERROR, message=message, points=0.0, max_points=max_points,
                       elapsed_s=round(time.monotonic() - t0, 1), student=student, submission_sha256=fp,
                       grading_key=key).to_dict()


def assemble(grader, lab_results, seed, t0, student=None, fp=None, key=None, status=Status.GRADED, why=""):
    """The result of a graded submission (lab_results: the lab result dicts, in lab order).
    status/why: NO_LABS_FOUND and the reason, for a submission in which no lab was found."""
    notes = ["speed not graded: no GPU (CPU mode grades correctness only)"] if grader.mode == "cpu" else []
    result = GradeResult(course=grader.config.course, mode=grader.mode, device=grader.device, seed=seed,
                         status=status,
                         message="; ".join(([why] if why else []) + notes + list(getattr(grader, "notes", []))),
                         points=round(sum(r["points"] for r in lab_results), 2),
                         max_points=round(sum(r["max_points"] for r in lab_results), 2),
                         elapsed_s=round(time.monotonic() - t0, 1), timings=dict(grader.timings),
                         labs=list(lab_results), student=student, submission_sha256=fp, grading_key=key).to_dict()
    return present(result, grader.config)  # who sees each part, for the platform's output (Gradescope)


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
    if getattr(args, "metadata", None) and config.rate_limit:
        state = policy.rate_limited(config.rate_limit, args.metadata)
        if state and args.format == "gradescope":  # Gradescope's uploads; nothing is built
            message = policy.rate_limit_message(config.rate_limit, state)
            log(message)
            emit(rate_limited(message, state["score"]), args.out)
            return EXIT_GRADED
        if state:
            log(f"rate_limit: {state['used']} uploads in the last {config.rate_limit['hours']:g} hours, but it "
                f"applies to --format gradescope only: graded")
    t0 = time.monotonic()
    grader = prepared_grader(args, config, seed, labs, log)
    name = subsmod.student_name(os.path.basename(src_dir.rstrip("/"))) or "src"
    try:
        found = uploads.open_submission(src_dir, os.path.join(grader.work, "unpacked", subsmod.work_tag(name)), labs,
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
    meta = getattr(args, "metadata", None)
    if meta and os.path.realpath(meta).startswith(os.path.realpath(src_dir).rstrip("/") + "/"):
        log(f"late policy: --metadata {meta} is inside the submission (the student's own file): not read")
    elif meta:  # the late policy, from Gradescope's submission_metadata.json
        policy.stamp_single(getattr(args, "term", None), result, name, meta, log)
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
    emit(formats.render(result, args.format, sys.stdout, to_terminal=not args.out), args.out)
    if args.out and args.format != formats.DEFAULT:
        sys.stdout.write(formats.render(result, formats.DEFAULT, sys.stdout))
    return EXIT_GRADED
