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
 * Structure (lab 07's reduce_then_scan, generic): reduce every tile of OPS_TILE elements to one
 * partial; scan the partials, recursively while they fill more than one tile; scan every tile
 * again from its carry, the combined partials of all tiles before it. Thread t owns elements
 * t*OPS_ITEMS .. of its tile (consecutive: the operator need not commute), moved between device
 * and shared memory coalesced (lab 06's copies); the block combines the threads' partials with
 * block_inclusive_scan (each warp a Kogge-Stone over shuffles of T, then the warps' totals).
 * Traffic: read n (reduce), read n + write n (scan): about 12n bytes; 20n with the heads, which
 * both passes read.
 *
 * What you write (TODO(student)): the warp-wide scan of any T (warp_inclusive_scan), the carry
 * into each thread without an inverse (thread_prefix), and the operators' identities and
 * combines. The rest is given, the block-wide scan and the entry points that instantiate the
 * generic scan with each operator included: read it.
 *
 * Run: make run LAB=09 ARGS='--variant fadd'   Test: make test TEST_SRC=labs LAB=09
 */
#include "course/09_operators.h"
#include "cuda_check.h"

#include <climits>
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
    // TODO(student): the identity of max (the value x for which max(x, a) == a for every int a)
    // and max itself, written here as AddOp writes its own:
    //     __host__ __device__ static T identity() { ... }
    //     __device__ static T combine(T a, T b) { ... }
    // Until MaxOp has both, ops_scan_max reports "not implemented" (ops_written, below).
    __device__ static T load(int x, int) { return x; }
    __device__ static int store(T a) { return a; }
};

struct MinOp {
    typedef int T;
    // TODO(student): the identity of min and min itself, identity() and combine(a, b) declared
    // as in MaxOp. Until both are here, ops_scan_min reports "not implemented".
    __device__ static T load(int x, int) { return x; }
    __device__ static int store(T a) { return a; }
};

struct FAddOp {
    typedef float T;
    // TODO(student): the identity of float + and + itself, identity() and combine(a, b) declared
    // as in MaxOp (load and store, given, move the bits between int and float unchanged). Until
    // both are here, ops_scan_fadd reports "not implemented".
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
    // TODO(student): the (flag, value) operator. combine(a, b) is the pair for the elements of a
    // followed by those of b: flag says whether a segment starts anywhere in them, value is the
    // sum since the last start. It must be associative (the generic scan regroups freely), and
    // identity() must leave any pair unchanged on either side. identity() and combine(a, b)
    // declared as in MaxOp; until both are here, ops_scan_segmented reports "not implemented".
    __device__ static T load(int x, int head) { return SegPair{head != 0, (unsigned)x}; }
    __device__ static int store(T a) { return (int)a.value; }
};

/* ---- warp- and block-wide scans ------------------------------------------------------------- */

#define OPS_WARP 32
#define OPS_WARPS (OPS_THREADS / OPS_WARP)
#define OPS_FULL 0xffffffffu

/* Whether warp_inclusive_scan and thread_prefix below are written. Every entry point runs them:
 * while this is false, each reports "not implemented" instead of running the placeholders
 * (ops_written, below). */
static constexpr bool scan_parts_written = false;

/* x of the lane d below this one (lanes 0 .. d-1 get their own x back), for any T of whole
 * 32-bit words: __shfl_up_sync moves one built-in 4- or 8-byte value, so a struct such as
 * SegPair goes one word at a time. Every lane of the warp must call it. */
template <class T> __device__ __forceinline__ T ops_shfl_up(T x, unsigned d)
{
    static_assert(sizeof(T) % 4 == 0, "a T of whole 32-bit words");
    unsigned w[sizeof(T) / 4];
    memcpy(w, &x, sizeof(T));
#pragma unroll
    for (unsigned k = 0; k < sizeof(T) / 4; k++)
        w[k] = __shfl_up_sync(OPS_FULL, w[k], d);
    memcpy(&x, w, sizeof(T));
    return x;
}

/* Inclusive scan of one T per lane, in lane order: lane l gets x_0 . x_1 . ... . x_l. Every lane
 * of the warp must call it. */
template <class Op>
__device__ __forceinline__ typename Op::T warp_inclusive_scan(typename Op::T x, unsigned lane)
{
    // TODO(student): return to lane l the combination x_0 . x_1 . ... . x_l of the lanes'
    // values, for any Op and any T: lab 08's warp scan, with Op::combine where lab 08 adds.
    // Move values between lanes with ops_shfl_up (above), never __shfl_up_sync on a T directly
    // (SegPair is a struct). The lower lanes' part goes on the LEFT of combine, always (SegOp does
    // not commute), and a lane with no partner at a step must come out of it unchanged. Budget:
    // the reference makes log2(OPS_WARP) = 5 steps, one shuffle and at most one combine each.
    (void)lane;
    return x;
}

/* Inclusive scan of one value per thread, in thread order, across the block: thread t gets
 * x_0 . x_1 . ... . x_t (Op::combine, never reordered), and every thread *total the whole
 * block's. Each warp scans its own 32 values; warp 0 scans the warps' totals (in s, OPS_WARPS of
 * them); every thread past warp 0 puts the total of the warps before its own on the left. Two
 * barriers, and a third that leaves s free for the caller. Every thread must call it. Given:
 * read it, it is lab 08's block structure over warp_inclusive_scan. */
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

/* What comes before thread t's first element in the whole array: the tile's carry (everything in
 * the tiles before this one; the identity in the first), then threads 0 .. t-1's values, in that
 * order. incl is this thread's block_inclusive_scan result. Every thread must call it. */
template <class Op>
__device__ typename Op::T thread_prefix(typename Op::T incl, typename Op::T *s,
                                        typename Op::T tile_carry)
{
    // TODO(student): return tile_carry . x_0 . ... . x_(t-1) (Op::combine, in that order). Lab 07
    // had incl - x for the threads' part; max, min and SegOp have no inverse, so no subtraction:
    // find the threads' part among values already computed. s (OPS_THREADS values of T) is free
    // on entry (block_inclusive_scan ends with a barrier); every thread must reach each barrier
    // you put here. Budget: the reference uses one barrier and one combine. Once it and
    // warp_inclusive_scan are written, set scan_parts_written (above) to true, and the entry
    // points start running them.
    (void)incl;
    (void)s;
    return tile_carry;
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
    T acc = thread_prefix<Op>(incl, s,
                              carries && blockIdx.x > 0 ? carries[blockIdx.x - 1] : Op::identity());
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

/* Scratch for n elements: each level's partials, 8 bytes each (the widest T), 256-aligned. */
size_t ops_temp_bytes(size_t n)
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
    static_assert(sizeof(T) <= 8, "ops_temp_bytes sizes 8 bytes per partial");
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

/* ---- the entry points (common/course/09_operators.h) ---------------------------------------
 * Given: each runs the generic scan with its operator. Until the parts a scan runs are written
 * (ops_written), its entry point reports "not implemented" without touching memory, and the scan
 * is not even compiled for that operator: an operator needs identity() and combine() only once
 * it is used. */

template <class...> struct ops_void {
    typedef void type;
};

/* ops_written<Op>::value: whether scanning with Op runs only written code: scan_parts_written,
 * and Op declares identity() and combine() (AddOp does; the others once you write them). */
template <class Op, class = void> struct ops_written {
    static constexpr bool value = false;
};
template <class Op>
struct ops_written<Op, typename ops_void<decltype(&Op::identity), decltype(&Op::combine)>::type> {
    static constexpr bool value = scan_parts_written;
};

template <class Op>
static lab_result scan_ints(const int *d_in, const int *d_heads, int *d_out, size_t n, void *t)
{
    if constexpr (ops_written<Op>::value) {
        return generic_scan<Op, FromInput<Op>, ToOutput<Op>>(FromInput<Op>{d_in, d_heads},
                                                             ToOutput<Op>{d_out}, n, t);
    } else {
        (void)d_in, (void)d_heads, (void)d_out, (void)n, (void)t;
        return LAB_NOT_IMPLEMENTED;
    }
}

lab_result ops_scan_add(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<AddOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_max(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<MaxOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_min(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<MinOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_fadd(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    return scan_ints<FAddOp>(d_in, NULL, d_out, n, d_temp);
}
lab_result ops_scan_segmented(const int *d_in, const int *d_heads, int *d_out, size_t n,
                              void *d_temp)
{
    return scan_ints<SegOp>(d_in, d_heads, d_out, n, d_temp);
}
