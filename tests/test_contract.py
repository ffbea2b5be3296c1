"""The contract (common/contract.json) is the only place its facts are defined.

- common/contract.h and common/contract.mk (the labs built on others, for the Makefile) are what
  common/contract.py makes of the JSON (`contract.py --check`), and --check notices a stale header;
- the C tables that contract.h provides agree with the grader's reading of the same JSON;
- no hand-written copy of a contract fact is left in common/, tests/ or grader/ (C and Python):
  exit codes assigned a number, the status, distribution, scan-type or shape name tables, a
  status-to-exit-code mapping, the edge-size literal list, the default tile, the bytes a scan
  moves, the poison word. Each rule is also run on an example of the copy it exists to catch, so
  a rule that stops matching fails here too.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib import contract  # noqa: E402

GENERATOR = os.path.join(ROOT, "common", "contract.py")
HEADER = os.path.join(ROOT, "common", "contract.h")

# Where the facts may be written down: the contract, its generator, the generated header, the
# grader's loader, this test (its examples), and folders that are not the course's own code.
DEFINERS = {"common/contract.json", "common/contract.py", "common/contract.h", "common/contract.mk",
            "grader/gradelib/contract.py", "tests/test_contract.py"}
SKIP_DIRS = {"grader/fixtures", "slides", "build", "__pycache__", "node_modules"}
C_EXT = (".c", ".h", ".cu", ".cpp")

# Copies that are known and owned by other work, each with why it is still there. Keyed by
# (path, rule name); a path ending in "/" covers a folder.
KNOWN = {
    ("grader/classroom/runs.py", "exit code assigned"): "the grader's own exit codes (grader/README.md), "
                                                        "not a lab binary's: EXIT_USAGE = 2 is argparse's",
}

# ---- text rules: (name, languages, pattern, an example of the copy it catches) -----------------
_EXIT_NAMES = "|".join(contract.EXIT)
TEXT_RULES = [
    ("exit code defined", "c", r"\bLAB_EXIT_\w+\s*=\s*\d|#\s*define\s+LAB_EXIT_\w+",
     "    LAB_EXIT_WRONG = 1, /* wrong */"),
    ("status mapped to exit code by hand", "c", r"\bcase\s+ST_\w+\s*:\s*return\s+LAB_EXIT_",
     "    case ST_OK: return LAB_EXIT_OK;"),
    ("status name table", "c py", r'"ok"\s*,\s*"wrong"|"out_of_bounds"\s*,\s*"input_modified"',
     'static const char *NAMES[] = {"ok", "wrong", "out_of_bounds"};'),
    ("distribution name table", "c py", r'"small"\s*,\s*"ones"\s*,\s*"alt"|small, ones, alt, large, random',
     'DISTS = ("small", "ones", "alt", "large", "random")'),
    ("scan type names", "c py", r'"inclusive"[^\n]*"exclusive"|"exclusive"[^\n]*"inclusive"',
     'lab->type == SCAN_INCLUSIVE ? "inclusive" : "exclusive"'),
    ("shape name table", "c py", r'"host"\s*,\s*"whole"\s*,\s*"tile"',
     'SHAPES = ("host", "whole", "tile")'),
    ("edge-size literal list", "c py", r"\b1009\s*,\s*65521\s*,\s*1000003\b",
     "const size_t fixed[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 1009, 65521, 1000003};"),
    ("default tile", "c", r"\btile\s*\?[^:;\n]*:\s*1024\b", "size_t t = lab->tile ? lab->tile : 1024;"),
    ("default tile", "py", r"\btile\s+or\s+1024\b", "t = info.tile or 1024"),
    ("bytes a scan moves", "c", r"\b2(\.0)?\s*\*\s*\(double\)\s*n\s*\*\s*sizeof\(\w+\)\s*;",
     "return 2.0 * (double)n * sizeof(int);"),
    ("bytes a scan moves", "py", r"\b8(\.0)?\s*\*\s*n\s*/", "return 8.0 * n / (ms * 1e6)"),
    ("poison word", "c py", r"0x7[eE]7[eE]7[eE]7[eE]", "#define LAB_POISON ((int)0x7E7E7E7E)"),
    ("poison byte", "c", r"[mM]emset\w*\([^;]*,\s*0x7[eE]\s*,",
     "CUDA_CHECK(cudaMemset(d_out, 0x7E, n * sizeof(int)));"),
    ("exit code assigned", "py", rf"^\s*(EXIT_({_EXIT_NAMES})|SANITIZER_EXIT)\s*=\s*\d",
     "EXIT_TAMPERED = 8"),
]


# ---- Python rules on the syntax tree -------------------------------------------------------------

def _constants(node):
    """The constant elements of a tuple, list or set literal, or None when it is not one."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return None
    if not all(isinstance(e, ast.Constant) for e in node.elts):
        return None
    return [e.value for e in node.elts]


def python_findings(text):
    """[(line, rule)] for copies in Python source that a line pattern would miss: a tuple of exit
    names assigned numbers, a literal holding every distribution, status or fixed edge size, a
    dict mapping statuses to exit codes."""
    exit_names = {f"EXIT_{k}" for k in contract.EXIT} | {"SANITIZER_EXIT"}
    fixed = set(contract.DATA["edge_sizes"]["fixed"])
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names = [t.id for t in getattr(target, "elts", [target]) if isinstance(t, ast.Name)]
                values = _constants(node.value) if isinstance(target, ast.Tuple) else (
                    [node.value.value] if isinstance(node.value, ast.Constant) else None)
                if values and exit_names & set(names) and all(isinstance(v, int) for v in values):
                    found.append((node.lineno, "exit code assigned"))
        values = _constants(node)
        if values is not None:
            if len(set(contract.DISTS) & set(values)) >= 4:  # most of the table, if not all of it
                found.append((node.lineno, "distribution name table"))
            if set(contract.STATUSES) <= set(values):
                found.append((node.lineno, "status name table"))
            if fixed <= set(v for v in values if isinstance(v, int)):
                found.append((node.lineno, "edge-size literal list"))
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if len(keys & set(contract.STATUSES)) >= 3 and all(
                    isinstance(v, ast.Constant) and isinstance(v.value, int) for v in node.values):
                found.append((node.lineno, "status mapped to exit code by hand"))
    return found


def text_findings(text, lang):
    """[(line, rule)] for the text rules of language lang ("c" or "py")."""
    found = []
    for name, langs, pattern, _ in TEXT_RULES:
        if lang not in langs.split():
            continue
        for m in re.finditer(pattern, text, re.M):
            found.append((text.count("\n", 0, m.start()) + 1, name))
    return found


def known(path, rule):
    return any(rule == r and (path == p or (p.endswith("/") and path.startswith(p)))
               for p, r in KNOWN)


def course_files():
    """(relative path, language) of every C and Python file in common/, tests/ and grader/."""
    for top in ("common", "tests", "grader"):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            rel_d = os.path.relpath(d, ROOT)
            dirs[:] = sorted(x for x in dirs if os.path.join(rel_d, x) not in SKIP_DIRS
                             and x not in SKIP_DIRS)
            for f in sorted(files):
                rel = os.path.join(rel_d, f)
                if rel in DEFINERS:
                    continue
                if f.endswith(C_EXT):
                    yield rel, "c"
                elif f.endswith(".py"):
                    yield rel, "py"


class Header(unittest.TestCase):
    def test_contract_h_is_up_to_date(self):
        p = subprocess.run([sys.executable, GENERATOR, "--check"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_check_notices_a_stale_header(self):
        d = tempfile.mkdtemp(prefix="contract-")
        try:
            js, h = os.path.join(d, "contract.json"), os.path.join(d, "contract.h")
            with open(os.path.join(ROOT, "common", "contract.json")) as f:
                text = f.read()
            with open(js, "w") as f:
                f.write(text.replace('"value": 9,', '"value": 19,'))
            shutil.copy(HEADER, h)
            shutil.copy(os.path.join(ROOT, "common", "contract.mk"), os.path.join(d, "contract.mk"))
            p = subprocess.run([sys.executable, GENERATOR, "--check", "--json", js, "--header", h],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            # one line per stale file: the header, and contract.mk (its LAB_EXIT_<code> lines)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 2, p.stderr)
            self.assertTrue(all("stale" in ln for ln in lines), p.stderr)
            self.assertIn("contract.h is stale", lines[0])
            # without --check it rewrites the header, which then holds the new value
            subprocess.run([sys.executable, GENERATOR, "--json", js, "--header", h], check=True,
                           capture_output=True)
            with open(h) as f:
                self.assertIn("LAB_EXIT_SANDBOX = 19,", f.read())
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_header_holds_the_json_values(self):
        with open(HEADER) as f:
            h = f.read()
        for name, code in contract.EXIT.items():
            self.assertIn(f"LAB_EXIT_{name} = {code},", h)
        self.assertIn("#define LAB_DIST_NAMES {" + ", ".join(f'"{d}"' for d in contract.DISTS), h)
        self.assertIn(f"#define LAB_CONTRACT_VERSION {contract.VERSION}\n", h)
        self.assertIn(f"#define LAB_EDGE_LARGE_N ((size_t){contract.LARGE_N})", h)
        self.assertIn(f"#define LAB_DEFAULT_TILE ((size_t){contract.DEFAULT_TILE})", h)


class Python(unittest.TestCase):
    def test_values(self):
        """Spot checks of the loader against the documented values (README.md)."""
        self.assertEqual((contract.EXIT["OK"], contract.EXIT["USAGE"], contract.EXIT["SANDBOX"]),
                         (0, 2, 9))
        self.assertEqual(contract.STATUS_EXIT["leak"], contract.EXIT["WRONG"])
        self.assertEqual(contract.bytes_moved(1000), 8000)
        self.assertEqual(len(set(contract.EXIT.values())), len(contract.EXIT), "codes are distinct")


class NoCopies(unittest.TestCase):
    def test_each_rule_catches_its_example(self):
        for name, langs, _, example in TEXT_RULES:
            for lang in langs.split():
                self.assertIn(name, [r for _, r in text_findings(example, lang)], (name, lang))
        for example, rule in (("EXIT_OK, EXIT_WRONG = 0, 1", "exit code assigned"),
                              ("SANITIZER_EXIT = 86", "exit code assigned"),
                              ("x = ['random', 'small', 'ones', 'alt', 'large']", "distribution name table"),
                              ("codes = {'ok': 0, 'wrong': 1, 'leak': 1}", "status mapped to exit code by hand"),
                              ("S = " + repr(contract.STATUSES[::-1]), "status name table"),
                              ("SIZES = (0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 1009, 65521, 1000003, 7)",
                               "edge-size literal list")):
            self.assertIn(rule, [r for _, r in python_findings(example)], example)

    def test_uses_are_not_flagged(self):
        uses_py = ('EXIT_OK = contract.EXIT["OK"]\nEXIT_FAILED = 1\nt = info.tile_or_default\n'
                   'if st == "ok" and rc == EXIT_OK: pass\nsizes = (0, 1, 31, 1009, 65521)\n'
                   'gbps = contract.bytes_moved(n) / (ms * 1e6)\n'
                   'SKIP = {"not_implemented", "too_large", "no_memory", "missing"}\n')
        self.assertEqual(text_findings(uses_py, "py") + python_findings(uses_py), [])
        uses_c = ('return LAB_EXIT_USAGE;\nstatic const char *const N[ST_COUNT] = LAB_STATUS_NAMES;\n'
                  'double need = 2.0 * (double)n * sizeof(int) + (double)tmp_bytes;\n'
                  'memset(p, LAB_POISON_BYTE, n);\nconst size_t t = lab->tile ? lab->tile : '
                  'LAB_DEFAULT_TILE;\nlab_scan_type_name(lab->type);\n')
        self.assertEqual(text_findings(uses_c, "c"), [])

    def test_no_fact_is_defined_twice(self):
        found, scanned = [], 0
        for rel, lang in course_files():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            scanned += 1
            hits = text_findings(text, lang)
            if lang == "py":
                try:
                    hits += python_findings(text)
                except SyntaxError as e:
                    hits.append((e.lineno or 0, "not Python (cannot check)"))
            found += [f"{rel}:{line}: {rule}" for line, rule in sorted(set(hits))
                      if not known(rel, rule)]
        self.assertGreater(scanned, 30, "the scan found too few files: is ROOT right?")
        self.assertEqual(found, [], "contract facts written out again; take them from "
                         "common/contract.json (contract.h in C, gradelib.contract in Python)")

    def test_known_copies_are_still_there(self):
        """An entry of KNOWN whose copy is gone is stale: remove it, so it cannot hide a new one."""
        files = dict(course_files())
        for (path, rule), why in KNOWN.items():
            paths = [p for p in files if p == path or (path.endswith("/") and p.startswith(path))]
            hit = False
            for p in paths:
                with open(os.path.join(ROOT, p), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                hits = text_findings(text, files[p]) + (python_findings(text) if files[p] == "py" else [])
                hit = hit or any(r == rule for _, r in hits)
            self.assertTrue(hit, f"KNOWN entry {path} / {rule} ({why}) matches nothing any more")


if __name__ == "__main__":
    unittest.main()
