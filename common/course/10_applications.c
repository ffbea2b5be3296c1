/* common/course/10_applications.c — lab 10's descriptor, owned by the course (see lab.h for the
 * fields), apps_scan, the scan the lab is built on, and what a variant says while that scan is not
 * written.
 *
 * Every binary of lab 10 links, besides its scan.cu, the lab 08 and lab 07 objects of the same
 * tree (labs/ or solutions/; the grader: the submission's own), with every symbol but their entry
 * points made local, so that their kernels and helpers never meet lab 10's (Makefile:
 * BASE_LOCALIZE). apps_scan calls lab 08's scan, or lab 07's first variant while lab 08 returns
 * LAB_NOT_IMPLEMENTED. Their cudaMalloc and cudaFree are counted as the student's, like lab 10's.
 */
#include "contract.h" /* lab_why */
#include "course/10_applications.h"
#include "course/07_hierarchical.h"
#include "course/08_decoupled_lookback.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#pragma weak lookback_tile /* scan.cu may leave it out (lab.h: lab_work_tiles) */
#pragma weak hier_tile     /* scan.cu may leave it out (lab.h: lab_work_tiles) */
#pragma weak apps_single_pass_tile

static const char *g_base;

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

size_t apps_scan_temp_bytes(size_t n)
{
    return max_size(lookback_temp_bytes(n), hier_temp_bytes(n));
}

const char *apps_scan_base(void)
{
    return g_base;
}

/* The scratch is zeroed before each call: both labs' contracts ask for zeroed scratch the first
 * time a size is used, and lab 10 calls the scan on several sizes with the same scratch. */
lab_result apps_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    if (d_temp && cudaMemsetAsync(d_temp, 0, lookback_temp_bytes(n), 0) != cudaSuccess)
        return LAB_OK; /* the caller's error check reports the failed memset */
    lab_result r = lookback_scan(d_in, d_out, n, d_temp);
    if (r != LAB_NOT_IMPLEMENTED) {
        g_base = "08_decoupled_lookback";
        return r;
    }
    if (d_temp && cudaMemsetAsync(d_temp, 0, hier_temp_bytes(n), 0) != cudaSuccess)
        return LAB_OK;
    r = scan_then_propagate(d_in, d_out, n, d_temp);
    g_base = r == LAB_NOT_IMPLEMENTED ? "none" : "07_hierarchical";
    return r;
}

/* A variant that returned LAB_NOT_IMPLEMENTED after its scan did (both lab 08 and lab 07 return
 * it): what to finish first, instead of the harness's "write its TODO(student) parts" (lab.h), and
 * the reason's code, which the report names and the grader reads (gradelib/grading.py). */
int lab_not_implemented_why(const lab_variant *v, char *why, size_t len)
{
    if (!g_base || strcmp(g_base, "none") != 0)
        return WHY_TODO;
    snprintf(why, len,
             "variant %s runs on your lab 08 scan (or lab 07's), and both return "
             "LAB_NOT_IMPLEMENTED: finish lab 08 or lab 07 first",
             v->name);
    return WHY_BASE_UNWRITTEN;
}

/* Lab 10's tile (APPS_TILE), its single-pass kernels' (when scan.cu has them) and that of the scan
 * it runs on (lab 08's, else lab 07's; lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (k < max)
        tiles[k++] = APPS_TILE;
    if (&apps_single_pass_tile && apps_single_pass_tile && k < max)
        tiles[k++] = apps_single_pass_tile;
    if (&lookback_tile && lookback_tile && k < max)
        tiles[k++] = lookback_tile;
    else if (&hier_tile && hier_tile && k < max)
        tiles[k++] = hier_tile;
    return k;
}

/* The *_on_scan entry points of a scan.cu that does not define them (the skeleton, and any file
 * written before they existed): the scan.cu's own compact and radix_sort, which are the designs
 * the handout asks for. Weak: a scan.cu that defines them (the reference) wins. */
__attribute__((weak)) lab_result apps_compact_on_scan(const int *d_in, int *d_out, size_t n,
                                                      size_t *d_count, void *d_temp)
{
    return apps_compact(d_in, d_out, n, d_count, d_temp);
}
__attribute__((weak)) lab_result apps_radix_sort_on_scan(const int *d_in, int *d_out, size_t n,
                                                         void *d_temp)
{
    return apps_radix_sort(d_in, d_out, n, d_temp);
}

/* The first four are graded (grader/config.json) and the first is timed. radix_sort and compact
 * are the handout's designs in the skeleton and the single-pass ones in the reference; the
 * *_on_scan variants are the handout's designs in both (above: where scan.cu has no such
 * functions, the first ones). */
static const lab_variant VARIANTS[] = {
    {.name = "radix_sort",
     .summary = "LSD radix sort of 32-bit keys (handout: 8 passes of 4-bit digits on your scan; "
                "reference: onesweep, 4 passes of 8-bit digits)",
     .fn.scan = apps_radix_sort,
     .temp_bytes = apps_sort_temp_bytes,
     .op = LAB_OP_SORT},
    {.name = "compact",
     .summary = "stream compaction: keep x > 0 in order (handout: count, scan, scatter; "
                "reference: one fused pass)",
     .temp_bytes = apps_compact_temp_bytes,
     .op = LAB_OP_COMPACT,
     .fn.compact = apps_compact},
    {.name = "csr",
     .summary = "CSR row offsets: a histogram of the rows, then a scan",
     .temp_bytes = apps_csr_temp_bytes,
     .op = LAB_OP_CSR,
     .fn.csr = apps_csr_offsets},
    {.name = "split_sort",
     .summary = "LSD radix sort, 1 bit at a time: 32 splits, each a scan of n flags",
     .fn.scan = apps_split_sort,
     .temp_bytes = apps_sort_temp_bytes,
     .op = LAB_OP_SORT},
    {.name = "radix_sort_on_scan",
     .summary =
         "LSD radix sort: 8 passes of 4-bit digits, per-tile histograms scanned by your scan",
     .fn.scan = apps_radix_sort_on_scan,
     .temp_bytes = apps_sort_temp_bytes,
     .op = LAB_OP_SORT,
     .compare = 1},
    {.name = "compact_on_scan",
     .summary = "stream compaction: count every tile, scan the counts, scatter",
     .temp_bytes = apps_compact_temp_bytes,
     .op = LAB_OP_COMPACT,
     .fn.compact = apps_compact_on_scan,
     .compare = 1},
};

const lab_info LAB = {
    .id = "10_applications",
    .title = "Scan at work: compaction, radix sort, CSR offsets",
    .shape = LAB_WHOLE,
    .type = SCAN_INCLUSIVE,
    .tile = 0, /* no tiles visible to the harness */
    /* practical limit: the CSR offsets of 2^30 pairs take up to 2^31 + 1 rows */
    .max_n = (size_t)1 << 30,
    .bench_n = (size_t)1 << 26, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
    /* CPU mode's default run at 2^17 + 7: its sorts make 8 (radix) or 32 (split) passes over the
     * keys, each element a thread of its own on the CPU; at 2^20 + 7 one make run took 10 s for
     * radix_sort and 35 s for split_sort on an idle core, now 1.5 and 4.5 s */
    .cpu_n = (size_t)1 << 17,
};

/* The course's code in the labs lab 10 runs on (lab 08's scan_tile, lab 07's tile copies), which
 * CPU mode's tables show as 08/scan.cu and 07/scan.cu lines (lab.h). */
const char *lab_given_code(void)
{
    return "scan_tile load_tile store_tile";
}
