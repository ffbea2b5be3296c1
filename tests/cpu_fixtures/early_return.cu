/* early_return.cu — threads past n return before the block's barriers, so in the last, ragged
 * tile __syncthreads() is reached by only some of the threads. CPU mode reports the barrier, the
 * threads that returned and the block, instead of hanging. */
#define FIXTURE_ID "fixture_early_return"
#define FIXTURE_SUMMARY "return before __syncthreads in the last tile"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (i >= n)
        return; /* BUG: the threads past n must still take part in the barriers */
    s[t] = (unsigned)in[i];
    __syncthreads();
    for (unsigned d = 1; d < FIXTURE_TILE; d *= 2) {
        const unsigned add = t >= d ? s[t - d] : 0u;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1 || i == n - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
