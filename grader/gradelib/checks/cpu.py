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
import types

from .. import proc
from . import device_calls
from ..build import InfraError
from . import registry
from .cpu_code import MARKS, _VAR_TOKEN_RE, _source_tokens
from .headers import HeaderContext, include_origins, parse_dependencies, under

_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_.+/-]+$")

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
        c = types.SimpleNamespace(static=static, priv_src=priv_src, headers=ctx, origins=lambda refused: origins)
        violations = registry.run("cpu", "dependencies", deps, c)
        if preprocessed is None:
            note = "g++ -E failed (the build shows why): the inline-assembly check was not run"
            return violations, ("" if violations else note)
        registry.run("cpu", "preprocessed", preprocessed, c, violations)
        if violations:
            return violations, ""
        return [], "", device_host_calls(cmd, cpp, preprocessed, priv_src, system_dirs, root, work, timeout,
                                         os.path.join(builder.common, "callgraphs"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
