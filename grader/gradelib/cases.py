"""The correctness matrix of a lab: the edge sizes, each case's seed, the calls a case makes, the
many-calls case, a variant's cases, the single-pass labs' stress cases on a GPU and their ordering
cases in CPU mode, a reported variant's, and the command that reruns a case by hand."""
import hashlib

from . import contract


def _cap(info, limit):
    cap = info.max_n or None
    if limit is not None:
        cap = min(cap, limit) if cap else limit
    return cap


# Sizes made from each further tile of a lab that reports several (lab 10: its own and its scan's),
# the contract's tile-relative family: exact multiples and sizes one off them, (tiles, plus).
EXTRA_TILE_SIZES = tuple((r["tiles"], r["plus"]) for r in contract.DATA["edge_sizes"]["tile_relative"])


def edge_sizes(info, large_n, limit=None):
    """The edge sizes for a lab (contract.edge_sizes, the same families as tests/lab_cases.c,
    made from info.tiles[0]), with names for the ones the config can refer to: {n: name}, none
    over the lab's max_n or limit; and, for every further tile a whole-array lab reports, its
    multiples and the sizes one off them (EXTRA_TILE_SIZES), named by their value."""
    cap = _cap(info, limit)
    sizes = contract.edge_sizes(info.tile_or_default, large_n, cap)
    for t in info.tiles[1:]:
        for k, plus in EXTRA_TILE_SIZES:
            n = k * t + plus
            if (cap is None or n <= cap) and n not in sizes:
                sizes[n] = str(n)
    return dict(sorted(sizes.items()))


def case_seed(run_seed, lab_id, n, dist):
    """The seed of one case: a fixed function of the run's seed, so --seed reproduces it."""
    h = hashlib.sha256(f"{run_seed}:{lab_id}:{n}:{dist}".encode()).hexdigest()
    return int(h[:8], 16)


# Unaligned pointers: (size name, words past 16-byte alignment for in, for out). Offsets of 4, 8
# and 12 bytes, each for the input and the output.
OFFSET_CASES = (("tile+1", 1, 3), ("3tile+5", 2, 2), ("2^16+1", 3, 1))
# Every case makes two calls: call 1 scans the case's own input (the seed the grader prints, the
# CPU reference's), call 2 an input drawn on the GPU from a secret seed, so that an answer made
# on the host from the harness's own data (its seed) is caught too. In a case of more than one
# tile, call 2 spans several of the lab's real tiles (second_size): larger than call 1 in a case
# of a few tiles (scratch sized by the first call is caught), smaller in a large one (state left
# by a multi-tile call is caught), and short enough that a correct but slow lab is not timed out
# for it.


def second_size(info, limit=None):
    """The n of every case's second call: two of the lab's largest tiles and one element."""
    n = 2 * info.big_tile + 1
    cap = _cap(info, limit)
    return min(n, cap) if cap else n


def case_calls(info, n, limit=None):
    """The options that make a case its calls. A case of one tile or less: n twice (a
    remembered answer; growth is the many-calls case's), so that a lab whose single-tile path is
    right still passes its single-tile cases. A case of more than one tile: n, then second_size
    twice. The second call, at a new n (growing or shrinking, several tiles long), shows state
    the first left behind; the harness zeroes the scratch for each new n (lab.h), so only the
    third, at the same n as the second, shows state never reset for the next call (lab 08's
    ticket counter). Repeating the small second size, not n, keeps the cost of a case low."""
    if n <= info.tile_or_default:
        return ("--sizes", f"{n},{n}", "--calls", "2")
    second = second_size(info, limit)
    return ("--sizes", f"{n},{second},{second}", "--calls", "3")


# A case makes at most this many calls (case_calls); the many-calls case makes more.
CASE_CALLS_MAX = 3


def is_many_calls(options):
    """True for the options of a case of more calls than case_calls makes: the many-calls case
    (MULTI_CALLS calls) and a stress case of more than CASE_CALLS_MAX, each of which runs first in
    a process of its own and is not made for reported variants."""
    return "--calls" in options and int(options[options.index("--calls") + 1]) > CASE_CALLS_MAX


# The many-calls case: one process, calls cycling through these sizes (two calls of the same n in
# a row, then smaller and larger ones, most of them several tiles long): a remembered answer,
# state sized for the first call's n, or a leak shows here.
MULTI_CALLS = {"gpu": 100, "cpu": 12}
assert min(MULTI_CALLS.values()) > CASE_CALLS_MAX


def multi_sizes(info):
    """The sizes of the many-calls case: multiples of the lab's largest tile and sizes one off,
    growing and shrinking (a leak that only a multi-tile call makes is counted call after call)."""
    t = info.big_tile
    return [2 * t + 1, 2 * t + 1, 33, 5 * t + 3, t, 3 * t - 1]


def graded_variants(info, settings):
    """The names of the variants the lab is graded on: every variant when the config says "all",
    the lab's variants named in a list (labs 09 and 10, whose variants are different operators
    and applications; the default always among them), else the default (variants[0]) alone; the
    others are only checked and reported (report_variants)."""
    chosen = settings["correctness"]["variants"]
    if chosen == "all":
        return tuple(v.name for v in info.variants)
    if isinstance(chosen, list):
        return tuple(v.name for k, v in enumerate(info.variants) if k == 0 or v.name in chosen)
    return (info.variants[0].name,)


def report_variants(info, settings):
    """The variants that are checked and named in the result but not graded."""
    graded = graded_variants(info, settings)
    return tuple(v.name for v in info.variants if v.name not in graded)


def _variant_opts(info, variant):
    """The harness options that choose variant: none for the default one."""
    if variant is None or variant == info.variants[0].name:
        return ()
    return ("--variant", variant)


def make_cases(info, settings, run_seed, limit=None, mode="gpu", variant=None, every_dist=True):
    """[(n, dist, seed, options)] of one variant of a lab (None: the default), the whole matrix:
    every edge size with one distribution (rotating through the list), the sizes named in
    all_dists_sizes with every distribution (and the variant's variant_dists), a few sizes with
    unaligned input and output (OFFSET_CASES), and one process of many calls of several sizes
    (MULTI_CALLS; the device-memory leak check). options: extra harness options, a tuple.

    In CPU mode, the default variant of a lab whose config has correctness.cpu_ordering (the
    single-pass labs) also gets one case of CASE_CALLS_MAX calls at the same n of many tiles
    (cpu_repeat_size).

    On a GPU, a lab whose config has correctness.stress (the single-pass labs) also gets its
    stress cases: for each number of tiles listed, that many of its largest tiles and one element,
    `calls` calls at that n in one process, each with the lab's kernels kept to `sms` SMs
    (--squeeze: many more tiles than resident blocks, and the same n again, so that a look-back
    that accepts an earlier call's descriptor or waits on a tile not yet running fails here).

    A variant other than the default meets every size and every distribution too, but the
    large size (the costly one: 2^24 elements) with one distribution only, a different one for
    each variant, the others at every smaller all_dists size. every_dist=False: no size with
    every distribution (a variant that is only reported)."""
    c = settings["correctness"]
    dists = c["dists"]
    extra = [d for d in c.get("variant_dists", {}).get(variant or info.variants[0].name, []) if d not in dists]
    sizes = edge_sizes(info, c["large_n"], limit)
    every = set(c.get("all_dists_sizes", [])) if every_dist else set()
    vopts = _variant_opts(info, variant)
    if vopts:
        every.discard("large")
    shift = next((k for k, v in enumerate(info.variants) if v.name == variant), 0)
    salt = f"/{variant}" if vopts else ""
    cases = []
    for i, (n, name) in enumerate(sizes.items()):
        chosen = dists + extra if name in every else [dists[(i + shift) % len(dists)]]
        for d in chosen:
            cases.append((n, d, case_seed(run_seed, info.id, n, d + salt), case_calls(info, n, limit) + vopts))
    by_name = {name: n for n, name in sizes.items()}
    for j, (name, off_in, off_out) in enumerate(OFFSET_CASES):
        if name in by_name:
            n, d = by_name[name], dists[(j + 1) % len(dists)]
            cases.append((n, d, case_seed(run_seed, info.id, n, f"{d}+off{off_in}{off_out}{salt}"),
                          ("--offset-in", str(off_in), "--offset-out", str(off_out)) + case_calls(info, n, limit)
                          + vopts))
    stress = c.get("stress") if mode == "gpu" else None
    if stress:
        for tiles in stress["tiles"]:
            n = tiles * info.big_tile + 1
            if (info.max_n and n > info.max_n) or (limit is not None and n > limit):
                continue
            d = dists[tiles % len(dists)]
            cases.append((n, d, case_seed(run_seed, info.id, n, f"{d}+squeeze{salt}"),
                          ("--calls", str(stress["calls"]), "--squeeze", str(stress["sms"])) + vopts))
    repeat = cpu_repeat_size(info, limit) if mode == "cpu" and c.get("cpu_ordering") and not vopts else None
    if repeat:
        d = dists[repeat % len(dists)]
        cases.append((repeat, d, case_seed(run_seed, info.id, repeat, f"{d}+repeat"),
                      ("--sizes", ",".join([str(repeat)] * CASE_CALLS_MAX), "--calls", str(CASE_CALLS_MAX))))
    multi = [n for n in multi_sizes(info) if not info.max_n or n <= info.max_n]
    if multi and (limit is None or max(multi) <= limit):
        n = multi[0]
        cases.append((n, "random", case_seed(run_seed, info.id, n, "multi" + salt),
                      ("--sizes", ",".join(map(str, multi)), "--calls", str(MULTI_CALLS[mode])) + vopts))
    return cases


# The blocks CPU mode's scheduler keeps resident at once (common/cpu/launch.cpp g_resident, unless
# CPU_RESIDENT_BLOCKS says otherwise; the grader never sets it).
CPU_RESIDENT_BLOCKS = 4
# The tiles of the repeated case below: as many as make run's default run gives its second and
# third calls in CPU mode (sixteen), where a stale look-back failed for every scheduler seed tried.
CPU_REPEAT_TILES = 16


def cpu_repeat_size(info, limit=None):
    """The n of CPU mode's repeated case (make_cases, mode "cpu", the default variant of a lab with
    correctness.cpu_ordering): up to CPU_REPEAT_TILES of the lab's largest tiles and one element,
    within limit and the lab's max_n, called CASE_CALLS_MAX times at that same n in one process.
    The other cases repeat only their second size, a few tiles, which CPU mode's resident blocks
    run all at once; here the tiles outnumber them, so a look-back that takes the call before's
    descriptors for its own (an epoch not checked) finds one before its predecessor publishes.
    None when fewer tiles than CPU_RESIDENT_BLOCKS + 1 fit."""
    cap = _cap(info, limit)
    tiles = CPU_REPEAT_TILES if cap is None else min(CPU_REPEAT_TILES, (cap - 1) // info.big_tile)
    return tiles * info.big_tile + 1 if tiles > CPU_RESIDENT_BLOCKS else None


# The size of a variant's algorithm case (algorithm_case): dozens of tiles of every tile lab, so
# that a hierarchy shows its passes, and a fraction of a second in CPU mode.
ALGORITHM_N = 70000
ALGORITHM = "--algorithm"


def algorithm_case(info, run_seed, variant=None):
    """The case whose report names the algorithm of its first call (--algorithm: CPU mode counts
    what the kernels did and the judge says which of the course's algorithms that is): checked
    like every case, run by a CPU-mode build only."""
    return (ALGORITHM_N, "small", case_seed(run_seed, info.id, ALGORITHM_N, "algorithm"),
            _variant_opts(info, variant) + (ALGORITHM,))


def ordering_cases(info, settings, run_seed, variant=None):
    """The cases a GPU grade also runs in CPU mode for a lab whose config has
    correctness.cpu_ordering (the single-pass labs): make_cases's CPU-mode cases of more tiles
    than CPU mode keeps resident, up to its max_n, one distribution each, and for the default
    variant the many-calls case (the same n again, then others). CPU mode's scheduler suspends a
    block between any two of its steps and starts blocks out of order, so a look-back that reads
    a flag before the value it guards, or accepts an earlier call's descriptor, fails these
    cases every time; on a GPU such a race shows by luck, or, for some, never (the H100 never
    showed lab 08's flag-before-value store order in 9,000 squeezed calls). [] without the key."""
    ordering = settings["correctness"].get("cpu_ordering")
    if not ordering:
        return []
    limit = ordering["max_n"]
    if info.max_n:
        limit = min(limit, info.max_n)
    several = CPU_RESIDENT_BLOCKS * info.big_tile
    default = variant is None or variant == info.variants[0].name
    salt = "cpu-ordering"
    out = []
    for n, dist, seed, options in make_cases(info, settings, run_seed, limit, "cpu", variant, every_dist=False):
        if is_many_calls(options):
            if default:
                out.append((n, dist, seed ^ case_seed(run_seed, info.id, n, salt), options))
        elif n > several and "--offset-in" not in options:
            out.append((n, dist, seed ^ case_seed(run_seed, info.id, n, salt), options))
    return out


# A variant that is only reported (not graded) is checked at the edge sizes up to this one, one
# distribution each: enough to say "written and passing" or what fails. In CPU mode (every GPU
# thread a fiber) a quarter of it, still more than two of every lab's largest tile (lab 10's
# sort: 6144): lab 10's reported radix_sort_on_scan alone cost 3.8 of a full submission's ~47
# CPU-seconds at the GPU's sizes.
REPORT_MAX_N = {"gpu": (1 << 16) + 1, "cpu": (1 << 14) + 1}


def report_cases(info, settings, run_seed, variant, limit=None, mode="gpu"):
    """The cases of a reported variant: make_cases's up to REPORT_MAX_N[mode], one distribution
    per size, and no many-calls case (a process of its own: the graded variant's has that
    check)."""
    top = REPORT_MAX_N[mode]
    cap = top if limit is None else min(limit, top)
    return [c for c in make_cases(info, settings, run_seed, cap, mode, variant, every_dist=False)
            if not is_many_calls(c[3])]


def reproduce_cmd(lab_id, n, dist, seed, mode="gpu", options=()):
    """The command that reruns one case by hand (in CPU mode too, when that is how it ran)."""
    cpu = " CPU=1" if mode == "cpu" else ""
    extra = (" " + " ".join(options)) if options else ""
    return f"make run LAB={lab_id[:2]}{cpu} ARGS='--n {n} --dist {dist} --seed {seed} --reps 0{extra}'"
