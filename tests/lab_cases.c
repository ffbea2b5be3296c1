/* lab_cases.c — edge sizes and the case runner for the kernel tests (see lab_cases.h). */
#include "lab_cases.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t lab_edge_sizes(const lab_info *lab, int large, size_t *sizes, size_t cap)
{
    static const size_t fixed[] = LAB_EDGE_FIXED;
    static const int ks[] = LAB_EDGE_POW2_EXPONENTS;
    static const lab_tile_size rel[] = LAB_EDGE_TILE_RELATIVE;
    const size_t t = lab->tile ? lab->tile : LAB_DEFAULT_TILE;
    size_t cand[LAB_CASES_MAX];
    size_t c = 0;
    _Static_assert(sizeof(fixed) / sizeof(fixed[0]) + sizeof(rel) / sizeof(rel[0]) +
                           2 * sizeof(ks) / sizeof(ks[0]) + 1 <=
                       LAB_CASES_MAX,
                   "LAB_CASES_MAX is too small for the contract's edge sizes");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        cand[c++] = fixed[i];
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
        cand[c++] = rel[i].tiles * t + (size_t)rel[i].plus; /* wraps back for a negative plus */
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        cand[c++] = ((size_t)1 << ks[i]) - 1;
        cand[c++] = ((size_t)1 << ks[i]) + 1;
    }
    if (large)
        cand[c++] = LAB_EDGE_LARGE_N;

    size_t limit = lab->max_n ? lab->max_n : (size_t)-1;
    const char *env = getenv("LAB_TEST_MAX_N");
    if (env && *env) {
        size_t e = (size_t)strtoull(env, NULL, 10);
        if (e < limit)
            limit = e;
    }
    qsort(cand, c, sizeof(cand[0]), cmp_size);
    size_t k = 0;
    for (size_t i = 0; i < c && k < cap; i++)
        if (cand[i] <= limit && (k == 0 || cand[i] != sizes[k - 1]))
            sizes[k++] = cand[i];
    return k;
}

uint64_t lab_test_seed(void)
{
    const char *env = getenv("LAB_TEST_SEED");
    return env && *env ? (uint64_t)strtoull(env, NULL, 10) : 1u;
}

int lab_case_ok(const lab_info *lab, int vi, size_t n, lab_dist d, uint64_t seed, lab_report *r)
{
    lab_options o;
    lab_default_options(&o);
    o.n = n;
    o.n_given = 1;
    o.dist = d;
    o.seed = seed;
    o.reps = 0;
    o.force = 1;
    return lab_run(lab, vi, &o, r) == ST_OK;
}

int lab_test_student_mode(void)
{
    const char *env = getenv("LAB_TEST_SRC");
    return env && strcmp(env, "labs") == 0;
}

/* The status of variant vi on a small case (n = 1000); r holds the report. */
static lab_status probe(const lab_info *lab, int vi, lab_report *r)
{
    const size_t n = lab->max_n && lab->max_n < 1000 ? lab->max_n : 1000;
    lab_case_ok(lab, vi, n, DIST_SMALL, lab_test_seed(), r);
    return r->status;
}

void lab_test_need_code(const lab_info *lab)
{
    if (!lab_test_student_mode())
        return;
    for (int v = 0; v < lab->n_variants; v++) {
        lab_report r;
        const lab_status st = probe(lab, v, &r);
        if (st == ST_NO_DEVICE) /* cannot tell whether it is written: say why */
            cr_skip_test("%s", r.message);
        if (st != ST_NOT_IMPLEMENTED)
            return;
    }
    cr_skip_test("%s: not implemented yet (labs/%s/scan.cu still returns LAB_NOT_IMPLEMENTED)",
                 lab->id, lab->id);
}

int lab_expect_written(const lab_info *lab, int vi)
{
    lab_report r;
    if (probe(lab, vi, &r) != ST_NOT_IMPLEMENTED)
        return 1;
    cr_expect(0,
              "%s/%s: not implemented: this variant still returns LAB_NOT_IMPLEMENTED (write its "
              "TODO(student) parts)",
              lab->id, lab->variants[vi].name);
    return 0;
}

void lab_expect_race_caught(const lab_info *lab, const char *variant, size_t n, size_t bad,
                            int runs)
{
    if (bad)
        return;
    if (lab_test_student_mode()) /* stderr, not cr_log_warn: a Criterion warning fails the run */
        fprintf(
            stderr,
            "[WARN] %s/%s n=%zu: built WITHOUT its barriers (tile_barrier<false>), your kernel "
            "still gave the right answer in %d runs, so this test cannot check your barriers. If "
            "you call __syncthreads() directly, call tile_barrier<SYNC>() instead, as the TODO "
            "says. (A warning, not a failure.)\n",
            lab->id, variant, n, runs);
    else
        cr_expect(0,
                  "%s/%s n=%zu: the build WITHOUT barriers gave the right answer in %d runs, so "
                  "these tests could not catch a missing barrier",
                  lab->id, variant, n, runs);
}
