"""make student-release: the repository handed to students, built in a scratch folder and used as a
student would, in CPU mode (nvcc hidden, as on a laptop without CUDA): lab 03 untouched, then
finished with the reference's scan.cu. The release must hold no answer (no solutions/, no
ANSWERS.md, no line only a reference has), and make run, make test TEST_SRC=labs, make hint and
make grade must work without solutions/, the grade linking the reference's shipped object.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import student_release  # noqa: E402

LABS = sorted(d for d in os.listdir(os.path.join(ROOT, "solutions"))
              if os.path.isfile(os.path.join(ROOT, "solutions", d, "scan.cu")))
# no nvcc on PATH: the release is used in CPU mode, as a student without CUDA would
NO_CUDA_PATH = os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                               if "cuda" not in p)


def make(cwd, *args, timeout=600):
    env = dict(os.environ, PATH=NO_CUDA_PATH, CPU="1")
    for k in ("LAB_BUILD_DIR", "LAB_TEST_SRC", "LAB_TEST_PART", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
        env.pop(k, None)
    env.pop("LAB_GRADER_CACHE", None)  # the release grades in its own build folder, as a student's does
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout + p.stderr


class StudentRelease(unittest.TestCase):
    FULL_SUITE = "a student release built and used in a scratch folder (the harness built again there)"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="release-test-")
        cls.dest = os.path.join(cls.tmp, "scan-labs")
        env = dict(os.environ, PATH=NO_CUDA_PATH)
        env.pop("MAKEFLAGS", None)
        p = subprocess.run(["make", "--no-print-directory", "student-release", "DEST=" + cls.dest,
                            "RELEASE_ARGS=--modes cpu"], cwd=ROOT, capture_output=True, text=True,
                           timeout=900, env=env)
        cls.built = (p.returncode, p.stdout + p.stderr)
        # The course's objects as this tree's make test built them, file times kept: the release's
        # sources have this tree's times (the tool copies them so), so make takes these as built
        # and compiles only the lab (its grade still builds the whole harness, from the release)
        build = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build", "cpu"))
        if p.returncode == 0 and os.path.basename(build.rstrip(os.sep)) == "cpu":
            for sub in ("common", "pch", "tests"):
                src = os.path.join(build, sub)
                if os.path.isdir(src):
                    shutil.copytree(src, os.path.join(cls.dest, "build", "cpu", sub),
                                    ignore=lambda d, names: [n for n in names if sub == "tests" and
                                                             not n.endswith(".o") and
                                                             not os.path.isdir(os.path.join(d, n))])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.built[0], 0, self.built[1][-3000:])

    def test_1_holds_no_answer(self):
        self.assertFalse(os.path.exists(os.path.join(self.dest, "solutions")))
        self.assertFalse(os.path.exists(os.path.join(self.dest, "grader", "fixtures")))
        answers = [os.path.join(d, n) for d, _, names in os.walk(self.dest) for n in names
                   if "ANSWERS" in n]
        self.assertEqual(answers, [])
        self.assertEqual(student_release.leaked(self.dest, student_release.answer_lines(ROOT)), [])
        for lab in LABS:  # each reference as CPU mode's object instead
            obj = os.path.join(self.dest, "grader", "references", "cpu", lab + ".o")
            with open(obj, "rb") as f:
                self.assertEqual(f.read(4), b"\x7fELF", obj)
        with open(os.path.join(self.dest, "README.md")) as f:
            self.assertIn("Student release", f.read(400))
        # the skeletons are the course's, untouched
        for lab in LABS:
            with open(os.path.join(ROOT, "labs", lab, "scan.cu"), "rb") as a, \
                 open(os.path.join(self.dest, "labs", lab, "scan.cu"), "rb") as b:
                self.assertEqual(a.read(), b.read(), lab)

    def made(self, *args):
        """make args in the release, which must succeed; its output."""
        rc, out = make(self.dest, *args)
        self.assertEqual(rc, 0, out[-2000:])
        return out

    def test_2_untouched_then_finished_lab(self):
        self.assertIn("not implemented", self.made("run", "LAB=03"))
        out = self.made("test", "TEST_SRC=labs", "LAB=03")
        self.assertRegex(out, r"summary: \d+ passed, 0 failed, \d+ skipped")
        self.assertIn("not implemented yet", out)
        self.assertIn("Lab 03, hint 1 of", self.made("hint", "LAB=03"))
        self.assertRegex(self.made("grade", "LAB=03"), r"03_kogge_stone .*not implemented .*0\.0/60")

        shutil.copyfile(os.path.join(ROOT, "solutions", "03_kogge_stone", "scan.cu"),
                        os.path.join(self.dest, "labs", "03_kogge_stone", "scan.cu"))
        self.assertIn("what double_buffer asks for", self.made("run", "LAB=03", "STATUS=1"))
        out = self.made("test", "TEST_SRC=labs", "LAB=03")
        self.assertRegex(out, r"summary: \d+ passed, 0 failed")
        self.assertIn("labs/03_kogge_stone", out)
        out = self.made("grade", "LAB=03")
        self.assertRegex(out, r"03_kogge_stone +ok +40/40 .*60\.0/60", out)
        # the reference it graded against is the shipped object, built where the grade builds
        refs = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(self.dest, "build"))
                for n in names if n == "given.o"]
        self.assertTrue(refs, "the grade built no reference from grader/references/")


class ReleaseTool(unittest.TestCase):
    """The release tool's own checks, without building a release."""

    def test_the_leak_check_can_fail(self):
        """A line only a reference has, planted in a copy of a handout, is found."""
        answers = student_release.answer_lines(ROOT)
        line = next(iter(answers))
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "labs", "03_kogge_stone"))
            with open(os.path.join(d, "labs", "03_kogge_stone", "README.md"), "w") as f:
                f.write("Background\n    " + line + "\n")
            found = student_release.leaked(d, answers)
        self.assertEqual([(p, lab) for p, lab, _ in found],
                         [(os.path.join("labs", "03_kogge_stone", "README.md"), answers[line])])

    def test_a_destination_in_the_tree_is_refused(self):
        rc, out = make(ROOT, "student-release", "DEST=" + os.path.join(ROOT, "build", "release"))
        self.assertNotEqual(rc, 0)
        self.assertTrue(re.search(r"inside this tree", out), out)


if __name__ == "__main__":
    unittest.main()
