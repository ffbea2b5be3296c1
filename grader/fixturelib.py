#!/usr/bin/env python3
"""The grader's fixture submissions (grader/fixtures/submissions/NAME/LAB/), written out as
files a grader can take, and the verdict each must get (NAME/expected.json, read by expected).

A fixture lab folder holds one of:
  scan.cu.patch  a unified diff against the reference, solutions/LAB/scan.cu (most fixtures: the
                 reference with one planted change), applied here, strictly: every context and
                 removed line must match the reference exactly, so a change to the reference
                 that touches what a fixture changes fails loudly, naming the fixture, instead
                 of leaving the fixture a stale copy of an older reference;
  scan.cu        the file itself, for what is not a change to a reference (an empty file), or a
                 symbolic link to the reference (a lab graded beside the one the fixture is about).

A hunk applies at the line its header names or, if the reference has moved lines above it, at
the one other place where its old lines match exactly; no fuzz, and nowhere else.

Usage: fixturelib.py check                     apply every patch; exit 1 naming those that fail
       fixturelib.py write NAME [NAME ...] DIR  write the fixtures' submissions into DIR/NAME/
       fixturelib.py record NAME LAB FILE       FILE (an edited copy of the fixture's scan.cu)
                                                becomes the fixture's new patch
Exit codes: 0 done, 1 some patch does not apply (each named on stderr), 2 usage error.
"""
import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUBMISSIONS = os.path.join(HERE, "fixtures", "submissions")
PATCH = "scan.cu.patch"
EXPECTED = "expected.json"  # beside the lab folders: the verdict the fixture must get
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_EOL = b"\\ No newline at end of file"


class PatchError(Exception):
    """A fixture that cannot be used: a patch that is malformed or no longer applies to its
    reference, a folder without its expected verdict."""


def reference(lab):
    """The path of lab's reference solution (what a fixture's patch applies to)."""
    return os.path.join(ROOT, "solutions", lab, "scan.cu")


def parse(patch, where):
    """The hunks of a one-file unified diff as [(old_start, old_lines, new_lines)], lines as bytes
    with their line ends. Text before the '---' line is a description and ignored."""
    lines = patch.splitlines(keepends=True)
    i = next((k for k, l in enumerate(lines) if l.startswith(b"--- ")), None)
    if i is None or i + 1 >= len(lines) or not lines[i + 1].startswith(b"+++ "):
        raise PatchError(f"{where}: no '--- ' and '+++ ' header lines")
    i += 2
    hunks = []
    while i < len(lines):
        m = HUNK.match(lines[i])
        if not m:
            raise PatchError(f"{where}: line {i + 1}: expected a hunk header '@@ -a,b +c,d @@', got {lines[i][:60]!r}")
        start, n_old = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        n_new = int(m.group(4) if m.group(4) is not None else 1)
        old, new = [], []
        i += 1
        while (len(old) < n_old or len(new) < n_new) and i < len(lines):
            tag, body = lines[i][:1], lines[i][1:]
            if tag == b" ":
                old.append(body)
                new.append(body)
            elif tag == b"-":
                old.append(body)
            elif tag == b"+":
                new.append(body)
            else:
                raise PatchError(f"{where}: line {i + 1}: a hunk line must start with ' ', '-' or '+'")
            i += 1
            if i < len(lines) and lines[i].rstrip(b"\n") == NO_EOL:  # the line before has no line end
                if tag in (b" ", b"-"):
                    old[-1] = old[-1].rstrip(b"\n")
                if tag in (b" ", b"+"):
                    new[-1] = new[-1].rstrip(b"\n")
                i += 1
        if len(old) != n_old or len(new) != n_new:
            raise PatchError(f"{where}: hunk at -{start}: the header counts {n_old} old and {n_new} new "
                             f"lines, the body has {len(old)} and {len(new)}")
        hunks.append((start, old, new))
    if not hunks:
        raise PatchError(f"{where}: no hunks")
    return hunks


def apply(source, patch, where="patch"):
    """source (bytes) with patch (a one-file unified diff, bytes) applied; PatchError, naming
    where, if a hunk's old lines are not found exactly, or not in one place only."""
    src = source.splitlines(keepends=True)
    out, pos, shift = [], 0, 0  # pos: the first source line not yet copied
    for k, (start, old, new) in enumerate(parse(patch, where), 1):
        want = max(start - 1, 0) + shift if old else start + shift  # 'a,0' means after line a

        def at(p):
            return p >= pos and src[p:p + len(old)] == old
        if not at(want):
            places = [p for p in range(pos, len(src) - len(old) + 1) if at(p)]
            if len(places) != 1:
                why = "its old lines are not in the reference" if not places else \
                    f"its old lines are in {len(places)} places of the reference " \
                    f"(lines {', '.join(str(p + 1) for p in places[:5])})"
                first = next((ln for ln in old if ln.strip()), b"").decode("utf-8", "replace").strip()
                raise PatchError(f"{where}: hunk {k} (@@ -{start},{len(old)}) no longer applies: {why}"
                                 + (f"; it expects a line {first!r}" if first else ""))
            want = places[0]
        out += src[pos:want] + new
        pos = want + len(old)
        shift = want - (max(start - 1, 0) if old else start)
    return b"".join(out + src[pos:])


def labs(name):
    """The lab folders of fixture name, sorted."""
    d = os.path.join(SUBMISSIONS, name)
    if not os.path.isdir(d):
        raise PatchError(f"fixture {name}: no folder {d}")
    return sorted(e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e)))


def source(name, lab):
    """The bytes of fixture name's LAB/scan.cu: its patch applied to the reference, or its file."""
    d = os.path.join(SUBMISSIONS, name, lab)
    patch = os.path.join(d, PATCH)
    if os.path.exists(patch):
        with open(patch, "rb") as f, open(reference(lab), "rb") as r:
            return apply(r.read(), f.read(), f"fixture {name}: {lab}/{PATCH} against solutions/{lab}/scan.cu")
    with open(os.path.join(d, "scan.cu"), "rb") as f:  # a file, or a link to the reference
        return f.read()


def write(name, dest):
    """Writes fixture name as a submission folder dest/LAB/scan.cu (created); PatchError if a patch
    does not apply."""
    files = {lab: source(name, lab) for lab in labs(name)}  # all of them first: nothing half-written
    for lab, text in files.items():
        os.makedirs(os.path.join(dest, lab), exist_ok=True)
        with open(os.path.join(dest, lab, "scan.cu"), "wb") as f:
            f.write(text)


def source_path(name, lab, tmp):
    """A path to fixture name's LAB/scan.cu: the fixture's own file, or the patched reference
    written under tmp (a folder the caller removes)."""
    own = os.path.join(SUBMISSIONS, name, lab, "scan.cu")
    if os.path.exists(own):
        return own
    path = os.path.join(tmp, name, lab, "scan.cu")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(source(name, lab))
    return path


def fingerprint(name):
    """The SHA-256 of what fixture name is: each lab folder's file names and bytes (a link: where
    it points), so that a verdict recorded for it (grader/fixtures/verdicts/) is known stale
    once the fixture changes."""
    h = hashlib.sha256()
    for lab in labs(name):
        d = os.path.join(SUBMISSIONS, name, lab)
        for entry in sorted(os.listdir(d)):
            path = os.path.join(d, entry)
            h.update(f"{lab}/{entry}\0".encode())
            if os.path.islink(path):
                h.update(b"link:" + os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def diff(lab, name, text):
    """The patch that turns the reference of lab into text (bytes ending in a line end)."""
    with open(reference(lab), "rb") as f:
        ref = f.read()
    if not text.endswith(b"\n") or not ref.endswith(b"\n"):
        raise PatchError(f"fixture {name}: {lab}: a file without a final line end cannot be a patch; "
                         "keep it as scan.cu")
    lines = difflib.diff_bytes(difflib.unified_diff, ref.splitlines(keepends=True), text.splitlines(keepends=True),
                               f"solutions/{lab}/scan.cu".encode(), f"{name}/{lab}/scan.cu".encode(), n=3)
    return b"".join(ln if ln.endswith(b"\n") else ln + b"\n" for ln in lines)


def every():
    """The names of all fixtures, sorted."""
    return sorted(e for e in os.listdir(SUBMISSIONS) if os.path.isdir(os.path.join(SUBMISSIONS, e)))


def expected(name):
    """Fixture name's expected verdict, its folder's expected.json (grader/fixtures/README.md):
    {"lab", "modes", "bug", "expect"}; PatchError when it is missing or not such an object."""
    path = os.path.join(SUBMISSIONS, name, EXPECTED)
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        raise PatchError(f"fixture {name}: its {EXPECTED} cannot be read: {e}") from e
    missing = [k for k in ("lab", "modes", "bug", "expect") if not isinstance(spec, dict) or k not in spec]
    if missing:
        raise PatchError(f"fixture {name}: its {EXPECTED} has no {', '.join(missing)}")
    return spec


def every_expected():
    """{name: expected(name)} for every fixture."""
    return {name: expected(name) for name in every()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="apply every patch")
    w = sub.add_parser("write", help="write fixtures as submission folders")
    w.add_argument("names", nargs="+", metavar="NAME")
    w.add_argument("dest", metavar="DIR")
    r = sub.add_parser("record", help="make FILE the fixture's new patch")
    r.add_argument("name")
    r.add_argument("lab")
    r.add_argument("file")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "record":
            with open(args.file, "rb") as f:
                text = diff(args.lab, args.name, f.read())
            os.makedirs(os.path.join(SUBMISSIONS, args.name, args.lab), exist_ok=True)  # a new fixture
            with open(os.path.join(SUBMISSIONS, args.name, args.lab, PATCH), "wb") as f:
                f.write(text)
            return 0
        names = every() if args.cmd == "check" else args.names
        bad = 0
        for name in names:
            try:
                if args.cmd == "check":
                    for lab in labs(name):
                        source(name, lab)
                else:
                    shutil.rmtree(os.path.join(args.dest, name), ignore_errors=True)
                    write(name, os.path.join(args.dest, name))
            except PatchError as e:
                print(f"fixturelib: {e}", file=sys.stderr)
                bad += 1
        if args.cmd == "check":
            print(f"{len(names) - bad}/{len(names)} fixtures apply to their references")
        return 1 if bad else 0
    except (OSError, PatchError) as e:
        print(f"fixturelib: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
