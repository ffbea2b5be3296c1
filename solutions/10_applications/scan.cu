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
    __shared__ unsigned s[WARPS + 1];
    const size_t base = (size_t)blockIdx.x * APPS_TILE;
    unsigned kept = 0;
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const size_t i = base + j * APPS_THREADS + threadIdx.x;
        kept += i < n && APPS_KEEP(in[i]);
    }
    unsigned total;
    block_exclusive_sum(kept, s, &total);
    if (threadIdx.x == 0)
        counts[blockIdx.x] = (int)total;
}

/* Writes tile t's kept elements from position scanned[t] - counts[t] (the kept elements of the
 * tiles before it), in order; the last tile writes the total count. */
__global__ void compact_scatter_kernel(const int *in, int *out, size_t n, const int *counts,
                                       const int *scanned, size_t *d_count)
{
    __shared__ unsigned s_round[APPS_ITEMS * WARPS]; /* kept per (round, warp), then its prefix */
    __shared__ unsigned s[WARPS + 1];
    const unsigned warp = threadIdx.x / 32, lane = lane_id();
    const size_t base = (size_t)blockIdx.x * APPS_TILE;
    int x[APPS_ITEMS];
    unsigned votes[APPS_ITEMS];
    /* the loads first, all in flight at once; the tile's start too, needed only at the end */
    const size_t start = (unsigned)scanned[blockIdx.x] - (unsigned)counts[blockIdx.x];
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const size_t i = base + j * APPS_THREADS + threadIdx.x;
        x[j] = i < n ? in[i] : 0;
    }
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) {
        const size_t i = base + j * APPS_THREADS + threadIdx.x;
        votes[j] = __ballot_sync(0xFFFFFFFFu, i < n && APPS_KEEP(x[j]));
        if (lane == 0)
            s_round[j * WARPS + warp] = __popc(votes[j]);
    }
    __syncthreads();
    /* the 64 (round, warp) counts in input order -> their exclusive prefix, 64 threads */
    unsigned total;
    const unsigned c = threadIdx.x < APPS_ITEMS * WARPS ? s_round[threadIdx.x] : 0u;
    const unsigned first = block_exclusive_sum(c, s, &total);
    if (threadIdx.x < APPS_ITEMS * WARPS)
        s_round[threadIdx.x] = first;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++)
        if ((votes[j] >> lane) & 1u)
            out[start + s_round[j * WARPS + warp] + __popc(votes[j] & lanes_below())] = x[j];
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0)
        *d_count = (unsigned)scanned[blockIdx.x];
}

lab_result apps_compact(const int *d_in, int *d_out, size_t n, size_t *d_count, void *d_temp)
{
    if (n == 0) {
        CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(size_t), 0));
        return LAB_OK;
    }
    const size_t tiles = tiles_of(n);
    int *counts = (int *)d_temp;
    int *scanned = (int *)((char *)d_temp + align256(tiles * sizeof(int)));
    void *scan_temp = (char *)scanned + align256(tiles * sizeof(int));
    compact_count_kernel<<<(unsigned)tiles, APPS_THREADS>>>(d_in, n, counts);
    LAUNCH_CHECK();
    const lab_result r = apps_scan(counts, scanned, tiles, scan_temp);
    if (r != LAB_OK)
        return r;
    compact_scatter_kernel<<<(unsigned)tiles, APPS_THREADS>>>(d_in, d_out, n, counts, scanned,
                                                              d_count);
    LAUNCH_CHECK();
    return LAB_OK;
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
    __shared__ unsigned s_count[WARPS][APPS_RADIX];
    const unsigned warp = threadIdx.x / 32, lane = lane_id();
    const size_t base = (size_t)blockIdx.x * APPS_TILE;
    unsigned key[APPS_ITEMS];
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++) { /* the loads first: all in flight at once */
        const size_t i = base + j * APPS_THREADS + threadIdx.x;
        key[j] = i < n ? (unsigned)keys[i] : 0u;
    }
    if (lane < APPS_RADIX)
        s_count[warp][lane] = 0;
    __syncwarp();
#pragma unroll
    for (int j = 0; j < APPS_ITEMS; j++)
        if (base + j * APPS_THREADS + threadIdx.x < n)
            atomicAdd(&s_count[warp][digit_of(key[j], shift)], 1u);
    __syncthreads();
    if (threadIdx.x < APPS_RADIX) {
        unsigned sum = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++)
            sum += s_count[w][threadIdx.x];
        hist[(size_t)threadIdx.x * gridDim.x + blockIdx.x] = (int)sum;
    }
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
        excl = (long long)((unsigned)scanned[h] - (unsigned)hist[h]);
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
        below[j] = __popc(peers & lanes_below());
        if (lane < APPS_RADIX)
            s_rank[rank_slot((lane * APPS_ITEMS + j) * WARPS + warp)] = __popc(count_l);
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
    if (n == 0)
        return LAB_OK;
    return radix_pass(d_in, d_out, n, shift, sort_temp(d_temp, n));
}

/* 8 passes, lowest digit first; the keys go in -> temp -> out -> temp ... -> out (an even number
 * of passes ends in out). */
lab_result apps_radix_sort(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    const SortTemp t = sort_temp(d_temp, n);
    const int *src = d_in;
    for (int shift = 0; shift < 32; shift += APPS_RADIX_BITS) {
        int *dst = (shift / APPS_RADIX_BITS) % 2 == 0 ? t.keys : d_out;
        const lab_result r = radix_pass(src, dst, n, shift, t);
        if (r != LAB_OK)
            return r;
        src = dst;
    }
    return LAB_OK;
}

/* ---- radix sort, 1 bit per pass (the split) ----------------------------------------------------
 */

/* zero[i] = 1 when bit `bit` of key i is 0. */
__global__ void split_flags_kernel(const int *keys, size_t n, int bit, int *zero)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        zero[i] = (((unsigned)keys[i] >> bit) & 1u) == 0;
}

/* The 0s go to zeros_up_to_i - 1, the 1s after all the 0s: zeros + (ones before i). */
__global__ void split_scatter_kernel(const int *keys, int *out, size_t n, const int *zero,
                                     const int *scanned)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const size_t zeros = (unsigned)scanned[n - 1], upto = (unsigned)scanned[i];
    const size_t dest = zero[i] ? upto - 1 : zeros + (i - upto);
    out[dest] = keys[i];
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
    if (n == 0)
        return LAB_OK;
    return split_pass(d_in, d_out, n, bit, sort_temp(d_temp, n));
}

lab_result apps_split_sort(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    const SortTemp t = sort_temp(d_temp, n);
    const int *src = d_in;
    for (int bit = 0; bit < 32; bit++) {
        int *dst = bit % 2 == 0 ? t.keys : d_out;
        const lab_result r = split_pass(src, dst, n, bit, t);
        if (r != LAB_OK)
            return r;
        src = dst;
    }
    return LAB_OK;
}

/* ---- CSR row offsets ------------------------------------------------------------------------- */

/* counts[row]++ for every nonzero. Runs of equal rows in a warp (sorted input, one row) add once:
 * the first lane of each run adds the run's length. */
__global__ void csr_count_kernel(const int *rows, size_t n, int *counts)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = lane_id();
    const bool valid = i < n;
    const int row = valid ? rows[i] : -1;
    const int left = __shfl_up_sync(0xFFFFFFFFu, row, 1);
    const bool head = valid && (lane == 0 || left != row);
    const unsigned heads = __ballot_sync(0xFFFFFFFFu, head) | ~__ballot_sync(0xFFFFFFFFu, valid);
    if (head) {
        const unsigned after = heads & ~((2u << lane) - 1u); /* heads (or ends) above my lane */
        const unsigned end = after ? (unsigned)__ffs((int)after) - 1u : 32u;
        atomicAdd(&counts[row], (int)(end - lane));
    }
}

lab_result apps_csr_offsets(const int *d_rows, int *d_offsets, size_t n, size_t n_rows,
                            void *d_temp)
{
    if (n == 0) { /* every row empty */
        CUDA_CHECK(cudaMemsetAsync(d_offsets, 0, (n_rows + 1) * sizeof(int), 0));
        return LAB_OK;
    }
    CUDA_CHECK(cudaMemsetAsync(d_offsets, 0, sizeof(int), 0)); /* offsets[0] */
    int *counts = (int *)d_temp;
    void *scan_temp = (char *)d_temp + align256((n_rows + 1) * sizeof(int));
    CUDA_CHECK(cudaMemsetAsync(counts, 0, n_rows * sizeof(int), 0));
    csr_count_kernel<<<(unsigned)CEIL_DIV(n, (size_t)APPS_THREADS), APPS_THREADS>>>(d_rows, n,
                                                                                    counts);
    LAUNCH_CHECK();
    return apps_scan(counts, d_offsets + 1, n_rows, scan_temp);
}
