"""The course's lists agree with its labs (unittest, standard library, no GPU).

The labs are the lab descriptors, common/course/NN_name.c (`.id = "NN_name"`), which must match
the folders labs/NN_name/ and solutions/NN_name/ one for one and be numbered 01, 02, ... without
a gap. Against them: the lab count written in words (README.md, labs/README.md,
slides/00_intro.md, grader/README.md), the decks (slides/NN_name.md, one per lab, and the list
and the table of slides/README.md and slides/00_intro.md), the lab tables of README.md (the labs
in order; the per-lab timing table) and of labs/README.md (the order and time of each lab). A
lab added, removed or renamed fails here until every list says so.
"""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"]


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def descriptor_ids():
    """{file stem: the .id it declares} of common/course/*.c (the stubs/ folder excluded)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "common", "course", "*.c"))):
        m = re.search(r'\.id\s*=\s*"([^"]+)"', read(os.path.relpath(path, ROOT)))
        out[os.path.splitext(os.path.basename(path))[0]] = m.group(1) if m else None
    return out


def folders(tree):
    return sorted(os.path.basename(d) for d in glob.glob(os.path.join(ROOT, tree, "[0-9][0-9]_*"))
                  if os.path.isdir(d))


def table_rows(text, first_cell):
    """The cells of every Markdown table row whose first cell matches the regex first_cell."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if re.fullmatch(first_cell, cells[0]):
                rows.append(cells)
    return rows


def labs():
    return sorted(descriptor_ids())


class Labs(unittest.TestCase):
    def test_descriptors_folders_and_solutions_agree(self):
        ids = descriptor_ids()
        self.assertTrue(ids, "no lab descriptors in common/course/")
        for stem, lab_id in ids.items():
            self.assertEqual(lab_id, stem, "common/course/%s.c declares .id = %r" % (stem, lab_id))
        self.assertEqual(folders("labs"), sorted(ids), "labs/ folders and common/course/*.c differ")
        self.assertEqual(folders("solutions"), sorted(ids),
                         "solutions/ folders and common/course/*.c differ")
        self.assertEqual([int(x[:2]) for x in labs()], list(range(1, len(ids) + 1)),
                         "the labs are not numbered 01, 02, ... without a gap")

    def test_count_in_words(self):
        n = len(labs())
        word = WORDS[n] if n < len(WORDS) else str(n)
        for rel, pattern in (("README.md", r"in (\w+) graded labs"),
                             ("labs/README.md", r"(?m)^(\w+) labs, one problem"),
                             ("slides/00_intro.md", r"worth (\w+) labs"),
                             ("slides/00_intro.md", r"(?m)^## The (\w+) labs"),
                             ("grader/README.md", r"submission of all (\w+) labs"),
                             ("labs/10_applications/README.md", r"(?m)^(\w+) labs built a scan")):
            with self.subTest(file=rel, pattern=pattern):
                m = re.search(pattern, read(rel))
                self.assertIsNotNone(m, "%s no longer says /%s/: update this test" % (rel, pattern))
                want = WORDS[n - 1] if "built a scan" in pattern else word
                self.assertEqual(m.group(1).lower(), want, "%s says %r labs; there are %d"
                                 % (rel, m.group(0), n))


class Decks(unittest.TestCase):
    def test_one_deck_per_lab(self):
        decks = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "slides", "[0-9][0-9]_*.md")))
        self.assertEqual([d for d in decks if d != "00_intro"], labs(),
                         "slides/NN_name.md should be exactly one deck per lab, named as the lab")

    def test_deck_lists(self):
        ids = labs()
        listed = re.search(r"`00_intro\.md`, `(\w+)\.md` … `(\w+)\.md`", read("slides/README.md"))
        self.assertIsNotNone(listed, "slides/README.md no longer lists the decks as "
                             "`00_intro.md`, `first.md` … `last.md`")
        self.assertEqual(listed.groups(), (ids[0], ids[-1]), "slides/README.md's deck list")
        rows = table_rows(read("slides/00_intro.md"), r"\d\d .+")
        self.assertEqual([r[0][:2] for r in rows], [i[:2] for i in ids],
                         "slides/00_intro.md's table of the labs")


class Tables(unittest.TestCase):
    def test_readme_lab_table(self):
        rows = table_rows(read("README.md"), r"`\d\d_\w+`")
        self.assertEqual([r[0].strip("`") for r in rows], labs(),
                         "README.md's 'The labs, in order' table")

    def test_readme_timing_table(self):
        text = read("README.md")
        head = table_rows(text, r"lab")
        self.assertTrue(head, "README.md has no per-lab timing table (| lab | 01 | 02 | ...)")
        numbers = [c for c in head[0][1:]]
        self.assertEqual(numbers, [i[:2] for i in labs()], "README.md's per-lab timing table "
                         "should have one column per lab")
        start = text.index("| " + " | ".join(head[0]) + " |")
        block = text[start:].split("\n\n")[0].splitlines()[2:]
        self.assertTrue(block, "README.md's timing table has no rows")
        for line in block:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            self.assertEqual(len(cells), len(head[0]), "README.md timing row %r: %d cells, want %d"
                             % (cells[0], len(cells), len(head[0])))
            for c in cells[1:]:
                self.assertRegex(c, r"^\d+(\.\d+)?$", "README.md timing row %r: %r is not a time"
                                 % (cells[0], c))

    def test_overview_order_table(self):
        rows = table_rows(read("labs/README.md"), r"`\d\d_\w+`")
        self.assertEqual([r[0].strip("`") for r in rows], labs(),
                         "labs/README.md's table of the order and time of each lab")
        for r in rows:
            self.assertRegex(r[-1], r"\d", "labs/README.md: %s has no time" % r[0])


class CheckerIsNotVacuous(unittest.TestCase):
    def test_table_rows(self):
        text = "| lab | 01 | 02 |\n|---|---|---|\n| a | 1 | 2 |\n| `03_x` | y |\n"
        self.assertEqual(table_rows(text, r"lab"), [["lab", "01", "02"]])
        self.assertEqual(table_rows(text, r"`\d\d_\w+`"), [["`03_x`", "y"]])


if __name__ == "__main__":
    unittest.main()
