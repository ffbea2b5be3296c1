/* common/course/06_coarsened.h — lab 06's contract with the course: what labs/06_coarsened/scan.cu
 * defines, and the tile it works on.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/06_coarsened.c:
 * `LAB`, its id, variants, tile and sizes). scan.cu includes this header and defines the entry
 * points declared below; the harness, the tests and the grader reach the student's code through
 * the descriptor, whose tile is TILE from here.
 */
#ifndef LABS_06_COARSENED_H
#define LABS_06_COARSENED_H

#include "lab.h"

#define TILE 2048 /* elements per tile, the same for every variant: BLOCK x C */

#ifdef __cplusplus
extern "C" {
#endif

/* The variants (lab_tile_fn), one per split of the tile into BLOCK threads of C elements (the
 * coarsening sweep): each scans every TILE-element tile of d_in[0..n) into d_out and writes
 * d_tile_sums[0 .. ceil(n / TILE)). Named c<C>_b<BLOCK>. */
lab_result scan_tiles_c8_b256(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result scan_tiles_c2_b1024(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result scan_tiles_c4_b512(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result scan_tiles_c16_b128(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result scan_tiles_c32_b64(const int *d_in, int *d_out, int *d_tile_sums, size_t n);
lab_result scan_tiles_c64_b32(const int *d_in, int *d_out, int *d_tile_sums, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* LABS_06_COARSENED_H */
