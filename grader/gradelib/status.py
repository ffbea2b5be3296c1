"""Every status and kind of failure the grader names, as one str-valued enum.

A member compares equal to its text (Status.OK == "ok") and is written as that text in JSON and
in f-strings, so results and outputs are plain strings. Several groups share a text (the
harness's "ok" is also a case that passed; "timeout" is a hung case and a sanitizer run that
ran out of time): those are one member under one name.
"""
import enum

from . import contract


class _TextEnum(str, enum.Enum):
    """A str-valued enum whose members print as their text."""

    __str__ = str.__str__
    __format__ = str.__format__


# ---- the harness's own statuses, as the harness prints them: not spelled here but read from
# common/contract.json (contract.STATUSES), in the contract's order; each member is the status in
# capitals (Status.WRONG == "wrong", Status.USAGE_ERROR == "usage_error").
_HARNESS = [(name.upper(), name) for name in contract.STATUSES]

# ---- the grader's own statuses ---------------------------------------------------------------
_GRADER = [
    # what the grader makes of one run (a case's failure kind; evaluate.diagnose), besides the
    # harness statuses (ok, not_implemented, wrong, out_of_bounds, input_modified, leak,
    # no_device, no_memory keep their names)
    ("RUNTIME_ERROR", "runtime_error"),  # the harness's cuda_error
    ("TIMEOUT", "timeout"),
    ("CRASH", "crash"),
    ("TAMPERED", "tampered"),
    ("ESCAPED", "escaped"),
    ("SANDBOX", "sandbox"),
    ("ERROR", "error"),
    # one sanitizer run (evaluate.run_sanitizer): clean, errors, timeout, failed
    ("CLEAN", "clean"),
    ("ERRORS", "errors"),
    # a part of a lab (sanitizer, speed)
    ("NOT_RUN", "not run"),
    ("PASSED", "passed"),
    ("FAILED", "failed"),
    ("SKIPPED", "skipped"),
    ("NOT_GRADED", "not graded"),
    ("GRADED", "graded"),  # also a lab's status, and a whole result's
    # a lab
    ("MISSING", "missing"),
    ("BUILD_FAILED", "build failed"),
    ("STATIC_CHECK_FAILED", "static check failed"),
    ("LAB_NOT_IMPLEMENTED", "not implemented"),
    # a whole result: no lab could be found in the submission (its message says why; a grade of 0)
    ("NO_LABS_FOUND", "no labs found"),
    # a whole result: the grader, not the submission, failed
    ("INFRASTRUCTURE_ERROR", "infrastructure error"),
    ("GRADER_ERROR", "grader error"),
]

# What a run, a part or a lab came to. A member compares equal to its text.
Status = _TextEnum("Status", _HARNESS + _GRADER, module=__name__)

# The harness's statuses in the contract's order.
HARNESS_STATUSES = tuple(Status(name) for name in contract.STATUSES)

# A lab that ended before it was graded: every part scores 0, and the outputs show no cases.
STOPPED = (Status.MISSING, Status.BUILD_FAILED, Status.STATIC_CHECK_FAILED, Status.LAB_NOT_IMPLEMENTED)

# A whole result that is no grade (the grader failed, not the submission).
NOT_GRADED = (Status.INFRASTRUCTURE_ERROR, Status.GRADER_ERROR)

# After one of these a lab's other cases are moot (it is unimplemented or hangs); no_device stops
# the whole grading.
STOPS_A_LAB = (Status.NOT_IMPLEMENTED, Status.TIMEOUT, Status.NO_DEVICE)
