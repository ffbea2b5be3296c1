/* common/course/08_decoupled_lookback.c — lab 08's descriptor, owned by the course (see lab.h for
 * the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variant points at
 * the entry points scan.cu defines (declared in 08_decoupled_lookback.h).
 */
#include "course/08_decoupled_lookback.h"

#pragma weak lookback_tile /* scan.cu may leave it out (lab.h: lab_work_tiles) */

/* The tile the lab's code reports (lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (&lookback_tile && lookback_tile && k < max)
        tiles[k++] = lookback_tile;
    return k;
}

static const lab_variant VARIANTS[] = {
    {.name = "lookback",
     .summary = "one pass: tiles by ticket, 64-bit descriptors, 32-tile look-back window",
     .fn.scan = lookback_scan,
     .temp_bytes = lookback_temp_bytes,
     .algorithm = LAB_ALG_SINGLE_PASS},
};

const lab_info LAB = {
    .id = "08_decoupled_lookback",
    .title = "Single-pass scan with decoupled look-back",
    .shape = LAB_WHOLE,
    .type = SCAN_INCLUSIVE,
    .tile = 0,                  /* no tiles for the driver: the lab carries between its own tiles */
    .max_n = 0,                 /* no practical limit: size_t indexing, tested at 2^31 + 7 */
    .bench_n = (size_t)1 << 26, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};

/* scan_tile, the tile's loads, scans and stores around the look-back, is the course's (lab.h):
 * its guarded scalar path for a ragged last tile is uncoalesced by design, and at an n under a
 * tile it is the whole of the kernel's traffic. */
const char *lab_given_code(void)
{
    return "scan_tile";
}
