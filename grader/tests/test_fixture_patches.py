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


VERDICTS = os.path.join(fakes.GRADER, "fixtures", "verdicts")


class RecordedVerdicts(unittest.TestCase):
    """Every fixture gets its expected verdict on every kind of machine: on a GPU and in CPU mode
    with nvcc as recorded there (grader/fixtures/verdicts/README.md), for the fixture and the
    expectation as they are now; CPU mode without nvcc is graded in test_fixtures.py."""

    def test_cpu_mode_with_nvcc_as_recorded(self):
        self.check_record("cpu-with-nvcc.json", "cpu with nvcc", "cpu")

    def test_the_gpu_as_recorded(self):
        if not os.path.exists(os.path.join(VERDICTS, "gpu.json")):
            self.skipTest("grader/fixtures/verdicts/gpu.json is not recorded yet: run check_fixtures.py --record "
                          "grader/fixtures/verdicts/gpu.json on a GPU machine (its README)")
        self.check_record("gpu.json", "gpu", "gpu")

    def check_record(self, file, mode, marker):
        """Every fixture marked for marker has an ok entry in the record file, for the fixture and
        the expectation as they are now."""
        expected = fixturelib.every_expected()
        problems = []
        with open(os.path.join(VERDICTS, file), encoding="utf-8") as f:
            record = json.load(f)
        self.assertEqual(record["mode"], mode, file)
        for name, spec in sorted(expected.items()):
            if marker not in spec["modes"]:
                continue
            row = record["fixtures"].get(name)
            if row is None:
                problems.append(f"{file}: {name}: no verdict recorded")
            elif row["fingerprint"] != fixturelib.fingerprint(name):
                problems.append(f"{file}: {name}: the fixture changed since its verdict was recorded ({row['date']})")
            elif row["expect"] != spec["expect"]:
                problems.append(f"{file}: {name}: its expectation changed since its verdict was recorded")
            elif not row["ok"]:
                problems.append(f"{file}: {name}: recorded wrong: {row['got'][:200]}")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_a_changed_fixture_is_stale(self):
        name = fixturelib.every()[0]
        before = fixturelib.fingerprint(name)
        lab = fixturelib.labs(name)[0]
        d = os.path.join(fixturelib.SUBMISSIONS, name, lab)
        entry = sorted(os.listdir(d))[0]
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(fixturelib, "SUBMISSIONS", tmp):
            os.makedirs(os.path.join(tmp, name, lab))
            src = os.path.join(d, entry)
            data = os.readlink(src) if os.path.islink(src) else None
            if data is not None:
                os.symlink(data, os.path.join(tmp, name, lab, entry))
                self.assertEqual(fixturelib.fingerprint(name), before)
                os.remove(os.path.join(tmp, name, lab, entry))
                os.symlink(data + "x", os.path.join(tmp, name, lab, entry))
            else:
                with open(src, "rb") as f, open(os.path.join(tmp, name, lab, entry), "wb") as g:
                    g.write(f.read())
                self.assertEqual(fixturelib.fingerprint(name), before)
                with open(os.path.join(tmp, name, lab, entry), "ab") as g:
                    g.write(b" ")
            self.assertNotEqual(fixturelib.fingerprint(name), before)


class EveryFixture(unittest.TestCase):
    def test_every_fixture_applies_to_its_reference(self):
        for name in fixturelib.every():
            for lab in fixturelib.labs(name):
                with self.subTest(fixture=name, lab=lab):
                    text = fixturelib.source(name, lab)
                    self.assertTrue(text.endswith(b"\n") or name == "empty_file")

    def test_every_fixture_carries_its_expected_verdict_about_one_of_its_labs(self):
        expected = fixturelib.every_expected()
        self.assertEqual(sorted(expected), fixturelib.every())
        for name, spec in expected.items():
            self.assertIn(spec["lab"], fixturelib.labs(name), name)
            self.assertTrue(set(spec["modes"]) <= {"gpu", "cpu", "cpu+nvcc"}, name)
            self.assertIsInstance(spec["expect"], dict, name)

    def test_a_fixture_without_its_expected_verdict_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "bare", "03_kogge_stone"))
            with mock.patch.object(fixturelib, "SUBMISSIONS", tmp):
                with self.assertRaisesRegex(fixturelib.PatchError, "fixture bare: its expected.json cannot be read"):
                    fixturelib.every_expected()
                with open(os.path.join(tmp, "bare", "expected.json"), "w") as f:
                    f.write('{"lab": "03_kogge_stone", "modes": ["cpu"]}')
                with self.assertRaisesRegex(fixturelib.PatchError, "has no bug, expect"):
                    fixturelib.expected("bare")

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
