"""A C/C++ lexer just deep enough for the static checks: comments, string and character literals
(raw strings too), numbers with digit separators, identifiers, and backslash-newline splices.

lex() gives the text after translation phases 1-3 as far as the checks care; strip_comments()
the same, line for line with the original; find_line() and lines_of() find an identifier in it;
without_attributes() drops each __attribute__((...)) from a list of tokens (checks/cpu.py and
checks/device_calls.py read function heads that way).
CPU mode's rewriter (common/cpu/rewrite.py, mask_code) has its own smaller masker: it runs as a
standalone script on the course's side, which imports nothing from the grader
(grader/docs/MAINTAINERS.md, "How the grader is built", says why the two are not one).
"""
import bisect
import re


def splice(text):
    """text with backslash-newline continuations joined (translation phase 2), and the
    positions in the joined text where they were."""
    joints, parts, pos, size = [], [], 0, 0
    for m in re.finditer(r"\\\r?\n", text):
        parts.append(text[pos:m.start()])
        size += m.start() - pos
        joints.append(size)
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts), joints


_RAW_RE = re.compile(r'(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(')


def lex(text, keep_literals=False):
    """(clean, joints): text after translation phases 1-3 as far as the checks care: lines
    joined at backslash-newlines, each comment replaced by spaces (newlines kept), and the
    insides of string, character and raw string literals blanked (newlines kept; with
    keep_literals, left as they are: the same length either way). joints are the positions
    where lines were joined (see splice)."""
    src, joints = splice(text)
    out = []
    i, n = 0, len(src)

    def literal(a, b):
        body = src[a:b]
        return body if keep_literals else "".join(ch if ch == "\n" else " " for ch in body)

    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in src[i:j]))
            i = j
        elif c in "uULR" and _RAW_RE.match(src, i):
            m = _RAW_RE.match(src, i)
            close = ")" + m.group(1) + '"'
            j = src.find(close, m.end())
            end = n if j < 0 else j
            out.append(src[i:m.end()] + literal(m.end(), end) + src[end:end + len(close)])
            i = end + len(close) if j >= 0 else n
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j, n)
            closed = j < n and src[j] == c
            out.append(c + literal(i + 1, j) + (c if closed else ""))
            i = j + 1 if closed else j
        elif c.isdigit():  # a number, with digit separators (1'000) and exponents (1e+5)
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in "_.'" or
                             (src[j] in "+-" and src[j - 1] in "eEpP")):
                j += 1
            out.append(src[i:j])
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            out.append(src[i:j])  # an identifier: an R inside one starts no raw string
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), joints


def unsplice(clean, joints):
    """clean (from lex) with a newline put back at each joint, so its line numbers are the
    original's."""
    if not joints:
        return clean
    parts, pos = [], 0
    for j in joints:
        parts.append(clean[pos:j])
        parts.append("\n")
        pos = j
    parts.append(clean[pos:])
    return "".join(parts)


def line_finder(clean, joints):
    """A function from a position in clean (from lex) to its line in the original text."""
    newlines = [i for i, ch in enumerate(clean) if ch == "\n"]

    def line_at(i):
        return bisect.bisect_left(newlines, i) + bisect.bisect_right(joints, i) + 1
    return line_at


def strip_comments(text):
    """text with C/C++ comments replaced by spaces and the insides of literals blanked (see
    lex), line for line: a commented-out #include is not held against the student, and an
    identifier found in it is code."""
    clean, joints = lex(text)
    return unsplice(clean, joints)


def find_line(code, names):
    """The first line of code (as strip_comments returns it) where one of names occurs as a whole
    identifier, or None."""
    best = None
    for name in names:
        if not name:
            continue
        m = re.search(r"(?<![A-Za-z0-9_$])" + re.escape(name) + r"(?![A-Za-z0-9_$])", code)
        if m and (best is None or m.start() < best):
            best = m.start()
    return None if best is None else code.count("\n", 0, best) + 1


def lines_of(code, name):
    """Every line of code (strip_comments) where name occurs as a whole identifier."""
    if not code:
        return []
    return sorted({code.count("\n", 0, m.start()) + 1
                   for m in re.finditer(r"(?<![A-Za-z0-9_$])" + re.escape(name) + r"(?![A-Za-z0-9_$])", code)})


def without_attributes(tokens):
    """tokens (a list of token strings) without each __attribute__((...)) and its parentheses."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i] == "__attribute__" and i + 1 < len(tokens) and tokens[i + 1] == "(":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[i], 0)
                i += 1
                if depth == 0:
                    break
            continue
        out.append(tokens[i])
        i += 1
    return out
