#!/usr/bin/env python3
"""Prints a lab's hints one at a time (make hint LAB=NN [N=k]).

Usage: hint.py LAB [N]      LAB: 03 or 03_kogge_stone; N: a hint number, or "reset"
Without N it prints the next hint not yet seen for that lab, and says "no more hints" after the
last one; N=k prints hint k (and counts hints 1..k as seen); N=reset forgets what was seen.

The one source of the hints is labs/NN_name/HINTS.md: each hint is a block
    <details><summary>Hint K — title</summary>
    ...
    </details>
which a web page shows collapsed. What was seen is kept in build/hints/NN_name (one number; build/
is ignored by git; --state DIR or $HINT_STATE elsewhere). Exit codes: 0 a hint or "no more hints" printed,
2 bad LAB or N (one line on stderr), 3 the lab's HINTS.md is missing or has no hints.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HINT = re.compile(r"<details><summary>Hint (\d+) — ([^<]*)</summary>\s*\n(.*?)\n</details>", re.S)


def labs(root=ROOT):
    """The lab folders of labs/ (NN_name), sorted."""
    base = os.path.join(root, "labs")
    return sorted(d for d in os.listdir(base)
                  if re.fullmatch(r"\d\d_\w+", d) and os.path.isdir(os.path.join(base, d)))


def find_lab(name, root=ROOT):
    """The one lab folder that LAB names (03 or 03_kogge_stone), or None."""
    hits = [d for d in labs(root) if name and (d == name or d.startswith(name + "_"))]
    return hits[0] if len(hits) == 1 else None


def parse_hints(text):
    """[(number, title, body)] of a HINTS.md, in order. Raises ValueError when the numbers do not
    run 1, 2, 3, ... (a hint lost or numbered twice)."""
    hints = [(int(m.group(1)), m.group(2).strip(), m.group(3).strip()) for m in HINT.finditer(text)]
    numbers = [h[0] for h in hints]
    if numbers != list(range(1, len(hints) + 1)):
        raise ValueError("hints numbered %s, not 1..%d" % (numbers, len(hints)))
    return hints


def read_seen(path):
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_seen(path, k):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("%d\n" % k)


def fail(message, code):
    print("make hint: " + message, file=sys.stderr)
    return code


def main(argv=None, root=ROOT, out=sys.stdout):
    ap = argparse.ArgumentParser(description="Print a lab's hints one at a time.")
    ap.add_argument("lab", nargs="?", default="")
    ap.add_argument("n", nargs="?", default="")
    ap.add_argument("--state", default=os.environ.get("HINT_STATE") or os.path.join(root, "build", "hints"))
    args = ap.parse_args(argv)
    names = " ".join(d[:2] for d in labs(root))
    if not args.lab:
        return fail("say which lab, e.g. make hint LAB=03 (labs: %s)" % names, 2)
    lab = find_lab(args.lab, root)
    if not lab:
        return fail("no lab matches LAB=%s (labs: %s)" % (args.lab, names), 2)
    path = os.path.join(root, "labs", lab, "HINTS.md")
    try:
        with open(path, encoding="utf-8") as f:
            hints = parse_hints(f.read())
    except (OSError, ValueError) as e:
        return fail("labs/%s/HINTS.md: %s" % (lab, e), 3)
    if not hints:
        return fail("labs/%s/HINTS.md has no hints" % lab, 3)
    state = os.path.join(args.state, lab)
    seen = read_seen(state)
    if args.n == "reset":
        write_seen(state, 0)
        print("Lab %s: hints reset; make hint LAB=%s starts again at hint 1." % (lab[:2], lab[:2]), file=out)
        return 0
    if args.n:
        if not args.n.isdigit() or not 1 <= int(args.n) <= len(hints):
            return fail("N=%s: lab %s has hints 1 to %d (or N=reset)" % (args.n, lab[:2], len(hints)), 2)
        k = int(args.n)
    elif seen >= len(hints):
        where = ("; the reference is solutions/%s/." % lab
                 if os.path.isdir(os.path.join(ROOT, "solutions", lab)) else ".")
        print("Lab %s: no more hints: you have seen all %d. N=k shows hint k again, N=reset starts "
              "over%s" % (lab[:2], len(hints), where), file=out)
        return 0
    else:
        k = seen + 1
    number, title, body = hints[k - 1]
    print("Lab %s, hint %d of %d — %s\n\n%s\n" % (lab[:2], number, len(hints), title, body), file=out)
    print("(%s)" % ("next: make hint LAB=%s" % lab[:2] if k < len(hints) else "that was the last hint"),
          file=out)
    write_seen(state, max(seen, k))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # make hint | head: the reader stopped reading
        sys.stderr.close()
        sys.exit(0)
