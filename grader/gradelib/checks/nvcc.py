"""The checks on what nvcc makes of the private copy of scan.cu, run where it will be built, just
before it is (stage_build passes source_checks to Builder.build as its precheck):
  1. every header the compiler reads, host and device side (nvcc -M; headers.check_headers, with
     the line of scan.cu each refused one came through, from the preprocessed output);
  2. the host translation (nvcc --dryrun's steps up to cudafe++, run here): #line directives that
     rename scan.cu's code (headers.check_line_directives) and inline assembly in host code
     (asm.check_host_asm);
  3. clocks read in device code (nvcc -ptx; asm.check_device_clocks).
Needs nvcc (a "gpu" Builder). CPU mode's equivalent, with no nvcc, is cpu.py.
"""
import os
import re
import shlex
import shutil
import tempfile
import types

from .. import proc
from ..build import InfraError
from . import registry
from .headers import HeaderContext, include_origins, parse_dependencies


def source_checks(builder, priv_src, static):
    """(violations, note): the checks on what nvcc makes of priv_src (see the module's
    docstring), run in a scratch folder of builder's work folder. note names what could not
    run. Raises InfraError when the Makefile's NVFLAGS cannot be read."""
    flags = builder.nvcc_flags()
    if not builder.nvcc or not flags:  # never a quiet pass: the machine cannot grade
        raise InfraError("the Makefile's NVFLAGS could not be read: the header and inline-assembly checks "
                         "cannot run")
    os.makedirs(builder.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="source-check-", dir=builder.work)
    try:
        return _checks(builder, priv_src, static, [builder.nvcc, *flags], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _checks(builder, priv_src, static, nvcc, work):
    """source_checks in the scratch folder work; nvcc: the compiler and its flags."""
    notes = []
    keep = os.path.join(work, "keep")
    os.makedirs(keep)
    steps = _host_steps(builder, nvcc, priv_src, keep)
    host_cpp = None
    if steps:
        host_cpp = next((s for s in steps if "-E" in s and not any(t.startswith("-D__CUDA_ARCH__=") for t in s)), None)
    ctx = HeaderContext(priv_src, os.path.join(builder.root, "common"), builder.system_dirs(host_cpp),
                        static["lab_headers"])
    c = types.SimpleNamespace(static=static, priv_src=priv_src, headers=ctx,
                              origins=lambda refused: _origins(builder, nvcc, priv_src, keep, work, refused))
    # 1. every header the compiler reads, host and device side (nvcc -M)
    deps, stop = _dependencies(builder, nvcc, priv_src, work, notes)
    if stop:
        return stop, ""
    # 2. the host translation (gcc -E of the host side, then cudafe++)
    translated = None
    if steps:
        translated, stop = _host_translation(builder, steps, keep, priv_src)
        if stop:
            return stop, "; ".join(notes)
    violations = registry.run("nvcc", "dependencies", deps, c)
    # 3. clocks read in device code (the PTX of every architecture the build compiles for)
    ptx = os.path.join(work, "scan.ptx")
    for cmd in ptx_commands(nvcc):
        r = proc.run(cmd + ["-ptx", priv_src, "-o", ptx], builder.timeout, cwd=builder.root)
        if r.returncode == 0 and os.path.exists(ptx):
            registry.run("nvcc", "ptx", _read(ptx), c, violations)
        elif not r.timed_out:
            notes.append("nvcc -ptx failed (the build shows why): the device-clock check was not run")
            break
    if translated is not None:
        for pre in sorted(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".cpp4.ii")):
            registry.run("nvcc", "host_preprocessed", _read(pre), c, violations)
        registry.run("nvcc", "host_translation", translated, c, violations)
    elif not steps:
        notes.append("nvcc --dryrun shows no host translation (cudafe++): inline-assembly check skipped")
    elif not violations:
        # the same compiler on the same file: the build fails too, and shows the errors
        notes.append("nvcc's host translation failed (the build shows why): inline-assembly check not run")
    return violations, "; ".join(notes)


def ptx_commands(nvcc):
    """nvcc (the compiler and the Makefile's flags) as one command a virtual architecture of the
    build, for nvcc -ptx, which takes one: a build for several GPUs (the Makefile's ARCH="sm_80
    sm_90", each a -gencode) compiles the device code once for each, and each PTX is checked (a
    clock read behind #if __CUDA_ARCH__ == 800 is in one of them only). A build for one (-arch)
    is nvcc as it is."""
    base, archs, i = [], [], 0
    while i < len(nvcc):
        t = nvcc[i]
        if t in ("-gencode", "--generate-code") and i + 1 < len(nvcc):
            value, i = nvcc[i + 1], i + 2
        elif t.startswith(("-gencode=", "--generate-code=")):
            value, i = t.split("=", 1)[1], i + 1
        else:
            base.append(t)
            i += 1
            continue
        for part in value.split(","):
            if part.startswith("arch=") and part[5:] not in archs:
                archs.append(part[5:])
    return [base + ["-arch=" + a] for a in archs] if archs else [list(nvcc)]


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _host_steps(builder, nvcc, priv_src, keep):
    """nvcc's commands (nvcc --dryrun) up to cudafe++, which writes the host translation
    (scan.cudafe1.cpp) into keep; None when the plan shows no cudafe++."""
    r = proc.run(nvcc + ["--dryrun", "--keep", "--keep-dir", keep, "-c", priv_src, "-o",
                         os.path.join(keep, "scan.o")], builder.timeout, cwd=builder.root)
    steps = []
    for ln in (r.stderr + "\n" + r.stdout).splitlines():
        if not ln.startswith("#$ "):
            continue
        cmd = ln[3:].strip()
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", cmd):
            continue  # nvcc's environment settings
        try:
            steps.append(shlex.split(cmd))
        except ValueError:
            return None
        if steps[-1] and os.path.basename(steps[-1][0]) == "cudafe++":
            return steps
    return None


def _dependencies(builder, nvcc, priv_src, work, notes):
    """(the headers nvcc -M lists, None), or ([], the violations that stop the checks: it
    timed out). A failure is noted in notes and lists nothing: a source the preprocessor
    rejects does not build either, and the build says why."""
    dep = os.path.join(work, "deps.d")
    r = proc.run(nvcc + ["-M", priv_src, "-MF", dep], builder.timeout, cwd=builder.root)
    if r.timed_out:
        return [], [f"nvcc -M (the list of the headers the source reads) timed out after {builder.timeout:g} s"]
    if r.returncode != 0 or not os.path.exists(dep):
        notes.append("nvcc -M failed: the header check was left to the build")
        return [], None
    return parse_dependencies(_read(dep), builder.root), None


def _host_translation(builder, steps, keep, priv_src):
    """(the host translation that running steps (_host_steps) writes, or None when a step
    fails, None), or (None, the violations that stop the checks: a step timed out)."""
    env = dict(os.environ)
    bindir = os.path.dirname(os.path.realpath(builder.nvcc))
    env["PATH"] = os.pathsep.join([bindir, os.path.join(os.path.dirname(bindir), "nvvm", "bin"),
                                   env.get("PATH", "")])
    for step in steps:
        r = proc.run(step, builder.timeout, cwd=builder.root, env=env)
        if r.timed_out:
            return None, [f"nvcc's host translation of the source timed out after {builder.timeout:g} s"]
        if r.returncode != 0:
            return None, None
    # the file cudafe++ writes: scan.cudafe1.cpp, or scan.compute_90.cudafe1.cpp (the newest
    # architecture's name) when the build is for several
    last = steps[-1] if steps else []
    name = os.path.splitext(os.path.basename(priv_src))[0] + ".cudafe1.cpp"
    out = next((last[i + 1] for i, t in enumerate(last[:-1]) if t == "--gen_c_file_name"), name)
    try:
        return _read(os.path.join(keep, out)), None
    except OSError:
        return None, None


def _origins(builder, nvcc, priv_src, keep, work, refused):
    """include_origins for the refused headers: from the host side's preprocessed output (the
    host translation's steps wrote it into keep), and the device side's (nvcc -E) for what that
    does not explain."""
    origins = {}
    for pre in sorted(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".ii")):
        for k, v in include_origins(_read(pre), priv_src).items():
            origins.setdefault(k, v)
    if any(os.path.realpath(d) not in origins for d in refused):
        dev = os.path.join(work, "device.ii")
        r = proc.run(nvcc + ["-E", priv_src, "-o", dev], builder.timeout, cwd=builder.root)
        if r.returncode == 0 and os.path.exists(dev):
            for k, v in include_origins(_read(dev), priv_src).items():
                origins.setdefault(k, v)
    return origins
