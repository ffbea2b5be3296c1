"""Every C/CUDA snippet the handouts and hints quote compiles (unittest, standard library; needs
nvcc, no GPU: without nvcc the compile tests skip, saying so).

Which snippets: the fenced code blocks of labs/*.md and labs/NN_name/*.md (handout, HINTS.md,
PERFORMANCE.md) whose info string starts with c, cuda, cpp or c++. The words after the language
are tags: "nocompile" marks pseudo-code the test must leave alone (say why in the text around
it); "signatures" marks declarations quoted from the lab's scan.cu, each of which must also
appear in labs/NN_name/scan.cu word for word (whitespace aside), so that a renamed parameter or
a changed type in the skeleton shows up as a stale handout.

How they compile: all the snippets of one file form one translation unit, each preceded by a
#line marker, so that nvcc's messages name the Markdown file and line. A lab's snippets follow
its skeleton (labs/NN_name/scan.cu, included first: the lab's header and types are in scope,
and a quoted declaration is a redeclaration that must agree with it); the snippets of the files
outside a lab (labs/WARPS.md) follow lab.h and FULL_MASK as the labs define it. Flags as the
Makefile's: -std=c++17 -arch=sm_90 -c.
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANGS = ("c", "cuda", "cpp", "c++")
FENCE = re.compile(r"(?ms)^```([^\n`]*)\n(.*?)^```[ \t]*$")


def snippets(text):
    """[(line of the first code line, language, tags, code)] of the C/CUDA fenced blocks."""
    out = []
    for m in FENCE.finditer(text):
        words = m.group(1).split()
        if words and words[0].lower() in LANGS:
            line = text.count("\n", 0, m.start(2)) + 1
            out.append((line, words[0].lower(), words[1:], m.group(2)))
    return out


def declarations(code):
    """The declarations of a signatures block: its text split at each top-level ';'."""
    return [d.strip() for d in code.split(";") if d.strip()]


def squash(text):
    """text with comments removed and every run of whitespace one space (around ( ) , * too)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([(),*&])\s*", r"\1", text).strip()


def nvcc():
    """The nvcc the Makefile would use ($NVCC, then PATH, then /usr/local/cuda), or None."""
    for cand in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def unit(md_path, blocks):
    """The translation unit of one Markdown file's compiled blocks."""
    rel = os.path.relpath(md_path, ROOT)
    lab = os.path.dirname(md_path)
    skeleton = os.path.join(lab, "scan.cu")
    if re.fullmatch(r"\d\d_\w+", os.path.basename(lab)) and os.path.exists(skeleton):
        head = '#include "%s"\n' % skeleton
    else:
        head = '#include "lab.h"\n#define FULL_MASK 0xffffffffu\n'
    return head + "".join('#line %d "%s"\n%s\n' % (line, rel, code) for line, _, _, code in blocks)


def compile_unit(source, compiler):
    """(returncode, messages) of nvcc on source."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "snippets.cu")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        proc = subprocess.run([compiler, "-std=c++17", "-arch=sm_90", "--expt-relaxed-constexpr",
                               "-I" + os.path.join(ROOT, "common"),
                               "-c", src, "-o", os.path.join(tmp, "snippets.o")],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        return proc.returncode, (proc.stdout + proc.stderr).strip()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def markdown_files():
    return sorted(glob.glob(os.path.join(ROOT, "labs", "*.md"))
                  + glob.glob(os.path.join(ROOT, "labs", "[0-9][0-9]_*", "*.md")))


class Snippets(unittest.TestCase):
    def test_signatures_are_the_skeletons(self):
        """A signatures block quotes its lab's scan.cu exactly."""
        seen = 0
        for path in markdown_files():
            skeleton = os.path.join(os.path.dirname(path), "scan.cu")
            for line, _, tags, code in snippets(read(path)):
                if "signatures" not in tags:
                    continue
                rel = os.path.relpath(path, ROOT)
                self.assertTrue(os.path.exists(skeleton), "%s:%d: a signatures block outside a lab"
                                % (rel, line))
                with open(skeleton, encoding="utf-8") as f:
                    have = squash(f.read())
                for decl in declarations(code):
                    seen += 1
                    self.assertIn(squash(decl), have, "%s:%d: the handout quotes `%s`, which "
                                  "labs/%s/scan.cu does not declare" % (rel, line, " ".join(decl.split()),
                                                                        os.path.basename(os.path.dirname(path))))
        self.assertGreaterEqual(seen, 10, "fewer than 10 quoted signatures: were the blocks lost?")


class SnippetsCompile(unittest.TestCase):
    FULL_SUITE = "every handout's C/CUDA snippets compiled with nvcc, a unit per Markdown file"

    def test_every_snippet_compiles(self):
        compiler = nvcc()
        if not compiler:
            self.skipTest("nvcc not found ($NVCC, PATH, /usr/local/cuda/bin): the snippets are not compiled")
        units = {}
        for path in markdown_files():
            blocks = [b for b in snippets(read(path)) if "nocompile" not in b[2]]
            if blocks:
                units[os.path.relpath(path, ROOT)] = (unit(path, blocks), len(blocks))
        # two compilers at a time at most (the machine may be shared)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = dict(zip(units, pool.map(lambda u: compile_unit(u[0], compiler), units.values())))
        for rel, (rc, messages) in results.items():
            with self.subTest(file=rel):
                self.assertEqual(rc, 0, "%s: a quoted snippet does not compile:\n%s"
                                 % (rel, "\n".join(messages.splitlines()[:12])))
        compiled = sum(n for _, n in units.values())
        self.assertGreaterEqual(compiled, 15, "fewer than 15 snippets compiled: were they lost?")


class CheckerIsNotVacuous(unittest.TestCase):
    TEXT = ("Text.\n```cuda\n__device__ int twice(int x) { return 2 * x; }\n```\n"
            "```sh\nmake run\n```\n```cuda nocompile\nfor each i: out[i] = ...\n```\n"
            "```cuda signatures\nlab_result f(const int *a,\n    size_t n);\nint g(void);\n```\n")

    def test_snippets_and_tags(self):
        got = snippets(self.TEXT)
        self.assertEqual([(line, tags) for line, _, tags, _ in got],
                         [(3, []), (9, ["nocompile"]), (12, ["signatures"])])
        self.assertEqual(declarations(got[2][3]), ["lab_result f(const int *a,\n    size_t n)",
                                                   "int g(void)"])
        self.assertEqual(squash("lab_result  f( const int * a,\n size_t n )"),
                         "lab_result f(const int*a,size_t n)")

    def test_a_broken_snippet_fails_and_names_its_line(self):
        compiler = nvcc()
        if not compiler:
            self.skipTest("nvcc not found: nothing to compile with")
        bad = [(7, "cuda", [], "__device__ int twice(int x) { return 2 * y; }")]
        rc, messages = compile_unit(unit(os.path.join(ROOT, "labs", "WARPS.md"), bad), compiler)
        self.assertNotEqual(rc, 0)
        self.assertIn("labs/WARPS.md(7)", messages)


if __name__ == "__main__":
    unittest.main()
