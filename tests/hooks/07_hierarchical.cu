/* tests/hooks/07_hierarchical.cu — lab 07's test hooks (declared in hooks.h), for
 * tests/lab_07_phases.c. Owned by the course.
 *
 * Not compiled on its own: the Makefile appends this file to labs/ or solutions/
 * 07_hierarchical/scan.cu in one translation unit (hooks.h says why). Known-good entry points
 * into that file's phases, so that the tests can check each one against a CPU model: they only
 * forward to the student's functions.
 */
#include "hooks/hooks.h"

#include <stdio.h>

size_t lab_hook_tile(void)
{
    return TILE;
}

size_t lab_hook_temp_bytes(size_t n)
{
    return hier_temp_bytes(n);
}

lab_result lab_hook_tile_scan(const int *d_in, int *d_out, int *d_tile_sums, const int *d_carries,
                              size_t n)
{
    return n == 0 ? LAB_OK : launch_tile_scan(d_in, d_out, d_tile_sums, d_carries, n);
}

lab_result lab_hook_tile_reduce(const int *d_in, int *d_tile_sums, size_t n)
{
    return n == 0 ? LAB_OK : launch_tile_reduce(d_in, d_tile_sums, n);
}

lab_result lab_hook_add_back(int *d_out, const int *d_carries, size_t n)
{
    return n == 0 ? LAB_OK : launch_add_back(d_out, d_carries, n);
}

/* variant: 0 scan_then_propagate, 1 reduce_then_scan. */
lab_result lab_hook_scan_totals(int variant, const int *d_in, int *d_out, size_t m, void *d_temp)
{
    if (variant == 0)
        return scan_then_propagate(d_in, d_out, m, d_temp);
    if (variant == 1)
        return reduce_then_scan(d_in, d_out, m, d_temp);
    fprintf(stderr, "lab_hook_scan_totals: lab 07 has no variant %d\n", variant);
    return LAB_NOT_IMPLEMENTED;
}
