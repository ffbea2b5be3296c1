/* shared_per_block.cu — a control that must pass for every seed: a correct Kogge-Stone tile scan
 * whose blocks touch global memory with an atomic between the steps, where CPU mode may switch to
 * another resident block. Each block keeps its shared array s and its scalar s_block (the block
 * that wrote it) across those switches: a block that found another block's values would write a
 * wrong scan. */
#define FIXTURE_ID "fixture_shared_per_block"
#define FIXTURE_SUMMARY "shared memory survives switches between resident blocks (control)"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    __shared__ unsigned s_block;
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (t == 0)
        s_block = blockIdx.x;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    __syncthreads();
    for (unsigned d = 1; d < FIXTURE_TILE; d *= 2) {
        const unsigned add = t >= d ? s[t - d] : 0u;
        __syncthreads();
        s[t] += add;
        if (t % 32 == 0) /* an inter-block point: another block may run here */
            atomicExch(&tile_sums[blockIdx.x], (int)d);
        __syncthreads();
    }
    if (i < n)
        out[i] = (int)s[t] + (s_block == blockIdx.x ? 0 : 1000000);
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
