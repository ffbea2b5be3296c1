/* spin_without_safe_point.cu — block b waits for block b + 1 in a goto loop on a volatile flag:
 * no loop for rewrite.py to instrument, no barrier, warp operation or atomic, so the kernel
 * never reaches a point where CPU mode can stop it cleanly. The watchdog's last resort, in its
 * signal handler, writes the timeout report with write(2) and ends the process with exit code 4
 * (the harness prints no result line). */
#define FIXTURE_ID "fixture_spin_without_safe_point"
#define FIXTURE_SUMMARY "block b spins on a volatile flag in a goto loop"
#include "lab.h"
#include "validate.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    /* every word LAB_POISON (the harness's poison) before a call */
    volatile int *flags = tile_sums;
    if (t == 5 && blockIdx.x + 1 < gridDim.x) {
    spin:
        if (flags[blockIdx.x + 1] == LAB_POISON) /* BUG: waits for a later block */
            goto spin;
    }
    __syncthreads();
    if (i < n)
        out[i] = in[i];
    if (t == 0)
        flags[blockIdx.x] = 1;
}

#include "fixture.h"
