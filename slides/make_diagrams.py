#!/usr/bin/env python3
"""Draws the course's scan networks as SVG by running the algorithms themselves.

The algorithms are programs over an array of "lanes" (scan_networks.py): each is run on symbolic
values, checked to compute the scan it claims, and drawn as what happened: one column per
element, one row per step, each operation coloured by its step. Nothing in a picture is typed in
by hand.

Usage:  python3 slides/make_diagrams.py [--out DIR] [--list]   (make diagrams calls it)
Writes: DIR/<name>.svg for every diagram in DIAGRAMS (default DIR: slides/diagrams).
Exit codes: 0 written, 1 an algorithm did not compute a scan (a bug in this script), 2 usage.

tests/test_diagrams.py checks the networks' counts against the work formulas the handouts state
(work_tables.py), so the pictures, the counts and the text cannot drift apart.
"""
import argparse
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scan_networks import (NotAScan, blelloch, brent_kung, coarsened, fmt_range, hierarchical,  # noqa: E402
                           kogge_stone, lookback, naive, radix_pass, segment_part, segmented, serial, warp_scan)


# ---- SVG drawing -------------------------------------------------------------------------------

# Okabe-Ito colours (readable for the common kinds of colour blindness), one per step.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D00",
           "#444444", "#7B3294", "#1B7837"]
HAZARD = "#D00000"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""


def colour(i):
    return PALETTE[i % len(PALETTE)]


class Svg:
    def __init__(self, width, height):
        self.w, self.h, self.parts = width, height, []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=13, anchor="middle", fill="#222", weight="normal",
             centred=False):
        """centred: y is the middle of the glyphs (for a label inside a dot), not the baseline."""
        extra = ' dominant-baseline="central"' if centred else ""
        self.add('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s" '
                 'font-weight="%s"%s>%s</text>' % (x, y, size, anchor, fill, weight, extra,
                                                   escape(s)))

    def line(self, x1, y1, x2, y2, stroke, width=1.5, dash=None):
        extra = ' stroke-dasharray="%s"' % dash if dash else ""
        self.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"'
                 ' stroke-linecap="round"%s/>' % (x1, y1, x2, y2, stroke, width, extra))

    def circle(self, x, y, r, fill, stroke="none"):
        self.add('<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" stroke="%s" stroke-width="1.5"/>'
                 % (x, y, r, fill, stroke))

    def rect(self, x, y, w, h, fill, stroke="none", rx=3):
        self.add('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="%d" fill="%s" '
                 'stroke="%s" stroke-width="1.2"/>' % (x, y, w, h, rx, fill, stroke))

    def render(self):
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d"'
                ' %s>\n<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n'
                % (self.w, self.h, self.w, self.h, FONT, "\n".join(self.parts)))


def draw_network(net):
    """One column per lane, one row per step; an operation is a coloured line from the lane it
    reads (at the step's top) to the lane it writes (at the step's bottom), ending in a dot."""
    extra = net.lanes - net.n
    gap = 30 if extra else 0                  # space between the data and the extra lanes
    dx = 58 if net.lanes <= 8 else (46 if net.lanes <= 16 else 40)
    dy = 34 if len(net.steps) > 10 else 54
    left, right = 150, 120
    top = 92 + (22 if net.groups else 0)
    width = left + dx * (net.lanes - 1) + gap + right
    height = top + dy * len(net.steps) + 120

    def lx(i):
        return left + dx * i + (gap if i >= net.n else 0)

    svg = Svg(width, height)
    svg.text(16, 28, net.title, size=18, anchor="start", weight="bold")
    summary = "n = %d: %d additions in %d steps" % (net.n, net.additions, net.depth)
    if net.hazards:
        summary += ", %d reads that race with a write" % net.hazards
    svg.text(16, 52, summary + " (%s result)" % net.scan, size=14, anchor="start", fill="#333")
    if net.note:
        svg.text(16, height - 14, net.note, size=12, anchor="start", fill="#555")
    for a, b, label in net.groups:
        y = top - 44
        svg.line(lx(a) - 12, y, lx(b) + 12, y, "#888", 1.2)
        svg.line(lx(a) - 12, y, lx(a) - 12, y + 6, "#888", 1.2)
        svg.line(lx(b) + 12, y, lx(b) + 12, y + 6, "#888", 1.2)
        svg.text((lx(a) + lx(b)) / 2, y - 5, label, size=12, fill="#555")
    y_end = top + dy * len(net.steps)
    for i in range(net.lanes):
        label = net.lane_labels[i]
        svg.text(lx(i), top - 16, label, size=13 if len(label) <= 4 else 11, weight="bold")
        svg.line(lx(i), top - 8, lx(i), y_end + 8, "#D8D8D8", 2)
    # a band on the left names each phase once
    phase_prev = None
    for s, step in enumerate(net.steps):
        y0, y1 = top + dy * s, top + dy * (s + 1)
        c = colour(s)
        if step.phase and step.phase != phase_prev:
            svg.line(12, y0 + 2, 12, y0 + 2, "#000", 0)
            svg.text(16, y0 + 12, step.phase, size=11, anchor="start", fill="#666")
            if s:
                svg.line(16, y0, width - 16, y0, "#BBBBBB", 1, dash="4 4")
        phase_prev = step.phase
        svg.text(left - 34, (y0 + y1) / 2 + 9, step.label, size=12, anchor="end", fill=c)
        n_add = step.additions
        if n_add:
            svg.text(width - right + 36, (y0 + y1) / 2 + 9, "+%d" % n_add, size=12,
                     anchor="start", fill=c)
        for op in step.ops:
            x1 = lx(op.dst)
            if op.kind in ("add", "copy", "addsub"):
                for k, src in enumerate(op.src):
                    minus = op.kind == "addsub" and k == len(op.src) - 1
                    if src == op.dst:
                        svg.line(x1, y0, x1, y1 - 7, c, 2.2)
                    else:
                        hz = op.hazard
                        svg.line(lx(src), y0, x1, y1 - 7, HAZARD if hz else c, 2.2 if hz else 1.8,
                                 dash="5 3" if hz else ("2 3" if minus else None))
                if op.kind in ("add", "addsub"):
                    svg.circle(x1, y1, 8, c)
                    svg.text(x1, y1, "+" if op.kind == "add" else "\u00b1", size=14, fill="white",
                             weight="bold", centred=True)
                else:
                    svg.rect(x1 - 6, y1 - 6, 12, 12, "white", c)
            elif op.kind == "zero":
                svg.rect(x1 - 8, y1 - 8, 16, 16, "white", c)
                svg.text(x1, y1, "0", size=12, fill=c, weight="bold", centred=True)
            elif op.kind == "load_add":
                svg.line(x1, y0 + 6, x1, y1 - 10, c, 1.5)
                svg.circle(x1, y1, 10, c)
                svg.text(x1, y1, "x%d" % op.k, size=10, fill="white", weight="bold", centred=True)
    # what each lane holds at the end
    final = net.history[-1]
    for i in range(net.lanes):
        y = y_end + 30 + (14 if i % 2 else 0) * (net.lanes > 8)
        svg.text(lx(i), y, fmt_range(segment_part(net, final[i])), size=11, fill="#222")
    svg.text(left - 34, y_end + 30, "result", size=12, anchor="end", fill="#222")
    kinds = set(op.kind for step in net.steps for op in step.ops)
    if kinds & {"copy", "zero"}:
        x = left
        y = height - 40
        svg.circle(x, y - 4, 8, "#555")
        svg.text(x, y - 4, "+", size=14, fill="white", weight="bold", centred=True)
        svg.text(x + 14, y, "addition (lines: the values it reads)", size=12, anchor="start",
                 fill="#444")
        x += 270
        svg.rect(x - 6, y - 10, 12, 12, "white", "#555")
        svg.text(x + 14, y, "copy", size=12, anchor="start", fill="#444")
        if "zero" in kinds:
            x += 70
            svg.rect(x - 8, y - 12, 16, 16, "white", "#555")
            svg.text(x, y - 4, "0", size=12, fill="#555", weight="bold", centred=True)
            svg.text(x + 14, y, "set to 0 (the identity)", size=12, anchor="start", fill="#444")
        if "addsub" in kinds:
            x += 70
            svg.circle(x, y - 4, 8, "#555")
            svg.text(x, y - 4, "\u00b1", size=14, fill="white", weight="bold", centred=True)
            svg.text(x + 14, y, "add, then subtract the dotted line's value (one line of code)",
                     size=12, anchor="start", fill="#444")
    if net.hazards:
        svg.line(16, height - 40, 46, height - 40, HAZARD, 2.2, dash="5 3")
        svg.text(54, height - 36, "thread i reads x[i-d] in the step in which thread i-d "
                 "overwrites it", size=12, anchor="start", fill=HAZARD)
    return svg.render()


STATE_FILL = {"X": "#EEEEEE", "A": "#F6C86B", "P": "#6BBF8E"}


def draw_lookback(tiles=8):
    """A grid: one row per tick, one column per tile, each cell the tile's published state; an
    arrow shows which predecessor a tile inspected during that tick."""
    ticks, events = lookback(tiles)
    dx, dy, left, top = 96, 50, 80, 100
    width = max(left + dx * tiles + 40, 900)
    height = top + dy * len(ticks) + 90
    svg = Svg(width, height)
    svg.text(16, 28, "Decoupled look-back: what each tile has published, tick by tick", size=18,
             anchor="start", weight="bold")
    looks = sum(1 for ev in events for e in ev if e[1] is not None)
    svg.text(16, 52, "%d tiles, %d ticks, %d look-back reads; X = nothing yet, A = own aggregate, "
             "P = inclusive prefix" % (tiles, len(ticks), looks), size=14, anchor="start",
             fill="#333")
    for t in range(tiles):
        svg.text(left + dx * t + dx / 2, top - 14, "tile %d" % t, size=13, weight="bold")
    for k, row in enumerate(ticks):
        y = top + dy * k
        svg.text(left - 14, y + dy / 2 + 4, "tick %d" % k, size=12, anchor="end", fill="#333")
        did = {t: (j, what) for t, j, what in events[k]}
        for t, st in enumerate(row):
            svg.rect(left + dx * t + 4, y + 4, dx - 8, dy - 8, STATE_FILL[st], "#999")
            svg.text(left + dx * t + dx / 2, y + dy / 2 - 2, st, size=15, weight="bold")
            if t in did:
                j, what = did[t]
                # what the tile did during this tick, under its state
                msg = what if j is None else "read %d: %s" % (j, what)
                svg.text(left + dx * t + dx / 2, y + dy - 11, msg, size=10,
                         fill=HAZARD if what == "X" else "#222")
    y = top + dy * len(ticks) + 30
    svg.text(16, y, "Under each state: what the tile did during that tick. It reads one "
             "predecessor per tick: A = add it and read the next one to the left,", size=12,
             anchor="start", fill="#444")
    svg.text(16, y + 18, "P = add it and stop (the tile then publishes its own P), X = not "
             "ready yet, read the same tile again next tick.", size=12, anchor="start",
             fill="#444")
    return svg.render()


def draw_radix_pass():
    """Lab 10: the keys of two tiles coloured by digit, the digit-major histogram, its scan and
    the starts, and the keys where the pass writes them."""
    keys = (9, 6, 3, 8, 1, 13, 7, 4, 11, 2, 5, 12, 1, 10, 15, 0)
    tile, bits = 8, 2
    hist, scan, start, dest = radix_pass(keys, tile, bits)
    tiles, n, radix = len(keys) // tile, len(keys), 1 << bits
    cw, left, top = 50, 150, 70
    svg = Svg(left + cw * n + 30, top + 6 * 62 + 40)
    svg.text(16, 28, "One radix pass (2-bit digits, 2 tiles of 8): counts digit-major, one scan, "
             "stable scatter", size=17, anchor="start", weight="bold")

    def row(y, label, cells, fills, sub=None):
        svg.text(left - 12, y + 26, label, size=13, anchor="end", weight="bold")
        for i, (txt, fill) in enumerate(zip(cells, fills)):
            svg.rect(left + cw * i + 2, y + 4, cw - 4, 36, fill, "#999")
            svg.text(left + cw * i + cw / 2, y + 27, txt, size=14)
            if sub:
                svg.text(left + cw * i + cw / 2, y + 54, sub[i], size=10, fill="#555")

    digit_fill = [colour(k & (radix - 1)) + "55" for k in keys]
    row(top, "keys", [str(k) for k in keys], digit_fill,
        ["t%d d%d" % (i // tile, k & (radix - 1)) for i, k in enumerate(keys)])
    hist_fill = [colour(h // tiles) + "55" for h in range(len(hist))]
    labels = ["d%d t%d" % (h // tiles, h % tiles) for h in range(len(hist))]
    row(top + 62, "hist", [str(c) for c in hist], hist_fill, labels)
    row(top + 124, "apps_scan", [str(c) for c in scan], hist_fill, ["inclusive"] * len(hist))
    row(top + 186, "start", [str(c) for c in start], hist_fill, ["scan - hist"] * len(hist))
    row(top + 248, "destination", [str(j) for j in dest], digit_fill,
        ["start + rank"] * n)
    out = [None] * n
    for i, j in enumerate(dest):
        out[j] = keys[i]
    row(top + 310, "out", [str(k) for k in out], [colour(k & (radix - 1)) + "55" for k in out],
        ["d%d" % (k & (radix - 1)) for k in out])
    svg.text(16, top + 6 * 62 + 20, "Each (digit, tile) starts after every smaller digit of every "
             "tile and its own digit in earlier tiles; keys of one digit keep their order.",
             size=12, anchor="start", fill="#444")
    return svg.render()


# ---- the diagram list (file names fixed by the course's shared agreements) ---------------------

def networks():
    """name -> Network for every lane diagram."""
    nets = {
        "serial_n8": serial(8),
        "naive_n8": naive(8),
        "kogge_stone_n8": kogge_stone(8),
        "kogge_stone_n16": kogge_stone(16),
        "kogge_stone_hazard_n8": kogge_stone(8, hazard_demo=True),
        "brent_kung_n8": brent_kung(8),
        "brent_kung_n16": brent_kung(16),
        "blelloch_n8": blelloch(8),
        "blelloch_n16": blelloch(16),
        "coarsened_n16": coarsened(16, threads=4),
        "hierarchical_n16": hierarchical(16, tile=4),
        "warp_scan_n8": warp_scan(8),
        "segmented_n8": segmented(8),
    }
    return nets


DIAGRAMS = ["serial_n8", "naive_n8", "kogge_stone_n8", "kogge_stone_n16", "kogge_stone_hazard_n8",
            "brent_kung_n8", "brent_kung_n16", "blelloch_n8", "blelloch_n16", "coarsened_n16",
            "hierarchical_n16", "warp_scan_n8", "segmented_n8", "lookback_states", "radix_pass_n16"]


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Writes the course's scan diagrams as SVG.")
    ap.add_argument("--out", default=os.path.join(here, "diagrams"), help="output folder")
    ap.add_argument("--list", action="store_true", help="print name, additions, steps and stop")
    args = ap.parse_args(argv)
    try:
        nets = networks()
        lookback_svg = draw_lookback()
        radix_svg = draw_radix_pass()
    except NotAScan as e:
        print("make_diagrams: an algorithm did not compute a scan: %s" % e, file=sys.stderr)
        return 1
    if args.list:
        for name, net in nets.items():
            print("%-24s n=%-3d additions=%-4d steps=%d" % (name, net.n, net.additions, net.depth))
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, net in nets.items():
        with open(os.path.join(args.out, name + ".svg"), "w", encoding="utf-8") as f:
            f.write(draw_network(net))
    with open(os.path.join(args.out, "lookback_states.svg"), "w", encoding="utf-8") as f:
        f.write(lookback_svg)
    with open(os.path.join(args.out, "radix_pass_n16.svg"), "w", encoding="utf-8") as f:
        f.write(radix_svg)
    print("make_diagrams: wrote %d diagrams to %s" % (len(nets) + 2, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
