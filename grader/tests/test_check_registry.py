"""grader/gradelib/checks/registry.py: the static checks' registry is what the phases run. A rule
planted in it is run by its phase (the text pass, CPU mode's source checks on a real compile, the
object checks on a real object) and its violation refuses the code; every rule that needs nvcc
names a CPU-mode twin that exists, so a grade without nvcc refuses the same code.
"""
import dataclasses
import os
import shutil
import subprocess
import tempfile
import types
import unittest
from unittest import mock

import fakes
from gradelib import build, config
from gradelib.checks import cpu, objects, registry

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
WORK = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader-tests", "registry")
STATIC = config.load(os.path.join(fakes.GRADER, "config.json")).static
# the evidence each phase hands its rules
EVIDENCE = {"text": {"source"}, "nvcc": {"dependencies", "ptx", "host_preprocessed", "host_translation"},
            "cpu": {"dependencies", "preprocessed"}, "object": {"symbols", "elf", "instructions"},
            "binary": {"binary"}}


def planted(phase, reads, seen):
    """A rule of phase that notes what it was handed and refuses everything."""
    def check(evidence, ctx):
        seen.append(evidence)
        return [f"planted {phase}/{reads}"]
    return registry.Rule("planted", phase, reads, check, "everything (a test's)")


class Table(unittest.TestCase):
    def test_each_rule_reads_what_its_phase_hands_and_nvcc_rules_have_twins(self):
        names = {(r.phase, r.name) for r in registry.RULES}
        self.assertEqual(len(names), len(registry.RULES), "a rule named twice in one phase")
        for r in registry.RULES:
            self.assertIn(r.reads, EVIDENCE[r.phase], r)
            self.assertTrue(r.refuses, r)
            if r.phase == "nvcc":
                phase, _, name = r.twin.partition(":")
                self.assertIn((phase, name), names, f"{r.name}: its CPU-mode twin {r.twin!r} is not a rule")
        self.assertEqual(registry.PHASES, tuple(EVIDENCE))

    def test_run_adds_each_violation_once(self):
        rule = registry.Rule("twice", "text", "source", lambda t, c: ["x", "x", "y"], "a test's")
        with mock.patch.object(registry, "RULES", (rule, dataclasses.replace(rule, name="again"))):
            self.assertEqual(registry.run("text", "source", "", None, ["y"]), ["y", "x"])


class PlantedRules(unittest.TestCase):
    """A rule added to the registry runs in its phase, with nothing else changed."""

    def test_the_text_pass(self):
        seen = []
        with mock.patch.object(registry, "RULES", registry.RULES + (planted("text", "source", seen),)):
            ctx = types.SimpleNamespace(static=STATIC, harness_headers=())
            found = registry.run("text", "source", "int x;\n", ctx)
        self.assertEqual((found, seen), (["planted text/source"], ["int x;\n"]))

    def test_the_object_checks(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        seen = []
        with tempfile.TemporaryDirectory() as d:
            src, obj = os.path.join(d, "k.c"), os.path.join(d, "k.o")
            with open(src, "w") as f:
                f.write("int twice(int x) { return 2 * x; }\n")
            subprocess.run([cc, "-c", src, "-o", obj], check=True)
            extra = (planted("object", "symbols", seen), planted("object", "elf", seen))
            with mock.patch.object(registry, "RULES", registry.RULES + extra):
                found, _ = objects.check_object(obj, STATIC, True, True, None, "", cpu_build=False)
        self.assertIn("planted object/symbols", found)
        self.assertIn("planted object/elf", found)
        self.assertTrue(any("twice" in str(s) for s in seen[0]), seen[0])  # the symbols of the object

    def test_cpu_modes_source_checks(self):
        if not (shutil.which("make") and (shutil.which("c++") or shutil.which("g++"))):
            self.skipTest("make or a C++ compiler is missing")
        b = build.Builder(ROOT, WORK, "cpu", timeout=300)
        if not b.cpu_flags():
            self.skipTest("make cannot print CPU mode's flags")
        seen = []
        with tempfile.TemporaryDirectory() as d:
            priv = os.path.join(d, "scan.cu")
            shutil.copy(os.path.join(ROOT, "solutions", "02_naive", "scan.cu"), priv)
            with mock.patch.object(registry, "RULES", registry.RULES + (planted("cpu", "preprocessed", seen),)):
                violations, note, *_ = cpu.source_checks(b, priv, STATIC)
            honest, _, *_ = cpu.source_checks(b, priv, STATIC)
        self.assertEqual(violations, ["planted cpu/preprocessed"], note)
        self.assertIn("naive_scan", seen[0])  # the preprocessed C++ of the lab
        self.assertEqual(honest, [])


if __name__ == "__main__":
    unittest.main()
