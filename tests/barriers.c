/* barriers.c — the barriers matter, and the tests can tell: the barrier test of the tile labs
 * 03, 04 and 05 (barriers.h), called from tests/lab_NN_barriers.c with the lab's test hook.
 *
 * Through the hook lab_hook_scan_tiles (tests/hooks/NN_name.cu, compiled together with the
 * lab's scan.cu) a variant's kernel is run twice on many tiles: as launched (it must be right,
 * tile by tile) and built without its barriers (a negative control: it must be caught as wrong
 * in at least one of a few runs). If the second check ever fails, a reference with a missing
 * barrier could pass these tests unnoticed. With the student's code the second check only warns
 * (lab_expect_race_caught).
 *
 * On the GPU the race needs many blocks and a few repetitions to show; in CPU mode, where
 * threads run in a shuffled order, it shows at once. LAB_TEST_MAX_N lowers n. Linked into every
 * kernel-test binary (the Makefile's TEST_SUPPORT); only the tile labs call it.
 */
#include "barriers.h"
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RACE_RUNS 10 /* runs of the barrier-less build before giving up on seeing the race */

/* Elements for the race tests: 2^22 + 37 on the GPU (thousands of tiles, the last one ragged),
 * 64 tiles + 37 in CPU mode, or fewer when LAB_TEST_MAX_N says so (but at least 4 tiles). */
static size_t race_n(void)
{
    size_t n = ((size_t)1 << 22) + 37;
#ifdef LAB_CPU_MODE
    n = 64 * LAB.tile + 37; /* threads run in a shuffled order there: a race shows at once */
#endif
    if (lab_test_max_n() < n)
        n = lab_test_max_n();
    if (n < 4 * LAB.tile + 1)
        n = 4 * LAB.tile + 1;
    return n;
}

/* What count_bad found: wrong elements and wrong tile totals, each with the first one. */
typedef struct {
    size_t values, first_value; /* first_value: an index of out (n when none is wrong) */
    size_t totals, first_total; /* first_total: a tile (the tile count when none is wrong) */
    char what[160];             /* those counts in words, for a failure message */
} bad_count;

/* Counts the elements and tile totals of one tile pass that differ from the CPU model (each
 * tile scanned on its own), and says where the first of each is; returns how many in all. */
static size_t count_bad(const int *h_in, const int *h_out, const int *h_sums, size_t n,
                        bad_count *b)
{
    const size_t T = LAB.tile;
    int *want = malloc(T * sizeof(*want));
    cr_assert(want);
    *b = (bad_count){0, n, 0, CEIL_DIV(n, T), ""};
    for (size_t t = 0; t * T < n; t++) {
        const size_t len = n - t * T < T ? n - t * T : T;
        unsigned total = 0;
        lab_reference_scan(h_in + t * T, want, len, LAB.type);
        for (size_t j = 0; j < len; j++) {
            total += (unsigned)h_in[t * T + j];
            if (h_out[t * T + j] != want[j] && b->values++ == 0)
                b->first_value = t * T + j;
        }
        if (h_sums[t] != (int)total && b->totals++ == 0)
            b->first_total = t;
    }
    free(want);
    if (b->values)
        snprintf(b->what, sizeof b->what, "%zu wrong values, first at out[%zu]", b->values,
                 b->first_value);
    if (b->totals) { /* after the values' words, if any (strlen: always inside what) */
        const size_t k = strlen(b->what), last = (b->first_total + 1) * T;
        snprintf(b->what + k, sizeof b->what - k,
                 "%s%zu wrong tile totals, first tile_sums[%zu] (the total of elements %zu..%zu)",
                 k ? "; " : "", b->totals, b->first_total, b->first_total * T,
                 (last < n ? last : n) - 1);
    }
    return b->values + b->totals;
}

/* Runs variant v with its barriers (must be right) and without (must be caught). */
static void check_variant(int v, lab_tile_hook scan_tiles)
{
    cr_assert_geq(v, 0, "%s has no such variant", LAB.id);
    if (!lab_expect_written(&LAB, v))
        return;
    const size_t n = race_n(), tiles = CEIL_DIV(n, LAB.tile);
    const char *name = LAB.variants[v].name;
    int *h_in = malloc(n * sizeof(int)), *h_out = malloc(n * sizeof(int));
    int *h_sums = malloc(tiles * sizeof(int));
    int *d_in, *d_out, *d_sums;
    bad_count found;
    size_t bad;
    cr_assert(h_in && h_out && h_sums);
    lab_fill_input(h_in, n, DIST_RANDOM, lab_test_seed());
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_sums, tiles * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));

    /* with barriers: every tile right */
    CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, n * sizeof(int)));
    cr_assert_eq(scan_tiles(v, 1, d_in, d_out, d_sums, n), LAB_OK);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_sums, d_sums, tiles * sizeof(int), cudaMemcpyDeviceToHost));
    bad = count_bad(h_in, h_out, h_sums, n, &found);
    cr_expect_eq(bad, 0, "%s/%s n=%zu with barriers: %s", LAB.id, name, n, found.what);

    /* without barriers: the race must show in one of RACE_RUNS runs */
    int run;
    bad = 0;
    for (run = 0; run < RACE_RUNS && bad == 0; run++) {
        CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, n * sizeof(int)));
        scan_tiles(v, 0, d_in, d_out, d_sums, n);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(h_sums, d_sums, tiles * sizeof(int), cudaMemcpyDeviceToHost));
        bad = count_bad(h_in, h_out, h_sums, n, &found);
    }
    lab_expect_race_caught(&LAB, name, n, bad, RACE_RUNS);
    if (bad)
        cr_log_info("%s/%s: barrier-less build caught in run %d: %s", LAB.id, name, run,
                    found.what);

    cudaFree(d_sums);
    cudaFree(d_out);
    cudaFree(d_in);
    free(h_sums);
    free(h_out);
    free(h_in);
}

void lab_check_barriers(const char *variant, lab_tile_hook scan_tiles)
{
    lab_test_need_device(&LAB);
    check_variant(lab_find_variant(&LAB, variant), scan_tiles);
}
