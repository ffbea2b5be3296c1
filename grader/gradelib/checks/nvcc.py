"""The checks on what nvcc makes of the private copy of scan.cu, in one compile (stage_build's
builds pass precheck() to Builder.build):
  1. before it compiles: every header the compiler would read, host and device side (nvcc -M;
     headers.check_headers, with the line of scan.cu each refused one came through, from the
     preprocessed output), so that a refused header is never compiled;
  2. the compile itself, with nvcc --keep: the checks read the very files it made, so nothing is
     compiled twice and what is checked is what was built;
  3. after it compiles, before anything is linked or run, on the kept files: the host side's
     preprocessed source (scan.cpp4.ii: #line directives that rename scan.cu's code,
     headers.check_line_directives), nvcc's host translation (scan[.compute_NN].cudafe1.cpp:
     inline assembly in host code, asm.check_host_asm) and the PTX of every architecture the
     build compiles for (scan[.compute_NN].ptx: clocks read in device code,
     asm.check_device_clocks).
Needs nvcc (a "gpu" Builder). CPU mode's equivalent, with no nvcc, is cpu.py.
"""
import glob
import hashlib
import json
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


class Precheck:
    """Builder.build's precheck for an nvcc build: called on the private copy, the checks before
    the compile (violations, note); after(private copy, keep folder): the checks on what the
    compile (nvcc --keep --keep-dir keep) made there."""

    def __init__(self, builder, static):
        self.builder, self.static = builder, static
        self._host_cpp = self._fingerprint = None

    def _nvcc(self):
        flags = self.builder.nvcc_flags()
        if not self.builder.nvcc or not flags:  # never a quiet pass: the machine cannot grade
            raise InfraError("the Makefile's NVFLAGS could not be read: the header and inline-assembly checks "
                             "cannot run")
        return [self.builder.nvcc, *flags]

    def _context(self, priv_src, nvcc, keep, work):
        if self._host_cpp is None:  # the same for every source of this builder: read once
            self._host_cpp = _host_cpp(self.builder, nvcc, priv_src, work) or ()
        ctx = HeaderContext(priv_src, os.path.join(self.builder.root, "common"),
                            self.builder.system_dirs(self._host_cpp), self.static["lab_headers"])

        def origins(refused):
            return _origins(self.builder, nvcc, priv_src, keep, work, refused)
        return types.SimpleNamespace(static=self.static, priv_src=priv_src, headers=ctx, origins=origins)

    def __call__(self, priv_src):
        nvcc = self._nvcc()
        os.makedirs(self.builder.work, exist_ok=True)
        work = tempfile.mkdtemp(prefix="source-check-", dir=self.builder.work)
        try:
            notes = []
            deps, stop = _dependencies(self.builder, nvcc, priv_src, work, notes)
            if stop:
                return stop, ""
            c = self._context(priv_src, nvcc, None, work)
            return registry.run("nvcc", "dependencies", deps, c), "; ".join(notes)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def fingerprint(self):
        """What the checks after the compile depend on besides its files: the static settings
        and the checks' own code (a reused build's verdict is kept only while it is the same)."""
        if self._fingerprint is None:
            h = hashlib.sha256(json.dumps(self.static, sort_keys=True, default=str).encode())
            here = os.path.dirname(os.path.abspath(__file__))
            for name in sorted(os.listdir(here)):
                if name.endswith(".py"):
                    with open(os.path.join(here, name), "rb") as f:
                        h.update(f.read())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def compile(self, priv_src, keep, obj):
        """Compiles priv_src into obj as the Makefile does (nvcc and NVFLAGS, in the course's
        root), keeping nvcc's files in keep, and runs after() on them: (the compile's proc
        result, violations, note); no violations and no note when it did not compile."""
        r = proc.run(self._nvcc() + ["--keep", "--keep-dir", keep, "-c", priv_src, "-o", obj], self.builder.timeout,
                     cwd=self.builder.root)
        if r.timed_out or r.returncode != 0:
            return r, [], ""
        return (r, *self.after(priv_src, keep))

    def after(self, priv_src, keep):
        """(violations, note) of the checks on the files the compile kept in keep."""
        nvcc = self._nvcc()
        c = self._context(priv_src, nvcc, keep, keep)
        violations, notes = [], []
        ptx = sorted(glob.glob(os.path.join(keep, "*.ptx")))
        if not ptx:
            notes.append("nvcc kept no PTX: the device-clock check was not run")
        for path in ptx:
            registry.run("nvcc", "ptx", _read(path), c, violations)
        for pre in sorted(glob.glob(os.path.join(keep, "*.cpp4.ii"))):
            registry.run("nvcc", "host_preprocessed", _read(pre), c, violations)
        translated = sorted(glob.glob(os.path.join(keep, "*.cudafe1.cpp")))
        if not translated:
            notes.append("nvcc kept no host translation (cudafe++): inline-assembly check skipped")
        for path in translated:
            registry.run("nvcc", "host_translation", _read(path), c, violations)
        return violations, "; ".join(notes)


def precheck(builder, static):
    """The nvcc checks of builder's builds (Precheck), for Builder.build."""
    return Precheck(builder, static)


def source_checks(builder, priv_src, static, obj=None):
    """(violations, note): every check of this module on priv_src, which is compiled once for
    them in a scratch folder of builder's work folder (obj: where to keep the object when it
    compiled, whatever the checks found). A compile that fails is noted, not a violation: the build
    shows why. Raises InfraError when the Makefile's NVFLAGS cannot be read."""
    pre = Precheck(builder, static)
    violations, note = pre(priv_src)
    if violations:
        return violations, note
    work = tempfile.mkdtemp(prefix="source-check-", dir=builder.work)
    try:
        keep = os.path.join(work, "keep")
        os.makedirs(keep)
        out = os.path.join(keep, "scan.o")
        r, found, after_note = pre.compile(priv_src, keep, out)
        if r.timed_out:
            return [f"nvcc's compile of the source timed out after {builder.timeout:g} s"], note
        if r.returncode != 0:
            return [], "; ".join(n for n in (note, "nvcc's compile failed (the build shows why): the checks on "
                                             "what it makes were not run") if n)
        if obj:
            os.replace(out, obj)
        return found, "; ".join(n for n in (note, after_note) if n)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _host_cpp(builder, nvcc, priv_src, work):
    """The host side's preprocessor command in nvcc's plan for priv_src (nvcc --dryrun, which runs
    nothing), whose include folders the header check classifies by; None when the plan shows none."""
    r = proc.run(nvcc + ["--dryrun", "-c", priv_src, "-o", os.path.join(work, "scan.o")], builder.timeout,
                 cwd=builder.root)
    for ln in (r.stderr + "\n" + r.stdout).splitlines():
        if not ln.startswith("#$ ") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", ln[3:].strip()):
            continue  # not a command, or nvcc's environment settings
        try:
            cmd = shlex.split(ln[3:].strip())
        except ValueError:
            return None
        if "-E" in cmd and not any(t.startswith("-D__CUDA_ARCH__=") for t in cmd):
            return cmd
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


def _origins(builder, nvcc, priv_src, keep, work, refused):
    """include_origins for the refused headers: from the preprocessed output the compile kept in
    keep (None before the compile), and the device side's (nvcc -E) for what that does not
    explain."""
    origins = {}
    kept = sorted(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".ii")) if keep else []
    for pre in kept:
        for k, v in include_origins(_read(pre), priv_src).items():
            origins.setdefault(k, v)
    if any(os.path.realpath(d) not in origins for d in refused):
        dev = os.path.join(work, "device.ii")
        r = proc.run(nvcc + ["-E", priv_src, "-o", dev], builder.timeout, cwd=builder.root)
        if r.returncode == 0 and os.path.exists(dev):
            for k, v in include_origins(_read(dev), priv_src).items():
                origins.setdefault(k, v)
    return origins
