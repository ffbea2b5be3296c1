/* tests/hooks/05_blelloch.cu — lab 05's test hooks (declared in hooks.h), for
 * tests/lab_05_barriers.c and tests/lab_05_phases.c. Owned by the course.
 *
 * Not compiled on its own: the Makefile appends this file to labs/ or solutions/
 * 05_blelloch/scan.cu in one translation unit (hooks.h says why), so the kernel, the sweeps,
 * slot(), BL_TILE, BL_THREADS and BL_SLOTS below are that file's.
 */
#include "hooks/hooks.h"

#include <stdio.h>

/* Block k copies its tile's BL_TILE elements of state from state_in into shared memory at
 * slot<PADDED>(i), runs the up-sweep when phases & 1, then the down-sweep when phases & 2, and
 * copies element i back from slot<PADDED>(i) to state_out. (The root is cleared by whoever
 * prepares the state.) */
template <bool PADDED>
__global__ void lab_hook_phase_kernel(const int *state_in, int *state_out, int phases)
{
    __shared__ unsigned s[BL_SLOTS];
    const size_t base = (size_t)blockIdx.x * BL_TILE;
    for (unsigned i = threadIdx.x; i < BL_TILE; i += blockDim.x)
        s[slot<PADDED>(i)] = (unsigned)state_in[base + i];
    __syncthreads();
    if (phases & 1)
        blelloch_up_sweep<PADDED, true>(s);
    if (phases & 2)
        blelloch_down_sweep<PADDED, true>(s);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < BL_TILE; i += blockDim.x)
        state_out[base + i] = (int)s[slot<PADDED>(i)];
}

/* variant: 0 padded, 1 plain (the layout of shared memory). */
void lab_hook_phase(int variant, int phases, const int *d_state_in, int *d_state_out, size_t tiles)
{
    if (variant != 0 && variant != 1) {
        fprintf(stderr, "lab_hook_phase: lab 05 has no variant %d\n", variant);
        return;
    }
    if (tiles == 0)
        return;
    const unsigned blocks = (unsigned)tiles;
    if (variant == 0)
        lab_hook_phase_kernel<true><<<blocks, BL_THREADS>>>(d_state_in, d_state_out, phases);
    else
        lab_hook_phase_kernel<false><<<blocks, BL_THREADS>>>(d_state_in, d_state_out, phases);
    LAUNCH_CHECK();
}

/* The launchers' launch; sync = 0 builds the kernel with every tile_barrier removed.
 * variant: 0 padded, 1 plain. */
lab_result lab_hook_scan_tiles(int variant, int sync, const int *d_in, int *d_out, int *d_tile_sums,
                               size_t n)
{
    if (variant != 0 && variant != 1) {
        fprintf(stderr, "lab_hook_scan_tiles: lab 05 has no variant %d\n", variant);
        return LAB_NOT_IMPLEMENTED;
    }
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)BL_TILE);
    if (variant == 0 && sync)
        blelloch_kernel<true, true><<<tiles, BL_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else if (variant == 0)
        blelloch_kernel<true, false><<<tiles, BL_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else if (sync)
        blelloch_kernel<false, true><<<tiles, BL_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else
        blelloch_kernel<false, false><<<tiles, BL_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
