"""The algorithm a lab's kernel is, as `make run LAB=NN CPU=1` names it under its profile table
(common/harness/algorithm.c: lab_profile_algorithm for the tile labs, lab_profile_passes for labs 07
and 08; each variant's algorithm is in its descriptor, common/course/NN_name.c): every reference
variant that names one (labs 03 to 08) is recognised as it, the handouts
quote the references' lines as printed, and a lab 03 whose double_buffer variant runs the in-place
kernel is told that it is a Kogge-Stone without the double buffer its variant asks for.
"""
import os
import re
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LAB_BUILD_DIR") or os.path.join(ROOT, "build")
CPU_BUILD = BUILD if BUILD.rstrip("/").endswith("/cpu") else os.path.join(BUILD, "cpu")
CPU_BUILD_ROOT = os.path.dirname(CPU_BUILD.rstrip("/"))
KS_DB = "Kogge-Stone with double buffering"
KS = "Kogge-Stone (T*log2(T) work, log2(T) steps)"
REFERENCES = {("03_kogge_stone", "double_buffer"): KS_DB, ("03_kogge_stone", "two_barrier"): KS,
              ("04_brent_kung", "brent_kung"): "Brent-Kung's work-efficient tree",
              ("05_blelloch", "padded"): "Blelloch's exclusive scan",
              ("05_blelloch", "plain"): "Blelloch's exclusive scan",
              **{("06_coarsened", v): "a coarsened scan"
                 for v in ("c8_b256", "c2_b1024", "c4_b512", "c16_b128", "c32_b64", "c64_b32")},
              ("07_hierarchical", "scan_then_propagate"): "a hierarchy", ("07_hierarchical", "reduce_then_scan"):
              "a hierarchy", ("08_decoupled_lookback", "lookback"): "a single pass"}


class Verdicts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(CPU_BUILD, "common", "harness_algorithm.o")):
            raise unittest.SkipTest("the CPU-mode objects are not built (run make test)")
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def binary(self, src, lab, name):
        """A CPU-mode lab binary of src, counting as make run's does (BANKS=1)."""
        out = os.path.join(self.tmp.name, name, "scan")
        p = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "CPU=1", "BANKS=1",
                            f"BUILD={CPU_BUILD_ROOT}", "lab-binary", f"LAB_SRC={src}", f"LAB_OUT={out}",
                            f"LAB_ID={lab}"], capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        return out

    def verdict(self, binary, variant, n=70000):
        """The "->" line of a run of binary's variant at n (many tiles: labs 07 and 08 count passes)."""
        p = subprocess.run([binary, "--n", str(n), "--variant", variant], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, CPU_SCHED_QUIET="1"))
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        found = re.findall(r"(?m)^  -> (.*)$", p.stdout)
        self.assertEqual(len(found), 1, p.stdout[-3000:])
        return found[0]

    def test_every_reference_variant_is_recognised(self):
        for (lab, variant), name in REFERENCES.items():
            with self.subTest(lab=lab, variant=variant):
                binary = os.path.join(CPU_BUILD, "solutions", lab, "scan")
                if not os.path.exists(binary):
                    binary = self.binary(os.path.join("solutions", lab, "scan.cu"), lab, lab)
                line = self.verdict(binary, variant)
                self.assertTrue(line.startswith(name), line)
                self.assertTrue(line.endswith(f": what {variant} asks for"), line)

    def test_the_handouts_quote_the_references_lines(self):
        """The two lines each handout of labs 03-08 shows are the reference default variant's, as
        its binary prints them now at n = 70000 (measured, not typed)."""
        for lab in ("03_kogge_stone", "04_brent_kung", "05_blelloch", "06_coarsened", "07_hierarchical",
                    "08_decoupled_lookback"):
            with self.subTest(lab=lab):
                binary = os.path.join(CPU_BUILD, "solutions", lab, "scan")
                if not os.path.exists(binary):
                    binary = self.binary(os.path.join("solutions", lab, "scan.cu"), lab, lab)
                p = subprocess.run([binary, "--n", "70000"], capture_output=True, text=True, timeout=300,
                                   env=dict(os.environ, CPU_SCHED_QUIET="1"))
                out = p.stdout.splitlines()
                k = next(i for i, ln in enumerate(out) if ln.startswith("  algorithm:"))
                with open(os.path.join(ROOT, "labs", lab, "README.md")) as f:
                    handout = f.read()
                printed = "\n".join(out[k:k + 2])
                self.assertIn(printed + "\n", handout,
                              f"labs/{lab}/README.md does not quote what the reference prints:\n{printed}")

    def test_an_in_place_kogge_stone_is_not_the_double_buffer_it_is_asked_for(self):
        with open(os.path.join(ROOT, "solutions", "03_kogge_stone", "scan.cu")) as f:
            text = f.read()
        launch = "ks_double_buffer_kernel<true><<<tiles, KS_THREADS>>>"
        self.assertIn(launch, text)
        src = os.path.join(self.tmp.name, "in_place.cu")
        with open(src, "w") as f:
            f.write(text.replace(launch, "ks_two_barrier_kernel<true><<<tiles, KS_THREADS>>>"))
        line = self.verdict(self.binary(src, "03_kogge_stone", "in_place"), "double_buffer")
        self.assertEqual(line, f"this is {KS}; double_buffer asks for {KS_DB} (T*log2(T) work, log2(T) steps, "
                               "each reading one buffer and writing the other)")


if __name__ == "__main__":
    unittest.main()
