#!/usr/bin/env bash
# tools/style.sh format|lint — make format and make lint. format rewrites every C/CUDA source of
# the course in the style of .clang-format; lint only checks that style (naming each file off it
# and its first such line) and runs pyflakes and pycodestyle (at most 120 columns) over the
# Python. CLANG_FORMAT and PYFLAKES name the tools (clang-format, pyflakes3), PYTHON the
# interpreter that runs pycodestyle (python3, else /usr/bin/python3: Debian's python3-pycodestyle
# is a module of that one, with no pycodestyle command). .clang-format is written for
# clang-format 14, the version Debian 12 ships; another version may format a few lines
# differently. Not checked: the grader's fixture submissions (students' files as submitted, whose
# messages name line numbers: their expected.json) and tests/cpu_corpus/bom_crlf.cu (its
# BOM and CRLF are its test).
# Exit 0: in style (lint) or rewritten (format); 1: lint found something; 2: a tool is missing.
set -u
cd "$(dirname "$0")/.."
what=$1
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
PYFLAKES=${PYFLAKES:-pyflakes3}
PYTHON=${PYTHON:-python3}
PY_MAX_LINE=120
shopt -s nullglob
c_files=$(printf '%s\n' common/*.c common/*.h common/*.cu common/harness/*.c common/harness/*.h common/cpu/*.cpp common/cpu/*.h \
    common/course/*.c common/course/*.h labs/*/*.cu solutions/*/*.cu \
    tests/*.c tests/*.h tests/hooks/*.cu tests/hooks/*.h tests/cpu_fixtures/*.cu tests/cpu_fixtures/*.h \
    tests/cpu_corpus/*.cu tests/cpu_corpus/*.h | grep -v '/bom_crlf\.cu$' | LC_ALL=C sort -u)
py_files=$(printf '%s\n' common/*.py common/cpu/*.py grader/*.py grader/gradelib/*.py grader/classroom/*.py \
    grader/gradelib/*/*.py grader/deploy/*.py grader/tests/*.py grader/dev/*.py tests/*.py slides/*.py tools/*.py |
    LC_ALL=C sort -u)
need() { command -v "$1" >/dev/null 2>&1 || { echo "make $what: $1 is missing: sudo apt-get install $2" >&2; exit 2; }; }
# PYCODESTYLE_PY: the interpreter that has the pycodestyle module ($PYTHON, else Debian's python3)
need_pycodestyle() {
    local py
    for py in "$PYTHON" /usr/bin/python3; do
        if "$py" -c 'import pycodestyle' >/dev/null 2>&1; then PYCODESTYLE_PY=$py; return; fi
    done
    echo "make $what: pycodestyle is missing ($PYTHON -m pycodestyle): sudo apt-get install python3-pycodestyle" >&2
    exit 2
}

case $what in
format)
    need "$CLANG_FORMAT" clang-format
    echo "$CLANG_FORMAT -i <$(echo "$c_files" | wc -l) C/CUDA files>"
    exec $CLANG_FORMAT -i $c_files ;;
lint)
    need "$CLANG_FORMAT" clang-format
    need "$PYFLAKES" pyflakes3
    need_pycodestyle
    if $CLANG_FORMAT --dry-run --Werror $c_files >/dev/null 2>&1; then
        echo "lint: $(echo "$c_files" | wc -l) C/CUDA files in the course style ($($CLANG_FORMAT --version | sed 's/.*version \([0-9.]*\).*/clang-format \1/'))"
    else
        $CLANG_FORMAT --dry-run $c_files 2>&1 | grep -oE '^[^: ]+:[0-9]+' | sort -t: -k1,1 -k2,2n -u |
            awk -F: '{c[$1]++; if (!($1 in f)) f[$1]=$2} END {for (k in c) printf "lint: %s: %d lines not in the course style (first: line %s)\n", k, c[k], f[k]}' | sort
        echo "lint: run make format to fix them (clang-format -i)"
        exit 1
    fi
    $PYFLAKES $py_files || exit 1
    echo "lint: $(echo "$py_files" | wc -l) Python files clean ($PYFLAKES)"
    style=$("$PYCODESTYLE_PY" -m pycodestyle --max-line-length=$PY_MAX_LINE $py_files 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "lint: $(echo "$py_files" | wc -l) Python files within $PY_MAX_LINE columns, pycodestyle clean" \
            "(pycodestyle $("$PYCODESTYLE_PY" -m pycodestyle --version))"
        exit 0
    fi
    # file:line:column: CODE message, one a finding; anything else is pycodestyle failing
    found=$(echo "$style" | grep -E '^[^: ]+:[0-9]+:[0-9]+: ')
    if [ -z "$found" ]; then
        echo "lint: pycodestyle failed (exit $rc): $(echo "$style" | tail -n 1)"
        exit 1
    fi
    echo "lint: $(echo "$found" | head -n 1 | sed -E 's/^([^:]+:[0-9]+):[0-9]+: /\1: /')" \
        "(the first of $(echo "$found" | wc -l) pycodestyle findings in $(echo "$found" | cut -d: -f1 | sort -u | wc -l)" \
        "Python files: $PYCODESTYLE_PY -m pycodestyle --max-line-length=$PY_MAX_LINE FILE lists them)"
    exit 1 ;;
*)
    echo "usage: tools/style.sh format|lint" >&2; exit 2 ;;
esac
