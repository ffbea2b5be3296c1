/* common/labs/10_applications.c — lab 10's descriptor, owned by the course (see lab.h for the
 * fields), and apps_scan, the scan the lab is built on.
 *
 * Every binary of lab 10 links, besides its scan.cu, the lab 08 and lab 07 objects of the same
 * tree (labs/ or solutions/; the grader: the submission's own), with every symbol but their entry
 * points made local, so that their kernels and helpers never meet lab 10's (Makefile:
 * BASE_LOCALIZE). apps_scan calls lab 08's scan, or lab 07's first variant while lab 08 returns
 * LAB_NOT_IMPLEMENTED. Their cudaMalloc and cudaFree are counted as the student's, like lab 10's.
 */
#include "labs/10_applications.h"
#include "labs/07_hierarchical.h"
#include "labs/08_decoupled_lookback.h"

#include <cuda_runtime_api.h>

#pragma weak lookback_tile /* scan.cu may leave it out (lab.h: lab_work_tiles) */
#pragma weak hier_tile     /* scan.cu may leave it out (lab.h: lab_work_tiles) */

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

/* Lab 10's tile (APPS_TILE) and that of the scan it runs on (lab 08's, else lab 07's; lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (k < max)
        tiles[k++] = APPS_TILE;
    if (&lookback_tile && lookback_tile && k < max)
        tiles[k++] = lookback_tile;
    else if (&hier_tile && hier_tile && k < max)
        tiles[k++] = hier_tile;
    return k;
}

static const lab_variant VARIANTS[] = {
    {"radix_sort", "LSD radix sort of 32-bit keys: 8 passes of 4-bit digits, per-tile histograms",
     apps_radix_sort, NULL, apps_sort_temp_bytes, LAB_OP_SORT, NULL, NULL, NULL},
    {"compact", "stream compaction: keep x > 0 in order (count, scan the counts, scatter)", NULL,
     NULL, apps_compact_temp_bytes, LAB_OP_COMPACT, NULL, apps_compact, NULL},
    {"csr", "CSR row offsets: a histogram of the rows, then a scan", NULL, NULL,
     apps_csr_temp_bytes, LAB_OP_CSR, NULL, NULL, apps_csr_offsets},
    {"split_sort", "LSD radix sort, 1 bit at a time: 32 splits, each a scan of n flags",
     apps_split_sort, NULL, apps_sort_temp_bytes, LAB_OP_SORT, NULL, NULL, NULL},
};

const lab_info LAB = {
    "10_applications",
    "Scan at work: compaction, radix sort, CSR offsets",
    LAB_WHOLE,
    SCAN_INCLUSIVE,
    0,               /* no tiles visible to the harness */
    (size_t)1 << 30, /* practical limit: the CSR offsets of 2^30 pairs take up to 2^31 + 1 rows */
    (size_t)1 << 26, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
