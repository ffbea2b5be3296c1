/* lab_cases.h — the edge-size matrix and the case runner shared by the kernel tests.
 *
 * Sizes: 0, 1, 2, 3, 31, 32, 33 (a warp), 63..65, every tile boundary (tile - 1, tile, tile + 1,
 * 2 tile - 1, 2 tile + 1, 3 tile + 5), primes, 2^k - 1 and 2^k + 1 for k = 10, 12, 16, 20, and
 * 2^24 + 7 for the large case; for labs with no tile, 1024 stands in for it. Sizes over the lab's
 * max_n, or over LAB_TEST_MAX_N from the environment, are left out.
 */
#ifndef SCAN_LAB_CASES_H
#define SCAN_LAB_CASES_H

#include "harness.h"

#define LAB_CASES_MAX 64

/* Fills sizes (sorted, no duplicates) and returns how many; large adds the 2^24 + 7 case. */
size_t lab_edge_sizes(const lab_info *lab, int large, size_t *sizes, size_t cap);

/* The seeds the tests use: LAB_TEST_SEED from the environment, or 1. */
uint64_t lab_test_seed(void);

/* Runs one case with reps = 0 and fills r; returns 1 when it is correct. */
int lab_case_ok(const lab_info *lab, int vi, size_t n, lab_dist d, uint64_t seed, lab_report *r);

#endif /* SCAN_LAB_CASES_H */
