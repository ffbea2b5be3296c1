/* restrict_unroll.cu — __restrict__ pointers, __launch_bounds__, __forceinline__, and
 * #pragma unroll in its forms: plain, with a count, with 1 (not unrolled). */
#define CORPUS_ID "corpus_restrict_unroll"
#define CORPUS_SUMMARY "__restrict__ and #pragma unroll N"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

__device__ __forceinline__ int load(const int *__restrict__ in, size_t i, size_t n)
{
    return i < n ? in[i] : 0;
}

__global__ void __launch_bounds__(CORPUS_TILE)
    scan_kernel(const int *__restrict__ in, int *__restrict__ out, int *__restrict__ tile_sums,
                size_t n)
{
    __shared__ int s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    int x = 0;
#pragma unroll 4
    for (int k = 0; k < 4; k++)
        x += k == 0 ? load(in, i, n) : 0;
    s[t] = x;
    __syncthreads();
#pragma unroll
    for (unsigned d = 1; d < CORPUS_TILE; d *= 2) {
        const int left = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += left;
        __syncthreads();
    }
#pragma unroll 1
    for (int k = 0; k < 1; k++) {
        if (i < n)
            out[i] = s[t];
    }
    if (t == CORPUS_TILE - 1)
        tile_sums[blockIdx.x] = s[t];
}

static lab_result corpus_scan_tiles(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    scan_kernel<<<(unsigned)CEIL_DIV(n, (size_t)CORPUS_TILE), CORPUS_TILE>>>(d_in, d_out,
                                                                             d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}

#include "corpus.h"
