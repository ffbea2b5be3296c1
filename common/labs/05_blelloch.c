/* common/labs/05_blelloch.c — lab 05's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is BL_TILE (both in 05_blelloch.h).
 */
#include "labs/05_blelloch.h"

static const lab_variant VARIANTS[] = {
    {"padded", "up-sweep and down-sweep, shared indices padded against bank conflicts", NULL,
     blelloch_padded_scan, NULL, LAB_OP_ADD, NULL, NULL, NULL},
    {"plain", "up-sweep and down-sweep, no padding (bank conflicts)", NULL, blelloch_plain_scan,
     NULL, LAB_OP_ADD, NULL, NULL, NULL},
};

const lab_info LAB = {
    "05_blelloch",
    "Blelloch (up-sweep, down-sweep)",
    LAB_TILE,
    SCAN_EXCLUSIVE,
    BL_TILE,         /* elements per tile */
    0,               /* no size limit */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
