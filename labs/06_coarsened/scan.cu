/* 06_coarsened — thread coarsening: a three-phase scan inside one block.
 *
 * What changes from 05: each thread owns a run of C consecutive elements instead of one or two.
 *   Phase 1: every thread scans its own run sequentially, in registers (C - 1 adds, no barrier).
 *   Phase 2: the block scans the BLOCK per-thread run totals (an exclusive scan: Kogge-Stones
 *            over warp shuffles, inside each warp and then over the warp totals; not over the
 *            whole tile: about log2(BLOCK) steps instead of log2(BLOCK * C)).
 *   Phase 3: every thread adds the total of all runs before its own to each element of its run.
 * Global memory is read and written coalesced: the block first copies its tile into shared
 * memory with consecutive threads on consecutive addresses (16 bytes each when aligned), and
 * only then does each thread pick up its own run from shared memory.
 * Work: BLOCK (C - 1) + BLOCK C adds in phases 1 and 3, about 6 BLOCK in phase 2 (1529 at
 * BLOCK = 256); 4 barriers; tile = BLOCK x C = 2048.
 *
 * Run: make run LAB=06      Test: make test TEST_SRC=labs LAB=06      Grade: make grade
 */
#include "course/06_coarsened.h"
#include "cuda_check.h"

#include <stdint.h>

/* TILE, the tile of every variant (BLOCK x C = 2048 elements), is in common/course/06_coarsened.h.
 */
#define WARP 32

/* Shared memory is 32 banks of 4 bytes. Thread t reads its run at t * C: with C a power of two,
 * the threads of a warp would all hit a handful of banks. One padding word after every 32 words
 * spreads them over all 32 banks, for the coalesced copy and for runs of C <= 32 (at C = 64
 * threads t and t + 16 still share a bank). */
__device__ __forceinline__ unsigned padded(unsigned i)
{
    return i + i / WARP;
}

/* ---- given: the coalesced copies between global and shared memory --------------------------- */

/* Copies the tile's len input elements into s (padded), zero past len. Consecutive threads read
 * consecutive addresses: 16-byte int4 loads when the tile is full and the pointer aligned, all
 * of a thread's loads issued before the first store to shared memory. */
template <int BLOCK, int C>
__device__ void load_tile(const int *__restrict__ in, unsigned len, bool vec, unsigned *s)
{
    if constexpr (C % 4 == 0) {
        if (vec && len == BLOCK * C) {
            const int4 *in4 = reinterpret_cast<const int4 *>(in);
            int4 q[C / 4];
#pragma unroll
            for (int j = 0; j < C / 4; j++)
                q[j] = in4[j * BLOCK + threadIdx.x];
#pragma unroll
            for (int j = 0; j < C / 4; j++) {
                const unsigned i = 4 * (j * BLOCK + threadIdx.x);
                s[padded(i)] = (unsigned)q[j].x;
                s[padded(i + 1)] = (unsigned)q[j].y;
                s[padded(i + 2)] = (unsigned)q[j].z;
                s[padded(i + 3)] = (unsigned)q[j].w;
            }
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < C; j++) {
        const unsigned i = j * BLOCK + threadIdx.x;
        s[padded(i)] = i < len ? (unsigned)in[i] : 0u;
    }
}

/* Copies s (padded) back to out[0..len), coalesced like load_tile; never writes past len. */
template <int BLOCK, int C>
__device__ void store_tile(int *__restrict__ out, unsigned len, bool vec, const unsigned *s)
{
    if constexpr (C % 4 == 0) {
        if (vec && len == BLOCK * C) {
            int4 *out4 = reinterpret_cast<int4 *>(out);
#pragma unroll
            for (int j = 0; j < C / 4; j++) {
                const unsigned i = 4 * (j * BLOCK + threadIdx.x);
                out4[j * BLOCK + threadIdx.x] =
                    make_int4((int)s[padded(i)], (int)s[padded(i + 1)], (int)s[padded(i + 2)],
                              (int)s[padded(i + 3)]);
            }
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < C; j++) {
        const unsigned i = j * BLOCK + threadIdx.x;
        if (i < len)
            out[i] = (int)s[padded(i)];
    }
}

/* ---- phase 2: scan of the per-thread totals ------------------------------------------------ */

/* Exclusive scan of one value per thread across the block: returns the sum of x over the threads
 * before this one, and the sum over the whole block in *block_total. s_warp holds BLOCK / 32
 * words. Every thread of the block must call it (it has barriers). */
template <int BLOCK>
__device__ unsigned block_exclusive_scan(unsigned x, unsigned *s_warp, unsigned *block_total)
{
    // TODO(student): phase 2. Return, to each thread, the sum of x over the threads before it
    // (an exclusive scan across the block) and store the sum over all BLOCK threads in
    // *block_total. Any correct block scan passes (lab 03's over a shared array of BLOCK words
    // you declare here, or warp shuffles with s_warp, as the reference: labs/WARPS.md). Every
    // thread of the block calls this function and must reach every __syncthreads() in it; the
    // reference uses 2 barriers here.
    (void)x;
    (void)s_warp;
    *block_total = 0;
    return 0;
}

/* ---- kernel ---------------------------------------------------------------------------------- */

/* Block b scans tile b (BLOCK x C elements, the last one possibly short) of in into out and
 * writes the tile's total to tile_sums[b]. vec: in and out are 16-byte aligned. */
template <int BLOCK, int C>
__global__ void __launch_bounds__(BLOCK)
    coarsened_scan_kernel(const int *__restrict__ in, int *__restrict__ out,
                          int *__restrict__ tile_sums, size_t n, bool vec)
{
    __shared__ unsigned s_tile[BLOCK * C + BLOCK * C / WARP];
    __shared__ unsigned s_warp[BLOCK / WARP];
    const size_t base = (size_t)blockIdx.x * (BLOCK * C);
    const unsigned len = n - base < (size_t)(BLOCK * C) ? (unsigned)(n - base) : BLOCK * C;
    const unsigned first =
        threadIdx.x * C; /* this thread's run: tile elements first .. first+C-1 */

    load_tile<BLOCK, C>(in + base, len, vec, s_tile);
    __syncthreads(); /* the whole tile is in shared memory before anyone reads a run */

    /* Phase 1: scan this thread's run in registers; run_total is its last value. */
    unsigned v[C];
    unsigned run_total = 0;
    // TODO(student): phase 1. Leave in v[] the inclusive scan of this thread's run (tile elements
    // first .. first + C - 1, read from s_tile through padded()) and in run_total its sum. No
    // barrier, C - 1 additions; v[] must stay in registers (a loop the compiler can unroll).
    (void)first;

    /* Phase 2: what the runs before this one add up to. */
    unsigned tile_total;
    const unsigned before = block_exclusive_scan<BLOCK>(run_total, s_warp, &tile_total);

    /* Phase 3: add it to the run, put the run back where it came from; one thread writes the
     * tile's total (the padding zeros past len add nothing to it). */
    // TODO(student): phase 3. Put the run's final values back into s_tile (through padded()):
    // each is its value in v[] plus everything before the run. One thread writes tile_total to
    // tile_sums[blockIdx.x].
    (void)v;
    (void)before;
    (void)tile_total;
    (void)tile_sums;
    __syncthreads(); /* every run is back before the coalesced store reads them */

    store_tile<BLOCK, C>(out + base, len, vec, s_tile);
}

/* ---- launcher -------------------------------------------------------------------------------- */

/* Inclusive scan of each TILE-element tile of d_in into d_out, tile totals into d_tile_sums. */
template <int BLOCK, int C>
static lab_result scan_tiles_coarsened(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    static_assert(BLOCK * C == TILE, "every variant covers one TILE per block");
    // TODO(student): return LAB_OK at once when n == 0. Otherwise set vec to whether d_in and
    // d_out are both 16-byte aligned ((uintptr_t)p % 16 == 0), launch coarsened_scan_kernel<BLOCK,
    // C> with one BLOCK-thread block per tile (CEIL_DIV(n, (size_t)TILE) blocks), follow it with
    // LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)d_tile_sums;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}

/* The variants' entry points (common/course/06_coarsened.h): the same launcher for each split of
 * the tile into BLOCK threads of C elements, the coarsening sweep. */
lab_result scan_tiles_c8_b256(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<256, 8>(d_in, d_out, d_tile_sums, n);
}

lab_result scan_tiles_c2_b1024(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<1024, 2>(d_in, d_out, d_tile_sums, n);
}

lab_result scan_tiles_c4_b512(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<512, 4>(d_in, d_out, d_tile_sums, n);
}

lab_result scan_tiles_c16_b128(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<128, 16>(d_in, d_out, d_tile_sums, n);
}

lab_result scan_tiles_c32_b64(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<64, 32>(d_in, d_out, d_tile_sums, n);
}

lab_result scan_tiles_c64_b32(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return scan_tiles_coarsened<32, 64>(d_in, d_out, d_tile_sums, n);
}
