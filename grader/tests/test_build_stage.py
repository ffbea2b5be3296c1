"""The build stage's order of work, with fake compilers (no nvcc, no GPU): a GPU grade makes a lab's
CPU-mode builds (its ordering cases' and its algorithm case's) while nvcc builds it, uses them only
when the lab passed every check of the GPU's build, and says why a lab has none."""
import os
import shutil
import tempfile
import threading
import unittest
from unittest import mock

import fakes
from gradelib import stage_build
from gradelib.build import BuildResult
from gradelib.stage_build import BuildStage, BuiltLab
from gradelib.status import Status

LAB = "08_decoupled_lookback"
WAIT_S = 20  # far more than any fake build takes: only a build that never comes waits this long


class FakeBuilder:
    """A Builder whose build() records its calls and answers ok (or refused, with refuse) at once;
    with waits_for, only once that Event is set (or WAIT_S passed: then it fails)."""

    def __init__(self, name, refuse=None, waits_for=None, started=None):
        self.name, self.refuse, self.waits_for, self.started = name, refuse, waits_for, started
        self.calls = []
        self.work = tempfile.mkdtemp(prefix="fake-builder-")

    def harness_headers(self):
        return []

    def build(self, src, out_dir, shown, precheck=None, *, lab, bases=None, banks=False, reuse=False):
        self.calls.append((os.path.basename(out_dir), banks))
        if precheck is not None:  # on its private copy, as Builder.build does
            os.makedirs(out_dir, exist_ok=True)
            priv = os.path.join(out_dir, "scan.cu")
            shutil.copyfile(src, priv)
            found = precheck(priv)
            if found[0]:
                return BuildResult(False, violations=found[0])
        if self.started is not None:
            self.started.set()
        if self.waits_for is not None and not self.waits_for.wait(WAIT_S):
            return BuildResult(False, message=f"{self.name}: the other compiler never ran meanwhile")
        if self.refuse:
            return BuildResult(False, violations=[self.refuse])
        return BuildResult(True, binary=os.path.join(out_dir, "scan"))


def checked(self, lab, text, out_dir, comp):
    """BuildStage._check without the object and binary checks (the fakes build no files)."""
    if comp.build is None or not comp.build.ok:
        return stage_build.build_failed(lab, "failed", "build failed")
    return BuiltLab(lab, stage_build.BuildOutcome(ok=True), stage_build.StaticOutcome(ok=True),
                    binary=comp.build.binary, info=fakes.lab_info(lab))


class SideBuilds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="build-stage-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.src = os.path.join(self.tmp, "scan.cu")
        with open(self.src, "w") as f:
            f.write("// a lab\n")
        for patcher in (mock.patch.object(BuildStage, "_check", checked),
                        mock.patch.object(stage_build.nvcc_checks, "precheck", return_value=lambda priv: ([], "")),
                        mock.patch.object(stage_build.cpu_checks, "source_checks", return_value=([], ""))):
            patcher.start()
            self.addCleanup(patcher.stop)

    def stage(self, gpu, cpu):
        return BuildStage(gpu, None, {}, "gpu", {}, cpu, cpu_labs=[LAB] if cpu else (), profile_labs=[LAB])

    def test_cpu_mode_builds_run_while_nvcc_builds_and_are_kept(self):
        started = threading.Event()
        cpu = FakeBuilder("CPU mode", started=started)
        gpu = FakeBuilder("nvcc", waits_for=started)  # done only once a CPU-mode build has started
        built = self.stage(gpu, cpu).run(LAB, self.src, os.path.join(self.tmp, "out"))
        self.assertEqual(built.status, Status.GRADED, built.summary)
        self.assertEqual(cpu.calls, [("cpu", False), ("profile", True)])  # in that order: one call graph
        self.assertEqual(built.cpu_binary, os.path.join(self.tmp, "out", "cpu", "scan"))
        self.assertEqual(built.profile_binary, os.path.join(self.tmp, "out", "profile", "scan"))
        self.assertEqual(built.cpu_note, "")

    def test_a_lab_the_gpu_build_refuses_gets_no_cpu_mode_binary(self):
        cpu = FakeBuilder("CPU mode")
        gpu = FakeBuilder("nvcc", refuse="inline assembly in host code (line 3): only device code may use asm")
        built = self.stage(gpu, cpu).run(LAB, self.src, os.path.join(self.tmp, "out"))
        self.assertEqual(built.status, Status.STATIC_CHECK_FAILED)
        self.assertIn("inline assembly", built.summary)
        self.assertIsNone(built.binary)
        self.assertIsNone(built.cpu_binary)
        self.assertIsNone(built.profile_binary)

    def test_a_refused_cpu_mode_build_costs_nothing_and_says_why(self):
        cpu = FakeBuilder("CPU mode", refuse="a check CPU mode alone makes")  # refused by CPU mode's checks
        built = self.stage(FakeBuilder("nvcc"), cpu).run(LAB, self.src, os.path.join(self.tmp, "out"))
        self.assertEqual(built.status, Status.GRADED)
        self.assertIsNone(built.cpu_binary)
        self.assertIsNone(built.profile_binary)
        self.assertIn("its algorithm was not checked (not held against you): CPU mode could not build it "
                      "(a check CPU mode alone makes)", built.cpu_note)

    def test_a_lab_s_cpu_mode_checks_run_once_for_its_two_cpu_mode_builds(self):
        for mode in ("cpu", "gpu"):
            with self.subTest(mode=mode), \
                    mock.patch.object(stage_build.cpu_checks, "source_checks", return_value=([], "")) as checks:
                cpu = FakeBuilder("CPU mode")
                if mode == "cpu":
                    stage = BuildStage(cpu, None, {}, "cpu", {}, profile_labs=[LAB])
                else:
                    stage = self.stage(FakeBuilder("nvcc"), cpu)
                built = stage.run(LAB, self.src, os.path.join(self.tmp, mode))
                self.assertEqual(built.status, Status.GRADED)
                self.assertEqual(len(cpu.calls), 2)  # the build its cases run (or ordering's), the profile's
                self.assertIsNotNone(built.profile_binary)
                self.assertEqual(checks.call_count, 1)
        # another text is checked again
        with mock.patch.object(stage_build.cpu_checks, "source_checks", return_value=([], "")) as checks:
            stage = BuildStage(FakeBuilder("CPU mode"), None, {}, "cpu", {}, profile_labs=[LAB])
            stage.run(LAB, self.src, os.path.join(self.tmp, "a"))
            other = os.path.join(self.tmp, "other.cu")
            with open(other, "w") as f:
                f.write("// another lab\n")
            stage.run(LAB, other, os.path.join(self.tmp, "b"))
            self.assertEqual(checks.call_count, 2)

    def test_without_cpu_mode_the_algorithm_is_not_checked_and_the_result_says_so(self):
        built = self.stage(FakeBuilder("nvcc"), None).run(LAB, self.src, os.path.join(self.tmp, "out"))
        self.assertEqual(built.status, Status.GRADED)
        self.assertIsNone(built.profile_binary)
        self.assertEqual(built.cpu_note, "its algorithm was not checked (not held against you): "
                                         "this machine cannot build CPU mode")


if __name__ == "__main__":
    unittest.main()
