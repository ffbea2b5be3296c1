/* sandbox_read_file.cu — a correct kernel whose launcher reads a file that exists and every user
 * may read (/etc/passwd; a lab 01 upload read the course's reference this way), prints it on
 * stderr and ends without a report, so that a graded run's feedback would carry the file: in a
 * graded run (--sandbox) the seccomp filter stops the open, names it, and no byte of the file is
 * printed. */
#define FIXTURE_ID "fixture_sandbox_read_file"
#define FIXTURE_SUMMARY "Kogge-Stone that prints a file"
#include "lab.h"
#include <stdio.h>
#include <unistd.h>
static void print_a_file(void)
{
    char line[256];
    FILE *f = fopen("/etc/passwd", "r");
    if (f) {
        while (fgets(line, sizeof(line), f))
            fputs(line, stderr);
        fclose(f);
    }
    _exit(42); /* ends without a report: the end of stderr goes in the feedback */
}
#define FIXTURE_HOST_HOOK print_a_file

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
