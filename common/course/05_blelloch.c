/* common/course/05_blelloch.c — lab 05's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is BL_TILE (both in 05_blelloch.h).
 */
#include "course/05_blelloch.h"

static const lab_variant VARIANTS[] = {
    {.name = "padded",
     .summary = "up-sweep and down-sweep, shared indices padded against bank conflicts",
     .fn.tiles = blelloch_padded_scan,
     .algorithm = LAB_ALG_BLELLOCH},
    {.name = "plain",
     .summary = "up-sweep and down-sweep, no padding (bank conflicts)",
     .fn.tiles = blelloch_plain_scan,
     .algorithm = LAB_ALG_BLELLOCH},
};

const lab_info LAB = {
    .id = "05_blelloch",
    .title = "Blelloch (up-sweep, down-sweep)",
    .shape = LAB_TILE,
    .type = SCAN_EXCLUSIVE,
    .tile = BL_TILE,            /* elements per tile */
    .max_n = 0,                 /* no size limit */
    .bench_n = (size_t)1 << 28, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
