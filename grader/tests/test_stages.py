"""The grader's typed stages on their own: the status enum, each stage's outcome and the plain
dict made from it, the points policy (scoring.py), the pieces of the case and speed stages that
need no process, and the registry of output formats."""
import contextlib
import dataclasses
import glob
import io
import json
import os
import re
import tempfile
import unittest
from unittest import mock

import fakes
from classroom import batch, submissions
from gradelib import config, formats, scoring, stage_cases
from gradelib.evaluate import LabInfo, Variant
from gradelib.outcomes import (BuildOutcome, CaseFailure, CorrectnessOutcome, GradeResult, LabResult,
                               SanitizerCheck, SanitizerOutcome, SpeedOutcome, StaticOutcome)
from gradelib.case_outcomes import LabRuns, correctness_outcome, lab_outcomes, sanitizer_outcome
from gradelib.stage_cases import LabPlan, chunks, runs_alone, sanitizer_preset
from gradelib.stage_speed import SpeedStage
from gradelib.status import HARNESS_STATUSES, STOPPED, Status

ROOT = os.path.dirname(fakes.GRADER)
CFG = config.load(os.path.join(fakes.GRADER, "config.json"))
SETTINGS = CFG.lab("03_kogge_stone")


def failure(n=33, kind=Status.WRONG, message="wrong answer: out[5] expected 6, got 7"):
    return CaseFailure(n, "ones", 7, kind, "--sizes 33,33 --calls 2", message, f"make run LAB=03 ARGS='--n {n}'")


def graded(correctness=None, sanitizer=None, speed=None, status=Status.GRADED, mode="gpu"):
    """A lab result as the stages leave it, scored as grading.finish_lab scores it."""
    res = LabResult.blank("03_kogge_stone", SETTINGS, mode, status=status, title="Kogge-Stone",
                          build=BuildOutcome(ok=True, seconds=1.5), static=StaticOutcome(ok=True),
                          correctness=correctness or CorrectnessOutcome(40, 40),
                          sanitizer=sanitizer or SanitizerOutcome(Status.PASSED, note="clean"),
                          speed=speed or SpeedOutcome(Status.GRADED, metric="tile_ms", bench_n=1 << 20,
                                                      ratio=1.0, student_ms=0.5, reference_ms=0.5,
                                                      full_ms=0.8, serial_ms=40.0, speedup=50.0))
    scored = dataclasses.replace(res, score=scoring.score_lab(res, SETTINGS))
    return dataclasses.replace(scored, summary=scored.summary_line())


class Statuses(unittest.TestCase):
    def test_harness_statuses_come_from_the_contract(self):
        # common/contract.h (the C side) is generated from the same list: tests/test_contract.py
        from gradelib import contract
        self.assertEqual([s.value for s in HARNESS_STATUSES], list(contract.STATUSES))
        self.assertIs(Status.WRONG, Status("wrong"))
        self.assertEqual(Status.USAGE_ERROR, "usage_error")

    def test_a_status_reads_as_its_text(self):
        self.assertEqual(f"{Status.NOT_GRADED}", "not graded")
        self.assertEqual(str(Status.GRADED), "graded")
        self.assertEqual(json.dumps({"s": Status.STATIC_CHECK_FAILED}), '{"s": "static check failed"}')
        self.assertIs(Status("not run"), Status.NOT_RUN)
        self.assertEqual({Status.PASSED: 1}.get("passed"), 1)
        self.assertIn("missing", STOPPED)

    def test_no_status_is_spelled_outside_the_enum(self):
        """A status of more than one word (or with an underscore) written as a string anywhere in
        the grader but status.py is a second spelling that can drift."""
        files = glob.glob(os.path.join(fakes.GRADER, "gradelib", "**", "*.py"), recursive=True)
        files += [os.path.join(fakes.GRADER, f) for f in ("grade.py", "check_fixtures.py")]
        distinctive = [s.value for s in Status if " " in s.value or "_" in s.value]
        found = []
        for path in files:
            if os.path.basename(path) == "status.py":
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            found += [f"{os.path.relpath(path, fakes.GRADER)}: {v!r}" for v in distinctive
                      if re.search(r"""["']%s["']""" % re.escape(v), text)]
        self.assertEqual(found, [])


class Outcomes(unittest.TestCase):
    def test_a_blank_result_is_the_json_s_template(self):
        d = LabResult.blank("02_naive", CFG.lab("02_naive"), "gpu").to_dict()
        self.assertEqual(list(d), ["lab", "title", "status", "summary", "points", "max_points", "build", "static",
                                   "correctness", "sanitizer", "speed"])
        self.assertEqual(d["build"], {"ok": False, "seconds": 0.0, "message": ""})
        self.assertEqual(d["static"], {"ok": False, "violations": []})
        self.assertEqual(list(d["correctness"]), ["passed", "total", "points", "max", "failures", "note",
                                                  "variants", "algorithm"])
        self.assertEqual(list(d["sanitizer"]), ["status", "points", "max", "checks", "note"])
        self.assertEqual(list(d["speed"]), ["status", "points", "max", "ratio", "metric", "student_ms",
                                            "reference_ms", "gbps", "serial_ms", "speedup_vs_serial",
                                            "bench_n", "note", "rounds", "spread"])
        self.assertEqual((d["status"], d["max_points"], d["sanitizer"]["status"], d["speed"]["max"]),
                         ("graded", 100, "not run", 30))
        cpu = LabResult.blank("02_naive", CFG.lab("02_naive"), "cpu").to_dict()
        self.assertEqual((cpu["max_points"], cpu["sanitizer"]["max"], cpu["speed"]["max"]), (60, 0, 0))
        self.assertIs(type(d["status"]), str)  # plain strings in the dict, not the enum

    def test_outcomes_are_frozen(self):
        c = CorrectnessOutcome(3, 4)
        with self.assertRaises(dataclasses.FrozenInstanceError):
            c.passed = 4
        with self.assertRaises(dataclasses.FrozenInstanceError):
            graded().speed.status = Status.FAILED

    def test_static_note_and_deferred_violations(self):
        s = StaticOutcome(ok=True, note="nvcc not found", deferred=("launches no kernel (x)",))
        self.assertEqual(s.to_dict(), {"ok": True, "violations": [], "note": "nvcc not found"})
        r = s.refused(s.deferred)
        self.assertEqual(r.to_dict(), {"ok": False, "violations": ["launches no kernel (x)"],
                                       "note": "nvcc not found"})
        self.assertEqual(r.deferred, ())
        self.assertNotIn("note", StaticOutcome(ok=True).to_dict())

    def test_a_wrong_timed_run_counts_as_a_failed_case_without_changing_correctness(self):
        timed = failure(1 << 20, Status.WRONG, "wrong answer: at n=1048576")
        correctness = CorrectnessOutcome(40, 40)
        res = graded(correctness=correctness,
                     speed=SpeedOutcome(Status.FAILED, "at the benchmark size n=1048576: wrong", metric="tile_ms",
                                        bench_n=1 << 20, failure=timed))
        self.assertEqual(res.correctness, CorrectnessOutcome(40, 40))
        d = res.to_dict()
        self.assertEqual((d["correctness"]["passed"], d["correctness"]["total"]), (39, 40))
        self.assertEqual(d["correctness"]["failures"], [timed.to_dict()])
        self.assertEqual(d["correctness"]["points"], 58.5)
        self.assertEqual(d["speed"]["points"], 0.0)
        self.assertEqual(d["summary"], "1 of 40 cases failed: wrong answer: at n=1048576; "
                                       "speed: at the benchmark size n=1048576: wrong")

    def test_speed_dict_rounds_what_was_measured(self):
        sp = SpeedOutcome(Status.GRADED, metric="ms", bench_n=1 << 20, ratio=1.23456, student_ms=1.23456,
                          reference_ms=1.0, full_ms=1.23456, serial_ms=100.0, speedup=81.00006)
        d = graded(speed=sp).to_dict()["speed"]
        self.assertEqual((d["ratio"], d["speedup_vs_serial"], d["student_ms"]), (1.235, 81.0, 1.23456))
        self.assertEqual(d["gbps"], round(8.0 * (1 << 20) / (1.23456 * 1e6), 2))
        self.assertEqual(d["note"], "1.23x the reference's time (full points at <= 1.25x, none at >= 3x)")

    def test_grade_result_keys(self):
        d = GradeResult(course="c", mode="cpu", seed=5, status=Status.GRADER_ERROR, points=0.0,
                        student="alice", submission_sha256="ab").to_dict()
        self.assertEqual(list(d), ["grader", "course", "mode", "device", "seed", "status", "message", "points",
                                   "max_points", "elapsed_s", "timings", "labs", "student", "submission_sha256"])
        self.assertEqual(d["status"], "grader error")
        self.assertNotIn("student", GradeResult(course="c", mode="gpu", seed=1).to_dict())


class Policy(unittest.TestCase):
    def test_maxima(self):
        self.assertEqual(scoring.maxima(SETTINGS, "gpu"), scoring.Maxima(60, 10, 30, 100))
        self.assertEqual(scoring.maxima(SETTINGS, "cpu"), scoring.Maxima(60, 0, 0, 60))

    def test_a_stopped_lab_scores_nothing(self):
        for status in STOPPED:
            self.assertEqual(graded(status=status).score, scoring.LabScore(), status)

    def test_full_marks(self):
        res = graded()
        self.assertEqual((res.score.correctness, res.score.sanitizer, res.score.speed, res.score.total),
                         (60.0, 10, 30.0, 100.0))
        self.assertEqual(res.summary, "all checks passed")

    def test_sanitizer_points_need_a_passed_case_and_a_clean_or_missing_tool(self):
        none_passed = CorrectnessOutcome(0, 40, (failure(),))
        self.assertEqual(graded(correctness=none_passed).score.sanitizer, 0.0)
        skipped = SanitizerOutcome(Status.SKIPPED, note="compute-sanitizer not found")
        self.assertEqual(graded(sanitizer=skipped).score.sanitizer, 10)
        bad = SanitizerOutcome(Status.FAILED, note="racecheck at n=1024: hazard")
        res = graded(sanitizer=bad)
        self.assertEqual((res.score.sanitizer, res.score.total), (0.0, 90.0))
        self.assertEqual(res.summary, "sanitizer: racecheck at n=1024: hazard")

    def test_speed_curve_and_caps(self):
        def award(**kw):
            base = dict(metric="ms", bench_n=1 << 20, student_ms=1.0, reference_ms=1.0, full_ms=1.0)
            base.update(kw)
            return scoring.speed_award(SpeedOutcome(Status.GRADED, **base), SETTINGS["speed"], 30)
        self.assertEqual(award(ratio=1.25)[0], 30.0)
        self.assertEqual(award(ratio=2.125)[0], 15.0)
        self.assertEqual(award(ratio=3.0)[0], 0.0)
        capped = dict(SETTINGS["speed"], min_speedup=100)
        pts, note = scoring.speed_award(SpeedOutcome(Status.GRADED, metric="ms", ratio=1.0, speedup=50.0),
                                        capped, 30)
        self.assertEqual(pts, 0.0)
        self.assertEqual(note, "speedup 50.0x over the serial lab is below this lab's minimum of 100x")
        self.assertEqual(award(ratio=20.0, too_slow=True), (0.0, ""))
        self.assertEqual(scoring.speed_award(SpeedOutcome(Status.FAILED, "x"), SETTINGS["speed"], 30), (0.0, ""))

    def test_measurement_rules(self):
        self.assertTrue(scoring.too_slow_to_time(6.01, SETTINGS["speed"]))
        self.assertFalse(scoring.too_slow_to_time(6.0, SETTINGS["speed"]))
        self.assertFalse(scoring.too_slow_to_time(None, SETTINGS["speed"]))
        self.assertFalse(scoring.plausible(0.074, 0.1))
        self.assertTrue(scoring.plausible(0.076, 0.1))
        self.assertTrue(scoring.plausible(0.001, None))

    def test_partial_correctness_and_a_hang_in_the_summary(self):
        two = CorrectnessOutcome(38, 40, (failure(), failure(65)))
        res = graded(correctness=two, speed=SpeedOutcome(Status.NOT_GRADED, "not graded: correctness cases failed"))
        self.assertEqual((res.score.correctness, res.score.total), (57.0, 67.0))
        self.assertEqual(res.summary, "2 of 40 cases failed: wrong answer: out[5] expected 6, got 7")
        hung = CorrectnessOutcome(3, 40, (failure(0, Status.TIMEOUT, "timed out"),),
                                  "hangs: the case n=0 dist=ones timed out after 2 s", Status.TIMEOUT)
        self.assertEqual(graded(correctness=hung).summary,
                         "hangs: the case n=0 dist=ones timed out after 2 s (3 of 40 cases passed)")


class StagePieces(unittest.TestCase):
    info = LabInfo(1, "03_x", "x", "tile", "inclusive", 512, 1 << 20, 0, "int32", "add", (), "gpu")

    def plan(self, preset=None, cases=((33, "ones", 7, ("--calls", "2")),) * 4):
        return LabPlan("03_x", "/nonexistent/scan", self.info, tuple(cases), 2.0, (("memcheck", 512),), 60.0, preset)

    def test_each_many_calls_case_starts_a_process_and_every_case_runs_once(self):
        """The many-calls case (--calls other than 2) of each plan is the first case of a chunk,
        as if alone, instead of a process started for it alone; the plans of one binary (a lab's
        variants) share chunks, the cases of a plan that is only reported after the graded ones."""
        two = ("--sizes", "1025,2049", "--calls", "2")
        many = ("--sizes", "1025,1025,33,2563,512,1535", "--calls", "12")
        a = dataclasses.replace(self.plan(cases=[(n, "small", 1, two) for n in range(40)] + [(1025, "small", 9, many)]),
                                lab="03_x")
        b = dataclasses.replace(self.plan(cases=[(1025, "ones", 2, many)]), lab="03_x/other", variant="other")
        r = dataclasses.replace(self.plan(cases=[(n, "alt", 3, two) for n in range(5)]), lab="03_x/rep",
                                variant="rep", graded=False)
        other = dataclasses.replace(self.plan(cases=[(n, "ones", 4, two) for n in range(3)]), lab="04_y",
                                    binary="/nonexistent/other")
        out = chunks({p.lab: p for p in (a, b, r, other)}, jobs=4)
        for items in out:
            self.assertEqual(len({p.binary for p, _ in items}), 1, "one binary per process")
            tiers = [p.graded for p, _ in items]
            self.assertEqual(tiers, sorted(tiers, reverse=True), "reported plans' cases after graded ones")
        firsts = [items[0] for items in out if runs_alone(items[0][1])]
        self.assertEqual(sorted((p.lab, c) for p, c in firsts),
                         [("03_x", (1025, "small", 9, many)), ("03_x/other", (1025, "ones", 2, many))],
                         "each many-calls case runs first in its process")
        self.assertFalse([c for items in out for _, c in items[1:] if runs_alone(c)], "and never later")
        self.assertTrue(any({p.lab for p, _ in items} >= {"03_x/other", "03_x"} for items in out)
                        or any({p.lab for p, _ in items} >= {"03_x/other", "03_x/rep"} for items in out),
                        "a variant's chunk carries other variants' cases too")
        self.assertGreater(len([items for items in out if items[0][0].binary == a.binary]), 2,
                           "the large binary's cases spread over several processes")
        one = chunks({p.lab: p for p in (a, b, r, other)}, jobs=1)
        self.assertEqual([len([x for x in one if x[0][0].binary == p.binary]) for p in (a, other)], [2, 1],
                         "one process per binary and job, or one per many-calls case: not one per plan")
        every = sorted((p.lab, c) for items in out for p, c in items)
        self.assertEqual(every, sorted((p.lab, c) for p in (a, b, r, other) for c in p.cases), "every case once")

    def test_no_sanitizer_process_for_code_the_cases_find_unwritten(self):
        """The sanitizer's runs of a lab wait until its cases show the code is written (or have
        all run): the lab whose every case says "not implemented" starts no sanitizer process,
        the written lab's sanitizer runs once per tool, and every one of its cases runs."""

        class Session:
            def __init__(self, binary):
                self.binary, self.ended = binary, False

            def close(self, timeout):
                self.ended = True
                return True
        ran, sanitized = [], []

        def run_case_in(session, n, dist, seed, limit, options):
            ran.append((session.binary, n))
            if session.binary.endswith("unwritten"):
                session.ended = True
                return Status.NOT_IMPLEMENTED, "not implemented", None
            return Status.OK, "", None

        def run_sanitizer_sizes(sanitizer, tool, binary, sizes, timeout, info, isolated):
            sanitized.append((binary, tool))
            return [(n, Status.CLEAN, "clean") for n, *_ in sizes]
        two = ("--sizes", "33,65", "--calls", "2")
        written = dataclasses.replace(self.plan(cases=[(n, "small", 1, two) for n in range(1, 30)]),
                                      sanitizer_runs=(("memcheck", 512), ("racecheck", 512)))
        unwritten = dataclasses.replace(written, lab="04_y", binary="/nonexistent/unwritten")
        with mock.patch.object(stage_cases.ev, "case_session", Session), \
                mock.patch.object(stage_cases.ev, "run_case_in", run_case_in), \
                mock.patch.object(stage_cases.ev, "run_sanitizer_sizes", run_sanitizer_sizes):
            runs = stage_cases.run_plans({p.lab: p for p in (written, unwritten)}, 4, "cs", 1, lambda msg: None)
        self.assertEqual(sorted(sanitized), [(written.binary, "memcheck"), (written.binary, "racecheck")])
        self.assertEqual(runs["04_y"].stop, Status.NOT_IMPLEMENTED)
        self.assertEqual(len(runs["03_x"].cases), 29)
        self.assertTrue(all(c[4] == Status.OK for c in runs["03_x"].cases))

    def test_sanitizer_presets(self):
        host = dataclasses.replace(self.info, shape="host", tile=0)
        self.assertEqual(sanitizer_preset(self.info, "cpu", True, "cs").status, Status.NOT_GRADED)
        self.assertEqual(sanitizer_preset(host, "gpu", True, "cs").status, Status.PASSED)
        self.assertEqual(sanitizer_preset(self.info, "gpu", False, "cs").note, "skipped (--no-sanitizer)")
        self.assertIn("not found", sanitizer_preset(self.info, "gpu", True, None).note)
        self.assertIsNone(sanitizer_preset(self.info, "gpu", True, "cs"))

    def test_correctness_from_runs(self):
        ok = (33, "ones", 7, ("--calls", "2"), Status.OK, "")
        bad = (65, "alt", 8, ("--calls", "2"), Status.WRONG, "wrong answer: x")
        c = correctness_outcome(self.plan(), LabRuns((ok, ok, ok, bad)), "cpu")
        self.assertEqual((c.passed, c.total, c.note, c.stopped_by), (3, 4, "", None))
        self.assertEqual(c.failures[0].to_dict(), {
            "n": 65, "dist": "alt", "seed": 8, "kind": "wrong", "options": "--calls 2", "message": "wrong answer: x",
            "reproduce": "make run LAB=03 CPU=1 ARGS='--n 65 --dist alt --seed 8 --reps 0 --calls 2'"})
        hang = (0, "small", 1, (), Status.TIMEOUT, "timed out after 2 s of CPU time, and again alone after 6 s "
                                                   "of CPU time (the process group was killed)")
        c = correctness_outcome(self.plan(), LabRuns((hang, ok), stop=Status.TIMEOUT), "gpu")
        # the note is the case's own message: which limits it met, the first and the one alone
        self.assertEqual(c.note, "hangs: the case n=0 dist=small timed out after 2 s of CPU time, and again "
                                 "alone after 6 s of CPU time (the process group was killed); "
                                 "the lab's other 2 cases were not run")
        ni = correctness_outcome(self.plan(), LabRuns((bad,), stop=Status.NOT_IMPLEMENTED), "gpu")
        self.assertEqual((ni.passed, ni.total, ni.failures, ni.note), (0, 4, (), "not implemented"))

    def test_sanitizer_from_runs(self):
        clean = ("memcheck", 512, Status.CLEAN, "memcheck at n=512: no errors")
        slow = ("racecheck", 512, Status.TIMEOUT, "racecheck at n=512 timed out after 60 s")
        errs = ("racecheck", 1025, Status.ERRORS, "racecheck at n=1025: hazard")
        ok = CorrectnessOutcome(4, 4)
        s = sanitizer_outcome(self.plan(), LabRuns(checks=(clean, slow)), ok, "gpu")
        self.assertEqual((s.status, s.note), (Status.PASSED, "inconclusive, not held against you: " + slow[3]))
        self.assertEqual(s.checks[0], SanitizerCheck(*clean))
        s = sanitizer_outcome(self.plan(), LabRuns(checks=(clean, slow, errs)), ok, "gpu")
        self.assertEqual((s.status, s.note), (Status.FAILED, errs[3]))
        hung = CorrectnessOutcome(0, 4, stopped_by=Status.TIMEOUT)
        self.assertEqual(sanitizer_outcome(self.plan(), LabRuns(), hung, "gpu").status, Status.FAILED)
        # a sanitizer run that got in before the hang was confirmed changes nothing (a race)
        s = sanitizer_outcome(self.plan(), LabRuns(checks=(clean,)), hung, "gpu")
        self.assertEqual(s.status, Status.FAILED)
        self.assertIn("the code hangs", s.note)
        self.assertEqual(sanitizer_outcome(self.plan(), LabRuns(checks=(clean, errs)), hung, "gpu").note, errs[3])
        preset = SanitizerOutcome(Status.SKIPPED, note="skipped (--no-sanitizer)")
        self.assertEqual(sanitizer_outcome(self.plan(preset), LabRuns(), hung, "gpu"), preset)
        ni = CorrectnessOutcome(0, 4, stopped_by=Status.NOT_IMPLEMENTED)
        self.assertEqual(sanitizer_outcome(self.plan(), LabRuns(checks=(clean,)), ni, "gpu"),
                         SanitizerOutcome(Status.NOT_GRADED, note="not implemented"))

    def test_variants_combine_into_one_lab_outcome(self):
        # lab 10: four applications, each graded with its own 15 points; radix_sort (the default,
        # timed) unwritten, compact failing one case of 4, csr and split_sort passing
        ok = (33, "ones", 7, ("--calls", "2"), Status.OK, "")
        bad = (65, "alt", 8, ("--calls", "2"), Status.WRONG, "wrong: count 3 expected 4")
        ni = (33, "ones", 7, ("--calls", "2"), Status.NOT_IMPLEMENTED, "variant radix_sort returns ...")
        cases = ((33, "ones", 7, ("--calls", "2")),) * 4
        plans = [dataclasses.replace(self.plan(cases=cases), lab=f"10_x/{v}" if v else "10_x", variant=v, points=15.0)
                 for v in ("", "compact", "csr", "split_sort")]
        info = dataclasses.replace(self.info, variants=tuple(Variant(v, "", False) for v in
                                                             ("radix_sort", "compact", "csr", "split_sort")))
        plans = [dataclasses.replace(p, info=info) for p in plans]
        runs = {"10_x": LabRuns((ni,), stop=Status.NOT_IMPLEMENTED), "10_x/compact": LabRuns((ok, ok, ok, bad)),
                "10_x/csr": LabRuns((ok,) * 4), "10_x/split_sort": LabRuns((ok,) * 4)}
        c, san = lab_outcomes(plans, runs, "gpu")
        self.assertEqual((c.passed, c.total, c.stopped_by), (11, 16, None))
        self.assertEqual([v.name for v in c.variants], ["radix_sort", "compact", "csr", "split_sort"])
        self.assertFalse(c.variants[0].written)
        self.assertEqual(c.variants[0].line(), "radix_sort: not written (returns LAB_NOT_IMPLEMENTED); graded "
                                               "(worth 15 points)")
        self.assertIn("compact: written, 1 of 4 cases fail (n=65 dist=alt: wrong: count 3", c.variants[1].line())
        # partial credit per application: 0 + 15 * 3/4 + 15 + 15
        self.assertEqual(scoring.correctness_award(c, SpeedOutcome(), 60), 41.25)
        # speed is only for a lab all of whose graded variants pass
        stage = SpeedStage(CFG, {}, None, 1, "gpu", lambda *a: None, {})
        self.assertEqual(stage.run("10_x", "/x", c).note,
                         "not graded: correctness cases failed (radix_sort, compact)")
        # every graded variant unwritten: the lab is not implemented
        all_ni = {k: LabRuns((ni,), stop=Status.NOT_IMPLEMENTED) for k in runs}
        self.assertEqual(lab_outcomes(plans, all_ni, "gpu")[0].stopped_by, Status.NOT_IMPLEMENTED)
        # a reported variant (lab 03's two_barrier) never counts, but is named
        two = dataclasses.replace(plans[1], lab="03_x/two_barrier", variant="two_barrier", graded=False, points=None)
        main = dataclasses.replace(plans[0], points=None)
        c, _ = lab_outcomes([main, two], {"10_x": LabRuns((ok,) * 4),
                                          "03_x/two_barrier": LabRuns((ok, ok, ok, bad))}, "cpu")
        self.assertEqual((c.passed, c.total), (4, 4))
        self.assertIn("two_barrier: written, 1 of 4 cases fail", c.variants[1].line())
        self.assertIn("not graded", c.variants[1].line())
        # a reported variant whose cases pass but whose racecheck run found a hazard is named
        race = ("racecheck", 513, Status.ERRORS, "variant two_barrier: racecheck at n=513: it said: hazard")
        c, san = lab_outcomes([main, two], {"10_x": LabRuns((ok,) * 4),
                                            "03_x/two_barrier": LabRuns((ok,) * 4, checks=(race,))}, "gpu")
        self.assertEqual(c.variants[1].line(), "two_barrier: written, all 4 cases pass; racecheck at n=513: it "
                                               "said: hazard; not graded "
                                               "(reported only: the lab's points come from its graded variants)")
        self.assertNotEqual(san.status, Status.FAILED, "a reported variant's race costs no points")

    def test_a_gpu_grade_s_ordering_cases_in_cpu_mode(self):
        """A lab with correctness.cpu_ordering (the single-pass labs): a GPU grade also runs, with
        the lab's CPU-mode build, its cases of more tiles than CPU mode keeps resident (up to
        max_n; the many-calls case for the default variant only), one plan per graded variant;
        their verdicts count with that variant's, each failure named as CPU mode's with the
        CPU=1 command that reruns it."""
        from gradelib import evaluate as ev
        info = dataclasses.replace(self.info, id="08_x", tile=6144, variants=(
            Variant("lookback", "", False), Variant("max", "", False), Variant("max_two_pass", "", False)))
        settings = CFG.lab("08_decoupled_lookback")
        self.assertEqual(settings["correctness"]["cpu_ordering"], {"max_n": 65537})
        for lab in ("01_serial", "03_kogge_stone", "07_hierarchical"):
            self.assertIsNone(CFG.lab(lab)["correctness"]["cpu_ordering"], lab)
        cases = ev.ordering_cases(info, settings, 7)
        self.assertTrue(cases)
        several = ev.CPU_RESIDENT_BLOCKS * 6144
        for n, _, _, options in cases:
            sizes = [int(x) for x in options[options.index("--sizes") + 1].split(",")]
            self.assertLessEqual(max(sizes), 65537)
            self.assertTrue(n > several or (ev.is_many_calls(options) and max(sizes) > several), (n, options))
        self.assertEqual(sum(ev.is_many_calls(c[3]) for c in cases), 1)
        self.assertFalse(any(ev.is_many_calls(c[3]) for c in ev.ordering_cases(info, settings, 7, "max")))
        self.assertTrue(all(c[3][-2:] == ("--variant", "max") for c in ev.ordering_cases(info, settings, 7, "max")))
        self.assertEqual(ev.ordering_cases(info, CFG.lab("07_hierarchical"), 7), [])
        # the plans: one per graded variant, none without a CPU-mode build
        main = dataclasses.replace(self.plan(), lab="08_x", info=info)
        other = dataclasses.replace(main, lab="08_x/max", variant="max")
        reported = dataclasses.replace(main, lab="08_x/max_two_pass", variant="max_two_pass", graded=False)
        self.assertEqual(stage_cases.cpu_plans((main, other, reported), None, settings, 7), ())
        order = stage_cases.cpu_plans((main, other, reported), "/cpu/scan", settings, 7)
        self.assertEqual([(p.lab, p.variant, p.binary, p.on_cpu) for p in order],
                         [("08_x@cpu", "", "/cpu/scan", True), ("08_x/max@cpu", "max", "/cpu/scan", True)])
        # their verdicts count with their variant's
        ok = (33, "ones", 7, ("--calls", "2"), Status.OK, "")
        n, dist, seed, options = order[0].cases[0]
        bad = (n, dist, seed, options, Status.WRONG, "wrong answer: call 1 of 3: out[12288] expected 4, got 5")
        runs = {"08_x": LabRuns((ok,) * 4), "08_x/max": LabRuns((ok,) * 4), "08_x/max_two_pass": LabRuns((ok,) * 4),
                "08_x@cpu": LabRuns((bad,) + tuple(c + (Status.OK, "") for c in order[0].cases[1:])),
                "08_x/max@cpu": LabRuns(tuple(c + (Status.OK, "") for c in order[1].cases))}
        c, _ = lab_outcomes([main, other, reported] + list(order), runs, "gpu")
        self.assertEqual((c.passed, c.total), (8 + len(cases) + len(order[1].cases) - 1,
                                               8 + len(cases) + len(order[1].cases)))
        self.assertEqual([v.name for v in c.variants], ["lookback", "max", "max_two_pass"])
        self.assertEqual((c.variants[0].passed, c.variants[0].total), (4 + len(cases) - 1, 4 + len(cases)))
        f = c.failures[0]
        self.assertTrue(f.message.startswith("in CPU mode, whose scheduler pauses a block between any two"))
        self.assertIn("wrong answer: call 1 of 3", f.message)
        self.assertTrue(f.reproduce.startswith("make run LAB=08 CPU=1 ARGS="), f.reproduce)
        # one variant alone: its GPU cases and its ordering cases together
        c, _ = lab_outcomes([main, order[0]], runs, "gpu")
        self.assertEqual((c.passed, c.total, len(c.failures)), (4 + len(cases) - 1, 4 + len(cases), 1))
        # a GPU variant that is not implemented is not counted twice
        c, _ = lab_outcomes([main, order[0]], dict(runs, **{"08_x": LabRuns((ok,), stop=Status.NOT_IMPLEMENTED)}),
                            "gpu")
        self.assertEqual((c.stopped_by, c.total), (Status.NOT_IMPLEMENTED, 4))

    def test_the_algorithm_case_and_its_part_of_the_points(self):
        """A graded variant that the course's descriptor asks an algorithm of gets one algorithm
        case (n = 70000, --algorithm), run by the lab's CPU-mode build with the counting hooks in
        a plan of its own; what its report names decides algorithm_points of the correctness
        points, the cases the rest. A report without its "algorithm" is a variant not
        recognised; a lab without the build (no plan) gives every point to its cases."""
        from gradelib import evaluate as ev
        info = dataclasses.replace(self.info, id="04_x", tile=256, variants=(
            Variant("brent_kung", "", False, "brent_kung"), Variant("other", "", False, "brent_kung")))
        main = dataclasses.replace(self.plan(cases=((33, "ones", 7, ("--calls", "2")),) * 9), lab="04_x", info=info)
        reported = dataclasses.replace(main, lab="04_x/other", variant="other", graded=False)
        asked = {"brent_kung": "brent_kung", "other": "brent_kung"}
        self.assertEqual(stage_cases.algorithm_plans((main, reported), None, 7, asked), ())
        self.assertEqual(stage_cases.algorithm_plans((main, reported), "/p/scan", 7, {}), ())
        plans = stage_cases.algorithm_plans((main, reported), "/p/scan", 7, asked)
        self.assertEqual([(p.lab, p.binary, p.on_cpu, len(p.cases)) for p in plans],
                         [("04_x@algorithm", "/p/scan", True, 1)])
        n, dist, _, options = plans[0].cases[0]
        self.assertEqual((n, dist, options), (ev.ALGORITHM_N, "small", ("--algorithm",)))
        ok = (33, "ones", 7, ("--calls", "2"), Status.OK, "")
        alg_ok = plans[0].cases[0] + (Status.OK, "")
        found = {"asked": "brent_kung", "found": "kogge_stone", "same": False,
                 "measured": "8 steps after the tile's load (log2 of the tile: 8), 8.0 updates per element",
                 "verdict": "this is Kogge-Stone (T*log2(T) work, log2(T) steps); brent_kung asks for Brent-Kung's"}
        for report, same in ((dict(found, found="brent_kung", same=True), True), (found, False), (None, False),
                             ({"asked": "brent_kung"}, False)):
            runs = {"04_x": LabRuns((ok,) * 9), "04_x/other": LabRuns((ok,)),
                    "04_x@algorithm": LabRuns((alg_ok,), algorithm=report)}
            c, _ = lab_outcomes([main, reported] + list(plans), runs, "gpu")
            self.assertEqual((c.passed, c.total), (10, 10))
            self.assertEqual([(a.variant, a.same) for a in c.algorithm], [("brent_kung", same)])
            res = graded(correctness=c)
            self.assertEqual((res.score.correctness, res.score.algorithm, res.score.algorithm_max),
                             (60.0 if same else 50.0, 10.0 if same else 0.0, 10))
            if not same:
                self.assertIn("algorithm (0 of 10 points): brent_kung: ", res.summary)
                self.assertIn("this is Kogge-Stone" if report == found else "not recognised", res.summary)
            self.assertEqual(res.to_dict()["correctness"]["algorithm"]["checks"][0]["same"], same)
        # half the cases: the right algorithm costs nothing (30 of 60), the wrong one its part of
        # what the cases earned (30 less a sixth); a wrong answer in the algorithm case still
        # names the algorithm; the part set to 0: all 60 from the cases
        runs = {"04_x": LabRuns((ok,) * 4 + (ok[:4] + (Status.WRONG, "wrong"),) * 5), "04_x/other": LabRuns((ok,)),
                "04_x@algorithm": LabRuns((alg_ok,), algorithm=dict(found, found="brent_kung", same=True))}
        c, _ = lab_outcomes([main, reported] + list(plans), runs, "gpu")
        self.assertEqual(graded(correctness=c).score.correctness, 30.0)
        wrong = dict(runs, **{"04_x@algorithm": LabRuns((alg_ok[:4] + (Status.WRONG, "wrong"),), algorithm=found)})
        c2, _ = lab_outcomes([main, reported] + list(plans), wrong, "gpu")
        self.assertEqual((c2.passed, c2.total, graded(correctness=c2).score.correctness), (4, 10, 20.0))
        off = dict(SETTINGS, correctness=dict(SETTINGS["correctness"], algorithm_points=0))
        self.assertEqual(scoring.algorithm_award(c, off, 60), (0.0, 0.0))
        self.assertEqual(scoring.algorithm_award(dataclasses.replace(c, algorithm=()), SETTINGS, 60), (0.0, 0.0))

    def test_speed_is_only_timed_after_every_case_passed(self):
        def never(*a):
            raise AssertionError("nothing may run")
        stage = SpeedStage(CFG, {}, never, 1, "gpu", never, {})
        self.assertEqual(stage.run("03_x", "/x", CorrectnessOutcome(0, 4, stopped_by=Status.NOT_IMPLEMENTED)),
                         SpeedOutcome(Status.NOT_GRADED, "not implemented"))
        self.assertEqual(stage.run("03_x", "/x", CorrectnessOutcome(3, 4)).note,
                         "not graded: correctness cases failed")
        self.assertIn("no reference solution", stage.run("03_x", "/x", CorrectnessOutcome(4, 4)).note)


class FormatRegistry(unittest.TestCase):
    def test_the_course_s_formats(self):
        self.assertEqual(formats.names(), ("table", "json", "gradescope", "junit", "prairielearn"))
        self.assertEqual(formats.side_files(), {"gradescope": "gradescope.json", "junit": "junit.xml"})
        self.assertEqual(formats.DEFAULT, formats.names()[0])
        for name in formats.names():
            self.assertIn(f"{name}: ", formats.help_text())

    def test_a_registered_format_is_selectable_and_gets_its_side_file(self):
        import grade
        lines = formats.Format("lines", "one line per lab", lambda r, colour=False:
                               "".join(f"{lab['lab']} {lab['points']}\n" for lab in r["labs"]), side_file="lines.txt")
        formats.register(lines)
        try:
            args, _ = grade.parse_args(["--format", "lines"])
            self.assertEqual(args.format, "lines")
            self.assertIn("lines: one line per lab", grade.parse_args([])[1].format_help())
            self.assertIn("x.lines.txt", submissions.result_files("x"))
            result = {"labs": [LabResult.blank("02_naive", CFG.lab("02_naive"), "gpu").to_dict()]}
            with tempfile.TemporaryDirectory() as d:
                batch.write_student_files(result, d, "alice", "lines", CFG)
                with open(os.path.join(d, "alice.lines.txt")) as f:
                    self.assertEqual(f.read(), "02_naive 0.0\n")
                self.assertTrue(os.path.exists(os.path.join(d, "alice.json")))
        finally:
            formats.unregister("lines")
        self.assertNotIn("lines", formats.names())
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            grade.parse_args(["--format", "lines"])


if __name__ == "__main__":
    unittest.main()
