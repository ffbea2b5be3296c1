/* sandbox_exec_memory.cu — a correct kernel whose launcher maps executable memory (the first
 * step of patching code at run time): in a graded run (--sandbox) the seccomp filter stops it. */
#define FIXTURE_ID "fixture_sandbox_exec_memory"
#define FIXTURE_SUMMARY "Kogge-Stone that maps executable memory"
#include "lab.h"
#include <sys/mman.h>
static void map_exec(void)
{
    void *p =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        munmap(p, 4096);
}
#define FIXTURE_HOST_HOOK map_exec

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
