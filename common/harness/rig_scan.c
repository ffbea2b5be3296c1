/* rig_scan.c — the calls of a scan on the device, whole (LAB_WHOLE) or in tiles (LAB_TILE; the
 * carries are the harness's, driver.cu), labs 02-08 and lab 09's int + (see rig.h).
 *
 * Every call's input is made on the GPU (verify.cu): call 0's from the case's seed, every later
 * call's from a secret seed no host memory holds. Call 0 of an untimed run is read back and
 * checked on the host against the CPU reference; every other call on the GPU (verify.cu: each
 * element against the one before it and the input regenerated from its seed). A tile lab's call is
 * timed whole and its tile pass alone.
 */
#include "rig.h"
#include "cuda_check.h"
#include "port.h"
#include "driver.h"
#include "gen.h"
#include "verdict.h"

#include <stdlib.h>

/* Bytes of scratch for n elements (driver.h: lab_scratch_bytes), a whole lab's asked through the
 * port (port.h: in a judge, the lab process answers). */
static size_t scratch_bytes(const lab_info *lab, const lab_variant *v, size_t n)
{
    return lab->shape == LAB_TILE ? lab_scratch_bytes(lab, v, n) : lab_port_temp_bytes(v, n);
}

/* Everything a device run allocates once, sized for its largest n. */
typedef struct {
    size_t cap, words;
    int *d_in, *d_out; /* guarded buffers, lab_layout_words(cap) each */
    void *d_scratch;   /* the lab's scratch (tile labs: tile totals, then the carries' temp) */
    size_t scratch_bytes;
    size_t scratch_n; /* the n the scratch was last zeroed for */
    void *d_verify;   /* verify.cu's temp */
    uint64_t *d_seed; /* the seed of the call's input, on the device only */
    int *d_sums;      /* tile labs: the tile totals as the lab wrote them */
    void *d_flush;    /* a timed run's: written before each warm-up and timed call so that none
                         starts with a warm L2 (the process's: lab_flush_buffer); NULL when only
                         checked */
    size_t flush_bytes;
    cudaEvent_t *ev;            /* the process's (lab_case_events) */
    int *h_in, *h_out, *h_sums; /* call 0's buffers read back */
    lab_layout li, lo;          /* the call's */
} scan_rig;

/* Every variant that rig_ops.c does not take (case.c asks it first). */
static int scan_accepts(const lab_info *lab, const lab_variant *v)
{
    (void)v;
    return lab->shape != LAB_HOST;
}

/* The device memory a run needs, against what is free, before any of it is allocated (a timed
 * run's flush buffer, which the process keeps, is already; the kept buffers not in use count as
 * free, and when they alone are enough the driver is not asked: call.h, lab_kept_malloc). */
static int scan_fits(scan_rig *g, size_t verify_bytes, size_t tiles, lab_report *r)
{
    const double need = 2.0 * (double)g->words * sizeof(int) + (double)g->scratch_bytes +
                        (double)verify_bytes + (double)tiles * sizeof(int);
    const size_t spare = lab_kept_spare();
    if (need <= (double)spare)
        return 1;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    free_b += spare;
    if (need <= (double)free_b)
        return 1;
    r->status = ST_NO_MEMORY;
    lab_report_msg(r, "n=%zu needs %.2f GB of device memory, only %.2f GB is free", g->cap,
                   need / 1e9, (double)free_b / 1e9);
    return 0;
}

static int scan_alloc(void *self, const lab_case *c, size_t cap, lab_report *r)
{
    scan_rig *g = self;
    const lab_info *lab = c->lab;
    const size_t tiles = lab->shape == LAB_TILE ? CEIL_DIV(cap, lab->tile) : 0;

    r->device = lab_device_name();
    g->cap = cap;
    g->words = lab_layout_words(cap);
    g->scratch_bytes = scratch_bytes(lab, c->v, cap);
    if (c->o->reps > 0 && !(g->d_flush = lab_flush_buffer(&g->flush_bytes, r)))
        return -1;
    const size_t verify_bytes = lab_verify_temp_bytes(cap);
    if (!scan_fits(g, verify_bytes, tiles, r))
        return -1;
    g->h_in = malloc(g->words * sizeof(int));
    g->h_out = malloc(g->words * sizeof(int));
    g->h_sums = malloc((tiles ? tiles : 1) * sizeof(int));
    if (!g->h_in || !g->h_out || !g->h_sums) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot allocate host memory for n=%zu", cap);
        return -1;
    }
    if (lab_port_malloc((void **)&g->d_in, g->words * sizeof(int), r, "the input") ||
        lab_port_malloc((void **)&g->d_out, g->words * sizeof(int), r, "the output") ||
        (g->scratch_bytes &&
         lab_port_malloc(&g->d_scratch, g->scratch_bytes, r, "the lab's scratch")) ||
        lab_kept_malloc(&g->d_verify, verify_bytes, r, "the harness's check") ||
        lab_kept_malloc((void **)&g->d_seed, sizeof(uint64_t), r, "the input's seed") ||
        (tiles && lab_kept_malloc((void **)&g->d_sums, tiles * sizeof(int), r, "the tile totals")))
        return -1;
    g->ev = lab_case_events();
    g->scratch_n = (size_t)-1;
    return 0;
}

static void scan_free(void *self)
{
    scan_rig *g = self;
    void *bufs[] = {g->d_sums, g->d_seed, g->d_verify}; /* not d_flush; all kept (call.h) */
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        lab_kept_free(bufs[i]);
    void *shared[] = {g->d_scratch, g->d_out, g->d_in}; /* the lab's (port.h) */
    for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
        lab_port_free(shared[i]);
    free(g->h_sums);
    free(g->h_out);
    free(g->h_in);
}

/* Call 0 scans the case's own input (its seed: reproducible, checked against the CPU reference);
 * every later call an input drawn on the GPU from a secret seed. */
static void scan_prepare(void *self, const lab_case *c, int k, size_t n)
{
    scan_rig *g = self;
    const lab_info *lab = c->lab;
    const lab_options *o = c->o;
    g->li = lab_make_layout(g->cap, n, o->offset_in);
    g->lo = lab_make_layout(g->cap, n, o->offset_out);
    lab_gen_input(g->d_in, g->li.front, n, g->li.back, (int)o->dist,
                  lab_call_seed(o->seed, (unsigned)k), k > 0, g->d_seed);
    lab_prep_output(g->d_out, g->lo.front, n, g->lo.back);
    if (g->scratch_bytes && g->scratch_n != n) { /* zero-filled for each new n (lab.h) */
        CUDA_CHECK(cudaMemset(g->d_scratch, 0, scratch_bytes(lab, c->v, n)));
        g->scratch_n = n;
    }
    if (lab->shape == LAB_TILE && n) /* so a tile total the lab never writes is caught */
        CUDA_CHECK(cudaMemset(g->d_scratch, LAB_POISON_BYTE, CEIL_DIV(n, lab->tile) * sizeof(int)));
    if (g->d_flush && k >= o->calls) /* the warm-up and timed calls start with a cold L2 */
        CUDA_CHECK(cudaMemsetAsync(g->d_flush, k & 0xFF, g->flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* The harness's own kernels (input, guards) run once before the sandbox: everything is loaded. */
static void scan_warm(void *self, const lab_case *c)
{
    scan_prepare(self, c, 0, lab_call_n(c->o, 0));
}

/* Events: 0 before the lab's call, 1 after it (a tile lab's tile pass), 2 after the carries. */
static lab_result scan_invoke(void *self, const lab_case *c, int k, size_t n, lab_call_ms *ms)
{
    scan_rig *g = self;
    const lab_info *lab = c->lab;
    const int *d_in = g->d_in + g->li.front;
    int *d_out = g->d_out + g->lo.front;
    lab_result res;

    lab_port_args a = {.in = d_in, .out = d_out, .n = n};
    if (lab->shape == LAB_TILE) { /* the tile pass; the carries are the harness's (below) */
        a.kind = LAB_ENTRY_TILES;
        a.tile_sums = (int *)g->d_scratch;
    } else {
        a.kind = LAB_ENTRY_SCAN;
        a.temp = g->d_scratch;
    }

    CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
    res = lab_port_call(c, k, &a);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize()); /* every stream: all of the lab's work is counted */
    CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    if (res == LAB_NOT_IMPLEMENTED)
        return res;
    if (lab->shape == LAB_TILE && n) { /* keep the totals, then the harness's carries */
        const size_t tiles = CEIL_DIV(n, lab->tile);
        CUDA_CHECK(
            cudaMemcpy(g->d_sums, g->d_scratch, tiles * sizeof(int), cudaMemcpyDeviceToDevice));
        lab_device_carries(lab, d_out, n, g->d_scratch);
    }
    CUDA_CHECK(cudaEventRecord(g->ev[2], 0));
    CUDA_CHECK(cudaEventSynchronize(g->ev[2]));
    if (ms) { /* a judge's channel is taken off the run's medians (case.c: timings_finish) */
        ms->scan = lab_event_ms(g->ev[0], g->ev[2]);
        ms->tile = lab_event_ms(g->ev[0], g->ev[1]);
    }
    return res;
}

/* Call 0 of an untimed run: everything read back and checked on the host against the CPU
 * reference, the tile totals too. */
static lab_status check_on_host(scan_rig *g, const lab_case *c, size_t n, lab_report *r)
{
    const lab_info *lab = c->lab;
    const size_t words = g->li.front + n + g->li.back;
    CUDA_CHECK(cudaMemcpy(g->h_in, g->d_in, words * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(g->h_out, g->d_out, words * sizeof(int), cudaMemcpyDeviceToHost));
    if (lab_validate(lab, c->first->in, c->first->ref, 0, g->h_in, g->li, g->h_out, g->lo, r) !=
        ST_OK)
        return r->status;
    if (lab->shape == LAB_TILE && n) {
        CUDA_CHECK(cudaMemcpy(g->h_sums, g->d_sums, CEIL_DIV(n, lab->tile) * sizeof(int),
                              cudaMemcpyDeviceToHost));
        return lab_validate_sums(lab, c->first->in, n, g->h_sums, r);
    }
    return ST_OK;
}

/* Every other call: on the GPU (verify.cu), the input regenerated from its seed. */
static lab_status scan_check(void *self, const lab_case *c, int k, size_t n, lab_report *r)
{
    scan_rig *g = self;
    const lab_info *lab = c->lab;
    lab_call_verdict verdict;
    if (k == 0 && c->first)
        return check_on_host(g, c, n, r);
    if (lab_verify_call(g->d_in, g->d_out, g->li.front, g->lo.front, n, g->li.back, g->lo.back,
                        (int)c->o->dist, g->d_seed, lab->type,
                        lab->shape == LAB_TILE ? g->d_sums : NULL, lab->tile, g->d_verify,
                        &verdict) != 0)
        return lab_report_verdict(lab, &verdict, n, r);
    return ST_OK;
}

static double scan_copy_ms(void *self, const lab_case *c, size_t n)
{
    scan_rig *g = self;
    (void)c;
    return lab_time_copy(g->d_out + g->lo.front, g->d_in + g->li.front, n, g->d_flush,
                         g->flush_bytes, g->ev);
}

const lab_rig lab_rig_scan = {
    .size = sizeof(scan_rig),
    .reference = LAB_REF_UNTIMED,
    .accepts = scan_accepts,
    .alloc = scan_alloc,
    .warm = scan_warm,
    .prepare = scan_prepare,
    .invoke = scan_invoke,
    .check = scan_check,
    .copy_ms = scan_copy_ms,
    .free = scan_free,
};
