"""A Gradescope results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/): one
test per lab and part, a leaderboard of GB/s per GPU lab. Also for a failed build (the lab's
tests score 0 with the compiler's message), and when the grader itself failed (an
infrastructure error, or a grader error on one submission of a batch): a score of 0, no tests,
and an output that says so. Nothing tells the instructor by itself, so the output asks the
student to."""
import json

from ..status import NOT_GRADED
from . import Format
from .details import lab_detail_lines, stopped


def _not_graded(result):
    why = result.get("message") or result.get("status")
    return {
        "score": 0.0,
        "output": ("The grader failed to run (" + why + "). This is not a judgement of your code: "
                   "the 0 only stands until a regrade. Ask your instructor to regrade this submission."),
        "visibility": "visible",
        "stdout_visibility": "visible",
        "execution_time": int(result.get("elapsed_s") or 0),
        "tests": [],
    }


def _test(name, score, max_score, passed, output):
    return {"name": name, "score": score, "max_score": max_score, "status": "passed" if passed else "failed",
            "output": output, "visibility": "visible"}


def _stopped_tests(lab):
    """A lab that stopped: each of its parts scores 0, with the lab's details."""
    detail = "\n".join(lab_detail_lines(lab))
    parts = [("correctness", lab["correctness"]["max"]), ("memory safety and races", lab["sanitizer"]["max"]),
             ("speed", lab["speed"]["max"])]
    return [_test(f"{lab['lab']}: {part}", 0.0, mx, False, detail)
            for part, mx in parts if mx != 0 or part == "correctness"]


def _correctness_test(lab, seed):
    c = lab["correctness"]
    out = f"{c['passed']}/{c['total']} cases passed (seed {seed})"
    if c["failures"]:
        out += "\n" + "\n".join(f"n={f['n']} dist={f['dist']} seed={f['seed']}: {f['message']}\n"
                                f"  reproduce: {f['reproduce']}" for f in c["failures"][:10])
    if c.get("note"):
        out += "\n" + c["note"]
    return _test(f"{lab['lab']}: correctness", c["points"], c["max"], c["passed"] == c["total"], out)


def _speed_test(lab):
    sp = lab["speed"]
    out = sp["note"] or sp["status"]
    if sp.get("student_ms") is not None:
        out += (f"\nyour {sp['metric']}: {sp['student_ms']:.4f} ms, reference: {sp['reference_ms']:.4f} ms "
                f"at n={sp['bench_n']}")
    if sp.get("speedup_vs_serial"):
        out += f"\nspeedup over the serial lab: {sp['speedup_vs_serial']:.1f}x"
    return _test(f"{lab['lab']}: speed", sp["points"], sp["max"], sp["points"] >= sp["max"], out)


def _lab_tests(lab, seed):
    if stopped(lab):
        return _stopped_tests(lab)
    s, sp = lab["sanitizer"], lab["speed"]
    tests = [_correctness_test(lab, seed)]
    if s["max"]:
        tests.append(_test(f"{lab['lab']}: memory safety and races", s["points"], s["max"],
                           s["points"] >= s["max"], s["note"] or s["status"]))
    if sp["max"]:
        tests.append(_speed_test(lab))
    return tests


def render(result, colour=False):
    if result.get("status") in NOT_GRADED:
        return json.dumps(_not_graded(result), indent=2) + "\n"
    tests = [t for lab in result["labs"] for t in _lab_tests(lab, result["seed"])]
    board = [{"name": f"{lab['lab']} GB/s", "value": lab["speed"]["gbps"], "order": "desc"}
             for lab in result["labs"] if not stopped(lab) and lab["speed"].get("gbps")]
    doc = {
        "score": result["points"],
        "output": (f"Graded {len(result['labs'])} labs in {result['mode']} mode on "
                   f"{result.get('device') or 'no GPU'}; seed {result['seed']}."),
        "visibility": "visible",
        "stdout_visibility": "visible",
        "execution_time": int(result.get("elapsed_s") or 0),
        "tests": tests,
    }
    if board:
        doc["leaderboard"] = board
    return json.dumps(doc, indent=2) + "\n"


FORMAT = Format("gradescope", "a Gradescope results.json", render, side_file="gradescope.json")
