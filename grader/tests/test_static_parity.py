"""The static checks give one verdict whatever the machine: a fixture of grader/fixtures/ built and
checked in CPU mode with nvcc hidden (Gradescope's machine: CPU mode's own checks on the C++ it
compiles, grader/gradelib/checks/cpu.py) must get the verdict the GPU path gives it
(grader/fixtures/expected.json): refused by a static check with the recorded message when the GPU
refuses it, never refused when the GPU does not, and a build failure where the GPU's build fails,
with no check skipped. test_fixtures.py grades every fixture CPU mode can diagnose exactly so
(check_fixtures.py --cpu --no-nvcc, which checks the same: the diagnosis, and no static note
saying a check did not run); this builds the ones it cannot (they need a GPU to be diagnosed,
but their static verdict is the GPU's here too), CPU mode's own attacks and the reference
solutions. The GPU grades every fixture with check_fixtures.py on a GPU machine. Only the build
stage runs here (no cases), several builds at once (up to 4)."""
import concurrent.futures as cf
import json
import os
import tempfile
import unittest
from unittest import mock

import fakes
import fixturelib
from gradelib import build, config, grading
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


class StaticParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as f:
            fixtures = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
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
        bad = ref.replace(kernel, "__constant__ size_t k_limit[1];\n\n" + kernel.replace("(i >= n)", "(i >= n || i >= k_limit[0])")
                          ).replace(launch, "    if (k_limit[0] == 0) /* reads the host's copy */\n        return LAB_OK;\n" + launch)
        with tempfile.TemporaryDirectory() as tmp:
            got = {}
            for name, text in (("honest", honest), ("bad", bad)):
                path = os.path.join(tmp, name, "scan.cu")
                os.makedirs(os.path.dirname(path))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                got[name] = self.grader.build_submission("devvar-" + name, {"02_naive": path}, labs=["02_naive"])["02_naive"]
        self.assertEqual(got["honest"].status, Status.GRADED, got["honest"].summary)
        self.assertEqual(got["bad"].status, Status.STATIC_CHECK_FAILED, got["bad"].summary)
        line = bad.splitlines().index("    if (k_limit[0] == 0) /* reads the host's copy */") + 1
        self.assertEqual(list(got["bad"].static.violations), [
            f"host code uses the __constant__ variable k_limit (line {line}): on a GPU, host code has its own copy "
            "of it, which no kernel reads or writes, so the lab would compute with a wrong value (nvcc refuses "
            "it); pass the value to the kernel as a parameter, or keep it in memory from cudaMalloc"])

    def test_the_reference_solutions_pass_every_check(self):
        labs = grading.course_labs(ROOT)
        sources = {lab: os.path.join(ROOT, "solutions", lab, "scan.cu") for lab in labs}
        built = self.grader.build_submission("parity-solutions", sources, labs=labs)
        bad = {lab: b.summary for lab, b in built.items() if b.status != Status.GRADED}
        self.assertEqual(bad, {})


if __name__ == "__main__":
    unittest.main()
