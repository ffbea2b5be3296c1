"""Private builds of one scan.cu, and the static checks on its source and object.

The student's scan.cu is copied into a folder of the grader's work directory and compiled there
through the Makefile's `lab-binary` rule (the same flags as `make run`, linked with the
grader-owned harness objects). Nothing is ever written into the student's folder, and only that
one file is used: a header or a .cu next to it cannot replace the harness.
"""
import hashlib
import os
import re
import shutil

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
    def __init__(self, ok, binary=None, obj=None, message="", seconds=0.0):
        self.ok = ok
        self.binary = binary
        self.obj = obj
        self.message = message
        self.seconds = seconds


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

    def _make_args(self):
        args = [self.make, "--no-print-directory", "-C", self.root, "BUILD=" + self.common]
        if self.nvcc:
            args.append("NVCC=" + self.nvcc)
        if self.mode == "cpu":
            args.append("CPU=1")
        else:
            args.append("CPU=0")  # never let the Makefile switch to CPU mode on its own
        return args

    def prepare(self):
        """Builds the harness objects once; raises InfraError when that is impossible."""
        if self.mode == "gpu" and not self.nvcc:
            raise InfraError("nvcc not found: install the CUDA toolkit or set NVCC=/path/to/nvcc")
        if not shutil.which(self.make):
            raise InfraError(f"'{self.make}' not found: install make")
        os.makedirs(self.common, exist_ok=True)
        r = proc.run(self._make_args() + ["lab-common"], self.timeout)
        if r.timed_out or r.returncode != 0:
            why = "timed out" if r.timed_out else compiler_message(r.stderr + r.stdout, self.common, "")
            raise InfraError(f"the grader's harness does not build ({self.mode} mode): {why}")

    def _build_key(self, src):
        h = hashlib.sha256(sha256_file(src).encode())
        h.update(os.fsencode("\0".join(self._make_args())))
        for o in self.common_objects():
            h.update(sha256_file(o).encode())
        return h.hexdigest()

    def build(self, src, out_dir, shown_as="scan.cu", reuse=False):
        """Copies src into out_dir and builds out_dir/scan; returns a BuildResult. A missing,
        unreadable or non-regular source is a failed build, not an exception. reuse=True keeps
        a successful build of the same source with the same harness objects and flags whose
        object and binary are unchanged since (the reference solutions, and the nvcc build CPU
        mode only reads the symbols of; never a submission's binary, which is always rebuilt)."""
        os.makedirs(out_dir, exist_ok=True)
        stamp = os.path.join(out_dir, "build.stamp")
        binary, obj = os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")
        key = None
        if reuse and os.path.isfile(src) and not os.path.islink(src):
            key = self._build_key(src)
            try:
                with open(stamp) as f:
                    old = f.read().split()
                if old == [key, sha256_file(obj), sha256_file(binary)]:
                    return BuildResult(True, binary=binary, obj=obj)
            except (OSError, ValueError):
                pass
        if os.path.lexists(stamp):
            os.remove(stamp)
        priv_src = os.path.join(out_dir, "scan.cu")
        for stale in (priv_src, os.path.join(out_dir, "scan"), os.path.join(out_dir, "scan.o")):
            if os.path.lexists(stale):
                os.remove(stale)
        if os.path.islink(src):
            return BuildResult(False, message=f"{shown_as} is a symbolic link: submit the file itself")
        if not os.path.isfile(src):
            return BuildResult(False, message=f"{shown_as} is missing")
        shutil.copyfile(src, priv_src)
        binary = os.path.join(out_dir, "scan")
        r = proc.run(self._make_args() + ["lab-binary", "LAB_SRC=" + priv_src, "LAB_OUT=" + binary],
                     self.timeout)
        if r.timed_out:
            return BuildResult(False, message=f"the build timed out after {self.timeout:g} s",
                               seconds=r.seconds)
        if r.returncode != 0 or not os.path.exists(binary):
            return BuildResult(False, message=compiler_message(r.stderr + "\n" + r.stdout, out_dir, shown_as),
                               seconds=r.seconds)
        if key is not None:
            with open(stamp, "w") as f:
                f.write(f"{key} {sha256_file(obj)} {sha256_file(binary)}\n")
        return BuildResult(True, binary=binary, obj=binary + ".o", seconds=r.seconds)


# ---- static checks ---------------------------------------------------------------------------

def strip_comments(text):
    """text with C/C++ comments replaced by spaces (string and char literals kept), so a
    commented-out #include is not held against the student. Newlines are kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def check_source(text, static):
    """Violations (one line each) in the source text of a scan.cu."""
    found = []
    limit = static.get("max_source_bytes", 0)
    if limit and len(text.encode("utf-8", errors="replace")) > limit:
        found.append(f"the source is over {limit} bytes")
    code = strip_comments(text)
    for m in INCLUDE_RE.finditer(code):
        inc = m.group(1).strip()
        line = code.count("\n", 0, m.start()) + 1
        base = inc.replace("\\", "/")
        if any(base.startswith(p) for p in static.get("forbidden_include_prefixes", [])):
            found.append(f"line {line}: #include <{inc}>: scan libraries (Thrust, CUB, ...) are not allowed")
        elif os.path.basename(base) in static.get("forbidden_includes", []):
            found.append(f"line {line}: #include \"{inc}\": the harness's own headers are not for lab code")
        elif base.startswith("/") or ".." in base.split("/"):
            found.append(f"line {line}: #include \"{inc}\": only scan.cu is graded; include no files by path")
    return found


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


def read_symbols(obj):
    """[(type letter, demangled name)] of an object file, or None when nm is unavailable."""
    nm = shutil.which("nm")
    if not nm:
        return None
    r = proc.run([nm, "-C", obj], 60)
    if r.returncode != 0:
        return None
    syms = []
    for ln in r.stdout.splitlines():
        m = re.match(r"^(?:[0-9a-fA-F]+)?\s+([A-Za-z?])\s+(.*)$", ln)
        if m:
            syms.append((m.group(1), m.group(2)))
    return syms


def imported_names(objs):
    """The plain (C-linkage) names a set of objects leave undefined (`nm -u`), or None when nm
    is unavailable or there are no objects."""
    nm = shutil.which("nm")
    if not nm or not objs:
        return None
    r = proc.run([nm, "-u", *objs], 60)
    if r.returncode != 0:
        return None
    names = set()
    for ln in r.stdout.splitlines():
        m = re.match(r"^\s*U\s+(\S+)$", ln)
        if m and not m.group(1).startswith("_Z"):  # _Z...: C++ names, which a lab cannot shadow by accident of linkage
            names.add(m.group(1).split("@", 1)[0])
    return names


def check_symbols(syms, static, device_lab, gpu_build=True, harness_imports=None):
    """Violations in an object's symbol table (as read_symbols returns it). Only C-linkage
    definitions can shadow the C runtime or the harness, so C++ names are not held against
    the student. A C-linkage definition is a violation when its name is in static's
    shadow_names or shadow_patterns, or in harness_imports (the names the harness objects call,
    Builder.harness_imports), so the list follows the harness as it changes; shadow_names is
    also the fixed list used when the harness objects cannot be read. gpu_build False (a
    CPU-mode object) skips the checks that only make sense for an nvcc object."""
    found = []
    seen = set()

    def add(msg):
        if msg not in seen:
            seen.add(msg)
            found.append(msg)

    shadow_res = [re.compile(p) for p in static.get("shadow_patterns", [])]
    process_res = [re.compile(p) for p in static.get("process_symbol_patterns", [])]
    allowed = set(static.get("allowed_definitions", []))
    shadow = set(static.get("shadow_names", [])) | set(harness_imports or ())
    for kind, name in syms:
        base = _base_name(name)
        for p in static.get("forbidden_symbol_prefixes", []):
            if p in name:
                add(f"uses {p.rstrip(':_')} ({base}): scan libraries are not allowed")
        if kind == "U":
            if base in static.get("forbidden_calls", []):
                add(f"calls {base}, the harness's own code: write the scan yourself")
            if base in static.get("process_calls", []) or any(r.search(name) for r in process_res):
                add(f"calls {base}: lab code must not touch the process, its files or its output")
            if gpu_build and device_lab and base in static.get("host_memory_calls", []):
                add(f"calls {base}: host memory in a GPU lab (a host-side scan is not allowed)")
            core = re.sub(r"(_ptds|_ptsz|_v[0-9]+)+$", "", base)
            if gpu_build and device_lab and core in static.get("host_copy_calls", []):
                add(f"calls {base}: a GPU lab's data arrives on the device and stays there; copies "
                    f"are not allowed (no host-side scan, no copy engine doing a kernel's work)")
        elif kind.isupper() and (gpu_build or kind not in "WV") and "(" not in name and base not in allowed:
            if base in shadow or any(r.search(base) for r in shadow_res):
                add(f"defines {base}, which shadows a CUDA runtime, C library or harness function")
    if gpu_build and device_lab and not any("cudaLaunchKernel" in name or "__device_stub" in name for _, name in syms):
        add("launches no kernel: a GPU lab must compute on the GPU")
    return found


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
