#!/usr/bin/env python3
"""grade.py — the autograder of Parallel Scan Labs (see grader/README.md).

Builds each lab's scan.cu against the course's own harness in a private folder, checks the
source and object for forbidden libraries and shadowed functions, runs the edge-size matrix
(each case its own process with a timeout), compute-sanitizer memcheck and racecheck, and times
the student's code against the reference solution on the same GPU. Points follow
grader/config.json.

Usage:
  grade.py --src labs                     grade your labs (make grade)
  grade.py --src solutions                grade the reference solutions (make grade SRC=solutions)
  grade.py --src DIR --labs 03 05         a folder laid out like labs/, some labs only
  grade.py --submissions DIR              a whole class: DIR/<student>/ or DIR/<student>.zip|.tar.gz
  grade.py --submissions DIR --gpus all   ... one worker per GPU (--shard I/N, --merge, --slurm)
  grade.py ... --format gradescope --out /autograder/results/results.json

Data (the table, or --format json|gradescope|junit) goes to stdout or --out; progress to stderr.

Exit codes:
  0  graded (whatever the score)
  1  the grader itself failed (a bug: please report it)
  2  usage error (bad option, unknown lab in --labs or in the config, bad config file)
  3  infrastructure error: no nvcc, no GPU (without CPU mode), the harness or a reference
     solution does not build or run. Not a grade: Gradescope output scores it 0 and says the
     grader failed to run (not a judgement of the code; ask for a regrade).
  4  batch: two submissions would write the same result file (alice/ and alice.zip)
  130 interrupted (Ctrl-C, SIGTERM): what finished is kept; the same command resumes
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shlex
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from gradelib import (batch, cluster, config as configmod, feedback, formats, gradebook, proc, resources,  # noqa: E402
                      scoring, uploads)
from gradelib.build import InfraError, NoGpu  # noqa: E402
from gradelib.formats.gradescope import present  # noqa: E402
from gradelib.grading import Grader, course_labs, select_labs  # noqa: E402
from gradelib.outcomes import GradeResult, LabResult  # noqa: E402
from gradelib.status import NOT_GRADED, Status  # noqa: E402

EXIT_GRADED, EXIT_INTERNAL, EXIT_USAGE, EXIT_INFRA, EXIT_NAME_CLASH = 0, 1, 2, 3, 4


T0 = time.monotonic()


def log(msg):
    batch.clear_line()  # a progress bar drawn in place on a terminal
    print(f"grade: [{time.monotonic() - T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def _joined(argv):
    """argv with `--sbatch-args VALUE` written `--sbatch-args=VALUE`, so that a value starting
    with '-' (every sbatch option does) is taken as the value, not as an option of grade.py."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for i, a in enumerate(argv[:-1]):
        if a == "--sbatch-args":
            argv[i:i + 2] = ["--sbatch-args=" + argv[i + 1]]
            break
    return argv


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="grade.py", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[7:]))
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--src", default="labs",
                      help="labs, solutions, or a folder laid out like labs/ (default: labs)")
    what.add_argument("--submissions", metavar="DIR",
                      help="grade every submission in DIR (folders, .zip, .tar.gz)")
    ap.add_argument("--labs", nargs="+", metavar="LAB", help="only these labs (03 or 03_kogge_stone)")
    ap.add_argument("--format", choices=formats.names(), default=formats.DEFAULT, help=formats.help_text())
    ap.add_argument("--out", metavar="FILE", help="write the --format output here instead of stdout")
    ap.add_argument("--config", default=os.path.join(HERE, "config.json"), help="grading config (JSON)")
    ap.add_argument("--seed", type=int, help="input seed (default: a fresh one, printed)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "grader"),
                    help="the grader's private build folder (default: build/grader)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--cpu", action="store_true",
                      help="CPU mode: correctness only (also chosen when there is no GPU)")
    mode.add_argument("--gpu", action="store_true",
                      help="insist on a GPU: no GPU is an infrastructure error, never CPU mode")
    ap.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer (not for real grades)")
    ap.add_argument("--case-timeout", type=float, metavar="S",
                    help="seconds per correctness case, overriding the config's timeouts.case_s")
    ap.add_argument("--jobs", type=int, help="parallel builds (default: one per usable CPU (the affinity mask "
                                             "and the cgroup's CPU quota), fewer when the memory limit is low)")
    ap.add_argument("--gpu-jobs", type=int, help="lab processes run at once in the correctness and sanitizer "
                                                 "stage (default: as --jobs, at most 10)")
    ap.add_argument("--isolated", action="store_true",
                    help="one process per graded run (slower; by default a process runs many cases, "
                         "and any case that fails is run again alone: the verdicts are the same)")
    ap.add_argument("--results", metavar="DIR", help="batch: where results go (default: DIR-results)")
    ap.add_argument("--force", action="store_true", help="batch: regrade submissions already graded")
    ap.add_argument("--roster", metavar="CSV", help="batch: submission names to student id, name and email "
                                                    "(columns submission,id,name,email) for gradebook.csv")
    ap.add_argument("--only-submitted", action="store_true",
                    help="grade only the labs a submission contains (the others are not counted)")
    ap.add_argument("--prepare-only", action="store_true",
                    help="build the harness and the reference solutions into --work and stop (no GPU "
                         "needed: for a container or Gradescope image built ahead of grading)")
    cl = ap.add_argument_group("a class over several GPUs or machines (batch mode; grader/README.md)")
    cl.add_argument("--gpus", metavar="LIST",
                    help="one worker per GPU: all, or ids such as 0,1 (each worker sees its GPU alone)")
    cl.add_argument("--shard", metavar="I/N", help="grade only shard I of N (submission k goes to shard k %% N)")
    cl.add_argument("--merge", action="store_true",
                    help="grade nothing: write class.csv from the results of every submission (after shards)")
    cl.add_argument("--slurm", action="store_true",
                    help="submit a Slurm job array (one shard per task, one GPU each) and a merge job")
    cl.add_argument("--shards", type=int, metavar="N", help="--slurm: the number of array tasks (default: "
                                                             "one per 10 submissions, at most 64)")
    cl.add_argument("--sbatch-args", metavar="'...'", help="--slurm: extra #SBATCH options, e.g. "
                                                           "'--partition=gpu --time=02:00:00'")
    cl.add_argument("--dry-run", action="store_true", help="--slurm: write the job scripts, submit nothing")
    cl.add_argument("--claim", metavar="DIR", help=argparse.SUPPRESS)  # a --gpus worker's claim folder
    args = ap.parse_args(_joined(argv))
    if args.seed is not None and not 0 <= args.seed < 2**63:
        ap.error("--seed must be a non-negative whole number below 2^63")
    if args.case_timeout is not None and not 0 < args.case_timeout <= 3600:
        ap.error("--case-timeout must be between 0 and 3600 seconds")
    batch_only = [o for o in ("gpus", "shard", "merge", "slurm", "claim", "roster") if getattr(args, o)]
    if batch_only and not args.submissions:
        ap.error(f"--{batch_only[0]} needs --submissions DIR")
    if sum(bool(getattr(args, o)) for o in ("gpus", "shard", "merge", "slurm", "claim")) > 1:
        ap.error("choose one of --gpus, --shard, --merge and --slurm")
    for name in ("jobs", "gpu_jobs", "shards"):
        v = getattr(args, name)
        if v is not None and v < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    return args, ap


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
    return shlex.join(["python3", os.path.relpath(os.path.abspath(__file__))] + list(argv))


def make_grader(args, config, seed, labs, mode, progress):
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
    files = [os.path.join(ROOT, "Makefile"), os.path.abspath(__file__)]
    for d in (os.path.join(HERE, "gradelib"), os.path.join(ROOT, "common")):
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
                         status=status, message="; ".join(([why] if why else []) + notes + list(getattr(grader, "notes", []))),
                         points=round(sum(r["points"] for r in lab_results), 2),
                         max_points=round(sum(r["max_points"] for r in lab_results), 2),
                         elapsed_s=round(time.monotonic() - t0, 1), timings=dict(grader.timings),
                         labs=list(lab_results), student=student, submission_sha256=fp, grading_key=key).to_dict()
    return present(result, grader.config)  # who sees each part, for the platform's output (Gradescope)


def grade_one(args, config, seed, labs):
    src_dir = resolve_src(args.src)
    if src_dir is None:
        log(f"--src {args.src}: no such folder or file (use labs, solutions, a folder laid out like labs/, "
            f"an archive of one, or one scan.cu with --labs NN)")
        return EXIT_USAGE
    t0 = time.monotonic()
    grader = prepared_grader(args, config, seed, labs, log)
    name = batch.student_name(os.path.basename(src_dir.rstrip("/"))) or "src"
    try:
        found = uploads.open_submission(src_dir, os.path.join(grader.work, "unpacked", batch.work_tag(name)), labs,
                                        grader.bases_of(labs))
    except batch.BadSubmission as e:
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
    log(f"done in {result['elapsed_s']} s")
    emit(formats.render(result, args.format, sys.stdout, to_terminal=not args.out), args.out)
    if args.out and args.format != formats.DEFAULT:
        sys.stdout.write(formats.render(result, formats.DEFAULT, sys.stdout))
    return EXIT_GRADED


def write_student_files(result, results_dir, student, fmt):
    """The student's JSON result and, with a --format that has one (formats.side_files), its
    side file."""
    emit(formats.render(result, formats.STORED), os.path.join(results_dir, student + ".json"))
    side = formats.side_files().get(fmt)
    if side:
        emit(formats.render(result, fmt), os.path.join(results_dir, f"{student}.{side}"))


class BatchRun:
    """What the steps of one batch run share: the options, the config, the seed and labs, the
    results folder, the progress bar, the prepared grader and the grading key."""

    def __init__(self, args, config, seed, labs, results_dir, bar, grader):
        self.args, self.config, self.seed, self.labs = args, config, seed, labs
        self.results_dir, self.bar, self.grader = results_dir, bar, grader
        self.key = grading_key(args, config, labs, grader.mode)


def batch_submissions(args):
    """(the submissions of --submissions, None), or (None, the exit code) with the reason logged."""
    folder = args.submissions
    if not os.path.isdir(folder):
        log(f"--submissions {folder}: no such folder")
        return None, EXIT_USAGE
    subs = batch.list_submissions(folder)
    if not subs:
        log(f"--submissions {folder}: no submissions (folders, .zip, .tar.gz) in it")
        return None, EXIT_USAGE
    clash = batch.name_collision(subs)
    if clash:
        log(f"--submissions {folder}: {clash}")
        return None, EXIT_NAME_CLASH
    return subs, None


def still_to_grade(run, subs):
    """[(student, path, fingerprint)] of the submissions to grade: all with --force, else those
    without a stored result under the same grading key. A stored result gets the side file of
    this run's --format written from it (and is graded again if that fails)."""
    todo = []
    for student, path in subs:
        fp = batch.fingerprint(path)
        stored = None if run.args.force else batch.already_graded(run.results_dir, student, fp, run.key)
        if stored is not None:
            if run.args.format in formats.side_files():
                try:  # with the config's visibility of today (not part of the grading key)
                    write_student_files(present(stored, run.config), run.results_dir, student, run.args.format)
                except Exception:  # noqa: BLE001 (then grade it again)
                    traceback.print_exc(file=sys.stderr)
                    todo.append((student, path, fp))
                    continue
            run.bar.advance(skipped=True)
            run.bar.step(student)
            run.bar.show("already graded (--force regrades)")
            continue
        todo.append((student, path, fp))
    return todo


def unpack_and_build(run, student, path):
    """CPU part of one submission: (uploads.Found, built) or raises BadSubmission."""
    found = uploads.open_submission(path, os.path.join(run.grader.work, "unpacked", batch.work_tag(student)),
                                    run.labs, run.grader.bases_of(run.labs))
    chosen = [lab for lab in run.labs if found.sources[lab]] if run.args.only_submitted else run.labs
    return found, run.grader.build_submission(student, found.sources, chosen, found.problem)


def grade_student(run, student, fp, t0, fut):
    """The result of one submission (fut: the future of unpack_and_build). A submission that
    cannot be read, or in which no lab is found, is graded 0 in every lab, with the reason; a
    grader error (a bug, whatever the submission did) is that student's error result. Only an
    infrastructure error stops the batch."""
    grader = run.grader
    try:
        status, message = Status.GRADED, ""
        try:
            found, built = fut.result()
            lab_results = grader.evaluate(built, student)
            if found.problem and found.nothing:
                status, message = Status.NO_LABS_FOUND, found.problem
        except batch.BadSubmission as e:
            status, message = Status.NO_LABS_FOUND, f"the submission cannot be read: {e}"
            lab_results = [LabResult.blank(lab, run.config.lab(lab), grader.mode, status=Status.MISSING,
                                           summary=message).to_dict()
                           for lab in run.labs]
        return assemble(grader, lab_results, run.seed, t0, student, fp, run.key, status, message)
    except InfraError:
        raise
    except Exception as e:  # a hostile submission must never stop the batch
        traceback.print_exc(file=sys.stderr)
        return error_result(grader, run.config, run.labs, run.seed, t0, student, fp, f"{type(e).__name__}: {e}")


def store_result(run, student, fp, t0, result):
    """Writes a student's files; a result that cannot be written becomes an error result (one
    bad result is an error row, not a crash). Returns the result as stored."""
    try:
        write_student_files(result, run.results_dir, student, run.args.format)
        return result
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        result = error_result(run.grader, run.config, run.labs, run.seed, t0, student, fp,
                              f"the grader could not write this result: {type(e).__name__}: {e}")
    try:
        write_student_files(result, run.results_dir, student, run.args.format)
    except Exception:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
    return result


ROSTER = None  # the --roster, read once in main (gradebook.read_roster)
LABS = []      # the graded labs, for the gradebook's columns


def write_class_files(results_dir, students):
    """class.csv and gradebook.csv (gradebook.write_class_files) from the stored results of
    students; the rows of class.csv."""
    return gradebook.write_class_files(results_dir, students, LABS, ROSTER, warn=log)


def log_class_summary(results_dir, students):
    """The class's summary (gradebook.summary_lines) on stderr."""
    for line in gradebook.summary_lines(gradebook.class_summary(results_dir, students)):
        log(line)


def finish_batch(run, subs, summary, class_files=True, not_reached=0):
    """class.csv from this run's students (not for a shard or a worker: the merge, or the
    parent, writes it for the whole class), the summary (this run's counts and times, then the
    class's points), and the table of those graded now."""
    if class_files:
        rows = write_class_files(run.results_dir, [s for s, _ in subs])
        log(f"class CSV: {os.path.join(run.results_dir, 'class.csv')} ({rows} rows), gradebook: "
            f"{os.path.join(run.results_dir, 'gradebook.csv')}")
    else:
        log(f"{len(summary)} graded now; the class files come from --merge (or the --gpus parent)")
    errors = sum(1 for *_, st in summary if st in NOT_GRADED)
    log(gradebook.run_line(len(summary), run.bar.done - run.bar.graded, errors, time.monotonic() - run.bar.t0,
                           not_reached))
    if class_files:
        log_class_summary(run.results_dir, [s for s, _ in subs])
    lines = [f"{'student':24} {'points':>8} {'max':>6}  status"]
    for student, pts, mx, st in summary:
        lines.append(f"{student:24} {pts if pts is not None else '-':>8} {mx if mx is not None else '-':>6}  {st}")
    emit("\n".join(lines) + "\n", run.args.out)


def results_folder(args):
    return args.results or (os.path.abspath(args.submissions).rstrip("/") + "-results")


def on_interrupt(cleanup):
    """Ctrl-C (SIGINT) or SIGTERM: every lab process and build the grader has running is killed,
    cleanup() runs (the partial class files), and the grader exits with 130 at once, without
    waiting for its worker threads (whose processes are gone)."""
    def handler(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        killed = proc.kill_tracked()
        log(f"interrupted: stopped {killed} running process group{'s' if killed != 1 else ''}")
        try:
            cleanup()
        except Exception:  # noqa: BLE001 (exit anyway)
            traceback.print_exc(file=sys.stderr)
        log("run the same command again to resume: finished submissions are kept")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(130)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def claimed(run, todo):
    """The submissions of todo this process grades: all, or for a --gpus worker those it claims
    (cluster.claim), one at a time as it gets to them."""
    for item in todo:
        if run.args.claim is None or cluster.claim(run.args.claim, item[0]):
            yield item


def grade_batch(args, config, seed, labs):
    subs, rc = batch_submissions(args)
    if subs is None:
        return rc
    results_dir = results_folder(args)
    os.makedirs(results_dir, exist_ok=True)
    if os.geteuid() == 0:  # lab runs then run as the run user: other students' results are not theirs
        os.chmod(results_dir, os.stat(results_dir).st_mode & 0o7700)
        if os.stat(args.submissions).st_mode & 0o005:
            log(f"warning: {args.submissions} is readable by other users, so a graded run (as the run "
                f"user) could read other students' submissions: chmod o= {args.submissions}")
    if args.merge:
        rows = write_class_files(results_dir, [s for s, _ in subs])
        missing = [s for s, _ in subs if batch.read_result(results_dir, s) is None]
        log(f"merged {len(subs) - len(missing)} of {len(subs)} submissions into "
            f"{os.path.join(results_dir, 'class.csv')} ({rows} rows)"
            + (f"; no result yet for {len(missing)}: {', '.join(missing[:5])}" if missing else ""))
        log_class_summary(results_dir, [s for s, _ in subs])
        return EXIT_GRADED
    if args.gpus or args.slurm:
        return distribute(args, seed, subs, results_dir)
    mine = subs
    if args.shard:
        i, n = cluster.parse_shard(args.shard)
        mine = cluster.shard_of(subs, i, n)
        log(f"shard {i}/{n}: {len(mine)} of {len(subs)} submissions")
    bar = batch.Progress(len(mine))
    run = BatchRun(args, config, seed, labs, results_dir, bar,
                   prepared_grader(args, config, seed, labs, lambda m: bar.show(m)))
    whole = not (args.shard or args.claim)
    on_interrupt(lambda: write_class_files(results_dir, [s for s, _ in subs]) if whole else None)
    todo = still_to_grade(run, mine)
    bar.start()  # the ETA counts from here: the references are built, the skipped ones skipped
    summary = []
    with cf.ThreadPoolExecutor(2) as pool:  # the next submission builds while this one has the GPU
        queue = claimed(run, todo)
        nxt = next(queue, None)
        fut = pool.submit(unpack_and_build, run, nxt[0], nxt[1]) if nxt else None
        while nxt is not None:
            (student, _, fp), cur = nxt, fut
            nxt = next(queue, None)
            fut = pool.submit(unpack_and_build, run, nxt[0], nxt[1]) if nxt else None
            bar.step(student)
            t0 = time.monotonic()
            try:
                result = grade_student(run, student, fp, t0, cur)
            except InfraError as e:  # the machine, not the submission: this row says so, the rest wait
                result = store_result(run, student, fp, t0, dict(infra_result(args, seed, str(e), config),
                                                                 student=student, submission_sha256=fp))
                summary.append((student, None, None, result.get("status")))
                pool.shutdown(wait=False, cancel_futures=True)
                bar.close()
                log(f"infrastructure error while grading {student}, not a grade: {e}")
                left = len(todo) - len(summary)
                finish_batch(run, subs, summary, class_files=whole, not_reached=left)
                log(f"stopped: {left} submission{'s' if left != 1 else ''} not graded (class.csv says 'no result'); "
                    f"fix the machine and run the same command again to resume")
                return EXIT_INFRA
            result = store_result(run, student, fp, t0, result)
            bar.advance()
            bar.show(f"{result.get('points')}/{result.get('max_points')} points")
            summary.append((student, result.get("points"), result.get("max_points"), result.get("status")))
    bar.close()
    finish_batch(run, subs, summary, class_files=whole)
    return EXIT_GRADED


def distribute(args, seed, subs, results_dir):
    """--gpus: a worker per GPU, then the class files; --slurm: the job scripts, submitted."""
    work = os.path.abspath(args.work)
    if args.slurm:
        shards = args.shards or max(1, min(64, (len(subs) + 9) // 10))
        folder = os.path.join(results_dir, "slurm")
        os.makedirs(folder, exist_ok=True)
        array, merge = cluster.sbatch_scripts(os.path.abspath(__file__), args, seed, min(shards, len(subs)),
                                              results_dir, work, args.sbatch_args)
        paths = [os.path.join(folder, "grade.sbatch"), os.path.join(folder, "merge.sbatch")]
        for path, text in zip(paths, (array, merge)):
            emit(text, path)
        log(f"--slurm: {min(shards, len(subs))} shards of {len(subs)} submissions; job scripts: {', '.join(paths)}")
        os.makedirs(os.path.join(results_dir, "logs"), exist_ok=True)  # Slurm does not make it
        if args.dry_run:
            return EXIT_GRADED
        ids = cluster.submit_slurm(*paths, log)
        print(*ids, flush=True)  # the array's and the merge job's ids, for scripts
        return EXIT_GRADED
    gpus = cluster.parse_gpus(args.gpus)
    workers = cluster.Workers(os.path.abspath(__file__), args, seed, gpus, results_dir, work,
                              args.jobs or resources.jobs(), log)
    students = [s for s, _ in subs]

    def partial():
        workers.stop()
        write_class_files(results_dir, students)
    on_interrupt(partial)
    t0 = time.monotonic()
    workers.start()
    last = [None]

    def progress(n):
        line = f"{n}/{len(subs)} submissions taken by {len(gpus)} workers, {time.monotonic() - t0:.0f} s"
        if line.split(",")[0] != last[0]:
            log(line)
            last[0] = line.split(",")[0]
    code = workers.wait(progress)
    rows = write_class_files(results_dir, students)
    log(f"{len(gpus)} workers done in {time.monotonic() - t0:.1f} s (exit code {code}); class CSV: "
        f"{os.path.join(results_dir, 'class.csv')} ({rows} rows); worker logs in {os.path.join(results_dir, '.logs')}")
    log_class_summary(results_dir, students)
    return code


def main(argv=None):
    args, ap = parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the regrade command (regrade_command)
    try:
        config = configmod.load(args.config)
    except configmod.ConfigError as e:
        log(f"bad config: {e}")
        return EXIT_USAGE
    feedback.configure(config.feedback)  # how much program output the results may quote
    if args.case_timeout is not None:
        config.defaults["timeouts"]["case_s"] = args.case_timeout
        for over in config.labs.values():
            over.get("timeouts", {}).pop("case_s", None)
    all_labs = course_labs(ROOT)
    unknown = sorted(set(config.labs) - set(all_labs))
    if unknown:
        log(f"bad config: {args.config}: labs: unknown lab id {unknown[0]!r} (labs: {', '.join(all_labs)})")
        return EXIT_USAGE
    try:
        labs = select_labs(all_labs, args.labs)
    except ValueError as e:
        log(str(e))
        return EXIT_USAGE
    global ROSTER, LABS
    LABS = labs
    if args.roster:
        try:
            ROSTER = gradebook.read_roster(args.roster)
        except gradebook.RosterError as e:
            log(str(e))
            return EXIT_USAGE
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log(f"seed {seed} (pass --seed {seed} to reproduce these inputs)")
    log(resources.describe())
    try:
        if args.prepare_only:
            mode = "cpu" if args.cpu or (config.mode == "cpu" and not args.gpu) else "gpu"
            make_grader(args, config, seed, labs, mode, log).build_course()
            log(f"built the harness and {len(labs)} reference solutions ({mode} mode) in {args.work}")
            return EXIT_GRADED
        if args.submissions:
            return grade_batch(args, config, seed, labs)
        return grade_one(args, config, seed, labs)
    except cluster.ClusterError as e:
        log(str(e))
        return EXIT_USAGE
    except InfraError as e:
        log(f"infrastructure error, not a grade: {e}")
        if not args.submissions:
            result = infra_result(args, seed, str(e), config)
            if args.format != formats.DEFAULT or args.out:
                emit(formats.render(result, args.format), args.out)
        return EXIT_INFRA
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:  # a bug in the grader: say so, with the traceback, exit 1
        traceback.print_exc()
        print("grade: internal error (a bug in the grader, not your code): please report it", file=sys.stderr)
        sys.exit(EXIT_INTERNAL)
