"""A PrairieLearn external-grading results.json (the container's output, grader/deploy/entry.sh):
gradable, score as a fraction of the maximum, a message, the table as output, and one test per lab
and part with points and max_points. A grader that failed is gradable: false (PrairieLearn then
shows an error instead of a grade). A submission in which no lab was found (an empty upload, or
one of the wrong shape) is gradable: false too, with the reason: PrairieLearn then does not count
the attempt. The document is cut to the config's feedback.results_max_bytes (PrairieLearn refuses
results over 1 MB): feedback.fit cuts the longest outputs, saying so."""
import json

from .. import feedback
from ..status import NOT_GRADED, Status
from .base import Format
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
    if result.get("status") == Status.NO_LABS_FOUND:  # not an attempt: nothing to grade was found
        why = result.get("message") or "no lab found"
        first = "Nothing was submitted" if "is empty" in why else "Nothing could be graded"
        doc.update(gradable=False, score=0.0,
                   message=f"{first} ({why}). This does not count as an attempt: upload your lab folders "
                           f"(or the lab's scan.cu) and submit again.")
    return feedback.fit(doc, lambda d: json.dumps(d, indent=2) + "\n")


FORMAT = Format("prairielearn", "a PrairieLearn external-grading results.json", render)
