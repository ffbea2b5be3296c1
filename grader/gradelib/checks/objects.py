"""The checks on what the compiler made: check_object runs every rule on one object (symbols,
sections, machine code); check_binary reads the linked binary.
"""
import shutil

from .. import proc
from .elf import EM_AARCH64, EM_X86_64, read_elf, read_symbols
from .machine import check_machine_code, disassemble
from .sections import check_sections, check_startup
from .symbols import check_symbols


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
