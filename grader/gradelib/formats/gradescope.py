"""A Gradescope results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/): one
test per lab and part (numbered lab.part, tagged, visible as the config's "visibility" says: visible,
after_due_date, after_published or hidden; numbers can be switched off and the grader's stdout,
which shows every part, is by default no more visible than the least visible part: the config's
"gradescope" section; with gradescope.public_cases, a 0-point test per lab of its small cases with a
visibility of its own), a leaderboard of GB/s and of the time against the reference per GPU lab
that passed every check (details.rankable). Also for a failed build (the lab's
tests score 0 with the compiler's message), and when the grader itself failed (an
infrastructure error, or a grader error on one submission of a batch): a score of 0, no tests,
and an output that says so. Nothing tells the instructor by itself, so the output asks the
student to. Every test's output is cut to the config's feedback.lab_output_bytes, and the whole
document to feedback.results_max_bytes (feedback.fit: the longest outputs are cut, saying so):
Gradescope renders poorly past about 1 MB."""
import json

from .. import feedback
from ..config import GRADESCOPE_DEFAULTS
from ..status import NOT_GRADED
from .base import Format
from .details import lab_detail_lines, late_lines, listed, rankable, stopped


def _untested(score, output, seconds=0, **extra):
    """A results.json with a score and a message but no tests (nothing of the code was run)."""
    return dict({"score": score, "output": output, "visibility": "visible", "stdout_visibility": "visible",
                 "execution_time": int(seconds or 0), "tests": []}, **extra)


def _not_graded(result):
    why = result.get("message") or result.get("status")
    return _untested(0.0, "The grader failed to run (" + why + "). This is not a judgement of your code: "
                     "the 0 only stands until a regrade. Ask your instructor to regrade this submission.",
                     result.get("elapsed_s"))


def rate_limited(message, score):
    """results.json for an upload the config's rate_limit leaves ungraded: the last graded
    upload's score (Gradescope shows this upload's as the student's score, so anything less would
    take points away), and why, with no tests. extra_data marks it, so that the next upload's
    count of graded uploads (the classroom's policy.rate_limited, from previous_submissions' results) skips it."""
    return json.dumps(_untested(score, message, extra_data={"rate_limited": True}), indent=2) + "\n"


PARTS = {"public": 0, "correctness": 1, "sanitizer": 2, "speed": 3}  # a test's number: lab.part, e.g. 3.2


def _options(result):
    return dict(GRADESCOPE_DEFAULTS, **(result.get("gradescope") or {}))


def stdout_visibility(tests, setting="auto"):
    """The visibility of the grader's stdout: the setting, or for "auto" that of the least
    visible test (the stdout shows every part): visible when all are, the one other value when
    only one other is used, else hidden (after_due_date and after_published do not order)."""
    if setting != "auto":
        return setting
    others = {t["visibility"] for t in tests} - {"visible"}
    return others.pop() if len(others) == 1 else ("hidden" if others else "visible")


def _test(lab, part, name, score, max_score, passed, output):
    """One test of lab for part (correctness, sanitizer, speed): numbered lab.part, tagged with
    the lab and the part, visible as the config's visibility says (Config "visibility")."""
    return {"name": name, "number": f"{int(lab['lab'][:2])}.{PARTS[part]}", "tags": [lab["lab"], part],
            "score": score, "max_score": max_score, "status": "passed" if passed else "failed",
            "output": feedback.cap(output, feedback.limit("lab_output_bytes"), "this test's output"),
            "visibility": lab.get("visibility", {}).get(part, "visible")}


def _stopped_tests(lab):
    """A lab that stopped: each of its parts scores 0, with the lab's details."""
    detail = "\n".join(lab_detail_lines(lab))
    parts = [("correctness", "correctness", lab["correctness"]["max"]),
             ("sanitizer", "memory safety and races", lab["sanitizer"]["max"]), ("speed", "speed", lab["speed"]["max"])]
    return [_test(lab, part, f"{lab['lab']}: {title}", 0.0, mx, False, detail)
            for part, title, mx in parts if mx != 0 or part == "correctness"]


def _correctness_test(lab, seed):
    c = lab["correctness"]
    out = f"{c['passed']}/{c['total']} cases passed (seed {seed})"
    if c["failures"]:
        out += "\n" + "\n".join(f"n={f['n']} dist={f['dist']} seed={f['seed']}: {f['message']}\n"
                                f"  reproduce: {f['reproduce']}" for f in c["failures"][:10])
    if c.get("note"):
        out += "\n" + c["note"]
    shown = [v for v in c.get("variants") or [] if listed(v)]
    if shown:
        out += "\nvariants:\n" + "\n".join("  " + v["line"] for v in shown)
    if (lab.get("late") or {}).get("percent"):  # the late policy (policy.py) scaled every part's points
        late = lab["late"]
        out += (f"\nlate: {late['days_late']} day(s) after {late['due']}: -{late['percent']:g}% on this lab "
                f"({late['points_before']:g} -> {lab['points']:g} points)")
    return _test(lab, "correctness", f"{lab['lab']}: correctness", c["points"], c["max"],
                 c["passed"] == c["total"], out)


def _speed_test(lab):
    sp = lab["speed"]
    out = sp["note"] or sp["status"]
    if sp.get("student_ms") is not None:
        out += (f"\nyour {sp['metric']}: {sp['student_ms']:.4f} ms, reference: {sp['reference_ms']:.4f} ms "
                f"at n={sp['bench_n']}")
    if sp.get("speedup_vs_serial"):
        out += f"\nspeedup over the serial lab: {sp['speedup_vs_serial']:.1f}x"
    return _test(lab, "speed", f"{lab['lab']}: speed", sp["points"], sp["max"], sp["points"] >= sp["max"], out)


def _public_test(lab, seed, public):
    """The public smoke set of a lab (the config's gradescope.public_cases): its correctness cases
    with n <= max_n, worth 0 points, with their own visibility (visible at once), while the full
    matrix's test keeps the lab's (after_due_date)."""
    limit = public["max_n"]
    c = lab["correctness"]
    if stopped(lab) or not c["total"]:
        out, ok = "\n".join(lab_detail_lines(lab)), False
    else:
        failed = [f for f in c["failures"] if f["n"] <= limit]
        ok = not failed and not c.get("note")
        out = (f"public cases (n <= {limit}, seed {seed}): "
               + ("all passed" if not failed else f"{len(failed)} failed") + "; the full matrix and the points "
               "are shown after the due date")
        out += "".join(f"\nn={f['n']} dist={f['dist']}: {f['message']}\n  reproduce: {f['reproduce']}"
                       for f in failed[:10])
        if c.get("note") and not failed:
            out += "\n" + c["note"]
    t = _test(lab, "public", f"{lab['lab']}: public cases (n <= {limit})", 0.0, 0.0, ok, out)
    t["visibility"] = public["visibility"]
    return t


def _lab_tests(lab, seed, public=None):
    first = [_public_test(lab, seed, public)] if public else []
    if stopped(lab):
        return first + _stopped_tests(lab)
    s, sp = lab["sanitizer"], lab["speed"]
    tests = first + [_correctness_test(lab, seed)]
    if s["max"]:
        tests.append(_test(lab, "sanitizer", f"{lab['lab']}: memory safety and races", s["points"], s["max"],
                           s["points"] >= s["max"], s["note"] or s["status"]))
    if sp["max"]:
        tests.append(_speed_test(lab))
    return tests


def where(result):
    """Where the labs ran, for a student: the GPU's name, or CPU mode's scope (its device is
    named "CPU mode", which "in cpu mode on CPU mode" only repeated)."""
    if result.get("mode") == "cpu":
        return "in CPU mode (no GPU: correctness, no timing)"
    return f"in {result.get('mode')} mode on {result.get('device') or 'no GPU'}"


def render(result, colour=False):
    if result.get("status") in NOT_GRADED:
        return json.dumps(_not_graded(result), indent=2) + "\n"
    options = _options(result)
    tests = [t for lab in result["labs"] for t in _lab_tests(lab, result["seed"], options["public_cases"])]
    if not options["numbers"]:
        for t in tests:
            del t["number"]
    # a lab ranks only when it is right (every case passed, the sanitizer clean) and a GPU timed
    # it (details.rankable: the class leaderboard's rule too): a fast scan with a race that the
    # sanitizer found never tops the board (the speed stage times only labs whose cases passed)
    ranked = [lab for lab in result["labs"] if rankable(lab)]
    board = [{"name": f"{lab['lab']} GB/s", "value": lab["speed"]["gbps"], "order": "desc"} for lab in ranked]
    # the time against the reference solution's on the same GPU (lower ranks higher: "asc",
    # Gradescope's docs/leaderboards.md)
    board += [{"name": f"{lab['lab']} time vs reference", "value": lab["speed"]["ratio"], "order": "asc"}
              for lab in ranked if lab["speed"].get("ratio")]
    why = "".join(f"\n{line}" for line in ([result["message"]] if result.get("message") else []) + late_lines(result))
    doc = {
        "score": result["points"],
        "output": f"Graded {len(result['labs'])} labs {where(result)}; seed {result['seed']}.{why}",
        "visibility": "visible",
        "stdout_visibility": stdout_visibility(tests, options["stdout_visibility"]),
        "execution_time": int(result.get("elapsed_s") or 0),
        "tests": tests,
    }
    if board:
        doc["leaderboard"] = board
    return feedback.fit(doc, lambda d: json.dumps(d, indent=2) + "\n")


FORMAT = Format("gradescope", "a Gradescope results.json", render, side_file="gradescope.json")
