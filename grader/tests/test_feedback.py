"""What a submission prints never reaches the feedback unbounded (gradelib/feedback.py): a crash
with a megabyte of stderr full of control characters gets a short, clean, quoted tail; a
compiler message with a huge #error line is cut; a result with huge outputs renders, in every
format, under the config's results limit and stays a valid Gradescope / PrairieLearn document."""
import json
import os
import unittest
import xml.etree.ElementTree as ET

import fakes  # noqa: F401  (puts grader/ on sys.path)
from gradelib import config, evaluate as ev, feedback, formats
from gradelib.outcomes import BuildOutcome, CaseFailure, LabResult, StaticOutcome
from gradelib.proc import Result
from gradelib.status import Status

CONFIG = os.path.join(fakes.GRADER, "config.json")
CONTROL = "\x1b[2J\x1b[H\x1b]0;title\x07\x00\r\x08\x7f\x9b31m\u202e\x1b[32m"


def size(text):
    return len(text.encode("utf-8"))


def no_controls(test, text):
    test.assertNotIn("\x1b", text)
    for c in "\x00\r\x08\x7f\x9b\u202e":
        test.assertNotIn(c, text)


class Limits(unittest.TestCase):
    def setUp(self):
        self.cfg = config.load(CONFIG)
        feedback.configure(self.cfg.feedback)

    def tearDown(self):
        feedback.configure(None)

    def test_the_course_config_states_the_limits(self):
        self.assertEqual(self.cfg.feedback, {"case_tail_bytes": 300, "case_message_bytes": 600,
                                             "lab_output_bytes": 4000, "results_max_bytes": 500000})

    def test_bad_limits_are_refused_with_one_line(self):
        with open(CONFIG) as f:
            base = json.load(f)
        for bad, text in (({"case_tail_bytes": "x"}, "feedback.case_tail_bytes must be a number"),
                          ({"tail": 3}, "feedback: unknown key \"tail\""),
                          ({"results_max_bytes": 2000000}, "at most"),
                          ({"case_tail_bytes": 10}, ">= 40"),
                          ({"case_tail_bytes": 700}, "must grow")):
            with self.assertRaises(config.ConfigError) as e:
                config.Config(dict(base, feedback=bad))
            self.assertIn(text, str(e.exception))
            self.assertNotIn("\n", str(e.exception))


class CaseMessages(Limits):
    def test_a_crash_with_a_megabyte_of_stderr_is_cut_cleaned_and_quoted(self):
        err = (("junk " * 200000) + CONTROL + "\nsecond line\n" + ("LEAK " + "x" * 5000) + "\n" + CONTROL
               + "last»; 60/60")
        kind, msg, _ = ev.diagnose(Result(-11, "", err, False, 0.1), 7)
        self.assertEqual(kind, Status.CRASH)
        self.assertTrue(msg.startswith("crashed with SIGSEGV; its stderr ended: [cut to 300 bytes] «…"), msg[:120])
        self.assertTrue(msg.endswith("»"), msg[-40:])
        self.assertLessEqual(size(msg), 300 + 80)
        no_controls(self, msg)
        self.assertNotIn("\n", msg)
        inside = msg[msg.index("«") + 1:-1]
        self.assertNotIn("»", inside)  # the program cannot close the quote early
        self.assertIn("last", inside)  # its end is kept
        self.assertNotIn("junk", inside)

    def test_a_short_tail_is_kept_whole(self):
        kind, msg, _ = ev.diagnose(Result(-11, "", "boom\n", False, 0.1), 7)
        self.assertEqual(msg, "crashed with SIGSEGV; its stderr ended: «boom»")
        kind, msg, _ = ev.diagnose(Result(12, "", "a\n\nb\n", False, 0.1), 7)
        self.assertEqual(msg, "exit code 12 without a result; its stderr ended: «a | b»")

    def test_the_limit_comes_from_the_config(self):
        feedback.configure(dict(self.cfg.feedback, case_tail_bytes=50))
        _, msg, _ = ev.diagnose(Result(-6, "", "y" * 1000, False, 0.1), 7)
        self.assertIn("[cut to 50 bytes]", msg)
        self.assertLessEqual(size(msg[msg.index("«"):]), 50 + 10)

    def test_a_sandbox_line_and_a_report_message_are_bounded(self):
        err = "harness: sandbox: " + "fork " * 10000 + CONTROL
        kind, msg, _ = ev.diagnose(Result(9, "", err, False, 0.1), 7)
        self.assertEqual(kind, Status.SANDBOX)
        self.assertLessEqual(size(msg), 300 + 80)
        no_controls(self, msg)
        rep = json.dumps({"status": "cuda_error", "message": "kernel_" + "k" * 100000 + CONTROL, "lab": "x"})
        kind, msg, _ = ev.diagnose(Result(4, rep, "", False, 0.1), 7)
        self.assertEqual(kind, Status.RUNTIME_ERROR)
        self.assertLessEqual(size(msg), 600)
        self.assertIn("[cut to 600 bytes]", msg)
        no_controls(self, msg)

    def test_multi_line_output_keeps_its_line_breaks(self):
        text = feedback.cap_lines("scan.cu:1:2: error: #error " + "A" * 50000 + CONTROL + "\nsecond\r\n" * 3000,
                                  600, 4000)
        self.assertLessEqual(size(text), 4000)
        self.assertIn("[line cut to 600 bytes]", text)
        self.assertIn("\nsecond\n", text)
        self.assertTrue(text.endswith("[compiler output cut to 4000 bytes]"))
        no_controls(self, text)


def huge_result(labs=10, failures=60, text=None):
    """A result of `labs` graded labs, each with `failures` failed cases whose messages are long."""
    cfg = config.load(CONFIG)
    text = text or ("crashed with SIGSEGV; its stderr ended: «" + "z" * 5000 + "»")
    out = []
    for i in range(labs):
        lab = f"{i + 1:02d}_lab"
        fails = tuple(CaseFailure(1000 + k, "small", k, Status.CRASH, "", text + CONTROL, f"make run LAB={i + 1:02d}")
                      for k in range(failures))
        from gradelib.outcomes import CorrectnessOutcome
        r = LabResult.blank(lab, cfg.lab(lab), "cpu", build=BuildOutcome(True, 1.0, ""),
                            static=StaticOutcome(True),
                            correctness=CorrectnessOutcome(passed=5, total=5 + failures, failures=fails))
        d = r.to_dict()
        d["correctness"]["points"] = 5.0
        d["points"] = 5.0
        d["summary"] = "crash " + "s" * 100000  # as if a summary were unbounded
        out.append(d)
    return {"grader": "grader/grade.py", "course": "c", "mode": "cpu", "device": None, "seed": 1,
            "status": "graded", "message": "m", "points": 5.0 * labs, "max_points": 60.0 * labs,
            "elapsed_s": 1.0, "timings": {}, "labs": out}


class Documents(Limits):
    def test_case_messages_in_a_result_are_bounded_and_clean(self):
        r = huge_result(labs=1, failures=2)
        for f in r["labs"][0]["correctness"]["failures"]:
            self.assertLessEqual(size(f["message"]), 600)
            no_controls(self, f["message"])

    def test_every_format_stays_under_the_limit(self):
        feedback.configure(dict(self.cfg.feedback, results_max_bytes=20000))
        r = huge_result()
        raw = json.dumps(r)
        self.assertGreater(size(raw), 300000)  # the case: far over the limit before the formats cut it
        for name, most in (("gradescope", 20000), ("prairielearn", 20000), ("junit", 20000), ("json", 50000)):
            feedback.configure(dict(self.cfg.feedback, results_max_bytes=most))
            text = formats.render(r, name)
            self.assertLessEqual(size(text), most, name)
            if name == "junit":
                ET.fromstring(text)
            else:
                json.loads(text)
        self.assertEqual(json.dumps(r), raw, "rendering changed the result")

    def test_a_cut_gradescope_document_is_still_gradescope(self):
        feedback.configure(dict(self.cfg.feedback, results_max_bytes=20000))
        r = huge_result()
        doc = json.loads(formats.render(r, "gradescope"))
        self.assertEqual(len(doc["tests"]), 10)
        self.assertAlmostEqual(sum(t["score"] for t in doc["tests"]), doc["score"])
        self.assertEqual(doc["score"], 50.0)
        for t in doc["tests"]:
            self.assertTrue({"name", "score", "max_score", "status", "output", "visibility", "number"} <= set(t))
            self.assertIn(t["status"], ("passed", "failed"))
            self.assertLessEqual(size(t["output"]), 4000)
            no_controls(self, t["output"])
        self.assertTrue(any("cut" in t["output"] for t in doc["tests"]))

    def test_the_default_limit_holds_for_a_huge_upload(self):
        r = huge_result(labs=10, failures=60, text="x" * 300000)
        for name in ("gradescope", "prairielearn", "json", "junit"):
            self.assertLessEqual(size(formats.render(r, name)), 500000, name)

    def test_the_table_bounds_each_lab(self):
        r = huge_result(labs=2, failures=60)
        for lab in r["labs"]:
            lab["status"] = "build failed"
            lab["build"]["message"] = "scan.cu:1: error: " + "e" * 100000
        text = formats.render(r, "table", to_terminal=False)
        self.assertLess(size(text), 2 * (4000 + 4000) + 2000)

    def test_a_failing_variant_that_is_not_graded_is_shown_for_a_lab_with_full_points(self):
        r = huge_result(labs=1, failures=0)
        lab = r["labs"][0]
        lab["status"], lab["points"] = "graded", lab["max_points"]
        failing = {"name": "two_barrier", "graded": False, "written": True, "passed": 28, "total": 31,
                   "sanitizer": "", "line": "two_barrier: written, 3 of 31 cases fail (out[2] ...); not graded"}
        unwritten = dict(failing, name="other", written=False, line="other: not written")
        lab["correctness"]["variants"] = [unwritten]
        self.assertNotIn("not graded fails", formats.render(r, "table", to_terminal=False))  # unwritten: quiet
        lab["correctness"]["variants"] = [failing, unwritten]
        text = formats.render(r, "table", to_terminal=False)
        self.assertIn("full points; a variant that is not graded fails:", text)
        self.assertIn("variant two_barrier: written, 3 of 31 cases fail", text)
        self.assertNotIn("variant other", text)

    def test_fit_cuts_the_longest_texts_first_and_says_so(self):
        doc = {"a": "a" * 10000, "b": "b" * 3000, "c": "short", "n": 5}
        text = feedback.fit(doc, json.dumps, 9000)
        out = json.loads(text)
        self.assertLessEqual(size(text), 9000)
        self.assertEqual(out["b"], doc["b"])  # cutting the longest was enough
        self.assertIn("[cut from 10000 to", out["a"])
        self.assertEqual((out["c"], out["n"]), ("short", 5))


class PrairieLearn(Limits):
    def result(self, message):
        cfg = config.load(CONFIG)
        lab = LabResult.blank("01_serial", cfg.lab("01_serial"), "cpu", status=Status.MISSING,
                              summary="not found").to_dict()
        return {"grader": "grader/grade.py", "course": "c", "mode": "cpu", "device": None, "seed": 1,
                "status": Status.NO_LABS_FOUND.value, "message": message, "points": 0.0, "max_points": 60.0,
                "elapsed_s": 1.0, "timings": {}, "labs": [lab]}

    def test_no_lab_found_costs_no_attempt(self):
        doc = json.loads(formats.render(self.result("no lab found: expected lab folders such as 01_serial/scan.cu; "
                                                    "found: nothing (the submission is empty)"), "prairielearn"))
        self.assertIs(doc["gradable"], False)
        self.assertEqual(doc["score"], 0.0)
        self.assertTrue(doc["message"].startswith("Nothing was submitted (no lab found"), doc["message"])
        doc = json.loads(formats.render(self.result("no lab found: expected ...; found: hw/"), "prairielearn"))
        self.assertIs(doc["gradable"], False)
        self.assertIn("found: hw/", doc["message"])
        # Gradescope has no such flag: a 0 with the reason
        gs = json.loads(formats.render(self.result("no lab found: found: hw/"), "gradescope"))
        self.assertEqual(gs["score"], 0.0)
        self.assertIn("found: hw/", gs["output"])


if __name__ == "__main__":
    unittest.main()
