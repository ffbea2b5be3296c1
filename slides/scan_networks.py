"""The course's scan algorithms as programs over an array of lanes, run on symbolic values.

Every algorithm is a Network: a list of steps, each step a list of operations that all read the
array as it was before the step (what a barrier guarantees on the GPU). run() executes one on
symbolic values (the input range each lane holds, e.g. x2..x5), checks that the result is the scan
it claims to be, and counts the additions and steps. Also here: the look-back's tile states and
one radix pass, simulated. make_diagrams.py draws them; tests/test_diagrams.py checks their counts
against the work formulas the handouts state.
"""

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
