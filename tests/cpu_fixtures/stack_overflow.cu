/* stack_overflow.cu — thread 0 keeps a 512 KiB array of local variables, over the 256 KiB stack
 * each CPU-mode thread has (a GPU would spill it to local memory). CPU mode stops it at the guard
 * page below the thread's stack and reports kernel, block and thread (cudaErrorIllegalAddress)
 * instead of letting it overwrite the next thread's stack. -fstack-clash-protection (the
 * Makefile's CPU_CXXFLAGS) makes a big frame touch every page on its way down, so it cannot jump
 * over the guard. */
#define FIXTURE_ID "fixture_stack_overflow"
#define FIXTURE_SUMMARY "a thread with 512 KiB of local variables"
#include "lab.h"

#define FIXTURE_TILE 256
#define LOCAL_INTS (128 * 1024)

/* The sum of in[0..count) through a local copy. noinline: the big frame is this function's, so
 * only the thread that calls it needs it. */
__device__ __attribute__((noinline)) unsigned sum_through_copy(const int *in, size_t count)
{
    volatile int copy[LOCAL_INTS]; /* BUG: 512 KiB of local variables */
    unsigned sum = 0;
    for (size_t k = 0; k < count && k < LOCAL_INTS; k++)
        copy[k] = in[k];
    for (size_t k = 0; k < count && k < LOCAL_INTS; k++)
        sum += (unsigned)copy[k];
    return sum;
}

__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    const unsigned t = threadIdx.x;
    const size_t first = (size_t)blockIdx.x * FIXTURE_TILE;
    const size_t i = first + t;
    if (i < n) { /* each thread sums its own prefix of the tile */
        unsigned sum = 0;
        for (size_t k = first; k <= i; k++)
            sum += (unsigned)in[k];
        out[i] = (int)sum;
    }
    if (t == 0) /* thread 0 also the tile's total, through the big local copy */
        tile_sums[blockIdx.x] = (int)sum_through_copy(in + first, n - first);
}

#include "fixture.h"
