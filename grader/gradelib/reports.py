"""Output formats of a grading result: the terminal table, JSON, Gradescope results.json, JUnit.

A result (what grade.py builds) is a dict:
  {"grader": ..., "course": ..., "mode": "gpu"|"cpu", "device": ..., "seed": ..., "status":
   "graded"|"infrastructure error", "message": ..., "points": ..., "max_points": ...,
   "elapsed_s": ..., "labs": [lab result, ...]}  (lab results: grading.lab_result_template)
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

FORMATS = ("table", "json", "gradescope", "junit")


def use_colour(stream):
    """Colour only on a terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if "NO_COLOR" in os.environ:
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _fmt_pts(x):
    return f"{x:.1f}" if x is not None else "-"


def _cells(lab):
    b, c, s, sp = lab["build"], lab["correctness"], lab["sanitizer"], lab["speed"]
    st = lab["status"]
    build = {"missing": "missing", "build failed": "FAILED", "static check failed": "ok"}.get(
        st, "ok" if b["ok"] else "-")
    if st == "static check failed":
        corr = "cheat check"
    elif st in ("missing", "build failed"):
        corr = "-"
    elif st == "not implemented":
        corr = "not implemented"
    else:
        corr = f"{c['passed']}/{c['total']}"
    san = {"passed": "clean", "failed": "ERRORS", "skipped": "skipped", "not graded": "-",
           "not run": "-"}.get(s["status"], s["status"])
    if s["status"] == "passed" and s["note"].startswith("host lab"):
        san = "n/a (host)"
    if sp["status"] == "graded" and sp["ratio"] is not None:
        speed = f"{sp['ratio']:.2f}x"
    elif sp["status"] == "failed":
        speed = "FAILED"
    else:
        speed = "-"
    x = sp.get("speedup_vs_serial")
    vs = "-" if not x else (f"{x:.2f}x" if x < 1 else f"{x:.1f}x")
    pts = f"{_fmt_pts(lab['points'])}/{lab['max_points']:g}"
    return [lab["lab"], build, corr, san, speed, vs, pts]


HEADERS = ["lab", "build", "correctness", "sanitizer", "speed vs ref", "vs serial", "points"]


NOT_GRADED = ("infrastructure error", "grader error")  # the grader failed, not the submission


def table(result, colour=False):
    """The terminal table plus one detail block per lab that lost points."""
    if result.get("status") in NOT_GRADED:
        return f"not graded: {result.get('status')}: {result.get('message', '')}\n"
    rows = [_cells(lab) for lab in result["labs"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(HEADERS)]

    def paint(text, lab):
        if not colour:
            return text
        full = lab["points"] >= lab["max_points"] and lab["max_points"] > 0
        code = "32" if full else ("31" if lab["points"] == 0 else "33")
        return f"\033[{code}m{text}\033[0m"

    out = []
    head = "  ".join(h.ljust(w) for h, w in zip(HEADERS, widths))
    out.append(f"\033[1m{head}\033[0m" if colour else head)
    for lab, r in zip(result["labs"], rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(r, widths))
        out.append(paint(line, lab))
    out.append(f"total: {_fmt_pts(result['points'])}/{result['max_points']:g}"
               f"   (mode {result['mode']}, device {result.get('device') or 'none'}, seed {result['seed']}; "
               f"--seed {result['seed']} reproduces these inputs)")
    if result.get("message"):
        out.append(result["message"])
    details = []
    for lab in result["labs"]:
        if lab["points"] >= lab["max_points"] and lab["status"] == "graded":
            continue
        details.append(f"{lab['lab']}: {lab['summary']}")
        for line in lab_detail_lines(lab)[1:]:
            details.append("    " + line)
    if details:
        out.append("")
        out.extend(details)
    return "\n".join(out) + "\n"


def lab_detail_lines(lab, max_failures=5):
    """Human-readable lines about one lab (the summary first)."""
    lines = [lab["summary"]]
    if lab["status"] == "build failed":
        lines += lab["build"]["message"].splitlines()[:20]
        return lines
    if lab["status"] == "static check failed":
        lines += lab["static"]["violations"]
        return lines
    if lab["status"] in ("not implemented", "missing"):
        return lines
    c = lab["correctness"]
    for f in c["failures"][:max_failures]:
        lines.append(f"n={f['n']} dist={f['dist']} seed={f['seed']}: {f['message']}")
        lines.append(f"  reproduce: {f['reproduce']}")
    if len(c["failures"]) > max_failures:
        lines.append(f"... and {len(c['failures']) - max_failures} more failing cases")
    if c.get("note"):
        lines.append("correctness: " + c["note"])
    if lab["sanitizer"]["note"]:
        lines.append("sanitizer: " + lab["sanitizer"]["note"])
    if lab["speed"]["note"]:
        lines.append("speed: " + lab["speed"]["note"])
    return lines


def to_json(result):
    return json.dumps(result, indent=2, sort_keys=False) + "\n"


def gradescope(result):
    """A Gradescope results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
    one test per lab and part, a leaderboard of GB/s per GPU lab. Also for a failed build
    (the lab's tests score 0 with the compiler's message), and when the grader itself failed
    (an infrastructure error, or a grader error on one submission of a batch): a score of 0, no
    tests, and an output that says so. Nothing tells the instructor by itself, so the output
    asks the student to."""
    if result.get("status") in NOT_GRADED:
        why = result.get("message") or result.get("status")
        return json.dumps({
            "score": 0.0,
            "output": ("The grader failed to run (" + why + "). This is not a judgement of your code: "
                       "the 0 only stands until a regrade. Ask your instructor to regrade this submission."),
            "visibility": "visible",
            "stdout_visibility": "visible",
            "execution_time": int(result.get("elapsed_s") or 0),
            "tests": [],
        }, indent=2) + "\n"
    tests = []
    board = []
    for lab in result["labs"]:
        name = lab["lab"]
        c, s, sp = lab["correctness"], lab["sanitizer"], lab["speed"]
        detail = "\n".join(lab_detail_lines(lab))
        if lab["status"] in ("missing", "build failed", "static check failed", "not implemented"):
            parts = [("correctness", c["max"]), ("memory safety and races", s["max"]), ("speed", sp["max"])]
            for part, mx in parts:
                if mx == 0 and part != "correctness":
                    continue
                tests.append({"name": f"{name}: {part}", "score": 0.0, "max_score": mx,
                              "status": "failed", "output": detail, "visibility": "visible"})
            continue
        corr_out = f"{c['passed']}/{c['total']} cases passed (seed {result['seed']})"
        if c["failures"]:
            corr_out += "\n" + "\n".join(f"n={f['n']} dist={f['dist']} seed={f['seed']}: {f['message']}\n"
                                         f"  reproduce: {f['reproduce']}" for f in c["failures"][:10])
        if c.get("note"):
            corr_out += "\n" + c["note"]
        tests.append({"name": f"{name}: correctness", "score": c["points"], "max_score": c["max"],
                      "status": "passed" if c["passed"] == c["total"] else "failed",
                      "output": corr_out, "visibility": "visible"})
        if s["max"]:
            tests.append({"name": f"{name}: memory safety and races", "score": s["points"],
                          "max_score": s["max"], "status": "passed" if s["points"] >= s["max"] else "failed",
                          "output": s["note"] or s["status"], "visibility": "visible"})
        if sp["max"]:
            out = sp["note"] or sp["status"]
            if sp.get("student_ms") is not None:
                out += (f"\nyour {sp['metric']}: {sp['student_ms']:.4f} ms, reference: {sp['reference_ms']:.4f} ms "
                        f"at n={sp['bench_n']}")
            if sp.get("speedup_vs_serial"):
                out += f"\nspeedup over the serial lab: {sp['speedup_vs_serial']:.1f}x"
            tests.append({"name": f"{name}: speed", "score": sp["points"], "max_score": sp["max"],
                          "status": "passed" if sp["points"] >= sp["max"] else "failed",
                          "output": out, "visibility": "visible"})
        if sp.get("gbps"):
            board.append({"name": f"{name} GB/s", "value": sp["gbps"], "order": "desc"})
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


def junit(result):
    """JUnit XML: one testsuite per lab, one testcase per part."""
    suites = ET.Element("testsuites", name=result.get("course") or "grade")
    if result.get("status") in NOT_GRADED:
        ts = ET.SubElement(suites, "testsuite", name="grader", tests="1", failures="0", errors="1")
        tc = ET.SubElement(ts, "testcase", classname="grader",
                           name="infrastructure" if result.get("status") == "infrastructure error" else "grader")
        ET.SubElement(tc, "error", message=result.get("message", "")).text = result.get("message", "")
        return ET.tostring(suites, encoding="unicode") + "\n"
    for lab in result["labs"]:
        c, s, sp = lab["correctness"], lab["sanitizer"], lab["speed"]
        ts = ET.SubElement(suites, "testsuite", name=lab["lab"])
        cases = []
        broken = lab["status"] in ("missing", "build failed", "static check failed", "not implemented")
        cases.append(("correctness", not broken and c["passed"] == c["total"],
                      "\n".join(lab_detail_lines(lab)) if broken or c["failures"] else "", False))
        if s["max"]:
            cases.append(("memory safety and races", s["points"] >= s["max"], s["note"],
                          s["status"] in ("skipped", "not graded")))
        if sp["max"]:
            cases.append(("speed", sp["points"] >= sp["max"], sp["note"], sp["status"] == "not graded"))
        fails = 0
        skips = 0
        for part, ok, msg, skipped in cases:
            tc = ET.SubElement(ts, "testcase", classname=lab["lab"], name=part)
            if skipped and not broken:
                ET.SubElement(tc, "skipped", message=msg or "not graded")
                skips += 1
            elif not ok:
                ET.SubElement(tc, "failure", message=(msg or "failed").splitlines()[0] if msg else "failed").text = msg
                fails += 1
        ts.set("tests", str(len(cases)))
        ts.set("failures", str(fails))
        ts.set("skipped", str(skips))
        ts.set("errors", "0")
    return ET.tostring(suites, encoding="unicode") + "\n"


def render(result, fmt, stream=sys.stdout, to_terminal=True):
    if fmt == "json":
        return to_json(result)
    if fmt == "gradescope":
        return gradescope(result)
    if fmt == "junit":
        return junit(result)
    return table(result, colour=to_terminal and use_colour(stream))
