/* lab_10_apps.c — lab 10's applications beyond the generic matrix (test_lab.c runs every variant
 * over the edge sizes and distributions against ops.c's references): the phases alone (one radix
 * pass and one split must each be a STABLE partition, which the whole sort needs and its output
 * alone cannot show), whole sorts that a pass unstable at any digit width gets wrong, compaction's
 * edges (nothing kept, everything kept, kept elements on the tile edges; both variants), CSR rows
 * in reverse order and one row holding everything, and which lab's scan the applications ran on.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "ops.h"
#include "course/10_applications.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

TestSuite(apps10, .timeout = 120);

/* A device copy of h[0..n) (n may be 0). */
static int *to_device(const int *h, size_t n)
{
    int *d;
    CUDA_CHECK(cudaMalloc((void **)&d, (n ? n : 1) * sizeof(int)));
    if (n)
        CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    return d;
}

static void *zeroed_temp(size_t bytes)
{
    void *d = NULL;
    if (bytes) {
        CUDA_CHECK(cudaMalloc(&d, bytes));
        CUDA_CHECK(cudaMemset(d, 0, bytes));
    }
    return d;
}

/* The keys of in[0..n) sorted stably by (key >> shift) & mask: the reference of one pass. */
static void stable_by_digit(const int *in, int *want, size_t n, int shift, unsigned mask)
{
    size_t k = 0;
    for (unsigned d = 0; d <= mask; d++)
        for (size_t i = 0; i < n; i++)
            if ((((unsigned)in[i] >> shift) & mask) == d)
                want[k++] = in[i];
}

typedef lab_result (*pass_fn)(const int *, int *, size_t, int, void *);

/* Runs one pass (radix or split) at `arg` on random keys and checks it against the stable
 * partition by the digit at shift with mask. */
static void check_pass(const char *variant, pass_fn pass, size_t n, int arg, int shift,
                       unsigned mask)
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, variant));
    int *in = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int)), *got = malloc(n * 4);
    cr_assert(in && want && got);
    lab_fill_input(in, n, DIST_RANDOM, lab_test_seed());
    stable_by_digit(in, want, n, shift, mask);
    int *d_in = to_device(in, n), *d_out = to_device(in, n); /* d_out: overwritten */
    void *d_temp = zeroed_temp(apps_sort_temp_bytes(n));
    const lab_result r = pass(d_in, d_out, n, arg, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "%s pass returned %d", variant, (int)r);
    CUDA_CHECK(cudaMemcpy(got, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    const size_t bad = lab_first_mismatch(got, want, n);
    cr_expect_eq(bad, n,
                 "%s pass (digit at bit %d, %u values) of n=%zu keys: out[%zu] expected %u, got "
                 "%u: keys of one digit must keep their input order (a stable pass), or the "
                 "next pass undoes this one",
                 variant, shift, mask + 1, n, bad, bad < n ? (unsigned)want[bad] : 0,
                 bad < n ? (unsigned)got[bad] : 0);
    cudaFree(d_temp);
    cudaFree(d_out);
    cudaFree(d_in);
    free(got);
    free(want);
    free(in);
}

Test(apps10, radix_pass_is_stable,
     .description = "one 4-bit pass (digit 2, bits 8-11) = the stable partition by that digit")
{
    check_pass("radix_sort", apps_radix_pass, 3 * APPS_TILE + 77, 8, 8, APPS_RADIX - 1);
}

Test(apps10, radix_top_digit, .description = "one 4-bit pass on bits 28-31 (the sign bit too)")
{
    check_pass("radix_sort", apps_radix_pass, 2 * APPS_TILE + 1, 28, 28, APPS_RADIX - 1);
}

Test(apps10, split_pass_is_stable, .description = "one 1-bit split (bit 5) = the stable partition")
{
    check_pass("split_sort", apps_split_pass, 3 * APPS_TILE + 77, 5, 5, 1);
}

/* Sorts in[0..n) with variant `name` (a whole sort) and checks it against want. */
static void check_sort(const char *name, const int *in, const int *want, size_t n, const char *what)
{
    const int vi = lab_find_variant(&LAB, name);
    cr_assert(vi >= 0, "lab 10 has no variant %s", name);
    int *got = malloc(n * sizeof(int)), *d_in = to_device(in, n), *d_out = to_device(in, n);
    cr_assert(got);
    void *d_temp = zeroed_temp(apps_sort_temp_bytes(n));
    const lab_result r = LAB.variants[vi].fn.scan(d_in, d_out, n, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "%s returned %d", name, (int)r);
    CUDA_CHECK(cudaMemcpy(got, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    const size_t bad = lab_first_mismatch(got, want, n);
    cr_expect_eq(bad, n, "%s, %s (n=%zu): out[%zu] expected %#x, got %#x", name, what, n, bad,
                 bad < n ? (unsigned)want[bad] : 0, bad < n ? (unsigned)got[bad] : 0);
    cudaFree(d_temp);
    cudaFree(d_out);
    cudaFree(d_in);
    free(got);
}

Test(apps10, sorts_keep_each_pass_stable,
     .description = "whole sorts of keys whose low 24 bits count up in input order: a pass that "
                    "reorders equal digits (any digit width) leaves them out of order")
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, "radix_sort"));
    const size_t n = 5 * 4096 + 77; /* several tiles of every sort in the course */
    int *in = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int));
    cr_assert(in && want);
    /* the top byte takes 7 values, so every top digit holds many keys; below it the input
     * index, so every lower digit sees runs of equal values in input order */
    for (size_t i = 0; i < n; i++)
        in[i] = (int)((unsigned)((i * 5) % 7 + 250) << 24 | (unsigned)i);
    stable_by_digit(in, want, n, 24, 0xFF); /* sorted by the top byte, then by i: the sort */
    check_sort("radix_sort", in, want, n, "top byte of 7 values, then the input index");
    check_sort("radix_sort_on_scan", in, want, n, "top byte of 7 values, then the input index");
    free(want);
    free(in);
}

Test(apps10, sort_last_tile_partial_round,
     .description = "a last tile that ends inside a warp's round, with digit 0 and digit 255 among "
                    "that round's keys, its tile of few distinct digits and of many: a lane past "
                    "the end must rank with no digit")
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, "radix_sort"));
    /* 4096 + 927: the last tile of the reference's sort (4096 keys, 512 a warp, 32 a round) ends
     * 31 keys into a round, and so does a tile of 2048 or 1024. Along every 32 keys the low byte
     * is 0 first and 255 at the 31st (255 is also what a key past the end reads as, 0xFFFFFFFF),
     * so each round's first pass has digit 0 and digit 255 in it; the upper bytes are random. A
     * lane past the end that matched digit 0 (or 255) would be counted with its keys, and the
     * keys after them would move. (The reference reads a key past the end as 0xFFFFFFFF, digit
     * 255 in every pass, the last of its tile and of the pass: there a lane past the end that is
     * counted moves no real key, so mutants of its end tests survive; a kernel that reads such
     * a key as 0 is caught.) Two inputs, as the reference ranks a tile of few distinct
     * digits (at most OS_MATCH_HYBRID, 16) with __match_any_sync and one of many through shared
     * words: low bytes 0, 1 ... 14, 0, 1 ... 14, 255, 1 (16 distinct), and 0, then 29 digits
     * that change from round to round (all of 1..254 in a tile), then 255, then one more. */
    const size_t n = 4096 + 927;
    int *in = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int));
    cr_assert(in && want);
    for (int many = 0; many < 2; many++) {
        unsigned x = 12345u;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            const unsigned r = (unsigned)(i % 32), q = (unsigned)(i / 32);
            unsigned low = r == 30 ? 0xFFu : r % 15u;
            if (many && r != 0 && r != 30)
                low = (q * 29u + r) % 254u + 1u;
            in[i] = (int)((x & 0xFFFFFF00u) | low);
        }
        cr_assert_eq(lab_apps_reference(LAB_OP_SORT, in, n, DIST_RANDOM, want), n);
        const char *what = many ? "low bytes 0, 29 of 1..254, 255, one more in every round"
                                : "low bytes 0..14, 0..14, 255, 1 in every round";
        check_sort("radix_sort", in, want, n, what);
        check_sort("radix_sort_on_scan", in, want, n, what);
    }
    free(want);
    free(in);
}

/* Compaction of in[0..n): the kept count and the kept elements against the host's. */
static void check_compact(lab_compact_fn compact, const int *in, size_t n, const char *what)
{
    int *want = malloc((n ? n : 1) * sizeof(int)), *got = malloc((n ? n : 1) * sizeof(int));
    cr_assert(want && got);
    const size_t k = lab_apps_reference(LAB_OP_COMPACT, in, n, DIST_SMALL, want);
    int *d_in = to_device(in, n), *d_out = to_device(in, n); /* d_out: overwritten */
    size_t *d_count, count = (size_t)-1;
    CUDA_CHECK(cudaMalloc((void **)&d_count, sizeof(size_t)));
    CUDA_CHECK(cudaMemset(d_count, 0xFF, sizeof(size_t)));
    void *d_temp = zeroed_temp(apps_compact_temp_bytes(n));
    const lab_result r = compact(d_in, d_out, n, d_count, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "apps_compact returned %d", (int)r);
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof(count), cudaMemcpyDeviceToHost));
    cr_expect_eq(count, k, "%s (n=%zu): *d_count expected %zu, got %zu", what, n, k, count);
    if (count == k && k > 0) {
        CUDA_CHECK(cudaMemcpy(got, d_out, k * sizeof(int), cudaMemcpyDeviceToHost));
        const size_t bad = lab_first_mismatch(got, want, k);
        cr_expect_eq(bad, k, "%s (n=%zu): out[%zu] expected %d, got %d", what, n, bad,
                     bad < k ? want[bad] : 0, bad < k ? got[bad] : 0);
    }
    cudaFree(d_temp);
    cudaFree(d_count);
    cudaFree(d_out);
    cudaFree(d_in);
    free(got);
    free(want);
}

/* Compaction's edges with one entry point: nothing kept, everything kept, kept only on the edges
 * of both the tiles the course uses (2048 and 4096), n = 0. */
static void compact_edges(lab_compact_fn compact)
{
    const size_t t = APPS_TILE, n = 4 * t + 3;
    int *in = malloc(n * sizeof(int));
    cr_assert(in);
    for (size_t i = 0; i < n; i++)
        in[i] = -(int)(i % 100); /* x <= 0: nothing kept */
    check_compact(compact, in, n, "nothing kept");
    for (size_t i = 0; i < n; i++)
        in[i] = (int)(i % 1000) + 1;
    check_compact(compact, in, n, "everything kept");
    const size_t edges[] = {0, t - 1, t, 2 * t - 1, 2 * t, 2 * t + 31, 3 * t, n - 1};
    for (size_t i = 0; i < n; i++)
        in[i] = 0;
    for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
        in[edges[e]] = (int)e + 7;
    check_compact(compact, in, n,
                  "kept only at 0, tile-1, tile, 2 tile-1, 2 tile, 2 tile+31, 3 tile, n-1");
    check_compact(compact, in, 0, "n = 0");
    free(in);
}

Test(apps10, compact_edges,
     .description = "compaction (both variants): nothing kept, everything kept, kept elements "
                    "only on tile edges, n = 0")
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, "compact"));
    compact_edges(apps_compact);
    compact_edges(apps_compact_on_scan);
}

/* The offsets of rows[0..n) in n_rows rows against the host's. */
static void check_csr(const int *rows, size_t n, size_t n_rows, const char *what)
{
    int *want = calloc(n_rows + 1, sizeof(int)), *got = calloc(n_rows + 1, sizeof(int));
    cr_assert(want && got);
    for (size_t i = 0; i < n; i++)
        want[rows[i] + 1]++;
    for (size_t r = 1; r <= n_rows; r++)
        want[r] += want[r - 1];
    int *d_rows = to_device(rows, n), *d_off;
    CUDA_CHECK(cudaMalloc((void **)&d_off, (n_rows + 1) * sizeof(int)));
    CUDA_CHECK(cudaMemset(d_off, LAB_POISON_BYTE, (n_rows + 1) * sizeof(int)));
    void *d_temp = zeroed_temp(apps_csr_temp_bytes(n_rows + 1));
    const lab_result r = apps_csr_offsets(d_rows, d_off, n, n_rows, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "apps_csr_offsets returned %d", (int)r);
    CUDA_CHECK(cudaMemcpy(got, d_off, (n_rows + 1) * sizeof(int), cudaMemcpyDeviceToHost));
    const size_t bad = lab_first_mismatch(got, want, n_rows + 1);
    cr_expect_eq(bad, n_rows + 1, "%s (n=%zu, %zu rows): offsets[%zu] expected %d, got %d", what, n,
                 n_rows, bad, bad <= n_rows ? want[bad] : 0, bad <= n_rows ? got[bad] : 0);
    cudaFree(d_temp);
    cudaFree(d_off);
    cudaFree(d_rows);
    free(got);
    free(want);
}

Test(apps10, csr_shapes,
     .description = "CSR: rows in reverse order, every nonzero in the last row, no nonzeros")
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, "csr"));
    const size_t n = 3 * APPS_TILE + 9, n_rows = 1000;
    int *rows = malloc(n * sizeof(int));
    cr_assert(rows);
    for (size_t i = 0; i < n; i++)
        rows[i] = (int)(n_rows - 1 - (i * n_rows) / n); /* descending runs */
    check_csr(rows, n, n_rows, "rows in reverse order");
    for (size_t i = 0; i < n; i++)
        rows[i] = (int)n_rows - 1;
    check_csr(rows, n, n_rows, "every nonzero in the last row");
    check_csr(rows, 0, n_rows, "no nonzeros");
    free(rows);
}

Test(apps10, built_on_your_scan,
     .description = "the applications ran on lab 08's scan (or lab 07's while 08 is not written)")
{
    lab_test_need_variant(&LAB, lab_find_variant(&LAB, "compact"));
    lab_report r;
    /* compact_on_scan: the reference's compact is a single kernel that calls no scan (in a
     * student's file the same as compact, and named so) */
    cr_assert(lab_case_ok(&LAB, lab_find_variant(&LAB, "compact_on_scan"), 5 * APPS_TILE,
                          DIST_RANDOM, lab_test_seed(), &r),
              "%s: %s", lab_test_student_mode() ? "compact" : "compact_on_scan", r.message);
    const char *base = apps_scan_base();
    cr_assert(base != NULL, "apps_scan was never called: every application scans with it");
    if (lab_test_student_mode())
        cr_expect(strcmp(base, "08_decoupled_lookback") == 0 ||
                      strcmp(base, "07_hierarchical") == 0,
                  "ran on %s", base);
    else /* the reference solutions: lab 08's */
        cr_expect_str_eq(base, "08_decoupled_lookback");
}
