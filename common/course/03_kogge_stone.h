/* common/course/03_kogge_stone.h — lab 03's contract with the course: what
 * labs/03_kogge_stone/scan.cu defines, and the tile it works on.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/03_kogge_stone.c:
 * `LAB`, its id, variants, tile and sizes). scan.cu includes this header and defines the entry
 * points declared below; the harness, the tests and the grader reach the student's code through
 * the descriptor, whose tile is KS_TILE from here.
 */
#ifndef LABS_03_KOGGE_STONE_H
#define LABS_03_KOGGE_STONE_H

#include "lab.h"

/* The tile: KS_THREADS threads per block, each owning KS_ITEMS positions. To experiment with
 * other sizes, build with -DKS_THREADS=... -DKS_ITEMS=... on both compile lines, scan.cu's and
 * the descriptor's, so that LAB.tile stays the tile the kernels scan. */
#ifndef KS_THREADS
#define KS_THREADS 128 /* threads per block (a multiple of 32) */
#endif
#ifndef KS_ITEMS
#define KS_ITEMS 4 /* positions per thread */
#endif
#define KS_TILE (KS_THREADS * KS_ITEMS) /* elements per tile: a power of two */

#ifdef __cplusplus
static_assert((KS_TILE & (KS_TILE - 1)) == 0, "KS_TILE must be a power of two");
static_assert(KS_THREADS % 32 == 0, "KS_THREADS must be a whole number of warps");

extern "C" {
#endif

/* The two variants (lab_tile_fn): scan every KS_TILE-element tile of d_in[0..n) into d_out and
 * write d_tile_sums[0 .. ceil(n / KS_TILE)). */
lab_result ks_double_buffer_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result ks_two_barrier_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* LABS_03_KOGGE_STONE_H */
