"""Reading an object file: the sections, symbols and relocations of an ELF64 little-endian object
(standard library only: struct), its symbols as nm lists them (read_symbols, with where each is
used from), names demangled through c++filt, and the names a set of objects import.
"""
import bisect
import shutil
import struct
import subprocess


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


def nm_letter(elf, s):
    """The letter nm shows for symbol s of elf: U undefined, w/v weak undefined, T/D/B/R defined
    in code/data/bss/read-only data (lower case when local), W/V weak, C common, i an indirect
    function, u unique, A absolute."""
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
        out.append(Symbol(nm_letter(elf, s), names[raw.split("@", 1)[0]], raw, data,
                          sorted(sites.get(s["index"], ()))))
    return out


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
