/* common/course/04_brent_kung.h — lab 04's contract with the course: what
 * labs/04_brent_kung/scan.cu defines, and the tile it works on.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/04_brent_kung.c:
 * `LAB`, its id, variants, tile and sizes). scan.cu includes this header and defines the entry
 * point declared below; the harness, the tests and the grader reach the student's code through
 * the descriptor, whose tile is BK_TILE from here.
 */
#ifndef LABS_04_BRENT_KUNG_H
#define LABS_04_BRENT_KUNG_H

#include "lab.h"

/* The tile: two elements per thread. To experiment with another size, build with
 * -DBK_THREADS=... on both compile lines, scan.cu's and the descriptor's, so that LAB.tile stays
 * the tile the kernel scans. */
#ifndef BK_THREADS
#define BK_THREADS 64 /* threads per block (a multiple of 32) */
#endif
#define BK_TILE (2 * BK_THREADS) /* elements per tile: a power of two */

#ifdef __cplusplus
static_assert((BK_TILE & (BK_TILE - 1)) == 0, "BK_TILE must be a power of two");
static_assert(BK_THREADS % 32 == 0, "BK_THREADS must be a whole number of warps");

extern "C" {
#endif

/* The variant (lab_tile_fn): scans every BK_TILE-element tile of d_in[0..n) into d_out and
 * writes d_tile_sums[0 .. ceil(n / BK_TILE)). */
lab_result brent_kung_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* LABS_04_BRENT_KUNG_H */
