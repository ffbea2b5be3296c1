"""What the formats share (not a format itself): the lines that explain a lab's result."""
from ..status import STOPPED, Status


def lab_detail_lines(lab, max_failures=5):
    """Human-readable lines about one lab result (a dict; the summary first)."""
    lines = [lab["summary"]]
    if lab["status"] == Status.BUILD_FAILED:
        msg = lab["build"]["message"].splitlines()
        if msg and lines[0].endswith(msg[0]):  # the summary quotes the first line already
            msg = msg[1:]
        lines += msg[:20]
        return lines
    if lab["status"] == Status.STATIC_CHECK_FAILED:
        lines += lab["static"]["violations"]
        return lines
    if lab["status"] in (Status.LAB_NOT_IMPLEMENTED, Status.MISSING):
        return lines
    c = lab["correctness"]
    for f in c["failures"][:max_failures]:
        lines.append(f"n={f['n']} dist={f['dist']} seed={f['seed']}: {f['message']}")
        lines.append(f"  reproduce: {f['reproduce']}")
    if len(c["failures"]) > max_failures:
        lines.append(f"... and {len(c['failures']) - max_failures} more failing cases")
    if c.get("note"):
        lines.append("correctness: " + c["note"])
    lines += ["variant " + v["line"] for v in c.get("variants", []) if named(v)]
    if lab["sanitizer"]["note"]:
        lines.append("sanitizer: " + lab["sanitizer"]["note"])
    if lab["speed"]["note"]:
        lines.append("speed: " + lab["speed"]["note"])
    return lines


def named(variant):
    """Whether a variant's line is worth a student's reading (VariantReport.named): unwritten,
    failing or with a sanitizer error, except a comparison design the student does not write that
    is only unwritten (lab 10's *_on_scan, lab 09's *_two_pass: its own variant is named already)."""
    if "named" in variant:
        return variant["named"]
    return not variant["written"] or variant["passed"] < variant["total"] or bool(variant.get("sanitizer"))


def listed(variant):
    """Whether a list of every variant (Gradescope's) shows it: all but the comparison designs a
    student does not write, unless one of those is written and fails."""
    return not variant.get("compare") or named(variant)


def stopped(lab):
    """True for a lab that ended before it was graded (missing, build failed, static check
    failed, not implemented)."""
    return lab["status"] in STOPPED


def late_lines(result):
    """What the late policy did to a result (its "late" entry, set by the classroom's policy.py),
    as lines for the feedback ([] when nothing)."""
    info = result.get("late") or {}
    out = []
    if info.get("warning"):
        out.append(f"late policy: {info['warning']}")
    elif info.get("submitted_at"):
        out.append(f"handed in {info['submitted_at']} ({info.get('source') or 'time given'}); "
                   + ("; ".join(info.get("penalties") or []) or "on time"))
    return out


def rankable(lab):
    """True when a lab result (LabResult.to_dict) may rank on a leaderboard (Gradescope's, the
    class's): built and run, every correctness case passed, the sanitizer clean or not run, and a
    speed graded on a GPU (GB/s measured)."""
    if lab.get("status") in STOPPED:
        return False
    c, s, sp = lab.get("correctness") or {}, lab.get("sanitizer") or {}, lab.get("speed") or {}
    return (bool(c.get("total")) and c.get("passed") == c.get("total") and not c.get("failures")
            and s.get("status") != "failed" and sp.get("status") == "graded" and bool(sp.get("gbps")))
