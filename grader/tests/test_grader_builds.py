"""The grader with real builds, in CPU mode so that this runs without a GPU: the harness's private
report channel (a graded run's socket) and its atexit check against a lab that prints a result of
its own and calls exit(0), and what a CPU-mode grade says when nvcc is missing."""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import fakes
import fixturelib
from gradelib import build, case_outcomes, config, evaluate as ev, grading
from gradelib.checks import objects, source
from gradelib.status import Status

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
# its own: modules may run at once
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "builds")
FORGED = os.path.join(WORK, "forged_result", "02_naive", "scan.cu")  # the fixture, written out


def have_cpu_mode():
    return (shutil.which("make") and (shutil.which("c++") or shutil.which("g++"))
            and os.path.exists(os.path.join(ROOT, "common", "cpu")))


class ReportChannel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not have_cpu_mode():
            raise unittest.SkipTest("make, a C++ compiler or CPU mode is missing")
        b = build.Builder(ROOT, os.path.join(WORK, "build"), "cpu", timeout=300)
        b.prepare()
        fixturelib.write("forged_result", os.path.join(WORK, "forged_result"))
        cls.good = b.build(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"),
                           os.path.join(WORK, "good"), lab="02_naive")
        cls.forged = b.build(FORGED, os.path.join(WORK, "forged"), lab="02_naive")
        if not (cls.good.ok and cls.forged.ok):
            raise AssertionError(cls.good.message + cls.forged.message)

    def run_bin(self, binary, *args):
        env = dict(os.environ, CPU_SCHED_QUIET="1")
        return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, env=env)

    def test_the_report_goes_to_the_channel_only(self):
        r = ev.run_lab([self.good.binary], 60, case=ev.case_line(1000, "alt", 4))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn('"status"', r.stdout)
        rep = json.loads(r.report)
        self.assertEqual((rep["status"], rep["n"], rep["seed"], rep["dist"]), ("ok", 1000, 4, "alt"))
        self.assertEqual(ev.run_case(self.good.binary, 1000, "alt", 4, 60)[0], "ok")

    def test_without_the_option_the_report_is_on_stdout(self):
        p = self.run_bin(self.good.binary, "--n", "100", "--reps", "0", "--json")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(json.loads(p.stdout)["status"], "ok")

    def test_the_old_report_fd_option_is_a_usage_error(self):
        for args in (["--report-fd", "97"], ["--report-fd"], ["--report-fd=x"]):  # gone: the judge's socket
            p = self.run_bin(self.good.binary, "--n", "100", *args)
            self.assertEqual(p.returncode, ev.EXIT_USAGE, args)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_forged_line_then_exit_0_is_caught(self):
        # the static checks let it through (exit() is not forbidden: nvcc's own host code calls
        # it; the forged line comes from a kernel's printf)
        static = config.load(os.path.join(fakes.GRADER, "config.json")).static
        with open(FORGED) as f:
            self.assertEqual(source.check_source(f.read(), static), [])
        self.assertEqual(objects.check_object(self.forged.obj, static, True, False), ([], ""))
        p = self.run_bin(self.forged.binary, "--n", "1000", "--reps", "0", "--json")
        self.assertEqual(p.returncode, ev.EXIT_TAMPERED, p.stdout + p.stderr)
        self.assertIn('"status":"ok"', p.stdout)  # the forged line
        self.assertIn("before the harness reported a result", p.stderr)
        kind, msg, rep = ev.run_case(self.forged.binary, 1000, "small", 1, 60)
        self.assertEqual(kind, "tampered", msg)
        self.assertIsNone(rep)
        # n = 0 returns before the cheat: a legitimate pass, exit code 0 and the harness's report
        self.assertEqual(ev.run_case(self.forged.binary, 0, "small", 1, 60)[0], "ok")


class GradersInterpreter(unittest.TestCase):
    """CPU mode's build rewrites scan.cu with common/cpu/rewrite.py under the grader's own
    interpreter, never the python3 on PATH (a version manager's shim costs ~0.4 CPU-s a run; one
    that is broken must not fail a build)."""

    def test_a_broken_python3_on_path_does_not_fail_a_cpu_mode_build(self):
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        b = build.Builder(ROOT, os.path.join(WORK, "interpreter"), "cpu", timeout=300)
        b.prepare()
        shim = os.path.join(WORK, "broken-python")
        os.makedirs(shim, exist_ok=True)
        with open(os.path.join(shim, "python3"), "w") as f:
            f.write("#!/bin/sh\necho 'this python3 must not run' >&2\nexit 3\n")
        os.chmod(os.path.join(shim, "python3"), 0o755)
        with mock.patch.dict(os.environ, {"PATH": shim + os.pathsep + os.environ["PATH"]}):
            r = b.build(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"),
                        os.path.join(WORK, "interpreter", "02"), lab="02_naive")
        self.assertTrue(r.ok, r.message)


class ReusedBuilds(unittest.TestCase):
    def test_reuse_only_an_unchanged_build(self):
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        b = build.Builder(ROOT, os.path.join(WORK, "build"), "cpu", timeout=300)
        b.prepare()
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "scan.cu")
            shutil.copyfile(os.path.join(ROOT, "solutions", "01_serial", "scan.cu"), src)
            out = os.path.join(tmp, "out")
            first = b.build(src, out, reuse=True, lab="01_serial")
            self.assertTrue(first.ok, first.message)
            self.assertGreater(first.seconds, 0)
            self.assertEqual(b.build(src, out, reuse=True, lab="01_serial").seconds, 0)  # kept
            with open(first.obj, "ab") as f:  # an object changed since: built again
                f.write(b"x")
            self.assertGreater(b.build(src, out, reuse=True, lab="01_serial").seconds, 0)
            with open(src, "a") as f:  # another source: built again
                f.write("\n")
            self.assertGreater(b.build(src, out, reuse=True, lab="01_serial").seconds, 0)
            self.assertGreater(b.build(src, out, lab="01_serial").seconds, 0)  # without reuse: always built


class BuiltOnOtherLabs(unittest.TestCase):
    """Lab 10 links the submission's lab 08 and lab 07 objects (Builder.build's bases): it runs
    on lab 08's scan, on lab 07's when lab 08 is only a stub (did not build, or refused), and says
    "finish lab 08 or lab 07" when both are stubs. A kernel that lab 07 and lab 10 both name
    stays two kernels (the Makefile makes the base objects' symbols local)."""

    @classmethod
    def setUpClass(cls):
        if not have_cpu_mode():
            raise unittest.SkipTest("make, a C++ compiler or CPU mode is missing")
        cls.b = build.Builder(ROOT, os.path.join(WORK, "build"), "cpu", timeout=300)
        cls.b.prepare()
        cls.objs = {}
        for lab in ("07_hierarchical", "08_decoupled_lookback"):
            r = cls.b.build(os.path.join(ROOT, "solutions", lab, "scan.cu"),
                            os.path.join(WORK, "bases", lab), reuse=True, lab=lab)
            if not r.ok:
                raise AssertionError(r.message)
            cls.objs[lab] = r.obj

    def lab10(self, bases, name, src=None):
        r = self.b.build(src or os.path.join(ROOT, "solutions", "10_applications", "scan.cu"),
                         os.path.join(WORK, "lab10", name), lab="10_applications", bases=bases)
        self.assertTrue(r.ok, r.message)
        return r.binary

    def run_lab(self, binary, *args):
        p = subprocess.run([binary, "--n", "5000", "--reps", "0", "--json", *args], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, CPU_SCHED_QUIET="1"))
        return json.loads(p.stdout.strip().splitlines()[-1])

    def test_on_lab_08_then_lab_07_then_neither(self):
        both = self.lab10({"08_decoupled_lookback": self.objs["08_decoupled_lookback"],
                           "07_hierarchical": self.objs["07_hierarchical"]}, "both")
        # the variants built on the student's scan (the reference's compact and radix_sort are
        # single-pass kernels of their own, which run on neither base)
        self.assertEqual(self.run_lab(both, "--variant", "compact_on_scan")["status"], "ok")
        only07 = self.lab10({"08_decoupled_lookback": None,
                             "07_hierarchical": self.objs["07_hierarchical"]}, "only07")
        for v in ("compact_on_scan", "radix_sort_on_scan", "csr"):
            self.assertEqual(self.run_lab(only07, "--variant", v)["status"], "ok", v)
        neither = self.lab10({"08_decoupled_lookback": None, "07_hierarchical": None}, "neither")
        self.assertEqual(self.run_lab(neither, "--variant", "compact")["status"], "ok")
        rep = self.run_lab(neither, "--variant", "compact_on_scan")
        self.assertEqual(rep["status"], "not_implemented")
        self.assertIn("finish lab 08 or lab 07", rep["message"])
        self.assertEqual(rep["reason"], "base_unwritten")  # the code the grader reads, not the text
        # judged (the lab process sends the reason to the judge, which reports it), as graded
        kind, msg, rep = ev.run_case(neither, 5000, "small", 7, 120, ("--variant", "compact_on_scan"))
        self.assertEqual((kind, rep["reason"]), (Status.NOT_IMPLEMENTED, "base_unwritten"), msg)
        self.assertIn("finish lab 08 or lab 07", msg)
        runs = {"10_applications": case_outcomes.LabRuns(stop=Status.NOT_IMPLEMENTED, reason=rep["reason"])}
        plan = mock.Mock(lab="10_applications")
        self.assertTrue(grading._base_unwritten([plan], runs))
        runs["10_applications"] = case_outcomes.LabRuns(stop=Status.NOT_IMPLEMENTED, reason="todo")
        self.assertFalse(grading._base_unwritten([plan], runs))

    def test_a_kernel_named_as_in_lab_07_stays_lab_10s(self):
        # lab 07's reference defines tile_reduce_kernel(const int *, int *, size_t, bool); a lab 10
        # with a kernel of the same name and signature that counts kept elements must run its own
        text = open(os.path.join(ROOT, "solutions", "10_applications", "scan.cu")).read()
        text = text.replace("compact_count_kernel(const int *in, size_t n, int *counts)",
                            "tile_reduce_kernel(const int *in, int *counts, size_t n, bool)")
        text = text.replace("compact_count_kernel<<<(unsigned)tiles, APPS_THREADS>>>(d_in, n, counts)",
                            "tile_reduce_kernel<<<(unsigned)tiles, APPS_THREADS>>>(d_in, counts, n, false)")
        self.assertIn("tile_reduce_kernel<<<", text)
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "scan.cu")
            with open(src, "w") as f:
                f.write(text)
            binary = self.lab10({"08_decoupled_lookback": self.objs["08_decoupled_lookback"],
                                 "07_hierarchical": self.objs["07_hierarchical"]}, "same-name", src)
        self.assertEqual(self.run_lab(binary, "--variant", "compact")["status"], "ok")


class ContractBreaks(unittest.TestCase):
    """A scan.cu that breaks its lab's contract with the course (common/course/NN_name.h and the
    descriptor common/course/NN_name.c) fails to link; the build's message starts with one line
    that says what is wrong."""

    def build(self, lab, text, name):
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        b = build.Builder(ROOT, os.path.join(WORK, "build"), "cpu", timeout=300)
        b.prepare()
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "scan.cu")
            with open(src, "w") as f:
                f.write(text)
            return b.build(src, os.path.join(WORK, "contract", name), f"{lab}/scan.cu", lab=lab)

    def test_a_missing_entry_point(self):
        with open(os.path.join(ROOT, "solutions", "03_kogge_stone", "scan.cu")) as f:
            text = f.read().replace("lab_result ks_two_barrier_scan(", "lab_result ks_two_barrier_scan_v2(")
        r = self.build("03_kogge_stone", text, "missing")
        self.assertFalse(r.ok)
        self.assertEqual(r.message.splitlines()[0], "scan.cu must define ks_two_barrier_scan "
                         "(declared in common/course/03_kogge_stone.h)")

    def test_a_descriptor_left_in_scan_cu(self):
        with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu")) as f:
            text = f.read() + (
                'static const lab_variant VARIANTS[] = {{.name = "naive", .summary = "mine", .op = LAB_OP_ADD, '
                '.fn = {.scan = naive_scan}, .temp_bytes = NULL}};\n'
                'extern "C" const lab_info LAB = {"02_naive", "Naive parallel scan", LAB_WHOLE, '
                'SCAN_INCLUSIVE, 0, (size_t)1 << 20, (size_t)1 << 16, 1, VARIANTS};\n')
        r = self.build("02_naive", text, "with_lab")
        self.assertFalse(r.ok)
        self.assertEqual(r.message.splitlines()[0], "scan.cu must not define LAB: the course's descriptor "
                         "(common/course/02_naive.c) does; delete the VARIANTS table and LAB from scan.cu")

    def test_a_course_function_defined_again(self):
        # lab 10 calls apps_scan, which the course defines on the student's lab 08: a scan.cu
        # that brings its own gets one line saying so
        with open(os.path.join(ROOT, "solutions", "10_applications", "scan.cu")) as f:
            text = f.read() + ('extern "C" lab_result apps_scan(const int *, int *, size_t, void *)\n'
                               '{\n    return LAB_OK;\n}\n')
        r = self.build("10_applications", text, "own_apps_scan")
        self.assertFalse(r.ok)
        self.assertEqual(r.message.splitlines()[0], "scan.cu must not define apps_scan: the course "
                         "defines it (common/course/10_applications.c, declared in "
                         "common/course/10_applications.h); call it instead")


class StaticFailureIsNeverRun(unittest.TestCase):
    def test_a_lab_that_fails_a_static_check_is_not_run(self):
        """The code below would leave a marker file from a constructor, which runs before main
        (and so before --list): the constructor (and fopen) fail the static checks, and the binary
        must never run."""
        with tempfile.TemporaryDirectory() as tmp:
            marker = os.path.join(tmp, "ran")
            with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu")) as f:
                src = f.read()
            src = ("#include <stdio.h>\n__attribute__((constructor)) static void touch(void)\n"
                   "{\n    FILE *f = fopen(\"%s\", \"w\");\n    if (f)\n        fputs(\"x\", f);\n}\n" % marker) + src
            res = build_lab02_source(self, "constructor", src.encode())
            self.assertEqual(res.status, "static check failed", res.summary)
            violations = "\n".join(res.static.violations)
            # the CPU-mode object's constructor, and fopen (the allowlist, with or without nvcc)
            self.assertIn("code that runs before main (touch)", violations)
            self.assertIn("lab code may not call fopen (line 4)", violations)
            self.assertIsNone(res.binary)
            self.assertFalse(os.path.exists(marker), "the binary of a static-check failure was run")


def build_lab02_source(test, name, data):
    """The grader's LabResult of data (the bytes of a lab 02 scan.cu) built as it builds a
    submission, in CPU mode (static checks and build; nothing run)."""
    if not have_cpu_mode():
        test.skipTest("make, a C++ compiler or CPU mode is missing")
    from gradelib.grading import Grader
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "02_naive"))
        path = os.path.join(tmp, "02_naive", "scan.cu")
        with open(path, "wb") as f:
            f.write(data)
        cfg = config.load(os.path.join(fakes.GRADER, "config.json"))
        g = Grader(ROOT, cfg, WORK, mode="cpu", labs=["02_naive"], jobs=1)
        g.builder.prepare()
        return g.build_submission(name, {"02_naive": path})["02_naive"]


def grade_lab02_source(test, name, data):
    """Builds data (the bytes of a lab 02 scan.cu) as the grader builds a submission, in CPU mode,
    and checks that it builds, is graded and scans one case right."""
    res = build_lab02_source(test, name, data)
    test.assertTrue(res.build.ok, res.build.message)
    test.assertEqual(res.status, "graded", res.summary)
    test.assertEqual(ev.run_case(res.binary, 1000, "small", 1, 60)[0], "ok")


class UntouchedSkeleton(unittest.TestCase):
    """A lab left as the course's skeleton, byte for byte, is run once in a grading session: its
    verdict (not implemented) is the same program's on the same cases for every later
    submission, so they get it without a process (a partial submission's five unwritten labs
    started about 54 of its 80 processes on a GPU). One byte changed and it is run again."""

    def test_an_untouched_skeleton_is_run_once_a_session_and_a_touched_one_again(self):
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        d = tempfile.mkdtemp()
        try:
            subs, res, trace = os.path.join(d, "subs"), os.path.join(d, "res"), os.path.join(d, "trace.jsonl")
            with open(os.path.join(ROOT, "labs", "02_naive", "scan.cu")) as f:
                skeleton = f.read()
            for who, text in (("a", skeleton), ("b", skeleton), ("c", skeleton + "// touched\n")):
                os.makedirs(os.path.join(subs, who, "02_naive"))
                with open(os.path.join(subs, who, "02_naive", "scan.cu"), "w") as f:
                    f.write(text)
            r = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--submissions", subs,
                                "--results", res, "--cpu", "--labs", "02", "--work", os.path.join(d, "work"),
                                "--seed", "5"],  # nvcc hidden: this is about CPU mode's runs, not nvcc's build
                               env=dict(os.environ, LAB_GRADER_TRACE=trace, NVCC="/nonexistent/nvcc"),
                               capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            labs, done = {}, {}
            for who in "abc":
                path = os.path.join(res, who + ".json")
                with open(path) as f:
                    labs[who] = json.load(f)["labs"][0]
                done[who] = os.path.getmtime(path)
                labs[who].pop("build")  # its own build's time
            self.assertEqual(labs["a"]["status"], "not implemented")
            self.assertEqual(labs["a"], labs["b"])
            self.assertEqual(labs["a"], labs["c"])
            # graded one after the other: b's lab 02 ran no case, a's and c's did
            with open(trace) as f:
                ends = [x["end"] for x in map(json.loads, f) if x["kind"] == "case" and x["prog"] == "02_naive/scan"]
            self.assertTrue(any(t <= done["a"] for t in ends), ends)
            self.assertFalse(any(done["a"] < t <= done["b"] for t in ends), ends)
            self.assertTrue(any(done["b"] < t <= done["c"] for t in ends), ends)
            said = [line for line in r.stderr.splitlines() if "the course's skeleton, untouched" in line]
            self.assertEqual(len(said), 1, said)
            self.assertIn("b: correctness: 02_naive: the course's skeleton, untouched", said[0])
        finally:
            shutil.rmtree(d, ignore_errors=True)


class Latin1Source(unittest.TestCase):
    def test_a_latin1_byte_in_a_comment_builds_and_runs(self):
        """A byte that is not UTF-8 (0xE9 in a comment) must not turn into a false 'build failed'
        in CPU mode (common/cpu/rewrite.py reads the file) nor trip the static checks."""
        with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"), "rb") as f:
            grade_lab02_source(self, "latin1", b"// R\xe9sum\xe9 of the scan (Latin-1)\n" + f.read())


class OldHeaderName(unittest.TestCase):
    def test_a_scan_cu_that_includes_labs_nn_h_is_told_the_new_name(self):
        """The course's lab headers moved from common/labs/ to common/course/ (the release note in
        README.md); a scan.cu written before says #include "labs/02_naive.h": its build fails, and
        the message's first line says which line to change and to what, for g++ and nvcc alike."""
        for out in ('scan.cu:16:10: fatal error: labs/02_naive.h: No such file or directory',
                    'scan.cu(16): catastrophic error: cannot open source file "labs/02_naive.h"'):
            self.assertEqual(build.contract_message(out, "02_naive", "labs/02_naive/scan.cu"),
                             'scan.cu includes "labs/02_naive.h", the old name of the course\'s header: write '
                             '#include "course/02_naive.h" instead (the header moved; nothing else changed)')
        self.assertEqual(build.contract_message("scan.cu:3: fatal error: cub/cub.cuh: No such file", "02_naive",
                                                "scan.cu"), "")


class CpuModeWithoutNvcc(unittest.TestCase):
    def test_full_marks_and_no_word_of_a_skipped_check(self):
        """Without nvcc, CPU mode runs every static check on what it compiles: nothing to say
        about checks left out (test_static_parity.py shows they refuse what the GPU refuses)."""
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        env = dict(os.environ, NVCC="/nonexistent/nvcc", CPU_SCHED_QUIET="1")
        p = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--cpu", "--labs", "01",
                            "--src", "solutions", "--format", "json", "--seed", "1",
                            "--work", os.path.join(WORK, "no-nvcc")],
                           capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        res = json.loads(p.stdout)
        self.assertNotIn("nvcc", res["message"])
        self.assertNotIn("not run", res["message"])
        self.assertEqual(res["points"], res["max_points"])


class SharedCache(unittest.TestCase):
    """LAB_GRADER_CACHE (build.py): two grading sessions with their own work folders build the
    harness and the references once; a changed course source gives another cache entry."""

    def test_the_key_follows_the_sources(self):
        with tempfile.TemporaryDirectory() as tmp:
            for rel in ("Makefile", "common/a.c", "common/cpu/b.cpp", "solutions/01_x/scan.cu",
                        "solutions/01_x/notes.txt"):
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                with open(os.path.join(tmp, rel), "w") as f:
                    f.write(rel)
            key = build.course_key(tmp, "cpu", None)
            self.assertEqual(build.course_key(tmp, "cpu", None), key)
            self.assertNotEqual(build.course_key(tmp, "gpu", None), key)
            self.assertNotEqual(build.course_key(tmp, "gpu", "/opt/nvcc"), build.course_key(tmp, "gpu", None))
            # CPU mode's builds never run nvcc: a grade with it and one with it hidden share them
            self.assertEqual(build.course_key(tmp, "cpu", "/opt/nvcc"), key)
            with open(os.path.join(tmp, "solutions/01_x/notes.txt"), "w") as f:
                f.write("not a source")  # only scan.cu counts in solutions/
            self.assertEqual(build.course_key(tmp, "cpu", None), key)
            for rel in ("common/cpu/b.cpp", "solutions/01_x/scan.cu", "Makefile"):
                with open(os.path.join(tmp, rel), "a") as f:
                    f.write("changed")
                new = build.course_key(tmp, "cpu", None)
                self.assertNotEqual(new, key, rel)
                key = new

    def test_each_gpu_architecture_has_its_own_harness_folder(self):
        """GPU mode builds for the Makefile's ARCH (the environment's here): objects built for
        other GPUs (another ARCH, a cluster node of another kind on a shared cache) are never
        reused, with or without the shared cache; CPU mode has no architecture."""
        if not shutil.which("make"):
            self.skipTest("make is missing")
        self.assertNotEqual(build.course_key(ROOT, "gpu", None, "sm_90"), build.course_key(ROOT, "gpu", None, "sm_80"))
        folders = {}
        with mock.patch.dict(os.environ):  # ARCH set here, and no LAB_GRADER_CACHE (make test sets one)
            os.environ.pop("LAB_GRADER_CACHE", None)
            for arch in ("sm_90", "sm_80 sm_90"):
                os.environ["ARCH"] = arch
                for cache in (None, os.path.join(WORK, "arch-cache")):
                    b = build.Builder(ROOT, os.path.join(WORK, "arch-build"), "gpu", timeout=60, cache=cache)
                    self.assertEqual(b.arch, arch)
                    folders[(arch, cache)] = b.common
            cpu = build.Builder(ROOT, os.path.join(WORK, "arch-build"), "cpu", timeout=60)
        self.assertEqual(len(set(folders.values())), 4, folders)
        self.assertTrue(folders[("sm_80 sm_90", None)].endswith("common-gpu-sm_80_sm_90"), folders)
        self.assertEqual((cpu.arch, os.path.basename(cpu.common)), ("", "common-cpu"))

    def test_two_sessions_build_the_references_once(self):
        if not have_cpu_mode():
            self.skipTest("make, a C++ compiler or CPU mode is missing")
        from gradelib.grading import Grader
        cfg = config.load(os.path.join(fakes.GRADER, "config.json"))
        # the suite's own shared cache where make test set one (whoever built there first, each
        # session must find the references in it), else one of this test's
        cache = os.environ.get("LAB_GRADER_CACHE") or os.path.join(WORK, "shared-cache")
        made = []
        for k in range(2):
            g = Grader(ROOT, cfg, os.path.join(WORK, f"session-{k}"), mode="cpu", labs=["02_naive"], jobs=1)
            g.builder = build.Builder(ROOT, os.path.join(g.work, "build"), "cpu", timeout=300, cache=cache)
            g.build_course()
            binary = g.refs["02_naive"][0]
            self.assertTrue(binary.startswith(cache), binary)
            made.append((binary, os.stat(binary).st_mtime_ns))
        self.assertEqual(made[0], made[1], "the second session rebuilt the reference")


class WorkLock(unittest.TestCase):
    """One grade.py at a time in a work folder (build.hold_work): a second one is told which
    process holds it and what to do, with exit code 3 (not a grade), before it builds anything."""

    def test_a_busy_work_folder_is_refused_with_the_holder_named(self):
        with tempfile.TemporaryDirectory() as d:
            code = (f"import sys, time; sys.path.insert(0, {fakes.GRADER!r}); from gradelib import build; "
                    f"build.hold_work({d!r}); print('held', flush=True); time.sleep(120)")
            holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
            try:
                self.assertEqual(holder.stdout.readline().strip(), "held")
                with self.assertRaises(build.InfraError) as cm:
                    build.hold_work(d)
                self.assertIn(f"another grade.py (pid {holder.pid}) is using the work folder {d}", str(cm.exception))
                self.assertIn("--work DIR", str(cm.exception))
                p = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "grade.py"), "--prepare-only", "--cpu",
                                    "--labs", "01", "--work", d], capture_output=True, text=True, timeout=120)
                self.assertEqual(p.returncode, 3, p.stderr[-2000:])
                self.assertIn(f"infrastructure error, not a grade: another grade.py (pid {holder.pid})", p.stderr)
                self.assertFalse(os.path.exists(os.path.join(d, "build")), "it built before refusing")
                with tempfile.TemporaryDirectory() as other:
                    build.hold_work(other)  # another folder is free
            finally:
                holder.kill()
                holder.wait()
                holder.stdout.close()
            build.hold_work(d)  # free once its holder has ended
            build.hold_work(d)  # and held twice by one process: no error

    def test_a_file_system_without_locks_grades_unguarded(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(build.fcntl, "flock", side_effect=OSError(errno.ENOLCK, "No locks available")):
            build.hold_work(d)  # no error: an NFS mount without lockd must not stop grading
            self.assertNotIn(os.path.realpath(d), build._HELD)


if __name__ == "__main__":
    unittest.main()
