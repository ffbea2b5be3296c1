"""Private builds of one scan.cu, and the static checks on its source and object.

The student's scan.cu is copied into a folder of the grader's work directory and compiled there
through the Makefile's `lab-binary` rule (the same flags as `make run`, linked with the
grader-owned harness objects and the lab's course-owned descriptor, common/labs/NN_name.c).
Nothing is ever written into the student's folder, and only that one file is used: a header or a
.cu next to it cannot replace the harness.
"""
import bisect
import glob
import hashlib
import os
import re
import shlex
import shutil
import tempfile
import threading

from . import proc


class InfraError(Exception):
    """The grading machine cannot grade (no nvcc, no GPU, the harness does not build): never a
    student's score."""


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
    (common/labs/<lab>.h and the descriptor common/labs/<lab>.c), read from the compiler's and
    linker's output, or "" when the errors are about something else: the descriptor names an
    entry point scan.cu does not define (undefined reference), scan.cu still defines LAB (the
    descriptor's, now), it defines an entry point as static, or it defines a function the
    descriptor's file defines (lab 10's apps_scan)."""
    name = os.path.basename(shown_as) or "scan.cu"
    header, desc = f"common/labs/{lab}.h", f"common/labs/{lab}.c"
    lines = text.splitlines()
    missing = []
    for ln in lines:
        m = re.search(r"undefined reference to [`'‘]([A-Za-z_][A-Za-z0-9_]*)['’]", ln)
        if m and f"labs/{lab}.o" in ln and m.group(1) not in missing:
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
        if m and (re.search(rf"(^|[\s/]){re.escape(lab)}\.c:", before) or f"labs/{lab}.o" in before):
            return (f"{name} must not define {m.group(1)}: the course defines it ({desc}, "
                    f"declared in {header}); call it instead")
    return ""


class Builder:
    """Builds lab binaries with `make lab-binary` from the course root into work/.

    mode "gpu" is the normal build; mode "cpu" passes CPU=1 (the CPU mode of the Makefile)."""

    def __init__(self, root, work, mode="gpu", timeout=240, make="make"):
        self.root = root
        self.work = os.path.abspath(work)
        self.mode = mode
        self.timeout = timeout
        self.make = make
        self.common = os.path.join(self.work, "common-" + mode)
        self.nvcc = find_nvcc()
        self._lock = threading.Lock()
        self._nvflags = self._own_dirs = self._cpuflags = None

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
                r = proc.run(self._make_args() + ["-s", "--eval", "lab-print-cpuflags: ; @echo $(CXX) $(CPU_CXXFLAGS)",
                                                  "lab-print-cpuflags"], 60)
                toks = shlex.split(r.stdout.strip()) if r.returncode == 0 and not r.timed_out else []
                self._cpuflags = (toks[0], toks[1:]) if len(toks) > 1 else False
            return self._cpuflags or None

    def cpu_source_checks(self, priv_src, static):
        """(violations, note): CPU mode's checks on what the host compiler makes of the private
        copy priv_src, before it is compiled (cpu_checks.source_checks: every header it reads,
        #line directives, inline assembly in host code, clocks read by device asm). They need
        no nvcc: the same verdicts as source_checks on the GPU path."""
        from . import cpu_checks
        got = self.cpu_flags()
        if not got:
            raise InfraError("the Makefile's CPU_CXXFLAGS could not be read: CPU mode's static checks cannot run")
        cxx, flags = got
        os.makedirs(self.work, exist_ok=True)
        dirs = self._system_dirs([cxx] + cpu_checks._absolute_flags(flags, self.root))
        return cpu_checks.source_checks(self, priv_src, static, cxx, flags, dirs, self.timeout)

    def nvcc_flags(self):
        """The Makefile's NVFLAGS for this build (as `make lab-binary` passes them to nvcc, read
        with make --eval), or None when make cannot say. Read once."""
        with self._lock:
            if self._nvflags is None:
                r = proc.run(self._make_args() + ["-s", "--eval", "lab-print-nvflags: ; @echo $(NVFLAGS)",
                                                  "lab-print-nvflags"], 60)
                flags = shlex.split(r.stdout.strip()) if r.returncode == 0 and not r.timed_out else []
                self._nvflags = flags if flags else False
            return self._nvflags or None

    def _system_dirs(self, command):
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

    def source_checks(self, priv_src, static):
        """(violations, note): the checks on what the compiler makes of the private copy
        priv_src, run where it will be built, before it is: every header it reads (nvcc -M,
        check_headers, with the scan.cu line each came through when one is refused) and inline
        assembly in its host code (nvcc's host translation, check_host_asm). note names what
        could not run. Needs nvcc (a "gpu" Builder)."""
        flags = self.nvcc_flags()
        if not self.nvcc or not flags:  # never a quiet pass: the machine cannot grade
            raise InfraError("the Makefile's NVFLAGS could not be read: the header and inline-assembly checks "
                             "cannot run")
        os.makedirs(self.work, exist_ok=True)
        work = tempfile.mkdtemp(prefix="source-check-", dir=self.work)
        try:
            return self._source_checks(priv_src, static, [self.nvcc, *flags], work)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _host_steps(self, nvcc, priv_src, keep):
        """nvcc's commands (nvcc --dryrun) up to cudafe++, which writes the host translation
        (scan.cudafe1.cpp) into keep; None when the plan shows no cudafe++."""
        r = proc.run(nvcc + ["--dryrun", "--keep", "--keep-dir", keep, "-c", priv_src, "-o",
                             os.path.join(keep, "scan.o")], self.timeout, cwd=self.root)
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

    def _source_checks(self, priv_src, static, nvcc, work):
        notes = []
        keep = os.path.join(work, "keep")
        os.makedirs(keep)
        steps = self._host_steps(nvcc, priv_src, keep)
        host_cpp = None
        if steps:
            host_cpp = next((s for s in steps if "-E" in s and not any(t.startswith("-D__CUDA_ARCH__=") for t in s)), None)
        ctx = HeaderContext(priv_src, os.path.join(self.root, "common"), self._system_dirs(host_cpp),
                            static.get("lab_headers", ["lab.h", "cuda_check.h", "labs/*.h"]))
        violations = []
        # 1. every header the compiler reads, host and device side (nvcc -M)
        dep = os.path.join(work, "deps.d")
        r = proc.run(nvcc + ["-M", priv_src, "-MF", dep], self.timeout, cwd=self.root)
        if r.timed_out:
            return [f"nvcc -M (the list of the headers the source reads) timed out after {self.timeout:g} s"], ""
        if r.returncode != 0 or not os.path.exists(dep):
            # a source the preprocessor rejects does not build either; the build says why
            notes.append("nvcc -M failed: the header check was left to the build")
            deps = []
        else:
            with open(dep, encoding="utf-8", errors="replace") as f:
                deps = parse_dependencies(f.read(), self.root)
        pats = _header_patterns(static)
        refused = [d for d in deps if ctx.classify(d, pats)]
        # 2. the host translation (gcc -E of the host side, then cudafe++)
        translated = None
        if steps:
            env = dict(os.environ)
            bindir = os.path.dirname(os.path.realpath(self.nvcc))
            env["PATH"] = os.pathsep.join([bindir, os.path.join(os.path.dirname(bindir), "nvvm", "bin"),
                                           env.get("PATH", "")])
            for step in steps:
                r = proc.run(step, self.timeout, cwd=self.root, env=env)
                if r.timed_out:
                    return violations + [f"nvcc's host translation of the source timed out after "
                                         f"{self.timeout:g} s"], "; ".join(notes)
                if r.returncode != 0:
                    break
            else:
                name = os.path.splitext(os.path.basename(priv_src))[0]
                try:
                    with open(os.path.join(keep, name + ".cudafe1.cpp"), encoding="utf-8", errors="replace") as f:
                        translated = f.read()
                except OSError:
                    pass
        if refused:
            # which line of scan.cu each came through: the host side's preprocessed output (from
            # the steps above), and the device side's (nvcc -E) for what that does not explain
            origins = {}
            for pre in sorted(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".ii")):
                with open(pre, encoding="utf-8", errors="replace") as f:
                    for k, v in include_origins(f.read(), priv_src).items():
                        origins.setdefault(k, v)
            if any(os.path.realpath(d) not in origins for d in refused):
                dev = os.path.join(work, "device.ii")
                r = proc.run(nvcc + ["-E", priv_src, "-o", dev], self.timeout, cwd=self.root)
                if r.returncode == 0 and os.path.exists(dev):
                    with open(dev, encoding="utf-8", errors="replace") as f:
                        for k, v in include_origins(f.read(), priv_src).items():
                            origins.setdefault(k, v)
            violations += check_headers(deps, static, ctx, origins)
        # 3. clocks read in device code (the PTX)
        ptx = os.path.join(work, "scan.ptx")
        r = proc.run(nvcc + ["-ptx", priv_src, "-o", ptx], self.timeout, cwd=self.root)
        if r.returncode == 0 and os.path.exists(ptx):
            with open(ptx, encoding="utf-8", errors="replace") as f:
                violations += check_device_clocks(f.read(), priv_src)
        elif not r.timed_out:
            notes.append("nvcc -ptx failed (the build shows why): the device-clock check was not run")
        if translated is not None:
            for pre in sorted(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".cpp4.ii")):
                with open(pre, encoding="utf-8", errors="replace") as f:
                    violations += check_line_directives(f.read(), priv_src)
            violations += check_host_asm(translated, priv_src)
        elif not steps:
            notes.append("nvcc --dryrun shows no host translation (cudafe++): inline-assembly check skipped")
        elif not violations:
            # the same compiler on the same file: the build fails too, and shows the errors
            notes.append("nvcc's host translation failed (the build shows why): inline-assembly check not run")
        return violations, "; ".join(notes)

    def _make_args(self):
        args = [self.make, "--no-print-directory", "-C", self.root, "BUILD=" + self.common]
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
        r = proc.run(self._make_args() + ["lab-common"], self.timeout)
        if r.timed_out or r.returncode != 0:
            why = "timed out" if r.timed_out else compiler_message(r.stderr + r.stdout, self.common, "")
            raise InfraError(f"the grader's harness does not build ({self.mode} mode): {why}")

    def descriptor_object(self, lab):
        """The object of lab's course-owned descriptor (common/labs/<lab>.c) that `prepare`
        builds and `make lab-binary` links."""
        top = os.path.join(self.common, "cpu") if self.mode == "cpu" else self.common
        return os.path.join(top, "common", "labs", lab + ".o")

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
                os.path.join(common, "labs", lab + ".h")]

    @staticmethod
    def _base_args(bases):
        """make's LAB_BASES for bases ({lab: its scan.o, or None for the course's stub})."""
        given = " ".join(f"{b}={o}" for b, o in sorted((bases or {}).items()) if o)
        return ["LAB_BASES=" + given] if bases else []

    def build(self, src, out_dir, shown_as="scan.cu", reuse=False, precheck=None, *, lab, bases=None):
        """Copies src into out_dir and builds out_dir/scan, linked with lab's descriptor; returns
        a BuildResult. lab: the lab id ("03_kogge_stone"), whose descriptor the binary links. A missing, unreadable or non-regular source is a failed build, not an
        exception. reuse=True keeps a successful build of the same source with the same harness
        objects, descriptor and flags whose object and binary are unchanged since (the
        reference solutions, and the nvcc build CPU mode only reads the symbols of; never a
        submission's binary, which is always rebuilt). precheck(private copy) -> (violations,
        note) runs on the private copy just before it is compiled (also when a build is
        reused); violations skip the build. A build that breaks the lab's contract with the
        course (an entry point missing or static, LAB defined) fails with a message whose first
        line says so (contract_message). bases: for a lab built on others (lab 10), {lab: the
        object of that lab to link (scan.o as compiled), or None: the course's stub, whose entry
        points return LAB_NOT_IMPLEMENTED}."""
        os.makedirs(out_dir, exist_ok=True)
        stamp = os.path.join(out_dir, "build.stamp")
        binary, obj = os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")
        priv_src = os.path.join(out_dir, "scan.cu")
        key = None
        if reuse and os.path.isfile(src) and not os.path.islink(src) and os.path.isfile(priv_src):
            key = self._build_key(src, lab, bases)
            try:
                with open(stamp) as f:
                    old = f.read().split()
                if old == [key, sha256_file(obj), sha256_file(binary)] and sha256_file(priv_src) == sha256_file(src):
                    violations, note = precheck(priv_src) if precheck else ([], "")
                    if violations:
                        return BuildResult(False, violations=violations, note=note)
                    return BuildResult(True, binary=binary, obj=obj, note=note)
            except (OSError, ValueError):
                pass
        elif reuse and os.path.isfile(src) and not os.path.islink(src):
            key = self._build_key(src, lab, bases)
        if os.path.lexists(stamp):
            os.remove(stamp)
        for stale in (priv_src, os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")):
            if os.path.lexists(stale):
                os.remove(stale)
        if os.path.islink(src):
            return BuildResult(False, message=f"{shown_as} is a symbolic link: submit the file itself")
        if not os.path.isfile(src):
            return BuildResult(False, message=f"{shown_as} is missing")
        shutil.copyfile(src, priv_src)
        note = ""
        if precheck:
            violations, note = precheck(priv_src)
            if violations:
                return BuildResult(False, violations=violations, note=note)
        binary = os.path.join(out_dir, "scan")
        r = proc.run(self._make_args() + ["lab-binary", "LAB_SRC=" + priv_src, "LAB_OUT=" + binary,
                                          "LAB_ID=" + lab] + self._base_args(bases), self.timeout)
        if r.timed_out:
            return BuildResult(False, message=f"the build timed out after {self.timeout:g} s",
                               seconds=r.seconds)
        if r.returncode != 0 or not os.path.exists(binary):
            output = r.stderr + "\n" + r.stdout
            message = compiler_message(output, out_dir, shown_as)
            why = contract_message(output, lab, shown_as)
            return BuildResult(False, message=why + "\n" + message if why else message,
                               seconds=r.seconds)
        if key is not None:
            with open(stamp, "w") as f:
                f.write(f"{key} {sha256_file(obj)} {sha256_file(binary)}\n")
        return BuildResult(True, binary=binary, obj=binary + ".o", seconds=r.seconds, note=note)


# ---- static checks: the source text --------------------------------------------------------------
#
# In the order they run (grader/README.md, "Static checks", says what each refuses):
#   check_source           the text of scan.cu: a quick first pass (size, #line directives, the
#                          #include lines written out);
#   Builder.source_checks  what nvcc makes of the private copy, before it is compiled:
#       check_headers            every header the compiler reads (nvcc -M);
#       check_line_directives    file names changed by #line (gcc -E of the host side);
#       check_host_asm           inline assembly in nvcc's host translation (cudafe1.cpp);
#   check_object           the object: check_symbols (the allowlist, shadowing, a kernel),
#                          check_startup (code before or after main), check_sections (writable
#                          code, executable stack), check_machine_code (system-call
#                          instructions, calls through pointers);
#   check_binary           the CUDA runtime linked statically.

def _splice(text):
    """text with backslash-newline continuations joined (translation phase 2), and the
    positions in the joined text where they were."""
    joints, parts, pos, size = [], [], 0, 0
    for m in re.finditer(r"\\\r?\n", text):
        parts.append(text[pos:m.start()])
        size += m.start() - pos
        joints.append(size)
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts), joints


_RAW_RE = re.compile(r'(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(')


def _lex(text, keep_literals=False):
    """(clean, joints): text after translation phases 1-3 as far as the checks care: lines
    joined at backslash-newlines, each comment replaced by spaces (newlines kept), and the
    insides of string, character and raw string literals blanked (newlines kept; with
    keep_literals, left as they are: the same length either way). joints are the positions
    where lines were joined (see _splice)."""
    src, joints = _splice(text)
    out = []
    i, n = 0, len(src)

    def literal(a, b):
        body = src[a:b]
        return body if keep_literals else "".join(ch if ch == "\n" else " " for ch in body)

    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in src[i:j]))
            i = j
        elif c in "uULR" and _RAW_RE.match(src, i):
            m = _RAW_RE.match(src, i)
            close = ")" + m.group(1) + '"'
            j = src.find(close, m.end())
            end = n if j < 0 else j
            out.append(src[i:m.end()] + literal(m.end(), end) + src[end:end + len(close)])
            i = end + len(close) if j >= 0 else n
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j, n)
            closed = j < n and src[j] == c
            out.append(c + literal(i + 1, j) + (c if closed else ""))
            i = j + 1 if closed else j
        elif c.isdigit():  # a number, with digit separators (1'000) and exponents (1e+5)
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in "_.'" or
                             (src[j] in "+-" and src[j - 1] in "eEpP")):
                j += 1
            out.append(src[i:j])
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            out.append(src[i:j])  # an identifier: an R inside one starts no raw string
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), joints


def _unsplice(clean, joints):
    """clean (from _lex) with a newline put back at each joint, so its line numbers are the
    original's."""
    if not joints:
        return clean
    parts, pos = [], 0
    for j in joints:
        parts.append(clean[pos:j])
        parts.append("\n")
        pos = j
    parts.append(clean[pos:])
    return "".join(parts)


def _line_at(clean, joints):
    """A function from a position in clean (from _lex) to its line in the original text."""
    newlines = [i for i, ch in enumerate(clean) if ch == "\n"]

    def line_at(i):
        return bisect.bisect_left(newlines, i) + bisect.bisect_right(joints, i) + 1
    return line_at


def strip_comments(text):
    """text with C/C++ comments replaced by spaces and the insides of literals blanked (see
    _lex), line for line: a commented-out #include is not held against the student, and an
    identifier found in it is code."""
    clean, joints = _lex(text)
    return _unsplice(clean, joints)


_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def find_line(code, names):
    """The first line of code (as strip_comments returns it) where one of names occurs as a whole
    identifier, or None."""
    best = None
    for name in names:
        if not name:
            continue
        m = re.search(r"(?<![A-Za-z0-9_$])" + re.escape(name) + r"(?![A-Za-z0-9_$])", code)
        if m and (best is None or m.start() < best):
            best = m.start()
    return None if best is None else code.count("\n", 0, best) + 1


INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# #line 10 "x.h" and gcc's own markers (# 10 "x.h"): either would make the compiler's output
# attribute the lab's code to another file
EMBED_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*embed\b|(?<![A-Za-z0-9_$])__has_embed(?![A-Za-z0-9_$])', re.M)
LINE_DIRECTIVE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:line\b|[0-9])', re.M)

LIBRARY_WHY = "scan, sort and reduce libraries are not allowed"
HARNESS_WHY = ("the harness's own headers are not for lab code (lab.h, cuda_check.h and the lab's "
               "labs/NN_name.h are)")
PATH_WHY = "only scan.cu is graded; include no files by path"


def _include_message(spelled, quote, line, why):
    shown = f"<{spelled}>" if quote == "<" else f'"{spelled}"'
    where = f" (through line {line})" if line else ""
    return f"includes {shown}{where}: {why}"


def _header_patterns(static):
    return [re.compile(p) for p in static.get("forbidden_header_patterns", [])]


def check_source(text, static, harness_headers=()):
    """Violations (one line each) in the source text of a scan.cu: its size, #line directives
    (they would hide code from check_host_asm), and the #include lines written out literally
    (a library, a harness header, a file by path). A quick first
    pass with the line numbers at hand; check_headers, on the compiler's own list, is the
    authority (an #include hidden behind a macro is only seen there). harness_headers: the
    names of the harness's headers besides static's lab_headers (Builder.harness_headers)."""
    found = []
    limit = static.get("max_source_bytes", 0)
    if limit and len(text.encode("utf-8", errors="replace")) > limit:
        found.append(f"the source is over {limit} bytes")
    code, joints = _lex(text)
    named, _ = _lex(text, keep_literals=True)  # the same text with the header names left in
    line_at = _line_at(code, joints)
    pats = _header_patterns(static)
    for k, m in enumerate(LINE_DIRECTIVE_RE.finditer(code)):
        if k == 10:
            found.append("... and more #line directives")
            break
        found.append(f"#line directive (line {line_at(m.start())}): lab code may not renumber its "
                     f"lines (the checks need to know which code is scan.cu's)")
    for m in INCLUDE_RE.finditer(named):
        if not INCLUDE_RE.match(code, m.start()):
            continue  # inside a literal
        quote, inc = m.group(1), m.group(2).strip()
        line = line_at(m.start())
        base = inc.replace("\\", "/")
        if any(p.search(base) for p in pats):
            found.append(_include_message(inc, quote, line, LIBRARY_WHY))
        elif base.startswith("/") or ".." in base.split("/"):
            found.append(_include_message(inc, quote, line, PATH_WHY))
        elif base in set(harness_headers) - set(static.get("lab_headers", [])):
            found.append(_include_message(inc, quote, line, HARNESS_WHY))
    for m in EMBED_RE.finditer(code):  # C23/C++26 #embed reads a file into the program as it compiles
        found.append(f"#embed (line {line_at(m.start())}): lab code may not read files into the program")
        break
    m = re.search(r"(?<![A-Za-z0-9_$])lab_cpu(?![A-Za-z0-9_$])", code)
    if m:  # CPU mode's runtime: reaching into it could do there what CUDA code cannot
        found.append(f"names lab_cpu (line {line_at(m.start())}): that is CPU mode's own runtime, "
                     f"not CUDA; lab code may not use it")
    return found


# ---- static checks: the headers the compiler reads ------------------------------------------------

def parse_dependencies(text, cwd):
    """The prerequisites of the make rule(s) nvcc -M writes, as absolute paths (relative ones are
    taken from cwd), in order and without repeats."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    out, seen = [], set()
    for rule in text.splitlines():
        if ":" not in rule:
            continue
        # "target: a b\ c": the first unescaped ': ' ends the targets
        m = re.search(r"(?<!\\):(\s|$)", rule)
        if not m:
            continue
        for tok in re.findall(r"(?:\\ |[^\s])+", rule[m.end():]):
            path = tok.replace("\\ ", " ").replace("$$", "$")
            path = os.path.normpath(os.path.join(cwd, path))
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


class HeaderContext:
    """What classifying a header path needs: the private scan.cu, the course's common/ folder and
    the headers of it a lab may include (lab_headers: paths below common/, glob patterns such as
    labs/*.h for the labs' own headers), and the system include folders (nvcc's -I/-isystem
    folders and the host compiler's own), all as real paths."""

    def __init__(self, private_src, common_dir, system_dirs,
                 lab_headers=("lab.h", "cuda_check.h", "labs/*.h"), runtime_dirs=(), also_sources=()):
        self.private_src = os.path.realpath(private_src)
        # CPU mode: its CUDA headers (common/cpu) stand for the toolkit's include folder, and the
        # C++ that CPU mode compiles (rewrite.py's output) is the source itself
        self.runtime_dirs = sorted({os.path.realpath(d) for d in runtime_dirs}, key=len, reverse=True)
        self.sources = {self.private_src} | {os.path.realpath(p) for p in also_sources}
        self.private_dir = os.path.dirname(self.private_src)
        self.common_dir = os.path.realpath(common_dir)
        self.lab_headers = {os.path.realpath(p) for h in lab_headers
                            for p in glob.glob(os.path.join(glob.escape(self.common_dir), h))}
        roots = {os.path.realpath(d) for d in system_dirs if d}
        # the course's folders are never system folders, whatever the command line says
        self.system_dirs = sorted((r for r in roots if not _under(r, self.common_dir)
                                   and not _under(r, self.private_dir)), key=len, reverse=True)

    def classify(self, path, patterns):
        """(why, shown name) for a header a lab may not include, or None when it may."""
        real = os.path.realpath(path)
        if real in self.sources or real in self.lab_headers:
            return None
        for root in self.runtime_dirs:
            if _under(real, root):
                rel = os.path.relpath(real, root)
                return (LIBRARY_WHY, rel) if any(p.search(rel) for p in patterns) else None
        if _under(real, self.common_dir):
            return HARNESS_WHY, os.path.relpath(real, self.common_dir)
        if _under(real, self.private_dir):
            return PATH_WHY, os.path.relpath(real, self.private_dir)
        for root in self.system_dirs:
            if _under(real, root):
                rel = os.path.relpath(real, root)
                if any(p.search(rel) for p in patterns):
                    return LIBRARY_WHY, rel
                return None
        return PATH_WHY, real


def _unescape(name):
    """A file name as gcc writes it in a line marker (backslash escapes) as it is."""
    return re.sub(r"\\(.)", r"\1", name)


def include_origins(preprocessed, private_src):
    """From the line markers of preprocessed output (gcc -E): {real path of a header: (line of
    scan.cu whose #include brought it in, real path of the header that line includes)}. The
    first time a header is entered counts."""
    src = os.path.realpath(private_src)
    stack = []  # [(real path, line reached)]
    origins = {}
    marker = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
    for ln in preprocessed.splitlines():
        m = marker.match(ln) if ln.startswith("#") else None
        if m:
            line, name, flags = int(m.group(1)), m.group(2), m.group(3).split()
            path = os.path.realpath(_unescape(name)) if not name.startswith("<") else name
            if "1" in flags:  # entering path from the file on top of the stack
                if stack and stack[-1][0] == src:
                    top = (stack[-1][1], path)
                elif stack and stack[-1][0] in origins:
                    top = origins[stack[-1][0]]
                else:
                    top = None
                if top and path not in origins:
                    origins[path] = top
                stack.append([path, line])
            elif "2" in flags:  # back in path
                while stack and stack[-1][0] != path:
                    stack.pop()
                if stack:
                    stack[-1][1] = line
                else:
                    stack.append([path, line])
            else:
                if stack:
                    stack[-1] = [path, line]
                else:
                    stack.append([path, line])
        elif stack:
            stack[-1][1] += 1
    return origins


def check_line_directives(preprocessed, private_src):
    """Violations: #line directives that give code another file's name, found in preprocessed
    output (gcc -E of the host side): a line marker in scan.cu's code that changes the file name
    without flag 1 or 2 (the markers gcc writes for its own includes). check_host_asm trusts the
    file names of nvcc's host translation, so code renamed to a system header would be
    skipped."""
    src = os.path.realpath(private_src)
    marker = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
    current = None
    found = []
    for ln in preprocessed.splitlines():
        m = marker.match(ln) if ln.startswith("#") else None
        if not m:
            continue
        name, flags = _unescape(m.group(2)), m.group(3).split()
        path = name if name.startswith("<") else os.path.realpath(name)
        if "1" not in flags and "2" not in flags and current == src and path != src and not path.startswith("<"):
            # (no line number: gcc drops blank lines before a marker, so the count is not exact;
            # check_source names the line of every #line it can see)
            msg = ("#line directive: lab code may not renumber its lines (the checks need to know "
                   "which code is scan.cu's)")
            if msg not in found:
                found.append(msg)
        current = path
    return found


def check_headers(deps, static, ctx, origins=None):
    """Violations among deps (the header paths nvcc -M lists) for HeaderContext ctx: a scan,
    sort or reduce library (static's forbidden_header_patterns, matched against the path below
    its system include folder), a harness header other than static's lab_headers, or any file
    outside the system include folders (a file by path). origins (include_origins) names the
    line of scan.cu each came through; one message per #include line of scan.cu, naming the
    outermost header refused."""
    pats = _header_patterns(static)
    found, lines_done = [], set()
    origins = origins or {}
    for path in deps:
        bad = ctx.classify(path, pats)
        if bad is None:
            continue
        real = os.path.realpath(path)
        line, top = origins.get(real, (None, None))
        if line is not None:
            if line in lines_done:
                continue
            top_bad = ctx.classify(top, pats) if top else None
            if top_bad is not None:  # the header named on that line is itself refused
                bad = top_bad
            lines_done.add(line)
        elif found:
            continue  # without the include tree, one message says enough
        why, shown = bad
        found.append(_include_message(shown, '"' if why != LIBRARY_WHY else "<", line, why))
    return found


# ---- static checks: inline assembly in host code ---------------------------------------------------

_ASM_RE = re.compile(r"(?<![A-Za-z0-9_$])(asm|__asm__|__asm)(?![A-Za-z0-9_$])")


PTX_CLOCK_RE = re.compile(r"%(clock64|clock|globaltimer(?:_lo|_hi)?)\b")


def check_device_clocks(ptx, private_src):
    """Violations for clocks read in device code (%clock, %clock64, %globaltimer in the PTX),
    each with the line of scan.cu the PTX's .loc names. A lab has no use for them (the harness
    times it), and timing itself is how a lab could tell a slow tool (compute-sanitizer) from a
    real run and behave differently under it."""
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M))  # listed at the end
    line, found = None, []
    src = os.path.realpath(private_src)
    for ln in ptx.splitlines():
        t = ln.strip()
        m = re.match(r"^\.loc\s+(\d+)\s+(\d+)", t)
        if m:
            line = (m.group(1), int(m.group(2)))
            continue
        m = PTX_CLOCK_RE.search(t)
        if m and not t.startswith("//"):
            found.append((m.group(1), line))
    out = []
    for reg, loc in found:
        where = ""
        if loc and os.path.realpath(files.get(loc[0], "")) == src:
            where = f" (line {loc[1]})"
        msg = (f"reads a clock in device code{where}: lab code may not time itself (%{reg}); the "
               f"harness times it, and a lab that measures its own speed could behave differently "
               f"under a tool such as compute-sanitizer")
        if msg not in out:
            out.append(msg)
    return out


def check_host_asm(translation, private_src):
    """Violations in nvcc's host translation of scan.cu (the .cudafe1.cpp that cudafe++ makes:
    host code as the host compiler sees it, the bodies of __device__ and __global__ functions
    left out inside #if 0): an asm statement, asm declaration or asm label on a line that
    comes from scan.cu itself. One message per line of scan.cu."""
    src = os.path.realpath(private_src)
    marker = re.compile(r'^#\s*(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?')
    in_src, line, skip = False, 0, 0
    found, seen = [], set()
    for ln in translation.splitlines():
        s = ln.strip()
        if s.startswith("#"):
            directive = s[1:].strip()
            if skip:
                if re.match(r"if(n?def)?\b", directive):
                    skip += 1
                elif re.match(r"endif\b", directive):
                    skip -= 1
                continue
            if re.match(r"if\s+0\s*$", directive):
                skip = 1
                continue
            m = marker.match(s)
            if m:
                if m.group(2) is not None:
                    name = _unescape(m.group(2))
                    in_src = not name.startswith("<") and os.path.realpath(name) == src
                line = int(m.group(1))
            else:
                line += 1
            continue
        if skip:
            continue
        if in_src and _ASM_RE.search(_STRING_RE.sub('""', ln)) and line not in seen:
            seen.add(line)
            found.append(f"inline assembly in host code (line {line}): only device code may use asm")
        line += 1
    return found


# ---- static checks: the object ---------------------------------------------------------------------

class ElfError(Exception):
    """The object file is not an ELF64 little-endian relocatable file this module can read."""


SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 2, 4, 8, 9
SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY = 14, 15, 16
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE, STT_TLS, STT_GNU_IFUNC = 1, 2, 3, 4, 6, 10
STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 0, 1, 2, 10
SHN_UNDEF, SHN_ABS, SHN_COMMON = 0, 0xfff1, 0xfff2
EM_X86_64, EM_AARCH64 = 62, 183
CALL_RELOCS = {EM_X86_64: {4}, EM_AARCH64: {282, 283}}  # PLT32; JUMP26, CALL26


class ElfObject:
    """The sections, symbols and relocations of an ELF64 little-endian object file (standard
    library only: struct)."""

    def __init__(self, path):
        import struct
        with open(path, "rb") as f:
            data = f.read()
        self.data = data
        if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ElfError("not an ELF64 little-endian file")
        (self.type, self.machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        if shoff == 0 or shentsize != 64:
            raise ElfError("no section headers")
        self.sections = []
        for i in range(shnum):
            (name, stype, flags, _, off, size, link, info, _, entsize) = struct.unpack_from(
                "<IIQQQQIIQQ", data, shoff + i * 64)
            self.sections.append({"index": i, "name_off": name, "type": stype, "flags": flags,
                                  "offset": off, "size": size, "link": link, "info": info,
                                  "entsize": entsize})
        strtab = self.sections[shstrndx] if shstrndx < shnum else None
        for s in self.sections:
            s["name"] = self._string(strtab, s["name_off"]) if strtab else ""
        self.symbols = []
        symtab = next((s for s in self.sections if s["type"] == SHT_SYMTAB), None)
        if symtab is not None:
            names = self.sections[symtab["link"]]
            for i in range(symtab["size"] // 24):
                (name, info, other, shndx, value, size) = struct.unpack_from(
                    "<IBBHQQ", data, symtab["offset"] + i * 24)
                self.symbols.append({"index": i, "name": self._string(names, name), "type": info & 15,
                                     "bind": info >> 4, "shndx": shndx, "value": value, "size": size})
        self.relocs = {}  # index of the section relocated -> [(offset, symbol index, type, addend)]
        for s in self.sections:
            if s["type"] in (SHT_RELA, SHT_REL) and s["info"] < shnum:
                ent = 24 if s["type"] == SHT_RELA else 16
                rows = []
                for i in range(s["size"] // ent):
                    off, info = struct.unpack_from("<QQ", data, s["offset"] + i * ent)
                    addend = struct.unpack_from("<q", data, s["offset"] + i * ent + 16)[0] if ent == 24 else 0
                    rows.append((off, info >> 32, info & 0xffffffff, addend))
                self.relocs.setdefault(s["info"], []).extend(rows)

    def _string(self, sec, off):
        start = sec["offset"] + off
        end = self.data.find(b"\0", start, sec["offset"] + sec["size"])
        return self.data[start:end if end >= 0 else start].decode("utf-8", errors="replace")

    def symbol_at(self, shndx, offset):
        """The named function or object of section shndx whose range holds offset (or that
        starts there); the smallest such."""
        if not hasattr(self, "_by_section"):
            self._by_section = {}
            for s in self.symbols:
                if s["type"] in (STT_FUNC, STT_OBJECT, STT_GNU_IFUNC, STT_TLS) and s["name"]:
                    self._by_section.setdefault(s["shndx"], []).append(s)
            for rows in self._by_section.values():
                rows.sort(key=lambda s: s["value"])
            self._starts = {k: [s["value"] for s in v] for k, v in self._by_section.items()}
        rows = self._by_section.get(shndx)
        if not rows:
            return None
        best = None
        k = bisect.bisect_right(self._starts[shndx], offset)
        # the symbols starting at or before offset, nearest first (a few suffice: functions do
        # not nest, but a symbol of size 0 may sit at the same place as one that holds offset)
        for s in reversed(rows[max(0, k - 8):k]):
            if s["value"] <= offset < s["value"] + max(s["size"], 1):
                if best is None or s["size"] < best["size"]:
                    best = s
        return best

    def relocation_target(self, sym_index, addend):
        """The symbol a relocation points at: a section symbol plus an addend is resolved to the
        function or object at that place."""
        sym = self.symbols[sym_index] if sym_index < len(self.symbols) else None
        if sym is None:
            return None
        if sym["type"] == STT_SECTION:
            return self.symbol_at(sym["shndx"], addend) or {"name": self.sections[sym["shndx"]]["name"],
                                                            "type": STT_SECTION}
        return sym


def demangle(names):
    """{name: demangled} through c++filt (names left as they are without it)."""
    names = sorted(set(names))
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    tool = shutil.which("c++filt")
    if mangled and tool:
        import subprocess
        try:
            r = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                               text=True, timeout=60)
            lines = r.stdout.splitlines()
            if r.returncode == 0 and len(lines) == len(mangled):
                out.update(zip(mangled, lines))
        except (OSError, subprocess.SubprocessError):
            pass
    return out


class Symbol(tuple):
    """One symbol of an object: kind (nm's letter: U, w, v for references; T, D, W, ... for
    definitions), name (demangled), raw (as in the object), data (True: only ever used as data,
    never called), sites (raw names of the functions or objects whose relocations name it)."""
    __slots__ = ()

    def __new__(cls, kind, name, raw=None, data=False, sites=()):
        return tuple.__new__(cls, (kind, name, raw if raw is not None else name, bool(data), tuple(sites)))

    kind = property(lambda self: self[0])
    name = property(lambda self: self[1])
    raw = property(lambda self: self[2])
    data = property(lambda self: self[3])
    sites = property(lambda self: self[4])


def _nm_letter(elf, s):
    sec = elf.sections[s["shndx"]] if 0 < s["shndx"] < len(elf.sections) else None
    if s["shndx"] == SHN_UNDEF:
        if s["bind"] == STB_WEAK:
            return "v" if s["type"] == STT_OBJECT else "w"
        return "U"
    if s["shndx"] == SHN_COMMON:
        return "C"
    if s["type"] == STT_GNU_IFUNC:
        return "i"
    if s["bind"] == STB_WEAK:
        return "V" if s["type"] == STT_OBJECT else "W"
    if s["bind"] == STB_GNU_UNIQUE:
        return "u"
    if s["shndx"] == SHN_ABS:
        letter = "A"
    elif sec is None:
        letter = "?"
    elif sec["flags"] & SHF_EXECINSTR:
        letter = "T"
    elif sec["type"] == SHT_NOBITS:
        letter = "B"
    elif sec["flags"] & SHF_WRITE:
        letter = "D"
    else:
        letter = "R"
    return letter.lower() if s["bind"] == STB_LOCAL else letter


def read_elf(obj):
    """An ElfObject, or None when obj cannot be read as one."""
    try:
        return ElfObject(obj)
    except (OSError, ElfError, IndexError, ValueError):
        return None


def read_symbols(obj, elf=None):
    """[Symbol] of an object file (every named symbol but section and file symbols), or None
    when it cannot be read. For a referenced symbol, data and sites come from the relocations
    that name it."""
    elf = elf or read_elf(obj)
    if elf is None:
        return None
    calls = CALL_RELOCS.get(elf.machine, set())
    called, sites = {}, {}
    for shndx, rows in elf.relocs.items():
        sec = elf.sections[shndx]
        if not sec["flags"] & SHF_ALLOC:
            continue  # debug information
        for off, si, rtype, _ in rows:
            if si >= len(elf.symbols):
                continue
            called[si] = called.get(si, False) or rtype in calls
            where = elf.symbol_at(shndx, off)
            sites.setdefault(si, set()).add(where["name"] if where else sec["name"])
    rows = [s for s in elf.symbols if s["name"] and s["type"] not in (STT_SECTION, STT_FILE)]
    names = demangle(s["name"].split("@", 1)[0] for s in rows)
    out = []
    for s in rows:
        raw = s["name"]
        data = s["type"] == STT_OBJECT or (s["type"] != STT_FUNC and not called.get(s["index"], False))
        out.append(Symbol(_nm_letter(elf, s), names[raw.split("@", 1)[0]], raw, data,
                          sorted(sites.get(s["index"], ()))))
    return out


def _base_name(sym):
    """'naive_scan(int const*, ...)' -> 'naive_scan'; 'operator new(unsigned long)' -> 'operator new'."""
    s = sym.split(" [clone", 1)[0]
    if s.startswith("operator"):
        return s.split("(", 1)[0].strip()
    depth = 0
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            return s[:i].strip()
    return s.strip()


# runtime functions the compiler calls for a keyword or a macro of the source
_SPELLED = {"__assert_fail": "assert", "__cxa_throw": "throw", "__cxa_allocate_exception": "throw",
            "__cxa_begin_catch": "catch", "__cxa_rethrow": "throw"}


def _plain_name(raw):
    """A C library symbol as the source spells it: __printf_chk -> printf, __isoc99_sscanf ->
    sscanf, open64 -> open, cudaGetDeviceProperties_v2 -> cudaGetDeviceProperties."""
    n = raw.split("@", 1)[0]
    if n in _SPELLED:
        return _SPELLED[n]
    m = re.fullmatch(r"__(\w+?)_chk", n) or re.fullmatch(r"__isoc\d\d_(\w+)", n) or re.fullmatch(r"__(\w+?)_2", n)
    if m:
        n = m.group(1)
    n = re.sub(r"(_ptds|_ptsz|_v\d+)+$", "", n)
    if re.fullmatch(r"[a-z]\w*64", n) and not n.startswith("cu"):
        n = n[:-2]
    return n


def _source_names(sym):
    """The identifiers to look for in scan.cu for a symbol."""
    base = _base_name(sym.name)
    if sym.raw.startswith("_Z"):
        if base.startswith("operator "):
            return [base.split()[1].rstrip("[]")]
        last = re.sub(r"<.*>", "", base).split("::")[-1]
        return [last]
    return [_plain_name(sym.raw), sym.raw.split("@", 1)[0]]


# Why a refused name is refused, where one short reason helps (the message starts the same
# way whatever the name: "lab code may not call NAME").
_REASONS = [
    (r"^(cuda|cu)Memcpy", "a GPU lab's data arrives on the device and stays there; copies are "
                           "not allowed (no host-side scan, no copy engine doing a kernel's work)"),
    (r"^(malloc|calloc|realloc|valloc|pvalloc|memalign|posix_memalign|aligned_alloc|mmap|operator new"
     r"|cudaMallocHost|cudaHostAlloc|cudaMallocManaged|cudaHostRegister|cudaHostGetDevicePointer"
     r"|__cudaRegisterManagedVar|cuMemAllocHost|cuMemHostAlloc|cuMemAllocManaged)",
     "no host memory: the harness hands the lab every buffer it needs"),
    (r"^(cudaStream|cudaEvent|cuStream|cuEvent)", "streams and events are not allowed: launch on "
                                                  "the default stream, which the harness times"),
    (r"^(lab_|ref_)", "that is the harness's own code: write the scan yourself"),
    (r"^(cudaGetDriverEntryPoint|cuGetProcAddress|dlopen|dlsym|dlvsym|dlmopen)",
     "no driver entry points or dynamic loading"),
    (r"^(getenv|secure_getenv|environ|__environ|program_invocation|__libc_argv|__progname)",
     "lab code reads nothing from the process's environment or command line"),
]


def _reason(name, device_lab):
    if not device_lab and re.match(r"^(cuda|cu)[A-Z]|^__cuda(Push|Pop)CallConfiguration|^__cudaLaunch", name):
        return "a host lab (LAB_HOST) runs on the CPU and makes no CUDA calls"
    for pat, why in _REASONS:
        if re.match(pat, name):
            return why
    return ""


def _c_linkage(s):
    """Whether a symbol has a C name (not a C++ one, mangled or demangled)."""
    return not s.raw.startswith("_Z") and "(" not in s.name and "::" not in s.name


def _as_symbol(s):
    return s if isinstance(s, Symbol) else Symbol(*s)


def _cpu_runtime_name(s, static):
    """Whether a referenced symbol of a CPU-mode object is CPU mode's runtime (what the rewritten
    launches, shared arrays, barriers and built-in variables call: static's cpu_runtime_symbols
    and cpu_runtime_symbol_patterns), which stands in for code nvcc generates."""
    name = s.raw.split("@", 1)[0]
    return name in set(static.get("cpu_runtime_symbols", [])) or any(
        re.fullmatch(p, name) for p in static.get("cpu_runtime_symbol_patterns", []))


def _lines_of(code, name):
    """Every line of code (strip_comments) where name occurs as a whole identifier."""
    if not code:
        return []
    return sorted({code.count("\n", 0, m.start()) + 1
                   for m in re.finditer(r"(?<![A-Za-z0-9_$])" + re.escape(name) + r"(?![A-Za-z0-9_$])", code)})


def check_symbols(syms, static, device_lab, gpu_build=True, harness_imports=None, code=None, cpu_build=False):
    """Violations in an object's symbol table (read_symbols; plain (kind, name) pairs work too).

    gpu_build (an nvcc object): every symbol the object references (undefined, weak, and the
    C-linkage weak definitions a strong definition elsewhere would replace) must be on the
    allowlist: static's allowed_symbols, allowed_gpu_lab_symbols (GPU labs only) or
    allowed_symbol_patterns; registration_only_symbols only from the registration_functions
    nvcc writes. code: the source (strip_comments) where the line of a refused name is looked up.
    Every object: a C-linkage definition shadows the C runtime or the harness when its name is
    in shadow_names or shadow_patterns or in harness_imports (the names the harness objects
    call, Builder.harness_imports). A GPU lab's nvcc object must launch a kernel.

    cpu_build (an object CPU mode compiled, checked where there is no nvcc object to read): the
    same allowlist, CPU mode's runtime besides (_cpu_runtime_name); a kernel launched is a call
    of lab_cpu::run_kernel, and clock64() in device code (lab_cpu::device_clock) gets the
    message the GPU path's check_device_clocks gives."""
    syms = [_as_symbol(s) for s in syms]
    found, seen = [], set()

    def add(msg):
        if msg not in seen:
            seen.add(msg)
            found.append(msg)

    refused = set()  # raw names refused as references (a weak definition is not also "shadowing")
    if cpu_build and any(_base_name(s.name) == "lab_cpu::device_clock" for s in syms if s.kind in "Uwv"):
        for line in _lines_of(code, "clock64") or [None]:
            where = f" (line {line})" if line else ""
            add(f"reads a clock in device code{where}: lab code may not time itself (%clock64); the "
                f"harness times it, and a lab that measures its own speed could behave differently "
                f"under a tool such as compute-sanitizer")
    if gpu_build or cpu_build:
        allowed = set(static.get("allowed_symbols", []))
        if device_lab:
            allowed |= set(static.get("allowed_gpu_lab_symbols", []))
        allowed_res = [re.compile(p) for p in static.get("allowed_symbol_patterns", [])]
        reg_only = set(static.get("registration_only_symbols", []))
        reg_funcs = set(static.get("registration_functions", []))
        for s in syms:
            reference = s.kind in "Uwv" or (s.kind in "WV" and _c_linkage(s))
            if not reference:
                continue
            name = s.raw.split("@", 1)[0]
            ok = name in allowed or any(r.fullmatch(name) for r in allowed_res) or (
                cpu_build and _cpu_runtime_name(s, static))
            if ok and not (name in reg_only and not set(s.sites) <= reg_funcs):
                continue
            refused.add(s.raw)
            plain = _plain_name(name) if not name.startswith("_Z") else _base_name(s.name)
            line = find_line(code, _source_names(s)) if code else None
            why = _reason(plain, device_lab)
            add(f"lab code may not {'use' if s.data else 'call'} {plain}"
                f"{f' (line {line})' if line else ''}{': ' + why if why else ''}")

    shadow_res = [re.compile(p) for p in static.get("shadow_patterns", [])]
    allowed_defs = set(static.get("allowed_definitions", []))
    shadow = set(static.get("shadow_names", [])) | set(harness_imports or ())
    for s in syms:
        base = _base_name(s.name)
        if (s.kind.isupper() and s.kind != "U" and (gpu_build or cpu_build or s.kind not in "WV") and _c_linkage(s)
                and base not in allowed_defs and s.raw not in refused):
            if base in shadow or any(r.search(base) for r in shadow_res):
                add(f"defines {base}, which shadows a CUDA runtime, C library or harness function")
    if gpu_build and device_lab and not any("cudaLaunchKernel" in s.name or "__device_stub" in s.name for s in syms):
        add("launches no kernel: a GPU lab must compute on the GPU")
    if cpu_build and device_lab and not any(_base_name(s.name) == "lab_cpu::run_kernel" for s in syms):
        add("launches no kernel: a GPU lab must compute on the GPU")
    return found


_STARTUP_NAME_RE = re.compile(r"^\.(init_array|preinit_array|ctors|fini_array|dtors)(\.|$)")


def _display(elf_name, names=None):
    if elf_name.startswith("_GLOBAL__sub_I_") or elf_name.startswith("_GLOBAL__I_"):
        return "the constructors of global objects"
    if elf_name.startswith("_GLOBAL__sub_D_") or elf_name.startswith("_GLOBAL__D_"):
        return "the destructors of global objects"
    shown = (names or {}).get(elf_name) or demangle([elf_name])[elf_name]
    return _base_name(shown)


def check_startup(elf, static):
    """Violations: code the object has run before main or after it. Every entry of its
    .init_array/.preinit_array/.ctors (and .fini_array/.dtors) sections must point at one of
    nvcc's registration_functions; .init/.fini code and GNU indirect functions (whose resolver
    runs while the program is loaded) are refused outright."""
    allowed = set(static.get("registration_functions", []))
    found = []

    def add(before, what):
        if before:
            msg = (f"code that runs before main ({what}): lab code may not define constructors or "
                   f"global objects with constructors")
        else:
            msg = (f"code that runs after main ({what}): lab code may not define destructors or "
                   f"global objects with destructors")
        if msg not in found:
            found.append(msg)

    for sec in elf.sections:
        name = sec["name"]
        before = not re.match(r"^\.(fini|dtors)", name) and sec["type"] != SHT_FINI_ARRAY
        if name in (".init", ".fini") or name.startswith((".init.", ".fini.")):
            if sec["size"]:
                add(name.startswith(".init"), name)
            continue
        if not (_STARTUP_NAME_RE.match(name) or sec["type"] in (SHT_INIT_ARRAY, SHT_FINI_ARRAY,
                                                                   SHT_PREINIT_ARRAY)):
            continue
        rows = {off: (si, addend) for off, si, _, addend in elf.relocs.get(sec["index"], [])}
        for off in range(0, sec["size"], 8):
            if off not in rows:
                add(before, f"{name}+{off:#x}")
                continue
            target = elf.relocation_target(*rows[off])
            tname = target["name"] if target else "?"
            if tname not in allowed:
                add(before, _display(tname))
    for s in elf.symbols:
        if s["type"] == STT_GNU_IFUNC and s["shndx"] != SHN_UNDEF:
            add(True, _display(s["name"]) + ", an indirect function")
    return found


def check_sections(elf):
    """Violations: code in a writable section (code that could be rewritten after the checks
    read it) and an executable stack (.note.GNU-stack missing or executable)."""
    found = []
    for sec in elf.sections:
        if sec["flags"] & SHF_EXECINSTR and sec["flags"] & SHF_WRITE:
            found.append(f"code in a writable section ({sec['name']}): lab code may not place code "
                         f"where it can be changed")
    stack = [sec for sec in elf.sections if sec["name"] == ".note.GNU-stack"]
    if not stack or stack[0]["flags"] & SHF_EXECINSTR:
        found.append("the object asks for an executable stack: lab code may not run code on the stack")
    return found


# Instructions by machine: system calls, and calls or jumps through a register or memory.
_X86_PREFIXES = {"notrack", "bnd", "rep", "repz", "repe", "repnz", "repne", "lock", "data16",
                 "addr32", "cs", "ds", "es", "fs", "gs", "ss"}


def _classify_insn(machine, text):
    """'syscall' or 'indirect' for a disassembled instruction (objdump's AT&T syntax on x86-64),
    else None."""
    toks = text.split("#", 1)[0].split()
    while toks and (toks[0] in _X86_PREFIXES or toks[0].startswith("rex")):
        toks = toks[1:]
    if not toks:
        return None
    op, args = toks[0], " ".join(toks[1:])
    if machine == EM_AARCH64:
        if op in ("svc", "hvc", "smc"):
            return "syscall"
        if re.fullmatch(r"(br|blr)(aa|ab|aaz|abz)?", op):
            return "indirect"
        return None
    if op in ("syscall", "sysenter") or (op == "int" and args.startswith("$")):
        return "syscall"
    if op in ("ljmp", "lcall", "ljmpq", "lcallq") or (
            op in ("call", "callq", "jmp", "jmpq") and args.startswith("*")):
        return "indirect"
    return None


def disassemble(obj):
    """[(section, function, offset in it, instruction text)] of the executable sections of obj
    (objdump -d), or None when objdump is unavailable or fails."""
    import subprocess
    tool = shutil.which("objdump")
    if not tool:
        return None
    # all of it (proc.run keeps only the first 256 KiB of output: code past that would go unseen)
    try:
        r = subprocess.run([tool, "-d", "-w", "--no-show-raw-insn", obj], capture_output=True,
                           text=True, errors="replace", timeout=600)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    out, section, func, start = [], "", "", 0
    for ln in r.stdout.splitlines():
        m = re.match(r"^Disassembly of section (.+):$", ln)
        if m:
            section, func, start = m.group(1), m.group(1), 0
            continue
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", ln)
        if m:
            start, func = int(m.group(1), 16), m.group(2)
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", ln)
        if m:
            out.append((section, func, int(m.group(1), 16) - start, m.group(2).strip()))
    return out


_CPU_RUNTIME_CODE_RE = re.compile(r"^_ZZ?N7lab_cpu")  # CPU mode's inline runtime code (lab_cpu::launch's thunk)


def check_machine_code(insns, machine, static, gpu_build=True, cpu_build=False):
    """Violations in the disassembled host code of an object (disassemble): a system-call
    instruction anywhere, and (gpu_build: nvcc objects; CPU mode's own runtime calls kernels
    through pointers) a call or jump through a pointer outside nvcc's registration_functions
    (the reference solutions have none; -fno-jump-tables in NVFLAGS keeps switch statements
    from becoming jump tables)."""
    allowed = set(static.get("registration_functions", []))
    found = []
    names = demangle(f for _, f, _, _ in insns)
    done_indirect = set()
    for _, func, off, text in insns:
        kind = _classify_insn(machine, text)
        if kind == "syscall":
            op = text.split("#", 1)[0].strip()
            op = re.sub(r"\s+", " ", op)
            msg = (f"host code contains a system call instruction ({op} at "
                   f"{_display(func, names)}+{off:#x}): lab code must not make system calls")
            if msg not in found:
                found.append(msg)
        elif (kind == "indirect" and (gpu_build or cpu_build) and func not in allowed and func not in done_indirect
              and not (cpu_build and _CPU_RUNTIME_CODE_RE.match(func))):
            done_indirect.add(func)
            found.append(f"calls through a function pointer in host code ({_display(func, names)}): "
                         f"lab code may not call functions through pointers (function pointers, "
                         f"virtual functions, computed gotos)")
    return found


def check_object(obj, static, device_lab, gpu_build=True, harness_imports=None, code=None, cpu_build=False):
    """(violations, note) for one object: check_symbols, check_startup, check_sections and
    check_machine_code together. note says which checks could not run (no objdump, an unreadable object)."""
    elf = read_elf(obj)
    if elf is None:
        return [], "the object could not be read: symbol checks skipped"
    syms = read_symbols(obj, elf)
    found = check_symbols(syms, static, device_lab, gpu_build, harness_imports, code, cpu_build)
    for v in check_startup(elf, static) + check_sections(elf):
        if v not in found:
            found.append(v)
    note = ""
    if elf.machine not in (EM_X86_64, EM_AARCH64):
        note = "the object's machine code is not x86-64 or AArch64: instruction checks skipped"
    else:
        insns = disassemble(obj)
        if insns is None:
            note = "objdump not found: instruction checks skipped"
        else:
            for v in check_machine_code(insns, elf.machine, static, gpu_build, cpu_build):
                if v not in found:
                    found.append(v)
    return found, note


def imported_names(objs):
    """The plain (C-linkage) names a set of objects leave undefined, or None when there are no
    objects or one cannot be read."""
    if not objs:
        return None
    names = set()
    for obj in objs:
        elf = read_elf(obj)
        if elf is None:
            return None
        for s in elf.symbols:
            # _Z...: C++ names, which a lab cannot shadow by accident of linkage
            if s["shndx"] == SHN_UNDEF and s["name"] and not s["name"].startswith("_Z"):
                names.add(s["name"].split("@", 1)[0])
    return names


def check_binary(binary):
    """Violations in the linked binary (the CUDA runtime must be linked statically)."""
    readelf = shutil.which("readelf")
    if not readelf:
        return []
    r = proc.run([readelf, "-d", binary], 60)
    for ln in r.stdout.splitlines():
        if "NEEDED" in ln and "libcudart" in ln:
            return ["the CUDA runtime is linked dynamically (the grader links it statically)"]
    return []
