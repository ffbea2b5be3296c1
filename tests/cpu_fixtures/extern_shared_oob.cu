/* extern_shared_oob.cu — Kogge-Stone in dynamic shared memory (extern __shared__, one int per
 * thread) whose thread 0 reads the tile's total from s[FIXTURE_TILE], one past the end, instead of
 * s[FIXTURE_TILE - 1]. CPU mode checks every subscript of the launch's dynamic shared memory
 * against its size, as for a static array, and names kernel, block, thread and index. */
#define FIXTURE_ID "fixture_extern_shared_oob"
#define FIXTURE_SUMMARY "Kogge-Stone reading one past its dynamic shared memory"
#include "lab.h"

#define FIXTURE_TILE 256
#define FIXTURE_SHMEM (FIXTURE_TILE * sizeof(unsigned))
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    extern __shared__ unsigned s[];
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
    if (t == 0)
        tile_sums[blockIdx.x] = (int)s[FIXTURE_TILE]; /* BUG: s[FIXTURE_TILE - 1] */
}

#include "fixture.h"
