"""The section rules of an object: no code that runs before or after main (constructors,
destructors, .init/.fini code, indirect functions) but nvcc's registration, no code in a writable
section, no executable stack.
"""
import re

from .elf import SHN_UNDEF, SHT_FINI_ARRAY, SHT_INIT_ARRAY, SHT_PREINIT_ARRAY, SHF_EXECINSTR, SHF_WRITE, STT_GNU_IFUNC
from .symbols import display_name

_STARTUP_NAME_RE = re.compile(r"^\.(init_array|preinit_array|ctors|fini_array|dtors)(\.|$)")


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
                add(before, display_name(tname))
    for s in elf.symbols:
        if s["type"] == STT_GNU_IFUNC and s["shndx"] != SHN_UNDEF:
            add(True, display_name(s["name"]) + ", an indirect function")
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
