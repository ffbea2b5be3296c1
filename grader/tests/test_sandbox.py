"""Graded code cannot read the course: with the grader running as root, every lab run runs as the
unprivileged run user (runuser.run_user), from a run folder of its own (rundir.RunDir), inside the
seccomp sandbox that refuses to open files (common/sandbox.c). Runs CPU-mode fixtures
(tests/cpu_fixtures/sandbox_*.cu, built by `make cpu-fixtures` without the grader's static
checks, so the runtime layer itself is what is tested) the way the grader runs a case. Skips,
saying why, when not root (nothing to drop) or when the fixtures are not built."""
import os
import shutil
import subprocess
import tempfile
import unittest

import fakes
from gradelib import config, evaluate as ev, proc, runuser
from gradelib.grading import Grader
from gradelib.status import Status

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
PASSWD = "/etc/passwd"


def fixture(name):
    for d in (os.path.join(BUILD, "cpu_fixtures"), os.path.join(BUILD, "cpu", "cpu_fixtures")):
        path = os.path.join(d, name, "scan")
        if os.path.exists(path):
            return path
    raise unittest.SkipTest(f"CPU-mode fixture {name} is not built (make cpu-fixtures)")


def needs_root():
    if os.geteuid() != 0:
        raise unittest.SkipTest("not root: the grader drops privileges only when it runs as root "
                                "(as a student's own user, lab code runs as that user)")


def secret_lines(path):
    """The non-trivial lines of a file, none of which may reach a result."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return [ln.strip() for ln in f if len(ln.strip()) >= 8]


class RunUser(unittest.TestCase):
    def setUp(self):
        needs_root()
        self.tmp = fakes.shared_tmp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        runuser.set_run_user(runuser.DEFAULT_RUN_USER)

    def test_a_graded_case_runs_as_the_run_user(self):
        user = runuser.run_user()
        self.assertNotEqual(user.uid, 0)
        # through a process of its own and through a shared one (LabSession), as the grader runs
        kind, msg, _ = ev.run_case(fixture("sandbox_whoami"), 700, "small", 1, 60)
        self.assertEqual(kind, Status.ERROR, msg)
        self.assertIn(f"whoami: uid={user.uid} euid={user.uid} gid={user.gid} egid={user.gid}", msg)
        s = ev.case_session(fixture("sandbox_whoami"))
        kind, msg, _ = ev.run_case_in(s, 700, "small", 1, 60)
        s.close()
        self.assertIn(f"whoami: uid={user.uid} euid={user.uid}", msg)

    def test_describe_and_tools_run_as_the_run_user_too(self):
        script = os.path.join(self.tmp, "scan")
        with open(script, "w") as f:
            f.write("#!/bin/sh\necho \"$(id -u) $(id -g) $(id -G) $(pwd) $HOME\"\n")
        os.chmod(script, 0o755)
        r = ev.run_lab([script, "--describe"], 30)
        uid, gid, groups, cwd, home = r.stdout.split()
        user = runuser.run_user()
        self.assertEqual((int(uid), int(gid), groups), (user.uid, user.gid, str(user.gid)))
        self.assertEqual(cwd, home)  # the empty cwd the run user owns is its HOME
        self.assertTrue(cwd.endswith("/cwd"), cwd)

        # a tool (compute-sanitizer) runs as the run user, with a log folder it can write to
        def tool(binary, log):
            return ["/bin/sh", "-c", f"id -u > {log}; {binary}", "x"]

        r = ev.run_lab([script], 30, tool=tool)
        self.assertEqual(r.tool_log.strip(), str(user.uid))

    def test_a_missing_run_user_falls_back_to_nobody_and_root_is_refused(self):
        runuser.set_run_user("no-such-user-here")
        self.assertEqual(runuser.run_user().name, runuser.FALLBACK_RUN_USER)
        with self.assertRaises(config.ConfigError):
            config.Config(dict(fakes_config(), sandbox={"user": "root"}))


def fakes_config():
    import json
    with open(os.path.join(fakes.GRADER, "config.json")) as f:
        return json.load(f)


class OpenRefused(unittest.TestCase):
    """A lab whose code opens a file that exists and prints it on stderr: the graded result names
    the refusal, and no byte of the file is in it."""

    def setUp(self):
        needs_root()
        kind, msg, rep = ev.run_case(fixture("correct"), 700, "small", 1, 60)
        if not (rep or {}).get("sandbox"):
            self.skipTest("the CPU-mode fixtures were built without libseccomp (no sandbox)")

    def check(self, kind, msg):
        self.assertEqual(kind, Status.SANDBOX, msg)
        self.assertIn(f"the lab's code opened {PASSWD} (openat): graded runs may not open files", msg)
        for line in secret_lines(PASSWD):
            self.assertNotIn(line, msg)
        self.assertNotIn("root:x:0", msg)

    def test_a_case_alone(self):
        self.check(*ev.run_case(fixture("sandbox_read_file"), 700, "small", 1, 60)[:2])

    def test_a_case_in_a_shared_process_and_a_timed_run(self):
        s = ev.case_session(fixture("sandbox_read_file"))
        kind, msg, _ = ev.run_case_in(s, 700, "small", 1, 60)
        s.close()
        self.check(kind, msg)
        self.check(*ev.run_timed(fixture("sandbox_read_file"), 700, 2, 1, 1, 60)[:2])

    def test_without_the_sandbox_the_file_would_have_leaked(self):
        # the fixture does print the file when nothing stops it (the test above is not vacuous)
        p = subprocess.run([fixture("sandbox_read_file"), "--n", "700", "--reps", "0"],
                           capture_output=True, text=True, timeout=60)
        self.assertIn(secret_lines(PASSWD)[0], p.stderr)


class Folders(unittest.TestCase):
    """The grader's work folder (reference builds with their private scan.cu) and a reference
    binary's run copy cannot be read by the run user; the reference still runs."""

    @classmethod
    def setUpClass(cls):
        needs_root()
        cls.tmp = tempfile.mkdtemp()
        os.chmod(cls.tmp, 0o755)  # reachable: only the work folder's own mode protects it
        cfg = config.load(os.path.join(fakes.GRADER, "config.json"))
        cls.g = Grader(ROOT, cfg, os.path.join(cls.tmp, "work"), mode="cpu", labs=["01_serial"])
        try:
            cls.g.build_course()
        except Exception as e:  # no compiler: nothing here can be checked
            raise unittest.SkipTest(f"cannot build the lab 01 reference in CPU mode: {e}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def as_run_user(self, *argv):
        return proc.run(list(argv), 30, contain=True)

    def test_the_work_folder_is_the_graders_alone(self):
        self.assertEqual(os.stat(self.g.work).st_mode & 0o777, 0o700)
        binary = self.g.refs["01_serial"][0]
        src = os.path.join(os.path.dirname(binary), "scan.cu")
        if not os.path.exists(src):  # wherever the build keeps its private copy
            found = [os.path.join(d, f) for d, _, fs in os.walk(self.g.work) for f in fs if f == "scan.cu"]
            self.assertTrue(found, "no private copy of scan.cu in the work folder")
            src = found[0]
        r = self.as_run_user("/bin/cat", src)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Permission denied", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_a_reference_run_copy_runs_but_cannot_be_read(self):
        binary = self.g.refs["01_serial"][0]
        self.assertTrue(ev.is_reference(binary))
        d = ev.RunDir(binary)
        try:
            self.assertEqual(os.stat(d.binary).st_mode & 0o777, 0o711)
            r = self.as_run_user("/bin/cat", d.binary)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("Permission denied", r.stderr)
        finally:
            d.remove()
        kind, msg, _ = ev.run_case(binary, 1000, "random", 3, 60)
        self.assertEqual(kind, Status.OK, msg)
        with self.assertRaises(ValueError):  # the sanitizer runs students' binaries only
            ev.RunDir(binary, tool=True)


if __name__ == "__main__":
    unittest.main()
