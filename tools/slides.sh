#!/usr/bin/env bash
# tools/slides.sh OUT — make slides: every deck slides/NN_*.md (and NNx_*.md) to OUT/NAME.html
# with the Marp CLI, and to OUT/NAME.pdf too when a Chromium or Chrome is installed (CHROME_PATH
# overrides). The Marp CLI is installed on first use into slides/node_modules from
# slides/package-lock.json (npm ci). slides/marp.config.json: a line break in the Markdown source
# is not a break on the slide (as on GitHub). Exit 1 when npm is missing or a deck fails.
set -u
cd "$(dirname "$0")/.."
out=$1
marp=slides/node_modules/.bin/marp
if [ ! -x "$marp" ] || [ slides/package.json -nt "$marp" ]; then
    command -v npm >/dev/null 2>&1 || { echo "make slides: npm is missing: install Node.js 18 or newer with npm (Debian/Ubuntu: sudo apt-get install nodejs npm), then run make slides again" >&2; exit 1; }
    echo "make slides: installing the Marp CLI into slides/node_modules (once)" >&2
    (cd slides && npm ci --no-audit --no-fund --loglevel=error) || exit 1
    touch "$marp"
fi
if [ -z "${CHROME_PATH:-}" ]; then
    for b in chromium chromium-browser google-chrome google-chrome-stable; do
        CHROME_PATH=$(command -v "$b") && break
    done
fi
mkdir -p "$out/diagrams"
cp slides/diagrams/*.svg "$out/diagrams/"
for deck in $(ls slides/[0-9][0-9]_*.md slides/[0-9][0-9][a-z]_*.md 2>/dev/null | LC_ALL=C sort); do
    name=$(basename "$deck" .md)
    "$marp" --no-stdin --config slides/marp.config.json --html --allow-local-files "$deck" -o "$out/$name.html" >/dev/null 2>&1 ||
        { echo "make slides: marp failed on $deck (run $marp $deck to see why)" >&2; exit 1; }
    if [ -n "$CHROME_PATH" ]; then
        CHROME_PATH="$CHROME_PATH" CHROME_NO_SANDBOX=1 "$marp" --no-stdin --config slides/marp.config.json --pdf --allow-local-files "$deck" -o "$out/$name.pdf" >/dev/null 2>&1 ||
            { echo "make slides: PDF of $deck failed (HTML is fine); set CHROME_PATH to a working Chromium" >&2; exit 1; }
        echo "  $out/$name.html and .pdf"
    else
        echo "  $out/$name.html"
    fi
done
[ -n "$CHROME_PATH" ] || echo "make slides: no Chromium or Chrome found, so HTML only (install chromium for PDF)"
