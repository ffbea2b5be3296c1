/* tests/hooks/04_brent_kung.cu — lab 04's test hooks (declared in hooks.h), for
 * tests/lab_04_barriers.c and tests/lab_04_phases.c. Owned by the course.
 *
 * Not compiled on its own: the Makefile appends this file to labs/ or solutions/
 * 04_brent_kung/scan.cu in one translation unit (hooks.h says why), so the kernel, the trees,
 * BK_TILE, BK_THREADS and BK_PAIRS below are that file's.
 */
#include "hooks/hooks.h"

#include <stdio.h>

/* Block k copies its BK_PAIRS words of state from state_in into s as they are, runs
 * bk_reduction_tree when phases & 1, then bk_reverse_tree when phases & 2, and copies s to
 * state_out. */
__global__ void lab_hook_phase_kernel(const int *state_in, int *state_out, int phases)
{
    __shared__ unsigned s[BK_PAIRS];
    const size_t base = (size_t)blockIdx.x * BK_PAIRS;
    for (unsigned i = threadIdx.x; i < BK_PAIRS; i += blockDim.x)
        s[i] = (unsigned)state_in[base + i];
    __syncthreads();
    if (phases & 1)
        bk_reduction_tree<true>(s);
    if (phases & 2)
        bk_reverse_tree<true>(s);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < BK_PAIRS; i += blockDim.x)
        state_out[base + i] = (int)s[i];
}

size_t lab_hook_state_words(void)
{
    return BK_PAIRS;
}

/* variant: 0, the lab's one variant. */
void lab_hook_phase(int variant, int phases, const int *d_state_in, int *d_state_out, size_t tiles)
{
    if (variant != 0) {
        fprintf(stderr, "lab_hook_phase: lab 04 has no variant %d\n", variant);
        return;
    }
    if (tiles == 0)
        return;
    lab_hook_phase_kernel<<<(unsigned)tiles, BK_THREADS>>>(d_state_in, d_state_out, phases);
    LAUNCH_CHECK();
}

/* The launcher's launch; sync = 0 builds the kernel with every tile_barrier removed. */
lab_result lab_hook_scan_tiles(int variant, int sync, const int *d_in, int *d_out, int *d_tile_sums,
                               size_t n)
{
    if (variant != 0) {
        fprintf(stderr, "lab_hook_scan_tiles: lab 04 has no variant %d\n", variant);
        return LAB_NOT_IMPLEMENTED;
    }
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)BK_TILE);
    if (sync)
        brent_kung_kernel<true><<<tiles, BK_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else
        brent_kung_kernel<false><<<tiles, BK_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
