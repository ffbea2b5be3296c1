/* common/course/06_coarsened.c — lab 06's descriptor, owned by the course (see lab.h for the
 * fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines, and the tile is TILE (both in 06_coarsened.h).
 */
#include "course/06_coarsened.h"

/* The same tile split differently between threads and runs: the coarsening sweep. */
static const lab_variant VARIANTS[] = {
    {.name = "c8_b256",
     .summary = "C = 8 elements per thread, 256 threads per block",
     .fn.tiles = scan_tiles_c8_b256,
     .algorithm = LAB_ALG_COARSENED},
    {.name = "c2_b1024",
     .summary = "C = 2, 1024 threads",
     .fn.tiles = scan_tiles_c2_b1024,
     .algorithm = LAB_ALG_COARSENED},
    {.name = "c4_b512",
     .summary = "C = 4, 512 threads",
     .fn.tiles = scan_tiles_c4_b512,
     .algorithm = LAB_ALG_COARSENED},
    {.name = "c16_b128",
     .summary = "C = 16, 128 threads",
     .fn.tiles = scan_tiles_c16_b128,
     .algorithm = LAB_ALG_COARSENED},
    {.name = "c32_b64",
     .summary = "C = 32, 64 threads",
     .fn.tiles = scan_tiles_c32_b64,
     .algorithm = LAB_ALG_COARSENED},
    {.name = "c64_b32",
     .summary = "C = 64, one warp per block",
     .fn.tiles = scan_tiles_c64_b32,
     .algorithm = LAB_ALG_COARSENED},
};

const lab_info LAB = {
    .id = "06_coarsened",
    .title = "Coarsened three-phase scan",
    .shape = LAB_TILE,
    .type = SCAN_INCLUSIVE,
    .tile = TILE,
    .max_n = 0,                 /* no practical limit: the driver handles any n */
    .bench_n = (size_t)1 << 28, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};

/* The copies between the tile in shared memory and global memory are the course's (lab.h). */
const char *lab_given_code(void)
{
    return "load_tile store_tile";
}
