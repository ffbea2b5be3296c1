#!/usr/bin/env python3
"""Draws the course's scan networks as SVG by running the algorithms themselves.

Every algorithm below is written as a program over an array of "lanes" (array elements): a list
of steps, each step a list of operations that all read the array as it was before the step (what
a barrier guarantees on the GPU). The script runs each program on symbolic values (the input
range each lane holds, e.g. x2..x5), checks that the result is the scan it claims to be, counts
the additions and steps, and draws what happened: one column per element, one row per step,
each operation coloured by its step. Nothing in a picture is typed in by hand.

Usage:  python3 slides/make_diagrams.py [--out DIR] [--list]   (make diagrams calls it)
Writes: DIR/<name>.svg for every diagram in DIAGRAMS (default DIR: slides/diagrams).
Exit codes: 0 written, 1 an algorithm did not compute a scan (a bug in this script), 2 usage.

tests/test_diagrams.py imports this file and checks its counts against the work formulas the
handouts state, so the pictures, the counts and the text cannot drift apart.
"""
import argparse
import os
import re
import sys
from xml.sax.saxutils import escape

# ---- symbolic values ---------------------------------------------------------------------------
# A lane holds the sum of a contiguous input range (lo, hi), both inclusive, or ZERO (the
# identity). Adding two ranges that do not touch is an error: a correct scan network never does.
ZERO = None


class NotAScan(Exception):
    """An algorithm combined ranges that do not touch, or ended with the wrong prefixes."""


def add(a, b):
    """a + b where a covers the input just before b (or either is the identity)."""
    if a is ZERO:
        return b
    if b is ZERO:
        return a
    if a[1] + 1 != b[0]:
        raise NotAScan("adds x%d..x%d to x%d..x%d: the ranges do not touch" % (a + b))
    return (a[0], b[1])


def sub(a, b):
    """a - b where b is the last part of the range a: what is left is the part before b (or the
    identity). Subtracting anything else is an error."""
    if b is ZERO:
        return a
    if a is ZERO or a[1] != b[1] or b[0] < a[0]:
        raise NotAScan("subtracts %s from %s: not its last part" % (fmt_range(b), fmt_range(a)))
    return ZERO if a[0] == b[0] else (a[0], b[0] - 1)


def fmt_range(v):
    """x3, x0..x5, or 0 for the identity."""
    if v is ZERO:
        return "0"
    return "x%d" % v[0] if v[0] == v[1] else "x%d..%d" % v


# ---- operations and networks -------------------------------------------------------------------

class Op:
    """One operation of one step: lanes[dst] = lanes[src[0]] + lanes[src[1]] ('add'),
    lanes[dst] = lanes[src[0]] ('copy'), lanes[dst] = 0 ('zero'), for the naive scan
    acc[dst] += input[k] ('load_add': src = [dst], k = the input index), or one line of code that
    adds its first sources and subtracts the last one, lanes[dst] = lanes[src[0]] + ... -
    lanes[src[-1]] ('addsub': len(src) - 1 additions, the subtraction counted as one)."""

    def __init__(self, kind, dst, src=(), k=None, hazard=False):
        self.kind, self.dst, self.src, self.k, self.hazard = kind, dst, list(src), k, hazard


class Step:
    """Operations that run together; all read the lanes as they were before the step."""

    def __init__(self, ops, label="", phase=""):
        self.ops, self.label, self.phase = ops, label, phase

    @property
    def additions(self):
        return sum(op_additions(op) for op in self.ops)


def op_additions(op):
    """Additions an operation counts: 1 for add and load_add, len(src) - 1 for addsub."""
    if op.kind in ("add", "load_add"):
        return 1
    return len(op.src) - 1 if op.kind == "addsub" else 0


class Network:
    """An algorithm's whole program on n elements plus what running it produced."""

    def __init__(self, name, title, n, steps, scan="inclusive", lanes=None, lane_labels=None,
                 groups=(), note="", init=None, heads=()):
        self.name, self.title, self.n, self.steps = name, title, n, steps
        self.scan = scan                      # "inclusive" or "exclusive"
        self.lanes = lanes if lanes is not None else n   # data lanes plus any extra lanes
        self.lane_labels = lane_labels or ["x%d" % i for i in range(self.lanes)]
        self.groups = list(groups)            # (first lane, last lane, label) brackets on top
        self.note = note
        self.init = init                      # lane values before step 0 (default: x_i in lane i)
        self.heads = frozenset(heads)         # segmented scan: the lanes that start a segment
        self.history = run(self)              # lane values before step 0 and after each step

    @property
    def additions(self):
        """Additions that combine two values (adding to a zero start value is not counted)."""
        return sum(s.additions for s in self.steps)

    @property
    def depth(self):
        """Steps that contain at least one addition: the length of the longest chain."""
        return sum(1 for s in self.steps if s.additions)

    @property
    def hazards(self):
        return sum(1 for s in self.steps for op in s.ops if op.hazard)


def run(net):
    """Runs net's steps on symbolic inputs (lane i starts as x_i unless net.init says otherwise);
    returns the lane values before and after each step.
    Raises NotAScan if an addition joins ranges that do not touch or the end result is not the
    network's scan of its n data lanes."""
    lanes = list(net.init) if net.init else [(i, i) if i < net.n else ZERO
                                             for i in range(net.lanes)]
    history = [list(lanes)]
    for step in net.steps:
        new = list(lanes)
        written = set()
        for op in step.ops:
            if op.dst in written:
                raise NotAScan("two operations write lane %d in one step" % op.dst)
            written.add(op.dst)
            if op.kind == "add":
                new[op.dst] = add(lanes[op.src[0]], lanes[op.src[1]])
            elif op.kind == "copy":
                new[op.dst] = lanes[op.src[0]]
            elif op.kind == "zero":
                new[op.dst] = ZERO
            elif op.kind == "load_add":
                new[op.dst] = add(lanes[op.dst], (op.k, op.k))
            elif op.kind == "addsub":
                v = lanes[op.src[0]]
                for src in op.src[1:-1]:
                    v = add(v, lanes[src])
                new[op.dst] = sub(v, lanes[op.src[-1]])
            else:
                raise ValueError(op.kind)
        lanes = new
        history.append(list(lanes))
    want = [(0, i) if net.scan == "inclusive" else ((0, i - 1) if i else ZERO)
            for i in range(net.n)]
    if lanes[:net.n] != want:
        bad = next(i for i in range(net.n) if lanes[i] != want[i])
        raise NotAScan("%s: lane %d ends as %s, not %s" % (net.name, bad, fmt_range(lanes[bad]),
                                                           fmt_range(want[bad])))
    return history


def segment_part(net, v):
    """What a lane's value means under the (flag, value) operator: the part of its range x_a..x_b
    from the last segment head at or before b (the whole range when there is no head in it)."""
    if v is ZERO or not net.heads:
        return v
    last = max((h for h in net.heads if v[0] <= h <= v[1]), default=v[0])
    return (last, v[1])


def segmented(n=8, heads=(3, 4, 6)):
    """Lab 09: a segmented scan is a plain scan under the operator on (flag, value) pairs,
    (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 : v1 + v2): here the Kogge-Stone network of lab 03.
    Every lane still combines the whole range x0..xi (run() checks that); the operator keeps only
    the part after the last head, which is what the result row shows."""
    net = kogge_stone(n)
    labels = ["x%d%s" % (i, " |" if i in heads else "") for i in range(n)]
    return Network("segmented", "Segmented scan: the same network, the (flag, value) operator", n,
                   net.steps, lane_labels=labels, heads=heads,
                   note="| marks a segment head: each result restarts at the last head at or "
                   "before it (x3, x4 and x6 start segments)")


def log2_exact(n):
    k = n.bit_length() - 1
    if n <= 0 or 1 << k != n:
        raise ValueError("n must be a power of two (is %d)" % n)
    return k


# ---- the algorithms ----------------------------------------------------------------------------

def serial(n):
    """Lab 01: one running total; step i adds x[i] to the total of x[0..i-1]."""
    steps = [Step([Op("add", i, [i - 1, i])], "i = %d" % i) for i in range(1, n)]
    return Network("serial", "Serial scan: one running total", n, steps,
                   note="each addition needs the one before it")


def naive(n):
    """Lab 02: thread i sums x[0], x[1], ..., x[i] by itself, as the lab's loop does: it starts
    from x[0] (added to a zero total: not counted) and in step k every thread i >= k loads x[k]
    and adds it. No thread shares anything, so the work is n(n-1)/2."""
    steps = []
    for k in range(1, n):
        ops = [Op("load_add", i, [i], k=k) for i in range(k, n)]
        steps.append(Step(ops, "j = %d" % k))
    return Network("naive", "Naive scan: thread i adds up x0..xi alone", n, steps,
                   init=[(0, 0)] * n, lane_labels=["thread %d" % i for i in range(n)],
                   note="every thread starts from x0; a dot in column i: thread i loads the input "
                   "named in it and adds it")


def kogge_stone(n, hazard_demo=False):
    """Lab 03: in step d = 1, 2, 4, ... every i >= d sets x[i] = x[i-d] + x[i]. With double
    buffering every read sees the previous step; in place, thread i reads x[i-d] while thread
    i-d may be writing it (a hazard whenever i - d >= d)."""
    steps = []
    d = 1
    while d < n:
        ops = [Op("add", i, [i - d, i], hazard=hazard_demo and i - d >= d) for i in range(d, n)]
        steps.append(Step(ops, "d = %d" % d))
        d *= 2
    if hazard_demo:
        return Network("kogge_stone_hazard", "Kogge-Stone in place: reads that race with writes",
                       n, steps, note="without a second buffer, what a red read sees depends on "
                       "which thread runs first")
    return Network("kogge_stone", "Kogge-Stone scan (double-buffered)", n, steps)


def warp_scan(lanes=8):
    """The interlude on warp primitives (labs/WARPS.md): the lanes of one warp scan the values in
    their registers with __shfl_up_sync, the Kogge-Stone network with no shared memory and no
    barrier: at offset d every lane reads the register of lane - d, and lanes below d keep their
    own value (the shuffle returns it to them, and they add nothing)."""
    steps = []
    d = 1
    while d < lanes:
        steps.append(Step([Op("add", i, [i - d, i]) for i in range(d, lanes)],
                          "shfl_up %d" % d))
        d *= 2
    return Network("warp_scan", "Warp scan with shuffles: register to register, no barrier",
                   lanes, steps, note="lane i starts with xi in a register; step 'shfl_up d' is "
                   "__shfl_up_sync(FULL_MASK, v, d); lanes below d get their own value back")


def up_sweep(n):
    """The reduction tree shared by Brent-Kung and Blelloch: with stride d = 1, 2, ..., n/2 the
    element at every (k+1)*2d - 1 adds the one d to its left."""
    steps = []
    d = 1
    while d < n:
        ops = [Op("add", i, [i - d, i]) for i in range(2 * d - 1, n, 2 * d)]
        steps.append(Step(ops, "d = %d" % d, "reduction"))
        d *= 2
    return steps


def brent_kung(n):
    """Lab 04: the reduction tree, then the reverse tree: with d = n/4, ..., 1 every element at
    (k+1)*2d - 1 passes its prefix to the element d to its right."""
    steps = up_sweep(n)
    d = n // 4
    while d >= 1:
        ops = [Op("add", i + d, [i, i + d]) for i in range(2 * d - 1, n - d, 2 * d)]
        steps.append(Step(ops, "d = %d" % d, "reverse tree"))
        d //= 2
    return Network("brent_kung", "Brent-Kung scan: reduction tree, then reverse tree", n, steps)


def blelloch(n):
    """Lab 05: the reduction tree, the last element set to 0, then the down-sweep: with
    d = n/2, ..., 1, at every i = (k+1)*2d - 1 the pair (left = x[i-d], right = x[i]) becomes
    (right, left + right). The result is the exclusive scan."""
    steps = up_sweep(n)
    steps.append(Step([Op("zero", n - 1)], "clear", "down-sweep"))
    d = n // 2
    while d >= 1:
        ops = []
        for i in range(2 * d - 1, n, 2 * d):
            ops.append(Op("copy", i - d, [i]))
            ops.append(Op("add", i, [i, i - d]))   # prefix before the pair + left half
        steps.append(Step(ops, "d = %d" % d, "down-sweep"))
        d //= 2
    return Network("blelloch", "Blelloch scan: up-sweep, clear, down-sweep (exclusive)", n, steps,
                   scan="exclusive")


def small_warp(threads):
    """The warp width for drawing `threads` threads as the reference does: the smallest power of
    two w with w * w >= threads, so that one warp can scan the threads / w warp totals (on the
    GPU: 32, and at most 32 * 32 = 1024 threads)."""
    w = 1
    while w * w < threads:
        w *= 2
    return w


def coarsened(n, threads=4, warp=None):
    """Lab 06, as solutions/06_coarsened/scan.cu does it, with `threads` threads (B) of
    c = n/threads consecutive elements each (C) and warps of `warp` threads (W; 32 on the GPU,
    default small_warp(threads) so that a small picture still has several warps).
    Phase 1: each thread scans its run serially in registers v[] (c - 1 steps; the first element
    is added to a total of 0, which is not counted). Phase 2, block_exclusive_scan: the run total
    is copied into the thread's register lane, a Kogge-Stone over each warp's lanes (the shuffles),
    each warp's last lane copies its total into s_warp, warp 0 scans s_warp (a Kogge-Stone over
    threads/warp values), and every thread computes before = s_warp[warp - 1] + inc - x in one
    line (warp 0 has no s_warp term: the code adds a literal 0). Phase 3: every thread adds before
    to each of its c values: threads * c additions (thread 0's before is 0, but it is a computed
    value and the addition runs like any other, so it is counted)."""
    c = n // threads
    if c * threads != n:
        raise ValueError("n must be a multiple of the thread count")
    warp = warp or small_warp(threads)
    warps = threads // warp
    if warps * warp != threads or warps > warp or warp & (warp - 1):
        raise ValueError("threads must be a multiple of the warp, at most warp^2 of them")
    reg, sw = n, n + threads                 # lanes: thread t's register, warp w's s_warp word
    p1, p2, p3 = "1: scan own run", "2: scan run totals", "3: add before"
    steps = []
    for j in range(1, c):
        ops = [Op("add", t * c + j, [t * c + j - 1, t * c + j]) for t in range(threads)]
        steps.append(Step(ops, "j = %d" % j, p1))
    steps.append(Step([Op("copy", reg + t, [t * c + c - 1]) for t in range(threads)],
                      "inc = x", p2))
    d = 1
    while d < warp:
        ops = [Op("add", reg + t, [reg + t - d, reg + t]) for t in range(threads) if t % warp >= d]
        steps.append(Step(ops, "d = %d (shuffle)" % d, p2))
        d *= 2
    steps.append(Step([Op("copy", sw + w, [reg + w * warp + warp - 1]) for w in range(warps)],
                      "s_warp", p2))
    d = 1
    while d < warps:
        ops = [Op("add", sw + i, [sw + i - d, sw + i]) for i in range(d, warps)]
        steps.append(Step(ops, "d = %d (warp 0)" % d, p2))
        d *= 2
    ops = []
    for t in range(threads):
        w = t // warp
        ops.append(Op("addsub", reg + t, ([sw + w - 1] if w else []) + [reg + t, t * c + c - 1]))
    steps.append(Step(ops, "before", p2))
    steps.append(Step([Op("add", t * c + k, [reg + t, t * c + k]) for t in range(threads)
                       for k in range(c)], "+ before", p3))
    labels = (["x%d" % i for i in range(n)] + ["t%d" % t for t in range(threads)]
              + ["w%d" % w for w in range(warps)])
    groups = [(t * c, t * c + c - 1, "thread %d" % t) for t in range(threads)]
    groups.append((reg, reg + threads - 1, "registers"))
    groups.append((sw, sw + warps - 1, "s_warp"))
    return Network("coarsened", "Coarsened three-phase scan: %d threads x %d elements, warps of %d"
                   % (threads, c, warp), n, steps, lanes=n + threads + warps, lane_labels=labels,
                   groups=groups,
                   note="t0..t%d: each thread's register (run total x, then inc, then before); "
                   "w0..w%d: s_warp. The GPU's warps have 32 threads." % (threads - 1, warps - 1))


def hierarchical(n, tile=4):
    """Lab 07: kernel 1 scans each tile (Kogge-Stone inside the tile) and copies each tile's
    total into a small array S; kernel 2 scans S; kernel 3 adds S[t-1] to every element of
    tile t. S sits in extra lanes n .. n + tiles - 1."""
    tiles = n // tile
    if tiles * tile != n:
        raise ValueError("n must be a multiple of the tile")
    steps = []
    d = 1
    while d < tile:
        ops = [Op("add", t * tile + i, [t * tile + i - d, t * tile + i])
               for t in range(tiles) for i in range(d, tile)]
        steps.append(Step(ops, "d = %d" % d, "kernel 1: scan tiles"))
        d *= 2
    steps.append(Step([Op("copy", n + t, [t * tile + tile - 1]) for t in range(tiles)],
                      "S[t] = total", "kernel 1: scan tiles"))
    d = 1
    while d < tiles:
        ops = [Op("add", n + t, [n + t - d, n + t]) for t in range(d, tiles)]
        steps.append(Step(ops, "d = %d" % d, "kernel 2: scan S"))
        d *= 2
    ops = [Op("add", t * tile + i, [n + t - 1, t * tile + i]) for t in range(1, tiles)
           for i in range(tile)]
    steps.append(Step(ops, "+ S[t-1]", "kernel 3: add carries"))
    labels = ["x%d" % i for i in range(n)] + ["S%d" % t for t in range(tiles)]
    groups = [(t * tile, t * tile + tile - 1, "tile %d" % t) for t in range(tiles)]
    groups.append((n, n + tiles - 1, "tile sums S"))
    return Network("hierarchical", "Hierarchical scan: tiles, tile sums, carries", n, steps,
                   lanes=n + tiles, lane_labels=labels, groups=groups)


# ---- decoupled look-back: a small simulation of tile states ------------------------------------
# States a tile publishes: X (nothing yet), A (its aggregate: the sum of its own elements), P (its
# inclusive prefix: the sum of everything up to and including it).

def lookback(tiles=8, start=(0, 0, 2, 0, 1, 3, 1, 4)):
    """Simulates single-pass scan with decoupled look-back, one tick at a time. Tile t starts at
    tick start[t]; on its first tick it reduces its elements and publishes A (tile 0 publishes
    P directly); then it looks back one predecessor per tick: a P ends the look-back (publish
    own P), an A is added and the look-back moves one tile further left, an X means wait and
    look at the same tile again next tick. Returns (ticks, events): ticks[k][t] is tile t's
    state after tick k; events[k] lists (tile, looked_at, what it saw)."""
    state = ["X"] * tiles
    phase = ["idle"] * tiles        # idle -> looking -> done
    look = [t - 1 for t in range(tiles)]
    carry = [ZERO] * tiles          # what the look-back has gathered so far (symbolic)
    published = [ZERO] * tiles      # the value behind A or P
    ticks, events = [], []
    tick = 0
    while "X" in state or "A" in state:
        snapshot = list(state)      # all tiles read the flags as they were at the tick's start
        values = list(published)
        ev = []
        for t in range(tiles):
            if tick < start[t] or phase[t] == "done":
                continue
            if phase[t] == "idle":
                published[t] = (t, t)
                state[t] = "P" if t == 0 else "A"
                phase[t] = "done" if t == 0 else "looking"
                ev.append((t, None, "publish " + state[t]))
                continue
            j = look[t]
            seen = snapshot[j]
            ev.append((t, j, seen))
            if seen == "X":
                continue
            carry[t] = add(values[j] if seen == "P" else (j, j), carry[t])
            if seen == "P":
                published[t] = add(carry[t], (t, t))
                state[t] = "P"
                phase[t] = "done"
            else:
                look[t] = j - 1
        ticks.append(list(state))
        events.append(ev)
        tick += 1
        if tick > 10 * tiles:
            raise NotAScan("look-back did not finish")
    for t in range(tiles):
        if published[t] != (0, t):
            raise NotAScan("tile %d published %s" % (t, fmt_range(published[t])))
    return ticks, events


# ---- the work tables in the handouts ------------------------------------------------------------
# A handout's "Work and steps" section holds a Markdown table whose rows named "additions" (or
# "additions, total", or parts "additions, phase 1", ...) and "steps" (or "levels") give a formula
# in one size variable (n, or e.g. T for a tile) and the
# values for concrete sizes under headers such as "n = 8" or "n = 2^16":
#     | quantity | formula | n = 8 | n = 16 |
#     | additions | n·log2 n − (n − 1) | 17 | 49 |
# tests/test_diagrams.py compares those formulas with the counts of the networks above, and
# tests/test_handouts.py checks every number in such a row against its formula.

WORK_ROWS = ("additions", "steps")   # also "additions, phase 1" etc.: the phases add up


class FormulaError(ValueError):
    pass


def _tokens(text):
    """Splits a formula written for people (n·log2 n − (n − 1), n(n+1)/2, 2^16) into tokens."""
    t = text.strip().strip("`$").replace("**", "")
    for a, b in (("\u2212", "-"), ("\u2013", "-"), ("\u00b7", "*"), ("\u22c5", "*"),
                 ("\u00d7", "*"), ("\u00b2", "^2"), ("\u00b3", "^3"), ("\\cdot", "*"),
                 ("\\times", "*"), ("\\log_2", "log2"), ("log_2", "log2"), ("log\u2082", "log2"),
                 ("lg", "log2"), ("{", "("), ("}", ")"), ("`", ""), ("$", ""), (",", ""),
                 ("\u2009", ""), ("\u202f", ""), ("_", "")):
        t = t.replace(a, b)
    out, i = [], 0
    while i < len(t):
        c = t[i]
        if c.isspace():
            i += 1
        elif t.startswith("log2", i):
            out.append(("log2", None))
            i += 4
        elif c.isdigit():
            j = i
            while j < len(t) and (t[j].isdigit() or t[j] == "."):
                j += 1
            out.append(("num", t[i:j]))
            i = j
        elif c.isalpha():
            j = i
            while j < len(t) and t[j].isalpha():
                j += 1
            if j - i != 1:      # "T or 2T" is prose, not a product of T, o and r
                raise FormulaError("%r is not a formula variable in %r" % (t[i:j], text))
            out.append(("var", c))
            i += 1
        elif c in "+-*/^()":
            out.append((c, None))
            i += 1
        else:
            raise FormulaError("unexpected %r in %r" % (c, text))
    return out


def parse_formula(text):
    """Returns (variables used, f) where f(env) evaluates the formula exactly (a Fraction); env
    maps each variable to its value, or is one number given to every variable. Raises
    FormulaError when it cannot read the text."""
    from fractions import Fraction
    toks = _tokens(text)
    pos = [0]
    used = set()

    def peek():
        return toks[pos[0]][0] if pos[0] < len(toks) else None

    def take(kind=None):
        if pos[0] >= len(toks) or (kind and toks[pos[0]][0] != kind):
            raise FormulaError("cannot read %r" % text)
        pos[0] += 1
        return toks[pos[0] - 1]

    def expr():
        f = term()
        while peek() in ("+", "-"):
            op = take()[0]
            g = term()
            f = (lambda a, b: lambda v: a(v) + b(v))(f, g) if op == "+" else \
                (lambda a, b: lambda v: a(v) - b(v))(f, g)
        return f

    def term():
        f = unary()
        while peek() in ("*", "/", "num", "var", "(", "log2"):
            op = take()[0] if peek() in ("*", "/") else "*"   # 2(n - 1): implicit product
            g = unary()
            f = (lambda a, b: lambda v: a(v) * b(v))(f, g) if op == "*" else \
                (lambda a, b: lambda v: a(v) / b(v))(f, g)
        return f

    def unary():
        if peek() == "-":
            take()
            g = unary()
            return lambda v: -g(v)
        return power()

    def power():
        f = primary()
        if peek() == "^":
            take()
            g = unary()
            return lambda v: f(v) ** int(g(v))
        return f

    def primary():
        kind, val = take()
        if kind == "num":
            c = Fraction(val)
            return lambda v: c
        if kind == "var":
            used.add(val)

            def var(v, name=val):
                if isinstance(v, dict):
                    if name not in v:
                        raise FormulaError("no value for %s in %r" % (name, text))
                    return Fraction(v[name])
                return Fraction(v)
            return var
        if kind == "(":
            f = expr()
            take(")")
            return f
        if kind == "log2":
            g = power()

            def log2(v):
                x = g(v)
                k = int(x).bit_length() - 1
                if x.denominator != 1 or x <= 0 or 1 << k != x:
                    raise FormulaError("log2 of %s is not a whole number" % x)
                return Fraction(k)
            return log2
        raise FormulaError("cannot read %r" % text)

    f = expr()
    if pos[0] != len(toks):
        raise FormulaError("cannot read %r" % text)
    return used, f


def parse_number(cell):
    """A table cell as an integer ("1,048,576", "2^16", "67108863"), or None if it is not one."""
    try:
        used, f = parse_formula(cell)
    except FormulaError:
        return None
    if used:
        return None
    v = f(0)
    return int(v) if v.denominator == 1 else None


def markdown_section(text, title):
    """The body of the level-2 section whose heading starts with title, or None."""
    lines = text.splitlines()
    body, inside = [], False
    for line in lines:
        if line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip().lower().startswith(title.lower())
            continue
        if inside:
            body.append(line)
    return "\n".join(body) if inside or body else None


def parse_sizes(header):
    """A column header such as "n = 8", "n = 2^16" or "B = 256, C = 8" as {variable: value},
    or None when it is not one."""
    env = {}
    for part in header.replace("`", "").replace("*", "").split(","):
        m = re.match(r"^\s*([A-Za-z])\s*=\s*(.+?)\s*$", part)
        if not m:
            return None
        v = parse_number(m.group(2))
        if v is None:
            return None
        env[m.group(1)] = v
    return env or None


def work_rows(section, every=False):
    """Rows of the section's Markdown tables named "additions", "steps", or "additions, <part>":
    a list of dicts with name, formula, vars (its variables), f (f(env)), error (why the formula
    could not be read, else None) and cells [(env, text)] for every column whose header names
    the sizes ("n = 8", "B = 256, C = 8"). every=True also returns the table's other rows whose
    second column is a formula this module can read (memory bytes, barriers, ...)."""
    rows = []
    header = None
    for line in section.splitlines():
        s = line.strip()
        if not s.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        name = cells[0].replace("*", "").replace("`", "").strip().lower()
        if name == "levels" or name.endswith("(steps)"):
            name = "steps"      # "levels", "levels (steps)": the same count
        marked = name in WORK_ROWS or name.startswith("additions,")
        if not (marked or every) or len(cells) < 2:
            continue
        row = {"name": name, "formula": cells[1], "vars": set(), "f": None, "error": None,
               "cells": []}
        try:
            used, f = parse_formula(cells[1])
            if not used:
                raise FormulaError("the formula uses no size variable")
            row["vars"], row["f"] = used, f
        except FormulaError as e:
            if not marked:
                continue        # a remark, not a formula ("T or 2T", "4: after the load")
            row["error"] = str(e)
        for h, c in zip(header[2:], cells[2:]):
            env = parse_sizes(h)
            if env and row["vars"] <= set(env):
                row["cells"].append((env, c))
        rows.append(row)
    return rows


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


def radix_pass(keys=(9, 6, 3, 8, 1, 13, 7, 4, 11, 2, 5, 12, 1, 10, 15, 0), tile=8, bits=2):
    """Lab 10: one LSD radix pass by the lowest `bits` bits, as the reference computes it: each
    tile's digit counts laid out digit-major (hist[d * tiles + t]), their inclusive scan, each
    (digit, tile)'s start (scan - count) and every key's destination (start + its rank among the
    tile's keys of that digit). Returns (hist, scan, start, dest); raises NotAScan unless the
    output is the stable partition by digit."""
    radix, n = 1 << bits, len(keys)
    tiles = (n + tile - 1) // tile
    digit = [k & (radix - 1) for k in keys]
    hist = [0] * (radix * tiles)
    for i, d in enumerate(digit):
        hist[d * tiles + i // tile] += 1
    scan, acc = [], 0
    for c in hist:
        acc += c
        scan.append(acc)
    start = [scan[h] - hist[h] for h in range(len(hist))]
    seen, dest = [0] * len(hist), []
    for i, d in enumerate(digit):
        h = d * tiles + i // tile
        dest.append(start[h] + seen[h])
        seen[h] += 1
    out = [None] * n
    for i, j in enumerate(dest):
        out[j] = keys[i]
    if out != sorted(keys, key=lambda k: k & (radix - 1)):  # sorted() is stable
        raise NotAScan("radix pass: the output is not the stable partition by digit")
    return hist, scan, start, dest


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
