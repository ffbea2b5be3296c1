"""The class leaderboard (classroom/leaderboard.py) from stored batch results: who ranks (right
answers only), per lab and GPU by GB/s, names nobody can trace back without the folder's key
(kept across regrades), the private names file, and no board from a CPU-mode batch. Also the
Gradescope leaderboard's entries follow the same rule."""
import csv
import json
import os
import re
import shutil
import stat
import tempfile
import unittest
from unittest import mock

import fakes
from classroom import gradebook, leaderboard
from gradelib import formats

LAB = "03_kogge_stone"
assert os.path.isdir(os.path.join(fakes.GRADER, "gradelib"))  # fakes put grader/ on sys.path


def lab_result(gbps, ratio, passed=40, total=40, sanitizer="passed", speed="graded", status="ok"):
    return {"lab": LAB, "status": status, "points": 100, "max_points": 100,
            "correctness": {"passed": passed, "total": total,
                            "failures": [] if passed == total else [{"kind": "wrong", "n": 7}]},
            "sanitizer": {"status": sanitizer}, "speed": {"status": speed, "gbps": gbps, "ratio": ratio}}


def store(d, student, lab, mode="gpu", device="NVIDIA H200"):
    """A stored batch result of student in the results folder d, with one lab."""
    with open(os.path.join(d, student + ".json"), "w") as f:
        json.dump({"student": student, "mode": mode, "device": device, "status": "graded", "points": 100,
                   "max_points": 100, "labs": [lab]}, f)


def class_of_six(d):
    store(d, "alice", lab_result(3100.0, 0.95))
    store(d, "bob", lab_result(2900.0, 1.02))
    store(d, "carol", lab_result(3500.0, 0.80, passed=39))  # fastest, one case wrong
    store(d, "dave", lab_result(3200.0, 0.90, sanitizer="failed"))  # a race
    store(d, "erin", lab_result(2000.0, 1.00), device="NVIDIA A100")  # another GPU
    store(d, "frank", lab_result(None, None, status="build failed", speed="not run"))
    return ["alice", "bob", "carol", "dave", "erin", "frank"]


class ClassBoard(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)

    def store(self, student, lab, **kw):
        store(self.d, student, lab, **kw)

    def class_of_six(self):
        return class_of_six(self.d)

    def test_only_right_answers_rank_per_lab_and_gpu(self):
        students = self.class_of_six()
        rows = leaderboard.write(self.d, students, [LAB])
        with open(os.path.join(self.d, "leaderboard-names.csv")) as f:
            names = {r["submission"]: r["name"] for r in csv.DictReader(f)}
        self.assertEqual(sorted(names), ["alice", "bob", "erin"])  # carol, dave, frank never rank
        self.assertEqual(rows, [(LAB, "NVIDIA A100", 1, names["erin"], 2000.0, 1.0),
                                (LAB, "NVIDIA H200", 1, names["alice"], 3100.0, 0.95),
                                (LAB, "NVIDIA H200", 2, names["bob"], 2900.0, 1.02)])
        with open(os.path.join(self.d, "leaderboard.csv")) as f:
            published = f.read()
        with open(os.path.join(self.d, "leaderboard.html")) as f:
            page = f.read()
        words = set(leaderboard.ADJECTIVES) | set(leaderboard.ANIMALS)
        for student in students:  # the published files name nobody
            self.assertFalse([w for w in words if student in w], student)  # (else a random name could contain it)
            self.assertNotIn(student, published)
            self.assertNotIn(student, page)
        self.assertIn(names["alice"], page)
        self.assertRegex(names["alice"], r"^[a-z]+-[a-z]+-[0-9a-f]{4}$")
        for private in ("leaderboard-names.csv", leaderboard.KEY_FILE):
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.d, private)).st_mode), 0o600, private)

    def test_names_stay_across_regrades_and_a_new_key_deals_new_ones(self):
        students = self.class_of_six()
        first = leaderboard.board(self.d, students, [LAB])[1]
        self.store("bob", lab_result(3300.0, 0.91))  # bob regraded, now first
        rows, again = leaderboard.board(self.d, students, [LAB])
        self.assertEqual(again, first)
        self.assertEqual(rows[1][2:4], (1, first["bob"]))
        os.remove(os.path.join(self.d, leaderboard.KEY_FILE))
        self.assertNotEqual(leaderboard.board(self.d, students, [LAB])[1], first)

    def test_colliding_names_get_longer_ones(self):
        short = leaderboard.pseudonym  # every 4-digit name the same: the collision path, rare with real names
        with mock.patch.object(leaderboard, "pseudonym",
                               lambda key, s, digits=4: "same-otter-0000" if digits == 4 else short(key, s, digits)):
            names = leaderboard._names(b"k" * 64, ["alice", "bob", "carol"])
        self.assertEqual(len(set(names.values())), 3, names)
        self.assertTrue(all(len(n.rsplit("-", 1)[1]) == 6 for n in names.values()), names)

    def test_ties_share_a_rank(self):
        self.store("a", lab_result(3000.0, 1.0))
        self.store("b", lab_result(3000.0, 1.0))
        self.store("c", lab_result(2000.0, 1.5))
        self.assertEqual([r[2] for r in leaderboard.board(self.d, ["a", "b", "c"], [LAB])[0]], [1, 1, 3])

    def test_a_cpu_mode_batch_writes_no_board(self):
        self.store("alice", lab_result(None, None, speed="skipped"), mode="cpu", device="CPU mode")
        said = []
        gradebook.write_class_files(self.d, ["alice"], [LAB], note=said.append)
        self.assertEqual(said, [])
        self.assertTrue(os.path.exists(os.path.join(self.d, "class.csv")))
        for name in ("leaderboard.csv", "leaderboard.html", "leaderboard-names.csv", leaderboard.KEY_FILE):
            self.assertFalse(os.path.exists(os.path.join(self.d, name)), name)

    def test_the_class_files_of_a_gpu_batch_include_it(self):
        students = self.class_of_six()
        said = []
        gradebook.write_class_files(self.d, students, [LAB], note=said.append)
        self.assertEqual(len(said), 1)
        self.assertIn("leaderboard.html and leaderboard.csv (3 entries)", said[0])
        with open(os.path.join(self.d, "leaderboard.csv")) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 3)


class Browser(unittest.TestCase):
    """The published page as Chromium reads it: a table per lab and GPU, rows in rank order."""

    def test_the_page_in_a_browser(self):
        from test_report import CHROMIUM, chromium
        if not CHROMIUM:
            why = "no Chromium (Debian: apt-get install chromium): the page is not checked in a browser"
            if os.environ.get("LAB_TEST_CHROMIUM") == "required":  # .ci/run
                raise RuntimeError(f"LAB_TEST_CHROMIUM=required, but {why}")
            self.skipTest(why)
        with tempfile.TemporaryDirectory() as d:
            rows = leaderboard.write(d, class_of_six(d), [LAB])
            dom, err = chromium(["--dump-dom", "file://" + os.path.join(d, "leaderboard.html")])
        self.assertIn("<body", dom, err[-2000:])
        self.assertEqual(dom.count("<table>"), 2)
        self.assertEqual(re.findall(r"<h2>([^<]*)</h2>", dom),
                         [f"{LAB} on NVIDIA A100", f"{LAB} on NVIDIA H200"])
        shown = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td>", dom)
        self.assertEqual(shown, [(str(r[2]), r[3], f"{r[4]:.1f}") for r in rows])


class GradescopeEntries(unittest.TestCase):
    def test_a_lab_with_a_wrong_case_gets_no_leaderboard_entry(self):
        from test_grader_units import sample_result  # a full lab 03 timed on a GPU, 2500 GB/s
        result = sample_result()
        entries = json.loads(formats.get("gradescope").render(result))["leaderboard"]
        self.assertEqual([e["value"] for e in entries], [2500.0, 1.01])
        result["labs"][0]["correctness"].update(passed=39, failures=[
            {"kind": "wrong", "n": 7, "dist": "random", "seed": 5, "message": "out[3] expected 4, got 3",
             "reproduce": "make run LAB=03 ARGS='--n 7'"}])
        self.assertNotIn("leaderboard", json.loads(formats.get("gradescope").render(result)))
        result = sample_result()
        result["labs"][0]["sanitizer"]["status"] = "failed"
        self.assertNotIn("leaderboard", json.loads(formats.get("gradescope").render(result)))


if __name__ == "__main__":
    unittest.main()
