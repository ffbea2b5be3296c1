/* correct.cu — the control: the same Kogge-Stone as missing_barrier.cu with both barriers. It must
 * pass for every CPU_SCHED_SEED, so a failure of missing_barrier.cu is the missing barrier's
 * doing and not the scheduler's. */
#define FIXTURE_ID "fixture_correct"
#define FIXTURE_SUMMARY "Kogge-Stone with both barriers (control)"
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
        __syncthreads(); /* every read done before any write */
        s[t] += add;
        __syncthreads(); /* every write done before the next read */
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
