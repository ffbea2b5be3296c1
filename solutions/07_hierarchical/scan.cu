/* 07_hierarchical — the whole scan of any length: tiles, a scan of the tile totals, a carry each.
 *
 * What changes from 06: no common code propagates carries any more; this file does it all.
 *   scan_then_propagate (default): scan every tile and write its total; scan the totals (the same
 *     function, recursively, until they fit in one tile); add each tile's carry back into it.
 *     Device memory traffic ~16n bytes: read n, write n, then read n and write n again.
 *   reduce_then_scan: only add up every tile (read n); scan the totals the same way; then scan
 *     every tile again, starting from its carry (read n, write n). ~12n bytes.
 * Every index is a size_t, so n can pass 2^31; the scratch for every level of totals is sized
 * once per call by hier_temp_bytes(n) and handed in by the caller: nothing is allocated here.
 * Tile = BLOCK x ITEMS = 4096: two levels of totals reach past n = 2^31, three past 2^36.
 * The entry points (the variants, hier_temp_bytes and the three launch_* functions, which the
 * per-phase tests in tests/lab_07_phases.c call on their own) are declared in
 * common/course/07_hierarchical.h, the course's side of the lab; those tests also read TILE.
 *
 * Run: make run LAB=07      Test: make test TEST_SRC=labs LAB=07      Grade: make grade
 */
#include "course/07_hierarchical.h"
#include "cuda_check.h"

#include <stdint.h>

#define BLOCK 256 /* threads per block */
#define ITEMS 16  /* consecutive elements per thread */
#define TILE (BLOCK * ITEMS)
const size_t hier_tile = TILE; /* your tile, for the grader (see the lab header) */
#define WARP 32
#define WARPS (BLOCK / WARP)

/* ---- given: shared-memory layout, coalesced copies, block-wide sums -------------------------- */

/* One padding word after every 32 shared words, so that threads reading runs of ITEMS
 * consecutive words (and the coalesced copy) land on 32 different banks. */
__device__ __forceinline__ unsigned padded(unsigned i)
{
    return i + i / WARP;
}

/* Elements of the tile that starts at base (TILE, or fewer for the last tile). */
__device__ __forceinline__ unsigned tile_len(size_t base, size_t n)
{
    return n - base < (size_t)TILE ? (unsigned)(n - base) : (unsigned)TILE;
}

/* Copies len input elements into s (padded), zero past len: consecutive threads on consecutive
 * 16-byte words when the tile is full and the pointer aligned (vec), one int at a time if not. */
__device__ void load_tile(const int *__restrict__ in, unsigned len, bool vec, unsigned *s)
{
    if (vec && len == TILE) {
        const int4 *in4 = reinterpret_cast<const int4 *>(in);
        int4 q[ITEMS / 4];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++) /* all loads in flight before the first use */
            q[j] = in4[j * BLOCK + threadIdx.x];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++) {
            const unsigned i = 4 * (j * BLOCK + threadIdx.x);
            s[padded(i)] = (unsigned)q[j].x;
            s[padded(i + 1)] = (unsigned)q[j].y;
            s[padded(i + 2)] = (unsigned)q[j].z;
            s[padded(i + 3)] = (unsigned)q[j].w;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const unsigned i = j * BLOCK + threadIdx.x;
        s[padded(i)] = i < len ? (unsigned)in[i] : 0u;
    }
}

/* Copies s (padded) back to out[0..len), the same way; never writes past len. */
__device__ void store_tile(int *__restrict__ out, unsigned len, bool vec, const unsigned *s)
{
    if (vec && len == TILE) {
        int4 *out4 = reinterpret_cast<int4 *>(out);
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++) {
            const unsigned i = 4 * (j * BLOCK + threadIdx.x);
            out4[j * BLOCK + threadIdx.x] = make_int4((int)s[padded(i)], (int)s[padded(i + 1)],
                                                      (int)s[padded(i + 2)], (int)s[padded(i + 3)]);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const unsigned i = j * BLOCK + threadIdx.x;
        if (i < len)
            out[i] = (int)s[padded(i)];
    }
}

/* Exclusive scan of one value per thread over the block (Kogge-Stone with warp shuffles, then
 * over the warp totals): returns the sum of x over the threads before this one and the block's
 * sum in *block_total. Every thread must call it (it has barriers). s_warp: WARPS words of shared
 * memory that the calling kernel declares (`__shared__ unsigned s_warp[WARPS];`), one per warp. */
__device__ unsigned block_exclusive_scan(unsigned x, unsigned *s_warp, unsigned *block_total)
{
    const unsigned lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    unsigned inc = x;
#pragma unroll
    for (int d = 1; d < WARP; d *= 2) {
        unsigned left = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= (unsigned)d)
            inc += left;
    }
    if (lane == WARP - 1)
        s_warp[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane < WARPS ? s_warp[lane] : 0u;
#pragma unroll
        for (int d = 1; d < WARPS; d *= 2) {
            unsigned left = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= (unsigned)d)
                w += left;
        }
        if (lane < WARPS)
            s_warp[lane] = w;
    }
    __syncthreads();
    *block_total = s_warp[WARPS - 1];
    return (warp > 0 ? s_warp[warp - 1] : 0u) + inc - x;
}

/* Sum of one value per thread over the block, returned to every thread. Every thread must call
 * it (it has a barrier). s_warp: WARPS words of shared memory that the calling kernel declares. */
__device__ unsigned block_sum(unsigned x, unsigned *s_warp)
{
#pragma unroll
    for (int d = WARP / 2; d > 0; d /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, d);
    if (threadIdx.x % WARP == 0)
        s_warp[threadIdx.x / WARP] = x;
    __syncthreads();
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; w++)
        total += s_warp[w];
    return total;
}

/* Rounds a byte count up to 256, so that every level's arrays keep cudaMalloc's alignment. */
static inline size_t align256(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* 1 when both pointers allow 16-byte vector accesses. */
static inline bool aligned16(const void *a, const void *b)
{
    return (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
}

/* ---- kernels --------------------------------------------------------------------------------- */

/* Block b scans tile b of in into out (inclusive). When tile_sums is not NULL it writes the
 * tile's total to tile_sums[b]; when carries is not NULL it starts tile b (b > 0) from
 * carries[b - 1], the inclusive scan of the totals of tiles 0..b-1. */
__global__ void __launch_bounds__(BLOCK)
    tile_scan_kernel(const int *__restrict__ in, int *__restrict__ out, int *__restrict__ tile_sums,
                     const int *__restrict__ carries, size_t n, bool vec)
{
    __shared__ unsigned s_tile[TILE + TILE / WARP];
    const size_t base = (size_t)blockIdx.x * TILE;
    const unsigned len = tile_len(base, n);
    const unsigned first = threadIdx.x * ITEMS;

    load_tile(in + base, len, vec, s_tile);
    __syncthreads();

    /* Scan this thread's run in registers; the carry goes into the first element of the tile. */
    __shared__ unsigned s_warp[WARPS];
    unsigned v[ITEMS];
    unsigned run = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        run += s_tile[padded(first + k)];
        v[k] = run;
    }
    unsigned total;
    unsigned before = block_exclusive_scan(run, s_warp, &total);
    if (carries && blockIdx.x > 0)
        before += (unsigned)carries[blockIdx.x - 1];
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        s_tile[padded(first + k)] = v[k] + before;
    if (tile_sums && threadIdx.x == 0)
        tile_sums[blockIdx.x] = (int)total;
    __syncthreads();

    store_tile(out + base, len, vec, s_tile);
}

/* Block b writes the total of tile b of in to tile_sums[b]; nothing else. */
__global__ void __launch_bounds__(BLOCK)
    tile_reduce_kernel(const int *__restrict__ in, int *__restrict__ tile_sums, size_t n, bool vec)
{
    const size_t base = (size_t)blockIdx.x * TILE;
    const unsigned len = tile_len(base, n);
    __shared__ unsigned s_warp[WARPS];
    unsigned sum = 0;

    if (vec && len == TILE) {
        const int4 *in4 = reinterpret_cast<const int4 *>(in + base);
        int4 q[ITEMS / 4];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++)
            q[j] = in4[j * BLOCK + threadIdx.x];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++)
            sum += (unsigned)q[j].x + (unsigned)q[j].y + (unsigned)q[j].z + (unsigned)q[j].w;
    } else {
        for (unsigned i = threadIdx.x; i < len; i += BLOCK)
            sum += (unsigned)in[base + i];
    }
    const unsigned total = block_sum(sum, s_warp);
    if (threadIdx.x == 0)
        tile_sums[blockIdx.x] = (int)total;
}

/* Block b adds carries[b] (the inclusive scan of the totals of tiles 0..b) to every element of
 * tile b + 1 of out: tile 0 needs nothing. */
__global__ void __launch_bounds__(BLOCK)
    add_back_kernel(int *__restrict__ out, const int *__restrict__ carries, size_t n, bool vec)
{
    const size_t base = ((size_t)blockIdx.x + 1) * TILE;
    const unsigned len = tile_len(base, n);
    const unsigned carry = (unsigned)carries[blockIdx.x]; /* the same word for the whole block */

    if (vec && len == TILE) {
        int4 *out4 = reinterpret_cast<int4 *>(out + base);
        int4 q[ITEMS / 4];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++)
            q[j] = out4[j * BLOCK + threadIdx.x];
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++) {
            q[j].x = (int)((unsigned)q[j].x + carry);
            q[j].y = (int)((unsigned)q[j].y + carry);
            q[j].z = (int)((unsigned)q[j].z + carry);
            q[j].w = (int)((unsigned)q[j].w + carry);
            out4[j * BLOCK + threadIdx.x] = q[j];
        }
    } else {
        for (unsigned i = threadIdx.x; i < len; i += BLOCK)
            out[base + i] = (int)((unsigned)out[base + i] + carry);
    }
}

/* ---- launchers ------------------------------------------------------------------------------- */

/* Scans every tile of d_in[0..n) into d_out (n > 0), as tile_scan_kernel says. */
lab_result launch_tile_scan(const int *d_in, int *d_out, int *d_tile_sums, const int *d_carries,
                            size_t n)
{
    const size_t tiles = CEIL_DIV(n, (size_t)TILE);
    tile_scan_kernel<<<(unsigned)tiles, BLOCK>>>(d_in, d_out, d_tile_sums, d_carries, n,
                                                 aligned16(d_in, d_out));
    LAUNCH_CHECK();
    return LAB_OK;
}

/* Writes the total of every tile of d_in[0..n) to d_tile_sums (n > 0). */
lab_result launch_tile_reduce(const int *d_in, int *d_tile_sums, size_t n)
{
    const size_t tiles = CEIL_DIV(n, (size_t)TILE);
    tile_reduce_kernel<<<(unsigned)tiles, BLOCK>>>(d_in, d_tile_sums, n, aligned16(d_in, d_in));
    LAUNCH_CHECK();
    return LAB_OK;
}

/* Adds d_carries[t - 1] to every element of tile t of d_out[0..n), for every tile t >= 1. */
lab_result launch_add_back(int *d_out, const int *d_carries, size_t n)
{
    const size_t tiles = CEIL_DIV(n, (size_t)TILE);
    if (tiles < 2)
        return LAB_OK;
    add_back_kernel<<<(unsigned)(tiles - 1), BLOCK>>>(d_out, d_carries, n, aligned16(d_out, d_out));
    LAUNCH_CHECK();
    return LAB_OK;
}

/* ---- the hierarchy --------------------------------------------------------------------------- */

/* Bytes of scratch for a scan of n elements: at every level with more than one tile, the tile
 * totals and their scan (two arrays of ceil(n / TILE) ints), then the same for those totals. */
size_t hier_temp_bytes(size_t n)
{
    size_t bytes = 0;
    while (n > TILE) {
        const size_t tiles = CEIL_DIV(n, (size_t)TILE);
        bytes += 2 * align256(tiles * sizeof(int));
        n = tiles;
    }
    return bytes;
}

/* Inclusive scan of d_in[0..n) into d_out: tiles, then the totals (recursively), then add back.
 * d_temp holds hier_temp_bytes(n) bytes: this level's totals and their scan first, then the
 * scratch of the level below. */
lab_result scan_then_propagate(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    if (n <= TILE)
        return launch_tile_scan(d_in, d_out, NULL, NULL, n);

    const size_t tiles = CEIL_DIV(n, (size_t)TILE);
    const size_t level = align256(tiles * sizeof(int));
    int *d_sums = (int *)d_temp;
    int *d_carries = (int *)((char *)d_temp + level);
    void *d_below = (char *)d_temp + 2 * level;

    lab_result r = launch_tile_scan(d_in, d_out, d_sums, NULL, n);
    if (r == LAB_OK)
        r = scan_then_propagate(d_sums, d_carries, tiles, d_below);
    if (r == LAB_OK)
        r = launch_add_back(d_out, d_carries, n);
    return r;
}

/* The same result in one pass fewer over the output: add the tiles up, scan the totals, then
 * scan every tile once more, starting from its carry. Same scratch layout as above. */
lab_result reduce_then_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    if (n <= TILE)
        return launch_tile_scan(d_in, d_out, NULL, NULL, n);

    const size_t tiles = CEIL_DIV(n, (size_t)TILE);
    const size_t level = align256(tiles * sizeof(int));
    int *d_sums = (int *)d_temp;
    int *d_carries = (int *)((char *)d_temp + level);
    void *d_below = (char *)d_temp + 2 * level;

    lab_result r = launch_tile_reduce(d_in, d_sums, n);
    if (r == LAB_OK)
        r = reduce_then_scan(d_sums, d_carries, tiles, d_below);
    if (r == LAB_OK)
        r = launch_tile_scan(d_in, d_out, NULL, d_carries, n);
    return r;
}
