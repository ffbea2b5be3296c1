"""The grader's two layers, read from their imports: the engine (gradelib/: one submission into one
GradeResult) never imports the classroom (classroom/: a class, its term and platforms); an output
format (gradelib/formats/) imports neither the classroom nor anything that renders outside it;
and no module of the grader imports itself back through others (no import loops), counting the
imports inside functions and importlib's with a constant name. The one import that names its
module at run time, the format registry's, may reach only the format modules, which do not import
the registry back.

Each rule is also shown to catch what it forbids: the checks run on a copy of the grader with one
planted import."""
import ast
import os
import shutil
import tempfile
import unittest

import fakes

GRADER = fakes.GRADER
ENGINE, CLASSROOM, FORMATS = "gradelib", "classroom", "gradelib.formats"
SCRIPTS = ("grade.py", "check_fixtures.py", "fixturelib.py", "bench.py", "profile.py")


def modules(root):
    """{dotted name: path} of the grader's modules under root: the two packages and the scripts."""
    out = {}
    for pkg in (ENGINE, CLASSROOM):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            rel = os.path.relpath(dirpath, root).replace(os.sep, ".")
            for f in sorted(filenames):
                if f.endswith(".py"):
                    out[rel if f == "__init__.py" else f"{rel}.{f[:-3]}"] = os.path.join(dirpath, f)
    for f in SCRIPTS:
        if os.path.isfile(os.path.join(root, f)):
            out[f[:-3]] = os.path.join(root, f)
    return out


def _package(name, path):
    return name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]


def imports(name, path, known):
    """[(imported module, line, dynamic)] of one module: every import statement, at any depth
    (inside functions too), resolved to the modules of known ('from . import x' is the module x
    when there is one, else the package); importlib.import_module with a constant name; and
    dynamic=True for an import_module whose name is computed (what it reaches is unknown here)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    pkg = _package(name, path)
    out = []

    def add(target, line, dynamic=False):
        while target and target not in known:  # gradelib.build.Builder -> gradelib.build
            target = target.rpartition(".")[0]
        if target:
            out.append((target, line, dynamic))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                add(full if full in known else base, node.lineno)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                add(arg.value, node.lineno)
            else:
                out.append(("", node.lineno, True))
    return out


def graph(root):
    known = modules(root)
    return known, {m: imports(m, p, known) for m, p in known.items()}


def _in(module, pkg):
    return module == pkg or module.startswith(pkg + ".")


def layer_violations(root):
    """One line per import that breaks a layer rule."""
    known, edges = graph(root)
    out = []
    for m, found in edges.items():
        rel = os.path.relpath(known[m], root)
        for target, line, dynamic in found:
            if dynamic:
                if m != FORMATS:
                    out.append(f"{rel}:{line}: imports a module named at run time (only the format registry may)")
                continue
            if _in(m, ENGINE) and _in(target, CLASSROOM):
                out.append(f"{rel}:{line}: the engine imports the classroom ({target})")
            if _in(m, FORMATS) and m != FORMATS and not (_in(target, FORMATS) and target != FORMATS) and not (
                    _in(target, ENGINE) and not _in(target, FORMATS)):
                out.append(f"{rel}:{line}: a format imports {target} (formats import other formats' "
                           f"modules and the engine only, never the registry or the classroom)")
    return out


def cycles(root):
    """The import loops among the grader's modules: each a sorted list of modules (Tarjan's
    strongly connected components of more than one module, or one importing itself). The format
    registry's run-time import reaches every format module."""
    known, edges = graph(root)
    adj = {m: {t for t, _, dyn in found if t and t != m} for m, found in edges.items()}
    adj[FORMATS] |= {m for m in known if _in(m, FORMATS) and m != FORMATS}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(adj):
        if v not in index:
            visit(v)
    return out


class Layers(unittest.TestCase):
    def test_the_engine_never_imports_the_classroom_and_formats_stay_formats(self):
        self.assertEqual(layer_violations(GRADER), [])

    def test_no_import_loops(self):
        self.assertEqual(cycles(GRADER), [])

    def test_the_graph_is_read(self):
        """The rules would pass on a graph that reads nothing: the known edges are there."""
        known, edges = graph(GRADER)
        self.assertIn("classroom.batch", known)
        self.assertIn("gradelib.grading", {t for t, _, _ in edges["gradelib.session"]})
        self.assertIn("gradelib.session", {t for t, _, _ in edges["classroom.batch"]})
        self.assertIn("gradelib.formats.details", {t for t, _, _ in edges["gradelib.formats.gradescope"]})
        self.assertTrue(any(dyn for _, _, dyn in edges[FORMATS]), "the registry's run-time import")

    def planted(self, rel, line, at_top=True):
        """A copy of the grader's two packages with line added to rel (at its top, or inside a
        function appended to it)."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for pkg in (ENGINE, CLASSROOM):
            shutil.copytree(os.path.join(GRADER, pkg), os.path.join(d, pkg),
                            ignore=shutil.ignore_patterns("__pycache__"))
        path = os.path.join(d, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = (line + "\n" + text) if at_top else (text + f"\n\ndef _planted():\n    {line}\n")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return d

    def test_a_planted_engine_to_classroom_import_fails(self):
        d = self.planted("gradelib/stage_speed.py", "from classroom import policy", at_top=False)
        line = _last_line(d, "gradelib/stage_speed.py")
        self.assertEqual(layer_violations(d),
                         [f"gradelib/stage_speed.py:{line}: the engine imports the classroom (classroom.policy)"])
        d = self.planted("gradelib/grading.py", "import classroom.batch")
        self.assertIn("gradelib/grading.py:1: the engine imports the classroom (classroom.batch)", layer_violations(d))

    def test_a_planted_format_import_fails(self):
        d = self.planted("gradelib/formats/table.py", "from ...classroom import leaderboard")
        self.assertTrue(any("a format imports classroom.leaderboard" in v for v in layer_violations(d)))
        d = self.planted("gradelib/formats/junit.py", "from . import render")
        self.assertTrue(any("a format imports gradelib.formats " in v for v in layer_violations(d)))

    def test_a_planted_loop_fails(self):
        d = self.planted("gradelib/status.py", "from . import grading", at_top=False)  # grading imports status
        self.assertTrue(any({"gradelib.status", "gradelib.grading"} <= set(c) for c in cycles(d)), cycles(d))
        d = self.planted("classroom/lms.py", "import importlib; importlib.import_module('classroom.gradebook')",
                         at_top=False)
        self.assertTrue(any({"classroom.lms", "classroom.gradebook"} <= set(c) for c in cycles(d)), cycles(d))


def _last_line(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return len(f.read().splitlines())


if __name__ == "__main__":
    unittest.main()
