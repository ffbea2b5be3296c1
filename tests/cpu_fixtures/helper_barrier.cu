/* helper_barrier.cu — the barrier is inside a helper, as the labs' tile_barrier<SYNC>(), and the
 * threads past n return before the loop that calls it. CPU mode's report must name the line that
 * calls the helper in the loop (marked CALL SITE below), not the __syncthreads() inside it. */
#define FIXTURE_ID "fixture_helper_barrier"
#define FIXTURE_SUMMARY "return before a barrier helper in the last tile"
#include "lab.h"

#define FIXTURE_TILE 256

template <bool SYNC> __device__ __forceinline__ void tile_barrier()
{
    if (SYNC)
        __syncthreads();
}

__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (i >= n)
        return; /* BUG: the threads past n must still take part in the barriers */
    s[t] = (unsigned)in[i];
    for (unsigned d = 1; d < FIXTURE_TILE; d *= 2) {
        tile_barrier<true>(); /* CALL SITE */
        const unsigned add = t >= d ? s[t - d] : 0u;
        tile_barrier<true>();
        s[t] += add;
    }
    out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1 || i == n - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
