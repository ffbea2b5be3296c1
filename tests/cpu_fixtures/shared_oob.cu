/* shared_oob.cu — Kogge-Stone that forgets the t >= d test and reads s[t - d] for t < d: index
 * -1 of the shared array (unsigned arithmetic makes it 2^32 - 1). CPU mode checks every shared
 * subscript and names kernel, block, thread and index. */
#define FIXTURE_ID "fixture_shared_oob"
#define FIXTURE_SUMMARY "Kogge-Stone reading s[t - d] below 0"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const int t = (int)threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    __syncthreads();
    for (int d = 1; d < FIXTURE_TILE; d *= 2) {
        const unsigned add = s[t - d]; /* BUG: t >= d ? s[t - d] : 0 */
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
