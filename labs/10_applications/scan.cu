/* 10_applications — scan at work: stream compaction, radix sort, CSR row offsets.
 *
 * Lab 10 writes no scan: every application calls apps_scan (common/course/10_applications.h),
 * which is the student's own lab 08 scan (lab 07's while 08 is not written). What each one scans:
 *   compact     the number of kept elements of every tile (n / 2048 counts), then each tile
 *               writes its kept elements from its count's exclusive prefix;
 *   radix_sort  per pass of 4 bits, the 16 digit counts of every tile laid out digit-major
 *               (hist[d * tiles + t]), so that the scan gives each (digit, tile) its first
 *               output position: all smaller digits of every tile, then digit d of earlier tiles;
 *   split_sort  per bit, a flag per element (1 when the bit is 0): the scan gives each 0 its
 *               position, and each 1 follows from its index and the number of 0s before it;
 *   csr         the number of nonzeros of every row; offsets[r + 1] is its inclusive scan.
 * apps_scan is inclusive; where an exclusive prefix is needed, it is the inclusive one minus the
 * element itself, which the kernel that reads it knows (no second scan, no shifted copy).
 *
 * The tile kernels (256 threads, 8 elements each) read their tile coalesced in 8 rounds: round j
 * of warp w holds elements j*256 + w*32 + lane. Ranks come from warp votes: __ballot_sync of a
 * flag gives the warp's 32 flags at once, and popc(flags & lanes below me) is my rank among them;
 * for a 4-bit digit, 4 ballots (one per bit) give the mask of the lanes with my digit. The order
 * (round, warp, lane) is the input order, so every rank is stable.
 *
 * What you write (TODO(student)): the kernels that count and rank (compaction, the radix pass's
 * histogram and its ranks, the split's flags and destinations, the CSR counts) and the entry
 * points that call them around apps_scan. Given: the scratch layout, block_exclusive_sum, the
 * digit helpers and the loops over the passes. Finish lab 08 (or 07) first: every variant here
 * runs on it.
 *
 * Run: make run LAB=10 ARGS='--variant compact'   Test: make test TEST_SRC=labs LAB=10
 */
#include "course/10_applications.h"
#include "cuda_check.h"

#include <stdint.h>

#define WARPS (APPS_THREADS / 32) /* 8 warps per block */

/* ---- scratch --------------------------------------------------------------------------------
 * Every region starts on a 256-byte boundary; apps_scan's scratch comes last. */

static size_t align256(size_t b)
{
    return (b + 255) & ~(size_t)255;
}

static size_t tiles_of(size_t n)
{
    return CEIL_DIV(n, (size_t)APPS_TILE);
}

/* compact: counts[tiles], their scan[tiles], apps_scan's scratch */
size_t apps_compact_temp_bytes(size_t n)
{
    const size_t t = tiles_of(n);
    return 2 * align256(t * sizeof(int)) + apps_scan_temp_bytes(t);
}

/* sorts: the ping-pong keys[n]; radix: hist[16 tiles] and its scan; split: flags[n] and their
 * scan; apps_scan's scratch for the longer of the two scans (n). */
size_t apps_sort_temp_bytes(size_t n)
{
    const size_t h = APPS_RADIX * tiles_of(n);
    const size_t m = n > h ? n : h;
    return align256(n * sizeof(int)) + 2 * align256(m * sizeof(int)) + apps_scan_temp_bytes(m);
}

/* csr (n = n_rows + 1): counts[n_rows], apps_scan's scratch */
size_t apps_csr_temp_bytes(size_t n)
{
    return align256(n * sizeof(int)) + apps_scan_temp_bytes(n);
}

/* ---- block helpers ----------------------------------------------------------------------------
 */

__device__ __forceinline__ unsigned lane_id()
{
    return threadIdx.x & 31u;
}

__device__ __forceinline__ unsigned lanes_below()
{
    return (1u << lane_id()) - 1u; /* lane 0: 0 */
}

/* Exclusive sum of v across the block's 256 threads, in thread order; *total gets the block's
 * sum. s: WARPS + 1 words of shared memory. Every thread must call it. */
__device__ unsigned block_exclusive_sum(unsigned v, unsigned *s, unsigned *total)
{
    const unsigned lane = lane_id(), warp = threadIdx.x / 32;
    unsigned x = v;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        const unsigned y = __shfl_up_sync(0xFFFFFFFFu, x, d);
        if (lane >= d)
            x += y;
    }
    if (lane == 31)
        s[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned w = lane < WARPS ? s[lane] : 0u;
#pragma unroll
        for (unsigned d = 1; d < WARPS; d *= 2) {
            const unsigned y = __shfl_up_sync(0xFFFFFFFFu, w, d);
            if (lane >= d)
                w += y;
        }
        if (lane < WARPS)
            s[lane] = w; /* inclusive over warps */
    }
    __syncthreads();
    const unsigned before = warp > 0 ? s[warp - 1] : 0u;
    *total = s[WARPS - 1];
    __syncthreads(); /* s is free again */
    return before + x - v;
}

/* ---- stream compaction ------------------------------------------------------------------------
 */

/* counts[t] = kept elements of tile t. */
__global__ void compact_count_kernel(const int *in, size_t n, int *counts)
{
    // TODO(student): counts[blockIdx.x] = the number of kept elements (APPS_KEEP) of this block's
    // tile: elements base .. base + APPS_TILE - 1 that are below n, read in APPS_ITEMS rounds of
    // APPS_THREADS consecutive elements (coalesced). block_exclusive_sum gives the block's total.
    (void)in, (void)n, (void)counts;
}

/* Writes tile t's kept elements from position scanned[t] - counts[t] (the kept elements of the
 * tiles before it), in order; the last tile writes the total count. */
__global__ void compact_scatter_kernel(const int *in, int *out, size_t n, const int *counts,
                                       const int *scanned, size_t *d_count)
{
    // TODO(student): write the tile's kept elements, in input order, to out from
    // start = scanned[tile] - counts[tile] (apps_scan is inclusive: subtract your own count):
    // the k-th kept element of the tile (counting in input order from 0) goes to out[start + k].
    // The tile is read as in compact_count_kernel: element j*APPS_THREADS + threadIdx.x is round
    // j of its warp, so k counts the kept elements of every earlier (round, warp) and of the
    // lanes below in this one. Reads coalesced; nothing but out[start .. start + counts[tile])
    // written. The last block also writes *d_count (the total kept, scanned[last tile]).
    (void)in, (void)out, (void)n, (void)counts, (void)scanned, (void)d_count;
}

lab_result apps_compact(const int *d_in, int *d_out, size_t n, size_t *d_count, void *d_temp)
{
    // TODO(student): n == 0: *d_count = 0 (cudaMemsetAsync) and return. Otherwise count every
    // tile (compact_count_kernel), scan the counts (apps_scan: its return value is yours to
    // return when it is not LAB_OK), then scatter (compact_scatter_kernel). The scratch layout:
    // counts, scanned, then apps_scan's scratch, each from a 256-byte boundary
    // (apps_compact_temp_bytes).
    (void)d_in, (void)d_out, (void)n, (void)d_count, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}

/* ---- radix sort, 4 bits per pass -------------------------------------------------------------
 * Tiles of APPS_TILE keys, APPS_ITEMS per thread. More keys per thread would shrink the histogram
 * and spread the per-tile work, but cost registers and occupancy: on the H100 at n = 2^26 the
 * sort took 3.65 ms with 8, 4.39 ms with 12 and 5.55 ms with 16 (with a ballot histogram, in an
 * earlier sweep; the 3.56 ms below is the same configuration in another run). */
#define RANK_PER_THREAD (APPS_RADIX * APPS_ITEMS * WARPS / APPS_THREADS) /* 4 counts to scan */

__device__ __forceinline__ unsigned digit_of(unsigned key, int shift)
{
    return (key >> shift) & (APPS_RADIX - 1);
}

/* hist[d * tiles + t] = the keys of tile t whose digit is d: each warp counts its keys in 16
 * counters of its own in shared memory (atomicAdd: lanes of one digit collide, but only on 16
 * addresses of one warp), then 16 threads add up the warps'. Counting with 4 ballots per round
 * instead (as the scatter kernel ranks) keeps the vote unit busy: on the H100 at n = 2^26 the sort
 * then takes 3.56 ms instead of 3.30. */
__global__ void radix_hist_kernel(const int *keys, size_t n, int shift, int *hist)
{
    // TODO(student): hist[d * gridDim.x + blockIdx.x] = the keys of this tile whose digit
    // (digit_of(key, shift)) is d, for d = 0 .. APPS_RADIX - 1, stored digit-major. The tile:
    // elements base .. base + APPS_TILE - 1 below n, read in APPS_ITEMS coalesced rounds. Every
    // one of the 16 counts is written, zeros included, and nothing else. The counts must not
    // depend on timing (the order of increments may). Budget: one read of the tile.
    (void)keys, (void)n, (void)shift, (void)hist;
}

/* (digit, round, warp) -> its slot: 64 slots per digit and one word of padding, so that the 16
 * lanes writing one digit each hit 16 different banks. */
#define RANK_SLOTS (APPS_RADIX * (APPS_ITEMS * WARPS + 1))
__device__ __forceinline__ unsigned rank_slot(unsigned flat) /* flat = (d * 8 + j) * 8 + w */
{
    return flat + flat / (APPS_ITEMS * WARPS);
}

/* One stable pass: tile t's keys sorted by digit in shared memory, then written out, each digit's
 * run from its place in the scanned histogram. */
__global__ void radix_scatter_kernel(const int *keys, int *out, size_t n, int shift,
                                     const int *hist, const int *scanned)
{
    /* s_rank[rank_slot(d, j, w)]: the keys of digit d in round j of warp w; then, scanned in
     * that (digit, round, warp) order, the tile position of the first of them: the tile sorted
     * stably by digit */
    __shared__ unsigned s_rank[RANK_SLOTS];
    __shared__ unsigned s_keys[APPS_TILE];
    __shared__ long long s_dest[APPS_RADIX]; /* out index minus tile position, per digit */
    __shared__ unsigned s[WARPS + 1];
    const unsigned warp = threadIdx.x / 32, lane = lane_id();
    const size_t base = (size_t)blockIdx.x * APPS_TILE;
    const unsigned len = n - base < (size_t)APPS_TILE ? (unsigned)(n - base) : APPS_TILE;
    unsigned key[APPS_ITEMS], below[APPS_ITEMS];
    /* every load issued before the first vote, so that they are all in flight at once; the
     * histogram entries too (threads < 16), read only after the block's scan */
    long long excl = 0;
    if (threadIdx.x < APPS_RADIX) {
        const size_t h = (size_t)threadIdx.x * gridDim.x + blockIdx.x;
        // TODO(student): excl = where the tile's first key of digit threadIdx.x goes in out:
        // the exclusive prefix of the scanned histogram at h (scanned[h] minus hist[h]).
        (void)h, (void)scanned, (void)hist;
    }
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const unsigned i = j * APPS_THREADS + threadIdx.x;
        key[j] = i < len ? (unsigned)keys[base + i] : 0u;
    }
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const bool valid = j * APPS_THREADS + threadIdx.x < len;
        const unsigned d = digit_of(key[j], shift);
        /* four ballots answer both "which lanes share my digit" and "how many lanes hold digit
         * l" (lane l < 16 asks for its own number) */
        unsigned peers = __ballot_sync(0xFFFFFFFFu, valid), count_l = peers;
#pragma unroll
        for (int b = 0; b < APPS_RADIX_BITS; b++) {
            const unsigned ones = __ballot_sync(0xFFFFFFFFu, (d >> b) & 1u);
            peers &= ((d >> b) & 1u) ? ones : ~ones;
            count_l &= ((lane >> b) & 1u) ? ones : ~ones;
        }
        // TODO(student): below[j] = this key's rank among the keys of its digit in this round
        // of the warp (the lanes of `peers` below mine). And lane l < APPS_RADIX stores the count
        // of digit l in this round of this warp (count_l's lanes) in s_rank, in the entry of
        // (digit l, round j, this warp) in the (digit, round, warp) order that the scan below
        // reads, through rank_slot().
        below[j] = 0;
        (void)peers, (void)count_l;
    }
    __syncthreads();
    /* exclusive scan of the counts: RANK_PER_THREAD consecutive per thread */
    unsigned c[RANK_PER_THREAD], sum = 0, total;
#pragma unroll
    for (int k = 0; k < RANK_PER_THREAD; k++) {
        c[k] = s_rank[rank_slot(threadIdx.x * RANK_PER_THREAD + k)];
        sum += c[k];
    }
    unsigned run = block_exclusive_sum(sum, s, &total);
#pragma unroll
    for (int k = 0; k < RANK_PER_THREAD; k++) {
        s_rank[rank_slot(threadIdx.x * RANK_PER_THREAD + k)] = run;
        run += c[k];
    }
    __syncthreads();
    if (threadIdx.x < APPS_RADIX) { /* digit d's first key: excl in out, `first` in the tile */
        const unsigned first = s_rank[rank_slot(threadIdx.x * APPS_ITEMS * WARPS)];
        s_dest[threadIdx.x] = excl - (long long)first;
    }
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++)
        if (j * APPS_THREADS + threadIdx.x < len)
            s_keys[s_rank[rank_slot((digit_of(key[j], shift) * APPS_ITEMS + j) * WARPS + warp)] +
                   below[j]] = key[j];
    __syncthreads();
    /* the tile in digit order: consecutive threads write consecutive places of a digit's run */
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const unsigned i = j * APPS_THREADS + threadIdx.x;
        if (i < len) {
            const unsigned k = s_keys[i];
            out[s_dest[digit_of(k, shift)] + (long long)i] = (int)k;
        }
    }
}

/* Scratch of the sorts: the second key buffer, two arrays of m ints, apps_scan's. */
struct SortTemp {
    int *keys, *a, *b;
    void *scan;
};

static SortTemp sort_temp(void *t, size_t n)
{
    const size_t h = APPS_RADIX * tiles_of(n), m = n > h ? n : h;
    SortTemp s;
    s.keys = (int *)t;
    s.a = (int *)((char *)t + align256(n * sizeof(int)));
    s.b = (int *)((char *)s.a + align256(m * sizeof(int)));
    s.scan = (char *)s.b + align256(m * sizeof(int));
    return s;
}

static lab_result radix_pass(const int *src, int *dst, size_t n, int shift, const SortTemp &t)
{
    const size_t tiles = tiles_of(n);
    radix_hist_kernel<<<(unsigned)tiles, APPS_THREADS>>>(src, n, shift, t.a);
    LAUNCH_CHECK();
    const lab_result r = apps_scan(t.a, t.b, APPS_RADIX * tiles, t.scan);
    if (r != LAB_OK)
        return r;
    radix_scatter_kernel<<<(unsigned)tiles, APPS_THREADS>>>(src, dst, n, shift, t.a, t.b);
    LAUNCH_CHECK();
    return LAB_OK;
}

lab_result apps_radix_pass(const int *d_in, int *d_out, size_t n, int shift, void *d_temp)
{
    // TODO(student): once radix_hist_kernel and radix_scatter_kernel are written: one pass on
    // the digit at shift, d_in to d_out, through the given pass loop and the scratch layout
    // (sort_temp). n == 0: LAB_OK, nothing launched.
    (void)d_in, (void)d_out, (void)n, (void)shift, (void)d_temp, (void)radix_pass, (void)sort_temp;
    return LAB_NOT_IMPLEMENTED;
}

/* 8 passes, lowest digit first; the keys go in -> temp -> out -> temp ... -> out (an even number
 * of passes ends in out). */
lab_result apps_radix_sort(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    // TODO(student): n == 0: return LAB_OK. Then 8 passes (radix_pass), shift 0, 4, ..., 28:
    // the keys go d_in -> t.keys -> d_out -> t.keys -> ... (an even number of passes ends in
    // d_out); return the first result that is not LAB_OK.
    (void)d_in, (void)d_out, (void)n, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}

/* ---- radix sort, 1 bit per pass (the split) ----------------------------------------------------
 */

/* zero[i] = 1 when bit `bit` of key i is 0. */
__global__ void split_flags_kernel(const int *keys, size_t n, int bit, int *zero)
{
    // TODO(student): zero[i] = 1 when bit `bit` of key i (as unsigned) is 0, else 0; i < n only.
    (void)keys, (void)n, (void)bit, (void)zero;
}

/* The 0s go to zeros_up_to_i - 1, the 1s after all the 0s: zeros + (ones before i). */
__global__ void split_scatter_kernel(const int *keys, int *out, size_t n, const int *zero,
                                     const int *scanned)
{
    // TODO(student): scanned[i] is the number of 0-bit keys among keys[0..i] (inclusive). A 0 goes
    // to scanned[i] - 1; a 1 goes after all the 0s (scanned[n - 1] of them), at its rank among the
    // 1s: the number of 1s before i. i < n only.
    (void)keys, (void)out, (void)n, (void)zero, (void)scanned;
}

static lab_result split_pass(const int *src, int *dst, size_t n, int bit, const SortTemp &t)
{
    const unsigned blocks = (unsigned)CEIL_DIV(n, (size_t)APPS_THREADS);
    split_flags_kernel<<<blocks, APPS_THREADS>>>(src, n, bit, t.a);
    LAUNCH_CHECK();
    const lab_result r = apps_scan(t.a, t.b, n, t.scan);
    if (r != LAB_OK)
        return r;
    split_scatter_kernel<<<blocks, APPS_THREADS>>>(src, dst, n, t.a, t.b);
    LAUNCH_CHECK();
    return LAB_OK;
}

lab_result apps_split_pass(const int *d_in, int *d_out, size_t n, int bit, void *d_temp)
{
    // TODO(student): once the split kernels are written: one split on bit `bit`, d_in to d_out,
    // through the given pass loop and the scratch layout (sort_temp). n == 0: LAB_OK, nothing
    // launched.
    (void)d_in, (void)d_out, (void)n, (void)bit, (void)d_temp, (void)split_pass;
    return LAB_NOT_IMPLEMENTED;
}

lab_result apps_split_sort(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    // TODO(student): n == 0: return LAB_OK. Then 32 passes (split_pass), bit 0 to 31, the keys
    // going d_in -> t.keys -> d_out -> t.keys -> ... (32 passes end in d_out).
    (void)d_in, (void)d_out, (void)n, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}

/* ---- CSR row offsets ------------------------------------------------------------------------- */

/* counts[row]++ for every nonzero. Runs of equal rows in a warp (sorted input, one row) add once:
 * the first lane of each run adds the run's length. */
__global__ void csr_count_kernel(const int *rows, size_t n, int *counts)
{
    // TODO(student): counts[rows[i]] += 1 for every i < n. Rows repeat, so threads update the
    // same counter at once: no update may be lost. Then, once it is right: the lanes of a warp
    // often hold the same row (sorted input, one big row); make such a warp cost one update per
    // run of equal rows instead of one per lane (the handout, What to write: csr_count_kernel).
    (void)rows, (void)n, (void)counts;
}

lab_result apps_csr_offsets(const int *d_rows, int *d_offsets, size_t n, size_t n_rows,
                            void *d_temp)
{
    // TODO(student): offsets[0] = 0 and offsets[r + 1] = the nonzeros in rows 0 .. r: zero the
    // counts (cudaMemsetAsync: n_rows ints at the start of d_temp), count (csr_count_kernel),
    // then apps_scan the counts into d_offsets + 1 with the scratch after them
    // (apps_csr_temp_bytes). n == 0: every offset is 0, and nothing is launched.
    (void)d_rows, (void)d_offsets, (void)n, (void)n_rows, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}
