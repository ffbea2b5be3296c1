/* bom_crlf.cu — a file as some editors save it: a UTF-8 byte-order mark first, CRLF line
 * ends (a macro continued over lines with backslashes included), non-ASCII in comments (é, ∑). */
#define CORPUS_ID "corpus_bom_crlf"
#define CORPUS_SUMMARY "UTF-8 byte-order mark and CRLF line ends"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

#define LOAD(i) ((i) < n  \
                     ? in[i] \
                     : 0)

__global__ void scan_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ int s[CORPUS_TILE]; // ∑ of the tile so far
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    s[t] = LOAD(i);
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
