/* common/course/09_operators.h — lab 09's contract with the course: what labs/09_operators/scan.cu
 * defines.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/09_operators.c). One
 * generic scan, five operators, each an entry point (lab.h's lab_scan_fn, or lab_seg_fn for the
 * segmented one): inclusive scans of d_in[0..n) into d_out[0..n) on the device, d_temp holding
 * ops_temp_bytes(n) bytes. Floats travel as their bit patterns in the int buffers.
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

/* Scratch of every variant (lab_temp_fn): the tile partials of every level, 8 bytes each. */
size_t ops_temp_bytes(size_t n);

#ifdef __cplusplus
}
#endif

#endif /* LABS_09_OPERATORS_H */
