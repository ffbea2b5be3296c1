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

lab_status lab_not_implemented(const lab_variant *v, lab_report *r)
{
    r->status = ST_NOT_IMPLEMENTED;
    if (!lab_not_implemented_why || !lab_not_implemented_why(v, r->message, sizeof(r->message)))
        lab_report_msg(r, "variant %s returns LAB_NOT_IMPLEMENTED: write its TODO(student) parts",
                       v->name);
    return r->status;
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

/* ---- the device ------------------------------------------------------------------------ */

const char *lab_device_name(void)
{
    static char name[256];
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(name, sizeof(name), "%s", prop.name);
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

void lab_banks_begin(int k)
{
#ifdef LAB_CPU_MODE
    if (k == 0 && lab_harness_banks)
        lab_cpu_banks_record(1);
#else
    (void)k;
#endif
}

void lab_banks_end(void)
{
#ifdef LAB_CPU_MODE
    lab_cpu_banks_record(0);
#endif
}
