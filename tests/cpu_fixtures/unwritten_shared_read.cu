/* unwritten_shared_read.cu — a tile scan whose last thread never stores its input into shared
 * memory (t < TILE - 1 instead of every t): the scan then reads that slot as CPU mode fills memory
 * no thread wrote (0xCB bytes), and the wrong value near 0xCBCBCBCB is named as such. */
#define FIXTURE_ID "fixture_unwritten_shared_read"
#define FIXTURE_SUMMARY "tile scan that reads a shared slot no thread wrote"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (t < FIXTURE_TILE - 1) /* BUG: every thread must store its element */
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
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
