"""Inline assembly in host code, and clocks read in device code.

Host code may not use asm at all (check_host_asm, on nvcc's host translation; CPU mode's
equivalent is cpu_code.host_asm). Device code may, but not to read a clock (check_device_clocks, on the
PTX): a lab has no use for one, and timing itself is how a lab could tell a slow tool from a real
run. clock_message is the one wording of that violation, which symbols.check_symbols and CPU
mode's checks give too.
"""
import os
import re

from .headers import RealPaths, follow_marker

_ASM_RE = re.compile(r"(?<![A-Za-z0-9_$])(asm|__asm__|__asm)(?![A-Za-z0-9_$])")
_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
PTX_CLOCK_RE = re.compile(r"%(clock64|clock|globaltimer(?:_lo|_hi)?)\b")


def clock_message(reg, line=None):
    """The violation for a clock register reg (clock64, globaltimer, ...) read in device code,
    on line of scan.cu (None: not known)."""
    where = f" (line {line})" if line is not None else ""
    return (f"reads a clock in device code{where}: lab code may not time itself (%{reg}); the "
            f"harness times it, and a lab that measures its own speed could behave differently "
            f"under a tool such as compute-sanitizer")


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
        line = loc[1] if loc and os.path.realpath(files.get(loc[0], "")) == src else None
        msg = clock_message(reg, line)
        if msg not in out:
            out.append(msg)
    return out


def check_host_asm(translation, private_src):
    """Violations in nvcc's host translation of scan.cu (the .cudafe1.cpp that cudafe++ makes:
    host code as the host compiler sees it, the bodies of __device__ and __global__ functions
    left out inside #if 0): an asm statement, asm declaration or asm label on a line that
    comes from scan.cu itself. One message per line of scan.cu."""
    src, real = os.path.realpath(private_src), RealPaths()
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
            in_src, line = follow_marker(s, src, in_src, line, real)
            continue
        if skip:
            continue
        if in_src and _ASM_RE.search(_STRING_RE.sub('""', ln)) and line not in seen:
            seen.add(line)
            found.append(f"inline assembly in host code (line {line}): only device code may use asm")
        line += 1
    return found
