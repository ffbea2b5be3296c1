/* divergent_barrier.cu — the two halves of the block wait at two different __syncthreads() calls.
 * On a GPU that is undefined (a hang or silently wrong data); CPU mode reports which threads wait
 * where and stops the kernel. */
#define FIXTURE_ID "fixture_divergent_barrier"
#define FIXTURE_SUMMARY "barriers in the two branches of an if"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    if (t < FIXTURE_TILE / 2) {
        s[t] += 0u;
        __syncthreads(); /* BUG: one barrier for the lower half ... */
    } else {
        __syncthreads(); /* ... and another for the upper half */
    }
    for (unsigned d = 1; d < FIXTURE_TILE; d *= 2) {
        const unsigned add = t >= d ? s[t - d] : 0u;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
