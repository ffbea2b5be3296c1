/* 02_naive — one GPU thread per output element, each summing its own prefix.
 *
 * What changes from 01: all n outputs are computed at once, each by its own thread, with no
 * cooperation at all: thread i reads in[0..i] from global memory and adds it up. The answer is
 * right and the parallelism is perfect, but the work is O(n^2): thread i does i additions, so
 * n(n-1)/2 additions in all, and reads i + 1 values, n(n+1)/2 loads in all, against n - 1
 * additions for the serial loop. Doubling n quadruples the time; that is why max_n is small. The
 * labs that follow keep the parallelism and cut the work back to O(n).
 *
 * Run: make run LAB=02      Test: make test TEST_SRC=labs LAB=02      Grade: make grade
 */
#include "course/02_naive.h"
#include "cuda_check.h"

#define BLOCK_SIZE 256 /* threads per block; any multiple of 32 works the same here */

/* ---- kernel ------------------------------------------------------------ */

/* Thread i writes out[i] = in[0] + ... + in[i] (wrapping). The grid covers n threads; the
 * extra threads of the last block do nothing. */
__global__ void naive_scan_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    // TODO(student): out[i] = in[0] + ... + in[i], wrapping modulo 2^32, computed by this thread
    // alone from in (no other thread's result: sharing is lab 03). Write out[i] only.
    (void)in;
    (void)out;
}

/* ---- launcher ------------------------------------------------------------ */

/* Inclusive scan of d_in[0..n) into d_out[0..n); both on the device. */
lab_result naive_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    (void)d_temp;
    // TODO(student): return LAB_OK at once when n == 0 (a launch of 0 blocks is an error);
    // otherwise launch naive_scan_kernel on enough BLOCK_SIZE-thread blocks to cover n
    // (CEIL_DIV), follow it with LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}
