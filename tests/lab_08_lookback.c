/* lab_08_lookback.c — tests for lab 08 beyond the generic matrix: the things a single-pass
 * look-back scan gets wrong that a small edge-size matrix may not show.
 *
 *   many_seeds      sizes around tile boundaries with 16 seeds each (races show as seed-dependent
 *                   failures)
 *   many_tiles      thousands of tiles (5462 at a 6144-element tile; 1366 in CPU mode): windows
 *                   slide, blocks wait
 *   reused_scratch  one scratch buffer, 40 calls (16 in CPU mode) in a row with new inputs each
 *                   time: the epoch
 *                   and the ticket counter must carry over correctly, with no reset pass
 *   shrinking_n     one scratch buffer, n getting smaller between calls (old descriptors past the
 *                   new end must not confuse anything)
 *   unaligned       input and output not 16-byte aligned: the scalar path, with canaries
 *
 * Linked with the reference solution (the Makefile's KERNEL_TESTS rule). Skips without a GPU.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* The reference's tile in elements, read off its scratch size (one descriptor per tile): the
 * largest n whose scratch is that of n = 1. The sizes below straddle it, whatever tile shape the
 * reference was tuned to (6144 = 128 threads x 48 elements on the H100). */
static size_t tile_items(void)
{
    const lab_temp_fn tb = LAB.variants[0].temp_bytes;
    size_t lo = 1, hi = (size_t)1 << 24; /* tb(lo) == tb(1) < tb(hi) */
    cr_assert(tb != NULL && tb(hi) > tb(1), "lab 08 needs scratch that grows with the tiles");
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (tb(mid) == tb(1))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
#define TILE tile_items()

TestSuite(lookback, .timeout = 300);

Test(lookback, many_seeds, .description = "sizes around 1..40 tiles, 16 seeds each")
{
    lab_test_need_device(&LAB);
    const size_t ns[] = {TILE - 1,
                         TILE + 1,
                         2 * TILE,
                         31 * TILE + 17,
                         32 * TILE,
                         33 * TILE - 1,
                         40 * TILE + TILE - 1};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
        for (uint64_t s = 0; s < 16; s++) {
            lab_report r;
            uint64_t seed = lab_test_seed() + 100 + s;
            int ok = lab_case_ok(&LAB, 0, ns[k], DIST_RANDOM, seed, &r);
            cr_expect(ok, "n=%zu seed=%llu: %s: %s", ns[k], (unsigned long long)seed,
                      lab_status_name(r.status), r.message);
        }
}

/* CPU mode: 2^23 + 13 (1366 tiles, each look-back window of 32 passed over 40 times; at 2^25 this
 * one test took 17 s of a 2-core machine). */
#ifdef LAB_CPU_MODE
#define MANY_TILES_N (((size_t)1 << 23) + 13)
#define REUSED_CALLS 16
#else
#define MANY_TILES_N (((size_t)1 << 25) + 13)
#define REUSED_CALLS 40
#endif

Test(lookback, many_tiles,
     .description = "2^25 + 13 elements (CPU mode 2^23 + 13): thousands of tiles, 3 dists")
{
    lab_test_need_device(&LAB);
    const lab_dist dists[] = {DIST_RANDOM, DIST_ONES, DIST_LARGE};
    const size_t n = MANY_TILES_N;
    for (size_t k = 0; k < sizeof(dists) / sizeof(dists[0]); k++) {
        lab_report r;
        int ok = lab_case_ok(&LAB, 0, n, dists[k], lab_test_seed() + 200 + k, &r);
        cr_expect(ok, "n=%zu dist=%s: %s: %s", n, lab_dist_name(dists[k]),
                  lab_status_name(r.status), r.message);
    }
}

/* Runs the default variant on device buffers in/out (n elements) with scratch d_temp and
 * compares with the CPU reference of h_in; returns the first bad index or n. */
static size_t scan_and_compare(const int *h_in, int *h_out, int *want, int *d_in, int *d_out,
                               size_t n, void *d_temp)
{
    CUDA_CHECK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, n * sizeof(int)));
    lab_result res = LAB.variants[0].fn.scan(d_in, d_out, n, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(res, LAB_OK, "scan returned %d at n=%zu", (int)res, n);
    CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    lab_reference_scan(h_in, want, n, LAB.type);
    return lab_first_mismatch(h_out, want, n);
}

/* Allocates host and device buffers for n elements and zeroed scratch for scratch_n. */
typedef struct {
    int *h_in, *h_out, *want, *d_in, *d_out;
    void *d_temp;
} bufs;

static void bufs_alloc(bufs *b, size_t n, size_t scratch_n)
{
    b->h_in = malloc(n * sizeof(int));
    b->h_out = malloc(n * sizeof(int));
    b->want = malloc(n * sizeof(int));
    cr_assert(b->h_in && b->h_out && b->want, "out of host memory");
    CUDA_CHECK(cudaMalloc((void **)&b->d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&b->d_out, n * sizeof(int)));
    size_t tb = LAB.variants[0].temp_bytes(scratch_n);
    CUDA_CHECK(cudaMalloc(&b->d_temp, tb));
    CUDA_CHECK(cudaMemset(b->d_temp, 0, tb));
}

static void bufs_free(bufs *b)
{
    cudaFree(b->d_temp);
    cudaFree(b->d_out);
    cudaFree(b->d_in);
    free(b->want);
    free(b->h_out);
    free(b->h_in);
}

Test(lookback, reused_scratch,
     .description = "40 calls (CPU mode 16) on one scratch buffer, new input each")
{
    lab_test_need_device(&LAB);
    const size_t n = 300 * TILE + 123;
    bufs b;
    bufs_alloc(&b, n, n);
    for (int call = 0; call < REUSED_CALLS; call++) {
        /* alternate distributions so a stale descriptor from the last call gives a wrong sum */
        lab_fill_input(b.h_in, n, call % 2 ? DIST_ONES : DIST_RANDOM, lab_test_seed() + 300 + call);
        size_t bad = scan_and_compare(b.h_in, b.h_out, b.want, b.d_in, b.d_out, n, b.d_temp);
        cr_assert_eq(bad, n, "call %d of %d, n=%zu: out[%zu] expected %d, got %d%s", call + 1,
                     REUSED_CALLS, n, bad, bad < n ? b.want[bad] : 0, bad < n ? b.h_out[bad] : 0,
                     bad < n && b.h_out[bad] == LAB_POISON ? " (never written)" : "");
    }
    bufs_free(&b);
}

Test(lookback, shrinking_n, .description = "one scratch buffer, n shrinking between calls")
{
    lab_test_need_device(&LAB);
    const size_t big = 100 * TILE + 5;
    const size_t ns[] = {big, 70 * TILE, 3 * TILE + 1, 1, 50 * TILE - 1, big};
    bufs b;
    bufs_alloc(&b, big, big);
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        lab_fill_input(b.h_in, ns[k], DIST_RANDOM, lab_test_seed() + 400 + k);
        size_t bad = scan_and_compare(b.h_in, b.h_out, b.want, b.d_in, b.d_out, ns[k], b.d_temp);
        cr_expect_eq(bad, ns[k], "call %zu of %zu, n=%zu: out[%zu] expected %d, got %d%s", k + 1,
                     sizeof(ns) / sizeof(ns[0]), ns[k], bad, bad < ns[k] ? b.want[bad] : 0,
                     bad < ns[k] ? b.h_out[bad] : 0,
                     bad < ns[k] && b.h_out[bad] == LAB_POISON ? " (never written)" : "");
    }
    bufs_free(&b);
}

Test(lookback, unaligned, .description = "input at +1 word, output at +3 words: no vector path")
{
    lab_test_need_device(&LAB);
    const size_t n = 5 * TILE + 77, G = 64;
    int *h_in = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int));
    int *h_back = malloc((n + 2 * G) * sizeof(int)), *h_guard = malloc(G * sizeof(int));
    int *d_in, *d_out;
    void *d_temp;
    cr_assert(h_in && want && h_back && h_guard);
    lab_fill_input(h_in, n, DIST_RANDOM, lab_test_seed() + 500);
    lab_reference_scan(h_in, want, n, LAB.type);
    lab_canary_fill(h_guard, G);
    CUDA_CHECK(cudaMalloc((void **)&d_in, (n + 8) * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, (n + 2 * G) * sizeof(int)));
    size_t tb = LAB.variants[0].temp_bytes(n);
    CUDA_CHECK(cudaMalloc(&d_temp, tb));
    CUDA_CHECK(cudaMemset(d_temp, 0, tb));
    CUDA_CHECK(cudaMemcpy(d_in + 1, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    /* output at d_out + G + 3 (G is a multiple of 4, so + 3 is never 16-byte aligned) */
    int *out = d_out + G + 3;
    CUDA_CHECK(cudaMemcpy(d_out, h_guard, G * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out + G, LAB_POISON_BYTE, (n + 3) * sizeof(int)));
    CUDA_CHECK(
        cudaMemcpy(d_out + G + 3 + n, h_guard, (G - 3) * sizeof(int), cudaMemcpyHostToDevice));
    lab_result res = LAB.variants[0].fn.scan(d_in + 1, out, n, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(res, LAB_OK);
    CUDA_CHECK(cudaMemcpy(h_back, d_out, (n + 2 * G) * sizeof(int), cudaMemcpyDeviceToHost));
    size_t bad = lab_first_mismatch(h_back + G + 3, want, n);
    cr_expect_eq(bad, n, "out[%zu] expected %d, got %d", bad, bad < n ? want[bad] : 0,
                 bad < n ? h_back[G + 3 + bad] : 0);
    cr_expect_eq(lab_canary_check(h_back, G), G, "wrote before the output");
    cr_expect_eq(lab_canary_check(h_back + G + 3 + n, G - 3), G - 3, "wrote past the output");
    for (int w = 0; w < 3; w++)
        cr_expect_eq(h_back[G + w], LAB_POISON, "wrote before the output (word %d of the gap)", w);
    cudaFree(d_temp);
    cudaFree(d_out);
    cudaFree(d_in);
    free(h_guard);
    free(h_back);
    free(want);
    free(h_in);
}

Test(lookback, scratch_size, .description = "temp_bytes grows with the tile count, stays small")
{
    const lab_temp_fn tb = LAB.variants[0].temp_bytes;
    cr_assert(tb != NULL, "lab 08 needs scratch for its descriptors");
    cr_expect_lt(tb(TILE), tb(TILE * 1000), "scratch must grow with the number of tiles");
    size_t big = ((size_t)1 << 31) + 7;
    cr_expect_lt(tb(big), big / 64, "scratch %zu bytes at n=%zu: more than a descriptor per tile?",
                 tb(big), big);
}
