"""A folder of submissions (each a copy of labs/, or a .zip / .tar.gz of one): the students' names,
archives extracted safely, a fingerprint of each submission, and the results stored for them
(read back when a batch resumes, and gathered into class.csv). Batch mode itself is batch.py.
"""
import csv
import hashlib
import json
import os
import shutil
import stat
import tarfile
import unicodedata
import zipfile

from gradelib import formats
from gradelib.build import sha256_file
from gradelib.status import Status

ARCHIVE_EXTS = (".zip", ".tar.gz", ".tgz", ".tar")
MAX_MEMBERS = 2000
MAX_FILE_BYTES = 8 << 20
MAX_TOTAL_BYTES = 64 << 20


class BadSubmission(Exception):
    """A submission that cannot be read (one line): it is graded 0, the batch goes on."""


def printable_name(name):
    """The name as text that is always valid UTF-8 and safe on a terminal, one text per name: a
    byte that is not UTF-8 (os.listdir gives it as a surrogateescape character) is written
    \\xNN, a control character (or a lone surrogate) \\uNNNN and a backslash \\\\; every other
    character is kept, so that most names are unchanged and two names never print alike."""
    out = []
    for c in name:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif unicodedata.category(c) in ("Cc", "Cs"):
            out.append(f"\\u{o:04x}")
        else:
            out.append(c)
    return "".join(out)


def student_name(entry):
    """The student of a submission entry: its name without the archive extension, as
    printable_name writes it (the name of its result files and its row in class.csv)."""
    for ext in ARCHIVE_EXTS:
        if entry.lower().endswith(ext):
            return printable_name(entry[: -len(ext)])
    return printable_name(entry)


def list_submissions(folder):
    """[(student, path)] for every submission in folder, sorted by entry name. The path is the
    entry's own name (surrogateescape, as the filesystem has it); the student is its printable
    form (student_name), the only form of the name that results and output ever hold."""
    out = []
    for e in sorted(os.listdir(folder)):
        if e.startswith("."):
            continue
        p = os.path.join(folder, e)
        if os.path.isdir(p) and not os.path.islink(p):
            out.append((printable_name(e), p))
        elif os.path.isfile(p) and e.lower().endswith(ARCHIVE_EXTS):
            out.append((student_name(e), p))
    return out


def result_files(student):
    """The files a student's result may be written to in the results folder (the JSON, and the
    side file of each --format that has one: formats.side_files)."""
    return [student + ".json"] + [f"{student}.{ext}" for ext in formats.side_files().values()]


def _shown(path):
    """The entry name of a submission's path, printable (printable_name)."""
    return printable_name(os.path.basename(path))


def name_collision(subs):
    """A one-line reason when two submissions would write the same result file, else None: a
    folder alice/ and an archive alice.zip are both student 'alice' (so are alice.zip and
    alice.tar.gz), and a student 'x.gradescope' would write x.gradescope.json, the Gradescope
    file of student 'x'."""
    owner = {}
    for student, path in subs:
        for fn in result_files(student):
            if fn in owner:
                other, who = owner[fn]
                same = "are both student" if who == student else f"would both write '{fn}': students"
                names = f"'{who}'" if who == student else f"'{who}' and '{student}'"
                return (f"'{_shown(other)}' and '{_shown(path)}' {same} {names}; "
                        f"their results would overwrite each other: rename one")
            owner[fn] = (path, student)
    return None


def _safe_rel(name):
    """The member name as a safe relative path, or None (absolute, '..', drive letter, empty)."""
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        return None
    parts = [p for p in n.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return os.path.join(*parts)


def _write_member(dest, rel, data_stream, size):
    target = os.path.realpath(os.path.join(dest, rel))
    root = os.path.realpath(dest)
    if not target.startswith(root + os.sep):
        raise BadSubmission(f"archive member {rel!r} points outside the submission")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    written = 0
    with open(target, "wb") as f:
        while True:
            chunk = data_stream.read(1 << 16)
            if not chunk:
                break
            written += len(chunk)
            if written > MAX_FILE_BYTES:
                raise BadSubmission(f"archive member {rel!r} is over {MAX_FILE_BYTES >> 20} MiB")
            f.write(chunk)


def extract(archive, dest):
    """Extracts regular files of a .zip or .tar(.gz) into dest, refusing path traversal, links,
    devices and archive bombs. Raises BadSubmission with the reason."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    total = 0
    try:
        if archive.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                infos = z.infolist()
                if len(infos) > MAX_MEMBERS:
                    raise BadSubmission(f"the archive has over {MAX_MEMBERS} members")
                for info in infos:
                    if info.is_dir():
                        continue
                    rel = _safe_rel(info.filename)
                    if rel is None:
                        raise BadSubmission(f"unsafe path in the archive: {info.filename!r}")
                    ftype = stat.S_IFMT(info.external_attr >> 16)
                    if ftype and ftype != stat.S_IFREG:
                        continue  # links and special files are not extracted
                    total += info.file_size
                    if total > MAX_TOTAL_BYTES:
                        raise BadSubmission(f"the archive unpacks to over {MAX_TOTAL_BYTES >> 20} MiB")
                    with z.open(info) as src:
                        _write_member(dest, rel, src, info.file_size)
        else:
            with tarfile.open(archive, "r:*") as t:
                count = 0
                for m in t:
                    count += 1
                    if count > MAX_MEMBERS:
                        raise BadSubmission(f"the archive has over {MAX_MEMBERS} members")
                    if not m.isreg():
                        continue  # directories are made as needed; links, devices are skipped
                    rel = _safe_rel(m.name)
                    if rel is None:
                        raise BadSubmission(f"unsafe path in the archive: {m.name!r}")
                    total += m.size
                    if total > MAX_TOTAL_BYTES:
                        raise BadSubmission(f"the archive unpacks to over {MAX_TOTAL_BYTES >> 20} MiB")
                    src = t.extractfile(m)
                    if src is not None:
                        _write_member(dest, rel, src, m.size)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError) as e:
        raise BadSubmission(f"the archive cannot be read: {e}")


def fingerprint(path):
    """A hash of a submission: the archive's bytes, or every scan.cu under a folder."""
    if os.path.isfile(path):
        return sha256_file(path)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn == "scan.cu":
                p = os.path.join(dirpath, fn)
                h.update(os.fsencode(os.path.relpath(p, path)))  # a name that is not UTF-8 too
                try:
                    with open(p, "rb") as f:
                        h.update(f.read(4 << 20))
                except OSError:
                    pass
    return h.hexdigest()


def read_result(results_dir, student):
    """The stored result of student, or None."""
    try:
        with open(os.path.join(results_dir, student + ".json"), encoding="utf-8") as f:
            r = json.load(f)
    except (OSError, ValueError):
        return None
    return r if isinstance(r, dict) else None


def already_graded(results_dir, student, fp, key=None):
    """The stored result when results_dir holds a complete result for this exact submission,
    graded the same way (the same grading key: labs, mode, config, grader), else None."""
    r = read_result(results_dir, student)
    if (r and r.get("status") in (Status.GRADED, Status.NO_LABS_FOUND) and r.get("submission_sha256") == fp
            and r.get("grading_key") == key):
        return r
    return None


def write_class_csv(results_dir, path, students):
    """One row per student and lab (student, lab, points, max_points, status) from the results
    of the given students (those of this run: never any other .json that is in results_dir),
    plus a TOTAL row per student. A student without a readable result gets a TOTAL row with
    status 'no result'."""
    rows = []
    for student in students:
        r = read_result(results_dir, student)
        if r is None:
            rows.append([student, "TOTAL", 0, 0, "no result"])
            continue
        for lab in r.get("labs", []):
            rows.append([student, lab.get("lab"), lab.get("points"), lab.get("max_points"), lab.get("status")])
        rows.append([student, "TOTAL", r.get("points", 0), r.get("max_points", 0), r.get("status", "")])
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "lab", "points", "max_points", "status"])
        w.writerows(rows)
    os.replace(tmp, path)
    return len(rows)
