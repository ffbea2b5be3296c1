/* sandbox_write_file.cu — a correct kernel whose launcher opens a file for writing: in a graded
 * run (--sandbox) the seccomp filter stops the open. */
#define FIXTURE_ID "fixture_sandbox_write_file"
#define FIXTURE_SUMMARY "Kogge-Stone that writes a file"
#include "lab.h"
#include <stdio.h>
static void write_a_file(void)
{
    FILE *f = fopen("lab-was-here.txt", "w");
    if (f)
        fclose(f);
}
#define FIXTURE_HOST_HOOK write_a_file

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
        __syncthreads(); /* every read done before any write */
        s[t] += add;
        __syncthreads(); /* every write done before the next read */
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1)
        tile_sums[blockIdx.x] = (int)s[t];
}

#include "fixture.h"
