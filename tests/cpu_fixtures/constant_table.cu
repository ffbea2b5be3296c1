/* constant_table.cu — the control for device variables: a correct Kogge-Stone whose steps come
 * from a __constant__ table and whose tiles count themselves in a __device__ variable, both touched
 * by kernels only. CPU mode keeps both on device-memory pages (closed to host code, the table
 * read-only to kernels): it must pass for every scheduler seed. */
#define FIXTURE_ID "fixture_constant_table"
#define FIXTURE_SUMMARY "Kogge-Stone with its steps in a __constant__ table"
#include "lab.h"

#define FIXTURE_TILE 256
__constant__ unsigned c_steps[8] = {1, 2, 4, 8, 16, 32, 64, 128};
__device__ unsigned long long g_tiles_done;

__global__ void fixture_kernel(const int *in, int *out, int *tile_sums, size_t n)
{
    __shared__ unsigned s[FIXTURE_TILE];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * FIXTURE_TILE + t;
    s[t] = i < n ? (unsigned)in[i] : 0u;
    __syncthreads();
    for (int k = 0; k < 8; k++) {
        const unsigned d = c_steps[k];
        const unsigned add = t >= d ? s[t - d] : 0u;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (i < n)
        out[i] = (int)s[t];
    if (t == FIXTURE_TILE - 1) {
        tile_sums[blockIdx.x] = (int)s[t];
        atomicAdd(&g_tiles_done, 1ull);
    }
}

#include "fixture.h"
