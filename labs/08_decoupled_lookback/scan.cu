/* 08_decoupled_lookback — a single-pass scan: each tile learns its carry from its predecessors'
 * published sums instead of from a second kernel.
 *
 * What changes from 07: 07 reads the input twice (once to sum the tiles, once to scan them) and
 * launches several kernels. Here one kernel reads each element once and writes it once, about
 * 8n bytes, so it can run close to the speed of a plain copy. Each tile publishes a 64-bit
 * descriptor {status, epoch, value}: first its own total (status AGGREGATE), later its inclusive
 * prefix (status PREFIX). A tile finds its carry by looking back over its predecessors, a warp
 * reading a window of 32 descriptors at once, adding aggregates until it meets a prefix.
 * Tiles are numbered by an atomic ticket, not by blockIdx, so a tile only ever waits for tiles
 * whose blocks are already running (the forward-progress argument in README.md). One block per
 * tile by default; LB_PERSISTENT=1 builds a grid the size of the GPU whose blocks loop over
 * tiles (no faster on the H100, and slower with the ticket taken early, LB_PREFETCH 1 or 2:
 * PERFORMANCE.md has the measurements and the reason).
 *
 * Scratch (temp_bytes): word 0 = (epoch << 32) | next ticket; words 16.. = one descriptor per
 * tile. Zero-filled once; each call leaves word 0 ready for the next call (ticket 0, epoch + 1),
 * so stale descriptors from the last call are recognised by their epoch and no reset pass runs.
 *
 * Run: make run LAB=08      Test: make test TEST_SRC=labs LAB=08      Grade: make grade
 */
#include "course/08_decoupled_lookback.h"
#include "cuda_check.h"

#include <cuda/atomic>
#include <stdint.h>

/* Tile shape. Each thread owns LB_VECS 16-byte vectors (4 ints each) per tile; a warp's vectors
 * in one round are 32 consecutive int4, so every load and store is a fully coalesced 512 bytes.
 * Overridable (-DLB_THREADS=128 -DLB_VECS=6) for tuning sweeps (tools/dev/tune_lookback.sh);
 * the defaults are the fastest of its sweep on an H100 at n = 2^28. */
#ifndef LB_THREADS
#define LB_THREADS 128
#endif
#ifndef LB_VECS
#define LB_VECS 12
#endif
/* LB_ORDERED=1: release stores and acquire loads on the descriptors instead of relaxed ones (see
 * look_back for why relaxed is enough here; PERFORMANCE.md measures the difference).
 * LB_PERSISTENT=1: a grid the size of the GPU, each block looping over tiles, instead of one
 * block per tile.
 * LB_PREFETCH (persistent grid only): when thread 0 takes the block's next ticket: 0 after the
 * tile (one more barrier, the atomic's latency exposed), 1 when the tile starts, 2 just before
 * the look-back (its latency hidden behind the look-back's).
 * LB_FIRST_DELAY_NS: nanoseconds a look-back waits after publishing the tile's aggregate,
 * before its first read: the nearest predecessors have rarely published yet, and a warp that
 * polls at once only adds load on L2 where the descriptors live.
 * LB_BACKOFF_NS: nanoseconds a look-back waits before reading a window again.
 * Both 0: no wait. The defaults come from the H100 sweep in PERFORMANCE.md (at n = 2^28, 128 x 32
 * without them: 0.96x CUB; with them 1.06-1.07x; the default 128 x 48 with them: 1.08x). */
#ifndef LB_ORDERED
#define LB_ORDERED 0
#endif
#ifndef LB_PERSISTENT
#define LB_PERSISTENT 0
#endif
#ifndef LB_PREFETCH
#define LB_PREFETCH 2
#endif
#ifndef LB_FIRST_DELAY_NS
#define LB_FIRST_DELAY_NS 1600
#endif
#ifndef LB_BACKOFF_NS
#define LB_BACKOFF_NS 800
#endif
#ifndef LB_MIN_BLOCKS /* __launch_bounds__ minimum blocks per multiprocessor; 0: none */
#define LB_MIN_BLOCKS 0
#endif
#if LB_MIN_BLOCKS > 0
#define LB_LAUNCH_BOUNDS __launch_bounds__(LB_THREADS, LB_MIN_BLOCKS)
#else
#define LB_LAUNCH_BOUNDS __launch_bounds__(LB_THREADS)
#endif
#define WARP_SIZE 32
#define VEC_INTS 4                                 /* ints in one int4 */
#define ITEMS_PER_THREAD (LB_VECS * VEC_INTS)      /* 48 */
#define TILE_ITEMS (LB_THREADS * ITEMS_PER_THREAD) /* 6144 elements, 24 KB */
const size_t lookback_tile = TILE_ITEMS; /* your tile, for the grader (see the lab header) */
#define WARPS (LB_THREADS / WARP_SIZE)
#define WARP_ITEMS (WARP_SIZE * ITEMS_PER_THREAD) /* one warp's consecutive share of a tile */
#define ROUND_ITEMS (WARP_SIZE * VEC_INTS)        /* 128: what a warp loads in one round */
#define FULL_MASK 0xffffffffu

/* Descriptor: bits 63..62 status, 61..32 epoch, 31..0 value. One word, so a reader sees the
 * status and the value of the same write, never one without the other. */
typedef unsigned long long u64;
#define ST_INVALID 0u   /* nothing published (or published by an earlier call) */
#define ST_AGGREGATE 1u /* value = this tile's own total */
#define ST_PREFIX 2u    /* value = sum of all elements up to and including this tile */
#define EPOCH_BITS 30
#define EPOCH_MASK ((1u << EPOCH_BITS) - 1u)
#define STATE_WORDS 16 /* word 0 the ticket counter; the rest pads the descriptors to 128 bytes */

typedef cuda::atomic_ref<u64, cuda::thread_scope_device> atomic_u64;
#define PUBLISH_ORDER (LB_ORDERED ? cuda::memory_order_release : cuda::memory_order_relaxed)
#define READ_ORDER (LB_ORDERED ? cuda::memory_order_acquire : cuda::memory_order_relaxed)

__device__ __forceinline__ u64 pack_descriptor(unsigned status, unsigned epoch, unsigned value)
{
    return ((u64)status << 62) | ((u64)(epoch & EPOCH_MASK) << 32) | (u64)value;
}

/* ---- building blocks ------------------------------------------------------- */

/* Thread 0 only: takes the next ticket from the counter and returns it. Its low 32 bits are a
 * tile number (ntiles or more: no tiles left), its high bits the call's epoch. A call hands out
 * a known number of tickets (see last_ticket); the block that takes the last of them resets the
 * counter for the next call: ticket 0, epoch + 1. (No block of this call takes a ticket after
 * that one, and the next launch starts only after this one ends.) */
__device__ u64 take_ticket(u64 *d_counter, unsigned last)
{
    // TODO(student): return this block's ticket: the counter's value before one atomic increment
    // (no two blocks may get the same ticket; relaxed order is enough). The block whose ticket
    // is the call's last (low 32 bits == last) leaves the counter ready for the next call:
    // tile number 0 and the next epoch (modulo EPOCH_MASK + 1) in the high bits.
    (void)d_counter;
    (void)last;
    return 0;
}

/* The number of the call's last ticket. Persistent: every block takes tickets until it gets one
 * past the last tile, so ntiles + gridDim.x in all. One block per tile: one ticket each. */
__device__ __forceinline__ unsigned last_ticket(unsigned ntiles)
{
    return LB_PERSISTENT ? ntiles + gridDim.x - 1 : ntiles - 1;
}

/* Waits about ns nanoseconds (a hint to the scheduler; nothing when ns is 0). */
__device__ __forceinline__ void pause_ns(unsigned ns)
{
    if (ns > 0)
        __nanosleep(ns);
}

/* Warp-wide inclusive scan of one value per lane (Kogge-Stone over shuffles, 5 steps). */
__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned x, unsigned lane)
{
    // TODO(student): return to lane l the sum of x over lanes 0 .. l (an inclusive warp scan),
    // in log2(32) = 5 steps, register to register (labs/WARPS.md). Every lane of the warp calls
    // this function, and every lane must reach every shuffle.
    (void)lane;
    return x;
}

/* Warp-wide sum of one value per lane; every lane gets the total. */
__device__ __forceinline__ unsigned warp_sum(unsigned x)
{
#pragma unroll
    for (unsigned d = WARP_SIZE / 2; d > 0; d /= 2)
        x += __shfl_xor_sync(FULL_MASK, x, d);
    return x;
}

/* Warp-wide (one warp of the block): publishes the tile's aggregate, looks back for its
 * exclusive prefix, publishes its inclusive prefix, and returns the exclusive prefix to every
 * lane.
 *
 * The window: lane i reads the descriptor of tile top - 31 + i, so lane 31 holds the nearest
 * predecessor. Tiles before 0 count as a prefix of 0. Let p be the highest lane holding a
 * PREFIX; the tile needs lanes p..31 (all 32 if there is none). If any of those is still
 * INVALID, it reads the window again; otherwise it adds their values, and either stops (a prefix
 * was among them) or slides the window 32 tiles further back.
 *
 * Ordering: each descriptor is one 64-bit atomic, so a reader gets the status and the value of
 * the same store, and the value is all it needs from the writer: nothing else the writer stored
 * is read by another block. So relaxed atomics are enough, and cheaper than release/acquire (a
 * release store waits for the writer's earlier stores, an acquire load invalidates L1). If the
 * value and the flag lived in two words, the writer would need a release store of the flag after
 * the value and the reader an acquire load of the flag before the value (README.md shows the
 * interleaving that goes wrong otherwise). LB_ORDERED=1 builds the release/acquire version. */
__device__ unsigned look_back(u64 *d_desc, unsigned tile, unsigned epoch, unsigned aggregate,
                              unsigned lane)
{
    // TODO(student): publish this tile's aggregate (tile 0: its prefix, which is the same and
    // ends the look-back of everyone after it) in d_desc[tile], one atomic 64-bit store
    // (pack_descriptor, PUBLISH_ORDER), by one lane. Tile 0 then returns 0; other tiles wait
    // pause_ns(LB_FIRST_DELAY_NS) once before their first read.
    //
    // TODO(student): look back. Return to every lane `exclusive`, the sum of all tiles before
    // this one, found from the descriptors of tiles tile - 1, tile - 2, ..., read 32 at a time
    // (READ_ORDER), one per lane. Rules: a descriptor from another epoch counts as ST_INVALID
    // (nothing published in this call); tiles before 0 count as ST_PREFIX 0; stop at the nearest
    // ST_PREFIX, adding it and every aggregate after it; if a tile you need is still
    // ST_INVALID, pause_ns(LB_BACKOFF_NS) and read the window again. Warp primitives only: every
    // lane takes part in every ballot and shuffle.
    //
    // TODO(student): publish this tile's inclusive prefix (exclusive + aggregate) as ST_PREFIX.
    (void)d_desc;
    (void)tile;
    (void)epoch;
    (void)aggregate;
    (void)lane;
    unsigned exclusive = 0;
    return exclusive;
}

/* ---- kernel ------------------------------------------------------------------ */

/* Scans one tile of TILE_ITEMS elements with the whole block. Warp w owns elements
 * [w * WARP_ITEMS, (w + 1) * WARP_ITEMS) of the tile; in round j lane l holds the 4 elements
 * starting at w * WARP_ITEMS + j * ROUND_ITEMS + 4 l. ALIGNED: in and out are 16-byte aligned,
 * so full tiles move as int4; the last, ragged tile (or any tile when not ALIGNED) uses guarded
 * scalar accesses in the same layout. Persistent grid with LB_PREFETCH 1 or 2: thread 0 also
 * takes the block's next ticket and leaves it in *s_ticket before the tile's last barrier
 * (waiting for it only there hides the atomic's latency). */
template <bool ALIGNED>
__device__ __forceinline__ void scan_tile(const int *__restrict__ in, int *__restrict__ out,
                                          size_t n, u64 *d_counter, u64 *d_desc, unsigned ntiles,
                                          unsigned tile, unsigned epoch, u64 *s_ticket,
                                          unsigned *s_warp_total, unsigned *s_exclusive)
{
    const unsigned lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const bool prefetch = LB_PERSISTENT && LB_PREFETCH != 0;
    u64 next_ticket = 0;
    if (prefetch && LB_PREFETCH == 1 && threadIdx.x == 0)
        next_ticket = take_ticket(d_counter, last_ticket(ntiles));

    /* load: the thread's LB_VECS vectors (identity 0 past n) */
    const size_t tile_start = (size_t)tile * TILE_ITEMS;
    const size_t first = tile_start + (size_t)warp * WARP_ITEMS + (size_t)lane * VEC_INTS;
    const bool full = ALIGNED && tile_start + TILE_ITEMS <= n;
    uint4 v[LB_VECS];
    if (full) {
#pragma unroll
        for (int j = 0; j < LB_VECS; j++)
            v[j] = reinterpret_cast<const uint4 *>(
                in)[first / VEC_INTS + j * (ROUND_ITEMS / VEC_INTS)];
    } else {
#pragma unroll
        for (int j = 0; j < LB_VECS; j++) {
            const size_t i = first + (size_t)j * ROUND_ITEMS;
            v[j].x = i < n ? (unsigned)in[i] : 0u;
            v[j].y = i + 1 < n ? (unsigned)in[i + 1] : 0u;
            v[j].z = i + 2 < n ? (unsigned)in[i + 2] : 0u;
            v[j].w = i + 3 < n ? (unsigned)in[i + 3] : 0u;
        }
    }

    /* scan inside the warp: each vector serially, then the vector totals across the warp;
     * before[j] = what precedes vector j within the warp's share */
    unsigned before[LB_VECS], running = 0;
#pragma unroll
    for (int j = 0; j < LB_VECS; j++) {
        v[j].y += v[j].x;
        v[j].z += v[j].y;
        v[j].w += v[j].z;
        const unsigned incl = warp_inclusive_scan(v[j].w, lane);
        before[j] = running + incl - v[j].w;
        running += __shfl_sync(FULL_MASK, incl, WARP_SIZE - 1);
    }

    /* scan across the warps through shared memory; running is now the warp's total */
    if (lane == 0)
        s_warp_total[warp] = running;
    __syncthreads();
    unsigned warp_prefix = 0, tile_total = 0;
#pragma unroll
    for (unsigned w = 0; w < WARPS; w++) {
        const unsigned t = s_warp_total[w];
        warp_prefix += w < warp ? t : 0u;
        tile_total += t;
    }

    /* the carry from the predecessors: warp 0 looks back while the others wait */
    if (warp == 0) {
        if (prefetch && LB_PREFETCH == 2 && lane == 0)
            next_ticket = take_ticket(d_counter, last_ticket(ntiles));
        const unsigned exclusive = look_back(d_desc, tile, epoch, tile_total, lane);
        if (lane == 0) {
            *s_exclusive = exclusive;
            if (prefetch)
                *s_ticket = next_ticket;
        }
    }
    __syncthreads();
    const unsigned carry = *s_exclusive + warp_prefix;

    /* store */
    if (full) {
#pragma unroll
        for (int j = 0; j < LB_VECS; j++) {
            const unsigned c = carry + before[j];
            const uint4 o = make_uint4(v[j].x + c, v[j].y + c, v[j].z + c, v[j].w + c);
            /* indexed as a uint4 array: written as out + first + ..., nvcc 13 split the first
             * vector into four scalar stores (seen in the PTX) */
            reinterpret_cast<uint4 *>(out)[first / VEC_INTS + j * (ROUND_ITEMS / VEC_INTS)] = o;
        }
    } else {
#pragma unroll
        for (int j = 0; j < LB_VECS; j++) {
            const size_t i = first + (size_t)j * ROUND_ITEMS;
            const unsigned c = carry + before[j];
            if (i < n)
                out[i] = (int)(v[j].x + c);
            if (i + 1 < n)
                out[i + 1] = (int)(v[j].y + c);
            if (i + 2 < n)
                out[i + 2] = (int)(v[j].z + c);
            if (i + 3 < n)
                out[i + 3] = (int)(v[j].w + c);
        }
    }
}

/* By default (LB_PERSISTENT 0) one block per tile: thread 0 takes the block's one ticket, which
 * names its tile, and the block scans that tile and ends; the ticket, not blockIdx, decides which
 * tile a block gets. Built with LB_PERSISTENT=1, the grid is only as large as fits on the GPU and
 * each block loops, taking its next ticket (when: LB_PREFETCH), until the tickets run out. */
template <bool ALIGNED>
__global__ void LB_LAUNCH_BOUNDS lookback_scan_kernel(const int *__restrict__ in,
                                                      int *__restrict__ out, size_t n,
                                                      u64 *d_counter, u64 *d_desc, unsigned ntiles)
{
    __shared__ u64 s_ticket;
    __shared__ unsigned s_exclusive;
    __shared__ unsigned s_warp_total[WARPS];

    if (threadIdx.x == 0)
        s_ticket = take_ticket(d_counter, last_ticket(ntiles));
    __syncthreads();
    for (;;) {
        /* every thread reads s_ticket here, before the tile's first barrier; thread 0 writes the
         * next one only after that barrier */
        const u64 ticket = s_ticket;
        const unsigned tile = (unsigned)ticket, epoch = (unsigned)(ticket >> 32) & EPOCH_MASK;
        if (tile >= ntiles)
            break;
        scan_tile<ALIGNED>(in, out, n, d_counter, d_desc, ntiles, tile, epoch, &s_ticket,
                           s_warp_total, &s_exclusive);
        if (!LB_PERSISTENT)
            break;
        if (LB_PREFETCH == 0) {
            if (threadIdx.x == 0)
                s_ticket = take_ticket(d_counter, last_ticket(ntiles));
            __syncthreads();
        }
    }
}

/* ---- launcher ------------------------------------------------------------------ */

/* Scratch: the counter word, padding, and one descriptor per tile. */
size_t lookback_temp_bytes(size_t n)
{
    return (STATE_WORDS + CEIL_DIV(n, (size_t)TILE_ITEMS)) * sizeof(u64);
}

/* Blocks to launch: as many as fit on the GPU at once (the occupancy calculator's count per
 * multiprocessor, from the kernel's registers and threads), but no more than there are tiles.
 * Correct for any grid size: a block only ever waits for tiles that running blocks hold. */
template <bool ALIGNED> static unsigned lookback_grid(size_t ntiles)
{
    static int resident = 0; /* blocks that fit at once, computed on the first call */
    if (!LB_PERSISTENT)
        return (unsigned)ntiles;
    if (resident == 0) {
        int dev = 0, sms = 0, per_sm = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, lookback_scan_kernel<ALIGNED>, LB_THREADS, 0));
        resident = sms * (per_sm > 0 ? per_sm : 1);
    }
    return (unsigned)(ntiles < (size_t)resident ? ntiles : (size_t)resident);
}

/* Inclusive scan of d_in[0..n) into d_out[0..n) in one kernel launch; d_temp holds
 * lookback_temp_bytes(n) bytes, zero-filled before the first call and left ready by each call. */
lab_result lookback_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    // TODO(student): return LAB_OK at once when n == 0. Otherwise: ntiles = CEIL_DIV(n,
    // TILE_ITEMS); the counter is word 0 of d_temp and the descriptors start at word
    // STATE_WORDS; launch lookback_scan_kernel<true> when d_in and d_out are both 16-byte
    // aligned, <false> otherwise, on lookback_grid<...>(ntiles) blocks of LB_THREADS threads;
    // LAUNCH_CHECK(); return LAB_OK instead of the lines below.
    (void)d_in;
    (void)d_out;
    (void)n;
    (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}
