"""make bench-grader (grader/dev/bench_grader.py) on a small class in CPU mode: the mix of
submissions, one row per submission with its points, and the class's line."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "dev", "bench_grader.py")
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "dev"))

import bench_grader  # noqa: E402
import fakes  # noqa: E402
from gradelib.grading import course_labs as _course_labs  # noqa: E402
from classroom.submissions import fingerprint  # noqa: E402


# its CPU-mode grades are not about nvcc's checks
setUpModule, tearDownModule = fakes.nvcc_hidden_module()


def course_labs():
    """Every lab of the course, as bench_grader takes them."""
    return _course_labs(bench_grader.ROOT)


class BenchGrader(unittest.TestCase):
    FULL_SUITE = "a developer's tool (make bench-grader) grading a small class whole"

    def test_a_small_class_in_cpu_mode(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "bench.json")
            r = subprocess.run([sys.executable, SCRIPT, "--n", "4", "--labs", "01", "02", "--cpu", "--json", out,
                                "--check-isolated", "--work", os.path.join(d, "work")],
                               capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(out) as f:
                doc = json.load(f)
        kinds = [row["kind"] for row in doc["rows"]]
        self.assertEqual(kinds, ["full", "broken", "full", "partial"])
        points = {row["kind"]: row["points"] for row in doc["rows"]}
        self.assertEqual(points["full"], 120.0)     # both labs from solutions/
        self.assertEqual(points["partial"], 60.0)   # lab 02 left as the skeleton
        self.assertLess(points["broken"], 120.0)    # lab 02 from a buggy fixture
        self.assertIn("02_naive: ", doc["rows"][1]["broken"])
        self.assertEqual(doc["summary"]["graded"], 4)
        self.assertIn("class: 4/4 graded in", r.stdout)
        # each row says when its result was written, from the start of the grading
        done = [row["finished_s"] for row in doc["rows"]]
        self.assertTrue(all(0 < x <= doc["summary"]["wall_s"] + 1 for x in done), done)
        self.assertEqual(doc["summary"]["first_wall_s"], {})  # a class of 4 holds no class of 10
        # the steady state: 3 more results between the first and the last
        steady = doc["summary"]["steady_per_hour"]
        self.assertAlmostEqual(steady, 3 * 3600 / (max(done) - min(done)), delta=0.2 * steady)
        self.assertIn(f"steady state: {steady} submissions an hour", r.stdout)
        self.assertNotIn("cut short", r.stdout)
        # every submission that built ran each of its labs' cases in at least one process
        starts = doc["summary"]["starts_per_submission"]
        self.assertGreaterEqual(starts["case"], 1.75)  # the broken one's lab 02 may not build
        self.assertEqual(starts["sanitizer"], 0)  # CPU mode runs no compute-sanitizer
        self.assertAlmostEqual(starts["all"], starts["case"] + starts["timed"], delta=0.11)
        self.assertIn(f"lab processes started: {starts['all']} a submission", r.stdout)
        # graded again alone: each lab content once (lab 01 of the solution, lab 02 of the
        # solution, the bug and the skeleton), each in a submission of its own; the same verdicts
        self.assertIn("4 lab contents of the 4 submissions again with --isolated", r.stderr)
        self.assertEqual([row["submission"] for row in doc["isolated"]["rows"]],
                         ["s000-full-lab01", "s000-full-lab02", "s001-broken-lab02", "s003-partial-lab02"])
        self.assertEqual([sorted(row["verdicts"]) for row in doc["isolated"]["rows"]],
                         [["01_serial"], ["02_naive"], ["02_naive"], ["02_naive"]])
        self.assertEqual((doc["isolated"]["differences"], doc["isolated"]["unchecked"]), ([], []))
        self.assertIn("verdicts: identical (8 lab verdicts of 4 submissions", r.stdout)


class ProcessStarts(unittest.TestCase):
    """What counts as a process start in the grader's trace."""

    def test_a_session_s_first_case_and_a_run_alone_count_once_each(self):
        lines = [{"kind": "case", "end": 5.0, "session": 1}, {"kind": "case", "end": 5.1, "session": 2},
                 {"kind": "case", "end": 5.2, "session": 3}, {"kind": "case", "end": 5.3},
                 {"kind": "sanitizer", "end": 6.0, "session": 1}, {"kind": "sanitizer", "end": 6.1, "session": 2},
                 {"kind": "timed", "end": 7.0, "session": 1}, {"kind": "timed", "end": 7.5},
                 {"kind": "run", "end": 4.5},                     # scan --describe: no start counted
                 {"kind": "case", "end": 1.0, "session": 1}]      # an earlier run's, before since
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.jsonl")
            with open(path, "w") as f:
                f.write("".join(json.dumps(x) + "\n" for x in lines) + '{"kind": "case", "en')  # cut short
            self.assertEqual(bench_grader.process_starts(bench_grader.trace_lines(path, 2.0), 2),
                             {"case": 1.0, "sanitizer": 0.5, "timed": 1.0, "all": 2.5})
            self.assertIsNone(bench_grader.process_starts(bench_grader.trace_lines(os.path.join(d, "none.jsonl"), 0),
                                                          2))

    def test_the_gpu_watch_s_asks_are_counted_apart(self):
        lines = [{"kind": "nvidia-smi", "end": 5.0, "s": 0.25}, {"kind": "nvml", "end": 6.0, "s": 0.05},
                 {"kind": "nvidia-smi", "end": 1.0, "s": 9.0},   # before since
                 {"kind": "gpu-wait", "end": 6.5, "s": 5.0, "case": "free"},
                 {"kind": "timed", "end": 7.0, "s": 1.0, "session": 1}]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.jsonl")
            with open(path, "w") as f:
                f.write("".join(json.dumps(x) + "\n" for x in lines))
            lines = bench_grader.trace_lines(path, 2.0)
            self.assertEqual(bench_grader.watch_cost(lines, 2), {"asks": 1.0, "seconds": 0.15,
                                                                 "by": ["nvidia-smi", "nvml"], "waits": 0.5,
                                                                 "wait_s": 2.5})
            self.assertEqual(bench_grader.process_starts(lines, 2)["timed"], 0.5)


class CutShort(unittest.TestCase):
    """A class cut short (the device call's limit) is measured over what it graded."""

    ROWS = [{"points": 1000.0, "finished_s": 10.0}, {"points": 500.0, "finished_s": 30.0},
            {"points": 900.0, "finished_s": 50.0}, {"points": None}, {"points": None}]

    def test_the_per_submission_figures_are_over_the_graded_up_to_the_last_result(self):
        since = 100.0
        lines = [{"kind": "case", "end": 105.0, "session": 1}, {"kind": "case", "end": 120.0, "session": 1},
                 {"kind": "sanitizer", "end": 140.0, "session": 1}, {"kind": "timed", "end": 149.0},
                 {"kind": "case", "end": 151.0, "session": 1},    # after the last result: not counted
                 {"kind": "timed", "end": 170.0, "session": 1}]
        kept, n = bench_grader.graded_window(lines, self.ROWS, since)
        self.assertEqual(n, 3)
        self.assertEqual(bench_grader.process_starts(kept, n),
                         {"case": 0.7, "sanitizer": 0.3, "timed": 0.3, "all": 1.3})
        # a whole class: every line over every row
        whole = [dict(r, points=r["points"] or 0.0, finished_s=r.get("finished_s", 60.0)) for r in self.ROWS]
        self.assertEqual(bench_grader.graded_window(lines, whole, since), (lines, 5))
        self.assertEqual(bench_grader.graded_window(lines, [{"points": None}], since), (lines, 0))
        self.assertEqual(bench_grader.graded_window(None, self.ROWS, since), (None, 3))

    def test_the_steady_rate_runs_from_the_first_result_to_the_last(self):
        self.assertEqual(bench_grader.steady_rate(self.ROWS), 180.0)  # 2 results in 40 s
        self.assertIsNone(bench_grader.steady_rate(self.ROWS[:2]))


class SpeedStage(unittest.TestCase):
    """Where the speed stage's wall time goes, from each worker's trace lines."""

    def test_each_worker_s_stretches_split_into_runs_watch_and_the_rest(self):
        def line(kind, start, end, pid):
            return {"kind": kind, "end": end, "s": end - start, "pid": pid}
        lines = [line("case", 0.0, 1.0, 1), line("timed", 1.0, 2.0, 1), line("nvml", 2.1, 2.2, 1),
                 line("gpu-wait", 2.2, 3.2, 1), line("timed", 3.5, 4.5, 1),
                 line("timed", 4.0, 5.0, 1),                      # the serial lab beside: counted once
                 line("case", 6.0, 6.5, 1),                       # the next submission's cases
                 line("sanitizer", 9.0, 9.5, 2), line("timed", 10.0, 11.0, 2)]   # another worker, last
        got = bench_grader.speed_time(lines, 2)
        # worker 1: 1.0..5.0 = 4.0 s: timed 2.5, asks 0.1, waits 1.0, gaps 0.1 + 0.3 = 0.4; worker 2: 1.0 timed
        self.assertEqual(got, {"span": 2.5, "timed": 1.75, "asks": 0.05, "waits": 0.5, "other": 0.2})
        self.assertIsNone(bench_grader.speed_time([{"kind": "timed", "end": 1.0, "s": 1.0}], 1))  # no pid: old trace
        self.assertEqual(bench_grader.covered([(0, 2), (1, 3), (5, 6)]), 4)


def result(*labs):
    """A grade.py result with these (lab, status, correctness passed, speed status) labs."""
    return {"labs": [{"lab": lab, "status": status, "static": {"status": "passed"},
                      "correctness": {"passed": passed, "total": 10, "points": 6.0 * passed},
                      "sanitizer": {"status": "passed", "points": 10},
                      "speed": {"status": speed, "points": 29.5}} for lab, status, passed, speed in labs]}


class HonestLosses(unittest.TestCase):
    """An untouched copy of the solutions that loses a speed point is an honest student losing
    one: the report names it and the lab (the class of 100, 2026-11-29: three copies lost 0.04
    to 5.07 points, and the rows could not say in which lab)."""

    def test_each_speed_point_a_copy_of_the_solutions_loses_is_named_with_its_lab(self):
        r = result(("01_serial", "graded", 10, "graded"), ("02_naive", "graded", 10, "graded"))
        r["labs"][0]["speed"].update(max=30, points=24.93, note="1.54x the reference's time")
        r["labs"][1]["speed"].update(max=30, points=30)
        self.assertEqual(bench_grader.speed_lost(r), {"01_serial": [5.07, "1.54x the reference's time"]})
        rows = [{"submission": "s000-full", "kind": "full", "points": 994.93, "max_points": 1000,
                 "speed_lost": bench_grader.speed_lost(r)},
                {"submission": "s001-partial", "kind": "partial", "points": 500, "max_points": 1000,
                 "speed_lost": {}},
                {"submission": "s002-broken", "kind": "broken", "points": 900, "max_points": 1000,
                 "speed_lost": {"02_naive": [3.0, "slow"]}},  # a broken lab may be slow: not honest
                {"submission": "s003-full", "kind": "full", "points": 999.0, "max_points": 1000},  # an older file
                {"submission": "s004-full", "kind": "full", "points": None, "max_points": None}]  # no result yet
        mine, lost = bench_grader.honest_losses(rows)
        self.assertEqual([m["submission"] for m in mine], ["s000-full", "s001-partial", "s003-full"])
        self.assertEqual(lost, [("s000-full", "01_serial", 5.07, "1.54x the reference's time"),
                                ("s003-full", None, 1.0, "")])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_honest(rows)
        self.assertIn("3 graded; 2 lost points\n", out.getvalue())
        self.assertIn("LOST: s000-full 01_serial: 5.07 points: 1.54x the reference's time", out.getvalue())
        self.assertIn("LOST: s003-full (lab not recorded in this file): 1.0 points", out.getvalue())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_honest(rows[1:3])
        self.assertIn("1 graded; none lost a point", out.getvalue())
        s = bench_grader.summarize([dict(x, elapsed_s=1.0, device="d") for x in rows[:3]], 10.0, "1", 0)
        self.assertEqual(s["honest_lost"], [["s000-full", "01_serial", 5.07, "1.54x the reference's time"]])


class CheckIsolated(unittest.TestCase):
    """--check-isolated: what counts as the same verdict, and what is named when one differs."""

    def test_the_same_verdicts_differ_in_nothing(self):
        a = result(("02_naive", "graded", 10, "graded"), ("03_kogge_stone", "graded", 10, "graded"))
        b = json.loads(json.dumps(a))
        b["labs"][0]["speed"]["points"] = 27.0  # a second timing: noise, not a verdict
        rows = [{"submission": "s000-full", "verdicts": bench_grader.verdicts(a)}]
        rows_iso = [{"submission": "s000-full", "verdicts": bench_grader.verdicts(b)}]
        self.assertEqual(bench_grader.differences(rows, rows_iso), [])

    def test_a_case_that_passes_only_in_a_shared_process_is_named(self):
        a = result(("02_naive", "graded", 10, "graded"), ("03_kogge_stone", "graded", 10, "graded"))
        b = result(("02_naive", "graded", 10, "graded"), ("03_kogge_stone", "graded", 9, "not graded"))
        diff = bench_grader.differences([{"submission": "s001-broken", "verdicts": bench_grader.verdicts(a)}],
                                        [{"submission": "s001-broken", "verdicts": bench_grader.verdicts(b)}])
        self.assertEqual(len(diff), 1)
        self.assertTrue(diff[0].startswith("s001-broken 03_kogge_stone: shared processes "), diff[0])
        self.assertIn("[9, 10, 54.0]", diff[0])

    def test_the_check_runs_on_its_own_gpus_after_the_class_is_written(self):
        # grade.py stands in: the class on --gpus, the check on --isolated-gpus; when the check
        # starts, --json already holds the class (a check cut short leaves it measured)
        calls = []
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "part.json")

            def fake_grade(subs, res, work, labs, args, isolated=False, trace=None, gpus=None, only_submitted=False,
                           tick=None):
                on_disk = None
                if isolated:
                    with open(out, encoding="utf-8") as f:
                        on_disk = json.load(f)
                calls.append((isolated, gpus, on_disk, sorted(os.listdir(subs))))
                return 1.0, 0
            argv = ["bench_grader.py", "--n", "4", "--labs", "01", "--gpus", "0", "--check-isolated",
                    "--isolated-gpus", "all", "--json", out, "--work", os.path.join(d, "w")]
            with mock.patch.object(bench_grader, "grade", fake_grade), mock.patch.object(sys, "argv", argv), \
                    contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                bench_grader.main()
            with open(out, encoding="utf-8") as f:
                final = json.load(f)
        self.assertEqual([(iso, gpus) for iso, gpus, _, _ in calls], [(False, "0"), (True, "all")])
        self.assertEqual(len(calls[1][2]["rows"]), 4)
        self.assertNotIn("isolated", calls[1][2])
        # s002-full is s000-full's twin: lab 01 of the other three is graded again
        self.assertEqual(calls[0][3], ["s000-full", "s001-broken", "s002-full", "s003-partial"])
        self.assertEqual(calls[1][3], ["s000-full-lab01", "s001-broken-lab01", "s003-partial-lab01"])
        # the stand-in writes no results: no submission has a graded twin, none is called identical
        self.assertEqual((final["isolated"]["differences"], len(final["isolated"]["unchecked"])), ([], 4))


class Snapshots(unittest.TestCase):
    """--json is written while grade.py runs, so a machine lost before the end leaves what was
    graded (and when), for --merge and --checked."""

    def test_grade_asks_for_a_snapshot_while_grade_py_runs(self):
        class Slow:  # grade.py, still running at the first two looks
            def __init__(self, *a, **k):
                self.looks = 0

            def wait(self, timeout=None):
                self.looks += 1
                if self.looks <= 2:
                    raise subprocess.TimeoutExpired("grade.py", timeout)
                return 3
        seen = []
        args = mock.Mock(cpu=True, seed=1)
        with mock.patch.object(bench_grader.subprocess, "Popen", Slow):
            wall, code = bench_grader.grade("s", "r", "w", ["01_serial"], args, tick=seen.append)
        self.assertEqual(code, 3)
        self.assertEqual(len(seen), 2)
        self.assertTrue(0 <= seen[0] <= seen[1] <= wall)

    def test_a_class_and_its_check_are_written_as_they_are_graded(self):
        snaps = []
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "class.json")

            def result(res, name, points):
                os.makedirs(res, exist_ok=True)
                with open(os.path.join(res, name + ".json"), "w", encoding="utf-8") as f:
                    json.dump({"points": points, "max_points": 60, "elapsed_s": 5.0,
                               "labs": [{"lab": "01_serial", "status": "graded"}]}, f)

            def fake_grade(subs, res, work, labs, args, isolated=False, trace=None, gpus=None, only_submitted=False,
                           tick=None):
                names = sorted(os.listdir(subs))
                result(res, names[0], 60.0)  # the first graded, then a snapshot
                tick(12.5)
                with open(out, encoding="utf-8") as f:
                    snaps.append(json.load(f))
                for name in names[1:]:
                    result(res, name, 60.0)
                return 20.0, 0
            argv = ["--n", "4", "--labs", "01", "--part", "1/2", "--check-isolated", "--json", out,
                    "--work", os.path.join(d, "w")]
            with mock.patch.object(bench_grader, "grade", fake_grade), \
                    contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(bench_grader.main(argv), 0)
            with open(out, encoding="utf-8") as f:
                final = json.load(f)
        cls, check = snaps
        # the class at 12.5 s: one of its two submissions graded, grade.py still running
        s = cls["summary"]
        self.assertEqual((s["running"], s["grade_exit_code"], s["wall_s"], s["graded"]), (True, None, 12.5, 1))
        self.assertEqual([r["points"] for r in cls["rows"]], [60.0, None])
        self.assertEqual(s["class"]["part"], 1)
        self.assertNotIn("isolated", cls)
        # the check at 12.5 s: the class whole, the check's first lab graded alone, still running
        self.assertEqual(check["summary"]["graded"], 2)
        self.assertNotIn("running", check["summary"])
        self.assertTrue(check["isolated"]["running"])
        self.assertEqual([r["points"] for r in check["isolated"]["rows"]], [60.0, None])
        # at the end, nothing says running
        self.assertNotIn("running", final["summary"])
        self.assertNotIn("running", final["isolated"])
        self.assertEqual(final["summary"]["grade_exit_code"], 0)

    def test_a_snapshot_merges_as_a_part_cut_short(self):
        a = Parts.part_doc(1, 2, 100.0, [("s000-full", 10.0)])
        b = Parts.part_doc(2, 2, 40.0, [("s001-full", 20.0)])
        b["summary"].update(running=True, grade_exit_code=None)
        b["rows"].append(dict(b["rows"][0], submission="s003-full", points=None, elapsed_s=None))
        doc, why = bench_grader.merge([a, b])
        self.assertEqual(why, "")
        self.assertEqual((doc["summary"]["running_parts"], doc["summary"]["grade_exit_code"]), (["2/2"], 0))
        self.assertEqual((doc["summary"]["graded"], doc["summary"]["wall_s"]), (2, 140.0))
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, part in enumerate((a, b)):
                paths.append(os.path.join(d, f"p{k}.json"))
                bench_grader.write_json(paths[-1], part)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(bench_grader.merge_files(paths, None), bench_grader.EXIT_SNAPSHOT)
            self.assertIn("parts 2/2: snapshots written while still grading", out.getvalue())
            self.assertIn("a lower bound", out.getvalue())
            self.assertEqual(sorted(os.listdir(d)), ["p0.json", "p1.json"])  # no temporary file left
            b["summary"].update(running=False, grade_exit_code=0)
            bench_grader.write_json(paths[1], b)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(bench_grader.merge_files(paths, None), 0)


class Parts(unittest.TestCase):
    """--part K/M grades the K-th of M runs of consecutive submissions of the same class; --merge
    joins the parts."""

    def test_a_part_is_the_class_s_own_submissions(self):
        labs = ["01_serial", "02_naive", "03_kogge_stone"]
        with tempfile.TemporaryDirectory() as d:
            whole = bench_grader.make_class(os.path.join(d, "all"), 13, labs)
            parts = [bench_grader.make_class(os.path.join(d, str(k)), 13, labs, (k, 3)) for k in (1, 2, 3)]
            self.assertEqual(sorted(m for p in parts for m in p), whole)  # each once, the same (name, kind, bug)
            self.assertEqual([m[0] for m in parts[1]], ["s004-full", "s005-broken", "s006-full", "s007-partial"])
            self.assertEqual([len(p) for p in parts], [4, 4, 5])
            # a run of 10 is the mix exactly: each part of a class of 100 in 10 (or 5) has it
            for k in (1, 7):
                kinds = [bench_grader.MIX[i % 10] for i in range(100) if bench_grader.in_part(i, (k, 10), 100)]
                self.assertEqual(sorted(kinds), sorted(bench_grader.MIX))
            for name, _, _ in parts[2]:  # the files too: a part's submission is the class's
                for lab in labs:
                    with open(os.path.join(d, "3", name, lab, "scan.cu"), "rb") as a, \
                            open(os.path.join(d, "all", name, lab, "scan.cu"), "rb") as b:
                        self.assertEqual(a.read(), b.read(), f"{name} {lab}")
            self.assertEqual(sorted(os.listdir(os.path.join(d, "2"))), [m[0] for m in parts[1]])

    def test_a_class_has_eight_contents_and_twins_share_one(self):
        labs = course_labs()
        with tempfile.TemporaryDirectory() as d:
            made = bench_grader.make_class(d, 30, labs)
            keys = {name: fingerprint(os.path.join(d, name)) for name, _, _ in made}
            # full, partial, and one per planted bug: the isolated check grades 8 of any class of 20 or more
            self.assertEqual(len(set(keys.values())), 2 + len(bench_grader.broken_labs(labs)))
            self.assertEqual(len(bench_grader.broken_labs(labs)), len(bench_grader.BROKEN))
            self.assertEqual(keys["s000-full"], keys["s010-full"])
            self.assertNotEqual(keys["s001-broken"], keys["s005-broken"])  # two different bugs
            self.assertEqual(keys["s001-broken"], keys["s021-broken"])  # the 1st and the 7th broken: the same bug
            with open(os.path.join(d, "s010-full", labs[0], "scan.cu"), "a") as f:
                f.write("\n")
            self.assertNotEqual(fingerprint(os.path.join(d, "s010-full")), keys["s000-full"])

    def test_a_lab_s_content_is_its_files_and_those_of_the_labs_it_is_built_on(self):
        labs = course_labs()
        with tempfile.TemporaryDirectory() as d:
            made = bench_grader.make_class(d, 2, labs)
            full, broken = (bench_grader.lab_contents(os.path.join(d, m[0]), labs) for m in made)
            bad = made[1][2].split(":")[0]  # the lab the broken one's bug is in
            self.assertEqual([lab for lab in labs if full[lab] != broken[lab]], [bad])
            self.assertEqual(len(set(full.values())), len(labs))  # one lab's files are not another's
            with open(os.path.join(d, "s000-full", "08_decoupled_lookback", "scan.cu"), "a") as f:
                f.write("\n")
            after = bench_grader.lab_contents(os.path.join(d, "s000-full"), labs)
        # lab 10 links lab 08 (and 07): its verdict may change with them; no other lab's does
        self.assertEqual(sorted(lab for lab in labs if after[lab] != full[lab]),
                         ["08_decoupled_lookback", "10_applications"])

    def test_the_check_grades_each_lab_content_once(self):
        labs = course_labs()
        with tempfile.TemporaryDirectory() as d:
            made = bench_grader.make_class(d, 100, labs)
            contents = {m[0]: bench_grader.lab_contents(os.path.join(d, m[0]), labs) for m in made}
        plan = bench_grader.check_plan(made, contents, labs)
        graded = [contents[src][lab] for _, src, held in plan for lab in held]
        everything = {k for c in contents.values() for k in c.values()}
        self.assertEqual(set(graded), everything)  # every lab of every submission has a twin checked
        self.assertEqual(len(graded), len(everything))  # and none is graded twice here
        # lab 10 with the labs it links, from the full and the partial submission; every other
        # lab alone: 21 labs in 17 submissions, against 80 in the 8 whole contents
        self.assertEqual(plan[0], ("s000-full-lab10", "s000-full", ["10_applications", "08_decoupled_lookback",
                                                                    "07_hierarchical"]))
        self.assertEqual((len(plan), len(graded)), (17, 21))
        self.assertEqual(len({c for c in map(tuple, (sorted(x.items()) for x in contents.values()))}), 8)

    def test_a_lab_is_compared_with_the_same_lab_graded_alone_in_another_submission(self):
        ok, bad = {"status": "graded"}, {"status": "failed"}
        rows = [{"submission": "s005-broken", "verdicts": {"02_naive": ok, "03_kogge_stone": bad},
                 "lab_content": {"02_naive": "n", "03_kogge_stone": "b3"}},
                {"submission": "s006-full", "verdicts": {"02_naive": ok, "03_kogge_stone": bad},
                 "lab_content": {"02_naive": "n", "03_kogge_stone": "k"}}]
        alone = [{"submission": "s000-full-lab02", "points": 1, "verdicts": {"02_naive": ok},
                  "lab_content": {"02_naive": "n"}},
                 {"submission": "s000-full-lab03", "points": 1, "verdicts": {"03_kogge_stone": ok},
                  "lab_content": {"03_kogge_stone": "k"}}]
        # s006's lab 03 differs from its twin graded alone; s005's lab 03 has no twin: unchecked
        self.assertEqual(bench_grader.differences(rows, alone),
                         ["s006-full 03_kogge_stone: shared processes {'status': 'failed'}, isolated "
                          "{'status': 'graded'} (isolated: s000-full-lab03)"])
        self.assertEqual(bench_grader.unchecked(rows, alone), ["s005-broken"])
        self.assertEqual(bench_grader.compared(rows, alone), 3)
        # a lab the shared grading lost is a difference, not a pass
        lost = [dict(rows[1], verdicts={"02_naive": ok})]
        self.assertIn("s006-full 03_kogge_stone: shared processes None", bench_grader.differences(lost, alone)[0])

    def test_part_must_be_k_of_m(self):
        self.assertEqual(bench_grader.parse_part("2/5"), (2, 5))
        for bad in ("0/3", "4/3", "1/0", "x", "1"):
            with self.assertRaises(ValueError):
                bench_grader.parse_part(bad)
        # a part that holds no submission of the class (the first fifth of 3 is none) is refused
        r = subprocess.run([sys.executable, SCRIPT, "--n", "3", "--cpu", "--part", "1/5"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--part 1/5: no submission of a class of 3 is in it", r.stderr)

    @staticmethod
    def part_doc(k, m, wall, rows, seed=1, isolated_diff=None):
        cls = {"n": 4, "labs": ["01_serial"], "seed": seed, "mode": "cpu", "gpus": "none (CPU mode)", "parts": m,
               "part": k}
        doc = {"summary": {"submissions": len(rows), "graded": len(rows), "wall_s": wall, "gpus": "none (CPU mode)",
                           "devices": ["CPU mode"], "grade_exit_code": 0, "class": cls,
                           "starts_per_submission": {"case": 2.0 * k, "sanitizer": 0.0, "timed": 1.0,
                                                     "all": 2.0 * k + 1}},
               "rows": [{"submission": name, "kind": "full", "broken": "", "points": 60.0, "max_points": 60,
                         "elapsed_s": s, "timings": {}, "device": "CPU mode",
                         "verdicts": {"01_serial": {"status": "graded"}},
                         "lab_content": {"01_serial": "lab 01 of " + name}} for name, s in rows]}
        if isolated_diff is not None:  # the isolated rows: the same, except the names' verdicts
            alone = json.loads(json.dumps(doc["rows"]))
            for r in alone:
                if r["submission"] in isolated_diff:
                    r["verdicts"] = {"01_serial": {"status": "not graded"}}
            doc["isolated"] = {"wall_s": 2 * wall, "grade_exit_code": 0, "rows": alone, "differences": []}
        return doc

    def test_the_whole_class_from_its_parts(self):
        a = self.part_doc(1, 2, 100.0, [("s000-full", 10.0), ("s002-full", 30.0)], isolated_diff=[])
        b = self.part_doc(2, 2, 50.0, [("s001-full", 20.0), ("s003-full", 40.0)], isolated_diff=["s003-full"])
        doc, why = bench_grader.merge([b, a])
        self.assertEqual(why, "")
        s = doc["summary"]
        self.assertEqual([r["submission"] for r in doc["rows"]], ["s000-full", "s001-full", "s002-full", "s003-full"])
        self.assertEqual((s["wall_s"], s["graded"], s["parts_wall_s"]), (150.0, 4, [100.0, 50.0]))
        self.assertEqual(s["submissions_per_hour"], 96.0)  # 4 in 150 s back to back
        self.assertEqual(s["per_submission_median_s"], 25.0)
        self.assertEqual(s["starts_per_submission"]["case"], 3.0)  # (2 x 2 + 4 x 2) / 4
        self.assertEqual(doc["isolated"]["wall_s"], 300.0)
        self.assertEqual(len(doc["isolated"]["differences"]), 1)
        self.assertTrue(doc["isolated"]["differences"][0].startswith(
            "s003-full 01_serial: shared processes {'status': 'graded'}, "
            "isolated {'status': 'not graded'}"))
        self.assertEqual(doc["isolated"]["unchecked"], [])

    def test_a_half_lost_with_its_machine_is_joined_as_two_quarters(self):
        # part 1/2 graded whole; part 2/2 graded again as 3/4 and 4/4 (given in any order)
        a = self.part_doc(1, 2, 100.0, [("s000-full", 10.0), ("s001-full", 10.0)])
        a["summary"]["first_wall_s"] = {"10": 5.0}
        c = self.part_doc(3, 4, 30.0, [("s002-full", 10.0)])
        d = self.part_doc(4, 4, 20.0, [("s003-full", 10.0)])
        c["summary"]["first_wall_s"] = {"10": 1.0}  # not the class's first submissions: not taken
        doc, why = bench_grader.merge([d, a, c])
        self.assertEqual(why, "")
        s = doc["summary"]
        self.assertEqual((s["wall_s"], s["graded"], s["parts_wall_s"], s["part_labels"]),
                         (150.0, 4, [100.0, 30.0, 20.0], ["1/2", "3/4", "4/4"]))
        self.assertEqual((s["first_wall_s"], s["class"]["parts"], s["class"]["part"]), ({"10": 5.0}, 3, None))
        self.assertEqual([r["submission"] for r in doc["rows"]], ["s000-full", "s001-full", "s002-full", "s003-full"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_merged(doc)
        self.assertIn("graded back to back: 100.0 (1/2) + 30.0 (3/4) + 20.0 (4/4) = 150.0 s", out.getvalue())

    def test_parts_graded_at_different_versions_of_the_solutions_are_named(self):
        # the class of 100 (2026-11-29): part 1/2 graded before a commit that changed lab 10's
        # solution file, 3/4 and 4/4 after it; the merge joined them without a word
        a = self.part_doc(1, 2, 100.0, [("s000-full", 10.0), ("s001-broken", 10.0)])
        c = self.part_doc(3, 4, 30.0, [("s002-full", 10.0)])
        d = self.part_doc(4, 4, 20.0, [("s003-full", 10.0)])
        a["rows"][1]["kind"] = "broken"  # a broken submission's lab 10 is its own: not a version of the course
        for doc, lab10 in ((a, "old"), (c, "new"), (d, "new")):
            for r in doc["rows"]:
                r["lab_content"] = {"01_serial": "same", "10_applications": lab10 if r["kind"] == "full" else "bug"}
        doc, why = bench_grader.merge([a, c, d])
        self.assertEqual(why, "")
        self.assertEqual(doc["summary"]["solutions_differ"],
                         {"10_applications": [["old", ["1/2"]], ["new", ["3/4", "4/4"]]]})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_merged(doc)
        self.assertIn("NOTE: the parts graded different versions of the course: 10_applications's solution is "
                      "old in 1/2; new in 3/4, 4/4", out.getvalue())
        for r in a["rows"]:  # the same version everywhere: nothing to say
            r["lab_content"]["10_applications"] = "new" if r["kind"] == "full" else "bug"
        doc, _ = bench_grader.merge([a, c, d])
        self.assertEqual(doc["summary"]["solutions_differ"], {})

    def test_the_merge_compares_every_part_with_the_isolated_twins_of_any_part(self):
        # part 1 was checked alone, part 2 not: its rows meet part 1's isolated twins by lab content
        a = self.part_doc(1, 2, 10.0, [("s000-full", 1.0), ("s001-broken", 1.0)], isolated_diff=[])
        b = self.part_doc(2, 2, 10.0, [("s002-full", 1.0), ("s003-partial", 1.0)])
        content = {"s000-full": "F", "s001-broken": "B", "s002-full": "F", "s003-partial": "P"}
        for r in a["rows"] + a["isolated"]["rows"] + b["rows"]:
            r["lab_content"] = {"01_serial": content[r["submission"]]}
        b["rows"][0]["verdicts"] = {"01_serial": {"status": "failed"}}  # differs from its twin s000's
        doc, why = bench_grader.merge([a, b])
        self.assertEqual(why, "")
        iso = doc["isolated"]
        self.assertEqual(iso["unchecked"], ["s003-partial"])  # no partial was checked alone
        self.assertEqual(len(iso["differences"]), 1)
        self.assertIn("s002-full 01_serial: shared processes {'status': 'failed'}", iso["differences"][0])
        self.assertTrue(iso["differences"][0].endswith("(isolated: s000-full)"))
        # two isolated twins of one content (two checked parts): a row is compared with each
        extra = dict(a["isolated"]["rows"][0], submission="s004-full", verdicts={"01_serial": {"status": "x"}})
        lines = bench_grader.differences(a["rows"][:1], a["isolated"]["rows"] + [extra])
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].endswith("(isolated: s004-full)"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_merged(doc)
        self.assertIn("1 with a lab of no isolated twin: s003-partial", out.getvalue())

    def test_a_class_measures_the_smaller_classes_of_its_seed(self):
        rows = [{"submission": f"s{k:03d}", "finished_s": 30.0 + 10 * k} for k in range(25)]
        rows[3]["finished_s"] = 500.0  # graded last of the first 10 (a hang): the class of 10 waits for it
        self.assertEqual(bench_grader.first_walls(rows), {"10": 500.0, "20": 500.0})
        rows[15].pop("finished_s")  # no result: a class of 20 was not measured
        self.assertEqual(bench_grader.first_walls(rows), {"10": 500.0})
        # the merge takes them from part 1, which holds the class's first submissions
        a = self.part_doc(1, 2, 10.0, [("s000-full", 1.0)])
        b = self.part_doc(2, 2, 10.0, [("s001-full", 1.0)])
        a["summary"]["first_wall_s"], b["summary"]["first_wall_s"] = {"10": 99.0}, {"10": 7.0}
        doc, _ = bench_grader.merge([b, a])
        self.assertEqual(doc["summary"]["first_wall_s"], {"10": 99.0})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_merged(doc)
        self.assertIn("the class's first 10 submissions graded in 99.0 s", out.getvalue())

    def test_parts_of_other_classes_or_missing_ones_are_refused(self):
        a = self.part_doc(1, 2, 1.0, [("s000-full", 1.0)])
        self.assertIn("seed 1 against 2", bench_grader.merge([a, self.part_doc(2, 2, 1.0, [], seed=2)])[1])
        self.assertIn("parts 1/2: s002-s003 of the class of 4 are in none of them", bench_grader.merge([a])[1])
        self.assertIn("parts 1/2, 1/2: s000-s001 of the class of 4 are in more than one", bench_grader.merge([a, a])[1])
        # a half and a quarter that overlaps it (2/4 is s001), or leaves s002 out
        self.assertIn("s001 of the class of 4 are in more than one",
                      bench_grader.merge([a, self.part_doc(2, 4, 1.0, []), self.part_doc(3, 4, 1.0, []),
                                          self.part_doc(4, 4, 1.0, [])])[1])
        self.assertIn("s002 of the class of 4 are in none", bench_grader.merge([a, self.part_doc(4, 4, 1.0, [])])[1])
        self.assertIn("not a --part result", bench_grader.merge([{"summary": {}, "rows": []}])[1])

    def test_the_cores_of_the_parts_and_the_check(self):
        cpus = list(range(64))
        self.assertEqual(bench_grader.core_shares(cpus, 2, True, 16),
                         [list(range(16)), list(range(16, 32)), list(range(32, 64))])
        self.assertEqual([len(x) for x in bench_grader.core_shares(cpus, 2, True)], [21, 21, 21])
        self.assertEqual(bench_grader.core_shares(cpus, 2, False), [list(range(32)), list(range(32, 64))])
        self.assertEqual(bench_grader.core_shares([0, 1], 2, True), [[0, 1]] * 3)  # fewer cores than jobs
        # 16 each won't fit
        self.assertEqual([len(x) for x in bench_grader.core_shares(cpus[:20], 2, True, 16)], [6, 6, 6])

    def test_a_check_graded_apart_is_merged_with_the_timed_parts(self):
        # the parts timed each on its own GPU, no check in them; the check (--isolated-only) on both
        content = {"s000-full": "F", "s001-broken": "B", "s002-full": "F", "s003-partial": "P"}
        a = self.part_doc(1, 2, 10.0, [("s000-full", 1.0), ("s001-broken", 1.0)])
        b = self.part_doc(2, 2, 10.0, [("s002-full", 1.0), ("s003-partial", 1.0)])
        for r in a["rows"] + b["rows"]:
            r["lab_content"] = {"01_serial": content[r["submission"]]}
        check = {"summary": {"class": dict(a["summary"]["class"], gpus="0,1", parts=1, part=1, check=True)},
                 "rows": [], "isolated": {"wall_s": 7.0, "grade_exit_code": 0, "differences": [],
                                          "rows": json.loads(json.dumps(a["rows"] + b["rows"][1:]))}}
        check["isolated"]["rows"][1]["verdicts"] = {"01_serial": {"status": "not graded"}}
        doc, why = bench_grader.merge([check, b, a])
        self.assertEqual(why, "")
        self.assertEqual(doc["summary"]["wall_s"], 20.0)  # the check's time is not the class's
        self.assertEqual(len(doc["rows"]), 4)
        self.assertEqual(doc["isolated"]["unchecked"], [])
        self.assertEqual(len(doc["isolated"]["differences"]), 1)
        self.assertTrue(doc["isolated"]["differences"][0].startswith("s001-broken 01_serial"))
        # a check cut short: a submission it did not finish is no one's twin (unchecked, not a difference)
        cut = json.loads(json.dumps(check))
        cut["isolated"]["rows"][2].update(points=None, elapsed_s=None, verdicts={})  # s003-partial's
        doc, _ = bench_grader.merge([a, b, cut])
        self.assertEqual((doc["isolated"]["unchecked"], len(doc["isolated"]["differences"])), (["s003-partial"], 1))
        bigger = json.loads(json.dumps(check))  # the check of a larger class of the same seed checks this one
        bigger["summary"]["class"]["n"] = 100
        self.assertEqual(len(bench_grader.merge([a, b, bigger])[0]["isolated"]["differences"]), 1)
        other = json.loads(json.dumps(check))
        other["summary"]["class"]["seed"] = 2
        self.assertIn("a check is of another class: seed 1 against 2", bench_grader.merge([a, b, other])[1])
        self.assertIn("only --isolated-only checks", bench_grader.merge([check])[1])

    def test_a_check_cut_short_and_the_check_that_finished_it_are_one_whole_check(self):
        # the first check's snapshot graded F and was cut short before B; a second (--checked) graded B
        a = self.part_doc(1, 1, 10.0, [("s000-full", 1.0), ("s001-broken", 1.0)])
        content = {"s000-full": "F", "s001-broken": "B"}
        for r in a["rows"]:
            r["lab_content"] = {"01_serial": content[r["submission"]]}

        def check(rows, running):
            cls = dict(a["summary"]["class"], check=True)
            return {"summary": {"class": cls}, "rows": [],
                    "isolated": {"wall_s": 5.0, "grade_exit_code": None if running else 0, "running": running,
                                 "differences": [], "rows": json.loads(json.dumps(rows))}}
        first = check(a["rows"], True)
        first["isolated"]["rows"][1].update(points=None, elapsed_s=None, verdicts={})  # B not finished
        second = check(a["rows"][1:], False)
        doc, why = bench_grader.merge([a, first, second])
        self.assertEqual(why, "")
        iso = doc["isolated"]
        self.assertFalse(iso["running"])
        self.assertEqual([r["submission"] for r in iso["rows"]], ["s000-full", "s001-broken"])  # B once, graded
        self.assertEqual((iso["unchecked"], iso["differences"], iso["wall_s"]), ([], [], 10.0))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench_grader.print_merged(doc)
        self.assertIn("isolated: 2 graded alone in 10.0 s wall", out.getvalue())
        self.assertNotIn("cut short", out.getvalue())
        # the snapshot alone: still running, B unchecked, and the merge says so (exit 7)
        doc, _ = bench_grader.merge([a, first])
        self.assertTrue(doc["isolated"]["running"])
        self.assertEqual(doc["isolated"]["unchecked"], ["s001-broken"])
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, f"{k}.json") for k in range(3)]
            for path, x in zip(paths, (a, first, second)):
                bench_grader.write_json(path, x)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(bench_grader.merge_files(paths[:2], None), bench_grader.EXIT_SNAPSHOT)
                self.assertEqual(bench_grader.merge_files(paths, None), 0)

    def test_isolated_only_grades_one_of_each_content_alone(self):
        calls = []
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "check.json")

            def fake_grade(subs, res, work, labs, args, isolated=False, trace=None, gpus=None, only_submitted=False,
                           tick=None):
                calls.append((isolated, gpus, only_submitted, sorted(os.listdir(subs))))
                return 1.0, 0
            argv = ["--n", "6", "--labs", "01", "--part", "1/1", "--isolated-only", "--isolated-gpus", "0,1",
                    "--json", out, "--work", os.path.join(d, "w")]
            with mock.patch.object(bench_grader, "grade", fake_grade), \
                    contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = bench_grader.main(argv)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        self.assertEqual(code, 0)
        # no timed grading: the isolated one only, on its GPUs, of lab 01 of s000 (full), s001
        # (broken) and s003 (partial); s002 and s004 are s000's twins, s005 is s001's (lab 01 has
        # one planted bug); each lab alone in its submission, graded with --only-submitted
        self.assertEqual(calls, [(True, "0,1", True, ["s000-full-lab01", "s001-broken-lab01", "s003-partial-lab01"])])
        self.assertEqual((doc["rows"], doc["summary"]["class"]["check"], doc["summary"]["class"]["seed"]),
                         ([], True, 1))
        self.assertEqual(len(doc["isolated"]["rows"]), 3)
        # a check cut short, finished later: what it graded alone is not graded again
        calls.clear()
        with tempfile.TemporaryDirectory() as d:
            first, later = os.path.join(d, "first.json"), os.path.join(d, "later.json")
            with open(first, "w", encoding="utf-8") as f:  # s001's lab 01 graded alone, the rest cut short
                json.dump(dict(doc, isolated=dict(doc["isolated"], rows=[
                    {"submission": "s001-broken-lab01", "points": 0.0, "verdicts": {"01_serial": {"status": "failed"}},
                     "lab_content": doc["isolated"]["rows"][1]["lab_content"]}])), f)
            with mock.patch.object(bench_grader, "grade", fake_grade), \
                    contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(bench_grader.main(argv[:-4] + ["--json", later, "--checked", first, "--work", d]), 0)
            self.assertEqual(calls, [(True, "0,1", True, ["s000-full-lab01", "s003-partial-lab01"])])
            r = subprocess.run([sys.executable, SCRIPT, "--n", "6", "--labs", "01", "--cpu", "--seed", "2",
                                "--isolated-only", "--json", later, "--checked", first],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertIn("a check of another class: seed 2 against 1", r.stderr)
        r = subprocess.run([sys.executable, SCRIPT, "--n", "3", "--cpu", "--isolated-only"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--isolated-only needs --json FILE", r.stderr)


class PartsGradedWhole(unittest.TestCase):
    """--parts-on in CPU mode: two parts and the check graded at once, then merged."""
    FULL_SUITE = "a developer's tool (make bench-grader) grading a class in parts, whole"

    def test_two_parts_and_the_check_at_once_then_merged_in_cpu_mode(self):
        # --parts-on: a bench_grader a part (CUDA_VISIBLE_DEVICES its GPU), the check beside
        # them (--check-on), each writing beside --json, then the merge of all three
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "class.json")
            r = subprocess.run([sys.executable, SCRIPT, "--n", "3", "--labs", "01", "--cpu", "--parts-on", "0,1",
                                "--check-on", "0", "--json", out, "--work", os.path.join(d, "work")],
                               capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:] + r.stdout[-2000:])
            for k in (1, 2):
                with open(os.path.join(d, f"class.part-{k}.log")) as f:
                    self.assertIn(f"(part {k} of 2 of a class of 3)", f.read())
            with open(os.path.join(d, "class.check.log")) as f:
                self.assertIn("graded alone", f.read())
            self.assertIn("class: 3/3 graded in", r.stdout)
            # s000 and s002 are twins: 2 graded alone, all 3 compared
            self.assertRegex(r.stdout, r"isolated: 2 graded alone in .* verdicts: identical "
                                       r"\(3 lab verdicts of 3 submissions compared with their twins'\)")
            with open(out) as f:
                doc = json.load(f)
            with open(os.path.join(d, "class.part-1.json")) as f:
                self.assertEqual(json.load(f)["summary"]["class"]["part"], 1)
        self.assertEqual([(x["submission"], x["points"]) for x in doc["rows"]],
                         [("s000-full", 60.0), ("s001-broken", doc["rows"][1]["points"]), ("s002-full", 60.0)])
        self.assertLess(doc["rows"][1]["points"], 60.0)
        self.assertEqual((doc["isolated"]["differences"], doc["isolated"]["unchecked"]), ([], []))
        self.assertEqual(doc["summary"]["wall_s"], round(sum(doc["summary"]["parts_wall_s"]), 1))


if __name__ == "__main__":
    unittest.main()
