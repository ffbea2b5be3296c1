/* common/course/10_applications.h — lab 10's contract with the course: what
 * labs/10_applications/scan.cu defines, and the scan it is built on.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/10_applications.c).
 * Lab 10 uses a scan instead of writing one: apps_scan is YOUR lab 08 scan (or your lab 07 scan
 * while lab 08 returns LAB_NOT_IMPLEMENTED), linked into lab 10's binaries; never CUB's. Every
 * entry point works on device arrays on the default stream, like labs 07 and 08.
 */
#ifndef LABS_10_APPLICATIONS_H
#define LABS_10_APPLICATIONS_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the scan lab 10 is built on (defined by the course: common/course/10_applications.c) ------
 */

/* Inclusive int + scan of d_in[0..n) into d_out[0..n) (wrapping), by your lab 08 scan, or your lab
 * 07 one (its first variant) while lab 08 is not written. d_temp: apps_scan_temp_bytes(n) bytes of
 * device memory, any contents (apps_scan zeroes what the scan needs). d_in and d_out may be any
 * 4-byte aligned addresses, not the same one. Returns LAB_NOT_IMPLEMENTED when neither lab is. */
lab_result apps_scan(const int *d_in, int *d_out, size_t n, void *d_temp);
size_t apps_scan_temp_bytes(size_t n);

/* Which lab apps_scan ran on its last call: "08_decoupled_lookback", "07_hierarchical", "none"
 * (both returned LAB_NOT_IMPLEMENTED), or NULL before the first call. */
const char *apps_scan_base(void);

/* ---- what scan.cu defines ------------------------------------------------------------------- */

#define APPS_THREADS 256                      /* threads per block of the tile kernels */
#define APPS_ITEMS 8                          /* elements per thread */
#define APPS_TILE (APPS_THREADS * APPS_ITEMS) /* 2048 elements per tile */
#define APPS_RADIX_BITS 4                     /* radix sort: bits per digit */
#define APPS_RADIX (1 << APPS_RADIX_BITS)     /* 16 digit values */

/* The predicate of the compaction: keep x when x > 0. */
#define APPS_KEEP(x) ((x) > 0)

/* Variant "compact" (lab_compact_fn): the x > 0 of d_in[0..n) to d_out[0..*d_count), in order.
 * The handout's design (the skeleton's): count every tile, apps_scan the counts, scatter. The
 * reference's: one fused kernel whose look-back carries the count (its "going further").
 * Variant "compact_on_scan": the same by count, apps_scan, scatter (the reference keeps both to
 * compare them; where scan.cu does not define it, the descriptor's weak one calls apps_compact). */
lab_result apps_compact(const int *d_in, int *d_out, size_t n, size_t *d_count, void *d_temp);
lab_result apps_compact_on_scan(const int *d_in, int *d_out, size_t n, size_t *d_count,
                                void *d_temp);
size_t apps_compact_temp_bytes(size_t n);

/* Variants "radix_sort" and "split_sort" (lab_scan_fn): d_in[0..n) read as unsigned 32-bit keys,
 * written ascending to d_out[0..n). radix (the handout's design): 8 passes of 4-bit digits with
 * per-tile histograms scanned by apps_scan; the reference's: a onesweep sort, 4 passes of 8-bit
 * digits, each one kernel with a look-back (its "going further"); "radix_sort_on_scan": the 4-bit
 * sort on apps_scan (where scan.cu does not define it: apps_radix_sort, the descriptor's weak one).
 * split: 32 passes of a 1-bit split, one scan of n flags each. */
lab_result apps_radix_sort(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result apps_radix_sort_on_scan(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result apps_split_sort(const int *d_in, int *d_out, size_t n, void *d_temp);
size_t apps_sort_temp_bytes(size_t n);

/* A scan.cu with single-pass kernels of its own (the reference: the fused compaction and the
 * onesweep sort) names their tile, in elements: `const size_t apps_single_pass_tile = ...;`. The
 * grader reads it (`scan --describe`) to test sizes that are multiples of it and one off them. The
 * descriptor refers to it weakly: a scan.cu without it (the skeleton) still builds. */
extern const size_t apps_single_pass_tile;

/* Variant "csr" (lab_csr_fn): the row offsets of n nonzeros whose rows are d_rows[0..n). d_temp:
 * apps_csr_temp_bytes(n_rows + 1) bytes. */
lab_result apps_csr_offsets(const int *d_rows, int *d_offsets, size_t n, size_t n_rows,
                            void *d_temp);
size_t apps_csr_temp_bytes(size_t n);

/* The phases, which the variants call and the course's per-phase tests call alone (d_temp: that
 * variant's scratch):
 *   one stable pass of the radix sort: d_in sorted by the digit (key >> shift) & (APPS_RADIX - 1),
 *     keys of equal digit in their input order;
 *   one 1-bit split: the keys whose bit `bit` is 0, in order, then those whose bit is 1. */
lab_result apps_radix_pass(const int *d_in, int *d_out, size_t n, int shift, void *d_temp);
lab_result apps_split_pass(const int *d_in, int *d_out, size_t n, int bit, void *d_temp);

#ifdef __cplusplus
}
#endif

#endif /* LABS_10_APPLICATIONS_H */
