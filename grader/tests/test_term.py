"""The instructor's term without a real build: the LMS gradebooks (classroom/lms.py)
checked against the columns Canvas, Moodle and Blackboard document; the late policy and
extensions (classroom/policy.py) from Gradescope's submission_metadata.json or a file's time; the
class seed and --only regrades (classroom/seeds.py); the batch display (the ETA from real
gradings, the whole class in the final table); and bad roster and extensions files refused with
file:line:column and exit code 5. Batch runs use a fake grader (as test_grader_pipeline's
BatchSafety does). Over 400 lines: the term's features share these fixtures (the fake grader, the
stored results, the config with a late policy), and each class below is one feature."""
import csv
import datetime as dt
import io
import json
import os
import shutil
import tempfile
import subprocess
import sys
import unittest
import unittest.mock

import fakes
from classroom import gradebook, lms, policy, runs, seeds
from gradelib import config, formats, progress
from gradelib.formats import details, gradescope
from gradelib.outcomes import LabResult

CONFIG = os.path.join(fakes.GRADER, "config.json")
UTC = dt.timezone.utc
DUE = "2026-12-04T23:59:00+00:00"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def lab_result(lab, points, cfg):
    r = LabResult.blank(lab, cfg.lab(lab), "cpu").to_dict()
    r.update(points=points, status="graded")
    r["correctness"].update(points=points, passed=1, total=1)
    return r


class Gradebooks(unittest.TestCase):
    """gradebook.csv in each --gradebook-format, from stored results and a roster."""

    def setUp(self):
        self.dir = fakes.shared_tmp()
        cfg = config.load(CONFIG)
        labs = [lab_result("01_serial", 60.0, cfg), lab_result("02_naive", 30.0, cfg)]
        with open(os.path.join(self.dir, "alice.json"), "w") as f:
            json.dump({"status": "graded", "points": 90.0, "max_points": 200, "labs": labs}, f)
        self.roster = os.path.join(self.dir, "roster.csv")
        with open(self.roster, "w") as f:
            f.write("submission,id,first_name,last_name,email,section,sis_login,canvas_id\n"
                    "alice,s1,Alice,Ng,a@u.edu,L01,ang,901\nbob,s2,Bob,Ray,b@u.edu,L02,bray,902\n")

    def tearDown(self):
        lms.configure("csv")
        shutil.rmtree(self.dir, ignore_errors=True)

    def book(self, fmt, columns=None):
        lms.configure(fmt, columns)
        gradebook.write_gradebook(self.dir, ["alice"], ["01_serial", "02_naive"], gradebook.read_roster(self.roster))
        return read_csv(os.path.join(self.dir, "gradebook.csv"))

    def test_canvas_has_its_documented_columns_and_blank_for_no_result(self):
        rows = self.book("canvas", {"02_naive": "Lab 02 (12345)"})
        # Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then assignments
        self.assertEqual(rows[0], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                   "Lab 01 serial", "Lab 02 (12345)"])
        self.assertEqual(rows[1], ["Ng, Alice", "901", "s1", "ang", "L01", "60", "30"])
        self.assertEqual(rows[2], ["Ray, Bob", "902", "s2", "bray", "L02", "", ""])  # no submission: blank

    def test_moodle_and_blackboard(self):
        rows = self.book("moodle")
        self.assertEqual(rows[0], ["First name", "Last name", "ID number", "Email address",
                                   "Lab 01 serial", "Lab 02 naive"])
        self.assertEqual(rows[2], ["Bob", "Ray", "s2", "b@u.edu", "", ""])
        self.book("blackboard", {"01_serial": "Lab 1 |_3141_1"})
        with open(os.path.join(self.dir, "gradebook.csv"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        # Blackboard: a Username column; every value quoted; a column id after "|" updates that column
        self.assertEqual(lines[0], '"Last Name","First Name","Username","Student ID",'
                                   '"Lab 1 [Total Pts: 60 Score] |_3141_1","Lab 02 naive [Total Pts: 60 Score]"')
        self.assertEqual(lines[1], '"Ng","Alice","ang","s1","60","30"')
        self.assertEqual(lines[2], '"Ray","Bob","bray","s2","",""')

    def test_the_config_checks_gradebook_columns(self):
        with open(CONFIG) as f:
            data = json.load(f)
        data["gradebook"] = {"columns": {"01_serial": ""}}
        with self.assertRaisesRegex(config.ConfigError, "gradebook.columns must map lab ids"):
            config.Config(data)


class LatePolicy(unittest.TestCase):
    LATE = {"due": {"default": DUE, "02_naive": "2026-12-11T23:59:00+00:00"}, "grace_minutes": 10,
            "penalty": {"percent_per_day": 10, "max_percent": 30}}

    def result(self):
        cfg = config.load(CONFIG)
        labs = [lab_result("01_serial", 60.0, cfg), lab_result("02_naive", 50.0, cfg)]
        return {"status": "graded", "points": 110.0, "max_points": 200, "seed": 1, "mode": "cpu",
                "labs": labs, "message": ""}

    def test_penalty_functions(self):
        per_day = {"percent_per_day": 10, "max_percent": 30}
        self.assertEqual([policy.penalty_percent(per_day, d) for d in (0, 1, 2, 3, 9)], [0, 10, 20, 30, 30])
        table = {"table": [[1, 5], [3, 25], [7, 100]]}
        self.assertEqual([policy.penalty_percent(table, d) for d in (0, 1, 2, 3, 4, 30)], [0, 5, 25, 25, 100, 100])

    def test_days_late_grace_and_extensions(self):
        term = policy.Term(self.LATE, {"bob": {"*": ("days", 2)}})
        when = dt.datetime(2026, 12, 6, 12, 0, tzinfo=UTC)  # 1.5 days after lab 01's due date
        r = term.stamp(self.result(), "alice", when, source="test")
        self.assertEqual([lab["points"] for lab in r["labs"]], [48.0, 50.0])  # 2 started days: -20%
        self.assertEqual(r["labs"][0]["correctness"]["points"], 48.0)  # the parts too (Gradescope sums them)
        self.assertEqual(r["points"], 98.0)
        self.assertEqual(r["late"]["penalties"], ["01_serial 2 days late: -20% (60 -> 48 points)"])
        again = term.stamp(r, "alice", when)  # stamping again starts from the points before any penalty
        self.assertEqual(again["points"], 98.0)
        bob = term.stamp(self.result(), "bob", when)  # 2 days' extension: on time
        self.assertEqual(bob["points"], 110.0)
        self.assertEqual(bob["labs"][0]["late"]["extension"], "extended by 2 days")
        graced = term.stamp(self.result(), "alice", dt.datetime(2026, 12, 5, 0, 8, tzinfo=UTC))
        self.assertEqual(graced["points"], 110.0)  # 9 minutes late, 10 minutes' grace

    def test_no_time_is_on_time_with_a_warning(self):
        r = policy.Term(self.LATE).stamp(self.result(), "alice", None, warning="x.json has no readable created_at")
        self.assertEqual(r["points"], 110.0)
        self.assertIn("no submission time: graded as on time", r["late"]["warning"])
        self.assertIn("late policy: x.json has no readable created_at", details.late_lines(r)[0])

    def test_batch_metadata_comes_from_beside_the_submission_never_from_inside(self):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root, True)
        sub = os.path.join(root, "alice")
        os.makedirs(sub)
        with open(os.path.join(sub, "scan.cu"), "w") as f:
            f.write("/* */\n")
        os.utime(os.path.join(sub, "scan.cu"), (1796000000, 1796000000))
        with open(os.path.join(sub, policy.METADATA), "w") as f:  # the student's own: a forged early time
            json.dump({"created_at": "2020-01-01T00:00:00Z"}, f)
        os.utime(os.path.join(sub, policy.METADATA), (1796000000, 1796000000))
        when, _, source, warning = policy.handed_in(sub)
        self.assertEqual(when.year, 2026)
        self.assertEqual(source, "the folder's newest file")
        self.assertIn("is the student's own file and is ignored", warning)
        with open(os.path.join(root, "alice." + policy.METADATA), "w") as f:  # the platform's
            json.dump({"created_at": "2026-12-07T10:00:00Z"}, f)
        when, _, source, _ = policy.handed_in(sub)
        self.assertEqual((when.day, source), (7, "alice." + policy.METADATA))
        self.assertEqual(policy.metadata_beside(os.path.join(root, "bob.tar.gz")),
                         os.path.join(root, "bob." + policy.METADATA))

    def test_gradescope_metadata_and_the_feedback(self):
        meta = os.path.join(fakes.shared_tmp(), policy.METADATA)
        self.addCleanup(shutil.rmtree, os.path.dirname(meta), True)
        with open(meta, "w") as f:  # Gradescope's documented fields: created_at, assignment.due_date
            json.dump({"id": 1, "created_at": "2026-12-07T10:00:00.365935-05:00",
                       "assignment": {"due_date": "2026-12-05T23:00:00.000000-05:00", "title": "Labs"}}, f)
        when, due, warning = policy.read_metadata(meta)
        self.assertEqual((when.day, due.day, warning), (7, 5, ""))
        logged = []
        r = self.result()
        term = policy.Term({"penalty": {"percent_per_day": 25}})  # no due date in the config: Gradescope's
        policy.stamp_single(term, r, "alice", meta, logged.append)
        self.assertEqual(r["points"], 55.0)  # 1 day 11 hours late: 2 started days, -50%
        self.assertIn("01_serial 2 days late: -50% (60 -> 30 points)", logged[0])
        doc = json.loads(gradescope.render(r))
        self.assertEqual(doc["score"], sum(t["score"] for t in doc["tests"]))
        self.assertIn("handed in 2026-12-07T10:00:00.365935-05:00", doc["output"])
        self.assertIn("late: 2 day(s) after", doc["tests"][0]["output"])


class RateLimit(unittest.TestCase):
    """The config's rate_limit (Gradescope): an upload over the limit is not graded, keeps the
    last score and says when the next one will be; under it, or with metadata it cannot read,
    the upload is graded."""
    LIMIT = {"submissions": 2, "hours": 24}

    def meta(self, previous, created="2026-12-01T12:00:00-05:00", results=None):
        path = os.path.join(fakes.shared_tmp(), policy.METADATA)
        self.addCleanup(shutil.rmtree, os.path.dirname(path), True)
        with open(path, "w") as f:  # Gradescope's documented fields: previous_submissions' time, score, results
            json.dump({"id": 9, "created_at": created,
                       "previous_submissions": [dict({"submission_time": t, "score": p},
                                                     **({"results": results[k]} if results and results[k] else {}))
                                                for k, (t, p) in enumerate(previous)]}, f)
        return path

    def test_under_the_limit_or_unreadable_is_graded(self):
        # one upload in the window (the other is 25 hours old): graded
        self.assertIsNone(policy.rate_limited(self.LIMIT, self.meta(
            [("2026-11-30T11:00:00-05:00", 10.0), ("2026-12-01T09:00:00-05:00", 40.0)])))
        self.assertIsNone(policy.rate_limited(None, self.meta([("2026-12-01T09:00:00-05:00", 40.0)] * 5)))
        self.assertIsNone(policy.rate_limited(self.LIMIT, os.path.join(fakes.GRADER, "no-such.json")))
        self.assertIsNone(policy.rate_limited(self.LIMIT, self.meta([("2026-12-01T09:00:00-05:00", 1.0)] * 3,
                                                                    created="yesterday")))

    def test_over_the_limit_keeps_the_last_score_and_says_when(self):
        state = policy.rate_limited(self.LIMIT, self.meta(
            [("2026-11-29T11:00:00-05:00", 10.0), ("2026-12-01T09:00:00-05:00", 40.0),
             ("2026-12-01T11:00:00-05:00", 55.5)]))
        self.assertEqual((state["used"], state["score"]), (2, 55.5))
        self.assertEqual(state["next"].isoformat(), "2026-12-02T09:00:00-05:00")  # the oldest leaves the window
        self.assertEqual(policy.rate_limit_message(self.LIMIT, state),
                         "Not graded: this assignment grades 2 upload(s) every 24 hours, and 2 of yours were "
                         "graded in the last 24. Upload again after 2026-12-02T09:00:00-05:00; your score stays "
                         "55.5, from your upload of 2026-12-01T11:00:00-05:00.")
        # no score to keep (Gradescope left it out): graded, never a refusal that could lower it
        self.assertIsNone(policy.rate_limited(self.LIMIT, self.meta(
            [("2026-12-01T09:00:00-05:00", 40.0), ("2026-12-01T11:00:00-05:00", None)])))

    def test_uploads_refused_for_the_limit_do_not_count(self):
        # the second upload was itself refused (its stored results say so): one graded in the window
        refused = json.loads(gradescope.rate_limited("Not graded: ...", 40.0))
        self.assertEqual(refused["extra_data"], {"rate_limited": True})
        times = [("2026-12-01T09:00:00-05:00", 40.0), ("2026-12-01T11:00:00-05:00", 40.0)]
        self.assertIsNone(policy.rate_limited(self.LIMIT, self.meta(times, results=[{"score": 40.0}, refused])))
        self.assertIsNotNone(policy.rate_limited(self.LIMIT, self.meta(times, results=[{"score": 40.0}, None])))

    def test_bad_sections_are_refused(self):
        with open(CONFIG) as f:
            base = json.load(f)
        for bad, words in (({"submissions": 0, "hours": 24}, "rate_limit.submissions"),
                           ({"submissions": 3, "hours": -1}, "rate_limit.hours"),
                           ({"submissions": 3}, "rate_limit must be an object")):
            with self.assertRaises(config.ConfigError) as e:
                config.Config(dict(base, rate_limit=bad))
            self.assertIn(words, str(e.exception))
        self.assertEqual(config.Config(dict(base, rate_limit=self.LIMIT)).rate_limit, self.LIMIT)

    def test_grade_py_answers_gradescope_without_building(self):
        with open(CONFIG) as f:
            cfg = dict(json.load(f), rate_limit=self.LIMIT)
        tmp = fakes.shared_tmp()
        self.addCleanup(shutil.rmtree, tmp, True)
        cfg_path, out = os.path.join(tmp, "config.json"), os.path.join(tmp, "results.json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f)
        meta = self.meta([("2026-12-01T09:00:00-05:00", 40.0), ("2026-12-01T11:00:00-05:00", 55.5)])
        work = os.path.join(tmp, "work")
        r = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--src", "labs", "--labs", "02",
                            "--config", cfg_path, "--metadata", meta, "--format", "gradescope", "--out", out,
                            "--cpu", "--work", work], capture_output=True, text=True, timeout=120,
                           cwd=os.path.dirname(fakes.GRADER))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual((doc["score"], doc["tests"]), (55.5, []))
        self.assertTrue(doc["output"].startswith("Not graded: this assignment grades 2 upload(s) every 24 hours"))
        self.assertFalse(os.path.exists(os.path.join(work, "ref-cpu")), "nothing is built for it")


class BadInput(unittest.TestCase):
    def setUp(self):
        self.dir = fakes.shared_tmp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def file(self, text, name="f.csv"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_roster_errors_name_file_line_and_column(self):
        cases = [("name,email\nA,a@u\n", ":1:3: the roster has no submission column"),
                 ("submission,id\nalice,1\nbob,1\n", ":3:2: id '1' is on lines 2 and 3"),
                 ("submission,id,extension\nalice,1,next friday\n", ":2:3: the extension is not a number of days"),
                 ("submission,extension\nalice,2026-12-01T10:00\n", "has no timezone")]
        for text, want in cases:
            path = self.file(text)
            with self.assertRaises(gradebook.RosterError) as cm:
                gradebook.read_roster(path)
            self.assertIn(want, str(cm.exception), text)
            self.assertTrue(str(cm.exception).startswith(f"--roster {path}:"), str(cm.exception))

    def test_extensions_file_errors(self):
        labs = ["01_serial", "02_naive"]
        cases = [("submission,lab\nalice,01\n", ":1:3: the extensions file has no extension column"),
                 ("submission,lab,extension\nalice,07,2\n", ":2:2: unknown lab '07'"),
                 ("submission,lab,extension\nalice,01,2\nalice,01_serial,3\n", ":3:1: a second extension for 'alice'"),
                 ("submission,lab,extension\nalice,,2026-13-01T00:00Z\n", ":2:3: not a number of days or an ISO 8601")]
        for text, want in cases:
            with self.assertRaises(policy.BadInput) as cm:
                policy.read_extensions(self.file(text), labs)
            self.assertIn(want, str(cm.exception), text)
        ok = policy.read_extensions(self.file("Submission,Lab,Days\nalice,,2\nbob,2,2026-12-09T12:00Z\n"), labs)
        self.assertEqual(ok["alice"], {"*": ("days", 2.0)})
        self.assertEqual(ok["bob"]["02_naive"][1], dt.datetime(2026, 12, 9, 12, tzinfo=UTC))

    def test_the_config_refuses_a_bad_late_section(self):
        with open(CONFIG) as f:
            data = json.load(f)
        for late, want in [({"due": {"01_serial": "tomorrow"}}, "late.due.01_serial: not an ISO 8601"),
                           ({"due": {"99_x": DUE}}, "unknown lab"),
                           ({"penalty": {"table": [[3, 10], [1, 20]]}}, "days growing")]:
            with self.assertRaisesRegex(config.ConfigError, want):
                config.Config(dict(data, late=late))


class PublicCases(unittest.TestCase):
    """gradescope.public_cases: a public smoke set visible at once, the full matrix after the due date."""

    def render(self, public):
        with open(CONFIG) as f:
            data = json.load(f)
        data["defaults"]["visibility"]["correctness"] = "after_due_date"
        data["gradescope"] = {"public_cases": public}
        cfg = config.Config(data)
        lab = lab_result("01_serial", 0.0, cfg)
        fail = {"seed": 1, "kind": "wrong", "options": "", "message": "wrong at 3", "reproduce": "make run"}
        lab["correctness"].update(passed=30, total=32, failures=[dict(fail, n=31, dist="ones"),
                                                                 dict(fail, n=1048577, dist="random")])
        result = {"status": "graded", "points": 0.0, "max_points": 60, "seed": 1, "mode": "cpu", "labs": [lab]}
        return json.loads(gradescope.render(formats.present(result, cfg)))

    def test_a_visible_smoke_test_beside_the_hidden_matrix(self):
        doc = self.render({"max_n": 1025, "visibility": "visible"})
        public, full = doc["tests"][0], doc["tests"][1]
        self.assertEqual((public["name"], public["number"], public["visibility"], public["max_score"]),
                         ("01_serial: public cases (n <= 1025)", "1.0", "visible", 0.0))
        self.assertEqual(public["status"], "failed")
        self.assertIn("n=31 dist=ones", public["output"])
        self.assertNotIn("n=1048577", public["output"])  # a hidden case stays hidden
        self.assertEqual((full["number"], full["visibility"]), ("1.1", "after_due_date"))
        self.assertIn("n=1048577", full["output"])
        self.assertEqual(doc["score"], sum(t["score"] for t in doc["tests"]))
        self.assertEqual(doc["stdout_visibility"], "after_due_date")  # the stdout shows everything
        self.assertEqual(len(self.render(None)["tests"]), 1)  # not configured: no public test
        with self.assertRaisesRegex(config.ConfigError, "public_cases.visibility"):
            self.render({"max_n": 1025, "visibility": "soon"})


class Seeds(unittest.TestCase):
    def test_the_class_seed_is_stored_reused_and_renewed_only_when_asked(self):
        d = fakes.shared_tmp()
        self.addCleanup(shutil.rmtree, d, True)
        draws = iter([11, 22])
        self.assertEqual(seeds.class_seed(d, draw=lambda: next(draws)), (11, "new"))
        self.assertEqual(seeds.class_seed(d, draw=lambda: next(draws)), (11, "stored"))
        self.assertEqual(seeds.class_seed(d, new=True, draw=lambda: next(draws)), (22, "new"))
        self.assertEqual(seeds.class_seed(d, given=5), (5, "given"))
        self.assertEqual(seeds.stored(d), 5)
        with open(os.path.join(d, seeds.FILE), "w") as f:
            f.write("{")
        with self.assertRaisesRegex(seeds.SeedError, "--new-seed"):
            seeds.class_seed(d)

    def test_shards_storing_the_seed_at_once_do_not_trip_each_other(self):
        # every --shard task of a class stores the seed in the shared results folder at its start:
        # another shard's whole store between this one's write and its rename must not take this
        # one's temporary file away (one shared name did: FileNotFoundError)
        d = fakes.shared_tmp()
        self.addCleanup(shutil.rmtree, d, True)
        replace, pid, nested = os.replace, os.getpid(), []

        def other_shard_first(src, dst):
            if not nested:
                nested.append(1)
                with unittest.mock.patch.object(seeds.os, "getpid", return_value=pid + 1):
                    seeds.store(d, 7)
            replace(src, dst)
        with unittest.mock.patch.object(seeds.os, "replace", other_shard_first):
            seeds.store(d, 7)
        self.assertEqual(seeds.stored(d), 7)
        self.assertEqual(os.listdir(d), [seeds.FILE])


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class TermBatch(unittest.TestCase):
    """Batch runs with a fake grader: seeds, --only, late work, the final table, exit codes."""

    def setUp(self):
        fakes.batch_folders(self)
        self.graded = []
        cfg = config.load(CONFIG)
        test = self

        class FakeGrader:
            mode, device, timings, notes = "cpu", "Fake", {}, []
            work = os.path.join(self.tmp, "work")
            config = cfg

            def __init__(self, seed):
                self.seed = seed

            def bases_of(self, labs):
                return []

            def build_submission(self, name, sources, labs, why_missing=None):
                test.graded.append((name, self.seed))
                return {lab: lab_result(lab, 60.0 if sources.get(lab) else 0.0, cfg) for lab in labs}

            def evaluate(self, built, name=None):
                test.bar_at_grading[name] = sys.stderr.getvalue().splitlines()[-1]
                return [built[k] for k in sorted(built)]

        self.bar_at_grading = {}
        fakes.use_prepared_grader(self, lambda args, config, seed, *a, **k: FakeGrader(seed))
        for name in ("alice", "bob", "cy"):
            self.student(name)

    def tearDown(self):
        lms.configure("csv")

    def student(self, name, when=None):
        path = os.path.join(self.subs, name, "01_serial", "scan.cu")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(f"// {name}\n")
        if when:
            os.utime(path, (when.timestamp(), when.timestamp()))

    def main(self, *extra):
        argv = ["--submissions", self.subs, "--results", self.results, "--labs", "01", "--cpu", *extra]
        with unittest.mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                unittest.mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            rc = self.grade.main(argv)
        return rc, out.getvalue(), err.getvalue()

    def stored(self, student):
        with open(os.path.join(self.results, student + ".json")) as f:
            return json.load(f)

    def test_resume_and_only_reuse_the_class_seed_and_new_seed_regrades_all(self):
        rc, out, err = self.main()
        self.assertEqual(rc, 0, err)
        seed = seeds.stored(self.results)
        self.assertEqual({s for _, s in self.graded}, {seed})
        self.graded.clear()
        rc, out, err = self.main("--only", "bob")
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.graded, [("bob", seed)])  # one student, the class's inputs
        self.assertIn(f"seed {seed}: the class seed stored in", err)
        # the final table is the whole class, those graded before marked so
        self.assertIn("alice", out)
        self.assertIn("graded (earlier run)", out.splitlines()[1])
        self.assertRegex(out.splitlines()[2], r"^bob +60(\.0)? +\d+ +graded$")
        self.graded.clear()
        rc, out, err = self.main("--new-seed")
        self.assertEqual(rc, 0, err)
        new = seeds.stored(self.results)
        self.assertNotEqual(new, seed)
        self.assertEqual(sorted(self.graded), [("alice", new), ("bob", new), ("cy", new)])
        self.assertEqual(self.stored("alice")["seed"], new)

    def test_the_bar_names_the_student_being_graded(self):
        rc, out, err = self.main()
        self.assertEqual(rc, 0, err)
        for name in ("alice", "bob", "cy"):  # not the previous student's line while this one is graded
            self.assertRegex(self.bar_at_grading[name], rf"\] \d/3( ETA \S+)? {name}: building and grading$")

    def test_only_an_unknown_name_is_a_usage_error(self):
        rc, out, err = self.main("--only", "zed")
        self.assertEqual(rc, 2)
        self.assertIn("--only: no submission named zed", err)

    def test_late_work_from_file_times_an_extension_and_the_gradebook(self):
        late = dt.datetime(2026, 12, 6, 12, tzinfo=UTC)
        self.student("bob", when=late)
        self.student("cy", when=late)
        os.utime(os.path.join(self.subs, "alice", "01_serial", "scan.cu"),
                 (dt.datetime(2026, 12, 1, tzinfo=UTC).timestamp(),) * 2)
        with open(CONFIG) as f:
            data = json.load(f)
        data["late"] = {"due": {"default": DUE}, "penalty": {"percent_per_day": 10, "max_percent": 50}}
        cfg = os.path.join(self.tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(data, f)
        roster = os.path.join(self.tmp, "roster.csv")
        with open(roster, "w") as f:
            f.write("submission,id,extension\nalice,1,\nbob,2,\ncy,3,3\ndee,4,\n")
        rc, out, err = self.main("--config", cfg, "--roster", roster)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.stored("alice")["points"], 60.0)
        self.assertEqual(self.stored("bob")["points"], 48.0)  # 2 started days late: -20%
        self.assertEqual(self.stored("cy")["points"], 60.0)  # 3 days' extension (the roster's column)
        book = read_csv(os.path.join(self.results, "gradebook.csv"))
        self.assertEqual(book[2][4:], ["48", "48", "60", "graded", "01_serial 2 days late: -20% (60 -> 48 points)"])
        self.assertEqual(book[4][4:], ["", "", "", "no submission", ""])
        # an extension granted later: bob's penalty goes without a regrade
        ext = os.path.join(self.tmp, "ext.csv")
        with open(ext, "w") as f:
            f.write("submission,lab,extension\nbob,01,2026-12-07T00:00:00Z\n")
        self.graded.clear()
        rc, out, err = self.main("--config", cfg, "--roster", roster, "--extensions", ext,
                                 "--gradebook-format", "canvas")
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.graded, [])
        self.assertEqual(self.stored("bob")["points"], 60.0)
        book = read_csv(os.path.join(self.results, "gradebook.csv"))
        self.assertEqual(book[0][:5], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"])
        self.assertEqual([row[5] for row in book[1:]], ["60", "60", "60", ""])

    def test_single_mode_reads_gradescopes_metadata(self):
        meta = os.path.join(self.tmp, policy.METADATA)
        with open(meta, "w") as f:
            json.dump({"created_at": "2026-12-05T10:00:00-05:00", "assignment": {"due_date": None}}, f)
        with open(CONFIG) as f:
            data = json.load(f)
        data["late"] = {"due": {"01_serial": DUE}, "penalty": {"table": [[1, 15], [7, 50]]}}
        cfg = os.path.join(self.tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(data, f)
        argv = ["--src", os.path.join(self.subs, "alice"), "--labs", "01", "--cpu", "--config", cfg,
                "--metadata", meta, "--format", "gradescope"]
        with unittest.mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                unittest.mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(self.grade.main(argv), 0)
        doc = json.loads(out.getvalue())
        self.assertEqual(doc["score"], 51.0)  # 15 hours late: 1 day, -15%
        self.assertIn("01_serial 1 day late: -15% (60 -> 51 points)", err.getvalue())
        with open(meta, "w") as f:
            json.dump({"assignment": {}}, f)
        with unittest.mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                unittest.mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(self.grade.main(argv), 0)
        self.assertEqual(json.loads(out.getvalue())["score"], 60.0)  # no time: on time, with a warning
        self.assertIn("no readable created_at; no submission time: graded as on time", err.getvalue())

    def test_a_bad_roster_or_extensions_file_exits_5(self):
        bad = os.path.join(self.tmp, "r.csv")
        with open(bad, "w") as f:
            f.write("submission,id\nalice,1\nbob,1\n")
        rc, out, err = self.main("--roster", bad)
        self.assertEqual(rc, runs.EXIT_BAD_INPUT)
        self.assertIn(f"{bad}:3:2: id '1' is on lines 2 and 3", err)
        with open(bad, "w") as f:
            f.write("submission,days\nalice,soon\n")
        rc, out, err = self.main("--extensions", bad)
        self.assertEqual(rc, 5)
        self.assertIn(f"{bad}:2:2:", err)
        self.assertEqual(self.graded, [])  # refused before grading anything


class Workers(unittest.TestCase):
    def test_gpu_workers_and_slurm_jobs_get_the_terms_options(self):
        import grade
        from classroom import cluster
        args, _ = grade.parse_args(["--submissions", "/s", "--roster", "r.csv", "--extensions", "e.csv",
                                    "--gradebook-format", "moodle"])
        a = cluster.forwarded(args)
        self.assertEqual(a[a.index("--extensions") + 1], os.path.abspath("e.csv"))  # workers stamp late work
        self.assertEqual(a[a.index("--gradebook-format") + 1], "moodle")  # the merge writes the gradebook
        for bad in (["--only", "x", "--gpus", "all"], ["--seed", "1", "--new-seed"], ["--src", "labs", "--only", "x"]):
            with unittest.mock.patch("sys.stderr", new_callable=io.StringIO), self.assertRaises(SystemExit) as cm:
                grade.parse_args(["--submissions", "/s"] + bad if bad[0] != "--src" else bad)
            self.assertEqual(cm.exception.code, 2, bad)


class Display(unittest.TestCase):
    def test_the_eta_counts_only_real_gradings_with_their_median(self):
        clock, out = Clock(), io.StringIO()
        bar = progress.Progress(10, stream=out, clock=clock)
        bar.start()
        for t in (100.0, 200.0, 400.0):  # three real gradings: 100, 100 and 200 s
            clock.t = t
            bar.advance()
        for _ in range(3):  # three uploads with nothing to grade, done at once
            bar.advance(counted=False)
        self.assertEqual(bar.eta(), " ETA 6m40s")  # median 100 s, 4 left (a mean over all 6: 4m27s)


if __name__ == "__main__":
    unittest.main()
