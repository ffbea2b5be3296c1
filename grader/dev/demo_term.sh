#!/usr/bin/env bash
# demo_term.sh — a generated class graded as a term would be (grader/README.md, "The term"):
# N students (default 30) on labs 01-03 in CPU mode, a roster (one student on it never submits),
# a late policy in a copy of the config, two extensions (one in the roster's extension column,
# one in an extensions file), two near-copies (s11 and s12: one is the other with names and
# comments changed), a few wrong or broken labs, then one regrade (--only) on the stored class
# seed, which also writes the class report with the similarity check (OUT/class.html).
#
#   grader/dev/demo_term.sh [OUT]      OUT defaults to a new folder under /tmp; N=8 for a quick run
#
# It writes OUT/class (the submissions), OUT/roster.csv, OUT/extensions.csv, OUT/term.json and
# OUT/class-results (the grader's results: class.csv, gradebook.csv in Canvas's format, seed.json).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$(mktemp -d /tmp/demo-term.XXXXXX)}
N=${N:-30}
LABS=(01_serial 02_naive 03_kogge_stone)
DUE="2026-12-04T23:59:00+00:00"
mkdir -p "$OUT"
rm -rf "$OUT/class" "$OUT/class-results"
mkdir -p "$OUT/class" && chmod o= "$OUT/class"  # the grader warns when other users could read it

# ---- the class ------------------------------------------------------------------------------
copy_labs() {  # copy_labs DEST: the reference solutions of the three labs, as a student's labs/
    for lab in "${LABS[@]}"; do
        mkdir -p "$1/labs/$lab"
        cp "$ROOT/solutions/$lab/scan.cu" "$1/labs/$lab/scan.cu"
    done
}
for i in $(seq 1 "$N"); do
    s=$(printf 's%02d' "$i")
    [ "$i" -eq 30 ] && continue  # s30 is on the roster and never submits
    copy_labs "$OUT/class/$s"
done
skeleton() { cp "$ROOT/labs/$2/scan.cu" "$OUT/class/$1/labs/$2/scan.cu"; }
[ -d "$OUT/class/s05" ] && skeleton s05 03_kogge_stone                       # lab 03 not done
[ -d "$OUT/class/s07" ] && sed -i '0,/return LAB_OK;/s//return LAB_OK/' "$OUT/class/s07/labs/02_naive/scan.cu"  # a compile error
if [ -d "$OUT/class/s12" ]; then  # the near-copies: s12 is s11 with comments and a name changed
    printf '/* s11: my own notes on the tile loop */\n' >>"$OUT/class/s11/labs/03_kogge_stone/scan.cu"
    sed -e 's#/\* s11: my own notes on the tile loop \*/#/* notes (s12) */#' -e 's/\btile_sums\b/block_totals/g' \
        "$OUT/class/s11/labs/03_kogge_stone/scan.cu" >"$OUT/class/s12/labs/03_kogge_stone/scan.cu"
fi
# every submission on time (two days before the due date), then the late ones
find "$OUT/class" -type f -exec touch -d "2026-12-02T12:00:00Z" {} +
late() { find "$OUT/class/$1" -type f -exec touch -d "$2" {} +; }
[ -d "$OUT/class/s03" ] && late s03 "2026-12-06T10:00:00Z"   # 2 days late, a 3-day extension (roster)
[ -d "$OUT/class/s04" ] && late s04 "2026-12-06T10:00:00Z"   # 2 days late: -20%
[ -d "$OUT/class/s08" ] && late s08 "2026-12-09T10:00:00Z"   # 5 days late: capped at -30%, lab 01 extended
# two archives, as students upload them
for s in s02 s06; do
    [ -d "$OUT/class/$s" ] || continue
    (cd "$OUT/class/$s" && zip -qr "../$s.zip" labs) && rm -rf "${OUT:?}/class/$s"
    touch -d "2026-12-02T12:00:00Z" "$OUT/class/$s.zip"
done

# ---- the roster, the extensions, the late policy --------------------------------------------------
{
    echo "submission,id,first_name,last_name,email,section,sis_login,extension"
    for i in $(seq 1 "$N"); do
        s=$(printf 's%02d' "$i")
        ext=""; [ "$s" = s03 ] && ext=3
        echo "$s,9$(printf '%04d' "$i"),Student,$(printf 'N%02d' "$i"),$s@uni.example,L0$((i % 3 + 1)),$s-login,$ext"
    done
} >"$OUT/roster.csv"
printf 'submission,lab,extension\ns08,01,2026-12-10T00:00:00Z\n' >"$OUT/extensions.csv"
python3 - "$ROOT/grader/config.json" "$OUT/term.json" "$DUE" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["late"] = {"due": {"default": sys.argv[3]}, "grace_minutes": 15,
               "penalty": {"percent_per_day": 10, "max_percent": 30}}
cfg["gradebook"] = {"columns": {"01_serial": "Lab 01 (101)", "02_naive": "Lab 02 (102)", "03_kogge_stone": "Lab 03 (103)"}}
json.dump(cfg, open(sys.argv[2], "w"), indent=1)
PY

# ---- grading night, then one regrade ----------------------------------------------------------------
grade() {
    python3 "$ROOT/grader/grade.py" --submissions "$OUT/class" --cpu --labs 01 02 03 --config "$OUT/term.json" \
        --roster "$OUT/roster.csv" --extensions "$OUT/extensions.csv" --gradebook-format canvas \
        --work "$OUT/work" "$@"
}
echo "== grading $(ls "$OUT/class" | wc -l) submissions in CPU mode (labs 01-03) into $OUT/class-results" >&2
grade >"$OUT/table.txt"
cat "$OUT/table.txt"
echo "== regrade s07 alone (--only), on the stored class seed; the class report and similarity" >&2
grade --only s07 --report "$OUT/class.html" --similarity >"$OUT/regrade.txt"
cat "$OUT/regrade.txt"
echo "== seed.json: $(cat "$OUT/class-results/seed.json")"
echo "== gradebook.csv (Canvas):"
cat "$OUT/class-results/gradebook.csv"
echo "== late penalties:"
python3 - "$OUT/class-results" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "s*.json"))):
    r = json.load(open(path))
    late = r.get("late") or {}
    ext = [f"{lab['lab']}: {lab['late']['extension']}" for lab in r.get("labs", []) if lab.get("late", {}).get("extension")]
    if late.get("penalties") or ext or late.get("warning"):
        print(os.path.basename(path)[:-5], late.get("submitted_at"), "; ".join(late.get("penalties") or ["on time"]),
              ("(" + "; ".join(ext) + ")") if ext else "", late.get("warning", ""))
PY
