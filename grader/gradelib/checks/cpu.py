"""CPU mode's source checks: what nvcc's source checks find (nvcc.source_checks), found on the
C++ that CPU mode compiles, so that a machine without nvcc (Gradescope's) refuses what the GPU
path refuses, with the same messages.

On the private copy of scan.cu, before it is compiled (source_checks, stage_build's precheck):
  1. common/cpu/rewrite.py makes the C++ the build compiles (launches, __shared__ arrays);
  2. the host compiler lists every header it reads (g++ -M -MG: a header that does not exist
     here, such as <cub/cub.cuh>, is listed by the name the source gives it);
  3. each missing header gets an empty stand-in, and the source is preprocessed (g++ -E) with
     __global__, __device__, __host__ and __constant__ kept as markers (common/cpu/lab_cpu.h
     defines them only when they are not defined already), which tells device code from host
     code;
  4. the checks: check_headers on the list (the stand-ins are classified by the name the source
     gave them, CPU mode's own CUDA headers in common/cpu like the toolkit's), #line directives
     (check_line_directives), and inline assembly outside device code (host_asm), where nvcc's
     host translation would keep it. An asm statement in device code that reads a clock
     register (%clock, %clock64, %globaltimer) gets check_device_clocks' message (clock_message);
     any other is refused too, with its own message: CPU mode cannot build PTX, and x86 text
     there would reach the host's assembler (.incbin reads any file at build time); and host
     code that names a __device__ or __constant__ variable (host_device_vars), which nvcc
     refuses (--diag-error 20091,20092) and CPU mode, where it is plain host memory, would run;
  5. when they pass, device code that calls a host function (device_host_calls,
     checks/device_calls.py): nvcc's build fails on it, so this one is a failed build with
     nvcc's message rather than a check's violation.
The object checks (objects.check_object with cpu_build) do the rest: the symbol allowlist, a
kernel launched (lab_cpu::run_kernel), clock64() (lab_cpu::device_clock), calls through pointers.
"""
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading

from .. import proc
from . import device_calls
from ..build import InfraError
from .asm import PTX_CLOCK_RE, clock_message
from .headers import HeaderContext, check_headers, check_line_directives, include_origins, parse_dependencies
from .headers import follow_marker, under
from .lexer import without_attributes

MARKS = {"__global__": "LAB_QUAL_GLOBAL", "__device__": "LAB_QUAL_DEVICE", "__host__": "LAB_QUAL_HOST",
         "__constant__": "LAB_QUAL_CONSTANT"}
_TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z0-9_]*|[{};]')
_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_.+/-]+$")


def _source_tokens(preprocessed, private_src, token_re):
    """Each token of preprocessed C++ (token_re's matches, strings included) with where it
    stands: (its text line, that line's number in scan.cu, whether the line comes from scan.cu,
    the token), following the preprocessor's line markers (follow_marker)."""
    src = os.path.realpath(private_src)
    in_src, line = False, 0
    for ln in preprocessed.splitlines():
        if ln.startswith("#"):
            in_src, line = follow_marker(ln, src, in_src, line)
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


# the call graphs read, by the C++ compiled and its command (the private copy's path replaced by
# _HERE): in this process, and in the builder's cache folder (a class's references, the test
# suite's modules), where another grading session finds them
_CALLGRAPHS, _CALLGRAPHS_LOCK = {}, threading.Lock()
_HERE = "@SCAN_CU@"


def _callgraph(cmd, cpp, priv_src, work, timeout, cache_dir):
    """parse_callgraph's (nodes, edges) of the C++ cpp compiled without optimisation (cmd: the host
    compiler and CPU mode's flags), or None when the compile fails or writes no call graph.
    Paths in it that name the private copy are priv_src's, whoever computed it."""
    src = os.path.realpath(priv_src)
    with open(cpp, "rb") as f:
        text = f.read().replace(priv_src.encode(), _HERE.encode()).replace(src.encode(), _HERE.encode())
    args = [a.replace(os.path.dirname(priv_src), _HERE).replace(os.path.dirname(src), _HERE) for a in cmd]
    key = hashlib.sha256(text + b"\0" + "\0".join(args).encode()).hexdigest()
    path = os.path.join(cache_dir, key + ".json") if cache_dir else None
    with _CALLGRAPHS_LOCK:
        found = _CALLGRAPHS.get(key)
    if found is None and path and os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                found = json.load(f)
        except (OSError, ValueError):
            found = None
    if found is None:
        obj = os.path.join(work, "calls.o")
        r = proc.run(cmd + ["-O0", "-w", "-fcallgraph-info", "-c", cpp, "-o", obj], timeout, cwd=work)
        graph = os.path.join(work, "calls.ci")
        if r.timed_out or r.returncode != 0 or not os.path.exists(graph):
            return None
        with open(graph, encoding="utf-8", errors="replace") as f:
            nodes, edges = device_calls.parse_callgraph(f.read())

        def here(p):
            return _HERE if p in (priv_src, src) or os.path.realpath(p) == src else p
        found = {"nodes": {t: [d, [here(w[0]), w[1], w[2]] if w else None] for t, (d, w) in nodes.items()},
                 "edges": [[a, b, [here(w[0]), w[1], w[2]]] for a, b, w in edges]}
        if path:
            try:
                os.makedirs(cache_dir, exist_ok=True)
                tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(found, f)
                os.replace(tmp, path)
            except OSError:
                pass  # a cache that cannot be written only costs the compile next time
    with _CALLGRAPHS_LOCK:
        _CALLGRAPHS[key] = found

    def back(w):
        return (src if w[0] == _HERE else w[0], w[1], w[2])
    return ({t: (d, back(w) if w else None) for t, (d, w) in found["nodes"].items()},
            [(a, b, back(w)) for a, b, w in found["edges"]])


def device_host_calls(cmd, cpp, preprocessed, priv_src, system_dirs, root, work, timeout, cache_dir=None):
    """nvcc's errors for host functions that scan.cu's device code calls (checks/device_calls.py),
    as one compiler message, or "": the C++ compiled again without optimisation (cmd: the host
    compiler and CPU mode's flags) with the call graph written beside the object (_callgraph,
    kept in cache_dir). A compile that fails or does not write it leaves the verdict to the
    build."""
    callgraph = _callgraph(cmd, cpp, priv_src, work, timeout, cache_dir)
    if callgraph is None:
        return ""
    tokens = [(line, in_src, tok) for _, line, in_src, tok in _source_tokens(preprocessed, priv_src, _VAR_TOKEN_RE)
              if tok[0] not in "\"'"]
    device, declared = device_calls.device_lines(tokens, (MARKS["__global__"], MARKS["__device__"],
                                                          MARKS["__host__"]))
    course = [os.path.join(root, "common")]
    return "\n".join(device_calls.host_calls(callgraph, device, declared, priv_src, system_dirs, course))


def _absolute_flags(flags, root):
    """The compiler flags with -I/-iquote/-isystem folders made absolute (taken from root)."""
    out, i = [], 0
    while i < len(flags):
        t = flags[i]
        if t in ("-I", "-iquote", "-isystem", "-idirafter") and i + 1 < len(flags):
            out += [t, os.path.join(root, flags[i + 1])]
            i += 2
            continue
        if t.startswith("-I") and len(t) > 2:
            t = "-I" + os.path.join(root, t[2:])
        out.append(t)
        i += 1
    return out


def _stand_ins(deps, missing_root):
    """Creates an empty file under missing_root for each header g++ -M -MG listed but could not
    find (its name as the source gave it); the paths made."""
    made = []
    for d in deps:
        if not under(d, missing_root) or os.path.exists(d):
            continue
        rel = os.path.relpath(d, missing_root)
        if not _SAFE_NAME_RE.match(rel) or ".." in rel.split("/"):
            continue
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(d, "w"):
            pass
        made.append(d)
    return made


def source_checks(builder, priv_src, static):
    """(violations, note, error): CPU mode's checks on what the host compiler makes of the
    private copy priv_src, before it is compiled (see the module's docstring). They need no nvcc: the
    same verdicts as nvcc.source_checks on the GPU path. Raises InfraError when the Makefile's
    CPU_CXXFLAGS cannot be read."""
    got = builder.cpu_flags()
    if not got:
        raise InfraError("the Makefile's CPU_CXXFLAGS could not be read: CPU mode's static checks cannot run")
    cxx, flags = got
    os.makedirs(builder.work, exist_ok=True)
    dirs = builder.system_dirs([cxx] + _absolute_flags(flags, builder.root))
    return _checks(builder, priv_src, static, cxx, flags, dirs, builder.timeout)


def _checks(builder, priv_src, static, cxx, flags, system_dirs, timeout):
    """source_checks for the private copy priv_src. cxx and flags: the host compiler and CPU
    mode's CPU_CXXFLAGS; system_dirs: its include folders (Builder.system_dirs). A step that
    cannot run (the rewrite or the compiler failing on the source) is left to the build, which
    fails the same way and shows why."""
    root = builder.root
    work = tempfile.mkdtemp(prefix="cpu-source-check-", dir=builder.work)
    try:
        cpp = os.path.join(work, "scan.cpu.cpp")
        r = proc.run([sys.executable, os.path.join(root, "common", "cpu", "rewrite.py"), priv_src, "-o", cpp],
                     timeout, cwd=root)
        if r.timed_out:
            return [f"CPU mode's rewrite of the source timed out after {timeout:g} s"], ""
        if r.returncode != 0 or not os.path.exists(cpp):
            return [], "CPU mode's rewrite failed: the checks were left to the build"
        missing_root = os.path.join(work, "missing")
        os.makedirs(missing_root)
        cmd = [cxx] + _absolute_flags(flags, root) + ["-iquote", os.path.dirname(priv_src)]
        dep = os.path.join(work, "deps.d")
        r = proc.run(cmd + ["-M", "-MG", cpp, "-MF", dep], timeout, cwd=missing_root)
        if r.timed_out:
            return [f"the list of the headers the source reads (g++ -M) timed out after {timeout:g} s"], ""
        if r.returncode != 0 or not os.path.exists(dep):
            return [], "g++ -M failed: the checks were left to the build"
        with open(dep, encoding="utf-8", errors="replace") as f:
            deps = parse_dependencies(f.read(), missing_root)
        _stand_ins(deps, missing_root)
        marks = [f"-D{k}={v}" for k, v in MARKS.items()]
        pre = os.path.join(work, "scan.ii")
        r = proc.run(cmd + marks + ["-idirafter", missing_root, "-E", cpp, "-o", pre], timeout, cwd=missing_root)
        preprocessed = None
        if r.returncode == 0 and os.path.exists(pre):
            with open(pre, encoding="utf-8", errors="replace") as f:
                preprocessed = f.read()
        ctx = HeaderContext(priv_src, os.path.join(root, "common"), list(system_dirs) + [missing_root],
                            static["lab_headers"],
                            runtime_dirs=[os.path.join(root, "common", "cpu")], also_sources=[cpp])
        deps = [d for d in deps if os.path.realpath(d) != os.path.realpath(cpp)]
        origins = include_origins(preprocessed, priv_src) if preprocessed else {}
        violations = check_headers(deps, static, ctx, origins)
        if preprocessed is None:
            note = "g++ -E failed (the build shows why): the inline-assembly check was not run"
            return violations, ("" if violations else note)
        for v in (check_line_directives(preprocessed, priv_src) + host_asm(preprocessed, priv_src)
                  + host_device_vars(preprocessed, priv_src)):
            if v not in violations:
                violations.append(v)
        if violations:
            return violations, ""
        return [], "", device_host_calls(cmd, cpp, preprocessed, priv_src, system_dirs, root, work, timeout,
                                         os.path.join(builder.common, "callgraphs"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
