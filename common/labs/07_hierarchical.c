/* common/labs/07_hierarchical.c — lab 07's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 07_hierarchical.h).
 */
#include "labs/07_hierarchical.h"

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
    {"scan_then_propagate", "scan tiles, scan totals, add carries back: ~16n bytes",
     scan_then_propagate, NULL, hier_temp_bytes, LAB_OP_ADD, NULL, NULL, NULL},
    {"reduce_then_scan", "add tiles up, scan totals, scan tiles from their carry: ~12n bytes",
     reduce_then_scan, NULL, hier_temp_bytes, LAB_OP_ADD, NULL, NULL, NULL},
};

const lab_info LAB = {
    "07_hierarchical",
    "Hierarchical scan of any length",
    LAB_WHOLE,
    SCAN_INCLUSIVE,
    0,               /* no tiles visible to the harness: this lab does its own carries */
    0,               /* no practical limit: as much as device memory holds */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
