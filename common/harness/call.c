/* call.c — what every kind of call shares (see call.h): layouts, messages, clocks, allocations,
 * the copy baseline, the "not implemented" message and the bank counting of CPU mode.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "call.h"
#include "cuda_check.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int lab_harness_banks;

/* ---- guarded buffers ------------------------------------------------------------------- */

size_t lab_layout_words(size_t cap)
{
    return 2 * LAB_GUARD_WORDS + LAB_MAX_OFFSET + cap;
}

lab_layout lab_make_layout(size_t cap, size_t n, int offset)
{
    lab_layout l;
    l.front = LAB_GUARD_WORDS + (size_t)offset;
    l.n = n;
    l.back = lab_layout_words(cap) - l.front - n;
    return l;
}

void lab_guard_host(int *base, lab_layout l)
{
    lab_canary_fill(base, l.front);
    lab_canary_fill(base + l.front + l.n, l.back);
}

/* ---- messages and clocks --------------------------------------------------------------- */

void lab_report_msg(lab_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
}

double lab_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- memory ---------------------------------------------------------------------------- */

/* Huge pages, so that two runs of the same host lab see the same TLB behaviour (their times are
 * compared). */
void *lab_host_alloc(size_t bytes)
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

int lab_try_malloc(void **p, size_t bytes, lab_report *r, const char *what)
{
    cudaError_t err = cudaMalloc(p, bytes ? bytes : 1);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        *p = NULL;
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "not enough device memory for %s (%zu bytes) at n=%zu", what, bytes,
                       r->n);
        return -1;
    }
    CUDA_CHECK(err);
    return 0;
}

/* ---- device buffers kept from case to case (call.h) ----------------------------------- */

int lab_under_tool(void)
{
    extern char **environ;
    static int under = -1;
    if (under < 0) {
        under = 0;
        for (char **e = environ; e && *e; e++) /* compute-sanitizer's injection names itself */
            if (strstr(*e, "sanitizer") || strstr(*e, "Sanitizer"))
                under = 1;
    }
    return under;
}

#define KEPT_MAX 16
static lab_kept_slot g_kept[KEPT_MAX];

/* Frees kept buffer i; its slot is empty again. */
static void kept_drop(int i)
{
    CUDA_CHECK(cudaFree(g_kept[i].p));
    g_kept[i].p = NULL;
    g_kept[i].bytes = 0;
}

/* Frees the kept buffers not in use. */
static void kept_release(void)
{
    for (int i = 0; i < KEPT_MAX; i++)
        if (g_kept[i].p && !g_kept[i].busy)
            kept_drop(i);
}

int lab_kept_pick(const lab_kept_slot *slots, int count, size_t bytes, int *replace)
{
    int fit = -1, empty = -1, small = -1;
    for (int i = 0; i < count; i++) {
        if (slots[i].busy)
            continue;
        if (!slots[i].p) {
            if (empty < 0)
                empty = i;
        } else if (slots[i].bytes >= bytes) {
            if (fit < 0 || slots[i].bytes < slots[fit].bytes)
                fit = i;
        } else if (small < 0 || slots[i].bytes > slots[small].bytes) {
            small = i;
        }
    }
    /* a buffer too small is replaced (the largest such: most likely the same role in a smaller
     * case), so the kept buffers grow instead of piling up */
    *replace = fit >= 0 ? -1 : small >= 0 ? small : empty;
    return fit;
}

static int g_keep = -1; /* -1: not decided yet (lab_kept_enable, keeping) */

void lab_kept_enable(int on)
{
    g_keep = on != 0;
}

/* Whether buffers are kept: not under a tool, not in CPU mode, unless a test says otherwise
 * (lab_kept_enable, or LAB_KEEP_BUFFERS=0/1 in the environment of the first case). */
static int keeping(void)
{
    if (g_keep < 0) {
        const char *env = getenv("LAB_KEEP_BUFFERS");
#ifdef LAB_CPU_MODE
        g_keep = 0;
#else
        g_keep = !lab_under_tool();
#endif
        if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0))
            g_keep = env[0] == '1';
    }
    return g_keep;
}

int lab_kept_malloc(void **p, size_t bytes, lab_report *r, const char *what)
{
    if (!keeping())
        return lab_try_malloc(p, bytes, r, what);
    int slot;
    const int fit = lab_kept_pick(g_kept, KEPT_MAX, bytes, &slot);
    if (fit >= 0) {
        g_kept[fit].busy = 1;
        *p = g_kept[fit].p;
        return 0;
    }
    if (slot >= 0 && g_kept[slot].p) /* slot -1: every slot in use, this one not kept */
        kept_drop(slot);
    const cudaError_t err = cudaMalloc(p, bytes ? bytes : 1);
    if (err == cudaErrorMemoryAllocation) { /* the kept buffers not in use may be what is missing */
        cudaGetLastError();
        kept_release();
        if (lab_try_malloc(p, bytes, r, what) != 0)
            return -1;
    } else {
        CUDA_CHECK(err);
    }
    if (slot >= 0) {
        g_kept[slot].p = *p;
        g_kept[slot].bytes = bytes ? bytes : 1;
        g_kept[slot].busy = 1;
    }
    return 0;
}

void lab_kept_free(void *p)
{
    if (!p)
        return;
    for (int i = 0; i < KEPT_MAX; i++)
        if (g_kept[i].p == p) {
            g_kept[i].busy = 0;
            return;
        }
    CUDA_CHECK(cudaFree(p)); /* allocated when every slot was in use, or under a tool */
}

size_t lab_kept_spare(void)
{
    size_t spare = 0;
    for (int i = 0; i < KEPT_MAX; i++)
        if (g_kept[i].p && !g_kept[i].busy)
            spare += g_kept[i].bytes;
    return spare;
}

cudaEvent_t *lab_case_events(void)
{
    static cudaEvent_t ev[LAB_CASE_EVENTS];
    static int made;
    if (!made) {
        for (int e = 0; e < LAB_CASE_EVENTS; e++)
            CUDA_CHECK(cudaEventCreate(&ev[e]));
        made = 1;
    }
    return ev;
}

/* ---- the device ------------------------------------------------------------------------ */

const char *lab_device_name(void)
{
    static char name[256];
    if (!name[0]) {
        struct cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        snprintf(name, sizeof(name), "%s", prop.name);
    }
    return name;
}

size_t lab_flush_bytes(void)
{
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    return prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : ((size_t)64 << 20);
}

void *lab_flush_buffer(size_t *bytes, lab_report *r)
{
    static void *buf;
    static size_t have;
    if (!buf) {
        const size_t want = lab_flush_bytes();
        if (lab_try_malloc(&buf, want, r, "the L2 flush buffer") != 0)
            return NULL;
        have = want;
    }
    *bytes = have;
    return buf;
}

double lab_event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return (double)ms;
}

double lab_time_copy(int *d_dst, const int *d_src, size_t n, void *d_flush, size_t flush_bytes,
                     cudaEvent_t ev[2])
{
    CUDA_CHECK(cudaMemsetAsync(d_flush, 0x5A, flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(ev[0], 0));
    CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, n * sizeof(int), cudaMemcpyDeviceToDevice, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(ev[1], 0));
    CUDA_CHECK(cudaEventSynchronize(ev[1]));
    return lab_event_ms(ev[0], ev[1]);
}

void lab_code_begin(int k)
{
#ifdef LAB_CPU_MODE
    if (k == 0 && lab_harness_banks)
        lab_cpu_banks_record(lab_harness_banks);
    /* The lab's host code faults on device memory on every call, as on a GPU
     * (common/cpu/memory.cpp): code that reads a device counter only from its second call on
     * crashes here as it does there. */
    lab_cpu_host_guard(1);
#else
    (void)k;
#endif
}

void lab_code_end(void)
{
#ifdef LAB_CPU_MODE
    lab_cpu_host_guard(0);
    lab_cpu_banks_record(0);
#endif
}
