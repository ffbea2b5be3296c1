/* global_overflow.cu — a stride bug: thread i writes out[2 * i]. For large enough n the writes run
 * past the output's canary words and off the end of its cudaMalloc buffer; CPU mode's guard page
 * after every buffer turns the first such write into a report naming kernel, block, thread and
 * index, where a GPU might silently scribble over a neighbouring allocation. */
#define FIXTURE_ID "fixture_global_overflow"
#define FIXTURE_SUMMARY "tile scan that writes out[2 * i]"
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
        out[2 * i] = (int)s[t]; /* BUG: out[i] */
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
