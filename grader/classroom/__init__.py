"""The classroom: grading a class on top of the engine (gradelib: one submission, one GradeResult).
Batch and single mode, clusters and Slurm, class seeds, intake of uploads, the term's policies,
gradebook and LMS files, leaderboard, class report and similarity. The engine never imports this
package (grader/tests/test_layers.py); loading it registers its config sections (settings.py)."""
from . import settings

__all__ = ("settings",)
