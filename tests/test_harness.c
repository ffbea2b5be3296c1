/* test_harness.c — the harness catches each kind of broken lab, on host fixture labs, so it is
 * tested on any machine. Also the program's exit codes and output, through lab_main. */
#include "harness.h"
#include "cuda_check.h"
#include "harness/call.h"
#include "verify.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixture labs (host arrays) -------------------------------------------- */

static lab_result good_scan(const int *in, int *out, size_t n, void *t)
{
    (void)t;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (int)(s += (unsigned)in[i]);
    return LAB_OK;
}

static lab_result exclusive_instead(const int *in, int *out, size_t n, void *t)
{
    (void)t;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = (int)s;
        s += (unsigned)in[i];
    }
    return LAB_OK;
}

static lab_result writes_past_n(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n, t);
    out[n + 3] = 0; /* like a ragged last tile stored in full */
    return LAB_OK;
}

static lab_result writes_before(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n, t);
    out[-1] = 0;
    return LAB_OK;
}

static lab_result modifies_input(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n, t);
    if (n > 5)
        ((int *)in)[5] += 1; /* scanning in place, say */
    return LAB_OK;
}

static lab_result skips_last(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n > 0 ? n - 1 : 0, t); /* an off-by-one loop bound */
    return LAB_OK;
}

static lab_result not_written(const int *in, int *out, size_t n, void *t)
{
    (void)in;
    (void)out;
    (void)n;
    (void)t;
    return LAB_NOT_IMPLEMENTED;
}

static int calls;
/* Right the first time, wrong afterwards: caught, because every call is checked. */
static lab_result wrong_when_timed(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n, t);
    if (calls++ > 0 && n > 0)
        out[n / 2] += 1;
    return LAB_OK;
}

#define HOST_LAB(lab, entry)                                                                       \
    static const lab_variant lab##_v[] = {{.name = #lab, .summary = "fixture", .fn.scan = entry}}; \
    static const lab_info lab = {.id = #lab,                                                       \
                                 .title = "fixture",                                               \
                                 .shape = LAB_HOST,                                                \
                                 .type = SCAN_INCLUSIVE,                                           \
                                 .bench_n = 1000,                                                  \
                                 .n_variants = 1,                                                  \
                                 .variants = lab##_v}

HOST_LAB(lab_exclusive, exclusive_instead);
HOST_LAB(lab_past_n, writes_past_n);
HOST_LAB(lab_before, writes_before);
HOST_LAB(lab_modifies, modifies_input);
HOST_LAB(lab_skips_last, skips_last);
HOST_LAB(lab_not_impl, not_written);
HOST_LAB(lab_timed_wrong, wrong_when_timed);

static const lab_variant GOOD_V[] = {
    {.name = "first", .summary = "fixture", .fn.scan = good_scan},
    {.name = "second", .summary = "fixture", .fn.scan = good_scan},
};
/* The binary's own lab, for lab_main: a correct host scan with two variants and max_n 5000. */
const lab_info LAB = {.id = "00_fixture",
                      .title = "fixture",
                      .shape = LAB_HOST,
                      .type = SCAN_INCLUSIVE,
                      .max_n = 5000,
                      .bench_n = 1000,
                      .n_variants = 2,
                      .variants = GOOD_V};

static lab_report run(const lab_info *lab, size_t n, int reps)
{
    lab_options o;
    lab_report r;
    lab_default_options(&o);
    o.n = n;
    o.n_given = 1;
    o.reps = reps;
    o.warmup = 1;
    o.dist = DIST_RANDOM;
    lab_run(lab, 0, &o, &r);
    return r;
}

/* ---- what lab_run catches ---------------------------------------------------- */

Test(harness, correct, .description = "a correct scan is ok at every edge size, timed too")
{
    const size_t ns[] = {0, 1, 31, 1025, 5000};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        lab_report r = run(&LAB, ns[i], 0);
        cr_expect_eq(r.status, ST_OK, "n=%zu: %s", ns[i], r.message);
    }
    lab_report r = run(&LAB, 5000, 21);
    cr_expect_eq(r.status, ST_OK, "%s", r.message);
    cr_expect_eq(r.reps, 21);
    cr_expect_gt(r.ms, 0.0);
    cr_expect_gt(r.memcpy_ms, 0.0);
}

Test(harness, exclusive_for_inclusive,
     .description = "an exclusive scan fails an inclusive lab at index 0")
{
    lab_report r = run(&lab_exclusive, 100, 0);
    cr_expect_eq(r.status, ST_WRONG);
    cr_expect(r.has_mismatch);
    cr_expect_eq(r.mismatch_index, 0);
    cr_expect(strstr(r.message, "out[0] expected"), "%s", r.message);
}

Test(harness, write_past_n, .description = "a write past n is named as out[n+3]")
{
    lab_report r = run(&lab_past_n, 1000, 0);
    cr_expect_eq(r.status, ST_OUT_OF_BOUNDS);
    cr_expect_eq(r.mismatch_index, 1003);
    cr_expect(strstr(r.message, "out[1003]"), "%s", r.message);
}

Test(harness, write_before_start, .description = "a write before out[0] is named as out[-1]")
{
    lab_report r = run(&lab_before, 1000, 0);
    cr_expect_eq(r.status, ST_OUT_OF_BOUNDS);
    cr_expect_eq(r.mismatch_index, -1);
}

Test(harness, input_modified, .description = "changing the input is caught and named")
{
    lab_report r = run(&lab_modifies, 1000, 0);
    cr_expect_eq(r.status, ST_INPUT_MODIFIED);
    cr_expect_eq(r.mismatch_index, 5);
    cr_expect(strstr(r.message, "in[5]"), "%s", r.message);
}

Test(harness, unwritten_element, .description = "an element never written shows as poison")
{
    lab_report r = run(&lab_skips_last, 1000, 0);
    cr_expect_eq(r.status, ST_WRONG);
    cr_expect_eq(r.mismatch_index, 999);
    cr_expect_eq(r.got, LAB_POISON);
    cr_expect(strstr(r.message, "never written"), "%s", r.message);
}

Test(harness, not_implemented,
     .description = "LAB_NOT_IMPLEMENTED is reported as such, not as wrong")
{
    lab_report r = run(&lab_not_impl, 1000, 20);
    cr_expect_eq(r.status, ST_NOT_IMPLEMENTED);
    cr_expect_eq(r.reps, 0);
    cr_expect(strstr(r.message, "TODO(student)"), "%s", r.message);
}

Test(harness, every_call_checked,
     .description = "every call of a timed run is checked, the 2nd too")
{
    calls = 0;
    lab_report r = run(&lab_timed_wrong, 1000, 20);
    cr_expect_eq(r.status, ST_WRONG);
    cr_expect(strstr(r.message, "call 2 of 22: out[500]"), "%s", r.message);
    cr_expect_eq(r.reps, 0, "a run that failed reports no time");
}

/* Remembers its first answer and replays it while the input pointer stays the same. */
static const int *cached_in;
static int cached_out[4096];
static lab_result replays_by_pointer(const int *in, int *out, size_t n, void *t)
{
    if (in != cached_in || n > 4096) {
        good_scan(in, out, n, t);
        cached_in = in;
        memcpy(cached_out, out, (n < 4096 ? n : 4096) * sizeof(int));
    } else {
        memcpy(out, cached_out, n * sizeof(int));
    }
    return LAB_OK;
}
HOST_LAB(lab_replays, replays_by_pointer);

Test(harness, new_input_every_call,
     .description = "a replayed answer is wrong: each call has a new input")
{
    cached_in = NULL;
    lab_report r = run(&lab_replays, 1000, 3);
    cr_expect_eq(r.status, ST_WRONG);
    cr_expect(strstr(r.message, "call 2 of "), "%s", r.message);
}

/* Keeps a prefix sum from its first call as state sized for that call's n. */
static size_t first_n;
static lab_result state_for_first_n(const int *in, int *out, size_t n, void *t)
{
    if (!first_n)
        first_n = n;
    good_scan(in, out, n < first_n ? n : first_n, t); /* a loop bound fixed at the first call */
    return LAB_OK;
}
HOST_LAB(lab_first_n, state_for_first_n);

Test(harness, several_sizes_in_one_process, .description = "--sizes: later calls have other n")
{
    lab_options o;
    lab_report r;
    first_n = 0;
    lab_default_options(&o);
    o.reps = 0;
    o.calls = 4;
    o.n_sizes = 2;
    o.sizes[0] = o.n = 100;
    o.sizes[1] = 1000;
    lab_run(&lab_first_n, 0, &o, &r);
    cr_expect_eq(r.status, ST_WRONG);
    cr_expect(strstr(r.message, "call 2 of 4: out[100]"), "%s", r.message);
}

/* Wrong when its pointers are not 16-byte aligned (as a vector-load kernel would be). */
static lab_result needs_alignment(const int *in, int *out, size_t n, void *t)
{
    good_scan(in, out, n, t);
    if (((uintptr_t)in | (uintptr_t)out) % 16 != 0 && n > 0)
        out[0] ^= 1;
    return LAB_OK;
}
HOST_LAB(lab_aligned_only, needs_alignment);

Test(harness, unaligned_pointers,
     .description = "--offset-in/--offset-out: 4, 8, 12 bytes off alignment")
{
    for (int off = 0; off <= LAB_MAX_OFFSET; off++) {
        lab_options o;
        lab_report r;
        lab_default_options(&o);
        o.n = 1000;
        o.reps = 0;
        o.offset_out = off;
        lab_run(&lab_aligned_only, 0, &o, &r);
        cr_expect_eq(r.status, off == 0 ? ST_OK : ST_WRONG, "offset %d: %s", off, r.message);
    }
}

Test(harness, too_large, .description = "n over max_n is refused unless forced")
{
    lab_report r = run(&LAB, 5001, 0);
    cr_expect_eq(r.status, ST_TOO_LARGE);
    cr_expect(strstr(r.message, "--force"), "%s", r.message);
}

/* ---- device buffers kept from case to case (call.h: lab_kept_malloc) ------------------ */

Test(kept, smallest_fit,
     .description = "a kept buffer not in use, the smallest large enough, is "
                    "given again; one in use never is")
{
    lab_report r = {0};
    lab_kept_enable(1); /* as on a GPU outside compute-sanitizer */
    void *a, *b, *c, *d, *e;
    cr_assert_eq(lab_kept_malloc(&a, 1000, &r, "a"), 0);
    cr_assert_eq(lab_kept_malloc(&b, 4000, &r, "b"), 0);
    cr_assert_neq(a, b);
    lab_kept_free(a);
    lab_kept_free(b);
    cr_expect_eq(lab_kept_spare(), 5000);
    cr_assert_eq(lab_kept_malloc(&c, 900, &r, "c"), 0);
    cr_expect_eq(c, a, "900 bytes: the 1000-byte buffer, not the 4000-byte one");
    cr_assert_eq(lab_kept_malloc(&d, 3000, &r, "d"), 0);
    cr_expect_eq(d, b);
    cr_expect_eq(lab_kept_spare(), 0);
    cr_assert_eq(lab_kept_malloc(&e, 10, &r, "e"), 0);
    cr_expect(e != a && e != b, "a buffer in use is not given again");
    /* each buffer works for its full size */
    cr_assert_eq(cudaMemset(d, 0x5A, 3000), cudaSuccess);
    unsigned char back[3000];
    cr_assert_eq(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost), cudaSuccess);
    cr_expect(back[0] == 0x5A && back[2999] == 0x5A);
    lab_kept_free(c);
    lab_kept_free(d);
    lab_kept_free(e);
    cr_expect_eq(lab_kept_spare(), 5010);
}

Test(kept, grows_not_piles_up,
     .description = "cases of growing size keep one buffer per role, each as large as the last")
{
    lab_report r = {0};
    void *in, *seed;
    lab_kept_enable(1);
    for (size_t n = 1; n <= 64; n++) { /* like a session's cases: an input and an 8-byte seed */
        cr_assert_eq(lab_kept_malloc(&in, 1024 * n, &r, "in"), 0);
        cr_assert_eq(lab_kept_malloc(&seed, 8, &r, "seed"), 0);
        lab_kept_free(seed);
        lab_kept_free(in);
        cr_assert_eq(lab_kept_spare(), 1024 * n + 8, "n=%zu: %zu bytes kept", n, lab_kept_spare());
    }
}

Test(kept, out_of_memory,
     .description = "out of memory: the spare kept buffers are freed, the "
                    "allocation tried again, then ST_NO_MEMORY named")
{
    lab_report r = {0};
    void *a, *b, *huge = (void *)1;
    lab_kept_enable(1);
    cr_assert_eq(lab_kept_malloc(&a, 4096, &r, "a"), 0);
    cr_assert_eq(lab_kept_malloc(&b, 8192, &r, "b"), 0);
    lab_kept_free(a);
    lab_kept_free(b);
    cr_assert_eq(lab_kept_spare(), 4096 + 8192); /* b makes room for the new one; a is released */
    r.n = 7;
    cr_expect_eq(lab_kept_malloc(&huge, (size_t)1 << 50, &r, "the input"), -1);
    cr_expect_null(huge);
    cr_expect_eq(r.status, ST_NO_MEMORY);
    cr_expect(strstr(r.message, "not enough device memory for the input"), "%s", r.message);
    cr_expect_eq(lab_kept_spare(), 0, "the spare buffers were freed to make room");
}

Test(kept, by_default,
     .description = "by default nothing is kept in CPU mode (each buffer has its "
                    "guard page right after it) or under compute-sanitizer; "
                    "on a GPU otherwise, a freed buffer is kept")
{
    lab_report r = {0};
    void *a;
    if (getenv("LAB_KEEP_BUFFERS"))
        cr_skip_test("LAB_KEEP_BUFFERS is set: not the default");
    cr_assert_eq(lab_kept_malloc(&a, 4000, &r, "a"), 0);
    lab_kept_free(a);
#ifdef LAB_CPU_MODE
    cr_expect_eq(lab_kept_spare(), 0, "CPU mode keeps nothing");
#else
    cr_expect_eq(lab_kept_spare(), lab_under_tool() ? 0 : 4000);
#endif
}

Test(kept, events_once, .description = "a case's events are the process's, the same each time")
{
    cudaEvent_t *a = lab_case_events(), *b = lab_case_events();
    cr_expect_eq(a, b);
    cr_expect_eq(cudaEventRecord(a[0], 0), cudaSuccess);
    cr_expect_eq(cudaEventRecord(a[LAB_CASE_EVENTS - 1], 0), cudaSuccess);
    cr_expect_eq(cudaEventSynchronize(a[LAB_CASE_EVENTS - 1]), cudaSuccess);
}

/* ---- the program: exit codes and output --------------------------------------- */

static int main_of(char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lab_main(argc, argv);
}

static void redirect_all(void)
{
    cr_redirect_stdout();
    cr_redirect_stderr();
}

Test(program, ok_line, .init = redirect_all,
     .description = "a correct run prints one line and exits 0")
{
    char *argv[] = {"scan", "--n", "1000", "--reps", "0", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_OK);
    fflush(stdout);
    cr_expect_stdout_eq_str("00_fixture/first n=1000 seed=1 dist=small: ok\n");
}

Test(program, json, .init = redirect_all, .description = "--json prints one object with the status")
{
    char *argv[] = {"scan", "--n", "7", "--reps", "0", "--json", "--variant", "second", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_OK);
    fflush(stdout);
    cr_expect_stdout_eq_str("{\"lab\":\"00_fixture\",\"variant\":\"second\",\"mode\":\"host\","
                            "\"device\":\"CPU (serial)\",\"n\":7,\"seed\":1,\"dist\":\"small\","
                            "\"status\":\"ok\",\"message\":\"\",\"mismatch\":null,\"calls\":1,"
                            "\"sandbox\":false,\"op\":\"add\",\"reps\":0,"
                            "\"ms\":null,\"tile_ms\":null,\"memcpy_ms\":null,\"gbps\":null,"
                            "\"pct_memcpy\":null}\n");
}

Test(program, usage_exit, .init = redirect_all,
     .description = "unknown flag: exit 2, one line on stderr")
{
    char *argv[] = {"scan", "--frobnicate", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_USAGE);
    fflush(stderr);
    cr_expect_stderr_eq_str("scan: unknown option '--frobnicate' (see --help)\n");
}

Test(program, unknown_variant, .init = redirect_all, .description = "unknown variant: exit 2")
{
    char *argv[] = {"scan", "--variant", "nope", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_USAGE);
}

Test(program, too_large_exit, .init = redirect_all, .description = "n over max_n: exit 7")
{
    char *argv[] = {"scan", "--n", "2^20", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_TOO_LARGE);
}

Test(program, absurd_n, .init = redirect_all,
     .description = "absurd n: exit 2 before any allocation")
{
    char *argv[] = {"scan", "--n", "2^50", "--force", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_USAGE);
}

Test(program, list, .init = redirect_all,
     .description = "--list names every variant and the default")
{
    char *argv[] = {"scan", "--list", NULL};
    cr_expect_eq(main_of(argv), LAB_EXIT_OK);
    fflush(stdout);
    cr_expect_stdout_eq_str(
        "00_fixture: fixture\n"
        "  inclusive scan, host arrays, benchmark n=1000, practical up to n=5000\n"
        "variants:\n"
        "  0 first                  fixture (default, graded)\n"
        "  1 second                 fixture\n");
}

/* ---- the GPU check of calls after the first (common/verify.cu) ------------------- */

/* One buffer pair on the device, an input generated by lab_gen_input and its correct answer
 * (from the CPU reference of the input read back) in the output. */
typedef struct {
    int *d_in, *d_out, *d_sums, *h_in, *h_ref;
    uint64_t *d_seed;
    void *d_temp;
    size_t n, front, back, tile;
} verify_rig;

static void verify_rig_make(verify_rig *g, size_t n, int secret)
{
    char why[200];
    if (!lab_have_device(why, sizeof(why)))
        cr_skip_test("%s", why);
    g->n = n;
    g->front = LAB_GUARD_WORDS + 1;
    g->back = LAB_GUARD_WORDS + 2;
    g->tile = 256;
    const size_t words = g->front + n + g->back, tiles = CEIL_DIV(n, g->tile);
    g->h_in = malloc((n ? n : 1) * sizeof(int));
    g->h_ref = malloc((n ? n : 1) * sizeof(int));
    cr_assert(g->h_in && g->h_ref);
    CUDA_CHECK(cudaMalloc((void **)&g->d_in, words * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&g->d_out, words * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&g->d_sums, (tiles ? tiles : 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&g->d_seed, sizeof(uint64_t)));
    CUDA_CHECK(cudaMalloc(&g->d_temp, lab_verify_temp_bytes(n)));
    lab_gen_input(g->d_in, g->front, n, g->back, DIST_RANDOM, 77, secret, g->d_seed);
    lab_prep_output(g->d_out, g->front, n, g->back);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(g->h_in, g->d_in + g->front, n * sizeof(int), cudaMemcpyDeviceToHost));
    lab_reference_scan(g->h_in, g->h_ref, n, SCAN_INCLUSIVE);
    CUDA_CHECK(cudaMemcpy(g->d_out + g->front, g->h_ref, n * sizeof(int), cudaMemcpyHostToDevice));
    for (size_t t = 0; t < tiles; t++) {
        unsigned total = 0;
        for (size_t i = t * g->tile; i < n && i < (t + 1) * g->tile; i++)
            total += (unsigned)g->h_in[i];
        CUDA_CHECK(cudaMemcpy(g->d_sums + t, &total, sizeof(int), cudaMemcpyHostToDevice));
    }
}

static int verify_rig_check(verify_rig *g, lab_call_verdict *v)
{
    return lab_verify_call(g->d_in, g->d_out, g->front, g->front, g->n, g->back, g->back,
                           DIST_RANDOM, g->d_seed, SCAN_INCLUSIVE, g->d_sums, g->tile, g->d_temp,
                           v);
}

static void poke(int *d, int value)
{
    CUDA_CHECK(cudaMemcpy(d, &value, sizeof(value), cudaMemcpyHostToDevice));
}

Test(verifier, agrees_with_the_cpu,
     .description = "a right answer passes; each kind of wrong one is named")
{
    const size_t ns[] = {1, 1000, 5000};
    for (size_t c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
        for (int secret = 0; secret <= 1; secret++) {
            verify_rig g;
            lab_call_verdict v;
            const size_t n = ns[c], k = n / 2;
            verify_rig_make(&g, n, secret);
            cr_expect_eq(verify_rig_check(&g, &v), 0, "n=%zu secret=%d: a right answer failed", n,
                         secret);
            cr_expect(v.out < 0 && v.in < 0 && v.sum < 0 && v.out_back < 0 && v.out_front < 0);

            poke(g.d_out + g.front + k, g.h_ref[k] + 1);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            cr_expect_eq(v.out, (long long)k, "n=%zu: wrong element at %lld", n, v.out);
            cr_expect_eq(v.expected, g.h_ref[k]);
            cr_expect_eq(v.got, g.h_ref[k] + 1);
            poke(g.d_out + g.front + k, g.h_ref[k]);

            poke(g.d_out + g.front + n, 0);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            cr_expect_eq(v.out_back, 0, "n=%zu: out[n] changed, got %lld", n, v.out_back);
            poke(g.d_out + g.front + n, lab_canary_word(0));

            poke(g.d_out + g.front - 1, 0);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            cr_expect_eq(v.out_front, 1, "n=%zu: out[-1] changed, got %lld", n, v.out_front);
            poke(g.d_out + g.front - 1, lab_canary_word(g.front - 1));

            poke(g.d_in + g.front + k, g.h_in[k] ^ 1);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            cr_expect_eq(v.in, (long long)k, "n=%zu: input changed at %lld", n, v.in);
            cr_expect_eq(v.expected, g.h_in[k]);
            poke(g.d_in + g.front + k, g.h_in[k]);

            if (n > 2) { /* two wrong elements: the first is named, with its right value */
                poke(g.d_out + g.front + n - 1, g.h_ref[n - 1] - 5);
                poke(g.d_out + g.front + 1, g.h_ref[1] + 7);
                cr_expect_eq(verify_rig_check(&g, &v), 1);
                cr_expect_eq(v.out, 1, "n=%zu: two wrong elements, the first named %lld", n, v.out);
                cr_expect_eq(v.expected, g.h_ref[1]);
                poke(g.d_out + g.front + 1, g.h_ref[1]);
                poke(g.d_out + g.front + n - 1, g.h_ref[n - 1]);
            }

            const size_t last = (n - 1) / g.tile;
            unsigned total = 0;
            for (size_t i = last * g.tile; i < n; i++)
                total += (unsigned)g.h_in[i];
            poke(g.d_sums + last, LAB_POISON);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            cr_expect_eq(v.sum, (long long)last, "n=%zu: tile total %zu, got %lld", n, last, v.sum);
            cr_expect_eq(v.expected, (int)total, "n=%zu: tile %zu's total", n, last);
            cr_expect_eq(v.got, LAB_POISON);
            cr_expect_eq(verify_rig_check(&g, &v), 1);
            poke(g.d_sums + last, (int)total);

            /* an exclusive scan of the same input: right, then wrong at k */
            int *excl = malloc(n * sizeof(int));
            cr_assert(excl);
            lab_reference_scan(g.h_in, excl, n, SCAN_EXCLUSIVE);
            CUDA_CHECK(
                cudaMemcpy(g.d_out + g.front, excl, n * sizeof(int), cudaMemcpyHostToDevice));
            cr_expect_eq(lab_verify_call(g.d_in, g.d_out, g.front, g.front, n, g.back, g.back,
                                         DIST_RANDOM, g.d_seed, SCAN_EXCLUSIVE, g.d_sums, g.tile,
                                         g.d_temp, &v),
                         0, "n=%zu: a right exclusive scan failed", n);
            poke(g.d_out + g.front + k, excl[k] - 1);
            cr_expect_eq(lab_verify_call(g.d_in, g.d_out, g.front, g.front, n, g.back, g.back,
                                         DIST_RANDOM, g.d_seed, SCAN_EXCLUSIVE, g.d_sums, g.tile,
                                         g.d_temp, &v),
                         1);
            cr_expect_eq(v.out, (long long)k);
            cr_expect_eq(v.expected, excl[k]);
            free(excl);
            cudaFree(g.d_temp);
            cudaFree(g.d_seed);
            cudaFree(g.d_sums);
            cudaFree(g.d_out);
            cudaFree(g.d_in);
            free(g.h_ref);
            free(g.h_in);
        }
}

Test(verifier, secret_inputs_differ,
     .description = "secret seeds give a new input each time, on the GPU")
{
    verify_rig a, b;
    verify_rig_make(&a, 1000, 1);
    verify_rig_make(&b, 1000, 1);
#ifdef LAB_CPU_MODE
    cr_skip_test("CPU mode has no GPU clock: its secret seeds are the plain ones");
#endif
    cr_expect(memcmp(a.h_in, b.h_in, 1000 * sizeof(int)) != 0, "two secret inputs are the same");
    int *plain = malloc(1000 * sizeof(int));
    cr_assert(plain);
    lab_fill_input(plain, 1000, DIST_RANDOM, 77);
    cr_expect(memcmp(a.h_in, plain, 1000 * sizeof(int)) != 0, "the secret input is the seed's own");
    free(plain);
}

/* ---- lab 10's timed calls, checked on the GPU (verify.cu: lab_verify_app) ------------- */

static int cmp_unsigned(const void *a, const void *b)
{
    const unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* Device labs whose code runs on the host (the input read back, the answer written back): right
 * on their first call, and from the second on (the calls a timed run checks on the GPU) wrong
 * the way `app_bug` says. */
static int app_calls, app_bug;
enum { BUG_NONE, BUG_SWAP, BUG_KEY, BUG_COUNT, BUG_PAST_COUNT, BUG_GUARD, BUG_INPUT };

static int *app_read(const int *d_in, size_t n)
{
    int *h = malloc((n ? n : 1) * sizeof(int));
    cr_assert(h);
    CUDA_CHECK(cudaMemcpy(h, d_in, n * sizeof(int), cudaMemcpyDeviceToHost));
    return h;
}

static void app_harm(const int *d_in, int *d_out, size_t n)
{
    if (app_calls++ == 0 || app_bug == BUG_NONE)
        return;
    if (app_bug == BUG_GUARD)
        CUDA_CHECK(cudaMemset(d_out + n, 0, sizeof(int)));
    if (app_bug == BUG_INPUT)
        CUDA_CHECK(cudaMemset((int *)d_in + n / 3, 0x11, sizeof(int)));
}

static lab_result sort_on_host(const int *d_in, int *d_out, size_t n, void *t)
{
    (void)t;
    int *h = app_read(d_in, n);
    qsort(h, n, sizeof(int), cmp_unsigned);
    if (app_calls > 0 && n > 2 && app_bug == BUG_SWAP) { /* out of order */
        const int x = h[n / 2];
        h[n / 2] = h[n - 1];
        h[n - 1] = x;
    }
    if (app_calls > 0 && n > 2 && app_bug == BUG_KEY) /* in order, but not the input's keys */
        h[n - 1] = (int)0xFFFFFFFFu;
    CUDA_CHECK(cudaMemcpy(d_out, h, n * sizeof(int), cudaMemcpyHostToDevice));
    free(h);
    app_harm(d_in, d_out, n);
    return LAB_OK;
}

static lab_result compact_on_host(const int *d_in, int *d_out, size_t n, size_t *d_count, void *t)
{
    (void)t;
    int *h = app_read(d_in, n);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (h[i] > 0)
            h[kept++] = h[i];
    if (app_calls > 0 && app_bug == BUG_PAST_COUNT && kept < n)
        h[kept++] = 0; /* a rejected element stored past the count */
    CUDA_CHECK(cudaMemcpy(d_out, h, kept * sizeof(int), cudaMemcpyHostToDevice));
    if (app_calls > 0 && app_bug == BUG_PAST_COUNT)
        kept--;
    if (app_calls > 0 && app_bug == BUG_COUNT)
        kept++;
    CUDA_CHECK(cudaMemcpy(d_count, &kept, sizeof(kept), cudaMemcpyHostToDevice));
    free(h);
    app_harm(d_in, d_out, n);
    return LAB_OK;
}

static const lab_variant APP_V[] = {
    {.name = "radix_sort", .summary = "fixture", .op = LAB_OP_SORT, .fn.scan = sort_on_host},
    {.name = "compact", .summary = "fixture", .op = LAB_OP_COMPACT, .fn.compact = compact_on_host},
};
static const lab_info lab_apps = {.id = "10_fixture",
                                  .title = "fixture",
                                  .shape = LAB_WHOLE,
                                  .type = SCAN_INCLUSIVE,
                                  .bench_n = 1000,
                                  .n_variants = 2,
                                  .variants = APP_V};

/* A timed run of variant with reps timed calls, the fixture's call count starting at calls (1: its
 * bug shows from the first call on). */
static lab_report run_app_from(int variant, int bug, int reps, int calls)
{
    char why[200];
    lab_options o;
    lab_report r;
    if (!lab_have_device(why, sizeof(why)))
        cr_skip_test("%s", why);
    app_calls = calls;
    app_bug = bug;
    lab_default_options(&o);
    o.n = 3001;
    o.n_given = 1;
    o.reps = reps;
    o.warmup = 1;
    o.dist = DIST_RANDOM;
    lab_run(&lab_apps, variant, &o, &r);
    return r;
}

static lab_report run_app(int variant, int bug, int reps)
{
    return run_app_from(variant, bug, reps, 0);
}

Test(apps_timed, right_calls_pass,
     .description = "a right sort and compaction pass every call of a timed run")
{
    for (int variant = 0; variant < 2; variant++) {
        lab_report r = run_app(variant, BUG_NONE, 5);
        cr_expect_eq(r.status, ST_OK, "%s: %s", APP_V[variant].name, r.message);
        cr_expect_eq(r.reps, 5);
        cr_expect_eq(app_calls, 7, "the first call, the warm-up and 5 timed calls");
    }
}

Test(apps_timed, a_wrong_first_call_is_named_as_the_host_names_it,
     .description = "a timed run's first call is checked on the GPU too, with the host's message")
{
    for (int variant = 0; variant < 2; variant++) {
        /* wrong from the first call on */
        lab_report r = run_app_from(variant, variant ? BUG_COUNT : BUG_SWAP, 5, 1);
        cr_expect_eq(r.status, ST_WRONG, "%s: %s", APP_V[variant].name, r.message);
        cr_expect(strstr(r.message, "call 1 of 7: "), "%s", r.message);
        cr_expect(strstr(r.message, variant ? "*d_count: expected" : "(ascending unsigned order)"),
                  "%s", r.message);
    }
}

Test(apps_timed, wrong_later_calls_are_named,
     .description = "a call after the first, checked on the GPU, fails with the host's message")
{
    const struct {
        int variant, bug, status;
        const char *says;
    } cases[] = {
        {0, BUG_SWAP, ST_WRONG, "(ascending unsigned order)"},
        {0, BUG_KEY, ST_WRONG, "expected"},
        {0, BUG_GUARD, ST_OUT_OF_BOUNDS, "wrote past the end of the output: out[3001]"},
        {0, BUG_INPUT, ST_INPUT_MODIFIED, "modified the input"},
        {1, BUG_COUNT, ST_WRONG, "*d_count: expected"},
        {1, BUG_PAST_COUNT, ST_WRONG, "past the"},
        {1, BUG_GUARD, ST_OUT_OF_BOUNDS, "wrote past the end of the output: out[3001]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        lab_report r = run_app(cases[i].variant, cases[i].bug, 5);
        cr_expect_eq(r.status, cases[i].status, "case %zu: %s", i, r.message);
        cr_expect(strstr(r.message, "call 2 of 7: "), "case %zu: %s", i, r.message);
        cr_expect(strstr(r.message, cases[i].says), "case %zu: %s", i, r.message);
        cr_expect_eq(r.reps, 0, "a run that failed reports no time");
    }
}
