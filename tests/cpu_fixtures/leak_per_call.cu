/* leak_per_call.cu — a correct kernel whose launcher cudaMallocs a buffer on every call and
 * never frees it: a device memory leak, which the harness's allocation count names when a run
 * makes several calls (--calls). */
#define FIXTURE_ID "fixture_leak_per_call"
#define FIXTURE_SUMMARY "Kogge-Stone that leaks a buffer per call"
#include "lab.h"
#include "cuda_check.h"
static void leak_a_buffer(void)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, 4096));
}
#define FIXTURE_HOST_HOOK leak_a_buffer

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
