/* long_private_loops.cu — every thread of a block runs a loop of the tile's whole length: thread t
 * sums the tile's first t + 1 elements by walking all 256 of them. Correct on a GPU (O(tile^2) per
 * block), and no thread waits for another block. In CPU mode each thread passes 16 inter-block
 * points of its loop before the first thread ends, 4,096 for the block: a long stretch without
 * progress that CPU mode once called a deadlock (a lab 02 whose threads each sum their own prefix,
 * 1,280 points a thread, did at its default bound). The scheduler now also wants
 * POINTS_PER_THREAD for each polling thread (common/cpu/blocks.cpp); test_cpu_mode.Corpus runs
 * this file with the bound lowered to 2,000 (CPU_DEADLOCK_POINTS), under which the old rule fails
 * it. */
#define CORPUS_ID "corpus_long_private_loops"
#define CORPUS_SUMMARY "each thread loops over the whole tile"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

__global__ void scan_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ int s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    unsigned sum = 0, j = 0;
    while (j < CORPUS_TILE) { /* a while loop: CPU mode's rewriter puts a safe point in it */
        sum += j <= t ? (unsigned)s[j] : 0u;
        j++;
    }
    if (i < n)
        out[i] = (int)sum;
    if (t == CORPUS_TILE - 1)
        tile_sums[blockIdx.x] = (int)sum;
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
