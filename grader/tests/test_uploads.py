"""Every upload shape single and batch mode accept (classroom/uploads.py), and the one-line
reasons for the shapes they cannot use."""
import os
import shutil
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from classroom import uploads  # noqa: E402
from classroom.submissions import BadSubmission  # noqa: E402

LABS = ["01_serial", "03_kogge_stone"]


class Shapes(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.d)

    def put(self, rel, text="// code\n"):
        path = os.path.join(self.d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_lab_folders_at_the_top_in_labs_or_wrapped(self):
        for prefix in ("", "labs/", "alice-hw/labs/", "a/b/c/"):
            shutil.rmtree(self.d)
            os.makedirs(self.d)
            p1 = self.put(prefix + "01_serial/scan.cu")
            found = uploads.locate(self.d, LABS)
            self.assertEqual(found.sources, {"01_serial": p1, "03_kogge_stone": None}, prefix)
            self.assertIsNone(found.problem)

    def test_one_bare_scan_cu_is_a_one_lab_assignment(self):
        p = self.put("scan.cu")
        self.assertEqual(uploads.locate(self.d, ["03_kogge_stone"]).sources, {"03_kogge_stone": p})
        found = uploads.locate(self.d, LABS)  # two labs graded: a bare file names none of them
        self.assertTrue(found.nothing)
        self.assertIn("expected lab folders such as 01_serial/scan.cu", found.problem)
        self.assertIn("found: scan.cu", found.problem)
        single = uploads.open_submission(p, os.path.join(self.d, "x"), ["03_kogge_stone"])
        self.assertEqual(single.sources, {"03_kogge_stone": p})
        self.assertIn("--labs", uploads.open_submission(p, os.path.join(self.d, "x"), LABS).problem)

    def test_a_lone_scan_cu_is_matched_by_the_lab_header_it_includes(self):
        p = self.put("hw/scan.cu", '#include "course/03_kogge_stone.h"\n#include "cuda_check.h"\n')
        found = uploads.locate(self.d, LABS)  # two labs graded: the header names one of them
        self.assertEqual(found.sources, {"01_serial": None, "03_kogge_stone": p})
        self.assertIsNone(found.problem)
        self.assertEqual(uploads.open_submission(p, os.path.join(self.d, "x"), LABS).sources,
                         {"01_serial": None, "03_kogge_stone": p})
        old = self.put("old/scan.cu", '  # include "labs/01_serial.h"\n')  # the header's old name
        self.assertEqual(uploads.locate(os.path.join(self.d, "old"), LABS).sources,
                         {"01_serial": old, "03_kogge_stone": None})
        other = self.put("other/scan.cu", '#include "course/05_blelloch.h"\n')  # not a graded lab
        self.assertTrue(uploads.locate(os.path.dirname(other), LABS).nothing)
        self.put("hw/copy/scan.cu", '#include "course/03_kogge_stone.h"\n')  # two files claim lab 03
        self.assertTrue(uploads.locate(os.path.join(self.d, "hw"), LABS).nothing)

    def test_too_deep_says_how_deep(self):
        self.put("a/b/c/d/e/01_serial/scan.cu")
        found = uploads.locate(self.d, LABS)
        self.assertTrue(found.nothing)
        self.assertIn("6 levels down", found.problem)
        self.assertIn("at most 4", found.problem)

    def test_two_folders_for_one_lab_are_not_guessed(self):
        self.put("v1/01_serial/scan.cu")
        self.put("v2/01_serial/scan.cu")
        p3 = self.put("v2/03_kogge_stone/scan.cu")
        found = uploads.locate(self.d, LABS)
        self.assertIsNone(found.sources["01_serial"])
        self.assertEqual(found.sources["03_kogge_stone"], p3)
        self.assertIn("two folders for 01_serial", found.problem)

    def test_nothing_recognisable_lists_what_is_there(self):
        self.put("notes.txt")
        self.put("hw/main.cu")
        found = uploads.locate(self.d, LABS)
        self.assertIn("no lab found", found.problem)
        self.assertIn("found: hw/, notes.txt", found.problem)

    def test_archives_empty_or_not(self):
        empty = os.path.join(self.d, "empty.zip")
        zipfile.ZipFile(empty, "w").close()
        found = uploads.open_submission(empty, os.path.join(self.d, "u1"), LABS)
        self.assertEqual(found.problem, "the archive is empty (no regular files in it)")
        full = os.path.join(self.d, "full.zip")
        with zipfile.ZipFile(full, "w") as z:
            z.writestr("labs/03_kogge_stone/scan.cu", "// x\n")
            z.writestr("__MACOSX/labs/03_kogge_stone/scan.cu", "junk")
        found = uploads.open_submission(full, os.path.join(self.d, "u2"), LABS)
        self.assertIsNone(found.problem)
        self.assertTrue(found.sources["03_kogge_stone"].endswith("labs/03_kogge_stone/scan.cu"))
        with self.assertRaises(BadSubmission):
            uploads.open_submission(self.put("x.txt"), os.path.join(self.d, "u3"), LABS)


if __name__ == "__main__":
    unittest.main()
