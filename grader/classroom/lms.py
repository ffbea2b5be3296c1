"""gradebook.csv in the import format of a learning management system (--gradebook-format):

  csv         the grader's own: student_id, name, email, submission, a column per lab, total, max,
              status, late (what the late policy took off)
  canvas      Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then one
              column per lab named "Lab 03 kogge_stone", or as the config's gradebook.columns names
              it ("Lab 03 (12345)": Canvas matches a column to an assignment by the id in brackets;
              a name it does not know makes a new assignment). Canvas matches a student by ID,
              SIS User ID or SIS Login ID.
              (Canvas Guides, "How do I import grades in the Gradebook?", and
              https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades)
  moodle      Moodle's CSV grade import: First name, Last name, ID number, Email address, then a
              column per lab; on import map "Email address" (or "ID number") to the user and each
              lab column to its grade item (https://docs.moodle.org/311/en/Grade_import)
  blackboard  Blackboard Grade Center upload: Last Name, First Name, Username, Student ID, then a
              column per lab "Lab 03 kogge_stone [Total Pts: 100 Score]" (with "|ID" after it
              when gradebook.columns gives the column id; without it a new column is made); every
              value quoted
              (http://library.blackboard.com/ref/36ba3329-e441-488a-93ce-7a55543cc999/Content/Grade%20Center/Uploading%20External%20Grade%20Center%20Items.htm)

In every format a student with no result (not submitted, or not graded yet) has blank lab
cells, never 0: an LMS reads 0 as a grade and blank as "no grade". A roster (--roster) supplies
the ids; its optional columns section, sis_login (or login_id) and canvas_id (Canvas's own user
id) fill the Canvas columns, first_name/last_name the Moodle and Blackboard ones.
"""
import csv
import os

FORMATS = ("csv", "canvas", "moodle", "blackboard")
_SETTINGS = {"format": "csv", "columns": {}}


def configure(fmt="csv", columns=None):
    """The format of the gradebook every batch writes from now on, and the config's
    gradebook.columns ({lab: column name} for the LMS formats)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown gradebook format {fmt!r} (choose from {', '.join(FORMATS)})")
    _SETTINGS.update(format=fmt, columns=dict(columns or {}))


def check_columns(columns):
    """Raises ValueError unless columns (the config's "gradebook" section) is valid."""
    if not isinstance(columns, dict) or set(columns) - {"columns"}:
        raise ValueError("gradebook must be an object with one key, columns ({lab id: column name})")
    cols = columns.get("columns", {})
    if not isinstance(cols, dict) or not all(isinstance(v, str) and v.strip() for v in cols.values()):
        raise ValueError("gradebook.columns must map lab ids to non-empty column names")


def _split(person):
    first, last = person.get("first_name", ""), person.get("last_name", "")
    if not (first or last) and person.get("name"):
        first, _, last = person["name"].rpartition(" ")
        if not first:
            first, last = last, ""
    return first, last


def _lab_title(lab):
    return f"Lab {lab[:2]} {lab[3:]}"


def _canvas_lab(lab):
    return _SETTINGS["columns"].get(lab) or _lab_title(lab)


def _blackboard_lab(lab, max_points):
    name = _SETTINGS["columns"].get(lab)
    ident = ""
    if name and "|" in name:
        name, _, ident = name.rpartition("|")
        name = name.strip()
    return f"{name or _lab_title(lab)} [Total Pts: {max_points:g} Score]" + (f" |{ident.strip()}" if ident else "")


def _points(value):
    return "" if value is None else f"{value:g}"


def header_and_rows(fmt, labs, people, max_of):
    """(header, rows, quote everything) for fmt. people: [(person: roster fields, points per lab
    or None each, total or None, max or None, status, late text)]."""
    rows = []
    if fmt == "canvas":
        header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + [_canvas_lab(lab) for lab in labs]
        for p, pts, *_ in people:
            last_first = (", ".join(x for x in reversed(_split(p)) if x) if (p.get("name") or p.get("first_name"))
                          else p["submission"])
            rows.append([last_first, p.get("canvas_id", ""), p.get("id", ""), p.get("sis_login", ""),
                         p.get("section", "")] + [_points(x) for x in pts])
        return header, rows, False
    if fmt == "moodle":
        header = ["First name", "Last name", "ID number", "Email address"] + [_lab_title(lab) for lab in labs]
        for p, pts, *_ in people:
            first, last = _split(p)
            rows.append([first, last, p.get("id", ""), p.get("email", "")] + [_points(x) for x in pts])
        return header, rows, False
    if fmt == "blackboard":
        header = (["Last Name", "First Name", "Username", "Student ID"]
                  + [_blackboard_lab(lab, max_of[lab]) for lab in labs])
        for p, pts, *_ in people:
            first, last = _split(p)
            rows.append([last, first, p.get("sis_login") or p["submission"], p.get("id", "")]
                        + [_points(x) for x in pts])
        return header, rows, True
    header = ["student_id", "name", "email", "submission", *labs, "total", "max", "status", "late"]
    for p, pts, total, mx, status, late in people:
        rows.append([p.get("id", ""), p.get("name", ""), p.get("email", ""), p["submission"],
                     *[_points(x) for x in pts], _points(total), _points(mx), status, late])
    return header, rows, False


def write(path, labs, people, max_of, fmt=None):
    """Writes the gradebook at path in fmt (default: the configured one); returns its rows."""
    header, rows, quote_all = header_and_rows(fmt or _SETTINGS["format"], labs, people, max_of)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)
    return len(rows)
