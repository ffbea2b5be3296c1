/* test_lab.c — the kernel tests every lab gets, linked with that lab's reference solution (make
 * test) or with the student's labs/ code (make test TEST_SRC=labs).
 *
 * Each test runs every variant of the lab over the edge-size matrix (lab_cases.h) with one
 * input distribution, comparing against the CPU reference and checking the canaries and the
 * input. Failures name the variant, n, distribution, seed, index, expected and got.
 * GPU labs skip with the reason when there is no CUDA device. Linked with the student's code,
 * a lab with no variant written yet skips with "not implemented yet"; a variant that is still
 * not written while another one is fails once, naming it.
 */
#include "lab_cases.h"
#include "driver.h"
#include "cuda_check.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* Every variant is written: names the ones that are not, once for the whole lab (the other
 * tests skip their cases silently). */
Test(kernel, variants_written, .description = "every variant is written (not LAB_NOT_IMPLEMENTED)")
{
    lab_test_need_device(&LAB);
    lab_expect_all_written(&LAB);
}

/* In CPU mode a size past LAB_CPU_MATRIX_N runs once, with one seed, in full_range, whose
 * values reach every bit (its sums wrap, its sort keys have the sign bit): the sizes near 2^16
 * cost most of a CPU-mode suite (lab 10: 88 % of its matrix's elements, most of them lab 10's
 * 32-pass split sort), and another seed or input there exercises no other path (CPU mode's
 * schedules follow CPU_SCHED_SEED, not the input; the tiles, levels and carries are the same).
 * The small sizes, where the tile edges are, keep every seed and every input; a GPU runs the
 * whole matrix, and the grader every size with every input in both modes. */
#define LAB_CPU_MATRIX_N 16384

/* Every variant x every edge size x seeds 1..nseeds (offset by LAB_TEST_SEED) for one dist. */
static void run_matrix(lab_dist d, int large, int nseeds)
{
    size_t sizes[LAB_CASES_MAX];
    size_t count = lab_edge_sizes(&LAB, large, sizes, LAB_CASES_MAX);
    uint64_t base = lab_test_seed();
    lab_test_need_device(&LAB);
    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        for (size_t i = 0; i < count; i++) {
#ifdef LAB_CPU_MODE
            if (sizes[i] > LAB_CPU_MATRIX_N && d != DIST_RANDOM) /* full_range: one seed */
                continue;
#endif
            for (int s = 0; s < nseeds; s++) {
                lab_report r;
                uint64_t seed = base + (uint64_t)s;
                int ok = lab_case_ok(&LAB, v, sizes[i], d, seed, &r);
                cr_expect(ok, "%s/%s n=%zu dist=%s seed=%llu: %s: %s", LAB.id, LAB.variants[v].name,
                          sizes[i], lab_dist_name(d), (unsigned long long)seed,
                          lab_status_name(r.status), r.message);
            }
        }
    }
}

TestSuite(kernel, .timeout = 300);

Test(kernel, small_values, .description = "edge sizes, small random values, 3 seeds")
{
    run_matrix(DIST_SMALL, 0, 3);
}

Test(kernel, all_ones, .description = "edge sizes, all ones (out[i] = i + 1 when inclusive)")
{
    run_matrix(DIST_ONES, 0, 1);
}

Test(kernel, alternating, .description = "edge sizes, alternating signs")
{
    run_matrix(DIST_ALT, 0, 1);
}

Test(kernel, overflow_wraps, .description = "edge sizes, large values whose sums wrap mod 2^32")
{
    run_matrix(DIST_LARGE, 0, 2);
}

Test(kernel, full_range, .description = "edge sizes, any 32-bit value")
{
    run_matrix(DIST_RANDOM, 0, 1);
}

Test(kernel, large_n, .description = "n = 2^24 + 7 (or the lab's max_n), every variant")
{
    size_t sizes[LAB_CASES_MAX];
    size_t count = lab_edge_sizes(&LAB, 1, sizes, LAB_CASES_MAX);
    lab_test_need_device(&LAB);
    size_t n = sizes[count - 1]; /* the largest size the lab takes */
    for (int v = 0; v < LAB.n_variants; v++) {
        lab_report r;
        if (!lab_expect_written(&LAB, v))
            continue;
        int ok = lab_case_ok(&LAB, v, n, DIST_RANDOM, lab_test_seed() + 7, &r);
        cr_expect(ok, "%s/%s n=%zu dist=random: %s: %s", LAB.id, LAB.variants[v].name, n,
                  lab_status_name(r.status), r.message);
    }
}

Test(kernel, descriptor, .description = "LAB is well formed: variants, tile, sizes")
{
    cr_assert_gt(LAB.n_variants, 0, "LAB lists no variants");
    cr_assert(LAB.id && LAB.title, "LAB needs an id and a title");
    for (int v = 0; v < LAB.n_variants; v++) {
        const lab_variant *var = &LAB.variants[v];
        cr_expect(var->name && var->summary, "variant %d needs a name and a summary", v);
        static const char *const member[] = {"scan", "tiles", "seg", "compact", "csr"};
        cr_expect(lab_entry_set(LAB.shape, var->op, var->fn),
                  "variant %s sets no .fn.%s (the entry point a lab of this shape and op calls)",
                  var->name, member[lab_entry_of(LAB.shape, var->op)]);
        cr_expect(var->op == LAB_OP_ADD || (LAB.shape == LAB_WHOLE && LAB.type == SCAN_INCLUSIVE),
                  "variant %s: other operators are whole inclusive scans only", var->name);
        for (int w = 0; w < v; w++)
            cr_expect(strcmp(var->name, LAB.variants[w].name) != 0, "two variants named %s",
                      var->name);
    }
    if (LAB.shape == LAB_TILE) {
        cr_expect(LAB.tile >= 32 && (LAB.tile & (LAB.tile - 1)) == 0,
                  "tile %zu must be a power of two >= 32", LAB.tile);
    }
    cr_expect(LAB.bench_n > 0, "bench_n must be positive");
    cr_expect(LAB.max_n == 0 || LAB.bench_n <= LAB.max_n, "bench_n must not be over max_n");
}

/* Tile labs: the tile totals and the tile-local scan, checked directly against a CPU model
 * (the full-scan tests would also catch them, but this names the tile). */
Test(kernel, tile_totals, .description = "tile labs: each tile's local scan and its total")
{
    if (LAB.shape != LAB_TILE)
        cr_skip_test("%s is not a tile lab", LAB.id);
    lab_test_need_device(&LAB);
    const size_t T = LAB.tile;
    const size_t ns[] = {1, T - 1, T, T + 1, 5 * T + 3};
    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
            const size_t n = ns[k], tiles = CEIL_DIV(n, T);
            int *h_in = malloc(n * sizeof(int)), *h_out = malloc(n * sizeof(int));
            int *h_sums = malloc(tiles * sizeof(int)), *want = malloc(T * sizeof(int));
            int *d_in, *d_out, *d_sums;
            void *d_scratch;
            cr_assert(h_in && h_out && h_sums && want);
            lab_fill_input(h_in, n, DIST_RANDOM, lab_test_seed() + k);
            CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(int)));
            CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(int)));
            size_t sb = lab_scratch_bytes(&LAB, &LAB.variants[v], n);
            CUDA_CHECK(cudaMalloc(&d_scratch, sb));
            CUDA_CHECK(cudaMemset(d_scratch, 0, sb));
            CUDA_CHECK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
            lab_result res =
                lab_device_tile_pass(&LAB, &LAB.variants[v], d_in, d_out, n, d_scratch, &d_sums);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            cr_assert_eq(res, LAB_OK, "%s/%s n=%zu: scan_tiles returned %d", LAB.id,
                         LAB.variants[v].name, n, (int)res);
            CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(h_sums, d_sums, tiles * sizeof(int), cudaMemcpyDeviceToHost));
            for (size_t t = 0; t < tiles; t++) {
                size_t len = (t + 1) * T <= n ? T : n - t * T;
                lab_reference_scan(h_in + t * T, want, len, LAB.type);
                unsigned total = 0;
                for (size_t j = 0; j < len; j++)
                    total += (unsigned)h_in[t * T + j];
                size_t bad = lab_first_mismatch(h_out + t * T, want, len);
                cr_expect(bad == len, "%s/%s n=%zu tile %zu: out[%zu] expected %d, got %d", LAB.id,
                          LAB.variants[v].name, n, t, t * T + bad, bad < len ? want[bad] : 0,
                          bad < len ? h_out[t * T + bad] : 0);
                cr_expect_eq(h_sums[t], (int)total,
                             "%s/%s n=%zu: tile_sums[%zu] expected %d, got %d", LAB.id,
                             LAB.variants[v].name, n, t, (int)total, h_sums[t]);
            }
            cudaFree(d_scratch);
            cudaFree(d_out);
            cudaFree(d_in);
            free(want);
            free(h_sums);
            free(h_out);
            free(h_in);
        }
    }
}

/* The same scratch reused across calls (as the timing loop does) must give the same answer:
 * catches state a scan leaves behind (counters, flags) and forgets to reset. In CPU mode three
 * calls (the third sees what the first two left) at n up to LAB_TEST_MAX_N: there every call of
 * lab 10 costs a second. */
Test(kernel, repeated_calls, .description = "ten calls in a row on the same buffers agree")
{
    lab_test_need_device(&LAB);
    lab_options o;
    lab_report r;
    lab_default_options(&o);
    o.n = LAB.max_n && LAB.max_n < 100003 ? LAB.max_n : 100003;
    o.n_given = 1;
    o.reps = 10; /* the timed loop reuses the buffers; the harness validates after it */
    o.warmup = 2;
#ifdef LAB_CPU_MODE
    /* what a call leaves behind (a counter, a flag) shows in a few tiles as well as in many: lab
     * 08's tile is 6144, so 2.7 tiles of every lab; lab 10's split sort makes 32 scans a call */
    if (o.n > LAB_CPU_MATRIX_N + 3)
        o.n = LAB_CPU_MATRIX_N + 3;
    if (lab_test_max_n() < o.n)
        o.n = lab_test_max_n();
    o.reps = 2;
    o.warmup = 1;
#endif
    o.seed = lab_test_seed();
    o.dist = DIST_RANDOM;
    for (int v = 0; v < LAB.n_variants; v++) {
        if (!lab_expect_written(&LAB, v))
            continue;
        lab_run(&LAB, v, &o, &r);
        cr_expect_eq(r.status, ST_OK, "%s/%s n=%zu after repeated calls: %s: %s", LAB.id,
                     LAB.variants[v].name, o.n, lab_status_name(r.status), r.message);
    }
}

/* The extended suite (make test-extended, GPU machine only): n = 2^31 + 7, past what a 32-bit
 * index can address, for every lab with no practical size limit. Needs ~35 GB of host memory and
 * ~18 GB of device memory; where the harness finds less (status no_memory), the test is skipped
 * with its message rather than failed. */
Test(kernel, huge_n, .timeout = 600,
     .description = "extended suite: n = 2^31 + 7 (size_t indexing), default variant")
{
    const char *ext = getenv("LAB_TEST_EXTENDED");
    if (!ext || strcmp(ext, "1") != 0)
        cr_skip_test("extended suite only (make test-extended)");
    if (LAB.max_n)
        cr_skip_test("%s is practical only up to n=%zu", LAB.id, LAB.max_n);
    lab_test_need_device(&LAB);
    lab_report r;
    size_t n = ((size_t)1 << 31) + 7;
    int ok = lab_case_ok(&LAB, 0, n, DIST_RANDOM, lab_test_seed() + 31, &r);
    if (r.status == ST_NO_MEMORY)
        cr_skip_test("n = 2^31 + 7 does not fit on this machine: %s", r.message);
    cr_expect(ok, "%s/%s n=%zu: %s: %s", LAB.id, LAB.variants[0].name, n, lab_status_name(r.status),
              r.message);
}
