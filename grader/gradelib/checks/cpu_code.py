"""What CPU mode's preprocessed C++ of scan.cu shows, for the checks nvcc's compile does on the GPU
path (cpu.py runs them through the registry): inline assembly in host code and clocks read in
device code (host_asm), and host code that names a __device__ or __constant__ variable
(host_device_vars). The qualifiers are kept visible through preprocessing as MARKS.
"""
import os
import re

from .asm import PTX_CLOCK_RE, clock_message
from .headers import RealPaths, follow_marker
from .lexer import without_attributes

MARKS = {"__global__": "LAB_QUAL_GLOBAL", "__device__": "LAB_QUAL_DEVICE", "__host__": "LAB_QUAL_HOST",
         "__constant__": "LAB_QUAL_CONSTANT"}
_TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z0-9_]*|[{};]')


def _source_tokens(preprocessed, private_src, token_re):
    """Each token of preprocessed C++ (token_re's matches, strings included) with where it
    stands: (its text line, that line's number in scan.cu, whether the line comes from scan.cu,
    the token), following the preprocessor's line markers (follow_marker)."""
    src, real = os.path.realpath(private_src), RealPaths()
    in_src, line = False, 0
    for ln in preprocessed.splitlines():
        if ln.startswith("#"):
            in_src, line = follow_marker(ln, src, in_src, line, real)
            continue
        for tok in token_re.findall(ln):
            yield ln, line, in_src, tok
        line += 1


def host_asm(preprocessed, private_src):
    """Violations in preprocessed C++ of scan.cu (g++ -E with the qualifier markers): an asm
    statement, declaration or label on a line of scan.cu outside device code (a block whose
    head has __global__ or __device__ without __host__, and every block inside one), as nvcc's
    host translation would show it (check_host_asm); and in device code, asm that reads a clock
    register (check_device_clocks), or any other asm (CPU mode cannot build it). One message per
    line of scan.cu."""
    stack = []  # one bool per open brace: inside device code
    head = []   # the tokens since the last ; { or }
    found = []
    for ln, line, in_src, tok in _source_tokens(preprocessed, private_src, _TOKEN_RE):
        if tok == "{":
            device = bool(stack and stack[-1])
            if not device and (MARKS["__global__"] in head or MARKS["__device__"] in head):
                device = MARKS["__host__"] not in head
            stack.append(device)
            head = []
        elif tok == "}":
            if stack:
                stack.pop()
            head = []
        elif tok == ";":
            head = []
        elif tok[0] in "\"'":
            continue
        else:
            head.append(tok)
            if tok not in ("asm", "__asm__", "__asm") or not in_src:
                continue
            device = bool(stack and stack[-1]) or (
                (MARKS["__global__"] in head or MARKS["__device__"] in head) and MARKS["__host__"] not in head)
            if device:
                # nvcc hands device asm to ptxas; here it would reach the host's assembler,
                # which also reads files (.incbin) and writes any instruction: refused
                m = PTX_CLOCK_RE.search(ln)
                msg = clock_message(m.group(1), line or None) if m else (
                    f"inline assembly in device code (line {line}): CPU mode cannot run PTX, and "
                    f"asm here would go to the host's assembler; a lab with asm is graded on a GPU")
            else:
                msg = f"inline assembly in host code (line {line}): only device code may use asm"
            if msg and msg not in found:
                found.append(msg)
    return found


# host_device_vars: tokens (strings and characters, identifiers, numbers, then punctuation with
# the two-character ones first), and the words after which a name is used rather than declared
_VAR_TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9A-Za-z_.]*|'
                           r'->|::|&&|\|\||==|!=|<=|>=|[-+*/%&|^!~<>=?:;,.(){}\[\]]')
_USE_AFTER = {"return", "case", "else", "do", "throw", "delete", "new", "co_return", "co_yield", "sizeof",
              "decltype", "alignof", "__alignof__", "typeof", "__typeof__", "typeid", "noexcept"}
_UNEVALUATED = {"sizeof", "decltype", "alignof", "__alignof__", "typeof", "__typeof__", "noexcept"}


def _declared_vars(head):
    """The names a namespace-scope declaration's tokens (head, up to its ';' or '{') declare as
    variables: the identifier before each declarator's '=', '[', '{', ',' or end. [] for a
    function (a '(' right after its name comes first) or a type."""
    if any(t in ("struct", "class", "union", "enum", "typedef", "using", "template", "operator") for t in head):
        return []
    head = without_attributes(head)  # CPU mode's rewrite gives a device variable a section
    names, depth, last, init = [], 0, None, False
    split_at_commas = "<" not in head  # a template's arguments may hold commas: one name then
    for t in head + [";"]:
        if t in ("(", "[", "{"):
            if depth == 0 and not init:
                if t == "(" and last is not None and not names:
                    return []  # a function (or a direct initialiser: left alone)
                if last is not None:
                    names.append(last)
                    last = None
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and (t == ";" or (t == "," and split_at_commas)):
            if last is not None and not init:
                names.append(last)
            last, init = None, False
        elif depth == 0 and t == "=":
            if last is not None and not init:
                names.append(last)
            last, init = None, True
        elif depth == 0 and not init and re.match(r"[A-Za-z_]", t) and not t.startswith("LAB_QUAL_"):
            last = t
    return names


def host_device_vars(preprocessed, private_src):
    """Violations in preprocessed C++ of scan.cu: host code that names a __device__ or
    __constant__ variable of scan.cu (declared at namespace scope). On a GPU host code has its own
    copy of such a variable, which no kernel reads or writes, so the lab computes with a wrong
    value silently; nvcc refuses it (the Makefile's --diag-error 20091,20092), and this is the
    same check where there is no nvcc (CPU mode, where the variable is plain host memory, would
    run it). Host code is a function body whose head has neither __global__ nor __device__; a
    name there counts unless it is a member (after '.', '->' or '::'), inside sizeof, decltype or
    alignof, or declared again in that function (a parameter or a local of the same name, or a
    name right after a type: when in doubt the check stays silent). One message per line."""
    G, D, H, C = (MARKS[k] for k in ("__global__", "__device__", "__host__", "__constant__"))
    stack, head = [], []  # per open brace: "ns" (namespace, extern "C"), "host", "dev", or "other"
    devvars, found = {}, []  # name: "__device__" or "__constant__"
    shadowed, parens = set(), []  # in the host function being read: its own names; open parens
    prev = [None, None]

    def declare(head, in_src):  # a namespace-scope declaration, ended by ';' or '{'
        if in_src and (D in head or C in head) and G not in head:
            qual = "__constant__" if C in head else "__device__"
            devvars.update((v, qual) for v in _declared_vars(head))

    def a_type(t):  # a word after which a name is declared, not used
        return t is not None and t not in _USE_AFTER and re.match(r"[A-Za-z_]", t)

    for _, line, in_src, tok in _source_tokens(preprocessed, private_src, _VAR_TOKEN_RE):
        if tok[0] in "\"'":
            prev = [prev[1], tok]
            continue
        at_ns = all(k == "ns" for k in stack)
        body = stack[-1] if stack else None
        if tok == "{":
            if at_ns:
                if "namespace" in head or "extern" in head:
                    kind = "ns"
                elif "(" in without_attributes(head) and "=" not in head:
                    device = (G in head or D in head) and H not in head
                    both = D in head and H in head
                    kind = "dev" if device or both else "host"
                    if kind == "host":
                        shadowed = {t for t in head if t in devvars}  # its parameters
                        parens = []
                else:
                    kind = "other"
                    declare(head, in_src)
            else:
                kind = body if body in ("host", "dev") else "other"
            stack.append(kind)
            head = []
        elif tok == "}":
            if stack:
                stack.pop()
            head = []
        elif tok == ";":
            if at_ns:
                declare(head, in_src)
            head = []
        else:
            head.append(tok)
            if body == "host" and in_src:
                if tok == "(":
                    parens.append(prev[1] in _UNEVALUATED)
                elif tok == ")" and parens:
                    parens.pop()
                elif tok in devvars and tok not in shadowed:
                    p1, p2 = prev[1], prev[0]
                    if a_type(p1) or (p1 in ("*", "&") and a_type(p2)):
                        shadowed.add(tok)
                    elif p1 not in (".", "->", "::") and not any(parens) and p1 not in _UNEVALUATED:
                        msg = (f"host code uses the {devvars[tok]} variable {tok} (line {line}): on a GPU, host "
                               f"code has its own copy of it, which no kernel reads or writes, so the lab "
                               f"would compute with a wrong value (nvcc refuses it); pass the value to the "
                               f"kernel as a parameter, or keep it in memory from cudaMalloc")
                        if msg not in found:
                            found.append(msg)
        prev = [prev[1], tok]
    return found
