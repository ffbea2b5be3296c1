/* lab_06_unaligned.c — lab 06's tile pass on pointers that are not 16-byte aligned.
 *
 * The harness's buffers are aligned, so the int4 path of load_tile/store_tile is what the
 * generic tests see. Here every variant runs on in + 1 and out + 3: a kernel that takes the
 * vector path anyway fails with a misaligned-address error or a wrong answer, and one that
 * writes past the output's end is caught by the guard words behind it.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define GUARD 1024

TestSuite(coarsened06, .timeout = 120);

Test(coarsened06, unaligned_pointers, .description = "every variant's tiles on in + 1, out + 3")
{
    char why[200];
    if (!lab_have_device(why, sizeof(why)))
        cr_skip_test("%s", why);
    lab_test_need_code(&LAB);
    const size_t T = LAB.tile, n = 6 * T + 37, tiles = CEIL_DIV(n, T);
    const size_t out_words = 3 + n + GUARD;
    int *h_in = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int));
    int *h_out = malloc(out_words * sizeof(int)), *h_sums = malloc(tiles * sizeof(int));
    int *canary = malloc(GUARD * sizeof(int));
    int *d_in, *d_out, *d_sums;
    cr_assert(h_in && want && h_out && h_sums && canary);
    lab_fill_input(h_in, n, DIST_RANDOM, lab_test_seed() + 6);
    lab_canary_fill(canary, GUARD);
    CUDA_CHECK(cudaMalloc((void **)&d_in, (n + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, out_words * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_sums, tiles * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in + 1, h_in, n * sizeof(int), cudaMemcpyHostToDevice));

    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, (3 + n) * sizeof(int)));
        CUDA_CHECK(cudaMemcpy(d_out + 3 + n, canary, GUARD * sizeof(int), cudaMemcpyHostToDevice));
        lab_result r = LAB.variants[v].fn.tiles(d_in + 1, d_out + 3, d_sums, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        cr_assert_eq(r, LAB_OK, "%s: scan_tiles returned %d", LAB.variants[v].name, (int)r);
        CUDA_CHECK(cudaMemcpy(h_out, d_out, out_words * sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(h_sums, d_sums, tiles * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t t = 0; t < tiles; t++) {
            const size_t base = t * T, len = n - base < T ? n - base : T;
            unsigned total = 0;
            lab_reference_scan(h_in + base, want + base, len, SCAN_INCLUSIVE);
            for (size_t j = 0; j < len; j++)
                total += (unsigned)h_in[base + j];
            cr_expect_eq(h_sums[t], (int)total, "%s: tile_sums[%zu] expected %d, got %d",
                         LAB.variants[v].name, t, (int)total, h_sums[t]);
        }
        size_t bad = lab_first_mismatch(h_out + 3, want, n);
        cr_expect(bad == n, "%s unaligned n=%zu: out[%zu] (tile %zu) expected %d, got %d",
                  LAB.variants[v].name, n, bad, bad / T, bad < n ? want[bad] : 0,
                  bad < n ? h_out[3 + bad] : 0);
        cr_expect(lab_canary_check(h_out + 3 + n, GUARD) == GUARD,
                  "%s wrote past the end of the output (n=%zu)", LAB.variants[v].name, n);
    }
    cudaFree(d_sums);
    cudaFree(d_out);
    cudaFree(d_in);
    free(canary);
    free(h_sums);
    free(h_out);
    free(want);
    free(h_in);
}
