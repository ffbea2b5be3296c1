"""The machine-code rules, on objdump's disassembly of an object's executable sections: no
system-call instruction anywhere, and (in nvcc objects) no call or jump through a pointer outside
nvcc's registration code. x86-64 (AT&T syntax) and AArch64.
"""
import re
import shutil
import subprocess

from .elf import EM_AARCH64, demangle
from .symbols import display_name

# Instructions by machine: system calls, and calls or jumps through a register or memory.
# The prefixes objdump may write before an x86-64 instruction's name:
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
                   f"{display_name(func, names)}+{off:#x}): lab code must not make system calls")
            if msg not in found:
                found.append(msg)
        elif (kind == "indirect" and (gpu_build or cpu_build) and func not in allowed and func not in done_indirect
              and not (cpu_build and _CPU_RUNTIME_CODE_RE.match(func))):
            done_indirect.add(func)
            found.append(f"calls through a function pointer in host code ({display_name(func, names)}): "
                         f"lab code may not call functions through pointers (function pointers, "
                         f"virtual functions, computed gotos)")
    return found
