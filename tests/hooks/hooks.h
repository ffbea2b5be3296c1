/* hooks.h — the test hooks: course-owned entry points into a lab's kernels and phases, for the
 * lab-specific kernel tests (tests/lab_NN_*.c), declared once here.
 *
 * Lab NN's hooks are defined in tests/hooks/NN_name.cu. That file is never compiled on its own:
 * the hooks launch the lab's kernel templates and call its static functions, so the Makefile
 * appends it to the lab's scan.cu (the reference's or the student's) in one translation unit,
 * $(BUILD)/<labs|solutions>/NN_name/scan_hooks.cu, with #line directives that keep compiler
 * messages on the right file. Only the kernel-test binaries link that object; the lab binaries
 * and the grader's builds never hold a hook. A kernel-test binary holds the hooks of its own lab
 * only, so a test calls only those.
 *
 * Arguments shared by every lab: variant is an index into LAB.variants (lab_find_variant);
 * sync = 1 builds a kernel with its barriers, sync = 0 with every tile_barrier<SYNC>() removed
 * (the negative control of the barrier tests: they require that this broken build is caught).
 * Pointers are device pointers; everything runs on the default stream, unsynchronised.
 */
#ifndef LAB_TEST_HOOKS_H
#define LAB_TEST_HOOKS_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tile labs 03, 04, 05 ---------------------------------------------------------------- */

/* The launch that variant's launcher makes, over every tile of d_in[0..n), with or without its
 * barriers. Lab 04 has one variant, 0. An unknown variant prints a line on stderr and returns
 * LAB_NOT_IMPLEMENTED. */
lab_result lab_hook_scan_tiles(int variant, int sync, const int *d_in, int *d_out, int *d_tile_sums,
                               size_t n);

/* ---- labs 04 and 05: each tree on its own ----------------------------------------------- */

/* Runs the lab's trees on `tiles` blocks of prepared shared-memory state: block k copies its
 * words from d_state_in (lab 05: into the variant's layout, slot()), runs the first tree when
 * phases & 1 (lab 04: the reduction tree; lab 05: the up-sweep), then the second when phases & 2
 * (the reverse tree; the down-sweep), and copies its words back to d_state_out. Lab 04's state
 * is lab_hook_state_words() pair sums per tile, lab 05's the tile itself (LAB.tile words). */
void lab_hook_phase(int variant, int phases, const int *d_state_in, int *d_state_out, size_t tiles);

/* Lab 04: words of shared-memory state per tile (one pair sum per thread, half the tile). */
size_t lab_hook_state_words(void);

/* ---- lab 07: the phases of the hierarchy ------------------------------------------------ */

/* The lab's own tile (TILE in its scan.cu; its descriptor's tile is 0). */
size_t lab_hook_tile(void);

/* hier_temp_bytes(n). */
size_t lab_hook_temp_bytes(size_t n);

/* launch_tile_scan, launch_tile_reduce and launch_add_back as scan.cu defines them (tile_sums
 * or carries may be NULL, as there), with n = 0 answered LAB_OK without a call. */
lab_result lab_hook_tile_scan(const int *d_in, int *d_out, int *d_tile_sums, const int *d_carries,
                              size_t n);
lab_result lab_hook_tile_reduce(const int *d_in, int *d_tile_sums, size_t n);
lab_result lab_hook_add_back(int *d_out, const int *d_carries, size_t n);

/* The variant's whole scan of m values (0 scan_then_propagate, 1 reduce_then_scan), d_temp
 * holding lab_hook_temp_bytes(m) bytes: on the tile totals, this is the scan of the totals. */
lab_result lab_hook_scan_totals(int variant, const int *d_in, int *d_out, size_t m, void *d_temp);

#ifdef __cplusplus
}
#endif

#endif /* LAB_TEST_HOOKS_H */
