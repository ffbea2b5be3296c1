"""Class batch mode (--submissions DIR): every submission in a folder (submissions.py reads it),
built in parallel (the next ones while one has the GPU), graded one at a time on the GPU, each
result stored as it is done, the class files (class.csv, gradebook.csv) written at the end;
resumable (a submission with a result under the same grading key is not graded again), and
split across GPUs (--gpus), shards (--shard, --merge) or Slurm jobs (--slurm) through
cluster.py.

grade_batch is the entry point; the rest are its steps, in the order they run.
"""
import collections
import concurrent.futures as cf
import os
import signal
import sys
import time
import traceback

from gradelib import formats, proc, resources, scheduling, session
from gradelib.build import InfraError, work_tag
from gradelib.outcomes import LabResult
from gradelib.progress import Progress, log
from gradelib.session import GRADE_PY, emit
from gradelib.status import NOT_GRADED, Status

from . import cluster, gradebook, hooks, seeds, uploads
from . import submissions as subsmod
from .runs import EXIT_GRADED, EXIT_INFRA, EXIT_NAME_CLASH, EXIT_USAGE


def write_student_files(result, results_dir, student, fmt, config):
    """The student's JSON result and, with a --format that has one (formats.side_files), its
    side file, each presented as config says today (who sees what: formats.present)."""
    emit(formats.render(result, formats.STORED, config=config), os.path.join(results_dir, student + ".json"))
    side = formats.side_files().get(fmt)
    if side:
        emit(formats.render(result, fmt, config=config), os.path.join(results_dir, f"{student}.{side}"))


class BatchRun:
    """What the steps of one batch run share: the options, the config, the seed and labs, the
    roster (gradebook.read_roster, or None), the results folder, the progress bar, the prepared
    grader and the grading key."""

    def __init__(self, args, config, seed, labs, roster, results_dir, bar, grader):
        self.args, self.config, self.seed, self.labs, self.roster = args, config, seed, labs, roster
        self.results_dir, self.bar, self.grader = results_dir, bar, grader
        self.key = session.grading_key(args, config, labs, grader.mode)


def batch_submissions(args):
    """(the submissions of --submissions, None), or (None, the exit code) with the reason logged."""
    folder = args.submissions
    if not os.path.isdir(folder):
        log(f"--submissions {folder}: no such folder")
        return None, EXIT_USAGE
    subs = subsmod.list_submissions(folder)
    if not subs:
        log(f"--submissions {folder}: no submissions (folders, .zip, .tar.gz) in it")
        return None, EXIT_USAGE
    clash = subsmod.name_collision(subs)
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
        fp = subsmod.fingerprint(path)
        stored = None if run.args.force else subsmod.already_graded(run.results_dir, student, fp, run.key)
        if stored is not None and stored.get("seed") != run.seed:  # the class is graded on one seed (seeds.py)
            stored = None
        if stored is not None:
            # today's late policy (a new due date, an extension granted since) on the stored result
            if hooks.after_submission(run.args, stored, student, log, path=path):
                write_student_files(stored, run.results_dir, student, formats.STORED, run.config)
            if run.args.format in formats.side_files():
                try:  # with the config's visibility of today (not part of the grading key)
                    write_student_files(stored, run.results_dir, student, run.args.format, run.config)
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
    """CPU part of one submission: (uploads.Found, built) or raises BadSubmission. Its processes
    are background work: a speed loss of the submission graded meanwhile is confirmed with them
    stopped (scheduling.quiet)."""
    with scheduling.background():
        return _unpack_and_build(run, student, path)


def _unpack_and_build(run, student, path):
    found = uploads.open_submission(path, os.path.join(run.grader.work, "unpacked", work_tag(student)),
                                    run.labs, run.grader.bases_of(run.labs))
    chosen = [lab for lab in run.labs if found.sources[lab]] if run.args.only_submitted else run.labs
    return found, run.grader.build_submission(student, found.sources, chosen, found.problem)


def grade_student(run, student, fp, t0, fut):
    """The result of one submission (fut: the future of unpack_and_build). A submission that
    cannot be read, or in which no lab is found, is graded 0 in every lab, with the reason; a
    grader error (a bug, whatever the submission did) is that student's error result. Only an
    infrastructure error stops the subsmod."""
    grader = run.grader
    try:
        status, message = Status.GRADED, ""
        try:
            found, built = fut.result()
            lab_results = grader.evaluate(built, student)
            if found.problem and found.nothing:
                status, message = Status.NO_LABS_FOUND, found.problem
        except subsmod.BadSubmission as e:
            status, message = Status.NO_LABS_FOUND, f"the submission cannot be read: {e}"
            lab_results = [LabResult.blank(lab, run.config.lab(lab), grader.mode, status=Status.MISSING,
                                           summary=message).to_dict()
                           for lab in run.labs]
        return session.assemble(grader, lab_results, run.seed, t0, student, fp, run.key, status, message)
    except InfraError:
        raise
    except Exception as e:  # a hostile submission must never stop the batch
        traceback.print_exc(file=sys.stderr)
        return session.error_result(grader, run.config, run.labs, run.seed, t0, student, fp, f"{type(e).__name__}: {e}")


def store_result(run, student, fp, t0, result):
    """Writes a student's files; a result that cannot be written becomes an error result (one
    bad result is an error row, not a crash). Returns the result as stored."""
    try:
        write_student_files(result, run.results_dir, student, run.args.format, run.config)
        return result
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        result = session.error_result(run.grader, run.config, run.labs, run.seed, t0, student, fp,
                                      f"the grader could not write this result: {type(e).__name__}: {e}")
    try:
        write_student_files(result, run.results_dir, student, run.args.format, run.config)
    except Exception:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
    return result


def log_class_summary(results_dir, students):
    """The class's summary (gradebook.summary_lines) on stderr."""
    for line in gradebook.summary_lines(gradebook.class_summary(results_dir, students)):
        log(line)


def finish_batch(run, subs, summary, class_files=True, not_reached=0):
    """class.csv from this run's students (not for a shard or a worker: the merge, or the
    parent, writes it for the whole class), the summary (this run's counts and times, then the
    class's points), and the table of those graded now."""
    if class_files:
        rows = hooks.after_class(run.results_dir, [s for s, _ in subs], run.labs, run.roster, log)
        log(f"class CSV: {os.path.join(run.results_dir, 'class.csv')} ({rows} rows), gradebook: "
            f"{os.path.join(run.results_dir, 'gradebook.csv')}")
    else:
        log(f"{len(summary)} graded now; the class files come from --merge (or the --gpus parent)")
    errors = sum(1 for *_, st in summary if st in NOT_GRADED)
    log(gradebook.run_line(len(summary), run.bar.done - run.bar.graded, errors, time.monotonic() - run.bar.t0,
                           not_reached))
    if class_files:
        log_class_summary(run.results_dir, [s for s, _ in subs])
    if class_files:  # the whole class, those graded now marked (a resume's table is the class's too)
        summary = class_table(run.results_dir, [s for s, _ in subs], {s for s, *_ in summary})
    lines = [f"{'student':24} {'points':>8} {'max':>6}  status"]
    for student, pts, mx, st in summary:
        lines.append(f"{student:24} {pts if pts is not None else '-':>8} {mx if mx is not None else '-':>6}  {st}")
    emit("\n".join(lines) + "\n", run.args.out)


def class_table(results_dir, students, now):
    """[(student, points, max points, status)] of every student from the stored results; the
    status of one graded in an earlier run says so."""
    rows = []
    for student in students:
        r = subsmod.read_result(results_dir, student)
        if r is None:
            rows.append((student, None, None, "no result"))
            continue
        st = str(r.get("status")) + ("" if student in now else " (earlier run)")
        rows.append((student, r.get("points"), r.get("max_points"), st))
    return rows


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


def grade_batch(args, config, seed, labs, roster=None):
    """Batch mode: grades the submissions of --submissions (this process's share of them), or
    with --merge only writes the class files, with --gpus or --slurm hands them to workers or
    jobs. roster: the --roster (gradebook.read_roster), or None. Returns grade.py's exit code."""
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
        rows = hooks.after_class(results_dir, [s for s, _ in subs], labs, roster, log)
        missing = [s for s, _ in subs if subsmod.read_result(results_dir, s) is None]
        log(f"merged {len(subs) - len(missing)} of {len(subs)} submissions into "
            f"{os.path.join(results_dir, 'class.csv')} ({rows} rows)"
            + (f"; no result yet for {len(missing)}: {', '.join(missing[:5])}" if missing else ""))
        log_class_summary(results_dir, [s for s, _ in subs])
        return EXIT_GRADED
    if args.gpus or args.slurm:
        return distribute(args, seed, subs, results_dir, labs, roster)
    mine = subs
    if args.only:  # a regrade of these students, on the class seed
        mine, unknown = seeds.only(subs, args.only)
        if unknown:
            log(f"--only: no submission named {', '.join(unknown)} in {args.submissions}")
            return EXIT_USAGE
        args.force = True
        log(f"--only: regrading {len(mine)} of {len(subs)} submissions")
    if args.shard:
        i, n = cluster.parse_shard(args.shard)
        mine = cluster.shard_of(subs, i, n)
        log(f"shard {i}/{n}: {len(mine)} of {len(subs)} submissions")
    bar = Progress(len(mine))
    run = BatchRun(args, config, seed, labs, roster, results_dir, bar,
                   session.prepared_grader(args, config, seed, labs, lambda m: bar.show(m)))
    whole = not (args.shard or args.claim)
    on_interrupt(lambda: hooks.after_class(results_dir, [s for s, _ in subs], labs, roster, log) if whole else None)
    todo = still_to_grade(run, mine)
    bar.start()  # the ETA counts from here: the references are built, the skipped ones skipped
    summary, left = grade_queue(run, todo)
    if left is not None:  # stopped by an infrastructure error (grade_queue closed the bar)
        finish_batch(run, subs, summary, class_files=whole, not_reached=left)
        log(f"stopped: {left} submission{'s' if left != 1 else ''} not graded (class.csv says 'no result'); "
            f"fix the machine and run the same command again to resume")
        return EXIT_INFRA
    bar.close()
    finish_batch(run, subs, summary, class_files=whole)
    return EXIT_GRADED


def builds_ahead(jobs):
    """How many submissions build at once while one has the GPU: two where there are cores for
    both (a build runs its labs in parallel, and a submission's GPU part, ~22 s on an H100, is
    shorter than one build beside it, ~30 s on 16 cores), else one."""
    return 2 if jobs >= 8 else 1


def grade_queue(run, todo):
    """Grades the submissions of todo this process claims, each stored as it is done, the next
    ones (builds_ahead) built while this one has the GPU. Returns (summary: [(student, points,
    max points, status)], None), or (summary, the number not reached) when an infrastructure
    error stopped it (that student's row says so; the rest wait for the same command to resume)."""
    summary = []
    ahead = builds_ahead(getattr(run.grader, "jobs", 1))
    with cf.ThreadPoolExecutor(ahead) as pool:  # the next submissions build while this one has the GPU
        queue = claimed(run, todo)
        building = collections.deque()

        def refill():
            while len(building) < ahead:
                item = next(queue, None)
                if item is None:
                    return
                building.append((item, pool.submit(unpack_and_build, run, item[0], item[1])))
        refill()
        while building:
            (student, path, fp), cur = building.popleft()
            refill()
            run.bar.step(student)
            run.bar.show("building and grading")  # the bar names this student from now on
            t0 = time.monotonic()
            try:
                result = grade_student(run, student, fp, t0, cur)
                if result.get("status") not in NOT_GRADED:
                    hooks.after_submission(run.args, result, student, log, path=path)
            except InfraError as e:  # the machine, not the submission: this row says so, the rest wait
                result = store_result(run, student, fp, t0,
                                      dict(session.infra_result(run.args, run.seed, str(e), run.config),
                                           student=student, submission_sha256=fp))
                summary.append((student, None, None, result.get("status")))
                pool.shutdown(wait=False, cancel_futures=True)
                run.bar.close()
                log(f"infrastructure error while grading {student}, not a grade: {e}")
                return summary, len(todo) - len(summary)
            result = store_result(run, student, fp, t0, result)
            run.bar.advance(counted=result.get("status") == Status.GRADED)  # the ETA: real gradings only
            run.bar.show(f"{result.get('points')}/{result.get('max_points')} points")
            summary.append((student, result.get("points"), result.get("max_points"), result.get("status")))
    return summary, None


def distribute(args, seed, subs, results_dir, labs, roster):
    """--gpus: a worker per GPU, then the class files; --slurm: the job scripts, submitted."""
    work = os.path.abspath(args.work)
    if args.slurm:
        shards = args.shards or max(1, min(64, (len(subs) + 9) // 10))
        folder = os.path.join(results_dir, "slurm")
        os.makedirs(folder, exist_ok=True)
        array, merge = cluster.sbatch_scripts(GRADE_PY, args, seed, min(shards, len(subs)),
                                              results_dir, work, args.sbatch_args)
        paths = [os.path.join(folder, "grade.sbatch"), os.path.join(folder, "merge.sbatch")]
        for path, text in zip(paths, (array, merge)):
            emit(text, path)
        k = min(shards, len(subs))
        log(f"--slurm: {k} shard{'s' if k != 1 else ''} of {len(subs)} submission{'s' if len(subs) != 1 else ''}; "
            f"job scripts: {', '.join(paths)}")
        os.makedirs(os.path.join(results_dir, "logs"), exist_ok=True)  # Slurm does not make it
        if args.dry_run:
            return EXIT_GRADED
        ids = cluster.submit_slurm(*paths, log)
        print(*ids, flush=True)  # the array's and the merge job's ids, for scripts
        return EXIT_GRADED
    gpus = cluster.parse_gpus(args.gpus)
    workers = cluster.Workers(GRADE_PY, args, seed, gpus, results_dir, work,
                              args.jobs or resources.jobs(), log)
    students = [s for s, _ in subs]

    def partial():
        workers.stop()
        hooks.after_class(results_dir, students, labs, roster, log)
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
    rows = hooks.after_class(results_dir, students, labs, roster, log)
    log(f"{len(gpus)} workers done in {time.monotonic() - t0:.1f} s (exit code {code}); class CSV: "
        f"{os.path.join(results_dir, 'class.csv')} ({rows} rows); worker logs in {os.path.join(results_dir, '.logs')}")
    log_class_summary(results_dir, students)
    return code
