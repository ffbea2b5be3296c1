/* lab_09_ops.c — lab 09's operators beyond the generic matrix (test_lab.c runs every variant over
 * the edge sizes and distributions, the segmented one with segments of length 1, one segment,
 * short ones and ones across tiles): segment heads placed on the tile edges by hand, extreme
 * values for max and min, and float sums whose order differs from the serial loop's and still
 * pass (ops.c's bound), which is the point of the float variant.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "ops.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TILE                                                                                       \
    2048 /* OPS_TILE of common/course/09_operators.h (the tile when the lab reports none) */

TestSuite(ops09, .timeout = 120);

/* Runs variant `name` on in (and heads) on the device; returns the output (malloc'd). */
static int *run_variant(const char *name, const int *in, const int *heads, size_t n)
{
    const int vi = lab_find_variant(&LAB, name);
    cr_assert(vi >= 0, "lab 09 has no variant %s", name);
    lab_skip_unless_written(&LAB, vi);
    const lab_variant *v = &LAB.variants[vi];
    const size_t tb = v->temp_bytes ? v->temp_bytes(n) : 0;
    int *d_in, *d_heads = NULL, *d_out, *out = malloc(n * sizeof(int));
    void *d_temp = NULL;
    cr_assert(out);
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(int)));
    if (tb) {
        CUDA_CHECK(cudaMalloc(&d_temp, tb));
        CUDA_CHECK(cudaMemset(d_temp, 0, tb));
    }
    CUDA_CHECK(cudaMemcpy(d_in, in, n * sizeof(int), cudaMemcpyHostToDevice));
    if (heads) {
        CUDA_CHECK(cudaMalloc((void **)&d_heads, n * sizeof(int)));
        CUDA_CHECK(cudaMemcpy(d_heads, heads, n * sizeof(int), cudaMemcpyHostToDevice));
    }
    const lab_result r =
        heads ? v->fn.seg(d_in, d_heads, d_out, n, d_temp) : v->fn.scan(d_in, d_out, n, d_temp);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cr_assert_eq(r, LAB_OK, "%s returned %d", name, (int)r);
    CUDA_CHECK(cudaMemcpy(out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_temp);
    cudaFree(d_heads);
    cudaFree(d_out);
    cudaFree(d_in);
    return out;
}

/* Segmented scan of n = 3 tiles + 5 with heads at 1, tile-1, tile, tile+1, 2 tile and n-1. */
static void check_segment_edges(const char *variant, size_t tile)
{
    const size_t n = 3 * tile + 5;
    const size_t at[] = {1, tile - 1, tile, tile + 1, 2 * tile, n - 1};
    int *in = malloc(n * sizeof(int)), *heads = calloc(n, sizeof(int)), *want = malloc(n * 4);
    cr_assert(in && heads && want);
    lab_fill_input(in, n, DIST_SMALL, lab_test_seed());
    for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
        heads[at[k]] = 1;
    lab_ops_reference(LAB_OP_SEG_ADD, SCAN_INCLUSIVE, in, heads, n, want, NULL, NULL);
    int *got = run_variant(variant, in, heads, n);
    const size_t bad = lab_first_mismatch(got, want, n);
    cr_expect_eq(bad, n, "%s: out[%zu] expected %d, got %d (heads at 1, %zu, %zu, %zu, %zu, %zu)",
                 variant, bad, bad < n ? want[bad] : 0, bad < n ? got[bad] : 0, tile - 1, tile,
                 tile + 1, 2 * tile, n - 1);
    free(got);
    free(want);
    free(heads);
    free(in);
}

Test(ops09, segments_on_tile_edges,
     .description = "segment heads at 1, tile-1, tile, tile+1, 2 tile and n-1 (n = 3 tiles + 5), "
                    "for every tile the lab reports, in both the segmented variants")
{
    lab_test_need_device(&LAB);
    size_t tiles[4];
    const size_t nt = lab_work_tiles ? lab_work_tiles(tiles, 4) : 0;
    if (nt == 0)
        tiles[0] = TILE;
    for (size_t t = 0; t < (nt ? nt : 1); t++) {
        check_segment_edges("segmented", tiles[t]);
        check_segment_edges("segmented_two_pass", tiles[t]);
    }
}

/* max of INT_MINs and min around one INT_MIN in the middle, by variant max_v and min_v. */
static void check_extremes(const char *max_v, const char *min_v)
{
    const size_t n = 3 * TILE + 3;
    int *in = malloc(n * sizeof(int));
    cr_assert(in);
    for (size_t i = 0; i < n; i++)
        in[i] = INT_MIN;
    int *got = run_variant(max_v, in, NULL, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], INT_MIN, "%s of INT_MINs: out[%zu] = %d", max_v, i, got[i]);
    free(got);
    for (size_t i = 0; i < n; i++)
        in[i] = i == n / 2 ? INT_MIN : INT_MAX;
    got = run_variant(min_v, in, NULL, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], i < n / 2 ? INT_MAX : INT_MIN, "%s: out[%zu] = %d", min_v, i, got[i]);
    free(got);
    free(in);
}

Test(ops09, max_min_extremes, .description = "INT_MIN and INT_MAX inputs, the identities")
{
    lab_test_need_device(&LAB);
    check_extremes("max", "min");
    check_extremes("max_two_pass", "min_two_pass");
}

Test(ops09, float_order_differs_and_passes,
     .description = "float +: not the serial loop's bits, within the bound of any order")
{
    lab_test_need_device(&LAB);
    const size_t n = 20 * TILE + 17;
    int *in = malloc(n * 4), *want = malloc(n * 4), *serial = malloc(n * 4);
    double *want_d = malloc(n * sizeof(double)), *bound_d = malloc(n * sizeof(double));
    cr_assert(in && want && serial && want_d && bound_d);
    lab_ops_fill(LAB_OP_FADD, in, NULL, n, DIST_SMALL, lab_test_seed());
    lab_ops_reference(LAB_OP_FADD, SCAN_INCLUSIVE, in, NULL, n, want, want_d, bound_d);
    float acc = 0.0f, x;
    for (size_t i = 0; i < n; i++) {
        memcpy(&x, &in[i], 4);
        acc += x;
        memcpy(&serial[i], &acc, 4);
    }
    int *got = run_variant("fadd", in, NULL, n);
    lab_ops_verdict v;
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, got, want, want_d, bound_d, n, &v);
    cr_expect_eq(v.bad, n, "out[%zu] = %s, expected %s", v.bad, v.got, v.expected);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += got[i] != serial[i];
    cr_expect(differ > 0, "every element equals the serial loop's: is the scan serial?");
    cr_log_info("float +: %zu of %zu elements differ from the serial loop; largest error %.3g, "
                "%.1f %% of its bound",
                differ, n, v.max_err, 100 * v.max_ratio);
    free(got);
    free(bound_d);
    free(want_d);
    free(serial);
    free(want);
    free(in);
}
