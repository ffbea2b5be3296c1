/* spin_same_block.cu — correct: thread 0 of each block waits, with atomics, for a flag in shared
 * memory that the block's last thread sets. CPU mode lets other threads run every 64 atomics
 * (README, "Scheduling"), so the wait ends and the scan passes; without that the spinning fiber
 * would never give way and the watchdog would stop the kernel. */
#define FIXTURE_ID "fixture_spin_same_block"
#define FIXTURE_SUMMARY "a spin-wait on an atomic flag set within the block"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    __shared__ int ready[1];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (t == 0)
        ready[0] = 0;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    __syncthreads();
    if (t == FIXTURE_TILE - 1) { /* the last thread sums the tile serially, then says so */
        for (unsigned k = 1; k < FIXTURE_TILE; k++)
            s[k] += s[k - 1];
        atomicExch(&ready[0], 1);
    }
    if (t == 0)
        while (atomicAdd(&ready[0], 0) == 0) /* waits for the last thread, in the same block */
            ;
    __syncthreads();
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
