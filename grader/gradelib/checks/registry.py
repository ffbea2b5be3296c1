"""The registry of the static checks: every rule, the phase that runs it, the evidence it reads and,
for a rule that needs nvcc, its CPU-mode twin (the rule that refuses the same code in a grade
without nvcc, such as Gradescope's: tests/test_static_parity.py holds the two to the same verdicts).

A phase gathers its evidence and runs every rule registered for it (run), in the order below:
  text     the source as written, before anything is compiled (stage_build);
  nvcc     what nvcc makes of the private copy: its headers before the compile, the files the
           compile kept after it (nvcc.Precheck);
  cpu      the same on CPU mode's C++ compile, no nvcc needed (cpu.source_checks);
  object   each object the build made, nvcc's and CPU mode's (objects.check_object);
  binary   the linked binary (stage_build).
A rule is a function of (evidence, ctx): ctx is the phase's types.SimpleNamespace of what the
rules share (the static config, the private source, the header context, the lab's kind, ...).
Adding a check is one function beside the evidence it reads and one Rule here (CONTRIBUTING.md).
Device code that calls a host function is not a rule: nvcc's compile fails on it, so CPU mode
fails the build with nvcc's message (cpu.device_host_calls).
"""
import dataclasses
from typing import Callable

from .asm import check_device_clocks, check_host_asm
from .cpu_code import host_asm, host_device_vars
from .headers import check_headers, check_line_directives, header_patterns
from .linked import check_binary
from .machine import check_machine_code
from .sections import check_sections, check_startup
from .source import check_source
from .symbols import check_symbols

PHASES = ("text", "nvcc", "cpu", "object", "binary")


@dataclasses.dataclass(frozen=True)
class Rule:
    name: str
    phase: str
    reads: str  # the evidence the phase hands it
    check: Callable  # check(evidence, ctx) -> [violation, ...]
    refuses: str  # what it refuses, in a few words (grader/README.md, "Static checks")
    twin: str = ""  # an nvcc rule's CPU-mode rule: "cpu:name"


def _headers(deps, c):
    """The compiler's list of headers: only when one is refused is the include tree read (origins)."""
    pats = header_patterns(c.static)
    refused = [d for d in deps if c.headers.classify(d, pats)]
    return check_headers(deps, c.static, c.headers, c.origins(refused)) if refused else []


RULES = (
    Rule("source", "text", "source", lambda text, c: check_source(text, c.static, c.harness_headers),
         "#include lines of a library, a harness header or a file by path; #line; #embed; lab_cpu; the size"),
    Rule("headers", "nvcc", "dependencies", _headers,
         "every header the compiler reads that is a library, a harness header or a file by path",
         twin="cpu:headers"),
    Rule("device_clocks", "nvcc", "ptx", lambda ptx, c: check_device_clocks(ptx, c.priv_src),
         "a clock read in device code (%clock, %clock64, %globaltimer)", twin="cpu:host_asm"),
    Rule("line_directives", "nvcc", "host_preprocessed", lambda pre, c: check_line_directives(pre, c.priv_src),
         "#line directives that rename scan.cu's code", twin="cpu:line_directives"),
    Rule("host_asm", "nvcc", "host_translation", lambda tr, c: check_host_asm(tr, c.priv_src),
         "inline assembly in host code", twin="cpu:host_asm"),
    Rule("headers", "cpu", "dependencies", _headers,
         "every header the C++ compile reads that is a library, a harness header or a file by path"),
    Rule("line_directives", "cpu", "preprocessed", lambda pre, c: check_line_directives(pre, c.priv_src),
         "#line directives that rename scan.cu's code"),
    Rule("host_asm", "cpu", "preprocessed", lambda pre, c: host_asm(pre, c.priv_src),
         "inline assembly in host code, clocks read in device code, asm CPU mode cannot build"),
    Rule("host_device_vars", "cpu", "preprocessed", lambda pre, c: host_device_vars(pre, c.priv_src),
         "host code that reads or writes a __device__ or __constant__ variable (nvcc's error)"),
    Rule("symbols", "object", "symbols",
         lambda syms, c: check_symbols(syms, c.static, c.device_lab, c.gpu_build, c.harness_imports, c.code,
                                       c.cpu_build),
         "a call outside the allowlist, a shadowed harness name, a lab with no kernel"),
    Rule("startup", "object", "elf", lambda elf, c: check_startup(elf, c.static),
         "code that runs before or after main (constructors, destructors)"),
    Rule("sections", "object", "elf", lambda elf, c: check_sections(elf),
         "writable code, an executable stack"),
    Rule("machine_code", "object", "instructions",
         lambda insns, c: check_machine_code(insns, c.machine, c.static, c.gpu_build, c.cpu_build),
         "system-call instructions, calls through pointers"),
    Rule("static_runtime", "binary", "binary", lambda binary, c: check_binary(binary),
         "the CUDA runtime linked dynamically"),
)


def rules(phase, reads=None):
    """The rules of phase (that read reads, when given), in order."""
    return [r for r in RULES if r.phase == phase and (reads is None or r.reads == reads)]


def run(phase, reads, evidence, ctx, found=None):
    """found (a new list when None) with the violations of every rule of phase that reads
    reads, on evidence, each violation once."""
    found = [] if found is None else found
    for rule in rules(phase, reads):
        for v in rule.check(evidence, ctx):
            if v not in found:
                found.append(v)
    return found
