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

    // TODO(student): the double-buffered Kogge-Stone scan of this tile.
    //  In:  in[base .. base + KS_TILE); positions at or past n count as 0, the identity.
    //  Out: out[base + p] = the inclusive scan of the tile at p, for base + p < n only (never
    //       past n); tile_sums[blockIdx.x] = the tile's total.
    //  Ownership: this thread owns positions p = t + j * KS_THREADS (j < KS_ITEMS) and keeps
    //  their running sums in x[j]; buf only carries values between threads.
    //  Invariant: after the step with offset d, position p holds the sum of the (up to) 2d
    //  elements ending at p.
    //  Budget: log2(KS_TILE) steps, exactly one tile_barrier<SYNC>() per step and no other; no
    //  step may write the buffer it reads.
    (void)in;
    (void)out;
    (void)tile_sums;
    (void)n;
    (void)buf;
    (void)t;
    (void)base;
    (void)x;
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

    // TODO(student): the same scan with the single buffer s: the same inputs, outputs,
    //  ownership and invariant as the double-buffered kernel. Budget: two tile_barrier<SYNC>()
    //  per step, because with one buffer a thread may overwrite its s[p] only once every thread
    //  has read the s[p - d] it needs in this step.
    (void)in;
    (void)out;
    (void)tile_sums;
    (void)n;
    (void)s;
    (void)t;
    (void)base;
    (void)x;
}

/* ---- launchers ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / KS_TILE)). */
lab_result ks_double_buffer_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    // TODO(student): return LAB_OK at once when n == 0; otherwise launch
    // ks_double_buffer_kernel<true> on one KS_THREADS-thread block per tile (CEIL_DIV(n, KS_TILE)
    // blocks), follow it with LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)d_tile_sums;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}

lab_result ks_two_barrier_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    // TODO(student): return LAB_OK at once when n == 0; otherwise launch
    // ks_two_barrier_kernel<true> on one KS_THREADS-thread block per tile (CEIL_DIV(n, KS_TILE)
    // blocks), follow it with LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)d_tile_sums;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}
