/* sandbox_whoami.cu — a correct kernel whose launcher prints the user and group it runs as on
 * stderr and ends without a report, so that the grader's message shows them: a graded run started
 * by a root grader runs as the unprivileged run user (grader/gradelib/proc.py), never as root. */
#define FIXTURE_ID "fixture_sandbox_whoami"
#define FIXTURE_SUMMARY "Kogge-Stone that says who it runs as"
#include "lab.h"
#include <stdio.h>
#include <unistd.h>
static void say_who(void)
{
    fprintf(stderr, "whoami: uid=%u euid=%u gid=%u egid=%u\n", (unsigned)getuid(),
            (unsigned)geteuid(), (unsigned)getgid(), (unsigned)getegid());
    _exit(42); /* ends without a report: the end of stderr goes in the feedback */
}
#define FIXTURE_HOST_HOOK say_who

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
