/* correct_kernel.h — a correct Kogge-Stone tile scan (both barriers), shared by the CPU-mode
 * fixtures that need one: the control correct.cu, and those whose point is what their launcher's
 * host hook does (the sandbox_* fixtures, leak_per_call). Include it before fixture.h. */
#ifndef CORRECT_KERNEL_H
#define CORRECT_KERNEL_H

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

#endif /* CORRECT_KERNEL_H */
