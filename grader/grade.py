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
  grade.py --submissions DIR --merge --report class.html [--similarity]   the class report, no grading
  grade.py ... --format gradescope --out /autograder/results/results.json

Data (the table, or --format json|gradescope|junit) goes to stdout or --out; progress to stderr.

Exit codes:
  0  graded (whatever the score)
  1  the grader itself failed (a bug: please report it)
  2  usage error (bad option, unknown lab in --labs or in the config, bad config file)
  3  infrastructure error: no nvcc, no GPU (without CPU mode), the harness or a reference
     solution does not build or run, another grade.py is using the same --work folder. Not a
     grade: Gradescope output scores it 0 and says the grader failed to run (not a judgement of
     the code; ask for a regrade).
  4  batch: two submissions would write the same result file (alice/ and alice.zip)
  5  bad input file: a --roster or --extensions file with a missing column, a repeated
     submission or id, or a date it cannot read (the message says file:line:column)
  6  --replay: some lab's verdicts or speed points differ from its receipt's
  130 interrupted (Ctrl-C, SIGTERM): what finished is kept; the same command resumes
"""
# This file reads the options and calls one of: classroom/runs.py grade_one (one submission, --src)
# or classroom/batch.py grade_batch (a class, --submissions); --prepare-only builds the course. The
# engine (gradelib/) grades one submission; the classroom (classroom/) builds the rest on it.
import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gradelib import config as configmod, feedback, formats, resources, session  # noqa: E402
from gradelib.build import InfraError  # noqa: E402
from gradelib.grading import course_labs, select_labs  # noqa: E402
from gradelib.progress import log  # noqa: E402
from gradelib.session import ROOT  # noqa: E402
from classroom import batch, cluster, lms, policy, report, runs, seeds  # noqa: E402
from classroom.runs import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_INTERNAL, EXIT_GRADED, EXIT_USAGE  # noqa: E402


def _joined(argv):
    """argv with `--sbatch-args VALUE` written `--sbatch-args=VALUE` (--merge-sbatch-args too), so
    that a value starting with '-' (every sbatch option does) is taken as the value, not as an
    option of grade.py."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for opt in ("--sbatch-args", "--merge-sbatch-args"):
        for i, a in enumerate(argv[:-1]):
            if a == opt:
                argv[i:i + 2] = [opt + "=" + argv[i + 1]]
                break
    return argv


def parse_args(argv):
    """(the options of argv, the parser): grade.py's options in their groups, then the checks
    between them."""
    ap = argparse.ArgumentParser(prog="grade.py", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[7:]))
    for add in (_what_and_how, _batch_options, _term_options, _cluster_options, _report_options):
        add(ap)
    args = ap.parse_args(_joined(argv))
    _check_args(ap, args)
    return args, ap


def _what_and_how(ap):
    """What is graded, where, and how: the sources, labs, output, config, seed, mode and jobs."""
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--src", default="labs",
                      help="labs, solutions, or a folder laid out like labs/ (default: labs)")
    what.add_argument("--submissions", metavar="DIR",
                      help="grade every submission in DIR (folders, .zip, .tar.gz)")
    ap.add_argument("--labs", nargs="+", metavar="LAB", help="only these labs (03 or 03_kogge_stone)")
    ap.add_argument("--format", choices=formats.names(), default=formats.DEFAULT, help=formats.help_text())
    ap.add_argument("--out", metavar="FILE", help="write the --format output here instead of stdout")
    ap.add_argument("--receipt", metavar="FILE", help="also write the result's receipt here (gradelib/receipt.py: "
                    "the hashes, GPU, clocks and per-round times anyone can check it by)")
    ap.add_argument("--replay", metavar="RECEIPT", help="grade --src again with --seed (the seed the receipt's "
                    "hash names) and say, lab by lab, whether the verdicts match and the speed points fall "
                    "within the recorded spread (exit 0 when every lab does, 6 when one does not)")
    ap.add_argument("--config", default=os.path.join(HERE, "config.json"), help="grading config (JSON)")
    ap.add_argument("--seed", type=int, help="input seed (default: a fresh one, printed; a batch's is its class "
                                             "seed, stored with the results)")
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


def _batch_options(ap):
    """A folder of submissions: results, roster, what to regrade; --prepare-only."""
    ap.add_argument("--results", metavar="DIR", help="batch: where results go (default: DIR-results)")
    ap.add_argument("--force", action="store_true", help="batch: regrade submissions already graded")
    ap.add_argument("--roster", metavar="CSV", help="batch: submission names to student id, name and email "
                                                    "(columns submission,id,name,email) for gradebook.csv")
    ap.add_argument("--only-submitted", action="store_true",
                    help="grade only the labs a submission contains (the others are not counted)")
    ap.add_argument("--prepare-only", action="store_true",
                    help="build the harness and the reference solutions into --work and stop (no GPU "
                         "needed: for a container or Gradescope image built ahead of grading)")


def _term_options(ap):
    term = ap.add_argument_group("the term: gradebook, late work, regrades (grader/README.md, \"The term\")")
    term.add_argument("--gradebook-format", choices=lms.FORMATS, default="csv",
                      help="batch: gradebook.csv for import into canvas, moodle or blackboard (default: csv)")
    term.add_argument("--extensions", metavar="CSV", help="batch: extensions (columns submission, lab, "
                                                          "extension: days or a new due date)")
    term.add_argument("--metadata", metavar="JSON", help="Gradescope's submission_metadata.json: the time "
                                                         "handed in, for the late policy (single mode)")
    term.add_argument("--only", nargs="+", metavar="NAME", help="batch: regrade these students only (with the "
                                                                "class seed); the class files cover everyone")
    term.add_argument("--new-seed", action="store_true",
                      help="batch: draw a new class seed (every submission is then graded again)")


def _cluster_options(ap):
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
    cl.add_argument("--sbatch-args", metavar="'...'",
                    help="--slurm: extra #SBATCH options of the grading array "
                         "(not the merge job), e.g. '--partition=gpu --time=02:00:00'")
    cl.add_argument("--merge-sbatch-args", metavar="'...'", help="--slurm: extra #SBATCH options of the merge job")
    cl.add_argument("--dry-run", action="store_true", help="--slurm: write the job scripts, submit nothing")
    cl.add_argument("--claim", metavar="DIR", help=argparse.SUPPRESS)  # a --gpus worker's claim folder


def _report_options(ap):
    rp = ap.add_argument_group("the class report (batch mode; grader/README.md, classroom/report.py)")
    rp.add_argument("--report", metavar="HTML", help="write a class report (one self-contained HTML page) from "
                                                     "the results; with --merge, without grading")
    rp.add_argument("--similarity", action="store_true",
                    help="--report: list similar submissions of each lab (sim_c); changes no grade")


def _check_args(ap, args):
    """The rules between options (ap.error, exit 2, names the first broken one)."""
    if args.report and not args.submissions:
        ap.error("--report needs --submissions DIR")
    if args.similarity and not args.report:
        ap.error("--similarity needs --report HTML (the pairs are listed there)")
    if args.seed is not None and not 0 <= args.seed < 2**63:
        ap.error("--seed must be a non-negative whole number below 2^63")
    if args.case_timeout is not None and not 0 < args.case_timeout <= 3600:
        ap.error("--case-timeout must be between 0 and 3600 seconds")
    batch_only = [o for o in ("gpus", "shard", "merge", "slurm", "claim", "roster", "extensions", "only", "new_seed")
                  if getattr(args, o)]
    if batch_only and not args.submissions:
        ap.error(f"--{batch_only[0].replace('_', '-')} needs --submissions DIR")
    if sum(bool(getattr(args, o)) for o in ("gpus", "shard", "merge", "slurm", "claim")) > 1:
        ap.error("choose one of --gpus, --shard, --merge and --slurm")
    if args.only and (args.gpus or args.shard or args.merge or args.slurm):
        ap.error("--only regrades here, in one process: leave out --gpus, --shard, --merge and --slurm")
    if args.new_seed and args.seed is not None:
        ap.error("choose one of --seed and --new-seed")
    if args.replay and (args.submissions or args.seed is None):
        ap.error("--replay RECEIPT grades one submission again: give --src DIR and --seed SEED")
    for name in ("jobs", "gpu_jobs", "shards"):
        v = getattr(args, name)
        if v is not None and v < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")


def _configure(args):
    """(config, labs, roster) for this run, with the command line's overrides and the term's
    files read (the late policy, classroom/policy.py); or the exit code of what was wrong."""
    try:
        config = configmod.load(args.config)
    except configmod.ConfigError as e:
        log(f"bad config: {e}")
        return EXIT_USAGE
    feedback.configure(config.feedback)  # how much program output the results may quote
    args.slurm_settings = config.slurm  # --slurm's job scripts (cluster.sbatch_scripts)
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
    try:
        roster, args.term = policy.read_term(args, config, all_labs)
    except policy.BadInput as e:
        log(str(e))
        return EXIT_BAD_INPUT
    lms.configure(args.gradebook_format, config.gradebook.get("columns"))
    return config, labs, roster


def _seed(args):
    """The input seed: a batch's class seed (stored with its results, classroom/seeds.py), the
    one given, or a fresh one; None after a message when the stored one cannot be used."""
    if args.submissions and not args.merge and os.path.isdir(args.submissions):
        try:
            seed, how = seeds.class_seed(batch.results_folder(args), args.seed, args.new_seed)
        except seeds.SeedError as e:
            log(str(e))
            return None
        log(seeds.describe(seed, how, batch.results_folder(args)))
        return seed
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log(f"seed {seed} (pass --seed {seed} to reproduce these inputs)")
    return seed


def main(argv=None):
    args, ap = parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the regrade command (regrade_command)
    setup = _configure(args)
    if isinstance(setup, int):
        return setup
    config, labs, roster = setup
    seed = _seed(args)
    if seed is None:
        return EXIT_USAGE
    log(resources.describe())
    try:
        if args.prepare_only:
            mode = "cpu" if args.cpu or (config.mode == "cpu" and not args.gpu) else "gpu"
            session.make_grader(args, config, seed, labs, mode, log).build_course()
            log(f"built the harness and {len(labs)} reference solutions ({mode} mode) in {args.work}")
            return EXIT_GRADED
        if args.submissions:
            rc = batch.grade_batch(args, config, seed, labs, roster)
            if args.report and rc in (EXIT_GRADED, EXIT_INFRA) and not (args.shard or args.claim or args.slurm):
                if not report.for_batch(args, config, labs, ROOT, log):  # (a Slurm merge job writes it)
                    return rc or EXIT_USAGE  # the grades are kept; the page asked for is not there
            return rc
        if args.replay:
            return runs.replay(args, config, seed, log)
        return runs.grade_one(args, config, seed, labs)
    except cluster.ClusterInfraError as e:
        log(f"infrastructure error, not a grade: {e}")
        return EXIT_INFRA
    except cluster.ClusterError as e:
        log(str(e))
        return EXIT_USAGE
    except InfraError as e:
        log(f"infrastructure error, not a grade: {e}")
        if not args.submissions:
            result = session.infra_result(args, seed, str(e), config)
            if args.format != formats.DEFAULT or args.out:
                session.emit(formats.render(result, args.format, config=config), args.out)
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
