/* lambdas.cu — lambdas: in device code (the combine step, one that captures by value) and in
 * host code around the launch (a launch inside a lambda's body). */
#define CORPUS_ID "corpus_lambdas"
#define CORPUS_SUMMARY "lambdas in device and host code"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

__global__ void scan_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ int s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    auto combine = [](int a, int b) { return a + b; };
    auto load = [=](size_t k) { return k < n ? in[k] : 0; };
    s[t] = load(i);
    __syncthreads();
    for (unsigned d = 1; d < CORPUS_TILE; d *= 2) {
        const int left = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] = combine(left, s[t]);
        __syncthreads();
    }
    if (i < n)
        out[i] = s[t];
    if (t == CORPUS_TILE - 1)
        tile_sums[blockIdx.x] = s[t];
}

static lab_result corpus_scan_tiles(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    auto launch = [&](unsigned tiles) {
        scan_kernel<<<tiles, CORPUS_TILE>>>(d_in, d_out, d_tile_sums, n);
        return cudaGetLastError();
    };
    if (n == 0)
        return LAB_OK;
    CUDA_CHECK(launch((unsigned)CEIL_DIV(n, (size_t)CORPUS_TILE)));
    return LAB_OK;
}

#include "corpus.h"
