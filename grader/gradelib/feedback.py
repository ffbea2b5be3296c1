"""What a submission prints, made safe to show: bounded, cleaned and marked as its own.

Anything a graded program (or the compiler reading the student's file) writes can end up in the
feedback: a crash's last stderr lines, a sanitizer's findings, a compile error with the text of
a student's #error. Each piece is cut to a stated number of bytes (config.json "feedback", read
by config.py), stripped of control characters (ANSI escapes, NUL, \\r, backspaces, bidi
overrides: nothing that could redraw or reorder what a student sees), and quoted as the
program's, «like this», so that it can never pass for a grader verdict. The whole document a
platform shows is bounded too (fit: the longest texts are cut, saying so, until it fits).

The limits are this module's state, set once per grading session (configure, from
Config.feedback); DEFAULTS holds the values until then.
"""
import copy
import re

DEFAULTS = {
    "case_tail_bytes": 300,      # the program's own output quoted in one case's message
    "case_message_bytes": 600,   # one case's (or sanitizer run's) whole message
    "lab_output_bytes": 4000,    # one test's output, one lab's build message or details block
    "results_max_bytes": 500000,  # one results document (results.json, in any format)
}
_limits = dict(DEFAULTS)

OPEN, CLOSE = "«", "»"  # the quotes around a program's output; never left inside it

# ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), any other ESC x
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
# C0 controls but \n and \t, DEL, C1 controls, and the Unicode format characters that move text
# about (bidi embeddings, overrides and isolates, line and paragraph separators, BOM)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def configure(settings):
    """Sets the limits of this session (config.Config.feedback); missing keys keep DEFAULTS."""
    _limits.clear()
    _limits.update(DEFAULTS)
    _limits.update(settings or {})


def limit(name):
    """The limit called name (a key of DEFAULTS), in bytes."""
    return _limits[name]


def clean(text, newlines=True):
    """text without escape sequences and control characters; tabs become spaces, and line
    breaks stay (newlines=True) or become " | "."""
    text = _ESCAPES.sub("", text or "")
    text = text.replace("\r\n", "\n").replace("\t", " ")
    text = _CONTROLS.sub("", text)
    if not newlines:
        text = " | ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    return text


def _utf8_len(text):
    return len(text.encode("utf-8", errors="replace"))


def head(text, nbytes):
    """The longest start of text that is at most nbytes long in UTF-8."""
    return text.encode("utf-8", errors="replace")[:max(0, nbytes)].decode("utf-8", errors="ignore")


def tail_bytes(text, nbytes):
    """The longest end of text that is at most nbytes long in UTF-8."""
    data = text.encode("utf-8", errors="replace")
    return data[max(0, len(data) - nbytes):].decode("utf-8", errors="ignore") if nbytes > 0 else ""


def quote(text, nbytes=None, end=True):
    """text (a program's output) cleaned, made one line, cut to nbytes (default: the case tail
    limit; its end, or its start with end=False) and quoted: «...», with "[cut to N bytes]" in
    front when it was cut. The quote marks never occur inside."""
    nbytes = limit("case_tail_bytes") if nbytes is None else nbytes
    text = clean(text, newlines=False).replace(OPEN, '"').replace(CLOSE, '"')
    if _utf8_len(text) <= nbytes:
        return OPEN + text + CLOSE
    part = tail_bytes(text, nbytes) if end else head(text, nbytes)
    return f"[cut to {nbytes} bytes] {OPEN}{'…' if end else ''}{part}{'' if end else '…'}{CLOSE}"


def program_tail(text, what="stderr", lines=3):
    """How a case message quotes the end of a program's output: 'its stderr ended: «a | b»' (the
    last `lines` non-blank lines, cut to the case tail limit), or "" when there is none."""
    ls = [ln for ln in clean(text).splitlines() if ln.strip()]
    if not ls:
        return ""
    return f"its {what} ended: {quote(' | '.join(ls[-lines:]))}"


def cap(text, nbytes, what="output"):
    """text cleaned (line breaks kept) and, when longer than nbytes, cut to about nbytes with a
    last line that says so. For a grader's message that holds program output (a case message,
    a compiler message, a test's output)."""
    text = clean(text)
    if _utf8_len(text) <= nbytes:
        return text
    note = f"\n[{what} cut to {nbytes} bytes]"
    return head(text, max(0, nbytes - _utf8_len(note))).rstrip() + note


def line(text, nbytes):
    """text cleaned and made one line (line breaks become " | "), cut to nbytes with
    " [cut to N bytes]" at the end when it was longer. For a one-line message that may hold
    program output (the harness's report message, the sandbox's line)."""
    text = clean(text, newlines=False)
    if _utf8_len(text) <= nbytes:
        return text
    note = f" [cut to {nbytes} bytes]"
    return head(text, max(0, nbytes - _utf8_len(note))).rstrip() + note


def cap_lines(text, line_bytes, nbytes, what="compiler output"):
    """A multi-line program output (a compiler's): every line cut to line_bytes, the whole to
    nbytes (cap), control characters removed."""
    lines = []
    for ln in clean(text).splitlines():
        if _utf8_len(ln) > line_bytes:
            ln = head(ln, line_bytes) + f" [line cut to {line_bytes} bytes]"
        lines.append(ln)
    return cap("\n".join(lines), nbytes, what)


# ---- the whole document -------------------------------------------------------------------------

FLOOR = 200  # fit never cuts a text below this many bytes (names, numbers, statuses stay whole)


def _strings(obj, path=()):
    """(path, string) of every string leaf of a JSON-like obj (keys are not leaves)."""
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, path + (i,))


def _set(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _level(lengths, excess):
    """The highest length L (at least FLOOR) such that cutting every text longer than L down to
    L saves at least excess bytes, or None when even FLOOR does not save enough."""
    lengths = sorted((x for x in lengths if x > FLOOR), reverse=True)
    saved = 0
    for i, x in enumerate(lengths):  # from lengths[i] down to the next, each byte saves i + 1
        nxt = lengths[i + 1] if i + 1 < len(lengths) else FLOOR
        room = (x - nxt) * (i + 1)
        if saved + room >= excess:
            return max(FLOOR, x - -(-(excess - saved) // (i + 1)))
        saved += room
    return None


def fit(obj, render, max_bytes=None, why="results.json must stay under"):
    """render(obj) at most max_bytes long (default: the results limit) in UTF-8: when it is
    longer, the longest texts of obj (a JSON-like dict, left unchanged: a copy is cut) are cut
    to one common length, each saying so, until the rendering fits; the lists named in LISTS are
    shortened as a last resort. Returns the text."""
    max_bytes = limit("results_max_bytes") if max_bytes is None else max_bytes
    text = render(obj)
    size = _utf8_len(text)
    if size <= max_bytes:
        return text
    obj = copy.deepcopy(obj)
    keep = [3, 1, 0]  # the lists' lengths to try, in turn, when cutting texts is not enough
    for _ in range(12):
        excess = size - max_bytes
        leaves = list(_strings(obj))
        note_room = 80  # each cut text gains a note and JSON escapes grow texts: aim lower
        level = _level([_utf8_len(s) for _, s in leaves], excess + note_room * 4 + excess // 8)
        if level is None:
            level = FLOOR
            if keep:
                _shorten_lists(obj, keep.pop(0))
                leaves = list(_strings(obj))
        for path, s in leaves:
            n = _utf8_len(s)
            if n > level:
                note = f" [cut from {n} to {level} bytes: {why} {max_bytes} bytes]"
                _set(obj, path, head(s, max(0, level - _utf8_len(note))).rstrip() + note)
        text = render(obj)
        size = _utf8_len(text)
        if size <= max_bytes:
            return text
    raise ValueError(f"the document cannot be cut to {max_bytes} bytes (it is {size})")


LISTS = ("failures", "violations", "checks")  # the lists of a result that fit may shorten
LISTS_WHY = "some entries left out: the document must stay under its size limit"


def _shorten_lists(obj, keep=3):
    """Every list named in LISTS cut to its first keep entries."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in LISTS and isinstance(v, list) and len(v) > keep:
                del v[keep:]
                if isinstance(obj.get("note"), str):  # the entry's counts stay; its note says why
                    obj["note"] = (obj["note"] + "; " if obj["note"] else "") + LISTS_WHY
            else:
                _shorten_lists(v, keep)
    elif isinstance(obj, list):
        for v in obj:
            _shorten_lists(v, keep)
