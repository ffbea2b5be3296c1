#!/bin/sh
# placeholders.sh DESCRIPTOR.o OUT.c — the C file that stands in for a lab's code in its
# judge (common/harness/port.h): one function for every name the descriptor needs (nm -u) that a
# course header declares (common/course/*.h), so that the descriptor links without any of the
# lab's code. The judge never calls one: it asks the lab process to make each call, by variant
# number; a placeholder that is called anyway stops the judge with a message (a harness bug).
set -eu
obj=$1
out=$2
tmp=$out.$$
{
    printf '/* made by common/harness/placeholders.sh from %s: not to be edited */\n' "$obj"
    printf '#include <stdio.h>\n#include <stdlib.h>\n\n'
    printf 'static void placeholder(const char *name)\n{\n'
    printf '    fprintf(stderr, "judge: internal error: %%s is lab code, which the judge never runs\\n", name);\n'
    printf '    abort();\n}\n'
    nm -u "$obj" | awk '$1 == "U" { print $2 }' | while read -r sym; do
        if grep -qE "(^|[^A-Za-z0-9_])$sym[[:space:]]*\(" common/course/*.h; then
            printf 'void %s(void);\nvoid %s(void)\n{\n    placeholder("%s");\n}\n' "$sym" "$sym" "$sym"
        fi
    done
} >"$tmp"
mv -f "$tmp" "$out"
