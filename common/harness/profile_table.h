/* profile_table.h — the algorithm profile of a lab's first call as `make run LAB=NN CPU=1` prints
 * it, after the bank and sector tables (profile_table.c; CPU mode only: the counts come from CPU
 * mode's runtime, common/cpu/profile.cpp). */
#ifndef SCAN_HARNESS_PROFILE_TABLE_H
#define SCAN_HARNESS_PROFILE_TABLE_H

#include "lab.h"
#include "report.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What lab_profile_algorithm measured in launch 0's block 0 of call 1: the storing phases after
 * the tile's load (steps), log2 of the tile, the words stored and the shuffles after the load per
 * element of the tile (each an update of one element at one step), whether every step read one
 * buffer and wrote another, and the steps where each storing thread wrote two words (a swap). */
typedef struct {
    int steps, log2_tile, swaps;
    int per_thread;    /* C: the tile's elements per thread of the launch */
    int serial_phases; /* phases after the load where most threads each read C words or more */
    double work_per_element;
    int double_buffered;
} lab_profile_measure;

/* The course's tile algorithm that launch 0 of call 1 is, for a tile of `tile` elements (CPU
 * mode's profile; LAB_ALG_ANY: none of them, or nothing counted): coarsened when C >= 2 and one or
 * two phases after the load (the serial pass, the add-back) have most threads each read C words
 * or more, in fewer than 1.5*log2(tile) steps; Kogge-Stone when the updates per
 * element reach half of log2(tile) (every element at nearly every step; shuffles count as
 * steps, so a warp-shuffle Kogge-Stone is one), double-buffered when every step read one buffer
 * and wrote another; otherwise a tree when it took at least 1.5*log2(tile) steps: Blelloch's
 * when all but one of its down steps swap (two words per storing thread), else Brent-Kung's. */
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m);

/* How many passes over the tiles call 1 made: its launches whose grid is (within one block) the
 * largest of the call's, so that a small launch (the tile totals' own scan, an initialisation)
 * is not one. LAB_ALG_HIERARCHICAL for two or more, LAB_ALG_SINGLE_PASS for one, LAB_ALG_ANY when
 * the call had one tile (nothing to tell) or nothing was counted; *passes and *launches say the
 * counts. */
lab_algorithm lab_profile_passes(int *passes, int *launches);

/* The table of r's call 1 on f; nothing outside CPU mode, or when the lab is not written. */
void lab_print_profile(FILE *f, const lab_report *r);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_PROFILE_TABLE_H */
