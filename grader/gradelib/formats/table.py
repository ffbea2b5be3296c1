"""The terminal table: one row per lab, the total, then what went wrong in each lab that lost
points."""
from .. import feedback
from ..status import NOT_GRADED, Status
from .base import Format
from .details import lab_detail_lines, late_lines

HEADERS = ["lab", "build", "correctness", "sanitizer", "speed vs ref", "vs serial", "points"]
SANITIZER_CELLS = {Status.PASSED: "clean", Status.FAILED: "ERRORS", Status.SKIPPED: "skipped",
                   Status.NOT_GRADED: "-", Status.NOT_RUN: "-"}


def _pts(x):
    return f"{x:.1f}" if x is not None else "-"


def _build_cell(lab):
    st = lab["status"]
    if st == Status.MISSING:
        return st
    if st == Status.BUILD_FAILED:
        return "FAILED"
    return "ok" if st == Status.STATIC_CHECK_FAILED or lab["build"]["ok"] else "-"


def _correctness_cell(lab):
    st, c = lab["status"], lab["correctness"]
    if st == Status.STATIC_CHECK_FAILED:
        return "cheat check"
    if st in (Status.MISSING, Status.BUILD_FAILED):
        return "-"
    if st == Status.LAB_NOT_IMPLEMENTED:
        return st
    return f"{c['passed']}/{c['total']}"


def _speed_cells(sp):
    if sp["status"] == Status.GRADED and sp["ratio"] is not None:
        speed = f"{sp['ratio']:.2f}x"
    elif sp["status"] == Status.FAILED:
        speed = "FAILED"
    else:
        speed = "-"
    x = sp.get("speedup_vs_serial")
    return speed, "-" if not x else (f"{x:.2f}x" if x < 1 else f"{x:.1f}x")


def _cells(lab):
    s = lab["sanitizer"]
    san = SANITIZER_CELLS.get(s["status"], s["status"])
    if s["status"] == Status.PASSED and s["note"].startswith("host lab"):
        san = "n/a (host)"
    speed, vs = _speed_cells(lab["speed"])
    pts = f"{_pts(lab['points'])}/{lab['max_points']:g}"
    return [lab["lab"], _build_cell(lab), _correctness_cell(lab), san, speed, vs, pts]


def _paint(text, lab, colour):
    if not colour:
        return text
    full = lab["points"] >= lab["max_points"] and lab["max_points"] > 0
    code = "32" if full else ("31" if lab["points"] == 0 else "33")
    return f"\033[{code}m{text}\033[0m"


def _failing_reported(lab):
    """The lines of a lab's variants that are written and fail (cases or the sanitizer) though not
    graded: the lab may have full points all the same."""
    return ["variant " + v["line"] for v in lab.get("correctness", {}).get("variants", [])
            if not v["graded"] and v["written"] and (v["passed"] < v["total"] or v.get("sanitizer"))]


def _details(result):
    """What went wrong, per lab that lost points, and per lab with full points whose variant that
    is not graded fails (a student who wrote it should hear so)."""
    out = []
    for lab in result["labs"]:
        if lab["points"] >= lab["max_points"] and lab["status"] == Status.GRADED:
            extra = _failing_reported(lab)
            if extra:
                out.append(f"{lab['lab']}: full points; a variant that is not graded fails:")
                out += ["    " + line for line in extra]
            continue
        out.append(f"{lab['lab']}: {feedback.cap(lab['summary'], feedback.limit('lab_output_bytes'), 'summary')}")
        detail = feedback.cap("\n".join(lab_detail_lines(lab)[1:]), feedback.limit("lab_output_bytes"),
                              "this lab's details")
        out += ["    " + line for line in detail.splitlines()]
    return out


def render(result, colour=False):
    """The terminal table plus one detail block per lab that lost points."""
    if result.get("status") in NOT_GRADED:
        return f"not graded: {result.get('status')}: {result.get('message', '')}\n"
    rows = [_cells(lab) for lab in result["labs"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(HEADERS)]
    head = "  ".join(h.ljust(w) for h, w in zip(HEADERS, widths))
    out = [f"\033[1m{head}\033[0m" if colour else head]
    for lab, r in zip(result["labs"], rows):
        out.append(_paint("  ".join(cell.ljust(w) for cell, w in zip(r, widths)), lab, colour))
    out.append(f"total: {_pts(result['points'])}/{result['max_points']:g}"
               f"   (mode {result['mode']}, device {result.get('device') or 'none'}, seed {result['seed']}; "
               f"--seed {result['seed']} reproduces these inputs)")
    if result.get("message"):
        out.append(result["message"])
    out.extend(late_lines(result))  # what the late policy did (the classroom's policy.py)
    details = _details(result)
    if details:
        out.append("")
        out.extend(details)
    return "\n".join(out) + "\n"


FORMAT = Format("table", "the terminal table and what went wrong", render, colour=True)
