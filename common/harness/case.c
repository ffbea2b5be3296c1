/* case.c — one lab case end to end (harness.h: lab_run), through the one call loop.
 *
 * Calls: a run makes `calls` checked calls of the lab's code, then, when timed, `warmup` and
 * `reps` more. Every call goes the same way, whatever the kind of lab (rig.h: the rig is what
 * differs): a new input (call k has its own seed; call 0 the case's), canary words around input
 * and output, the output poisoned, the cache cold, the device idle; the lab's code; the device
 * synchronised (every stream, so work the lab hides on another stream is waited for and
 * counted); then the call is checked, before any time of it counts. Where each call is checked
 * (the host's CPU reference, or the GPU from the input's seed) is the rig's: a lab cannot
 * tell a timed call from a checked one, and a remembered, skipped or host-made answer is wrong.
 *
 * Buffers: input and output each get LAB_GUARD_WORDS canary words before and after, the data
 * starting offset_in / offset_out words (0..3) past the 16-byte-aligned start, so a write
 * anywhere outside out[0..n) is named and unaligned pointers are exercised.
 *
 * Timing: the rig times [lab call + cudaDeviceSynchronize] (tile labs also the tile pass alone:
 * the carries are the harness's) and a copy of the same bytes the same way. Medians.
 *
 * Graded runs (--sandbox) enter the seccomp sandbox (sandbox.h) after all of the harness's
 * set-up and before the lab's first call; allocations the lab makes are counted (the leak check).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "hostmem.h"
#include "port.h"
#include "rig.h"
#include "sandbox.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kinds of call, asked in this order (rig.h): the first that accepts a variant runs it. */
static const lab_rig *const RIGS[] = {&lab_rig_ops, &lab_rig_host, &lab_rig_scan};

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

void lab_live_allocations(size_t *count, size_t *bytes)
{
    *count = g_live_count;
    *bytes = g_live_bytes;
}

/* After every checked call but the first: live allocations that grew since call 1 are a leak. */
static lab_status check_leak(size_t count_after_first, size_t bytes_after_first, int calls,
                             lab_report *r)
{
    size_t live_count, live_bytes;
    lab_port_live(&live_count, &live_bytes);
    if (live_count <= count_after_first || calls < 2)
        return ST_OK;
    r->status = ST_LEAK;
    const size_t leaked = live_count - count_after_first;
    lab_report_msg(r,
                   "device memory leak: in the %d call%s after the first, the lab's code allocated "
                   "%zu buffer%s (%zu bytes) with cudaMalloc that it never freed (free what each "
                   "call allocates, or use the scratch the harness passes in)",
                   calls - 1, calls - 1 == 1 ? "" : "s", leaked, leaked == 1 ? "" : "s",
                   live_bytes - bytes_after_first);
    return r->status;
}

/* ---- sandbox --------------------------------------------------------------------------- */

/* Enters the sandbox for a run that asks for it; the environment is emptied first, so nothing
 * in it (a tool's variables, say) tells the lab what kind of run this is. */
static void enter_sandbox(const lab_options *o, lab_report *r)
{
    static int entered; /* a graded process of several cases enters it once, for good */
    char why[200];
    if (!o->sandbox)
        return;
    if (lab_port_remote()) { /* a judge: the lab's code runs in the lab process, sandboxed there */
        r->sandbox = lab_port_sandboxed();
        return;
    }
    if (entered) {
        r->sandbox = 1;
        return;
    }
    const int under_tool = lab_under_tool(); /* compute-sanitizer's injection names itself */
    /* measuring what the runtime opens (grader/tools/measure_opens.sh) */
    const char *trace = getenv("LAB_SANDBOX_TRACE_OPEN");
    lab_sandbox_trace_opens(trace && strcmp(trace, "1") == 0);
    clearenv();
    if (lab_sandbox_enter(under_tool, why, sizeof(why)) == 0)
        r->sandbox = entered = 1;
    else
        fprintf(stderr, "harness: %s\n", why);
}

/* ---- timings ----------------------------------------------------------------------------- */

/* Timings of the timed calls, medians into r. */
typedef struct {
    double *scan, *tile, *copy, *chan; /* chan: a null call's cost after each (judge only) */
    int count;
} timings;

static int timings_alloc(timings *t, int reps, lab_report *r)
{
    size_t k = reps > 0 ? (size_t)reps : 1;
    t->count = 0;
    t->scan = malloc(k * sizeof(double));
    t->tile = malloc(k * sizeof(double));
    t->copy = malloc(k * sizeof(double));
    t->chan = malloc(k * sizeof(double));
    if (t->scan && t->tile && t->copy && t->chan)
        return 0;
    r->status = ST_NO_MEMORY;
    lab_report_msg(r, "cannot allocate host memory for timings");
    return -1;
}

/* The medians into r. In a judge, the channel's cost is taken off the lab's times: the median
 * of the run's own null calls, at most the calibration's (port.h: lab_port_channel_ms). */
static void timings_finish(timings *t, const lab_info *lab, lab_report *r)
{
    if (r->status == ST_OK && t->count > 0) {
        const size_t count = (size_t)t->count;
        double channel = 0.0;
        if (lab_port_remote()) {
            const double before = lab_port_overhead_ms(lab->shape != LAB_HOST);
            channel = lab_median(t->chan, count);
            channel = channel < before ? channel : before;
        }
        r->reps = t->count;
        r->ms = lab_median(t->scan, count) - channel;
        r->memcpy_ms = lab_median(t->copy, count);
        r->channel_ms = channel;
        if (lab->shape == LAB_TILE)
            r->tile_ms = lab_median(t->tile, count) - channel;
    }
    free(t->scan);
    free(t->tile);
    free(t->copy);
    free(t->chan);
}

/* ---- the call loop ----------------------------------------------------------------------- */

/* Puts "call k of K: " before the message of a run of several calls. */
static void prefix_call(lab_report *r, int k, int total)
{
    char tmp[LAB_MESSAGE_BYTES];
    if (total <= 1 || !r->message[0])
        return;
    snprintf(tmp, sizeof(tmp), "call %d of %d: %.4000s", k + 1, total, r->message);
    memcpy(r->message, tmp, sizeof(tmp));
}

/* Call k: prepared, made, checked; a timed call's times (and its copy baseline's) go to t once
 * the call is known to be right. */
static lab_status one_call(const lab_rig *rig, void *g, const lab_case *c, int k, timings *t,
                           lab_report *r)
{
    const size_t n = lab_call_n(c->o, k);
    const int timed = k >= c->o->calls + c->o->warmup;
    lab_call_ms ms = {0, 0};

    rig->prepare(g, c, k, n);
    if (rig->invoke(g, c, k, n, timed ? &ms : NULL) == LAB_NOT_IMPLEMENTED)
        return lab_not_implemented(c->v, r);
    if (rig->check(g, c, k, n, r) != ST_OK)
        return r->status;
    if (timed) {
        t->scan[t->count] = ms.scan;
        t->tile[t->count] = ms.tile;
        t->copy[t->count] = rig->copy_ms(g, c, n);
        t->chan[t->count] = lab_port_channel_ms(c->lab->shape != LAB_HOST);
        t->count++;
    }
    return ST_OK;
}

/* THE call loop: `calls` checked calls, then warmup + reps timed ones when timed, until the
 * first that is not ok; the leak check after the checked calls. */
static lab_status run_calls(const lab_rig *rig, const lab_case *c, lab_report *r)
{
    const lab_options *o = c->o;
    const int total = o->calls + (o->reps > 0 ? o->warmup + o->reps : 0);
    timings t = {0};
    size_t count0 = 0, bytes0 = 0;
    void *g = calloc(1, rig->size);

    if (!g) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot allocate host memory for n=%zu", lab_max_call_n(o));
        return r->status;
    }
    if (rig->alloc(g, c, lab_max_call_n(o), r) != 0 || timings_alloc(&t, o->reps, r) != 0)
        goto out_free;
    if (rig->warm)
        rig->warm(g, c);
    enter_sandbox(o, r);
    for (int k = 0; k < total; k++) {
        r->calls = k + 1;
        if (one_call(rig, g, c, k, &t, r) != ST_OK) {
            prefix_call(r, k, total);
            break;
        }
        if (k == 0)
            lab_port_live(&count0, &bytes0);
        if (k == o->calls - 1 && check_leak(count0, bytes0, o->calls, r) != ST_OK)
            break;
    }
out_free:
    timings_finish(&t, c->lab, r);
    rig->free(g);
    free(g);
    return r->status;
}

/* ---- one case ----------------------------------------------------------------------------- */

/* The reasons to refuse a case before anything is allocated: n over the lab's limit, no device,
 * not enough host memory. Returns r->status (ST_OK: go ahead). */
static lab_status refuse_case(const lab_info *lab, const lab_options *o, size_t cap, lab_report *r)
{
    char why[200];
    if (lab->max_n && cap > lab->max_n && !o->force) {
        r->status = ST_TOO_LARGE;
        lab_report_msg(
            r, "n=%zu is over this lab's practical limit of %zu; pass --force to run it anyway",
            cap, lab->max_n);
        return r->status;
    }
    if (lab->shape != LAB_HOST && !lab_have_device(why, sizeof(why))) {
        r->status = ST_NO_DEVICE;
        lab_report_msg(r,
                       "%s (no GPU here? CPU=1, e.g. make run LAB=%.2s CPU=1, runs the lab on the "
                       "CPU for correctness)",
                       why, lab->id);
        return r->status;
    }
    /* host copies: input, reference, and the guarded buffers read back */
    double need = 4.0 * (double)lab_layout_words(cap) * sizeof(int);
    double avail;
    lab_host_memory(&avail, NULL);
    if (avail > 0 && need > avail) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "n=%zu needs %.1f GB of host memory, only %.1f GB is available", cap,
                       need / 1e9, avail / 1e9);
    }
    return r->status;
}

static const lab_rig *rig_for(const lab_info *lab, const lab_variant *v)
{
    const size_t count = sizeof(RIGS) / sizeof(RIGS[0]);
    for (size_t i = 0; i < count; i++)
        if (RIGS[i]->accepts(lab, v))
            return RIGS[i];
    return RIGS[count - 1]; /* none: a descriptor lab_info_ok would refuse; the device scan's */
}

/* The CPU reference checks call 0 of every untimed run and every call of a host lab; a timed
 * device run is checked on the GPU alone (its sizes were checked against the CPU by the untimed
 * runs), which spares it a serial scan of the benchmark size. Inputs are prefix-consistent
 * (element i depends on the seed and i alone), so one input and reference at the largest n serve
 * every call's n. */
lab_status lab_run(const lab_info *lab, int vi, const lab_options *o, lab_report *r)
{
    const lab_variant *v = &lab->variants[vi];
    const size_t cap = lab_max_call_n(o);
    const lab_rig *rig = rig_for(lab, v);
    lab_host_case first = {0};
    lab_case c = {lab, v, o, NULL};

    lab_report_init(r, lab, v->name, o);
    r->mode = LAB_MODE_NAME;
    if (refuse_case(lab, o, cap, r) != ST_OK)
        return r->status;
    if (o->new_buffers)
        lab_port_renew();
    if (rig->reference == LAB_REF_ALWAYS || (rig->reference == LAB_REF_UNTIMED && o->reps == 0)) {
        first.in = lab_host_alloc(cap * sizeof(int));
        first.ref = lab_host_alloc(cap * sizeof(int));
        if (!first.in || !first.ref) {
            r->status = ST_NO_MEMORY;
            lab_report_msg(r, "cannot allocate host memory for n=%zu", cap);
            goto out_free;
        }
        lab_fill_input(first.in, cap, o->dist, o->seed);
        lab_reference_scan(first.in, first.ref, cap, lab->type);
        c.first = &first;
    }
    run_calls(rig, &c, r);
    /* the profile of call 0, which ran to its end even when an answer was wrong */
    if (o->algorithm && v->algorithm != LAB_ALG_ANY &&
        (r->status == ST_OK || r->status == ST_WRONG || r->status == ST_OUT_OF_BOUNDS ||
         r->status == ST_INPUT_MODIFIED || r->status == ST_LEAK))
        lab_port_algorithm(v, r);
out_free:
    free(first.ref);
    free(first.in);
    return r->status;
}

/* (call.h) Here rather than in call.c, which the CUB anchor program links alone: the reason
 * comes through the judge's port when there is one. */
lab_status lab_not_implemented(const lab_variant *v, lab_report *r)
{
    int reason = WHY_TODO;
    const char *why = lab_port_why(&reason); /* a judge: the reason the lab process gave, if any */
    r->status = ST_NOT_IMPLEMENTED;
    r->reason = WHY_TODO;
    if (why) {
        lab_report_msg(r, "%s", why);
        r->reason = reason;
        return r->status;
    }
    if (!lab_port_remote() && lab_not_implemented_why)
        r->reason = lab_not_implemented_why(v, r->message, sizeof(r->message));
    if (r->reason == WHY_TODO)
        lab_report_msg(r, "variant %s returns LAB_NOT_IMPLEMENTED: write its TODO(student) parts",
                       v->name);
    return r->status;
}
