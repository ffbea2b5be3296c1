/* ops.c — lab 09's operators on the host (see ops.h). Also lab 10's applications (compaction, sort,
 * CSR): the inputs each needs, its reference on the host and its check.
 *
 * Size: a little over 400 lines: one switch per step (inputs, reference, check) over the eight
 * operations, kept together so that adding an operation is one case in each, in one place. */
#include "ops.h"
#include "gen.h"
#include "validate.h"
#include "course/10_applications.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const OP_NAMES[] = {"add",     "max",     "min",  "fadd",
                                       "seg_add", "compact", "sort", "csr"};

const char *lab_op_name(lab_op op)
{
    return (op >= LAB_OP_ADD && op <= LAB_OP_CSR) ? OP_NAMES[op] : "?";
}

static int float_bits(float f)
{
    int b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

static float bits_float(int b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

/* Element i of a float input: see ops.h. */
static float float_value(uint64_t seed, lab_dist d, uint64_t i)
{
    const uint64_t r = lab_mix64(seed ^ 0xF10A7F10A7ull, i);
    const float u = (float)((int32_t)(r >> 40) - (1 << 23)) / (float)(1 << 23); /* [-1, 1) */
    switch (d) {
    case DIST_ONES:
        return 1.0f;
    case DIST_ALT:
        return (float)((int)(r % 100) + 1) / 64.0f * ((i % 2 == 0) ? 1.0f : -1.0f);
    case DIST_LARGE:
        return u * (float)(1 << 20);
    case DIST_POSITIVE: /* integers in [128, 255]: every sum exact up to 65,793 elements (2^24) */
        return (float)(128 + (int)(r % 128));
    case DIST_RANDOM:
        return ldexpf(u, (int)((r >> 8) % 17) - 8);
    default:
        return u;
    }
}

/* 1 when element i starts a segment: see ops.h. */
static int head_value(uint64_t seed, lab_dist d, uint64_t i)
{
    const uint64_t r = lab_mix64(seed ^ 0x5E6E5E6E5E6Eull, i);
    switch (d) {
    case DIST_ONES:
        return 1;
    case DIST_ALT:
        return 0;
    case DIST_SMALL:
        return r % 8 == 0;
    case DIST_LARGE:
        return r % 4096 == 0;
    default:
        return r % 64 == 0;
    }
}

size_t lab_csr_rows(size_t n, lab_dist d)
{
    switch (d) {
    case DIST_ONES:
        return 1;
    case DIST_SMALL:
        return n / 64 + 1;
    case DIST_LARGE:
        return 2 * n + 1;
    default:
        return n / 8 + 1;
    }
}

/* The row of nonzero i: see ops.h. */
static int csr_row(uint64_t seed, lab_dist d, uint64_t i, size_t rows)
{
    if (d == DIST_ONES)
        return 0;
    if (d == DIST_ALT)
        return (int)(i / 8);
    return (int)(lab_mix64(seed ^ 0xC5A0C5A0ull, i) % rows);
}

void lab_ops_fill(lab_op op, int *in, int *heads, size_t n, lab_dist d, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        if (op == LAB_OP_FADD) {
            in[i] = float_bits(float_value(seed, d, i));
        } else if (op == LAB_OP_CSR) {
            in[i] = csr_row(seed, d, i, lab_csr_rows(n, d));
        } else if (op == LAB_OP_SEG_ADD) {
            /* ones and alt shape the segments; their values are small ones, not all 1 or +-k */
            const lab_dist vd = (d == DIST_ONES || d == DIST_ALT) ? DIST_SMALL : d;
            in[i] = lab_input_value(seed, (int)vd, i);
            heads[i] = head_value(seed, d, i);
        } else {
            in[i] = lab_input_value(seed, (int)d, i);
        }
    }
}

/* ---- the float check ------------------------------------------------------------------------
 * Why lab_ops_reference's bound_d holds for every correct scan, whatever its order.
 *
 * The terms of out[i] are x_0..x_{k-1} (k = i + 1 inclusive, i exclusive). Every scan of the
 * course (serial, Kogge-Stone, Brent-Kung, tiles with carries, a look-back) only ever combines
 * two ADJACENT partial results, the left one first: the partial sum of x_a..x_{b-1} with that of
 * x_b..x_{c-1}. So out[i] is a binary tree with the k terms as its leaves, each once, in order,
 * and every internal node the float sum of a contiguous range x_a..x_{c-1}, 0 <= a < c <= k.
 * (Combinations with the identity, 0 + y, are exact and are not nodes.) It has k - 1 internal
 * nodes: m = k - 1 roundings.
 *
 * With the exact prefix sums P_0 = 0, P_1 = x_0, ..., P_k = x_0 + ... + x_{k-1}, a range's exact
 * sum is P_c - P_a, so it lies within R = max(P_0..P_k) - min(P_0..P_k) in magnitude. Write
 * node v's float value as its exact sum plus the roundings made inside its subtree:
 * v = exact(v) + sum of eta_w over the nodes w below and at v, where eta_w = fl(s_w) - s_w is the
 * rounding of the sum s_w that node w computes (the sum of its children's float values). Round to
 * nearest gives |eta_w| <= u |s_w| with u = 2^-24, and |s_w| <= |exact(w)| + (the roundings below
 * w) <= R + E, where E is the sum of all m |eta|. Adding up over the m nodes: E <= m u (R + E),
 * so E <= m u / (1 - m u) R = gamma(m) R, and the root's error is at most E. The operator need
 * not commute for this; it needs only the tree of adjacent ranges.
 *
 * Exact case: if every term is a multiple of 2^-e and R 2^e <= 2^24, every range's exact sum is
 * j 2^-e with |j| <= 2^24, a float (e <= 149, so even below the normal range). By induction from
 * the leaves every node's computed value is its exact sum (the sum of two exact children is a
 * float, so it does not round), and out[i] is exact in every order. The double prefix sums are
 * exact there too (multiples of 2^-e no larger than 2^24 of them), so want_d[i] is the answer.
 *
 * The bound is a worst case over orders and inputs: an order comes near it only on unlucky inputs
 * (roundings all of one sign on partial sums near R). On random inputs every order stays far below
 * (n = 2^20, small, seed 1: bound 54, serial loop 8.0e-3, lab 09's scan 4.3e-4). What it still
 * catches is an output too far from the exact sum for ANY order: a dropped term, a carry from the
 * wrong tile, a partial stored in a narrower type. */

int lab_float_exponent(float x)
{
    const uint32_t bits = (uint32_t)float_bits(x), field = (bits >> 23) & 0xFFu;
    const uint32_t sig = (bits & 0x7FFFFFu) | (field ? 1u << 23 : 0u);
    /* the significand's lowest set bit, as a power of two that a float holds exactly */
    const uint32_t low_exp = ((uint32_t)float_bits((float)(sig & (~sig + 1u))) >> 23) & 0xFFu;
    /* x = sig * 2^(field - 150) (normal) or sig * 2^-149 (subnormal) */
    const int q = (field ? (int)field - 150 : -149) + ((int)low_exp - 127);
    return -q;
}

int lab_float_exact(double range, int e)
{
    return ldexp(range, e) <= ldexp(1.0, 24);
}

double lab_float_bound(size_t terms, double range)
{
    if (terms < 2)
        return 0.0;
    const double mu = (double)(terms - 1) * ldexp(1.0, -24);
    if (mu >= 1.0)
        return INFINITY;
    const double gamma = mu / (1.0 - mu);
    return (gamma + (double)terms * ldexp(1.0, -51) * (1.0 + gamma)) * range;
}

/* bound_d of one element: see ops.h. e: the largest exponent of its nonzero terms, INT_MIN when
 * there are none (a sum of zeros is exact). */
static double element_bound(size_t terms, double range, int e)
{
    if (terms < 2 || e == INT_MIN || lab_float_exact(range, e))
        return 0.0;
    return lab_float_bound(terms, range);
}

void lab_ops_reference(lab_op op, scan_type type, const int *in, const int *heads, size_t n,
                       int *want, double *want_d, double *bound_d)
{
    uint32_t acc = 0;
    int32_t best = op == LAB_OP_MAX ? INT_MIN : INT_MAX;
    double sum = 0.0, p_max = 0.0, p_min = 0.0; /* P_k and the running max and min of P_0..P_k */
    int e = INT_MIN;
    for (size_t i = 0; i < n; i++) {
        const int x = in[i];
        if (op == LAB_OP_FADD) {
            const float xf = bits_float(x);
            if (type == SCAN_EXCLUSIVE) { /* terms x_0..x_{i-1}: before x_i joins */
                want_d[i] = sum;
                bound_d[i] = element_bound(i, p_max - p_min, e);
            }
            sum += (double)xf;
            p_max = sum > p_max ? sum : p_max;
            p_min = sum < p_min ? sum : p_min;
            if (xf != 0.0f) {
                const int ex = lab_float_exponent(xf);
                e = ex > e ? ex : e;
            }
            if (type != SCAN_EXCLUSIVE) {
                want_d[i] = sum;
                bound_d[i] = element_bound(i + 1, p_max - p_min, e);
            }
            continue;
        }
        if (op == LAB_OP_SEG_ADD && (i == 0 || heads[i]))
            acc = 0;
        const uint32_t acc_before = acc;
        const int32_t best_before = best;
        if (op == LAB_OP_MAX)
            best = x > best ? x : best;
        else if (op == LAB_OP_MIN)
            best = x < best ? x : best;
        else
            acc += (uint32_t)x;
        if (op == LAB_OP_MAX || op == LAB_OP_MIN)
            want[i] = type == SCAN_EXCLUSIVE ? best_before : best;
        else
            want[i] = (int)(type == SCAN_EXCLUSIVE ? acc_before : acc);
    }
}

/* v's text for a float element of `terms` terms out of its bound: what was expected and why. */
static void describe_float(lab_ops_verdict *v, size_t terms, double want, double bound, double got)
{
    snprintf(v->got, sizeof(v->got), "%.9g", got);
    if (bound == 0.0) {
        snprintf(v->expected, sizeof(v->expected), "%.9g exactly", want);
        if (terms == 0)
            snprintf(v->why, sizeof(v->why),
                     "(the identity: out[0] of an exclusive scan adds "
                     "no terms)");
        else
            snprintf(v->why, sizeof(v->why),
                     "(every range sum of in[0..%zu] is representable in float, so any order of "
                     "additions gives it)",
                     terms - 1);
    } else if (isinf(bound)) {
        snprintf(v->expected, sizeof(v->expected), "a finite value near %.9g", want);
        snprintf(v->why, sizeof(v->why),
                 "(past 2^24 additions some order keeps no correct bit, so only finiteness is "
                 "checked)");
    } else {
        snprintf(v->expected, sizeof(v->expected), "%.9g +- %.3g", want, bound);
        snprintf(v->why, sizeof(v->why),
                 "(the most that any order of its %zu additions can round: each adds at most "
                 "2^-24 of a partial sum, and no range of in[0..%zu] sums past %.3g)",
                 terms - 1, terms - 1, bound / lab_float_bound(terms, 1.0));
    }
}

void lab_ops_check(lab_op op, scan_type type, const int *got, const int *want, const double *want_d,
                   const double *bound_d, size_t n, lab_ops_verdict *v)
{
    v->bad = n;
    v->n_bad = 0;
    v->expected[0] = v->got[0] = v->why[0] = '\0';
    v->max_err = v->max_ratio = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (op != LAB_OP_FADD) {
            if (got[i] != want[i]) {
                v->bad = i;
                v->n_bad = 1;
                snprintf(v->expected, sizeof(v->expected), "%d", want[i]);
                snprintf(v->got, sizeof(v->got), "%d", got[i]);
                return;
            }
            continue;
        }
        const double g = (double)bits_float(got[i]), bound = bound_d[i];
        const double err = fabs(g - want_d[i]);
        if (!isfinite(g) || !(err <= bound)) { /* !(<=): a NaN bound fails too */
            if (v->n_bad++ == 0) {
                v->bad = i;
                describe_float(v, type == SCAN_EXCLUSIVE ? i : i + 1, want_d[i], bound, g);
            }
            continue;
        }
        if (err > v->max_err)
            v->max_err = err;
        if (bound > 0 && isfinite(bound) && err / bound > v->max_ratio)
            v->max_ratio = err / bound;
    }
}

/* ---- lab 10 ------------------------------------------------------------------------------- */

size_t lab_apps_out_len(lab_op op, size_t n, lab_dist d)
{
    return op == LAB_OP_CSR ? lab_csr_rows(n, d) + 1 : n;
}

/* One stable counting pass by the 16-bit digit at shift, from src to dst. */
static void count_pass(const uint32_t *src, uint32_t *dst, size_t n, int shift, size_t *count)
{
    memset(count, 0, ((1u << 16) + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        count[((src[i] >> shift) & 0xFFFFu) + 1]++;
    for (size_t k = 1; k <= (1u << 16); k++)
        count[k] += count[k - 1];
    for (size_t i = 0; i < n; i++)
        dst[count[(src[i] >> shift) & 0xFFFFu]++] = src[i];
}

/* Sorts keys[0..n) as unsigned: two stable counting passes of 16 bits. 0, or -1 without memory. */
static int sort_unsigned(int *keys, size_t n)
{
    uint32_t *b = malloc((n ? n : 1) * sizeof(uint32_t));
    size_t *count = malloc(((1u << 16) + 1) * sizeof(size_t));
    if (b && count) {
        count_pass((const uint32_t *)keys, b, n, 0, count);
        count_pass(b, (uint32_t *)keys, n, 16, count);
    }
    const int ok = b && count;
    free(b);
    free(count);
    return ok ? 0 : -1;
}

size_t lab_apps_reference(lab_op op, const int *in, size_t n, lab_dist d, int *want)
{
    size_t k = 0;
    switch (op) {
    case LAB_OP_COMPACT:
        for (size_t i = 0; i < n; i++)
            if (APPS_KEEP(in[i]))
                want[k++] = in[i];
        return k;
    case LAB_OP_SORT:
        memcpy(want, in, n * sizeof(int));
        return sort_unsigned(want, n) == 0 ? n : (size_t)-1;
    case LAB_OP_CSR: {
        const size_t rows = lab_csr_rows(n, d);
        memset(want, 0, (rows + 1) * sizeof(int));
        for (size_t i = 0; i < n; i++)
            want[(size_t)in[i] + 1]++;
        for (size_t r = 1; r <= rows; r++)
            want[r] += want[r - 1];
        return rows + 1;
    }
    default:
        return 0;
    }
}

int lab_sort_matches(const int *in, const int *got, size_t n)
{
    uint64_t a1 = 0, a2 = 0, b1 = 0, b2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (uint32_t)got[i] < (uint32_t)got[i - 1])
            return 0;
        a1 += lab_mix64(LAB_SORT_SALT_A, (uint32_t)in[i]);
        a2 += lab_mix64(LAB_SORT_SALT_B, (uint32_t)in[i]);
        b1 += lab_mix64(LAB_SORT_SALT_A, (uint32_t)got[i]);
        b2 += lab_mix64(LAB_SORT_SALT_B, (uint32_t)got[i]);
    }
    return a1 == b1 && a2 == b2;
}

/* Count of i < n with keys[i] == key (as unsigned). */
static size_t count_key(const int *keys, size_t n, int key)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += keys[i] == key;
    return c;
}

void lab_apps_check(lab_op op, const int *in, size_t n, const int *got, size_t got_count,
                    const int *want, size_t want_len, lab_apps_verdict *v)
{
    v->ok = 1;
    v->bad = 0;
    v->message[0] = '\0';
    if (op == LAB_OP_COMPACT && got_count != want_len) {
        v->ok = 0;
        v->bad = got_count;
        snprintf(v->message, sizeof(v->message),
                 "*d_count: expected %zu elements kept (x > 0), got %zu%s", want_len, got_count,
                 got_count == (size_t)-1 ? " (never written)"
                 : got_count + 1 == want_len || got_count == want_len + 1
                     ? " (off by one: an inclusive scan's last element is the count, an "
                       "exclusive scan's is not)"
                     : "");
        return;
    }
    const size_t bad = lab_first_mismatch(got, want, want_len);
    if (bad < want_len) {
        const char *hint = lab_wrong_value_hint(got[bad]); /* " (never written)", or "" */
        v->ok = 0;
        v->bad = bad;
        if (op == LAB_OP_COMPACT) {
            /* where the expected element came from in the input */
            size_t src = 0, seen = 0;
            for (; src < n; src++)
                if (APPS_KEEP(in[src]) && seen++ == bad)
                    break;
            snprintf(v->message, sizeof(v->message),
                     "out[%zu] expected %d (in[%zu], the kept element number %zu), got %d%s", bad,
                     want[bad], src, bad, got[bad],
                     *hint                                  ? hint
                     : bad > 0 && got[bad] == want[bad - 1] ? " (the element before it again)"
                     : bad + 1 < want_len && got[bad] == want[bad + 1]
                         ? " (the element after it: the positions are one off)"
                         : "");
        } else if (op == LAB_OP_SORT) {
            const size_t in_count = count_key(in, n, got[bad]);
            snprintf(v->message, sizeof(v->message),
                     "out[%zu] expected %u, got %u (ascending unsigned order)%s", bad,
                     (unsigned)want[bad], (unsigned)got[bad],
                     in_count == 0 && *hint ? hint
                     : in_count == 0        ? ": the input has no such key (one was overwritten)"
                     : bad > 0 && (unsigned)got[bad] < (unsigned)got[bad - 1]
                         ? ": smaller than out[i-1], so a pass misplaced it"
                         : ": a key out of place (a pass that is not stable, or a digit's run "
                           "starting at the wrong place)");
        } else {
            snprintf(v->message, sizeof(v->message),
                     "offsets[%zu] expected %d (the nonzeros in rows < %zu), got %d%s", bad,
                     want[bad], bad, got[bad],
                     *hint ? hint
                     : bad > 0 && got[bad] == want[bad - 1]
                         ? " (offsets[r - 1]'s value: an exclusive scan where the inclusive one "
                           "belongs, or offsets[0] not 0)"
                         : "");
        }
        return;
    }
    if (op == LAB_OP_COMPACT) {
        unsigned char poison[sizeof(int)];
        memset(poison, LAB_POISON_BYTE, sizeof(poison));
        for (size_t i = want_len; i < n; i++)
            if (memcmp(&got[i], poison, sizeof(int)) != 0) {
                v->ok = 0;
                v->bad = i;
                snprintf(v->message, sizeof(v->message),
                         "out[%zu] changed, past the %zu kept elements: only out[0..count) may be "
                         "written (a rejected element was stored)",
                         i, want_len);
                return;
            }
    }
}
