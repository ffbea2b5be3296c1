/* deduced_template.cu — a kernel template whose operator type is deduced at the launch
 * (scan_kernel<<<...>>>(..., Add{}), no <Add>), as nvcc deduces it from the arguments, and one
 * whose element type is deduced too. */
#define CORPUS_ID "corpus_deduced_template"
#define CORPUS_SUMMARY "kernel templates deduced at the launch"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

struct Add {
    __device__ int operator()(int a, int b) const { return a + b; }
};

template <class T, class Op>
__global__ void scan_kernel(const T *in, T *out, T *tile_sums, size_t n, Op op)
{
    __shared__ T s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    s[t] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned d = 1; d < CORPUS_TILE; d *= 2) {
        const T left = t >= d ? s[t - d] : T(0);
        __syncthreads();
        s[t] = op(left, s[t]);
        __syncthreads();
    }
    if (i < n)
        out[i] = s[t];
    if (t == CORPUS_TILE - 1)
        tile_sums[blockIdx.x] = s[t];
}

static lab_result corpus_scan_tiles(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)CORPUS_TILE);
    scan_kernel<<<tiles, CORPUS_TILE>>>(d_in, d_out, d_tile_sums, n, Add{});
    LAUNCH_CHECK();
    return LAB_OK;
}

#include "corpus.h"
