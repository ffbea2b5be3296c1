/* 04_brent_kung — work-efficient scan of one tile: a reduction tree, then a reverse tree.
 *
 * What changes from 03: Kogge-Stone does about T * log2(T) additions for a tile of T elements,
 * so most of its work is redundant. Brent-Kung does fewer than 2T: a reduction tree builds
 * partial sums at the "right ends" of blocks of 2, 4, 8, ... elements (T - 1 additions,
 * log2(T) levels), and a reverse tree pushes those sums back down to the positions still
 * missing them (T - 1 - log2(T) additions, log2(T) - 1 levels). The price is depth: about twice
 * as many barrier steps as Kogge-Stone, and at the top of each tree only a handful of threads
 * have anything to do.
 *
 * Two elements per thread: BK_THREADS threads scan a tile of BK_TILE = 2 * BK_THREADS, thread
 * t owning elements 2t and 2t + 1. The lowest level of both trees (stride 1) combines exactly
 * these pairs: the reduction tree's first level adds element 2t into 2t + 1, the reverse tree's
 * last level adds 2t + 1 into 2t + 2. Every other level touches odd positions only. So each
 * thread does the stride-1 levels in registers, and the trees in shared memory run over the
 * BK_THREADS pair sums (odd position 2j + 1 of the tile is word j of s). That halves the
 * shared-memory traffic and saves two barriers, at no change to the algorithm.
 *
 * At a level with stride d, thread t takes the t-th word with work, counting from the left
 * (finding which word that is belongs to the exercise), so the threads with work are always
 * threads 0, 1, 2, ...: whole warps finish early and leave, instead of one busy thread every 2d
 * threads, which keeps every warp busy while 2d <= 32 (less divergence).
 *
 * Size, chosen by measurement on an H100 at n = 2^28 (tile pass as % of a device memcpy; the
 * handout has the whole table): BK_THREADS = 64 -> BK_TILE = 128: 55 %; 128 threads 52 %,
 * 512 threads 46 %, 32 threads 28 %. Every thread waits at every level, so the thread-levels
 * spent per element grow with log2(tile), and at the top of each tree few threads work: small
 * blocks waste less and let more blocks share a multiprocessor, one block's loads overlapping
 * another's barriers. Below 64 threads the limit of 32 resident blocks per multiprocessor
 * leaves thread slots empty. (Every level in shared memory, without the pairs in registers:
 * 36 % at best.)
 * BK_THREADS and BK_TILE are defined in common/course/04_brent_kung.h, with the entry point this
 * file defines: the course's descriptor of the lab (common/course/04_brent_kung.c) is built from
 * the same header. Override it to experiment: -DBK_THREADS=256 on both compile lines.
 *
 * Run: make run LAB=04      Test: make test TEST_SRC=labs LAB=04      Grade: make grade
 */
#include "course/04_brent_kung.h"
#include "cuda_check.h"

#define BK_PAIRS BK_THREADS /* words of shared memory: one pair sum per thread */

/* The barrier of this lab. Every launch in this file uses SYNC = true, which makes it
 * __syncthreads(); only the course's barrier tests (tests/lab_04_barriers.c) build SYNC = false,
 * compiling this file together with launches of their own, to prove that the tests notice when the
 * barriers are missing. */
template <bool SYNC> __device__ __forceinline__ void tile_barrier()
{
    if (SYNC)
        __syncthreads();
}

/* ---- the two trees -------------------------------------------------------- */

/* Reduction tree over the pair sums s[0..BK_PAIRS), in place, run by all BK_THREADS threads.
 * At the level with stride d (1, 2, 4, ..., BK_PAIRS / 2) every word i with (i + 1) a multiple
 * of 2d gets s[i] += s[i - d]; afterwards s[i] holds the sum of the 2d words ending at i, and
 * s[BK_PAIRS - 1] the sum of the whole tile. On entry s is visible to every thread; each level
 * ends with a barrier, so the results are visible on return. */
template <bool SYNC> __device__ void bk_reduction_tree(unsigned *s)
{
    // TODO(student): the reduction tree. After the level with stride d (1, 2, 4, ... < BK_PAIRS),
    // every word i with (i + 1) a multiple of 2d holds the sum of the 2d words ending at i.
    // Busy threads must be 0, 1, 2, ... (whole warps idle together, not one lane in every 2d).
    // One tile_barrier<SYNC>() per level, reached by every thread (never inside an if).
    (void)s;
}

/* Reverse tree over s[0..BK_PAIRS), in place, after the reduction tree. At the level with
 * stride d (BK_PAIRS / 4, ..., 2, 1) every word i with (i + 1) a multiple of 2d, which already
 * holds its prefix sum, passes it on: s[i + d] += s[i]. Afterwards every s[i] is the inclusive
 * prefix sum of the pair sums. Entry and exit as for the reduction tree. */
template <bool SYNC> __device__ void bk_reverse_tree(unsigned *s)
{
    // TODO(student): the reverse tree, strides d = BK_PAIRS / 4, ..., 2, 1. After the level with
    // stride d, every word i with (i + 1) a multiple of d holds its complete inclusive prefix.
    // Same thread mapping and barrier rule as the reduction tree.
    (void)s;
}

/* ---- kernel ------------------------------------------------------------ */

/* Block b scans tile b: in[b*BK_TILE ..] into out[b*BK_TILE ..] (inclusive, wrapping) and
 * writes the tile's total to tile_sums[b]. Thread t loads elements 2t and 2t + 1 (a warp's two
 * load instructions cover 64 consecutive words), does the stride-1 level of the reduction tree
 * in registers, runs both trees on the pair sums in shared memory, and does the stride-1 level
 * of the reverse tree in registers while storing. Elements at or past n read as 0 and are never
 * written. */
template <bool SYNC>
__global__ void __launch_bounds__(BK_THREADS)
    brent_kung_kernel(const int *__restrict__ in, int *__restrict__ out,
                      int *__restrict__ tile_sums, size_t n)
{
    __shared__ unsigned s[BK_PAIRS];
    const unsigned t = threadIdx.x;
    const size_t a = (size_t)blockIdx.x * BK_TILE + 2 * t; /* size_t: n may pass 2^31 */
    const size_t b = a + 1;

    // TODO(student): the tile scan. In: elements a and b of in (this thread's pair), 0 past n.
    // Out: out[i] = the inclusive scan of the tile at i, for i < n only; tile_sums[blockIdx.x] =
    // the tile's total. Both stride-1 levels happen in this thread's registers, so the two trees
    // run over BK_PAIRS = BK_TILE / 2 pair sums in s. Barriers: s complete before the trees; the
    // trees end with one. Budget: 2 log2(BK_TILE) - 2 barriers in all.
    (void)in;
    (void)out;
    (void)tile_sums;
    (void)n;
    (void)s;
    (void)b;
}

/* ---- launcher ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / BK_TILE)). */
lab_result brent_kung_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    // TODO(student): return LAB_OK at once when n == 0; otherwise launch brent_kung_kernel<true>
    // on one BK_THREADS-thread block per tile (CEIL_DIV(n, BK_TILE) blocks), follow it with
    // LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)d_tile_sums;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}
