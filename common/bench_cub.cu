/* bench_cub.cu — the benchmark's anchor: CUB's DeviceScan::InclusiveSum on int32, timed exactly
 * the way the lab harness times a lab, and printed in the same one-line report (or JSON).
 *
 * Not a lab and not part of any grade: `make bench` (grader/bench.py) runs it next to each lab
 * binary so every lab can be quoted as "x CUB". CUB appears here and nowhere else.
 *
 * Method (the same as common/harness.c): the input comes from lab_fill_input, the result is
 * checked against the CPU reference before timing; then `warmup` untimed scans, then `reps`
 * rounds, each timing with CUDA events a device-to-device copy of the n input words and then
 * the scan, each after a write over a buffer twice the size of L2. Medians are reported. CUB's
 * scratch is allocated once, outside the timed region. n below 2^31 is passed as int (what most
 * callers pass; CUB picks 32-bit offsets), larger n as size_t.
 *
 * Usage: bench_cub [--n N] [--reps R] [--warmup W] [--seed S] [--dist D] [--json]
 * Exit codes as a lab binary's (lab.h): 0 ok, 1 wrong, 2 usage, 4 CUDA error, 5 no device,
 * 6 out of memory.
 */
#include "check.h"
#include "cuda_check.h"

#include <cub/device/device_scan.cuh>
#include <stdlib.h>
#include <string.h>

/* The anchor's own descriptor, only so the report has a name and a shape. */
static const lab_info CUB_ANCHOR = {
    "cub", "CUB DeviceScan::InclusiveSum", LAB_WHOLE, SCAN_INCLUSIVE, 0, 0, (size_t)1 << 26, 0, NULL,
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

/* Runs CUB's inclusive sum on the default stream (two calls: size query, then the scan). */
static void cub_scan(void *d_tmp, size_t *tmp_bytes, const int *d_in, int *d_out, size_t n)
{
    if (n < ((size_t)1 << 31))
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_tmp, *tmp_bytes, d_in, d_out, (int)n));
    else
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_tmp, *tmp_bytes, d_in, d_out, n));
}

static double event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return (double)ms;
}

/* Fills r with the timing of n elements; returns r->status. */
static lab_status run(const lab_options *o, lab_report *r)
{
    const size_t n = o->n;
    int *h_in = NULL, *h_ref = NULL, *h_out = NULL, *d_in = NULL, *d_out = NULL;
    void *d_tmp = NULL, *d_flush = NULL;
    size_t tmp_bytes = 0, free_b = 0, total_b = 0, bad = 0;
    double *t_scan = NULL, *t_copy = NULL;
    cudaEvent_t ev[4] = {0, 0, 0, 0};
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
    if (n == 0) {
        snprintf(r->message, sizeof(r->message), "n=0: nothing to time");
        return r->status;
    }

    cub_scan(NULL, &tmp_bytes, NULL, NULL, n);
    const size_t flush_bytes = prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : ((size_t)64 << 20);
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double need = 2.0 * (double)n * sizeof(int) + (double)tmp_bytes + (double)flush_bytes;
    if (need > (double)free_b) {
        r->status = ST_NO_MEMORY;
        snprintf(r->message, sizeof(r->message), "n=%zu needs %.2f GB of device memory, only %.2f GB is free",
                 n, need / 1e9, (double)free_b / 1e9);
        return r->status;
    }
    h_in = (int *)malloc(n * sizeof(int));
    h_ref = (int *)malloc(n * sizeof(int));
    h_out = (int *)malloc(n * sizeof(int));
    t_scan = (double *)malloc((size_t)(o->reps > 0 ? o->reps : 1) * sizeof(double));
    t_copy = (double *)malloc((size_t)(o->reps > 0 ? o->reps : 1) * sizeof(double));
    if (!h_in || !h_ref || !h_out || !t_scan || !t_copy) {
        r->status = ST_NO_MEMORY;
        snprintf(r->message, sizeof(r->message), "cannot allocate host memory for n=%zu", n);
        goto out_free;
    }
    lab_fill_input(h_in, n, o->dist, o->seed);
    lab_reference_scan(h_in, h_ref, n, SCAN_INCLUSIVE);
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_tmp, tmp_bytes ? tmp_bytes : 1));
    CUDA_CHECK(cudaMalloc(&d_flush, flush_bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));

    /* correctness first: an anchor that computes something else would make every ratio a lie */
    cub_scan(d_tmp, &tmp_bytes, d_in, d_out, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = lab_first_mismatch(h_out, h_ref, n);
    if (bad < n) {
        r->status = ST_WRONG;
        snprintf(r->message, sizeof(r->message), "CUB's out[%zu] expected %d, got %d", bad, h_ref[bad],
                 h_out[bad]);
        goto out_free;
    }
    if (o->reps <= 0)
        goto out_free;

    for (int e = 0; e < 4; e++)
        CUDA_CHECK(cudaEventCreate(&ev[e]));
    for (int w = 0; w < o->warmup; w++)
        cub_scan(d_tmp, &tmp_bytes, d_in, d_out, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < o->reps; i++) {
        CUDA_CHECK(cudaMemsetAsync(d_flush, i & 0xFF, flush_bytes, 0));
        CUDA_CHECK(cudaEventRecord(ev[0], 0));
        CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, n * sizeof(int), cudaMemcpyDeviceToDevice, 0));
        CUDA_CHECK(cudaEventRecord(ev[1], 0));
        CUDA_CHECK(cudaMemsetAsync(d_flush, i & 0xFF, flush_bytes, 0));
        CUDA_CHECK(cudaEventRecord(ev[2], 0));
        cub_scan(d_tmp, &tmp_bytes, d_in, d_out, n);
        CUDA_CHECK(cudaEventRecord(ev[3], 0));
        CUDA_CHECK(cudaEventSynchronize(ev[3]));
        t_copy[i] = event_ms(ev[0], ev[1]);
        t_scan[i] = event_ms(ev[2], ev[3]);
    }
    r->reps = o->reps;
    r->ms = lab_median(t_scan, (size_t)o->reps);
    r->memcpy_ms = lab_median(t_copy, (size_t)o->reps);

    /* and once more after timing, as the harness does */
    CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = lab_first_mismatch(h_out, h_ref, n);
    if (bad < n) {
        r->status = ST_WRONG;
        snprintf(r->message, sizeof(r->message), "after timing: CUB's out[%zu] expected %d, got %d",
                 bad, h_ref[bad], h_out[bad]);
    }

out_free:
    for (int e = 0; e < 4; e++)
        if (ev[e])
            cudaEventDestroy(ev[e]);
    cudaFree(d_flush);
    cudaFree(d_tmp);
    cudaFree(d_out);
    cudaFree(d_in);
    free(t_copy);
    free(t_scan);
    free(h_out);
    free(h_ref);
    free(h_in);
    return r->status;
}

int main(int argc, char **argv)
{
    lab_options o;
    char err[256] = "";
    const char *prog = argc > 0 ? argv[0] : "bench_cub";

    lab_default_options(&o);
    if (lab_parse_args(argc, argv, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.help) {
        printf("usage: %s [--n N] [--reps R] [--warmup W] [--seed S] [--dist D] [--json]\n"
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
    lab_report_init(&g_report, &CUB_ANCHOR, "DeviceScan::InclusiveSum", &o);
    lab_cuda_fail_hook = on_cuda_fail;
    run(&o, &g_report);
    lab_cuda_fail_hook = NULL;
    print_report(&g_report);
    return lab_status_exit_code(g_report.status);
}
