/* common/course/08_decoupled_lookback.h — lab 08's contract with the course: what
 * labs/08_decoupled_lookback/scan.cu defines.
 *
 * Owned by the course, like the lab's descriptor built from it
 * (common/course/08_decoupled_lookback.c: `LAB`, its id, variants and sizes). scan.cu includes this
 * header and defines the entry points declared below; the harness, the tests and the grader reach
 * the student's code through the descriptor. The lab's tile is its own business (the
 * descriptor's tile is 0: the lab carries between its tiles itself).
 */
#ifndef LABS_08_DECOUPLED_LOOKBACK_H
#define LABS_08_DECOUPLED_LOOKBACK_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Variant "lookback" (lab_scan_fn): inclusive scan of d_in[0..n) into d_out[0..n) in one pass,
 * d_temp holding lookback_temp_bytes(n) bytes, zero-filled before the first call. */
lab_result lookback_scan(const int *d_in, int *d_out, size_t n, void *d_temp);

/* Its scratch size (lab_temp_fn). */
size_t lookback_temp_bytes(size_t n);

/* The elements scan.cu's kernels give one block (its TILE_ITEMS), which scan.cu defines next to the
 * macro: `const size_t lookback_tile = TILE_ITEMS;`. The grader reads it (`scan --describe`) to
 * test sizes that are multiples of your tile and one off them; keep it equal to the tile you use.
 * The descriptor refers to it weakly: a scan.cu without it still builds, and is tested at the usual
 * sizes only. */
extern const size_t lookback_tile;

#ifdef __cplusplus
}
#endif

#endif /* LABS_08_DECOUPLED_LOOKBACK_H */
