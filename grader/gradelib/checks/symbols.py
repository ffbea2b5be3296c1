"""The symbol rules: what an object may reference (an allowlist), what it may not define (a name
that shadows the CUDA runtime, the C library or the harness), and that a GPU lab launches a
kernel. The names in the messages are spelled as in the source (printf, not __printf_chk), with
the line of scan.cu where the source names them.
"""
import re

from .asm import clock_message
from .elf import Symbol, demangle
from .lexer import find_line, lines_of


def base_name(sym):
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
    base = base_name(sym.name)
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
    """The short reason a refused name is refused (see _REASONS), or ""."""
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
    """s as a Symbol (a plain (kind, name) pair works too)."""
    return s if isinstance(s, Symbol) else Symbol(*s)


def _cpu_runtime_name(s, static):
    """Whether a referenced symbol of a CPU-mode object is CPU mode's runtime (what the rewritten
    launches, shared arrays, barriers and built-in variables call: static's cpu_runtime_symbols
    and cpu_runtime_symbol_patterns), which stands in for code nvcc generates."""
    name = s.raw.split("@", 1)[0]
    return name in set(static.get("cpu_runtime_symbols", [])) or any(
        re.fullmatch(p, name) for p in static.get("cpu_runtime_symbol_patterns", []))


def display_name(elf_name, names=None):
    """How a function of an object is named in a message: its base name, demangled (names: a
    demangle() map, when there is one), or what the compiler's global constructors and
    destructors are for."""
    if elf_name.startswith("_GLOBAL__sub_I_") or elf_name.startswith("_GLOBAL__I_"):
        return "the constructors of global objects"
    if elf_name.startswith("_GLOBAL__sub_D_") or elf_name.startswith("_GLOBAL__D_"):
        return "the destructors of global objects"
    shown = (names or {}).get(elf_name) or demangle([elf_name])[elf_name]
    return base_name(shown)


def check_symbols(syms, static, device_lab, gpu_build=True, harness_imports=None, code=None, cpu_build=False):
    """Violations in an object's symbol table (elf.read_symbols; plain (kind, name) pairs work too).

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
    found = []
    if cpu_build and any(base_name(s.name) == "lab_cpu::device_clock" for s in syms if s.kind in "Uwv"):
        found += [clock_message("clock64", line) for line in lines_of(code, "clock64") or [None]]
    refused = set()  # raw names refused as references (a weak definition is not also "shadowing")
    if gpu_build or cpu_build:
        refused, messages = _refused_references(syms, static, device_lab, code, cpu_build)
        found += messages
    found += _shadowing(syms, static, gpu_build or cpu_build, harness_imports, refused)
    if gpu_build and device_lab and not any("cudaLaunchKernel" in s.name or "__device_stub" in s.name for s in syms):
        found.append("launches no kernel: a GPU lab must compute on the GPU")
    if cpu_build and device_lab and not any(base_name(s.name) == "lab_cpu::run_kernel" for s in syms):
        found.append("launches no kernel: a GPU lab must compute on the GPU")
    return list(dict.fromkeys(found))  # each message once, in order


def _refused_references(syms, static, device_lab, code, cpu_build):
    """(the raw names, the violations) of the symbols syms reference that are not on the
    allowlist (see check_symbols), in order."""
    allowed = set(static.get("allowed_symbols", []))
    if device_lab:
        allowed |= set(static.get("allowed_gpu_lab_symbols", []))
    allowed_res = [re.compile(p) for p in static.get("allowed_symbol_patterns", [])]
    reg_only = set(static.get("registration_only_symbols", []))
    reg_funcs = set(static.get("registration_functions", []))
    refused, found = set(), []
    for s in syms:
        reference = s.kind in "Uwv" or (s.kind in "WV" and _c_linkage(s))
        if not reference:
            continue
        name = s.raw.split("@", 1)[0]
        ok = name in allowed or any(r.fullmatch(name) for r in allowed_res) or (
            cpu_build and _cpu_runtime_name(s, static))
        if ok and not (name in reg_only and not set(s.sites) <= reg_funcs):
            continue
        plain = _plain_name(name) if not name.startswith("_Z") else base_name(s.name)
        line = find_line(code, _source_names(s)) if code else None
        why = _reason(plain, device_lab)
        refused.add(s.raw)
        found.append(f"lab code may not {'use' if s.data else 'call'} {plain}"
                     f"{f' (line {line})' if line else ''}{': ' + why if why else ''}")
    return refused, found


def _shadowing(syms, static, checks_weak, harness_imports, refused):
    """Violations for the C-linkage definitions of syms that shadow a runtime, C library or
    harness function (see check_symbols); weak ones only with checks_weak (an object whose
    references were checked), none already refused as a reference."""
    shadow_res = [re.compile(p) for p in static.get("shadow_patterns", [])]
    allowed_defs = set(static.get("allowed_definitions", []))
    shadow = set(static.get("shadow_names", [])) | set(harness_imports or ())
    found = []
    for s in syms:
        base = base_name(s.name)
        if (s.kind.isupper() and s.kind != "U" and (checks_weak or s.kind not in "WV") and _c_linkage(s)
                and base not in allowed_defs and s.raw not in refused):
            if base in shadow or any(r.search(base) for r in shadow_res):
                found.append(f"defines {base}, which shadows a CUDA runtime, C library or harness function")
    return found
