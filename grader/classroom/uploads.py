"""What a submission looks like, in every shape a student or a course platform hands it in.

One function, locate, used by single mode (--src) and batch mode (--submissions) alike, so that
both accept the same shapes:
  - lab folders: NN_name/scan.cu, directly or up to MAX_DEPTH folders down (a copy of labs/, a
    labs/ folder, or either wrapped in a top folder, as an unzipped archive often is);
  - one bare scan.cu anywhere up to MAX_DEPTH down, when exactly one lab is graded (--labs 03):
    the upload of a per-lab assignment; or, whatever the labs graded, a bare scan.cu whose
    #include "course/NN_name.h" (or the old "labs/NN_name.h") names a graded lab: that lab's;
  - an archive (.zip, .tar.gz, .tgz, .tar) of either, unpacked first (submissions.extract).
A submission in which no lab can be found gets a one-line reason that says what was expected and
what was there instead; so does one with two folders for the same lab (never a guess).
"""
import os
import re

from .submissions import ARCHIVE_EXTS, BadSubmission, extract, printable_name

MAX_DEPTH = 4  # folders between the submission's top and a lab folder
SHOWN = 8      # entries named in a reason


class Found:
    """What locate found: sources {lab: path of its scan.cu or None}, and problem (a one-line
    reason when a lab could not be found, or None), and the shape it recognised."""

    def __init__(self, sources, problem=None, shape=""):
        self.sources, self.problem, self.shape = sources, problem, shape

    @property
    def nothing(self):
        return not any(self.sources.values())


def _entries(folder):
    try:
        return sorted(e for e in os.listdir(folder) if not e.startswith("."))
    except OSError:
        return []


def _walk(folder):
    """(dirpath, depth, dirnames, filenames) below folder, links not followed, dot-folders
    skipped (__MACOSX too)."""
    base = folder.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__MACOSX")
        yield dirpath, dirpath.count(os.sep) - base, dirnames, filenames


def _expected(labs):
    one = labs[0] if labs else "NN_name"
    single = " or one scan.cu" if len(labs) == 1 else ""
    return f"expected lab folders such as {one}/scan.cu (or labs/{one}/scan.cu){single}"


def _found_text(folder):
    names = _entries(folder)
    if not names:
        return "found: nothing (the submission is empty)"
    shown = ", ".join(printable_name(n) + ("/" if os.path.isdir(os.path.join(folder, n)) else "")
                      for n in names[:SHOWN])
    return f"found: {shown}" + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


LAB_HEADER = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(?:course|labs)/([0-9][0-9]_[A-Za-z0-9_]+)\.h"', re.M)


def included_lab(path, labs):
    """The graded lab whose header the file at path includes (course/NN_name.h, or the old
    labs/NN_name.h), or None: none, or several different ones."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return None
    named = {m for m in LAB_HEADER.findall(text) if m in labs}
    return named.pop() if len(named) == 1 else None


def _by_header(bare, labs):
    """{lab: path} of the bare scan.cu files matched to a lab by the header they include, each
    lab claimed by exactly one file."""
    claims = {}
    for path in bare:
        lab = included_lab(path, labs)
        if lab:
            claims.setdefault(lab, []).append(path)
    return {lab: paths[0] for lab, paths in claims.items() if len(paths) == 1}


def locate(folder, labs, max_depth=MAX_DEPTH):
    """The Found of a submission folder for the graded labs (see the module comment)."""
    hits, deep, bare = {lab: [] for lab in labs}, [], []
    for dirpath, depth, dirnames, filenames in _walk(folder):
        name = os.path.basename(dirpath)
        if "scan.cu" in filenames:
            if name in hits and depth >= 1:
                (hits[name] if depth <= max_depth else deep).append(os.path.join(dirpath, "scan.cu"))
            elif depth <= max_depth:
                bare.append(os.path.join(dirpath, "scan.cu"))
        if depth > max_depth + 4:
            dirnames[:] = []
    sources = {lab: None for lab in labs}
    twice = [lab for lab in labs if len(hits[lab]) > 1]
    if twice:
        lab = twice[0]
        where = " and ".join(os.path.relpath(os.path.dirname(p), folder) for p in hits[lab][:2])
        for other in labs:
            if len(hits[other]) == 1:
                sources[other] = hits[other][0]
        return Found(sources, f"two folders for {lab} ({where}): keep one and submit again", "lab folders")
    for lab in labs:
        if hits[lab]:
            sources[lab] = hits[lab][0]
    if any(sources.values()):
        return Found(sources, None, "lab folders")
    if len(labs) == 1 and len(bare) == 1:
        return Found({labs[0]: bare[0]}, None, "one scan.cu")
    matched = _by_header(bare, labs)
    if matched:
        sources.update(matched)
        return Found(sources, None, "scan.cu by its lab header")
    if deep:
        depth = os.path.relpath(os.path.dirname(deep[0]), folder).count(os.sep) + 1
        return Found(sources, f"lab folders found {depth} levels down "
                              f"({os.path.relpath(os.path.dirname(deep[0]), folder)}), "
                              f"at most {max_depth} are looked at: submit the labs folder itself", "too deep")
    if len(labs) == 1 and len(bare) > 1:
        return Found(sources, f"{len(bare)} files named scan.cu and no {labs[0]} folder: submit one scan.cu, "
                              f"or the {labs[0]} folder", "ambiguous")
    return Found(sources, f"no lab found: {_expected(labs)}; {_found_text(folder)}", "unknown")


def _with_bases(found, folder, also):
    """found, its sources extended with the folders of the labs in `also` (labs that graded ones
    are built on, lab 10's 08 and 07) that folder holds once; not graded, never a problem."""
    if also:
        extra = locate(folder, list(also))
        for lab in also:
            found.sources.setdefault(lab, extra.sources.get(lab) if not extra.problem else None)
    return found


def open_submission(path, unpack_dir, labs, also=()):
    """The Found of a submission at path: a folder, an archive (unpacked into unpack_dir) or a
    bare scan.cu (only when one lab is graded). Raises BadSubmission for an archive that cannot be
    read; an archive that holds nothing is a Found with the reason. also: labs that are not graded
    but that graded labs are built on, looked up too (folders and archives only)."""
    also = [lab for lab in also if lab not in labs]
    if os.path.isdir(path):
        return _with_bases(locate(path, labs), path, also)
    low = path.lower()
    if low.endswith(ARCHIVE_EXTS):
        extract(path, unpack_dir)
        found = locate(unpack_dir, labs)
        if found.nothing and not _entries(unpack_dir):
            return Found(found.sources, "the archive is empty (no regular files in it)", "empty")
        return _with_bases(found, unpack_dir, also)
    if os.path.basename(low) == "scan.cu" or low.endswith(".cu"):
        lab = included_lab(path, labs) if len(labs) != 1 else None
        if lab:
            return Found(dict({other: None for other in labs}, **{lab: path}), None, "scan.cu by its lab header")
        if len(labs) != 1:
            return Found({lab: None for lab in labs}, f"a single .cu file is a submission of one lab: grade it "
                                                      f"with --labs (one of {', '.join(lab[:2] for lab in labs)})",
                         "one scan.cu")
        return Found({labs[0]: path}, None, "one scan.cu")
    raise BadSubmission(f"{printable_name(os.path.basename(path))}: not a folder, an archive "
                        f"({', '.join(ARCHIVE_EXTS)}) or a .cu file")
