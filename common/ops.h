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

/* ---- lab 10: the applications (LAB_OP_COMPACT, LAB_OP_SORT, LAB_OP_CSR) ----------------------
 * Inputs: lab_ops_fill. Compaction and sorting take lab_input_value's ints (sorting reads them as
 * unsigned keys: small has many equal keys, ones all equal ones); the CSR rows, each in
 * [0, lab_csr_rows(n, d)), are uniform random (small: n/64 + 1 rows of ~64 nonzeros; random:
 * n/8 + 1 rows; large: 2n + 1 rows, most of them empty), all 0 (ones), or sorted, 8 per row (alt).
 */

/* The number of rows of a CSR input of n nonzeros under distribution d (at least 1). */
size_t lab_csr_rows(size_t n, lab_dist d);

/* The length of op's output for an input of n (CSR: its rows): n, or n_rows + 1 for CSR. */
size_t lab_apps_out_len(lab_op op, size_t n, lab_dist d);

/* The expected output of an application: want[0..return value), the kept elements (compaction),
 * the keys sorted as unsigned, or the n_rows + 1 row offsets. (size_t)-1 when the host has no
 * memory for the sort's buffer. */
size_t lab_apps_reference(lab_op op, const int *in, size_t n, lab_dist d, int *want);

/* 1 when got[0..n) is in[0..n) sorted as unsigned: ascending, and the same keys (an
 * order-independent fingerprint of the multiset: two sums of 64-bit hashes of the keys, and
 * their count). O(n), no sort: the harness checks every sorting call with it and builds the
 * sorted reference only to describe a failure. */
int lab_sort_matches(const int *in, const int *got, size_t n);

/* What lab_apps_check found: ok, else a one-line message (what is wrong, where, and why it may be).
 */
typedef struct {
    int ok;
    size_t bad; /* the first wrong output index (or the count's) */
    char message[400];
} lab_apps_verdict;

/* Checks an application's output: got[0..out_len) (out_len: lab_apps_out_len) against
 * want[0..want_len) (lab_apps_reference); for compaction also the count the lab wrote (got_count)
 * and that got[want_len..n) still holds the poison bytes it held before the call. */
void lab_apps_check(lab_op op, const int *in, size_t n, const int *got, size_t got_count,
                    const int *want, size_t want_len, lab_apps_verdict *v);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_OPS_H */
