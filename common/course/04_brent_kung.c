/* common/course/04_brent_kung.c — lab 04's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variant points at
 * the entry point scan.cu defines, and the tile is BK_TILE (both in 04_brent_kung.h).
 */
#include "course/04_brent_kung.h"

static const lab_variant VARIANTS[] = {
    {.name = "brent_kung",
     .summary = "reduction tree + reverse tree, two elements per thread",
     .fn.tiles = brent_kung_scan,
     .algorithm = LAB_ALG_BRENT_KUNG},
};

const lab_info LAB = {
    .id = "04_brent_kung",
    .title = "Brent-Kung",
    .shape = LAB_TILE,
    .type = SCAN_INCLUSIVE,
    .tile = BK_TILE,            /* elements per tile */
    .max_n = 0,                 /* no size limit */
    .bench_n = (size_t)1 << 28, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
