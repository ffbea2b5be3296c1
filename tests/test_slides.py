"""Every slide of every deck fits its slide: each deck (slides/NN_*.md) is rendered by the Marp
CLI the course pins (slides/package.json; installed with npm ci into slides/node_modules on first
use, as make slides does) and loaded in headless Chromium, where a script of the test's measures
each slide's section: content taller than the 1280x720 slide (a table's last rows, a footnote) is
cut off when the deck is shown or printed, so it fails here, naming the deck, the slide and how
far it reaches. Without Chromium or npm the test skips, saying which
(LAB_TEST_CHROMIUM=required, as .ci/run sets, makes that a failure)."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
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


if __name__ == "__main__":
    unittest.main()
