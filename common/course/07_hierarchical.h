/* common/course/07_hierarchical.h — lab 07's contract with the course: what
 * labs/07_hierarchical/scan.cu defines.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/07_hierarchical.c:
 * `LAB`, its id, variants and sizes). scan.cu includes this header and defines the entry points
 * declared below; the harness, the tests and the grader reach the student's code through the
 * descriptor. The lab's tile is its own business (the descriptor's tile is 0: the lab carries
 * between its tiles itself).
 */
#ifndef LABS_07_HIERARCHICAL_H
#define LABS_07_HIERARCHICAL_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two variants (lab_scan_fn): inclusive scan of d_in[0..n) into d_out[0..n) on the device,
 * d_temp holding hier_temp_bytes(n) bytes of scratch. */
lab_result scan_then_propagate(const int *d_in, int *d_out, size_t n, void *d_temp);
lab_result reduce_then_scan(const int *d_in, int *d_out, size_t n, void *d_temp);

/* Both variants' scratch size (lab_temp_fn): bytes for every level of tile totals. */
size_t hier_temp_bytes(size_t n);

/* The phases' launchers, which the variants call and the course's per-phase tests
 * (tests/lab_07_phases.c) call on their own; n > 0. launch_tile_scan scans every tile of
 * d_in[0..n) into d_out, writing each tile's total to d_tile_sums and starting tile t > 0 from
 * d_carries[t - 1] (either may be NULL: not wanted); launch_tile_reduce writes only the tiles'
 * totals; launch_add_back adds d_carries[t - 1] to every element of tile t >= 1 of d_out. */
lab_result launch_tile_scan(const int *d_in, int *d_out, int *d_tile_sums, const int *d_carries,
                            size_t n);
lab_result launch_tile_reduce(const int *d_in, int *d_tile_sums, size_t n);
lab_result launch_add_back(int *d_out, const int *d_carries, size_t n);

/* The elements scan.cu's kernels give one block (its TILE), which scan.cu defines next to the
 * macro: `const size_t hier_tile = TILE;`. The grader reads it (`scan --describe`) to test sizes
 * that are multiples of your tile and one off them; keep it equal to the tile you use. The
 * descriptor refers to it weakly: a scan.cu without it still builds, and is tested at the usual
 * sizes only. */
extern const size_t hier_tile;

#ifdef __cplusplus
}
#endif

#endif /* LABS_07_HIERARCHICAL_H */
