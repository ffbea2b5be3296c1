"""The deployments as a platform runs them: `make gradescope`'s autograder.zip unpacked into a
simulated /autograder tree (AUTOGRADER_ROOT), setup.sh run (without apt-get) and run_autograder
run once per upload shape, each results.json checked against Gradescope's format and the upload
checked unchanged; the PrairieLearn-style container entry (grader/deploy/entry.sh) on a simulated
/grade tree; and the Dockerfile's COPY sources. CPU mode, labs 01 and 02: about two minutes."""
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


class Gradescope(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-gradescope-")
        cls.root = os.path.join(cls.tmp, "autograder")
        z = os.path.join(cls.tmp, "autograder.zip")
        subprocess.run([sys.executable, os.path.join(DEPLOY, "make_gradescope.py"), "--out", z, "--labs", "01", "02",
                        "--mode", "cpu", "--timeout", "600"], check=True, capture_output=True)
        source = os.path.join(cls.root, "source")
        with zipfile.ZipFile(z) as f:
            f.extractall(source)
            for info in f.infolist():  # as Gradescope does: the scripts stay executable
                if info.external_attr >> 16 & 0o111:
                    os.chmod(os.path.join(source, info.filename), 0o755)
        # SKIP_USERADD: no user is added to the machine that runs the tests (as root the grader
        # then drops to `nobody`, proc.run_user's fallback)
        cls.env = dict(os.environ, AUTOGRADER_ROOT=cls.root, SKIP_APT="1", SKIP_USERADD="1")
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
        self.assertIn("cpu mode", doc["output"])
        self.assertEqual(len(doc["tests"]), 2)  # CPU mode: correctness only, one test per lab

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

    def test_an_empty_upload_says_why(self):
        doc = self.run_upload(lambda sub: None)
        self.assertEqual(doc["score"], 0.0)
        self.assertIn("no lab found", doc["output"])
        self.assertIn("the submission is empty", doc["output"])

    def test_a_grader_that_runs_out_of_time_still_writes_results(self):
        def make(sub):
            put(os.path.join(sub, "01_serial"), "solutions", "01_serial")
        doc = self.run_upload(make, env={"GRADE_TIMEOUT_OVERRIDE": "1"})
        self.assertEqual(doc["score"], 0.0)
        self.assertIn("ran out of time", doc["output"])
        self.assertIn("Ask your instructor to regrade", doc["output"])


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

    def test_the_entry_grades_a_simulated_grade_tree(self):
        """/grade/student in, /grade/results/results.json out (PrairieLearn's external grading)."""
        d = tempfile.mkdtemp(prefix="test-container-")
        try:
            student = os.path.join(d, "grade", "student")
            put(os.path.join(student, "01_serial"), "solutions", "01_serial")
            env = dict(os.environ, GRADE_ROOT=os.path.join(d, "grade"), COURSE=ROOT, GRADE_LABS="01",
                       GRADE_MODE="cpu", GRADE_WORK=os.path.join(d, "work"))
            r = subprocess.run(["bash", os.path.join(DEPLOY, "entry.sh")], capture_output=True, text=True, env=env,
                               timeout=900)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(os.path.join(d, "grade", "results", "results.json")) as f:
                doc = json.load(f)
            self.assertTrue(doc["gradable"])
            self.assertEqual(doc["score"], 1.0)
            self.assertEqual(sum(t["points"] for t in doc["tests"]), 60.0)
            self.assertTrue(all({"name", "points", "max_points", "output"} <= set(t) for t in doc["tests"]))
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
