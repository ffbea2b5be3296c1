"""The fixture submissions as patches against the references (grader/fixturelib.py): every
fixture, in every mode, applies to today's reference solutions (test_fixtures.py grades only those
CPU mode can reach), and the applier is strict: a reference changed where a fixture changes it
fails, naming the fixture; a reference changed elsewhere does not. No build, under a second."""
import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

import fakes  # first: it puts grader/ on the path
import check_fixtures
import fixturelib

REF = b"".join(b"line %d\n" % i for i in range(1, 31))


class EveryFixture(unittest.TestCase):
    def test_every_fixture_applies_to_its_reference(self):
        for name in fixturelib.every():
            for lab in fixturelib.labs(name):
                with self.subTest(fixture=name, lab=lab):
                    text = fixturelib.source(name, lab)
                    self.assertTrue(text.endswith(b"\n") or name == "empty_file")

    def test_the_fixtures_are_those_expected_json_names(self):
        with open(os.path.join(fakes.GRADER, "fixtures", "expected.json"), encoding="utf-8") as f:
            expected = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
        self.assertEqual(sorted(expected), fixturelib.every())
        for name, spec in expected.items():
            self.assertIn(spec["lab"], fixturelib.labs(name), name)

    def test_each_lab_folder_holds_a_patch_or_a_file(self):
        for name in fixturelib.every():
            for lab in fixturelib.labs(name):
                d = os.path.join(fixturelib.SUBMISSIONS, name, lab)
                self.assertEqual(len(os.listdir(d)), 1, d)
                self.assertIn(os.listdir(d)[0], ("scan.cu", fixturelib.PATCH), d)

    def test_a_fixture_is_written_as_a_submission(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixturelib.write("lab10_partial", tmp)
            self.assertEqual(sorted(os.listdir(tmp)), ["08_decoupled_lookback", "10_applications"])
            with open(os.path.join(tmp, "08_decoupled_lookback", "scan.cu"), "rb") as f, \
                    open(fixturelib.reference("08_decoupled_lookback"), "rb") as r:
                self.assertEqual(f.read(), r.read())  # a link to the reference, copied
            self.assertFalse(os.path.islink(os.path.join(tmp, "08_decoupled_lookback", "scan.cu")))


class StalePatch(unittest.TestCase):
    def test_check_fixtures_names_a_fixture_whose_patch_no_longer_applies(self):
        with tempfile.TemporaryDirectory() as tmp:
            ref = os.path.join(tmp, "scan.cu")
            with open(ref, "wb") as f:
                f.write(REF)  # a reference that has nothing of the fixture's context
            out, err = io.StringIO(), io.StringIO()
            with mock.patch.object(fixturelib, "reference", lambda lab: ref), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = check_fixtures.main(["--cpu", "--only", "off_by_one_tile"])
        self.assertEqual(rc, 1)
        self.assertIn("fixture off_by_one_tile: 03_kogge_stone/scan.cu.patch", err.getvalue())
        self.assertIn("| off_by_one_tile | 03 |", out.getvalue())
        self.assertIn("WRONG: not graded: fixture off_by_one_tile", out.getvalue())
        self.assertIn("0/1 fixtures diagnosed as expected", out.getvalue())


class Applier(unittest.TestCase):
    """apply() on a made-up reference of 30 lines."""

    def setUp(self):
        lines = REF.splitlines(keepends=True)
        lines[9] = b"line 10 changed\n"
        lines.insert(20, b"a new line\n")
        self.fixture = b"".join(lines)
        with tempfile.TemporaryDirectory() as tmp:
            ref = os.path.join(tmp, "scan.cu")
            with open(ref, "wb") as f:
                f.write(REF)
            with mock.patch.object(fixturelib, "reference", lambda lab: ref):
                self.patch = fixturelib.diff("02_naive", "made_up", self.fixture)

    def test_the_patch_gives_the_fixture_back(self):
        self.assertEqual(fixturelib.apply(REF, self.patch), self.fixture)

    def test_lines_added_above_a_hunk_move_it(self):
        moved = b"a first line\nanother\n" + REF
        self.assertEqual(fixturelib.apply(moved, self.patch), b"a first line\nanother\n" + self.fixture)

    def test_a_reference_changed_where_the_fixture_changes_it_fails_naming_the_fixture(self):
        for old, new in ((b"line 10\n", b"line 10 edited\n"), (b"line 8\n", b"line eight\n")):
            with self.subTest(old=old):
                with self.assertRaises(fixturelib.PatchError) as e:
                    fixturelib.apply(REF.replace(old, new), self.patch, "fixture made_up")
                self.assertIn("fixture made_up: hunk 1", str(e.exception))
                self.assertIn("no longer applies", str(e.exception))

    def test_old_lines_found_in_two_places_fail(self):
        lines = REF.splitlines(keepends=True)
        twice = b"".join([b"x\n"] * 3 + lines[:14] + lines[5:])  # lines 6-14 twice, neither in place
        with self.assertRaises(fixturelib.PatchError) as e:
            fixturelib.apply(twice, self.patch)
        self.assertIn("hunk 1", str(e.exception))
        self.assertIn("in 2 places", str(e.exception))

    def test_a_hunk_whose_counts_are_wrong_fails(self):
        bad = self.patch.replace(b"@@ -7,7 +7,7 @@", b"@@ -7,8 +7,7 @@")
        self.assertNotEqual(bad, self.patch)
        with self.assertRaises(fixturelib.PatchError):
            fixturelib.apply(REF, bad)

    def test_no_header_or_no_hunk_fails(self):
        for bad in (b"", b"just text\n", b"--- a\n+++ b\n"):
            with self.subTest(patch=bad):
                with self.assertRaises(fixturelib.PatchError):
                    fixturelib.apply(REF, bad)

    def test_a_missing_last_line_end(self):
        patch = b"--- a\n+++ b\n@@ -30 +30 @@\n-line 30\n+line thirty\n\\ No newline at end of file\n"
        self.assertEqual(fixturelib.apply(REF, patch), REF.replace(b"line 30\n", b"line thirty"))


if __name__ == "__main__":
    unittest.main()
