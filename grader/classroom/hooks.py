"""Where the classroom meets the engine. The engine grades one submission into one result and knows
no class; what a class needs around that happens at three named points, each enabled by its
config section or option, and nowhere else:

  before a submission  "rate_limit" (Gradescope uploads graded per window): an upload over the
                       limit is not graded, and gets the last graded upload's score
  after a submission   "late" (the late policy): the result's points scaled by when the
                       submission was handed in (Gradescope's metadata in single mode, the
                       submission's time in batch mode), and what was done said in the result
  after the class      the class files: class.csv and gradebook.csv (in the LMS's format, with
                       the "gradebook" section's columns), and a GPU batch's leaderboard

runs.py (single mode, --src) and batch.py (--submissions) call these; the class report
(--report) is its own step after the class (report.py), as it can run without grading."""
import os

from gradelib.formats.gradescope import rate_limited

from . import gradebook, policy


def before_submission(config, args, log):
    """The text to emit instead of a grade for an upload the config's rate_limit leaves
    ungraded (Gradescope's results.json), or None to grade it. Needs --metadata (Gradescope's
    submission_metadata.json: the earlier uploads)."""
    if not (getattr(args, "metadata", None) and config.rate_limit):
        return None
    state = policy.rate_limited(config.rate_limit, args.metadata)
    if state and args.format == "gradescope":  # Gradescope's uploads; nothing is built
        message = policy.rate_limit_message(config.rate_limit, state)
        log(message)
        return rate_limited(message, state["score"])
    if state:
        log(f"rate_limit: {state['used']} uploads in the last {config.rate_limit['hours']:g} hours, but it "
            f"applies to --format gradescope only: graded")
    return None


def after_submission(args, result, student, log, path=None, submission=None):
    """The late policy (the term of --roster/--extensions and the config's "late" section) on a
    result: in batch mode (path: the submission, whose time it was handed in is read beside it or
    from it), or in single mode from --metadata (never a file inside the submission folder: the
    student wrote that one). True when the result changed."""
    term = getattr(args, "term", None)
    if path is not None:
        return policy.stamp_batch(term, result, student, path, log)
    meta = getattr(args, "metadata", None)
    if not meta:
        return False
    if submission and os.path.realpath(meta).startswith(os.path.realpath(submission).rstrip("/") + "/"):
        log(f"late policy: --metadata {meta} is inside the submission (the student's own file): not read")
        return False
    policy.stamp_single(term, result, student, meta, log)
    return True


def after_class(results_dir, students, labs, roster, log):
    """class.csv and gradebook.csv (labs, the graded labs, are their columns; roster: the
    --roster) and a GPU batch's leaderboard, from the stored results of students; the rows of
    class.csv."""
    return gradebook.write_class_files(results_dir, students, labs, roster, warn=log, note=log)
