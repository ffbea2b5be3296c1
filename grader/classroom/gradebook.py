"""The class files of a batch: class.csv (long: one row per student and lab, and a TOTAL row) and
gradebook.csv (wide, for an LMS: one row per student, a column per lab, the total), with the
names, ids and emails of a roster when one is given (--roster); and the class's summary that a
batch logs at its end (class_summary, summary_lines).

A roster is a CSV file with a header row. Its columns, by name (case and spaces do not matter):
  submission   the submission's name in the batch (its folder or archive name without the
               extension, as class.csv shows it); also accepted: login, username, student
  id           the student id (also: student_id, sid)
  name         the student's name (also: full_name); or first_name and last_name
  email        (also: e-mail, mail)
  section, sis_login, canvas_id   for Canvas's gradebook (lms.py)
  extension    days of extension on every lab, or a new due date (policy.py)
Only `submission` is required. Every roster student gets a gradebook row, with blank points and
"no submission" when there is none; a submission that is not on the roster gets a row too, and a
warning.
"""
import os
import statistics

from gradelib.status import NOT_GRADED

from . import leaderboard, lms
from .submissions import read_result, write_class_csv
from .tables import BadInput, cell, column, parse_extension, read_table, where

ALIASES = {
    "submission": ("submission", "login", "username", "student"),
    "id": ("id", "student_id", "sid"),
    "name": ("name", "full_name"),
    "first_name": ("first_name", "first"),
    "last_name": ("last_name", "last", "surname"),
    "email": ("email", "e-mail", "mail"),
    # for the LMS gradebooks (lms.py) and the late policy (policy.py)
    "section": ("section",),
    "sis_login": ("sis_login", "sis_login_id", "login_id"),
    "canvas_id": ("canvas_id",),
    "extension": ("extension", "extension_days", "extra_days"),
}


class RosterError(BadInput):
    """A roster that cannot be used (one line: file:line:column: what is wrong)."""


def read_roster(path):
    """[{submission, id, name, email, first_name, last_name, section, sis_login, canvas_id,
    extension}] from a roster CSV file (extension: policy.parse_extension's value or None);
    raises RosterError for a missing submission column, an empty or repeated submission name, a
    repeated id or an extension that is neither a number of days nor a date."""
    try:
        cols, body = read_table(path, "roster", ALIASES, ("submission",))
    except BadInput as e:
        raise RosterError(f"--roster {e}")
    out, seen, ids = [], {}, {}
    for line, row in body:
        def get(field):
            return cell(row, cols, field)
        sub = get("submission")
        if not sub:
            raise RosterError(f"--roster {where(path, line, column(cols, 'submission'))}: no submission name")
        if sub in seen:
            raise RosterError(f"--roster {where(path, line, column(cols, 'submission'))}: submission {sub!r} "
                              f"is on lines {seen[sub]} and {line}")
        seen[sub] = line
        if get("id"):
            if get("id") in ids:
                raise RosterError(f"--roster {where(path, line, column(cols, 'id'))}: id {get('id')!r} is on "
                                  f"lines {ids[get('id')]} and {line}")
            ids[get("id")] = line
        try:
            ext = parse_extension(get("extension"))
        except ValueError as e:
            raise RosterError(f"--roster {where(path, line, column(cols, 'extension'))}: the extension is not a "
                              f"number of days or an ISO 8601 date with a timezone: {e}")
        name = get("name") or " ".join(x for x in (get("first_name"), get("last_name")) if x)
        out.append({"submission": sub, "id": get("id"), "name": name, "email": get("email"),
                    "first_name": get("first_name"), "last_name": get("last_name"), "section": get("section"),
                    "sis_login": get("sis_login"), "canvas_id": get("canvas_id"), "extension": ext})
    return out


def roster_extensions(roster):
    """{submission: {'*': extension}} of the roster's extension column."""
    return {p["submission"]: {"*": p["extension"]} for p in roster or [] if p.get("extension")}


def write_gradebook(results_dir, students, labs, roster=None, warn=None):
    """gradebook.csv in results_dir, in the --gradebook-format (lms.py): one row per student
    (roster order, then the submissions not on it), a column of points per lab (blank without a
    result), and in the grader's own format total, max, status and the late penalties. Returns
    the number of rows."""
    roster = roster or []
    on_roster = {r["submission"] for r in roster}
    people = list(roster) + [{"submission": s, "id": "", "name": "", "email": ""}
                             for s in students if s not in on_roster]
    stray = [s for s in students if s not in on_roster]
    if roster and stray and warn:
        warn(f"{len(stray)} submission{'s' if len(stray) != 1 else ''} not on the roster: {', '.join(stray[:5])}"
             + (" ..." if len(stray) > 5 else ""))
    graded = set(students)
    rows, max_of = [], {lab: 0 for lab in labs}
    for p in people:
        r = read_result(results_dir, p["submission"]) if p["submission"] in graded else None
        by_lab = {lab.get("lab"): lab for lab in (r or {}).get("labs", [])}
        for lab in labs:
            if lab in by_lab:
                max_of[lab] = max(max_of[lab], by_lab[lab].get("max_points") or 0)
        points = [by_lab[lab].get("points") if lab in by_lab else None for lab in labs]
        if r is None:
            status = "no submission" if p["submission"] not in graded else "no result"
        else:
            status = r.get("status", "")
        late = "; ".join((r or {}).get("late", {}).get("penalties") or [])
        rows.append((p, points, (r or {}).get("points"), (r or {}).get("max_points"), status, late))
    return lms.write(os.path.join(results_dir, "gradebook.csv"), labs, rows, max_of)


def write_class_files(results_dir, students, labs, roster=None, warn=None, note=None):
    """class.csv and gradebook.csv in results_dir from the stored results of students (those of
    the batch, in its order), and of a GPU batch the leaderboard (leaderboard.py; note(line)
    says where): what every batch writes at its end, after an infrastructure error or Ctrl-C
    (partial), and --merge. Returns the number of rows of class.csv."""
    write_gradebook(results_dir, students, labs, roster, warn)
    board = leaderboard.write(results_dir, students, labs)
    if board and note:
        note(f"leaderboard: {os.path.join(results_dir, 'leaderboard.html')} and leaderboard.csv ({len(board)} "
             f"entries), to publish; whose name is whose: leaderboard-names.csv (yours alone)")
    return write_class_csv(results_dir, os.path.join(results_dir, "class.csv"), students)


HISTOGRAM = (0, 20, 40, 60, 80)  # the lower edges, in percent of the maximum; the last bin holds 100


def class_summary(results_dir, students):
    """What the stored results of students say about the class: how many have a result, per
    status, and over the graded ones (not the grader's failures: no grade) the points and their
    spread (mean, median, min, max, a histogram of the share of the maximum) and the grading
    time per submission (elapsed_s)."""
    out = {"students": len(students), "no_result": 0, "statuses": {}, "points": [], "max_points": None,
           "histogram": [0] * len(HISTOGRAM), "elapsed_s": []}
    for student in students:
        r = read_result(results_dir, student)
        if r is None:
            out["no_result"] += 1
            continue
        status = str(r.get("status", ""))
        out["statuses"][status] = out["statuses"].get(status, 0) + 1
        if status in NOT_GRADED:
            continue
        pts, mx = r.get("points") or 0, r.get("max_points") or 0
        out["points"].append(pts)
        out["max_points"] = mx if out["max_points"] is None else max(out["max_points"], mx)
        share = 100.0 * pts / mx if mx else 0.0
        out["histogram"][sum(1 for lo in HISTOGRAM[1:] if share >= lo)] += 1
        if r.get("elapsed_s"):
            out["elapsed_s"].append(r["elapsed_s"])
    return out


def _num(x):
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def summary_lines(s):
    """The lines of a class_summary for the end of a batch (stderr)."""
    parts = [f"{n} {st}" for st, n in sorted(s["statuses"].items())]
    if s["no_result"]:
        parts.append(f"{s['no_result']} without a result")
    lines = [f"class: {s['students']} submissions: {', '.join(parts) or 'none graded'}"]
    pts = s["points"]
    if pts:
        lines.append(f"points: mean {statistics.mean(pts):.1f}, median {_num(statistics.median(pts))}, "
                     f"min {_num(min(pts))}, max {_num(max(pts))} (of {_num(s['max_points'])}); "
                     f"share of the maximum: " + ", ".join(
                         f"{lo}-{HISTOGRAM[i + 1] - 1 if i + 1 < len(HISTOGRAM) else 100}% {n}"
                         for i, (lo, n) in enumerate(zip(HISTOGRAM, s["histogram"]))))
    if s["elapsed_s"]:
        lines.append(f"grading time per submission: median {_num(round(statistics.median(s['elapsed_s']), 1))} s, "
                     f"max {_num(max(s['elapsed_s']))} s")
    return lines


def run_line(done, skipped, errors, wall_s, not_reached=0):
    """The line about this run: of the submissions done now, those graded and the grader's
    errors (no grade), those skipped (already graded), those not reached (after an
    infrastructure error), the wall time from the first one and the time per submission done."""
    line = f"this run: {done - errors} graded now, "
    if errors:
        line += f"{errors} error{'s' if errors != 1 else ''} (grader or machine: no grade), "
    line += f"{skipped} skipped (already graded)"
    if not_reached:
        line += f", {not_reached} not reached"
    line += f"; {wall_s:.1f} s wall"
    if done:
        line += f", {wall_s / done:.1f} s per submission"
    return line
