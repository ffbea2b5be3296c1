"""Private builds of one scan.cu (Builder), and what the compiler's messages mean.

The student's scan.cu is copied into a folder of the grader's work directory and compiled there
through the Makefile's `lab-binary` rule (the same flags as `make run`, linked with the
grader-owned harness objects and the lab's course-owned descriptor, common/course/NN_name.c).
Nothing is ever written into the student's folder, and only that one file is used: a header or a
.cu next to it cannot replace the harness. The static checks are the package checks/; the build
runs the ones on the source as its precheck, and reads the toolchain's flags and include
folders for them (nvcc_flags, cpu_flags, system_dirs).

A shared build cache (LAB_GRADER_CACHE, or the cache argument): the harness objects and the
reference builds of one course tree go to <cache>/common-<mode>[-<ARCH>]-<key>, key a hash of the
course's sources (common/, the Makefile, solutions/), the tree's path, the toolchain and, in GPU
mode, the GPU architectures built for (the Makefile's ARCH), so that every grading session of a
machine (each --gpus worker, each test) builds them once; a lock file serialises the build, and a
later session finds the objects up to date and the references kept (Builder.build reuse).
Without it, they live in the session's own work folder (common-<mode>[-<ARCH>]).

Size: a little over 400 lines: the builds, the reuse of a build and the shared cache are one
job (what makes a build the same build), and the compiler-message readers say what a failed one
means in the same terms.
"""
import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import threading

from . import proc
from .checks.elf import imported_names


# A student release (tools/student_release.py) has no solutions/: each reference is its object as
# compiled, grader/references/<mode>/<lab>.o, which the reference build links instead.
REFERENCE_OBJECTS = os.path.join("grader", "references")


def reference_source(root, lab, mode):
    """What lab's reference is built from: solutions/<lab>/scan.cu, else a student release's
    compiled object of it; None when the tree has neither."""
    for path in (os.path.join(root, "solutions", lab, "scan.cu"),
                 os.path.join(root, REFERENCE_OBJECTS, mode, lab + ".o")):
        if os.path.isfile(path):
            return path
    return None


def course_key(root, mode, nvcc, arch=""):
    """A hash of what the harness objects and reference builds of root depend on: every file of
    common/, the Makefile, solutions/*/scan.cu and a student release's reference objects (by
    content), root's real path, the mode, the nvcc found and the GPUs built for (the Makefile's
    ARCH), so that a shared cache never mixes two trees, toolchains or GPU architectures. CPU
    mode's builds never run nvcc (the Makefile's CPU mode compiles with the host compiler), so a
    CPU-mode key leaves nvcc out: a grade with nvcc installed and one with it hidden share them."""
    nvcc = nvcc if mode != "cpu" else None
    h = hashlib.sha256(f"{os.path.realpath(root)}\0{mode}\0{nvcc}\0{arch}".encode())
    files = [os.path.join(root, "Makefile")]
    for top in ("common", "solutions", REFERENCE_OBJECTS):
        for d, subs, names in os.walk(os.path.join(root, top)):
            subs.sort()
            files += [os.path.join(d, n) for n in sorted(names)
                      if top == "common" or n == "scan.cu" or n.endswith(".o")]
    for f in files:
        h.update(os.path.relpath(f, root).encode() + b"\0")
        h.update(sha256_file(f).encode() if os.path.isfile(f) else b"none")
    return h.hexdigest()[:16]


class InfraError(Exception):
    """The grading machine cannot grade (no nvcc, no GPU, the harness does not build): never a
    student's score."""


_HELD = {}  # the real path of a work folder -> the open lock file this process holds on it


def hold_work(work):
    """Holds <work>/grade.lock for the rest of this process: two grade.py with one work folder
    would build the harness, the labs and the references into the same files at once. A second
    hold in the same process is a no-op. Raises InfraError, naming the other process, when
    another process holds it; where the file system has no locks, grading goes on without one."""
    key = os.path.realpath(work)
    if key in _HELD:
        return
    f = open(os.path.join(work, "grade.lock"), "a+", encoding="utf-8")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        who = f.read().strip()
        f.close()
        raise InfraError(f"another grade.py ({who or 'pid unknown'}) is using the work folder {work}: wait "
                         f"for it to end, or give this one a folder of its own (--work DIR)")
    except OSError:  # a file system without locks (an NFS mount without lockd): grade unguarded
        f.close()
        return
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}\n")
    f.flush()
    if not _HELD:
        atexit.register(lambda: [h.close() for h in _HELD.values()])  # released as the process ends
    _HELD[key] = f


def find_nvcc():
    """The nvcc the Makefile would use, or None."""
    env = os.environ.get("NVCC")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.access(default, os.X_OK) else None


def find_tool(name, nvcc=None):
    """A CUDA tool (compute-sanitizer) on PATH or beside nvcc, or None."""
    env = os.environ.get(name.upper().replace("-", "_"))
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which(name)
    if found:
        return found
    for d in filter(None, [os.path.dirname(nvcc) if nvcc else None, "/usr/local/cuda/bin"]):
        cand = os.path.join(d, name)
        if os.access(cand, os.X_OK):
            return cand
        cand = os.path.join(os.path.dirname(d), "compute-sanitizer", name)
        if os.access(cand, os.X_OK):
            return cand
    return None


class NoGpu(InfraError):
    """No usable CUDA device (grading may go on in CPU mode)."""


class BuildResult:
    """ok, binary, obj, message (the compiler's errors), seconds; violations: what the source
    checks run before compiling found (the build was then skipped); note: the checks that
    could not run."""

    def __init__(self, ok, binary=None, obj=None, message="", seconds=0.0, violations=(), note=""):
        self.ok = ok
        self.binary = binary
        self.obj = obj
        self.message = message
        self.seconds = seconds
        self.violations = list(violations)
        self.note = note


def sha256_file(path):
    """The SHA-256 of a file's bytes, as hex (build stamps, reference binaries, archives)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def compiler_message(text, private_dir, shown_as, limit=25):
    """The compiler's error lines, with the private path replaced by the student's file name."""
    d = private_dir.rstrip("/") + "/"
    text = text.replace(d + "scan.cu", shown_as).replace(d + "scan.cpu.cpp", shown_as)
    text = text.replace(d, os.path.dirname(shown_as) + "/" if os.path.dirname(shown_as) else "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if re.search(r"error|Error|undefined reference|multiple definition|"
                                            r"not found|No such file|cannot find|fatal", ln)]
    if not keep:
        keep = lines
    if len(keep) > limit:
        keep = keep[:limit] + [f"... and {len(keep) - limit} more lines"]
    return "\n".join(keep)


def _names_and(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def contract_message(text, lab, shown_as):
    """One line that says how a scan.cu breaks its lab's contract with the course
    (common/course/<lab>.h and the descriptor common/course/<lab>.c), read from the compiler's and
    linker's output, or "" when the errors are about something else: the descriptor names an
    entry point scan.cu does not define (undefined reference), it includes the lab's header by its
    old name (labs/NN_name.h, before the headers moved to course/), scan.cu still defines LAB (the
    descriptor's, now), it defines an entry point as static, or it defines a function the
    descriptor's file defines (lab 10's apps_scan)."""
    name = os.path.basename(shown_as) or "scan.cu"
    header, desc = f"common/course/{lab}.h", f"common/course/{lab}.c"
    old = re.search(r'(?:fatal error: |cannot open source file ")labs/([0-9][0-9]_[A-Za-z0-9_]+)\.h', text)
    if old:  # a scan.cu written before the course's headers moved to common/course/
        return (f'{name} includes "labs/{old.group(1)}.h", the old name of the course\'s header: write '
                f'#include "course/{old.group(1)}.h" instead (the header moved; nothing else changed)')
    lines = text.splitlines()
    missing = []
    for ln in lines:
        m = re.search(r"undefined reference to [`'‘]([A-Za-z_][A-Za-z0-9_]*)['’]", ln)
        if m and f"course/{lab}.o" in ln and m.group(1) not in missing:
            missing.append(m.group(1))
    if missing:
        return f"{name} must define {_names_and(missing)} (declared in {header})"
    if any(re.search(r"multiple definition of [`'‘]LAB['’]", ln) for ln in lines):
        return (f"{name} must not define LAB: the course's descriptor ({desc}) does; delete the "
                f"VARIANTS table and LAB from {name}")
    static = []
    for ln in lines:
        m = re.search(r"[`'‘\"]?(?:lab_result|size_t)? ?([A-Za-z_][A-Za-z0-9_]*)\([^)]*\)?[`'’\"]? "
                      r"was declared [`'‘\"]?extern[`'’\"]? and later [`'‘\"]?static", ln)
        if m and m.group(1) not in static:
            static.append(m.group(1))
    if static:
        return (f"{name} must define {_names_and(static)} without static: {header} declares "
                f"{'them' if len(static) > 1 else 'it'} for the course's descriptor of the lab")
    # a function the course's side of the lab defines (lab 10's apps_scan), defined again
    for ln in lines:
        m = re.search(r"multiple definition of [`'‘]([A-Za-z_][A-Za-z0-9_]*)['’]", ln)
        before = ln.split("multiple definition", 1)[0]
        if m and (re.search(rf"(^|[\s/]){re.escape(lab)}\.c:", before) or f"course/{lab}.o" in before):
            return (f"{name} must not define {m.group(1)}: the course defines it ({desc}, "
                    f"declared in {header}); call it instead")
    return ""


def _prechecked(precheck, priv_src):
    """(a failed BuildResult or None, note) of precheck(priv_src) -> (violations, note[, error]):
    violations refuse the build; so does an error, what the real compiler would refuse, found
    without it (the build fails with that message)."""
    if not precheck:
        return None, ""
    violations, note, *error = precheck(priv_src)
    if violations:
        return BuildResult(False, violations=violations, note=note), note
    if error and error[0]:
        return BuildResult(False, message=error[0], note=note), note
    return None, note


def _private_source(src, out_dir):
    """Where build() copies src: scan.cu, or for a compiled object (a release's reference, which
    make lab-binary links as it is) given.o."""
    return os.path.join(out_dir, "given.o" if src.endswith(".o") else "scan.cu")


def work_tag(name):
    """A folder name for a student's private build and unpack folders: the name with anything
    but letters, digits, '-', '_' and '.' replaced, plus a hash of the name when that changed
    it, so that 'a b' and 'a_b' never share a folder."""
    tag = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")
    if tag != name or not tag:
        tag = (tag or "submission") + "-" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return tag


class Builder:
    """Builds lab binaries with `make lab-binary` from the course root into work/.

    mode "gpu" is the normal build; mode "cpu" passes CPU=1 (the CPU mode of the Makefile)."""

    def __init__(self, root, work, mode="gpu", timeout=240, make="make", cache=None):
        self.root = root
        self.work = os.path.abspath(work)
        self.mode = mode
        self.timeout = timeout
        self.make = make
        self.nvcc = find_nvcc()
        cache = cache or os.environ.get("LAB_GRADER_CACHE")
        self.shared = bool(cache)
        # GPU mode: the harness and the references are built for the Makefile's ARCH (the
        # environment's, or the GPU's that nvidia-smi reports), so each ARCH has its own folder:
        # objects made for other GPUs (another ARCH, a node of another kind sharing the cache)
        # are never linked into a build for this one
        self.arch = self._read_arch() if mode == "gpu" else ""
        tag = "-" + re.sub(r"[^A-Za-z0-9]+", "_", self.arch).strip("_") if self.arch else ""
        self.common = (os.path.join(os.path.abspath(cache),
                                    f"common-{mode}{tag}-{course_key(root, mode, self.nvcc, self.arch)}")
                       if cache else os.path.join(self.work, f"common-{mode}{tag}"))
        self._lock = threading.Lock()
        self._nvflags = self._own_dirs = self._cpuflags = None

    def _read_arch(self):
        """The Makefile's ARCH here (sm_90, or a list: "sm_80 sm_90"); '' when make cannot say
        (a bad ARCH: the build then fails with the Makefile's message). Read before self.common
        exists, so without _make_args (its BUILD does not change ARCH)."""
        return " ".join(self._make_print("$(ARCH)", [self.make, "--no-print-directory", "-C", self.root, "CPU=0"]))

    def _make_print(self, expression, make=None):
        """The words the Makefile's expression (e.g. $(NVFLAGS)) expands to, read with make
        --eval as make (default: _make_args(), the builds' own command) evaluates it; [] when
        make cannot say."""
        r = proc.run((make or self._make_args()) + ["-s", "--eval", f"lab-print: ; @echo {expression}", "lab-print"],
                     60)
        return shlex.split(r.stdout.strip()) if r.returncode == 0 and not r.timed_out else []

    def common_objects(self):
        """The harness objects `prepare` builds (the Makefile puts CPU-mode builds under cpu/)."""
        d = os.path.join(self.common, "cpu", "common") if self.mode == "cpu" else os.path.join(self.common, "common")
        try:
            return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".o"))
        except OSError:
            return []

    def harness_imports(self):
        """The C-linkage names the harness objects call (nm -u), so a lab that defines one of them
        replaces a function the harness relies on; None when they cannot be read. Read once."""
        if not hasattr(self, "_imports"):
            self._imports = imported_names(self.common_objects())
        return self._imports

    def harness_headers(self):
        """The names of the files in the course's common/ folder (the harness's headers among
        them): the first-pass text check refuses an #include of one but lab.h and cuda_check.h."""
        d = os.path.join(self.root, "common")
        try:
            names = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f))]
        except OSError:
            return []
        # CPU mode's runtime (common/cpu): its CUDA stand-ins are the toolkit's names, the rest
        # (lab_cpu.h, banks.h) the harness's own, by either spelling
        cpu = os.path.join(d, "cpu")
        for f in (os.listdir(cpu) if os.path.isdir(cpu) else []):
            if os.path.isfile(os.path.join(cpu, f)):
                names.append("cpu/" + f)
                if not f.startswith("cuda"):
                    names.append(f)
        return sorted(set(names))

    def cpu_flags(self):
        """(host compiler, the Makefile's CPU_CXXFLAGS) for CPU mode's builds, read with make
        --eval like nvcc_flags, or None when make cannot say. Read once."""
        with self._lock:
            if self._cpuflags is None:
                toks = self._make_print("$(CXX) $(CPU_CXXFLAGS)")
                self._cpuflags = (toks[0], toks[1:]) if len(toks) > 1 else False
            return self._cpuflags or None

    def nvcc_flags(self):
        """The Makefile's NVFLAGS for this build (as `make lab-binary` passes them to nvcc, read
        with make --eval), or None when make cannot say. Read once."""
        with self._lock:
            if self._nvflags is None:
                flags = self._make_print("$(NVFLAGS)")
                self._nvflags = flags if flags else False
            return self._nvflags or None

    def system_dirs(self, command):
        """The include folders of the host preprocessor command nvcc runs (its -I, -isystem and
        -idirafter folders; without one, the CUDA include folders beside nvcc) and the host
        compiler's own (<compiler> -x c++ -E -v)."""
        toks = list(command or [])
        dirs = []
        for i, t in enumerate(toks):
            if t in ("-isystem", "-idirafter", "-I") and i + 1 < len(toks):
                dirs.append(toks[i + 1])
            elif t.startswith("-I") and len(t) > 2:
                dirs.append(t[2:])
        if not toks:
            inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(self.nvcc))), "include")
            dirs = [inc, os.path.join(inc, "cccl")]
        compiler = toks[0] if toks else (shutil.which("g++") or shutil.which("c++") or "gcc")
        with self._lock:
            if self._own_dirs is None:
                own = []
                std = [t for t in toks if t.startswith("-std=")]
                r = proc.run([compiler, "-x", "c++", *std, "-E", "-v", "/dev/null"], 60)
                inside = False
                for ln in (r.stderr + "\n" + r.stdout).splitlines():
                    if ln.startswith("#include ") and "search starts here" in ln:
                        inside = True
                    elif ln.startswith("End of search list"):
                        inside = False
                    elif inside and ln.startswith(" "):
                        own.append(ln.strip().split(" (framework directory)")[0])
                self._own_dirs = own
            own = list(self._own_dirs)
        return [os.path.join(self.root, d) for d in dirs] + own

    def _make_args(self):
        # V=1: the commands as make runs them, in the build log a failed build shows
        # PYTHON: CPU mode's rewrite.py runs under the grader's own interpreter (never a shim's)
        args = [self.make, "--no-print-directory", "-C", self.root, "BUILD=" + self.common, "V=1",
                "PYTHON=" + sys.executable]
        if self.nvcc:
            args.append("NVCC=" + self.nvcc)
        if self.mode == "cpu":
            # BANKS=0: no bank-conflict counting hooks (GCC's ThreadSanitizer instrumentation adds
            # a constructor to the object, which the static checks rightly refuse; graded runs
            # never count banks)
            args += ["CPU=1", "BANKS=0"]
        else:
            args.append("CPU=0")  # never let the Makefile switch to CPU mode on its own
        return args

    def prepare(self):
        """Builds the harness objects once; raises InfraError when that is impossible."""
        if self.mode == "gpu" and not self.nvcc:
            raise InfraError("nvcc not found: install the CUDA toolkit or set NVCC=/path/to/nvcc")
        if not shutil.which(self.make):
            raise InfraError(f"'{self.make}' not found: install make")
        if not shutil.which("objdump"):
            raise InfraError("objdump not found (binutils): the static checks read every object with it")
        os.makedirs(self.common, exist_ok=True)
        with self.locked("common"):
            r = proc.run(self._make_args() + ["lab-common"], self.timeout)
        if r.timed_out or r.returncode != 0:
            why = "timed out" if r.timed_out else compiler_message(r.stderr + r.stdout, self.common, "")
            raise InfraError(f"the grader's harness does not build ({self.mode} mode): {why}")

    @contextlib.contextmanager
    def locked(self, name):
        """Holds an exclusive lock on <common>/<name>.lock when the build folder is shared (one
        session builds, the others wait and then find it built); nothing otherwise."""
        if not self.shared:
            yield
            return
        with open(os.path.join(self.common, name + ".lock"), "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX)
            except OSError as e:  # ENOLCK: a network file system without a lock service
                raise InfraError(f"the shared build cache {os.path.dirname(self.common)} cannot be locked "
                                 f"({e.strerror}): point LAB_GRADER_CACHE (or the config's slurm.cache) at a "
                                 "folder whose file system has locks, or set slurm.cache to false") from e
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def reference_dir(self, lab, work):
        """Where lab's reference is built: in the shared cache (beside the harness objects it
        links) or in the session's work folder."""
        return os.path.join(self.common, "ref", lab) if self.shared else os.path.join(work, "ref-" + self.mode, lab)

    def descriptor_object(self, lab):
        """The object of lab's course-owned descriptor (common/course/<lab>.c) that `prepare`
        builds and `make lab-binary` links."""
        top = os.path.join(self.common, "cpu") if self.mode == "cpu" else self.common
        return os.path.join(top, "common", "course", lab + ".o")

    def _build_key(self, src, lab, bases=None):
        h = hashlib.sha256(sha256_file(src).encode())
        h.update(os.fsencode("\0".join(self._make_args() + [lab] + self._base_args(bases))))
        for o in self.common_objects() + [self.descriptor_object(lab)]:
            h.update(sha256_file(o).encode())
        for header in self._lab_headers(lab):  # what scan.cu includes of the course's
            h.update(sha256_file(header).encode() if os.path.isfile(header) else b"none")
        for b in sorted(bases or {}):
            h.update(sha256_file(bases[b]).encode() if bases[b] else b"stub")
        return h.hexdigest()

    def _lab_headers(self, lab):
        """The course's headers a lab's scan.cu includes: lab.h, cuda_check.h and its own
        (a changed declaration must rebuild a reused build)."""
        common = os.path.join(self.root, "common")
        return [os.path.join(common, "lab.h"), os.path.join(common, "cuda_check.h"),
                os.path.join(common, "course", lab + ".h")]

    @staticmethod
    def _base_args(bases):
        """make's LAB_BASES for bases ({lab: its scan.o, or None for the course's stub})."""
        given = " ".join(f"{b}={o}" for b, o in sorted((bases or {}).items()) if o)
        return ["LAB_BASES=" + given] if bases else []

    def build(self, src, out_dir, shown_as="scan.cu", reuse=False, precheck=None, *, lab, bases=None, banks=False):
        """Copies src into out_dir and builds out_dir/scan, linked with lab's descriptor; returns
        a BuildResult. lab: the lab id ("03_kogge_stone"), whose descriptor the binary links. A
        missing, unreadable or non-regular source is a failed build, not an exception.
        reuse=True keeps a successful build of the same source with the same harness objects,
        descriptor and flags whose object and binary are unchanged since (the reference
        solutions, and the nvcc build CPU mode only reads the symbols of; never a submission's
        binary, which is always rebuilt). precheck(private copy) -> (violations, note[, error]) runs
        on the private copy just before it is compiled (also when a build is reused); a precheck
        with after() (checks/nvcc.py: Precheck) compiles the source itself (its compile(), which
        keeps nvcc's files in out_dir/keep and runs after() on them) before make links that
        object (a reused build keeps what they said, out_dir/after.json, valid while
        precheck.fingerprint() is the same); violations
        skip the build, and so does an error (what the GPU's compiler would refuse, found without
        it: the build fails with that message). A build that breaks the lab's contract with the course (an entry point
        missing or static, LAB defined) fails with a message whose first line says so
        (contract_message). bases: for a lab built on others (lab 10), {lab: the object of that
        lab to link (scan.o as compiled), or None: the course's stub, whose entry points return
        LAB_NOT_IMPLEMENTED}. banks (CPU mode): the lab compiled with CPU mode's counting hooks
        (BANKS=1: its algorithm case's profile, stage_build's profile build; the hooks add a
        constructor, so its object is never the one the static checks read)."""
        os.makedirs(out_dir, exist_ok=True)
        stamp = os.path.join(out_dir, "build.stamp")
        binary, obj = os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")
        priv_src = _private_source(src, out_dir)
        key = None
        if reuse and os.path.isfile(src) and not os.path.islink(src):
            key = self._build_key(src, lab, bases)
            kept = self._kept(key, src, out_dir, precheck)
            if kept is not None:
                if kept.ok:
                    self._name_judge(kept.binary, lab)
                return kept
        for stale in (stamp, priv_src, binary, obj, _private_source("given.o", out_dir)):
            if os.path.lexists(stale):
                os.remove(stale)
        if os.path.islink(src):
            return BuildResult(False, message=f"{shown_as} is a symbolic link: submit the file itself")
        if not os.path.isfile(src):
            return BuildResult(False, message=f"{shown_as} is missing")
        shutil.copyfile(src, priv_src)
        refused, note = _prechecked(precheck, priv_src)
        if refused is not None:
            return refused
        lab_src, seconds = priv_src, 0.0
        keep = os.path.join(out_dir, "keep")
        if os.path.lexists(keep):
            shutil.rmtree(keep)
        if getattr(precheck, "after", None) and not src.endswith(".o"):
            # nvcc's checks on what it makes: one compile, its files kept for the checks after it
            os.makedirs(keep)
            compiled = os.path.join(keep, "scan.o")
            r, found, after_note = precheck.compile(priv_src, keep, compiled)
            seconds = r.seconds
            note = "; ".join(n for n in (note, after_note) if n)
            failed = self._failed(r, None, out_dir, shown_as, lab, seconds)
            if failed is None and found:
                failed = BuildResult(False, violations=found, note=note, seconds=seconds)
            if failed is not None:
                shutil.rmtree(keep, ignore_errors=True)
                return failed
            lab_src = compiled  # make lab-binary links it as it is
        make = self._make_args()
        if banks and self.mode == "cpu":
            make = [a for a in make if a != "BANKS=0"] + ["BANKS=1"]
        r = proc.run(make + ["lab-binary", "LAB_SRC=" + lab_src, "LAB_OUT=" + binary,
                             "LAB_ID=" + lab] + self._base_args(bases), self.timeout)
        seconds += r.seconds
        failed = self._failed(r, binary, out_dir, shown_as, lab, seconds)
        if lab_src != priv_src:
            shutil.rmtree(keep, ignore_errors=True)
        if failed is not None:
            return failed
        if key is not None:
            if lab_src != priv_src:  # what the checks after the compile said, for a reuse (_kept)
                with open(os.path.join(out_dir, "after.json"), "w") as f:
                    json.dump({"checks": precheck.fingerprint(), "violations": [], "note": note}, f)
            with open(stamp, "w") as f:
                f.write(f"{key} {sha256_file(obj)} {sha256_file(binary)}\n")
        self._name_judge(binary, lab)
        return BuildResult(True, binary=binary, obj=binary + ".o", seconds=seconds, note=note)

    def _failed(self, r, binary, out_dir, shown_as, lab, seconds):
        """The failed BuildResult of a compile or make run r (the compiler's message, and what it
        says of the lab's contract with the course), or None when it made its output (binary,
        when given)."""
        if r.timed_out:
            return BuildResult(False, message=f"the build timed out after {self.timeout:g} s", seconds=seconds)
        if r.returncode == 0 and (binary is None or os.path.exists(binary)):
            return None
        output = r.stderr + "\n" + r.stdout
        message = compiler_message(output, out_dir, shown_as)
        why = contract_message(output, lab, shown_as)
        return BuildResult(False, message=why + "\n" + message if why else message, seconds=seconds)

    def judge_binary(self, lab):
        """lab's judge, which `prepare` builds (Makefile: build/judge/<lab>/judge): the harness
        and the lab's descriptor, no lab code; every graded run of the lab's binaries is judged
        by it (common/harness/port.h)."""
        top = os.path.join(self.common, "cpu") if self.mode == "cpu" else self.common
        return os.path.join(top, "judge", lab, "judge")

    def _name_judge(self, binary, lab):
        """Writes beside binary the path of its judge (rundir.judge_for reads it)."""
        with open(binary + ".judge", "w") as f:
            f.write(self.judge_binary(lab) + "\n")

    @staticmethod
    def _kept(key, src, out_dir, precheck):
        """The BuildResult of the build in out_dir when its stamp says it is of src under key
        (Builder._build_key) and its object, binary and private copy are unchanged since, after
        precheck on the private copy; None when it must be built again."""
        stamp = os.path.join(out_dir, "build.stamp")
        binary, obj = os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")
        priv_src = _private_source(src, out_dir)
        if not os.path.isfile(priv_src):
            return None
        try:
            with open(stamp) as f:
                old = f.read().split()
            if old == [key, sha256_file(obj), sha256_file(binary)] and sha256_file(priv_src) == sha256_file(src):
                refused, note = _prechecked(precheck, priv_src)
                if refused is None and getattr(precheck, "after", None):
                    # the checks after the compile passed it (a build they refuse is not kept):
                    # still so unless the checks or their settings changed since
                    with open(os.path.join(out_dir, "after.json")) as f:
                        after = json.load(f)
                    if after.get("checks") != precheck.fingerprint():
                        return None
                    note = after.get("note", note)
                return refused or BuildResult(True, binary=binary, obj=obj, note=note)
        except (OSError, ValueError):
            pass
        return None
