/* harness.c — one lab case end to end (see harness.h).
 *
 * Buffers: input and output each get LAB_GUARD_WORDS canary words before and after, the input
 * guards holding canaries too, so a write anywhere outside out[0..n) is named. The output is
 * poisoned before each run, so an element the lab never writes shows as a mismatch.
 *
 * Timing: warm-up runs, then `reps` rounds; each round times, with CUDA events, a device-to-device
 * copy of the n input words and then the lab's scan (and for tile labs the tile pass alone), each
 * after a write over a buffer twice the size of L2, so no run starts with a warm cache. Medians
 * are reported. The output is validated again after timing: the last thing each round does is
 * the full scan.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "cuda_check.h"
#include "driver.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef LAB_CPU_MODE
#define LAB_MODE_NAME "cpu"
#else
#define LAB_MODE_NAME "gpu"
#endif

static void report_msg(lab_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
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

/* ---- validation ----------------------------------------------------------- */

/* Checks guards, input and output (all on the host); sets r's status, message and mismatch.
 * in_guarded / out_guarded point at the front guard; each holds G + n + G words. */
static lab_status validate(const lab_info *lab, const int *h_in, const int *h_ref,
                           const int *in_guarded, const int *out_guarded, size_t n, lab_report *r,
                           const char *when)
{
    const size_t G = LAB_GUARD_WORDS;
    size_t k;

    if ((k = lab_canary_check(out_guarded, G)) < G) {
        r->status = ST_OUT_OF_BOUNDS;
        r->has_mismatch = 1;
        r->mismatch_index = -(long long)(G - k);
        r->expected = lab_canary_word(k);
        r->got = out_guarded[k];
        report_msg(r, "%swrote before the output: out[%lld] changed (n=%zu)", when,
                   r->mismatch_index, n);
        return r->status;
    }
    if ((k = lab_canary_check(out_guarded + G + n, G)) < G) {
        r->status = ST_OUT_OF_BOUNDS;
        r->has_mismatch = 1;
        r->mismatch_index = (long long)(n + k);
        r->expected = lab_canary_word(k);
        r->got = out_guarded[G + n + k];
        report_msg(r, "%swrote past the end of the output: out[%zu] changed (n=%zu)", when, n + k,
                   n);
        return r->status;
    }
    if (lab_canary_check(in_guarded, G) < G || lab_canary_check(in_guarded + G + n, G) < G) {
        r->status = ST_INPUT_MODIFIED;
        report_msg(r, "%swrote into the guard words around the input (n=%zu)", when, n);
        return r->status;
    }
    if ((k = lab_first_mismatch(in_guarded + G, h_in, n)) < n) {
        r->status = ST_INPUT_MODIFIED;
        r->has_mismatch = 1;
        r->mismatch_index = (long long)k;
        r->expected = h_in[k];
        r->got = in_guarded[G + k];
        report_msg(r, "%smodified the input: in[%zu] was %d, is now %d (n=%zu)", when, k, h_in[k],
                   in_guarded[G + k], n);
        return r->status;
    }
    if ((k = lab_first_mismatch(out_guarded + G, h_ref, n)) < n) {
        r->status = ST_WRONG;
        r->has_mismatch = 1;
        r->mismatch_index = (long long)k;
        r->expected = h_ref[k];
        r->got = out_guarded[G + k];
        report_msg(r, "%sout[%zu] expected %d, got %d%s (n=%zu, %s scan%s)", when, k, h_ref[k],
                   out_guarded[G + k], out_guarded[G + k] == LAB_POISON ? " (never written)" : "",
                   n, lab->type == SCAN_INCLUSIVE ? "inclusive" : "exclusive",
                   lab->shape == LAB_TILE && k >= lab->tile ? ", past the first tile" : "");
        return r->status;
    }
    return ST_OK;
}

/* ---- host labs (01) ------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static lab_status run_host(const lab_info *lab, const lab_variant *v, const lab_options *o,
                           const int *h_in, const int *h_ref, lab_report *r)
{
    const size_t G = LAB_GUARD_WORDS, n = o->n;
    int *in = malloc((n + 2 * G) * sizeof(*in));
    int *out = malloc((n + 2 * G) * sizeof(*out));
    void *temp = NULL;
    size_t temp_bytes = v->temp_bytes ? v->temp_bytes(n) : 0;
    double *t_scan = NULL, *t_copy = NULL;

    r->mode = "host";
    r->device = "CPU (serial)";
    if (temp_bytes)
        temp = calloc(1, temp_bytes);
    if (!in || !out || (temp_bytes && !temp)) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", n);
        goto out_free;
    }
    lab_canary_fill(in, G);
    memcpy(in + G, h_in, n * sizeof(*in));
    lab_canary_fill(in + G + n, G);
    lab_canary_fill(out, G);
    memset(out + G, 0x7E, n * sizeof(*out));
    lab_canary_fill(out + G + n, G);

    if (v->scan(in + G, out + G, n, temp) == LAB_NOT_IMPLEMENTED) {
        r->status = ST_NOT_IMPLEMENTED;
        report_msg(r, "the lab's code returns LAB_NOT_IMPLEMENTED: write the TODO(student) parts");
        goto out_free;
    }
    if (validate(lab, h_in, h_ref, in, out, n, r, "") != ST_OK || o->reps <= 0)
        goto out_free;

    t_scan = malloc((size_t)o->reps * sizeof(*t_scan));
    t_copy = malloc((size_t)o->reps * sizeof(*t_copy));
    if (!t_scan || !t_copy) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for timings");
        goto out_free;
    }
    for (int w = 0; w < o->warmup; w++)
        v->scan(in + G, out + G, n, temp);
    for (int i = 0; i < o->reps; i++) {
        double t0 = now_ms();
        memcpy(out + G, in + G, n * sizeof(*in));
        double t1 = now_ms();
        v->scan(in + G, out + G, n, temp);
        double t2 = now_ms();
        t_copy[i] = t1 - t0;
        t_scan[i] = t2 - t1;
    }
    r->reps = o->reps;
    r->ms = lab_median(t_scan, (size_t)o->reps);
    r->memcpy_ms = lab_median(t_copy, (size_t)o->reps);
    validate(lab, h_in, h_ref, in, out, n, r, "after timing: ");

out_free:
    free(t_copy);
    free(t_scan);
    free(temp);
    free(out);
    free(in);
    return r->status;
}

/* ---- device labs ---------------------------------------------------------- */

/* Copies the guarded device buffer back into h (G + n + G words). */
static void fetch(int *h, const int *d, size_t words)
{
    CUDA_CHECK(cudaMemcpy(h, d, words * sizeof(*h), cudaMemcpyDeviceToHost));
}

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

static lab_status run_device(const lab_info *lab, const lab_variant *v, const lab_options *o,
                             const int *h_in, const int *h_ref, lab_report *r)
{
    const size_t G = LAB_GUARD_WORDS, n = o->n, words = n + 2 * G;
    int *h_guard = NULL, *h_back = NULL, *d_in = NULL, *d_out = NULL;
    void *d_scratch = NULL, *d_flush = NULL;
    double *t_scan = NULL, *t_tile = NULL, *t_copy = NULL;
    cudaEvent_t ev[4] = {0, 0, 0, 0};
    size_t scratch_bytes = lab_scratch_bytes(lab, v, n);
    size_t flush_bytes = 0;
    static char device_name[256];
    struct cudaDeviceProp prop;

    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof(device_name), "%s", prop.name);
    r->device = device_name;

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double need = 2.0 * (double)words * sizeof(int) + (double)scratch_bytes;
    if (need > (double)free_b) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "n=%zu needs %.2f GB of device memory, only %.2f GB is free", n, need / 1e9,
                   (double)free_b / 1e9);
        return r->status;
    }

    h_guard = malloc(G * sizeof(*h_guard));
    h_back = malloc(words * sizeof(*h_back));
    if (!h_guard || !h_back) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", n);
        goto out_free;
    }
    lab_canary_fill(h_guard, G);

    if (try_malloc((void **)&d_in, words * sizeof(int), r, "the input") ||
        try_malloc((void **)&d_out, words * sizeof(int), r, "the output") ||
        (scratch_bytes && try_malloc(&d_scratch, scratch_bytes, r, "the lab's scratch")))
        goto out_free;

    CUDA_CHECK(cudaMemcpy(d_in, h_guard, G * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in + G, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in + G + n, h_guard, G * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_out, h_guard, G * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out + G, 0x7E, n * sizeof(int))); /* LAB_POISON in every word */
    CUDA_CHECK(cudaMemcpy(d_out + G + n, h_guard, G * sizeof(int), cudaMemcpyHostToDevice));
    if (scratch_bytes)
        CUDA_CHECK(cudaMemset(d_scratch, 0, scratch_bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    lab_result res = lab_device_scan(lab, v, d_in + G, d_out + G, n, d_scratch);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    if (res == LAB_NOT_IMPLEMENTED) {
        r->status = ST_NOT_IMPLEMENTED;
        report_msg(r, "the lab's code returns LAB_NOT_IMPLEMENTED: write the TODO(student) parts");
        goto out_free;
    }

    /* validate: the input first (into h_back), then the output over it */
    int *h_in_back = malloc(words * sizeof(*h_in_back));
    if (!h_in_back) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", n);
        goto out_free;
    }
    fetch(h_in_back, d_in, words);
    fetch(h_back, d_out, words);
    lab_status st = validate(lab, h_in, h_ref, h_in_back, h_back, n, r, "");
    if (st != ST_OK || o->reps <= 0) {
        free(h_in_back);
        goto out_free;
    }

    /* timing */
    flush_bytes = prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : ((size_t)64 << 20);
    if (try_malloc(&d_flush, flush_bytes, r, "the L2 flush buffer")) {
        free(h_in_back);
        goto out_free;
    }
    t_scan = malloc((size_t)o->reps * sizeof(double));
    t_tile = malloc((size_t)o->reps * sizeof(double));
    t_copy = malloc((size_t)o->reps * sizeof(double));
    if (!t_scan || !t_tile || !t_copy) {
        free(h_in_back);
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for timings");
        goto out_free;
    }
    for (int e = 0; e < 4; e++)
        CUDA_CHECK(cudaEventCreate(&ev[e]));
    for (int w = 0; w < o->warmup; w++)
        lab_device_scan(lab, v, d_in + G, d_out + G, n, d_scratch);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    for (int i = 0; i < o->reps; i++) {
        CUDA_CHECK(cudaMemsetAsync(d_flush, i & 0xFF, flush_bytes, 0));
        CUDA_CHECK(cudaEventRecord(ev[0], 0));
        CUDA_CHECK(cudaMemcpyAsync(d_out + G, d_in + G, n * sizeof(int), cudaMemcpyDeviceToDevice, 0));
        CUDA_CHECK(cudaEventRecord(ev[1], 0));
        if (lab->shape == LAB_TILE) {
            CUDA_CHECK(cudaMemsetAsync(d_flush, i & 0xFF, flush_bytes, 0));
            CUDA_CHECK(cudaEventRecord(ev[2], 0));
            lab_device_tile_pass(lab, v, d_in + G, d_out + G, n, d_scratch, NULL);
            CUDA_CHECK(cudaEventRecord(ev[3], 0));
            CUDA_CHECK(cudaEventSynchronize(ev[3]));
            t_tile[i] = event_ms(ev[2], ev[3]);
        }
        CUDA_CHECK(cudaMemsetAsync(d_flush, i & 0xFF, flush_bytes, 0));
        CUDA_CHECK(cudaEventRecord(ev[2], 0));
        lab_device_scan(lab, v, d_in + G, d_out + G, n, d_scratch);
        CUDA_CHECK(cudaEventRecord(ev[3], 0));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventSynchronize(ev[3]));
        t_copy[i] = event_ms(ev[0], ev[1]);
        t_scan[i] = event_ms(ev[2], ev[3]);
    }
    r->reps = o->reps;
    r->ms = lab_median(t_scan, (size_t)o->reps);
    r->memcpy_ms = lab_median(t_copy, (size_t)o->reps);
    if (lab->shape == LAB_TILE)
        r->tile_ms = lab_median(t_tile, (size_t)o->reps);

    fetch(h_in_back, d_in, words);
    fetch(h_back, d_out, words);
    validate(lab, h_in, h_ref, h_in_back, h_back, n, r, "after timing: ");
    free(h_in_back);

out_free:
    for (int e = 0; e < 4; e++)
        if (ev[e])
            cudaEventDestroy(ev[e]);
    free(t_copy);
    free(t_tile);
    free(t_scan);
    if (d_flush)
        cudaFree(d_flush);
    if (d_scratch)
        cudaFree(d_scratch);
    if (d_out)
        cudaFree(d_out);
    if (d_in)
        cudaFree(d_in);
    free(h_back);
    free(h_guard);
    return r->status;
}

/* ---- one case --------------------------------------------------------------- */

/* Bytes of memory the system can still give without swapping (MemAvailable), or 0 if unknown. */
static double host_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024.0;
}

lab_status lab_run(const lab_info *lab, int vi, const lab_options *o, lab_report *r)
{
    const lab_variant *v = &lab->variants[vi];
    const size_t n = o->n;
    char why[200];
    int *h_in = NULL, *h_ref = NULL;

    lab_report_init(r, lab, v->name, o);
    r->mode = LAB_MODE_NAME;

    if (lab->max_n && n > lab->max_n && !o->force) {
        r->status = ST_TOO_LARGE;
        report_msg(r, "n=%zu is over this lab's practical limit of %zu; pass --force to run it anyway",
                   n, lab->max_n);
        return r->status;
    }
    if (lab->shape != LAB_HOST && !lab_have_device(why, sizeof(why))) {
        r->status = ST_NO_DEVICE;
        report_msg(r, "%s (no GPU here? CPU=1, e.g. make run LAB=%.2s CPU=1, runs the lab on the "
                      "CPU for correctness)", why, lab->id);
        return r->status;
    }

    /* host copies: input, reference, and two guarded buffers (output and input read back) */
    double need = 4.0 * (double)(n + 2 * LAB_GUARD_WORDS) * sizeof(int);
    double avail = host_available_bytes();
    if (avail > 0 && need > avail) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "n=%zu needs %.1f GB of host memory, only %.1f GB is available", n, need / 1e9,
                   avail / 1e9);
        return r->status;
    }
    h_in = malloc((n ? n : 1) * sizeof(*h_in));
    h_ref = malloc((n ? n : 1) * sizeof(*h_ref));
    if (!h_in || !h_ref) {
        r->status = ST_NO_MEMORY;
        report_msg(r, "cannot allocate host memory for n=%zu", n);
    } else {
        lab_fill_input(h_in, n, o->dist, o->seed);
        lab_reference_scan(h_in, h_ref, n, lab->type);
        if (lab->shape == LAB_HOST)
            run_host(lab, v, o, h_in, h_ref, r);
        else
            run_device(lab, v, o, h_in, h_ref, r);
    }
    free(h_ref);
    free(h_in);
    return r->status;
}

/* ---- the program -------------------------------------------------------------- */

static lab_report *g_report; /* what lab_cuda_fail reports through, once started */
static int g_json;
static FILE *g_report_out;   /* stdout, or the grader's private channel (--report-fd) */

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

static void print_report(const lab_report *r)
{
    FILE *f = g_report_out ? g_report_out : stdout;
    if (g_json)
        lab_print_report_json(f, r);
    else
        lab_print_report_text(f, r);
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

static void list_variants(const lab_info *lab)
{
    printf("%s: %s\n", lab->id, lab->title);
    printf("  %s scan, %s", lab->type == SCAN_INCLUSIVE ? "inclusive" : "exclusive",
           lab->shape == LAB_HOST ? "host arrays" : lab->shape == LAB_WHOLE ? "whole array on the GPU"
                                                                          : "tile scan on the GPU");
    if (lab->shape == LAB_TILE)
        printf(", tile %zu", lab->tile);
    printf(", benchmark n=%zu", lab->bench_n);
    if (lab->max_n)
        printf(", practical up to n=%zu", lab->max_n);
    printf("\nvariants:\n");
    for (int i = 0; i < lab->n_variants; i++)
        printf("  %d %-22s %s%s\n", i, lab->variants[i].name, lab->variants[i].summary,
               i == 0 ? " (default, graded)" : "");
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
        if (!v->name || (lab->shape == LAB_TILE ? !v->scan_tiles : !v->scan)) {
            snprintf(why, whylen, "variant %d has no name or no entry point for this lab's shape", i);
            return 0;
        }
    }
    return 1;
}

int lab_main(int argc, char **argv)
{
    lab_options o;
    lab_report r;
    char err[256] = "";
    const char *prog = argc > 0 ? argv[0] : "scan";
    static int exit_check_registered;
    int report_fd = -1;

    if (!exit_check_registered && atexit(on_process_exit) == 0)
        exit_check_registered = 1;
    lab_default_options(&o);
    if (take_report_fd(&argc, argv, &report_fd, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (report_fd >= 0) {
        /* close-on-exec, and opened before any of the lab's code runs */
        if (report_fd > STDERR_FILENO)
            fcntl(report_fd, F_SETFD, fcntl(report_fd, F_GETFD) | FD_CLOEXEC);
        g_report_out = report_fd == STDOUT_FILENO ? stdout : fdopen(report_fd, "w");
        if (!g_report_out) {
            fprintf(stderr, "%s: --report-fd %d: cannot write to it\n", prog, report_fd);
            return LAB_EXIT_USAGE;
        }
    }
    if (lab_parse_args(argc, argv, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.help) {
        lab_print_usage(stdout, prog);
        return LAB_EXIT_OK;
    }
    if (!lab_info_ok(&LAB, err, sizeof(err))) {
        fprintf(stderr, "%s: the lab descriptor is broken: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.list) {
        list_variants(&LAB);
        return LAB_EXIT_OK;
    }
    int vi = lab_find_variant(&LAB, o.variant);
    if (vi < 0) {
        fprintf(stderr, "%s: unknown variant '%s' (see --list)\n", prog, o.variant);
        return LAB_EXIT_USAGE;
    }
    if (!o.n_given)
        o.n = LAB.bench_n;
#ifdef LAB_CPU_MODE
    /* CPU mode (common/cpu/) checks correctness: a smaller default n, and no timing of GPU labs
     * unless asked for with --reps (the emulation's times say nothing about a GPU). */
    if (LAB.shape != LAB_HOST) {
        int reps_given = 0;
        for (int a = 1; a < argc; a++)
            if (strncmp(argv[a], "--reps", 6) == 0)
                reps_given = 1;
        if (!o.n_given && o.n > ((size_t)1 << 20))
            o.n = (size_t)1 << 20;
        if (!reps_given)
            o.reps = 0;
    }
#endif

    g_json = o.json;
    lab_report_init(&r, &LAB, LAB.variants[vi].name, &o);
    g_report = &r;
    lab_cuda_fail_hook = on_cuda_fail;

    g_armed = 1; /* the lab's code runs from here until the report is out */
    lab_run(&LAB, vi, &o, &r);

    lab_cuda_fail_hook = NULL;
    g_report = NULL;
    print_report(&r);
    return lab_status_exit_code(r.status);
}
