/* harness.c — one lab case end to end (see harness.h).
 *
 * Calls: a run makes `calls` checked calls of the lab's code, then, when timed, `warmup` and
 * `reps` more. Every call goes through call_device (or call_host) the same way: a new input
 * (call k has its own seed; call 0 the case's), canary words around input and output, the
 * output poisoned, L2 flushed, the device idle; the lab's code; the device synchronised (every
 * stream, so work the lab hides on another stream is waited for and counted); then the call is
 * checked — call 0 of an untimed run on the host against the CPU reference, every other call on
 * the GPU against a known-good scan (verify.cu). Calls after the first scan inputs drawn on the
 * GPU from a secret seed. A lab therefore cannot tell a timed call from a checked one, and a
 * remembered, skipped or host-made answer is wrong. Host labs (01): every call on the host.
 *
 * Buffers: input and output each get LAB_GUARD_WORDS canary words before and after, the data
 * starting offset_in / offset_out words (0..3) past the 16-byte-aligned start, so a write
 * anywhere outside out[0..n) is named and unaligned pointers are exercised.
 *
 * Timing: CUDA events around [lab call + cudaDeviceSynchronize]; tile labs also time the tile
 * pass alone (the carries are the harness's). The copy baseline is timed the same way. Medians.
 *
 * Graded runs (--sandbox) enter the seccomp sandbox (sandbox.h) after all of the harness's
 * set-up and before the lab's first call; allocations the lab makes are counted (the leak check).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "harness.h"
#include "cuda_check.h"
#include "driver.h"
#include "gen.h"
#include "ops.h"
#include "sandbox.h"
#include "verify.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef LAB_CPU_MODE
#define LAB_MODE_NAME LAB_MODE_CPU
#else
#define LAB_MODE_NAME LAB_MODE_GPU
#endif

/* CPU mode counts the shared-memory bank conflicts of the lab's first call and prints them after
 * the result line (common/cpu/banks.cpp); not in a graded run or with --json. */
static int g_count_banks;

static void report_msg(lab_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
}

/* Puts "call k of K: " before the message of a run of several calls. */
static void prefix_call(lab_report *r, int k, int total)
{
    char tmp[LAB_MESSAGE_BYTES];
    if (total <= 1 || !r->message[0])
        return;
    snprintf(tmp, sizeof(tmp), "call %d of %d: %.4000s", k + 1, total, r->message);
    memcpy(r->message, tmp, sizeof(tmp));
}

int lab_have_device(char *why, size_t whylen)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        if (why)
            snprintf(why, whylen, "no CUDA device: %s",
                     err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports 0 devices");
        cudaGetLastError(); /* clear the sticky error so later calls are not confused */
        return 0;
    }
    return 1;
}

/* ---- the lab's allocations (the leak check) ---------------------------------------- */
/* The build renames the lab object's cudaMalloc and cudaFree to these (Makefile: objcopy), so
 * every buffer the lab's code allocates is seen. */

#define TRACKED_MAX 4096
static struct {
    void *p;
    size_t bytes;
} g_tracked[TRACKED_MAX];
static size_t g_live_count, g_live_bytes;

cudaError_t lab_wrap_cudaMalloc(void **p, size_t bytes)
{
    cudaError_t err = cudaMalloc(p, bytes);
    if (err != cudaSuccess || !p || !*p)
        return err;
    g_live_count++;
    g_live_bytes += bytes;
    for (size_t i = 0; i < TRACKED_MAX; i++)
        if (!g_tracked[i].p) {
            g_tracked[i].p = *p;
            g_tracked[i].bytes = bytes;
            break;
        }
    return err;
}

cudaError_t lab_wrap_cudaFree(void *p)
{
    for (size_t i = 0; p && i < TRACKED_MAX; i++)
        if (g_tracked[i].p == p) {
            g_live_count--;
            g_live_bytes -= g_tracked[i].bytes;
            g_tracked[i].p = NULL;
            break;
        }
    return cudaFree(p);
}

/* After every checked call but the first: live allocations that grew since call 1 are a leak. */
static lab_status check_leak(size_t count_after_first, size_t bytes_after_first, int calls,
                             lab_report *r)
{
    if (g_live_count <= count_after_first || calls < 2)
        return ST_OK;
    r->status = ST_LEAK;
    const size_t leaked = g_live_count - count_after_first;
    report_msg(r,
               "device memory leak: in the %d call%s after the first, the lab's code allocated "
               "%zu buffer%s (%zu bytes) with cudaMalloc that it never freed (free what each call "
               "allocates, or use the scratch the harness passes in)",
               calls - 1, calls - 1 == 1 ? "" : "s", leaked, leaked == 1 ? "" : "s",
               g_live_bytes - bytes_after_first);
    return r->status;
}

/* ---- sandbox --------------------------------------------------------------------------- */

/* Enters the sandbox for a run that asks for it; the environment is emptied first, so nothing
 * in it (a tool's variables, say) tells the lab what kind of run this is. */
static void enter_sandbox(const lab_options *o, lab_report *r)
{
    extern char **environ;
    static int entered; /* a graded process of several cases enters it once, for good */
    char why[200];
    int under_tool = 0;
    if (!o->sandbox)
        return;
    if (entered) {
        r->sandbox = 1;
        return;
    }
    for (char **e = environ; e && *e; e++) /* compute-sanitizer's injection names itself */
        if (strstr(*e, "sanitizer") || strstr(*e, "Sanitizer"))
            under_tool = 1;
    /* measuring what the runtime opens (grader/tools/measure_opens.sh) */
    const char *trace = getenv("LAB_SANDBOX_TRACE_OPEN");
    lab_sandbox_trace_opens(trace && strcmp(trace, "1") == 0);
    clearenv();
    if (lab_sandbox_enter(under_tool, why, sizeof(why)) == 0)
        r->sandbox = entered = 1;
    else
        fprintf(stderr, "harness: %s\n", why);
}

/* ---- layout and validation on the host -------------------------------------------- */

/* One buffer: `front` canary words, n data words, `back` canary words. */
typedef struct {
    size_t front, n, back;
} layout;

/* Words of one guarded buffer for up to cap elements at any offset. */
static size_t layout_words(size_t cap)
{
    return 2 * LAB_GUARD_WORDS + LAB_MAX_OFFSET + cap;
}

static layout make_layout(size_t cap, size_t n, int offset)
{
    layout l;
    l.front = LAB_GUARD_WORDS + (size_t)offset;
    l.n = n;
    l.back = layout_words(cap) - l.front - n;
    return l;
}

/* Index of the first i with in[i] != h_in[i] + c (wrapping), or n. */
static size_t first_bad_input(const int *in, const int *h_in, size_t n, unsigned c)
{
    if (c == 0)
        return lab_first_mismatch(in, h_in, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned)in[i] != (unsigned)h_in[i] + c)
            return i;
    return n;
}

/* The answer at i when every input element is c more than h_in's: h_ref[i] plus c times the
 * number of elements summed (i + 1 inclusive, i exclusive), wrapping. */
static int shifted_ref(const int *h_ref, size_t i, unsigned c, scan_type type)
{
    return (int)((unsigned)h_ref[i] + c * (unsigned)(type == SCAN_INCLUSIVE ? i + 1 : i));
}

/* Index of the first wrong output element, or n. */
static size_t first_bad_output(const int *out, const int *h_ref, size_t n, unsigned c,
                               scan_type type)
{
    if (c == 0)
        return lab_first_mismatch(out, h_ref, n);
    for (size_t i = 0; i < n; i++)
        if (out[i] != shifted_ref(h_ref, i, c, type))
            return i;
    return n;
}

/* A verdict with nothing found. */
static lab_call_verdict no_verdict(void)
{
    lab_call_verdict v;
    v.out_front = v.out_back = v.in_guard = v.in = v.out = v.sum = -1;
    v.expected = v.got = 0;
    return v;
}

/* Why a wrong value looks the way it does: never written (the harness's poison), or in CPU mode
 * within a little of 1 to 4 times the fill of memory no thread wrote (0xCB bytes: one or a few
 * such slots summed into an answer); "" otherwise. */
static const char *wrong_value_hint(long long got)
{
    if (got == LAB_POISON)
        return " (never written)";
#ifdef LAB_CPU_MODE
    for (unsigned k = 1; k <= 4; k++) {
        const int32_t off = (int32_t)((uint32_t)got - k * 0xCBCBCBCBu);
        if (off > -(1 << 16) && off < (1 << 16))
            return " (near CPU mode's fill 0xCBCBCBCB of memory no thread wrote: shared memory "
                   "read "
                   "before any thread wrote it, a missing barrier or a wrong index?)";
    }
#endif
    return "";
}

/* Sets r's status, message and mismatch from a verdict (of the host's check or the GPU's). */
static lab_status report_verdict(const lab_info *lab, const lab_call_verdict *v, size_t n,
                                 lab_report *r)
{
    if (v->out_front >= 0) {
        r->status = ST_OUT_OF_BOUNDS;
        report_msg(r, "wrote before the output: out[-%lld] changed (n=%zu)", v->out_front, n);
    } else if (v->out_back >= 0) {
        r->status = ST_OUT_OF_BOUNDS;
        report_msg(r, "wrote past the end of the output: out[%zu] changed (n=%zu)",
                   n + (size_t)v->out_back, n);
    } else if (v->in_guard >= 0) {
        r->status = ST_INPUT_MODIFIED;
        report_msg(r, "wrote into the guard words around the input (n=%zu)", n);
        return r->status;
    } else if (v->in >= 0) {
        r->status = ST_INPUT_MODIFIED;
        report_msg(r, "modified the input: in[%lld] was %lld, is now %lld (n=%zu)", v->in,
                   v->expected, v->got, n);
    } else if (v->out >= 0) {
        r->status = ST_WRONG;
        report_msg(r, "out[%lld] expected %lld, got %lld%s (n=%zu, %s scan%s)", v->out, v->expected,
                   v->got, wrong_value_hint(v->got), n, lab_scan_type_name(lab->type),
                   lab->shape == LAB_TILE && (size_t)v->out >= lab->tile ? ", past the first tile"
                                                                         : "");
    } else if (v->sum >= 0) {
        const size_t first = (size_t)v->sum * lab->tile;
        const size_t last = (first + lab->tile < n ? first + lab->tile : n) - 1;
        r->status = ST_WRONG;
        report_msg(r,
                   "tile_sums[%lld] expected %lld, got %lld%s: the total of tile %lld "
                   "(elements %zu..%zu) (n=%zu)",
                   v->sum, v->expected, v->got, wrong_value_hint(v->got), v->sum, first, last, n);
        return r->status;
    } else {
        return ST_OK;
    }
    r->has_mismatch = 1;
    r->mismatch_index = v->out_front >= 0  ? -v->out_front
                        : v->out_back >= 0 ? (long long)n + v->out_back
                        : v->in >= 0       ? v->in
                                           : v->out;
    r->expected = v->expected;
    r->got = v->got;
    return r->status;
}

/* Checks guards, input and output (all on the host) of a call whose input was h_in + c (c = 0:
 * h_in itself) and whose answer is therefore h_ref shifted (shifted_ref); reports the first
 * thing wrong through report_verdict, as the GPU's check does. */
static lab_status validate(const lab_info *lab, const int *h_in, const int *h_ref, unsigned c,
                           const int *in_base, layout li, const int *out_base, layout lo,
                           lab_report *r)
{
    const size_t n = lo.n;
    lab_call_verdict v = no_verdict();
    size_t k;

    if ((k = lab_canary_check(out_base, lo.front)) < lo.front) {
        v.out_front = (long long)(lo.front - k);
        v.expected = lab_canary_word(k);
        v.got = out_base[k];
    } else if ((k = lab_canary_check(out_base + lo.front + n, lo.back)) < lo.back) {
        v.out_back = (long long)k;
        v.expected = lab_canary_word(k);
        v.got = out_base[lo.front + n + k];
    } else if (lab_canary_check(in_base, li.front) < li.front ||
               lab_canary_check(in_base + li.front + n, li.back) < li.back) {
        v.in_guard = 0;
    } else if ((k = first_bad_input(in_base + li.front, h_in, n, c)) < n) {
        v.in = (long long)k;
        v.expected = (int)((unsigned)h_in[k] + c);
        v.got = in_base[li.front + k];
    } else if ((k = first_bad_output(out_base + lo.front, h_ref, n, c, lab->type)) < n) {
        v.out = (long long)k;
        v.expected = shifted_ref(h_ref, k, c, lab->type);
        v.got = out_base[lo.front + k];
    }
    return report_verdict(lab, &v, n, r);
}

/* Tile labs: sums[t] must be the total of tile t of in[0..n), the last, ragged tile too. */
static lab_status validate_sums(const lab_info *lab, const int *h_in, size_t n, const int *sums,
                                lab_report *r)
{
    const size_t tiles = CEIL_DIV(n, lab->tile);
    lab_call_verdict v = no_verdict();
    for (size_t t = 0; t < tiles && v.sum < 0; t++) {
        const size_t first = t * lab->tile, end = first + lab->tile < n ? first + lab->tile : n;
        unsigned total = 0;
        for (size_t i = first; i < end; i++)
            total += (unsigned)h_in[i];
        if ((unsigned)sums[t] != total) {
            v.sum = (long long)t;
            v.expected = (int)total;
            v.got = sums[t];
        }
    }
    return report_verdict(lab, &v, n, r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The calls of a run: `calls` checked ones, then warmup + reps when timed. */
static int total_calls(const lab_options *o)
{
    return o->calls + (o->reps > 0 ? o->warmup + o->reps : 0);
}

/* Timings of the timed calls, medians into r. */
typedef struct {
    double *scan, *tile, *copy;
    int count;
} timings;

static int timings_alloc(timings *t, int reps, lab_report *r)
{
    size_t k = reps > 0 ? (size_t)reps : 1;
    t->count = 0;
    t->scan = malloc(k * sizeof(double));
    t->tile = malloc(k * sizeof(double));
    t->copy = malloc(k * sizeof(double));
    if (t->scan && t->tile && t->copy)
        return 0;
    r->status = ST_NO_MEMORY;
    report_msg(r, "cannot allocate host memory for timings");
    return -1;
}

static void timings_finish(timings *t, const lab_info *lab, lab_report *r)
{
    if (r->status == ST_OK && t->count > 0) {
        r->reps = t->count;
        r->ms = lab_median(t->scan, (size_t)t->count);
        r->memcpy_ms = lab_median(t->copy, (size_t)t->count);
        if (lab->shape == LAB_TILE)
            r->tile_ms = lab_median(t->tile, (size_t)t->count);
    }
    free(t->scan);
    free(t->tile);
    free(t->copy);
}

/* The case's own input and its CPU reference (call 0's; every call's n is a prefix of them). */
typedef struct {
    int *in, *ref;
} host_case;

static void make_host_case(host_case *hc, const lab_info *lab, const lab_options *o, size_t n,
                           uint64_t seed)
{
    lab_fill_input(hc->in, n, o->dist, seed);
    lab_reference_scan(hc->in, hc->ref, n, lab->type);
}

/* Host memory for a large array, in huge pages where the kernel offers them, so that two runs
 * of the same host lab see the same TLB behaviour (their times are compared). Never NULL for
 * a size of 0. */
static void *lab_host_alloc(size_t bytes)
{
    void *p = NULL;
    const size_t align = (size_t)2 << 20;
    if (bytes < align)
        return malloc(bytes ? bytes : 1);
    if (posix_memalign(&p, align, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

/* ---- host labs (01) ------------------------------------------------------------------ */

typedef struct {
    int *in, *out; /* guarded, cap elements */
    void *temp;
    size_t cap, temp_bytes, temp_n;
} host_rig;

/* One call of a host lab. Call k's input is call 0's with a constant c added to every element
 * (c = 0 for call 0), so every call scans a new input yet its answer follows from the reference
 * without a new serial scan (shifted_ref): the checks stay cheap next to the lab's own scan. */
static lab_status call_host(const lab_info *lab, const lab_variant *v, const lab_options *o,
                            host_rig *g, const host_case *first, size_t n, unsigned c, int timed,
                            timings *t, lab_report *r)
{
    layout li = make_layout(g->cap, n, o->offset_in), lo = make_layout(g->cap, n, o->offset_out);
    int *in = g->in + li.front;
    lab_canary_fill(g->in, li.front);
    for (size_t i = 0; i < n; i++)
        in[i] = (int)((unsigned)first->in[i] + c);
    lab_canary_fill(g->in + li.front + n, li.back);
    lab_canary_fill(g->out, lo.front);
    memset(g->out + lo.front, LAB_POISON_BYTE, n * sizeof(int));
    lab_canary_fill(g->out + lo.front + n, lo.back);
    if (g->temp_bytes && g->temp_n != n) { /* zero-filled for each new n (lab.h) */
        memset(g->temp, 0, g->temp_bytes);
        g->temp_n = n;
    }

    double t0 = now_ms();
    lab_result res = v->scan(in, g->out + lo.front, n, g->temp);
    double t1 = now_ms();
    if (res == LAB_NOT_IMPLEMENTED) {
        r->status = ST_NOT_IMPLEMENTED;
        report_msg(r, "variant %s returns LAB_NOT_IMPLEMENTED: write its TODO(student) parts",
                   v->name);
        return r->status;
    }
    if (validate(lab, first->in, first->ref, c, g->in, li, g->out, lo, r) != ST_OK)
        return r->status;
    if (timed) {
        double c0 = now_ms();
        memcpy(g->out + lo.front, in, n * sizeof(int));
        t->copy[t->count] = now_ms() - c0;
        t->scan[t->count] = t1 - t0;
        t->tile[t->count] = 0;
        t->count++;
    }
    return ST_OK;
}

static lab_status run_host(const lab_info *lab, const lab_variant *v, const lab_options *o,
                           const host_case *first, lab_report *r)
{
    host_rig g = {0};
    timings t = {0};
    const int total = total_calls(o);

    r->mode = "host";
    r->device = "CPU (serial)";
    g.cap = lab_max_call_n(o);
    g.temp_bytes = v->temp_bytes ? v->temp_bytes(g.cap) : 0;
    g.temp_n = (size_t)-1;
    g.in = lab_host_alloc(layout_words(g.cap) * sizeof(int));
    g.out = lab_host_alloc(layout_words(g.cap) * sizeof(int));
    g.temp = g.temp_bytes ? lab_host_alloc(g.temp_bytes) : NULL;
    if (!g.in || !g.out || (g.temp_bytes && !g.temp) || timings_alloc(&t, o->reps, r) != 0) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", g.cap);
        goto out_free;
    }
    enter_sandbox(o, r);
    for (int k = 0; k < total; k++) {
        const unsigned c = k == 0 ? 0u : (unsigned)lab_call_seed(o->seed, (unsigned)k);
        r->calls = k + 1;
        if (call_host(lab, v, o, &g, first, lab_call_n(o, k), c, k >= o->calls + o->warmup, &t,
                      r) != ST_OK) {
            prefix_call(r, k, total);
            break;
        }
    }
out_free:
    timings_finish(&t, lab, r);
    free(g.temp);
    free(g.out);
    free(g.in);
    return r->status;
}

/* ---- device labs ------------------------------------------------------------------------ */

/* cudaMalloc that reports an out-of-memory as ST_NO_MEMORY instead of exiting. */
static int try_malloc(void **p, size_t bytes, lab_report *r, const char *what)
{
    cudaError_t err = cudaMalloc(p, bytes ? bytes : 1);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        *p = NULL;
        r->status = ST_NO_MEMORY;
        report_msg(r, "not enough device memory for %s (%zu bytes) at n=%zu", what, bytes, r->n);
        return -1;
    }
    CUDA_CHECK(err);
    return 0;
}

/* Milliseconds between two recorded events. */
static double event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return (double)ms;
}

/* Everything a device run allocates once, sized for its largest n. */
typedef struct {
    size_t cap, words;
    int *d_in, *d_out; /* guarded buffers, layout_words(cap) each */
    void *d_scratch;   /* the lab's scratch (tile labs: tile totals, then the carries' temp) */
    size_t scratch_bytes;
    size_t scratch_n; /* the n the scratch was last zeroed for */
    void *d_verify;   /* verify.cu's temp */
    uint64_t *d_seed; /* the seed of the call's input, on the device only */
    int *d_sums;      /* tile labs: the tile totals as the lab wrote them */
    void *d_flush;    /* written before each call so no call starts with a warm L2 */
    size_t flush_bytes;
    cudaEvent_t ev[3];
    int *h_in, *h_out, *h_sums; /* call 0's buffers read back */
} device_rig;

static int rig_alloc(device_rig *g, const lab_info *lab, const lab_variant *v, size_t cap,
                     lab_report *r)
{
    struct cudaDeviceProp prop;
    size_t free_b = 0, total_b = 0, tiles = lab->shape == LAB_TILE ? CEIL_DIV(cap, lab->tile) : 0;

    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g->cap = cap;
    g->words = layout_words(cap);
    g->scratch_bytes = lab_scratch_bytes(lab, v, cap);
    g->flush_bytes = prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : ((size_t)64 << 20);
    const size_t verify_bytes = lab_verify_temp_bytes(cap);
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double need = 2.0 * (double)g->words * sizeof(int) + (double)g->scratch_bytes +
                  (double)verify_bytes + (double)tiles * sizeof(int) + (double)g->flush_bytes;
    if (need > (double)free_b) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "n=%zu needs %.2f GB of device memory, only %.2f GB is free", cap, need / 1e9,
                   (double)free_b / 1e9);
        return -1;
    }
    g->h_in = malloc(g->words * sizeof(int));
    g->h_out = malloc(g->words * sizeof(int));
    g->h_sums = malloc((tiles ? tiles : 1) * sizeof(int));
    if (!g->h_in || !g->h_out || !g->h_sums) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", cap);
        return -1;
    }
    if (try_malloc((void **)&g->d_in, g->words * sizeof(int), r, "the input") ||
        try_malloc((void **)&g->d_out, g->words * sizeof(int), r, "the output") ||
        (g->scratch_bytes && try_malloc(&g->d_scratch, g->scratch_bytes, r, "the lab's scratch")) ||
        try_malloc(&g->d_verify, verify_bytes, r, "the harness's check") ||
        try_malloc((void **)&g->d_seed, sizeof(uint64_t), r, "the input's seed") ||
        (tiles && try_malloc((void **)&g->d_sums, tiles * sizeof(int), r, "the tile totals")) ||
        try_malloc(&g->d_flush, g->flush_bytes, r, "the L2 flush buffer"))
        return -1;
    for (int e = 0; e < 3; e++)
        CUDA_CHECK(cudaEventCreate(&g->ev[e]));
    g->scratch_n = (size_t)-1;
    return 0;
}

static void rig_free(device_rig *g)
{
    for (int e = 0; e < 3; e++)
        if (g->ev[e])
            cudaEventDestroy(g->ev[e]);
    void *bufs[] = {g->d_flush, g->d_sums, g->d_seed, g->d_verify, g->d_scratch, g->d_out, g->d_in};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        if (bufs[i])
            cudaFree(bufs[i]);
    free(g->h_sums);
    free(g->h_out);
    free(g->h_in);
}

/* Input, guards, poison, scratch and a cold L2 for call k at n; returns with the device idle.
 * Call 0 scans the case's own input (seed: reproducible, checked against the CPU reference);
 * every later call an input drawn on the GPU from a secret seed. */
static void prepare_call(device_rig *g, const lab_info *lab, const lab_variant *v,
                         const lab_options *o, size_t n, uint64_t seed, int k)
{
    layout li = make_layout(g->cap, n, o->offset_in), lo = make_layout(g->cap, n, o->offset_out);
    lab_gen_input(g->d_in, li.front, n, li.back, (int)o->dist, seed, k > 0, g->d_seed);
    lab_prep_output(g->d_out, lo.front, n, lo.back);
    if (g->scratch_bytes && g->scratch_n != n) { /* zero-filled for each new n (lab.h) */
        CUDA_CHECK(cudaMemset(g->d_scratch, 0, lab_scratch_bytes(lab, v, n)));
        g->scratch_n = n;
    }
    if (lab->shape == LAB_TILE && n) /* so a tile total the lab never writes is caught */
        CUDA_CHECK(cudaMemset(g->d_scratch, LAB_POISON_BYTE, CEIL_DIV(n, lab->tile) * sizeof(int)));
    CUDA_CHECK(cudaMemsetAsync(g->d_flush, k & 0xFF, g->flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* Times a device-to-device copy of the same bytes, the same way a call is timed. */
static double time_copy(device_rig *g, const lab_options *o, size_t n)
{
    layout li = make_layout(g->cap, n, o->offset_in), lo = make_layout(g->cap, n, o->offset_out);
    CUDA_CHECK(cudaMemsetAsync(g->d_flush, 0x5A, g->flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
    CUDA_CHECK(cudaMemcpyAsync(g->d_out + lo.front, g->d_in + li.front, n * sizeof(int),
                               cudaMemcpyDeviceToDevice, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
    return event_ms(g->ev[0], g->ev[1]);
}

/* Call 0: read everything back and check it on the host against the CPU reference. */
static lab_status check_on_host(device_rig *g, const lab_info *lab, const lab_options *o,
                                const host_case *hc, size_t n, lab_report *r)
{
    layout li = make_layout(g->cap, n, o->offset_in), lo = make_layout(g->cap, n, o->offset_out);
    const size_t words = li.front + n + li.back;
    CUDA_CHECK(cudaMemcpy(g->h_in, g->d_in, words * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(g->h_out, g->d_out, words * sizeof(int), cudaMemcpyDeviceToHost));
    if (validate(lab, hc->in, hc->ref, 0, g->h_in, li, g->h_out, lo, r) != ST_OK)
        return r->status;
    if (lab->shape == LAB_TILE && n) {
        CUDA_CHECK(cudaMemcpy(g->h_sums, g->d_sums, CEIL_DIV(n, lab->tile) * sizeof(int),
                              cudaMemcpyDeviceToHost));
        return validate_sums(lab, hc->in, n, g->h_sums, r);
    }
    return ST_OK;
}

/* One call of a device lab (see the top of this file). Call 0 is checked on the host against
 * hc when there is one (every untimed run); every other call on the GPU. Timed calls add their
 * times to t. */
static lab_status call_device(device_rig *g, const lab_info *lab, const lab_variant *v,
                              const lab_options *o, const host_case *hc, int k, int timed,
                              timings *t, lab_report *r)
{
    const size_t n = lab_call_n(o, k);
    const uint64_t seed = lab_call_seed(o->seed, (unsigned)k);
    layout li = make_layout(g->cap, n, o->offset_in), lo = make_layout(g->cap, n, o->offset_out);
    const int *d_in = g->d_in + li.front;
    int *d_out = g->d_out + lo.front;
    lab_result res;

    prepare_call(g, lab, v, o, n, seed, k);
    CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
#ifdef LAB_CPU_MODE
    if (k == 0 && g_count_banks)
        lab_cpu_banks_record(1);
#endif
    if (lab->shape == LAB_TILE)
        res = lab_device_tile_pass(lab, v, d_in, d_out, n, g->d_scratch, NULL);
    else
        res = lab_device_scan(lab, v, d_in, d_out, n, g->d_scratch);
#ifdef LAB_CPU_MODE
    lab_cpu_banks_record(0);
#endif
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize()); /* every stream: all of the lab's work is counted */
    CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    if (res == LAB_NOT_IMPLEMENTED) {
        r->status = ST_NOT_IMPLEMENTED;
        report_msg(r, "variant %s returns LAB_NOT_IMPLEMENTED: write its TODO(student) parts",
                   v->name);
        return r->status;
    }
    if (lab->shape == LAB_TILE && n) { /* keep the totals, then the harness's carries */
        const size_t tiles = CEIL_DIV(n, lab->tile);
        CUDA_CHECK(
            cudaMemcpy(g->d_sums, g->d_scratch, tiles * sizeof(int), cudaMemcpyDeviceToDevice));
        lab_device_carries(lab, d_out, n, g->d_scratch);
    }
    CUDA_CHECK(cudaEventRecord(g->ev[2], 0));
    CUDA_CHECK(cudaEventSynchronize(g->ev[2]));
    if (timed) {
        t->scan[t->count] = event_ms(g->ev[0], g->ev[2]);
        t->tile[t->count] = event_ms(g->ev[0], g->ev[1]);
    }

    if (k == 0 && hc) {
        if (check_on_host(g, lab, o, hc, n, r) != ST_OK)
            return r->status;
    } else {
        lab_call_verdict verdict;
        if (lab_verify_call(g->d_in, g->d_out, li.front, lo.front, n, li.back, lo.back,
                            (int)o->dist, g->d_seed, lab->type,
                            lab->shape == LAB_TILE ? g->d_sums : NULL, lab->tile, g->d_verify,
                            &verdict) != 0)
            return report_verdict(lab, &verdict, n, r);
    }
    if (timed) {
        t->copy[t->count] = time_copy(g, o, n);
        t->count++;
    }
    return ST_OK;
}

static lab_status run_device(const lab_info *lab, const lab_variant *v, const lab_options *o,
                             const host_case *first, lab_report *r)
{
    device_rig g = {0};
    timings t = {0};
    static char device_name[256];
    struct cudaDeviceProp prop;
    const int total = total_calls(o);
    size_t count0 = 0, bytes0 = 0;

    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof(device_name), "%s", prop.name);
    r->device = device_name;
    if (rig_alloc(&g, lab, v, lab_max_call_n(o), r) != 0 || timings_alloc(&t, o->reps, r) != 0)
        goto out_free;
    /* the harness's own kernels run once before the sandbox: everything is loaded */
    prepare_call(&g, lab, v, o, lab_call_n(o, 0), o->seed, 0);
    enter_sandbox(o, r);

    for (int k = 0; k < total; k++) {
        r->calls = k + 1;
        if (call_device(&g, lab, v, o, first, k, k >= o->calls + o->warmup, &t, r) != ST_OK) {
            prefix_call(r, k, total);
            break;
        }
        if (k == 0) {
            count0 = g_live_count;
            bytes0 = g_live_bytes;
        }
        if (k == o->calls - 1 && check_leak(count0, bytes0, o->calls, r) != ST_OK)
            break;
    }
out_free:
    timings_finish(&t, lab, r);
    rig_free(&g);
    return r->status;
}

/* ---- other operators (lab 09) and applications (lab 10) -------------------------------------
 * A variant whose op is not LAB_OP_ADD runs here. Every call's input (and segment heads) is made
 * on the host from the call's seed, copied to the device between canary words, and the whole
 * call (output, guards, input, heads) is read back and checked on the host against ops.c's
 * reference: exactly for the int operators, within ops.c's order-independent bound for floats
 * (bit-exact where every order of additions gives the same float); lab 10's outputs
 * by lab_apps_check (a compaction's count too, an 8-byte word the harness poisons before each
 * call). A CSR output has n_rows + 1 words, up to 2n + 2. The timing, the cold L2, the copy
 * baseline, the leak check and the sandbox are the other labs'. */

/* Lab 10's descriptor defines it (common/labs/10_applications.c): which lab its scan ran on, "none"
 * when both returned LAB_NOT_IMPLEMENTED. Weak: NULL in every other lab's binary. */
extern const char *apps_scan_base(void) __attribute__((weak));

typedef struct {
    size_t cap, words;
    int *d_in, *d_heads, *d_out; /* guarded, words each (d_heads: LAB_OP_SEG_ADD only) */
    size_t out_cap, out_words;   /* d_out's largest output and words (CSR: 2 cap + 2) */
    size_t *d_count;             /* LAB_OP_COMPACT: the count */
    void *d_scratch, *d_flush;
    size_t scratch_bytes, scratch_n, flush_bytes;
    cudaEvent_t ev[2];
    int *h_in, *h_heads, *h_out, *h_back, *want; /* h_*: guarded words; want: cap */
    double *want_d, *bound_d;                    /* LAB_OP_FADD: cap each */
} ops_rig;

/* The n a variant's temp_bytes is asked for, for an input of n: the scan's length for CSR. */
static size_t scratch_n(const lab_variant *v, size_t n, lab_dist d)
{
    return v->op == LAB_OP_CSR ? lab_apps_out_len(v->op, n, d) : n;
}

static int ops_alloc(ops_rig *g, const lab_variant *v, size_t cap, lab_report *r)
{
    struct cudaDeviceProp prop;
    const int seg = v->op == LAB_OP_SEG_ADD, fl = v->op == LAB_OP_FADD;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    g->cap = cap;
    g->words = layout_words(cap);
    g->out_cap = v->op == LAB_OP_CSR ? 2 * cap + 2 : cap;
    g->out_words = layout_words(g->out_cap);
    g->scratch_bytes = v->temp_bytes ? v->temp_bytes(g->out_cap) : 0;
    g->flush_bytes = prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : ((size_t)64 << 20);
    g->scratch_n = (size_t)-1;
    const size_t bytes = g->words * sizeof(int), out_bytes = g->out_words * sizeof(int);
    g->h_in = malloc(bytes);
    g->h_heads = seg ? malloc(bytes) : NULL;
    g->h_out = malloc(out_bytes);
    g->h_back = malloc(out_bytes > bytes ? out_bytes : bytes);
    g->want = malloc(g->out_cap * sizeof(int) + sizeof(int));
    g->want_d = fl ? malloc((cap ? cap : 1) * sizeof(double)) : NULL;
    g->bound_d = fl ? malloc((cap ? cap : 1) * sizeof(double)) : NULL;
    if (!g->h_in || (seg && !g->h_heads) || !g->h_out || !g->h_back || !g->want ||
        (fl && (!g->want_d || !g->bound_d))) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", cap);
        return -1;
    }
    if (try_malloc((void **)&g->d_in, bytes, r, "the input") ||
        (seg && try_malloc((void **)&g->d_heads, bytes, r, "the segment heads")) ||
        try_malloc((void **)&g->d_out, out_bytes, r, "the output") ||
        (v->op == LAB_OP_COMPACT &&
         try_malloc((void **)&g->d_count, sizeof(size_t), r, "the compaction's count")) ||
        (g->scratch_bytes && try_malloc(&g->d_scratch, g->scratch_bytes, r, "the lab's scratch")) ||
        try_malloc(&g->d_flush, g->flush_bytes, r, "the L2 flush buffer"))
        return -1;
    for (int e = 0; e < 2; e++)
        CUDA_CHECK(cudaEventCreate(&g->ev[e]));
    return 0;
}

static void ops_free(ops_rig *g)
{
    for (int e = 0; e < 2; e++)
        if (g->ev[e])
            cudaEventDestroy(g->ev[e]);
    void *d[] = {g->d_flush, g->d_scratch, g->d_count, g->d_out, g->d_heads, g->d_in};
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        if (d[i])
            cudaFree(d[i]);
    void *h[] = {g->bound_d, g->want_d, g->want, g->h_back, g->h_out, g->h_heads, g->h_in};
    for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++)
        free(h[i]);
}

/* Canary words around data[0..n) of a guarded host buffer laid out as l. */
static void guard_host(int *base, layout l)
{
    lab_canary_fill(base, l.front);
    lab_canary_fill(base + l.front + l.n, l.back);
}

/* Call k's input, heads and poisoned output, made on the host and copied to the device; the
 * scratch zeroed for a new n; L2 flushed. Returns with the device idle. */
static void ops_prepare(ops_rig *g, const lab_variant *v, const lab_options *o, size_t n,
                        uint64_t seed, int k, layout li, layout lo)
{
    const size_t in_words = li.front + n + li.back, out_words = lo.front + lo.n + lo.back;
    lab_ops_fill(v->op, g->h_in + li.front, g->h_heads ? g->h_heads + li.front : NULL, n, o->dist,
                 seed);
    guard_host(g->h_in, li);
    CUDA_CHECK(cudaMemcpy(g->d_in, g->h_in, in_words * sizeof(int), cudaMemcpyHostToDevice));
    if (g->h_heads) {
        guard_host(g->h_heads, li);
        CUDA_CHECK(
            cudaMemcpy(g->d_heads, g->h_heads, in_words * sizeof(int), cudaMemcpyHostToDevice));
    }
    memset(g->h_out + lo.front, LAB_POISON_BYTE, lo.n * sizeof(int));
    guard_host(g->h_out, lo);
    CUDA_CHECK(cudaMemcpy(g->d_out, g->h_out, out_words * sizeof(int), cudaMemcpyHostToDevice));
    if (g->d_count)
        CUDA_CHECK(cudaMemset(g->d_count, 0xFF, sizeof(size_t)));
    const size_t sn = scratch_n(v, n, o->dist);
    if (g->scratch_bytes && g->scratch_n != sn) {
        CUDA_CHECK(cudaMemset(g->d_scratch, 0, v->temp_bytes(sn)));
        g->scratch_n = sn;
    }
    CUDA_CHECK(cudaMemsetAsync(g->d_flush, k & 0xFF, g->flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* A guarded device buffer read back must equal the host's copy (the input or the heads). */
static size_t ops_first_changed(ops_rig *g, const int *d_base, const int *h_base, layout l)
{
    const size_t words = l.front + l.n + l.back;
    CUDA_CHECK(cudaMemcpy(g->h_back, d_base, words * sizeof(int), cudaMemcpyDeviceToHost));
    return lab_first_mismatch(g->h_back, h_base, words);
}

/* Reads call k back and checks it on the host: output guards, input and heads unchanged, then
 * the values against the reference. */
/* Lab 10: the output (and count) against lab_apps_check. */
static lab_status apps_check(ops_rig *g, const lab_variant *v, const lab_options *o, size_t n,
                             layout li, layout lo, lab_report *r)
{
    size_t count = 0;
    if (g->d_count)
        CUDA_CHECK(cudaMemcpy(&count, g->d_count, sizeof(count), cudaMemcpyDeviceToHost));
    /* a sort is checked in O(n) (sorted, the same keys); the sorted reference, O(n) passes over
     * 2^16 buckets, is built only to say what is wrong */
    if (v->op == LAB_OP_SORT && lab_sort_matches(g->h_in + li.front, g->h_out + lo.front, n))
        return ST_OK;
    const size_t want_len = lab_apps_reference(v->op, g->h_in + li.front, n, o->dist, g->want);
    if (want_len == (size_t)-1) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory to sort n=%zu keys for the check", n);
        return r->status;
    }
    lab_apps_verdict vd;
    lab_apps_check(v->op, g->h_in + li.front, n, g->h_out + lo.front, count, g->want, want_len,
                   &vd);
    if (vd.ok)
        return ST_OK;
    r->status = ST_WRONG;
    if (v->op == LAB_OP_CSR)
        report_msg(r, "%s (n=%zu nonzeros in %zu rows, dist %s)", vd.message, n, lo.n - 1,
                   lab_dist_name(o->dist));
    else
        report_msg(r, "%s (n=%zu, %s)", vd.message, n, lab_op_name(v->op));
    r->has_mismatch = 1;
    r->mismatch_index = (long long)vd.bad;
    return r->status;
}

static lab_status ops_check(ops_rig *g, const lab_info *lab, const lab_variant *v,
                            const lab_options *o, size_t n, layout li, layout lo, lab_report *r)
{
    size_t k;
    const size_t m = lo.n, out_words = lo.front + m + lo.back;
    CUDA_CHECK(cudaMemcpy(g->h_back, g->d_out, out_words * sizeof(int), cudaMemcpyDeviceToHost));
    if ((k = lab_canary_check(g->h_back, lo.front)) < lo.front) {
        r->status = ST_OUT_OF_BOUNDS;
        report_msg(r, "wrote before the output: out[-%zu] changed (n=%zu)", lo.front - k, n);
        return r->status;
    }
    if ((k = lab_canary_check(g->h_back + lo.front + m, lo.back)) < lo.back) {
        r->status = ST_OUT_OF_BOUNDS;
        report_msg(r, "wrote past the end of the output: out[%zu] changed (n=%zu%s)", m + k, n,
                   v->op == LAB_OP_CSR ? ", the offsets have n_rows + 1 elements" : "");
        return r->status;
    }
    memcpy(g->h_out, g->h_back, out_words * sizeof(int));
    if (ops_first_changed(g, g->d_in, g->h_in, li) < li.front + n + li.back) {
        r->status = ST_INPUT_MODIFIED;
        report_msg(r, "modified the input or its guard words (n=%zu)", n);
        return r->status;
    }
    if (g->h_heads && ops_first_changed(g, g->d_heads, g->h_heads, li) < li.front + n + li.back) {
        r->status = ST_INPUT_MODIFIED;
        report_msg(r, "modified the segment heads or their guard words (n=%zu)", n);
        return r->status;
    }
    if (v->op >= LAB_OP_COMPACT)
        return apps_check(g, v, o, n, li, lo, r);
    lab_ops_verdict vd;
    lab_ops_reference(v->op, lab->type, g->h_in + li.front,
                      g->h_heads ? g->h_heads + li.front : NULL, n, g->want, g->want_d, g->bound_d);
    lab_ops_check(v->op, lab->type, g->h_out + lo.front, g->want, g->want_d, g->bound_d, n, &vd);
    if (vd.bad < n && v->op == LAB_OP_FADD) {
        r->status = ST_WRONG;
        report_msg(
            r, "out[%zu] expected %s %s, got %s (n=%zu, %s fadd scan; %zu of %zu elements wrong)",
            vd.bad, vd.expected, vd.why, vd.got, n, lab_scan_type_name(lab->type), vd.n_bad, n);
        r->has_mismatch = 1;
        r->mismatch_index = (long long)vd.bad;
        return r->status;
    }
    if (vd.bad < n) {
        char where[64] = "";
        if (g->h_heads) { /* the segment the wrong element is in */
            size_t start = vd.bad;
            while (start > 0 && !g->h_heads[li.front + start])
                start--;
            snprintf(where, sizeof(where), ", its segment starts at %zu", start);
        }
        r->status = ST_WRONG;
        report_msg(r, "out[%zu] expected %s, got %s%s (n=%zu, %s %s scan%s)", vd.bad, vd.expected,
                   vd.got, wrong_value_hint(atoll(vd.got)), n, lab_scan_type_name(lab->type),
                   lab_op_name(v->op), where);
        r->has_mismatch = 1;
        r->mismatch_index = (long long)vd.bad;
        return r->status;
    }
    if (v->op == LAB_OP_FADD && vd.max_ratio >= r->fp_max_ratio) {
        r->fp_max_ratio = vd.max_ratio;
        r->fp_max_error = vd.max_err;
    }
    return ST_OK;
}

/* One call of an operator variant; timed calls add their times (and a copy's) to t. */
static lab_status call_ops(ops_rig *g, const lab_info *lab, const lab_variant *v,
                           const lab_options *o, int k, int timed, timings *t, lab_report *r)
{
    const size_t n = lab_call_n(o, k);
    layout li = make_layout(g->cap, n, o->offset_in),
           lo = make_layout(g->out_cap, lab_apps_out_len(v->op, n, o->dist), o->offset_out);
    lab_result res;

    ops_prepare(g, v, o, n, lab_call_seed(o->seed, (unsigned)k), k, li, lo);
    CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
#ifdef LAB_CPU_MODE
    if (k == 0 && g_count_banks)
        lab_cpu_banks_record(1);
#endif
    if (v->op == LAB_OP_SEG_ADD)
        res = v->scan_seg(g->d_in + li.front, g->d_heads + li.front, g->d_out + lo.front, n,
                          g->d_scratch);
    else if (v->op == LAB_OP_COMPACT)
        res = v->compact(g->d_in + li.front, g->d_out + lo.front, n, g->d_count, g->d_scratch);
    else if (v->op == LAB_OP_CSR)
        res = v->csr(g->d_in + li.front, g->d_out + lo.front, n, lo.n - 1, g->d_scratch);
    else
        res = v->scan(g->d_in + li.front, g->d_out + lo.front, n, g->d_scratch);
#ifdef LAB_CPU_MODE
    lab_cpu_banks_record(0);
#endif
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
    if (res == LAB_NOT_IMPLEMENTED) {
        r->status = ST_NOT_IMPLEMENTED;
        if (apps_scan_base && apps_scan_base() && strcmp(apps_scan_base(), "none") == 0)
            report_msg(r,
                       "variant %s runs on your lab 08 scan (or lab 07's), and both return "
                       "LAB_NOT_IMPLEMENTED: finish lab 08 or lab 07 first",
                       v->name);
        else
            report_msg(r, "variant %s returns LAB_NOT_IMPLEMENTED: write its TODO(student) parts",
                       v->name);
        return r->status;
    }
    if (timed)
        t->scan[t->count] = event_ms(g->ev[0], g->ev[1]);
    if (ops_check(g, lab, v, o, n, li, lo, r) != ST_OK)
        return r->status;
    if (timed) {
        CUDA_CHECK(cudaMemsetAsync(g->d_flush, 0x5A, g->flush_bytes, 0));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
        CUDA_CHECK(cudaMemcpyAsync(g->d_out + lo.front, g->d_in + li.front, n * sizeof(int),
                                   cudaMemcpyDeviceToDevice, 0));
        CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
        CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
        t->copy[t->count] = event_ms(g->ev[0], g->ev[1]);
        t->tile[t->count] = 0;
        t->count++;
    }
    return ST_OK;
}

static lab_status run_ops(const lab_info *lab, const lab_variant *v, const lab_options *o,
                          lab_report *r)
{
    ops_rig g = {0};
    timings t = {0};
    static char device_name[256];
    struct cudaDeviceProp prop;
    const int total = total_calls(o);
    size_t count0 = 0, bytes0 = 0;

    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof(device_name), "%s", prop.name);
    r->device = device_name;
    if (ops_alloc(&g, v, lab_max_call_n(o), r) != 0 || timings_alloc(&t, o->reps, r) != 0)
        goto out_free;
    enter_sandbox(o, r);
    for (int k = 0; k < total; k++) {
        r->calls = k + 1;
        if (call_ops(&g, lab, v, o, k, k >= o->calls + o->warmup, &t, r) != ST_OK) {
            prefix_call(r, k, total);
            break;
        }
        if (k == 0) {
            count0 = g_live_count;
            bytes0 = g_live_bytes;
        }
        if (k == o->calls - 1 && check_leak(count0, bytes0, o->calls, r) != ST_OK)
            break;
    }
out_free:
    timings_finish(&t, lab, r);
    ops_free(&g);
    return r->status;
}

/* ---- one case --------------------------------------------------------------------------- */

/* Bytes of memory the system can still give without swapping (MemAvailable), or 0 if unknown.
 * /proc/meminfo is opened once, by a process's first case (before the sandbox, which lets no
 * file be opened), and read again from its start for each later case of the process. */
static double host_available_bytes(void)
{
    static int fd = -1;
    char buf[8192];
    double kb = 0;
    if (fd < 0)
        fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    const ssize_t got = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    const char *line = strstr(buf, "MemAvailable:");
    if (!line || sscanf(line, "MemAvailable: %lf kB", &kb) != 1)
        return 0;
    return kb * 1024.0;
}

/* The reasons to refuse a case before anything is allocated: n over the lab's limit, no device,
 * not enough host memory. Returns r->status (ST_OK: go ahead). */
static lab_status refuse_case(const lab_info *lab, const lab_options *o, size_t cap, lab_report *r)
{
    char why[200];
    if (lab->max_n && cap > lab->max_n && !o->force) {
        r->status = ST_TOO_LARGE;
        report_msg(r,
                   "n=%zu is over this lab's practical limit of %zu; pass --force to run it anyway",
                   cap, lab->max_n);
        return r->status;
    }
    if (lab->shape != LAB_HOST && !lab_have_device(why, sizeof(why))) {
        r->status = ST_NO_DEVICE;
        report_msg(r,
                   "%s (no GPU here? CPU=1, e.g. make run LAB=%.2s CPU=1, runs the lab on the "
                   "CPU for correctness)",
                   why, lab->id);
        return r->status;
    }
    /* host copies: input, reference, and the guarded buffers read back */
    double need = 4.0 * (double)layout_words(cap) * sizeof(int);
    double avail = host_available_bytes();
    if (avail > 0 && need > avail) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "n=%zu needs %.1f GB of host memory, only %.1f GB is available", cap,
                   need / 1e9, avail / 1e9);
    }
    return r->status;
}

lab_status lab_run(const lab_info *lab, int vi, const lab_options *o, lab_report *r)
{
    const lab_variant *v = &lab->variants[vi];
    const size_t cap = lab_max_call_n(o);
    host_case first = {0};

    lab_report_init(r, lab, v->name, o);
    r->mode = LAB_MODE_NAME;
    if (refuse_case(lab, o, cap, r) != ST_OK)
        return r->status;

    /* The CPU reference checks call 0 of every untimed run and every call of a host lab; a
     * timed device run is checked on the GPU alone (its sizes were checked against the CPU by
     * the untimed runs), which spares it a serial scan of the benchmark size. Inputs are
     * prefix-consistent (element i depends on the seed and i alone), so one input and
     * reference at the largest n serve every call's n. */
    if (v->op != LAB_OP_ADD) /* lab 09's operators: every call checked on the host */
        return run_ops(lab, v, o, r);
    const int host_check = lab->shape == LAB_HOST || o->reps == 0;
    if (host_check) {
        first.in = lab_host_alloc(cap * sizeof(int));
        first.ref = lab_host_alloc(cap * sizeof(int));
        if (!first.in || !first.ref) {
            r->status = ST_NO_MEMORY;
            report_msg(r, "cannot allocate host memory for n=%zu", cap);
            goto out_free;
        }
        make_host_case(&first, lab, o, cap, o->seed);
    }
    if (lab->shape == LAB_HOST)
        run_host(lab, v, o, &first, r);
    else
        run_device(lab, v, o, host_check ? &first : NULL, r);
out_free:
    free(first.ref);
    free(first.in);
    return r->status;
}

/* ---- the program -------------------------------------------------------------- */

static lab_report *g_report; /* what lab_cuda_fail reports through, once started */
static int g_json;
static FILE *g_report_out; /* stdout, or the grader's private channel (--report-fd) */

/* 1 from just before the lab's code runs until the report is out. The process must not end in
 * that window except through the harness: lab code that calls exit() (after printing a result
 * of its own, say) is caught by on_process_exit. */
static volatile int g_armed;

static void on_process_exit(void)
{
    static const char msg[] = "harness: the process is ending before the harness reported a result "
                              "(the lab's code called exit()?): exit code 8\n";
    if (!g_armed)
        return;
    fflush(stdout);
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) { /* nothing more to do */
    }
    _exit(LAB_EXIT_TAMPERED);
}

#ifdef LAB_CPU_MODE
/* The bank-conflict table of the lab's first call, after its result line. */
static void print_banks(FILE *f, const lab_report *r)
{
    lab_cpu_bank_stats b;
    int worst = 0;
    unsigned long long any = 0;
    for (int i = 0; lab_cpu_banks_get(i, &b); i++)
        any += b.loads + b.stores;
    if (!any || r->status == ST_NOT_IMPLEMENTED)
        return;
    fprintf(f, "shared-memory bank conflicts in call 1, counted by CPU mode as an H100 serves a "
               "warp-wide access (32 banks x 4 bytes):\n");
    fprintf(f, "  %-36s %12s %7s %6s %12s\n", "kernel", "accesses", "worst", "mean", "conflicts");
    for (int i = 0; lab_cpu_banks_get(i, &b); i++) {
        char way[16];
        if (!(b.loads + b.stores))
            continue;
        snprintf(way, sizeof(way), "%u-way", b.worst);
        fprintf(f, "  %-36s %12llu %7s %6.2f %12llu\n", b.kernel, b.loads + b.stores, way,
                b.mean_degree, b.extra_ld + b.extra_st);
        if ((int)b.worst > worst)
            worst = (int)b.worst;
    }
    if (worst > 1)
        fprintf(f, "  n-way: n lanes of one warp-wide access read different words of one bank, "
                   "served one after another; conflicts: the extra passes in all (Nsight Compute's "
                   "bank-conflict count)\n");
    else
        fprintf(f, "  1-way everywhere: every warp-wide shared-memory access is served in one "
                   "pass\n");
}

/* The global-memory table of the lab's first call: per kernel and source line, the 32-byte
 * sectors its warp-wide accesses touched against the fewest that hold their bytes. */
static void print_sectors(FILE *f, const lab_report *r)
{
    lab_cpu_sector_stats s;
    double worst = 1.0;
    if (!lab_cpu_sectors_get(0, &s) || r->status == ST_NOT_IMPLEMENTED)
        return;
    fprintf(f, "global-memory sectors in call 1, counted by CPU mode (32-byte sectors per "
               "warp-wide access; 1.00 = coalesced):\n");
    fprintf(f, "  %-36s %-18s %5s %12s %12s %7s\n", "kernel", "line", "", "accesses", "sectors",
            "ratio");
    for (int i = 0; lab_cpu_sectors_get(i, &s); i++) {
        const double ratio = s.min_sectors ? (double)s.sectors / (double)s.min_sectors : 1.0;
        fprintf(f, "  %-36s %-18s %5s %12llu %12llu %7.2f\n", s.kernel, s.site,
                s.store ? "store" : "load", s.accesses, s.sectors, ratio);
        if (ratio > worst)
            worst = ratio;
    }
    if (worst >= 1.5)
        fprintf(f, "  ratio r: the lanes of a warp touched r times the sectors their bytes need; "
                   "the memory system moves whole sectors, so a ratio of r costs up to r times "
                   "the bandwidth: give neighbouring lanes neighbouring addresses\n");
    else
        fprintf(f, "  coalesced: every access site touches (close to) the fewest sectors its "
                   "bytes need\n");
}
#endif

static void print_report(const lab_report *r)
{
    FILE *f = g_report_out ? g_report_out : stdout;
    if (g_json)
        lab_print_report_json(f, r);
    else
        lab_print_report_text(f, r);
#ifdef LAB_CPU_MODE
    if (g_count_banks && !g_json) {
        print_banks(f, r);
        print_sectors(f, r);
    }
#endif
    fflush(f);
    g_armed = 0;
}

/* Takes "--report-fd N" (or "--report-fd=N") out of argv, shifting the rest down; the grader's
 * private channel for the report (harness.h). Returns 0, or -1 with a reason in err. */
static int take_report_fd(int *argc, char **argv, int *fd, char *err, size_t errlen)
{
    for (int i = 1; i < *argc; i++) {
        const char *val = NULL;
        int used = 1;
        if (strcmp(argv[i], "--report-fd") == 0) {
            if (i + 1 >= *argc) {
                snprintf(err, errlen, "--report-fd needs a file descriptor number");
                return -1;
            }
            val = argv[i + 1];
            used = 2;
        } else if (strncmp(argv[i], "--report-fd=", 12) == 0) {
            val = argv[i] + 12;
        } else {
            continue;
        }
        char *end;
        long v = strtol(val, &end, 10);
        if (end == val || *end != '\0' || v < 0 || v > 1 << 20 || fcntl((int)v, F_GETFD) == -1) {
            snprintf(err, errlen, "--report-fd %s: not an open file descriptor", val);
            return -1;
        }
        *fd = (int)v;
        for (int j = i; j + used <= *argc; j++)
            argv[j] = argv[j + used];
        *argc -= used;
        i--;
    }
    return 0;
}

/* One line from standard input (the grader's socket) into line (without its newline): 1, or 0 at
 * the end of the input, or -1 when the line is too long. Bytes after the newline are kept for the
 * next call (the grader sends a case only after the report of the one before, but need not). */
static int read_input_line(char *line, size_t len)
{
    static char buf[4096];
    static size_t have;
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            const size_t k = (size_t)(nl - buf);
            if (k + 1 > len)
                return -1;
            memcpy(line, buf, k);
            line[k] = '\0';
            memmove(buf, nl + 1, have - k - 1);
            have -= k + 1;
            return 1;
        }
        if (have == sizeof(buf))
            return -1;
        ssize_t got = read(STDIN_FILENO, buf + have, sizeof(buf) - have);
        if (got <= 0) { /* the end: a last line without its newline still counts */
            if (have == 0 || have + 1 > len)
                return have == 0 ? 0 : -1;
            memcpy(line, buf, have);
            line[have] = '\0';
            have = 0;
            return 1;
        }
        have += (size_t)got;
    }
}

/* --grader: each case comes on standard input (a socket the grader holds), one line of the options
 * above, and its report goes back on it. So every graded run has the same command line, timed or
 * not, and the lab's code cannot tell them apart by reading it. Returns the new argc, 0 at the end
 * of the input, or -1 with a reason in err. */
static int read_grader_case(const char *prog, char **args, int max_args, char *line, size_t len,
                            char *err, size_t errlen)
{
    const int got = read_input_line(line, len);
    if (got == 0)
        return 0;
    if (got < 0) {
        snprintf(err, errlen, "--grader: the case on standard input is too long");
        return -1;
    }
    int argc = 0;
    args[argc++] = (char *)prog;
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (argc == max_args - 1 || strcmp(tok, "--grader") == 0 ||
            strncmp(tok, "--report-fd", 11) == 0) {
            snprintf(err, errlen, "--grader: bad case on standard input ('%s')", tok);
            return -1;
        }
        args[argc++] = tok;
    }
    args[argc] = NULL;
    return argc;
}

/* On a failed CUDA call: still print the result, with status cuda_error. */
static void on_cuda_fail(const char *what, cudaError_t err)
{
    if (!g_report)
        return;
    g_report->status = ST_CUDA_ERROR;
    g_report->reps = 0;
    report_msg(g_report, "CUDA error %s (%s) in %s", cudaGetErrorName(err), cudaGetErrorString(err),
               what);
    print_report(g_report);
}

/* Checks that LAB is well formed, so a broken descriptor is a message, not a crash. */
static int lab_info_ok(const lab_info *lab, char *why, size_t whylen)
{
    if (lab->n_variants <= 0 || !lab->variants) {
        snprintf(why, whylen, "LAB lists no variants");
        return 0;
    }
    if (lab->shape == LAB_TILE && (lab->tile == 0 || (lab->tile & (lab->tile - 1)) != 0)) {
        snprintf(why, whylen, "LAB.tile must be a power of two (is %zu)", lab->tile);
        return 0;
    }
    for (int i = 0; i < lab->n_variants; i++) {
        const lab_variant *v = &lab->variants[i];
        const int has_entry = lab->shape == LAB_TILE    ? v->scan_tiles != NULL
                              : v->op == LAB_OP_SEG_ADD ? v->scan_seg != NULL
                              : v->op == LAB_OP_COMPACT ? v->compact != NULL
                              : v->op == LAB_OP_CSR     ? v->csr != NULL
                                                        : v->scan != NULL;
        if (!v->name || !has_entry ||
            (v->op != LAB_OP_ADD && (lab->shape != LAB_WHOLE || lab->type != SCAN_INCLUSIVE))) {
            snprintf(why, whylen, "variant %d has no name or no entry point for this lab's shape",
                     i);
            return 0;
        }
    }
    return 1;
}

/* Opens the report channel fd (close-on-exec) before any of the lab's code runs. Returns 0, or
 * -1 with a reason in err. */
static int open_report_channel(int fd, char *err, size_t errlen)
{
    if (fd > STDERR_FILENO)
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    g_report_out = fd == STDOUT_FILENO ? stdout : fdopen(fd, "w");
    if (!g_report_out) {
        snprintf(err, errlen, "--report-fd %d: cannot write to it", fd);
        return -1;
    }
    return 0;
}

/* The options of this process, from the command line or, for `scan --grader`, from the next case
 * on standard input (then sandboxed); opens the report channel of either (once). Returns 0, -1 at
 * the end of a graded run's input, or LAB_EXIT_USAGE after printing why on stderr. */
static int read_options(int argc, char **argv, const char *prog, lab_options *o)
{
    static char case_line[4096];
    static char *case_args[64];
    char err[256] = "";
    int report_fd = -1, ok;
    const int grader = argc == 2 && strcmp(argv[1], "--grader") == 0;

    lab_default_options(o);
    if (grader) {
        argc =
            read_grader_case(prog, case_args, 64, case_line, sizeof(case_line), err, sizeof(err));
        if (argc == 0 && g_report_out)
            return -1; /* the end of the cases */
        if (argc == 0)
            snprintf(err, sizeof(err), "--grader: no case on standard input");
        argv = case_args;
        report_fd = g_report_out ? -1 : STDIN_FILENO;
        ok = argc > 0;
    } else {
        ok = take_report_fd(&argc, argv, &report_fd, err, sizeof(err)) == 0;
    }
    ok = ok && (report_fd < 0 || open_report_channel(report_fd, err, sizeof(err)) == 0) &&
         lab_parse_args(argc, argv, o, err, sizeof(err)) == 0;
    if (!ok) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (grader)
        o->sandbox = 1;
    return 0;
}

/* The largest default n of a GPU lab in CPU mode (--n overrides it). */
#define LAB_CPU_DEFAULT_MAX_N ((size_t)1 << 20)

#ifdef LAB_CPU_MODE
/* The largest tile a lab's code works in: its tile, else the tiles it reports (lab.h:
 * lab_work_tiles), else LAB_DEFAULT_TILE, as the grader's sizes take it. */
static size_t largest_tile(const lab_info *lab)
{
    if (lab->tile)
        return lab->tile;
    size_t tiles[8], big = 0;
    const size_t k = lab_work_tiles ? lab_work_tiles(tiles, sizeof(tiles) / sizeof(tiles[0])) : 0;
    for (size_t i = 0; i < k && i < sizeof(tiles) / sizeof(tiles[0]); i++)
        if (tiles[i] > big)
            big = tiles[i];
    return big ? big : LAB_DEFAULT_TILE;
}

/* CPU mode's default run of a GPU lab (no --n, no --sizes) is meant to catch the common bugs at
 * the first make run: two calls (state left by the first call, or a leak, shows in the second),
 * the first at a ragged n (the benchmark size, at most 2^20, plus 7: a last tile cut short) and
 * the second at two of the lab's largest tiles and one element (smaller: scratch never reset
 * shows), both on inputs whose first element is negative (LAB_CPU_DEFAULT_SEED: a max scan
 * whose identity is 0 instead of INT_MIN is wrong from out[0]). */
static void cpu_default_calls(lab_options *o, const lab_info *lab)
{
    size_t n = lab->bench_n < LAB_CPU_DEFAULT_MAX_N ? lab->bench_n : LAB_CPU_DEFAULT_MAX_N;
    if (!lab->max_n || n + 7 <= lab->max_n)
        n += 7;
    size_t second = 2 * largest_tile(lab) + 1;
    if (second >= n)
        second = n / 2 + 1;
    o->n = n;
    o->sizes[0] = n;
    o->sizes[1] = second;
    o->n_sizes = 2;
    if (!o->calls_given)
        o->calls = 2;
    if (!o->seed_given)
        o->seed = LAB_CPU_DEFAULT_SEED;
}
#endif

/* What a run without --n scans: the lab's benchmark size. CPU mode (common/cpu/) checks
 * correctness: two calls of smaller ragged sizes by default (cpu_default_calls), and no timing of
 * GPU labs unless asked for with --reps (the emulation's times say nothing about a GPU). */
static void settle_defaults(lab_options *o, const lab_info *lab)
{
    if (!o->n_given)
        o->n = lab->bench_n;
#ifdef LAB_CPU_MODE
    if (lab->shape != LAB_HOST) {
        if (!o->n_given)
            cpu_default_calls(o, lab);
        if (!o->reps_given)
            o->reps = 0;
    }
#else
    (void)lab;
#endif
}

/* Runs variant vi of LAB with the atexit check armed and prints the report; returns the exit
 * code of its status. */
static int run_and_report(const lab_options *o, int vi)
{
    lab_report r;
    g_json = o->json;
    lab_report_init(&r, &LAB, LAB.variants[vi].name, o);
    g_report = &r;
    lab_cuda_fail_hook = on_cuda_fail;

    g_armed = 1; /* the lab's code runs from here until the report is out */
    lab_run(&LAB, vi, o, &r);

    lab_cuda_fail_hook = NULL;
    g_report = NULL;
    print_report(&r);
    return lab_status_exit_code(r.status);
}

/* One case of the process: its options (read_options), then --help, --describe/--list, or the
 * run. Returns its exit code, or -1 at the end of a graded run's input. */
static int one_case(int argc, char **argv, const char *prog)
{
    lab_options o;
    char err[256] = "";
    const int rc = read_options(argc, argv, prog, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        lab_print_usage(stdout, prog);
        return LAB_EXIT_OK;
    }
    if (!lab_info_ok(&LAB, err, sizeof(err))) {
        fprintf(stderr, "%s: the lab descriptor is broken: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.describe || o.list) { /* --describe, for programs, wins over --list */
        if (o.describe)
            lab_print_describe(stdout, &LAB, LAB_MODE_NAME);
        else
            lab_print_list(stdout, &LAB);
        return LAB_EXIT_OK;
    }
    int vi = lab_find_variant(&LAB, o.variant);
    if (vi < 0) {
        fprintf(stderr, "%s: unknown variant '%s' (see --list)\n", prog, o.variant);
        return LAB_EXIT_USAGE;
    }
    settle_defaults(&o, &LAB);
    return run_and_report(&o, vi);
}

int lab_main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "scan";
    const int grader = argc == 2 && strcmp(argv[1], "--grader") == 0;
    static int exit_check_registered;

    if (!exit_check_registered && atexit(on_process_exit) == 0)
        exit_check_registered = 1;
    g_count_banks = !grader;
    /* every kernel is loaded when CUDA starts, before the sandbox (no module loads inside it) */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    int rc = one_case(argc, argv, prog);
    /* a graded run: the next case, until the input ends or a case is not ok */
    while (grader && rc == LAB_EXIT_OK) {
        const int next = one_case(argc, argv, prog);
        if (next < 0)
            break;
        rc = next;
    }
    return rc;
}
