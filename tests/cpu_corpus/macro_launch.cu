/* macro_launch.cu — launches inside macros: one on a line, one continued over lines with
 * backslashes, one whose arguments are __VA_ARGS__. */
#define CORPUS_ID "corpus_macro_launch"
#define CORPUS_SUMMARY "kernel launches inside macros"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

__global__ void scan_kernel(const int *in, int *out, int *tile_sums, size_t n, size_t first)
{
    __shared__ int s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const unsigned b = blockIdx.x + (unsigned)first;
    const size_t i = (size_t)b * CORPUS_TILE + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned d = 1; d < CORPUS_TILE; d *= 2) {
        const int left = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += left;
        __syncthreads();
    }
    if (i < n)
        out[i] = s[t];
    if (t == CORPUS_TILE - 1)
        tile_sums[b] = s[t];
}

#define LAUNCH_ONE(first) scan_kernel<<<1, CORPUS_TILE>>>(d_in, d_out, d_tile_sums, n, first)
#define LAUNCH_SPAN(kernel, grid, block, ...)                                                      \
    kernel<<<grid, block>>>(__VA_ARGS__);                                                          \
    LAUNCH_CHECK()

static lab_result corpus_scan_tiles(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)CORPUS_TILE);
    LAUNCH_ONE(0);
    LAUNCH_CHECK();
    if (tiles > 1) {
        LAUNCH_SPAN(scan_kernel, tiles - 1, CORPUS_TILE, d_in, d_out, d_tile_sums, n, 1);
    }
    return LAB_OK;
}

#include "corpus.h"
