"""CPU mode (common/cpu/): the launch rewriter, and deliberately broken kernels that CPU mode must
catch — a missing barrier (a wrong result for some CPU_SCHED_SEED, the same for the same seed), a
write past n, a global write off the end of a buffer and one just before its start, a static and
a dynamic shared-memory index out of bounds, shared memory read before it is written (not zero),
a cudaMemset past its buffer, a divergent barrier, an early return before a barrier, a shuffle
naming lanes that returned, an integer division by zero, a stack overflow, and blocks waiting
for a later block (the watchdog: stopped at a loop, at an atomic, or with no safe point at all);
a spin-wait on an atomic within a block that must finish; and that the result line keeps CPU
mode's whole report.

The fixtures are tests/cpu_fixtures/*.cu, built by `make test` as CPU-mode lab binaries under
LAB_BUILD_DIR/cpu_fixtures (CPU mode) or LAB_BUILD_DIR/cpu/cpu_fixtures (a GPU build). Every run
has a timeout: a hang is a failure, never a stall.
"""
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402

EXIT_WRONG, EXIT_CUDA_ERROR, EXIT_SANDBOX = (contract.EXIT[k] for k in ("WRONG", "CUDA_ERROR", "SANDBOX"))
SEEDS = range(1, 9)

REWRITE = os.path.join(ROOT, "common", "cpu", "rewrite.py")
_spec = importlib.util.spec_from_file_location("rewrite", REWRITE)
rewrite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rewrite)


def fixture(name):
    for d in (os.path.join(BUILD, "cpu_fixtures"), os.path.join(BUILD, "cpu", "cpu_fixtures")):
        path = os.path.join(d, name, "scan")
        if os.path.exists(path):
            return path
    raise unittest.SkipTest(f"CPU-mode fixture {name} is not built (run make test)")


def run(name, n, seed=1, quiet=True, extra=(), **env_extra):
    """Runs a fixture (extra: more harness options); returns (exit code, the JSON report, stderr)."""
    env = dict(os.environ, CPU_SCHED_SEED=str(seed), **env_extra)
    if quiet:
        env["CPU_SCHED_QUIET"] = "1"
    else:
        env.pop("CPU_SCHED_QUIET", None)
    p = subprocess.run([fixture(name), "--n", str(n), "--reps", "0", "--json", *extra],
                       capture_output=True, text=True, timeout=60, env=env)
    lines = p.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines else {}
    return p.returncode, report, p.stderr


class Races(unittest.TestCase):
    def test_control_passes_every_seed(self):
        for seed in SEEDS:
            rc, rep, err = run("correct", 1000, seed)
            self.assertEqual((rc, rep.get("status")), (0, "ok"), f"seed {seed}: {rep} {err}")
            self.assertEqual(rep.get("mode"), "cpu")

    def test_missing_barrier_gives_a_wrong_result_for_some_seed(self):
        wrong = []
        for seed in SEEDS:
            rc, rep, err = run("missing_barrier", 1000, seed)
            self.assertIn(rc, (0, EXIT_WRONG), f"seed {seed}: {rep} {err}")
            if rc == EXIT_WRONG:
                self.assertEqual(rep["status"], "wrong")
                wrong.append((seed, rep))
        self.assertTrue(wrong, f"no seed in {list(SEEDS)} exposed the missing __syncthreads()")
        seed, first = wrong[0]
        rc, again, _ = run("missing_barrier", 1000, seed)
        self.assertEqual(rc, EXIT_WRONG)
        self.assertEqual(again["mismatch"], first["mismatch"], f"seed {seed} did not replay the same run")

    def test_seed_is_printed(self):
        rc, _, err = run("correct", 300, seed=12345, quiet=False)
        self.assertEqual(rc, contract.EXIT["OK"])
        self.assertIn("CPU_SCHED_SEED=12345", err)


class MemorySafety(unittest.TestCase):
    def test_write_past_n(self):
        rc, rep, err = run("write_past_n", 1000)
        self.assertEqual(rc, EXIT_WRONG, f"{rep} {err}")
        self.assertEqual(rep["status"], "out_of_bounds")
        self.assertIn("wrote past the end of the output: out[1000] changed", rep["message"])

    def test_global_write_off_the_buffer(self):
        rc, rep, err = run("global_overflow", 20000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        self.assertEqual(rep["status"], "cuda_error")
        for part in ("cudaErrorIllegalAddress", "kernel fixture_kernel", "block (", "thread (",
                     "out-of-bounds global memory write", "int index", "past the end of a cudaMalloc buffer"):
            self.assertIn(part, err)

    def test_global_write_just_before_the_start(self):
        # no guard page there: the pattern in the padding, checked after the kernel
        rc, rep, err = run("write_before_start", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("cudaErrorIllegalAddress", rep["message"])
        self.assertIn("CPU mode: kernel fixture_kernel wrote at byte offset -4 (int index -1) before "
                      "the start of a cudaMalloc buffer of ", err)

    def test_memset_past_its_buffer_is_refused(self):
        rc, rep, err = run("memset_past_buffer", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("CUDA error cudaErrorInvalidValue (invalid argument) in cudaMemset(d_out, 0, "
                      "(size_t)1 << 20)", rep["message"])

    def test_dynamic_shared_index_out_of_bounds(self):
        rc, rep, err = run("extern_shared_oob", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("cudaErrorIllegalAddress", rep["message"])
        # every block faults; which one runs first follows the seed (blocks run together)
        self.assertRegex(err, re.escape("kernel fixture_kernel, block (") + r"\d+" + re.escape(
            ",0,0), thread (0,0,0): out-of-bounds shared-memory index 256 in the extern __shared__ "
            "(dynamic) array of 256 elements"))

    def test_shared_memory_starts_as_0xcb_not_zero(self):
        # one ragged tile of 100: its 156 unwritten slots each add 0xCBCBCBCB to the tile total
        # (zero-filled memory would hide the bug)
        rc, rep, err = run("uninitialised_shared", 100)
        self.assertEqual((rc, rep.get("status")), (EXIT_WRONG, "wrong"), f"{rep} {err}")
        msg = rep["message"]
        m = re.match(r"tile_sums\[0\] expected (-?\d+), got (-?\d+): ", msg)
        self.assertIsNotNone(m, msg)
        expected, got = int(m.group(1)), int(m.group(2))
        self.assertEqual((expected + 156 * 0xCBCBCBCB - got) % 2**32, 0, msg)

    def test_a_value_read_from_unwritten_shared_memory_is_named(self):
        # thread 255 never stores its element: out[255] is the 0xCB fill plus the 255 before it
        rc, rep, err = run("unwritten_shared_read", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_WRONG, "wrong"), f"{rep} {err}")
        self.assertIn("near CPU mode's fill 0xCBCBCBCB of memory no thread wrote", rep["message"])
        self.assertIn("a missing barrier or a wrong index?", rep["message"])
        rc, rep, err = run("write_past_n", 1000)  # a wrong answer of another kind says nothing of it
        self.assertNotIn("0xCBCBCBCB", rep["message"])

    def test_shared_index_out_of_bounds(self):
        rc, rep, err = run("shared_oob", 1000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        self.assertIn("kernel fixture_kernel", err)
        self.assertRegex(err, r"block \(\d+,0,0\), thread \(")
        self.assertIn("out-of-bounds shared-memory index -1 in the s __shared__ array of 256 elements", err)


class Barriers(unittest.TestCase):
    def test_divergent_barrier_is_reported_not_hung(self):
        rc, rep, err = run("divergent_barrier", 1000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        self.assertIn("divergent __syncthreads()", err)
        self.assertIn("threads 0..127 at divergent_barrier.cu:", err)
        self.assertIn("threads 128..255 at divergent_barrier.cu:", err)

    def test_early_return_before_barrier(self):
        rc, rep, err = run("early_return", 1000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        self.assertIn("block (3,0,0)", err)
        self.assertIn("reached by 232 of 256 threads; threads 232..255 returned", err)

    def test_barrier_in_a_helper_names_the_call(self):
        rc, rep, err = run("helper_barrier", 1000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        src = os.path.join(ROOT, "tests", "cpu_fixtures", "helper_barrier.cu")
        with open(src) as f:
            call = next(i for i, ln in enumerate(f, 1) if "/* CALL SITE */" in ln)
        self.assertIn(f"__syncthreads() at helper_barrier.cu:{call} is reached by 232 of 256", err)

    def test_early_return_is_fine_when_every_tile_is_full(self):
        rc, rep, err = run("early_return", 1024)
        self.assertEqual((rc, rep.get("status")), (0, "ok"), err)

    def test_shuffle_naming_lanes_that_returned(self):
        rc, rep, err = run("warp_exited_lane", 1000)
        self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
        self.assertIn("block (31,0,0)", err)
        self.assertIn("threads 0..7 wait, threads 8..31 have returned", err)


class Faults(unittest.TestCase):
    """A trap in a kernel's thread (SIGFPE, SIGSEGV) is reported naming kernel, block and thread;
    the kernel is abandoned and the harness prints its result line."""

    def test_integer_division_by_zero(self):
        rc, rep, err = run("divide_by_zero", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("cudaErrorIllegalInstruction", rep["message"])
        self.assertIn("CPU mode: kernel fixture_kernel, block (3,0,0), thread (232,0,0): integer "
                      "division by zero (a GPU gives an unspecified value; the CPU traps) "
                      "(launched at fixture.h:", err)

    def test_stack_overflow(self):
        rc, rep, err = run("stack_overflow", 1000)
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("cudaErrorIllegalAddress", rep["message"])
        self.assertRegex(err, re.escape("CPU mode: kernel fixture_kernel, block (") + r"\d+" + re.escape(
            ",0,0), thread (0,0,0): stack overflow (over 256 KiB of local variables?)"))


class DeviceVariables(unittest.TestCase):
    """A lab's __device__ and __constant__ variables are device memory in CPU mode too: host code
    that reaches one during a call faults, whatever the syntax, and the fault names it; kernels
    read and write them as on a GPU."""

    def test_host_code_reading_one_faults_naming_it(self):
        rc, rep, err = run("device_var_host_read", 1000, extra=("--calls", "2"))
        self.assertEqual(rc, -signal.SIGSEGV, f"{rep} {err}")
        self.assertIn("CPU mode: host code read or wrote the __device__ variable 'g_launches' "
                      "(device_var_host_read.cu:12) outside a kernel", err)

    def test_kernels_use_them_as_on_a_gpu(self):
        for seed in (1, 2, 3):
            rc, rep, err = run("constant_table", 70000, seed, extra=("--calls", "3"))
            self.assertEqual((rc, rep.get("status")), (0, "ok"), f"seed {seed}: {rep} {err}")


class ResultLine(unittest.TestCase):
    """The result line, and the JSON the grader reads, carry CPU mode's report whole: these
    reports run past 256 bytes, the size lab_report.message once had, and lost their end (the
    place and the seed) there."""

    def test_long_reports_are_not_cut(self):
        for name in ("divergent_barrier", "early_return", "warp_exited_lane"):
            with self.subTest(fixture=name):
                rc, rep, err = run(name, 1000)
                self.assertEqual(rc, EXIT_CUDA_ERROR, f"{rep} {err}")
                report = next((ln for ln in err.splitlines() if ln.startswith("CPU mode:")), None)
                self.assertIsNotNone(report, err)
                self.assertIn("CPU_SCHED_SEED=1)", report)
                self.assertIn(report, rep["message"])


class EveryCall(unittest.TestCase):
    """The harness's checks around the lab's calls (common/harness/case.c, the call loop), in CPU
    mode."""

    def test_many_calls_of_several_sizes_at_odd_offsets(self):
        rc, rep, err = run("correct", 700, extra=("--sizes", "700,700,33,513", "--calls", "9",
                                                  "--offset-in", "3", "--offset-out", "1"))
        self.assertEqual((rc, rep.get("status"), rep.get("calls")), (0, "ok", 9), f"{rep} {err}")

    def test_a_buffer_leaked_per_call_is_named(self):
        rc, rep, err = run("leak_per_call", 700, extra=("--calls", "5"))
        self.assertEqual((rc, rep.get("status")), (EXIT_WRONG, "leak"), f"{rep} {err}")
        self.assertIn("in the 4 calls after the first, the lab's code allocated 4 buffers (16384 bytes)",
                      rep["message"])
        self.assertIn("never freed", rep["message"])
        rc, rep, err = run("leak_per_call", 700)  # one call: nothing to compare with
        self.assertEqual((rc, rep.get("status")), (0, "ok"), f"{rep} {err}")


class Sandbox(unittest.TestCase):
    """--sandbox (every graded run): the seccomp filter of common/sandbox.c stops what lab code
    must not do and names the system call; without it the same code runs."""

    def check(self, name, call):
        rc, rep, err = run(name, 700, extra=("--sandbox",))
        self.assertEqual(rc, EXIT_SANDBOX, f"{rep} {err}")
        self.assertIn(f"graded runs do not allow: {call} (system call", err)

    def test_fork_is_stopped(self):
        self.check("sandbox_fork", "clone")
        rc, rep, err = run("sandbox_fork", 700)
        self.assertEqual((rc, rep.get("status"), rep.get("sandbox")), (0, "ok", False), err)

    def check_open(self, name, path, how, **tool):
        rc, rep, err = run(name, 700, extra=("--sandbox",), **tool)
        self.assertEqual(rc, EXIT_SANDBOX, f"{rep} {err}")
        self.assertIn(f"the lab's code opened {path} ({how}): graded runs may not open files: "
                      "exit code 9", err)

    def test_a_file_opened_for_writing_is_stopped(self):
        self.check_open("sandbox_write_file", "lab-was-here.txt", "openat, for writing")

    def test_a_file_opened_for_reading_is_stopped_before_a_byte_is_read(self):
        # CPU mode opens no file once the sandbox is in (grader/dev/measure_opens.py): none may
        self.check_open("sandbox_read_file", "/etc/passwd", "openat")
        rc, rep, err = run("sandbox_read_file", 700, extra=("--sandbox",))
        self.assertNotIn("root:x:0", err)
        rc, rep, err = run("sandbox_read_file", 700)  # outside the sandbox it reads and prints it
        self.assertIn("root:x:0", err)

    def test_the_measuring_switch_logs_each_open_and_lets_reads_through(self):
        rc, rep, err = run("sandbox_read_file", 700, extra=("--sandbox",), LAB_SANDBOX_TRACE_OPEN="1")
        self.assertIn("harness: sandbox-trace: openat /etc/passwd flags=0x0", err)
        self.assertIn("root:x:0", err)  # read, so that the run goes on: never in graded runs
        self.assertEqual(rc, 42, err)  # the fixture's own exit after printing
        rc, rep, err = run("sandbox_write_file", 700, extra=("--sandbox",), LAB_SANDBOX_TRACE_OPEN="1")
        self.assertIn("harness: sandbox-trace: openat lab-was-here.txt", err)
        self.assertEqual(rc, EXIT_SANDBOX, err)  # writing stays refused

    def test_executable_memory_is_stopped(self):
        self.check("sandbox_exec_memory", "mmap")

    def test_under_compute_sanitizer_the_dangerous_calls_stay_refused(self):
        # the tool's looser filter (its code in the process reads files): fork, writing a file
        # and executable memory are still stopped
        tool = {"CUDA_INJECTION64_PATH": "/opt/cuda/compute-sanitizer/libsanitizer-collection.so"}
        for name, call in (("sandbox_fork", "clone"), ("sandbox_exec_memory", "mmap")):
            rc, rep, err = run(name, 700, extra=("--sandbox",), **tool)
            self.assertEqual(rc, EXIT_SANDBOX, f"{name}: {rep} {err}")
            self.assertIn(f"graded runs do not allow: {call} (system call", err)
        self.check_open("sandbox_write_file", "lab-was-here.txt", "openat, for writing", **tool)
        rc, rep, err = run("correct", 700, extra=("--sandbox",), **tool)
        self.assertEqual((rc, rep.get("status"), rep.get("sandbox")), (0, "ok", True), f"{rep} {err}")

    def test_honest_code_runs_inside(self):
        rc, rep, err = run("correct", 3000, extra=("--sandbox", "--calls", "3"))
        self.assertEqual((rc, rep.get("status"), rep.get("sandbox")), (0, "ok", True), f"{rep} {err}")


class Watchdog(unittest.TestCase):
    """CPU_KERNEL_TIMEOUT: the watchdog's signal handler only sets a flag; a safe point (a loop
    rewrite.py instruments, an atomic) reports the timeout like any kernel error, with the
    harness's result line. A kernel with no safe point is ended by the handler itself (write(2)
    and _exit(4)), without a result line. These run one block at a time (CPU_RESIDENT_BLOCKS=1),
    where a block that waits for a later one spins until the watchdog stops it; with blocks
    resident together the same kernels end as a deadlock (class Deadlock)."""

    REPORT = ("CPU mode: kernel fixture_kernel, block (0,0,0), thread ({t},0,0): still running after "
              "{s} s: a spin-wait that never ends? (CPU_KERNEL_TIMEOUT=seconds sets the limit) "
              "(launched at fixture.h:")

    def check_stopped_at_a_safe_point(self, name):
        rc, rep, err = run(name, 1000, CPU_KERNEL_TIMEOUT="2", CPU_RESIDENT_BLOCKS="1")
        self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
        self.assertIn("cudaErrorLaunchTimeout", err)
        # the watchdog names the thread when it fires in one, else the block (it may fire while the
        # scheduler switches between threads or blocks, as on a loaded machine)
        head = re.escape(self.REPORT.format(t=0, s=2)).replace(r",\ thread\ \(0,0,0\)", r"(,\ thread\ \(0,0,0\))?")
        self.assertRegex(err, head)
        self.assertRegex(rep["message"], head[len("CPU\\ mode:\\ "):])

    def test_waiting_for_a_later_block_times_out_with_a_report(self):
        self.check_stopped_at_a_safe_point("wait_for_later_block")  # a while loop

    def test_a_spin_on_atomics_stops_at_the_atomic(self):
        self.check_stopped_at_a_safe_point("spin_on_atomic")  # a goto loop

    def test_a_spin_without_safe_point_ends_the_process(self):
        env = dict(os.environ, CPU_SCHED_SEED="1", CPU_SCHED_QUIET="1", CPU_KERNEL_TIMEOUT="1",
                   CPU_RESIDENT_BLOCKS="1")
        p = subprocess.run([fixture("spin_without_safe_point"), "--n", "1000", "--reps", "0", "--json"],
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, EXIT_CUDA_ERROR, p.stderr)
        self.assertEqual(p.stdout, "")  # the handler ends the process: no result line
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertTrue(lines[0].startswith(self.REPORT.format(t=5, s=1)), lines[0])
        self.assertTrue(lines[0].endswith("; CPU_SCHED_SEED=1)"), lines[0])
        self.assertTrue(lines[1].startswith("CPU mode: cudaErrorLaunchTimeout: the kernel reached no "
                                            "point where CPU mode can stop it"), lines[1])
        self.assertTrue(lines[1].endswith("the process ends here with exit code 4"), lines[1])

    def test_a_spin_on_an_atomic_flag_of_the_same_block_finishes(self):
        for seed in (1, 2, 3):
            rc, rep, err = run("spin_same_block", 1000, seed, CPU_KERNEL_TIMEOUT="10")
            self.assertEqual((rc, rep.get("status")), (0, "ok"), f"seed {seed}: {rep} {err}")


def source_line(name, text):
    """The line of tests/cpu_fixtures/<name>.cu where text first appears (the spin's line)."""
    with open(os.path.join(ROOT, "tests", "cpu_fixtures", name + ".cu"), encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


class Deadlock(unittest.TestCase):
    """Blocks resident together (the default: 4): a block that spins on a flag that only a block
    which is not resident (or never publishes) would set ends the launch as a deadlock, at once
    and naming every resident block and where its threads wait, instead of after the timeout."""

    def check_deadlock(self, name, spin_line):
        for seed in (1, 2, 3):
            t0 = time.monotonic()
            rc, rep, err = run(name, 5000, seed, CPU_KERNEL_TIMEOUT="60")
            self.assertLess(time.monotonic() - t0, 30, "the deadlock must not wait for the timeout")
            self.assertEqual((rc, rep.get("status")), (EXIT_CUDA_ERROR, "cuda_error"), f"{rep} {err}")
            msg = rep["message"]
            self.assertIn("cudaErrorLaunchFailure", err)
            self.assertIn("kernel fixture_kernel: deadlock: the resident blocks wait", msg)
            self.assertNotIn("still running after", msg)
            blocks = re.findall(r"block \((\d+),0,0\): threads 0 spin at %s.cu:%d, threads 1\.\.255 "
                                r"wait at __syncthreads\(\) at %s.cu:\d+" % (name, spin_line, name), msg)
            self.assertEqual(len(blocks), 4, msg)  # every resident block, with its lines
            self.assertIn("block(s) finished", msg)

    def test_waiting_for_a_later_block_is_a_deadlock(self):
        self.check_deadlock("wait_for_later_block", source_line("wait_for_later_block", "while ("))

    def test_a_spin_on_atomics_is_a_deadlock(self):
        self.check_deadlock("spin_on_atomic", source_line("spin_on_atomic", "atomicAdd("))

    def test_each_resident_block_keeps_its_shared_memory(self):
        # shared_per_block switches blocks mid-scan (an atomic between the steps); a block that
        # found another block's shared array or scalar would write a wrong scan
        for seed in SEEDS:
            rc, rep, err = run("shared_per_block", 5000, seed, extra=("--calls", "2"))
            self.assertEqual((rc, rep.get("status")), (0, "ok"), f"seed {seed}: {rep} {err}")

    def test_the_same_kernels_end_once_the_waited_for_block_is_resident(self):
        # 1000 elements are 4 blocks, all resident together: block b's wait for b + 1 ends (as it
        # would on a GPU with room for 4 blocks), so the report above is not a false alarm. The
        # kernels copy instead of scanning: the harness then checks their output, and it is wrong.
        for name in ("wait_for_later_block", "spin_on_atomic"):
            for seed in (1, 2, 3):
                rc, rep, err = run(name, 1000, seed, CPU_KERNEL_TIMEOUT="60")
                self.assertEqual((rc, rep.get("status")), (1, "wrong"), f"{name}: {rep} {err}")


class Rewriter(unittest.TestCase):
    def test_launch_with_template_arguments_over_lines(self):
        src = "void f() {\n    k<true, 4><<<grid,\n        256, 0>>>(a, b);\n    g<<<1, 32>>>();\n}\n"
        out = rewrite.rewrite(src, "x.cu")
        self.assertIn('::lab_cpu::launch(k<true, 4>, "k<true, 4>", __FILE__, __LINE__, ::lab_cpu::config(grid,\n'
                      '        256, 0), a, b);', out)
        self.assertIn('::lab_cpu::launch_named([&](auto &&...lab_cpu_a) { g(lab_cpu_a...); }, [&](auto lab_cpu_t) '
                      '-> decltype(::lab_cpu::kernel_address<decltype(lab_cpu_t)>(g)) { return '
                      '::lab_cpu::kernel_address<decltype(lab_cpu_t)>(g); }, "g", __FILE__, __LINE__, '
                      '::lab_cpu::config(1, 32));', out)
        self.assertEqual(out.count("\n"), src.count("\n") + 2)  # the include and the #line

    def test_a_byte_order_mark_is_dropped_and_crlf_read_as_lf(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, out = os.path.join(tmp, "scan.cu"), os.path.join(tmp, "scan.cpu.cpp")
            with open(path, "wb") as f:
                f.write(b"\xef\xbb\xbf#define X 1 \\\r\n  + 2\r\nint x = X;\r\n")
            p = subprocess.run([sys.executable, REWRITE, path, "-o", out], capture_output=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                text = f.read()
        self.assertEqual(text.split(b"\n", 2)[2], b"#define X 1 \\\n  + 2\nint x = X;\n")

    def test_device_variables_get_pages_of_their_own_and_a_record(self):
        """A __device__ or __constant__ variable keeps its declaration and gains its section (its
        own pages, which the runtime closes to host code; __constant__ ones become const, as nvcc
        makes them in kernels) and a constant record of its name; functions, templates, constexpr,
        extern declarations and several names in one declaration are left alone."""
        src = ("__device__ int g_n;\nstatic __device__ unsigned c[4] = {1, 2, 3, 4};\n"
               "__constant__ float w[3] = {0.5f, 0.25f, 0.125f};\n__device__ const int K = 4;\n"
               "__device__ int *const p = nullptr;\n__device__ const char *names[2];\n"
               "__device__ cuda::atomic<int, cuda::thread_scope_device> counter;\n"
               "__device__ __forceinline__ int f(int x) { return x; }\n"
               "template <class T> __device__ T g;\nstatic constexpr __device__ int C = 3;\n"
               "extern __device__ int e[];\n__device__ int a, b;\n"
               "__global__ void k(int *q) { q[0] = [] __device__ (int x) { return x; }(g_n); }\n")
        out = rewrite.rewrite(src, "x.cu").split("\n", 2)[2]
        self.assertEqual(out.count("\n"), src.count("\n"))  # every line where it was
        want = ["__device__ LAB_CPU_DEVVAR int g_n; LAB_CPU_DEVINFO(g_n, 0)",
                "static __device__ LAB_CPU_DEVVAR unsigned c[4] = {1, 2, 3, 4}; LAB_CPU_DEVINFO(c, 0)",
                # __constant__ is read-only to kernels, as nvcc makes it (a store does not compile)
                "__constant__ LAB_CPU_DEVCONST float const w[3] = {0.5f, 0.25f, 0.125f}; LAB_CPU_DEVINFO(w, 1)",
                "__device__ LAB_CPU_DEVCONST const int K = 4; LAB_CPU_DEVINFO(K, 1)",
                "__device__ LAB_CPU_DEVCONST int *const p = nullptr; LAB_CPU_DEVINFO(p, 1)",
                "__device__ LAB_CPU_DEVVAR const char *names[2]; LAB_CPU_DEVINFO(names, 0)",
                "__device__ LAB_CPU_DEVVAR cuda::atomic<int, cuda::thread_scope_device> counter; "
                "LAB_CPU_DEVINFO(counter, 0)"]
        self.assertEqual(out.splitlines()[:len(want)], want)
        self.assertTrue(out.endswith("\n".join(src.splitlines()[len(want):]) + "\n"), out)

    def test_comments_and_strings_untouched(self):
        src = '// k<<<1, 2>>>(x);\nconst char *s = "a<<<b>>>(c)";\n/* __shared__ int q[4]; */\n'
        out = rewrite.rewrite(src, "x.cu")
        self.assertTrue(out.endswith(src))

    def test_shared_arrays(self):
        src = ("__shared__ unsigned s[2 * B];\n__shared__ int t[2][N];\n"
               "extern __shared__ __align__(16) int dyn[];\n__shared__ int flag;\n"
               "__shared__ volatile unsigned long long v;\n__shared__ int a, b;\n")
        out = rewrite.rewrite(src, "x.cu")
        self.assertIn('static ::lab_cpu::shared_array<unsigned, (size_t)(2 * B), 16> s("s");', out)
        self.assertIn('static ::lab_cpu::shared_array<::lab_cpu::shared_array<int, (size_t)(N)>, '
                      '(size_t)(2), 16> t("t");', out)
        self.assertIn('static ::lab_cpu::extern_shared<int> dyn("dyn");', out)
        # a scalar stays a static, registered as shared memory: each resident block has its own
        self.assertIn('static int flag; static ::lab_cpu::shared_scalar lab_cpu_shared_flag((void *)&flag, '
                      'sizeof(flag), "flag");', out)
        self.assertIn('static volatile unsigned long long v; static ::lab_cpu::shared_scalar '
                      'lab_cpu_shared_v((void *)&v, sizeof(v), "v");', out)
        self.assertIn("__shared__ int a, b;", out)  # two in one: left to the macro (a plain static)
        self.assertEqual(out.count("\n"), src.count("\n") + 2)  # line for line

    def test_loops_that_may_spin_get_a_safe_point(self):
        """Every loop's condition is wrapped in LAB_CPU_LOOP(id, ...) (the iterations the bank and
        sector counts pair lanes by); while, do-while and for loops without a condition or an
        increment also get the watchdog's safe point first in their condition, on the same line;
        counting loops get none; a loop under #pragma unroll counts in its increment
        (LAB_CPU_NEXT) and keeps a bare condition for GCC's annotation; range-based for, a
        condition that declares a variable and text in comments and strings are left alone."""
        src = ("while (flag[0] == 0) {}\ndo { x++; } while (x < (n));\nfor (;;) { break; }\n"
               "for (int i = 0; f(i) != 0;) {}\nfor (int i = 0; i < n; i++) {}\nfor (int v : w) {}\n"
               "for (auto g = [](int a) { return a; }; g(1) < 0; g(2)) {}\n"
               "#pragma unroll\nfor (int j = 0; j < 4; j++) {}\nwhile (int c = next()) {}\n"
               "// while (1)\nconst char *s = \"for (;;)\"; int awhile = 0;\n")
        out = rewrite.rewrite(src, "x.cu")
        self.assertEqual(out.count("\n"), src.count("\n") + 2)
        body = out.split("\n", 2)[2]
        ids = re.findall(r"LAB_CPU_(?:LOOP|NEXT)\((0x[0-9a-f]{8}u)", body)
        self.assertEqual(len(ids), 7)
        self.assertEqual(len(set(ids)), 7, "each loop has its own id")
        self.assertEqual(ids, re.findall(r"LAB_CPU_(?:LOOP|NEXT)\((0x[0-9a-f]{8}u)", rewrite.rewrite(src, "x.cu")),
                         "the same ids in every build")
        body = re.sub(r"(LAB_CPU_(?:LOOP|NEXT))\(0x[0-9a-f]{8}u", r"\1(ID", body)
        self.assertEqual(body.splitlines(), [
            "while (LAB_CPU_LOOP(ID, ::lab_cpu::loop_point(), flag[0] == 0)) {}",
            "do { x++; } while (LAB_CPU_LOOP(ID, ::lab_cpu::loop_point(), x < (n)));",
            "for (; LAB_CPU_LOOP(ID, ::lab_cpu::loop_point(), true);) { break; }",
            "for (int i = 0; LAB_CPU_LOOP(ID, ::lab_cpu::loop_point(), f(i) != 0);) {}",
            "for (int i = 0; LAB_CPU_LOOP(ID, i < n); i++) {}",
            "for (int v : w) {}",
            "for (auto g = [](int a) { return a; }; LAB_CPU_LOOP(ID, g(1) < 0); g(2)) {}",
            "#pragma GCC unroll 64",
            "for (int j = 0; j < 4; LAB_CPU_NEXT(ID), j++) {}",
            "while (int c = next()) {}",
            "// while (1)",
            'const char *s = "for (;;)"; int awhile = 0;'])

    def test_digit_separators_raw_strings_and_continued_comments(self):
        """C++ forms the masker must know: a digit separator opens no character literal, a raw
        string may hold quotes and <<<, and a // comment ending in a backslash goes on to the
        next line (the launch there is commented out, as the compiler sees it)."""
        src = ("const size_t big = 1'000'000; k<<<1, 32>>>(a);\n"
               'const char *r = R"x(a "q" <<< \' )" b)x"; k<<<2, 32>>>(a);\n'
               "// a comment \\\nk<<<3, 32>>>(a);\n"
               "char c = 'x'; auto u = u8'y'; k<<<4, 32>>>(a);\n")
        out = rewrite.rewrite(src, "x.cu").split("\n", 2)[2].splitlines()
        self.assertEqual(len(out), 5)
        self.assertTrue(out[0].startswith("const size_t big = 1'000'000; ::lab_cpu::launch_named("), out[0])
        self.assertIn("::lab_cpu::config(1, 32), a);", out[0])
        self.assertTrue(out[1].startswith('const char *r = R"x(a "q" <<< \' )" b)x"; ::lab_cpu::launch_named('), out[1])
        self.assertEqual(out[3], "k<<<3, 32>>>(a);")
        self.assertIn("::lab_cpu::config(4, 32), a);", out[4])

    def test_unreadable_launch_is_an_error(self):
        with self.assertRaises(SyntaxError):
            rewrite.rewrite("void f() { k<<<1, 2>>> ; }\n", "x.cu")

    def test_bytes_that_are_not_utf8_pass_through(self):
        """A Latin-1 byte (0xE9) in a comment, a string and an inlined header is no build error:
        rewrite.py exits 0 and every byte it does not rewrite comes out unchanged."""
        header = b"// h\xe9\n__global__ void h() {}\ninline void hh() { h<<<1, 1>>>(); }\n"
        src = (b'#include "k.h"\n// caf\xe9: a Latin-1 comment\n__global__ void k(int *a) { a[0] = 1; }\n'
               b'const char *s = "\xe9";\nvoid f(int *a) { k<<<1, 32>>>(a); }\n')
        with tempfile.TemporaryDirectory() as tmp:
            for name, data in (("k.h", header), ("scan.cu", src)):
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(data)
            out = os.path.join(tmp, "scan.cpu.cpp")
            p = subprocess.run([sys.executable, REWRITE, os.path.join(tmp, "scan.cu"), "-o", out],
                               capture_output=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                text = f.read()
        self.assertIn(b"// caf\xe9: a Latin-1 comment\n__global__ void k(int *a) { a[0] = 1; }\n", text)
        self.assertIn(b'const char *s = "\xe9";\n', text)
        self.assertIn(b"// h\xe9\n", text)
        self.assertIn(b'"k", __FILE__, __LINE__, ::lab_cpu::config(1, 32), a);', text)
        self.assertIn(b'"h", __FILE__, __LINE__, ::lab_cpu::config(1, 1));', text)


LAB03 = os.path.join(ROOT, "solutions", "03_kogge_stone", "scan.cu")
KS_OWNER = "const unsigned p = t + j * KS_THREADS;"  # thread t, item j -> its tile position
KS_MUTATIONS = {  # name -> (what replaces KS_OWNER everywhere; the ratio of the in/out accesses)
    "reference": (KS_OWNER, 1.0),
    # thread t owns KS_ITEMS consecutive positions: lanes 16 bytes apart, 512 bytes per access
    "blocked": ("const unsigned p = t * KS_ITEMS + j;", 4.0),
    # item q = t + j * KS_THREADS at position (q % 32) * (KS_TILE / 32) + q / 32: lanes 64 bytes
    # apart, one sector each
    "strided": ("const unsigned q = t + j * KS_THREADS, p = (q % 32) * (KS_TILE / 32) + q / 32;", 8.0),
}
BANK_LINE = re.compile(r"^    (\S+\.cu:\d+)\s+(load|store)\s+\d+\s+(\d+)-way\s+[\d.]+\s+\d+$", re.M)
TABLE_ROW = re.compile(r"^\s+(\S+)\s+(\S+\.cu:\d+)\s+(load|store)\s+(\d+)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)"
                       r"(  <- uncoalesced|  \(small share\)|  \(course's code\))?$", re.M)


def ks_line(text):
    """"scan.cu:N", the line of lab 03's reference where text first appears (the mutations
    replace lines one for one, so their lines are the same)."""
    with open(LAB03, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return f"scan.cu:{i}"
    raise AssertionError(f"{text!r} is no longer in solutions/03_kogge_stone/scan.cu")


class ShuffleTypes(unittest.TestCase):
    """A shuffle builds in CPU mode exactly where nvcc's overloads do: for the built-in arithmetic
    types, not for a struct (lab 09's SegPair must move as its 32-bit words on both paths)."""

    def compiles(self, body):
        """(whether a .cu of body builds in CPU mode, the compiler's messages)."""
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "k.cu"), os.path.join(tmp, "k.cpu.cpp")
            with open(src, "w", encoding="utf-8") as f:
                f.write("struct Pair { unsigned a, b; };\n__global__ void k(float *f, Pair *p, long long *q)\n{\n"
                        + body + "\n}\n")
            p = subprocess.run([sys.executable, REWRITE, src, "-o", out], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = subprocess.run([os.environ.get("CXX", "g++"), "-x", "c++", "-std=c++17", "-fsyntax-only",
                                "-DLAB_CPU_MODE", "-I" + os.path.join(ROOT, "common"),
                                "-I" + os.path.join(ROOT, "common", "cpu"), out],
                               capture_output=True, text=True, timeout=120)
            return p.returncode == 0, p.stderr

    def test_arithmetic_types_shuffle(self):
        ok, err = self.compiles("f[0] = __shfl_up_sync(0xffffffffu, f[1], 1);\n"
                                "q[0] = __shfl_xor_sync(0xffffffffu, q[1], 2);\n"
                                "unsigned m = __match_any_sync(0xffffffffu, q[2]); (void)m;")
        self.assertTrue(ok, err)

    def test_a_struct_does_not_shuffle(self):
        ok, err = self.compiles("p[0] = __shfl_up_sync(0xffffffffu, p[1], 1);")
        self.assertFalse(ok, "a shuffle of a struct built in CPU mode; nvcc refuses it")
        self.assertIn("move a struct as its 32-bit words", err)


class Traffic(unittest.TestCase):
    """make run's tables in CPU mode (make run LAB=03 CPU=1) for lab 03's reference and two
    mutations of it that own their positions differently (still correct scans): the reference
    reads and writes coalesced (every line's sector ratio 1.00, banks 1-way); thread t owning
    positions t*ITEMS..t*ITEMS+ITEMS-1 touches 4 times the sectors (and 4-way bank conflicts);
    a stride of 16 elements between lanes, 8 times. Each is built from the reference by
    replacing one line, so a change of the reference cannot leave them behind."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("addr2line"):
            raise unittest.SkipTest("addr2line (binutils) is not installed: sites cannot be named")
        cls.tmp = tempfile.mkdtemp(prefix="traffic-")
        base = BUILD[:-4] if BUILD.endswith(os.sep + "cpu") else BUILD
        with open(LAB03, encoding="utf-8") as f:
            ref = f.read()
        cls.bins, cls.build_errors, procs = {}, {}, []
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        for name, (owner, _) in KS_MUTATIONS.items():
            assert ref.count(KS_OWNER) >= 3, "solutions/03_kogge_stone/scan.cu no longer has its owner lines"
            d = os.path.join(cls.tmp, name)
            os.makedirs(d)
            with open(os.path.join(d, "scan.cu"), "w", encoding="utf-8") as f:
                f.write(ref.replace(KS_OWNER, owner))
            cls.bins[name] = os.path.join(d, "scan")
            cmd = ["make", "-s", "--no-print-directory", "-C", ROOT, "CPU=1", "BANKS=1", "BUILD=" + base,
                   "lab-binary", "LAB_SRC=" + os.path.join(d, "scan.cu"), "LAB_OUT=" + cls.bins[name],
                   "LAB_ID=03_kogge_stone"]
            # the first builds any course object still missing, alone; the others then share them
            procs.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 text=True, env=env)))
            if len(procs) == 1 and not cls.bins.keys() - {name}:
                cls.collect(procs.pop())
        for name_proc in procs:
            cls.collect(name_proc)

    @classmethod
    def collect(cls, name_proc):
        name, p = name_proc
        out = p.communicate(timeout=600)[0]
        if p.returncode:
            cls.build_errors[name] = out[-3000:]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tables(self, name):
        self.assertNotIn(name, self.build_errors, self.build_errors.get(name))
        p = subprocess.run([self.bins[name], "--n", "70007", "--reps", "0"], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, CPU_SCHED_QUIET="1"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(": ok", p.stdout, f"{name} is still a correct scan: {p.stdout}")
        rows = [(m.group(2), m.group(3), float(m.group(7)), float(m.group(6)), m.group(8))
                for m in TABLE_ROW.finditer(p.stdout)]
        way = re.search(r"ks_double_buffer_kernel<true>\s+\d+\s+(\d+)-way", p.stdout)
        return rows, int(way.group(1)) if way else None, p.stdout

    def test_each_owner_shows_its_ratio(self):
        for name, (_, ratio) in KS_MUTATIONS.items():
            with self.subTest(name):
                rows, _, out = self.tables(name)
                self.assertTrue(rows, f"{name}: no global-memory table in\n{out}")
                # the element loads and stores (in[base + p], out[base + p]); the tile total is one lane
                elems = [r for r in rows if r[0] in (ks_line("(unsigned)in[base + p]"), ks_line("out[base + p] ="))]
                self.assertEqual(len(elems), 2, f"{name}: the element loads and stores in\n{out}")
                for where, kind, got, share, mark in elems:
                    self.assertAlmostEqual(got, ratio, delta=0.02, msg=f"{name}: {kind} at {where}: ratio {got}\n{out}")
                    # the elements are most of the kernel's sectors: a mutation's are marked uncoalesced
                    self.assertGreater(share, 20.0, f"{name}: {kind} at {where}\n{out}")
                    self.assertEqual(mark, None if ratio == 1.0 else "  <- uncoalesced", f"{name}: {where}\n{out}")
                if ratio == 1.0:
                    self.assertTrue(all(r[2] == 1.0 for r in rows), f"reference: every line coalesced\n{out}")
                    self.assertIn("coalesced: every access site", out)
                else:
                    self.assertIn("give neighbouring lanes neighbouring addresses", out)

    def test_banks_follow_the_owner(self):
        for name, want in (("reference", 1), ("blocked", 4)):
            with self.subTest(name):
                _, way, out = self.tables(name)
                self.assertEqual(way, want, f"{name}: bank conflicts {way}-way, want {want}-way\n{out}")
                # under the kernel, a row per line that conflicts: none for the reference
                lines = [(m.group(1), int(m.group(3))) for m in BANK_LINE.finditer(out)]
                if want == 1:
                    self.assertEqual(lines, [], f"{name}: conflict-free, yet lines are named\n{out}")
                else:
                    self.assertTrue(lines, f"{name}: no line named under the kernel\n{out}")
                    self.assertEqual(max(w for _, w in lines), want, out)
                    self.assertTrue(all(w > 1 for _, w in lines), f"a named line has no conflict\n{out}")


LAB08 = os.path.join(ROOT, "solutions", "08_decoupled_lookback", "scan.cu")


def function_lines(path, name):
    """The line numbers of function name's definition in path: from its name at the head of a
    definition to the first line that is a closing brace at column 0."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines, 1)
                 if re.search(r"\b%s\s*\(" % name, line) and not line.startswith((" ", "/", "#")))
    end = next(i for i, line in enumerate(lines[start:], start + 1) if line.startswith("}"))
    return range(start, end + 1)


class CourseCode(unittest.TestCase):
    """The course's code in a lab's file (lab.h: lab_given_code) is marked "(course's code)" in
    make run's tables and gets none of their advice: lab 08's scan_tile, whose guarded scalar path
    for a ragged last tile touches four times the sectors it needs, is all of the traffic at an n
    under one tile, where it used to be marked uncoalesced with "give neighbouring lanes
    neighbouring addresses". Every other line keeps its own mark (Traffic: lab 03 has no given
    code, and its mutations are still marked uncoalesced)."""

    def test_lab_08_scan_tile_at_one_ragged_tile(self):
        if not shutil.which("addr2line"):
            self.skipTest("addr2line (binutils) is not installed: sites cannot be named")
        binary = os.path.join(BUILD, "solutions", "08_decoupled_lookback", "scan")
        if not os.path.exists(binary):
            self.skipTest(f"{binary} is not built (run make test)")
        p = subprocess.run([binary, "--n", "1000", "--reps", "0"], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, CPU_SCHED_QUIET="1"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        given = function_lines(LAB08, "scan_tile")
        rows = [(int(m.group(2).split(":")[1]), float(m.group(7)), m.group(8)) for m in TABLE_ROW.finditer(p.stdout)]
        bad = [r for r in rows if r[1] >= 1.5]
        self.assertTrue(bad, f"the ragged tile's scalar path is no longer uncoalesced?\n{p.stdout}")
        for line, ratio, mark in rows:
            want = "  (course's code)" if ratio >= 1.5 and line in given else (None if ratio < 1.5 else mark)
            self.assertEqual(mark, want, f"08/scan.cu:{line} (ratio {ratio})\n{p.stdout}")
        self.assertTrue(all(line in given for line, _, _ in bad), p.stdout)
        self.assertNotIn("<- uncoalesced", p.stdout)
        self.assertNotIn("give neighbouring lanes", p.stdout)
        self.assertIn("(course's code): uncoalesced in scan_tile, which the course writes for you", p.stdout)
        self.assertIn("coalesced: every access site of your code", p.stdout)


class UncountedBuild(unittest.TestCase):
    """A binary whose lab was compiled without CPU mode's counting hooks (BANKS=0, as a student
    release's reference object is) says that nothing was counted, instead of a verdict on empty
    counts ("0 steps ... none of the course's tile scans"); the same lab with the hooks names its
    algorithm."""

    def test_a_lab_built_without_the_hooks_gets_no_verdict(self):
        counted = os.path.join(BUILD, "solutions", "05_blelloch", "scan")
        if not os.path.exists(counted):
            self.skipTest(f"{counted} is not built (run make test)")
        base = BUILD[:-4] if BUILD.endswith(os.sep + "cpu") else BUILD
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "scan")
            src = os.path.join(ROOT, "solutions", "05_blelloch", "scan.cu")
            b = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "CPU=1", "BANKS=0",
                                "BUILD=" + base, "lab-binary", "LAB_SRC=" + src, "LAB_OUT=" + binary,
                                "LAB_ID=05_blelloch"], capture_output=True, text=True, timeout=600, env=env)
            self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            runs = [subprocess.run([path, "--n", "70000"], capture_output=True, text=True, timeout=300,
                                   env=dict(os.environ, CPU_SCHED_QUIET="1")) for path in (binary, counted)]
        uncounted, with_hooks = (p.stdout + p.stderr for p in runs)
        self.assertIn("algorithm: nothing counted", uncounted)
        self.assertNotIn("-> ", uncounted)
        self.assertNotIn("nothing counted", with_hooks)
        self.assertIn("what padded asks for", with_hooks)


CORPUS_DIR = os.path.join(ROOT, "tests", "cpu_corpus")
CORPUS = sorted(f[:-3] for f in os.listdir(CORPUS_DIR) if f.endswith(".cu"))


def nvcc():
    """nvcc's path, or None: on PATH, under CUDA_HOME, or /usr/local/cuda."""
    for path in (shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),
                 "/usr/local/cuda/bin/nvcc"):
        if path and os.access(path, os.X_OK):
            return path
    return None


class Corpus(unittest.TestCase):
    """Valid CUDA is accepted in CPU mode as nvcc accepts it: each tests/cpu_corpus/NAME.cu, a
    correct tile scan written in one form nvcc takes (default arguments of the runtime calls,
    kernel templates deduced at the launch, lambdas, __restrict__, #pragma unroll N, macros
    around launches, a UTF-8 byte-order mark with CRLF line ends), builds in CPU mode and scans
    correctly, over several calls and seeds; and compiles with nvcc where nvcc is installed."""

    def binary(self, name):
        for base in (BUILD, os.path.join(BUILD, "cpu")):
            path = os.path.join(base, "cpu_corpus", name, "scan")
            if os.path.exists(path):
                return path
            # built with the fixtures: a corpus file missing beside them did not build
            self.assertFalse(os.path.exists(os.path.join(base, "cpu_fixtures", "correct", "scan")),
                             f"tests/cpu_corpus/{name}.cu did not build in CPU mode (make cpu-fixtures)")
        raise unittest.SkipTest(f"CPU-mode corpus file {name} is not built (run make test)")

    def test_each_form_builds_and_scans_correctly_in_cpu_mode(self):
        for name in CORPUS:
            for seed in (1, 2):
                p = subprocess.run([self.binary(name), "--sizes", "70001,513,1", "--calls", "3",
                                    "--seed", str(seed), "--reps", "0", "--json"],
                                   capture_output=True, text=True, timeout=120,
                                   env=dict(os.environ, CPU_SCHED_QUIET="1", CPU_SCHED_SEED=str(seed),
                                            CPU_DEADLOCK_POINTS="2000"))  # long_private_loops.cu
                lines = p.stdout.strip().splitlines()
                rep = json.loads(lines[-1]) if lines else {}
                self.assertEqual((p.returncode, rep.get("status"), rep.get("calls")), (0, "ok", 3),
                                 f"{name}, seed {seed}: {rep} {p.stderr}")

    def test_each_form_compiles_with_nvcc(self):
        cc = nvcc()
        if not cc:
            self.skipTest("nvcc is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            for name in CORPUS:
                p = subprocess.run([cc, "-std=c++17", "-arch=sm_90", "--expt-relaxed-constexpr",
                                    "-I" + os.path.join(ROOT, "common"), "-c",
                                    os.path.join(CORPUS_DIR, name + ".cu"), "-o", os.path.join(tmp, name + ".o")],
                                   capture_output=True, text=True, timeout=300)
                self.assertEqual(p.returncode, 0, f"nvcc refuses {name}.cu: {p.stderr[-2000:]}")

    def test_the_corpus_calls_every_runtime_function_a_lab_may_call(self):
        """grader/config.json's allowlist: each cuda* function in it is called in the corpus
        (cudaGetDeviceProperties_v2 is what CUDA 12's header makes of cudaGetDeviceProperties;
        CUDA 13 has no such name)."""
        with open(os.path.join(ROOT, "grader", "config.json")) as f:
            allowed = json.load(f)["static"]["allowed_gpu_lab_symbols"]
        text = ""
        for name in CORPUS:
            with open(os.path.join(CORPUS_DIR, name + ".cu"), encoding="utf-8-sig") as f:
                text += f.read()
        for sym in allowed:
            if sym.startswith("cuda") and sym != "cudaGetDeviceProperties_v2":
                self.assertTrue(re.search(r"\b" + sym + r"\s*\(", text), f"no corpus file calls {sym}")
        self.assertIn("cudaMemsetAsync(zero, 0, CORPUS_TILE * sizeof(int)));", text)  # no stream
        self.assertTrue(open(os.path.join(CORPUS_DIR, "bom_crlf.cu"), "rb").read().startswith(b"\xef\xbb\xbf/*"))
        self.assertIn(b"\r\n", open(os.path.join(CORPUS_DIR, "bom_crlf.cu"), "rb").read())


if __name__ == "__main__":
    unittest.main()
