"""The headers a scan.cu reads, as the compiler sees them: which are refused and why.

A lab may include the toolkit's and the C/C++ library's headers, and of the course's only lab.h,
cuda_check.h and its own course/NN_name.h (config.json's static.lab_headers). Refused: a scan, sort
or reduce library (static.forbidden_header_patterns), any other harness header, and any file by
path. The compiler's list of what it read (nvcc -M, or g++ -M in CPU mode) is the authority;
source.check_source reads the #include lines written out, as a quick first pass. Also here:
include_origins (which line of scan.cu brought a header in) and check_line_directives (#line
directives that rename scan.cu's code), both read from gcc -E's line markers.
"""
import glob
import os
import re

LIBRARY_WHY = "scan, sort and reduce libraries are not allowed"
HARNESS_WHY = ("the harness's own headers are not for lab code (lab.h, cuda_check.h and the lab's "
               "course/NN_name.h are)")
PATH_WHY = "only scan.cu is graded; include no files by path"

# a line marker of gcc -E: # LINE "FILE" FLAGS (flag 1: entering FILE, 2: back in FILE)
_MARKER_RE = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')


def include_message(spelled, quote, line, why):
    """The violation for one #include: what it names, the line of scan.cu, and why."""
    shown = f"<{spelled}>" if quote == "<" else f'"{spelled}"'
    where = f" (through line {line})" if line else ""
    return f"includes {shown}{where}: {why}"


def header_patterns(static):
    """static's forbidden_header_patterns, compiled."""
    return [re.compile(p) for p in static.get("forbidden_header_patterns", [])]


def parse_dependencies(text, cwd):
    """The prerequisites of the make rule(s) nvcc -M writes, as absolute paths (relative ones are
    taken from cwd), in order and without repeats."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    out, seen = [], set()
    for rule in text.splitlines():
        if ":" not in rule:
            continue
        # "target: a b\ c": the first unescaped ': ' ends the targets
        m = re.search(r"(?<!\\):(\s|$)", rule)
        if not m:
            continue
        for tok in re.findall(r"(?:\\ |[^\s])+", rule[m.end():]):
            path = tok.replace("\\ ", " ").replace("$$", "$")
            path = os.path.normpath(os.path.join(cwd, path))
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out


def under(path, root):
    """Whether path is root or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


class HeaderContext:
    """What classifying a header path needs: the private scan.cu, the course's common/ folder and
    the headers of it a lab may include (lab_headers: paths below common/, glob patterns such as
    course/*.h for the labs' own headers), and the system include folders (nvcc's -I/-isystem
    folders and the host compiler's own), all as real paths."""

    def __init__(self, private_src, common_dir, system_dirs, lab_headers, runtime_dirs=(), also_sources=()):
        self.private_src = os.path.realpath(private_src)
        # CPU mode: its CUDA headers (common/cpu) stand for the toolkit's include folder, and the
        # C++ that CPU mode compiles (rewrite.py's output) is the source itself
        self.runtime_dirs = sorted({os.path.realpath(d) for d in runtime_dirs}, key=len, reverse=True)
        self.sources = {self.private_src} | {os.path.realpath(p) for p in also_sources}
        self.private_dir = os.path.dirname(self.private_src)
        self.common_dir = os.path.realpath(common_dir)
        self.lab_headers = {os.path.realpath(p) for h in lab_headers
                            for p in glob.glob(os.path.join(glob.escape(self.common_dir), h))}
        roots = {os.path.realpath(d) for d in system_dirs if d}
        # the course's folders are never system folders, whatever the command line says
        self.system_dirs = sorted((r for r in roots if not under(r, self.common_dir)
                                   and not under(r, self.private_dir)), key=len, reverse=True)

    def classify(self, path, patterns):
        """(why, shown name) for a header a lab may not include, or None when it may."""
        real = os.path.realpath(path)
        if real in self.sources or real in self.lab_headers:
            return None
        for root in self.runtime_dirs:
            if under(real, root):
                rel = os.path.relpath(real, root)
                return (LIBRARY_WHY, rel) if any(p.search(rel) for p in patterns) else None
        if under(real, self.common_dir):
            return HARNESS_WHY, os.path.relpath(real, self.common_dir)
        if under(real, self.private_dir):
            return PATH_WHY, os.path.relpath(real, self.private_dir)
        for root in self.system_dirs:
            if under(real, root):
                rel = os.path.relpath(real, root)
                if any(p.search(rel) for p in patterns):
                    return LIBRARY_WHY, rel
                return None
        return PATH_WHY, real


def unescape(name):
    """A file name as gcc writes it in a line marker (backslash escapes) as it is."""
    return re.sub(r"\\(.)", r"\1", name)


LINE_MARKER_RE = re.compile(r'^#\s*(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?')  # `# 12 "file"` or `#line 12`


class RealPaths(dict):
    """os.path.realpath remembered for one pass over preprocessed text, whose line markers name
    the same few dozen files tens of thousands of times (each realpath is a system call per part
    of the path: most of a check's time, and with every lab's checks in threads of one grader,
    time they take from each other)."""

    def __missing__(self, name):
        real = self[name] = os.path.realpath(name)
        return real


def follow_marker(ln, src, in_src, line, real):
    """One line of preprocessed text that starts with '#': a line marker gives (whether the
    lines after it come from the file src, the next line's number); any other directive (a
    #pragma) is a line of its own. real: the pass's RealPaths. Returns (in_src, line)."""
    m = LINE_MARKER_RE.match(ln)
    if not m:
        return in_src, line + 1
    if m.group(2) is not None:
        name = unescape(m.group(2))
        in_src = not name.startswith("<") and real[name] == src
    return in_src, int(m.group(1))


def include_origins(preprocessed, private_src):
    """From the line markers of preprocessed output (gcc -E): {real path of a header: (line of
    scan.cu whose #include brought it in, real path of the header that line includes)}. The
    first time a header is entered counts."""
    src, real = os.path.realpath(private_src), RealPaths()
    stack = []  # [(real path, line reached)]
    origins = {}
    for ln in preprocessed.splitlines():
        m = _MARKER_RE.match(ln) if ln.startswith("#") else None
        if m:
            line, name, flags = int(m.group(1)), m.group(2), m.group(3).split()
            path = real[unescape(name)] if not name.startswith("<") else name
            if "1" in flags:  # entering path from the file on top of the stack
                if stack and stack[-1][0] == src:
                    top = (stack[-1][1], path)
                elif stack and stack[-1][0] in origins:
                    top = origins[stack[-1][0]]
                else:
                    top = None
                if top and path not in origins:
                    origins[path] = top
                stack.append([path, line])
            elif "2" in flags:  # back in path
                while stack and stack[-1][0] != path:
                    stack.pop()
                if stack:
                    stack[-1][1] = line
                else:
                    stack.append([path, line])
            else:
                if stack:
                    stack[-1] = [path, line]
                else:
                    stack.append([path, line])
        elif stack:
            stack[-1][1] += 1
    return origins


def check_line_directives(preprocessed, private_src):
    """Violations: #line directives that give code another file's name, found in preprocessed
    output (gcc -E of the host side): a line marker in scan.cu's code that changes the file name
    without flag 1 or 2 (the markers gcc writes for its own includes). check_host_asm trusts the
    file names of nvcc's host translation, so code renamed to a system header would be
    skipped."""
    src, real = os.path.realpath(private_src), RealPaths()
    current = None
    found = []
    for ln in preprocessed.splitlines():
        m = _MARKER_RE.match(ln) if ln.startswith("#") else None
        if not m:
            continue
        name, flags = unescape(m.group(2)), m.group(3).split()
        path = name if name.startswith("<") else real[name]
        if "1" not in flags and "2" not in flags and current == src and path != src and not path.startswith("<"):
            # (no line number: gcc drops blank lines before a marker, so the count is not exact;
            # check_source names the line of every #line it can see)
            msg = ("#line directive: lab code may not renumber its lines (the checks need to know "
                   "which code is scan.cu's)")
            if msg not in found:
                found.append(msg)
        current = path
    return found


def check_headers(deps, static, ctx, origins=None):
    """Violations among deps (the header paths nvcc -M lists) for HeaderContext ctx: a scan,
    sort or reduce library (static's forbidden_header_patterns, matched against the path below
    its system include folder), a harness header other than static's lab_headers, or any file
    outside the system include folders (a file by path). origins (include_origins) names the
    line of scan.cu each came through; one message per #include line of scan.cu, naming the
    outermost header refused."""
    pats = header_patterns(static)
    found, lines_done = [], set()
    origins = origins or {}
    for path in deps:
        bad = ctx.classify(path, pats)
        if bad is None:
            continue
        real = os.path.realpath(path)
        line, top = origins.get(real, (None, None))
        if line is not None:
            if line in lines_done:
                continue
            top_bad = ctx.classify(top, pats) if top else None
            if top_bad is not None:  # the header named on that line is itself refused
                bad = top_bad
            lines_done.add(line)
        elif found:
            continue  # without the include tree, one message says enough
        why, shown = bad
        found.append(include_message(shown, '"' if why != LIBRARY_WHY else "<", line, why))
    return found
