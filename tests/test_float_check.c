/* test_float_check.c — lab 09's float check (common/ops.c) on the host, no GPU.
 *
 * The check must pass every correct order of float additions and fail outputs that no order
 * gives. So: real inputs (lab_ops_fill, every distribution), summed in float here in the orders
 * the course's scans use (serial; a Brent-Kung tree; tiles with serial or tree carries; a
 * decoupled look-back), all of which must pass from n = 1 to past 2^22; and outputs with a known
 * fault (zeroed, one tile's total left out of the carries, carries stored in bfloat16 or half, a
 * few ulps off where every order is exact), which must fail. The old bound, gamma * sum|x|,
 * passed most of these faults (a zeroed output at 89-98 % of the elements of n = 2^20); the
 * thresholds below are what it could not meet. Plus R_i and the exactness rule on hand-made
 * arrays.
 */
#include "gen.h"
#include "inputs.h"
#include "ops.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

TestSuite(float_check, .timeout = 60);

#define SEED 0x5CA9F10A7ull

static const lab_dist DISTS[] = {DIST_SMALL, DIST_RANDOM, DIST_LARGE, DIST_ONES, DIST_ALT};
#define N_DISTS (sizeof(DISTS) / sizeof(DISTS[0]))

static float as_float(int b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static int as_bits(float f)
{
    int b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

/* An input of n floats (as bits), its reference and its bounds; free with problem_free. */
typedef struct {
    size_t n;
    int *in;
    float *x;
    double *want_d, *bound_d;
} problem;

static problem problem_make(lab_dist d, size_t n, scan_type type)
{
    problem p = {n, malloc((n ? n : 1) * sizeof(int)), malloc((n ? n : 1) * sizeof(float)),
                 malloc((n ? n : 1) * sizeof(double)), malloc((n ? n : 1) * sizeof(double))};
    cr_assert(p.in && p.x && p.want_d && p.bound_d, "no memory for n=%zu", n);
    lab_ops_fill(LAB_OP_FADD, p.in, NULL, n, d, SEED + n);
    for (size_t i = 0; i < n; i++)
        p.x[i] = as_float(p.in[i]);
    lab_ops_reference(LAB_OP_FADD, type, p.in, NULL, n, NULL, p.want_d, p.bound_d);
    return p;
}

static void problem_free(problem *p)
{
    free(p->in);
    free(p->x);
    free(p->want_d);
    free(p->bound_d);
}

/* ---- honest orders: each an inclusive scan of x[0..n) into out, in float ----------------------
 */

static void scan_serial(const float *x, float *out, size_t n)
{
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++)
        out[i] = acc += x[i];
}

/* Brent-Kung in place over a[0..n): an up-sweep of pairwise sums, then a down-sweep that adds
 * each left subtree's total into the first element right of it. Every addition joins two
 * adjacent ranges, the left one first. */
static void scan_tree(float *a, size_t n)
{
    size_t d = 1;
    for (; d < n; d *= 2)
        for (size_t i = 2 * d - 1; i < n; i += 2 * d)
            a[i] = a[i - d] + a[i];
    for (d /= 2; d >= 1; d /= 2)
        for (size_t i = 2 * d - 1; i + d < n; i += 2 * d)
            a[i + d] = a[i] + a[i + d];
}

/* Tiles of `tile` elements scanned alone (serially or by tree), their totals scanned (serially
 * or by tree) into carries, and each tile's carry added in front of its elements: lab 07's and
 * lab 09's shape. */
static void scan_tiled(const float *x, float *out, size_t n, size_t tile, int tree_tiles,
                       int tree_carries)
{
    const size_t tiles = (n + tile - 1) / tile;
    float *carry = malloc((tiles ? tiles : 1) * sizeof(float));
    cr_assert(carry);
    for (size_t b = 0; b < tiles; b++) {
        const size_t lo = b * tile, len = n - lo < tile ? n - lo : tile;
        if (tree_tiles) {
            memcpy(out + lo, x + lo, len * sizeof(float));
            scan_tree(out + lo, len);
        } else {
            scan_serial(x + lo, out + lo, len);
        }
        carry[b] = out[lo + len - 1];
    }
    if (tree_carries)
        scan_tree(carry, tiles);
    else
        scan_serial(carry, carry, tiles);
    for (size_t b = 1; b < tiles; b++)
        for (size_t i = b * tile; i < n && i < (b + 1) * tile; i++)
            out[i] = carry[b - 1] + out[i];
    free(carry);
}

/* A decoupled look-back: tile b sums the aggregates of the tiles before it from right to left
 * until it meets one whose inclusive prefix was already published (here about one in five, as
 * a hash decides, and tile 0), then adds its own elements, each tree-scanned, after that. */
static void scan_lookback(const float *x, float *out, size_t n, size_t tile)
{
    const size_t tiles = (n + tile - 1) / tile;
    float *agg = malloc((tiles ? tiles : 1) * sizeof(float));
    float *incl = malloc((tiles ? tiles : 1) * sizeof(float));
    cr_assert(agg && incl);
    for (size_t b = 0; b < tiles; b++) {
        const size_t lo = b * tile, len = n - lo < tile ? n - lo : tile;
        memcpy(out + lo, x + lo, len * sizeof(float));
        scan_tree(out + lo, len);
        agg[b] = out[lo + len - 1];
        if (b == 0) {
            incl[0] = agg[0];
            continue;
        }
        /* from tile b - 1 down: an aggregate where no prefix is published yet, else the prefix */
        size_t j = b;
        float acc = 0.0f;
        int have = 0;
        for (;;) {
            j--;
            const int published = j == 0 || lab_mix64(SEED, j) % 5 == 0;
            const float part = published ? incl[j] : agg[j];
            acc = have ? part + acc : part;
            have = 1;
            if (published)
                break;
        }
        incl[b] = acc + agg[b];
        for (size_t i = lo; i < lo + len; i++)
            out[i] = acc + out[i];
    }
    free(incl);
    free(agg);
}

/* The first element lab_ops_check rejects (n when none); logs the check's text. */
static size_t first_rejected(const problem *p, const float *out, scan_type type, lab_ops_verdict *v)
{
    int *bits = malloc((p->n ? p->n : 1) * sizeof(int));
    cr_assert(bits);
    for (size_t i = 0; i < p->n; i++)
        bits[i] = as_bits(out[i]);
    lab_ops_check(LAB_OP_FADD, type, bits, NULL, p->want_d, p->bound_d, p->n, v);
    free(bits);
    return v->bad;
}

/* 1 when lab_ops_check accepts out[i] alone (a one-element slice: the same rule, element i's
 * reference and bound). */
static int element_passes(const problem *p, size_t i, float got)
{
    const int bits = as_bits(got);
    lab_ops_verdict v;
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, &bits, NULL, p->want_d + i, p->bound_d + i, 1, &v);
    return v.bad == 1;
}

/* Every honest order of p's additions, each checked; at large n only a few. */
static void check_orders(const problem *p, const char *dist)
{
    const size_t n = p->n;
    float *out = malloc((n ? n : 1) * sizeof(float));
    cr_assert(out);
    lab_ops_verdict v;
    const char *name = "serial";
    scan_serial(p->x, out, n);
    cr_expect_eq(first_rejected(p, out, SCAN_INCLUSIVE, &v), n,
                 "%s, n=%zu, %s: out[%zu] %s %s, got %s", name, n, dist, v.bad, v.expected, v.why,
                 v.got);
    memcpy(out, p->x, n * sizeof(float));
    scan_tree(out, n);
    cr_expect_eq(first_rejected(p, out, SCAN_INCLUSIVE, &v), n,
                 "tree, n=%zu, %s: out[%zu] %s %s, got %s", n, dist, v.bad, v.expected, v.why,
                 v.got);
    const size_t tiles[] = {256, 1024, 8192};
    for (size_t t = 0; t < 3; t++)
        for (int mode = 0; mode < 4; mode++) {
            if (n > (1u << 20) && mode != 1 && mode != 2)
                continue; /* the large sizes: tree tiles with serial carries and the reverse */
            scan_tiled(p->x, out, n, tiles[t], mode & 1, mode >> 1);
            cr_expect_eq(first_rejected(p, out, SCAN_INCLUSIVE, &v), n,
                         "tiles of %zu (%s tiles, %s carries), n=%zu, %s: out[%zu] %s %s, got %s",
                         tiles[t], mode & 1 ? "tree" : "serial", mode >> 1 ? "tree" : "serial", n,
                         dist, v.bad, v.expected, v.why, v.got);
        }
    scan_lookback(p->x, out, n, 512);
    cr_expect_eq(first_rejected(p, out, SCAN_INCLUSIVE, &v), n,
                 "look-back, n=%zu, %s: out[%zu] %s %s, got %s", n, dist, v.bad, v.expected, v.why,
                 v.got);
    free(out);
}

Test(float_check, honest_orders_pass,
     .description = "serial, tree, tiled and look-back float scans pass, n = 1 .. 2^22 + 3")
{
    const size_t sizes[] = {
        1, 2, 3, 31, 255, 256, 1000, 4097, 65537, (1u << 20) + 7, (1u << 22) + 3};
    for (size_t d = 0; d < N_DISTS; d++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            if (sizes[s] > (1u << 20) && DISTS[d] != DIST_SMALL && DISTS[d] != DIST_ALT &&
                DISTS[d] != DIST_ONES)
                continue; /* 2^22 + 3: three distributions keep the suite quick */
            problem p = problem_make(DISTS[d], sizes[s], SCAN_INCLUSIVE);
            check_orders(&p, lab_dist_name(DISTS[d]));
            problem_free(&p);
        }
}

Test(float_check, exclusive_orders_pass,
     .description = "exclusive: out[0] = 0, out[i] = the "
                    "inclusive scan's out[i - 1], any order")
{
    for (size_t d = 0; d < N_DISTS; d++) {
        const size_t n = 70001;
        problem p = problem_make(DISTS[d], n, SCAN_EXCLUSIVE);
        float *incl = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
        cr_assert(incl && out);
        for (int order = 0; order < 3; order++) {
            if (order == 0)
                scan_serial(p.x, incl, n);
            else if (order == 1)
                scan_tiled(p.x, incl, n, 1024, 1, 1);
            else
                scan_lookback(p.x, incl, n, 256);
            out[0] = 0.0f;
            memcpy(out + 1, incl, (n - 1) * sizeof(float));
            lab_ops_verdict v;
            cr_expect_eq(first_rejected(&p, out, SCAN_EXCLUSIVE, &v), n,
                         "exclusive order %d, %s: out[%zu] %s %s, got %s", order,
                         lab_dist_name(DISTS[d]), v.bad, v.expected, v.why, v.got);
            out[0] = as_float(p.in[0]); /* the first term where the identity belongs */
            cr_expect(first_rejected(&p, out, SCAN_EXCLUSIVE, &v) == 0 || as_float(p.in[0]) == 0.0f,
                      "an exclusive scan's out[0] must be exactly 0");
        }
        free(out);
        free(incl);
        problem_free(&p);
    }
}

/* ---- faults the check must catch ----------------------------------------------------------------
 */

Test(float_check, zeroed_output_fails,
     .description = "an output of 0.0 is rejected at nearly every element (the old bound: 2-11 %)")
{
    const size_t n = (1u << 20) + 7;
    for (size_t d = 0; d < N_DISTS; d++) {
        problem p = problem_make(DISTS[d], n, SCAN_INCLUSIVE);
        float *out = calloc(n, sizeof(float));
        cr_assert(out);
        lab_ops_verdict v;
        first_rejected(&p, out, SCAN_INCLUSIVE, &v);
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += p.want_d[i] != 0.0;
        if (DISTS[d] == DIST_ONES || DISTS[d] == DIST_ALT)
            cr_expect_eq(v.n_bad, nonzero, "%s: exact sums, yet 0.0 passed at %zu of %zu elements",
                         lab_dist_name(DISTS[d]), nonzero - v.n_bad, nonzero);
        else
            cr_expect(v.n_bad >= nonzero / 100 * 90, "%s: 0.0 passed at %zu of %zu elements",
                      lab_dist_name(DISTS[d]), n - v.n_bad, n);
        cr_log_info("zeroed output, %s, n=%zu: rejected at %.2f %% of the elements",
                    lab_dist_name(DISTS[d]), n, 100.0 * (double)v.n_bad / (double)n);
        free(out);
        problem_free(&p);
    }
}

/* x rounded to nearest (ties to even) with `keep` explicit significand bits: bfloat16 keeps 7,
 * half 10 (half's range, up to 65504, is not modelled: that only makes its carries less wrong). */
static float round_significand(float x, int keep)
{
    const uint32_t b = (uint32_t)as_bits(x), drop = 23u - (uint32_t)keep;
    const uint32_t half = 1u << (drop - 1), low = b & ((1u << drop) - 1u);
    uint32_t r = b - low;
    if (low > half || (low == half && ((b >> drop) & 1u)))
        r += 1u << drop;
    return as_float((int)r);
}

/* A tiled scan (tree tiles, serial carries) with a fault in its carries: drop >= 0 leaves tile
 * `drop`'s total out of every later carry; keep > 0 rounds every carry to `keep` significand
 * bits before it is used. */
static void faulty_tiles(const problem *p, size_t tile, long drop, int keep, float *out)
{
    const size_t n = p->n, tiles = (n + tile - 1) / tile;
    float acc = 0.0f;
    for (size_t b = 0; b < tiles; b++) {
        const size_t lo = b * tile, len = n - lo < tile ? n - lo : tile;
        memcpy(out + lo, p->x + lo, len * sizeof(float));
        scan_tree(out + lo, len);
        const float total = out[lo + len - 1];
        const float carry = keep > 0 ? round_significand(acc, keep) : acc;
        if (b > 0)
            for (size_t i = lo; i < lo + len; i++)
                out[i] = carry + out[i];
        if ((long)b != drop)
            acc = acc + total;
    }
}

/* How many tile starts b >= 1 whose output was changed by the fault pass the check; *changed
 * counts the changed ones. */
static size_t starts_passing(const problem *p, const float *good, const float *bad, size_t tile,
                             size_t *changed)
{
    size_t passing = 0;
    *changed = 0;
    for (size_t lo = tile; lo < p->n; lo += tile) {
        if (bad[lo] == good[lo])
            continue;
        (*changed)++;
        passing += element_passes(p, lo, bad[lo]);
    }
    return passing;
}

/* The fraction of changed tile starts that the check must reject: all of them where the sums are
 * exact (ones, alt), and at least min_random elsewhere. */
static void expect_caught(const problem *p, const float *good, const float *bad, size_t tile,
                          lab_dist d, double min_random, const char *fault)
{
    size_t changed;
    const size_t passing = starts_passing(p, good, bad, tile, &changed);
    cr_expect(changed > 0, "%s, %s: the fault changed no tile start: the test shows nothing", fault,
              lab_dist_name(d));
    const double caught = changed ? 1.0 - (double)passing / (double)changed : 0.0;
    if (d == DIST_ONES || d == DIST_ALT)
        cr_expect_eq(passing, 0, "%s, %s, n=%zu: %zu of %zu wrong tile starts passed", fault,
                     lab_dist_name(d), p->n, passing, changed);
    else
        cr_expect(caught >= min_random,
                  "%s, %s, n=%zu: only %.1f %% of %zu wrong tile starts caught", fault,
                  lab_dist_name(d), p->n, 100.0 * caught, changed);
    cr_log_info("%s, %s, n=%zu, tiles of %zu: %.1f %% of %zu wrong tile starts caught", fault,
                lab_dist_name(d), p->n, tile, 100.0 * caught, changed);
}

Test(float_check, dropped_tile_fails,
     .description = "a carry that leaves out one earlier tile is caught at its tile starts")
{
    const size_t n = (1u << 16) + 1, tile = 256;
    float *good = malloc(n * sizeof(float)), *bad = malloc(n * sizeof(float));
    cr_assert(good && bad);
    for (size_t d = 0; d < N_DISTS; d++) {
        problem p = problem_make(DISTS[d], n, SCAN_INCLUSIVE);
        faulty_tiles(&p, tile, -1, 0, good);
        lab_ops_verdict v;
        cr_expect_eq(first_rejected(&p, good, SCAN_INCLUSIVE, &v), n, "the fault-free tiles fail");
        /* each tile b's total dropped in turn, seen at tile b + 1's start */
        size_t passing = 0, changed = 0;
        for (size_t b = 0; (b + 1) * tile < n; b++) {
            faulty_tiles(&p, tile, (long)b, 0, bad);
            if (bad[(b + 1) * tile] == good[(b + 1) * tile])
                continue;
            changed++;
            passing += element_passes(&p, (b + 1) * tile, bad[(b + 1) * tile]);
        }
        const double caught = 1.0 - (double)passing / (double)changed;
        cr_log_info("dropped tile, %s, n=%zu: %.1f %% of %zu caught", lab_dist_name(DISTS[d]), n,
                    100.0 * caught, changed);
        if (DISTS[d] == DIST_ONES || DISTS[d] == DIST_ALT)
            cr_expect_eq(passing, 0, "%s: %zu dropped tiles passed", lab_dist_name(DISTS[d]),
                         passing);
        else
            cr_expect(caught >= 0.9, "%s: only %.1f %% of the dropped tiles caught",
                      lab_dist_name(DISTS[d]), 100.0 * caught);
        /* and a whole output with tile 100's total left out fails at tile 101's start */
        faulty_tiles(&p, tile, 100, 0, bad);
        const size_t at = first_rejected(&p, bad, SCAN_INCLUSIVE, &v);
        cr_expect(at >= 101 * tile && at < n, "%s: tile 100 dropped, first rejected at %zu",
                  lab_dist_name(DISTS[d]), at);
        problem_free(&p);
    }
    free(bad);
    free(good);
}

/* The bound grows with i (about i 2^-24 R_i) while a narrow carry's error does not (2^-9 of the
 * carry for bfloat16, 2^-12 for half), so past the first few thousand elements an inexact input's
 * narrow carries fit in the bound: the check catches some of them near the start (measured at
 * n = 2^13 + 3: 50-56 % of bfloat16 carries, 12-19 % of half ones; the old bound none), so the
 * whole output fails, and every one on exact inputs. */
Test(float_check, narrow_carries_fail,
     .description = "carries rounded to bfloat16 or half are caught (all of them where exact)")
{
    for (size_t d = 0; d < N_DISTS; d++) {
        const int exact = DISTS[d] == DIST_ONES || DISTS[d] == DIST_ALT;
        const size_t n = exact ? (1u << 20) + 3 : (1u << 13) + 3, tile = 256;
        float *good = malloc(n * sizeof(float)), *bad = malloc(n * sizeof(float));
        cr_assert(good && bad);
        problem p = problem_make(DISTS[d], n, SCAN_INCLUSIVE);
        faulty_tiles(&p, tile, -1, 0, good);
        faulty_tiles(&p, tile, -1, 7, bad);
        expect_caught(&p, good, bad, tile, DISTS[d], 0.3, "bfloat16 carries");
        lab_ops_verdict v;
        cr_expect(first_rejected(&p, bad, SCAN_INCLUSIVE, &v) < n, "bfloat16 carries passed");
        faulty_tiles(&p, tile, -1, 10, bad);
        expect_caught(&p, good, bad, tile, DISTS[d], 0.05, "half carries");
        cr_expect(first_rejected(&p, bad, SCAN_INCLUSIVE, &v) < n, "half carries passed");
        problem_free(&p);
        free(bad);
        free(good);
    }
}

Test(float_check, ulps_off_where_exact_fail,
     .description = "ones and alt: one ulp off anywhere fails, with the message saying why")
{
    const size_t n = (1u << 22) + 3;
    const lab_dist exact[] = {DIST_ONES, DIST_ALT};
    float *out = malloc(n * sizeof(float));
    cr_assert(out);
    for (size_t d = 0; d < 2; d++) {
        problem p = problem_make(exact[d], n, SCAN_INCLUSIVE);
        size_t inexact = 0;
        for (size_t i = 0; i < n; i++)
            inexact += p.bound_d[i] != 0.0;
        cr_expect_eq(inexact, 0, "%s: %zu elements not exact", lab_dist_name(exact[d]), inexact);
        scan_serial(p.x, out, n);
        const size_t at[] = {0, 1, 4096, n / 2 + 1, n - 1};
        for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
            const float keep = out[at[k]];
            for (int ulps = 1; ulps <= 3; ulps += 2) {
                float off = keep;
                for (int u = 0; u < ulps; u++)
                    off = nextafterf(off, k % 2 ? INFINITY : -INFINITY);
                out[at[k]] = off;
                lab_ops_verdict v;
                cr_expect_eq(first_rejected(&p, out, SCAN_INCLUSIVE, &v), at[k],
                             "%s: out[%zu] %d ulp off not caught", lab_dist_name(exact[d]), at[k],
                             ulps);
                cr_expect(strstr(v.expected, "exactly") && strstr(v.why, "representable"),
                          "message: expected %s %s", v.expected, v.why);
            }
            out[at[k]] = keep;
        }
        problem_free(&p);
    }
    free(out);
}

Test(float_check, bound_edge_inexact,
     .description = "where not exact: just inside the bound passes, just past it fails")
{
    const size_t n = 5000;
    problem p = problem_make(DIST_SMALL, n, SCAN_INCLUSIVE);
    size_t tried = 0;
    for (size_t i = 1; i < n; i += 97) {
        const double b = p.bound_d[i];
        if (b == 0.0)
            continue;
        /* the floats nearest want + 0.9 b and just beyond want + b */
        float in_bound = (float)(p.want_d[i] + 0.9 * b), past = (float)(p.want_d[i] + b);
        while ((double)past - p.want_d[i] <= b)
            past = nextafterf(past, INFINITY);
        if (fabs((double)in_bound - p.want_d[i]) > b)
            continue; /* the bound is below a float's spacing here */
        tried++;
        cr_expect(element_passes(&p, i, in_bound), "out[%zu]: 0.9 of its bound failed", i);
        cr_expect(!element_passes(&p, i, past), "out[%zu]: past its bound passed", i);
    }
    cr_expect(tried > 10, "only %zu elements tried", tried);
    problem_free(&p);
}

/* ---- R_i and the exactness rule by hand --------------------------------------------------------
 */

Test(float_check, exponents, .description = "lab_float_exponent: x * 2^e is an integer, e least")
{
    cr_expect_eq(lab_float_exponent(1.0f), 0);
    cr_expect_eq(lab_float_exponent(-3.0f / 64.0f), 6);
    cr_expect_eq(lab_float_exponent(48.0f), -4);
    cr_expect_eq(lab_float_exponent(0.1f), 27); /* 13421773 * 2^-27 */
    cr_expect_eq(lab_float_exponent(ldexpf(1.0f, -149)), 149);
    cr_expect_eq(lab_float_exponent(ldexpf(3.0f, -140)), 140);
    cr_expect(lab_float_exact(ldexp(1.0, 24), 0) && !lab_float_exact(ldexp(1.0, 24) + 1, 0));
    cr_expect(lab_float_exact(ldexp(1.0, 18), 6) && !lab_float_exact(ldexp(1.0, 18) + 0.5, 6));
    cr_expect(lab_float_exact(ldexp(1.0, 30), -6), "multiples of 64 are exact up to 2^30");
}

Test(float_check, range_and_bounds_by_hand,
     .description = "R_i is max - min of the prefix sums; bound 0 where exact")
{
    /* P = 0, 2^20, -2^21, -2^21 + 2^-10, 2^-10: R = 2^20, 3 2^20, 3 2^20, 3 2^20 */
    const float x[4] = {ldexpf(1, 20), -3 * ldexpf(1, 20), ldexpf(1, -10), ldexpf(1, 21)};
    int in[4];
    double want_d[4], bound_d[4];
    for (int i = 0; i < 4; i++)
        in[i] = as_bits(x[i]);
    lab_ops_reference(LAB_OP_FADD, SCAN_INCLUSIVE, in, NULL, 4, NULL, want_d, bound_d);
    const double r = 3 * ldexp(1, 20);
    cr_expect(want_d[3] == ldexp(1, -10), "want_d[3] = %g", want_d[3]);
    cr_expect(bound_d[0] == 0.0, "one term: exact");
    cr_expect(bound_d[1] == 0.0, "multiples of 2^20, R 2^-20 = 3: exact (got %g)", bound_d[1]);
    cr_expect(bound_d[2] == lab_float_bound(3, r), "2^-10 joins: %g, not gamma_2 * 3 2^20 = %g",
              bound_d[2], lab_float_bound(3, r));
    cr_expect(bound_d[3] == lab_float_bound(4, r), "R stays 3 2^20: %g", bound_d[3]);
    lab_ops_reference(LAB_OP_FADD, SCAN_EXCLUSIVE, in, NULL, 4, NULL, want_d, bound_d);
    cr_expect(want_d[0] == 0.0 && bound_d[0] == 0.0 && bound_d[1] == 0.0 && bound_d[2] == 0.0,
              "exclusive: the identity, then one and two exact terms");
    cr_expect(bound_d[3] == lab_float_bound(3, r), "exclusive out[3]: %g", bound_d[3]);
    /* the bound itself: gamma_m R plus the double reference's margin */
    const double u = ldexp(1.0, -24);
    cr_expect_eq(lab_float_bound(1, 5.0), 0.0);
    cr_expect(fabs(lab_float_bound(1001, 2.0) / (2.0 * 1000 * u / (1 - 1000 * u)) - 1) < 1e-7,
              "gamma_1000 * 2 and a margin of 2^-27 of it");
    cr_expect(isinf(lab_float_bound(((size_t)1 << 24) + 1, 1.0)), "2^24 additions: no bound");
}

Test(float_check, rounding_at_the_edge_of_exact,
     .description = "2^24 + 1 rounds in float: not exact, and its rounding is within the bound")
{
    const float x[2] = {ldexpf(1, 24), 1.0f};
    const int in[2] = {as_bits(x[0]), as_bits(x[1])};
    double want_d[2], bound_d[2];
    lab_ops_reference(LAB_OP_FADD, SCAN_INCLUSIVE, in, NULL, 2, NULL, want_d, bound_d);
    cr_expect(bound_d[1] > 0.0, "R = 2^24 + 1 with e = 0: not every sum is a float");
    const float sum = x[0] + x[1];
    cr_expect(sum != want_d[1], "2^24 + 1 should round in float");
    const int got[2] = {in[0], as_bits(sum)};
    lab_ops_verdict v;
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, got, NULL, want_d, bound_d, 2, &v);
    cr_expect_eq(v.bad, 2, "the float sum %g failed: %s %s", (double)sum, v.expected, v.why);
}
