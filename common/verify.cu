/* verify.cu — trusted device code around each call of a lab (verify.h): inputs, guards and
 * poison written on the GPU, and the GPU check of a call.
 *
 * Plain grid-stride kernels: clarity over speed (they run outside every timed region). A scan's
 * output needs no reference scan to be checked: with the input as generated (checked from its
 * seed in the same pass) and out[0..i) right, out[i] is right exactly when it is out[i-1] plus
 * the element it adds (in[i] inclusive, in[i-1] exclusive; int + wraps the same way on both
 * sides), so the first i where that fails is the first wrong element, and out[i-1] plus that
 * element is what it should be. One read of the input and one of the output (a reference scan
 * and a comparison with it read and wrote about four times as much: at 2^28, 4.3 ms a call,
 * half of a timed case, against the lab's 0.7 ms).
 */
#include "verify.h"
#include "validate.h"
#include "cuda_check.h"
#include "driver.h"
#include "gen.h"
#include "ops.h"
#include "course/10_applications.h"

#ifdef LAB_CPU_MODE
/* CPU mode runs every thread of a launch as a fiber of its own, which costs far more than these
 * loops' work; none of them has a barrier, so one thread walks the whole range (the same code,
 * the same answer: each is a grid-stride loop). */
#define VERIFY_THREADS 1
#define VERIFY_MAX_BLOCKS 1
#else
#define VERIFY_THREADS 256
#define VERIFY_MAX_BLOCKS 4096
#endif
#define NONE (~0ull)

/* The verdict fields on the device, each the first bad index (NONE: none). */
enum { V_IN_GUARD, V_IN, V_OUT_FRONT, V_OUT_BACK, V_OUT, V_SUM, V_FIELDS };
/* lab_verify_app's hash sums after the fields: the input's and the output's, two salts each */
#define H_IN_A (V_FIELDS + 0)
#define H_IN_B (V_FIELDS + 1)
#define H_OUT_A (V_FIELDS + 2)
#define H_OUT_B (V_FIELDS + 3)
#define APP_WORDS (V_FIELDS + 4)

static unsigned verify_blocks(size_t work)
{
    size_t b = CEIL_DIV(work, (size_t)VERIFY_THREADS);
    return (unsigned)(b == 0 ? 1 : b > VERIFY_MAX_BLOCKS ? VERIFY_MAX_BLOCKS : b);
}

/* ---- writing inputs and outputs ------------------------------------------------ */

/* The seed of a call, kept on the device. secret: mixed with the GPU's clocks, so that no host
 * memory ever holds it (a lab reading the harness's memory cannot make the input itself). */
__global__ void set_seed_kernel(uint64_t *d_seed, uint64_t seed, int secret)
{
#ifdef LAB_CPU_MODE
    (void)secret; /* CPU mode has no GPU clocks; it grades correctness, not trust */
    *d_seed = seed;
#else
    uint64_t timer = 0;
    if (secret)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer));
    *d_seed = secret ? lab_mix64(seed ^ timer, (uint64_t)clock64()) : seed;
#endif
}

__global__ void gen_input_kernel(int *base, size_t front, size_t n, size_t back, int dist,
                                 const uint64_t *d_seed)
{
    const uint64_t seed = *d_seed;
    const size_t total = front + n + back, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        if (i < front)
            base[i] = lab_canary_value(i);
        else if (i < front + n)
            base[i] = lab_input_value(seed, dist, i - front);
        else
            base[i] = lab_canary_value(i - front - n);
    }
}

__global__ void prep_output_kernel(int *base, size_t front, size_t n, size_t back)
{
    const size_t total = front + n + back, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        if (i < front)
            base[i] = lab_canary_value(i);
        else if (i < front + n)
            base[i] = LAB_POISON;
        else
            base[i] = lab_canary_value(i - front - n);
    }
}

extern "C" void lab_gen_input(int *d_base, size_t front, size_t n, size_t back, int dist,
                              uint64_t seed, int secret, uint64_t *d_seed)
{
    set_seed_kernel<<<1, 1>>>(d_seed, seed, secret);
    LAUNCH_CHECK();
    gen_input_kernel<<<verify_blocks(front + n + back), VERIFY_THREADS>>>(d_base, front, n, back,
                                                                          dist, d_seed);
    LAUNCH_CHECK();
}

extern "C" void lab_prep_output(int *d_base, size_t front, size_t n, size_t back)
{
    prep_output_kernel<<<verify_blocks(front + n + back), VERIFY_THREADS>>>(d_base, front, n, back);
    LAUNCH_CHECK();
}

/* ---- checking one call ------------------------------------------------------------ */

__global__ void check_input_kernel(const int *base, size_t front, size_t n, size_t back, int dist,
                                   const uint64_t *d_seed, unsigned long long *v)
{
    const uint64_t seed = *d_seed;
    const size_t total = front + n + back, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        if (i < front) {
            if (base[i] != lab_canary_value(i))
                atomicMin(&v[V_IN_GUARD], (unsigned long long)i);
        } else if (i < front + n) {
            if (base[i] != lab_input_value(seed, dist, i - front))
                atomicMin(&v[V_IN], (unsigned long long)(i - front));
        } else if (base[i] != lab_canary_value(i - front - n)) {
            atomicMin(&v[V_IN_GUARD], (unsigned long long)(i - front));
        }
    }
}

/* What out[i] of a right scan is, given out[i-1] (ignored for i = 0): LAB_HD, so the message's
 * expected value on the host is the kernel's own. */
LAB_HD static inline unsigned scan_step(unsigned before, uint64_t seed, int dist, size_t i,
                                        int inclusive)
{
    const unsigned add = inclusive ? (unsigned)lab_input_value(seed, dist, i)
                         : i       ? (unsigned)lab_input_value(seed, dist, i - 1)
                                   : 0u;
    return (i ? before : 0u) + add;
}

__global__ void check_output_kernel(const int *base, size_t front, size_t n, size_t back, int dist,
                                    const uint64_t *d_seed, int inclusive, unsigned long long *v)
{
    const uint64_t seed = *d_seed;
    const size_t total = front + n + back, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        if (i < front) {
            if (base[i] != lab_canary_value(i))
                atomicMin(&v[V_OUT_FRONT], (unsigned long long)(front - i)); /* nearest first */
        } else if (i < front + n) {
            const size_t k = i - front;
            const unsigned before = k ? (unsigned)base[i - 1] : 0u;
            if ((unsigned)base[i] != scan_step(before, seed, dist, k, inclusive))
                atomicMin(&v[V_OUT], (unsigned long long)k);
        } else if (base[i] != lab_canary_value(i - front - n)) {
            atomicMin(&v[V_OUT_BACK], (unsigned long long)(i - front - n));
        }
    }
}

/* A tile's total (elements first..last) from the output, what it must be once the output is
 * right (a wrong output is reported before any total, verdict.c), from the words it takes:
 * out[last], out[first - 1] (0 for the first tile), out[first] and in[last]. LAB_HD, as scan_step.
 */
LAB_HD static inline unsigned tile_total(unsigned at_last, unsigned before_first, unsigned at_first,
                                         unsigned in_last, int inclusive)
{
    return inclusive ? at_last - before_first : at_last + in_last - at_first;
}

__global__ void check_sums_kernel(const int *sums, size_t tiles, size_t tile, size_t n,
                                  const int *out, int dist, const uint64_t *d_seed, int inclusive,
                                  unsigned long long *v)
{
    const uint64_t seed = *d_seed;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < tiles; t += stride) {
        const size_t first = t * tile, last = (first + tile < n ? first + tile : n) - 1;
        const unsigned total = tile_total(
            (unsigned)out[last], first ? (unsigned)out[first - 1] : 0u, (unsigned)out[first],
            (unsigned)lab_input_value(seed, dist, last), inclusive);
        if ((unsigned)sums[t] != total)
            atomicMin(&v[V_SUM], (unsigned long long)t);
    }
}

extern "C" size_t lab_verify_temp_bytes(size_t n)
{
    return 256 + lab_align256((n ? n : 1) * sizeof(int)) + ref_scan_temp_bytes(n);
}

/* One int of device memory, read back (for the message only). */
static long long read_word(const int *d)
{
    int h = 0;
    CUDA_CHECK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
    return h;
}

static long long field(const unsigned long long *h, int f)
{
    return h[f] == NONE ? -1 : (long long)h[f];
}

extern "C" int lab_verify_call(const int *d_in_base, const int *d_out_base, size_t front_in,
                               size_t front_out, size_t n, size_t back_in, size_t back_out,
                               int dist, const uint64_t *d_seed, scan_type type, const int *d_sums,
                               size_t tile, void *d_temp, lab_call_verdict *v)
{
    unsigned long long *d_v = (unsigned long long *)d_temp, h[V_FIELDS];
    const int *d_in = d_in_base + front_in, *d_out = d_out_base + front_out;
    const int inclusive = type == SCAN_INCLUSIVE;
    uint64_t seed = 0;

    CUDA_CHECK(cudaMemset(d_v, 0xFF, V_FIELDS * sizeof(*d_v)));
    check_input_kernel<<<verify_blocks(front_in + n + back_in), VERIFY_THREADS>>>(
        d_in_base, front_in, n, back_in, dist, d_seed, d_v);
    LAUNCH_CHECK();
    check_output_kernel<<<verify_blocks(front_out + n + back_out), VERIFY_THREADS>>>(
        d_out_base, front_out, n, back_out, dist, d_seed, inclusive, d_v);
    LAUNCH_CHECK();
    if (d_sums && n) {
        const size_t tiles = CEIL_DIV(n, tile);
        check_sums_kernel<<<verify_blocks(tiles), VERIFY_THREADS>>>(d_sums, tiles, tile, n, d_out,
                                                                    dist, d_seed, inclusive, d_v);
        LAUNCH_CHECK();
    }
    CUDA_CHECK(cudaMemcpy(h, d_v, sizeof(h), cudaMemcpyDeviceToHost));
    /* read only now, for the messages: the lab's call is over */
    CUDA_CHECK(cudaMemcpy(&seed, d_seed, sizeof(seed), cudaMemcpyDeviceToHost));

    v->in_guard = field(h, V_IN_GUARD);
    v->in = field(h, V_IN);
    v->out_front = field(h, V_OUT_FRONT);
    v->out_back = field(h, V_OUT_BACK);
    v->out = field(h, V_OUT);
    v->sum = field(h, V_SUM);
    v->expected = v->got = 0;
    if (v->out_front >= 0) { /* the values for the first field set, in the verdict's order */
        const size_t i = front_out - (size_t)v->out_front;
        v->expected = lab_canary_value(i);
        v->got = read_word(d_out_base + i);
    } else if (v->out_back >= 0) {
        v->expected = lab_canary_value((uint64_t)v->out_back);
        v->got = read_word(d_out_base + front_out + n + v->out_back);
    } else if (v->in_guard >= 0) {
        /* no values: the message names the guard only */
    } else if (v->in >= 0) {
        v->expected = lab_input_value(seed, dist, (uint64_t)v->in);
        v->got = read_word(d_in + v->in);
    } else if (v->out >= 0) { /* out[0..k) are right: k is the first wrong element */
        const size_t k = (size_t)v->out;
        const unsigned before = k ? (unsigned)read_word(d_out + k - 1) : 0u;
        v->expected = (int)scan_step(before, seed, dist, k, inclusive);
        v->got = read_word(d_out + k);
    } else if (v->sum >= 0) { /* the output is right: the totals follow from it */
        const size_t first = (size_t)v->sum * tile;
        const size_t last = (first + tile < n ? first + tile : n) - 1;
        v->expected = (int)tile_total((unsigned)read_word(d_out + last),
                                      first ? (unsigned)read_word(d_out + first - 1) : 0u,
                                      (unsigned)read_word(d_out + first),
                                      (unsigned)lab_input_value(seed, dist, last), inclusive);
        v->got = read_word(d_sums + v->sum);
    }
    for (int f = 0; f < V_FIELDS; f++)
        if (h[f] != NONE)
            return 1;
    return 0;
}

/* ---- lab 10's sort and compaction ----------------------------------------------------- */

/* The output's guard words only (its data are checked by the application's own kernel). */
__global__ void check_out_guards_kernel(const int *base, size_t front, size_t n, size_t back,
                                        unsigned long long *v)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < front + back; i += stride) {
        if (i < front) {
            if (base[i] != lab_canary_value(i))
                atomicMin(&v[V_OUT_FRONT], (unsigned long long)(front - i));
        } else if (base[front + n + (i - front)] != lab_canary_value(i - front)) {
            atomicMin(&v[V_OUT_BACK], (unsigned long long)(i - front));
        }
    }
}

/* Ascending as unsigned, and each thread's share of the four hash sums (lab_sort_matches). */
__global__ void check_sorted_kernel(const int *in, const int *out, size_t n, unsigned long long *v)
{
    unsigned long long ia = 0, ib = 0, oa = 0, ob = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint32_t key = (uint32_t)out[i];
        if (i > 0 && key < (uint32_t)out[i - 1])
            atomicMin(&v[V_OUT], (unsigned long long)i);
        ia += lab_mix64(LAB_SORT_SALT_A, (uint32_t)in[i]);
        ib += lab_mix64(LAB_SORT_SALT_B, (uint32_t)in[i]);
        oa += lab_mix64(LAB_SORT_SALT_A, key);
        ob += lab_mix64(LAB_SORT_SALT_B, key);
    }
    atomicAdd(&v[H_IN_A], ia); /* sums mod 2^64: the order of the additions does not matter */
    atomicAdd(&v[H_IN_B], ib);
    atomicAdd(&v[H_OUT_A], oa);
    atomicAdd(&v[H_OUT_B], ob);
}

__global__ void keep_flags_kernel(const int *in, size_t n, int *flags)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        flags[i] = APPS_KEEP(in[i]) ? 1 : 0;
}

/* pos: the exclusive scan of the keep flags. Kept element i belongs at out[pos[i]]; past the
 * count the output is still poison; the count is *d_count. */
__global__ void check_compact_kernel(const int *in, const int *out, const int *pos, size_t n,
                                     const size_t *d_count, unsigned long long *v)
{
    const size_t kept = n ? (size_t)(unsigned)pos[n - 1] + (APPS_KEEP(in[n - 1]) ? 1 : 0) : 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (first == 0 && *d_count != kept)
        atomicMin(&v[V_SUM], 0ull); /* the count (no tile totals here: the field is free) */
    for (size_t i = first; i < n; i += stride) {
        if (APPS_KEEP(in[i]) && out[(unsigned)pos[i]] != in[i])
            atomicMin(&v[V_OUT], (unsigned long long)(unsigned)pos[i]);
        if (i >= kept && out[i] != LAB_POISON)
            atomicMin(&v[V_OUT], (unsigned long long)i);
    }
}

extern "C" int lab_verify_app(int is_sort, const int *d_in_base, const int *d_out_base,
                              size_t front_in, size_t front_out, size_t n, size_t back_in,
                              size_t back_out, int dist, const uint64_t *d_seed,
                              const size_t *d_count, void *d_temp)
{
    unsigned long long *d_v = (unsigned long long *)d_temp, h[APP_WORDS];
    int *d_pos = (int *)((char *)d_temp + 256);
    void *d_pos_temp = (char *)d_pos + lab_align256((n ? n : 1) * sizeof(int));
    const int *d_in = d_in_base + front_in, *d_out = d_out_base + front_out;

    CUDA_CHECK(cudaMemset(d_v, 0xFF, V_FIELDS * sizeof(*d_v)));
    CUDA_CHECK(cudaMemset(d_v + V_FIELDS, 0, (APP_WORDS - V_FIELDS) * sizeof(*d_v)));
    check_input_kernel<<<verify_blocks(front_in + n + back_in), VERIFY_THREADS>>>(
        d_in_base, front_in, n, back_in, dist, d_seed, d_v);
    LAUNCH_CHECK();
    check_out_guards_kernel<<<verify_blocks(front_out + back_out), VERIFY_THREADS>>>(
        d_out_base, front_out, n, back_out, d_v);
    LAUNCH_CHECK();
    if (is_sort) {
        check_sorted_kernel<<<verify_blocks(n), VERIFY_THREADS>>>(d_in, d_out, n, d_v);
        LAUNCH_CHECK();
    } else {
        keep_flags_kernel<<<verify_blocks(n), VERIFY_THREADS>>>(d_in, n, d_pos);
        LAUNCH_CHECK();
        if (n)
            ref_exclusive_scan_inplace(d_pos, n, d_pos_temp);
        check_compact_kernel<<<verify_blocks(n), VERIFY_THREADS>>>(d_in, d_out, d_pos, n, d_count,
                                                                   d_v);
        LAUNCH_CHECK();
    }
    CUDA_CHECK(cudaMemcpy(h, d_v, sizeof(h), cudaMemcpyDeviceToHost));
    for (int f = 0; f < V_FIELDS; f++)
        if (h[f] != NONE)
            return 1;
    return h[H_IN_A] != h[H_OUT_A] || h[H_IN_B] != h[H_OUT_B];
}
