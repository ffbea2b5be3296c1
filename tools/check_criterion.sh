#!/usr/bin/env bash
# tools/check_criterion.sh [PREFIX] — make test's check that its tools are there: Criterion (the C
# test framework: /usr, /usr/local or PREFIX/include); with LAB_TEST_NEEDS=pytest also pytest, for
# python3 or Debian's /usr/bin/python3; with LAB_TEST_NEEDS=all pytest-xdist too (it spreads the
# Python suites over the cores). Default: Criterion only (building a test binary). What is missing is installed with apt-get (as
# root, or with sudo when it needs no password), or one message says what to run.
# Exit 0: the tools are there.
prefix=$1
need=()
found=
for h in /usr/include /usr/local/include ${prefix:+"$prefix/include"}; do
    [ -f "$h/criterion/criterion.h" ] && found=1
done
[ -n "$found" ] || need+=(libcriterion-dev)
has() { for p in "${PYTHON:-python3}" /usr/bin/python3; do "$p" -c "import $1" 2>/dev/null && return 0; done; return 1; }
case ${LAB_TEST_NEEDS:-criterion} in
    all) has pytest || need+=(python3-pytest); has xdist || need+=(python3-pytest-xdist) ;;
    pytest) has pytest || need+=(python3-pytest) ;;
esac
[ ${#need[@]} -eq 0 ] && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    as_root=() how="apt-get"
elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n) how="sudo apt-get"
else
    echo "make test needs ${need[*]}: run 'sudo apt-get install ${need[*]}', then make test again" >&2
    exit 1
fi
echo "make test needs ${need[*]}; installing with $how" >&2
{ "${as_root[@]}" apt-get install -y "${need[@]}" >/dev/null 2>&1 ||
  { "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y "${need[@]}" >/dev/null; }; } ||
    { echo "could not install ${need[*]}: run '$how install ${need[*]}' yourself" >&2; exit 1; }
