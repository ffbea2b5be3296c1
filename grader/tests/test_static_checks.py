"""The static checks on code nvcc really compiles (skipped where nvcc is missing): small labs that
try to get around them, each refused with the message a student sees, and every reference
solution and every skeleton passing all of them.

Objects are compiled with the Makefile's NVFLAGS and kept under the build folder, keyed by the
hash of source and flags, so a second run only repeats the checks themselves; the honest sweep
uses the objects `make` built when they are current."""
import concurrent.futures as cf
import copy
import hashlib
import os
import shutil
import threading
import unittest

import fakes
from gradelib import build, config, proc
from gradelib.checks import elf, lexer, nvcc, objects, source

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "static")
STATIC = config.load(os.path.join(fakes.GRADER, "config.json")).static
JOBS = max(1, min(8, os.cpu_count() or 1))

# A GPU lab (lab 02: its header, its entry point naive_scan; the descriptor is the course's) with
# holes: {top} after the course's includes, {glob} at file scope, {body} in the launcher before
# the kernel launch, {kernel} in the kernel.
TEMPLATE = """#include "course/02_naive.h"
#include "cuda_check.h"
{top}
{glob}
__global__ void scan_kernel(const int *in, int *out, size_t n)
{{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned sum = 0;
    for (size_t j = 0; j <= i; j++)
        sum += (unsigned)in[j];
    {kernel}
    out[i] = (int)sum;
}}

lab_result naive_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{{
    (void)d_temp;
    if (n == 0)
        return LAB_OK;
    unsigned blocks = (unsigned)CEIL_DIV(n, (size_t)256);
    {body}
    scan_kernel<<<blocks, 256>>>(d_in, d_out, n);
    LAUNCH_CHECK();
    return LAB_OK;
}}
"""

SNIPPETS = {
    "honest": dict(
        top="#include <cuda/atomic>\n#include <stdint.h>\n#include <math.h>",
        glob=("__device__ __forceinline__ unsigned lane_id()\n{\n    unsigned r;\n"
              "    asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r));\n    return r;\n}\n"
              "__host__ __device__ inline unsigned fence_then(unsigned x)\n{\n#ifdef __CUDA_ARCH__\n"
              "    asm volatile(\"membar.gl;\" ::: \"memory\");\n#endif\n    return x;\n}\n"
              # a switch that gcc -O3 turns into a jump table unless NVFLAGS has -fno-jump-tables
              "static volatile int knob;\nstatic __attribute__((noinline)) int twice(int v) { return 2 * v + knob; }\n"
              "static int pick(int v, int w)\n{\n    switch (v) {\n    case 0: return twice(w);\n"
              "    case 1: return twice(w) + 4;\n    case 2: w = twice(w); return twice(w);\n    case 3: return 19;\n"
              "    case 4: return twice(twice(w));\n    case 5: return twice(w) - 2;\n"
              "    case 6: return twice(w) * 3;\n"
              "    case 7: return twice(w) ^ 6;\n    case 8: return 99;\n    case 9: return twice(w) + 77;\n"
              "    default: return 1;\n    }\n}\n"
              "__device__ unsigned long long ticket;"),
        kernel="sum += fence_then(lane_id()) * 0u; "
               "cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(ticket).fetch_add(0);",
        body=("int dev = 0, sms = 0, per_sm = 0;\n    CUDA_CHECK(cudaGetDevice(&dev));\n"
              "    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));\n"
              "    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scan_kernel, 256, 0));\n"
              "    if (pick(sms % 11, per_sm) == -12345 || log2((double)n) < 0)\n        return LAB_NOT_IMPLEMENTED;\n"
              "    CUDA_CHECK(cudaMemset(d_out, 0, n * sizeof(int)));")),
    "weak_reference": dict(
        glob='extern "C" void lab_reference_scan(const int *in, int *out, size_t n, int type) __attribute__((weak));',
        body="if (lab_reference_scan) {\n        lab_reference_scan(d_in, d_out, n, 0);\n"
             "        return LAB_OK;\n    }"),
    "mkstemp": dict(
        top="#include <stdlib.h>\n#include <sys/mman.h>\n#include <unistd.h>",
        body=('char name[] = "/tmp/scanXXXXXX";\n    int fd = mkstemp(name);\n'
              "    if (fd >= 0 && ftruncate(fd, 4096) == 0) {\n"
              "        void *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);\n"
              "        (void)p;\n    }")),
    "driver_entry_point": dict(
        body=("void *fn = 0;\n    cudaDriverEntryPointQueryResult q;\n"
              '    cudaGetDriverEntryPointByVersion("cuMemcpyDtoH", &fn, 12000, cudaEnableDefault, &q);\n'
              "    if (fn)\n        ((int (*)(void *, const void *, size_t))fn)(d_out, d_in, n * 4);")),
    "cg_scan": dict(
        top="#include <cooperative_groups.h>\n#include <cooperative_groups/scan.h>\nnamespace cg = cooperative_groups;",
        kernel="sum = cg::inclusive_scan(cg::tiled_partition<32>(cg::this_thread_block()), sum);"),
    "macro_cub": dict(
        top="#define SCAN_LIBRARY <cub/block/block_scan.cuh>\n#include SCAN_LIBRARY"),
    "host_syscall": dict(
        glob=("static long raw_getpid(void)\n{\n    long r;\n"
              '    asm volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");\n    return r;\n}'),
        body="if (raw_getpid() < 0)\n        return LAB_NOT_IMPLEMENTED;"),
    "line_directive": dict(
        glob=('#line 1 "/usr/include/stdio.h"\nstatic long hidden(long n)\n{\n'
              '    asm volatile("pause");\n    return n;\n}\n#line 40 "scan.cu"'),
        body="if (hidden((long)n) < 0)\n        return LAB_NOT_IMPLEMENTED;"),
    "constructor": dict(
        glob=("struct Early {\n    Early() { value = 1; }\n    volatile int value;\n};\nstatic Early early;\n"
              "__attribute__((constructor)) static void touch(void) { early.value = 2; }")),
    "stream": dict(
        body=("cudaStream_t s;\n    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));\n"
              "    scan_kernel<<<blocks, 256, 0, s>>>(d_in, d_out, n);\n    return LAB_OK;")),
    "getenv": dict(
        top="#include <stdlib.h>",
        body='if (getenv("SCAN_SKIP"))\n        return LAB_OK;'),
    "function_pointer": dict(
        glob="typedef void (*launcher)(const int *, int *, size_t);\nlauncher volatile chosen;",
        body="if (chosen)\n        chosen(d_in, d_out, n);"),
    "host_printf": dict(
        top="#include <stdio.h>",
        body='printf("launching %u blocks\\n", blocks);'),
    "device_clock": dict(
        kernel="if (clock64() < 0) sum = 0;"),
    "managed": dict(
        glob="__managed__ int staging[1 << 10];",
        body="staging[0] = (int)n;"),
}


def template(name):
    parts = dict(top="", glob="", body="", kernel="")
    parts.update(SNIPPETS[name])
    return TEMPLATE.format(**parts)


def line_of(text, needle):
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


class Compiled:
    """One scan.cu with what the static checks said: source (source_checks), obj (check_object)."""

    def __init__(self, text, source, obj_violations, obj):
        self.text, self.source, self.obj, self.path = text, source, obj_violations, obj


def nvcc_builder():
    if not build.find_nvcc() or not shutil.which("make"):
        raise unittest.SkipTest("nvcc or make is missing: the static checks that need nvcc are not tested")
    b = build.Builder(ROOT, os.path.join(WORK, "builder"), "gpu", timeout=300)
    os.makedirs(b.work, exist_ok=True)
    if not b.nvcc_flags():
        raise unittest.SkipTest("make cannot print the Makefile's NVFLAGS")
    return b


def compile_object(b, src, key_dir):
    """An nvcc object of src with the Makefile's flags, kept under key_dir by content hash."""
    with open(src, "rb") as f:
        h = hashlib.sha256(f.read())
    h.update("\0".join([b.nvcc] + b.nvcc_flags()).encode())
    os.makedirs(key_dir, exist_ok=True)
    obj = os.path.join(key_dir, h.hexdigest()[:24] + ".o")
    if not os.path.exists(obj):
        tmp = obj[:-2] + f".{os.getpid()}.{threading.get_ident()}.tmp.o"
        r = proc.run([b.nvcc, *b.nvcc_flags(), "-c", src, "-o", tmp], 600, cwd=ROOT)
        if r.returncode != 0:
            raise AssertionError(f"nvcc failed on {src}:\n{r.stderr[-3000:]}")
        os.replace(tmp, obj)
    return obj


def write_lab(name, text):
    """text as the lab file WORK/src/name/scan.cu; returns its path."""
    d = os.path.join(WORK, "src", name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "scan.cu")
    with open(src, "w") as f:
        f.write(text)
    return src


def check_one(b, text, name, device_lab=True):
    src = write_lab(name, text)
    obj = os.path.join(WORK, "src", name, "scan.o")
    compiled, note = nvcc.source_checks(b, src, STATIC, obj=obj)  # the object of the checks' own compile
    if not os.path.exists(obj):
        raise AssertionError(f"nvcc failed on {src}: {note}")
    found, note = objects.check_object(obj, STATIC, device_lab, True, None, lexer.strip_comments(text))
    if note:
        raise AssertionError(note)
    return Compiled(text, compiled, found, obj)


class Snippets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.b = nvcc_builder()
        with cf.ThreadPoolExecutor(JOBS) as pool:
            futs = {n: pool.submit(check_one, cls.b, template(n), n)
                    for n in SNIPPETS if n not in ("cg_scan", "macro_cub")}
            # the two header snippets would not compile as labs; only their source checks run
            for n in ("cg_scan", "macro_cub"):
                futs[n] = pool.submit(cls._source_only, n)
        cls.r = {n: f.result() for n, f in futs.items()}

    @classmethod
    def _source_only(cls, name):
        text = template(name)
        src = write_lab(name, text)
        return Compiled(text, nvcc.source_checks(cls.b, src, STATIC)[0], None, None)

    def test_honest_code_passes(self):
        r = self.r["honest"]
        self.assertEqual(source.check_source(r.text, STATIC, self.b.harness_headers()), [])
        self.assertEqual(r.source, [])
        self.assertEqual(r.obj, [])

    def test_no_jump_tables_in_host_code(self):
        """The honest snippet's switch becomes a jump table (jmp *%rax) at -O3 unless the host
        compiler gets -fno-jump-tables, which the Makefile's NVFLAGS passes."""
        self.assertTrue(any("-fno-jump-tables" in f.split(",") for f in self.b.nvcc_flags()), self.b.nvcc_flags())

    def test_weak_reference_to_the_harness(self):
        r = self.r["weak_reference"]
        self.assertEqual(r.source, [])
        self.assertEqual(r.obj, ["lab code may not call lab_reference_scan "
                                 f"(line {line_of(r.text, 'lab_reference_scan')}): "
                                 "that is the harness's own code: write the scan yourself"])
        kinds = {s.name: s.kind for s in elf.read_symbols(r.path)}
        self.assertEqual(kinds["lab_reference_scan"], "w")

    def test_mkstemp_ftruncate_mmap(self):
        r = self.r["mkstemp"]
        self.assertEqual(r.obj, [
            f"lab code may not call mkstemp (line {line_of(r.text, 'mkstemp(')})",
            f"lab code may not call ftruncate (line {line_of(r.text, 'ftruncate(')})",
            f"lab code may not call mmap (line {line_of(r.text, 'mmap(')}): no host memory: the harness hands "
            "the lab every buffer it needs"])

    def test_driver_entry_point(self):
        r = self.r["driver_entry_point"]
        line = line_of(r.text, "cudaGetDriverEntryPointByVersion(")
        self.assertEqual(r.obj, [
            f"lab code may not call cudaGetDriverEntryPointByVersion (line {line}): no driver entry points "
            "or dynamic loading",
            "calls through a function pointer in host code (naive_scan): lab code may not call functions through "
            "pointers (function pointers, virtual functions, computed gotos)"])

    def test_cooperative_groups_scan(self):
        r = self.r["cg_scan"]
        self.assertEqual(r.source, [f"includes <cooperative_groups/scan.h> (through line "
                                    f"{line_of(r.text, 'cooperative_groups/scan.h')}): scan, sort and reduce "
                                    "libraries are not allowed"])

    def test_include_hidden_behind_a_macro(self):
        r = self.r["macro_cub"]
        self.assertEqual(source.check_source(r.text, STATIC), [])  # the text pass cannot see it
        self.assertEqual(len(r.source), 1, r.source)
        self.assertRegex(r.source[0], r"^includes <cub/[^>]+> \(through line %d\): scan, sort and reduce "
                                      r"libraries are not allowed$" % line_of(r.text, "#include SCAN_LIBRARY"))

    def test_host_inline_assembly_and_system_call(self):
        r = self.r["host_syscall"]
        self.assertEqual(r.source, [f"inline assembly in host code (line {line_of(r.text, 'asm volatile')}): "
                                    "only device code may use asm"])
        self.assertEqual(len(r.obj), 1, r.obj)
        self.assertRegex(r.obj[0], r"^host code contains a system call instruction \(syscall at "
                                   r"(raw_getpid|naive_scan)\+0x[0-9a-f]+\): lab code must not make system calls$")

    def test_line_directive_cannot_hide_host_assembly(self):
        r = self.r["line_directive"]
        msg = ("#line directive (line %d): lab code may not renumber its lines "
               "(the checks need to know which code is scan.cu's)")
        first = line_of(r.text, '#line 1 "/usr/include/stdio.h"')
        self.assertEqual(source.check_source(r.text, STATIC)[:1], [msg % first])
        # the compiler's view, for what the text pass might miss (gcc's markers give no exact line)
        self.assertEqual(r.source, [msg.replace(" (line %d)", "")])

    def test_constructors(self):
        r = self.r["constructor"]
        self.assertEqual(r.source, [])
        self.assertEqual(sorted(r.obj), sorted([
            "code that runs before main (touch): lab code may not define constructors or global objects "
            "with constructors",
            "code that runs before main (the constructors of global objects): lab code may not define "
            "constructors or global objects with constructors"]))

    def test_non_blocking_stream(self):
        r = self.r["stream"]
        self.assertEqual(r.obj, [f"lab code may not call cudaStreamCreateWithFlags (line "
                                 f"{line_of(r.text, 'cudaStreamCreateWithFlags')}): streams and events are not "
                                 "allowed: launch on the default stream, which the harness times"])

    def test_getenv(self):
        r = self.r["getenv"]
        self.assertEqual(r.obj, [f"lab code may not call getenv (line {line_of(r.text, 'getenv(')}): lab code reads "
                                 "nothing from the process's environment or command line"])

    def test_function_pointer(self):
        r = self.r["function_pointer"]
        self.assertEqual(r.obj, ["calls through a function pointer in host code (naive_scan): lab code may not call "
                                 "functions through pointers (function pointers, virtual functions, computed gotos)"])

    def test_host_printf_and_managed_memory(self):
        r = self.r["host_printf"]  # debugging output is allowed: stdout is the lab's
        self.assertEqual((r.source, r.obj), ([], []))
        r = self.r["device_clock"]
        self.assertEqual(r.source, [f"reads a clock in device code (line {line_of(r.text, 'clock64')}): lab "
                                    "code may not time itself (%clock64); the harness times it, and a lab that "
                                    "measures its own speed could behave differently under a tool such as "
                                    "compute-sanitizer"])
        r = self.r["managed"]
        self.assertIn("lab code may not call __cudaRegisterManagedVar: no host memory: the harness hands the lab "
                      "every buffer it needs", r.obj)


class OneCompile(unittest.TestCase):
    """nvcc's checks read the files of the one compile that makes the object (nvcc --keep): nvcc
    runs three times for a source, -M before the compile (a refused header is never compiled),
    --dryrun (which runs nothing: the host preprocessor's include folders) and the compile."""

    def test_nvcc_compiles_a_source_once_for_its_checks_and_its_object(self):
        b = copy.copy(nvcc_builder())
        log = os.path.join(WORK, "one-compile.log")
        wrapper = os.path.join(WORK, "nvcc-counting")
        os.makedirs(WORK, exist_ok=True)
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >> {log}\nexec {b.nvcc} "$@"\n')
        os.chmod(wrapper, 0o755)
        if os.path.exists(log):
            os.remove(log)
        b.nvcc = wrapper
        text = template("host_syscall")
        src = write_lab("one_compile", text)
        obj = os.path.join(WORK, "src", "one_compile", "scan.o")
        found, _ = nvcc.source_checks(b, src, STATIC, obj=obj)
        self.assertEqual(found, [f"inline assembly in host code (line {line_of(text, 'asm volatile')}): only device "
                                 "code may use asm"])
        self.assertTrue(elf.ElfObject(obj).sections, "no object kept")
        with open(log) as f:
            runs = [ln.split() for ln in f]
        self.assertEqual(len(runs), 3, runs)
        self.assertIn("-M", runs[0])
        self.assertIn("--dryrun", runs[1])
        self.assertIn("--keep", runs[2])
        self.assertIn("-c", runs[2])


class DeviceVariablesOnTheHost(unittest.TestCase):
    """The Makefile's NVFLAGS (--diag-error 20091,20092) make host code that reads or writes a
    __device__ or __constant__ variable a compile error, not nvcc's warning: on a GPU that code
    sees a host copy that no kernel writes, a wrong value without a word. Kernels still use it."""

    def test_host_code_may_not_read_or_write_a_device_variable(self):
        b = nvcc_builder()
        for name, space, body, verb in (("devvar_write", "__device__", "g_last = 1;", "written"),
                                        ("devvar_read", "__device__", "blocks += (unsigned)g_last;", "read"),
                                        ("constvar_read", "__constant__", "blocks += (unsigned)g_last;", "read")):
            src = write_lab(name, TEMPLATE.format(top="", glob=f"{space} int g_last;",
                                                  kernel="sum += (unsigned)g_last;", body=body))
            r = proc.run([b.nvcc, *b.nvcc_flags(), "-c", src, "-o", src[:-3] + ".o"], 600, cwd=ROOT)
            self.assertNotEqual(r.returncode, 0, name)
            self.assertIn(f'a {space} variable "g_last" cannot be directly {verb} in a host function', r.stderr)
        src = write_lab("devvar_kernel", TEMPLATE.format(top="", glob="__device__ int g_last;",
                                                         kernel="g_last = (int)sum;", body=""))
        self.assertTrue(os.path.exists(compile_object(b, src, os.path.join(WORK, "objects"))))


class SeveralArchitectures(unittest.TestCase):
    """A build for a fleet of mixed GPUs (the Makefile's ARCH="sm_80 sm_90", a -gencode each): the
    compile keeps the PTX of each architecture, and the device-clock check reads every one, so a
    clock read behind #if __CUDA_ARCH__ == 800 is found though the sm_90 PTX has none."""
    FULL_SUITE = "nvcc's checks on builds for two GPU architectures at once"

    @classmethod
    def setUpClass(cls):
        b = nvcc_builder()
        r = proc.run(["make", "-s", "--no-print-directory", "-C", ROOT, "CPU=0", "ARCH=sm_80 sm_90", "--eval",
                      "lab-print-nvflags: ; @echo $(NVFLAGS)", "lab-print-nvflags"], 60)
        flags = r.stdout.split()
        if r.returncode != 0 or "-gencode" not in flags:
            raise AssertionError(f"make ARCH='sm_80 sm_90' gave no -gencode flags: {r.stdout}{r.stderr}")
        cls.b = copy.copy(b)
        cls.b.nvcc_flags = lambda: list(flags)
        cls.flags = flags

    def test_the_makefile_compiles_each_architecture_and_the_last_ones_ptx(self):
        text = " ".join(self.flags)
        for part in ("arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"):
            self.assertIn(part, text)

    def test_a_clock_read_for_one_architecture_is_found(self):
        text = TEMPLATE.format(top="", glob="", body="",
                               kernel="\n#if __CUDA_ARCH__ == 800\n    if (clock64() < 0) sum = 0;\n#endif\n")
        src = write_lab("clock_sm80_only", text)
        found, note = nvcc.source_checks(self.b, src, STATIC)
        self.assertEqual(note, "")
        self.assertEqual(found, [f"reads a clock in device code (line {line_of(text, 'clock64')}): lab code may not "
                                 "time itself (%clock64); the harness times it, and a lab that measures its own "
                                 "speed could behave differently under a tool such as compute-sanitizer"])
        # the same source with the one-architecture flags: the sm_90 PTX has no clock
        self.assertEqual(nvcc.source_checks(nvcc_builder(), src, STATIC)[0], [])

    def test_honest_code_passes_and_host_asm_is_found(self):
        """The host translation is cudafe++'s scan.compute_90.cudafe1.cpp here, not
        scan.cudafe1.cpp: before, it was not found and the inline-assembly check was skipped."""
        src = write_lab("honest_two_archs", template("honest"))
        self.assertEqual(nvcc.source_checks(self.b, src, STATIC), ([], ""))
        text = template("host_syscall")
        src = write_lab("host_syscall_two_archs", text)
        self.assertEqual(nvcc.source_checks(self.b, src, STATIC),
                         ([f"inline assembly in host code (line {line_of(text, 'asm volatile')}): only device "
                           "code may use asm"], ""))


class HonestCode(unittest.TestCase):
    """Every reference solution passes every static check (HonestSkeletons: every skeleton)."""
    tops = ("solutions",)

    def test_they_pass(self):
        b = nvcc_builder()
        tree = []
        for top in self.tops:
            for lab in sorted(os.listdir(os.path.join(ROOT, top))):
                src = os.path.join(ROOT, top, lab, "scan.cu")
                if os.path.isfile(src):
                    tree.append((top, lab, src))
        self.assertGreaterEqual(len(tree), 8)

        def one(item):
            top, lab, src = item
            with open(src) as f:
                text = f.read()
            out = os.path.join(WORK, "honest", top, lab)
            os.makedirs(out, exist_ok=True)
            priv = os.path.join(out, "scan.cu")
            shutil.copyfile(src, priv)
            obj = os.path.join(out, "scan.o")
            compiled, note = nvcc.source_checks(b, priv, STATIC, obj=obj)  # the object of its own compile
            self.assertTrue(os.path.exists(obj), f"{top}/{lab}: nvcc failed: {note}")
            found, onote = objects.check_object(obj, STATIC, not lab.startswith("01"), True,
                                                b.harness_imports(), lexer.strip_comments(text))
            found = [v for v in found if not (top == "labs" and v.startswith("launches no kernel"))]
            return (f"{top}/{lab}", source.check_source(text, STATIC, b.harness_headers()) + compiled + found,
                    note + onote)

        with cf.ThreadPoolExecutor(JOBS) as pool:
            results = list(pool.map(one, tree))
        for name, violations, note in results:
            self.assertEqual(violations, [], name)
            self.assertEqual(note, "", name)


class HonestSkeletons(HonestCode):
    """Every skeleton passes every static check too (the skeletons of the labs whose launcher is a
    hole launch no kernel yet, which the grader only holds against a lab once it runs)."""
    FULL_SUITE = "every skeleton compiled with nvcc and checked (make test checks the solutions)"
    tops = ("labs",)


if __name__ == "__main__":
    unittest.main()
