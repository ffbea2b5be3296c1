/* bench_cub.cu — the benchmark's anchor: CUB's DeviceScan::InclusiveSum on int32, timed exactly
 * the way the lab harness times a lab, and printed in the same one-line report (or JSON).
 *
 * Not a lab and not part of any grade: `make bench` (grader/bench.py) runs it next to each lab
 * binary so every lab can be quoted as "x CUB". CUB appears here and nowhere else.
 *
 * Method (the same as the harness, common/harness/): the input comes from lab_fill_input, the
 * result is checked against the CPU reference before timing; then `warmup` untimed scans, then
 * `reps` rounds, each timing with CUDA events a device-to-device copy of the n input words and then
 * the scan, each after a write over a buffer twice the size of L2 and a device-wide sync, and
 * each ended by a device-wide sync (time_reps). Medians are reported. CUB's
 * scratch is allocated once, outside the timed region. n below 2^31 is passed as int (what most
 * callers pass; CUB picks 32-bit offsets), larger n as size_t.
 *
 * Lab 09's operators (--op): max and min are DeviceScan::InclusiveScan with cuda::maximum<> and
 * cuda::minimum<>, fadd InclusiveSum on float, seg_add InclusiveSumByKey with one key per element
 * (the segment's number, made on the host from the same heads the lab gets; CUB reads keys,
 * values and writes values: 12n bytes). Inputs and checks are common/ops.c's, as the harness's.
 *
 * Lab 10's applications: compact is DeviceSelect::If with the lab's predicate (x > 0), sort
 * DeviceRadixSort::SortKeys on unsigned keys, csr DeviceHistogram::HistogramEven (one bin per row)
 * followed by DeviceScan::ExclusiveSum of the n_rows + 1 counts (CUB has no CSR builder: this is
 * the same two steps the lab takes). Checked by common/ops.c's lab_apps_check, as the harness does.
 *
 * Usage: bench_cub [--op add|max|min|fadd|seg_add|compact|sort|csr] [--n N] [--reps R] [--warmup W]
 * [--seed S]
 *        [--dist D] [--json]
 * Exit codes as a lab binary's (lab.h): 0 ok, 1 wrong, 2 usage, 4 CUDA error, 5 no device,
 * 6 out of memory.
 *
 * Size: about 450 lines, over the house's 400, because it is one program that stands for CUB in
 * every job the labs time (scans with each operator, scan by key, select, sort, histogram) and
 * times each the way the harness does; the per-job CUB calls are short, the rig around them one.
 */
#include "inputs.h"
#include "ops.h"
#include "options.h"
#include "report.h"
#include "validate.h"
#include "course/10_applications.h"
#include "cuda_check.h"
#include "harness/call.h"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <stdlib.h>
#include <string.h>

/* The anchor's own descriptor, only so the report has a name and a shape. */
static const lab_info CUB_ANCHOR = {
    "cub", "CUB DeviceScan::InclusiveSum", LAB_WHOLE, SCAN_INCLUSIVE, 0, 0, (size_t)1 << 26, 0,
    NULL,
};

static lab_report g_report;
static int g_json;

static void print_report(const lab_report *r)
{
    if (g_json)
        lab_print_report_json(stdout, r);
    else
        lab_print_report_text(stdout, r);
    fflush(stdout);
}

static void on_cuda_fail(const char *what, cudaError_t err)
{
    g_report.status = ST_CUDA_ERROR;
    g_report.reps = 0;
    snprintf(g_report.message, sizeof(g_report.message), "CUDA error %s (%s) in %s",
             cudaGetErrorName(err), cudaGetErrorString(err), what);
    print_report(&g_report);
}

static lab_op g_op = LAB_OP_ADD; /* --op */
static const int *g_keys;        /* seg_add: the segment number of every element, on the device */
static size_t *g_selected;       /* compact: the count */
static int *g_counts;            /* csr: n_rows + 1 counts (the last one 0) */
static size_t g_rows;            /* csr: n_rows */
#define CSR_MAX_BINS (1 << 22)   /* csr: the most rows the anchor takes (see rig_alloc) */

struct KeepPositive {
    __device__ bool operator()(int x) const { return APPS_KEEP(x); }
};

/* csr: the row histogram, then the exclusive scan of the counts (the scratch: the larger). */
template <class N>
static void cub_csr(void *d_tmp, size_t *tmp_bytes, const int *d_rows, int *d_out, N n)
{
    size_t hist_bytes = *tmp_bytes, scan_bytes = *tmp_bytes;
    const int bins = (int)g_rows;
    /* 64-bit levels: CUB maps a sample to its bin as (x - lower) * bins / (upper - lower), which
     * overflows 32 bits for millions of rows */
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(d_tmp, hist_bytes, d_rows, g_counts, bins + 1,
                                                   (long long)0, (long long)bins, n));
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_tmp, scan_bytes, g_counts, d_out, bins + 1));
    if (!d_tmp)
        *tmp_bytes = hist_bytes > scan_bytes ? hist_bytes : scan_bytes;
}

/* One of CUB's scans with n of type N (int below 2^31, as most callers pass; size_t above). */
template <class N>
static void cub_scan_n(void *d_tmp, size_t *tmp_bytes, const int *d_in, int *d_out, N n)
{
    switch (g_op) {
    case LAB_OP_MAX:
        CUDA_CHECK(cub::DeviceScan::InclusiveScan(d_tmp, *tmp_bytes, d_in, d_out,
                                                  cuda::maximum<int>{}, n));
        break;
    case LAB_OP_MIN:
        CUDA_CHECK(cub::DeviceScan::InclusiveScan(d_tmp, *tmp_bytes, d_in, d_out,
                                                  cuda::minimum<int>{}, n));
        break;
    case LAB_OP_FADD:
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_tmp, *tmp_bytes, (const float *)d_in,
                                                 (float *)d_out, n));
        break;
    case LAB_OP_SEG_ADD:
        CUDA_CHECK(cub::DeviceScan::InclusiveSumByKey(d_tmp, *tmp_bytes, g_keys, d_in, d_out, n));
        break;
    case LAB_OP_COMPACT:
        CUDA_CHECK(
            cub::DeviceSelect::If(d_tmp, *tmp_bytes, d_in, d_out, g_selected, n, KeepPositive{}));
        break;
    case LAB_OP_SORT:
        CUDA_CHECK(cub::DeviceRadixSort::SortKeys(d_tmp, *tmp_bytes, (const unsigned *)d_in,
                                                  (unsigned *)d_out, n));
        break;
    case LAB_OP_CSR:
        cub_csr(d_tmp, tmp_bytes, d_in, d_out, n);
        break;
    default:
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_tmp, *tmp_bytes, d_in, d_out, n));
    }
}

/* Runs CUB's scan on the default stream (two calls: size query, then the scan). */
static void cub_scan(void *d_tmp, size_t *tmp_bytes, const int *d_in, int *d_out, size_t n)
{
    if (n < ((size_t)1 << 31))
        cub_scan_n(d_tmp, tmp_bytes, d_in, d_out, (int)n);
    else
        cub_scan_n(d_tmp, tmp_bytes, d_in, d_out, n);
}

/* Everything a run allocates; rig_free releases it, whatever was reached. */
typedef struct {
    int *h_in, *h_ref, *h_out, *d_in, *d_out;
    int *h_heads, *d_keys;    /* seg_add */
    size_t out_len, ref_len;  /* the output's elements (csr: n_rows + 1), the reference's */
    double *want_d, *bound_d; /* fadd */
    void *d_tmp, *d_flush;
    size_t tmp_bytes, flush_bytes;
    double *t_scan, *t_copy;
    cudaEvent_t ev[2];
} cub_rig;

/* The device's name into r; ST_NO_DEVICE when there is none. */
static lab_status find_device(lab_report *r)
{
    static char device_name[256];
    struct cudaDeviceProp prop;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        r->status = ST_NO_DEVICE;
        snprintf(r->message, sizeof(r->message), "no CUDA device");
        return r->status;
    }
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof(device_name), "%s", prop.name);
    r->device = device_name;
    return ST_OK;
}

/* Whether the device has room for n elements, the output, CUB's scratch and the L2 flush buffer
 * (sizes kept in g). Returns 0, or -1 with r's status set. */
static int rig_fits(cub_rig *g, const lab_options *o, lab_report *r)
{
    const size_t n = o->n;
    size_t free_b = 0, total_b = 0;

    g->out_len = lab_apps_out_len(g_op, n, o->dist);
    g_rows = g->out_len - 1;
    cub_scan(NULL, &g->tmp_bytes, NULL, NULL, n);
    g->flush_bytes = lab_flush_bytes(); /* the harness's: twice the L2 */
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double need = ((double)n + (double)g->out_len) * sizeof(int) + (double)g->tmp_bytes +
                  (double)g->flush_bytes;
    if (need > (double)free_b) {
        r->status = ST_NO_MEMORY;
        snprintf(r->message, sizeof(r->message),
                 "n=%zu needs %.2f GB of device memory, only %.2f GB is free", n, need / 1e9,
                 (double)free_b / 1e9);
        return -1;
    }
    return 0;
}

/* The host buffers and the timings; the input and its reference made. Returns 0, or -1 with r's
 * status set. */
static int rig_host(cub_rig *g, const lab_options *o, lab_report *r)
{
    const size_t n = o->n, reps = (size_t)(o->reps > 0 ? o->reps : 1);
    g->h_in = (int *)malloc(n * sizeof(int));
    g->h_ref = (int *)malloc(g->out_len * sizeof(int));
    g->h_out = (int *)malloc(g->out_len * sizeof(int));
    g->t_scan = (double *)malloc(reps * sizeof(double));
    g->t_copy = (double *)malloc(reps * sizeof(double));
    g->h_heads = (int *)malloc(n * sizeof(int));
    g->want_d = (double *)malloc(n * sizeof(double));
    g->bound_d = (double *)malloc(n * sizeof(double));
    if (!g->h_in || !g->h_ref || !g->h_out || !g->t_scan || !g->t_copy || !g->h_heads ||
        !g->want_d || !g->bound_d) {
        r->status = ST_NO_MEMORY;
        snprintf(r->message, sizeof(r->message), "cannot allocate host memory for n=%zu", n);
        return -1;
    }
    lab_ops_fill(g_op, g->h_in, g->h_heads, n, o->dist, o->seed);
    if (g_op >= LAB_OP_COMPACT) {
        g->ref_len = lab_apps_reference(g_op, g->h_in, n, o->dist, g->h_ref);
        if (g->ref_len == (size_t)-1) {
            r->status = ST_NO_MEMORY;
            snprintf(r->message, sizeof(r->message), "cannot allocate host memory to sort");
            return -1;
        }
    } else {
        lab_ops_reference(g_op, SCAN_INCLUSIVE, g->h_in, g->h_heads, n, g->h_ref, g->want_d,
                          g->bound_d);
    }
    if (g_op == LAB_OP_CSR && g_rows > CSR_MAX_BINS) {
        r->status = ST_TOO_LARGE;
        snprintf(r->message, sizeof(r->message),
                 "%zu rows: CUB's DeviceHistogram with one bin per row faults past %d bins "
                 "(illegal address, measured on an H100 with CUDA 13's CUB), so no anchor here",
                 g_rows, CSR_MAX_BINS);
        return -1;
    }
    return 0;
}

/* The device buffers (each job's own besides in, out, CUB's scratch and the flush buffer), the
 * input copied there, the events. */
static void rig_device(cub_rig *g, const lab_options *o)
{
    const size_t n = o->n;
    if (g_op == LAB_OP_COMPACT)
        CUDA_CHECK(cudaMalloc((void **)&g_selected, sizeof(size_t)));
    if (g_op == LAB_OP_CSR)
        CUDA_CHECK(cudaMalloc((void **)&g_counts, g->out_len * sizeof(int)));
    if (g_op == LAB_OP_SEG_ADD) { /* keys: the segment number, counting heads (and 0) */
        int key = 0;
        for (size_t i = 0; i < n; i++) {
            key += i > 0 && g->h_heads[i];
            g->h_heads[i] = key;
        }
        CUDA_CHECK(cudaMalloc((void **)&g->d_keys, n * sizeof(int)));
        CUDA_CHECK(cudaMemcpy(g->d_keys, g->h_heads, n * sizeof(int), cudaMemcpyHostToDevice));
        g_keys = g->d_keys;
    }
    CUDA_CHECK(cudaMalloc((void **)&g->d_in, n * sizeof(int)));
    /* at least n: the copy baseline writes n words there */
    CUDA_CHECK(cudaMalloc((void **)&g->d_out, (g->out_len > n ? g->out_len : n) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&g->d_tmp, g->tmp_bytes ? g->tmp_bytes : 1));
    CUDA_CHECK(cudaMalloc(&g->d_flush, g->flush_bytes));
    CUDA_CHECK(cudaMemcpy(g->d_in, g->h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    for (int e = 0; e < 2; e++)
        CUDA_CHECK(cudaEventCreate(&g->ev[e]));
}

/* Host and device buffers for n elements, CUB's scratch, the L2 flush buffer, the timings and
 * the events; the input and its reference made. Returns 0, or -1 with r's status set. */
static int rig_alloc(cub_rig *g, const lab_options *o, lab_report *r)
{
    if (rig_fits(g, o, r) != 0 || rig_host(g, o, r) != 0)
        return -1;
    rig_device(g, o);
    return 0;
}

static void rig_free(cub_rig *g)
{
    for (int e = 0; e < 2; e++)
        if (g->ev[e])
            cudaEventDestroy(g->ev[e]);
    cudaFree(g->d_keys);
    cudaFree(g_selected);
    cudaFree(g_counts);
    free(g->bound_d);
    free(g->want_d);
    free(g->h_heads);
    cudaFree(g->d_flush);
    cudaFree(g->d_tmp);
    cudaFree(g->d_out);
    cudaFree(g->d_in);
    free(g->t_copy);
    free(g->t_scan);
    free(g->h_out);
    free(g->h_ref);
    free(g->h_in);
}

/* Reads the output back and compares it with the reference; when: "" or "after timing: ". */
static lab_status check_output(cub_rig *g, size_t n, const char *when, lab_report *r)
{
    if (g_op >= LAB_OP_COMPACT) {
        size_t count = 0;
        const size_t len = g_op == LAB_OP_COMPACT ? n : g->out_len;
        CUDA_CHECK(cudaMemset(g->d_out, LAB_POISON_BYTE, len * sizeof(int))); /* for the tail */
        cub_scan(g->d_tmp, &g->tmp_bytes, g->d_in, g->d_out, n);
        CUDA_CHECK(cudaMemcpy(g->h_out, g->d_out, len * sizeof(int), cudaMemcpyDeviceToHost));
        if (g_selected)
            CUDA_CHECK(cudaMemcpy(&count, g_selected, sizeof(count), cudaMemcpyDeviceToHost));
        lab_apps_verdict v;
        lab_apps_check(g_op, g->h_in, n, g->h_out, count, g->h_ref, g->ref_len, &v);
        if (!v.ok) {
            r->status = ST_WRONG;
            snprintf(r->message, sizeof(r->message), "%sCUB: %s", when, v.message);
        }
        return r->status;
    }
    CUDA_CHECK(cudaMemcpy(g->h_out, g->d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    lab_ops_verdict v;
    lab_ops_check(g_op, SCAN_INCLUSIVE, g->h_out, g->h_ref, g->want_d, g->bound_d, n, &v);
    if (v.bad < n) {
        r->status = ST_WRONG;
        snprintf(r->message, sizeof(r->message), "%sCUB's out[%zu] expected %s%s%s, got %s", when,
                 v.bad, v.expected, v.why[0] ? " " : "", v.why, v.got);
    }
    if (g_op == LAB_OP_FADD && v.max_ratio > r->fp_max_ratio) {
        r->fp_max_ratio = v.max_ratio;
        r->fp_max_error = v.max_err;
    }
    return r->status;
}

/* Warm-up, then reps rounds of [flush, copy, flush, scan], each timed the way the harness times a
 * lab's call (common/harness/rig_ops.c, ops_prepare and ops_invoke; the copy by the harness's own
 * lab_time_copy): the flush and a device-wide sync before it, an event, the call, a device-wide
 * sync, an event. So the same costs around the kernels (the host's launch, the wait for the sync)
 * are in both times of a ratio. The copy comes first so that the scan's output is what the check
 * after timing reads. (The scan was once queued behind the flush with no sync, which kept the
 * launch out of CUB's time but not out of a lab's: grader/BENCH.md has the numbers.) */
static void time_reps(cub_rig *g, const lab_options *o, lab_report *r)
{
    const size_t n = o->n;
    for (int w = 0; w < o->warmup; w++)
        cub_scan(g->d_tmp, &g->tmp_bytes, g->d_in, g->d_out, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < o->reps; i++) {
        g->t_copy[i] = lab_time_copy(g->d_out, g->d_in, n, g->d_flush, g->flush_bytes, g->ev);
        CUDA_CHECK(cudaMemsetAsync(g->d_flush, i & 0xFF, g->flush_bytes, 0));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
        cub_scan(g->d_tmp, &g->tmp_bytes, g->d_in, g->d_out, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
        CUDA_CHECK(cudaEventSynchronize(g->ev[1]));
        g->t_scan[i] = lab_event_ms(g->ev[0], g->ev[1]);
    }
    r->reps = o->reps;
    r->ms = lab_median(g->t_scan, (size_t)o->reps);
    r->memcpy_ms = lab_median(g->t_copy, (size_t)o->reps);
}

/* Fills r with the timing of n elements; returns r->status. */
static lab_status run(const lab_options *o, lab_report *r)
{
    cub_rig g;
    memset(&g, 0, sizeof(g));
    if (find_device(r) != ST_OK)
        return r->status;
    if (o->n == 0) {
        snprintf(r->message, sizeof(r->message), "n=0: nothing to time");
        return r->status;
    }
    if (rig_alloc(&g, o, r) != 0)
        goto out_free;
    /* correctness first: an anchor that computes something else would make every ratio a lie */
    cub_scan(g.d_tmp, &g.tmp_bytes, g.d_in, g.d_out, o->n);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (check_output(&g, o->n, "", r) != ST_OK || o->reps <= 0)
        goto out_free;
    time_reps(&g, o, r);
    check_output(&g, o->n, "after timing: ", r); /* once more after timing, as the harness does */
out_free:
    rig_free(&g);
    return r->status;
}

int main(int argc, char **argv)
{
    lab_options o;
    char err[256] = "";
    const char *prog = argc > 0 ? argv[0] : "bench_cub";

    lab_default_options(&o);
    /* --op NAME (the anchor's own option) is taken out before the harness's options */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--op") == 0) {
            int found = -1;
            for (int k = LAB_OP_ADD; k <= LAB_OP_CSR; k++)
                if (strcmp(argv[i + 1], lab_op_name((lab_op)k)) == 0)
                    found = k;
            if (found < 0) {
                fprintf(stderr,
                        "%s: unknown --op '%s' (add, max, min, fadd, seg_add, compact, sort, "
                        "csr)\n",
                        prog, argv[i + 1]);
                return LAB_EXIT_USAGE;
            }
            g_op = (lab_op)found;
            memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(char *));
            argc -= 2;
            break;
        }
    if (lab_parse_args(argc, argv, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.help) {
        printf(
            "usage: %s [--n N] [--reps R] [--warmup W] [--seed S] [--dist D] [--json]\n"
            "CUB DeviceScan::InclusiveSum on int32, timed like a lab (see common/bench_cub.cu)\n",
            prog);
        return LAB_EXIT_OK;
    }
    if (o.list || o.variant) {
        fprintf(stderr, "%s: the CUB anchor has no variants\n", prog);
        return LAB_EXIT_USAGE;
    }
    if (!o.n_given)
        o.n = CUB_ANCHOR.bench_n;
    g_json = o.json;
    static const char *const NAMES[] = {"DeviceScan::InclusiveSum",
                                        "DeviceScan max",
                                        "DeviceScan min",
                                        "DeviceScan::InclusiveSum float",
                                        "DeviceScan::InclusiveSumByKey",
                                        "DeviceSelect::If",
                                        "DeviceRadixSort::SortKeys",
                                        "DeviceHistogram::HistogramEven + ExclusiveSum"};
    lab_report_init(&g_report, &CUB_ANCHOR, NAMES[g_op], &o);
    g_report.op = lab_op_name(g_op);
    lab_cuda_fail_hook = on_cuda_fail;
    run(&o, &g_report);
    lab_cuda_fail_hook = NULL;
    print_report(&g_report);
    return lab_status_exit_code(g_report.status);
}
