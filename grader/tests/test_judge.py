"""The judge of graded runs (common/harness/port.h): it holds no lab code, a graded run of a
binary with no judge is refused, and a judged run is the lab process's sandboxed work with the
judge's report. Real binaries built by `make test` (CPU mode here, the GPU build on a GPU
machine); the fixtures (grader/fixtures: forged_*, overwritten_reference, skipped_timed_calls)
test what a lab does to it."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest
from unittest import mock

import fakes
from gradelib import evaluate as ev  # (fakes puts grader/ on the path)

ROOT = os.path.dirname(fakes.GRADER)

BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))
LAB = "03_kogge_stone"
JUDGE = os.path.join(BUILD, "judge", LAB, "judge")
SCAN = os.path.join(BUILD, "solutions", LAB, "scan")


def symbols(path, *flags):
    out = subprocess.run(["nm", *flags, path], capture_output=True, text=True, check=True).stdout
    names = {ln.split()[-1] for ln in out.splitlines() if ln.strip()}
    # not the names the compiler and assembler make up in every object (local labels, the
    # constructors of a file built with CPU mode's bank-counting hooks): they are no one's code
    return {n for n in names if not n.startswith((".", "_sub_I_", "_sub_D_", "_GLOBAL__"))}


@unittest.skipUnless(os.path.isfile(JUDGE) and os.path.isfile(SCAN) and shutil.which("nm"),
                     f"needs {JUDGE} and {SCAN} (make test builds them) and nm")
class Judge(unittest.TestCase):
    def test_the_judge_holds_no_lab_code(self):
        lab_defined = symbols(SCAN + ".o", "--defined-only")
        self.assertIn("ks_double_buffer_scan", lab_defined)
        shared = lab_defined & symbols(JUDGE, "--defined-only")
        # only the entry points' placeholders share a name with the lab's object (a kernel, a
        # helper or a static of scan.cu would be lab code in the judge)
        placeholders = symbols(os.path.join(BUILD, "judge", LAB, "placeholders.o"), "--defined-only")
        self.assertEqual(shared - placeholders, set())
        self.assertEqual(placeholders, {"ks_double_buffer_scan", "ks_two_barrier_scan"})

    def test_a_judged_case_is_sandboxed_and_reported_by_the_judge(self):
        ours, theirs = socket.socketpair()
        p = subprocess.Popen([JUDGE, "--judge", SCAN, "--grader"], stdin=theirs,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        theirs.close()
        f = ours.makefile("rwb")
        f.write(b"--n 5000 --dist small --seed 7 --calls 3 --json --force\n")
        f.flush()
        rep = json.loads(f.readline())
        ours.shutdown(socket.SHUT_WR)
        out, err = p.communicate(timeout=60)
        ours.close()
        self.assertEqual(p.returncode, 0, err.decode(errors="replace"))
        self.assertEqual((rep["status"], rep["n"], rep["calls"]), ("ok", 5000, 3))
        self.assertTrue(rep["sandbox"])  # the lab process entered it; the judge runs no lab code

    def test_a_tool_s_exit_code_is_the_run_s_whatever_the_verdict(self):
        """compute-sanitizer runs the lab process (--wrap) and exits with the grader's code when
        it found errors: that code must be the run's even when the case itself failed (a kernel
        without its barrier is both wrong and racy), as it is without a judge; a tool that exits 0
        leaves the judge's own code."""
        line = b"--n 5000 --dist small --seed 7 --calls 2 --json --force --variant no_such_variant\n"
        with tempfile.TemporaryDirectory() as d:
            codes = {}
            for code in (0, 77):
                tool = os.path.join(d, f"tool{code}")
                with open(tool, "w") as f:
                    f.write(f'#!/bin/sh\n"$@"\nexit {code}\n')
                os.chmod(tool, 0o755)
                ours, theirs = socket.socketpair()
                p = subprocess.Popen([JUDGE, "--judge", SCAN, "--wrap", tool, "--grader"], stdin=theirs,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                theirs.close()
                ours.sendall(line)
                ours.shutdown(socket.SHUT_WR)
                _, err = p.communicate(timeout=60)
                ours.close()
                codes[code] = p.returncode
                self.assertIn(b"unknown variant", err)
        self.assertEqual(codes, {0: 2, 77: 77})  # 2: the judge's usage error; 77: the tool's

    def test_the_lab_process_is_only_started_by_a_judge(self):
        r = subprocess.run([SCAN, "--serve", "3", "4"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)  # LAB_EXIT_USAGE: no channel on descriptor 3
        self.assertIn("lab process of a judge", r.stderr)


class NoJudge(unittest.TestCase):
    def test_a_graded_run_of_a_binary_without_a_judge_is_refused(self):
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ):
            os.environ.pop(ev.UNJUDGED_VAR, None)
            binary = os.path.join(d, "lab", "scan")
            os.makedirs(os.path.dirname(binary))
            with open(binary, "w") as f:
                f.write("#!/bin/sh\nexit 2\n")
            os.chmod(binary, 0o755)
            with self.assertRaises(ev.NoJudge) as cm:
                ev.judge_for(binary)
            self.assertIn("make judges", str(cm.exception))

    def test_the_grader_s_build_names_the_judge_beside_the_binary(self):
        with tempfile.TemporaryDirectory() as d:
            judge = os.path.join(d, "judge")
            open(judge, "w").close()
            binary = os.path.join(d, "out", "scan")
            os.makedirs(os.path.dirname(binary))
            with open(binary + ev.JUDGE_SUFFIX, "w") as f:
                f.write(judge + "\n")
            self.assertEqual(ev.judge_for(binary), judge)


if __name__ == "__main__":
    unittest.main()
