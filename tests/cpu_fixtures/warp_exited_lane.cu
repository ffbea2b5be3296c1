/* warp_exited_lane.cu — a warp-shuffle scan with full mask after some lanes of the warp returned:
 * __shfl_up_sync(0xffffffff, ...) names lanes that never arrive. CPU mode reports the warp
 * operation and the missing lanes. */
#define FIXTURE_ID "fixture_warp_exited_lane"
#define FIXTURE_SUMMARY "shuffle with a full mask after lanes returned"
#include "lab.h"

#define FIXTURE_TILE 32
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    const unsigned lane = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + lane;
    if (i >= n)
        return; /* BUG: the lanes past n are still named in the shuffles' mask */
    unsigned x = (unsigned)in[i];
    for (unsigned d = 1; d < 32; d *= 2) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x += y;
    }
    out[i] = (int)x;
    if (lane == 31 || i == n - 1)
        tile_sums[blockIdx.x] = (int)x;
}

#include "fixture.h"
