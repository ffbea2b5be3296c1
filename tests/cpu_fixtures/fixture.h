/* fixture.h — the lab boilerplate shared by CPU mode's broken-kernel fixtures.
 *
 * Each tests/cpu_fixtures/NAME.cu defines one kernel, fixture_kernel(in, out, tile_sums, n), meant
 * to scan tiles of FIXTURE_TILE elements (one thread per element) with one deliberate bug, then
 * includes this file, which wraps it as a LAB_TILE lab the harness can run. tests/test_cpu_mode.py
 * runs each one in CPU mode and checks that the bug is reported, never hidden and never a hang.
 * A fixture may define FIXTURE_HOST_HOOK(), called at the start of the launcher (host code), and
 * FIXTURE_SHMEM, the bytes of dynamic shared memory each launch asks for (0 by default).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include "lab.h"
#include "cuda_check.h"
#include "validate.h"

#ifndef FIXTURE_TILE
#define FIXTURE_TILE 256
#endif
#ifndef FIXTURE_SHMEM
#define FIXTURE_SHMEM 0
#endif

static lab_result fixture_scan_tiles(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
#ifdef FIXTURE_HOST_HOOK
    FIXTURE_HOST_HOOK(); /* host code of the lab's launcher: the harness's checks around it */
#endif
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)FIXTURE_TILE);
    fixture_kernel<<<tiles, FIXTURE_TILE, FIXTURE_SHMEM>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}

static const lab_variant VARIANTS[] = {
    {.name = "fixture",
     .summary = FIXTURE_SUMMARY,
     .op = LAB_OP_ADD,
     .fn = {.tiles = fixture_scan_tiles},
     .temp_bytes = NULL,
     .compare = 0,
     .algorithm = LAB_ALG_ANY},
};

extern "C" const lab_info LAB = {
    FIXTURE_ID,      FIXTURE_SUMMARY,
    LAB_TILE,        SCAN_INCLUSIVE,
    FIXTURE_TILE,    0,
    (size_t)1 << 16, sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,        0, /* cpu_n: the default */
};

#endif /* FIXTURE_H */
