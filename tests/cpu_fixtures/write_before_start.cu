/* write_before_start.cu — a tile scan that stores its tile's total one slot too early, in
 * tile_sums[blockIdx.x - 1]: block 0 writes tile_sums[-1], just before the start of its buffer.
 * No guard page lies there; CPU mode finds the write in the pattern-filled padding before the
 * buffer after the kernel, and reports it (cudaErrorIllegalAddress). */
#define FIXTURE_ID "fixture_write_before_start"
#define FIXTURE_SUMMARY "tile totals stored one slot early"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    __syncthreads();
    for (unsigned d = 1; d < FIXTURE_TILE; d *= 2) {
        const unsigned add = t >= d ? s[t - d] : 0u;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[(long long)blockIdx.x - 1] = (int)s[t]; /* BUG: tile_sums[blockIdx.x] */
}

#include "fixture.h"
