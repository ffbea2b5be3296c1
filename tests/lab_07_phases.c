/* lab_07_phases.c — lab 07's phases one at a time, each against a CPU model.
 *
 * The full-scan matrix (test_lab.c) says whether the hierarchy is right; these say which phase
 * is wrong: the tile scan (with and without carries), the tile reduction, the add-back, and the
 * scan of the totals at one, two and three levels. They reach the phases through the course's
 * test hooks (lab_hook_*: tests/hooks/07_hierarchical.cu, compiled together with the lab's
 * scan.cu, the reference's or the student's). Also: the
 * scratch stays inside temp_bytes(n), unaligned pointers work, and thousands of calls leak no
 * device memory.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define GUARD 1024 /* canary words after every device array the phases write */

/* Device array of n ints followed by GUARD canary words; filled from h when h is not NULL. */
static int *dev_array(const int *h, size_t n)
{
    int *d, *canary = malloc(GUARD * sizeof(int));
    cr_assert(canary);
    lab_canary_fill(canary, GUARD);
    CUDA_CHECK(cudaMalloc((void **)&d, (n + GUARD) * sizeof(int)));
    if (h)
        CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    else
        CUDA_CHECK(cudaMemset(d, LAB_POISON_BYTE, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d + n, canary, GUARD * sizeof(int), cudaMemcpyHostToDevice));
    free(canary);
    return d;
}

/* Copies d[0..n) to the host and checks the guard after it; returns the host copy. */
static int *fetch_checked(const int *d, size_t n, const char *what)
{
    int *h = malloc((n + GUARD) * sizeof(int));
    cr_assert(h);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h, d, (n + GUARD) * sizeof(int), cudaMemcpyDeviceToHost));
    size_t k = lab_canary_check(h + n, GUARD);
    cr_expect(k == GUARD, "%s: wrote past its end: word %zu after the last (n=%zu)", what, k, n);
    return h;
}

static int *random_ints(size_t n, uint64_t seed)
{
    int *h = malloc((n ? n : 1) * sizeof(int));
    cr_assert(h);
    lab_fill_input(h, n, DIST_RANDOM, seed);
    return h;
}

/* Sizes around the tile: one element, a ragged single tile, exact tiles, ragged multi-tile. */
static size_t tile_sizes(size_t *ns)
{
    const size_t T = lab_hook_tile();
    size_t k = 0;
    ns[k++] = 1;
    ns[k++] = T - 1;
    ns[k++] = T;
    ns[k++] = T + 1;
    ns[k++] = 5 * T + 3;
    ns[k++] = 64 * T;
    return k;
}

/* Tile scan, with totals and without carries, then with carries and without totals. */
static void check_tile_scan(int with_carries)
{
    const size_t T = lab_hook_tile();
    size_t ns[8], count = tile_sizes(ns);
    for (size_t c = 0; c < count; c++) {
        const size_t n = ns[c], tiles = CEIL_DIV(n, T);
        int *h_in = random_ints(n, lab_test_seed() + c);
        int *h_carry = random_ints(tiles, lab_test_seed() + 100 + c);
        int *want = malloc(n * sizeof(int));
        int *d_in = dev_array(h_in, n), *d_out = dev_array(NULL, n);
        int *d_sums = dev_array(NULL, tiles), *d_carry = dev_array(h_carry, tiles);
        cr_assert(want);

        lab_result r = lab_hook_tile_scan(d_in, d_out, with_carries ? NULL : d_sums,
                                          with_carries ? d_carry : NULL, n);
        CUDA_CHECK(cudaGetLastError());
        cr_assert_eq(r, LAB_OK, "tile scan n=%zu returned %d", n, (int)r);
        int *h_out = fetch_checked(d_out, n, "tile scan output");
        int *h_sums = fetch_checked(d_sums, tiles, "tile totals");

        for (size_t t = 0; t < tiles; t++) {
            const size_t base = t * T, len = n - base < T ? n - base : T;
            unsigned carry = with_carries && t > 0 ? (unsigned)h_carry[t - 1] : 0u, total = 0;
            lab_reference_scan(h_in + base, want + base, len, SCAN_INCLUSIVE);
            for (size_t j = 0; j < len; j++) {
                total += (unsigned)h_in[base + j];
                want[base + j] = (int)((unsigned)want[base + j] + carry);
            }
            if (!with_carries)
                cr_expect_eq(h_sums[t], (int)total, "n=%zu: tile_sums[%zu] expected %d, got %d", n,
                             t, (int)total, h_sums[t]);
        }
        size_t bad = lab_first_mismatch(h_out, want, n);
        cr_expect(bad == n, "tile scan%s n=%zu: out[%zu] (tile %zu) expected %d, got %d",
                  with_carries ? " with carries" : "", n, bad, bad / T, bad < n ? want[bad] : 0,
                  bad < n ? h_out[bad] : 0);
        if (with_carries) {
            /* no totals asked for: the totals array must be untouched */
            for (size_t t = 0; t < tiles; t++)
                cr_expect_eq(h_sums[t], LAB_POISON, "tile scan with carries wrote tile_sums[%zu]",
                             t);
        }
        free(h_sums);
        free(h_out);
        cudaFree(d_carry);
        cudaFree(d_sums);
        cudaFree(d_out);
        cudaFree(d_in);
        free(want);
        free(h_carry);
        free(h_in);
    }
}

TestSuite(phases07, .timeout = 300);

Test(phases07, tile_scan, .description = "each tile scanned on its own; its total in tile_sums")
{
    lab_test_need_device(&LAB);
    check_tile_scan(0);
}

Test(phases07, tile_scan_with_carries,
     .description = "tile t starts from carries[t - 1] (reduce_then_scan's last pass)")
{
    lab_test_need_device(&LAB);
    check_tile_scan(1);
}

Test(phases07, tile_reduce, .description = "tile_sums[t] = sum of tile t, nothing else written")
{
    lab_test_need_device(&LAB);
    const size_t T = lab_hook_tile();
    size_t ns[8], count = tile_sizes(ns);
    for (size_t c = 0; c < count; c++) {
        const size_t n = ns[c], tiles = CEIL_DIV(n, T);
        int *h_in = random_ints(n, lab_test_seed() + 200 + c);
        int *d_in = dev_array(h_in, n), *d_sums = dev_array(NULL, tiles);
        lab_result r = lab_hook_tile_reduce(d_in, d_sums, n);
        CUDA_CHECK(cudaGetLastError());
        cr_assert_eq(r, LAB_OK, "tile reduce n=%zu returned %d", n, (int)r);
        int *h_sums = fetch_checked(d_sums, tiles, "tile totals");
        for (size_t t = 0; t < tiles; t++) {
            unsigned total = 0;
            for (size_t i = t * T; i < n && i < (t + 1) * T; i++)
                total += (unsigned)h_in[i];
            cr_expect_eq(h_sums[t], (int)total, "n=%zu: tile_sums[%zu] expected %d, got %d", n, t,
                         (int)total, h_sums[t]);
        }
        free(h_sums);
        cudaFree(d_sums);
        cudaFree(d_in);
        free(h_in);
    }
}

Test(phases07, add_back, .description = "out[i] += carries[i / tile - 1] past the first tile only")
{
    lab_test_need_device(&LAB);
    const size_t T = lab_hook_tile();
    size_t ns[8], count = tile_sizes(ns);
    for (size_t c = 0; c < count; c++) {
        const size_t n = ns[c], tiles = CEIL_DIV(n, T);
        int *h_out = random_ints(n, lab_test_seed() + 300 + c);
        int *h_carry = random_ints(tiles, lab_test_seed() + 400 + c);
        int *d_out = dev_array(h_out, n), *d_carry = dev_array(h_carry, tiles);
        lab_result r = lab_hook_add_back(d_out, d_carry, n);
        CUDA_CHECK(cudaGetLastError());
        cr_assert_eq(r, LAB_OK, "add-back n=%zu returned %d", n, (int)r);
        int *got = fetch_checked(d_out, n, "add-back output");
        int *carry_back = fetch_checked(d_carry, tiles, "carries");
        for (size_t i = 0; i < n; i++) {
            int want = i < T ? h_out[i] : (int)((unsigned)h_out[i] + (unsigned)h_carry[i / T - 1]);
            if (got[i] != want) {
                cr_expect_eq(got[i], want,
                             "add-back n=%zu: out[%zu] (tile %zu) expected %d, got %d", n, i, i / T,
                             want, got[i]);
                break;
            }
        }
        cr_expect(lab_first_mismatch(carry_back, h_carry, tiles) == tiles,
                  "add-back n=%zu changed the carries", n);
        free(carry_back);
        free(got);
        cudaFree(d_carry);
        cudaFree(d_out);
        free(h_carry);
        free(h_out);
    }
}

/* The scan of the totals is the hierarchy itself, called on m values: one tile, two levels
 * (tile < m <= tile^2), three levels (m > tile^2). The scratch gets a guard after
 * temp_bytes(m) bytes. variant: the one whose scan it is. */
static void check_scan_totals(int variant)
{
    cr_assert_geq(variant, 0, "%s has no such variant", LAB.id);
    lab_skip_unless_written(&LAB, variant);
    const size_t T = lab_hook_tile();
    const size_t ms[] = {1, T, T + 1, 7 * T + 5, T * T, T * T + 1, T * T + 3 * T + 1};
    for (size_t c = 0; c < sizeof(ms) / sizeof(ms[0]); c++) {
        const size_t m = ms[c];
        const size_t temp_words = CEIL_DIV(lab_hook_temp_bytes(m), sizeof(int));
        int *h_in = random_ints(m, lab_test_seed() + 500 + c);
        int *want = malloc(m * sizeof(int));
        int *d_in = dev_array(h_in, m), *d_out = dev_array(NULL, m);
        int *d_temp = dev_array(NULL, temp_words);
        cr_assert(want);
        CUDA_CHECK(cudaMemset(d_temp, 0, temp_words * sizeof(int))); /* as the harness does */
        if (m > T)
            cr_expect_gt(temp_words, 0, "temp_bytes(%zu) is 0, but %zu values need totals", m, m);

        lab_result r = lab_hook_scan_totals(variant, d_in, d_out, m, temp_words ? d_temp : NULL);
        CUDA_CHECK(cudaGetLastError());
        cr_assert_eq(r, LAB_OK, "scan of m=%zu returned %d", m, (int)r);
        int *got = fetch_checked(d_out, m, "scan output");
        int *temp_back = fetch_checked(d_temp, temp_words, "scratch (temp_bytes is too small)");
        int *in_back = fetch_checked(d_in, m, "scan input");
        lab_reference_scan(h_in, want, m, SCAN_INCLUSIVE);
        size_t bad = lab_first_mismatch(got, want, m);
        cr_expect(bad == m, "%s scan of m=%zu (%s): out[%zu] (tile %zu) expected %d, got %d",
                  LAB.variants[variant].name, m,
                  m <= T       ? "one tile"
                  : m <= T * T ? "two levels"
                               : "three levels",
                  bad, bad / T, bad < m ? want[bad] : 0, bad < m ? got[bad] : 0);
        cr_expect(lab_first_mismatch(in_back, h_in, m) == m, "scan of m=%zu modified its input", m);
        free(in_back);
        free(temp_back);
        free(got);
        cudaFree(d_temp);
        cudaFree(d_out);
        cudaFree(d_in);
        free(want);
        free(h_in);
    }
}

Test(phases07, scan_totals_recursive,
     .description = "scan_then_propagate on 1, 2 and 3 levels; scratch within temp_bytes")
{
    lab_test_need_device(&LAB);
    check_scan_totals(lab_find_variant(&LAB, "scan_then_propagate"));
}

Test(phases07, scan_totals_recursive_reduce_first,
     .description = "reduce_then_scan on 1, 2 and 3 levels; scratch within temp_bytes")
{
    lab_test_need_device(&LAB);
    check_scan_totals(lab_find_variant(&LAB, "reduce_then_scan"));
}

Test(phases07, temp_bytes_levels, .description = "temp_bytes: 0 for one tile, grows with levels")
{
    lab_test_need_code(&LAB); /* host code only, but the student's temp_bytes is a hole too */
    const size_t T = lab_hook_tile();
    cr_expect_eq(lab_hook_temp_bytes(0), 0);
    cr_expect_eq(lab_hook_temp_bytes(T), 0, "one tile needs no totals");
    /* at least the totals and their scan at every level */
    const size_t n = ((size_t)1 << 31) + 7;
    size_t need = 0;
    for (size_t m = n; m > T; m = CEIL_DIV(m, T))
        need += 2 * CEIL_DIV(m, T) * sizeof(int);
    cr_expect_geq(lab_hook_temp_bytes(n), need, "temp_bytes(2^31 + 7) = %zu, less than %zu",
                  lab_hook_temp_bytes(n), need);
    cr_expect_lt(lab_hook_temp_bytes(n), n / 64, "temp_bytes(2^31 + 7) = %zu is far too large",
                 lab_hook_temp_bytes(n));
}

/* Every variant on pointers that are not 16-byte aligned (in + 1, out + 3): the int4 fast path
 * must not be taken; a wrong guess is a misaligned-address CUDA error or a wrong answer. */
Test(phases07, unaligned_pointers, .description = "both variants on in + 1 and out + 3")
{
    lab_test_need_device(&LAB);
    const size_t T = lab_hook_tile(), n = 9 * T + 11;
    int *h_in = random_ints(n, lab_test_seed() + 600), *want = malloc(n * sizeof(int));
    int *d_in = dev_array(NULL, n + 1), *d_out = dev_array(NULL, n + 3);
    void *d_temp = NULL;
    cr_assert(want);
    CUDA_CHECK(cudaMemcpy(d_in + 1, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    lab_reference_scan(h_in, want, n, SCAN_INCLUSIVE);
    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        size_t tb = LAB.variants[v].temp_bytes ? LAB.variants[v].temp_bytes(n) : 0;
        if (tb) {
            CUDA_CHECK(cudaMalloc(&d_temp, tb));
            CUDA_CHECK(cudaMemset(d_temp, 0, tb));
        }
        lab_result r = LAB.variants[v].fn.scan(d_in + 1, d_out + 3, n, d_temp);
        CUDA_CHECK(cudaGetLastError());
        cr_assert_eq(r, LAB_OK, "%s n=%zu: returned %d", LAB.variants[v].name, n, (int)r);
        int *got = fetch_checked(d_out, n + 3, "unaligned output");
        size_t bad = lab_first_mismatch(got + 3, want, n);
        cr_expect(bad == n, "%s unaligned n=%zu: out[%zu] expected %d, got %d",
                  LAB.variants[v].name, n, bad, bad < n ? want[bad] : 0,
                  bad < n ? got[3 + bad] : 0);
        free(got);
        if (d_temp)
            cudaFree(d_temp);
        d_temp = NULL;
    }
    cudaFree(d_out);
    cudaFree(d_in);
    free(want);
    free(h_in);
}

/* 3000 calls of each variant on the same buffers, in two rounds of 1500: device memory must not
 * shrink (a cudaMalloc without its cudaFree inside the scan shows here), and the last answer is
 * still right. Criterion runs other tests in parallel processes, whose buffers come and go: a
 * leak is reported only when free memory fell by more than 64 MB in both rounds. */
Test(phases07, no_leak_over_thousands_of_calls, .description = "3000 calls per variant, no leak")
{
    lab_test_need_device(&LAB);
#ifdef LAB_CPU_MODE
    cr_skip_test(
        "CPU mode: 3000 calls at n = 2^26 would take hours on the CPU; the GPU run checks leaks");
#endif
    const size_t T = lab_hook_tile(), n = 4 * T * T + 17; /* two levels of totals, 2^26 + 17 */
    const size_t slack = (size_t)64 << 20;
    int *h_in = random_ints(n, lab_test_seed() + 700), *want = malloc(n * sizeof(int));
    int *d_in = dev_array(h_in, n), *d_out = dev_array(NULL, n);
    cr_assert(want);
    lab_reference_scan(h_in, want, n, SCAN_INCLUSIVE);
    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        size_t tb = LAB.variants[v].temp_bytes ? LAB.variants[v].temp_bytes(n) : 0;
        void *d_temp = NULL;
        if (tb) {
            CUDA_CHECK(cudaMalloc(&d_temp, tb));
            CUDA_CHECK(cudaMemset(d_temp, 0, tb));
        }
        size_t fell[2] = {0, 0};
        for (int round = 0; round < 2; round++) {
            size_t free_before = 0, free_after = 0, total = 0;
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
            for (int call = 0; call < 1500; call++)
                cr_assert_eq(LAB.variants[v].fn.scan(d_in, d_out, n, d_temp), LAB_OK);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
            fell[round] = free_after < free_before ? free_before - free_after : 0;
        }
        cr_expect(fell[0] <= slack || fell[1] <= slack,
                  "%s: free device memory fell by %zu and %zu bytes over two rounds of 1500 calls "
                  "(a leak: cudaMalloc in the scan without cudaFree?)",
                  LAB.variants[v].name, fell[0], fell[1]);
        int *got = fetch_checked(d_out, n, "output");
        size_t bad = lab_first_mismatch(got, want, n);
        cr_expect(bad == n, "%s after 3000 calls: out[%zu] expected %d, got %d",
                  LAB.variants[v].name, bad, bad < n ? want[bad] : 0, bad < n ? got[bad] : 0);
        free(got);
        if (d_temp)
            cudaFree(d_temp);
    }
    cudaFree(d_out);
    cudaFree(d_in);
    free(want);
    free(h_in);
}
