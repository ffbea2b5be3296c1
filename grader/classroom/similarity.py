"""Similarity between the submissions of a class (grade.py --similarity), for the class report.

Debian's similarity-tester (`sim_c`, package similarity-tester) compares C token streams, so
renamed identifiers, other comments and another layout do not hide a copy. Per lab:

1. The skeleton's text is taken out of every file: `sim_c -n -S -r SKELETON_RUN FILE / SKELETON`
   lists the runs of FILE that are also in the handed-out labs/NN/scan.cu, and those lines are
   blanked in a private copy (line numbers kept), so the code every student was given (the
   header, the signatures, the launcher's frame) is never a match.
2. `sim_c -p -e -a -r MIN_RUN` over the students' stripped copies and the stripped reference
   (solutions/NN/scan.cu, after the `/`: it is compared with, never on its own) gives, for each
   pair, how much of one file is material of the other.
3. A pair at or above `threshold_percent` either way is listed, best first (two students who
   are both over it against the reference are not: their group shows them); the first
   `max_pairs` get their matched lines (`sim_c -n` on the two files) quoted from the students'
   own files.

A file whose own code (after step 1) has fewer than `min_tokens` tokens is not compared: a
serial loop of ten tokens looks like every other one. It reports; it never changes a grade.
Without sim_c the caller gets SimUnavailable (one line) and the report says it was not run.
"""
import os
import re
import shutil
import subprocess
import tempfile

from . import uploads
from . import submissions as subsmod
from .settings import SIMILARITY_DEFAULTS as DEFAULTS  # the config's "similarity" section
SKELETON_RUN = 8  # tokens: runs of the skeleton this long or longer are taken out
REFERENCE = "(reference)"
MAX_BYTES = 1 << 20  # a scan.cu larger than this is not compared (the static checks refuse it anyway)
_RUN = re.compile(r"^(\S+): line (\d+)-(\d+)\s+\|(\S+): line (\d+)-(\d+)\s+\[(\d+)\]")
_PCT = re.compile(r"^(\S+) consists for (\d+) % of (\S+) material")
_TOKENS = re.compile(r"^File (\S+): (\d+) tokens")


class SimUnavailable(Exception):
    """sim_c cannot be run here (one line)."""


def sim_c():
    """The path of sim_c; raises SimUnavailable."""
    path = shutil.which("sim_c")
    if not path:
        raise SimUnavailable("similarity not checked: sim_c not found (Debian/Ubuntu: apt-get install "
                             "similarity-tester)")
    return path


def _sim(args, cwd):
    r = subprocess.run([sim_c()] + args, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=600)
    if r.returncode != 0:
        raise SimUnavailable(f"similarity not checked: sim_c failed: {(r.stderr or r.stdout).strip()[:200]}")
    return r.stdout


def runs(a, b, min_run, cwd, only_old=False):
    """[(a_first, a_last, b_first, b_last, tokens)]: the runs of file a that file b also has."""
    args = ["-n", "-r", str(min_run), a] + (["-S", "/", b] if only_old else [b])
    out = []
    for line in _sim(args, cwd).splitlines():
        m = _RUN.match(line)
        if m and m.group(1) == a and m.group(4) == b:
            out.append((int(m.group(2)), int(m.group(3)), int(m.group(5)), int(m.group(6)), int(m.group(7))))
        elif m and m.group(1) == b and m.group(4) == a:  # reported the other way round
            out.append((int(m.group(5)), int(m.group(6)), int(m.group(2)), int(m.group(3)), int(m.group(7))))
    return out


def strip_skeleton(src, skeleton, dst, cwd):
    """Writes src with the lines of its runs of the skeleton blanked to dst (names below cwd)."""
    with open(os.path.join(cwd, src), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for first, last, *_ in runs(src, skeleton, SKELETON_RUN, cwd, only_old=True):
        for i in range(first - 1, min(last, len(lines))):
            lines[i] = ""
    with open(os.path.join(cwd, dst), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def lab_sources(submissions_dir, labs, scratch):
    """{lab: {student: path of its scan.cu}} of every submission of submissions_dir (archives
    unpacked under scratch); a submission that cannot be read is left out."""
    out = {lab: {} for lab in labs}
    for k, (student, path) in enumerate(subsmod.list_submissions(submissions_dir)):
        try:
            found = uploads.open_submission(path, os.path.join(scratch, f"u{k}"), list(labs))
        except Exception:  # noqa: BLE001 (unreadable: its grade says why; nothing to compare)
            continue
        for lab in labs:
            src = found.sources.get(lab)
            if src and os.path.isfile(src) and os.path.getsize(src) <= MAX_BYTES:
                out[lab][student] = src
    return out


def compare_lab(lab, sources, skeleton, reference, settings):
    """The similar pairs of one lab: {"lab", "compared", "too_short": [names], "pairs": [...]},
    each pair {"a", "b", "a_in_b", "b_in_a", "tokens_a", "tokens_b", "matches": [{"a_lines",
    "b_lines", "tokens", "a_text", "b_text"}]} (b may be REFERENCE), best first."""
    with tempfile.TemporaryDirectory(prefix="sim-") as d:
        names, raw = [], {}
        for i, (student, path) in enumerate(sorted(sources.items())):
            names.append(student)
            raw[student] = f"r{i}.cu"
            shutil.copyfile(path, os.path.join(d, raw[student]))
        shutil.copyfile(skeleton, os.path.join(d, "skeleton.cu"))
        if reference and os.path.isfile(reference):
            shutil.copyfile(reference, os.path.join(d, "ref_raw.cu"))
            raw[REFERENCE] = "ref_raw.cu"
        own = {name: f"s{i}.cu" for i, name in enumerate(names)}
        if REFERENCE in raw:
            own[REFERENCE] = "ref.cu"
        for name, f in own.items():
            strip_skeleton(raw[name], "skeleton.cu", f, d)
        return _pairs(lab, names, own, raw, d, settings)


def _pairs(lab, names, own, raw, d, settings):
    """compare_lab's step 2 and 3 on the stripped files own (names: the students)."""
    by_file = {f: name for name, f in own.items()}
    files = [own[n] for n in names] + (["/", own[REFERENCE]] if REFERENCE in own else [])
    out = _sim(["-p", "-e", "-a", "-r", str(settings["min_run"]), "-t", "1"] + files, d)
    tokens = {by_file[m.group(1)]: int(m.group(2)) for m in map(_TOKENS.match, out.splitlines())
              if m and m.group(1) in by_file}
    short = {n for n in own if tokens.get(n, 0) < settings["min_tokens"]}
    pct = {}
    for m in map(_PCT.match, out.splitlines()):
        if m and m.group(1) in by_file and m.group(3) in by_file:
            pct[by_file[m.group(1)], by_file[m.group(3)]] = int(m.group(2))
    pairs = []
    for (a, b), p in pct.items():
        if a in short or b in short or a == REFERENCE or (b != REFERENCE and (b, a) in pct and b < a):
            continue  # each pair once, the reference always second
        back = pct.get((b, a), 0)
        if max(p, back) < settings["threshold_percent"]:
            continue
        pairs.append({"a": a, "b": b, "a_in_b": p, "b_in_a": back, "tokens_a": tokens.get(a, 0),
                      "tokens_b": tokens.get(b, 0), "matches": []})
    linked = groups(pairs)
    # two students who are each over the threshold against the reference are alike through it:
    # their group says so, and their pair is not listed (a class of 100 copies: 100 pairs, not 5050)
    on_ref = {p["a"] for p in pairs if p["b"] == REFERENCE}
    through_ref = sum(1 for p in pairs if p["b"] != REFERENCE and p["a"] in on_ref and p["b"] in on_ref)
    pairs = [p for p in pairs if p["b"] == REFERENCE or not (p["a"] in on_ref and p["b"] in on_ref)]
    pairs.sort(key=lambda x: (-max(x["a_in_b"], x["b_in_a"]), x["b"] == REFERENCE, x["a"], x["b"]))
    for p in pairs[:settings["max_pairs"]]:  # the lines of those the report shows (one sim_c each)
        p["matches"] = _matches(own[p["a"]], own[p["b"]], raw[p["a"]], raw[p["b"]], d, settings)
    return {"lab": lab, "compared": len([n for n in names if n not in short]), "too_short": sorted(short - {REFERENCE}),
            "pairs": pairs, "groups": linked, "through_reference": through_ref,
            "threshold_percent": settings["threshold_percent"], "max_pairs": settings["max_pairs"]}


def groups(pairs):
    """The students (and the reference) that similar pairs link, as sorted lists of two or more:
    ten students who all submitted the reference are one group, not 55 pairs."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x
    for p in pairs:
        parent[find(p["a"])] = find(p["b"])
    out = {}
    for x in parent:
        out.setdefault(find(x), []).append(x)
    return sorted((sorted(g, key=lambda n: (n != REFERENCE, n)) for g in out.values() if len(g) > 1),
                  key=lambda g: (-len(g), g))


def _matches(fa, fb, ra, rb, d, settings):
    """The matched runs of two stripped files, with the lines quoted from the unstripped ones."""
    def text(f, first, last):
        with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        return "\n".join(lines[first - 1:last])[:4000]
    return [{"a_lines": [a1, a2], "b_lines": [b1, b2], "tokens": t,
             "a_text": text(ra, a1, a2), "b_text": text(rb, b1, b2)}
            for a1, a2, b1, b2, t in runs(fa, fb, settings["min_run"], d)[:20]]


def class_similarity(submissions_dir, labs, root, settings=None):
    """[compare_lab(...) per lab] for a class (root: the course checkout, for labs/ and
    solutions/); raises SimUnavailable when sim_c is missing or fails."""
    settings = dict(DEFAULTS, **(settings or {}))
    sim_c()
    with tempfile.TemporaryDirectory(prefix="sim-src-") as scratch:
        sources = lab_sources(submissions_dir, labs, scratch)
        return [compare_lab(lab, sources[lab], os.path.join(root, "labs", lab, "scan.cu"),
                            os.path.join(root, "solutions", lab, "scan.cu"), settings)
                for lab in labs if os.path.isfile(os.path.join(root, "labs", lab, "scan.cu"))]
