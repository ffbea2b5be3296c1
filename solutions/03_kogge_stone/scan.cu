/* 03_kogge_stone — Kogge-Stone scan of one tile in shared memory, double-buffered.
 *
 * What changes from 02: threads now cooperate. A block scans one tile of KS_TILE consecutive
 * elements in shared memory in log2(KS_TILE) steps; at the step with offset d every position
 * p >= d adds the value d places to its left. After the step with d = KS_TILE / 2 each
 * position holds the sum of everything up to it (inclusive scan). Work: about
 * KS_TILE * log2(KS_TILE) additions per tile instead of 02's O(n^2) in total; the tiles are
 * joined by the known-good carry pass in common/driver.cu.
 *
 * Two variants, both written by the student:
 *   double_buffer (default, graded)  steps read one buffer and write the other: 1 barrier/step.
 *   two_barrier                      one buffer; a step's reads must all finish before anyone
 *                                    overwrites a value (write-after-read): 2 barriers/step.
 *
 * Thread t owns the KS_ITEMS positions t, t + KS_THREADS, t + 2*KS_THREADS, ... of its tile and
 * keeps their running sums in registers; shared memory is only for passing values between
 * threads. With this "strided" ownership each load and store instruction of a warp touches 32
 * consecutive words (coalesced) and 32 different banks. Sizes, chosen by measurement on an H100
 * at n = 2^28 (tile pass as % of a device memcpy; the handout has the whole table):
 *   KS_THREADS = 128, KS_ITEMS = 4 -> KS_TILE = 512: 81 % (1 item per thread: 44-60 %).
 *   Items per thread matter most: each thread's KS_ITEMS loads are independent, so they are all
 *   in flight at once, and a memory-bound kernel is only as fast as the bytes it keeps in
 *   flight. The tile size matters less: a bigger tile costs one more step per doubling, on
 *   every element; 512 and 1024 measured the same within 1 %.
 * KS_THREADS, KS_ITEMS and KS_TILE are defined in common/course/03_kogge_stone.h, with the entry
 * points this file defines: the course's descriptor of the lab (common/course/03_kogge_stone.c) is
 * built from the same header. Override them to experiment: -DKS_THREADS=128 -DKS_ITEMS=4 on both
 * compile lines.
 *
 * Run: make run LAB=03      Test: make test TEST_SRC=labs LAB=03      Grade: make grade
 */
#include "course/03_kogge_stone.h"
#include "cuda_check.h"

/* The barrier of this lab. Every launch in this file uses SYNC = true, which makes it
 * __syncthreads(); only the course's barrier tests (tests/lab_03_barriers.c) build SYNC = false,
 * compiling this file together with launches of their own, to prove that the tests notice when the
 * barriers are missing. */
template <bool SYNC> __device__ __forceinline__ void tile_barrier()
{
    if (SYNC)
        __syncthreads();
}

/* ---- kernels ------------------------------------------------------------ */

/* Block b scans tile b: in[b*KS_TILE ..] into out[b*KS_TILE ..] (inclusive, wrapping) and
 * writes the tile's total to tile_sums[b]. Positions at or past n read as 0, the identity, and
 * are never written. Sums are unsigned so that overflow wraps (signed overflow is undefined).
 *
 * Double buffering: step k reads buf[k % 2] and writes buf[(k + 1) % 2]. The barrier at the
 * start of a step makes the previous step's writes visible (read-after-write), and it also
 * guarantees that the previous step, the last one to read the buffer this step overwrites, has
 * finished reading it (write-after-read): one barrier per step does both jobs. */
template <bool SYNC>
__global__ void __launch_bounds__(KS_THREADS)
    ks_double_buffer_kernel(const int *__restrict__ in, int *__restrict__ out,
                            int *__restrict__ tile_sums, size_t n)
{
    __shared__ unsigned buf[2][KS_TILE];
    const unsigned t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * KS_TILE; /* size_t: n may pass 2^31 */
    unsigned x[KS_ITEMS];                             /* x[j]: position t + j*KS_THREADS */

    /* load: the KS_ITEMS loads are independent, so they are all in flight at once */
#pragma unroll
    for (int j = 0; j < KS_ITEMS; j++) {
        const unsigned p = t + j * KS_THREADS;
        x[j] = base + p < n ? (unsigned)in[base + p] : 0u;
        buf[0][p] = x[j];
    }

    int src = 0;
    for (unsigned d = 1; d < KS_TILE; d *= 2) {
        tile_barrier<SYNC>(); /* buf[src] is complete (and buf[src ^ 1] no longer read) */
#pragma unroll
        for (int j = 0; j < KS_ITEMS; j++) {
            const unsigned p = t + j * KS_THREADS;
            if (p >= d)
                x[j] += buf[src][p - d];
            buf[src ^ 1][p] = x[j];
        }
        src ^= 1;
    }

    /* store from registers: no barrier needed, each thread writes only its own positions */
#pragma unroll
    for (int j = 0; j < KS_ITEMS; j++) {
        const unsigned p = t + j * KS_THREADS;
        if (base + p < n)
            out[base + p] = (int)x[j];
    }
    if (t == KS_THREADS - 1) /* it owns position KS_TILE - 1, the tile's total */
        tile_sums[blockIdx.x] = (int)x[KS_ITEMS - 1];
}

/* The same scan with a single buffer s. A step first reads every s[p - d] it needs into a
 * register, waits until all threads have read (otherwise a fast thread could overwrite a value
 * a slow one has yet to read: the write-after-read hazard), then writes, and waits again before
 * the next step reads (read-after-write). */
template <bool SYNC>
__global__ void __launch_bounds__(KS_THREADS)
    ks_two_barrier_kernel(const int *__restrict__ in, int *__restrict__ out,
                          int *__restrict__ tile_sums, size_t n)
{
    __shared__ unsigned s[KS_TILE];
    const unsigned t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * KS_TILE;
    unsigned x[KS_ITEMS];

#pragma unroll
    for (int j = 0; j < KS_ITEMS; j++) {
        const unsigned p = t + j * KS_THREADS;
        x[j] = base + p < n ? (unsigned)in[base + p] : 0u;
        s[p] = x[j];
    }

    for (unsigned d = 1; d < KS_TILE; d *= 2) {
        unsigned left[KS_ITEMS];
        tile_barrier<SYNC>(); /* read-after-write: last step's values are all written */
#pragma unroll
        for (int j = 0; j < KS_ITEMS; j++) {
            const unsigned p = t + j * KS_THREADS;
            left[j] = p >= d ? s[p - d] : 0u;
        }
        tile_barrier<SYNC>(); /* write-after-read: everyone has read before anyone writes */
#pragma unroll
        for (int j = 0; j < KS_ITEMS; j++) {
            const unsigned p = t + j * KS_THREADS;
            x[j] += left[j];
            s[p] = x[j];
        }
    }

#pragma unroll
    for (int j = 0; j < KS_ITEMS; j++) {
        const unsigned p = t + j * KS_THREADS;
        if (base + p < n)
            out[base + p] = (int)x[j];
    }
    if (t == KS_THREADS - 1)
        tile_sums[blockIdx.x] = (int)x[KS_ITEMS - 1];
}

/* ---- launchers ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / KS_TILE)). */
lab_result ks_double_buffer_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)KS_TILE);
    ks_double_buffer_kernel<true><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}

lab_result ks_two_barrier_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)KS_TILE);
    ks_two_barrier_kernel<true><<<tiles, KS_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
