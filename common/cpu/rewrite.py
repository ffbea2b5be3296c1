#!/usr/bin/env python3
"""CPU mode's build step: turns a .cu file into C++ the host compiler accepts, line for line.

    rewrite.py SRC.cu -o OUT.cpp

What changes (nothing else does; `#line` keeps every message pointing into SRC.cu):
  kernel<T><<<grid, block[, shmem[, stream]]>>>(args)
      -> ::lab_cpu::launch(kernel<T>, "kernel<T>", __FILE__, __LINE__, ::lab_cpu::config(grid, block...), args)
  kernel<<<...>>>(args) (no template arguments: kernel may be a template deduced from args)
      -> ::lab_cpu::launch_named([&](auto &&...a) { kernel(a...); }, <kernel's address where it
         has one>, "kernel", __FILE__, __LINE__, ::lab_cpu::config(...), args)
  [static] __shared__ T name[A][B];   -> static ::lab_cpu::shared_array<...> name("name");  (checked)
  extern __shared__ T name[];         -> static ::lab_cpu::extern_shared<T> name("name");   (checked)
  [static] __shared__ T name;         -> static T name; static ::lab_cpu::shared_scalar ...(&name, ...);
                                         (registered: each resident block has its own value)
  [static] __device__ T name... = i;  -> [static] __device__ LAB_CPU_DEVVAR T name... = i; LAB_CPU_DEVINFO(name, 0)
  __constant__ T name... [= i];       -> __constant__ LAB_CPU_DEVCONST T const name... = i (or = {});
                                         LAB_CPU_DEVINFO(name, 1): const, as nvcc makes it in
                                         kernels (a const __device__ object: LAB_CPU_DEVCONST too);
                                         pages of its own, which the runtime closes to host code
                                         (lab_cpu.h); a function, template, constexpr, extern or
                                         multi-name declaration is left alone
  #pragma unroll [N]                  -> #pragma GCC unroll N (64 without N): a loop with a constant
                                         trip count is unrolled as nvcc unrolls it, so each
                                         iteration's shared-memory access is an instruction of
                                         its own (bank-conflict counting pairs lanes by it)
  while (c) / for (i; c; k)           -> while (LAB_CPU_LOOP(id, c)) ... : the loop's iterations,
                                         known to the bank and sector counter (lab_cpu.h);
                                         under #pragma unroll: for (i; c; LAB_CPU_NEXT(id), k)
  while (c) / for (;;) / for (i; c;)  -> while (LAB_CPU_LOOP(id, ::lab_cpu::loop_point(), c)) ...
                                         (the watchdog's safe point; counting loops get none)
  a __device__ function with no parameters whose body calls __syncthreads() (a barrier helper
  such as the labs' tile_barrier<SYNC>()) -> (const char *lab_cpu_file = __builtin_FILE(),
      int lab_cpu_line = __builtin_LINE()), and its __syncthreads() reports that place: a barrier
      error names the line that called the helper, not the helper's own line
  #include "x.h" (next to the file) with launches or __shared__ arrays -> its rewritten text
A UTF-8 byte-order mark at the start is dropped (it would follow the #include the output starts
with). Comments and string literals are left alone. Every byte that is not rewritten comes out as it
went in, UTF-8 or not (a Latin-1 comment, say): files are read and written as UTF-8 with
surrogateescape. Exit codes: 0 written, 1 a launch it cannot parse (the message names the
line), 2 bad command line. Python 3.9+, standard library only.

Size: about 570 lines, over the house's 400, because the rewrites share one masked copy of the
text (comments and literals blanked, bracket depth known) and its scanner: each rewrite is a
function of a few dozen lines, and splitting the file would only move the shared scanner.
"""
import argparse
import os
import re
import sys
import zlib

IDENT = re.compile(r"[A-Za-z_0-9]")
ENCODING = dict(encoding="utf-8", errors="surrogateescape")  # any byte round-trips unchanged


RAW_PREFIX = re.compile(r"(?:u8|[uUL])?R")  # what may stand before the quote of a raw string


def token_start(src, i):
    """Where the identifier or number that ends just before src[i] starts (digit separators
    included)."""
    while i > 0 and (IDENT.match(src[i - 1]) or src[i - 1] == "'"):
        i -= 1
    return i


def blank(out, i, j):
    """Blanks out[i:j], newlines kept."""
    for k in range(i, j):
        if out[k] != "\n":
            out[k] = " "


def mask_code(src):
    """The source with comments and string/char literals blanked (newlines kept), same length.
    Knows what C++ allows besides the plain forms: a // comment continued by a backslash at the
    end of its line, raw strings (R"d(...)d", with u8/u/U/L prefixes), and digit separators
    (1'000, which open no character literal)."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = i
            while True:  # a backslash just before the newline continues the comment
                j = src.find("\n", j)
                if j < 0 or src[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
            blank(out, i, j)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(out, i, j)
            i = j
        elif c == '"' and RAW_PREFIX.fullmatch(src[token_start(src, i):i]):
            open_paren = src.find("(", i)
            delim = src[i + 1:open_paren] if open_paren >= 0 else ""
            end = src.find(")" + delim + '"', open_paren + 1) if open_paren >= 0 else -1
            j = n if end < 0 else end + len(delim) + 1
            blank(out, i + 1, j)
            i = j + 1
        elif c == "'" and i > 0 and src[token_start(src, i)].isdigit():
            i += 1  # a digit separator
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def callee_start(code, pos):
    """Start of the kernel expression that ends just before code[pos] (the '<<<')."""
    i = pos - 1
    while i >= 0 and code[i].isspace():
        i -= 1
    if i >= 0 and code[i] == ">":  # explicit template arguments: kernel<T, 256>
        depth = 0
        while i >= 0:
            if code[i] in ">)":
                depth += 1
            elif code[i] in "<(":
                depth -= 1
                if depth == 0:
                    i -= 1
                    break
            i -= 1
        while i >= 0 and code[i].isspace():
            i -= 1
    while i >= 0 and (IDENT.match(code[i]) or code[i] == ":"):
        i -= 1
    return i + 1


def config_end(code, start):
    """Index of the '>>>' that closes the launch configuration opened before start."""
    depth = 0
    i = start
    while i < len(code):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and code.startswith(">>>", i):
            return i
        i += 1
    return -1


def rewrite_launches(src, code, path):
    out = []
    last = 0
    pos = code.find("<<<")
    while pos >= 0:
        s = callee_start(code, pos)
        e = config_end(code, pos + 3)
        if s == pos or e < 0:
            raise SyntaxError(f"{path}:{line_of(src, pos)}: cannot read this kernel launch")
        p = e + 3
        while p < len(code) and code[p].isspace():
            p += 1
        if p >= len(code) or code[p] != "(":
            raise SyntaxError(f"{path}:{line_of(src, pos)}: a kernel launch needs its (arguments) after >>>")
        q = p + 1
        while q < len(code) and code[q].isspace():
            q += 1
        no_args = q < len(code) and code[q] == ")"
        callee = src[s:pos].strip()
        name = " ".join(callee.split()).replace('"', "")
        cfg = src[pos + 3:e]
        if callee.endswith(">"):  # explicit template arguments: the kernel's address is known
            head = f"::lab_cpu::launch({callee}, "
        else:  # maybe a template whose arguments the launch's arguments give (launch_named)
            head = ("::lab_cpu::launch_named([&](auto &&...lab_cpu_a) { " + callee + "(lab_cpu_a...); }, "
                    "[&](auto lab_cpu_t) -> decltype(::lab_cpu::kernel_address<decltype(lab_cpu_t)>("
                    + callee + ")) { return ::lab_cpu::kernel_address<decltype(lab_cpu_t)>(" + callee + "); }, ")
        repl = (f'{head}"{name}", __FILE__, __LINE__, ::lab_cpu::config({cfg})'
                + ("" if no_args else ", "))
        lost = src.count("\n", s, p + 1) - repl.count("\n")
        out.append(src[last:s])
        out.append(repl + "\n" * max(lost, 0))
        last = p + 1
        pos = code.find("<<<", last)
    out.append(src[last:])
    return "".join(out)


SHARED = re.compile(
    r"(?P<ext>\bextern\s+)?(?:\bstatic\s+)?__shared__\s+(?P<type>[A-Za-z_][\w\s:<>,*()]*?)\s*"
    r"\b(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\[\];]*\]\s*)+);")
ALIGN = re.compile(r"__align__\s*\(\s*[^)]*\)")
# `__shared__ T name;`: one variable, no initialiser, no comma (`__shared__ int a, b;` is left to
# the macro, a plain static shared by resident blocks).
SHARED_SCALAR = re.compile(
    r"(?<!extern )(?:\bstatic\s+)?__shared__\s+(?P<type>[A-Za-z_][\w\s:<>*()]*?)\s*"
    r"\b(?P<name>[A-Za-z_]\w*)\s*;")


def shared_repl(m, src):
    """The checked replacement of one __shared__ declaration, or None to leave it to the macro."""
    text = src[m.start():m.end()]
    mm = SHARED.match(text)
    if not mm:
        return None
    ty = " ".join(ALIGN.sub("", mm.group("type")).split())
    name = mm.group("name")
    dims = re.findall(r"\[([^\[\]]*)\]", mm.group("dims"))
    if not ty or ty in ("static", "extern"):
        return None
    if mm.group("ext"):
        if len(dims) != 1 or dims[0].strip():
            return None
        return f'static ::lab_cpu::extern_shared<{ty}> {name}("{name}");'
    if any(not d.strip() for d in dims):
        return None
    inner = ty
    for d in reversed(dims[1:]):
        inner = f"::lab_cpu::shared_array<{inner}, (size_t)({d.strip()})>"
    full = f"::lab_cpu::shared_array<{inner}, (size_t)({dims[0].strip()}), 16>"
    return f'static {full} {name}("{name}");'


def scalar_repl(m, src):
    """A scalar __shared__ variable stays a static, registered as shared memory so that each
    resident block gets its own value: `static T name; static ::lab_cpu::shared_scalar ...`."""
    text = src[m.start():m.end()]
    mm = SHARED_SCALAR.match(text)
    if not mm:
        return None
    ty = " ".join(mm.group("type").split())
    name = mm.group("name")
    if not ty or ty in ("static", "extern") or "extern" in ty.split():
        return None
    return (f"static {ty} {name}; static ::lab_cpu::shared_scalar lab_cpu_shared_{name}("
            f'(void *)&{name}, sizeof({name}), "{name}");')


def rewrite_shared(src):
    code = mask_code(src)
    out = []
    last = 0
    matches = [(m, shared_repl) for m in SHARED.finditer(code)]
    matches += [(m, scalar_repl) for m in SHARED_SCALAR.finditer(code)]
    matches.sort(key=lambda mr: mr[0].start())
    for m, make in matches:
        if m.start() < last:
            continue
        line_start = code.rfind("\n", 0, m.start()) + 1
        if code[line_start:m.start()].lstrip().startswith("#"):
            continue  # a macro definition: leave it
        repl = make(m, src)
        if repl is None:
            continue
        repl += "\n" * src.count("\n", m.start(), m.end())
        out.append(src[last:m.start()])
        out.append(repl)
        last = m.end()
    out.append(src[last:])
    return "".join(out)


# a __device__ or __constant__ variable's declaration: the storage words and qualifiers before its
# type (any order), then the rest of the declaration up to its ';' (device_var_repl reads it)
DEVICE_VAR = re.compile(r"(?<![\w:])(?:(?:static|extern|volatile|__device__|__constant__)\s+)*"
                        r"(?:__device__|__constant__)\b")
DECLARATOR = re.compile(r"^(?P<type>.*?[\s*&])(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\[\]]*\]\s*)*)$", re.S)


def device_var_end(code, start):
    """(end of the declarator, end of the declaration at its ';') of the declaration whose
    declarator starts at start, or None when it is not one variable: a function (a '(' before
    any '=' or '{'), several declarators (a ',' outside brackets and template arguments)."""
    depth, angle, i = 0, 0, start
    decl_end = None
    while i < len(code):
        c = code[i]
        if c in "([{":
            if depth == 0 and decl_end is None and (c == "(" or c == "{"):
                if c == "(":
                    return None
                decl_end = i
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and c == "<" and decl_end is None:
            angle += 1
        elif depth == 0 and c == ">" and decl_end is None and angle:
            angle -= 1
        elif depth == 0 and c == "=" and decl_end is None:
            decl_end = i
        elif depth == 0 and c == "," and angle == 0 and decl_end is None:
            return None
        elif depth == 0 and c == ";":
            return (i if decl_end is None else decl_end), i
        i += 1
    return None


def top_level_const(ty):
    """Whether a declaration's type (before the name) makes the object itself const: const with no
    pointer after it, or a pointer declared *const."""
    if "*" in ty:
        return bool(re.search(r"\*\s*const\s*$", ty))
    return bool(re.search(r"\bconst\b", ty))


def device_var_repl(src, code, m):
    """(the replacement, end) of the device variable declared at m, or None to leave it alone (a
    function, a template, constexpr, an extern declaration, several names in one declaration)."""
    words = src[m.start():m.end()].split()
    before = code[max(0, m.start() - 200):m.start()].rstrip()
    if before.endswith(">") or re.search(r"\b(?:template|constexpr|inline|typedef)\s*$", before):
        return None
    if "extern" in words:  # the definition elsewhere gets the section
        return None
    ends = device_var_end(code, m.end())
    if ends is None:
        return None
    decl_end, semi = ends
    dm = DECLARATOR.match(src[m.end():decl_end].strip())
    if not dm or not dm.group("type").strip():
        return None
    ty, name = " ".join(dm.group("type").split()), dm.group("name")
    if re.search(r"\b(?:constexpr|inline|extern|typedef|thread_local)\b", ty) or "(" in ty:
        return None
    constant, const_obj = "__constant__" in words, top_level_const(ty)
    head = src[m.start():m.end()]
    if constant and not const_obj:
        # nvcc makes a __constant__ variable read-only to the kernels that use it (a store is a
        # compile error there: "expression must be a modifiable lvalue"): const here too, and
        # given the zeros it starts with when it has no initialiser (a const object needs one)
        init = src[decl_end:semi].strip()
        decl = (f"{head} LAB_CPU_DEVCONST {ty} const {name}{dm.group('dims').rstrip()}"
                + (f" {init}" if init else " = {}") + ";")
        # the lines of the type and name (joined here) follow; the initialiser keeps its own
        return decl + f" LAB_CPU_DEVINFO({name}, 1)" + "\n" * src.count("\n", m.start(), decl_end), semi + 1
    section = "LAB_CPU_DEVCONST" if const_obj else "LAB_CPU_DEVVAR"  # a __constant__ one is const here
    return f"{head} {section}" + src[m.end():semi + 1] + f" LAB_CPU_DEVINFO({name}, {int(const_obj)})", semi + 1


def rewrite_device_vars(src):
    """Every __device__ and __constant__ variable into device memory (lab_cpu.h, LAB_CPU_DEVVAR):
    pages of its own in a section of its own, and a record of its name, so that host code reaching
    it during a call faults as on a GPU and a kernel's store to a __constant__ one is an error
    naming it. Nothing moves: the declaration gains an attribute, and the record follows its ';'."""
    code = mask_code(src)
    out, last = [], 0
    for m in DEVICE_VAR.finditer(code):
        if m.start() < last:
            continue
        line_start = code.rfind("\n", 0, m.start()) + 1
        if code[line_start:m.start()].lstrip().startswith("#"):
            continue  # a macro definition
        got = device_var_repl(src, code, m)
        if got is None:
            continue
        repl, end = got
        out.append(src[last:m.start()])
        out.append(repl)
        last = end
    out.append(src[last:])
    return "".join(out)


LOOP = re.compile(r"\b(while|for)\s*\(")
LOOP_POINT = "::lab_cpu::loop_point(), "
# a condition that declares a variable (`while (int x = next())`): left alone
DECL_COND = re.compile(r"^\s*(?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^;]*>)?[\s*&]+[A-Za-z_]\w*\s*=(?!=)")


def first_at_depth0(code, start, want):
    """Index of the first character in want at bracket depth 0 from start, up to the bracket that
    closes the one opened just before start (which counts when it is in want), or -1."""
    depth = 0
    for i in range(start, len(code)):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i if c in want else -1
            depth -= 1
        elif c in want and depth == 0:
            return i
    return -1


def top_level_semicolon(code, start):
    """Index of the first ';' at depth 0 inside the parenthesis opened just before start, or -1
    (a range-based for has none)."""
    return first_at_depth0(code, start, ";")


def closing_paren(code, start):
    """Index of the ')' that closes the parenthesis opened just before start, or -1."""
    return first_at_depth0(code, start, ")")


# a `#pragma GCC unroll N` line just before a loop (what #pragma unroll became)
UNROLLED = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+GCC[ \t]+unroll\b[^\n]*\n[ \t]*\Z", re.M)


def loop_id(path, pos):
    """A number naming one loop of one file, the same in every build."""
    return "0x%08xu" % (zlib.crc32(f"{os.path.basename(path)}:{pos}".encode()) & 0xFFFFFFFF)


def instrument_loops(src, code, path):
    """Wraps the condition c of every loop in LAB_CPU_LOOP(id, c) (in a file that counts bank
    conflicts and sectors it reports each evaluation, so that the lanes of a warp are paired by
    iteration; elsewhere it is just (c)), and puts ::lab_cpu::loop_point() first in the condition
    of every while and do-while loop and of every for loop with no condition or no increment
    (for (;;), for (; flag == 0;)): the watchdog's safe point at every iteration, so that a
    spin-wait that never reaches a barrier, warp operation or atomic is still stopped cleanly.
    Counting loops (a condition and an increment) get no safe point: a check in them would keep
    the compiler from vectorising them (lab 02 ran twice as slowly), and a kernel stuck in one is
    still stopped, by the watchdog's last resort (signals.cpp). A counting loop under
    `#pragma GCC unroll` keeps a bare condition (GCC's annotation is on it) and counts its
    iterations with LAB_CPU_NEXT(id) in the increment instead. Everything inserted
    stays on the condition's own lines; a range-based for and a condition that declares a
    variable are left alone."""
    out = []
    last = 0
    for m in LOOP.finditer(code):
        if m.group(1) == "while":
            begin, end, point = m.end(), closing_paren(code, m.end()), True
        else:
            semi = top_level_semicolon(code, m.end())
            cond_end = top_level_semicolon(code, semi + 1) if semi >= 0 else -1
            if cond_end < 0:
                continue  # range-based for
            close = closing_paren(code, cond_end + 1)
            no_incr = close >= 0 and not code[cond_end + 1:close].strip()
            begin, end, point = semi + 1, cond_end, no_incr or not code[semi + 1:cond_end].strip()
            if not point and UNROLLED.search(code, 0, m.start()):
                # GCC's unroll annotation sits on the condition, which must stay bare: the
                # iteration is counted in the increment instead (after each pass)
                out.append(src[last:cond_end + 1])
                out.append(" LAB_CPU_NEXT(" + loop_id(path, begin) + "),")
                last = cond_end + 1
                continue
        if end < 0 or DECL_COND.match(code[begin:end]):
            continue
        begin += len(code[begin:end]) - len(code[begin:end].lstrip())  # spaces stay outside
        cond = src[begin:end]
        empty = not cond.strip()
        head = "LAB_CPU_LOOP(" + loop_id(path, begin) + ", " + (LOOP_POINT if point else "")
        out.append(src[last:begin])
        out.append((" " if empty else "") + head + ("true" if empty else cond) + ")")
        last = end
    out.append(src[last:])
    return "".join(out)


BARRIER_HELPER = re.compile(r"__device__[^;{}()]*?\b([A-Za-z_]\w*)[ \t]*\([ \t]*(?:void)?[ \t]*\)[ \t\n]*\{")
SYNC = re.compile(r"\b__syncthreads[ \t]*\([ \t]*\)")
HELPER_PARAMS = "(const char *lab_cpu_file = __builtin_FILE(), int lab_cpu_line = __builtin_LINE())"
HELPER_SYNC = "((void)::lab_cpu::block_barrier(::lab_cpu::B_PLAIN, 0, lab_cpu_file, lab_cpu_line))"


def matching_brace(code, open_at):
    """The index of the '}' that closes the '{' at open_at in masked code, or -1."""
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def barrier_helpers(src, code):
    """Gives each __device__ function without parameters whose body calls __syncthreads() the
    caller's file and line as defaulted parameters, and makes its barrier report them."""
    out = []
    last = 0
    for m in BARRIER_HELPER.finditer(code):
        close = matching_brace(code, m.end() - 1)
        if close < 0 or not SYNC.search(code, m.end(), close):
            continue
        params = code.rindex("(", m.start(1), m.end())
        params_end = code.index(")", params)
        out.append(src[last:params])
        out.append(HELPER_PARAMS)
        body_out, at = [], params_end + 1
        for sm in SYNC.finditer(code, m.end(), close):
            body_out.append(src[at:sm.start()])
            body_out.append(HELPER_SYNC)
            at = sm.end()
        out.append("".join(body_out))
        last = at
    out.append(src[last:])
    return "".join(out)


PRAGMA_UNROLL = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+unroll\b[^\n]*$", re.M)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)


def inline_includes(src, path, seen):
    """Replaces #include "x" of a file next to path that launches kernels or declares __shared__
    arrays with its rewritten text (between #line markers), so those are rewritten too."""
    out = []
    last = 0
    for m in INCLUDE.finditer(src):
        inc = os.path.join(os.path.dirname(path), m.group(1))
        if not os.path.isfile(inc) or os.path.abspath(inc) in seen:
            continue
        with open(inc, **ENCODING) as f:
            text = f.read()
        code = mask_code(text)
        if "<<<" not in code and "__shared__" not in code:
            continue
        body = rewrite_body(text, inc, seen | {os.path.abspath(inc)})
        line = src.count("\n", 0, m.end()) + 2
        out.append(src[last:m.start()])
        out.append(f'#line 1 "{inc}"\n{body}\n#line {line} "{path}"')
        last = m.end()
    out.append(src[last:])
    return "".join(out)


def gcc_unroll(m):
    """#pragma unroll [N] as GCC says it: N when it is a number, else 64 (nvcc unrolls a constant
    trip count completely; GCC needs a factor, and 64 covers every loop the labs unroll)."""
    arg = m.group(0).split("unroll", 1)[1].strip()
    return "#pragma GCC unroll " + (arg if arg.isdigit() else "64")


def rewrite_body(src, path, seen):
    src = PRAGMA_UNROLL.sub(gcc_unroll, src)
    src = rewrite_launches(src, mask_code(src), path)
    src = rewrite_shared(src)
    src = rewrite_device_vars(src)
    src = instrument_loops(src, mask_code(src), path)
    src = barrier_helpers(src, mask_code(src))
    return inline_includes(src, path, seen)


def rewrite(src, path):
    if src.startswith("\ufeff"):  # a UTF-8 byte-order mark: no longer first once the include is
        src = src[1:]
    body = rewrite_body(src, path, {os.path.abspath(path)})
    return f'#include "cuda_runtime.h"\n#line 1 "{path}"\n' + body


def main():
    ap = argparse.ArgumentParser(description="CPU mode: rewrite a .cu file into host C++")
    ap.add_argument("src")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    try:
        with open(args.src, **ENCODING) as f:
            src = f.read()
    except OSError as e:
        print(f"rewrite.py: cannot read {args.src}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        text = rewrite(src, args.src)
    except SyntaxError as e:
        print(f"rewrite.py: {e}", file=sys.stderr)
        return 1
    with open(args.output, "w", **ENCODING) as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
