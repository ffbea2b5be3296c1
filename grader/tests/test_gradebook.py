"""Gradebook and policy on their own (no grading): the class files and the end-of-batch summary
(classroom/gradebook.py), the progress bar's ETA (progress.Progress), who sees what in Gradescope's
results.json (per-part visibility, numbers, the stdout's visibility; formats/gradescope.py and the
config's "gradescope" section), and that visibility is no part of the grading key."""
import argparse
import copy
import csv
import io
import json
import os
import shutil
import tempfile
import unittest

import fakes
from classroom import gradebook
from gradelib import config, formats, progress, session
from gradelib.formats import gradescope

CONFIG = os.path.join(fakes.GRADER, "config.json")


def result(points, max_points=100, status="graded", elapsed=10.0, labs=()):
    return {"status": status, "points": points, "max_points": max_points, "elapsed_s": elapsed,
            "labs": [{"lab": lab, "points": p, "max_points": 100, "status": "graded"} for lab, p in labs]}


class ClassFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def store(self, student, r):
        with open(os.path.join(self.dir, student + ".json"), "w") as f:
            json.dump(r, f)

    def rows(self, name):
        with open(os.path.join(self.dir, name), newline="") as f:
            return list(csv.reader(f))

    def test_write_class_files_writes_both_with_the_roster(self):
        self.store("alice", result(150, 200, labs=[("01_serial", 100), ("02_naive", 50)]))
        self.store("bob", result(0, 200, status="no labs found", labs=[("01_serial", 0), ("02_naive", 0)]))
        roster = [{"submission": "bob", "id": "7", "name": "Bob", "email": "b@u"},
                  {"submission": "cy", "id": "8", "name": "Cy", "email": "c@u"}]
        warned = []
        n = gradebook.write_class_files(self.dir, ["alice", "bob"], ["01_serial", "02_naive"], roster,
                                        warn=warned.append)
        self.assertEqual(n, 6)  # class.csv: 2 labs + TOTAL, for each of 2 students
        book = self.rows("gradebook.csv")
        self.assertEqual(book[0], ["student_id", "name", "email", "submission", "01_serial", "02_naive",
                                   "total", "max", "status", "late"])
        self.assertEqual(book[1], ["7", "Bob", "b@u", "bob", "0", "0", "0", "200", "no labs found", ""])
        self.assertEqual(book[2], ["8", "Cy", "c@u", "cy", "", "", "", "", "no submission", ""])  # blank, not 0
        self.assertEqual(book[3], ["", "", "", "alice", "100", "50", "150", "200", "graded", ""])
        self.assertEqual(warned, ["1 submission not on the roster: alice"])
        self.assertIn(["alice", "TOTAL", "150", "200", "graded"], self.rows("class.csv"))

    def test_class_summary_counts_spreads_and_leaves_the_graders_failures_out(self):
        for name, pts in (("a", 100), ("b", 95), ("c", 50), ("d", 10), ("e", 0)):
            self.store(name, result(pts, elapsed=float(pts or 1)))
        self.store("f", result(None, None, status="infrastructure error"))
        self.store("g", result(0, 100, status="grader error"))
        s = gradebook.class_summary(self.dir, ["a", "b", "c", "d", "e", "f", "g", "h"])
        self.assertEqual(s["no_result"], 1)  # h
        self.assertEqual(s["statuses"], {"graded": 5, "infrastructure error": 1, "grader error": 1})
        self.assertEqual(sorted(s["points"]), [0, 10, 50, 95, 100])  # not f and g: no grade
        self.assertEqual(s["histogram"], [2, 0, 1, 0, 2])  # 0 and 10 | 50 | 95 and 100
        lines = gradebook.summary_lines(s)
        self.assertEqual(lines[0], "class: 8 submissions: 5 graded, 1 grader error, 1 infrastructure error, "
                                   "1 without a result")
        self.assertEqual(lines[1], "points: mean 51.0, median 50, min 0, max 100 (of 100); share of the maximum: "
                                   "0-19% 2, 20-39% 0, 40-59% 1, 60-79% 0, 80-100% 2")
        self.assertEqual(lines[2], "grading time per submission: median 50 s, max 100 s")

    def test_summary_of_a_class_without_results(self):
        self.assertEqual(gradebook.summary_lines(gradebook.class_summary(self.dir, ["x"])),
                         ["class: 1 submissions: 1 without a result"])

    def test_run_line(self):
        self.assertEqual(gradebook.run_line(4, 2, 1, 40.0, not_reached=3),
                         "this run: 3 graded now, 1 error (grader or machine: no grade), 2 skipped (already graded), "
                         "3 not reached; 40.0 s wall, 10.0 s per submission")
        self.assertEqual(gradebook.run_line(0, 5, 0, 0.5),
                         "this run: 0 graded now, 5 skipped (already graded); 0.5 s wall")


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Terminal(io.StringIO):
    def isatty(self):
        return True


class ProgressBar(unittest.TestCase):
    def test_eta_is_the_mean_time_of_those_graded_now(self):
        clock, out = Clock(), io.StringIO()
        bar = progress.Progress(10, stream=out, clock=clock)
        clock.t = 500.0  # the references took 500 s to build: not a submission's time
        for _ in range(4):
            bar.advance(skipped=True)  # already graded: instant, not counted in the mean
        self.assertEqual(bar.eta(), "")  # nothing graded yet: no estimate
        bar.start()
        clock.t = 560.0
        bar.advance()
        bar.advance()  # 2 graded in 60 s: 30 s each, 4 left
        self.assertEqual(bar.eta(), " ETA 2m00s")
        bar.step("alice")
        bar.show("60/100 points")
        self.assertEqual(out.getvalue(), "[##############..........] 6/10 ETA 2m00s alice: 60/100 points\n")
        for _ in range(4):
            bar.advance()
        self.assertEqual(bar.eta(), "")  # done

    def test_on_a_terminal_the_bar_is_redrawn_in_place_and_wiped_before_a_log_line(self):
        term = Terminal()
        bar = progress.Progress(2, stream=term)
        bar.step("alice")
        bar.show("building")
        bar.show("correctness")
        self.assertEqual(term.getvalue().count("\n"), 0)
        self.assertEqual(term.getvalue().count("\r\033[K"), 2)
        progress.clear_line()
        self.assertTrue(term.getvalue().endswith("\r\033[K"))
        progress.clear_line()  # nothing drawn any more: nothing written
        self.assertEqual(term.getvalue().count("\r\033[K"), 3)
        bar.show("speed")
        bar.close()
        self.assertTrue(term.getvalue().endswith("alice: speed\n"))


def sample():
    cfg = config.load(CONFIG)
    from gradelib.outcomes import LabResult
    labs = []
    for lab in ("02_naive", "03_kogge_stone"):
        r = LabResult.blank(lab, cfg.lab(lab), "gpu").to_dict()
        r["build"]["ok"] = True
        r["correctness"].update(passed=40, total=40, points=60)
        r["sanitizer"].update(status="passed", points=10, note="ok")
        r["speed"].update(status="graded", points=30, note="1.0x")
        r.update(points=100, status="graded")
        labs.append(r)
    return {"grader": "grader/grade.py", "course": "c", "mode": "gpu", "device": "Fake", "seed": 5,
            "status": "graded", "message": "", "points": 200, "max_points": 200, "elapsed_s": 3.0, "labs": labs}


def with_settings(**top):
    with open(CONFIG) as f:
        data = json.load(f)
    data.update(top)
    return data


class Visibility(unittest.TestCase):
    def render(self, res):
        return json.loads(formats.get("gradescope").render(res))

    def test_present_takes_the_configs_visibility_and_options(self):
        data = with_settings(gradescope={"numbers": False})
        data["labs"]["03_kogge_stone"] = {"visibility": {"speed": "after_due_date"}}
        res = formats.present(sample(), config.Config(data))
        self.assertEqual(res["labs"][1]["visibility"]["speed"], "after_due_date")
        self.assertEqual(res["labs"][0]["visibility"]["speed"], "visible")
        self.assertEqual(res["gradescope"], {"numbers": False})
        doc = self.render(res)
        self.assertTrue(all("number" not in t for t in doc["tests"]))
        self.assertEqual([t["tags"] for t in doc["tests"][:2]],
                         [["02_naive", "correctness"], ["02_naive", "sanitizer"]])
        # speed of lab 03 is hidden until the due date, and the stdout (the whole table) with it
        self.assertEqual(doc["stdout_visibility"], "after_due_date")
        # the defaults again: the option is dropped, numbers are back
        res = formats.present(res, config.load(CONFIG))
        self.assertNotIn("gradescope", res)
        doc = self.render(res)
        self.assertEqual([t["number"] for t in doc["tests"]], ["2.1", "2.2", "2.3", "3.1", "3.2", "3.3"])
        self.assertEqual(doc["stdout_visibility"], "visible")

    def test_the_stdout_is_no_more_visible_than_the_least_visible_part(self):
        sv = gradescope.stdout_visibility
        tests = [{"visibility": v} for v in ("visible", "visible")]
        self.assertEqual(sv(tests), "visible")
        self.assertEqual(sv(tests + [{"visibility": "after_published"}]), "after_published")
        self.assertEqual(sv(tests + [{"visibility": "hidden"}]), "hidden")
        self.assertEqual(sv([{"visibility": "after_due_date"}, {"visibility": "after_published"}]), "hidden")
        self.assertEqual(sv(tests + [{"visibility": "hidden"}], "visible"), "visible")  # the config's choice
        self.assertEqual(sv([]), "visible")

    def test_the_config_refuses_bad_gradescope_settings(self):
        for bad, msg in (({"numbers": "yes"}, "gradescope.numbers must be true or false"),
                         ({"stdout_visibility": "later"}, "gradescope.stdout_visibility must be one of auto, visible"),
                         ({"tags": True}, 'gradescope: unknown key "tags"'),
                         ([], "gradescope must be an object")):
            with self.assertRaises(config.ConfigError) as cm:
                config.Config(with_settings(gradescope=bad))
            self.assertIn(msg, str(cm.exception))
        c = config.Config(with_settings(gradescope={"stdout_visibility": "hidden"}))
        self.assertEqual(c.gradescope, {"numbers": True, "stdout_visibility": "hidden", "public_cases": None})

    def test_visibility_is_not_part_of_the_grading_key(self):
        args = argparse.Namespace(no_sanitizer=False, only_submitted=False)
        labs = ["02_naive", "03_kogge_stone"]
        base = config.load(CONFIG)
        key = session.grading_key(args, base, labs, "gpu")
        data = with_settings(gradescope={"numbers": False})
        data["defaults"]["visibility"]["speed"] = "hidden"
        data["labs"].setdefault("03_kogge_stone", {})["visibility"] = {"correctness": "after_published"}
        self.assertEqual(session.grading_key(args, config.Config(data), labs, "gpu"), key)
        points = copy.deepcopy(data)
        points["defaults"]["points"]["speed"] = 31  # how it is graded: the key changes
        self.assertNotEqual(session.grading_key(args, config.Config(points), labs, "gpu"), key)


if __name__ == "__main__":
    unittest.main()
