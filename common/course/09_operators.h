/* common/course/09_operators.h — lab 09's contract with the course: what labs/09_operators/scan.cu
 * defines.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/09_operators.c). One
 * generic scan, five operators, each an entry point (lab.h's lab_scan_fn, or lab_seg_fn for the
 * segmented one): inclusive scans of d_in[0..n) into d_out[0..n) on the device, d_temp holding
 * ops_temp_bytes(n) bytes, zero-filled before the first call. Floats travel as their bit patterns
 * in the int buffers.
 *
 * Each operator has two entry points: ops_scan_X, the variant the grader times (the reference:
 * a single-pass look-back; a student's: the two-pass scan the handout asks for, or the
 * single-pass one of its "going further"), and ops_scan_X_two_pass, the reduce-then-scan (the
 * reference keeps both to compare them). scan.cu need not define the *_two_pass ones: the
 * descriptor's weak definitions call ops_scan_X (the skeleton's, and any older file's, design).
 */
#ifndef LABS_09_OPERATORS_H
#define LABS_09_OPERATORS_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPS_THREADS 64                     /* threads per block */
#define OPS_ITEMS 32                       /* consecutive elements per thread */
#define OPS_TILE (OPS_THREADS * OPS_ITEMS) /* 2048 elements per block */

lab_result ops_scan_add(const int *d_in, int *d_out, size_t n, void *d_temp);  /* int +, wraps */
lab_result ops_scan_max(const int *d_in, int *d_out, size_t n, void *d_temp);  /* int max */
lab_result ops_scan_min(const int *d_in, int *d_out, size_t n, void *d_temp);  /* int min */
lab_result ops_scan_fadd(const int *d_in, int *d_out, size_t n, void *d_temp); /* float + */
/* int +, restarting at every i with d_heads[i] != 0 (and at 0) */
lab_result ops_scan_segmented(const int *d_in, const int *d_heads, int *d_out, size_t n,
                              void *d_temp);

/* The same scans by the two-pass reduce-then-scan (variants add_two_pass, ...). */
lab_result ops_scan_add_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result ops_scan_max_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result ops_scan_min_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result ops_scan_fadd_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result ops_scan_segmented_two_pass(const int *d_in, const int *d_heads, int *d_out, size_t n,
                                       void *d_temp);

/* Scratch of every variant (lab_temp_fn), defined by scan.cu for the scans it runs: the two-pass
 * scan's tile partials of every level (8 bytes each), and a single-pass scan's state. */
size_t ops_temp_bytes(size_t n);

/* A single-pass scan.cu's tiles, in elements (the reference: 6144, and 3072 for the segmented
 * scan): `const size_t ops_lookback_tile = ...;`. The grader reads them (`scan --describe`) to test
 * sizes that are multiples of each tile and one off them. The descriptor refers to them weakly: a
 * scan.cu without them (the two-pass skeleton) still builds. */
extern const size_t ops_lookback_tile;
extern const size_t ops_lookback_seg_tile;

#ifdef __cplusplus
}
#endif

#endif /* LABS_09_OPERATORS_H */
