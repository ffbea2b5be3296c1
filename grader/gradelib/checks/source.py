"""The first pass, on the text of scan.cu as written: its size, #line directives, #embed, the
#include lines written out (a library, a harness header, a file by path) and CPU mode's runtime
named. Quick, with line numbers at hand, and run before anything is compiled (a forbidden
#include may not even compile); headers.check_headers, on the compiler's own list, is the
authority (an #include hidden behind a macro is only seen there).
"""
import re

from .headers import HARNESS_WHY, LIBRARY_WHY, PATH_WHY, header_patterns, include_message
from .lexer import lex, line_finder

INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
EMBED_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*embed\b|(?<![A-Za-z0-9_$])__has_embed(?![A-Za-z0-9_$])', re.M)
# #line 10 "x.h" and gcc's own markers (# 10 "x.h"): either would make the compiler's output
# attribute the lab's code to another file
LINE_DIRECTIVE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:line\b|[0-9])', re.M)


def check_source(text, static, harness_headers=()):
    """Violations (one line each) in the source text of a scan.cu: its size, #line directives
    (they would hide code from check_host_asm), and the #include lines written out literally
    (a library, a harness header, a file by path). A quick first
    pass with the line numbers at hand; check_headers, on the compiler's own list, is the
    authority (an #include hidden behind a macro is only seen there). harness_headers: the
    names of the harness's headers besides static's lab_headers (Builder.harness_headers)."""
    found = []
    limit = static.get("max_source_bytes", 0)
    if limit and len(text.encode("utf-8", errors="replace")) > limit:
        found.append(f"the source is over {limit} bytes")
    code, joints = lex(text)
    named, _ = lex(text, keep_literals=True)  # the same text with the header names left in
    line_at = line_finder(code, joints)
    pats = header_patterns(static)
    for k, m in enumerate(LINE_DIRECTIVE_RE.finditer(code)):
        if k == 10:
            found.append("... and more #line directives")
            break
        found.append(f"#line directive (line {line_at(m.start())}): lab code may not renumber its "
                     f"lines (the checks need to know which code is scan.cu's)")
    for m in INCLUDE_RE.finditer(named):
        if not INCLUDE_RE.match(code, m.start()):
            continue  # inside a literal
        quote, inc = m.group(1), m.group(2).strip()
        line = line_at(m.start())
        base = inc.replace("\\", "/")
        if any(p.search(base) for p in pats):
            found.append(include_message(inc, quote, line, LIBRARY_WHY))
        elif base.startswith("/") or ".." in base.split("/"):
            found.append(include_message(inc, quote, line, PATH_WHY))
        elif base in set(harness_headers) - set(static["lab_headers"]):
            found.append(include_message(inc, quote, line, HARNESS_WHY))
    for m in EMBED_RE.finditer(code):  # C23/C++26 #embed reads a file into the program as it compiles
        found.append(f"#embed (line {line_at(m.start())}): lab code may not read files into the program")
        break
    m = re.search(r"(?<![A-Za-z0-9_$])lab_cpu(?![A-Za-z0-9_$])", code)
    if m:  # CPU mode's runtime: reaching into it could do there what CUDA code cannot
        found.append(f"names lab_cpu (line {line_at(m.start())}): that is CPU mode's own runtime, "
                     f"not CUDA; lab code may not use it")
    return found
