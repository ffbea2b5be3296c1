"""Grading one submission into one GradeResult, the engine's entry: a prepared Grader (GPU mode,
or CPU mode when there is no GPU), the result of a graded submission (assemble), of a submission
the grader failed on (error_result) and of a run it could not do (infra_result), the grading key a
stored result is kept under, and writing an output. The classroom (grader/classroom/: single and
batch mode, clusters, the term's policies) builds on these; nothing here knows a class or a
platform.
"""
import hashlib
import json
import os
import shlex
import sys
import time

from . import scoring
from .build import InfraError, NoGpu, reference_source
from .grading import Grader
from .outcomes import GradeResult
from .progress import T0, log
from .status import Status

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(GRADER)
GRADE_PY = os.path.join(GRADER, "grade.py")  # the command line (batch workers and Slurm jobs run it too)


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
    (its sources, the harness, the Makefile and the reference solutions, or a student release's
    objects of them). A stored result graded under another key is graded again when a batch
    resumes. The seed is not part of it (a fresh one is drawn per run unless --seed is given),
    nor is --format: a resumed student's Gradescope or JUnit file is written again from the
    stored result."""
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
    files += [reference_source(ROOT, lab, mode) or os.path.join(ROOT, "solutions", lab, "scan.cu")
              for lab in labs]
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
    return result
