/* memset_past_buffer.cu — a correct kernel whose launcher first clears 1 MiB of the output, a
 * size left over from a test, instead of n elements: at n = 1000 that runs past the end of the
 * buffer. On a GPU that may silently
 * clear a neighbouring allocation; CPU mode's cudaMemset refuses a range that leaves its buffer
 * (cudaErrorInvalidValue), and CUDA_CHECK names the call. */
#define FIXTURE_ID "fixture_memset_past_buffer"
#define FIXTURE_SUMMARY "cudaMemset past the end of the output"
#include "lab.h"
/* BUG: n * sizeof(int) bytes */
#define FIXTURE_HOST_HOOK() CUDA_CHECK(cudaMemset(d_out, 0, (size_t)1 << 20))

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
