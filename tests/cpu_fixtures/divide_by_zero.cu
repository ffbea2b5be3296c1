/* divide_by_zero.cu — a tile scan that also works out how many elements are left after its own,
 * dividing by n - i: zero for the one thread with i == n (thread 232 of block 3 at n = 1000).
 * A GPU returns an unspecified value; the CPU traps, and CPU mode reports the kernel, block and
 * thread (cudaErrorIllegalInstruction). */
#define FIXTURE_ID "fixture_divide_by_zero"
#define FIXTURE_SUMMARY "Kogge-Stone dividing by n - i"
#include "lab.h"

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
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    /* BUG: the guard should be i < n; for i == n the divisor is 0 (volatile: the compiler must
     * keep the division even though nothing reads the result) */
    volatile size_t tiles_after = i <= n ? (n + FIXTURE_TILE - 1) / (n - i) : 0;
    (void)tiles_after;
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
