/* tests/hooks/03_kogge_stone.cu — lab 03's test hooks (declared in hooks.h), for
 * tests/lab_03_barriers.c. Owned by the course.
 *
 * Not compiled on its own: the Makefile appends this file to labs/ or solutions/
 * 03_kogge_stone/scan.cu in one translation unit (hooks.h says why), so the kernels, KS_TILE and
 * KS_THREADS below are that file's.
 */
#include "hooks/hooks.h"

#include <stdio.h>

/* Launches the variant's kernel as its launcher does; sync = 0 builds it with every
 * tile_barrier removed. variant: 0 double_buffer, 1 two_barrier. */
lab_result lab_hook_scan_tiles(int variant, int sync, const int *d_in, int *d_out, int *d_tile_sums,
                               size_t n)
{
    if (variant != 0 && variant != 1) {
        fprintf(stderr, "lab_hook_scan_tiles: lab 03 has no variant %d\n", variant);
        return LAB_NOT_IMPLEMENTED;
    }
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)KS_TILE);
    if (variant == 0 && sync)
        ks_double_buffer_kernel<true><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else if (variant == 0)
        ks_double_buffer_kernel<false><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else if (sync)
        ks_two_barrier_kernel<true><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else
        ks_two_barrier_kernel<false><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
