/* common/labs/03_kogge_stone.c — lab 03's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is KS_TILE (both in 03_kogge_stone.h).
 */
#include "labs/03_kogge_stone.h"

static const lab_variant VARIANTS[] = {
    {"double_buffer", "Kogge-Stone, two shared buffers: one barrier per step", NULL,
     ks_double_buffer_scan, NULL, LAB_OP_ADD, NULL, NULL, NULL},
    {"two_barrier", "Kogge-Stone, one shared buffer: two barriers per step", NULL,
     ks_two_barrier_scan, NULL, LAB_OP_ADD, NULL, NULL, NULL},
};

const lab_info LAB = {
    "03_kogge_stone",
    "Kogge-Stone with double buffering",
    LAB_TILE,
    SCAN_INCLUSIVE,
    KS_TILE,         /* elements per tile */
    0,               /* no size limit */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
