"""The checks on what the compiler made: check_object runs the registry's object rules on one
object (its symbols, its sections, its machine code); linked.py reads the linked binary.
"""
import types

from . import registry
from .elf import EM_AARCH64, EM_X86_64, read_elf, read_symbols
from .machine import disassemble


def check_object(obj, static, device_lab, gpu_build=True, harness_imports=None, code=None, cpu_build=False):
    """(violations, note) for one object: the registry's object rules (check_symbols,
    check_startup, check_sections, check_machine_code) together. note says which checks could not
    run (no objdump, an unreadable object)."""
    elf = read_elf(obj)
    if elf is None:
        return [], "the object could not be read: symbol checks skipped"
    c = types.SimpleNamespace(static=static, device_lab=device_lab, gpu_build=gpu_build, code=code,
                              harness_imports=harness_imports, cpu_build=cpu_build, machine=elf.machine)
    found = registry.run("object", "symbols", read_symbols(obj, elf), c)
    registry.run("object", "elf", elf, c, found)
    note = ""
    if elf.machine not in (EM_X86_64, EM_AARCH64):
        note = "the object's machine code is not x86-64 or AArch64: instruction checks skipped"
    else:
        insns = disassemble(obj)
        if insns is None:
            note = "objdump not found: instruction checks skipped"
        else:
            registry.run("object", "instructions", insns, c, found)
    return found, note
