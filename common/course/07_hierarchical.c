/* common/course/07_hierarchical.c — lab 07's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 07_hierarchical.h).
 */
#include "course/07_hierarchical.h"

#pragma weak hier_tile /* scan.cu may leave it out (lab.h: lab_work_tiles) */

/* The tile the lab's code reports (lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (&hier_tile && hier_tile && k < max)
        tiles[k++] = hier_tile;
    return k;
}

static const lab_variant VARIANTS[] = {
    {.name = "scan_then_propagate",
     .summary = "scan tiles, scan totals, add carries back: ~16n bytes",
     .fn.scan = scan_then_propagate,
     .temp_bytes = hier_temp_bytes,
     .algorithm = LAB_ALG_HIERARCHICAL},
    {.name = "reduce_then_scan",
     .summary = "add tiles up, scan totals, scan tiles from their carry: ~12n bytes",
     .fn.scan = reduce_then_scan,
     .temp_bytes = hier_temp_bytes,
     .algorithm = LAB_ALG_HIERARCHICAL},
};

const lab_info LAB = {
    .id = "07_hierarchical",
    .title = "Hierarchical scan of any length",
    .shape = LAB_WHOLE,
    .type = SCAN_INCLUSIVE,
    .tile = 0,                  /* no tiles visible to the harness: this lab does its own carries */
    .max_n = 0,                 /* no practical limit: as much as device memory holds */
    .bench_n = (size_t)1 << 28, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};

/* The copies between a tile in shared memory and global memory are the course's (lab.h). */
const char *lab_given_code(void)
{
    return "load_tile store_tile";
}
