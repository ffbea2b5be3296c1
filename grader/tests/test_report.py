"""The class report (grade.py --report, classroom/report.py): its numbers from stored results, the
command line (--merge --report writes it from a results folder without grading), and the page
in a real browser: headless Chromium loads it, the page's own script checks it (a histogram per
lab, every student's row, a sort that orders) and the test reads the DOM after a sort asked for
in the URL (#sort=points:desc), any script error, and a screenshot. Without Chromium the browser
tests skip, saying so (LAB_TEST_CHROMIUM=required, as .ci/run sets, makes that a failure). A
class graded for real in CPU mode is in test_similarity.RealClass."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
sys.path.insert(0, GRADER)

from classroom import report  # noqa: E402

GRADE = os.path.join(GRADER, "grade.py")
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)


def lab(lab_id, points, mx=60.0, status="graded", failures=(), ratio=None, speed_pts=None):
    """A stored lab result with the keys the report reads (outcomes.LabResult.to_dict's)."""
    return {"lab": lab_id, "status": status, "points": points, "max_points": mx,
            "correctness": {"failures": [{"n": n, "dist": d, "kind": k} for n, d, k in failures]},
            "sanitizer": {"status": "not run"},
            "speed": {"status": "graded" if ratio else "not run", "ratio": ratio, "points": speed_pts or 0,
                      "max": 30 if ratio else 0}}


def result(student, labs, status="graded", mode="cpu"):
    return {"student": student, "status": status, "mode": mode, "device": "CPU mode", "elapsed_s": 3.5,
            "points": round(sum(x["points"] for x in labs), 2), "max_points": sum(x["max_points"] for x in labs),
            "labs": labs}


CLASS = {
    "ann": [lab("01_serial", 60), lab("02_naive", 60)],
    "bob": [lab("01_serial", 60), lab("02_naive", 0, status="build failed")],
    "cat": [lab("01_serial", 60), lab("02_naive", 30, failures=[(1025, "random", "wrong"), (33, "ones", "wrong")])],
    "dan": [lab("01_serial", 0, status="not implemented"),
            lab("02_naive", 45, failures=[(1025, "random", "wrong"), (7, "alt", "out_of_bounds")])],
    "<eve>": [lab("01_serial", 60), lab("02_naive", 0, status="build failed")],
}


def write_class(d, with_missing=True):
    """A submissions folder (empty student folders) and a results folder of CLASS; fay has no
    result when with_missing."""
    subs, res = os.path.join(d, "subs"), os.path.join(d, "subs-results")
    os.makedirs(res)
    for s, labs in CLASS.items():
        os.makedirs(os.path.join(subs, s))
        with open(os.path.join(res, s + ".json"), "w") as f:
            json.dump(result(s, labs), f)
    if with_missing:
        os.makedirs(os.path.join(subs, "fay"))
    return subs, res


class Numbers(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.subs, self.res = write_class(self.d)
        self.data = report.class_data(self.res, sorted(os.listdir(self.subs)))
        self.labs = {x["lab"]: x for x in self.data["labs"]}

    def tearDown(self):
        shutil.rmtree(self.d)

    def test_histogram_counts_each_graded_student_once(self):
        h = self.labs["02_naive"]["histogram"]
        self.assertEqual(sum(h), 5)
        self.assertEqual(h[report.BINS], 1)  # ann 60/60
        self.assertEqual(h[0], 2)  # bob and <eve>: 0
        self.assertEqual(h[5], 1)  # cat 30/60
        self.assertEqual(h[7], 1)  # dan 45/60
        self.assertEqual(self.labs["01_serial"]["histogram"][report.BINS], 4)

    def test_failure_kinds_and_cases_count_students_and_points(self):
        kinds = {k["kind"]: k for k in self.labs["02_naive"]["kinds"]}
        self.assertEqual(sorted(kinds["build failed"]["students"]), ["<eve>", "bob"])
        self.assertEqual(kinds["build failed"]["points_lost"], 120)
        self.assertEqual(sorted(kinds["wrong"]["students"]), ["cat", "dan"])
        self.assertEqual(kinds["wrong"]["points_lost"], 45)  # 30 + 15
        # most students first (a tie: by name)
        self.assertEqual(self.labs["02_naive"]["kinds"][0]["kind"], "build failed")
        cases = {c["case"]: c["students"] for c in self.labs["02_naive"]["cases"]}
        self.assertEqual(cases["n=1025 dist=random"], ["cat", "dan"])
        self.assertEqual(self.labs["02_naive"]["cases"][0]["case"], "n=1025 dist=random")
        self.assertEqual([k["kind"] for k in self.labs["01_serial"]["kinds"]], ["not implemented"])

    def test_a_student_without_a_result_is_a_row_not_a_grade(self):
        fay = [r for r in self.data["students"] if r["student"] == "fay"][0]
        self.assertEqual(fay["status"], "no result")
        self.assertEqual(self.labs["02_naive"]["students"], 5)

    def test_speed_ratios_only_from_gpu_grades(self):
        self.assertFalse(any(x["ratios"] for x in self.data["labs"]))
        with open(os.path.join(self.res, "ann.json"), "w") as f:
            json.dump(result("ann", [lab("01_serial", 90, 100, ratio=1.1, speed_pts=30),
                                     lab("02_naive", 80, 100, ratio=2.5, speed_pts=10)], mode="gpu"), f)
        data = report.class_data(self.res, ["ann", "bob"])
        self.assertEqual([x["ratios"] for x in data["labs"]], [[("ann", 1.1)], [("ann", 2.5)]])
        self.assertIn("slower than the reference", [k["kind"] for k in data["labs"][1]["kinds"]])
        page = report.render(data)
        self.assertEqual(page.count("<svg class=\"ratios\""), 2)
        self.assertEqual(page.count("<circle class=\"ratio\""), 2)

    def test_the_page_is_self_contained_and_escapes_names(self):
        page = report.render(self.data)
        self.assertEqual(page.count('<svg class="histogram"'), 2)
        self.assertIn("&lt;eve&gt;", page)
        self.assertNotIn("<eve>", page)
        self.assertIsNone(re.search(r"(src|href)=['\"]?(https?:)?//", page), "the page must need no network")


class CommandLine(unittest.TestCase):
    """grade.py --merge --report: the page from a results folder, nothing graded."""

    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp()
        cls.subs, cls.res = write_class(cls.d)
        cls.page = os.path.join(cls.d, "class.html")
        cls.proc = subprocess.run([sys.executable, GRADE, "--submissions", cls.subs, "--merge", "--labs", "01", "02",
                                  "--report", cls.page], capture_output=True, text=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d)

    def test_merge_writes_the_report(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("class report: ", self.proc.stderr)
        with open(self.page) as f:
            page = f.read()
        self.assertEqual(page.count('<svg class="histogram"'), 2)
        self.assertEqual(page.count("<tr><td>"), len(CLASS) + 1 + 4 + 3)  # students, 02's kinds and cases, 01's kind

    def test_usage_errors(self):
        with open(os.path.join(self.subs, "ann", "notes.txt"), "w") as f:  # a file where a folder should be
            f.write("x")
        for extra, why in ((["--src", "labs", "--report", "x.html"], "--report needs --submissions"),
                           (["--submissions", self.subs, "--merge", "--similarity"], "--similarity needs --report"),
                           (["--submissions", self.subs, "--merge", "--report",
                             os.path.join(self.subs, "ann", "notes.txt", "c.html")], "cannot write it")):
            r = subprocess.run([sys.executable, GRADE] + extra, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(why, r.stderr)


def chromium(args, timeout=90):
    """Runs headless Chromium (a private profile) and returns (stdout, stderr)."""
    prof = tempfile.mkdtemp(prefix="chromium-")
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                            f"--user-data-dir={prof}", "--enable-logging=stderr", "--v=0"] + args,
                           capture_output=True, text=True, timeout=timeout)
        return r.stdout, r.stderr
    finally:
        shutil.rmtree(prof, ignore_errors=True)


class Browser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            why = "no Chromium (Debian: apt-get install chromium): the page is not checked in a browser"
            if os.environ.get("LAB_TEST_CHROMIUM") == "required":  # .ci/run
                raise RuntimeError(f"LAB_TEST_CHROMIUM=required, but {why}")
            raise unittest.SkipTest(why)
        cls.d = tempfile.mkdtemp()
        subs, res = write_class(cls.d)
        cls.page = os.path.join(cls.d, "class.html")
        report.write(cls.page, res, sorted(os.listdir(subs)), ["01_serial", "02_naive"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d)

    def dom(self, page, fragment=""):
        out, err = chromium(["--dump-dom", "file://" + page + fragment])
        self.assertIn("<body", out, err[-2000:])
        return out, err

    def test_the_page_draws_and_checks_itself_without_script_errors(self):
        dom, err = self.dom(self.page)
        self.assertIn('data-selfcheck="ok"', re.search(r"<body[^>]*>", dom).group(0))
        self.assertNotRegex(dom, r"<body[^>]*data-jserror")
        self.assertNotRegex(err, r"CONSOLE.*(Uncaught|Error)")
        self.assertEqual(dom.count('class="histogram"'), 2)
        self.assertEqual(dom.count('class="bar"'), 2 * (report.BINS + 1))

    def test_a_sort_asked_for_in_the_url_orders_the_table(self):
        dom, _ = self.dom(self.page, "#sort=points:desc")
        body = dom[dom.index('<table id="students"'):]
        body = body[:body.index("</table>")]
        rows = re.findall(r"<tr><td>([^<]*)</td><td>[^<]*</td><td>([^<]*)</td>", body)
        self.assertEqual([r[0] for r in rows][:2], ["ann", "cat"])
        points = [float(p) if p else float("-inf") for _, p in rows]
        self.assertEqual(points, sorted(points, reverse=True))
        self.assertIn('class="sorted-desc"', body)

    def test_a_broken_script_is_seen(self):  # the check above would catch a page whose script fails
        with open(self.page) as f:
            broken = f.read().replace("var table=document.getElementById('students')",
                                      "var table=document.getElementById('no-such-table')")
        path = os.path.join(self.d, "broken.html")
        with open(path, "w") as f:
            f.write(broken)
        dom, err = self.dom(path)
        self.assertIn('data-selfcheck="pending"', re.search(r"<body[^>]*>", dom).group(0))
        self.assertTrue(re.search(r"<body[^>]*data-jserror", dom) or re.search(r"CONSOLE.*(Uncaught|Error)", err),
                        err[-1500:])

    def test_a_screenshot(self):
        png = os.path.join(self.d, "shot.png")
        chromium(["--hide-scrollbars", "--window-size=1000,900", f"--screenshot={png}", "file://" + self.page])
        with open(png, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(int.from_bytes(head[16:20], "big"), 1000)


if __name__ == "__main__":
    unittest.main()
