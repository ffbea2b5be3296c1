/* sandbox_fork.cu — a correct kernel whose launcher forks a child (which exits at once): in a
 * graded run (--sandbox) the seccomp filter stops the fork and names the system call. */
#define FIXTURE_ID "fixture_sandbox_fork"
#define FIXTURE_SUMMARY "Kogge-Stone that forks"
#include "lab.h"
#include <unistd.h>
static void fork_a_child(void)
{
    if (fork() == 0)
        _exit(0);
}
#define FIXTURE_HOST_HOOK fork_a_child

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
