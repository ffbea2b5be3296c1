"""The late policy of a term: each lab's due date, per-student extensions, a penalty function, and
the time a submission was handed in; and the strict reading of the instructor's files (a roster,
an extensions file) that refuses a missing column, a duplicate or a date it cannot read with
file:line:column.

The config's optional top-level "late" section (grader/README.md, "Late work"):
  "late": {
    "due": {"default": "2026-12-04T23:59:00-05:00", "03_kogge_stone": "2026-12-11T23:59:00-05:00"},
    "grace_minutes": 15,
    "penalty": {"percent_per_day": 10, "max_percent": 50}
             | {"table": [[1, 10], [3, 30], [7, 100]]}   # up to N days late: P percent off
  }
A lab with no due date (no entry and no "default") is never late. Days late are counted in whole
days, a started day counting as one (after the grace minutes). A lab's points are scaled by
(100 - percent)/100, every part alike, so that Gradescope's test scores still add up to the total.

The time handed in: Gradescope's submission_metadata.json ("created_at"; its "assignment"
"due_date" is the due date of a lab the config gives none), in single mode with --metadata FILE
(the platform's, outside the upload) and in batch mode beside the submission, written by the
instructor or the platform's export: <submissions>/<name>.submission_metadata.json for the
submission <name> or <name>.zip. Never one inside the student's own folder, which the student
wrote (one there is ignored, with a warning). Otherwise in batch mode the archive's modification
time, or the newest file of a folder. No time at all: graded on time, with a warning.
"""
import datetime as dt
import json
import math
import os

from gradelib.formats.details import late_lines

from . import gradebook
from .tables import BadInput, cell, column, parse_extension, parse_time, read_table, where

METADATA = "submission_metadata.json"  # Gradescope's name for it (and where a batch folder holds it)


# ---- the config's "late" section -----------------------------------------------------------------

def check_late(late, labs_known=None):
    """Raises ValueError (one line, naming the key) unless late is a valid "late" section."""
    if not isinstance(late, dict):
        raise ValueError("late must be an object with due, penalty and (optional) grace_minutes")
    for k in late:
        if k not in ("due", "penalty", "grace_minutes"):
            raise ValueError(f"late: unknown key {json.dumps(k)} (known: due, penalty, grace_minutes)")
    due = late.get("due", {})
    if not isinstance(due, dict):
        raise ValueError("late.due must map lab ids (or \"default\") to dates")
    for lab, text in due.items():
        if lab != "default" and labs_known is not None and lab not in labs_known:
            raise ValueError(f"late.due: unknown lab {json.dumps(lab)}")
        try:
            parse_time(str(text))
        except ValueError as e:
            raise ValueError(f"late.due.{lab}: not an ISO 8601 date and time with a timezone: {e}")
    g = late.get("grace_minutes", 0)
    if isinstance(g, bool) or not isinstance(g, (int, float)) or g < 0:
        raise ValueError("late.grace_minutes must be a number >= 0")
    _check_penalty(late.get("penalty", {"percent_per_day": 0}))


def _check_penalty(p):
    if not isinstance(p, dict) or set(p) - {"percent_per_day", "max_percent", "table"} or not p:
        raise ValueError("late.penalty must be {\"percent_per_day\": P, \"max_percent\": M} "
                         "or {\"table\": [[days, percent], ...]}")
    if "table" in p:
        rows = p["table"]
        if len(p) != 1 or not isinstance(rows, list) or not rows:
            raise ValueError("late.penalty.table must be the only key, a non-empty list of [days, percent]")
        last = 0
        for row in rows:
            if (not isinstance(row, list) or len(row) != 2 or not all(_num(x) for x in row)
                    or row[0] <= last or not 0 <= row[1] <= 100):
                raise ValueError("late.penalty.table: each row is [days, percent], days growing, percent 0-100")
            last = row[0]
        return
    for k in ("percent_per_day", "max_percent"):
        if k in p and not (_num(p[k]) and 0 <= p[k] <= 100):
            raise ValueError(f"late.penalty.{k} must be a number from 0 to 100")


def _num(x):
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)


def penalty_percent(penalty, days):
    """The percent taken off for a lab `days` whole days late (0 when on time)."""
    if days <= 0:
        return 0.0
    if "table" in penalty:
        for up_to, pct in penalty["table"]:
            if days <= up_to:
                return float(pct)
        return float(penalty["table"][-1][1])
    pct = penalty.get("percent_per_day", 0) * days
    return float(min(pct, penalty.get("max_percent", 100)))


# ---- extensions (a roster column, or an extensions file) -----------------------------------------

EXTENSION_FIELDS = {"submission": ("submission", "login", "username", "student"), "lab": ("lab",),
                    "extension": ("extension", "days", "extension_days", "due")}


def read_extensions(path, labs):
    """{submission: {lab or '*': ('days', d) | ('due', datetime)}} from an extensions file: columns
    submission, lab (empty or 'all': every lab; else an id such as 03 or 03_kogge_stone) and
    extension (days, or a new due date). Raises BadInput (file:line:column)."""
    cols, body = read_table(path, "extensions file", EXTENSION_FIELDS, ("submission", "extension"))
    out, seen = {}, {}
    for line, row in body:
        sub = cell(row, cols, "submission")
        if not sub:
            raise BadInput(f"{where(path, line, column(cols, 'submission'))}: no submission name")
        lab_text = cell(row, cols, "lab")
        lab = "*" if lab_text.lower() in ("", "all", "*") else _lab_id(lab_text, labs)
        if lab is None:
            raise BadInput(f"{where(path, line, column(cols, 'lab'))}: unknown lab {lab_text!r} "
                           f"(labs: {', '.join(labs)})")
        if (sub, lab) in seen:
            raise BadInput(f"{where(path, line, column(cols, 'submission'))}: a second extension for {sub!r} "
                           f"({'every lab' if lab == '*' else lab}); the first is on line {seen[sub, lab]}")
        seen[sub, lab] = line
        try:
            ext = parse_extension(cell(row, cols, "extension"))
        except ValueError as e:
            raise BadInput(f"{where(path, line, column(cols, 'extension'))}: not a number of days or an ISO 8601 "
                           f"date with a timezone: {e}")
        if ext is None:
            raise BadInput(f"{where(path, line, column(cols, 'extension'))}: the extension is empty")
        out.setdefault(sub, {})[lab] = ext
    return out


def _lab_id(text, labs):
    for lab in labs:
        if text == lab or text == lab[:2] or (text.isdigit() and int(text) == int(lab[:2])):
            return lab
    return None


# ---- when a submission was handed in --------------------------------------------------------------

def read_metadata(path):
    """(handed in: datetime or None, Gradescope's assignment due date or None, a warning or '')
    from a submission_metadata.json."""
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        return None, None, f"{os.path.basename(path)} cannot be read ({e})"
    if not isinstance(meta, dict):
        return None, None, f"{os.path.basename(path)} is not a JSON object"
    due = None
    assignment = meta.get("assignment")
    if isinstance(assignment, dict) and assignment.get("due_date"):
        try:
            due = parse_time(str(assignment["due_date"]))
        except ValueError:
            due = None
    try:
        return parse_time(str(meta["created_at"])), due, ""
    except (KeyError, ValueError):
        return None, due, f"{os.path.basename(path)} has no readable created_at"


# ---- the config's "rate_limit" section (Gradescope) -------------------------------------------------

def check_rate_limit(limit):
    """Raises ValueError (one line) unless limit is a valid "rate_limit" section:
    {"submissions": N (a whole number >= 1), "hours": H (a number > 0)}."""
    if not isinstance(limit, dict) or set(limit) != {"submissions", "hours"}:
        raise ValueError("rate_limit must be an object with submissions (how many uploads are graded) and "
                         "hours (in how many hours), e.g. {\"submissions\": 3, \"hours\": 24}")
    n, h = limit["submissions"], limit["hours"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"rate_limit.submissions must be a whole number of at least 1 (got {json.dumps(n)})")
    if isinstance(h, bool) or not isinstance(h, (int, float)) or not h > 0:
        raise ValueError(f"rate_limit.hours must be a number above 0 (got {json.dumps(h)})")


def rate_limited(limit, path):
    """None when the upload that path (Gradescope's submission_metadata.json) describes may be
    graded under limit (the config's "rate_limit"), else a dict: "used" (the uploads of the last
    limit["hours"] hours before it, from its previous_submissions), "score" (the most recent
    previous upload's, which Gradescope would otherwise replace with this one's) and its time,
    and "next" (when the oldest of those leaves the window). Uploads that were themselves not
    graded for the limit (their stored results carry extra_data.rate_limited) are not counted, so
    uploading again while limited does not push the next grading further away. A file that cannot
    be read, an upload with no readable time, or a last upload with no score to keep is graded
    (never refused for want of data: a refusal must not lower the student's score)."""
    if not limit:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
        now = parse_time(str(meta["created_at"]))
        earlier = []
        for p in meta.get("previous_submissions") or []:
            try:
                extra = (p.get("results") or {}).get("extra_data") or {}
                earlier.append((parse_time(str(p["submission_time"])), p.get("score"),
                                bool(isinstance(extra, dict) and extra.get("rate_limited"))))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    window = dt.timedelta(hours=limit["hours"])
    recent = sorted(t for t, _, limited in earlier if now - window < t <= now and not limited)
    if len(recent) < limit["submissions"]:
        return None
    last_time, last_score, _ = max(earlier, key=lambda e: e[0])
    if isinstance(last_score, bool) or not isinstance(last_score, (int, float)):
        return None
    return {"used": len(recent), "score": last_score, "score_time": last_time,
            "next": recent[len(recent) - limit["submissions"]] + window}


def rate_limit_message(limit, state):
    """What the student reads for an upload that was not graded (state: rate_limited's)."""
    return (f"Not graded: this assignment grades {limit['submissions']} upload(s) every {limit['hours']:g} hours, "
            f"and {state['used']} of yours were graded in the last {limit['hours']:g}. Upload again after "
            f"{state['next'].isoformat()}; your score stays {state['score']:g}, from your upload of "
            f"{state['score_time'].isoformat()}.")


def metadata_beside(path):
    """Where the instructor's (or the platform's) metadata of the batch submission path lies:
    <submissions>/<name>.submission_metadata.json, <name> without an archive's extension."""
    name = os.path.basename(path.rstrip("/"))
    for ext in (".tar.gz", ".tgz", ".zip", ".tar"):
        if name.endswith(ext):
            name = name[:-len(ext)]
            break
    return os.path.join(os.path.dirname(path.rstrip("/")), f"{name}.{METADATA}")


def handed_in(path):
    """(datetime or None, Gradescope's due date or None, source, warning) of a batch submission:
    the metadata beside it (metadata_beside), else the archive's modification time, or the newest
    file's of a folder. A submission_metadata.json inside the student's folder is the student's
    own file: never read, and named in the warning."""
    meta = metadata_beside(path)
    inside = os.path.isdir(path) and os.path.isfile(os.path.join(path, METADATA))
    ignored = (f"{METADATA} inside the submission is the student's own file and is ignored (put the "
               f"platform's beside it: {os.path.basename(meta)})") if inside else ""
    if os.path.isfile(meta):
        when, due, warning = read_metadata(meta)
        return when, due, os.path.basename(meta), "; ".join(w for w in (warning, ignored) if w)
    try:
        if os.path.isdir(path):
            newest = 0.0
            for dirpath, _, filenames in os.walk(path, followlinks=False):
                for fn in filenames:
                    newest = max(newest, os.lstat(os.path.join(dirpath, fn)).st_mtime)
            stamp = newest or os.stat(path).st_mtime
            source = "the folder's newest file"
        else:
            stamp = os.stat(path).st_mtime
            source = "the archive's modification time"
    except OSError as e:
        return None, None, "", f"no time for the submission ({e.strerror})"
    return dt.datetime.fromtimestamp(stamp, dt.timezone.utc), None, source, ignored


# ---- the policy applied to a result ----------------------------------------------------------------

class Term:
    """The late policy of a run: late (the config's "late" section, or None), extensions
    ({submission: {lab or '*': extension}}, from the roster and an extensions file)."""

    def __init__(self, late, extensions=None):
        self.late = late or None
        self.extensions = extensions or {}

    def due(self, lab, student, platform_due=None):
        """(the lab's due date for student with any extension, or None, the extension text)."""
        dues = (self.late or {}).get("due", {})
        base = dues.get(lab, dues.get("default"))
        base = parse_time(base) if base else platform_due
        ext = self.extensions.get(student, {})
        ext = ext.get(lab, ext.get("*"))
        if ext is None or base is None and ext[0] == "days":
            return base, ""
        if ext[0] == "due":
            return ext[1], f"extended to {ext[1].isoformat()}"
        return base + dt.timedelta(days=ext[1]), f"extended by {ext[1]:g} days"

    def stamp(self, result, student, when, platform_due=None, source="", warning=""):
        """Applies the policy to result (a graded result dict) for a submission handed in at
        `when` (None: unknown, graded on time with a warning); idempotent: a result stamped
        before is first restored to its points before any penalty. Returns result."""
        labs = [lab for lab in result.get("labs", []) if isinstance(lab, dict)]
        for lab in labs:
            _restore(lab)
        result.pop("late", None)
        if not self.late and platform_due is None:
            _total(result, labs)
            return result
        info = {"submitted_at": when.isoformat() if when else None, "source": source}
        if when is None:
            info["warning"] = (warning + "; " if warning else "") + "no submission time: graded as on time"
        lines = []
        for lab in labs:
            due, ext = self.due(lab.get("lab"), student, platform_due)
            if due is None or when is None:
                continue
            grace = dt.timedelta(minutes=(self.late or {}).get("grace_minutes", 0))
            late_s = (when - due - grace).total_seconds()
            days = max(0, math.ceil(late_s / 86400)) if late_s > 0 else 0
            pct = penalty_percent((self.late or {}).get("penalty", {}), days)
            lab["late"] = {"due": due.isoformat(), "days_late": days, "percent": pct,
                           "points_before": lab.get("points", 0)}
            if ext:
                lab["late"]["extension"] = ext
            if pct:
                _scale(lab, (100.0 - pct) / 100.0)
                lines.append(f"{lab['lab']} {days} day{'s' if days != 1 else ''} late: -{pct:g}% "
                             f"({lab['late']['points_before']:g} -> {lab['points']:g} points)")
        info["penalties"] = lines
        result["late"] = info
        _total(result, labs)
        return result


def _scale(lab, factor):
    for part in ("correctness", "sanitizer", "speed"):
        if isinstance(lab.get(part), dict) and isinstance(lab[part].get("points"), (int, float)):
            lab[part]["points_before_late"] = lab[part]["points"]
            lab[part]["points"] = round(lab[part]["points"] * factor, 2)
    lab["points"] = round(lab.get("points", 0) * factor, 2)


def _restore(lab):
    late = lab.pop("late", None)
    if not late:
        return
    lab["points"] = late.get("points_before", lab.get("points", 0))
    for part in ("correctness", "sanitizer", "speed"):
        if isinstance(lab.get(part), dict) and "points_before_late" in lab[part]:
            lab[part]["points"] = lab[part].pop("points_before_late")


def _total(result, labs):
    if labs and isinstance(result.get("points"), (int, float)):
        result["points"] = round(sum(lab.get("points", 0) for lab in labs), 2)


# ---- what grade.py and batch.py call -------------------------------------------------------------

def read_term(args, config, labs):
    """(the roster or None, the Term) of a run from its options; raises BadInput."""
    roster = gradebook.read_roster(args.roster) if args.roster else None
    extensions = gradebook.roster_extensions(roster)
    if args.extensions:
        for sub, by_lab in read_extensions(args.extensions, labs).items():
            extensions.setdefault(sub, {}).update(by_lab)
    return roster, Term(config.late, extensions)


def stamp_single(term, result, student, metadata, log):
    """Single mode with --metadata: the late policy applied from Gradescope's metadata file."""
    when, due, warning = read_metadata(metadata)
    (term or Term(None)).stamp(result, student, when, due, METADATA, warning)
    for line in late_lines(result):
        log(line)


def stamp_batch(term, result, student, path, log):
    """Batch mode: the late policy applied to a result from its submission's time (handed_in);
    True when the result changed."""
    before = json.dumps(result, sort_keys=True)
    try:
        when, due, source, warning = handed_in(path)
        (term or Term(None)).stamp(result, student, when, due, source, warning)
    except Exception as e:  # noqa: BLE001 (a result is always written: unstamped, said so)
        result["late"] = {"warning": f"the late policy could not be applied ({type(e).__name__}: {e})"}
    info = result.get("late") or {}
    if info.get("warning"):
        log(f"{student}: late policy: {info['warning']}")
    return json.dumps(result, sort_keys=True) != before
