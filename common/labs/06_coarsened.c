/* common/labs/06_coarsened.c — lab 06's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is TILE (both in 06_coarsened.h).
 */
#include "labs/06_coarsened.h"

/* The same tile split differently between threads and runs: the coarsening sweep. */
static const lab_variant VARIANTS[] = {
    {"c8_b256", "C = 8 elements per thread, 256 threads per block", NULL, scan_tiles_c8_b256, NULL,
     LAB_OP_ADD, NULL, NULL, NULL},
    {"c2_b1024", "C = 2, 1024 threads", NULL, scan_tiles_c2_b1024, NULL, LAB_OP_ADD, NULL, NULL,
     NULL},
    {"c4_b512", "C = 4, 512 threads", NULL, scan_tiles_c4_b512, NULL, LAB_OP_ADD, NULL, NULL, NULL},
    {"c16_b128", "C = 16, 128 threads", NULL, scan_tiles_c16_b128, NULL, LAB_OP_ADD, NULL, NULL,
     NULL},
    {"c32_b64", "C = 32, 64 threads", NULL, scan_tiles_c32_b64, NULL, LAB_OP_ADD, NULL, NULL, NULL},
    {"c64_b32", "C = 64, one warp per block", NULL, scan_tiles_c64_b32, NULL, LAB_OP_ADD, NULL,
     NULL, NULL},
};

const lab_info LAB = {
    "06_coarsened",
    "Coarsened three-phase scan",
    LAB_TILE,
    SCAN_INCLUSIVE,
    TILE,
    0,               /* no practical limit: the driver handles any n */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
