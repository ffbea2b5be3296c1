"""JUnit XML: one testsuite per lab, one testcase per part."""
import xml.etree.ElementTree as ET

from .. import feedback
from ..status import NOT_GRADED, Status
from .base import Format
from .details import lab_detail_lines, stopped


def _not_graded(result, suites):
    ts = ET.SubElement(suites, "testsuite", name="grader", tests="1", failures="0", errors="1")
    infra = result.get("status") == Status.INFRASTRUCTURE_ERROR
    tc = ET.SubElement(ts, "testcase", classname="grader", name="infrastructure" if infra else "grader")
    ET.SubElement(tc, "error", message=result.get("message", "")).text = result.get("message", "")


def _cases(lab):
    """[(part, passed, message, skipped)] of a lab."""
    c, s, sp = lab["correctness"], lab["sanitizer"], lab["speed"]
    broken = stopped(lab)
    cases = [("correctness", not broken and c["passed"] == c["total"],
              "\n".join(lab_detail_lines(lab)) if broken or c["failures"] else "", False)]
    if s["max"]:
        cases.append(("memory safety and races", s["points"] >= s["max"], s["note"],
                      s["status"] in (Status.SKIPPED, Status.NOT_GRADED)))
    if sp["max"]:
        cases.append(("speed", sp["points"] >= sp["max"], sp["note"], sp["status"] == Status.NOT_GRADED))
    return cases


def _suite(lab, suites):
    ts = ET.SubElement(suites, "testsuite", name=lab["lab"])
    cases = _cases(lab)
    fails = skips = 0
    for part, ok, msg, skipped in cases:
        tc = ET.SubElement(ts, "testcase", classname=lab["lab"], name=part)
        if skipped and not stopped(lab):
            ET.SubElement(tc, "skipped", message=msg or Status.NOT_GRADED.value)
            skips += 1
        elif not ok:
            ET.SubElement(tc, "failure", message=(msg or "failed").splitlines()[0] if msg else "failed").text = msg
            fails += 1
    ts.set("tests", str(len(cases)))
    ts.set("failures", str(fails))
    ts.set("skipped", str(skips))
    ts.set("errors", "0")


def render(result, colour=False):
    """The XML, cut to the config's feedback.results_max_bytes (feedback.fit)."""
    return feedback.fit(result, _render)


def _render(result):
    suites = ET.Element("testsuites", name=result.get("course") or "grade")
    if result.get("status") in NOT_GRADED:
        _not_graded(result, suites)
    else:
        for lab in result["labs"]:
            _suite(lab, suites)
    return ET.tostring(suites, encoding="unicode") + "\n"


FORMAT = Format("junit", "JUnit XML, one testsuite per lab", render, side_file="junit.xml")
