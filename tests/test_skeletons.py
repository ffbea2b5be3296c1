"""Every untouched skeleton in labs/ builds, runs and reports not_implemented: never garbage.

Needs the lab binaries built (make test builds them first). On a machine without a CUDA device
the GPU labs cannot reach their code, so those cases are skipped with that reason.

These are checks of the repository as shipped. A labs/NN_name/scan.cu that is no longer the
skeleton recorded in tests/skeletons.sha256 (a student's work) is skipped, saying so, and so is
every lab under make test TEST_SRC=labs (tests/pristine.py). The manifest itself must list every
lab, so a lab added without it fails here instead of going unchecked.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
LABS = sorted(d for d in os.listdir(os.path.join(ROOT, "labs")) if d[:2].isdigit())

_spec = importlib.util.spec_from_file_location("pristine", os.path.join(ROOT, "tests", "pristine.py"))
pristine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pristine)

sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402

EXIT_NOT_IMPLEMENTED = contract.EXIT["NOT_IMPLEMENTED"]
EXIT_NO_DEVICE = contract.EXIT["NO_DEVICE"]


def run_lab(tree, lab, *args):
    binary = os.path.join(BUILD, tree, lab, "scan")
    if not os.path.exists(binary):
        raise unittest.SkipTest(f"{binary} is not built (run make test)")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


class Skeletons(unittest.TestCase):
    """One test per lab, added below, so a skip on one lab does not hide the others."""


def _need_pristine(tc, lab):
    why = pristine.skip_reason(lab)
    if why:
        tc.skipTest(why)


def _not_implemented_test(lab):
    def test(self):
        _need_pristine(self, lab)
        for n in ("1000", "0"):
            p = run_lab("labs", lab, "--n", n, "--reps", "0", "--json")
            if p.returncode == EXIT_NO_DEVICE:
                self.skipTest("no CUDA device")
            self.assertEqual(p.returncode, EXIT_NOT_IMPLEMENTED, f"{lab} n={n}: {p.stdout}{p.stderr}")
            lines = p.stdout.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{lab}: expected one JSON line, got {p.stdout!r}")
            report = json.loads(lines[0])
            self.assertEqual(report["status"], "not_implemented")
            self.assertEqual(report["lab"], lab)
            # its own TODO(student) parts (lab 10's default variant is its own code too)
            self.assertEqual(report["reason"], "todo", report["message"])
    return test


def _same_lab_test(lab):
    def test(self):
        """The skeleton and the reference declare the same lab (--describe): id, variants and
        their scratch, shape, sizes; the skeleton's work tiles are among the reference's."""
        _need_pristine(self, lab)
        a = run_lab("labs", lab, "--describe")
        b = run_lab("solutions", lab, "--describe")
        self.assertEqual(a.returncode, contract.EXIT["OK"], a.stderr)
        skel, ref = json.loads(a.stdout), json.loads(b.stdout)
        # work_tiles: the tiles the code works in, which the grader tests multiples of; a
        # reference with a design of its own beyond the skeleton's (labs 09 and 10: their single
        # pass) has more, never fewer
        self.assertLessEqual(set(skel.pop("work_tiles", [])), set(ref.pop("work_tiles", [])))
        self.assertEqual(skel, ref)
    return test


for _lab in LABS:
    setattr(Skeletons, f"test_{_lab}_reports_not_implemented", _not_implemented_test(_lab))
    setattr(Skeletons, f"test_{_lab}_declares_same_lab_as_solution", _same_lab_test(_lab))


class Manifest(unittest.TestCase):
    """tests/skeletons.sha256 covers the labs, and the pristine check tells an edit apart."""

    def test_every_lab_is_recorded(self):
        rec = pristine.recorded()
        self.assertTrue(rec, "tests/skeletons.sha256 is missing or empty: run "
                        "sha256sum labs/*/scan.cu > tests/skeletons.sha256")
        want = {"labs/%s/scan.cu" % lab for lab in LABS}
        self.assertEqual(sorted(set(rec) - want), [], "tests/skeletons.sha256 lists files that are "
                         "not labs/NN_name/scan.cu")
        self.assertEqual(sorted(want - set(rec)), [], "tests/skeletons.sha256 does not record these "
                         "skeletons (sha256sum labs/*/scan.cu > tests/skeletons.sha256)")

    def test_the_shipped_skeletons_match_it(self):
        """In the repository's CI a hash that differs is a maintainer who edited a skeleton and
        forgot the manifest, which would make the skeleton checks skip that lab for good; on a
        student's machine it is their work, so the check runs only where .ci/run asks for it."""
        if os.environ.get("LAB_SKELETONS_STRICT") != "1":
            self.skipTest("runs in CI only (.ci/run sets LAB_SKELETONS_STRICT=1): an edited "
                          "labs/ file here is a student's work")
        stale = [path for path, want in sorted(pristine.recorded().items())
                 if pristine.digest(os.path.join(ROOT, path)) != want]
        self.assertEqual(stale, [], "these skeletons changed since tests/skeletons.sha256 was "
                         "written: run sha256sum labs/*/scan.cu > tests/skeletons.sha256")

    def test_an_edited_skeleton_is_told_apart(self):
        with tempfile.TemporaryDirectory() as root:
            lab_dir = os.path.join(root, "labs", "09_x")
            os.makedirs(lab_dir)
            src = os.path.join(lab_dir, "scan.cu")
            with open(src, "w") as f:
                f.write("// TODO(student)\n")
            manifest = os.path.join(root, "skeletons.sha256")
            with open(manifest, "w") as f:
                f.write("%s  labs/09_x/scan.cu\n" % pristine.digest(src))
            saved = os.environ.pop("LAB_TEST_SRC", None)
            try:
                self.assertIsNone(pristine.skip_reason("09_x", root, manifest))
                with open(src, "a") as f:
                    f.write("int x;\n")
                self.assertIn("no longer the untouched skeleton",
                              pristine.skip_reason("09_x", root, manifest) or "")
                os.environ["LAB_TEST_SRC"] = "labs"
                self.assertIn("TEST_SRC=labs", pristine.skip_reason("09_x", root, manifest) or "")
            finally:
                os.environ.pop("LAB_TEST_SRC", None)
                if saved is not None:
                    os.environ["LAB_TEST_SRC"] = saved


if __name__ == "__main__":
    unittest.main()
