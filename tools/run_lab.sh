#!/bin/sh
# make run's last step: run a lab binary; when it fails, end with one plain line that says how
# ("lab 03: not implemented yet (exit 3)") rather than make's "*** Error" lines.
#   tools/run_lab.sh LAB BINARY [ARGS...]
# The exit codes' meanings come from the Makefile (LAB_EXIT_<code>, common/contract.mk) in the
# environment. make run exits 0 after that line (make would add its own error lines otherwise);
# RUN_STATUS=1 (make run STATUS=1) passes the binary's exit code on, for scripts. RUN_PART (make run
# PART=x) runs the lab's first variant whose name has x.
lab=$1
bin=$2
shift 2
# RUN_PART (make run PART=compact): the lab's first variant whose name has it
if [ -n "${RUN_PART:-}" ]; then
    variant=$("$bin" --list 2>/dev/null | awk -v p="$RUN_PART" 'f && index($2, p) { print $2; exit } /^variants:/ { f = 1 }')
    if [ -z "$variant" ]; then
        echo "make run: PART=$RUN_PART is in none of lab $lab's variants' names (make run LAB=$lab ARGS=--list)" >&2
        [ "${RUN_STATUS:-0}" = 1 ] && exit 2
        exit 0
    fi
    set -- --variant "$variant" "$@"
fi
"$bin" "$@"
rc=$?
[ "$rc" -eq 0 ] && exit 0
if [ "$rc" -gt 128 ]; then
    why="stopped by signal $((rc - 128))"
else
    eval "why=\${LAB_EXIT_$rc:-}"
    [ -n "$why" ] || why="ended with an unexpected code"
fi
echo "lab $lab: $why (exit $rc)" >&2
[ "${RUN_STATUS:-0}" = 1 ] && exit "$rc"
exit 0
