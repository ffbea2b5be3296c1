"""The bad-submission fixtures (grader/fixtures/) graded for real, in CPU mode so that this runs
without a GPU: each must get the diagnosis recorded in grader/fixtures/expected.json (with nvcc
where it is installed, which CPU mode then uses as well; test_static_parity.py builds them
without it). The fixtures
that need the GPU (sanitizer, timing, a kernel that really faults) are checked on a GPU machine
with `python3 grader/check_fixtures.py`."""
import os
import shutil
import subprocess
import sys
import unittest

import fakes

ROOT = os.path.dirname(fakes.GRADER)
BUILD = os.environ.get("LAB_BUILD_DIR", os.path.join(ROOT, "build"))


class Fixtures(unittest.TestCase):
    def test_cpu_mode_fixtures_get_their_diagnosis(self):
        if not shutil.which("make") or not (shutil.which("c++") or shutil.which("g++")):
            self.skipTest("make or a C++ compiler is missing")
        if not os.path.exists(os.path.join(ROOT, "common", "cpu")):
            self.skipTest("this checkout has no CPU mode")
        work = os.path.join(BUILD.rstrip("/").removesuffix("/cpu"), "grader")
        p = subprocess.run([sys.executable, os.path.join(fakes.GRADER, "check_fixtures.py"), "--cpu",
                            "--work", work], capture_output=True, text=True, timeout=900)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr[-3000:])
        self.assertIn("fixtures diagnosed as expected (cpu mode)", p.stdout)


if __name__ == "__main__":
    unittest.main()
