"""The deployments as a platform runs them: `make gradescope`'s autograder.zip unpacked into a
simulated /autograder tree (AUTOGRADER_ROOT), setup.sh run (without apt-get) and run_autograder
run once per upload shape, each results.json checked against Gradescope's format and the upload
checked unchanged; the PrairieLearn-style container entry (grader/deploy/entry.sh) on a simulated
/grade tree; and the Dockerfile's COPY sources. CPU mode, labs 01 and 02: about two minutes. Also
the deadlines both leave under the platform's limit, and the reader of the container's CPU and
memory quota (gradelib/resources.py) on fake cgroup trees."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
sys.path.insert(0, GRADER)
import fixturelib  # noqa: E402
from gradelib import resources  # noqa: E402
ROOT = os.path.dirname(GRADER)
DEPLOY = os.path.join(GRADER, "deploy")
VISIBILITY = {"visible", "after_due_date", "after_published", "hidden"}


def tree_hash(folder):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(folder)):
        dirnames.sort()
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            h.update(os.path.relpath(p, folder).encode())
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def put(dest, tree, lab):
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, tree, lab, "scan.cu"), os.path.join(dest, "scan.cu"))


# Uploads that attack the deployment: lab 01 reads a reference solution of the course
# and prints it on stderr before crashing; lab 02 scans on the host (the host_side_scan fixture);
# lab 01 prints 50 MB on stdout, then scans honestly.
REFERENCE = os.path.join("solutions", "08_decoupled_lookback", "scan.cu")
EXFIL = """#include <stdio.h>
#include "course/01_serial.h"
lab_result serial_scan(const int *in, int *out, size_t n, void *temp)
{
    (void)temp;
    FILE *f = fopen("%s", "r");
    char buf[65536];
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[got] = 0;
    fprintf(stderr, "LEAK %%s\\n", buf);
    *(volatile int *)0 = 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (i ? out[i - 1] : 0) + in[i];
    return LAB_OK;
}
"""
LOUD = """#include <stdio.h>
#include "course/01_serial.h"
lab_result serial_scan(const int *in, int *out, size_t n, void *temp)
{
    (void)temp;
    static int said;
    if (!said) {
        said = 1;
        for (int i = 0; i < 50 * 1024; i++) /* 50 MB */
            printf("%%01023d\\n", i);
    }
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (int)(s += (unsigned)in[i]);
    return LAB_OK;
}
"""


def write(dest, text):
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "scan.cu"), "w", encoding="utf-8") as f:
        f.write(text)


def reference_lines():
    """Distinctive lines of the reference the exfiltration upload reads (none may reach feedback)."""
    with open(os.path.join(ROOT, REFERENCE), encoding="utf-8") as f:
        return [ln.strip() for ln in f if len(ln.strip()) > 40][:40]


def malloc_line():
    """The line of host_side_scan's malloc, which the static check names: the fixture is a patch
    against the reference (grader/fixturelib.py), so it moves with the reference's header."""
    text = fixturelib.source("host_side_scan", "02_naive").decode("utf-8")
    return next(i for i, ln in enumerate(text.splitlines(), 1) if "malloc(" in ln)


def fixture(dest, name, lab):
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "scan.cu"), "wb") as f:  # the fixture's patch applied (grader/fixturelib.py)
        f.write(fixturelib.source(name, lab))


class GradescopePackage:
    """The Gradescope package (make_gradescope.py, CPU mode, labs 01 and 02) set up in a simulated
    /autograder tree by its setup.sh, and uploads graded through its run_autograder."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-gradescope-")
        cls.root = os.path.join(cls.tmp, "autograder")
        z = os.path.join(cls.tmp, "autograder.zip")
        subprocess.run([sys.executable, os.path.join(DEPLOY, "make_gradescope.py"), "--out", z, "--labs", "01", "02",
                        "--mode", "cpu"], check=True, capture_output=True)  # the default --timeout
        source = os.path.join(cls.root, "source")
        with zipfile.ZipFile(z) as f:
            f.extractall(source)
            for info in f.infolist():  # as Gradescope does: the scripts stay executable
                if info.external_attr >> 16 & 0o111:
                    os.chmod(os.path.join(source, info.filename), 0o755)
        # as shipped for Gradescope's machines: no nvcc (find_nvcc reads NVCC first); SKIP_USERADD:
        # no user is added to the machine that runs the tests (as root the grader then drops to
        # `nobody`, runuser.run_user's fallback)
        cls.env = dict(os.environ, AUTOGRADER_ROOT=cls.root, SKIP_APT="1", SKIP_USERADD="1", NVCC="/nonexistent/nvcc")
        r = subprocess.run(["bash", os.path.join(source, "setup.sh")], capture_output=True, text=True, env=cls.env)
        cls.setup_output = r.stdout + r.stderr
        if r.returncode != 0:
            raise AssertionError(f"setup.sh failed:\n{cls.setup_output[-3000:]}")
        shutil.copyfile(os.path.join(source, "run_autograder"), os.path.join(cls.root, "run_autograder"))
        os.chmod(os.path.join(cls.root, "run_autograder"), 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_upload(self, make, env=None):
        """Puts an upload in submission/ (make(folder)), runs run_autograder; the results.json."""
        sub = os.path.join(self.root, "submission")
        shutil.rmtree(sub, ignore_errors=True)
        os.makedirs(sub)
        make(sub)
        before = tree_hash(sub)
        r = subprocess.run([os.path.join(self.root, "run_autograder")], capture_output=True, text=True,
                           env=dict(self.env, **(env or {})), timeout=900)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(tree_hash(sub), before, "run_autograder changed the student's files")
        self.stdout, self.stderr = r.stdout, r.stderr
        with open(os.path.join(self.root, "results", "results.json")) as f:
            doc = json.load(f)
        self.check_format(doc)
        return doc

    def check_format(self, doc):
        self.assertIsInstance(doc["score"], (int, float))
        self.assertIn(doc.get("visibility", "visible"), VISIBILITY)
        for t in doc["tests"]:
            self.assertTrue({"name", "score", "max_score", "status", "output", "visibility"} <= set(t), t)
            self.assertIn(t["status"], ("passed", "failed"))
            self.assertIn(t["visibility"], VISIBILITY)
        if doc["tests"]:
            self.assertAlmostEqual(sum(t["score"] for t in doc["tests"]), doc["score"], places=2)

    def lab(self, doc, lab):
        return [t for t in doc["tests"] if t["name"].startswith(lab)]


class Gradescope(GradescopePackage, unittest.TestCase):
    """The package's setup, and the uploads that decide the most: lab folders, an empty upload,
    the attacks, the deadlines (GradescopeMore: the rest)."""
    FULL_SUITE = "the Gradescope package set up from its zip and grading uploads (its references built first)"

    def test_setup_checked_the_reference_solutions(self):
        self.assertIn("the reference solutions get 120.0/120 (cpu mode): ready", self.setup_output)

    def test_setup_made_the_course_unreadable_to_other_users(self):
        # graded code runs as another user (the config's sandbox.user): the reference solutions
        # under source/ and the grader's work folder must be root's alone
        self.assertEqual(os.stat(os.path.join(self.root, "source")).st_mode & 0o077, 0)
        self.assertEqual(os.stat(os.path.join(self.root, "work")).st_mode & 0o077, 0)

    def test_a_labs_folder(self):
        def make(sub):
            put(os.path.join(sub, "labs", "01_serial"), "solutions", "01_serial")
            put(os.path.join(sub, "labs", "02_naive"), "solutions", "02_naive")
        doc = self.run_upload(make)
        self.assertEqual(doc["score"], 120.0)
        self.assertIn("in CPU mode (no GPU: correctness, no timing)", doc["output"])
        self.assertEqual(len(doc["tests"]), 2)  # CPU mode: correctness only, one test per lab

    def test_an_empty_upload_says_why(self):
        doc = self.run_upload(lambda sub: None)
        self.assertEqual(doc["score"], 0.0)
        self.assertIn("no lab found", doc["output"])
        self.assertIn("the submission is empty", doc["output"])

    def test_the_default_deadline_is_under_gradescopes_default_timeout(self):
        with open(os.path.join(self.root, "source", "autograder.env")) as f:
            self.assertIn("GRADESCOPE_TIMEOUT=600\n", f.read())
        self.run_upload(lambda sub: None)
        self.assertIn("run_autograder: the grader has 540 s (the platform's timeout: 600 s)", self.stderr)

    def test_a_deadline_from_the_platforms_timeout_still_writes_results(self):
        """A platform timeout of 2 s leaves the grader 1 s: it runs out of time and the fallback is
        written before the platform's limit. (Lab 01 spins for seconds before each scan: the
        reference's lab 01 alone is graded in 0.7 s now, within the second.)"""
        def make(sub):
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
            path = os.path.join(sub, "01_serial", "scan.cu")
            with open(path) as f:
                code = f.read()
            slow = ("{\n    for (volatile unsigned long long spin = 0; spin < 4000000000ull; spin = spin + 1) {\n"
                    "    }\n")
            with open(path, "w") as f:
                f.write(code.replace("void *temp)\n{\n", "void *temp)\n" + slow, 1))
        doc = self.run_upload(make, env={"GRADESCOPE_TIMEOUT_OVERRIDE": "2"})
        self.assertIn("the grader has 1 s (the platform's timeout: 2 s)", self.stderr)
        self.assertEqual(doc["score"], 0.0)
        self.assertIn("ran out of time after 1 s, before the platform's limit of 2 s", doc["output"])
        self.assertIn("Ask your instructor to regrade", doc["output"])

    def test_the_exfiltration_upload_gets_0_and_leaks_nothing(self):
        path = os.path.join(self.root, "source", "course", REFERENCE)
        self.assertTrue(os.path.exists(path), "the package no longer ships the reference this test reads")

        def make(sub):
            write(os.path.join(sub, "01_serial"), EXFIL % path)
            put(os.path.join(sub, "02_naive"), "solutions", "02_naive")
        doc = self.run_upload(make)
        self.assertEqual(sum(t["score"] for t in self.lab(doc, "01_serial")), 0.0)
        self.assertIn("lab code may not call fopen (line 6)", self.lab(doc, "01_serial")[0]["output"])
        self.assertEqual(sum(t["score"] for t in self.lab(doc, "02_naive")), 60.0)
        with open(os.path.join(self.root, "results", "results.json"), encoding="utf-8") as f:
            everything = f.read() + self.stdout + self.stderr
        for ln in reference_lines():
            self.assertNotIn(ln, everything)

    def test_a_host_side_scan_gets_0_with_the_gpu_paths_message(self):
        def make(sub):
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
            fixture(os.path.join(sub, "02_naive"), "host_side_scan", "02_naive")
        doc = self.run_upload(make)
        self.assertEqual(sum(t["score"] for t in self.lab(doc, "01_serial")), 60.0)
        self.assertEqual(sum(t["score"] for t in self.lab(doc, "02_naive")), 0.0)
        # the GPU path's words (grader/fixtures/RESULTS.md, H100)
        self.assertIn(f"static check failed: lab code may not call malloc (line {malloc_line()}): no host memory: "
                      "the harness hands the lab every buffer it needs", self.lab(doc, "02_naive")[0]["output"])

    def test_a_grader_that_runs_out_of_time_still_writes_results(self):
        def make(sub):  # a lab that hangs: no grading ends within the 1 s given (lab 01 alone once did)
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
            fixture(os.path.join(sub, "02_naive"), "infinite_loop", "02_naive")
        doc = self.run_upload(make, env={"GRADE_TIMEOUT_OVERRIDE": "1"})
        self.assertEqual(doc["score"], 0.0)
        self.assertIn("ran out of time", doc["output"])
        self.assertIn("Ask your instructor to regrade", doc["output"])


class GradescopeMore(GradescopePackage, unittest.TestCase):
    """More uploads through the same package: a lab unfinished, one scan.cu, output that floods."""
    FULL_SUITE = "a second Gradescope package set up, for the uploads make test leaves out"

    def test_lab_folders_with_one_unfinished(self):
        def make(sub):
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
            put(os.path.join(sub, "02_naive"), "labs", "02_naive")
        doc = self.run_upload(make)
        self.assertEqual(doc["score"], 60.0)
        naive = [t for t in doc["tests"] if t["name"].startswith("02_naive")]
        self.assertTrue(any("not implemented" in t["output"] for t in naive))

    def test_one_scan_cu_for_a_one_lab_assignment(self):
        doc = self.run_upload(lambda sub: put(sub, "solutions", "02_naive"), env={"GRADE_LABS_OVERRIDE": "02"})
        self.assertEqual(doc["score"], 60.0)
        self.assertTrue(all(t["name"].startswith("02_naive") for t in doc["tests"]))

    def test_a_crash_that_prints_a_megabyte_reaches_no_one_whole(self):
        """Lab 01 prints 4 MB with control characters on one stderr line, then crashes: the test's
        output and the grader's stdout (which Gradescope shows) quote a short, clean tail."""
        code = ('#include <stdio.h>\n#include "course/01_serial.h"\n'
                "lab_result serial_scan(const int *in, int *out, size_t n, void *temp)\n{\n"
                "    (void)in; (void)out; (void)n; (void)temp;\n"
                "    for (int i = 0; i < 20000; i++)\n"
                "        fprintf(stderr, \"LEAK %0200d \\033[2J\\r\\001 \", i);\n"
                "    *(volatile int *)0 = 1;\n    return LAB_OK;\n}\n")

        def make(sub):
            os.makedirs(os.path.join(sub, "01_serial"))
            with open(os.path.join(sub, "01_serial", "scan.cu"), "w") as f:
                f.write(code)
        doc = self.run_upload(make, env={"GRADE_LABS_OVERRIDE": "01"})
        self.assertEqual(doc["score"], 0.0)
        out = doc["tests"][0]["output"]
        self.assertIn("crashed with SIGSEGV; its stderr ended: [cut to 300 bytes] «", out)
        self.assertLessEqual(len(out.encode()), 4000)
        self.assertNotIn("\x1b", out + self.stdout)
        self.assertNotIn("\x01", out + self.stdout)
        self.assertLess(self.stdout.count("LEAK"), 100, "the grader's stdout repeats the program's output")
        self.assertLess(len(self.stdout.encode()), 20000)
        with open(os.path.join(self.root, "results", "results.json"), "rb") as f:
            self.assertLess(len(f.read()), 500000)

    def test_an_upload_that_prints_50_mb_gets_a_small_results_file(self):
        def make(sub):
            write(os.path.join(sub, "01_serial"), LOUD)
            put(os.path.join(sub, "02_naive"), "solutions", "02_naive")
        doc = self.run_upload(make)
        self.assertEqual(sum(t["score"] for t in self.lab(doc, "02_naive")), 60.0)
        self.assertLess(os.path.getsize(os.path.join(self.root, "results", "results.json")), 500000)
        self.assertLess(len(self.stdout.encode()), 200000)


class GradescopeGpu(unittest.TestCase):
    """The package in gpu mode (`make gradescope GRADESCOPE_ARGS='--mode gpu'`, for a self-hosted
    Gradescope runner or any grading host with an NVIDIA GPU) in a simulated /autograder tree:
    an upload gets the points `grade.py --gpu` gives it, lab by lab. Skips without a GPU."""

    def test_the_package_grades_as_grade_py_does(self):
        from gradelib.grading import gpu_visible
        if not gpu_visible() or not shutil.which("nvidia-smi"):
            self.skipTest("no NVIDIA GPU here: the gpu-mode package is checked on a GPU machine")
        tmp = tempfile.mkdtemp(prefix="test-gradescope-gpu-")
        try:
            root = os.path.join(tmp, "autograder")
            z = os.path.join(tmp, "autograder.zip")
            subprocess.run([sys.executable, os.path.join(DEPLOY, "make_gradescope.py"), "--out", z, "--labs", "01",
                            "02", "03", "--mode", "gpu"], check=True, capture_output=True)
            with zipfile.ZipFile(z) as f:
                f.extractall(os.path.join(root, "source"))
            env = dict(os.environ, AUTOGRADER_ROOT=root, SKIP_APT="1", SKIP_USERADD="1")
            r = subprocess.run(["bash", os.path.join(root, "source", "setup.sh")], capture_output=True, text=True,
                               env=env, timeout=1200)
            self.assertEqual(r.returncode, 0, (r.stdout + r.stderr)[-3000:])
            self.assertIn("(gpu mode): ready", r.stdout)
            sub = os.path.join(root, "submission")
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
            fixture(os.path.join(sub, "02_naive"), "host_side_scan", "02_naive")
            put(os.path.join(sub, "03_kogge_stone"), "solutions", "03_kogge_stone")
            r = subprocess.run(["bash", os.path.join(root, "source", "run_autograder")], capture_output=True,
                               text=True, env=env, timeout=1200)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            with open(os.path.join(root, "results", "results.json")) as f:
                doc = json.load(f)
            got = {}
            for t in doc["tests"]:
                got[t["name"][:2]] = got.get(t["name"][:2], 0) + t["score"]
            p = subprocess.run([sys.executable, os.path.join(GRADER, "grade.py"), "--src", sub, "--gpu", "--labs",
                                "01", "02", "03", "--format", "json", "--work", os.path.join(tmp, "work")],
                               capture_output=True, text=True, timeout=1200)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            want = {lab["lab"][:2]: lab["points"] for lab in json.loads(p.stdout)["labs"]}
            self.assertEqual(got, want)
            self.assertEqual(want["02"], 0)
            self.assertGreater(want["01"], 90)
            self.assertIn(f"lab code may not call malloc (line {malloc_line()})", json.dumps(doc))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class Container(unittest.TestCase):
    def test_every_copy_source_of_the_dockerfile_exists(self):
        with open(os.path.join(DEPLOY, "Dockerfile")) as f:
            lines = [ln.split() for ln in f if ln.startswith("COPY ")]
        self.assertTrue(lines)
        for parts in lines:
            for src in parts[1:-1]:
                if not src.startswith("--"):
                    self.assertTrue(os.path.exists(os.path.join(ROOT, src)), f"COPY {src}: not in the repository")

    def test_the_image_grades_as_root_and_runs_graded_code_as_the_run_user(self):
        with open(os.path.join(DEPLOY, "Dockerfile")) as f:
            text = f.read()
        with open(os.path.join(GRADER, "config.json")) as f:
            user = json.load(f)["sandbox"]["user"]
        self.assertRegex(text, rf"useradd --system [^\n]*--shell /usr/sbin/nologin {user}\b")
        self.assertIn("chmod 0700 /course /work", text)
        self.assertNotRegex(text, r"(?m)^USER ")  # root, so that it can drop each run to the user

    def test_no_results_folder_is_the_only_failure(self):
        tmp = tempfile.mkdtemp(prefix="test-container-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        blocker = os.path.join(tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        r = subprocess.run(["bash", os.path.join(DEPLOY, "entry.sh")], capture_output=True, text=True,
                           env=dict(os.environ, GRADE_ROOT=os.path.join(blocker, "grade"), COURSE=ROOT), timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("entry.sh: cannot create or write", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class ContainerEntry(unittest.TestCase):
    """entry.sh, the container's grading entry (PrairieLearn's external grading), run whole."""
    FULL_SUITE = "the container's entry run whole on simulated uploads (its references built first)"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-container-")
        cls.work = os.path.join(cls.tmp, "work")  # shared: the references are built once

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entry(self, make, **env):
        """Runs entry.sh on a fresh simulated /grade (make(student folder) fills the upload):
        (the completed process, results.json's document or None)."""
        grade = tempfile.mkdtemp(prefix="grade-", dir=self.tmp)
        student = os.path.join(grade, "student")
        os.makedirs(student)
        make(student)
        env = dict(dict(os.environ, GRADE_ROOT=grade, COURSE=ROOT, GRADE_LABS="01", GRADE_MODE="cpu",
                        GRADE_WORK=self.work), **env)
        r = subprocess.run(["bash", os.path.join(DEPLOY, "entry.sh")], capture_output=True, text=True, env=env,
                           timeout=900)
        path = os.path.join(grade, "results", "results.json")
        if not os.path.exists(path):
            return r, None
        with open(path) as f:
            return r, json.load(f)

    def test_the_entry_grades_a_simulated_grade_tree(self):
        """/grade/student in, /grade/results/results.json out (PrairieLearn's external grading)."""
        r, doc = self.entry(lambda student: put(os.path.join(student, "01_serial"), "solutions", "01_serial"))
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertTrue(doc["gradable"])
        self.assertEqual(doc["score"], 1.0)
        self.assertEqual(sum(t["points"] for t in doc["tests"]), 60.0)
        self.assertTrue(all({"name", "points", "max_points", "output"} <= set(t) for t in doc["tests"]))
        # the default deadline is under PrairieLearn's cap of 600 s
        self.assertIn("entry.sh: the grader has 540 s (the platform's timeout: 600 s)", r.stderr)

    def test_an_empty_upload_costs_no_attempt(self):
        r, doc = self.entry(lambda student: None)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIs(doc["gradable"], False)
        self.assertEqual(doc["score"], 0.0)
        self.assertTrue(doc["message"].startswith("Nothing was submitted"), doc["message"])
        self.assertIn("the submission is empty", doc["message"])

    def test_an_upload_without_lab_folders_costs_no_attempt(self):
        def make(student):
            os.makedirs(os.path.join(student, "hw"))
            with open(os.path.join(student, "notes.txt"), "w") as f:
                f.write("x")
        r, doc = self.entry(make)
        self.assertIs(doc["gradable"], False)
        self.assertIn("found: hw/, notes.txt", doc["message"])

    def pl_lab(self, doc, lab):
        return sum(t["points"] for t in doc["tests"] if t["name"].startswith(lab))

    def test_the_three_attacks_through_the_entry(self):
        """The exfiltration, host-side-scan and 50 MB uploads of the Gradescope tests, through
        PrairieLearn's entry in CPU mode without nvcc."""
        env = dict(GRADE_LABS="01 02", NVCC="/nonexistent/nvcc")
        r, doc = self.entry(lambda st: (write(os.path.join(st, "01_serial"), EXFIL % os.path.join(ROOT, REFERENCE)),
                                        put(os.path.join(st, "02_naive"), "solutions", "02_naive")), **env)
        self.assertTrue(doc["gradable"])
        self.assertEqual((self.pl_lab(doc, "01_serial"), self.pl_lab(doc, "02_naive")), (0.0, 60.0))
        text = json.dumps(doc) + r.stdout + r.stderr
        self.assertIn("lab code may not call fopen (line 6)", text)
        for ln in reference_lines():
            self.assertNotIn(ln, text)
        r, doc = self.entry(lambda st: (put(os.path.join(st, "01_serial"), "solutions", "01_serial"),
                                        fixture(os.path.join(st, "02_naive"), "host_side_scan", "02_naive")), **env)
        self.assertEqual((self.pl_lab(doc, "01_serial"), self.pl_lab(doc, "02_naive")), (60.0, 0.0))
        self.assertIn(f"lab code may not call malloc (line {malloc_line()}): no host memory", json.dumps(doc))
        r, doc = self.entry(lambda st: (write(os.path.join(st, "01_serial"), LOUD),
                                        put(os.path.join(st, "02_naive"), "solutions", "02_naive")), **env)
        self.assertEqual(self.pl_lab(doc, "02_naive"), 60.0)
        self.assertLess(len(json.dumps(doc).encode()), 500000)

    def test_a_grader_out_of_time_is_not_a_grade(self):
        r, doc = self.entry(lambda student: put(os.path.join(student, "01_serial"), "solutions", "01_serial"),
                            PLATFORM_TIMEOUT="2")
        self.assertIn("the grader has 1 s (the platform's timeout: 2 s)", r.stderr)
        self.assertIs(doc["gradable"], False)
        self.assertIn("ran out of time after 1 s", doc["message"])


def cgroup_tree(files, proc_cgroup="0::/\n"):
    """A fake filesystem root: <root>/proc/self/cgroup and the files under <root>/sys/fs/cgroup."""
    root = tempfile.mkdtemp(prefix="fake-cgroup-")
    files = dict(files, **{"proc/self/cgroup": proc_cgroup})
    for rel, text in files.items():
        path = os.path.join(root, rel if rel.startswith("proc/") else os.path.join("sys/fs/cgroup", rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


class Resources(unittest.TestCase):
    """gradelib/resources.py: the CPUs and memory of a container, from its cgroup files."""

    def tree(self, files, proc_cgroup="0::/\n"):
        root = cgroup_tree(files, proc_cgroup)
        self.addCleanup(shutil.rmtree, root, True)
        return root

    def test_cgroup_v2_quota_and_memory(self):
        root = self.tree({"cpu.max": "50000 100000\n", "memory.max": "805306368\n"})  # Gradescope's default
        self.assertEqual(resources.usable_cpus(root, affinity=32), 1)
        self.assertEqual(resources.memory_limit(root), 768 * 2**20)
        root = self.tree({"cpu.max": "250000 100000\n", "memory.max": "max\n"})
        self.assertEqual(resources.usable_cpus(root, affinity=32), 3)  # 2.5 CPUs: rounded up
        self.assertEqual(resources.usable_cpus(root, affinity=2), 2)   # the affinity mask is lower
        self.assertIsNone(resources.memory_limit(root))

    def test_cgroup_v2_unlimited_and_missing(self):
        self.assertEqual(resources.usable_cpus(self.tree({"cpu.max": "max 100000\n"}), affinity=16), 16)
        self.assertEqual(resources.usable_cpus(self.tree({}), affinity=5), 5)
        self.assertIsNone(resources.memory_limit(self.tree({})))

    def test_cgroup_v2_of_the_process_and_its_parents(self):
        root = self.tree({"job/cpu.max": "max 100000\n", "job/task/cpu.max": "200000 100000\n",
                          "job/memory.max": "1073741824\n", "job/task/memory.max": "max\n"},
                         proc_cgroup="0::/job/task\n")
        self.assertEqual(resources.usable_cpus(root, affinity=64), 2)
        self.assertEqual(resources.memory_limit(root), 2**30)  # the parent's limit applies

    def test_cgroup_v1(self):
        root = self.tree({"cpu,cpuacct/cpu.cfs_quota_us": "150000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
                          "memory/memory.limit_in_bytes": "536870912\n"},
                         proc_cgroup="4:memory:/\n3:cpu,cpuacct:/\n")
        self.assertEqual(resources.usable_cpus(root, affinity=8), 2)
        self.assertEqual(resources.memory_limit(root), 512 * 2**20)
        unlimited = self.tree({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
                               "memory/memory.limit_in_bytes": "9223372036854771712\n"},
                              proc_cgroup="4:memory:/docker/abc\n3:cpu:/docker/abc\n")
        self.assertEqual(resources.usable_cpus(unlimited, affinity=8), 8)
        self.assertIsNone(resources.memory_limit(unlimited))

    def test_jobs_follow_cpus_and_memory(self):
        mb = 2**20
        self.assertEqual(resources.jobs(cpus=32, memory=768 * mb), 4)  # (768 - 100) / 150
        self.assertEqual(resources.jobs(cpus=2, memory=768 * mb), 2)
        self.assertEqual(resources.jobs(cpus=32, memory=0, most=10, root=self.tree({})), 10)
        self.assertEqual(resources.jobs(cpus=8, memory=64 * mb), 1)  # never fewer than one
        root = self.tree({"cpu.max": "50000 100000\n", "memory.max": "805306368\n"})
        self.assertEqual(resources.jobs(root=root), 1)

    def test_the_grader_uses_them(self):
        """No os.cpu_count() left where the grader sizes its pools."""
        for rel in ("grade.py", "classroom/runs.py", "classroom/batch.py", "gradelib/grading.py",
                    "classroom/cluster.py"):
            with open(os.path.join(GRADER, rel)) as f:
                self.assertFalse("os.cpu_count()" in f.read(), rel)


if __name__ == "__main__":
    unittest.main()
