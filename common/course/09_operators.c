/* common/course/09_operators.c — lab 09's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from. One generic scan, five
 * operators: each variant says what it computes (op), so the harness makes its inputs and checks
 * it against the right reference (common/ops.c).
 */
#include "course/09_operators.h"

#pragma weak ops_lookback_tile /* scan.cu may leave them out (09_operators.h) */
#pragma weak ops_lookback_seg_tile

/* The tile of the course's two-pass scan, and a single-pass scan.cu's tiles (lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (k < max)
        tiles[k++] = OPS_TILE;
    if (&ops_lookback_tile && ops_lookback_tile && k < max)
        tiles[k++] = ops_lookback_tile;
    if (&ops_lookback_seg_tile && ops_lookback_seg_tile && k < max)
        tiles[k++] = ops_lookback_seg_tile;
    return k;
}

/* The *_two_pass entry points of a scan.cu that does not define them (the skeleton, and any file
 * written before they existed): the scan.cu's own entry points, which are the two-pass scan the
 * handout asks for. Weak: a scan.cu that defines them (the reference) wins. */
__attribute__((weak)) lab_result ops_scan_add_two_pass(const int *d_in, int *d_out, size_t n,
                                                       void *d_temp)
{
    return ops_scan_add(d_in, d_out, n, d_temp);
}
__attribute__((weak)) lab_result ops_scan_max_two_pass(const int *d_in, int *d_out, size_t n,
                                                       void *d_temp)
{
    return ops_scan_max(d_in, d_out, n, d_temp);
}
__attribute__((weak)) lab_result ops_scan_min_two_pass(const int *d_in, int *d_out, size_t n,
                                                       void *d_temp)
{
    return ops_scan_min(d_in, d_out, n, d_temp);
}
__attribute__((weak)) lab_result ops_scan_fadd_two_pass(const int *d_in, int *d_out, size_t n,
                                                        void *d_temp)
{
    return ops_scan_fadd(d_in, d_out, n, d_temp);
}
__attribute__((weak)) lab_result ops_scan_segmented_two_pass(const int *d_in, const int *d_heads,
                                                             int *d_out, size_t n, void *d_temp)
{
    return ops_scan_segmented(d_in, d_heads, d_out, n, d_temp);
}

/* The first five are graded (grader/config.json) and the first, add, is timed; in the reference
 * they run the single-pass look-back. The *_two_pass five run the reduce-then-scan, for
 * comparison (where scan.cu does not define them: the first five, above). */
static const lab_variant VARIANTS[] = {
    {.name = "add",
     .summary = "int +, wrapping: the generic scan with lab 01's operator",
     .fn.scan = ops_scan_add,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_ADD},
    {.name = "max",
     .summary = "int max: a running maximum",
     .fn.scan = ops_scan_max,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_MAX},
    {.name = "min",
     .summary = "int min: a running minimum",
     .fn.scan = ops_scan_min,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_MIN},
    {.name = "fadd",
     .summary = "float +: within the rounding bound of any order",
     .fn.scan = ops_scan_fadd,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_FADD},
    {.name = "segmented",
     .summary = "int +, restarting at every segment head ((flag, value) operator)",
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_SEG_ADD,
     .fn.seg = ops_scan_segmented},
    {.name = "add_two_pass",
     .summary = "int +, by the two-pass reduce-then-scan (12n bytes)",
     .fn.scan = ops_scan_add_two_pass,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_ADD,
     .compare = 1},
    {.name = "max_two_pass",
     .summary = "int max, by the two-pass reduce-then-scan",
     .fn.scan = ops_scan_max_two_pass,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_MAX,
     .compare = 1},
    {.name = "min_two_pass",
     .summary = "int min, by the two-pass reduce-then-scan",
     .fn.scan = ops_scan_min_two_pass,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_MIN,
     .compare = 1},
    {.name = "fadd_two_pass",
     .summary = "float +, by the two-pass reduce-then-scan",
     .fn.scan = ops_scan_fadd_two_pass,
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_FADD,
     .compare = 1},
    {.name = "segmented_two_pass",
     .summary = "segmented int +, by the two-pass reduce-then-scan (20n bytes)",
     .temp_bytes = ops_temp_bytes,
     .op = LAB_OP_SEG_ADD,
     .fn.seg = ops_scan_segmented_two_pass,
     .compare = 1},
};

const lab_info LAB = {
    .id = "09_operators",
    .title = "Any operator: max, min, float +, segmented",
    .shape = LAB_WHOLE,
    .type = SCAN_INCLUSIVE,
    .tile = 0,                  /* no tiles visible to the harness */
    .max_n = 0,                 /* no size limit */
    .bench_n = (size_t)1 << 26, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
