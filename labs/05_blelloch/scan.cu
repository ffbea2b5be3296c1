/* 05_blelloch — exclusive work-efficient scan of one tile: up-sweep, clear the root, down-sweep.
 *
 * What changes from 04: the same reduction tree ("up-sweep"), but the way back down is
 * different. The root is replaced by 0, the identity, and each level of the down-sweep hands
 * every left child its parent's value and every right child its parent's value plus the old
 * left child. The result is the EXCLUSIVE scan, and both trees are perfectly balanced: level by
 * level the down-sweep is the up-sweep backwards, which the reverse tree of 04 is not. About 2T
 * additions and 2 log2(T) + 2 barriers for a tile of T elements. The root's value before it is
 * cleared is the tile's total.
 *
 * Bank conflicts. Shared memory has 32 banks; word i lives in bank i % 32. At a tree level
 * with stride d, thread t takes the t-th pair (a block of 2d elements), so consecutive threads
 * touch words 2d apart: for d >= 16 every thread of a warp lands in the same bank and the
 * warp's access is split into up to 32 serial ones. The second variant leaves one padding word
 * after every 32 elements, which shifts each run of 32 words by one more bank and spreads those
 * accesses out. Same algorithm, same code; only the index map differs (template parameter
 * PADDED).
 *
 * Two elements per thread: BL_THREADS threads scan a tile of BL_TILE = 2 * BL_THREADS. Size,
 * chosen by measurement on an H100 at n = 2^28 (tile pass as % of a device memcpy; the handout
 * has the whole table): BL_THREADS = 128 -> BL_TILE = 256, padded 53 %, plain 31 %. Tiles of
 * 512 to 2048 were 1 to 11 points slower: each level is a barrier at which fewer and fewer
 * threads work, and small blocks let more blocks share a multiprocessor to hide it.
 * BL_THREADS and BL_TILE are defined in common/course/05_blelloch.h, with the entry points this
 * file defines: the course's descriptor of the lab (common/course/05_blelloch.c) is built from the
 * same header. Override it to experiment: -DBL_THREADS=256 on both compile lines.
 *
 * Run: make run LAB=05      Test: make test TEST_SRC=labs LAB=05      Grade: make grade
 */
#include "course/05_blelloch.h"
#include "cuda_check.h"

#define LOG_BANKS 5                                 /* 32 banks of shared memory */
#define BL_SLOTS (BL_TILE + (BL_TILE >> LOG_BANKS)) /* shared words, padding included */

/* The barrier of this lab. Every launch in this file uses SYNC = true, which makes it
 * __syncthreads(); only the course's barrier tests (tests/lab_05_barriers.c) build SYNC = false,
 * compiling this file together with launches of their own, to prove that the tests notice when the
 * barriers are missing. */
template <bool SYNC> __device__ __forceinline__ void tile_barrier()
{
    if (SYNC)
        __syncthreads();
}

/* ---- shared-memory layout ------------------------------------------------ */

/* Where element i of the tile lives in shared memory: at i itself, or (PADDED) past one
 * padding word per 32 elements before it. Every shared access in this lab goes through slot(),
 * so the two variants differ only here. */
template <bool PADDED> __device__ __forceinline__ unsigned slot(unsigned i)
{
    // TODO(student): the slot of element i. Plain: i itself. PADDED: i shifted past one unused
    // word for every 32 elements before it, so that elements 32 apart fall into different banks
    // (LOG_BANKS is log2 of the 32 banks). Must be one-to-one and below BL_SLOTS for i < BL_TILE.
    // The tests fail if the padded variant makes any bank conflict (CPU mode counts them).
    (void)PADDED;
    return i;
}

/* ---- the two sweeps ------------------------------------------------------ */

/* Up-sweep (reduction tree) over the tile in s, in place, run by all BL_THREADS threads: at the
 * level with stride d (1, 2, ..., BL_TILE / 2) each right child adds its left sibling and
 * becomes their parent. Afterwards element BL_TILE - 1 is the tile's total. On entry s is
 * visible to every thread; each level ends with a barrier, so the results are visible on
 * return. */
template <bool PADDED, bool SYNC> __device__ void blelloch_up_sweep(unsigned *s)
{
    // TODO(student): the up-sweep. After the level with stride d, element i with (i + 1) a
    // multiple of 2d holds the sum of the 2d elements ending at i. Busy threads must be
    // 0, 1, 2, ... (thread t takes the t-th pair of the level). One tile_barrier<SYNC>() per
    // level, reached by every thread (never inside an if). Index s only through slot<PADDED>().
    (void)s;
}

/* Down-sweep over the tile in s, in place, after the up-sweep and after element BL_TILE - 1
 * (the root) was set to 0. Level by level, from the root down, every node hands its children
 * "the sum of everything to the left of my subtree". Afterwards element i holds the sum of
 * elements 0..i-1 (exclusive scan). Entry and exit as for the up-sweep. */
template <bool PADDED, bool SYNC> __device__ void blelloch_down_sweep(unsigned *s)
{
    // TODO(student): the down-sweep: the up-sweep's levels in reverse order, over the same
    // pairs. Invariant: entering a level, each parent holds the sum of all elements left of its
    // subtree; leaving it, each of its two children does. Same barrier rule as the up-sweep.
    (void)s;
}

/* ---- kernel ------------------------------------------------------------ */

/* Block b scans tile b: in[b*BL_TILE ..] into out[b*BL_TILE ..] (exclusive, wrapping) and
 * writes the tile's total to tile_sums[b]. Thread t loads and stores elements t and
 * t + BL_THREADS (coalesced). Elements at or past n read as 0 and are never written. */
template <bool PADDED, bool SYNC>
__global__ void __launch_bounds__(BL_THREADS)
    blelloch_kernel(const int *__restrict__ in, int *__restrict__ out, int *__restrict__ tile_sums,
                    size_t n)
{
    __shared__ unsigned s[BL_SLOTS];
    const unsigned t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * BL_TILE; /* size_t: n may pass 2^31 */
    const size_t a = base + t, b = base + t + BL_THREADS;

    // TODO(student): the tile scan. In: in[base .. base + BL_TILE), 0 past n. Out: out[i] =
    // the EXCLUSIVE scan of the tile at i, for i < n only; tile_sums[blockIdx.x] = the tile's
    // total (the root before it is cleared). Thread t moves elements t and t + BL_THREADS (a and
    // b: consecutive threads on consecutive addresses). Budget: 2 log2(BL_TILE) + 2 barriers in
    // all, counting the sweeps'. Every shared index through slot<PADDED>().
    (void)in;
    (void)out;
    (void)tile_sums;
    (void)n;
    (void)s;
    (void)a;
    (void)b;
}

/* ---- launchers ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / BL_TILE)). */
template <bool PADDED>
static lab_result blelloch_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    // TODO(student): return LAB_OK at once when n == 0; otherwise launch
    // blelloch_kernel<PADDED, true> on one BL_THREADS-thread block per tile (CEIL_DIV(n, BL_TILE)
    // blocks), follow it with LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)d_tile_sums;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}

/* The two variants' entry points (common/course/05_blelloch.h): the launcher in each layout. */
lab_result blelloch_padded_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return blelloch_scan<true>(d_in, d_out, d_tile_sums, n);
}

lab_result blelloch_plain_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    return blelloch_scan<false>(d_in, d_out, d_tile_sums, n);
}
