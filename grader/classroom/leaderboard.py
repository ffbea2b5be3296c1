"""The class leaderboard of a GPU batch: RESULTS/leaderboard.csv and leaderboard.html, for an
instructor to publish, with a name per student that nobody else can trace back
(RESULTS/leaderboard-names.csv, readable by the instructor alone, says whose name is whose).

A lab enters the board only when it is right: every correctness case passed, the sanitizer did
not fail, and its speed was graded on a GPU. A fast scan that is wrong on some n never ranks (the
same rule decides Gradescope's leaderboard entries: formats/gradescope.py). Ranks are per lab and
per GPU (GB/s on an H100 and on an A100 do not compare), by GB/s, with the time against the
reference solution on the same GPU beside it.

Names: an adjective, an animal and four hex digits, from an HMAC of the submission's name under a
random key made once per results folder (RESULTS/leaderboard-key, 0600). The class seed is no key:
students see it in their feedback. The same key keeps every student's name across regrades and
merges; deleting it deals new names.
"""
import csv
import hashlib
import hmac
import html
import os
import secrets
import time

from gradelib.formats.details import rankable

from . import submissions

KEY_FILE = "leaderboard-key"
# words that are nobody's first name or surname, so that a published name never reads as a person's
ADJECTIVES = ("amber", "brisk", "calm", "daring", "eager", "fuzzy", "gentle", "hasty", "icy", "jolly", "keen",
              "lively", "mellow", "nimble", "odd", "plucky", "quiet", "rapid", "steady", "tidy", "urban", "vivid",
              "wary", "yellow", "zesty", "bold", "clever", "dusky", "fleet", "grand", "humble", "misty")
ANIMALS = ("otter", "heron", "lynx", "newt", "panda", "quail", "raven", "stoat", "tapir", "viper", "walrus",
           "yak", "zebra", "badger", "camel", "dingo", "egret", "ferret", "gecko", "ibis", "jackal", "koala",
           "lemur", "moose", "narwhal", "ocelot", "puffin", "bison", "shrew", "toucan", "urchin", "vole")


def _key(results_dir):
    """The folder's name key, made on first use (0600; O_EXCL, so that two processes making it at
    once agree on the first one's)."""
    path = os.path.join(results_dir, KEY_FILE)
    for _ in range(50):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            with open(path) as f:
                key = f.read().strip()
            if len(key) == 64:
                return key.encode()
            time.sleep(0.1)  # being written by another process (or damaged: replaced below)
            continue
        key = secrets.token_hex(32)
        with os.fdopen(fd, "w") as f:
            f.write(key + "\n")
        return key.encode()
    os.remove(path)  # not a key after 5 s: a damaged file, made again
    return _key(results_dir)


def pseudonym(key, student, digits=4):
    """adjective-animal-xxxx (digits hex digits) from the HMAC of student under key."""
    d = hmac.new(key, student.encode("utf-8", "surrogateescape"), hashlib.sha256).digest()
    return f"{ADJECTIVES[d[0] % len(ADJECTIVES)]}-{ANIMALS[d[1] % len(ANIMALS)]}-{d[2:].hex()[:digits]}"


def _names(key, students):
    """{student: name}, each name unique: the students whose names collide get more hex digits
    (one class in millions of names: rare, but two students must never share a name)."""
    names, digits = {}, 4
    todo = sorted(set(students))
    while todo:
        got = {s: pseudonym(key, s, digits) for s in todo}
        taken = list(names.values()) + list(got.values())
        for s in todo:
            if taken.count(got[s]) == 1:
                names[s] = got[s]
        todo = [s for s in todo if s not in names]
        digits += 2
    return names


def board(results_dir, students, labs):
    """(rows, names): rows of (lab, device, rank, name, GB/s, time against the reference), sorted
    by lab, device and rank; names {student: name} of the students on the board."""
    entries = {}
    for student in students:
        r = submissions.read_result(results_dir, student)
        if not r or r.get("mode") != "gpu":
            continue
        for lab in r.get("labs", []):
            if lab.get("lab") in labs and rankable(lab):
                sp = lab["speed"]
                entries.setdefault((lab["lab"], r.get("device") or "?"), []).append(
                    (student, sp["gbps"], sp.get("ratio")))
    if not entries:
        return [], {}
    key = _key(results_dir)
    names = _names(key, [s for group in entries.values() for s, _, _ in group])
    rows = []
    for (lab, device) in sorted(entries, key=lambda k: (labs.index(k[0]), k[1])):
        ranked = sorted(entries[(lab, device)], key=lambda e: (-e[1], names[e[0]]))
        rank = 0
        for i, (student, gbps, ratio) in enumerate(ranked):
            if i == 0 or gbps != ranked[i - 1][1]:
                rank = i + 1  # ties share a rank
            rows.append((lab, device, rank, names[student], gbps, ratio))
    return rows, names


def write(results_dir, students, labs):
    """leaderboard.csv, leaderboard.html and the private leaderboard-names.csv in results_dir,
    when some lab of the batch ranks (a GPU batch); nothing otherwise. Returns the rows."""
    rows, names = board(results_dir, students, labs)
    if not rows:
        return rows
    with open(os.path.join(results_dir, "leaderboard.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["lab", "gpu", "rank", "name", "gbps", "time_vs_reference"])
        w.writerows(rows)
    fd = os.open(os.path.join(results_dir, "leaderboard-names.csv"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "name"])
        w.writerows(sorted(names.items()))
    with open(os.path.join(results_dir, "leaderboard.html"), "w") as f:
        f.write(render(rows))
    return rows


def render(rows):
    """A self-contained page of the board: a table per lab and GPU."""
    e = html.escape
    parts = ["<!doctype html><meta charset=utf-8><title>Leaderboard</title>",
             "<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:50em}"
             "table{border-collapse:collapse;margin:0 0 2em}td,th{padding:.2em .8em;text-align:right}"
             "td:nth-child(2),th:nth-child(2){text-align:left}tr:nth-child(even){background:#f3f3f3}</style>",
             "<h1>Leaderboard</h1><p>Correct submissions only (every case passed, the sanitizer clean), "
             "ranked by GB/s on the GPU that timed them; the time against the reference solution was "
             "measured on the same GPU (below 1: faster than the reference).</p>"]
    group = None
    for lab, device, rank, name, gbps, ratio in rows:
        if (lab, device) != group:
            parts.append(("</table>" if group else "") + f"<h2>{e(lab)} on {e(device)}</h2>"
                         "<table><tr><th>rank</th><th>name</th><th>GB/s</th><th>time vs reference</th></tr>")
            group = (lab, device)
        parts.append(f"<tr><td>{rank}</td><td>{e(name)}</td><td>{gbps:.1f}</td>"
                     f"<td>{'' if ratio is None else f'{ratio:.3f}'}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"
