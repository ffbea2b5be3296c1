#!/usr/bin/env bash
# tools/portable_libs.sh DEST — copies Criterion and libseccomp from this machine's packages into
# DEST/crit and DEST/seccomp, for a machine that has neither and no package registry (a GPU node,
# a container): then build there with CRITERION_PREFIX=DEST/crit SECCOMP_PREFIX=DEST/seccomp
# (tests/README.md, "Criterion on a machine without the package"). DEST/crit gets Criterion's
# headers and every shared library `ldd` lists for it outside the C library and the loader;
# DEST/seccomp gets seccomp.h and the static libseccomp.a, so nothing is needed at run time.
# Exit codes: 0 done, 1 a package is missing here (the line says which), 2 bad usage.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: tools/portable_libs.sh DEST" >&2; exit 2; }
dest=$1
crit_h=/usr/include/criterion/criterion.h
# (awk reads to the end: an early exit would end ldconfig with SIGPIPE, and pipefail this script, 141)
crit_so=$(ldconfig -p 2>/dev/null | awk '/libcriterion\.so\.[0-9]+ .*x86-64/ && !f {print $NF; f = 1}')
sec_a=$(ls /usr/lib/x86_64-linux-gnu/libseccomp.a /usr/lib64/libseccomp.a /usr/lib/libseccomp.a 2>/dev/null | head -n 1 || true)
[ -f "$crit_h" ] && [ -n "$crit_so" ] ||
    { echo "portable_libs: Criterion is not installed here: apt-get install libcriterion-dev" >&2; exit 1; }
[ -f /usr/include/seccomp.h ] && [ -n "$sec_a" ] ||
    { echo "portable_libs: libseccomp is not installed here: apt-get install libseccomp-dev" >&2; exit 1; }
mkdir -p "$dest/crit/include" "$dest/crit/lib" "$dest/seccomp/include" "$dest/seccomp/lib"
cp -r /usr/include/criterion "$dest/crit/include/"
# libcriterion and what it loads, minus what every Linux machine has
ldd "$crit_so" | awk '$3 ~ /^\// {print $3}' | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$dest/crit/lib/"; done
cp -L "$crit_so" "$dest/crit/lib/"
ln -sf "$(basename "$crit_so")" "$dest/crit/lib/libcriterion.so" # what -lcriterion links
cp /usr/include/seccomp*.h "$dest/seccomp/include/"
cp "$sec_a" "$dest/seccomp/lib/"
echo "portable_libs: $(ls "$dest/crit/lib" | wc -l) files in $dest/crit/lib, libseccomp.a in $dest/seccomp/lib"
