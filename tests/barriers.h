/* barriers.h — the barrier test of the tile labs (03, 04, 05), written once.
 *
 * Each lab's tests/lab_NN_barriers.c names its suite and its variants and calls
 * lab_check_barriers with its test hook lab_hook_scan_tiles (tests/hooks/NN_name.cu, compiled
 * together with that lab's scan.cu). The hook is passed in, not called by name, so that
 * barriers.o links into every kernel-test binary (TEST_SUPPORT), hooks or not.
 */
#ifndef LAB_TEST_BARRIERS_H
#define LAB_TEST_BARRIERS_H

#include "lab.h"

/* lab_hook_scan_tiles's type (tests/hooks/hooks.h). */
typedef lab_result (*lab_tile_hook)(int variant, int sync, const int *d_in, int *d_out,
                                    int *d_tile_sums, size_t n);

/* The variant of LAB named variant is run on many tiles twice through scan_tiles: as launched
 * (it must be right, tile by tile) and built without its barriers (a negative control: it must
 * be caught as wrong in at least one of RACE_RUNS runs; with the student's code that only warns,
 * lab_expect_race_caught). Skips the calling test without a device, or when the student's code
 * is not written yet. */
void lab_check_barriers(const char *variant, lab_tile_hook scan_tiles);

#endif
