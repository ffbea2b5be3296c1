/* lab_05_banks.c — Blelloch: the padded variant has no shared-memory bank conflicts.
 *
 * CPU mode counts, for every warp-wide shared-memory access of the tile pass, how many passes
 * the 32 banks need (common/cpu/banks.cpp). A padded variant that does not pad (slot(i) = i, as
 * the skeleton's slot() starts) computes the right scan but conflicts up to 8-way in the deep
 * tree levels: these tests catch that without a GPU. On a GPU build they skip (Nsight Compute
 * counts the hardware's conflicts: make profile LAB=05).
 */
#include "lab_cases.h"

#include <criterion/criterion.h>

TestSuite(blelloch05_banks, .timeout = 120);

Test(blelloch05_banks, padded_conflict_free,
     .description = "padded: every warp-wide shared access is 1-way (CPU mode's bank count)")
{
    lab_test_need_code(&LAB);
    lab_expect_banks(&LAB, "padded", 5 * LAB.tile + 37, 1,
                     "The padded variant stores element i at slot(i), one padding word after "
                     "every 32, so that no level of either sweep puts two lanes in one bank");
}

Test(blelloch05_banks, plain_conflicts,
     .description = "plain: the unpadded tree levels conflict (the count sees it)")
{
    lab_test_need_code(&LAB);
    lab_expect_banks(&LAB, "plain", 5 * LAB.tile + 37, 0,
                     "the plain layout puts the children of a level with stride d >= 16 in one "
                     "bank: if this fails, CPU mode's counter is broken or plain is padded");
}
