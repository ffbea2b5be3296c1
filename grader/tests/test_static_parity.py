"""The static checks give one verdict whatever the machine: a fixture of grader/fixtures/ built and
checked in CPU mode with nvcc hidden (Gradescope's machine: CPU mode's own checks on the C++ it
compiles, grader/gradelib/checks/cpu.py) must get the verdict the GPU path gives it
(grader/fixtures/submissions/NAME/expected.json): refused by a static check with the recorded
message when the GPU refuses it, never refused when the GPU does not, and a build failure where
the GPU's build fails, with no check skipped. test_fixtures.py grades every fixture CPU mode can diagnose exactly so
(check_fixtures.py --cpu --no-nvcc, which checks the same: the diagnosis, and no static note
saying a check did not run); this builds the ones it cannot (they need a GPU to be diagnosed,
but their static verdict is the GPU's here too), CPU mode's own attacks and the reference
solutions. The GPU grades every fixture with check_fixtures.py on a GPU machine. Only the build
stage runs here (no cases), several builds at once (up to 4)."""
import concurrent.futures as cf
import os
import re
import subprocess
import tempfile
import unittest
from unittest import mock

import fakes
import fixturelib
from gradelib import build, config, grading
from gradelib.checks import cpu as cpu_checks
from gradelib.status import Status

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "parity")
FIXTURES = os.path.join(fakes.GRADER, "fixtures")


def gpu_verdict(entry):
    """(status the GPU path's static checks and build give, text the result must contain): a
    fixture whose expected status is a static check or build failure has that verdict; any
    other reaches the graded stage."""
    expect = entry["expect"]
    status = expect.get("status")
    if status in (Status.STATIC_CHECK_FAILED.value, Status.BUILD_FAILED.value):
        return status, expect.get("contains", "")
    return Status.GRADED.value, ""


# Device code's calls, as kernels added to lab 02's reference: those nvcc refuses ("bad") and those
# it allows ("ok": constexpr with --expt-relaxed-constexpr, CUDA's device library, __device__ and
# __host__ __device__ functions, lambdas, implicit and defaulted constructors). Checked against
# nvcc itself by HostCallsAsNvcc.
DEVICE_CALLS_PRELUDE = """#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>
#define DEV_INLINE __device__ __forceinline__
static int host_fn(int x) { return x + 1; }
template <typename T> T host_tpl(T x) { return x + 1; }
constexpr int twice(int x) { return 2 * x; }
struct Plain { int a; float b; };
struct Explicit { int a; Explicit(int x) : a(x) {} };
struct Defaulted { int a = 3; Defaulted() = default; };
struct Member { int a; int get() const { return a; } };
struct Both { int a; __host__ __device__ int get() const { return a; } };
struct Add { __device__ int operator()(int x, int y) const { return x + y; } };
DEV_INLINE int dev_helper(int x) { return x * 3; }
template <typename T> __device__ T dev_tpl(T x) { return x + 2; }
"""
DEVICE_CALLS = {
    "bad": {"sort": "std::sort(a, a + 4);", "swap": "std::swap(a[0], a[1]);", "host_fn": "a[0] = host_fn(a[1]);",
            "host_tpl": "a[0] = host_tpl(a[1]);", "ctor": "Explicit e(3); a[0] = e.a;",
            "member": "Member m{2}; a[0] = m.get();", "vector": "std::vector<int> v; a[0] = 1;",
            "rand": "a[0] = rand();"},
    "ok": {"minmax": "a[0] = std::min(a[1], a[2]) + std::max<int>(a[1], 3) + std::clamp(a[1], 0, 3);",
           "math": "a[0] = (int)(sqrtf((float)a[1]) + std::fabs((float)a[1]) + floorf(1.5f) + (float)std::ceil(1.5)"
                   " + (float)std::abs(a[1]) + (float)abs(a[2]));",
           "printf": 'printf("%d\\n", a[0]);',
           "heap": "int *p = (int *)malloc(8); p[0] = 1; a[0] = p[0]; free(p); memcpy(a, a + 1, 4); memset(a, 0, 4);",
           "constexpr": "a[0] = twice(a[1]) + std::numeric_limits<int>::max();",
           "structs": "Plain i{1, 2.f}; Defaulted d; Both h{1}; Add add; a[0] = i.a + d.a + h.get() + add(1, 2);",
           "lambda": "auto f = [&](int j) { return a[j] + dev_helper(j); }; a[0] = f(1);",
           "device": "a[0] = dev_helper(a[1]) + dev_tpl(a[2]) + (int)dev_tpl(1.5f);",
           "intrinsics": "assert(a != nullptr); a[0] = atomicAdd(a + 1, 1) + __popc(a[2]) + "
                         "__shfl_sync(~0u, a[1], 0);"},
}


def device_calls_source(kind):
    """(lab 02's reference with DEVICE_CALLS_PRELUDE and one kernel k_NAME per call of
    DEVICE_CALLS[kind], {NAME: the line of the call})."""
    with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"), encoding="utf-8") as f:
        text = f.read()
    anchor = '#include "course/02_naive.h"'
    text = text.replace(anchor, DEVICE_CALLS_PRELUDE + anchor, 1)
    lines = {}
    for name, call in DEVICE_CALLS[kind].items():
        text += f"\n__global__ void k_{name}(int *a)\n{{\n"
        lines[name] = text.count("\n") + 1
        text += f"    {call}\n}}\n"
    return text, lines


class HostCallsAsNvcc(unittest.TestCase):
    """nvcc's own verdicts on the two files of DEVICE_CALLS: it refuses exactly the bad calls,
    at their lines, and builds the good ones (what CPU mode's check is measured against)."""

    def test_nvcc_refuses_the_bad_calls_only(self):
        nvcc = build.find_nvcc()
        if nvcc is None:
            self.skipTest("no nvcc here: nvcc's verdicts cannot be read")
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ("ok", "bad"):
                text, lines = device_calls_source(kind)
                path = os.path.join(tmp, kind + ".cu")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                r = subprocess.run([nvcc, "-std=c++17", "--expt-relaxed-constexpr", "-I", os.path.join(ROOT, "common"),
                                    "-c", path, "-o", os.path.join(tmp, kind + ".o")],
                                   capture_output=True, text=True, timeout=300)
                out = r.stdout + r.stderr
                refused = {int(m) for m in re.findall(re.escape(kind)
                                                      + r"\.cu\((\d+)\): error: calling a __host__ function",
                                                      out)}  # (nvcc also names lines of the library's headers)
                if kind == "ok":
                    self.assertEqual((r.returncode, refused), (0, set()), out)
                else:
                    self.assertEqual(refused, set(lines.values()), out)


class CallGraphCache(unittest.TestCase):
    """checks/cpu.py keeps a source's call graph in the builder's cache folder by what was compiled,
    the private copy's path left out: another grading session (a class's references, the test
    suite's modules) finds it, with its own private path in it."""

    def test_one_compile_for_one_source_wherever_its_private_copy_is(self):
        compiles = []
        real = cpu_checks.proc.run

        def counted(argv, *a, **k):
            if "-fcallgraph-info" in argv:
                compiles.append(argv)
            return real(argv, *a, **k)
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(cpu_checks.proc, "run", counted), \
                mock.patch.dict(cpu_checks._CALLGRAPHS, clear=True):
            got = {}
            for name in ("a", "b"):
                d = os.path.join(tmp, name)
                os.makedirs(d)
                priv, cpp = os.path.join(d, "scan.cu"), os.path.join(d, "scan.cpu.cpp")
                with open(cpp, "w") as f:
                    f.write(f'#line 1 "{priv}"\nint helper(int x) {{ return x + 1; }}\n'
                            "int entry(int x) { return helper(x); }\n")
                cmd = ["g++", "-std=c++17", "-x", "c++", "-iquote", d]
                cpu_checks._CALLGRAPHS.clear()  # a session of its own: only the folder is shared
                got[name] = cpu_checks._callgraph(cmd, cpp, priv, d, 60, os.path.join(tmp, "cache"))
            self.assertEqual(len(compiles), 1)  # b found a's
            for name, (nodes, edges) in got.items():
                [(caller, callee, where)] = [e for e in edges if "helper" in e[1]] or [(None, None, None)]
                self.assertEqual(where[:2], (os.path.join(tmp, name, "scan.cu"), 2), name)


class StaticParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fixtures = fixturelib.every_expected()
        # those test_fixtures.py does not grade in CPU mode
        cls.expected = {k: v for k, v in fixtures.items() if "cpu" not in v["modes"]}
        cfg = config.load(os.path.join(fakes.GRADER, "config.json"))
        # nvcc hidden: find_nvcc reads NVCC first (and the Makefile's CPU mode compiles with g++)
        cls.env = mock.patch.dict(os.environ, {"NVCC": "/nonexistent/nvcc"})
        cls.env.start()
        cls.grader = grading.Grader(ROOT, cfg, WORK, mode="cpu", jobs=max(1, min(4, os.cpu_count() or 1)))
        cls.grader.build_course()
        names = sorted(cls.expected)
        cls.tmp = tempfile.TemporaryDirectory()  # the patched fixtures (grader/fixturelib.py)
        sources = {n: fixturelib.source_path(n, cls.expected[n]["lab"], cls.tmp.name) for n in names}

        def build_one(n):
            lab = cls.expected[n]["lab"]
            return cls.grader.build_submission("parity-" + n, {lab: sources[n]}, labs=[lab])[lab]
        # a fixture is one lab (one compiler at a time): the grader's jobs build several at once, as
        # batch mode builds the next submission while one is graded
        with cf.ThreadPoolExecutor(cls.grader.jobs) as pool:
            cls.built = dict(zip(names, pool.map(build_one, names)))

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()
        cls.tmp.cleanup()

    def test_no_nvcc_builder_was_made(self):
        self.assertIsNone(build.find_nvcc())
        self.assertIsNone(self.grader.symbol_builder)

    def test_every_fixture_cpu_mode_cannot_grade_gets_the_gpu_verdict_without_nvcc(self):
        self.assertTrue(self.expected)
        wrong = []
        for n, entry in sorted(self.expected.items()):
            want, contains = gpu_verdict(entry)
            got = self.built[n]
            text = got.summary + "\n" + "\n".join(got.static.violations) + "\n" + got.build.message
            if got.status.value != want:
                wrong.append(f"{n}: {got.status.value} ({got.summary}), the GPU path: {want}")
            elif contains and contains not in text:
                wrong.append(f"{n}: {want}, but without {contains!r}: {got.summary}")
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_nothing_says_a_check_was_skipped(self):
        for n, got in self.built.items():
            self.assertNotIn("skipped", got.static.note, n)
            self.assertNotIn("not run", got.static.note, n)
        self.assertEqual(self.grader.notes, [])

    def test_cpu_mode_attacks_of_its_own(self):
        """What only CPU mode's build could let through: asm in device code reaching the host's
        assembler (.incbin reads a file at build time, as root), #embed, CPU mode's runtime
        called by name."""
        with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"), encoding="utf-8") as f:
            ref = f.read()
        attacks = {
            "incbin": ('__device__ void leak()\n{\n    asm volatile(".incbin \\"/etc/passwd\\"");\n}\n',
                       "inline assembly in device code (line 3)"),
            "embed": ('static const char blob[] = {\n#embed "/etc/passwd"\n};\n', "#embed (line 2)"),
            "runtime": ("static void peek() { (void)::lab_cpu::device_clock(); }\n",
                        "names lab_cpu (line 1)"),
        }
        with tempfile.TemporaryDirectory() as tmp:
            for name, (code, want) in attacks.items():
                path = os.path.join(tmp, name, "scan.cu")
                os.makedirs(os.path.dirname(path))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(code + ref)
                got = self.grader.build_submission("attack-" + name, {"02_naive": path}, labs=["02_naive"])["02_naive"]
                self.assertEqual(got.status, Status.STATIC_CHECK_FAILED, f"{name}: {got.summary}")
                self.assertIn(want, "\n".join(got.static.violations), name)

    def test_host_code_that_uses_a_device_variable(self):
        """nvcc refuses host code that reads or writes a __device__ or __constant__ variable (the
        Makefile's --diag-error 20091,20092: on a GPU host code has a copy of its own, which no
        kernel sees); without nvcc CPU mode's check refuses it too (checks/cpu.py
        host_device_vars), and lets through what nvcc lets through: the variable set by a kernel,
        a struct member and a local of the same name, sizeof. nvcc's verdicts on these two
        files were checked by hand: the second refused at its line 42, the first built."""
        with open(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"), encoding="utf-8") as f:
            ref = f.read()
        kernel = ("__global__ void naive_scan_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n)\n"
                  "{\n    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n)")
        launch = ("    const unsigned blocks = (unsigned)CEIL_DIV(n, (size_t)BLOCK_SIZE);\n"
                  "    naive_scan_kernel<<<blocks, BLOCK_SIZE>>>(d_in, d_out, n);")
        self.assertIn(kernel, ref)
        self.assertIn(launch, ref)
        honest = ref.replace(kernel, (
            "__device__ size_t g_n; /* set by a kernel */\nstruct shape {\n    size_t g_n;\n};\n\n"
            "__global__ void set_n_kernel(size_t n)\n{\n    g_n = n;\n}\n\n" + kernel.replace("(i >= n)", "(i >= g_n)")
        )).replace(launch, (
            "    struct shape s;\n    s.g_n = n;\n    static_assert(sizeof(g_n) == sizeof(size_t), \"a size\");\n"
            "    set_n_kernel<<<1, 1>>>(s.g_n);\n    size_t g_n = n; /* a local of the same name */\n"
            "    const unsigned blocks = (unsigned)CEIL_DIV(g_n, (size_t)BLOCK_SIZE);\n"
            "    naive_scan_kernel<<<blocks, BLOCK_SIZE>>>(d_in, d_out, n);"))
        bad = ref.replace(kernel, "__constant__ size_t k_limit[1];\n\n"
                          + kernel.replace("(i >= n)", "(i >= n || i >= k_limit[0])")
                          ).replace(launch, "    if (k_limit[0] == 0) /* reads the host's copy */\n"
                                            "        return LAB_OK;\n" + launch)
        with tempfile.TemporaryDirectory() as tmp:
            got = {}
            for name, text in (("honest", honest), ("bad", bad)):
                path = os.path.join(tmp, name, "scan.cu")
                os.makedirs(os.path.dirname(path))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                got[name] = self.grader.build_submission("devvar-" + name, {"02_naive": path},
                                                         labs=["02_naive"])["02_naive"]
        self.assertEqual(got["honest"].status, Status.GRADED, got["honest"].summary)
        self.assertEqual(got["bad"].status, Status.STATIC_CHECK_FAILED, got["bad"].summary)
        line = bad.splitlines().index("    if (k_limit[0] == 0) /* reads the host's copy */") + 1
        self.assertEqual(list(got["bad"].static.violations), [
            f"host code uses the __constant__ variable k_limit (line {line}): on a GPU, host code has its own copy "
            "of it, which no kernel reads or writes, so the lab would compute with a wrong value (nvcc refuses "
            "it); pass the value to the kernel as a parameter, or keep it in memory from cudaMalloc"])

    def test_device_code_calling_host_functions(self):
        """Without nvcc, device code that calls a host function is refused as nvcc refuses it
        (checks/device_calls.py): each bad call of DEVICE_CALLS at its own line, with nvcc's
        wording and the callee's name, and none of the calls nvcc allows (HostCallsAsNvcc
        checks nvcc's own verdicts on the same two files)."""
        with tempfile.TemporaryDirectory() as tmp:
            got = {}
            for kind in ("ok", "bad"):
                text, lines = device_calls_source(kind)
                path = os.path.join(tmp, kind, "scan.cu")
                os.makedirs(os.path.dirname(path))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                violations, note, error = cpu_checks.source_checks(self.grader.builder, path, self.grader.config.static)
                self.assertEqual((violations, note), ([], ""), kind)
                got[kind] = (error, lines)
        self.assertEqual(got["ok"][0], "")
        error, lines = got["bad"]
        refused = {int(m) for m in re.findall(r"^scan\.cu\((\d+)\): error: calling a __host__ function", error, re.M)}
        self.assertLessEqual(set(lines.values()), refused, error)
        # and nothing else; a destructor runs at the closing brace (nvcc names the declaration's line)
        self.assertLessEqual(refused, set(lines.values()) | {n + 1 for n in lines.values()}, error)
        for name, want in (("sort", '"std::sort<int*>"'), ("swap", '"std::swap<int>"'), ("host_fn", '"host_fn"'),
                           ("ctor", '"Explicit::Explicit"'), ("member", '"Member::get"'), ("rand", '"rand"')):
            self.assertIn(f"scan.cu({lines[name]}): error: calling a __host__ function({want}) from a __global__ "
                          f'function("k_{name}") is not allowed', error)

    def test_the_reference_solutions_pass_every_check(self):
        labs = grading.course_labs(ROOT)
        sources = {lab: os.path.join(ROOT, "solutions", lab, "scan.cu") for lab in labs}
        built = self.grader.build_submission("parity-solutions", sources, labs=labs)
        bad = {lab: b.summary for lab, b in built.items() if b.status != Status.GRADED}
        self.assertEqual(bad, {})


if __name__ == "__main__":
    unittest.main()
