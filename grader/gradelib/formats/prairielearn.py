"""A PrairieLearn external-grading results.json (the container's output, grader/deploy/entry.sh):
gradable, score as a fraction of the maximum, a message, the table as output, and one test per lab
and part with points and max_points. A grader that failed is gradable: false (PrairieLearn then
shows an error instead of a grade)."""
import json

from ..status import NOT_GRADED
from . import Format
from .gradescope import _lab_tests
from .table import render as table


def render(result, colour=False):
    if result.get("status") in NOT_GRADED:
        doc = {"gradable": False, "score": 0.0, "tests": [],
               "message": f"The grader failed to run ({result.get('message') or result.get('status')}); this is "
                          f"not a judgement of your code: ask for a regrade."}
        return json.dumps(doc, indent=2) + "\n"
    tests = [{"name": t["name"], "points": t["score"], "max_points": t["max_score"], "output": t["output"],
              "message": t["status"]}
             for lab in result["labs"] for t in _lab_tests(lab, result["seed"])]
    mx = result.get("max_points") or 0
    doc = {"gradable": True, "score": round(result["points"] / mx, 6) if mx else 0.0,
           "message": (result.get("message") or f"{result['points']:g}/{mx:g} points"),
           "output": table(result), "tests": tests}
    return json.dumps(doc, indent=2) + "\n"


FORMAT = Format("prairielearn", "a PrairieLearn external-grading results.json", render)
