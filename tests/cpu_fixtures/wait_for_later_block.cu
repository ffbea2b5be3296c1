/* wait_for_later_block.cu — block b spins on a flag that block b + 1 sets. On a GPU that usually
 * works (both blocks are resident) but nothing guarantees it. In CPU mode, with more blocks than
 * are resident at once (4), the resident ones all wait for blocks that never start: a deadlock
 * report, at once. With CPU_RESIDENT_BLOCKS=1 (one block at a time, in blockIdx order) block 0
 * waits forever and the watchdog (CPU_KERNEL_TIMEOUT) stops it with a report instead of a hang. */
#define FIXTURE_ID "fixture_wait_for_later_block"
#define FIXTURE_SUMMARY "block b waits for block b + 1"
#include "lab.h"
#include "validate.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    const unsigned tiles = gridDim.x;
    volatile int *flags =
        tile_sums; /* every word LAB_POISON (the harness's poison) before a call */
    if (t == 0 && blockIdx.x + 1 < tiles)
        while (flags[blockIdx.x + 1] == LAB_POISON) /* BUG: waits for a later block */
            ;
    __syncthreads();
    if (i < n)
        out[i] = in[i];
    if (t == 0)
        flags[blockIdx.x] = 1;
}

#include "fixture.h"
