/* lab_cases.c — edge sizes and the case runner for the kernel tests (see lab_cases.h). */
#include "lab_cases.h"
#include "cuda_check.h"
#include "inputs.h"

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
    if (lab_test_max_n() < limit)
        limit = lab_test_max_n();
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

size_t lab_test_max_n(void)
{
    const char *env = getenv("LAB_TEST_MAX_N");
    return env && *env ? (size_t)strtoull(env, NULL, 10) : (size_t)-1;
}

/* Skips the calling test, saying why, when a GPU lab has no device (CPU mode always has one). */
static void need_gpu(const lab_info *lab)
{
    char why[200];
    if (lab->shape != LAB_HOST && !lab_have_device(why, sizeof(why)))
        cr_skip_test("%s", why);
}

void lab_test_need_device(const lab_info *lab)
{
    need_gpu(lab);
    lab_test_need_code(lab);
}

/* LAB_TEST_PART (make test ... PART=sort): the part of a lab under test, or NULL for all of it. */
static const char *test_part(void)
{
    const char *p = getenv("LAB_TEST_PART");
    return p && *p ? p : NULL;
}

int lab_test_in_part(const lab_info *lab, int vi)
{
    const char *p = test_part();
    return !p || strstr(lab->variants[vi].name, p) != NULL;
}

/* Skips the calling test when PART names no variant of lab, listing the lab's variants. */
static void need_part(const lab_info *lab)
{
    char names[512];
    size_t len = 0;
    names[0] = '\0';
    for (int v = 0; v < lab->n_variants; v++) {
        if (lab_test_in_part(lab, v))
            return;
        if (!lab->variants[v].compare)
            len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
                                    "%s%s", len ? ", " : "", lab->variants[v].name);
    }
    cr_skip_test("%s: PART=%s is in none of its variants' names (%s)", lab->id, test_part(), names);
}

void lab_test_need_code(const lab_info *lab)
{
    need_part(lab);
    if (!lab_test_student_mode())
        return;
    lab_report r;
    for (int v = 0; v < lab->n_variants; v++) {
        if (!lab_test_in_part(lab, v))
            continue; /* a variant of another part is not even probed: its crash is not ours */
        const lab_status st = probe(lab, v, &r);
        if (st == ST_NO_DEVICE) /* cannot tell whether it is written: say why */
            cr_skip_test("%s", r.message);
        if (st != ST_NOT_IMPLEMENTED)
            return;
    }
    if (strstr(r.message, "finish lab 08")) /* lab 10 written, its scan (lab 08 or 07) not */
        cr_skip_test("%s: %s", lab->id, r.message);
    cr_skip_test("%s: not implemented yet (labs/%s/scan.cu still returns LAB_NOT_IMPLEMENTED)",
                 lab->id, lab->id);
}

int lab_expect_written(const lab_info *lab, int vi)
{
    lab_report r;
    if (!lab_test_in_part(lab, vi))
        return 0; /* another part: left out like an unwritten variant, and never run */
    if (lab->variants[vi].compare && lab_test_student_mode())
        return 0; /* the reference's other design: in the student's build the course's fallback
                   * runs the student's own variant, whose cases run already */
    return probe(lab, vi, &r) != ST_NOT_IMPLEMENTED;
}

void lab_test_need_variant(const lab_info *lab, int vi)
{
    need_gpu(lab);
    need_part(lab);
    lab_skip_unless_written(lab, vi); /* also skips a variant of another part */
}

/* The names of the variants that still return LAB_NOT_IMPLEMENTED, ", "-separated; 0 if none.
 * A comparison variant (lab_variant.compare) is not listed: the student does not write it, and
 * until its own variant is written it returns what that one returns. */
static int unwritten_variants(const lab_info *lab, char *names, size_t cap)
{
    size_t len = 0;
    int missing = 0;
    names[0] = '\0';
    for (int v = 0; v < lab->n_variants; v++)
        if (!lab->variants[v].compare && lab_test_in_part(lab, v) && !lab_expect_written(lab, v)) {
            len += (size_t)snprintf(names + len, len < cap ? cap - len : 0, "%s%s",
                                    missing ? ", " : "", lab->variants[v].name);
            missing++;
        }
    return missing;
}

/* One wording for every skip of an unwritten variant, so the summary groups them in one line. */
#define UNWRITTEN_SKIP                                                                             \
    "%s: variants not written yet: %s (they still return LAB_NOT_IMPLEMENTED; the tests skip "     \
    "them until you write their TODO(student) parts)"

void lab_skip_unless_written(const lab_info *lab, int vi)
{
    char names[512];
    lab_report r;
    if (!lab_test_in_part(lab, vi))
        cr_skip_test("%s/%s: not in PART=%s", lab->id, lab->variants[vi].name, test_part());
    if (probe(lab, vi, &r) != ST_NOT_IMPLEMENTED)
        return;
    if (lab_test_student_mode() && strstr(r.message, "finish lab 08")) /* its scan is not written */
        cr_skip_test("%s: %s", lab->id, r.message);
    unwritten_variants(lab, names, sizeof(names));
    if (lab_test_student_mode())
        cr_skip_test(UNWRITTEN_SKIP, lab->id, names);
    cr_skip_test("%s/%s: not implemented (kernel::variants_written fails for it)", lab->id,
                 lab->variants[vi].name);
}

void lab_expect_all_written(const lab_info *lab)
{
    char names[512];
    if (!unwritten_variants(lab, names, sizeof(names)))
        return;
    if (lab_test_student_mode())
        cr_skip_test(UNWRITTEN_SKIP, lab->id, names);
    cr_expect(0, "%s: the reference solution does not implement %s (returns LAB_NOT_IMPLEMENTED)",
              lab->id, names);
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

void lab_count_banks(const lab_info *lab, int vi, size_t n, unsigned *worst,
                     unsigned long long *extra, unsigned long long *accesses, const char **kernel)
{
#ifdef LAB_CPU_MODE
    const size_t tiles = CEIL_DIV(n, lab->tile);
    int *d_in, *d_out, *d_sums;
    int *h_in = malloc(n * sizeof(int));
    cr_assert(lab->shape == LAB_TILE && h_in, "lab_count_banks: a tile lab");
    lab_fill_input(h_in, n, DIST_RANDOM, lab_test_seed());
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_sums, tiles * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    lab_cpu_banks_record(1);
    const lab_result r = lab->variants[vi].fn.tiles(d_in, d_out, d_sums, n);
    lab_cpu_banks_record(0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "%s/%s: scan_tiles returned %d", lab->id, lab->variants[vi].name,
                 (int)r);
    *worst = 0;
    *extra = *accesses = 0;
    *kernel = "(none)";
    lab_cpu_bank_stats b;
    for (int i = 0; lab_cpu_banks_get(i, &b); i++) {
        *extra += b.extra_ld + b.extra_st;
        *accesses += b.loads + b.stores;
        if (b.worst > *worst) {
            *worst = b.worst;
            *kernel = b.kernel;
        }
    }
    cudaFree(d_sums);
    cudaFree(d_out);
    cudaFree(d_in);
    free(h_in);
#else
    (void)lab, (void)vi, (void)n, (void)worst, (void)extra, (void)accesses, (void)kernel;
    cr_skip_test("bank conflicts are counted in CPU mode (make test CPU=1); on a GPU, Nsight "
                 "Compute counts them: make profile LAB=%.2s",
                 lab->id);
#endif
}

void lab_expect_banks(const lab_info *lab, const char *variant, size_t n, unsigned want_worst,
                      const char *why)
{
    const int vi = lab_find_variant(lab, variant);
    cr_assert(vi >= 0, "%s has no variant %s", lab->id, variant);
    if (!lab_expect_written(lab, vi)) /* kernel::variants_written names it */
        return;
    unsigned worst;
    unsigned long long extra, accesses;
    const char *kernel;
    lab_count_banks(lab, vi, n, &worst, &extra, &accesses, &kernel);
    cr_assert(accesses > 0,
              "%s/%s n=%zu: CPU mode saw no shared-memory access at all; the scan must go "
              "through its __shared__ tile",
              lab->id, variant, n);
    if (!want_worst) { /* a variant that must conflict: the counts can see a conflict */
        cr_expect(worst > 1,
                  "%s/%s n=%zu: no bank conflict counted (the worst of %llu warp-wide accesses "
                  "is %u-way), yet %s",
                  lab->id, variant, n, accesses, worst, why);
        return;
    }
    cr_expect(worst == want_worst,
              "%s/%s n=%zu: bank conflicts: the worst warp-wide shared-memory access in %s is "
              "%u-way (%llu extra passes over %llu accesses); expected %u-way. %u-way means %u "
              "lanes of one warp read or write different words of one bank (word i is in bank "
              "i %% 32) and are served one after another. %s. make run LAB=%.2s CPU=1 "
              "ARGS='--variant %s' prints the counts per kernel",
              lab->id, variant, n, kernel, worst, extra, accesses, want_worst, worst, worst, why,
              lab->id, variant);
}
