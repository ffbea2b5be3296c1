/* common/labs/04_brent_kung.c — lab 04's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variant points at
 * the entry point scan.cu defines, and the tile is BK_TILE (both in 04_brent_kung.h).
 */
#include "labs/04_brent_kung.h"

static const lab_variant VARIANTS[] = {
    {"brent_kung", "reduction tree + reverse tree, two elements per thread", NULL, brent_kung_scan,
     NULL, LAB_OP_ADD, NULL, NULL, NULL},
};

const lab_info LAB = {
    "04_brent_kung",
    "Brent-Kung",
    LAB_TILE,
    SCAN_INCLUSIVE,
    BK_TILE,         /* elements per tile */
    0,               /* no size limit */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
