/* missing_barrier.cu — Kogge-Stone in place with the barrier between the read and the write left
 * out: a thread may read s[t - d] after its neighbour has already added to it. On a GPU this
 * passes or fails by luck; in CPU mode some CPU_SCHED_SEED gives a wrong result, and the same seed
 * gives the same wrong result again. */
#define FIXTURE_ID "fixture_missing_barrier"
#define FIXTURE_SUMMARY "Kogge-Stone without the barrier between read and write"
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
        /* BUG: a __syncthreads() belongs here, so every read is done before any write */
        s[t] += add;
        __syncthreads();
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
