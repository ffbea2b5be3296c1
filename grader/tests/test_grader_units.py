"""The grader's pieces on their own: scoring math, config validation, the static checks, the
matrix and the parsing of harness output, and every output format."""
import copy
import io
import json
import os
import unittest
import xml.etree.ElementTree as ET

import fakes  # noqa: F401  (puts grader/ on sys.path)
from gradelib import build, config, evaluate as ev, reports, scoring
from gradelib.grading import lab_result_template

CONFIG = os.path.join(fakes.GRADER, "config.json")


class Scoring(unittest.TestCase):
    def test_speed_fraction_bounds_and_line(self):
        f = scoring.speed_fraction
        self.assertEqual(f(0.5, 1.25, 3.0), 1.0)
        self.assertEqual(f(1.25, 1.25, 3.0), 1.0)
        self.assertEqual(f(3.0, 1.25, 3.0), 0.0)
        self.assertEqual(f(10.0, 1.25, 3.0), 0.0)
        self.assertAlmostEqual(f(2.125, 1.25, 3.0), 0.5)
        self.assertAlmostEqual(f(1.6, 1.25, 3.0), 0.8)
        self.assertEqual(f(None, 1.25, 3.0), 0.0)

    def test_correctness_points_proportional(self):
        self.assertEqual(scoring.correctness_points(30, 30, 60), 60)
        self.assertEqual(scoring.correctness_points(15, 30, 60), 30)
        self.assertEqual(scoring.correctness_points(0, 0, 60), 0)

    def test_median(self):
        self.assertEqual(scoring.median([3, 1, 2]), 2)
        self.assertEqual(scoring.median([4, 1, 2, 3]), 2.5)
        with self.assertRaises(ValueError):
            scoring.median([])


class Config(unittest.TestCase):
    def base(self):
        with open(CONFIG) as f:
            return json.load(f)

    def test_course_config_matches_the_handouts(self):
        c = config.load(CONFIG)
        d = c.lab("03_kogge_stone")
        self.assertEqual(d["points"], {"correctness": 60, "sanitizer": 10, "speed": 30})
        self.assertEqual(d["speed"]["full_at"], 1.25)
        self.assertEqual(d["speed"]["zero_at"], 3.0)
        self.assertGreaterEqual(d["speed"]["reps"], 20)

    def test_lab_override_merges_key_by_key(self):
        data = self.base()
        data["labs"]["03_kogge_stone"] = {"speed": {"min_speedup": 10}, "points": {"speed": 40}}
        c = config.Config(data)
        d = c.lab("03_kogge_stone")
        self.assertEqual(d["speed"]["min_speedup"], 10)
        self.assertEqual(d["speed"]["full_at"], 1.25)
        self.assertEqual(d["points"]["correctness"], 60)
        self.assertEqual(c.max_points("03_kogge_stone"), 110)
        self.assertEqual(c.max_points("02_naive"), 100)

    def assertBad(self, mutate, fragment):
        data = self.base()
        mutate(data)
        with self.assertRaises(config.ConfigError) as cm:
            config.Config(data)
        self.assertIn(fragment, str(cm.exception))

    def test_errors_are_named(self):
        self.assertBad(lambda d: d["defaults"]["speed"].update(full_at=3.5), "full_at")
        self.assertBad(lambda d: d["defaults"]["points"].update(speed=-1), "defaults.points.speed")
        self.assertBad(lambda d: d["defaults"]["points"].update(speed="30"), "must be a number")
        self.assertBad(lambda d: d["defaults"].update(sped={}), "unknown key \"sped\"")
        self.assertBad(lambda d: d["defaults"]["correctness"].update(dists=["gaussian"]), "gaussian")
        self.assertBad(lambda d: d["labs"].update({"kogge": {}}), "not a lab id")
        self.assertBad(lambda d: d["labs"].update({"03_x": {"speed": {"zero_at": 1.1}}}), "labs.03_x")
        self.assertBad(lambda d: d["static"].update(shadow_patterns=["("]), "regular expression")
        self.assertBad(lambda d: d["static"].update(process_symbol_patterns=["["]), "static.process_symbol_patterns")
        self.assertBad(lambda d: d["defaults"]["speed"].pop("reps"), "missing key \"reps\"")

    def test_unreadable_and_invalid_json(self):
        with self.assertRaises(config.ConfigError) as cm:
            config.load("/nonexistent/config.json")
        self.assertIn("cannot read", str(cm.exception))
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write("{ not json")
        try:
            with self.assertRaises(config.ConfigError) as cm:
                config.load(f.name)
            self.assertIn("not valid JSON", str(cm.exception))
        finally:
            os.remove(f.name)


class StaticChecks(unittest.TestCase):
    static = config.load(CONFIG).static

    def test_forbidden_includes(self):
        src = '#include "lab.h"\n#include <thrust/scan.h>\n'
        v = build.check_source(src, self.static)
        self.assertEqual(len(v), 1)
        self.assertIn("line 2", v[0])
        self.assertIn("thrust/scan.h", v[0])
        self.assertTrue(build.check_source('#  include <cub/cub.cuh>', self.static))
        self.assertIn("harness", build.check_source('#include "driver.h"', self.static)[0])
        self.assertTrue(build.check_source('#include "../../solutions/03_kogge_stone/scan.cu"', self.static))
        self.assertTrue(build.check_source('#include "/etc/passwd"', self.static))

    def test_comments_and_strings_are_not_includes(self):
        src = ('// #include <thrust/scan.h>\n/* #include <cub/cub.cuh>\n */\n'
               'const char *s = "#include <thrust/scan.h>";\n#include <cuda/atomic>\n#include "lab.h"\n')
        self.assertEqual(build.check_source(src, self.static), [])

    def test_symbols(self):
        syms = [("T", "naive_scan_kernel(int const*, int*, unsigned long)"),
                ("T", "__device_stub__Z1kPi(int*)"), ("D", "LAB"), ("U", "cudaGetLastError"),
                ("U", "lab_cuda_fail"), ("W", "void cudaOccupancyMaxPotentialBlockSize<void (*)()>(int*)")]
        self.assertEqual(build.check_symbols(syms, self.static, True), [])
        bad = syms + [("T", "cudaEventElapsedTime"), ("U", "thrust::detail::foo()"),
                      ("U", "lab_reference_scan"), ("U", "malloc"), ("T", "clock_gettime"),
                      ("U", "operator new(unsigned long)"), ("U", "dup2"), ("U", "fdopen")]
        v = "\n".join(build.check_symbols(bad, self.static, True))
        for needle in ("defines cudaEventElapsedTime", "uses thrust", "calls lab_reference_scan",
                       "calls malloc", "defines clock_gettime", "calls operator new", "calls dup2",
                       "calls fdopen"):
            self.assertIn(needle, v)

    def test_copies_in_a_gpu_lab(self):
        base = [("T", "__device_stub__Z1kPi(int*)"), ("D", "LAB")]
        for name in ("cudaMemcpy", "cudaMemcpyAsync_ptsz", "cuMemcpyDtoH_v2", "cudaMemcpyFromSymbol"):
            v = build.check_symbols(base + [("U", name)], self.static, True)
            self.assertEqual(len(v), 1, name)
            self.assertIn("calls %s: a GPU lab's data arrives on the device" % name, v[0])
        # the host lab may copy, and cudaMemset stays allowed everywhere
        self.assertEqual(build.check_symbols([("D", "LAB"), ("U", "cudaMemcpy")], self.static, False), [])
        self.assertEqual(build.check_symbols(base + [("U", "cudaMemset")], self.static, True), [])
        v = build.check_symbols(base + [("U", "cudaHostRegister")], self.static, True)
        self.assertIn("host memory in a GPU lab", v[0])

    def test_host_lab_may_use_host_memory_and_no_kernel(self):
        syms = [("D", "LAB"), ("U", "malloc"), ("t", "serial_scan(int const*, int*, unsigned long, void*)")]
        self.assertEqual(build.check_symbols(syms, self.static, False), [])
        v = build.check_symbols(syms, self.static, True)
        self.assertTrue(any("launches no kernel" in x for x in v))
        self.assertTrue(any("calls malloc" in x for x in v))

    def test_process_and_file_calls(self):
        base = [("T", "__device_stub__Z1kPi(int*)"), ("D", "LAB")]
        for name in ("dprintf", "open", "fopen", "openat", "pipe", "_exit", "quick_exit", "syscall",
                     "dup", "dup3", "writev", "fcntl", "execl", "posix_spawn"):
            v = build.check_symbols(base + [("U", name)], self.static, True)
            self.assertEqual(v, [f"calls {name}: lab code must not touch the process, its files or its output"], name)
        # C++ file streams reach a file descriptor by path (/proc/self/fd/N) as fopen does
        v = build.check_symbols(base + [("U", "std::basic_ofstream<char, std::char_traits<char> >::"
                                              "basic_ofstream(char const*, std::_Ios_Openmode)")], self.static, True)
        self.assertIn("lab code must not touch the process", v[0])
        # exit is not forbidden: nvcc's host stubs of __device__ functions call it (solutions
        # 07 and 08), and the harness's atexit check turns an exit() from lab code into exit code 8
        self.assertEqual(build.check_symbols(base + [("U", "exit"), ("U", "atexit")], self.static, True), [])

    def test_shadowing_a_function_the_harness_calls(self):
        base = [("T", "__device_stub__Z1kPi(int*)"), ("D", "LAB")]
        for name in ("memcmp", "qsort", "fputs", "printf", "strtoull", "clock_gettime"):
            v = build.check_symbols(base + [("T", name)], self.static, True)
            self.assertEqual(v, [f"defines {name}, which shadows a CUDA runtime, C library or harness function"])
        # a name the harness imports is caught through harness_imports even when no list has it
        self.assertEqual(build.check_symbols(base + [("T", "frobnicate")], self.static, True), [])
        v = build.check_symbols(base + [("T", "frobnicate")], self.static, True, harness_imports={"frobnicate"})
        self.assertIn("defines frobnicate", v[0])
        # LAB is imported by the harness too, and is the one definition a lab must make
        self.assertEqual(build.check_symbols(base, self.static, True, harness_imports={"LAB"}), [])
        # a C++ definition cannot shadow a C function
        self.assertEqual(build.check_symbols(base + [("T", "memcmp(void const*, void const*, unsigned long)")],
                                             self.static, True, harness_imports={"memcmp"}), [])

    def test_harness_imports_are_read_from_the_objects(self):
        import shutil
        import subprocess
        import tempfile
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc or not shutil.which("nm"):
            self.skipTest("no C compiler or no nm")
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "h.c")
            with open(src, "w") as f:
                f.write("#include <string.h>\n#include <stdlib.h>\n"
                        "int h(const char *a, const char *b) { return memcmp(a, b, 3) + (int)strtoull(a, 0, 10); }\n")
            obj = os.path.join(tmp, "h.o")
            subprocess.run([cc, "-O1", "-c", src, "-o", obj], check=True)
            names = build.imported_names([obj])
        self.assertIn("memcmp", names)
        self.assertIn("strtoull", names)
        self.assertNotIn("h", names)
        self.assertIsNone(build.imported_names([]))

    def test_compiler_message_keeps_not_found(self):
        text = ("make: Entering directory\n/bin/sh: 1: /opt/cuda/bin/nvcc: not found\n"
                "make: *** [Makefile:70: x] Error 127\n")
        msg = build.compiler_message(text, "/w/x", "02_naive/scan.cu")
        self.assertIn("nvcc: not found", msg)
        self.assertIn("Error 127", msg)

    def test_compiler_message_hides_private_paths(self):
        text = "/w/build/x/02/scan.cu(29): error: expected a \";\"\n1 error detected\n"
        msg = build.compiler_message(text, "/w/build/x/02", "02_naive/scan.cu")
        self.assertEqual(msg, "02_naive/scan.cu(29): error: expected a \";\"\n1 error detected")


class Matrix(unittest.TestCase):
    def test_parse_list(self):
        info = ev.parse_list(fakes.list_text("03_kogge_stone", "tile", 512, 1 << 28))
        self.assertEqual((info.id, info.shape, info.tile, info.bench_n, info.max_n, info.type),
                         ("03_kogge_stone", "tile", 512, 1 << 28, 0, "inclusive"))
        info = ev.parse_list(fakes.list_text("02_naive", "whole", 0, 65536, 1 << 20))
        self.assertEqual((info.shape, info.max_n, info.device), ("whole", 1 << 20, True))
        self.assertFalse(ev.parse_list(fakes.list_text("01_serial", "host")).device)
        self.assertIsNone(ev.parse_list("garbage"))

    def test_edge_sizes(self):
        info = ev.parse_list(fakes.list_text("03_x", "tile", 512, 1 << 28))
        sizes = ev.edge_sizes(info, 16777223)
        for n in (0, 1, 31, 32, 33, 511, 512, 513, 1025, 1009, 65521, 1023, 1025, 65537, 16777223):
            self.assertIn(n, sizes)
        self.assertEqual(sizes[513], "tile+1")
        self.assertEqual(sizes[1025], "2tile+1")
        capped = ev.edge_sizes(ev.parse_list(fakes.list_text("02_x", "whole", 0, 65536, 1 << 20)), 16777223)
        self.assertLessEqual(max(capped), 1 << 20)
        self.assertIn((1 << 20) - 1, capped)

    def test_cases_cover_every_dist_and_are_reproducible(self):
        info = ev.parse_list(fakes.list_text("03_x", "tile", 512, 1 << 28))
        settings = config.load(CONFIG).lab("03_x")
        a = ev.make_cases(info, settings, 42)
        self.assertEqual(a, ev.make_cases(info, settings, 42))
        self.assertNotEqual([c[2] for c in a], [c[2] for c in ev.make_cases(info, settings, 43)])
        self.assertEqual({c[1] for c in a}, set(config.DISTS))
        at_tile1 = {d for n, d, _, opts in a if n == 513 and "--offset-in" not in opts}
        self.assertEqual(at_tile1, set(config.DISTS))
        # unaligned input and output: offsets of 4, 8 and 12 bytes, each for in and for out
        offs = [o for *_, o in a if "--offset-in" in o]
        self.assertEqual(sorted(o[1] for o in offs), ["1", "2", "3"])
        self.assertEqual(sorted(o[3] for o in offs), ["1", "2", "3"])
        # one process of >= 100 calls of at least two sizes (the leak and the multi-n checks)
        # every case checks a second call, on an input the harness draws on the GPU
        self.assertTrue(all(int(o[o.index("--calls") + 1]) >= 2 for *_, o in a))
        multi = [o for *_, o in a if "--sizes" in o]
        self.assertEqual(len(multi), 1)
        self.assertGreaterEqual(int(multi[0][3]), 100)
        self.assertGreaterEqual(len(set(multi[0][1].split(","))), 2)

    def test_reproduce_command_with_options(self):
        self.assertEqual(ev.reproduce_cmd("08_x", 65537, "alt", 3, "gpu", ("--offset-in", "3")),
                         "make run LAB=08 ARGS='--n 65537 --dist alt --seed 3 --reps 0 --offset-in 3'")

    def test_reproduce_command(self):
        self.assertEqual(ev.reproduce_cmd("03_kogge_stone", 513, "ones", 7),
                         "make run LAB=03 ARGS='--n 513 --dist ones --seed 7 --reps 0'")
        self.assertEqual(ev.reproduce_cmd("03_kogge_stone", 513, "ones", 7, "cpu"),
                         "make run LAB=03 CPU=1 ARGS='--n 513 --dist ones --seed 7 --reps 0'")


class Diagnose(unittest.TestCase):
    def r(self, rc, out="", err="", timed_out=False):
        from gradelib.proc import Result
        return Result(rc, out, err, timed_out, 0.1)

    def rep(self, status, msg=""):
        return json.dumps({"status": status, "message": msg, "lab": "x"})

    def test_each_status(self):
        cases = [
            (self.r(0, self.rep("ok")), "ok", ""),
            (self.r(3, self.rep("not_implemented")), "not_implemented", "not implemented"),
            (self.r(1, self.rep("wrong", "out[3] expected 4, got 5")), "wrong", "wrong answer: out[3] expected 4, got 5"),
            (self.r(1, self.rep("out_of_bounds", "wrote past")), "out_of_bounds", "out-of-bounds write: wrote past"),
            (self.r(1, self.rep("input_modified", "modified the input")), "input_modified", "input modified"),
            (self.r(4, self.rep("cuda_error", "CUDA error cudaErrorIllegalAddress")), "runtime_error",
             "runtime error: CUDA error cudaErrorIllegalAddress"),
            (self.r(-11, "", "boom"), "crash", "crashed with SIGSEGV"),
            (self.r(12, "no json"), "error", "exit code 12 without a result"),
            (self.r(9, "", "harness: sandbox: the lab's code made a system call that graded runs do "
                           "not allow: fork (system call 57); ..."), "sandbox", "fork (system call 57)"),
            (self.r(1, self.rep("leak", "device memory leak: ... never freed")), "leak", "never freed"),
            (self.r(None, "", "", True), "timeout", "timed out after 7 s"),
            (self.r(0, "debug line\n" + self.rep("ok")), "ok", ""),
            (self.r(0, self.rep("wrong", "x") + "\n" + self.rep("ok")), "error", "more than one result"),
        ]
        for res, kind, text in cases:
            k, msg, _ = ev.diagnose(res, 7)
            self.assertEqual(k, kind, msg)
            self.assertIn(text, msg)

    def rc(self, rc, report, out="", err=""):
        from gradelib.proc import Result
        return Result(rc, out, err, False, 0.1, report)

    def case(self, status="ok", **kw):
        d = {"status": status, "message": "", "lab": "x", "n": 5, "seed": 9, "dist": "ones"}
        d.update(kw)
        return json.dumps(d) + "\n"

    def test_the_report_channel_is_the_only_source(self):
        want = {"n": 5, "seed": 9, "dist": "ones"}
        cases = [
            (self.rc(0, self.case()), "ok", ""),
            # a forged line on stdout, and the process ended before the harness could report
            (self.rc(0, "", out=self.case()), "error", "result-like line on stdout"),
            # stdout is the lab's: a result there never counts, nor does it spoil the real one
            (self.rc(1, self.case("wrong", message="out[1]"), out=self.case()), "wrong", "out[1]"),
            (self.rc(8, self.case(), out=self.case()), "tampered", "ended before the harness reported"),
            (self.rc(0, self.case() + self.case()), "error", "more than the harness's one report"),
            (self.rc(0, "hello\n" + self.case()), "error", "more than the harness's one report"),
            (self.rc(0, self.case(seed=10)), "error", "names seed=10 but the grader ran seed=9"),
            (self.rc(0, self.case(n=6)), "error", "names n=6"),
            (self.rc(0, self.case(dist="small")), "error", "names dist='small'"),
            (self.rc(-11, "", err="boom"), "crash", "SIGSEGV"),
        ]
        for res, kind, text in cases:
            k, msg, _ = ev.diagnose(res, 7, want)
            self.assertEqual(k, kind, msg)
            self.assertIn(text, msg)


def sample_result():
    cfg = config.load(CONFIG)
    full = lab_result_template("03_kogge_stone", cfg.lab("03_kogge_stone"), "gpu")
    full["build"]["ok"] = True
    full["correctness"].update(passed=40, total=40, points=60)
    full["sanitizer"].update(status="passed", points=10, note="memcheck and racecheck found no errors")
    full["speed"].update(status="graded", points=30, ratio=1.01, metric="tile_ms", student_ms=0.5,
                         reference_ms=0.495, gbps=2500.0, speedup_vs_serial=300.0, bench_n=1 << 28, note="1.01x")
    full.update(points=100, summary="all checks passed")
    broken = lab_result_template("02_naive", cfg.lab("02_naive"), "gpu")
    broken.update(status="build failed", summary="build failed: scan.cu:3: error: x")
    broken["build"]["message"] = "scan.cu:3: error: x"
    ni = lab_result_template("04_brent_kung", cfg.lab("04_brent_kung"), "gpu")
    ni.update(status="not implemented", summary="not implemented")
    return {"grader": "grader/grade.py", "course": "c", "mode": "gpu", "device": "Fake", "seed": 5,
            "status": "graded", "message": "", "points": 100, "max_points": 300, "elapsed_s": 3.0,
            "labs": [full, broken, ni]}


class Formats(unittest.TestCase):
    def test_gradescope_fields(self):
        doc = json.loads(reports.gradescope(sample_result()))
        self.assertEqual(doc["score"], 100)
        self.assertEqual(doc["visibility"], "visible")
        self.assertIsInstance(doc["execution_time"], int)
        tests = doc["tests"]
        self.assertEqual(len(tests), 9)  # 3 parts for each of 3 labs
        for t in tests:
            self.assertEqual(set(t), {"name", "score", "max_score", "status", "output", "visibility"})
            self.assertIn(t["status"], ("passed", "failed"))
            self.assertLessEqual(t["score"], t["max_score"])
        self.assertAlmostEqual(sum(t["score"] for t in tests), doc["score"])
        self.assertEqual(sum(t["max_score"] for t in tests), 300)
        by = {t["name"]: t for t in tests}
        self.assertEqual(by["03_kogge_stone: speed"]["score"], 30)
        self.assertEqual(by["02_naive: correctness"]["score"], 0)
        self.assertEqual(by["02_naive: correctness"]["status"], "failed")
        self.assertIn("error: x", by["02_naive: correctness"]["output"])
        self.assertIn("not implemented", by["04_brent_kung: correctness"]["output"])
        self.assertEqual(doc["leaderboard"], [{"name": "03_kogge_stone GB/s", "value": 2500.0, "order": "desc"}])

    def test_gradescope_when_the_grader_failed(self):
        for status in ("infrastructure error", "grader error"):
            doc = json.loads(reports.gradescope({"status": status, "message": "no GPU"}))
            self.assertEqual(doc["score"], 0)
            self.assertEqual(doc["tests"], [])
            self.assertEqual(doc["visibility"], "visible")
            self.assertIn("The grader failed to run (no GPU)", doc["output"])
            self.assertIn("not a judgement of your code", doc["output"])
            self.assertIn("Ask your instructor to regrade", doc["output"])
            self.assertNotIn("has been told", doc["output"])
            self.assertIn("not graded", reports.table({"status": status, "message": "x"}))
            self.assertEqual(ET.fromstring(reports.junit({"status": status, "message": "x"}))
                             .find("testsuite").get("errors"), "1")

    def test_junit(self):
        root = ET.fromstring(reports.junit(sample_result()))
        suites = root.findall("testsuite")
        self.assertEqual([s.get("name") for s in suites], ["03_kogge_stone", "02_naive", "04_brent_kung"])
        self.assertEqual(suites[0].get("failures"), "0")
        self.assertEqual(suites[1].get("failures"), "3")
        self.assertEqual(len(root.findall(".//testcase")), 9)

    def test_json_round_trips(self):
        r = sample_result()
        self.assertEqual(json.loads(reports.to_json(r)), r)

    def test_table_colour_only_on_a_terminal_and_never_with_no_color(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True
        old = dict(os.environ)
        try:
            os.environ.pop("NO_COLOR", None)
            os.environ["TERM"] = "xterm"
            self.assertTrue(reports.use_colour(Tty()))
            self.assertFalse(reports.use_colour(io.StringIO()))
            os.environ["NO_COLOR"] = "1"
            self.assertFalse(reports.use_colour(Tty()))
        finally:
            os.environ.clear()
            os.environ.update(old)
        plain = reports.table(sample_result(), colour=False)
        self.assertNotIn("\033", plain)
        self.assertIn("\033[", reports.table(sample_result(), colour=True))
        self.assertIn("03_kogge_stone", plain)
        self.assertIn("40/40", plain)
        self.assertIn("1.01x", plain)
        self.assertIn("not implemented", plain)
        self.assertIn("FAILED", plain)
        self.assertIn("total: 100.0/300", plain)

    def test_table_says_speed_not_graded_in_cpu_mode(self):
        r = sample_result()
        self.assertNotIn("speed not graded", reports.table(r))
        r["message"] = "speed not graded: no GPU (CPU mode grades correctness only)"
        self.assertIn("speed not graded: no GPU", reports.table(r))

    def test_table_for_infrastructure_error(self):
        self.assertIn("infrastructure error", reports.table({"status": "infrastructure error", "message": "x"}))


if __name__ == "__main__":
    unittest.main()
