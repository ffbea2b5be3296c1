/* lab_06_banks.c — the coarsened scan: padded() keeps every variant up to C = 32 free of
 * shared-memory bank conflicts, and C = 64 conflicts exactly 2-way, as the handout says.
 *
 * CPU mode counts the passes each warp-wide shared-memory access needs (common/cpu/banks.cpp).
 * Thread t's run starts at word t*C: without the padding word after every 32, C = 32 would put
 * all 32 lanes of phase 1 in one bank. On a GPU build these tests skip (Nsight Compute counts the
 * hardware's conflicts: make profile LAB=06).
 */
#include "lab_cases.h"

#include <criterion/criterion.h>

TestSuite(coarsened06_banks, .timeout = 300);

static const char *const CONFLICT_FREE[] = {"c2_b1024", "c4_b512", "c8_b256", "c16_b128",
                                            "c32_b64"};

Test(coarsened06_banks, conflict_free_up_to_c32,
     .description = "C <= 32: every warp-wide shared access is 1-way (CPU mode's bank count)")
{
    lab_test_need_code(&LAB);
    for (size_t i = 0; i < sizeof(CONFLICT_FREE) / sizeof(CONFLICT_FREE[0]); i++)
        lab_expect_banks(&LAB, CONFLICT_FREE[i], 3 * LAB.tile + 37, 1,
                         "Index the shared tile through padded(i) = i + i / 32 everywhere (the "
                         "copies and the runs): with C <= 32 that spreads the 32 lanes of a "
                         "warp over 32 banks");
}

Test(coarsened06_banks, c64_two_way,
     .description = "C = 64: padded() leaves a 2-way conflict, as the handout says")
{
    lab_test_need_code(&LAB);
    lab_expect_banks(&LAB, "c64_b32", 3 * LAB.tile + 37, 2,
                     "At C = 64, padded(64t + k) puts lanes t and t + 16 in one bank (2-way): "
                     "the handout's Bank conflicts paragraph");
}
