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
    int empty; /* 1: launch 0 neither stored to shared memory nor shuffled (nothing to read) */
} lab_profile_measure;

/* All that the verdict on call 1's algorithm reads (lab_algorithm_classify): launch 0's tile
 * measure, and the passes over the tiles. A judge receives it from its lab process, where CPU
 * mode counted, and classifies it itself. */
typedef struct {
    lab_profile_measure tile;
    int passes, launches; /* launches of call 1; passes: those whose grid is the largest */
    unsigned long long most_blocks; /* the largest grid of call 1 */
} lab_algorithm_evidence;

/* The course's tile algorithm that launch 0 of call 1 is, for a tile of `tile` elements (CPU
 * mode's profile; LAB_ALG_ANY: none of them, or nothing counted): coarsened when C >= 2 and one or
 * two phases after the load (the serial pass, the add-back) have most threads each read C words
 * or more, spanning half the tile or more, and C >= 4 or the steps are fewer than
 * 1.5*log2(tile) (a tree over two elements a thread reads two at its first step); Kogge-Stone when
 * the updates per element reach half of log2(tile) (every element at nearly every step; shuffles
 * count as steps, so a warp-shuffle Kogge-Stone is one), double-buffered when every step read one
 * buffer and wrote another; otherwise a tree when it took at least 1.5*log2(tile) steps: Blelloch's
 * when all but one of its down steps swap (two words per storing thread), else Brent-Kung's. */
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m);

/* How many passes over the tiles call 1 made: its launches whose grid is (within one block) the
 * largest of the call's, so that a small launch (the tile totals' own scan, an initialisation)
 * is not one. LAB_ALG_HIERARCHICAL for two or more, LAB_ALG_SINGLE_PASS for one, LAB_ALG_ANY when
 * the call had one tile (nothing to tell) or nothing was counted; *passes and *launches say the
 * counts. */
lab_algorithm lab_profile_passes(int *passes, int *launches);

/* The tile classification above on a measure, and the passes' (below) on counts: plain
 * arithmetic, in every build. */
lab_algorithm lab_classify_tile(const lab_profile_measure *m);
lab_algorithm lab_classify_passes(int passes, unsigned long long most_blocks);

/* Call 1's evidence, from CPU mode's counts in this process (all zeros, empty, elsewhere). */
void lab_algorithm_measure(size_t tile, lab_algorithm_evidence *e);
/* 1 when every number of e is one a profile can give (a judge refuses others as tampering). */
int lab_algorithm_evidence_ok(const lab_algorithm_evidence *e);
/* What e is, for a variant asking for `asked`: the passes for a hierarchy or a single pass, the
 * tile's measure otherwise. */
lab_algorithm lab_algorithm_classify(const lab_algorithm_evidence *e, lab_algorithm asked);
/* 1 when found is what asked asks for (a double-buffered Kogge-Stone is a Kogge-Stone). */
int lab_algorithm_same(lab_algorithm asked, lab_algorithm found);
/* An algorithm's name for people ("Kogge-Stone (T*log2(T) work, log2(T) steps)"); its
 * identifier is report.h's lab_algorithm_id. */
const char *lab_algorithm_name(lab_algorithm a);
/* The two lines make run CPU=1 ends with, without their "algorithm: " and "-> ": what was
 * measured, and the verdict naming the variant. */
void lab_algorithm_measured(const lab_algorithm_evidence *e, lab_algorithm asked, char *buf,
                            size_t len);
void lab_algorithm_verdict(lab_algorithm asked, lab_algorithm found, const char *variant, char *buf,
                           size_t len);

/* The table of r's call 1 on f; nothing outside CPU mode, or when the lab is not written. */
void lab_print_profile(FILE *f, const lab_report *r);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_PROFILE_TABLE_H */
