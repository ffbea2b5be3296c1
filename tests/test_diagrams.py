"""Tests of slides/make_diagrams.py and of the slide decks (unittest, no GPU, standard library).

- Every network the script draws computes the scan it claims, checked by running its operations
  on random integers here (independently of the script's own symbolic check).
- Its addition and step counts equal the course's work formulas for n = 2 .. 256, and equal the
  formulas each lab's handout states in its "Work and steps" table (rows named "additions" and
  "steps"; see the comment above WORK_ROWS in slides/work_tables.py), and lab 06's table of its six
  variants equals the network of each at the GPU's warp of 32.
- The committed SVGs are exactly what the script writes today, and are well-formed XML.
- Every lab has a Marp deck whose images exist.
"""
import glob
import contextlib
import importlib.util
import io
import os
import random
import re
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "slides", "make_diagrams.py")


def load(name):
    """slides/NAME.py as a module (make_diagrams.py imports scan_networks from its folder)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "slides", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


md = load("make_diagrams")  # the drawing, the diagram list, main
algo = load("scan_networks")  # the algorithms, run on symbolic values
tables = load("work_tables")  # the handouts' work tables


def log2(n):
    return n.bit_length() - 1


# The course's work formulas (the handouts state the same ones; test_handout_formulas checks
# that they do): name -> (builder, additions(n), steps(n), scan type).
FORMULAS = {
    "serial": (algo.serial, lambda n: n - 1, lambda n: n - 1, "inclusive"),
    "naive": (algo.naive, lambda n: n * (n - 1) // 2, lambda n: n - 1, "inclusive"),
    "kogge_stone": (algo.kogge_stone, lambda n: n * log2(n) - (n - 1), log2, "inclusive"),
    "brent_kung": (algo.brent_kung, lambda n: 2 * (n - 1) - log2(n), lambda n: 2 * log2(n) - 1,
                   "inclusive"),
    "blelloch": (algo.blelloch, lambda n: 2 * (n - 1), lambda n: 2 * log2(n), "exclusive"),
}

# Which handout states which network's formulas.
HANDOUT_OF = {"serial": "01", "naive": "02", "kogge_stone": "03", "brent_kung": "04",
              "blelloch": "05", "coarsened": "06"}

# Lab 06 states its counts for B threads of C elements each (a tile of B·C) in warps of W threads
# (32 on the GPU; the small networks use algo.small_warp(B), so that they have several warps).
FORMULAS["coarsened"] = (
    lambda n: algo.coarsened(n, threads=n // 4), None, None, "inclusive")


def handout_env(name, n):
    """The values of a handout's size variables for the network of n elements."""
    if name == "coarsened":
        return {"B": n // 4, "C": 4, "W": algo.small_warp(n // 4)}
    return {"n": n, "T": n}


def coarsened_counts(b, c, w):
    """Additions and steps of lab 06's reference for B = b threads of C = c elements, warps of w
    (counted here from the code's structure, independently of the script): phase 1 b(c - 1);
    phase 2 a Kogge-Stone of w lanes in each of the b/w warps, one over the b/w warp totals, and
    before = s_warp[warp - 1] + inc - x (2 per thread, 1 in warp 0); phase 3 b·c."""
    warps = b // w
    adds = (b * (c - 1) + warps * (w * log2(w) - (w - 1))
            + (warps * log2(warps) - (warps - 1)) + (2 * b - w) + b * c)
    return adds, (c - 1) + log2(w) + log2(warps) + 1 + 1


def run_numeric(net, values):
    """Runs the network's operations on integers (each step reads the values from before it)."""
    lanes = list(values) + [0] * (net.lanes - net.n)
    if net.init:  # the naive scan's threads start from x0
        lanes = [values[v[0]] if v is not None else 0 for v in net.init]
    for step in net.steps:
        new = list(lanes)
        for op in step.ops:
            if op.kind == "add":
                new[op.dst] = lanes[op.src[0]] + lanes[op.src[1]]
            elif op.kind == "copy":
                new[op.dst] = lanes[op.src[0]]
            elif op.kind == "zero":
                new[op.dst] = 0
            elif op.kind == "load_add":
                new[op.dst] = lanes[op.dst] + values[op.k]
            elif op.kind == "addsub":
                new[op.dst] = sum(lanes[s] for s in op.src[:-1]) - lanes[op.src[-1]]
        lanes = new
    return lanes[:net.n]


def scan(values, kind):
    out, total = [], 0
    for v in values:
        if kind == "exclusive":
            out.append(total)
        total += v
        if kind == "inclusive":
            out.append(total)
    return out


def lab_dir(nn):
    found = glob.glob(os.path.join(ROOT, "labs", nn + "_*"))
    return found[0] if found else None


class NetworksCompute(unittest.TestCase):
    def test_every_network_scans_random_integers(self):
        rng = random.Random(7)
        nets = list(md.networks().values())
        nets += [algo.coarsened(64, threads=8), algo.coarsened(256, threads=32, warp=8),
                 algo.coarsened(2048, threads=64, warp=32), algo.hierarchical(64, tile=8)]
        for name, (build, _, _, _) in FORMULAS.items():
            nets += [build(n) for n in ((4, 32, 64) if name == "coarsened" else (2, 4, 32, 64))]
        for net in nets:
            values = [rng.randrange(-1000, 1000) for _ in range(net.n)]
            with self.subTest(net=net.name, n=net.n):
                self.assertEqual(run_numeric(net, values), scan(values, net.scan))

    def test_a_broken_network_is_caught(self):
        """The symbolic check is not a rubber stamp: drop one step of Brent-Kung and it fails."""
        good = algo.brent_kung(16)
        with self.assertRaises(algo.NotAScan):
            algo.Network("broken", "", 16, good.steps[:-1])

    def test_hazards_are_exactly_reads_of_lanes_written_in_the_same_step(self):
        for n in (8, 16, 64):
            net = algo.kogge_stone(n, hazard_demo=True)
            for step in net.steps:
                written = {op.dst for op in step.ops}
                for op in step.ops:
                    racy = any(s != op.dst and s in written for s in op.src)
                    self.assertEqual(op.hazard, racy, (n, step.label, op.dst))
            d_values = [1 << k for k in range(log2(n))]
            self.assertEqual(net.hazards, sum(max(0, n - 2 * d) for d in d_values))

    def test_radix_pass_is_the_stable_partition(self):
        hist, scan, start, dest = algo.radix_pass()
        keys = (9, 6, 3, 8, 1, 13, 7, 4, 11, 2, 5, 12, 1, 10, 15, 0)
        self.assertEqual(sum(hist), len(keys))
        self.assertEqual(sorted(dest), list(range(len(keys))))  # a permutation
        self.assertEqual(start[0], 0)
        out = [None] * len(keys)
        for i, j in enumerate(dest):
            out[j] = keys[i]
        self.assertEqual(out, sorted(keys, key=lambda k: k & 3))

    def test_lookback_publishes_every_inclusive_prefix(self):
        ticks, events = algo.lookback()
        self.assertEqual(ticks[-1], ["P"] * len(ticks[-1]))
        for t in range(1, len(ticks[0])):
            column = [row[t] for row in ticks]
            # X, then A, then P: a tile never goes back
            order = "".join(column)
            self.assertRegex(order, r"^X*A+P+$", "tile %d: %s" % (t, order))
        waits = sum(1 for ev in events for e in ev if e[2] == "X")
        self.assertGreater(waits, 0, "the schedule should show a tile waiting on an X")


class CountsMatchFormulas(unittest.TestCase):
    def test_counts_equal_the_course_formulas(self):
        for name, (build, adds, steps, kind) in FORMULAS.items():
            if adds is None:
                continue
            for k in range(1, 9):
                n = 1 << k
                net = build(n)
                with self.subTest(algorithm=name, n=n):
                    self.assertEqual(net.scan, kind)
                    self.assertEqual(net.additions, adds(n))
                    self.assertEqual(net.depth, steps(n))

    def test_coarsened_and_hierarchical_counts(self):
        for n, t, w in ((16, 4, 2), (64, 8, 4), (256, 16, 4), (256, 64, 8), (2048, 32, 32),
                        (2048, 256, 32), (2048, 1024, 32)):
            c = n // t
            net = algo.coarsened(n, threads=t, warp=w)
            with self.subTest(n=n, threads=t, warp=w):
                self.assertEqual((net.additions, net.depth), coarsened_counts(t, c, w))
        for n, t in ((16, 4), (64, 8), (256, 16)):
            c = n // t
            net = algo.hierarchical(n, tile=c)
            tiles = t
            self.assertEqual(net.additions, tiles * (c * log2(c) - (c - 1))
                             + (tiles * log2(tiles) - (tiles - 1)) + (tiles - 1) * c)

    def test_lab06_variant_table(self):
        """Lab 06's table of its variants (tile 2048, W = 32) states the additions and steps of
        the network the script builds for each, and the Kogge-Stone it compares with."""
        d = lab_dir("06")
        path = d and os.path.join(d, "README.md")
        self.assertTrue(path and os.path.exists(path), "labs/06_*/README.md (lab 06's handout) is missing")
        with open(path, encoding="utf-8") as f:
            section = tables.markdown_section(f.read(), "Work and steps")
        rows = re.findall(r"(?m)^\|\s*\**(c\d+_b\d+)\**[^|]*\|\s*(\d+)\s*\|\s*(\d+)\s*\|"
                          r"\s*(\d+)\s*\|\s*(\d+)\s*\|\s*$", section)
        self.assertEqual(len(rows), 6, "labs/06_coarsened/README.md: the variant table "
                         "(variant | C | B | additions | steps) should list the six variants")
        for name, c, b, adds, steps in rows:
            net = algo.coarsened(2048, threads=int(b), warp=32)
            with self.subTest(variant=name):
                self.assertEqual(name, "c%s_b%s" % (c, b))
                self.assertEqual((int(adds), int(steps)), (net.additions, net.depth),
                                 "%s: the handout says %s additions in %s steps; the network "
                                 "has %d in %d" % (name, adds, steps, net.additions, net.depth))
        ks = algo.kogge_stone(2048)
        self.assertIn("Kogge-Stone over the same\n2048 elements: %d additions, %d steps"
                      % (ks.additions, ks.depth), section)

    def test_handout_formulas(self):
        """The formulas a handout states equal the script's counts (a missing handout fails)."""
        for name, nn in HANDOUT_OF.items():
            d = lab_dir(nn)
            path = d and os.path.join(d, "README.md")
            self.assertTrue(path and os.path.exists(path), "lab %s's handout (README.md) is missing" % nn)
            rel = os.path.relpath(path, ROOT)
            with open(path, encoding="utf-8") as f:
                section = tables.markdown_section(f.read(), "Work and steps")
            self.assertIsNotNone(section, "%s has no '## Work and steps' section" % rel)
            rows = tables.work_rows(section)
            named = {r["name"]: r for r in rows}
            build = FORMULAS[name][0]
            # "additions" (or "additions, total"), else its parts "additions, phase 1", ...
            total = named.get("additions") or named.get("additions, total")
            parts = [total] if total else \
                [r for r in rows if r["name"].startswith("additions,")]
            with self.subTest(handout=rel):
                self.assertTrue(parts, "%s: the Work and steps table needs a row named "
                                "'additions' (or 'additions, phase N' rows) with its formula "
                                "(see slides/README.md)" % rel)
                self.assertIn("steps", named, "%s: the Work and steps table needs a row named "
                              "'steps' with its formula (see slides/README.md)" % rel)
                for r in parts + [named["steps"]]:
                    self.assertIsNone(r["error"], "%s, row '%s': %s" % (rel, r["name"], r["error"]))
                for n in (8, 16, 64, 256):
                    net = build(n)
                    env = handout_env(name, n)
                    adds = sum(r["f"](env) for r in parts)
                    self.assertEqual(adds, net.additions,
                                     "%s states additions %s, which gives %s at %s; the %s network "
                                     "has %d" % (rel, " + ".join(r["formula"] for r in parts),
                                                 adds, env, name, net.additions))
                    steps = named["steps"]["f"](env)
                    self.assertEqual(steps, net.depth,
                                     "%s states steps = %s, which gives %s at %s; the %s network "
                                     "has %d" % (rel, named["steps"]["formula"], steps, env, name,
                                                 net.depth))


class SvgFiles(unittest.TestCase):
    NAMES = ["serial_n8", "naive_n8", "kogge_stone_n8", "kogge_stone_n16",
             "kogge_stone_hazard_n8", "brent_kung_n8", "brent_kung_n16", "blelloch_n8",
             "blelloch_n16", "coarsened_n16", "hierarchical_n16", "warp_scan_n8", "segmented_n8", "radix_pass_n16",
             "lookback_states"]

    def test_the_agreed_file_names(self):
        self.assertEqual(sorted(md.DIAGRAMS), sorted(self.NAMES))

    def test_committed_svgs_are_what_the_script_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):  # a green make test shows no temporary paths
                self.assertEqual(md.main(["--out", tmp]), 0)
            self.assertIn("make_diagrams: wrote", err.getvalue())
            for name in self.NAMES:
                with self.subTest(diagram=name):
                    with open(os.path.join(tmp, name + ".svg"), encoding="utf-8") as f:
                        fresh = f.read()
                    path = os.path.join(ROOT, "slides", "diagrams", name + ".svg")
                    self.assertTrue(os.path.exists(path), "%s is missing: run make diagrams" % path)
                    with open(path, encoding="utf-8") as f:
                        self.assertEqual(f.read(), fresh, "slides/diagrams/%s.svg is stale: run "
                                         "make diagrams and commit the result" % name)
                    root = ET.fromstring(fresh)
                    self.assertTrue(root.tag.endswith("svg"))
                    self.assertTrue(root.get("viewBox"))


class Decks(unittest.TestCase):
    def decks(self):
        """The lab decks (NN_name.md) and the interludes between labs (NNa_name.md)."""
        return sorted(glob.glob(os.path.join(ROOT, "slides", "[0-9][0-9]_*.md"))
                      + glob.glob(os.path.join(ROOT, "slides", "[0-9][0-9][a-z]_*.md")))

    def test_the_warp_interlude_is_linked_and_its_files_exist(self):
        """labs/WARPS.md (between labs 05 and 06): its deck, diagram and answers exist, and the
        course overview and the handouts of the labs that use warp primitives point to it."""
        with open(os.path.join(ROOT, "labs", "WARPS.md"), encoding="utf-8") as f:
            text = f.read()
        for ref in re.findall(r"`((?:slides|solutions)/[^`]+\.md)`", text) + \
                re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
            path = os.path.normpath(os.path.join(ROOT, "labs", ref) if ref.startswith("..")
                                    else os.path.join(ROOT, ref))
            self.assertTrue(os.path.exists(path), "labs/WARPS.md names %s, which does not exist" % ref)
        for page in ("labs/README.md", "labs/06_coarsened/README.md",
                     "labs/08_decoupled_lookback/README.md"):
            with open(os.path.join(ROOT, page), encoding="utf-8") as f:
                self.assertIn("WARPS.md", f.read(), "%s does not point to the interlude" % page)

    def test_every_lab_and_the_intro_has_a_deck(self):
        have = {os.path.basename(p)[:2] for p in self.decks()}
        self.assertIn("00", have, "slides/00_intro.md is missing")
        for d in sorted(glob.glob(os.path.join(ROOT, "labs", "[0-9][0-9]_*"))):
            nn = os.path.basename(d)[:2]
            if not os.path.exists(os.path.join(d, "README.md")):
                continue  # a deck follows its handout
            with self.subTest(lab=os.path.basename(d)):
                self.assertIn(nn, have, "no deck slides/%s_*.md for %s" % (nn, os.path.basename(d)))

    def test_deck_work_tables_follow_their_formulas(self):
        """Every number in a deck's table row that has a formula equals the formula's value."""
        checked = 0
        for path in self.decks():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for row in tables.work_rows(text, every=True):
                for env, cell in row["cells"]:
                    if not re.fullmatch(r"[0-9][0-9,]*", cell.strip()):
                        continue
                    checked += 1
                    self.assertEqual(tables.parse_number(cell), row["f"](env),
                                     "%s: %s at %s is %s, but %s by its formula %s"
                                     % (os.path.basename(path), row["name"], env, cell,
                                        row["f"](env), row["formula"]))
        self.assertGreater(checked, 20)

    def test_decks_are_marp_and_their_images_exist(self):
        for path in self.decks():
            with self.subTest(deck=os.path.basename(path)):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                self.assertTrue(text.startswith("---\n"), "front matter first")
                front = text.split("---\n", 2)[1]
                self.assertRegex(front, r"(?m)^marp: true$")
                self.assertGreaterEqual(text.count("\n---\n"), 3, "at least three slides")
                for img in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
                    if "://" in img:
                        continue
                    self.assertTrue(os.path.exists(os.path.join(os.path.dirname(path), img)),
                                    "%s: image %s does not exist" % (os.path.basename(path), img))


if __name__ == "__main__":
    unittest.main()
