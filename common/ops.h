/* ops.h — scans under other operators (lab 09) on the host: inputs and segment heads, the
 * reference, and the check of an output. Pure C, no CUDA, so the tests exercise it anywhere.
 *
 * Floats travel through the labs' int pointers: element i of a LAB_OP_FADD input is the bit
 * pattern of a float (memcpy, never a conversion). Their reference is computed in double, and an
 * output passes when every element is within its bound (lab_ops_reference's bound_d): the most
 * rounding error that ANY correct scan's order of additions can leave there, and 0 (bit-exact)
 * where every order gives the same float. Why, in short (ops.c says it in full):
 *
 * Every scan of the course computes out[i] as a binary tree whose leaves are the terms
 * x_0..x_{k-1} (k = i + 1 inclusive, i exclusive), each once and in index order, and whose every
 * internal node is the float sum of a contiguous range of them. With P_0 = 0, P_j = x_0 + ... +
 * x_{j-1} (exact), the exact value of any range is P_b - P_a, so no node's exact value exceeds
 * R_i = max(P_0..P_k) - min(P_0..P_k) in magnitude. Each of the k - 1 roundings adds at most u
 * (2^-24) times the magnitude of the sum it rounds, which is at most R_i plus the errors already
 * made, so the total error E obeys E <= (k - 1) u (R_i + E): E <= gamma(k - 1) R_i, with
 * gamma(m) = m u / (1 - m u). And when every term is a multiple of 2^-e and R_i 2^e <= 2^24,
 * every node's exact value is a float, no rounding happens, and every order gives the exact sum.
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
 * random e in [-8, 8]; ones all 1.0; alt +k/64, -k/64, ...; large uniform in [-2^20, 2^20);
 * positive the integers 128 to 255: up to 65,793 elements every range sum is an integer of at
 * most 2^24, so the check is exact, and past about 44,000 the prefix sums need all of float's 24
 * significant bits (a carry kept narrower is wrong there, at CPU mode's sizes too).
 * Segment heads: ones every element (segments of length 1), alt none (one segment), small one
 * in 8 on average, random one in 64, large one in 4096 (segments across tiles). */
void lab_ops_fill(lab_op op, int *in, int *heads, size_t n, lab_dist d, uint64_t seed);

/* The reference, serial: want[i] for the int operators (wrapping, as the GPU's), and for
 * LAB_OP_FADD want_d[i], the prefix sum in double, and bound_d[i], the error out[i] may have:
 * 0 where lab_float_exact holds for its terms (every order gives want_d[i]), else
 * lab_float_bound(terms, R_i), R_i the largest |sum| of a contiguous range of its terms (want_d
 * and bound_d may be NULL for the int operators). O(n): R_i is the running max - min of the
 * prefix sums. */
void lab_ops_reference(lab_op op, scan_type type, const int *in, const int *heads, size_t n,
                       int *want, double *want_d, double *bound_d);

/* The largest error a float scan element of `terms` terms can have in any order of its
 * terms - 1 additions, when no contiguous range of the terms sums to more than `range` in
 * magnitude: gamma(terms - 1) * range, gamma(m) = m u / (1 - m u), u = 2^-24, plus a margin of
 * terms * 2^-51 * (1 + gamma) * range for the double reference's own rounding (of want_d and of
 * range: at most terms * 2^-53 relative each). 0 for 0 or 1 terms; infinity once
 * (terms - 1) u >= 1: past 2^24 additions some order need not keep one correct bit. */
double lab_float_bound(size_t terms, double range);

/* The smallest e such that x * 2^e is an integer (x a finite nonzero float): x's lowest set bit
 * is worth 2^-e. 0 for 1.0f, 6 for 3/64, -4 for 48. */
int lab_float_exponent(float x);

/* 1 when every order of additions gives a float scan element exactly: its terms are all multiples
 * of 2^-e (e: the largest lab_float_exponent of its nonzero terms) and range * 2^e <= 2^24, so
 * the exact sum of every contiguous range is an integer multiple of 2^-e no larger than 2^24 of
 * them, which a float holds, and no addition rounds. */
int lab_float_exact(double range, int e);

/* What lab_ops_check found: the first wrong index (n when none) and how many are wrong, its
 * expected and got values as text, why that is expected (floats: "(every range sum of ... is
 * representable ...)" or what the bound is made of; "" for ints), and for floats over the
 * elements that passed the largest error and the largest error / bound (0 where the bound is 0,
 * as the error is; elements with an infinite bound are left out of the ratio). */
typedef struct {
    size_t bad, n_bad;
    char expected[48], got[48], why[200];
    double max_err, max_ratio;
} lab_ops_verdict;

/* Checks got[0..n) against the reference (lab_ops_reference's arrays). Int operators: exact.
 * LAB_OP_FADD: every element finite and within bound_d of want_d (equal where bound_d is 0). */
void lab_ops_check(lab_op op, scan_type type, const int *got, const int *want, const double *want_d,
                   const double *bound_d, size_t n, lab_ops_verdict *v);

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

/* The two salts of the sort check's key hashes (lab_sort_matches; verify.cu's GPU check). */
#define LAB_SORT_SALT_A 0x5011AB1Eull
#define LAB_SORT_SALT_B 0xF1A9E2ull

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
