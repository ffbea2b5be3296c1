/* lab_cases.h — the edge-size matrix and the case runner shared by the kernel tests.
 *
 * Sizes (contract.h, from common/contract.json, the grader's too): 0, 1, 2, 3, 31, 32, 33 (a
 * warp), 63..65, every tile boundary (tile - 1, tile, tile + 1, 2 tile - 1, 2 tile + 1,
 * 3 tile + 5), primes, 2^k - 1 and 2^k + 1 for k = 10, 12, 16, 20, and 2^24 + 7 for the large
 * case; for labs with no tile, LAB_DEFAULT_TILE (1024) stands in for it. Sizes over the lab's
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

/* Which code the kernel tests were linked with. make test links the reference solutions;
 * make test TEST_SRC=labs links the student's labs/ and sets LAB_TEST_SRC=labs, which
 * lab_test_student_mode() reports as 1. */
int lab_test_student_mode(void);

/* For the student's code only: skips the calling test, naming the lab, when no variant is
 * written yet (an untouched skeleton). With the reference solutions it does nothing, so a
 * solution that reports not_implemented fails like any other wrong answer. Call it first. */
void lab_test_need_code(const lab_info *lab);

/* Every kernel test's first call: skips it, saying why, when a GPU lab has no device (CPU mode
 * always has one), then as lab_test_need_code. */
void lab_test_need_device(const lab_info *lab);

/* A part of a lab under test (make test ... PART=sort sets LAB_TEST_PART): 1 when variant vi's
 * name contains it, or when there is none. A variant outside the part is left out as if it were
 * not written (lab_expect_written: 0) and is never run, so a part can be finished and tested
 * while another still crashes. */
int lab_test_in_part(const lab_info *lab, int vi);

/* The first call of a test of one variant (lab 10's applications): skips it when a GPU lab has
 * no device, when vi is not in the part under test, or when vi is not written yet; it probes no
 * other variant, so another variant that crashes cannot fail this test. */
void lab_test_need_variant(const lab_info *lab, int vi);

/* The largest n a test may use: LAB_TEST_MAX_N from the environment (CPU mode's cap), else
 * (size_t)-1. */
size_t lab_test_max_n(void);

/* 1 when variant vi is written (a small case, n = 1000, reports anything but not_implemented),
 * else 0, and the caller skips that variant's cases; 0 too for a comparison variant (.compare)
 * in the student's tests (TEST_SRC=labs), which runs the student's own variant there. Silent:
 * kernel::variants_written (lab_expect_all_written) names an unwritten variant once, instead of
 * every test that loops over the variants. */
int lab_expect_written(const lab_info *lab, int vi);

/* Skips the calling test, naming the variant, when variant vi is not written yet: for a test of
 * one variant only. */
void lab_skip_unless_written(const lab_info *lab, int vi);

/* The one place an unwritten variant is named: with the student's code a skip listing every
 * variant that still returns LAB_NOT_IMPLEMENTED; with the reference solutions a failure. */
void lab_expect_all_written(const lab_info *lab);

/* The negative control of the barrier tests: bad, the wrong values counted in `runs` runs of
 * the build without barriers, must not be 0. With the reference that is a failure (the tests
 * could not catch a missing barrier); with the student's code it is only a warning, since it
 * says how the barriers are written (__syncthreads() called directly instead of
 * tile_barrier<SYNC>()), not that the scan is wrong. */
void lab_expect_race_caught(const lab_info *lab, const char *variant, size_t n, size_t bad,
                            int runs);

/* Bank conflicts (CPU mode counts them, common/cpu/banks.cpp). The worst shared-memory access of
 * one call of tile variant vi at n, over every kernel it launches: *worst its degree (1 =
 * conflict-free), *extra the extra passes in all (Nsight Compute's bank conflicts), *accesses the
 * warp-wide accesses, *kernel the kernel of the worst one. Skips the calling test on a GPU build
 * (the GPU's own count is Nsight Compute's: make profile). */
void lab_count_banks(const lab_info *lab, int vi, size_t n, unsigned *worst,
                     unsigned long long *extra, unsigned long long *accesses, const char **kernel);

/* Fails, saying what a bank conflict is and where to look, unless variant `variant` of the lab
 * is exactly `want_worst`-way at n in its worst access over every kernel: 1 is conflict-free, more
 * than 1 a variant the handout says conflicts that much, 0 any conflict (at least 2-way). why:
 * the handout's rule, one line. */
void lab_expect_banks(const lab_info *lab, const char *variant, size_t n, unsigned want_worst,
                      const char *why);

#endif /* SCAN_LAB_CASES_H */
