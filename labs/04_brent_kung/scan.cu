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
 * At a level with stride d, thread t works on word (t + 1) * 2d - 1, so the threads with work
 * are always threads 0, 1, 2, ...: whole warps finish early and leave, instead of every warp
 * keeping one busy thread in 32 (less divergence).
 *
 * Size, chosen by measurement on an H100 at n = 2^28 (tile pass as % of a device memcpy; the
 * handout has the whole table): BK_THREADS = 64 -> BK_TILE = 128: 55 %; 128 threads 52 %,
 * 512 threads 46 %, 32 threads 28 %. Every thread waits at every level, so the thread-levels
 * spent per element grow with log2(tile), and at the top of each tree few threads work: small
 * blocks waste less and let more blocks share a multiprocessor, one block's loads overlapping
 * another's barriers. Below 64 threads the limit of 32 resident blocks per multiprocessor
 * leaves thread slots empty. (Every level in shared memory, without the pairs in registers:
 * 36 % at best.)
 * Override it to experiment: nvcc ... -DBK_THREADS=256.
 *
 * Run: make run LAB=04      Test: make test TEST_SRC=labs LAB=04      Grade: make grade
 */
#include "lab.h"
#include "cuda_check.h"

#ifndef BK_THREADS
#define BK_THREADS 64 /* threads per block (a multiple of 32) */
#endif
#define BK_TILE (2 * BK_THREADS) /* elements per tile: a power of two */
#define BK_PAIRS BK_THREADS      /* words of shared memory: one pair sum per thread */

static_assert((BK_TILE & (BK_TILE - 1)) == 0, "BK_TILE must be a power of two");
static_assert(BK_THREADS % 32 == 0, "BK_THREADS must be a whole number of warps");

/* The barrier of this lab. Every launch in the lab uses SYNC = true, which makes it
 * __syncthreads(); only the test hooks at the end of the file build SYNC = false, to prove that
 * the tests notice when the barriers are missing. */
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
    // TODO(student): for d = 1, 2, 4, ... < BK_PAIRS: thread t takes word
    // i = (t + 1) * 2 * d - 1; if i < BK_PAIRS, s[i] += s[i - d]; then tile_barrier<SYNC>()
    // (every thread, every level: never inside the if).
    (void)s;
}

/* Reverse tree over s[0..BK_PAIRS), in place, after the reduction tree. At the level with
 * stride d (BK_PAIRS / 4, ..., 2, 1) every word i with (i + 1) a multiple of 2d, which already
 * holds its prefix sum, passes it on: s[i + d] += s[i]. Afterwards every s[i] is the inclusive
 * prefix sum of the pair sums. Entry and exit as for the reduction tree. */
template <bool SYNC> __device__ void bk_reverse_tree(unsigned *s)
{
    // TODO(student): for d = BK_PAIRS / 4, ..., 2, 1: the same i = (t + 1) * 2 * d - 1;
    // if i + d < BK_PAIRS, s[i + d] += s[i]; then tile_barrier<SYNC>().
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

    // TODO(student): 1. load x = in[a] and y = in[b] as unsigned (0 when the index is >= n);
    //   store the pair sum x + y in s[t]; tile_barrier<SYNC>().
    // 2. bk_reduction_tree<SYNC>(s), then bk_reverse_tree<SYNC>(s).
    // 3. s[t] is now the inclusive sum up to element b and s[t - 1] the one up to element a - 1
    //   (0 for t == 0): write out[a] = s[t - 1] + x and out[b] = s[t] where the index is < n.
    //   Thread BK_THREADS - 1 writes s[BK_PAIRS - 1], the tile's total, to tile_sums[blockIdx.x].
    (void)in; (void)out; (void)tile_sums; (void)n; (void)s; (void)b;
}

/* ---- launcher ------------------------------------------------------------ */

/* Scans every tile of d_in[0..n) into d_out and writes d_tile_sums[0 .. ceil(n / BK_TILE)). */
static lab_result brent_kung_scan(const int *d_in, int *d_out, int *d_tile_sums, size_t n)
{
    // TODO(student): return LAB_OK at once when n == 0; otherwise launch brent_kung_kernel<true>
    // on one BK_THREADS-thread block per tile (CEIL_DIV(n, BK_TILE) blocks), follow it with
    // LAUNCH_CHECK(), and return LAB_OK instead of the lines below.
    (void)d_in; (void)d_out; (void)d_tile_sums; (void)n;
    return LAB_NOT_IMPLEMENTED;
}

/* ---- the lab ------------------------------------------------------------ */

static const lab_variant VARIANTS[] = {
    {"brent_kung", "reduction tree + reverse tree, two elements per thread", NULL,
     brent_kung_scan, NULL},
};

extern "C" const lab_info LAB = {
    "04_brent_kung", "Brent-Kung", LAB_TILE, SCAN_INCLUSIVE,
    BK_TILE,         /* elements per tile */
    0,               /* no size limit */
    (size_t)1 << 28, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]), VARIANTS,
};

/* ==== test hooks — do not edit ===========================================================
 * Used only by tests/lab_04_*.c, which link with the reference solution. */

/* Runs the selected trees on `tiles` blocks of shared-memory state: block k's BK_PAIRS words
 * are copied from d_state_in into s as they are, phases & 1 runs bk_reduction_tree, phases & 2
 * then runs bk_reverse_tree, and s is copied to d_state_out. */
__global__ void bk_hook_phase_kernel(const int *state_in, int *state_out, int phases)
{
    __shared__ unsigned s[BK_PAIRS];
    const size_t base = (size_t)blockIdx.x * BK_PAIRS;
    for (unsigned i = threadIdx.x; i < BK_PAIRS; i += blockDim.x)
        s[i] = (unsigned)state_in[base + i];
    __syncthreads();
    if (phases & 1)
        bk_reduction_tree<true>(s);
    if (phases & 2)
        bk_reverse_tree<true>(s);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < BK_PAIRS; i += blockDim.x)
        state_out[base + i] = (int)s[i];
}

/* Words of shared state per tile that bk_hook_phase works on (BK_PAIRS). */
extern "C" size_t bk_hook_state_words(void)
{
    return BK_PAIRS;
}

extern "C" void bk_hook_phase(int phases, const int *d_state_in, int *d_state_out, size_t tiles)
{
    if (tiles == 0)
        return;
    bk_hook_phase_kernel<<<(unsigned)tiles, BK_THREADS>>>(d_state_in, d_state_out, phases);
    LAUNCH_CHECK();
}

/* The launcher's launch, with sync = 0 building the kernel with every tile_barrier removed: the
 * tests require that this broken build is detected. */
extern "C" lab_result bk_hook_scan_tiles(int sync, const int *d_in, int *d_out, int *d_tile_sums,
                                         size_t n)
{
    if (n == 0)
        return LAB_OK;
    const unsigned tiles = (unsigned)CEIL_DIV(n, (size_t)BK_TILE);
    if (sync)
        brent_kung_kernel<true><<<tiles, BK_THREADS>>>(d_in, d_out, d_tile_sums, n);
    else
        brent_kung_kernel<false><<<tiles, BK_THREADS>>>(d_in, d_out, d_tile_sums, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
