/* common/course/05_blelloch.h — lab 05's contract with the course: what labs/05_blelloch/scan.cu
 * defines, and the tile it works on.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/05_blelloch.c:
 * `LAB`, its id, variants, tile and sizes). scan.cu includes this header and defines the entry
 * points declared below; the harness, the tests and the grader reach the student's code through
 * the descriptor, whose tile is BL_TILE from here.
 */
#ifndef LABS_05_BLELLOCH_H
#define LABS_05_BLELLOCH_H

#include "lab.h"

/* The tile: two elements per thread. To experiment with another size, build with
 * -DBL_THREADS=... on both compile lines, scan.cu's and the descriptor's, so that LAB.tile stays
 * the tile the kernel scans. */
#ifndef BL_THREADS
#define BL_THREADS 128 /* threads per block (a multiple of 32) */
#endif
#define BL_TILE (2 * BL_THREADS) /* elements per tile: a power of two */

#ifdef __cplusplus
static_assert((BL_TILE & (BL_TILE - 1)) == 0, "BL_TILE must be a power of two");
static_assert(BL_THREADS % 32 == 0, "BL_THREADS must be a whole number of warps");

extern "C" {
#endif

/* The two variants (lab_tile_fn), one launcher in two layouts: scan every BL_TILE-element tile
 * of d_in[0..n) into d_out (exclusive) and write d_tile_sums[0 .. ceil(n / BL_TILE)). */
lab_result blelloch_padded_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result blelloch_plain_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* LABS_05_BLELLOCH_H */
