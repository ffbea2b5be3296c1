/* ops.h — scans under other operators (lab 09) on the host: inputs and segment heads, the
 * reference, and the check of an output. Pure C, no CUDA, so the tests exercise it anywhere.
 *
 * Floats travel through the labs' int pointers: element i of a LAB_OP_FADD input is the bit
 * pattern of a float (memcpy, never a conversion). Their reference is computed in double, and an
 * output passes when every element is within the bound of lab_float_bound: the most rounding
 * error a float sum of those terms can carry in ANY order of additions.
 */
#ifndef SCAN_OPS_H
#define SCAN_OPS_H

#include "contract.h"
#include "lab.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "add", "max", "min", "fadd", "seg_add"; "?" out of range. */
const char *lab_op_name(lab_op op);

/* Fills in[0..n) for op under distribution d and seed, and, for LAB_OP_SEG_ADD, heads[0..n)
 * with 0/1 segment heads (heads may be NULL otherwise). Element i depends on (seed, d, i) alone.
 * Floats: small and random uniform in [-1, 1) with 24 random bits, random scaled by 2^e for a
 * random e in [-8, 8]; ones all 1.0; alt +k/64, -k/64, ...; large uniform in [-2^20, 2^20).
 * Segment heads: ones every element (segments of length 1), alt none (one segment), small one
 * in 8 on average, random one in 64, large one in 4096 (segments across tiles). */
void lab_ops_fill(lab_op op, int *in, int *heads, size_t n, lab_dist d, uint64_t seed);

/* The reference, serial: want[i] for the int operators (wrapping, as the GPU's), and for
 * LAB_OP_FADD want_d[i], the exact-as-double prefix sum, and abs_d[i], the sum of |x_j| over the
 * same terms (want_d and abs_d may be NULL for the int operators). */
void lab_ops_reference(lab_op op, scan_type type, const int *in, const int *heads, size_t n,
                       int *want, double *want_d, double *abs_d);

/* The largest error a float sum of `terms` numbers whose magnitudes add up to abs_sum can have,
 * whatever the order of its terms - 1 additions: gamma(terms - 1) * abs_sum, with
 * gamma(k) = k u / (1 - k u) and u = 2^-24 (Higham, "Accuracy and Stability of Numerical
 * Algorithms", ch. 4). Infinity once (terms - 1) u >= 1: past 2^24 terms a float sum need not
 * hold one correct bit. */
double lab_float_bound(size_t terms, double abs_sum);

/* What lab_ops_check found: the first wrong index (n when none), its expected and got values as
 * text, and for floats the largest error and the largest error / bound over all elements. */
typedef struct {
    size_t bad;
    char expected[48], got[48];
    double max_err, max_ratio;
} lab_ops_verdict;

/* Checks got[0..n) against the reference (lab_ops_reference's arrays). Int operators: exact.
 * LAB_OP_FADD: every element finite and within lab_float_bound of want_d. */
void lab_ops_check(lab_op op, scan_type type, const int *got, const int *want, const double *want_d,
                   const double *abs_d, size_t n, lab_ops_verdict *v);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_OPS_H */
