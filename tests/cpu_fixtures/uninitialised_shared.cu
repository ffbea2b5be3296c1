/* uninitialised_shared.cu — a tile scan that loads only the elements below n into shared memory
 * and leaves the rest of the last, ragged tile unwritten; its tile total, s[FIXTURE_TILE - 1],
 * then adds whatever those slots held. Zero-filled memory would hide the bug; CPU mode fills
 * each block's shared memory with the byte 0xCB, so the last tile's total comes out wrong. */
#define FIXTURE_ID "fixture_uninitialised_shared"
#define FIXTURE_SUMMARY "Kogge-Stone that leaves the ragged tail of shared memory unwritten"
#include "lab.h"

#define FIXTURE_TILE 256
__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    if (i < n) /* BUG: s[t] = i < n ? in[i] : 0 */
        s[t] = (unsigned)in[i];
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
