"""Every slide of every deck fits its slide, and every slide has a presenter note.

Fit: each deck (slides/NN_*.md) is rendered by the Marp CLI the course pins (slides/package.json;
installed with npm ci into slides/node_modules on first use, as make slides does) and loaded in
headless Chromium, where a script of the test's measures each slide's section: content taller than
the 1280x720 slide (a table's last rows, a footnote) is cut off when the deck is shown or printed,
so it fails here, naming the deck, the slide and how far it reaches. Without Chromium or npm the
test skips, saying which (LAB_TEST_CHROMIUM=required, as .ci/run sets, makes that a failure).

Notes: Marp shows an HTML comment on a slide as the presenter note of that slide, unless the
comment sets a Marp directive. SlideNotes reads each deck as plain text (no Marp, no browser),
splits it into slides where Marp does, and fails naming every slide without a note; when the
Marp CLI is installed in slides/node_modules it also checks that Marp itself finds the same notes
on the same slides."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLIDES = os.path.join(ROOT, "slides")
MARP = os.path.join(SLIDES, "node_modules", ".bin", "marp")
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)

# Appended to a deck's HTML: for each slide, how far its content reaches past the slide's bottom
# (scrollHeight over clientHeight of the section, which Marp sizes to the slide), in CSS pixels.
PROBE = """<script>
window.addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('section[id]').forEach(s => {
    const over = s.scrollHeight - s.clientHeight;
    const last = [...s.children].filter(e => e.getBoundingClientRect().height).pop();
    out.push([s.id, over, last ? last.tagName.toLowerCase() + ': ' + last.textContent.trim().slice(0, 60) : '']);
  });
  const pre = document.createElement('pre');
  pre.id = 'slide-overflow';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

# Pixels a slide's content may reach past its bottom (rounding of the layout).
SLACK = 2


def decks():
    return sorted(glob.glob(os.path.join(SLIDES, "[0-9][0-9]_*.md")) +
                  glob.glob(os.path.join(SLIDES, "[0-9][0-9][a-z]_*.md")))


def ready():
    """None when the Marp CLI and Chromium are there (the CLI installed if npm is), else why not."""
    if not CHROMIUM:
        return "no Chromium (Debian: apt-get install chromium): the slides are not measured"
    if not os.access(MARP, os.X_OK):
        if not shutil.which("npm"):
            return "no npm (Debian: apt-get install npm): the Marp CLI that renders the slides is missing"
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SLIDES,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or not os.access(MARP, os.X_OK):
            return "npm ci in slides/ failed: " + (r.stderr.strip().splitlines() or ["no output"])[-1]
    return None


def overflow(deck, work):
    """[(slide, pixels past the bottom, its last element)] of deck, every slide measured."""
    html = os.path.join(work, os.path.basename(deck)[:-3] + ".html")
    subprocess.run([MARP, "--no-stdin", "--config", os.path.join(SLIDES, "marp.config.json"), "--html",
                    "--template", "bare", "--allow-local-files", deck, "-o", html],
                   check=True, capture_output=True, timeout=120)
    with open(html, encoding="utf-8") as f:
        page = f.read().replace("</body>", PROBE + "</body>")
    with open(html, "w", encoding="utf-8") as f:
        f.write(page)
    profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
    r = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                        f"--user-data-dir={profile}", "--window-size=1280,720", "--virtual-time-budget=3000",
                        "--dump-dom", "file://" + html], capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="slide-overflow">([^<]*)</pre>', r.stdout)
    if not m:
        raise AssertionError(f"{os.path.basename(deck)}: Chromium gave no measurement ({r.stderr.strip()[-300:]})")
    return json.loads(m.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


class SlidesFit(unittest.TestCase):
    FULL_SUITE = "every deck rendered by the Marp CLI (installed by npm ci) and measured in Chromium"

    @classmethod
    def setUpClass(cls):
        why = ready()
        if why:
            if os.environ.get("LAB_TEST_CHROMIUM") == "required":  # .ci/run
                raise RuntimeError(f"LAB_TEST_CHROMIUM=required, but {why}")
            raise unittest.SkipTest(why)
        cls.work = tempfile.mkdtemp(prefix="slides-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_every_slide_fits(self):
        self.assertTrue(decks())
        cut = []
        for deck in decks():
            rows = overflow(deck, self.work)
            self.assertTrue(rows, f"{os.path.basename(deck)}: no slides measured")
            cut += [f"{os.path.basename(deck)} slide {slide}: {px} px past the bottom (last: {last})"
                    for slide, px, last in rows if px > SLACK]
        self.assertEqual(cut, [], "content cut off at the bottom of a slide: shorten it or split the slide")

    def test_the_probe_sees_an_overflow(self):
        """A deck whose one slide is too tall is measured as such (the check can fail)."""
        deck = os.path.join(self.work, "99_tall.md")
        with open(deck, "w", encoding="utf-8") as f:
            f.write("---\nmarp: true\n---\n\n# Tall\n\n" + "".join(f"- line {i}\n" for i in range(40)))
        rows = overflow(deck, self.work)
        self.assertEqual(len(rows), 1)
        self.assertGreater(rows[0][1], 100, rows)


# Presenter notes. Marpit reads every HTML comment of a slide as YAML: one that sets a directive
# it knows (the global and local directives of Marpit, with or without the "_" of a spot
# directive, marp-core's size and math, the Marp CLI's transition) configures the slide, every
# other comment is collected as that slide's note, except the magic comments of formatters and
# linters. The rule here is a little stricter than Marp's: a comment with any line that starts
# like a directive ("class: ...") is taken for a directive, so a note never starts that way.
DIRECTIVES = ("theme", "style", "headingDivider", "lang", "size", "math", "paginate", "header",
              "footer", "class", "color", "backgroundColor", "backgroundImage",
              "backgroundPosition", "backgroundRepeat", "backgroundSize", "transition")
DIRECTIVE_LINE = re.compile(r"^\s*[\"']?_?(?:%s)[\"']?\s*:" % "|".join(DIRECTIVES), re.M)
MAGIC_COMMENT = re.compile(r"^(?:prettier-ignore(?:-(?:start|end))?"
                           r"|markdownlint-(?:(?:disable|enable).*|capture|restore)"
                           r"|lint (?:disable|enable|ignore).*)$")
# A thematic break (---, ***, ___, spaces allowed): Marp starts a new slide at each one.
BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Words a note needs at least: a placeholder such as <!-- TODO --> is not a note.
NOTE_WORDS = 8


def split_slides(text):
    """[(line where the slide starts, [the text of each HTML comment on it])] of a Marp deck: the
    front matter skipped, a new slide at every thematic break outside fenced code and outside
    comments. A "---" right under a line of paragraph text underlines a heading (setext) and
    starts no slide, in Marp as in Markdown."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].rstrip() == "---":
        close = next((k for k in range(1, len(lines)) if lines[k].rstrip() in ("---", "...")), None)
        start = 0 if close is None else close + 1
    slides = [(start + 1, [])]
    fence = comment = None
    prev = ""  # the previous line, "" after a blank line or a closed block
    for k in range(start, len(lines)):
        line = lines[k]
        if comment is not None:
            end = line.find("-->")
            if end < 0:
                comment.append(line)
                continue
            comment.append(line[:end])
            slides[-1][1].append("\n".join(comment))
            comment, line, prev = None, line[end + 3:], ""
        if fence:
            if re.match(r"^ {0,3}%s{%d,}\s*$" % (re.escape(fence[0]), len(fence)), line):
                fence, prev = None, ""
            continue
        opening = FENCE.match(line)
        if opening:
            fence = opening.group(1)
            continue
        if BREAK.match(line) and not (line.lstrip().startswith("-") and is_paragraph(prev)):
            slides.append((k + 2, []))
            prev = ""
            continue
        pos = 0
        while comment is None:
            begin = line.find("<!--", pos)
            if begin < 0:
                break
            end = line.find("-->", begin + 4)
            if end < 0:
                comment = [line[begin + 4:]]
            else:
                slides[-1][1].append(line[begin + 4:end])
                pos = end + 3
        prev = line if comment is None else ""
    return slides


def is_paragraph(line):
    """Whether a line is (the last line of) paragraph text, which a "---" under it would turn into
    a heading, rather than blank or a line of a list, table, heading or quote."""
    s = line.strip()
    return bool(s) and not re.match(r"^(?:[-*+]\s|\d+[.)]\s|#|\||>)", s)


def is_note(comment):
    """Whether an HTML comment's text is a presenter note: not a directive, not a magic comment,
    and long enough to say something."""
    body = comment.strip().strip("-").strip()
    return (not DIRECTIVE_LINE.search(body) and not MAGIC_COMMENT.match(body)
            and len(body.split()) >= NOTE_WORDS)


def slides_without_notes(text):
    """The slides (numbered from 1, with the line each starts on) of a deck that have no note."""
    return [f"slide {number} (line {line})"
            for number, (line, comments) in enumerate(split_slides(text), 1)
            if not any(is_note(c) for c in comments)]


# Run by node from slides/: Marp's own reading of each deck named on the command line, as JSON:
# {deck: [[the text of each note], ...one list per slide]}.
MARP_NOTES = """
const {Marp} = require('@marp-team/marp-core');
const fs = require('fs');
const out = {};
for (const deck of process.argv.slice(1))
  out[deck] = new Marp({html: true}).render(fs.readFileSync(deck, 'utf8')).comments;
console.log(JSON.stringify(out));
"""


class SlideNotes(unittest.TestCase):
    def test_every_slide_has_a_presenter_note(self):
        """Every slide of every deck carries a note for the presenter (an HTML comment)."""
        self.assertTrue(decks())
        missing = [f"{os.path.basename(deck)} {where}"
                   for deck in decks()
                   for where in slides_without_notes(open(deck, encoding="utf-8").read())]
        if missing:
            self.fail("slides without a presenter note (add an HTML comment that says what to say; "
                      "slides/README.md, Presenter notes):\n  " + "\n  ".join(missing))

    def test_a_slide_without_a_note_is_found(self):
        """A planted deck: the check finds the one slide with no note, and is not fooled by a
        directive, a too-short comment, a --- inside a code block or a comment, or a heading's
        --- underline (the check can fail, and splits where Marp does)."""
        deck = textwrap.dedent("""\
            ---
            marp: true
            ---

            # One

            <!-- Say what a scan is before showing any code on this slide. -->

            ---

            <!-- _class: lead -->

            # Two: only a directive and a short comment

            <!-- TODO -->

            ```
            ---
            <!-- a comment inside code is code, not a note at all -->
            ```

            ---

            # Three
            Setext heading
            ---

            <!--
            A note over several lines, with a rule inside it:
            ---
            which does not start a slide.
            -->
            """)
        self.assertEqual(len(split_slides(deck)), 3, split_slides(deck))
        self.assertEqual(slides_without_notes(deck), ["slide 2 (line 10)"])

    def test_marp_finds_the_same_notes(self):
        """Marp's own parser (marp-core, from the pinned CLI) finds, slide by slide, the notes this
        test finds: the same slides, the same notes."""
        core = os.path.join(SLIDES, "node_modules", "@marp-team", "marp-core")
        if not shutil.which("node") or not os.path.isdir(core):
            self.skipTest("no node or no Marp in slides/node_modules (make slides installs it): "
                          "the notes are checked by the plain-text reading alone")
        r = subprocess.run(["node", "-e", MARP_NOTES] + decks(), cwd=SLIDES,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-500:])
        marp = json.loads(r.stdout)
        differ = []
        for deck in decks():
            ours = [[" ".join(c.strip().strip("-").split()) for c in comments if is_note(c)]
                    for _, comments in split_slides(open(deck, encoding="utf-8").read())]
            theirs = [[" ".join(c.split()) for c in comments if is_note(c)] for comments in marp[deck]]
            if ours != theirs:
                first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                             min(len(ours), len(theirs)))
                differ.append(f"{os.path.basename(deck)}: {len(ours)} slides here, {len(theirs)} "
                              f"in Marp, the notes differ from slide {first + 1} on")
        self.assertEqual(differ, [], "the plain-text reading of the decks disagrees with Marp's")


if __name__ == "__main__":
    unittest.main()
