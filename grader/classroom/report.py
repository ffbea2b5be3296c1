"""The class report (grade.py --submissions DIR --report class.html): one self-contained HTML page
built from the stored per-student results of a batch (RESULTS/<student>.json), for an instructor
to look at: a score histogram per lab, the failure kinds and failing cases that cost the most
students, speed-ratio distributions (GPU grades), a sortable table of the students, and, with
--similarity, the pairs of similar submissions (similarity.py). No network: CSS, SVG and the
small script are inline.

class_data() is the numbers (tests read it), render() the page from them.
"""
import datetime
import html
import json
import math
import os

from gradelib.status import NOT_GRADED, STOPPED, Status

from . import similarity as simmod
from .batch import results_folder
from .similarity import REFERENCE
from .submissions import list_submissions, read_result

# How the grader's failure kinds (status.py) read in the report; others as they are.
KIND_TEXT = {Status.MISSING: "missing (no lab folder)", Status.WRONG: "wrong answer",
             Status.OUT_OF_BOUNDS: "write out of bounds", Status.RUNTIME_ERROR: "runtime error",
             Status.LAB_NOT_IMPLEMENTED: "not implemented (the skeleton)",
             Status.INPUT_MODIFIED: "input modified", Status.TIMEOUT: "timeout (hangs)", Status.CRASH: "crashed"}
BINS = 10  # histogram bins of the share of a lab's maximum: 0-9 %, ..., 90-99 %, and 100 % apart
TOP = 8  # failure kinds and cases shown per lab


def _lab_loss(lab):
    """(failure kinds of one lab result, its failing cases as (n, dist) keys)."""
    status = lab.get("status")
    if status in STOPPED:
        return [status], []
    kinds, cases = [], []
    for f in lab.get("correctness", {}).get("failures", []):
        if f.get("kind") not in kinds:
            kinds.append(f.get("kind"))
        cases.append((f.get("n"), f.get("dist")))
    if lab.get("sanitizer", {}).get("status") == "failed":
        kinds.append("sanitizer errors")
    sp = lab.get("speed", {})
    if sp.get("status") in ("graded", "failed") and (sp.get("points") or 0) < (sp.get("max") or 0):
        kinds.append("slower than the reference")
    return kinds, cases


def _lab_data(lab_id, graded):
    """The numbers of one lab over graded: [(student, the lab's result dict)]."""
    hist = [0] * (BINS + 1)
    kinds, cases, ratios, points = {}, {}, [], []
    lab_max = 0
    for student, lab in graded:
        pts, mx = lab.get("points") or 0, lab.get("max_points") or 0
        lab_max = max(lab_max, mx)
        points.append(pts)
        share = pts / mx if mx else 0.0
        hist[BINS if share >= 1 else int(share * BINS)] += 1
        lost = round(mx - pts, 2)
        k, c = _lab_loss(lab)
        for kind in k:
            e = kinds.setdefault(kind, {"kind": kind, "students": [], "points_lost": 0.0})
            e["students"].append(student)
            e["points_lost"] = round(e["points_lost"] + lost, 2)
        for n, dist in dict.fromkeys(c):
            e = cases.setdefault(f"n={n} dist={dist}", {"case": f"n={n} dist={dist}", "students": []})
            e["students"].append(student)
        ratio = (lab.get("speed") or {}).get("ratio")
        if ratio:
            ratios.append((student, ratio))

    def order(e):
        return (-len(e["students"]), e.get("kind", e.get("case")))

    return {"lab": lab_id, "max": lab_max, "students": len(graded), "histogram": hist,
            "mean": round(sum(points) / len(points), 2) if points else None,
            "kinds": sorted(kinds.values(), key=order), "cases": sorted(cases.values(), key=order),
            "ratios": sorted(ratios, key=lambda x: x[1])}


def class_data(results_dir, students, labs=None):
    """What the page shows, from the stored results of students: {"students": [row], "labs":
    [lab data], "mode", "device"}. A row: student, status, points, max, {lab: points},
    elapsed_s; a student without a result has status 'no result'. labs: the columns (default:
    every lab any result has)."""
    rows, per_lab, modes, devices = [], {}, set(), set()
    for student in students:
        r = read_result(results_dir, student)
        if r is None:
            rows.append({"student": student, "status": "no result", "points": None, "max": None, "labs": {},
                         "elapsed_s": None})
            continue
        status = str(r.get("status", ""))
        modes.add(r.get("mode"))
        if r.get("device"):
            devices.add(r["device"])
        by_lab = {lab.get("lab"): lab for lab in r.get("labs", []) if isinstance(lab, dict)}
        rows.append({"student": student, "status": status, "points": r.get("points"), "max": r.get("max_points"),
                     "labs": {k: v.get("points") for k, v in by_lab.items()}, "elapsed_s": r.get("elapsed_s")})
        if status not in NOT_GRADED:
            for lab_id, lab in by_lab.items():
                per_lab.setdefault(lab_id, []).append((student, lab))
    labs = list(labs) if labs else sorted(per_lab)
    return {"students": rows, "labs": [_lab_data(lab, per_lab.get(lab, [])) for lab in labs],
            "mode": "/".join(sorted(m for m in modes if m)) or "-", "device": ", ".join(sorted(devices)) or "-"}


# ---- the page ------------------------------------------------------------------------------------

def _e(x):
    return html.escape("" if x is None else str(x))


def _histogram_svg(lab):
    """A bar chart of lab["histogram"] (inline SVG, class histogram)."""
    w, h, pad = 330, 150, 22
    bw = (w - 2 * pad) / len(lab["histogram"])
    top = max(lab["histogram"]) or 1
    parts = [f'<svg class="histogram" data-lab="{_e(lab["lab"])}" width="{w}" height="{h + 30}" '
             f'viewBox="0 0 {w} {h + 30}" role="img" aria-label="scores of {_e(lab["lab"])}">',
             f'<line x1="{pad}" y1="{h}" x2="{w - pad}" y2="{h}" class="axis"/>']
    for i, n in enumerate(lab["histogram"]):
        bh = (h - 20) * n / top
        x = pad + i * bw
        label = "100%" if i == BINS else f"{i * 100 // BINS}"
        parts.append(f'<rect class="bar" x="{x + 1:.1f}" y="{h - bh:.1f}" width="{bw - 2:.1f}" height="{bh:.1f}" '
                     f'data-count="{n}"><title>{label}{"" if i == BINS else "-" + str(i * 10 + 9) + "%"}: '
                     f'{n} students</title></rect>')
        if n:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{h - bh - 3:.1f}" class="count">{n}</text>')
        parts.append(f'<text x="{x + bw / 2:.1f}" y="{h + 13}" class="tick">{label}</text>')
    parts.append(f'<text x="{w / 2}" y="{h + 27}" class="tick">% of {lab["max"]:g} points</text></svg>')
    return "".join(parts)


def _ratio_svg(lab):
    """A strip of speed ratios (student / reference time) on a log axis, 0.5x to 8x."""
    w, h, pad = 330, 60, 22
    lo, hi = math.log(0.5), math.log(8)

    def x(r):
        return pad + (w - 2 * pad) * (min(max(math.log(r), lo), hi) - lo) / (hi - lo)

    parts = [f'<svg class="ratios" data-lab="{_e(lab["lab"])}" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
             f'<line x1="{pad}" y1="30" x2="{w - pad}" y2="30" class="axis"/>']
    for t in (0.5, 1, 1.25, 2, 3, 4, 8):
        parts.append(f'<text x="{x(t):.1f}" y="50" class="tick">{t:g}x</text>')
    for student, r in lab["ratios"]:
        parts.append(f'<circle class="ratio" cx="{x(r):.1f}" cy="30" r="4">'
                     f'<title>{_e(student)}: {r:g}x</title></circle>')
    return "".join(parts) + "</svg>"


def _counts_table(entries, key, title, with_points):
    if not entries:
        return f"<p class='none'>{_e(title)}: none</p>"
    head = (f"<tr><th>{_e(title)}</th><th>students</th>" + ("<th>points lost</th>" if with_points else "")
            + "<th>who</th></tr>")
    rows = []
    for e in entries[:TOP]:
        who = ", ".join(e["students"][:4]) + (f" and {len(e['students']) - 4} more" if len(e["students"]) > 4 else "")
        rows.append(f"<tr><td>{_e(KIND_TEXT.get(e[key], e[key]))}</td><td class='num'>{len(e['students'])}</td>"
                    + (f"<td class='num'>{e['points_lost']:g}</td>" if with_points else "")
                    + f"<td>{_e(who)}</td></tr>")
    more = f"<p class='none'>... and {len(entries) - TOP} more</p>" if len(entries) > TOP else ""
    return f"<table class='counts'>{head}{''.join(rows)}</table>{more}"


def _lab_section(lab):
    speed = ""
    if lab["ratios"]:
        median = lab["ratios"][len(lab["ratios"]) // 2][1]
        speed = (f"<h4>Speed: student time / reference time, {len(lab['ratios'])} students, median "
                 f"{median:g}x</h4>{_ratio_svg(lab)}")
    mean = f", mean {lab['mean']:g} of {lab['max']:g}" if lab["mean"] is not None else ""
    return (f"<section class='lab' id='lab-{_e(lab['lab'])}'><h3>{_e(lab['lab'])}</h3>"
            f"<p>{lab['students']} graded{mean}</p><div class='row'><div>{_histogram_svg(lab)}{speed}</div>"
            f"<div>{_counts_table(lab['kinds'], 'kind', 'failure kind', True)}"
            f"{_counts_table(lab['cases'], 'case', 'failing case', False)}</div></div></section>")


def _student_table(data):
    labs = [lab["lab"] for lab in data["labs"]]
    head = "".join(f"<th data-type='{t}'>{_e(n)}</th>" for n, t in
                   [("student", "text"), ("status", "text"), ("points", "num"), ("max", "num")]
                   + [(lab[:2], "num") for lab in labs] + [("seconds", "num")])
    body = []
    for r in data["students"]:
        cells = ([r["student"], r["status"], r["points"], r["max"]] + [r["labs"].get(lab) for lab in labs]
                 + [r["elapsed_s"]])
        body.append("<tr>" + "".join(f"<td>{_e(c if not isinstance(c, float) else f'{c:g}')}</td>" for c in cells)
                    + "</tr>")
    return (f"<table id='students' data-rows='{len(body)}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _similarity_section(sim):
    """The similar pairs (similarity.class_similarity), or why there are none."""
    if sim is None:
        return ""
    if isinstance(sim, str):  # the reason it did not run
        return f"<section id='similarity'><h2>Similarity</h2><p class='none'>{_e(sim)}</p></section>"
    out = ["<section id='similarity'><h2>Similarity</h2><p>Pairs whose code (the skeleton's text taken out) "
           "is largely the other's, by sim_c. It reports; it changes no grade.</p>"]
    for lab in sim:
        out.append(f"<h3>{_e(lab['lab'])}: {len(lab['pairs'])} pairs at or above {lab['threshold_percent']}%, "
                   f"{lab['compared']} files compared</h3>")
        out += [f"<p class='group'>alike: {_e(', '.join(g))}</p>" for g in lab["groups"]]
        if lab["through_reference"]:
            out.append(f"<p class='none'>{lab['through_reference']} pairs of students who are both over the "
                       f"threshold against the reference are not listed</p>")
        if lab["too_short"]:
            out.append(f"<p class='none'>too little own code to compare: {_e(', '.join(lab['too_short']))}</p>")
        for p in lab["pairs"][:lab["max_pairs"]]:
            blocks = "".join(f"<div class='match'><div><b>{_e(p['a'])} lines {m['a_lines'][0]}-{m['a_lines'][1]}</b>"
                             f"<pre>{_e(m['a_text'])}</pre></div><div><b>{_e(p['b'])} lines {m['b_lines'][0]}-"
                             f"{m['b_lines'][1]}</b><pre>{_e(m['b_text'])}</pre></div></div>" for m in p["matches"])
            back = "" if p["b"] == REFERENCE else f", {p['b_in_a']}% the other way"
            out.append(f"<details class='pair'><summary>{_e(p['a'])} and {_e(p['b'])}: {p['a_in_b']}% of "
                       f"{_e(p['a'])}'s {p['tokens_a']} tokens are in {_e(p['b'])}{back}</summary>{blocks}</details>")
        if len(lab["pairs"]) > lab["max_pairs"]:
            out.append(f"<p class='none'>... and {len(lab['pairs']) - lab['max_pairs']} more pairs</p>")
    return "".join(out) + "</section>"


def render(data, title="Class report", similarity=None):
    """The page (a str) from class_data's numbers; similarity: class_similarity's list, the
    reason it was not run, or None (not asked for)."""
    graded = [r for r in data["students"] if r["points"] is not None and r["status"] not in NOT_GRADED]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    summary = (f"{len(data['students'])} submissions, {len(graded)} with a grade; mode {_e(data['mode'])}; "
               f"device {_e(data['device'])}; written {when}")
    payload = json.dumps({"labs": len(data["labs"]), "students": len(data["students"])})
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{CSS}</style></head><body data-selfcheck='pending'><h1>{_e(title)}</h1><p>{summary}</p>"
            f"<h2>Labs</h2>{''.join(_lab_section(lab) for lab in data['labs'])}"
            f"<h2>Students</h2><p class='none'>Click a column to sort.</p>{_student_table(data)}"
            f"{_similarity_section(similarity)}<pre id='selfcheck'></pre>"
            f"<script id='expect' type='application/json'>{payload}</script><script>{JS}</script></body></html>")


def _save(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write(path, results_dir, students, labs=None, title=None, similarity=None):
    """Writes the page for the stored results of students to path (atomically); its numbers."""
    data = class_data(results_dir, students, labs)
    _save(path, render(data, title or f"Class report: {os.path.basename(os.path.abspath(results_dir))}", similarity))
    return data


CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
h3{margin:.2em 0}.lab{border-top:1px solid #ccc;padding:.5em 0}\
.row{display:grid;grid-template-columns:340px 1fr;gap:1.5em}
.counts{font-size:12px}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
th{background:#f3f3f3}#students th{cursor:pointer}#students th.sorted-asc::after{content:" \\25B2"}
#students th.sorted-desc::after{content:" \\25BC"}.num{text-align:right}.none{color:#666}
svg .bar{fill:#4a7fb5}svg .axis{stroke:#444}svg text{font-size:10px;text-anchor:middle;fill:#333}
svg .ratio{fill:#c0504d;fill-opacity:.6}.match{display:flex;gap:1em}.match pre{background:#f7f7f7;padding:4px;
margin:2px 0;font-size:12px;max-width:560px;overflow:auto}details.pair{margin:.3em 0}"""

# Sorting: a click on a column header sorts the table by it (again: the other way). The page then
# checks itself: one histogram per lab, the table's rows all there, and a sort that orders them;
# it writes the outcome to <body data-selfcheck> ("ok" or what failed) and any script error to
# data-jserror, for a headless browser to read. #sort=COLUMN[:desc] clicks that header on load.
JS = r"""(function(){
window.addEventListener('error',function(e){document.body.setAttribute('data-jserror',String(e.message));});
var table=document.getElementById('students'),ths=table.tHead.rows[0].cells;
function key(td,type){var t=td.textContent.trim();
 if(type==='num'){var v=parseFloat(t);return isNaN(v)?-Infinity:v;}return t.toLowerCase();}
function sortBy(i,dir){var type=ths[i].getAttribute('data-type'),body=table.tBodies[0];
 var rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=key(a.cells[i],type),y=key(b.cells[i],type);return (x<y?-1:x>y?1:0)*dir;});
 rows.forEach(function(r){body.appendChild(r);});
 for(var k=0;k<ths.length;k++){ths[k].classList.remove('sorted-asc','sorted-desc');}
 ths[i].classList.add(dir>0?'sorted-asc':'sorted-desc');ths[i].setAttribute('data-dir',String(dir));}
Array.prototype.forEach.call(ths,function(th,i){th.addEventListener('click',function(){
 sortBy(i,th.getAttribute('data-dir')==='1'?-1:1);});});
function check(){var exp=JSON.parse(document.getElementById('expect').textContent),bad=[];
 if(document.querySelectorAll('svg.histogram').length!==exp.labs)bad.push('histograms');
 if(table.tBodies[0].rows.length!==exp.students)bad.push('rows');
 var pts=2;ths[pts].click();
 var asc=Array.prototype.map.call(table.tBodies[0].rows,function(r){return key(r.cells[pts],'num');});
 for(var k=1;k<asc.length;k++){if(asc[k-1]>asc[k]){bad.push('sort');break;}}
 ths[0].click();return bad;}
var bad=check(),m=/sort=([^:&]+)(?::(desc))?/.exec(location.hash);
if(m){for(var k=0;k<ths.length;k++){if(ths[k].textContent===decodeURIComponent(m[1])){
 ths[k].setAttribute('data-dir',m[2]?'1':'0');ths[k].click();}}}
document.body.setAttribute('data-selfcheck',bad.length?'failed: '+bad.join(', '):'ok');
document.getElementById('selfcheck').textContent='self-check: '+document.body.getAttribute('data-selfcheck');
})();"""


def for_batch(args, config, labs, root, log):
    """grade.py --report (and --similarity) after a batch or --merge: the page for every
    submission of --submissions from the results folder, over the labs of --labs (without it,
    the labs the results hold). A missing sim_c is one warning line, and the page says
    similarity was not checked. True when the page is written; a page that cannot be written
    (its folder is made when missing) is one line and False, and the grades stand."""
    students = [s for s, _ in list_submissions(args.submissions)]
    results = results_folder(args)
    data = class_data(results, students, labs if args.labs else None)
    sim = None
    if args.similarity:
        try:
            sim = simmod.class_similarity(args.submissions, [lab["lab"] for lab in data["labs"]], root,
                                          config.similarity)
            log("similarity: " + ("; ".join(f"{lab['lab']} {len(lab['pairs'])} pairs at or above "
                                            f"{lab['threshold_percent']}%" for lab in sim) or "no labs"))
        except simmod.SimUnavailable as e:
            log(f"warning: {e}")
            sim = str(e)
    title = f"Class report: {os.path.basename(os.path.abspath(args.submissions))}"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
        _save(args.report, render(data, title, sim))
    except OSError as e:
        log(f"--report {args.report}: cannot write it: {e.strerror}")
        return False
    log(f"class report: {os.path.abspath(args.report)} ({len(students)} submissions, {len(data['labs'])} labs)")
    return True
