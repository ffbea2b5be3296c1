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
 * with stride d, thread t touches words d*(2t+1) - 1 and d*(2t+2) - 1: 2d words apart, so for
 * d >= 16 every thread of a warp lands in the same bank and the warp's access is split into up
 * to 32 serial ones. The second variant stores word i at slot(i) = i + i / 32: one padding word
 * after every 32, which shifts each run of 32 words by one more bank and spreads those accesses
 * out. Same algorithm, same code; only the index map differs (template parameter PADDED).
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

/* Where element i of the tile lives in shared memory: at i itself, or (PADDED) after one
 * padding word per 32 elements before it, i + i / 32. Every shared access in this lab goes
 * through slot(), so the two variants differ only here. */
template <bool PADDED> __device__ __forceinline__ unsigned slot(unsigned i)
{
    return PADDED ? i + (i >> LOG_BANKS) : i;
}

/* ---- the two sweeps ------------------------------------------------------ */

/* Up-sweep (reduction tree) over the tile in s, in place, run by all BL_THREADS threads. At the
 * level with stride d (1, 2, ..., BL_TILE / 2) thread t adds element d*(2t+1) - 1 (the left
 * child) into element d*(2t+2) - 1 (the right child, which becomes the parent), when that is
 * inside the tile. Afterwards element BL_TILE - 1 is the tile's total. On entry s is visible to
 * every thread; each level ends with a barrier, so the results are visible on return. */
template <bool PADDED, bool SYNC> __device__ void blelloch_up_sweep(unsigned *s)
{
    const unsigned t = threadIdx.x;
    for (unsigned d = 1; d < BL_TILE; d *= 2) {
        const unsigned left = d * (2 * t + 1) - 1, right = d * (2 * t + 2) - 1;
        if (right < BL_TILE)
            s[slot<PADDED>(right)] += s[slot<PADDED>(left)];
        tile_barrier<SYNC>();
    }
}

/* Down-sweep over the tile in s, in place, after the up-sweep and after element BL_TILE - 1
 * (the root) was set to 0. At the level with stride d (BL_TILE / 2, ..., 2, 1), for the same
 * pairs as the up-sweep: the left child gets the parent's value, the right child (which held
 * the parent) gets parent + old left child. Afterwards element i holds the sum of elements
 * 0..i-1 (exclusive scan). Entry and exit as for the up-sweep. */
template <bool PADDED, bool SYNC> __device__ void blelloch_down_sweep(unsigned *s)
{
    const unsigned t = threadIdx.x;
    for (unsigned d = BL_TILE / 2; d >= 1; d /= 2) {
        const unsigned left = d * (2 * t + 1) - 1, right = d * (2 * t + 2) - 1;
        if (right < BL_TILE) {
            const unsigned l = s[slot<PADDED>(left)];
            s[slot<PADDED>(left)] = s[slot<PADDED>(right)];
            s[slot<PADDED>(right)] += l;
        }
        tile_barrier<SYNC>();
    }
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

    s[slot<PADDED>(t)] = a < n ? (unsigned)in[a] : 0u;
    s[slot<PADDED>(t + BL_THREADS)] = b < n ? (unsigned)in[b] : 0u;
    tile_barrier<SYNC>(); /* the whole tile is in s */

    blelloch_up_sweep<PADDED, SYNC>(s);
    if (t == 0) { /* the root: record the tile's total, then clear it */
        tile_sums[blockIdx.x] = (int)s[slot<PADDED>(BL_TILE - 1)];
        s[slot<PADDED>(BL_TILE - 1)] = 0;
    }
    tile_barrier<SYNC>(); /* everyone sees the cleared root */
    blelloch_down_sweep<PADDED, SYNC>(s);

    if (a < n)
        out[a] = (int)s[slot<PADDED>(t)];
    if (b < n)
        out[b] = (int)s[slot<PADDED>(t + BL_THREADS)];
}

/* ---- launchers ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / BL_TILE)). */
template <bool PADDED>
static lab_result blelloch_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)BL_TILE);
    blelloch_kernel<PADDED, true><<<tiles, BL_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
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
