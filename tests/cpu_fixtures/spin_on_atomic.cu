/* spin_on_atomic.cu — like wait_for_later_block.cu, block b waits for a flag that block b + 1
 * sets, but the spin is a goto (no loop for rewrite.py to instrument) around an atomic read. The
 * atomic is the inter-block point where CPU mode sees the deadlock (blocks resident together) and
 * the safe point where the watchdog stops it (CPU_RESIDENT_BLOCKS=1): either is reported like any
 * kernel error, and the harness still prints its result line. */
#define FIXTURE_ID "fixture_spin_on_atomic"
#define FIXTURE_SUMMARY "block b spins with atomics for block b + 1"
#include "lab.h"
#include "validate.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    int *flags = tile_sums; /* every word LAB_POISON (the harness's poison) before a call */
    if (t == 0 && blockIdx.x + 1 < gridDim.x) {
    spin:
        if (atomicAdd(&flags[blockIdx.x + 1], 0) == LAB_POISON) /* BUG: waits for a later block */
            goto spin;
    }
    __syncthreads();
    if (i < n)
        out[i] = in[i];
    if (t == 0)
        atomicExch(&flags[blockIdx.x], 1);
}

#include "fixture.h"
