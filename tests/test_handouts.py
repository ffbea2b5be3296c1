"""Tests of the handouts (labs/NN_name/README.md), their answers and the course overview
(unittest, standard library, no GPU).

A handout fails when it lacks a required section (in the reader's order: objective, what to write
and how to check it, then the algorithm), when it holds performance material that belongs in its
PERFORMANCE.md, when it runs past 250 lines without saying why, when What to write does not
point to its hints (make hint, HINTS.md), or lacks its solutions/NN_name/ANSWERS.md, when its
Grading table or speed sentence disagrees with grader/config.json (the lab's entry merged over
"defaults"), when a number in its work table disagrees with the row's own formula, when it
embeds a diagram that does not exist, when "What to write" leaves out a function that holds a
TODO(student) hole, when "Run, test, grade" leaves out one of the agreed commands, or when lab
06's barrier count disagrees with the __syncthreads() in its reference. A lab without its handout
or its scan.cu fails, naming it. The TODO(student) check reads the skeletons, so it skips a lab
whose labs/NN_name/scan.cu is no longer the recorded skeleton, and every lab under make test
TEST_SRC=labs (tests/pristine.py).
"""
import glob
import importlib.util
import json
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "grader", "config.json")

_spec = importlib.util.spec_from_file_location("work_tables", os.path.join(ROOT, "slides", "work_tables.py"))
tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tables)

_spec = importlib.util.spec_from_file_location("pristine", os.path.join(ROOT, "tests", "pristine.py"))
pristine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pristine)

# The reader's order: what to do and how to check it first, then the algorithm, then the rest;
# after Questions only "Going further" (the pointer to the deep material in PERFORMANCE.md).
SECTIONS = ["Objective", "What to write", "Run, test, grade", "Background", "Data flow",
            "Work and steps", "Common mistakes", "Grading", "Questions"]
AFTER_QUESTIONS = "Going further"
MAX_LINES = 250
LONG_REASON = "Why this handout is long"
# Performance material (measurements, sweeps, profiles) that belongs in PERFORMANCE.md.
PERF_MARKERS = re.compile(r"(?m)^(### Measured|Measured on an H100|\*\*Profiled)")
POINT_ROWS = [("correctness", "correctness"), ("memory safety and races", "sanitizer"),
              ("speed", "speed")]


def lab_dirs():
    return sorted(d for d in glob.glob(os.path.join(ROOT, "labs", "[0-9][0-9]_*"))
                  if os.path.isdir(d))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def merged(defaults, override):
    """defaults with override merged in, key by key (as the grader merges a lab's entry)."""
    out = dict(defaults)
    for k, v in override.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def lab_settings(lab_id):
    """The grading settings of one lab (grader/config.json's defaults merged with its entry)."""
    cfg = json.loads(read(CONFIG))
    return merged(cfg["defaults"], cfg.get("labs", {}).get(lab_id) or {})


def number(text):
    return float(text.strip().rstrip("×x").strip())


def check_grading(tc, text, settings, where):
    """The Grading table's points and the speed sentence equal the settings."""
    table = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and len(cells) == 2:
            table[cells[0].lower()] = cells[1]
    for label, key in POINT_ROWS:
        tc.assertIn(label, table, "%s: the Grading table has no row '%s'" % (where, label))
        tc.assertEqual(number(table[label]), float(settings["points"][key]),
                       "%s: %s is %s points in the handout but %s in grader/config.json"
                       % (where, label, table[label], settings["points"][key]))
    m = re.search(r"Speed points are full at or below ([0-9.]+)× the reference solution's time "
                  r"and fall linearly to 0 at ([0-9.]+)×\.", text)
    tc.assertIsNotNone(m, "%s: the speed sentence of the Grading section is missing or reworded"
                       % where)
    tc.assertEqual(float(m.group(1)), float(settings["speed"]["full_at"]),
                   "%s: full speed points at %s× in the handout, %s× in grader/config.json"
                   % (where, m.group(1), settings["speed"]["full_at"]))
    tc.assertEqual(float(m.group(2)), float(settings["speed"]["zero_at"]),
                   "%s: zero speed points at %s× in the handout, %s× in grader/config.json"
                   % (where, m.group(2), settings["speed"]["zero_at"]))


def hole_functions(source):
    """Names of the functions that contain a TODO(student) marker in a scan.cu: the last
    definition that starts at column 0 before each marker (qualifiers such as __global__,
    templates and __launch_bounds__(...) are skipped)."""
    names = []
    current = None
    for line in source.splitlines():
        head = re.sub(r"__launch_bounds__\s*\([^)]*\)|template\s*<[^>]*>", "", line)
        m = re.match(r"^[A-Za-z_][\w\s\*:<>,]*?\b([A-Za-z_]\w*)\s*\(", head)
        if m and not line.rstrip().endswith(";") and not line.startswith(("#", "//", "/*", " ")):
            current = m.group(1)
        if "TODO(student)" in line and current and current not in names:
            names.append(current)
    return names


class Handouts(unittest.TestCase):
    def each_handout(self):
        """(lab directory, lab id, handout text) for every lab; fails on a lab without one."""
        for d in lab_dirs():
            lab_id = os.path.basename(d)
            path = os.path.join(d, "README.md")
            self.assertTrue(os.path.exists(path), "labs/%s/README.md (the handout) is missing" % lab_id)
            yield d, lab_id, read(path)

    def test_sections_in_order(self):
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                heads = [h.strip() for h in re.findall(r"(?m)^## (.+)$", text)]
                at = []
                for want in SECTIONS:
                    idx = [i for i, h in enumerate(heads) if h.lower().startswith(want.lower())]
                    self.assertTrue(idx, "labs/%s/README.md has no '## %s' section" % (lab_id, want))
                    at.append(idx[0])
                self.assertEqual(at, sorted(at), "labs/%s/README.md: sections out of order (%s)"
                                 % (lab_id, ", ".join(heads)))
                for h in heads[at[-1] + 1:]:
                    self.assertTrue(h.startswith(AFTER_QUESTIONS), "labs/%s/README.md: '## %s' "
                                    "after Questions (only '## %s...' goes there)"
                                    % (lab_id, h, AFTER_QUESTIONS))

    def test_performance_material_is_apart(self):
        """Measurements live in PERFORMANCE.md, which the handout's Going further section links;
        a handout stays under MAX_LINES lines unless it says why it is longer."""
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                m = PERF_MARKERS.search(text)
                self.assertIsNone(m, "labs/%s/README.md: performance material (%r) belongs in "
                                  "PERFORMANCE.md" % (lab_id, m and m.group(0)))
                perf = os.path.join(d, "PERFORMANCE.md")
                if os.path.exists(perf):
                    going = tables.markdown_section(text, AFTER_QUESTIONS) or ""
                    self.assertIn("(PERFORMANCE.md)", going, "labs/%s/README.md: Going further "
                                  "does not link PERFORMANCE.md" % lab_id)
                    for img in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", read(perf)):
                        self.assertTrue("://" in img or os.path.exists(os.path.join(d, img)),
                                        "labs/%s/PERFORMANCE.md: image %s does not exist"
                                        % (lab_id, img))
                lines = len(text.splitlines())
                self.assertTrue(lines <= MAX_LINES or LONG_REASON in text,
                                "labs/%s/README.md has %d lines, over %d, and does not say why "
                                "('%s')" % (lab_id, lines, MAX_LINES, LONG_REASON))

    def test_hints_are_linked(self):
        """What to write points to the lab's hints: make hint and HINTS.md (tests/test_hints.py
        checks the hints themselves)."""
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                section = tables.markdown_section(text, "What to write") or ""
                self.assertIn("make hint LAB=%s" % lab_id[:2], section,
                              "labs/%s/README.md: What to write does not mention make hint" % lab_id)
                self.assertIn("(HINTS.md)", section,
                              "labs/%s/README.md: What to write does not link HINTS.md" % lab_id)
                self.assertNotIn("<details>", text, "labs/%s/README.md embeds hints: they live in "
                                 "HINTS.md only" % lab_id)

    def test_answers_exist(self):
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                questions = re.findall(r"(?m)^\d+\. ", tables.markdown_section(text, "Questions") or "")
                self.assertTrue(3 <= len(questions) <= 5, "labs/%s/README.md: %d questions, want "
                                "3 to 5 (numbered '1. ')" % (lab_id, len(questions)))
                path = os.path.join(ROOT, "solutions", lab_id, "ANSWERS.md")
                self.assertTrue(os.path.exists(path), "solutions/%s/ANSWERS.md is missing" % lab_id)
                answers = re.findall(r"(?m)^\d+\. ", read(path))
                self.assertGreaterEqual(len(answers), len(questions),
                                        "solutions/%s/ANSWERS.md answers %d of %d questions"
                                        % (lab_id, len(answers), len(questions)))

    def test_grading_agrees_with_config(self):
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                section = tables.markdown_section(text, "Grading")
                self.assertIsNotNone(section)
                check_grading(self, section, lab_settings(lab_id), "labs/%s/README.md" % lab_id)

    def test_diagrams_embedded_and_present(self):
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                flow = tables.markdown_section(text, "Data flow") or ""
                self.assertRegex(flow, r"!\[[^\]]*\]\(\.\./\.\./slides/diagrams/[\w]+\.svg\)",
                                 "labs/%s/README.md: Data flow embeds no generated diagram"
                                 % lab_id)
                for img in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
                    if "://" not in img:
                        self.assertTrue(os.path.exists(os.path.join(d, img)),
                                        "labs/%s/README.md: image %s does not exist" % (lab_id, img))

    def test_work_table_numbers_follow_their_formulas(self):
        for d, lab_id, text in self.each_handout():
            with self.subTest(lab=lab_id):
                work = tables.markdown_section(text, "Work and steps")
                self.assertTrue(work and "|" in work,
                                "labs/%s/README.md: Work and steps has no table" % lab_id)
                for row in tables.work_rows(work, every=True):
                    if row["f"] is None:
                        self.fail("labs/%s/README.md, row '%s': cannot read the formula %r: %s"
                                  % (lab_id, row["name"], row["formula"], row["error"]))
                    for env, cell in row["cells"]:
                        plain = re.fullmatch(r"[0-9][0-9,\s\u2009\u202f]*|[0-9]+\^[0-9]+",
                                             cell.strip().strip("`*"))
                        got = tables.parse_number(cell) if plain else None
                        if got is None:
                            continue  # a remark or a pair ("8 / 16") rather than one number
                        at = ", ".join("%s = %d" % kv for kv in sorted(env.items()))
                        self.assertEqual(got, row["f"](env),
                                         "labs/%s/README.md: %s at %s is %s in the table but %s "
                                         "by its formula %s" % (lab_id, row["name"], at, cell,
                                                                row["f"](env), row["formula"]))

    def test_what_to_write_names_every_hole(self):
        for d, lab_id, text in self.each_handout():
            src = os.path.join(d, "scan.cu")
            with self.subTest(lab=lab_id):
                self.assertTrue(os.path.exists(src), "labs/%s/scan.cu is missing" % lab_id)
                why = pristine.skip_reason(lab_id)
                if why:
                    self.skipTest(why)
                holes = hole_functions(read(src))
                self.assertTrue(holes, "labs/%s/scan.cu has no TODO(student) marker" % lab_id)
                section = tables.markdown_section(text, "What to write") or ""
                for name in holes:
                    self.assertRegex(section, r"\b%s\b" % re.escape(name),
                                     "labs/%s/README.md: What to write does not mention %s, "
                                     "which holds a TODO(student)" % (lab_id, name))

    def test_run_section_has_the_commands(self):
        for d, lab_id, text in self.each_handout():
            nn = lab_id[:2]
            with self.subTest(lab=lab_id):
                section = tables.markdown_section(text, "Run, test, grade") or ""
                for cmd in ("make run LAB=%s" % nn, "make run LAB=%s SRC=solutions" % nn,
                            "make test", "make grade", "make run LAB=%s CPU=1" % nn):
                    self.assertIn(cmd, section, "labs/%s/README.md: Run, test, grade lacks `%s`"
                                  % (lab_id, cmd))


def code_only(source):
    """C/CUDA source without its comments (and without string literals' contents)."""
    source = re.sub(r'"(\\.|[^"\\\n])*"', '""', source)
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)


class BarrierCounts(unittest.TestCase):
    """Barrier counts that a handout states for a reference kernel whose barriers run once each
    (no barrier inside a loop) equal the barriers in the reference's code."""

    def test_lab06_barriers(self):
        d = os.path.join(ROOT, "labs", "06_coarsened")
        src = os.path.join(ROOT, "solutions", "06_coarsened", "scan.cu")
        self.assertTrue(os.path.exists(os.path.join(d, "README.md")), "labs/06_coarsened/README.md is missing")
        self.assertTrue(os.path.exists(src), "solutions/06_coarsened/scan.cu is missing")
        work = tables.markdown_section(read(os.path.join(d, "README.md")), "Work and steps") or ""
        m = re.search(r"(?m)^\|\s*barriers[^|]*\|\s*(\d+)\b", work)
        self.assertIsNotNone(m, "labs/06_coarsened/README.md: Work and steps has no barriers row")
        code = code_only(read(src))
        self.assertNotRegex(code, r"\bfor\s*\([^)]*\)\s*\{[^{}]*__syncthreads",
                            "a barrier inside a loop: count its iterations, not its call sites")
        self.assertEqual(int(m.group(1)), len(re.findall(r"\b__syncthreads\s*\(\s*\)", code)),
                         "labs/06_coarsened/README.md states %s barriers; "
                         "solutions/06_coarsened/scan.cu has a different number" % m.group(1))

    def test_code_only(self):
        self.assertEqual(code_only('a(); /* __syncthreads() */ b(); // __syncthreads()\n'
                                   'c("__syncthreads()");'), 'a();  b(); \nc("");')


class Overview(unittest.TestCase):
    PATH = os.path.join(ROOT, "labs", "README.md")

    def test_overview_lists_every_lab(self):
        self.assertTrue(os.path.exists(self.PATH), "labs/README.md (the course overview) is missing")
        text = read(self.PATH)
        for d in lab_dirs():
            self.assertIn(os.path.basename(d), text, "labs/README.md does not list %s"
                          % os.path.basename(d))
        for want in ("Prerequisites", "Grading", "CPU mode"):
            self.assertIn(want, text)

    def test_overview_grading_agrees_with_config(self):
        section = tables.markdown_section(read(self.PATH), "Grading")
        self.assertIsNotNone(section, "labs/README.md has no '## Grading' section")
        check_grading(self, section, lab_settings("defaults-only"), "labs/README.md")


def long_sentences(text, least=70):
    """The sentences of at least `least` characters of a Markdown text's prose (code blocks,
    tables, headings and images left out), whitespace squashed."""
    text = re.sub(r"(?ms)^```.*?^```", "", text)
    out = set()
    for para in re.split(r"\n\s*\n", text):
        if para.lstrip().startswith(("|", "#", "!")):
            continue
        for s in re.split(r"(?<=[.:;])\s+", " ".join(para.split())):
            if len(s) >= least:
                out.add(s)
    return out


class NoCopies(unittest.TestCase):
    """No sentence is copied between the labs' Markdown files (handouts, hints, performance
    notes): shared text is written once and linked. The Grading section's speed sentence is the
    exception: check_grading requires it in every handout."""

    def test_no_sentence_in_two_labs(self):
        seen = {}
        for path in sorted(glob.glob(os.path.join(ROOT, "labs", "[0-9][0-9]_*", "*.md"))):
            lab = os.path.basename(os.path.dirname(path))
            for s in long_sentences(read(path)):
                if s.startswith("Speed points are full at or below"):
                    continue
                other = seen.setdefault(s, lab)
                self.assertEqual(other, lab, "copied between labs/%s and labs/%s (write it once "
                                 "and link it): %s" % (other, lab, s))

    def test_long_sentences(self):
        text = "A short one. " + "x" * 80 + ".\n\n| " + "y" * 80 + " |\n\n```c\n" + "z" * 80 + "\n```\n"
        self.assertEqual(long_sentences(text), {"x" * 80 + "."})


class CheckerCatchesDisagreement(unittest.TestCase):
    """The checks above are not vacuous: they fail on a handout that disagrees."""

    GOOD = ("| part | points |\n|---|---|\n| correctness | 60 |\n| memory safety and races | 10 |\n"
            "| speed | 30 |\n\nSpeed points are full at or below 1.25× the reference solution's "
            "time and fall linearly to 0 at 3×.\n")
    SETTINGS = {"points": {"correctness": 60, "sanitizer": 10, "speed": 30},
                "speed": {"full_at": 1.25, "zero_at": 3.0}}

    def test_grading_checker(self):
        check_grading(self, self.GOOD, self.SETTINGS, "good")
        for bad in (self.GOOD.replace("| 60 |", "| 50 |"), self.GOOD.replace("1.25×", "1.5×"),
                    self.GOOD.replace("at 3×", "at 4×"), self.GOOD.replace("| speed | 30 |\n", "")):
            with self.assertRaises(AssertionError):
                check_grading(self, bad, self.SETTINGS, "bad")

    def test_every_row_with_a_formula_is_checked(self):
        table = ("| quantity | formula | T = 8 | T = 1024 |\n|---|---|---|---|\n"
                 "| global bytes | 8T + 4 | 68 | 4100 |\n| shared words | T or 2T | 8 / 16 | x |\n")
        rows = tables.work_rows(table, every=True)
        self.assertEqual([r["name"] for r in rows], ["global bytes"])
        self.assertNotEqual(rows[0]["f"](rows[0]["cells"][1][0]), 4100)  # the wrong cell is seen
        self.assertEqual(tables.work_rows(table), [])

    def test_work_rows(self):
        table = ("| quantity | formula | n = 8 | n = 2^16 |\n|---|---|---|---|\n"
                 "| additions | n·log2 n − (n − 1) | 17 | 983041 |\n| steps | log2 n | 3 | 16 |\n")
        rows = {r["name"]: r for r in tables.work_rows(table)}
        self.assertEqual(rows["additions"]["cells"], [({"n": 8}, "17"), ({"n": 65536}, "983041")])
        self.assertEqual(rows["additions"]["f"]({"n": 65536}), 983041)
        self.assertEqual(rows["steps"]["f"](8), 3)
        two = ("| quantity | formula | B = 4, C = 4 |\n|---|---|---|\n"
               "| additions, phase 2 | `B log2 B − B + 1` | 5 |\n| steps | (C − 1) + log2 B + 1 | 6 |\n")
        rows = tables.work_rows(two)
        self.assertEqual([r["f"](env) for r in rows for env, _ in r["cells"]], [5, 6])

    def test_hole_functions(self):
        src = ("template <int C>\n__global__ void __launch_bounds__(256) k_kernel(const int *in)\n{\n"
               "    // TODO(student): x\n}\n"
               "static lab_result launch(const int *d_in, size_t n)\n{\n    foo(n);\n"
               "    // TODO(student): y\n}\n")
        self.assertEqual(hole_functions(src), ["k_kernel", "launch"])


if __name__ == "__main__":
    unittest.main()
