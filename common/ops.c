/* ops.c — lab 09's operators on the host (see ops.h). */
#include "ops.h"
#include "gen.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const OP_NAMES[] = {"add", "max", "min", "fadd", "seg_add"};

const char *lab_op_name(lab_op op)
{
    return (op >= LAB_OP_ADD && op <= LAB_OP_SEG_ADD) ? OP_NAMES[op] : "?";
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

void lab_ops_fill(lab_op op, int *in, int *heads, size_t n, lab_dist d, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        if (op == LAB_OP_FADD) {
            in[i] = float_bits(float_value(seed, d, i));
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

void lab_ops_reference(lab_op op, scan_type type, const int *in, const int *heads, size_t n,
                       int *want, double *want_d, double *abs_d)
{
    uint32_t acc = 0;
    int32_t best = op == LAB_OP_MAX ? INT_MIN : INT_MAX;
    double sum = 0.0, abs_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const int x = in[i];
        if (op == LAB_OP_FADD) {
            const double before = sum, abs_before = abs_sum;
            sum += (double)bits_float(x);
            abs_sum += fabs((double)bits_float(x));
            want_d[i] = type == SCAN_EXCLUSIVE ? before : sum;
            abs_d[i] = type == SCAN_EXCLUSIVE ? abs_before : abs_sum;
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

double lab_float_bound(size_t terms, double abs_sum)
{
    const double u = ldexp(1.0, -24);
    const double ku = terms > 0 ? (double)(terms - 1) * u : 0.0;
    return ku >= 1.0 ? INFINITY : ku / (1.0 - ku) * abs_sum;
}

void lab_ops_check(lab_op op, scan_type type, const int *got, const int *want, const double *want_d,
                   const double *abs_d, size_t n, lab_ops_verdict *v)
{
    v->bad = n;
    v->expected[0] = v->got[0] = '\0';
    v->max_err = v->max_ratio = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (op != LAB_OP_FADD) {
            if (got[i] != want[i]) {
                v->bad = i;
                snprintf(v->expected, sizeof(v->expected), "%d", want[i]);
                snprintf(v->got, sizeof(v->got), "%d", got[i]);
                return;
            }
            continue;
        }
        const double g = (double)bits_float(got[i]);
        const size_t terms = type == SCAN_EXCLUSIVE ? i : i + 1;
        const double err = fabs(g - want_d[i]), bound = lab_float_bound(terms, abs_d[i]);
        if (!isfinite(g) || err > bound) {
            if (v->bad == n) {
                v->bad = i;
                snprintf(v->expected, sizeof(v->expected), "%.9g +- %.3g", want_d[i], bound);
                snprintf(v->got, sizeof(v->got), "%.9g", g);
            }
            continue;
        }
        if (err > v->max_err)
            v->max_err = err;
        if (bound > 0 && isfinite(bound) && err / bound > v->max_ratio)
            v->max_ratio = err / bound;
    }
}
