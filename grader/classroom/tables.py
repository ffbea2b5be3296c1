"""Reading an instructor's CSV files (a roster, an extensions file) with errors that name the file,
line and column, and the values their cells hold (a date and time, an extension)."""
import csv
import datetime as dt
import math


class BadInput(Exception):
    """An instructor's file that cannot be used: one line, `file:line:column: what is wrong`."""


def where(path, line, col):
    return f"{path}:{line}:{col}"


def parse_time(text):
    """An ISO 8601 date and time with its timezone (a trailing Z is UTC) as an aware datetime;
    ValueError when it is not one."""
    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    value = dt.datetime.fromisoformat(t)
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no timezone (write it as 2026-12-04T23:59:00-05:00 or ...Z)")
    return value


def parse_extension(text):
    """('days', float) or ('due', datetime) from a cell: a number of days, or a new due date;
    None for an empty cell; ValueError otherwise."""
    t = text.strip()
    if not t:
        return None
    try:
        days = float(t)
    except ValueError:
        return ("due", parse_time(t))
    if not math.isfinite(days) or days < 0:
        raise ValueError(f"{t!r} is not a number of days >= 0")
    return ("days", days)


def read_table(path, what, fields, required):
    """(header {field: column index}, [(line number, row)]) of a CSV file; fields maps a field
    to the header names accepted for it (case and spaces do not matter). Raises BadInput for a
    file that cannot be read or lacks a required column."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise BadInput(f"{where(path, 1, 1)}: cannot read the {what}: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{where(path, 1, 1)}: the {what} is not a UTF-8 CSV file: {e}")
    if not rows:
        raise BadInput(f"{where(path, 1, 1)}: the {what} is empty (it needs a header row: {', '.join(required)})")
    header = [h.strip().lower().replace(" ", "_") for h in rows[0]]
    cols = {}
    for field, names in fields.items():
        for n in names:
            if n in header:
                cols[field] = header.index(n)
                break
    for field in required:
        if field not in cols:
            raise BadInput(f"{where(path, 1, len(rows[0]) + 1)}: the {what} has no {field} column (its header: "
                           f"{', '.join(rows[0]) or 'empty'}; name one of {', '.join(fields[field])})")
    body = [(n, row) for n, row in enumerate(rows[1:], start=2) if any(c.strip() for c in row)]
    return cols, body


def cell(row, cols, field):
    i = cols.get(field)
    return row[i].strip() if i is not None and i < len(row) else ""


def column(cols, field):
    """The 1-based column of field (for a file:line:column)."""
    return cols.get(field, 0) + 1
