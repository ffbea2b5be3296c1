/* runtime_defaults.cu — every runtime call the grader allows a lab, in the forms nvcc accepts:
 * default arguments left out (cudaMemsetAsync without a stream), cudaMalloc of a T **, the
 * device queries, the kernel attributes, the occupancy calculator with and without flags, and
 * cudaLaunchKernel without its shared-memory and stream arguments.
 * A scratch buffer is cleared with cudaMemsetAsync and cudaMemset and must read back as 0 in the
 * kernel; the block size comes from the queries, so a query that fails fails the scan. */
#define CORPUS_ID "corpus_runtime_defaults"
#define CORPUS_SUMMARY "every allowed runtime call, default arguments left out"
#define CORPUS_TILE 256
#include "lab.h"
#include "cuda_check.h"

__global__ void scan_kernel(const int *in, int *out, int *tile_sums, size_t n, const int *zero)
{
    __shared__ int s[CORPUS_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * CORPUS_TILE + t;
    s[t] = (i < n ? in[i] : 0) + zero[t];
    __syncthreads();
    for (unsigned d = 1; d < CORPUS_TILE; d *= 2) {
        const int add = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += add;
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
    int device = -1, count = 0, warp = 0, max_threads = 0, blocks = 0, blocks_flags = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, device));
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, scan_kernel));
    CUDA_CHECK(cudaFuncSetAttribute(scan_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scan_kernel, CORPUS_TILE, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &blocks_flags, scan_kernel, CORPUS_TILE, 0, cudaOccupancyDefault));
    if (count < 1 || warp != prop.warpSize || max_threads < CORPUS_TILE ||
        (int)attr.maxThreadsPerBlock < CORPUS_TILE || blocks < 1 || blocks != blocks_flags)
        return LAB_OK; /* leaves the output unwritten: the scan fails */
    int *zero;
    CUDA_CHECK(cudaMalloc(&zero, CORPUS_TILE * sizeof(int)));
    CUDA_CHECK(cudaMemset(zero, 0xFF, CORPUS_TILE * sizeof(int)));
    CUDA_CHECK(cudaMemsetAsync(zero, 0, CORPUS_TILE * sizeof(int))); /* stream: its default, 0 */
    CUDA_CHECK(cudaMemsetAsync(zero, 0, CORPUS_TILE * sizeof(int), 0));
    CUDA_CHECK(cudaPeekAtLastError());
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)CORPUS_TILE);
    const cudaStream_t stream = 0;
    scan_kernel<<<dim3(tiles), dim3(CORPUS_TILE), 0, stream>>>(d_in, d_out, d_tile_sums, n, zero);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || !cudaGetErrorString(err) || !cudaGetErrorName(err))
        return LAB_OK;
    CUDA_CHECK(cudaDeviceSynchronize());
    /* the first tile cleared, then scanned again by launches written out by hand */
    CUDA_CHECK(cudaMemset(d_out, 0, (n < CORPUS_TILE ? n : CORPUS_TILE) * sizeof(int)));
    CUDA_CHECK(cudaMemset(d_tile_sums, 0, sizeof(int)));
    void *args[] = {(void *)&d_in, (void *)&d_out, (void *)&d_tile_sums, (void *)&n, (void *)&zero};
    CUDA_CHECK(cudaLaunchKernel(scan_kernel, dim3(1), dim3(CORPUS_TILE), args)); /* shmem, stream */
    CUDA_CHECK(cudaLaunchKernel(scan_kernel, dim3(1), dim3(CORPUS_TILE), args, 0, stream));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(zero));
    return LAB_OK;
}

#include "corpus.h"
