/* common/course/03_kogge_stone.c — lab 03's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is KS_TILE (both in 03_kogge_stone.h).
 */
#include "course/03_kogge_stone.h"

static const lab_variant VARIANTS[] = {
    {.name = "double_buffer",
     .summary = "Kogge-Stone, two shared buffers: one barrier per step",
     .fn.tiles = ks_double_buffer_scan,
     .algorithm = LAB_ALG_KOGGE_STONE_DB},
    {.name = "two_barrier",
     .summary = "Kogge-Stone, one shared buffer: two barriers per step",
     .fn.tiles = ks_two_barrier_scan,
     .algorithm = LAB_ALG_KOGGE_STONE},
};

const lab_info LAB = {
    .id = "03_kogge_stone",
    .title = "Kogge-Stone with double buffering",
    .shape = LAB_TILE,
    .type = SCAN_INCLUSIVE,
    .tile = KS_TILE,            /* elements per tile */
    .max_n = 0,                 /* no size limit */
    .bench_n = (size_t)1 << 28, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
