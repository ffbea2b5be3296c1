/* 09_operators — one scan for any associative operator with an identity.
 *
 * What changes from 07/08: the scan is written once, as templates over an operator Op (a struct
 * with a value type T, identity() and combine(a, b)), and instantiated five times:
 *   add        int +, wrapping (the generic code checked exactly against labs 01-08's scan)
 *   max, min   int max and min
 *   fadd       float +, which is not associative in floating point: every order of the
 *              additions gives a slightly different, equally valid result (README.md's bound)
 *   segmented  int + restarting at every segment head, as one scan under the (flag, value)
 *              operator: (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 : v1 + v2), associative
 * Two scans, both generic over Op:
 *   single pass (the variants add, max, min, fadd, segmented: the ones graded and timed): lab
 *     08's decoupled look-back with Op::combine in place of +, 8n bytes (12n with the heads), as
 *     CUB's DeviceScan moves. Nothing in it needs an inverse (the section's comment says where
 *     lab 08 subtracted and what replaces it), and a descriptor carries any T in 33 bits.
 *   two pass (the *_two_pass variants, what the skeleton asks for): lab 07's reduce_then_scan,
 *     generic. Reduce every tile of OPS_TILE elements to one partial; scan the partials,
 *     recursively while they fill more than one tile; scan every tile again from its carry, the
 *     combined partials of all tiles before it. Thread t owns elements t*OPS_ITEMS .. of its tile
 *     (consecutive: the operator need not commute), moved between device and shared memory
 *     coalesced (lab 06's copies); the block combines the threads' partials with
 *     block_inclusive_scan (each warp a Kogge-Stone over shuffles of T, moved 32 bits at a time,
 *     then the warps' totals), and each thread's carry without an inverse (scan_kernel).
 *     Traffic: read n (reduce), read n + write n (scan): about 12n bytes; 20n with the heads,
 *     which both passes read.
 * Longer than 400 lines because it holds both scans, the student's two-pass one and the
 * single-pass one of the handout's "going further", so that the two can be compared variant by
 * variant in one binary.
 *
 * Run: make run LAB=09 ARGS='--variant fadd'   Test: make test TEST_SRC=labs LAB=09
 */
#include "course/09_operators.h"
#include "cuda_check.h"

#include <climits>
#include <cuda/atomic>
#include <stdint.h>
#include <string.h>

/* ---- the operators ---------------------------------------------------------------------------
 * load(x, head) turns input element x (and its segment head) into a T; store(T) gives the int
 * that goes to out. combine must be associative, identity() its neutral element. */

struct AddOp {
    typedef unsigned T;
    __host__ __device__ static T identity() { return 0u; }
    __device__ static T combine(T a, T b) { return a + b; } /* unsigned: wraps */
    __device__ static T load(int x, int) { return (unsigned)x; }
    __device__ static int store(T a) { return (int)a; }
};

struct MaxOp {
    typedef int T;
    __host__ __device__ static T identity() { return INT_MIN; }
    __device__ static T combine(T a, T b) { return a > b ? a : b; }
    __device__ static T load(int x, int) { return x; }
    __device__ static int store(T a) { return a; }
};

struct MinOp {
    typedef int T;
    __host__ __device__ static T identity() { return INT_MAX; }
    __device__ static T combine(T a, T b) { return a < b ? a : b; }
    __device__ static T load(int x, int) { return x; }
    __device__ static int store(T a) { return a; }
};

struct FAddOp {
    typedef float T;
    __host__ __device__ static T identity() { return 0.0f; }
    __device__ static T combine(T a, T b) { return a + b; }
    __device__ static T load(int x, int)
    {
        float f;
        memcpy(&f, &x, sizeof(f)); /* the bits, not a conversion */
        return f;
    }
    __device__ static int store(T a)
    {
        int x;
        memcpy(&x, &a, sizeof(x));
        return x;
    }
};

/* (flag, value): flag says "a segment starts in here", value is the sum since the last start. */
struct SegPair {
    unsigned flag, value;
};

struct SegOp {
    typedef SegPair T;
    __host__ __device__ static T identity() { return SegPair{0u, 0u}; }
    __device__ static T combine(T a, T b)
    {
        return SegPair{a.flag | b.flag, b.flag ? b.value : a.value + b.value};
    }
    __device__ static T load(int x, int head) { return SegPair{head != 0, (unsigned)x}; }
    __device__ static int store(T a) { return (int)a.value; }
};

/* ---- warp- and block-wide scans ------------------------------------------------------------- */

#define OPS_WARP 32
#define OPS_WARPS (OPS_THREADS / OPS_WARP)
#define OPS_FULL 0xffffffffu

/* Shuffles of any T of whole 32-bit words, one word at a time (__shfl_*_sync move one built-in
 * 4- or 8-byte value, so a struct such as SegPair goes as its words). kind: 0 up by arg (lanes
 * 0 .. arg-1 get their own x back), 1 from lane arg, 2 xor arg. Every lane of the warp must call
 * it. */
template <class T> __device__ __forceinline__ T ops_shfl(T x, int kind, unsigned arg)
{
    static_assert(sizeof(T) % 4 == 0, "a T of whole 32-bit words");
    unsigned w[sizeof(T) / 4];
    memcpy(w, &x, sizeof(T));
#pragma unroll
    for (unsigned k = 0; k < sizeof(T) / 4; k++)
        w[k] = kind == 0   ? __shfl_up_sync(OPS_FULL, w[k], arg)
               : kind == 1 ? __shfl_sync(OPS_FULL, w[k], (int)arg)
                           : __shfl_xor_sync(OPS_FULL, w[k], arg);
    memcpy(&x, w, sizeof(T));
    return x;
}

/* x of the lane d below this one (the skeleton's given helper). */
template <class T> __device__ __forceinline__ T ops_shfl_up(T x, unsigned d)
{
    return ops_shfl(x, 0, d);
}

/* Inclusive scan of one T per lane, in lane order: lane l gets x_0 . x_1 . ... . x_l
 * (Op::combine, the lower lanes' part always on the left). A Kogge-Stone over shuffles: 5 steps,
 * no shared memory, no barrier. Every lane of the warp must call it. */
template <class Op>
__device__ __forceinline__ typename Op::T warp_inclusive_scan(typename Op::T x, unsigned lane)
{
#pragma unroll
    for (unsigned d = 1; d < OPS_WARP; d *= 2) {
        const typename Op::T left = ops_shfl_up(x, d); /* lane l - d's value */
        if (lane >= d)
            x = Op::combine(left, x);
    }
    return x;
}

/* Inclusive scan of one value per thread, in thread order, across the block: thread t gets
 * x_0 . x_1 . ... . x_t (Op::combine, never reordered), and every thread *total the whole
 * block's. Each warp scans its own 32 values; warp 0 scans the warps' totals (in s, OPS_WARPS of
 * them); every thread past warp 0 puts the total of the warps before its own on the left. Two
 * barriers, and a third that leaves s free for the caller. Every thread must call it. */
template <class Op>
__device__ typename Op::T block_inclusive_scan(typename Op::T x, typename Op::T *s,
                                               typename Op::T *total)
{
    typedef typename Op::T T;
    const unsigned lane = threadIdx.x % OPS_WARP, warp = threadIdx.x / OPS_WARP;
    x = warp_inclusive_scan<Op>(x, lane);
    if (lane == OPS_WARP - 1)
        s[warp] = x; /* the warp's total */
    __syncthreads();
    if (warp == 0) { /* s[w] becomes warps 0 .. w combined */
        T w = lane < OPS_WARPS ? s[lane] : Op::identity();
        w = warp_inclusive_scan<Op>(w, lane);
        if (lane < OPS_WARPS)
            s[lane] = w;
    }
    __syncthreads();
    if (warp > 0)
        x = Op::combine(s[warp - 1], x);
    *total = s[OPS_WARPS - 1];
    __syncthreads(); /* s is free again for the caller */
    return x;
}

/* ---- where a level reads and writes ----------------------------------------------------------
 * The first level reads the lab's input (ints and, when segmented, heads) and writes ints: it
 * moves them through shared memory, consecutive threads on consecutive addresses (coalesced), so
 * that each thread can then take its own run of OPS_ITEMS consecutive elements. The levels of
 * partials (n / 2048 values and fewer) read and write arrays of T directly. */

#define OPS_SLOTS (OPS_TILE + OPS_TILE / OPS_WARP) /* one padding word after every 32 */

/* Runs of 32 consecutive words start 32 words apart: one padding word per 32 puts the run
 * starts of a warp's 32 threads in 32 different banks (lab 06). */
__device__ __forceinline__ unsigned ops_padded(unsigned i)
{
    return i + i / OPS_WARP;
}

/* The elements of the tile at base (OPS_TILE, or fewer for the last tile). */
__device__ __forceinline__ unsigned ops_len(size_t base, size_t n)
{
    return n - base < (size_t)OPS_TILE ? (unsigned)(n - base) : (unsigned)OPS_TILE;
}

/* Copies the tile's words of src (len of them, 0 past len) into s, coalesced. */
__device__ __forceinline__ void stage_in(const int *src, unsigned len, int *s)
{
#pragma unroll
    for (int j = 0; j < OPS_ITEMS; j++) {
        const unsigned i = j * OPS_THREADS + threadIdx.x;
        s[ops_padded(i)] = i < len ? src[i] : 0;
    }
}

template <class Op> struct FromInput {
    const int *in, *heads;
    /* vals[k] = element t*OPS_ITEMS + k of the tile at base (the identity past n). Every thread
     * of the block calls it (it has barriers); s holds OPS_SLOTS ints. */
    __device__ void load_run(size_t base, size_t n, typename Op::T *vals, int *s) const
    {
        const unsigned len = ops_len(base, n), first = threadIdx.x * OPS_ITEMS;
        unsigned head_bits = 0;
        if (heads) { /* the heads first, kept as one bit per element of the run */
            stage_in(heads + base, len, s);
            __syncthreads();
#pragma unroll
            for (int k = 0; k < OPS_ITEMS; k++)
                head_bits |= (s[ops_padded(first + k)] != 0 ? 1u : 0u) << k;
            __syncthreads();
        }
        stage_in(in + base, len, s);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < OPS_ITEMS; k++)
            vals[k] = first + k < len ? Op::load(s[ops_padded(first + k)], (head_bits >> k) & 1u)
                                      : Op::identity();
        __syncthreads(); /* s is free again */
    }
};

template <class Op> struct FromArray {
    const typename Op::T *a;
    __device__ void load_run(size_t base, size_t n, typename Op::T *vals, int *) const
    {
        const size_t first = base + (size_t)threadIdx.x * OPS_ITEMS;
#pragma unroll
        for (int k = 0; k < OPS_ITEMS; k++)
            vals[k] = first + k < n ? a[first + k] : Op::identity();
    }
};

template <class Op> struct ToOutput {
    int *out;
    /* Writes vals[k] as element t*OPS_ITEMS + k of the tile at base (below n only), through s
     * and coalesced. Every thread of the block calls it. */
    __device__ void store_run(size_t base, size_t n, const typename Op::T *vals, int *s) const
    {
        const unsigned len = ops_len(base, n), first = threadIdx.x * OPS_ITEMS;
#pragma unroll
        for (int k = 0; k < OPS_ITEMS; k++)
            s[ops_padded(first + k)] = Op::store(vals[k]);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < OPS_ITEMS; j++) {
            const unsigned i = j * OPS_THREADS + threadIdx.x;
            if (i < len)
                out[base + i] = s[ops_padded(i)];
        }
    }
};

template <class Op> struct ToArray {
    typename Op::T *a;
    __device__ void store_run(size_t base, size_t n, const typename Op::T *vals, int *) const
    {
        const size_t first = base + (size_t)threadIdx.x * OPS_ITEMS;
#pragma unroll
        for (int k = 0; k < OPS_ITEMS; k++)
            if (first + k < n)
                a[first + k] = vals[k];
    }
};

/* The combination, in order, of this thread's run (loaded into vals). */
template <class Op> __device__ typename Op::T run_total(const typename Op::T *vals)
{
    typename Op::T acc = vals[0];
#pragma unroll
    for (int k = 1; k < OPS_ITEMS; k++)
        acc = Op::combine(acc, vals[k]);
    return acc;
}

/* Phase 1: partials[b] = the combination of tile b. */
template <class Op, class Src>
__global__ void __launch_bounds__(OPS_THREADS)
    reduce_kernel(Src src, typename Op::T *partials, size_t n)
{
    __shared__ int s_stage[OPS_SLOTS];
    __shared__ typename Op::T s[OPS_THREADS];
    const size_t base = (size_t)blockIdx.x * OPS_TILE;
    typename Op::T vals[OPS_ITEMS], total;
    src.load_run(base, n, vals, s_stage);
    block_inclusive_scan<Op>(run_total<Op>(vals), s, &total);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = total;
}

/* Phase 3 (and a level that fits one tile): scans tile b into dst, starting from carries[b - 1]
 * when carries is not NULL and b > 0. */
template <class Op, class Src, class Dst>
__global__ void __launch_bounds__(OPS_THREADS)
    scan_kernel(Src src, Dst dst, const typename Op::T *carries, size_t n)
{
    typedef typename Op::T T;
    __shared__ int s_stage[OPS_SLOTS];
    __shared__ T s[OPS_THREADS];
    const size_t base = (size_t)blockIdx.x * OPS_TILE;
    T vals[OPS_ITEMS], total;
    src.load_run(base, n, vals, s_stage);
    const T incl = block_inclusive_scan<Op>(run_total<Op>(vals), s, &total);
    /* what comes before this thread's first element: the carry, then the threads before it */
    s[threadIdx.x] = incl;
    __syncthreads();
    T acc = carries && blockIdx.x > 0 ? carries[blockIdx.x - 1] : Op::identity();
    if (threadIdx.x > 0)
        acc = Op::combine(acc, s[threadIdx.x - 1]);
#pragma unroll
    for (int k = 0; k < OPS_ITEMS; k++) {
        acc = Op::combine(acc, vals[k]);
        vals[k] = acc;
    }
    dst.store_run(base, n, vals, s_stage);
}

/* ---- the recursion --------------------------------------------------------------------------- */

static size_t align256(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* Scratch of the two-pass scan for n elements: each level's partials, 8 bytes each (the widest
 * T), 256-aligned. */
static size_t two_pass_temp_bytes(size_t n)
{
    size_t bytes = 0;
    while (n > OPS_TILE) {
        n = (n + OPS_TILE - 1) / OPS_TILE;
        bytes += align256(n * 8);
    }
    return bytes;
}

/* Inclusive scan of n elements from src into dst with Op; temp holds ops_temp_bytes(n). */
template <class Op, class Src, class Dst>
static lab_result generic_scan(Src src, Dst dst, size_t n, void *temp)
{
    typedef typename Op::T T;
    static_assert(sizeof(T) <= 8, "two_pass_temp_bytes sizes 8 bytes per partial");
    if (n == 0)
        return LAB_OK;
    const size_t tiles = CEIL_DIV(n, (size_t)OPS_TILE);
    if (tiles == 1) {
        scan_kernel<Op, Src, Dst><<<1, OPS_THREADS>>>(src, dst, (const T *)NULL, n);
        LAUNCH_CHECK();
        return LAB_OK;
    }
    T *partials = (T *)temp;
    void *rest = (char *)temp + align256(tiles * 8);
    reduce_kernel<Op, Src><<<(unsigned)tiles, OPS_THREADS>>>(src, partials, n);
    LAUNCH_CHECK();
    /* scan the partials in place: carries[b - 1] is everything before tile b */
    const lab_result r = generic_scan<Op, FromArray<Op>, ToArray<Op>>(
        FromArray<Op>{partials}, ToArray<Op>{partials}, tiles, rest);
    if (r != LAB_OK)
        return r;
    scan_kernel<Op, Src, Dst><<<(unsigned)tiles, OPS_THREADS>>>(src, dst, partials, n);
    LAUNCH_CHECK();
    return LAB_OK;
}

/* ---- the single-pass scan: lab 08's decoupled look-back, generic ------------------------------
 * The same tile, loads, tickets and look-back as lab 08 (solutions/08_decoupled_lookback/scan.cu
 * explains each), with Op::combine wherever lab 08 adds and three changes that an operator without
 * an inverse needs:
 *   - a lane's exclusive value inside the warp is the inclusive value of the lane before it (a
 *     shuffle up by one), never `inclusive - own`;
 *   - the look-back's window is combined in tile order, and its result goes on the LEFT of what
 *     the windows nearer the tile gave (the earlier tiles come first);
 *   - a descriptor holds any T in 33 bits (SpBits below): the 32 bits of the value and one more
 *     for the segmented operator's flag, so status, flag, epoch and value still fit one 64-bit
 *     word and are read together (bits 63..62 status, 61 the extra bit, 60..32 the epoch).
 * Bytes: read n, write n (8n; 12n with the heads), against the two-pass scan's 12n (20n). */

/* Each of the four below can be set for a tuning sweep (-DSP_VECS_4=8, tools/dev/sweep.sh with
 * SWEEP_LAB=09_operators); the grader's sizes come from the shipped tile. */
#ifndef SP_THREADS
#define SP_THREADS 128 /* lab 08's tile: 128 threads of 12 int4 vectors, 6144 elements */
#endif
#ifndef SP_VECS_4
#define SP_VECS_4 12 /* int4 vectors per thread when T is 4 bytes */
#endif
#define SP_VECS_8 (SP_VECS_4 / 2) /* when T is 8 bytes (segmented): the same registers */
#define SP_WARP 32
#define SP_WARPS (SP_THREADS / SP_WARP)
#define SP_ROUND 128 /* elements a warp moves in one round of int4 loads */
#define SP_FULL 0xffffffffu
#ifndef SP_FIRST_DELAY_NS
#define SP_FIRST_DELAY_NS 1600 /* lab 08's look-back pauses, from its H100 sweep */
#endif
#ifndef SP_BACKOFF_NS
#define SP_BACKOFF_NS 800
#endif
#define SP_STATE_WORDS 16 /* word 0 the ticket counter; the rest pads the descriptors */
#define SP_ST_INVALID 0u
#define SP_ST_AGGREGATE 1u
#define SP_ST_PREFIX 2u
#define SP_EPOCH_MASK ((1u << 29) - 1u) /* 29 bits: one of lab 08's 30 went to the extra bit */

typedef unsigned long long u64;
typedef cuda::atomic_ref<u64, cuda::thread_scope_device> sp_atomic;

/* The tile of operator Op: vectors per thread, elements per thread, per warp and per tile. */
template <class Op> struct SpShape {
    static constexpr int VECS = sizeof(typename Op::T) == 4 ? SP_VECS_4 : SP_VECS_8;
    static constexpr int ITEMS = VECS * 4;
    static constexpr unsigned WARP_ITEMS = SP_WARP * ITEMS;
    static constexpr unsigned TILE = SP_THREADS * ITEMS;
};
const size_t ops_lookback_tile = SpShape<AddOp>::TILE;     /* 6144 (the lab header) */
const size_t ops_lookback_seg_tile = SpShape<SegOp>::TILE; /* 3072 */

/* A T as the 33 bits a descriptor carries, and back. */
template <class T> struct SpBits;
template <> struct SpBits<unsigned> {
    __device__ static u64 to(unsigned a) { return a; }
    __device__ static unsigned from(u64 b) { return (unsigned)b; }
};
template <> struct SpBits<int> {
    __device__ static u64 to(int a) { return (unsigned)a; }
    __device__ static int from(u64 b) { return (int)(unsigned)b; }
};
template <> struct SpBits<float> {
    __device__ static u64 to(float a)
    {
        unsigned u;
        memcpy(&u, &a, sizeof(u));
        return u;
    }
    __device__ static float from(u64 b)
    {
        const unsigned u = (unsigned)b;
        float a;
        memcpy(&a, &u, sizeof(a));
        return a;
    }
};
template <> struct SpBits<SegPair> {
    __device__ static u64 to(SegPair a) { return ((u64)(a.flag != 0) << 32) | a.value; }
    __device__ static SegPair from(u64 b) { return SegPair{(unsigned)(b >> 32) & 1u, (unsigned)b}; }
};

__device__ __forceinline__ u64 sp_pack(unsigned status, unsigned epoch, u64 bits)
{
    return ((u64)status << 62) | (((bits >> 32) & 1u) << 61) |
           ((u64)(epoch & SP_EPOCH_MASK) << 32) | (bits & 0xffffffffu);
}

/* The combination of the 32 lanes' values in lane order, to every lane: a butterfly whose lane
 * with the bit set takes its partner's (lower) half on the left. */
template <class Op>
__device__ __forceinline__ typename Op::T sp_warp_reduce(typename Op::T x, unsigned lane)
{
#pragma unroll
    for (unsigned d = 1; d < SP_WARP; d *= 2) {
        const typename Op::T y = ops_shfl(x, 2, d);
        x = (lane & d) ? Op::combine(y, x) : Op::combine(x, y);
    }
    return x;
}

/* Thread 0: the next ticket (low 32 bits the tile, above them the call's epoch); the block that
 * takes the last one resets the counter for the next call (lab 08's take_ticket). */
__device__ u64 sp_take_ticket(u64 *d_counter, unsigned last)
{
    sp_atomic counter(*d_counter);
    const u64 ticket = counter.fetch_add(1, cuda::memory_order_relaxed);
    if ((unsigned)ticket == last) {
        const unsigned epoch = (unsigned)(ticket >> 32) & SP_EPOCH_MASK;
        counter.store((u64)((epoch + 1) & SP_EPOCH_MASK) << 32, cuda::memory_order_relaxed);
    }
    return ticket;
}

/* Warp 0 of the block: publishes the tile's aggregate, finds its exclusive prefix by looking back
 * 32 descriptors at a time (lab 08's look_back), publishes the inclusive prefix, returns the
 * exclusive one to every lane. Relaxed atomics suffice for the reason lab 08 gives: the value
 * travels in the same 64-bit word as its status. */
template <class Op>
__device__ typename Op::T sp_look_back(u64 *d_desc, unsigned tile, unsigned epoch,
                                       typename Op::T aggregate, unsigned lane)
{
    typedef typename Op::T T;
    typedef SpBits<T> B;
    if (lane == 0)
        sp_atomic(d_desc[tile])
            .store(sp_pack(tile == 0 ? SP_ST_PREFIX : SP_ST_AGGREGATE, epoch, B::to(aggregate)),
                   cuda::memory_order_relaxed);
    if (tile == 0)
        return Op::identity();
    __nanosleep(SP_FIRST_DELAY_NS);
    T exclusive = Op::identity();
    long long top = (long long)tile - 1;
    for (;;) {
        const long long idx = top - (SP_WARP - 1) + (long long)lane;
        unsigned status = SP_ST_PREFIX; /* tiles before 0: a prefix, the identity */
        T value = Op::identity();
        if (idx >= 0) {
            const u64 d = sp_atomic(d_desc[idx]).load(cuda::memory_order_relaxed);
            const unsigned hi = (unsigned)(d >> 32);
            status = (hi & SP_EPOCH_MASK) == epoch ? hi >> 30 : SP_ST_INVALID;
            value = B::from(((u64)((hi >> 29) & 1u) << 32) | (unsigned)d);
        }
        const unsigned prefixes = __ballot_sync(SP_FULL, status == SP_ST_PREFIX);
        const unsigned invalid = __ballot_sync(SP_FULL, status == SP_ST_INVALID);
        const unsigned needed = prefixes ? SP_FULL << (31 - __clz((int)prefixes)) : SP_FULL;
        if (invalid & needed) { /* a needed predecessor has published nothing yet */
            __nanosleep(SP_BACKOFF_NS);
            continue;
        }
        /* the window's needed lanes in tile order, then what the later windows gave */
        const T window = sp_warp_reduce<Op>((needed >> lane) & 1u ? value : Op::identity(), lane);
        exclusive = Op::combine(window, exclusive);
        if (prefixes)
            break;
        top -= SP_WARP;
    }
    if (lane == 0)
        sp_atomic(d_desc[tile])
            .store(sp_pack(SP_ST_PREFIX, epoch, B::to(Op::combine(exclusive, aggregate))),
                   cuda::memory_order_relaxed);
    return exclusive;
}

/* Loads the thread's vectors of the tile (lab 08's layout: in round j lane l holds the 4
 * elements at warp * WARP_ITEMS + j * 128 + 4 l), as T, the identity past n. VEC: in (and heads)
 * are 16-byte aligned and the tile is whole, so every access is an int4. */
template <class Op, bool HEADS, bool VEC>
__device__ __forceinline__ void sp_load(const int *__restrict__ in, const int *__restrict__ heads,
                                        size_t first, size_t n, typename Op::T (*v)[4])
{
    constexpr int VECS = SpShape<Op>::VECS;
    if constexpr (VEC) {
        const int4 *in4 = reinterpret_cast<const int4 *>(in),
                   *h4 = reinterpret_cast<const int4 *>(heads);
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const int4 a = in4[first / 4 + j * (SP_ROUND / 4)];
            const int4 h = HEADS ? h4[first / 4 + j * (SP_ROUND / 4)] : make_int4(0, 0, 0, 0);
            v[j][0] = Op::load(a.x, h.x);
            v[j][1] = Op::load(a.y, h.y);
            v[j][2] = Op::load(a.z, h.z);
            v[j][3] = Op::load(a.w, h.w);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const size_t i = first + (size_t)j * SP_ROUND + k;
                v[j][k] = i < n ? Op::load(in[i], HEADS ? heads[i] : 0) : Op::identity();
            }
    }
}

/* One block per tile, the tile named by a ticket (so a block waits only for tiles that running
 * blocks hold). ALIGNED: in, heads and out are 16-byte aligned (whole tiles move as int4). */
template <class Op, bool HEADS, bool ALIGNED>
__global__ void __launch_bounds__(SP_THREADS)
    sp_scan_kernel(const int *__restrict__ in, const int *__restrict__ heads, int *__restrict__ out,
                   size_t n, u64 *d_counter, u64 *d_desc, unsigned ntiles)
{
    typedef typename Op::T T;
    typedef SpShape<Op> S;
    __shared__ u64 s_ticket;
    __shared__ T s_warp_total[SP_WARPS];
    __shared__ T s_exclusive;
    const unsigned lane = threadIdx.x % SP_WARP, warp = threadIdx.x / SP_WARP;
    if (threadIdx.x == 0)
        s_ticket = sp_take_ticket(d_counter, ntiles - 1);
    __syncthreads();
    const unsigned tile = (unsigned)s_ticket, epoch = (unsigned)(s_ticket >> 32) & SP_EPOCH_MASK;

    const size_t tile_start = (size_t)tile * S::TILE;
    const size_t first = tile_start + (size_t)warp * S::WARP_ITEMS + (size_t)lane * 4;
    const bool full = ALIGNED && tile_start + S::TILE <= n;
    T v[S::VECS][4];
    if (full)
        sp_load<Op, HEADS, true>(in, heads, first, n, v);
    else
        sp_load<Op, HEADS, false>(in, heads, first, n, v);

    /* each vector in order, then the vector totals across the warp; before[j] = what precedes
     * vector j within the warp's share (the lane before's inclusive value, not inclusive - own) */
    T before[S::VECS], running = Op::identity();
#pragma unroll
    for (int j = 0; j < S::VECS; j++) {
        v[j][1] = Op::combine(v[j][0], v[j][1]);
        v[j][2] = Op::combine(v[j][1], v[j][2]);
        v[j][3] = Op::combine(v[j][2], v[j][3]);
        const T incl = warp_inclusive_scan<Op>(v[j][3], lane);
        const T prev = ops_shfl(incl, 0, 1);
        before[j] = lane == 0 ? running : Op::combine(running, prev);
        running = Op::combine(running, ops_shfl(incl, 1, SP_WARP - 1));
    }

    /* across the warps: warp w starts from warps 0..w-1, in order */
    if (lane == 0)
        s_warp_total[warp] = running;
    __syncthreads();
    T warp_prefix = Op::identity(), tile_total = Op::identity();
#pragma unroll
    for (unsigned w = 0; w < SP_WARPS; w++) {
        const T t = s_warp_total[w];
        if (w < warp)
            warp_prefix = Op::combine(warp_prefix, t);
        tile_total = Op::combine(tile_total, t);
    }
    if (warp == 0) {
        const T exclusive = sp_look_back<Op>(d_desc, tile, epoch, tile_total, lane);
        if (lane == 0)
            s_exclusive = exclusive;
    }
    __syncthreads();
    const T carry = Op::combine(s_exclusive, warp_prefix);

#pragma unroll
    for (int j = 0; j < S::VECS; j++) {
        const T c = Op::combine(carry, before[j]);
        const int o0 = Op::store(Op::combine(c, v[j][0])), o1 = Op::store(Op::combine(c, v[j][1]));
        const int o2 = Op::store(Op::combine(c, v[j][2])), o3 = Op::store(Op::combine(c, v[j][3]));
        if (full) {
            reinterpret_cast<int4 *>(out)[first / 4 + j * (SP_ROUND / 4)] =
                make_int4(o0, o1, o2, o3);
        } else {
            const size_t i = first + (size_t)j * SP_ROUND;
            if (i < n)
                out[i] = o0;
            if (i + 1 < n)
                out[i + 1] = o1;
            if (i + 2 < n)
                out[i + 2] = o2;
            if (i + 3 < n)
                out[i + 3] = o3;
        }
    }
}

/* Scratch of the single-pass scan: the counter word, padding, one descriptor per tile of the
 * smallest tile (the segmented one), zero-filled once; each call leaves it ready for the next. */
static size_t sp_temp_bytes(size_t n)
{
    return (SP_STATE_WORDS + CEIL_DIV(n, (size_t)ops_lookback_seg_tile)) * sizeof(u64);
}

/* The single-pass inclusive scan of n elements with Op, one kernel launch. */
template <class Op, bool HEADS>
static lab_result sp_scan(const int *d_in, const int *d_heads, int *d_out, size_t n, void *d_temp)
{
    if (n == 0)
        return LAB_OK;
    const size_t ntiles = CEIL_DIV(n, (size_t)SpShape<Op>::TILE);
    u64 *d_counter = (u64 *)d_temp, *d_desc = (u64 *)d_temp + SP_STATE_WORDS;
    const bool aligned = (uintptr_t)d_in % 16 == 0 && (uintptr_t)d_out % 16 == 0 &&
                         (!HEADS || (uintptr_t)d_heads % 16 == 0);
    if (aligned)
        sp_scan_kernel<Op, HEADS, true><<<(unsigned)ntiles, SP_THREADS>>>(
            d_in, d_heads, d_out, n, d_counter, d_desc, (unsigned)ntiles);
    else
        sp_scan_kernel<Op, HEADS, false><<<(unsigned)ntiles, SP_THREADS>>>(
            d_in, d_heads, d_out, n, d_counter, d_desc, (unsigned)ntiles);
    LAUNCH_CHECK();
    return LAB_OK;
}

/* ---- the entry points (common/course/09_operators.h) ---------------------------------------
 * The variants add, max, min, fadd and segmented run the single-pass scan; the *_two_pass ones
 * the reduce-then-scan, kept to compare with. One scratch serves both: the single-pass state
 * first, the two-pass partials after it (so that neither disturbs the other's). */

size_t ops_temp_bytes(size_t n)
{
    return align256(sp_temp_bytes(n)) + two_pass_temp_bytes(n);
}

template <class Op>
static lab_result scan_ints(const int *d_in, const int *d_heads, int *d_out, size_t n, void *t)
{
    void *rest = (char *)t + align256(sp_temp_bytes(n));
    return generic_scan<Op, FromInput<Op>, ToOutput<Op>>(FromInput<Op>{d_in, d_heads},
                                                         ToOutput<Op>{d_out}, n, rest);
}

lab_result ops_scan_add(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return sp_scan<AddOp, false>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_max(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return sp_scan<MaxOp, false>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_min(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return sp_scan<MinOp, false>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_fadd(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return sp_scan<FAddOp, false>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_segmented(const int *d_in, const int *d_heads, int *d_out, size_t n,
                              void *d_temp)
{
    return sp_scan<SegOp, true>(d_in, d_heads, d_out, n, d_temp);
}

lab_result ops_scan_add_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<AddOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_max_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<MaxOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_min_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<MinOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_fadd_two_pass(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<FAddOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_segmented_two_pass(const int *d_in, const int *d_heads, int *d_out, size_t n,
                                       void *d_temp)
{
    return scan_ints<SegOp>(d_in, d_heads, d_out, n, d_temp);
}
