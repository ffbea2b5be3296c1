"""Tests of grader/bench.py (make bench) with fake lab and anchor programs: no GPU needed.

The fakes print the same one-line JSON a lab binary prints, with times chosen by the test, so
the table, the CSV ratios, the skipped cases, the SVG and the exit codes can be checked exactly.
"""
import csv
import importlib.util
import io
import os
import stat
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

import fakes  # also puts grader/ on sys.path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("bench", os.path.join(ROOT, "grader", "bench.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

# A fake program: prints a report whose ms is MS_PER_ELEM * n (status STATUS), memcpy half that.
FAKE = """#!{python}
import json, sys
n = int(sys.argv[sys.argv.index("--n") + 1])
status = {status!r}
if status == "too_large" and n <= {max_n}:
    status = "ok"
ms = {per_elem!r} * n if status == "ok" else 0
print(json.dumps({{"lab": {name!r}, "status": status, "mode": {mode!r}, "device": "Fake GPU",
                  "message": "" if status == "ok" else "fake " + status, "n": n, "ms": ms,
                  "memcpy_ms": ms / 2 if ms else 0, "tile_ms": 0}}))
sys.exit(0 if status == "ok" else 3)
"""


def make_fake(path, name, per_elem, status="ok", mode="gpu", max_n=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, status=status, per_elem=per_elem, name=name,
                            mode=mode, max_n=max_n))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


# A fake lab with variants: `--describe` prints the harness's description; `--variant slow` is
# twice as slow as the default; the tile pass takes a quarter of the full time.
FAKE_VARIANTS = """#!{python}
import json, sys
if "--describe" in sys.argv:
    print({describe!r})
    sys.exit(0)
n = int(sys.argv[sys.argv.index("--n") + 1])
variant = sys.argv[sys.argv.index("--variant") + 1] if "--variant" in sys.argv else "fast"
ms = 1e-6 * n * (2 if variant == "slow" else 1)
print(json.dumps({{"lab": {name!r}, "variant": variant, "status": "ok", "mode": "gpu",
                  "device": "Fake GPU", "message": "", "n": n, "ms": ms, "memcpy_ms": ms / 2,
                  "tile_ms": ms / 4}}))
"""


def fake_variants(name):
    """The text of a FAKE_VARIANTS program for lab name."""
    describe = fakes.describe_text(name, "tile", 1024, variants=(("fast", "the default"),
                                                                 ("slow", "twice the time")))
    return FAKE_VARIANTS.format(python=sys.executable, name=name, describe=describe)


def first_lab(prefix):
    return next(d for d in sorted(os.listdir(os.path.join(ROOT, "labs"))) if d.startswith(prefix))


class Sizes(unittest.TestCase):
    def test_default_sizes_hold_the_quoted_ones(self):
        ns = bench.sizes(10, 28, 2, False)
        self.assertEqual(ns[0], 1 << 10)
        self.assertEqual(ns[-1], 1 << 28)
        for k in (20, 24, 28):
            self.assertIn(1 << k, ns)

    def test_odd_step_still_ends_at_max_and_huge_is_last(self):
        ns = bench.sizes(10, 27, 4, True)
        self.assertEqual(ns[-2], 1 << 27)
        self.assertEqual(ns[-1], (1 << 31) + 7)

    def test_huge_when_memory_allows(self):
        saved = bench.host_bytes_available
        try:
            with redirect_stderr(io.StringIO()) as err:
                bench.host_bytes_available = lambda: 64 << 30
                self.assertTrue(bench.want_huge("auto"))
                bench.host_bytes_available = lambda: 16 << 30
                self.assertFalse(bench.want_huge("auto"))
                bench.host_bytes_available = lambda: None
                self.assertFalse(bench.want_huge("auto"))
                self.assertTrue(bench.want_huge("yes"))
                bench.host_bytes_available = lambda: 64 << 30
                self.assertFalse(bench.want_huge("no"))
            self.assertIn("left out", err.getvalue())
            self.assertIn("included", err.getvalue())
        finally:
            bench.host_bytes_available = saved

    def test_quick_default_and_full(self):
        """The default run is 2^20 ... 2^28, 10 rounds after 2 warm-ups, no 2^31 + 7; --full is
        the exhaustive sweep; an option given wins over either."""
        a = bench.parse_args([])
        self.assertEqual((a.min, a.max, a.step, a.reps, a.warmup, a.huge), (20, 28, 2, 10, 2, "no"))
        a = bench.parse_args(["--full"])
        self.assertEqual((a.min, a.max, a.step, a.reps, a.warmup, a.huge), (10, 28, 2, 20, 3, "auto"))
        a = bench.parse_args(["--full", "--min", "16", "--no-huge"])
        self.assertEqual((a.min, a.huge, a.reps), (16, "no", 20))
        self.assertEqual(bench.parse_args([]).variants, "default")
        self.assertEqual(bench.parse_args(["--full"]).variants, "ops")
        self.assertEqual(bench.parse_args(["--full", "--variants", "all"]).variants, "all")

    def test_time_left(self):
        """Eta: a fixed start (the fastest run) plus a part in proportion to n, fitted at the
        largest n run so far."""
        plan = [(p, n) for n in (1 << 10, 1 << 20) for p in ("a", "b")]
        eta = bench.Eta(plan)
        self.assertIsNone(eta.seconds())
        eta.done(1 << 10, 1.0)
        self.assertAlmostEqual(eta.seconds(), 3.0)  # nothing known past the start: 1 s each
        eta.done(1 << 10, 1.0)
        eta.done(1 << 20, 3.0)  # 2 s for 2^20 elements past the start
        self.assertAlmostEqual(eta.seconds(), 3.0)
        self.assertEqual(bench.clock(42), "42 s")
        self.assertEqual(bench.clock(185), "3 min 05 s")

    def test_huge_flags(self):
        self.assertEqual(bench.parse_args([]).huge, "no")
        self.assertEqual(bench.parse_args(["--full"]).huge, "auto")
        self.assertEqual(bench.parse_args(["--huge"]).huge, "yes")
        self.assertEqual(bench.parse_args(["--no-huge"]).huge, "no")
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            bench.parse_args(["--huge", "--no-huge"])

    def test_byte_floor(self):
        # a scan as fast as its copy is at its floor; a sort moves 4.5 scans' bytes, a
        # compaction 0.75; csr has no floor
        self.assertAlmostEqual(bench.pct_floor("add", 2.0, 2.0), 100.0)
        self.assertAlmostEqual(bench.pct_floor("sort", 9.0, 1.0), 50.0)
        self.assertAlmostEqual(bench.pct_floor("compact", 1.5, 1.0), 50.0)
        self.assertAlmostEqual(bench.pct_floor("seg_add", 3.0, 1.0), 50.0)
        self.assertIsNone(bench.pct_floor("csr", 1.0, 1.0))
        self.assertIsNone(bench.pct_floor("add", 1.0, None))

    def test_labels(self):
        self.assertEqual(bench.size_label(1 << 20), "2^20")
        self.assertEqual(bench.size_label((1 << 31) + 7), "2^31+7")
        self.assertEqual(bench.size_label(1000), "1000")


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = self.tmp.name
        self.fast = first_lab("08")   # twice as fast as CUB
        self.host = first_lab("01")   # host lab, 4 times slower than CUB
        self.limited = first_lab("02")  # too_large above 2^12
        make_fake(os.path.join(self.build, "bench", "bench_cub"), "cub", 1e-6)
        make_fake(os.path.join(self.build, "solutions", self.fast, "scan"), self.fast, 0.5e-6)
        make_fake(os.path.join(self.build, "solutions", self.host, "scan"), self.host, 4e-6,
                  mode="host")
        make_fake(os.path.join(self.build, "solutions", self.limited, "scan"), self.limited, 2e-6,
                  status="too_large", max_n=1 << 12)

    def tearDown(self):
        self.tmp.cleanup()

    def run_bench(self, *extra):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = bench.main(["--build", self.build, "--labs", "01,02,08", "--min", "10",
                             "--max", "14", "--step", "2", "--reps", "1", "--no-huge", *extra])
        return rc, out.getvalue(), err.getvalue()

    def read_csv(self):
        with open(os.path.join(self.build, "bench", "bench.csv")) as f:
            return list(csv.DictReader(f))

    def test_ratios_skips_and_plot(self):
        rc, out, err = self.run_bench()
        self.assertEqual(rc, 0, out + err)
        rows = self.read_csv()
        fast = [r for r in rows if r["lab"] == self.fast]
        self.assertEqual([int(r["n"]) for r in fast], [1 << 10, 1 << 12, 1 << 14])
        for r in fast:
            self.assertAlmostEqual(float(r["x_cub"]), 2.0, places=3)
            self.assertAlmostEqual(float(r["pct_memcpy"]), 50.0, places=1)
            self.assertAlmostEqual(float(r["gbps"]), 8 * int(r["n"]) / (0.5e-6 * int(r["n"]) * 1e6),
                                   places=1)
        host = [r for r in rows if r["lab"] == self.host]
        self.assertAlmostEqual(float(host[0]["x_cub"]), 0.25, places=3)
        limited = {int(r["n"]): r["status"] for r in rows if r["lab"] == self.limited}
        self.assertEqual(limited, {1 << 10: "ok", 1 << 12: "ok", 1 << 14: "too_large"})
        # the table: every ok case, the host lab marked, the skipped one listed below
        self.assertIn("x CUB", out)
        self.assertIn(self.host + " (host)", out)
        self.assertIn("%s n=2^14: too_large" % self.limited, out)
        table_lines = [ln for ln in out.splitlines() if ln.startswith(self.fast)]
        self.assertEqual(len(table_lines), 3)
        self.assertTrue(table_lines[0].rstrip().endswith("2.000"), table_lines[0])
        # the plot: well-formed SVG with one polyline per lab, CUB and memcpy
        tree = ET.parse(os.path.join(self.build, "bench", "bench.svg"))
        lines = tree.getroot().findall("{http://www.w3.org/2000/svg}polyline")
        titles = sorted(p.find("{http://www.w3.org/2000/svg}title").text for p in lines)
        self.assertEqual(titles, sorted([self.fast, self.host, self.limited, "cub", "memcpy"]))

    def test_a_student_s_lab_is_timed_beside_its_reference(self):
        """--src labs: the student's lab and, where it is built, its reference, one line each."""
        make_fake(os.path.join(self.build, "labs", self.fast, "scan"), self.fast, 1e-6)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = bench.main(["--build", self.build, "--src", "labs", "--labs", "08", "--min", "10",
                             "--max", "12", "--step", "2", "--reps", "1", "--no-huge"])
        self.assertEqual(rc, 0, out.getvalue() + err.getvalue())
        rows = {(r["lab"], int(r["n"])): r for r in self.read_csv()}
        mine, ref = rows[(self.fast, 1 << 12)], rows[(self.fast + " reference", 1 << 12)]
        self.assertAlmostEqual(float(mine["x_cub"]), 1.0, places=3)
        self.assertAlmostEqual(float(ref["x_cub"]), 2.0, places=3)
        tree = ET.parse(os.path.join(self.build, "bench", "bench.svg"))
        titles = sorted(p.find("{http://www.w3.org/2000/svg}title").text
                        for p in tree.getroot().findall("{http://www.w3.org/2000/svg}polyline"))
        self.assertEqual(titles, sorted([self.fast, self.fast + " reference", "cub", "memcpy"]))
        # the references' own tree is never given a second line
        rc, out, _ = self.run_bench()
        self.assertNotIn("reference", out)

    def test_every_variant_with_variants_all(self):
        path = os.path.join(self.build, "solutions", self.fast, "scan")
        with open(path, "w") as f:
            f.write(fake_variants(self.fast))
        rc, out, err = self.run_bench("--variants", "all")
        self.assertEqual(rc, 0, out + err)
        rows = {(r["lab"], int(r["n"])): r for r in self.read_csv()}
        fast, slow = rows[(self.fast, 1 << 12)], rows[(self.fast + "/slow", 1 << 12)]
        self.assertAlmostEqual(float(fast["x_cub"]), 1.0, places=3)
        self.assertAlmostEqual(float(slow["x_cub"]), 0.5, places=3)
        self.assertAlmostEqual(float(fast["tile_pct_memcpy"]), 200.0, places=1)
        self.assertIn(self.fast + "/slow", out)
        # the plot keeps one line per lab (the default variant)
        tree = ET.parse(os.path.join(self.build, "bench", "bench.svg"))
        titles = [p.find("{http://www.w3.org/2000/svg}title").text
                  for p in tree.getroot().findall("{http://www.w3.org/2000/svg}polyline")]
        self.assertNotIn(self.fast + "/slow", titles)
        self.assertIn(self.fast, titles)
        # without --variants all only the default runs
        rc, out, _ = self.run_bench()
        self.assertEqual(rc, 0)
        self.assertNotIn("/slow", out)

    def test_variants_all_leaves_huge_n_to_the_default(self):
        path = os.path.join(self.build, "solutions", self.fast, "scan")
        with open(path, "w") as f:
            f.write(fake_variants(self.fast))
        programs = bench.expand_variants([(self.fast, path)])
        self.assertEqual([p[0] for p in programs], [self.fast, self.fast + "/slow"])
        args = bench.parse_args(["--reps", "1"])
        with redirect_stderr(io.StringIO()):
            rows = bench.measure([(self.fast, path, None, "add"),
                                  (self.fast + "/slow", path, "slow", "add")],
                                 [1 << 10, bench.HUGE_N], args)
        self.assertEqual([(r["lab"], r["n"]) for r in rows],
                         [(self.fast, 1 << 10), (self.fast + "/slow", 1 << 10),
                          (self.fast, bench.HUGE_N)])
        self.assertEqual(bench.variant_names(path), ["fast", "slow"])
        self.assertEqual(bench.variant_names(path + ".missing"), [])

    def test_operators_get_their_own_anchor(self):
        """A lab whose variants compute different operators (lab 09) is benched variant by
        variant even without --variants all, each against CUB with the same operator."""
        path = os.path.join(self.build, "solutions", self.fast, "scan")
        with open(path, "w") as f:
            f.write(fake_variants(self.fast))
        saved = bench.variant_ops
        bench.variant_ops = lambda binary, timeout=30: {"fast": "add", "slow": "fadd"}
        try:
            programs = bench.expand_variants([(self.fast, path)], every=False)
        finally:
            bench.variant_ops = saved
        self.assertEqual(programs, [(self.fast, path, None, "add"),
                                    (self.fast + "/slow", path, "slow", "fadd")])
        bench.variant_ops = lambda binary, timeout=30: {"fast": "add", "slow": "fadd"}
        try:  # the default run: the default variant only
            self.assertEqual(bench.expand_variants([(self.fast, path)], every=False, by_op=False),
                             [(self.fast, path, None, "add")])
        finally:
            bench.variant_ops = saved
        self.assertEqual(bench.anchors("cub_bin", programs),
                         [("cub", "cub_bin", None, "add"), ("cub/fadd", "cub_bin", None, "fadd")])
        self.assertEqual(bench.variant_ops(path + ".missing"), {})

    def test_rows_are_written_as_measured_and_kept_on_ctrl_c(self):
        """Each row reaches bench.csv and bench.md as soon as it is measured; Ctrl-C (here: the
        fourth run) ends the bench with 130, keeping those rows, the plot drawn from them."""
        calls = []
        saved = bench.run_json

        def interrupted(argv, timeout):
            calls.append(argv)
            if len(calls) == 4:
                with open(os.path.join(self.build, "bench", "bench.csv")) as f:
                    self.assertEqual(len(list(csv.DictReader(f))), 3, "rows on disk before the end")
                raise KeyboardInterrupt
            return saved(argv, timeout)

        bench.run_json = interrupted
        try:
            rc, out, err = self.run_bench()
        finally:
            bench.run_json = saved
        self.assertEqual(rc, 130, out + err)
        self.assertEqual([r["lab"] for r in self.read_csv()], ["cub", self.host, self.limited])
        with open(os.path.join(self.build, "bench", "bench.md")) as f:
            md = f.read()
        self.assertIn("| %s | 2^10 | ok |" % self.host, md)
        ET.parse(os.path.join(self.build, "bench", "bench.svg"))
        self.assertIn("interrupted after 3 runs", err)
        self.assertIn("[4/12]", err)  # progress: run 4 of 4 programs x 3 sizes
        self.assertIn("left)", err)

    def test_a_failing_lab_fails_the_bench(self):
        make_fake(os.path.join(self.build, "solutions", self.fast, "scan"), self.fast, 0.5e-6,
                  status="wrong")
        rc, out, _ = self.run_bench()
        self.assertEqual(rc, 1)
        self.assertIn("%s n=2^10: wrong" % self.fast, out)

    def test_not_implemented_is_left_out_not_failed(self):
        make_fake(os.path.join(self.build, "solutions", self.fast, "scan"), self.fast, 0.5e-6,
                  status="not_implemented")
        rc, out, _ = self.run_bench()
        self.assertEqual(rc, 0)
        self.assertIn("%s n=2^10: not_implemented" % self.fast, out)

    def test_no_device_stops_with_5(self):
        make_fake(os.path.join(self.build, "bench", "bench_cub"), "cub", 1e-6, status="no_device")
        rc, _, err = self.run_bench()
        self.assertEqual(rc, 5)
        self.assertIn("needs a CUDA GPU", err)

    def test_missing_anchor_is_a_usage_error(self):
        os.remove(os.path.join(self.build, "bench", "bench_cub"))
        rc, _, err = self.run_bench()
        self.assertEqual(rc, 2)
        self.assertIn("not built", err)


if __name__ == "__main__":
    unittest.main()
