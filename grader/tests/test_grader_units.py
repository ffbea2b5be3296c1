"""The grader's pieces on their own: scoring math, config validation, the static checks, the
matrix and the parsing of harness output, and every output format."""
import io
import json
import os
import tempfile
import unittest
import unittest.mock
import xml.etree.ElementTree as ET

import fakes  # noqa: F401  (puts grader/ on sys.path)
from gradelib import build, config, cores, evaluate as ev, formats, grading, scoring, stage_cases
from gradelib.checks import asm, elf, headers, lexer, machine, sections, source, symbols
from gradelib.formats.details import lab_detail_lines
from gradelib.outcomes import LabResult

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

    def test_a_timed_variant_is_named_in_the_note_and_timed_on_both_sides(self):
        """speed.variant: the student's binary and the reference are both timed running that
        variant (every timed run of either Timer carries --variant NAME, in a session and alone),
        so that the reference graded as a submission reads 1.00, and the note says so."""
        from gradelib.outcomes import SpeedOutcome
        from gradelib.status import Status
        from gradelib import stage_speed
        settings = dict(config.load(CONFIG).lab("09_operators")["speed"])
        self.assertEqual(settings["variant"], "add_two_pass")
        self.assertEqual(config.load(CONFIG).lab("10_applications")["speed"]["variant"], "radix_sort_on_scan")
        self.assertEqual((settings["full_at"], settings["zero_at"]), (1.25, 3.0))
        out = SpeedOutcome(Status.GRADED, "", metric="ms", ratio=1.04)
        share, note = scoring.speed_share(out, settings)
        self.assertEqual(share, 1.0)
        self.assertIn("1.04x the reference's add_two_pass time, the handout's design on both sides,", note)
        self.assertIn("1.04x the reference's time (", scoring.speed_share(out, dict(settings, variant=None))[1])
        made = []

        class Recorder:
            def __init__(self, binary, isolated=False, options=()):
                made.append((binary, tuple(options)))

            def close(self):
                return True
        stage = unittest.mock.Mock(ref_binary=lambda lab: "ref", _probe=lambda *a: "measured")
        with unittest.mock.patch.object(stage_speed.ev, "Timer", Recorder):
            for variant in ("add_two_pass", None):
                got = stage_speed.SpeedStage._measure(stage, "09_operators", "student",
                                                      {"speed": dict(settings, variant=variant)},
                                                      1024, "ms", 1, True, False)
                self.assertEqual(got, "measured")
        both = ("--variant", "add_two_pass")
        self.assertEqual(made, [("student", both), ("ref", both), ("student", ()), ("ref", ())])
        # a time faster than its copy is measured again alone: at the same variant
        made.clear()
        stage = unittest.mock.Mock(_busy=lambda lab, st: None, progress=lambda m: None,
                                   _timed=lambda *a: unittest.mock.Mock(kind=Status.CRASH, message="x"),
                                   _failed=lambda *a: "failed")
        with unittest.mock.patch.object(stage_speed.ev, "Timer", Recorder):
            stage_speed.SpeedStage._remeasure(stage, "09_operators", "student",
                                              {"speed": settings, "timeouts": {"speed_s": 10}},
                                              1024, "ms", 1, 0.1, 1.0, 0.2)
        self.assertEqual(made, [("student", both)])
        seen = []

        class Session:
            ended = False

            def __init__(self, binary, kind):
                pass

            def run(self, line, timeout, meta):
                seen.append(line)
                return Status.OK, "", {"ms": 1.0, "memcpy_ms": 1.0}

            def close(self):
                return True
        with unittest.mock.patch.object(ev, "LabSession", Session), \
                unittest.mock.patch.object(ev, "run_lab", lambda argv, t, case, kind: seen.append(case)), \
                unittest.mock.patch.object(ev, "diagnose", lambda r, t, meta: (Status.OK, "", {})):
            ev.Timer("ref", options=["--variant", "add_two_pass"]).timed(1024, 20, 3, 1, 10)
            ev.Timer("ref", isolated=True, options=["--variant", "add_two_pass"]).timed(1024, 20, 3, 1, 10)
            ev.Timer("student").timed(1024, 20, 3, 1, 10)
        self.assertEqual([line.endswith("--variant add_two_pass") for line in seen], [True, True, False])
        # a round after the first moves the arrays to new memory in the same process, once;
        # a timer whose process is new has new memory anyway and passes nothing
        seen.clear()
        with unittest.mock.patch.object(ev, "LabSession", Session):
            t = ev.Timer("ref", options=["--variant", "add_two_pass"])
            t.renew()
            t.timed(1024, 20, 3, 1, 10)
            t.renew()
            t.timed(1024, 20, 3, 1, 10)
            t.timed(1024, 20, 3, 1, 10)
            t.renew()
            t.fresh()
            t.timed(1024, 20, 3, 1, 10)
        self.assertEqual(["--new-buffers" in line for line in seen], [False, True, False, False])
        self.assertTrue(seen[1].endswith("--variant add_two_pass --new-buffers"))
        # start() starts the process before the first timed run, which then uses it (one process
        # for both); an isolated timer has no process to start
        started = []

        class Started(Session):
            def __init__(self, binary, kind):
                started.append(binary)
        with unittest.mock.patch.object(ev, "LabSession", Started):
            t = ev.Timer("ref")
            t.start()
            self.assertEqual(started, ["ref"])
            t.start()
            t.timed(1024, 20, 3, 1, 10)
            self.assertEqual(started, ["ref"])
            ev.Timer("ref", isolated=True).start()
            self.assertEqual(started, ["ref"])

    def test_median(self):
        self.assertEqual(scoring.median([3, 1, 2]), 2)
        self.assertEqual(scoring.median([4, 1, 2, 3]), 2.5)
        with self.assertRaises(ValueError):
            scoring.median([])


class DeviceMismatch(unittest.TestCase):
    """A reference that fails at n = 1 is an infrastructure error; when CUDA says the build has no
    code for this GPU (a container built for ARCH=sm_90 on an A100), the message says what to
    rebuild with, not only the CUDA error."""

    def test_no_kernel_image_names_the_arch_setting(self):
        msg = ("CUDA error cudaErrorNoKernelImageForDevice (no kernel image is available for execution on "
               "the device) in scan_kernel<<<...>>>")
        hint = grading.device_mismatch_hint(msg)
        self.assertIn("ARCH", hint)
        self.assertIn("sm_80 for an A100", hint)

    def test_old_driver_names_the_driver_floor(self):
        self.assertIn("driver 580", grading.device_mismatch_hint("CUDA error cudaErrorUnsupportedPtxVersion (x)"))

    def test_other_failures_get_no_hint(self):
        self.assertEqual(grading.device_mismatch_hint("wrong answer: out[0] expected 1, got 0"), "")


class HostCore(unittest.TestCase):
    """cores.py: which core the grader keeps for timing the host lab, and what is left."""

    def test_one_grader_keeps_its_last_core(self):
        self.assertEqual(cores.plan(range(16), {}), (15, list(range(15))))
        self.assertEqual(cores.plan({3, 5, 7, 9, 11, 13, 15, 17}, {}), (17, [3, 5, 7, 9, 11, 13, 15]))
        self.assertIsNone(cores.plan(range(7), {}))  # too few to spare one: nothing kept, nothing moved

    def test_graders_started_apart_keep_different_cores(self):
        taken = {15}  # another grader on this host keeps 15
        self.assertEqual(cores.plan(range(16), {}, lambda c: c not in taken), (14, [c for c in range(16) if c != 14]))
        # the last quarter all taken: none kept (grading goes on as before)
        self.assertIsNone(cores.plan(range(16), {}, lambda c: c < 12))
        # the lock itself: a second taker of the same core is refused until the first lets go
        core = 900000 + os.getpid() % 1000
        held = len(cores._held)
        try:
            self.assertTrue(cores.lock(core))
            self.assertFalse(cores.lock(core))
        finally:
            for f in cores._held[held:]:
                f.close()
            del cores._held[held:]
        self.assertTrue(cores.lock(core))
        cores._held.pop().close()
        os.remove(os.path.join(tempfile.gettempdir(), f"lab-grader-cpu-{os.getuid()}-{core}.lock"))

    def test_workers_of_one_host_keep_one_each_and_stay_off_all(self):
        envs = cores.for_workers(range(32), 2)
        self.assertEqual([e[cores.ENV_CPU] for e in envs], ["30", "31"])
        plans = [cores.plan(range(32), e) for e in envs]
        self.assertEqual([p[0] for p in plans], [30, 31])
        self.assertTrue(all(p[1] == list(range(30)) for p in plans))
        self.assertEqual(cores.for_workers(range(16), 4), [{}] * 4)  # 12 left for 4 workers: too few
        # a worker's environment naming cores it may not use: its own last core, as one grader
        self.assertEqual(cores.plan(range(8), {cores.ENV_CPUS: "30,31", cores.ENV_CPU: "31"}), (7, list(range(7))))


class Config(unittest.TestCase):
    def base(self):
        with open(CONFIG) as f:
            return json.load(f)

    def test_course_defaults_match_the_readme(self):
        """The defaults every lab starts from (README.md's Grading: 60/10/30, full speed points
        to 1.25x, none from 3x); a lab's own thresholds are checked against its handout by
        tests/test_handouts.py."""
        c = config.load(CONFIG)
        d = c.lab(None)
        self.assertEqual(d["points"], {"correctness": 60, "sanitizer": 10, "speed": 30})
        self.assertEqual(d["speed"]["full_at"], 1.25)
        self.assertEqual(d["speed"]["zero_at"], 3.0)
        self.assertGreaterEqual(d["speed"]["reps"], 20)

    def test_built_on_comes_from_the_contract(self):
        """A lab's built_on is common/contract.json's (the Makefile links the same labs, from
        common/contract.mk); the config cannot set it."""
        c = config.load(CONFIG)
        self.assertEqual(c.lab("10_applications")["built_on"], ["08_decoupled_lookback", "07_hierarchical"])
        self.assertEqual(c.lab("03_kogge_stone")["built_on"], [])
        data = self.base()
        data["labs"]["10_applications"]["built_on"] = ["08_decoupled_lookback"]
        with self.assertRaises(config.ConfigError) as cm:
            config.Config(data)
        self.assertIn("built_on", str(cm.exception))

    def test_lab_override_merges_key_by_key(self):
        data = self.base()
        data["labs"]["03_kogge_stone"] = {"speed": {"min_speedup": 10}, "points": {"speed": 40}}
        c = config.Config(data)
        d = c.lab("03_kogge_stone")
        self.assertEqual(d["speed"]["min_speedup"], 10)
        self.assertEqual(d["speed"]["full_at"], 1.25)
        self.assertEqual(d["points"]["correctness"], 60)
        self.assertEqual(scoring.maxima(c.lab("03_kogge_stone"), "gpu").total, 110)
        self.assertEqual(scoring.maxima(c.lab("02_naive"), "gpu").total, 100)

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
        # a key renamed since an earlier course's config: the new name and what changed
        self.assertBad(lambda d: d["labs"]["09_operators"]["speed"].update(reference_variant="add_two_pass"),
                       "labs.09_operators.speed.reference_variant is now labs.09_operators.speed.variant: "
                       "the variant is timed on both sides now")
        self.assertBad(lambda d: d["defaults"]["correctness"].update(dists=["gaussian"]), "gaussian")
        self.assertBad(lambda d: d["labs"].update({"kogge": {}}), "not a lab id")
        self.assertBad(lambda d: d["labs"].update({"03_x": {"speed": {"zero_at": 1.1}}}), "labs.03_x")
        self.assertBad(lambda d: d["static"].update(shadow_patterns=["("]), "regular expression")
        self.assertBad(lambda d: d["static"].update(allowed_symbol_patterns=["["]), "static.allowed_symbol_patterns")
        self.assertBad(lambda d: d["static"].update(forbidden_header_patterns=["("]),
                       "static.forbidden_header_patterns")
        self.assertBad(lambda d: d["static"].update(process_calls=["fork"]), "unknown key \"process_calls\"")
        self.assertBad(lambda d: d["static"].update(registration_only_symbols=["fork"]), "is in neither")
        self.assertBad(lambda d: d["static"].update(allowed_symbols="exit"), "list of strings")
        self.assertBad(lambda d: d["defaults"]["speed"].pop("reps"), "missing key \"reps\"")
        self.assertBad(lambda d: d["defaults"]["speed"].update(reps=3), "speed.reps must be >= 4")
        # fewer than 20 timed calls over a lab's rounds make the median noise
        self.assertBad(lambda d: d["defaults"]["speed"].update(reps=19, rounds=1), "reps x rounds is 19, under 20")
        self.assertBad(lambda d: d["labs"].update({"03_x": {"sanitizer": {"tools": []}}}),
                       "labs.03_x: sanitizer.tools is empty but points.sanitizer is 10")

    def test_cpu_max_n_caps_cpu_mode_sizes_only(self):
        """correctness.cpu_max_n: CPU mode's cases end at it (the course config: 65537 for labs
        03-06 and 10, the default 2^20 + 1 elsewhere); a GPU's are not capped by it; a config
        without the key is valid and gets the default; a bad value is refused."""
        c = config.load(CONFIG)
        info = fakes.lab_info("10_applications", "whole", work_tiles=(2048, 4096, 6144))

        def largest(lab, mode):
            return max(n for n, *_ in stage_cases.plan_cases(info, c.lab(lab), 31, mode))
        self.assertEqual(largest("10_applications", "cpu"), 65537)
        self.assertEqual(largest("05_blelloch", "cpu"), 65537)
        self.assertEqual(largest("07_hierarchical", "cpu"), (1 << 20) + 1)
        self.assertEqual(largest("10_applications", "gpu"), c.lab(None)["correctness"]["large_n"])
        data = self.base()
        for over in data["labs"].values():
            over.get("correctness", {}).pop("cpu_max_n", None)
        self.assertNotIn("cpu_max_n", data["defaults"]["correctness"])
        c2 = config.Config(data)
        self.assertEqual(max(n for n, *_ in stage_cases.plan_cases(info, c2.lab("10_applications"), 31, "cpu")),
                         (1 << 20) + 1)
        self.assertBad(lambda d: d["labs"]["10_applications"]["correctness"].update(cpu_max_n=0),
                       "cpu_max_n")

    def test_a_disabled_sanitizer_with_its_points_moved_is_accepted(self):
        d = self.base()
        d["labs"]["03_x"] = {"sanitizer": {"tools": []},
                             "points": {"correctness": 70, "sanitizer": 0, "speed": 30}}
        c = config.Config(d)
        self.assertEqual(c.lab("03_x")["sanitizer"]["tools"], [])
        self.assertEqual(c.lab("03_x")["points"]["correctness"], 70)

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
    """The static checks on hand-made inputs (test_static_checks.py compiles real snippets)."""
    static = config.load(CONFIG).static
    HONEST = [("T", "naive_scan_kernel(int const*, int*, unsigned long)"),
              ("T", "__device_stub__Z1kPi(int*)"), ("D", "LAB"), ("U", "cudaGetLastError"),
              ("U", "lab_cuda_fail"), ("U", "__cudaLaunchKernel"), ("U", "__cudaPushCallConfiguration"),
              ("U", "__cudaPopCallConfiguration"), ("U", "__cudaGetKernel"), ("U", "_Unwind_Resume"),
              ("U", "__gxx_personality_v0"), ("V", "DW.ref.__gxx_personality_v0"),
              ("U", "__cxa_guard_acquire"), ("U", "exit"), ("U", "cudaMalloc"), ("U", "cudaMemset"),
              ("W", "void cudaOccupancyMaxPotentialBlockSize<void (*)()>(int*)"),
              ("U", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"), ("U", "log2")]
    REG = "_ZL24__sti____cudaRegisterAllv"

    def test_literal_includes_first_pass(self):
        src = '#include "lab.h"\n#include <thrust/scan.h>\n'
        self.assertEqual(source.check_source(src, self.static),
                         ["includes <thrust/scan.h> (through line 2): scan, sort and reduce libraries are not allowed"])
        self.assertTrue(source.check_source('#  include <cub/cub.cuh>', self.static))
        self.assertTrue(source.check_source('#include <cooperative_groups/scan.h>', self.static))
        self.assertTrue(source.check_source('#include <cuda/std/numeric>', self.static))
        self.assertEqual(source.check_source('#include <cuda/atomic>\n#include <stdint.h>', self.static), [])
        v = source.check_source('#include "driver.h"', self.static, ["driver.h", "lab.h", "harness.h"])
        self.assertEqual(v, ['includes "driver.h" (through line 1): the harness\'s own headers are not for '
                             'lab code (lab.h, cuda_check.h and the lab\'s course/NN_name.h are)'])
        self.assertEqual(source.check_source('#include "course/03_kogge_stone.h"', self.static,
                                             ["lab.h", "harness.h"]), [])
        self.assertEqual(source.check_source('#include "lab.h"', self.static, ["lab.h", "harness.h"]), [])
        v = source.check_source('#include "../../solutions/03_kogge_stone/scan.cu"', self.static)
        self.assertIn("only scan.cu is graded; include no files by path", v[0])
        self.assertTrue(source.check_source('#include "/etc/passwd"', self.static))

    def test_line_directives_and_the_lexer(self):
        line_msg = ("#line directive (line %d): lab code may not renumber its lines (the checks need to "
                    "know which code is scan.cu's)")
        src = ('#line 3 "x.h"\n%:  line 4\n#\\\nline 9\n  # 12 "a"\n#include <thrust/\\\nscan.h>\n'
               'const char *s = R"(\n/*)";\n#line 1 "/usr/include/stdio.h"\n// */ x \\\n#line 7\n'
               '/**/ # line 8\nconst char *u = R"xy(\n#line 10\n#include <cub/cub.cuh>\n)xy"; int BAR"x";\n')
        self.assertEqual(source.check_source(src, self.static), [line_msg % n for n in (1, 2, 3, 5, 10, 13)] + [
            "includes <thrust/scan.h> (through line 6): scan, sort and reduce libraries are not allowed"])
        code = lexer.strip_comments(src)
        self.assertEqual(code.count("\n"), src.count("\n"))
        self.assertEqual(lexer.find_line(code, ["BAR"]), 17)
        self.assertIsNone(lexer.find_line(lexer.strip_comments('x = "getenv"; // getenv\n'), ["getenv"]))
        # gcc -E's markers: a file name changed inside scan.cu's code without flag 1 or 2
        pre = "\n".join(['# 0 "/w/scan.cu"', '# 0 "<built-in>"', '# 1 "/w/scan.cu"',
                         '# 1 "/usr/include/stdio.h" 1 3 4', "int x;", '# 2 "/w/scan.cu" 2', "int a;",
                         "#if 0 (a raw string's line)", '# 1 "/usr/include/stdio.h"', "asm", '# 6 "/w/scan.cu"'])
        self.assertEqual(headers.check_line_directives(pre, "/w/scan.cu"),
                         [line_msg.replace(" (line %d)", "")])

    def test_writable_code_and_executable_stack(self):
        import shutil
        import subprocess
        import tempfile
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "wx.c")
            with open(src, "w") as f:
                f.write('__attribute__((section(".wx,\\"awx\\",@progbits#"), noinline)) '
                        'int f(int x) { return x + 1; }\n'
                        "int g(int x) { return f(x); }\n")
            subprocess.run([cc, "-O2", "-c", src, "-o", os.path.join(tmp, "a.o")], check=True)
            subprocess.run([cc, "-O2", "-Wa,--execstack", "-c", src, "-o", os.path.join(tmp, "b.o")], check=True)
            a = sections.check_sections(elf.ElfObject(os.path.join(tmp, "a.o")))
            b = sections.check_sections(elf.ElfObject(os.path.join(tmp, "b.o")))
        self.assertEqual(a, ["code in a writable section (.wx): lab code may not place code where it can be changed"])
        self.assertEqual(b, a + ["the object asks for an executable stack: lab code may not run code on the stack"])

    def test_comments_and_strings_are_not_includes(self):
        src = ('// #include <thrust/scan.h>\n/* #include <cub/cub.cuh>\n */\n'
               'const char *s = "#include <thrust/scan.h>";\n#include <cuda/atomic>\n#include "lab.h"\n')
        self.assertEqual(source.check_source(src, self.static), [])

    def test_the_allowlist_passes_what_nvcc_emits_for_a_lab(self):
        self.assertEqual(symbols.check_symbols(self.HONEST, self.static, True), [])
        reg = [elf.Symbol("U", n, sites=[self.REG]) for n in
               ("atexit", "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction")]
        self.assertEqual(symbols.check_symbols(self.HONEST + reg, self.static, True), [])

    def test_anything_else_is_refused_by_name(self):
        for name in ("mkstemp", "ftruncate", "mmap", "cudaGetDriverEntryPointByVersion", "fopen",
                     "cudaStreamCreateWithFlags", "cudaEventRecord", "getenv", "dlopen", "fprintf_unlocked",
                     "cudaMallocManaged", "cudaLaunchCooperativeKernel", "syscall", "__cxa_atexit"):
            v = symbols.check_symbols(self.HONEST + [("U", name)], self.static, True)
            self.assertEqual(len(v), 1, (name, v))
            self.assertTrue(v[0].startswith(f"lab code may not call {name}"), v[0])
        v = symbols.check_symbols(self.HONEST + [elf.Symbol("U", "environ", data=True)], self.static, True)
        self.assertEqual(v[0], "lab code may not use environ: lab code reads nothing from the process's "
                               "environment or command line")
        # a weak reference is a reference; so is a C-linkage weak definition (a strong one wins)
        for kind in ("w", "W", "v"):
            v = symbols.check_symbols(self.HONEST + [(kind, "lab_reference_scan")], self.static, True)
            self.assertEqual(v, ["lab code may not call lab_reference_scan: that is the harness's own "
                                 "code: write the scan yourself"], kind)

    def test_specific_reasons(self):
        v = symbols.check_symbols(self.HONEST + [("U", "cudaMemcpy")], self.static, True)
        self.assertEqual(v, ["lab code may not call cudaMemcpy: a GPU lab's data arrives on the device and "
                             "stays there; copies are not allowed (no host-side scan, no copy engine doing a "
                             "kernel's work)"])
        for name in ("malloc", "operator new(unsigned long)", "cudaMallocHost", "cudaHostRegister"):
            v = symbols.check_symbols(self.HONEST + [elf.Symbol("U", name, "_Znwm" if "new" in name else name)],
                                      self.static, True)
            self.assertIn("no host memory", v[0], name)
        self.assertIn("lab code may not call operator new:", symbols.check_symbols(
            self.HONEST + [elf.Symbol("U", "operator new(unsigned long)", "_Znwm")], self.static, True)[0])
        v = symbols.check_symbols(self.HONEST + [("U", "cudaStreamCreateWithFlags")], self.static, True)
        self.assertIn("streams and events are not allowed", v[0])
        # glibc's aliases are named as the source spells them
        v = symbols.check_symbols(self.HONEST + [("U", "__vprintf_chk"), ("U", "__isoc99_sscanf"),
                                                 ("U", "open64"), ("U", "cudaMemcpy_ptsz")], self.static, True)
        self.assertEqual([x.split(":")[0] for x in v],
                         ["lab code may not call vprintf", "lab code may not call sscanf",
                          "lab code may not call open", "lab code may not call cudaMemcpy"])
        # debugging output on the lab's own stdout and stderr, and assert, are allowed
        v = symbols.check_symbols(self.HONEST + [("U", "__printf_chk"), ("U", "__assert_fail"), ("U", "puts"),
                                                 elf.Symbol("U", "stderr", data=True)], self.static, True)
        self.assertEqual(v, [])

    def test_the_line_of_a_refused_name(self):
        src = ('#include "lab.h"\n// getenv in a comment\nconst char *s = "getenv";\n'
               'static int f() { return getenv("HOME") != 0; }\nvoid *p = new int[4];\n')
        code = lexer.strip_comments(src)
        v = symbols.check_symbols(self.HONEST + [("U", "getenv"),
                                                 elf.Symbol("U", "operator new[](unsigned long)", "_Znam")],
                                  self.static, True, code=code)
        self.assertEqual(v[0], "lab code may not call getenv (line 4): lab code reads nothing from the process's "
                               "environment or command line")
        self.assertTrue(v[1].startswith("lab code may not call operator new[] (line 5): no host memory"), v[1])
        self.assertEqual(lexer.find_line(code, ["missing"]), None)

    def test_registration_symbols_only_from_nvcc_registration(self):
        v = symbols.check_symbols(self.HONEST + [elf.Symbol("U", "atexit", sites=[self.REG, "_ZL4scanPKiPimPv"])],
                                  self.static, True)
        self.assertEqual(v, ["lab code may not call atexit"])

    def test_host_lab(self):
        syms = [("D", "LAB"), ("t", "serial_scan(int const*, int*, unsigned long, void*)"),
                elf.Symbol("U", "atexit", sites=[self.REG]),
                elf.Symbol("U", "__cudaRegisterFatBinary", sites=[self.REG])]
        self.assertEqual(symbols.check_symbols(syms, self.static, False), [])
        v = symbols.check_symbols(syms + [("U", "cudaMalloc"), ("U", "malloc")], self.static, False)
        self.assertEqual(v, ["lab code may not call cudaMalloc: a host lab (LAB_HOST) runs on the CPU "
                             "and makes no CUDA calls",
                             "lab code may not call malloc: no host memory: the harness hands the lab every "
                             "buffer it needs"])
        v = symbols.check_symbols(syms, self.static, True)  # the same object, if it were a GPU lab
        self.assertTrue(any("launches no kernel" in x for x in v))
        # a CPU-mode object is not held to the allowlist (its symbols are CPU mode's runtime)
        self.assertEqual(symbols.check_symbols(syms + [("U", "malloc")], self.static, False, gpu_build=False), [])

    def test_shadowing_a_function_the_harness_calls(self):
        base = self.HONEST
        for name in ("memcmp", "qsort", "fputs", "printf", "strtoull", "clock_gettime", "cudaEventElapsedTime"):
            v = symbols.check_symbols(base + [("T", name)], self.static, True)
            self.assertEqual(v, [f"defines {name}, which shadows a CUDA runtime, C library or harness function"])
        # a name the harness imports is caught through harness_imports even when no list has it
        self.assertEqual(symbols.check_symbols(base + [("T", "frobnicate")], self.static, True), [])
        v = symbols.check_symbols(base + [("T", "frobnicate")], self.static, True, harness_imports={"frobnicate"})
        self.assertIn("defines frobnicate", v[0])
        # LAB is imported by the harness too, and is the one definition a lab must make
        self.assertEqual(symbols.check_symbols(base, self.static, True, harness_imports={"LAB"}), [])
        # a C++ definition cannot shadow a C function
        self.assertEqual(symbols.check_symbols(base + [("T", "memcmp(void const*, void const*, unsigned long)")],
                                               self.static, True, harness_imports={"memcmp"}), [])

    def test_harness_imports_are_read_from_the_objects(self):
        import shutil
        import subprocess
        import tempfile
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "h.c")
            with open(src, "w") as f:
                f.write("#include <string.h>\n#include <stdlib.h>\n"
                        "int h(const char *a, const char *b) { return memcmp(a, b, 3) + (int)strtoull(a, 0, 10); }\n")
            obj = os.path.join(tmp, "h.o")
            subprocess.run([cc, "-O1", "-c", src, "-o", obj], check=True)
            names = elf.imported_names([obj])
            syms = {s.name: s for s in elf.read_symbols(obj)}
        self.assertIn("memcmp", names)
        self.assertIn("strtoull", names)
        self.assertNotIn("h", names)
        self.assertIsNone(elf.imported_names([]))
        self.assertEqual((syms["h"].kind, syms["memcmp"].kind, syms["memcmp"].data), ("T", "U", False))
        self.assertEqual(syms["memcmp"].sites, ("h",))

    def test_dependencies_and_header_rules(self):
        import tempfile
        deps = headers.parse_dependencies("x.o : scan.cu \\\n  common/lab.h /usr/include/a\\ b.h \\\n"
                                          " /inc/cub/cub.cuh\n", "/r")
        self.assertEqual(deps, ["/r/scan.cu", "/r/common/lab.h", "/usr/include/a b.h", "/inc/cub/cub.cuh"])
        with tempfile.TemporaryDirectory() as tmp:
            tmp = os.path.realpath(tmp)
            for d in ("course/common/course", "priv", "inc/cub", "inc/cccl/cuda/std", "inc/cooperative_groups", "etc"):
                os.makedirs(os.path.join(tmp, d))
            files = {}
            for rel in ("course/common/lab.h", "course/common/harness.h", "priv/scan.cu", "priv/scan.o",
                        "course/common/course/03_kogge_stone.h", "course/common/course/03_kogge_stone.c",
                        "inc/cub/cub.cuh", "inc/cccl/cuda/std/numeric", "inc/cccl/cuda/std/atomic",
                        "inc/cooperative_groups/scan.h", "inc/stdint.h", "etc/passwd"):
                files[rel] = os.path.join(tmp, rel)
                open(files[rel], "w").close()
            ctx = headers.HeaderContext(files["priv/scan.cu"], os.path.join(tmp, "course/common"),
                                        [os.path.join(tmp, "inc"), os.path.join(tmp, "inc/cccl"),
                                         os.path.join(tmp, "course/common")], self.static["lab_headers"])
            pats = headers.header_patterns(self.static)
            ok = [files[k] for k in ("priv/scan.cu", "course/common/lab.h", "inc/cccl/cuda/std/atomic", "inc/stdint.h",
                                     "course/common/course/03_kogge_stone.h")]
            self.assertEqual([ctx.classify(p, pats) for p in ok], [None] * 5)
            # a lab's own header passes (course/*.h), its descriptor's source does not
            self.assertEqual(ctx.classify(files["course/common/course/03_kogge_stone.c"], pats),
                             (headers.HARNESS_WHY, "course/03_kogge_stone.c"))
            self.assertEqual(ctx.classify(files["inc/cub/cub.cuh"], pats), (headers.LIBRARY_WHY, "cub/cub.cuh"))
            self.assertEqual(ctx.classify(files["inc/cccl/cuda/std/numeric"], pats),
                             (headers.LIBRARY_WHY, "cuda/std/numeric"))
            self.assertEqual(ctx.classify(files["inc/cooperative_groups/scan.h"], pats)[0], headers.LIBRARY_WHY)
            self.assertEqual(ctx.classify(files["course/common/harness.h"], pats), (headers.HARNESS_WHY, "harness.h"))
            self.assertEqual(ctx.classify(files["priv/scan.o"], pats), (headers.PATH_WHY, "scan.o"))
            self.assertEqual(ctx.classify(files["etc/passwd"], pats), (headers.PATH_WHY, files["etc/passwd"]))
            # the include tree from gcc -E line markers: cub.cuh came through line 3, its own
            # headers through the same line, and one message names the outermost
            pre = "\n".join([f'# 1 "{files["priv/scan.cu"]}"', '# 1 "<command-line>"',
                             f'# 1 "{files["priv/scan.cu"]}"', "int a;", "int b;",
                             f'# 1 "{files["inc/cub/cub.cuh"]}" 1 3',
                             f'# 1 "{files["inc/cooperative_groups/scan.h"]}" 1 3',
                             "x", f'# 2 "{files["inc/cub/cub.cuh"]}" 2 3', f'# 4 "{files["priv/scan.cu"]}" 2',
                             "int c;", f'# 1 "{files["etc/passwd"]}" 1', "root", f'# 6 "{files["priv/scan.cu"]}" 2'])
            origins = headers.include_origins(pre, files["priv/scan.cu"])
            self.assertEqual(origins[files["inc/cub/cub.cuh"]], (3, files["inc/cub/cub.cuh"]))
            self.assertEqual(origins[files["inc/cooperative_groups/scan.h"]], (3, files["inc/cub/cub.cuh"]))
            self.assertEqual(origins[files["etc/passwd"]], (5, files["etc/passwd"]))
            deps = [files[k] for k in ("priv/scan.cu", "inc/cub/cub.cuh", "inc/cooperative_groups/scan.h",
                                       "etc/passwd")]
            self.assertEqual(headers.check_headers(deps, self.static, ctx, origins), [
                "includes <cub/cub.cuh> (through line 3): scan, sort and reduce libraries are not allowed",
                f'includes "{files["etc/passwd"]}" (through line 5): only scan.cu is graded; include no files by path'])
            # without the tree: one message
            self.assertEqual(len(headers.check_headers(deps, self.static, ctx)), 1)

    def test_contract_messages(self):
        """A build that breaks the lab's contract with the course fails with one line saying how:
        read from the linker's output (GNU ld via g++ or nvcc) and the host compiler's."""
        ld = ("/usr/bin/ld: /w/common-cpu/cpu/common/course/03_kogge_stone.o:(.data.rel.ro+0x40): undefined "
              "reference to `ks_two_barrier_scan'\n/usr/bin/ld: /w/common-cpu/cpu/common/course/03_kogge_stone.o:"
              "(.data.rel.ro+0x10): undefined reference to `ks_double_buffer_scan'\ncollect2: error: ld returned 1")
        self.assertEqual(build.contract_message(ld, "03_kogge_stone", "03_kogge_stone/scan.cu"),
                         "scan.cu must define ks_two_barrier_scan and ks_double_buffer_scan (declared in "
                         "common/course/03_kogge_stone.h)")
        # an undefined name that the lab's code itself references is not the contract's business
        other = "/usr/bin/ld: /w/x/scan.lab.o: in function `naive_scan': undefined reference to `helper'"
        self.assertEqual(build.contract_message(other, "02_naive", "02_naive/scan.cu"), "")
        dup = ("/usr/bin/ld: /w/common/common/course/02_naive.o:(.data.rel.ro.local+0x0): multiple definition of "
               "`LAB'; /w/sub/02_naive/scan.lab.o:(.data.rel.ro.local+0x0): first defined here")
        self.assertEqual(build.contract_message(dup, "02_naive", "02_naive/scan.cu"),
                         "scan.cu must not define LAB: the course's descriptor (common/course/02_naive.c) does; "
                         "delete the VARIANTS table and LAB from scan.cu")
        static = ("/w/sub/02_naive/scan.cu:35:19: error: \u2018lab_result naive_scan(const int*, int*, size_t, "
                  "void*)\u2019 was declared \u2018extern\u2019 and later \u2018static\u2019 [-fpermissive]")
        self.assertEqual(build.contract_message(static, "02_naive", "02_naive/scan.cu"),
                         "scan.cu must define naive_scan without static: common/course/02_naive.h declares it for "
                         "the course's descriptor of the lab")
        self.assertEqual(build.contract_message(static.replace("\u2018", "'").replace("\u2019", "'"),
                                                "02_naive", "x/scan.cu"),
                         build.contract_message(static, "02_naive", "x/scan.cu"))
        self.assertEqual(build.contract_message("scan.cu:3: error: expected ';'", "02_naive", "scan.cu"), "")

    def test_host_asm_in_the_host_translation(self):
        src = "/w/x/scan.cu"
        text = "\n".join([
            '# 1 "/w/x/scan.cu"', '# 1 "/usr/include/stdio.h" 1 3', 'extern int f() __asm__("f2");',
            '# 3 "/w/x/scan.cu" 2', '__attribute__((unused)) unsigned lane() {::exit(1);}', '#if 0',
            '# 3', '{ unsigned r; __asm__ volatile("mov.u32 %0, %%laneid;" : "=r" (r)); return r; }',
            '#endif', '# 7 "/w/x/scan.cu"', 'static long h(long n) {', 'const char *s = "asm";',
            '__asm__ volatile("syscall" : "=a" (n) : "a" (39L));', 'return n; }', '# 20', 'asm(".globl x");'])
        self.assertEqual(asm.check_host_asm(text, src), [
            "inline assembly in host code (line 9): only device code may use asm",
            "inline assembly in host code (line 20): only device code may use asm"])

    def test_machine_code_patterns(self):
        x86, arm = elf.EM_X86_64, elf.EM_AARCH64
        for text, kind in (("syscall", "syscall"), ("sysenter", "syscall"), ("int    $0x80", "syscall"),
                           ("int3", None), ("call   *%rax", "indirect"), ("notrack jmp *%rax", "indirect"),
                           ("jmp    *0x8(%rdx)", "indirect"), ("call   0 <f>", None), ("jmp    1f <g+0x3>", None),
                           ("ret", None), ("mov    %rax,%rbx", None)):
            self.assertEqual(machine._classify_insn(x86, text), kind, text)
        for text, kind in (("svc\t#0x0", "syscall"), ("blr\tx8", "indirect"), ("br\tx1", "indirect"),
                           ("bl\t0 <f>", None), ("ret", None)):
            self.assertEqual(machine._classify_insn(arm, text), kind, text)
        insns = [(".text", "_ZL4scanPKiPimPv", 0x10, "call   *%rax"),
                 (".text", "_ZL4scanPKiPimPv", 0x20, "jmp    *%rdx"),
                 (".text", "h", 0x4, "syscall"), (".text.startup", self.REG, 0x8, "call   *%rdx")]
        v = machine.check_machine_code(insns, x86, self.static)
        self.assertEqual(v[0], "calls through a function pointer in host code (scan): lab code may not call "
                               "functions through pointers (function pointers, virtual functions, computed gotos)")
        self.assertEqual(v[1], "host code contains a system call instruction (syscall at h+0x4): lab code must "
                               "not make system calls")
        self.assertEqual(len(v), 2)
        # a CPU-mode object calls its kernels through pointers: only system calls count there
        self.assertEqual(len(machine.check_machine_code(insns, x86, self.static, gpu_build=False)), 1)

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
    def test_parse_describe(self):
        info = fakes.lab_info("03_kogge_stone", "tile", 512, 1 << 28, variants=(("a", "x"), ("b", "y")))
        self.assertEqual((info.id, info.shape, info.tile, info.bench_n, info.max_n, info.type),
                         ("03_kogge_stone", "tile", 512, 1 << 28, 0, "inclusive"))
        self.assertEqual([v.name for v in info.variants], ["a", "b"])
        self.assertEqual((info.element, info.operator, info.mode), ("int32", "add", "gpu"))
        info = fakes.lab_info("02_naive", "whole", 0, 65536, 1 << 20)
        self.assertEqual((info.shape, info.max_n, info.device), ("whole", 1 << 20, True))
        self.assertFalse(fakes.lab_info("01_serial", "host").device)

    def test_parse_describe_refuses_what_is_not_a_description(self):
        good = json.loads(fakes.describe_text("03_x", "tile", 512))
        self.assertIsNotNone(ev.parse_describe(json.dumps(good))[0])
        bad = {"garbage": "not JSON", "list": "[1, 2]",
               "version": json.dumps(dict(good, contract=good["contract"] + 1)),
               "shape": json.dumps(dict(good, shape="blocked")),
               "type": json.dumps(dict(good, type="segmented")),
               "missing": json.dumps({k: v for k, v in good.items() if k != "bench_n"}),
               "bool": json.dumps(dict(good, tile=True)),
               "no variants": json.dumps(dict(good, variants=[])),
               "variant": json.dumps(dict(good, variants=[{"name": "v"}]))}
        for what, text in bad.items():
            info, why = ev.parse_describe(text)
            self.assertIsNone(info, what)
            self.assertTrue(why, what)
        self.assertIn("contract version", ev.parse_describe(bad["version"])[1])

    def test_edge_sizes(self):
        info = fakes.lab_info("03_x", "tile", 512, 1 << 28)
        sizes = ev.edge_sizes(info, 16777223)
        for n in (0, 1, 31, 32, 33, 511, 512, 513, 1025, 1009, 65521, 1023, 1025, 65537, 16777223):
            self.assertIn(n, sizes)
        self.assertEqual(sizes[513], "tile+1")
        self.assertEqual(sizes[1025], "2tile+1")
        capped = ev.edge_sizes(fakes.lab_info("02_x", "whole", 0, 65536, 1 << 20), 16777223)
        self.assertLessEqual(max(capped), 1 << 20)
        self.assertIn((1 << 20) - 1, capped)

    def test_edge_size_names_when_families_meet(self):
        # a tile size beats 2^k +- 1, a pinned name (2^16+1) beats a tile size, "large" beats all
        sizes = ev.edge_sizes(fakes.lab_info("03_x", "tile", 1024, 1 << 28), 16777223)
        self.assertEqual((sizes[1023], sizes[1024], sizes[1025], sizes[4097]),
                         ("tile-1", "tile", "tile+1", "2^12+1"))
        sizes = ev.edge_sizes(fakes.lab_info("03_x", "tile", 32768, 1 << 28), 65537)
        self.assertEqual((sizes[65535], sizes[65537], sizes[98309]), ("2tile-1", "large", "3tile+5"))
        sizes = ev.edge_sizes(fakes.lab_info("03_x", "tile", 32768, 1 << 28), 16777223)
        self.assertEqual(sizes[65537], "2^16+1")
        whole = ev.edge_sizes(fakes.lab_info("02_x", "whole"), 16777223)
        self.assertEqual(whole[1025], "tile+1", "1024 stands in for a lab without a tile")
        self.assertEqual(list(whole), sorted(whole))

    def test_cases_cover_every_dist_and_are_reproducible(self):
        info = fakes.lab_info("03_x", "tile", 512, 1 << 28)
        settings = config.load(CONFIG).lab("03_x")
        a = ev.make_cases(info, settings, 42)
        self.assertEqual(a, ev.make_cases(info, settings, 42))
        self.assertNotEqual([c[2] for c in a], [c[2] for c in ev.make_cases(info, settings, 43)])
        dists = set(settings["correctness"]["dists"])
        self.assertEqual({c[1] for c in a}, dists)
        at_tile1 = {d for n, d, _, opts in a if n == 513 and "--offset-in" not in opts}
        self.assertEqual(at_tile1, dists)
        # unaligned input and output: offsets of 4, 8 and 12 bytes, each for in and for out
        offs = [o for *_, o in a if "--offset-in" in o]
        self.assertEqual(sorted(o[1] for o in offs), ["1", "2", "3"])
        self.assertEqual(sorted(o[3] for o in offs), ["1", "2", "3"])
        # one process of >= 100 calls of at least two sizes (the leak and the multi-n checks)
        # every case checks a second call, on an input the harness draws on the GPU
        self.assertTrue(all(int(o[o.index("--calls") + 1]) >= 2 for *_, o in a))
        # calls 2 and 3 of every case of more than one tile span two tiles and one element: larger
        # than a two-tile case's call 1, smaller than a large one's (and short: a slow lab is not
        # timed out for it), twice, so that state never reset for the next call shows (the
        # harness zeroes the scratch for each new n); a case of one tile or less calls again at
        # its own n
        for n, _, _, o in a:
            if not ev.is_many_calls(o):
                sizes = [int(x) for x in o[o.index("--sizes") + 1].split(",")]
                self.assertEqual(sizes, [n, 1025, 1025] if n > 512 else [n, n], n)  # a tile lab
                self.assertEqual(o[o.index("--calls") + 1], str(len(sizes)))
        self.assertTrue(any(n < int(o[o.index("--sizes") + 1].split(",")[1]) for n, _, _, o in a
                            if not ev.is_many_calls(o)), "some second call grows")
        multi = [o for *_, o in a if ev.is_many_calls(o)]
        self.assertEqual(len(multi), 1)
        self.assertGreaterEqual(int(multi[0][3]), 100)
        sizes = [int(x) for x in multi[0][1].split(",")]
        self.assertGreaterEqual(len(set(sizes)), 4)
        # the many-calls sizes grow and shrink, and most span several tiles (a multi-tile leak)
        self.assertGreaterEqual(sum(1 for x in sizes if x > 2 * 512), 3)
        self.assertTrue(any(b > a for a, b in zip(sizes, sizes[1:])))
        self.assertTrue(any(b < a for a, b in zip(sizes, sizes[1:])))

    def test_whole_lab_sizes_follow_its_work_tiles(self):
        # lab 10 reports its own tile and its scan's: multiples of each and one off them
        info = fakes.lab_info("10_x", "whole", work_tiles=(2048, 6144))
        self.assertEqual(info.tiles, (2048, 6144, 1024))  # the default tile's sizes always stay
        sizes = ev.edge_sizes(info, 16777223)
        for n in (2047, 2048, 2049, 4096, 4097, 6143, 6144, 6145, 12288, 12289):
            self.assertIn(n, sizes)
        settings = config.load(CONFIG).lab("10_applications")
        cases = ev.make_cases(info, settings, 1)
        seconds = {int(o[o.index("--sizes") + 1].split(",")[1]) for n, _, _, o in cases
                   if not ev.is_many_calls(o) and "--squeeze" not in o and n > 2048}
        self.assertEqual(seconds, {2 * max(6144, ev.MIN_BIG_TILE) + 1})
        # a lab that reports no tile: the default
        self.assertEqual(fakes.lab_info("07_x", "whole").tiles, (1024,))
        # a lab 08 that reports a tiny tile (its own scan.cu says so) cannot shrink the checks:
        # the default tile's sizes stay and the multi-tile sizes still span MIN_BIG_TILE
        tiny = fakes.lab_info("08_x", "whole", work_tiles=(1,))
        self.assertTrue(set(ev.edge_sizes(fakes.lab_info("08_x", "whole"), 16777223))
                        <= set(ev.edge_sizes(tiny, 16777223)))
        self.assertGreaterEqual(max(ev.multi_sizes(tiny)), 5 * ev.MIN_BIG_TILE)
        self.assertEqual(ev.second_size(tiny), 2 * ev.MIN_BIG_TILE + 1)
        # and one that reports a huge one is tested as if it had reported none
        self.assertEqual(fakes.lab_info("08_x", "whole", work_tiles=(1 << 30,)).tiles, (1024,))
        bad = json.loads(fakes.describe_text())
        bad["work_tiles"] = [0]
        self.assertIsNone(ev.parse_describe(json.dumps(bad))[0])

    def test_the_single_pass_labs_get_stress_cases_on_a_gpu_only(self):
        """correctness.stress: on a GPU, each listed number of the lab's largest tiles and one
        element, its calls all at that n in one process, squeezed onto a few SMs (--squeeze);
        none in CPU mode (its scheduler keeps few blocks resident anyway), none for a lab
        without it, and none for a reported variant (over its size cap)."""
        cfg = config.load(CONFIG)
        info = fakes.lab_info("08_x", "whole", work_tiles=(6144,))
        settings = cfg.lab("08_decoupled_lookback")
        stress = settings["correctness"]["stress"]
        got = [(n, o) for n, _, _, o in ev.make_cases(info, settings, 3) if "--squeeze" in o]
        self.assertEqual([n for n, _ in got], [t * 6144 + 1 for t in stress["tiles"]])
        for _, o in got:
            self.assertEqual(o, ("--calls", str(stress["calls"]), "--squeeze", str(stress["sms"])))
            self.assertNotIn("--sizes", o)  # every call at the same n: an earlier call's state shows
        self.assertFalse(any("--squeeze" in o for *_, o in ev.make_cases(info, settings, 3, mode="cpu")))
        self.assertFalse(any("--squeeze" in o for *_, o in ev.make_cases(info, cfg.lab("03_kogge_stone"), 3)))
        variants = (("add", "a"), ("max", "m"), ("min", "n"), ("fadd", "f"), ("segmented", "s"))
        ops = fakes.lab_info("09_x", "whole", variants=variants, work_tiles=(2048,))
        fadd = ev.make_cases(ops, cfg.lab("09_operators"), 3, variant="fadd")
        self.assertTrue(any("--squeeze" in o and o[-2:] == ("--variant", "fadd") for *_, o in fadd))
        self.assertFalse(any("--squeeze" in o for *_, o in ev.report_cases(info, settings, 3, "other")))

    def test_cpu_mode_repeats_one_n_of_more_tiles_than_it_keeps_resident(self):
        """In CPU mode the default variant of a lab with correctness.cpu_ordering gets one case of
        three calls at the same n of sixteen of its largest tiles (fewer where the CPU-mode cap
        says so, never CPU_RESIDENT_BLOCKS or fewer): the other cases repeat only a size of three
        tiles, which CPU mode's four resident blocks run at once, so a look-back that accepts the
        call before's descriptors passed them for some scheduler seeds. A GPU grade's ordering
        cases (CPU mode) get it too; another variant, another lab, or a GPU's own cases do not."""
        cfg = config.load(CONFIG)
        info = fakes.lab_info("08_x", "whole", work_tiles=(6144,))
        settings = cfg.lab("08_decoupled_lookback")

        def repeated(cases):  # the n of each case whose calls are all at that n, over resident blocks' tiles
            return [n for n, _, _, o in cases if n > ev.CPU_RESIDENT_BLOCKS * 6144
                    and o[:2] == ("--sizes", ",".join([str(n)] * ev.CASE_CALLS_MAX))]
        cpu = stage_cases.plan_cases(info, settings, 3, "cpu")
        self.assertEqual(repeated(cpu), [16 * 6144 + 1])
        self.assertEqual(len(cpu), len(stage_cases.plan_cases(info, cfg.lab("07_hierarchical"), 3, "cpu")) + 1)
        self.assertEqual(repeated(ev.ordering_cases(info, settings, 3)), [10 * 6144 + 1])
        self.assertEqual(repeated(ev.make_cases(info, settings, 3)), [])  # a GPU's: its squeezed stress cases
        self.assertEqual(repeated(ev.make_cases(info, settings, 3, mode="cpu", variant="other")), [])
        self.assertEqual(repeated(ev.make_cases(info, cfg.lab("07_hierarchical"), 3, mode="cpu")), [])
        self.assertIsNone(ev.cpu_repeat_size(info, 4 * 6144 + 1))
        self.assertEqual(ev.cpu_repeat_size(info, 5 * 6144 + 1), 5 * 6144 + 1)
        for bad in ({"sms": 0, "calls": 2, "tiles": [4]}, {"sms": 4, "calls": 2}, {"sms": 4, "calls": 2, "tiles": []}):
            with self.assertRaises(config.ConfigError):
                config._stress(bad, "labs.08.correctness.stress")

    def test_every_graded_variant_meets_the_whole_matrix(self):
        variants = (("add", "a"), ("max", "m"), ("min", "n"), ("fadd", "f"), ("segmented", "s"))
        info = fakes.lab_info("09_x", "whole", variants=variants, work_tiles=(2048,))
        settings = config.load(CONFIG).lab("09_operators")
        self.assertEqual(ev.graded_variants(info, settings), tuple(v for v, _ in variants))
        base = ev.make_cases(info, settings, 5)
        dists = set(settings["correctness"]["dists"])
        large = settings["correctness"]["large_n"]
        at_large = []
        for name, _ in variants:
            cases = ev.make_cases(info, settings, 5, variant=name)
            # every size class and every distribution, each variant (no rotation over variants)
            self.assertEqual({n for n, *_ in cases}, {n for n, *_ in base}, name)
            self.assertTrue(dists <= {d for _, d, _, _ in cases}, name)
            for n in (2049, 4097, 65537):  # tile+1, 2tile+1, 2^16+1: every distribution
                self.assertTrue(dists <= {d for m, d, _, o in cases if m == n and "--offset-in" not in o}, (name, n))
            big = {d for m, d, _, o in cases if m == large}
            if name != "add":
                self.assertTrue(all(o[-2:] == ("--variant", name) for *_, o in cases), name)
                self.assertEqual(len(big), 1, name)  # the costly size: one distribution per variant
                at_large += big
            else:
                self.assertTrue(dists <= big)
        self.assertEqual(len(at_large), len(set(at_large)), "the variants' large cases use different distributions")
        # an all-negative input for max and an all-positive one for min, at every all-dists size
        for name, dist in (("max", "negative"), ("min", "positive")):
            at = {n for n, d, _, _ in ev.make_cases(info, settings, 5, variant=name) if d == dist}
            self.assertEqual(at, {2049, 4097, 65537})  # every all_dists size but the large one
        # the lab's *_two_pass variants are not in the config's list: reported, not graded
        with_two_pass = fakes.lab_info("09_x", "whole", variants=variants + (("add_two_pass", "t"),),
                                       work_tiles=(2048,))
        self.assertEqual(ev.graded_variants(with_two_pass, settings), tuple(v for v, _ in variants))
        self.assertEqual(ev.report_variants(with_two_pass, settings), ("add_two_pass",))
        # a lab graded on its default variant: the others are reported, at small sizes only
        lab03 = fakes.lab_info("03_x", "tile", 512, variants=(("double_buffer", "d"), ("two_barrier", "t")))
        s03 = config.load(CONFIG).lab("03_kogge_stone")
        self.assertEqual(ev.report_variants(lab03, s03), ("two_barrier",))
        rep = ev.report_cases(lab03, s03, 5, "two_barrier")
        self.assertTrue(rep and max(n for n, *_ in rep) == ev.REPORT_MAX_N["gpu"] == 65537)
        rep_cpu = ev.report_cases(lab03, s03, 5, "two_barrier", mode="cpu")
        # in CPU mode the same cases up to 16385 (here 4097, 8 tiles of 512), the larger ones left out
        self.assertEqual(rep_cpu, [c for c in rep if c[0] <= ev.REPORT_MAX_N["cpu"] == 16385])
        self.assertTrue(len(rep_cpu) < len(rep) and max(n for n, *_ in rep_cpu) == 4097)
        self.assertEqual(len({n for n, *_ in rep}), len([c for c in rep if "--offset-in" not in c[3]]),
                         "one distribution per size")
        self.assertTrue(all("two_barrier" in o for *_, o in rep))

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
            (self.r(1, self.rep("wrong", "out[3] expected 4, got 5")), "wrong",
             "wrong answer: out[3] expected 4, got 5"),
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
    full = LabResult.blank("03_kogge_stone", cfg.lab("03_kogge_stone"), "gpu").to_dict()
    full["build"]["ok"] = True
    full["correctness"].update(passed=40, total=40, points=60)
    full["sanitizer"].update(status="passed", points=10, note="memcheck and racecheck found no errors")
    full["speed"].update(status="graded", points=30, ratio=1.01, metric="tile_ms", student_ms=0.5,
                         reference_ms=0.495, gbps=2500.0, speedup_vs_serial=300.0, bench_n=1 << 28, note="1.01x")
    full.update(points=100, summary="all checks passed")
    broken = LabResult.blank("02_naive", cfg.lab("02_naive"), "gpu").to_dict()
    broken.update(status="build failed", summary="build failed: scan.cu:3: error: x")
    broken["build"]["message"] = "scan.cu:3: error: x"
    ni = LabResult.blank("04_brent_kung", cfg.lab("04_brent_kung"), "gpu").to_dict()
    ni.update(status="not implemented", summary="not implemented")
    return {"grader": "grader/grade.py", "course": "c", "mode": "gpu", "device": "Fake", "seed": 5,
            "status": "graded", "message": "", "points": 100, "max_points": 300, "elapsed_s": 3.0,
            "labs": [full, broken, ni]}


class Formats(unittest.TestCase):
    def test_gradescope_says_where_the_labs_ran_once(self):
        result = sample_result()
        self.assertIn("Graded 3 labs in gpu mode on Fake; seed 5.",
                      json.loads(formats.get("gradescope").render(result))["output"])
        result.update(mode="cpu", device="CPU mode")
        out = json.loads(formats.get("gradescope").render(result))["output"]
        self.assertIn("Graded 3 labs in CPU mode (no GPU: correctness, no timing); seed 5.", out)
        self.assertNotIn("on CPU mode", out)

    def test_a_build_failure_quotes_the_compiler_line_once(self):
        broken = sample_result()["labs"][1]
        broken["build"]["message"] = "scan.cu:3: error: x\n  3 | int x = ;\n    |         ^"
        lines = lab_detail_lines(broken)
        self.assertEqual(lines, ["build failed: scan.cu:3: error: x", "  3 | int x = ;", "    |         ^"])

    def test_gradescope_fields(self):
        doc = json.loads(formats.get("gradescope").render(sample_result()))
        self.assertEqual(doc["score"], 100)
        self.assertEqual(doc["visibility"], "visible")
        self.assertIsInstance(doc["execution_time"], int)
        tests = doc["tests"]
        self.assertEqual(len(tests), 9)  # 3 parts for each of 3 labs
        for t in tests:
            self.assertEqual(set(t), {"name", "number", "tags", "score", "max_score", "status", "output",
                                      "visibility"})
            self.assertIn(t["status"], ("passed", "failed"))
            self.assertLessEqual(t["score"], t["max_score"])
            self.assertEqual(t["visibility"], "visible")
        self.assertAlmostEqual(sum(t["score"] for t in tests), doc["score"])
        self.assertEqual(sum(t["max_score"] for t in tests), 300)
        self.assertEqual([t["number"] for t in tests[:3]], ["3.1", "3.2", "3.3"])
        self.assertEqual(tests[1]["tags"], ["03_kogge_stone", "sanitizer"])
        by = {t["name"]: t for t in tests}
        self.assertEqual(by["03_kogge_stone: speed"]["score"], 30)
        self.assertEqual(by["02_naive: correctness"]["score"], 0)
        self.assertEqual(by["02_naive: correctness"]["status"], "failed")
        self.assertIn("error: x", by["02_naive: correctness"]["output"])
        self.assertIn("not implemented", by["04_brent_kung: correctness"]["output"])
        self.assertEqual(doc["leaderboard"], [{"name": "03_kogge_stone GB/s", "value": 2500.0, "order": "desc"},
                                              {"name": "03_kogge_stone time vs reference", "value": 1.01,
                                               "order": "asc"}])  # lower ranks higher

    def test_gradescope_visibility_per_part(self):
        result = sample_result()
        for lab in result["labs"]:
            lab["visibility"] = {"correctness": "visible", "sanitizer": "after_published", "speed": "hidden"}
        tests = json.loads(formats.get("gradescope").render(result))["tests"]
        seen = {t["tags"][1]: t["visibility"] for t in tests}
        self.assertEqual(seen, {"correctness": "visible", "sanitizer": "after_published", "speed": "hidden"})

    def test_config_refuses_an_unknown_visibility_or_mode(self):
        with open(CONFIG) as f:
            data = json.load(f)
        bad = json.loads(json.dumps(data))
        bad["labs"]["02_naive"] = {"visibility": {"speed": "later"}}
        with self.assertRaises(config.ConfigError) as cm:
            config.Config(bad)
        self.assertIn("labs.02_naive.visibility.speed must be one of visible, after_due_date", str(cm.exception))
        bad = json.loads(json.dumps(data))
        bad["mode"] = "fast"
        with self.assertRaises(config.ConfigError) as cm:
            config.Config(bad)
        self.assertIn("mode must be one of auto, gpu, cpu", str(cm.exception))
        for wrong in ("some", [], ["add", 3]):  # correctness.variants: default, all or names
            bad = json.loads(json.dumps(data))
            bad["labs"]["09_operators"]["correctness"]["variants"] = wrong
            with self.assertRaises(config.ConfigError) as cm:
                config.Config(bad)
            self.assertIn("labs.09_operators.correctness.variants must be", str(cm.exception))
        ok = json.loads(json.dumps(data))
        ok["labs"]["03_kogge_stone"] = {"visibility": {"speed": "after_due_date"}}
        c = config.Config(ok)
        self.assertEqual(c.lab("03_kogge_stone")["visibility"]["speed"], "after_due_date")
        self.assertEqual(c.lab("03_kogge_stone")["visibility"]["correctness"], "visible")

    def test_gradescope_when_the_grader_failed(self):
        for status in ("infrastructure error", "grader error"):
            doc = json.loads(formats.get("gradescope").render({"status": status, "message": "no GPU"}))
            self.assertEqual(doc["score"], 0)
            self.assertEqual(doc["tests"], [])
            self.assertEqual(doc["visibility"], "visible")
            self.assertIn("The grader failed to run (no GPU)", doc["output"])
            self.assertIn("not a judgement of your code", doc["output"])
            self.assertIn("Ask your instructor to regrade", doc["output"])
            self.assertNotIn("has been told", doc["output"])
            self.assertIn("not graded", formats.get("table").render({"status": status, "message": "x"}))
            self.assertEqual(ET.fromstring(formats.get("junit").render({"status": status, "message": "x"}))
                             .find("testsuite").get("errors"), "1")

    def test_junit(self):
        root = ET.fromstring(formats.get("junit").render(sample_result()))
        suites = root.findall("testsuite")
        self.assertEqual([s.get("name") for s in suites], ["03_kogge_stone", "02_naive", "04_brent_kung"])
        self.assertEqual(suites[0].get("failures"), "0")
        self.assertEqual(suites[1].get("failures"), "3")
        self.assertEqual(len(root.findall(".//testcase")), 9)

    def test_json_round_trips(self):
        r = sample_result()
        self.assertEqual(json.loads(formats.get("json").render(r)), r)

    def test_table_colour_only_on_a_terminal_and_never_with_no_color(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True
        old = dict(os.environ)
        try:
            os.environ.pop("NO_COLOR", None)
            os.environ["TERM"] = "xterm"
            self.assertTrue(formats.use_colour(Tty()))
            self.assertFalse(formats.use_colour(io.StringIO()))
            os.environ["NO_COLOR"] = "1"
            self.assertFalse(formats.use_colour(Tty()))
        finally:
            os.environ.clear()
            os.environ.update(old)
        plain = formats.get("table").render(sample_result(), colour=False)
        self.assertNotIn("\033", plain)
        self.assertIn("\033[", formats.get("table").render(sample_result(), colour=True))
        self.assertIn("03_kogge_stone", plain)
        self.assertIn("40/40", plain)
        self.assertIn("1.01x", plain)
        self.assertIn("not implemented", plain)
        self.assertIn("FAILED", plain)
        self.assertIn("total: 100.0/300", plain)

    def test_table_says_speed_not_graded_in_cpu_mode(self):
        r = sample_result()
        self.assertNotIn("speed not graded", formats.get("table").render(r))
        r["message"] = "speed not graded: no GPU (CPU mode grades correctness only)"
        self.assertIn("speed not graded: no GPU", formats.get("table").render(r))

    def test_table_for_infrastructure_error(self):
        self.assertIn("infrastructure error",
                      formats.get("table").render({"status": "infrastructure error", "message": "x"}))


if __name__ == "__main__":
    unittest.main()
