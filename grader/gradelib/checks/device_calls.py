"""What device code calls, checked without nvcc: nvcc refuses a lab whose kernel (or __device__
function) calls a host function ("calling a __host__ function from a __global__ function is not
allowed"); CPU mode compiles device code as host C++, where any call links, so without this a
kernel that calls std::sort would pass a CPU-mode grade and fail to build on every GPU.

How (host_calls): the host compiler writes the call graph of the C++ CPU mode builds
(g++ -O0 -fcallgraph-info: every call the source makes, nothing inlined away, each with the place
of the call and the place and declaration of the callee); the call sites on lines of scan.cu that
are device code (device_lines, read from the preprocessed text with the qualifier markers) are
kept, and each callee must be one device code may call, as nvcc decides:
  - declared in scan.cu as __device__ or __host__ __device__ (a __global__ too), defined inside
    device code (a lambda), or implicitly (a class's own constructor, destructor or assignment,
    or one declared `= default`: nvcc makes those __host__ __device__);
  - constexpr, wherever it is declared (the Makefile gives nvcc --expt-relaxed-constexpr);
  - declared by the course (common/: CPU mode's CUDA runtime and intrinsics);
  - from the C and C++ library, what CUDA's device library provides: the math functions, printf,
    malloc, free, memcpy, memset, assert, operator new and delete.
Anything else (std::sort, std::swap in C++17, rand, a host function of scan.cu) is refused with
nvcc's wording and the line of the call. A step that cannot run (the compiler fails on the source,
or does not know -fcallgraph-info) leaves the verdict to the build.
"""
import os
import re

from .headers import RealPaths, under
from .lexer import without_attributes

# a node or an edge of the VCG file -fcallgraph-info writes
_Q = r'"((?:[^"\\]|\\.)*)"'
_NODE_RE = re.compile(r'node: \{ title: ' + _Q + r' label: ' + _Q)
_EDGE_RE = re.compile(r'edge: \{ sourcename: ' + _Q + r' targetname: ' + _Q + r' label: ' + _Q)
_WHERE_RE = re.compile(r"^(.*):(\d+):(\d+)$")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a source line's string and character literals and comments, blanked before words are counted
_NOT_CODE_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|//.*|/\*.*?(?:\*/|$)')

# C and C++ library functions CUDA's device library also provides (nvcc lets device code call them;
# g++ may call puts or putchar for a printf)
DEVICE_LIBC = {"printf", "puts", "putchar", "malloc", "free", "memcpy", "memset", "abs", "labs", "llabs",
               "__assert_fail", "__assert_func", "__assert_rtn", "_wassert", "operator new", "operator new []",
               "operator delete", "operator delete []",
               # what CPU mode's rewrite of a __shared__ scalar compiles to (a function-local static)
               "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort"}
# the headers that declare the math functions (every one of them has a device version)
MATH_HEADERS = {"mathcalls.h", "mathcalls-narrow.h", "mathcalls-helper-functions.h", "math.h", "cmath",
                "std_abs.h", "mathinline.h"}


def _unescape(s):
    return s.replace('\\"', '"').replace("\\\\", "\\")


def _where(text):
    """(file, line, column) of 'file:line:col', or None."""
    m = _WHERE_RE.match(text)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def _base_structor(title):
    """The title of the node g++ writes for a complete-object constructor or destructor (C1, D1),
    which is an alias of the base-object one (C2, D2) and has no node of its own."""
    return re.sub(r"([CD])1([EI])", r"\g<1>2\2", title, count=1)


def _constexpr(decl):
    """Whether a declaration as g++ prints it is constexpr ('static constexpr int
    std::numeric_limits<int>::max()')."""
    return "constexpr" in decl.partition("(")[0].split()


def _named_at(lines, line, col):
    """(line, word, k) for the word of scan.cu at line and column col (1-based, in bytes) that is
    the k-th appearance of that word on its line; None when no word starts there."""
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1].encode("utf-8", errors="replace")
    before = text[:col - 1].decode("utf-8", errors="replace")
    m = _WORD_RE.match(text[col - 1:].decode("utf-8", errors="replace"))
    if not m:
        return None
    code = _NOT_CODE_RE.sub(lambda x: " " * len(x.group(0)), before)
    return line, m.group(0), sum(1 for w in _WORD_RE.findall(code) if w == m.group(0))


def parse_callgraph(text):
    """({title: (declaration, (file, line) or None)}, [(caller title, callee title, (file, line))])
    from the VCG text of -fcallgraph-info. A node's label is its declaration, a newline, and where
    it is declared."""
    nodes, edges = {}, []
    for title, label in _NODE_RE.findall(text):
        decl, _, where = _unescape(label).partition("\\n")
        nodes[_unescape(title)] = (decl, _where(where))
    for src, dst, label in _EDGE_RE.findall(text):
        where = _where(_unescape(label))
        if where:
            edges.append((_unescape(src), _unescape(dst), where))
    return nodes, edges


def shown_name(decl):
    """The function a declaration (as g++ prints it) names, nvcc's way: the qualified name and the
    template arguments, without the return type and the parameters.
    'void std::sort(_RAIter, _RAIter) [with _RAIter = int*]' -> 'std::sort<int*>';
    'std::vector<_Tp, _Alloc>::vector() [with _Tp = int; ...]' -> 'std::vector<int, ...>::vector'."""
    decl, _, with_ = decl.partition(" [with ")
    args = [a.split(" = ", 1) for a in with_.rstrip("]").split("; ") if " = " in a] if with_ else []
    depth, cut = 0, len(decl)
    for i, c in enumerate(decl):
        if (c in "<>=" and decl[:i].rstrip("<>=").endswith("operator")) or (c == "(" and decl[:i].endswith("operator")):
            continue  # operator<, operator>>=, operator(): part of the name
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            cut = i
            break
    head = decl[:cut].strip()
    depth, start = 0, 0
    for i, c in enumerate(head):  # the name is the last word at template depth 0
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c in " *&" and depth == 0 and not head[:i].endswith("operator"):
            start = i + 1
    name = head[start:] or head
    if "<" in name:  # a class template's member: its parameters named, as g++ wrote them
        for param, value in args:
            name = re.sub(r"\b" + re.escape(param) + r"\b", value, name)
        return name
    return name + (f"<{', '.join(v for _, v in args)}>" if args else "")


def device_lines(tokens, marks):
    """(device, declared) from the tokens of scan.cu's preprocessed text, (line of scan.cu, whether
    the token is in scan.cu, token) each, with the qualifier markers kept (checks/cpu.py MARKS;
    marks: the markers of __global__, __device__ and __host__).
    device: {line of scan.cu: ("__global__" or "__device__", the function's name)} for each line
    whose code in function bodies is all device code (a body whose head has __global__ or
    __device__ without __host__, and everything inside it, its closing brace included).
    declared: the names in scan.cu of functions device code may call, each as (line, name, k: the
    name's k-th appearance on that line, from 0): every word of a head with __device__ or
    __global__, of a class's head (its implicit members are declared at its name), and of a
    declaration '= default'."""
    g, d, h = marks
    stack, head = [], []  # head: (token, line, k) since the last ; { or }
    seen = {}  # (line, word): how often the word has appeared on the line so far
    body_kinds = {}  # line: the kinds of the function bodies its tokens are in (None: host code)
    declared = set()
    for line, in_src, tok in tokens:
        if tok in ("{", ";"):
            words = [t for t, _, _ in head]
            marked = g in words or d in words
            if marked or (tok == "{" and "(" not in words and any(t in ("struct", "class", "union") for t in words)) \
                    or ("=" in words and "default" in words):
                declared |= {(ln, t, k) for t, ln, k in head if ln is not None}
            if tok == "{":
                kind = stack[-1] if stack else None
                if kind is None and marked and h not in words and "(" in words:
                    kind = ("__global__" if g in words else "__device__", _function_name(words))
                stack.append(kind)
            head = []
        elif tok == "}":
            if in_src and stack:
                body_kinds.setdefault(line, set()).add(stack[-1])  # a destructor runs here
            if stack:
                stack.pop()
            head = []
        if tok in ("{", ";", "}"):
            if in_src and stack and tok != "}":
                body_kinds.setdefault(line, set()).add(stack[-1])
            continue
        k = None
        if in_src:
            k = seen.get((line, tok), 0)
            seen[(line, tok)] = k + 1
            if stack:
                body_kinds.setdefault(line, set()).add(stack[-1])
        head.append((tok, line if in_src else None, k))
    device = {}
    for line, kinds in body_kinds.items():
        if None not in kinds:
            device[line] = min(kinds)  # ("__device__", name) or ("__global__", name)
    return device, declared


def _function_name(head):
    """The name a function head's tokens declare: the word before its parameters' '(' (after
    attributes are dropped)."""
    toks = without_attributes(head)
    for i, t in enumerate(toks):
        if t == "(" and i > 0 and re.match(r"[A-Za-z_]", toks[i - 1]):
            return toks[i - 1]
    return "?"


def host_calls(callgraph, device, declared, private_src, system_dirs, course_dirs, shown_as="scan.cu", limit=10):
    """nvcc's errors for the calls device code of scan.cu makes to host functions (see the
    module's docstring), from parse_callgraph's (nodes, edges) and device_lines' device and
    declared; one per callee and caller, the first `limit`. system_dirs: the host compiler's
    include folders; course_dirs: the course's, whose functions device code may call (CPU mode's
    CUDA runtime and intrinsics)."""
    nodes, edges = callgraph
    src, real = os.path.realpath(private_src), RealPaths()
    with open(private_src, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    found = []
    for caller, callee, (where, line, _) in edges:
        if real[where] != src or line not in device:
            continue
        decl, at = nodes.get(callee) or nodes.get(_base_structor(callee)) or ("", None)
        if not decl or at is None or _constexpr(decl):
            continue
        name = shown_name(decl)
        path = real[at[0]]
        if any(under(path, os.path.realpath(c)) for c in course_dirs):
            continue  # the course's (common/cpu: CUDA's runtime and intrinsics in CPU mode)
        if path == src:
            if at[1] in device or _named_at(lines, at[1], at[2]) in declared:
                continue
        elif any(under(path, os.path.realpath(s)) for s in system_dirs):
            bare = name.split("<")[0]
            if bare in DEVICE_LIBC or bare.rsplit("::", 1)[-1] in DEVICE_LIBC or callee in DEVICE_LIBC \
                    or os.path.basename(path) in MATH_HEADERS:
                continue
        else:
            continue  # a header beside scan.cu: the course's
        kind, caller_name = device[line]
        msg = (f"{shown_as}({line}): error: calling a __host__ function(\"{name}\") from a {kind} "
               f"function(\"{caller_name}\") is not allowed (nvcc refuses it: device code calls only "
               f"__device__ functions, constexpr ones and CUDA's device library)")
        if msg not in found:
            found.append(msg)
    if len(found) > limit:
        found = found[:limit] + [f"... and {len(found) - limit} more calls of host functions from device code"]
    return found
