#!/usr/bin/env bash
# tools/check_criterion.sh [PREFIX] — make test's check that Criterion (the C test framework) is
# there: found (in /usr, /usr/local or PREFIX/include), installed with apt-get (as root, or with
# sudo when it needs no password), or one message saying what to run. Exit 0: Criterion is there.
prefix=$1
for h in /usr/include /usr/local/include ${prefix:+"$prefix/include"}; do
    [ -f "$h/criterion/criterion.h" ] && exit 0
done
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    as_root=() how="apt-get"
elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n) how="sudo apt-get"
else
    echo "Criterion (the C test framework) is missing: run 'sudo apt-get install libcriterion-dev', then make test again" >&2
    exit 1
fi
echo "Criterion is missing; installing libcriterion-dev with $how" >&2
{ "${as_root[@]}" apt-get install -y libcriterion-dev >/dev/null 2>&1 ||
  { "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y libcriterion-dev >/dev/null; }; } ||
    { echo "could not install Criterion: run '$how install libcriterion-dev' yourself" >&2; exit 1; }
