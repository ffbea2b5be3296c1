/* rig_ops.c — the calls of a variant whose op is not int + (lab.h: lab_op): lab 09's other
 * operators and lab 10's applications of a scan (see rig.h).
 *
 * Every call's input (and segment heads) is made on the host from the call's seed, copied to
 * the device between canary words, and the whole call (output, guards, input, heads) is read
 * back and checked on the host against ops.c's reference: exactly for the int operators, within
 * ops.c's order-independent bound for floats (bit-exact where every order of additions gives the
 * same float); an application's output by lab_apps_check (a compaction's count too, an 8-byte
 * word the harness poisons before each call). A CSR output has n_rows + 1 words, up to 2n + 2.
 *
 * A timed run of a sort or a compaction (whose inputs are lab_input_value's ints, as the GPU makes
 * them) makes and checks every call on the GPU (verify.cu: lab_verify_app), call 0's input from
 * the case's seed and every later one's from a secret seed, as rig_scan.c does for the scans: at
 * the benchmark size a host check costs ~100 times the lab's call (call 0 on the host was 0.25 s
 * of a 0.5 s timed run of lab 10's sort at 2^24 on an H100). A call the GPU finds wrong is
 * read back, its input made again on the host from the seed, and checked by the host check, which
 * gives the verdict and the message, the same as in an untimed run.
 */
#include "rig.h"
#include "cuda_check.h"
#include "port.h"
#include "gen.h"
#include "ops.h"
#include "verdict.h"
#include "verify.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t cap, words;
    int *d_in, *d_heads, *d_out; /* guarded, words each (d_heads: LAB_OP_SEG_ADD only) */
    size_t out_cap, out_words;   /* d_out's largest output and words (CSR: 2 cap + 2) */
    size_t *d_count;             /* LAB_OP_COMPACT: the count */
    void *d_scratch, *d_flush;
    void *d_verify;   /* lab_verify_app's temp (a run that checks on the GPU; else NULL) */
    uint64_t *d_seed; /* the seed of a GPU-made input, on the device only */
    size_t scratch_bytes, scratch_n, flush_bytes;
    cudaEvent_t *ev;                             /* the process's (lab_case_events) */
    int *h_in, *h_heads, *h_out, *h_back, *want; /* h_*: guarded words; want: cap */
    double *want_d, *bound_d;                    /* LAB_OP_FADD: cap each */
    lab_layout li, lo;                           /* the call's input (and heads) and output */
} ops_rig;

/* 1 when the calls are made and checked on the GPU: every call of a timed run (its sizes were
 * checked against the host by the untimed runs), of an op whose input is lab_input_value's ints
 * (lab_ops_fill) and that lab_verify_app checks. */
static int on_gpu(const lab_case *c)
{
    return c->o->reps > 0 && (c->v->op == LAB_OP_SORT || c->v->op == LAB_OP_COMPACT);
}

static int ops_accepts(const lab_info *lab, const lab_variant *v)
{
    (void)lab;
    return v->op != LAB_OP_ADD;
}

/* The n a variant's temp_bytes is asked for, for an input of n: the scan's length for CSR. */
static size_t scratch_n(const lab_variant *v, size_t n, lab_dist d)
{
    return v->op == LAB_OP_CSR ? lab_apps_out_len(v->op, n, d) : n;
}

static int ops_alloc_host(ops_rig *g, const lab_variant *v, lab_report *r)
{
    const int seg = v->op == LAB_OP_SEG_ADD, fl = v->op == LAB_OP_FADD;
    const size_t bytes = g->words * sizeof(int), out_bytes = g->out_words * sizeof(int);
    g->h_in = malloc(bytes);
    g->h_heads = seg ? malloc(bytes) : NULL;
    g->h_out = malloc(out_bytes);
    g->h_back = malloc(out_bytes > bytes ? out_bytes : bytes);
    g->want = malloc(g->out_cap * sizeof(int) + sizeof(int));
    g->want_d = fl ? malloc((g->cap ? g->cap : 1) * sizeof(double)) : NULL;
    g->bound_d = fl ? malloc((g->cap ? g->cap : 1) * sizeof(double)) : NULL;
    if (!g->h_in || (seg && !g->h_heads) || !g->h_out || !g->h_back || !g->want ||
        (fl && (!g->want_d || !g->bound_d))) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot allocate host memory for n=%zu", g->cap);
        return -1;
    }
    return 0;
}

static int ops_alloc(void *self, const lab_case *c, size_t cap, lab_report *r)
{
    ops_rig *g = self;
    const lab_variant *v = c->v;
    r->device = lab_device_name();
    g->cap = cap;
    g->words = lab_layout_words(cap);
    g->out_cap = v->op == LAB_OP_CSR ? 2 * cap + 2 : cap;
    g->out_words = lab_layout_words(g->out_cap);
    g->scratch_bytes = lab_port_temp_bytes(v, g->out_cap);
    g->scratch_n = (size_t)-1;
    const size_t bytes = g->words * sizeof(int), out_bytes = g->out_words * sizeof(int);
    if (ops_alloc_host(g, v, r) != 0)
        return -1;
    if (lab_port_malloc((void **)&g->d_in, bytes, r, "the input") ||
        (g->h_heads && lab_port_malloc((void **)&g->d_heads, bytes, r, "the segment heads")) ||
        lab_port_malloc((void **)&g->d_out, out_bytes, r, "the output") ||
        (v->op == LAB_OP_COMPACT &&
         lab_port_malloc((void **)&g->d_count, sizeof(size_t), r, "the compaction's count")) ||
        (g->scratch_bytes &&
         lab_port_malloc(&g->d_scratch, g->scratch_bytes, r, "the lab's scratch")) ||
        (c->o->reps > 0 && !(g->d_flush = lab_flush_buffer(&g->flush_bytes, r))))
        return -1;
    if (on_gpu(c) &&
        (lab_kept_malloc(&g->d_verify, lab_verify_temp_bytes(cap), r, "the harness's check") ||
         lab_kept_malloc((void **)&g->d_seed, sizeof(uint64_t), r, "the input's seed")))
        return -1;
    g->ev = lab_case_events();
    return 0;
}

static void ops_free(void *self)
{
    ops_rig *g = self;
    void *d[] = {g->d_seed, g->d_verify}; /* not d_flush; all kept (call.h) */
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        lab_kept_free(d[i]);
    void *shared[] = {g->d_scratch, g->d_count, g->d_out, g->d_heads, g->d_in}; /* port.h */
    for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
        lab_port_free(shared[i]);
    void *h[] = {g->bound_d, g->want_d, g->want, g->h_back, g->h_out, g->h_heads, g->h_in};
    for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++)
        free(h[i]);
}

/* The call's input (and heads) of n elements drawn from seed, with their guards, on the host. */
static void fill_on_host(ops_rig *g, lab_op op, lab_dist d, size_t n, uint64_t seed)
{
    lab_ops_fill(op, g->h_in + g->li.front, g->h_heads ? g->h_heads + g->li.front : NULL, n, d,
                 seed);
    lab_guard_host(g->h_in, g->li);
    if (g->h_heads)
        lab_guard_host(g->h_heads, g->li);
}

/* Call k's input, heads and poisoned output: made on the host and copied to the device, or made
 * on the GPU (on_gpu); the count poisoned, the scratch zeroed for a new n, L2 flushed before a
 * warm-up or timed call. */
static void ops_prepare(void *self, const lab_case *c, int k, size_t n)
{
    ops_rig *g = self;
    const lab_variant *v = c->v;
    const lab_options *o = c->o;
    const lab_layout li = g->li = lab_make_layout(g->cap, n, o->offset_in);
    const lab_layout lo = g->lo =
        lab_make_layout(g->out_cap, lab_apps_out_len(v->op, n, o->dist), o->offset_out);
    const size_t in_words = li.front + n + li.back, out_words = lo.front + lo.n + lo.back;
    if (on_gpu(c)) {
        lab_gen_input(g->d_in, li.front, n, li.back, (int)o->dist,
                      lab_call_seed(o->seed, (unsigned)k), k > 0, g->d_seed);
        lab_prep_output(g->d_out, lo.front, lo.n, lo.back);
    } else {
        fill_on_host(g, v->op, o->dist, n, lab_call_seed(o->seed, (unsigned)k));
        memset(g->h_out + lo.front, LAB_POISON_BYTE, lo.n * sizeof(int));
        lab_guard_host(g->h_out, lo);
        CUDA_CHECK(cudaMemcpy(g->d_in, g->h_in, in_words * sizeof(int), cudaMemcpyHostToDevice));
        if (g->h_heads)
            CUDA_CHECK(
                cudaMemcpy(g->d_heads, g->h_heads, in_words * sizeof(int), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(g->d_out, g->h_out, out_words * sizeof(int), cudaMemcpyHostToDevice));
    }
    if (g->d_count)
        CUDA_CHECK(cudaMemset(g->d_count, 0xFF, sizeof(size_t)));
    const size_t sn = scratch_n(v, n, o->dist);
    if (g->scratch_bytes && g->scratch_n != sn) {
        CUDA_CHECK(cudaMemset(g->d_scratch, 0, lab_port_temp_bytes(v, sn)));
        g->scratch_n = sn;
    }
    if (g->d_flush && k >= o->calls) /* the warm-up and timed calls start with a cold L2 */
        CUDA_CHECK(cudaMemsetAsync(g->d_flush, k & 0xFF, g->flush_bytes, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* The entry point of the variant's op (lab.h), timed between events 0 and 1. */
static lab_result ops_invoke(void *self, const lab_case *c, int k, size_t n, lab_call_ms *ms)
{
    ops_rig *g = self;
    const lab_variant *v = c->v;
    const int *d_in = g->d_in + g->li.front;
    int *d_out = g->d_out + g->lo.front;
    lab_result res;

    const lab_entry_kind kind = lab_entry_of(LAB_WHOLE, v->op);
    const lab_port_args a = {.kind = kind,
                             .in = d_in,
                             .heads = kind == LAB_ENTRY_SEG ? g->d_heads + g->li.front : NULL,
                             .out = d_out,
                             .count = kind == LAB_ENTRY_COMPACT ? g->d_count : NULL,
                             .temp = g->d_scratch,
                             .n = n,
                             .n_rows = kind == LAB_ENTRY_CSR ? g->lo.n - 1 : 0};

    CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
    res = lab_port_call(c, k, &a);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
    if (ms && res != LAB_NOT_IMPLEMENTED) {
        ms->scan = lab_event_ms(g->ev[0], g->ev[1]); /* less the channel's: timings_finish */
        ms->tile = 0;
    }
    return res;
}

/* A guarded device buffer read back must equal the host's copy (the input or the heads). */
static size_t first_changed(ops_rig *g, const int *d_base, const int *h_base, lab_layout l)
{
    const size_t words = l.front + l.n + l.back;
    CUDA_CHECK(cudaMemcpy(g->h_back, d_base, words * sizeof(int), cudaMemcpyDeviceToHost));
    return lab_first_mismatch(g->h_back, h_base, words);
}

/* Reads the output back into h_out and checks what is not its values: the output's guards, and
 * the input and heads (with their guards) unchanged. */
static lab_status check_buffers(ops_rig *g, const lab_variant *v, size_t n, lab_report *r)
{
    const lab_layout li = g->li, lo = g->lo;
    const size_t m = lo.n, out_words = lo.front + m + lo.back;
    size_t k;
    CUDA_CHECK(cudaMemcpy(g->h_back, g->d_out, out_words * sizeof(int), cudaMemcpyDeviceToHost));
    if ((k = lab_canary_check(g->h_back, lo.front)) < lo.front) {
        r->status = ST_OUT_OF_BOUNDS;
        lab_report_msg(r, "wrote before the output: out[-%zu] changed (n=%zu)", lo.front - k, n);
        return r->status;
    }
    if ((k = lab_canary_check(g->h_back + lo.front + m, lo.back)) < lo.back) {
        r->status = ST_OUT_OF_BOUNDS;
        lab_report_msg(r, "wrote past the end of the output: out[%zu] changed (n=%zu%s)", m + k, n,
                       v->op == LAB_OP_CSR ? ", the offsets have n_rows + 1 elements" : "");
        return r->status;
    }
    memcpy(g->h_out, g->h_back, out_words * sizeof(int));
    if (first_changed(g, g->d_in, g->h_in, li) < li.front + n + li.back) {
        r->status = ST_INPUT_MODIFIED;
        lab_report_msg(r, "modified the input or its guard words (n=%zu)", n);
        return r->status;
    }
    if (g->h_heads && first_changed(g, g->d_heads, g->h_heads, li) < li.front + n + li.back) {
        r->status = ST_INPUT_MODIFIED;
        lab_report_msg(r, "modified the segment heads or their guard words (n=%zu)", n);
        return r->status;
    }
    return ST_OK;
}

/* An application (LAB_OP_COMPACT and after): the output (and count) against lab_apps_check. */
static lab_status check_app(ops_rig *g, const lab_variant *v, const lab_options *o, size_t n,
                            lab_report *r)
{
    const int *in = g->h_in + g->li.front, *out = g->h_out + g->lo.front;
    size_t count = 0;
    if (g->d_count)
        CUDA_CHECK(cudaMemcpy(&count, g->d_count, sizeof(count), cudaMemcpyDeviceToHost));
    /* a sort is checked in O(n) (sorted, the same keys); the sorted reference, O(n) passes over
     * 2^16 buckets, is built only to say what is wrong */
    if (v->op == LAB_OP_SORT && lab_sort_matches(in, out, n))
        return ST_OK;
    const size_t want_len = lab_apps_reference(v->op, in, n, o->dist, g->want);
    if (want_len == (size_t)-1) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot allocate host memory to sort n=%zu keys for the check", n);
        return r->status;
    }
    lab_apps_verdict vd;
    lab_apps_check(v->op, in, n, out, count, g->want, want_len, &vd);
    if (vd.ok)
        return ST_OK;
    r->status = ST_WRONG;
    if (v->op == LAB_OP_CSR)
        lab_report_msg(r, "%s (n=%zu nonzeros in %zu rows, dist %s)", vd.message, n, g->lo.n - 1,
                       lab_dist_name(o->dist));
    else
        lab_report_msg(r, "%s (n=%zu, %s)", vd.message, n, lab_op_name(v->op));
    r->has_mismatch = 1;
    r->mismatch_index = (long long)vd.bad;
    return r->status;
}

/* Another operator: every output element against ops.c's reference; a float scan's error, within
 * its bound, is kept for the report (the largest of the run). */
static lab_status check_scan(ops_rig *g, const lab_info *lab, const lab_variant *v, size_t n,
                             lab_report *r)
{
    const int *heads = g->h_heads ? g->h_heads + g->li.front : NULL;
    lab_ops_verdict vd;
    lab_ops_reference(v->op, lab->type, g->h_in + g->li.front, heads, n, g->want, g->want_d,
                      g->bound_d);
    lab_ops_check(v->op, lab->type, g->h_out + g->lo.front, g->want, g->want_d, g->bound_d, n, &vd);
    if (vd.bad < n && v->op == LAB_OP_FADD) {
        r->status = ST_WRONG;
        lab_report_msg(
            r, "out[%zu] expected %s %s, got %s (n=%zu, %s fadd scan; %zu of %zu elements wrong)",
            vd.bad, vd.expected, vd.why, vd.got, n, lab_scan_type_name(lab->type), vd.n_bad, n);
    } else if (vd.bad < n) {
        char where[64] = "";
        if (heads) { /* the segment the wrong element is in */
            size_t start = vd.bad;
            while (start > 0 && !heads[start])
                start--;
            snprintf(where, sizeof(where), ", its segment starts at %zu", start);
        }
        char place[200];
        r->status = ST_WRONG;
        lab_report_msg(r, "out[%zu] expected %s, got %s%s (n=%zu, %s %s scan%s%s)", vd.bad,
                       vd.expected, vd.got, lab_wrong_value_hint(atoll(vd.got)), n,
                       lab_scan_type_name(lab->type), lab_op_name(v->op), where,
                       heads ? "" : lab_tile_place(lab, vd.bad, n, place, sizeof(place)));
    } else {
        if (v->op == LAB_OP_FADD && vd.max_ratio >= r->fp_max_ratio) {
            r->fp_max_ratio = vd.max_ratio;
            r->fp_max_error = vd.max_err;
        }
        return ST_OK;
    }
    r->has_mismatch = 1;
    r->mismatch_index = (long long)vd.bad;
    return r->status;
}

static lab_status ops_check(void *self, const lab_case *c, int k, size_t n, lab_report *r)
{
    ops_rig *g = self;
    (void)k; /* every call is checked the same way (on_gpu says where) */
    if (on_gpu(c)) {
        if (lab_verify_app(c->v->op == LAB_OP_SORT, g->d_in, g->d_out, g->li.front, g->lo.front, n,
                           g->li.back, g->lo.back, (int)c->o->dist, g->d_seed, g->d_count,
                           g->d_verify) == 0)
            return ST_OK;
        /* wrong: the host check below says where and why, on the input made again from the seed
         * (read only now: the lab's call is over); h_out is the right poison for its guards */
        uint64_t seed = 0;
        CUDA_CHECK(cudaMemcpy(&seed, g->d_seed, sizeof(seed), cudaMemcpyDeviceToHost));
        fill_on_host(g, c->v->op, c->o->dist, n, seed);
    }
    if (check_buffers(g, c->v, n, r) != ST_OK)
        return r->status;
    if (c->v->op >= LAB_OP_COMPACT)
        return check_app(g, c->v, c->o, n, r);
    return check_scan(g, c->lab, c->v, n, r);
}

static double ops_copy_ms(void *self, const lab_case *c, size_t n)
{
    ops_rig *g = self;
    (void)c;
    return lab_time_copy(g->d_out + g->lo.front, g->d_in + g->li.front, n, g->d_flush,
                         g->flush_bytes, g->ev);
}

const lab_rig lab_rig_ops = {
    .size = sizeof(ops_rig),
    .reference = LAB_REF_NEVER,
    .accepts = ops_accepts,
    .alloc = ops_alloc,
    .prepare = ops_prepare,
    .invoke = ops_invoke,
    .check = ops_check,
    .copy_ms = ops_copy_ms,
    .free = ops_free,
};
