"""The config's classroom sections (gradelib.config.CLASSROOM_SECTIONS), checked and given their
defaults here, and registered with the engine's config when the classroom is loaded: "late" (due
dates, grace, penalty: policy.py), "rate_limit" (Gradescope uploads graded per window:
policy.py), "gradebook" (the LMS's column names: lms.py), "similarity" (--similarity:
similarity.py) and "slurm" (--slurm's job scripts: cluster.py)."""
import json
import re

from gradelib import config
from gradelib.config import ConfigError, _number, section_items

from . import lms, policy


# "similarity" (top level, optional; grade.py --similarity, classroom/similarity.py): a pair is
# listed when threshold_percent of one file's own code (the skeleton's text taken out) is the
# other's; min_run: sim_c's shortest run in tokens (-r); min_tokens: files with less own code
# are not compared; max_pairs: pairs shown per lab in the class report.
SIMILARITY_DEFAULTS = {"threshold_percent": 60, "min_run": 24, "min_tokens": 50, "max_pairs": 60}
# "slurm" (top level, optional; grade.py --slurm, classroom/cluster.py): #SBATCH lines of the job
# array (time, mem, account, partition; throttle: at most N tasks at once, the array's %N) and
# the shell lines each task runs first (prologue: "module load cuda", say). null: not written.
# cache: where the tasks share one build of the harness and references (null: RESULTS/cache, on
# the storage every node already shares for the results; a path; false: each task builds its own).
SLURM_DEFAULTS = {"time": None, "mem": None, "account": None, "partition": None, "throttle": None,
                  "prologue": [], "python": None, "cache": None}


def _similarity(s):
    """The "similarity" section with its defaults."""
    for k, v in section_items("similarity", {} if s is None else s, SIMILARITY_DEFAULTS):
        _number(1, integer=True)(v, f"similarity.{k}")
        if k == "threshold_percent" and v > 100:
            raise ConfigError(f"similarity.threshold_percent must be at most 100 (got {json.dumps(v)})")
    return dict(SIMILARITY_DEFAULTS, **(s or {}))


def _slurm(s):
    """The "slurm" section with its defaults."""
    for k, v in section_items("slurm", {} if s is None else s, SLURM_DEFAULTS):
        if k == "throttle":
            _number(1, integer=True, allow_none=True)(v, "slurm.throttle")
        elif k == "prologue":
            if not isinstance(v, (str, list)) or (isinstance(v, list) and not all(isinstance(x, str) for x in v)):
                raise ConfigError("slurm.prologue must be a shell line or a list of them")
        elif k == "cache":
            if v is not None and v is not False and (not isinstance(v, str) or not v.strip()):
                raise ConfigError(f"slurm.cache must be null (RESULTS/cache, shared by the tasks), false (each task "
                                  f"builds its own) or a folder every node can reach (got {json.dumps(v)})")
        elif k == "python":
            if v is not None and (not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_./+-]+", v)):
                raise ConfigError(f"slurm.python must be null (the Python that ran grade.py --slurm) or the "
                                  f"interpreter the jobs run grade.py with, a name or a path such as \"python3\" "
                                  f"(got {json.dumps(v)})")
        elif v is not None and (not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_.:,+-]+", v)):
            raise ConfigError(f"slurm.{k} must be null or a value such as \"02:00:00\" or \"8G\" "
                              f"(letters, digits and _.:,+- only; got {json.dumps(v)})")
    return dict(SLURM_DEFAULTS, **(s or {}))


def _late(v):
    """The late policy, or None."""
    if v is not None:
        policy.check_late(v, config.contract_labs())
    return v


def _rate_limit(v):
    if v is not None:
        policy.check_rate_limit(v)
    return v


def _gradebook(v):
    lms.check_columns(v or {})
    return dict(v or {})


for _name, _check in (("late", _late), ("rate_limit", _rate_limit), ("gradebook", _gradebook),
                      ("similarity", _similarity), ("slurm", _slurm)):
    config.register_section(_name, _check)
