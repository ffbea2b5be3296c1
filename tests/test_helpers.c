/* test_helpers.c — the harness's host-side helpers: inputs and the reference (inputs.c),
 * validation and canaries (validate.c), sizes and arguments (options.c), names, reports and the
 * lab's description (report.c). No GPU needed. */
#include "inputs.h"
#include "ops.h"
#include "options.h"
#include "report.h"
#include "validate.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- generators --------------------------------------------------------- */

Test(inputs, deterministic, .description = "same seed, same input; other seed, other input")
{
    int a[1000], b[1000], c[1000];
    for (int d = 0; d < DIST_COUNT; d++) {
        lab_fill_input(a, 1000, (lab_dist)d, 42);
        lab_fill_input(b, 1000, (lab_dist)d, 42);
        cr_expect(memcmp(a, b, sizeof(a)) == 0, "dist %s is not deterministic", lab_dist_name(d));
        if (d != DIST_ONES) {
            lab_fill_input(c, 1000, (lab_dist)d, 43);
            cr_expect(memcmp(a, c, sizeof(a)) != 0, "dist %s ignores the seed", lab_dist_name(d));
        }
    }
}

Test(inputs, prefix_stable, .description = "element i does not depend on n")
{
    int a[100], b[37];
    lab_fill_input(a, 100, DIST_RANDOM, 7);
    lab_fill_input(b, 37, DIST_RANDOM, 7);
    cr_expect(memcmp(a, b, sizeof(b)) == 0);
}

Test(inputs, ranges, .description = "each distribution stays in its documented range")
{
    enum { N = 20000 };
    static int v[N];
    lab_fill_input(v, N, DIST_SMALL, 3);
    int lo = 0, hi = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(v[i] >= -16 && v[i] <= 16, "small: v[%d] = %d", i, v[i]);
        lo |= v[i] == -16;
        hi |= v[i] == 16;
    }
    cr_expect(lo && hi, "small never reaches its ends");
    lab_fill_input(v, N, DIST_ONES, 3);
    for (int i = 0; i < N; i++)
        cr_assert_eq(v[i], 1);
    lab_fill_input(v, N, DIST_ALT, 3);
    for (int i = 0; i < N; i++)
        cr_assert(i % 2 == 0 ? v[i] > 0 : v[i] < 0, "alt: v[%d] = %d has the wrong sign", i, v[i]);
    lab_fill_input(v, N, DIST_LARGE, 3);
    int neg = 0;
    for (int i = 0; i < N; i++) {
        long long m = v[i] < 0 ? -(long long)v[i] : v[i];
        cr_assert(m >= (1 << 29), "large: v[%d] = %d is small", i, v[i]);
        neg += v[i] < 0;
    }
    cr_expect(neg > N / 3 && neg < 2 * N / 3, "large: signs are not mixed (%d negative)", neg);
}

Test(inputs, names, .description = "distribution names round-trip; unknown names are refused")
{
    for (int d = 0; d < DIST_COUNT; d++)
        cr_expect_eq(lab_dist_from_name(lab_dist_name((lab_dist)d)), d);
    cr_expect_eq(lab_dist_from_name("zeros"), -1);
}

/* ---- reference ---------------------------------------------------------- */

Test(reference, inclusive_exclusive, .description = "hand-checked inclusive and exclusive scans")
{
    const int in[] = {3, 1, 7, 0, 4, 1, 6, 3};
    const int inc[] = {3, 4, 11, 11, 15, 16, 22, 25};
    const int exc[] = {0, 3, 4, 11, 11, 15, 16, 22};
    int out[8];
    lab_reference_scan(in, out, 8, SCAN_INCLUSIVE);
    cr_expect(memcmp(out, inc, sizeof(out)) == 0);
    lab_reference_scan(in, out, 8, SCAN_EXCLUSIVE);
    cr_expect(memcmp(out, exc, sizeof(out)) == 0);
    lab_reference_scan(in, out, 0, SCAN_INCLUSIVE); /* n = 0 touches nothing */
}

Test(reference, wraps, .description = "sums wrap modulo 2^32 like int32 on the GPU")
{
    const int in[] = {INT_MAX, 1, INT_MIN, -1};
    int out[4];
    lab_reference_scan(in, out, 4, SCAN_INCLUSIVE);
    cr_expect_eq(out[0], INT_MAX);
    cr_expect_eq(out[1], INT_MIN);
    cr_expect_eq(out[2], 0);
    cr_expect_eq(out[3], -1);
}

Test(reference, ones, .description = "all ones give 1, 2, 3, ...")
{
    enum { N = 5000 };
    static int in[N], out[N];
    lab_fill_input(in, N, DIST_ONES, 1);
    lab_reference_scan(in, out, N, SCAN_INCLUSIVE);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], i + 1);
}

/* ---- validation and canaries --------------------------------------------- */

Test(validation, first_mismatch, .description = "finds the first differing index, or n")
{
    enum { N = 10000 };
    static int a[N], b[N];
    lab_fill_input(a, N, DIST_RANDOM, 5);
    memcpy(b, a, sizeof(a));
    cr_expect_eq(lab_first_mismatch(a, b, N), (size_t)N);
    b[9999] ^= 1;
    cr_expect_eq(lab_first_mismatch(a, b, N), (size_t)9999);
    b[4096] ^= 1;
    cr_expect_eq(lab_first_mismatch(a, b, N), (size_t)4096);
    b[0] ^= 1;
    cr_expect_eq(lab_first_mismatch(a, b, N), (size_t)0);
    cr_expect_eq(lab_first_mismatch(a, b, 0), (size_t)0);
}

Test(validation, canaries, .description = "a changed guard word is found, and which one")
{
    int g[64];
    lab_canary_fill(g, 64);
    cr_expect_eq(lab_canary_check(g, 64), (size_t)64);
    g[17] = lab_canary_word(18); /* a shifted copy is also caught */
    cr_expect_eq(lab_canary_check(g, 64), (size_t)17);
    cr_expect_neq(lab_canary_word(0), LAB_POISON);
}

Test(validation, poison_bytes, .description = "LAB_POISON is LAB_POISON_BYTE in every byte")
{
    int w;
    memset(&w, LAB_POISON_BYTE, sizeof(w));
    cr_expect_eq(w, LAB_POISON);
}

Test(validation, median, .description = "median of odd and even counts; order does not matter")
{
    double a[] = {5, 1, 3};
    double b[] = {4, 1, 3, 2};
    cr_expect_float_eq(lab_median(a, 3), 3.0, 1e-12);
    cr_expect_float_eq(lab_median(b, 4), 2.5, 1e-12);
    cr_expect_float_eq(lab_median(NULL, 0), 0.0, 1e-12);
}

/* ---- sizes and arguments --------------------------------------------------- */

Test(args, sizes, .description = "decimal, 2^k+-c and K/M/G sizes")
{
    size_t n;
    char err[200];
    cr_expect_eq(lab_parse_size("0", &n, err, sizeof(err)), 0);
    cr_expect_eq(n, (size_t)0);
    cr_expect_eq(lab_parse_size("1000", &n, err, sizeof(err)), 0);
    cr_expect_eq(n, (size_t)1000);
    cr_expect_eq(lab_parse_size("2^24+7", &n, err, sizeof(err)), 0);
    cr_expect_eq(n, ((size_t)1 << 24) + 7);
    cr_expect_eq(lab_parse_size("2^31-1", &n, err, sizeof(err)), 0);
    cr_expect_eq(n, ((size_t)1 << 31) - 1);
    cr_expect_eq(lab_parse_size("64M", &n, err, sizeof(err)), 0);
    cr_expect_eq(n, (size_t)64 << 20);
    cr_expect_eq(lab_parse_size("2^40", &n, err, sizeof(err)), 0);
}

Test(args, bad_sizes,
     .description = "negative, non-numeric and absurd sizes are refused with a reason")
{
    const char *bad[] = {
        "-5",  "abc",   "12x", "", "2^", "3^4", "2^41", "2^3-9", "99999999999999999999",
        "1e6", "2^10+", "1T"};
    size_t n;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[200] = "";
        cr_expect_eq(lab_parse_size(bad[i], &n, err, sizeof(err)), -1, "'%s' was accepted", bad[i]);
        cr_expect(strlen(err) > 10 && !strchr(err, '\n'), "'%s': no one-line reason", bad[i]);
    }
}

Test(args, parse, .description = "every option, in both --flag value and --flag=value forms")
{
    char *argv[] = {"scan", "--n",        "2^10+1",    "--seed=9",    "--dist", "large",   "--reps",
                    "0",    "--warmup=5", "--variant", "two_barrier", "--json", "--force", NULL};
    lab_options o;
    char err[200];
    lab_default_options(&o);
    cr_assert_eq(lab_parse_args(13, argv, &o, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(o.n, (size_t)1025);
    cr_expect(o.n_given);
    cr_expect_eq(o.seed, 9u);
    cr_expect_eq(o.dist, DIST_LARGE);
    cr_expect_eq(o.reps, 0);
    cr_expect_eq(o.warmup, 5);
    cr_expect_str_eq(o.variant, "two_barrier");
    cr_expect(o.json && o.force && !o.list && !o.help && !o.describe);
    cr_expect(o.reps_given, "--reps was given");
}

Test(args, switches, .description = "--list, --describe, -h, and --reps given or not")
{
    char *argv[] = {"scan", "--describe", "--list", "-h", NULL};
    lab_options o;
    char err[200];
    lab_default_options(&o);
    cr_assert_eq(lab_parse_args(4, argv, &o, err, sizeof(err)), 0, "%s", err);
    cr_expect(o.describe && o.list && o.help);
    cr_expect(!o.reps_given && o.reps == LAB_DEFAULT_REPS);
}

Test(args, graded_run_options, .description = "--sizes, --calls, --offset-in/out, --sandbox")
{
    char *argv[] = {"scan", "--sizes",        "2^11+1,33,1025", "--calls=100", "--offset-in",
                    "3",    "--offset-out=1", "--sandbox",      NULL};
    lab_options o;
    char err[200];
    lab_default_options(&o);
    cr_assert_eq(lab_parse_args(8, argv, &o, err, sizeof(err)), 0, "%s", err);
    cr_expect_eq(o.n_sizes, 3);
    cr_expect_eq(o.n, (size_t)2049, "the first size is n");
    cr_expect_eq(lab_call_n(&o, 0), (size_t)2049);
    cr_expect_eq(lab_call_n(&o, 1), (size_t)33);
    cr_expect_eq(lab_call_n(&o, 5), (size_t)1025, "calls cycle through the sizes");
    cr_expect_eq(lab_max_call_n(&o), (size_t)2049);
    cr_expect_eq(o.calls, 100);
    cr_expect_eq(o.offset_in, 3);
    cr_expect_eq(o.offset_out, 1);
    cr_expect(o.sandbox);
}

Test(args, defaults, .description = "no options: default seed, reps, distribution")
{
    char *argv[] = {"scan", NULL};
    lab_options o;
    char err[200];
    lab_default_options(&o);
    cr_assert_eq(lab_parse_args(1, argv, &o, err, sizeof(err)), 0);
    cr_expect_eq(o.seed, LAB_DEFAULT_SEED);
    cr_expect_eq(o.reps, LAB_DEFAULT_REPS);
    cr_expect_geq(o.reps, 20, "the median needs at least 20 repetitions by default");
    cr_expect_eq(o.dist, DIST_SMALL);
    cr_expect(!o.n_given);
    cr_expect(o.n_sizes == 0 && o.calls == 1 && o.offset_in == 0 && o.offset_out == 0 &&
              !o.sandbox);
}

Test(args, errors, .description = "each bad command line gives exit code 2 and a one-line reason")
{
    char *cases[][3] = {{"scan", "--bogus", NULL},
                        {"scan", "--n", NULL},
                        {"scan", "--n", "-1"},
                        {"scan", "--dist", "zeros"},
                        {"scan", "--reps", "many"},
                        {"scan", "--seed", "-3"},
                        {"scan", "--warmup", "-1"},
                        {"scan", "--variant", ""},
                        {"scan", "n=5", NULL},
                        {"scan", "--offset-in", "4"},
                        {"scan", "--calls", "0"},
                        {"scan", "--sizes", "1,,x"},
                        {"scan", "--sizes", "1,2,3,4,5,6,7,8,9"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int argc = cases[i][2] ? 3 : 2;
        lab_options o;
        char err[200] = "";
        lab_default_options(&o);
        cr_expect_eq(lab_parse_args(argc, cases[i], &o, err, sizeof(err)), LAB_EXIT_USAGE,
                     "'%s %s' was accepted", cases[i][1], cases[i][2] ? cases[i][2] : "");
        cr_expect(strlen(err) > 10 && !strchr(err, '\n'), "case %zu: no one-line reason", i);
    }
}

/* ---- reports ---------------------------------------------------------------- */

/* Prints r as JSON into buf. */
static void json_of(const lab_report *r, char *buf, size_t len)
{
    FILE *f = tmpfile();
    cr_assert(f);
    lab_print_report_json(f, r);
    rewind(f);
    size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
}

Test(reports, json_fields, .description = "JSON carries status, mismatch and timings")
{
    lab_report r;
    lab_options o;
    char buf[2048];
    lab_default_options(&o);
    o.n = 1025;
    lab_report_init(&r, NULL, "double_buffer", &o);
    r.lab = "03_kogge_stone";
    r.status = ST_WRONG;
    r.has_mismatch = 1;
    r.mismatch_index = 1024;
    r.expected = 5;
    r.got = -3;
    snprintf(r.message, sizeof(r.message), "out[1024] expected 5, got -3 \"quoted\"");
    json_of(&r, buf, sizeof(buf));
    cr_expect(strstr(buf, "\"lab\":\"03_kogge_stone\""), "%s", buf);
    cr_expect(strstr(buf, "\"status\":\"wrong\""), "%s", buf);
    cr_expect(strstr(buf, "\"mismatch\":{\"index\":1024,\"expected\":5,\"got\":-3}"), "%s", buf);
    cr_expect(strstr(buf, "\\\"quoted\\\""), "quotes must be escaped: %s", buf);
    cr_expect(strstr(buf, "\"ms\":null"), "untimed runs have null times: %s", buf);
    cr_expect_eq(strchr(buf, '\n'), buf + strlen(buf) - 1, "one line: %s", buf);

    r.status = ST_OK;
    r.has_mismatch = 0;
    r.message[0] = '\0';
    r.reps = 20;
    r.ms = 2.0;
    r.memcpy_ms = 1.0;
    json_of(&r, buf, sizeof(buf));
    cr_expect(strstr(buf, "\"mismatch\":null"), "%s", buf);
    cr_expect(strstr(buf, "\"pct_memcpy\":50.000"), "%s", buf);
    cr_expect(strstr(buf, "\"gbps\":0.004"), "8n bytes / time: %s", buf); /* 8200 B / 2 ms */
}

Test(reports, status_codes,
     .description = "every status has a name and a distinct documented exit code")
{
    cr_expect_eq(lab_status_exit_code(ST_OK), 0);
    cr_expect_eq(lab_status_exit_code(ST_WRONG), 1);
    cr_expect_eq(lab_status_exit_code(ST_OUT_OF_BOUNDS), 1);
    cr_expect_eq(lab_status_exit_code(ST_INPUT_MODIFIED), 1);
    cr_expect_eq(lab_status_exit_code(ST_USAGE), 2);
    cr_expect_eq(lab_status_exit_code(ST_NOT_IMPLEMENTED), 3);
    cr_expect_eq(lab_status_exit_code(ST_CUDA_ERROR), 4);
    cr_expect_eq(lab_status_exit_code(ST_NO_DEVICE), 5);
    cr_expect_eq(lab_status_exit_code(ST_NO_MEMORY), 6);
    cr_expect_eq(lab_status_exit_code(ST_TOO_LARGE), 7);
    for (int s = 0; s < ST_COUNT; s++)
        cr_expect_neq(strcmp(lab_status_name((lab_status)s), "?"), 0);
}

Test(reports, names, .description = "scan types and shapes by name, in lab.h's order")
{
    cr_expect_str_eq(lab_scan_type_name(SCAN_INCLUSIVE), "inclusive");
    cr_expect_str_eq(lab_scan_type_name(SCAN_EXCLUSIVE), "exclusive");
    cr_expect_str_eq(lab_shape_name(LAB_HOST), "host");
    cr_expect_str_eq(lab_shape_name(LAB_WHOLE), "whole");
    cr_expect_str_eq(lab_shape_name(LAB_TILE), "tile");
    cr_expect_str_eq(lab_shape_name((lab_shape)7), "?");
    cr_expect_str_eq(lab_status_name(ST_USAGE), "usage_error");
    cr_expect_str_eq(lab_status_name(ST_LEAK), "leak");
}

static size_t some_temp(size_t n)
{
    return n;
}

Test(reports, describe, .description = "--describe: one JSON line with every field of the lab")
{
    static const lab_variant variants[] = {
        {.name = "plain", .summary = "the \"default\""},
        {.name = "scratch", .summary = "with temp", .temp_bytes = some_temp, .compare = 1},
    };
    const lab_info lab = {.id = "05_x",
                          .title = "Blelloch\tscan",
                          .shape = LAB_TILE,
                          .type = SCAN_EXCLUSIVE,
                          .tile = 512,
                          .bench_n = 1000,
                          .n_variants = 2,
                          .variants = variants};
    char buf[2048];
    FILE *f = tmpfile();
    cr_assert(f);
    lab_print_describe(f, &lab, LAB_MODE_CPU);
    rewind(f);
    buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
    fclose(f);
    char want[512];
    snprintf(
        want, sizeof(want),
        "{\"contract\":%d,\"id\":\"05_x\",\"title\":\"Blelloch\\u0009scan\","
        "\"shape\":\"tile\",\"type\":\"exclusive\",\"tile\":512,\"bench_n\":1000,"
        "\"max_n\":0,\"element\":\"int32\","
        "\"operator\":\"add\",\"variants\":[{\"name\":\"plain\",\"summary\":\"the "
        "\\\"default\\\"\",\"temp\":false,\"compare\":false,\"op\":\"add\",\"algorithm\":\"none\"},"
        "{\"name\":\"scratch\","
        "\"summary\":\"with "
        "temp\",\"temp\":true,\"compare\":true,\"op\":\"add\",\"algorithm\":\"none\"}],"
        "\"work_tiles\":[],"
        "\"mode\":\"cpu\"}\n",
        LAB_CONTRACT_VERSION);
    cr_expect_str_eq(buf, want);
}

Test(reports, gbps, .description = "bandwidth counts 8 bytes per element")
{
    cr_expect_float_eq(lab_gbps((size_t)1 << 28, 1.0), 2147.483648, 1e-6);
    cr_expect_float_eq(lab_gbps(1000, 0.0), 0.0, 1e-12);
}

/* ---- other operators (ops.c, lab 09) -------------------------------------------------------- */

static float as_float(int b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}
static int as_bits(float f)
{
    int b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

Test(ops, references, .description = "max, min and segmented + by hand, inclusive and exclusive")
{
    const int in[6] = {3, -7, 9, 9, INT_MIN, 4}, heads[6] = {0, 0, 1, 0, 1, 0};
    int out[6];
    lab_ops_reference(LAB_OP_MAX, SCAN_INCLUSIVE, in, NULL, 6, out, NULL, NULL);
    cr_expect(out[0] == 3 && out[1] == 3 && out[2] == 9 && out[5] == 9, "running max");
    lab_ops_reference(LAB_OP_MIN, SCAN_INCLUSIVE, in, NULL, 6, out, NULL, NULL);
    cr_expect(out[1] == -7 && out[4] == INT_MIN && out[5] == INT_MIN, "running min");
    lab_ops_reference(LAB_OP_MAX, SCAN_EXCLUSIVE, in, NULL, 6, out, NULL, NULL);
    cr_expect(out[0] == INT_MIN && out[1] == 3, "exclusive max starts at the identity");
    lab_ops_reference(LAB_OP_SEG_ADD, SCAN_INCLUSIVE, in, heads, 6, out, NULL, NULL);
    cr_expect(out[0] == 3 && out[1] == -4 && out[2] == 9 && out[3] == 18 && out[4] == INT_MIN &&
                  out[5] == INT_MIN + 4,
              "segmented sums restart at every head: %d %d %d %d %d %d", out[0], out[1], out[2],
              out[3], out[4], out[5]);
}

Test(ops, heads_by_distribution, .description = "ones: every element a head; alt: none")
{
    int in[5000], heads[5000], count = 0;
    lab_ops_fill(LAB_OP_SEG_ADD, in, heads, 5000, DIST_ONES, 3);
    for (int i = 0; i < 5000; i++)
        count += heads[i] != 0;
    cr_expect_eq(count, 5000);
    lab_ops_fill(LAB_OP_SEG_ADD, in, heads, 5000, DIST_ALT, 3);
    for (int i = count = 0; i < 5000; i++)
        count += heads[i] != 0;
    cr_expect_eq(count, 0);
    lab_ops_fill(LAB_OP_SEG_ADD, in, heads, 5000, DIST_RANDOM, 3);
    for (int i = count = 0; i < 5000; i++)
        count += heads[i] != 0;
    cr_expect(count > 40 && count < 120, "random: about one head in 64 (%d of 5000)", count);
}

/* Two orders of the same float additions, serial and pairwise (a tree), give different results
 * and both pass; a sum that drops one term fails. */
Test(ops, float_orders, .description = "serial and tree orders differ, both within the bound")
{
    enum { N = 4096 };
    static int in[N], serial[N], tree[N], want[N];
    static double want_d[N], bound_d[N];
    lab_ops_fill(LAB_OP_FADD, in, NULL, N, DIST_SMALL, 11);
    lab_ops_reference(LAB_OP_FADD, SCAN_INCLUSIVE, in, NULL, N, want, want_d, bound_d);
    float acc = 0.0f;
    for (int i = 0; i < N; i++) {
        acc += as_float(in[i]);
        serial[i] = as_bits(acc);
    }
    /* a Kogge-Stone order: log2(N) rounds of x[i] += x[i - d] over a float copy */
    static float a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = as_float(in[i]);
    for (int d = 1; d < N; d *= 2) {
        for (int i = 0; i < N; i++)
            b[i] = i >= d ? a[i - d] + a[i] : a[i];
        memcpy(a, b, sizeof(a));
    }
    int differ = 0;
    for (int i = 0; i < N; i++) {
        tree[i] = as_bits(a[i]);
        differ += tree[i] != serial[i];
    }
    cr_expect(differ > 0, "the two orders agreed everywhere: the test shows nothing");
    lab_ops_verdict v;
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, serial, want, want_d, bound_d, N, &v);
    cr_expect_eq(v.bad, (size_t)N, "serial order out of bound at %zu", v.bad);
    cr_expect(v.max_ratio > 0 && v.max_ratio < 1, "serial error ratio %g", v.max_ratio);
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, tree, want, want_d, bound_d, N, &v);
    cr_expect_eq(v.bad, (size_t)N, "tree order out of bound at %zu", v.bad);
    /* drop element 100 from every later sum: caught at 100 */
    for (int i = 100; i < N; i++)
        serial[i] = as_bits(as_float(serial[i]) - as_float(in[100]));
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, serial, want, want_d, bound_d, N, &v);
    cr_expect_eq(v.bad, (size_t)100, "a missing term was not caught at 100 but at %zu", v.bad);
    serial[0] = as_bits(NAN);
    lab_ops_check(LAB_OP_FADD, SCAN_INCLUSIVE, serial, want, want_d, bound_d, N, &v);
    cr_expect_eq(v.bad, (size_t)0, "a NaN passed");
}

Test(ops, int_check_is_exact, .description = "an int operator's output is compared exactly")
{
    const int in[4] = {1, 5, 2, 8};
    int want[4], got[4];
    lab_ops_reference(LAB_OP_MAX, SCAN_INCLUSIVE, in, NULL, 4, want, NULL, NULL);
    memcpy(got, want, sizeof(got));
    lab_ops_verdict v;
    lab_ops_check(LAB_OP_MAX, SCAN_INCLUSIVE, got, want, NULL, NULL, 4, &v);
    cr_expect_eq(v.bad, (size_t)4);
    got[2] = 6;
    lab_ops_check(LAB_OP_MAX, SCAN_INCLUSIVE, got, want, NULL, NULL, 4, &v);
    cr_expect(v.bad == 2 && strcmp(v.expected, "5") == 0 && strcmp(v.got, "6") == 0,
              "bad %zu expected %s got %s", v.bad, v.expected, v.got);
}

Test(apps, sort_check, .description = "lab_sort_matches: sorted as unsigned and the same keys")
{
    const int in[] = {5, -1, 3, 0, 3, 7};
    const int good[] = {0, 3, 3, 5, 7, -1}; /* -1 is 0xFFFFFFFF: last */
    const int swapped[] = {0, 3, 5, 3, 7, -1};
    const int dup[] = {0, 3, 3, 5, 5, -1}; /* sorted, but 7 became a second 5 */
    const int signed_order[] = {-1, 0, 3, 3, 5, 7};
    cr_expect(lab_sort_matches(in, good, 6));
    cr_expect(!lab_sort_matches(in, swapped, 6), "out of order must fail");
    cr_expect(!lab_sort_matches(in, dup, 6), "a lost key must fail even in order");
    cr_expect(!lab_sort_matches(in, signed_order, 6), "keys sort as unsigned, not signed");
    cr_expect(lab_sort_matches(in, good, 0));
}

Test(apps, references, .description = "compaction, sort and CSR references by hand")
{
    const int in[] = {3, -2, 0, 7, 1, -5};
    int want[8];
    cr_assert_eq(lab_apps_reference(LAB_OP_COMPACT, in, 6, DIST_SMALL, want), 3);
    cr_expect(want[0] == 3 && want[1] == 7 && want[2] == 1, "keeps x > 0 in order");
    cr_assert_eq(lab_apps_reference(LAB_OP_SORT, in, 6, DIST_SMALL, want), 6);
    cr_expect(want[0] == 0 && want[1] == 1 && want[2] == 3 && want[3] == 7 && want[4] == -5 &&
                  want[5] == -2,
              "unsigned order: negatives last");
    const int rows[] = {2, 0, 2, 2}; /* DIST_LARGE: 2n + 1 = 9 rows */
    cr_assert_eq(lab_csr_rows(4, DIST_LARGE), 9);
    int off[10];
    cr_assert_eq(lab_apps_reference(LAB_OP_CSR, rows, 4, DIST_LARGE, off), 10);
    cr_expect(off[0] == 0 && off[1] == 1 && off[2] == 1 && off[3] == 4 && off[9] == 4,
              "offsets: 0, 1, 1, 4, ..., 4");
    lab_apps_verdict v;
    int got[8] = {3, 7, 1, LAB_POISON, LAB_POISON, LAB_POISON};
    lab_apps_reference(LAB_OP_COMPACT, in, 6, DIST_SMALL, want);
    lab_apps_check(LAB_OP_COMPACT, in, 6, got, 3, want, 3, &v);
    cr_expect(v.ok, "%s", v.message);
    lab_apps_check(LAB_OP_COMPACT, in, 6, got, 2, want, 3, &v);
    cr_expect(!v.ok && strstr(v.message, "off by one"), "count off by one: %s", v.message);
    got[4] = -2; /* a rejected element stored past the count */
    lab_apps_check(LAB_OP_COMPACT, in, 6, got, 3, want, 3, &v);
    cr_expect(!v.ok && v.bad == 4, "a write past the count: %s", v.message);
    /* a place left as the harness filled it says so, in each application's message */
    got[1] = LAB_POISON;
    lab_apps_check(LAB_OP_COMPACT, in, 6, got, 3, want, 3, &v);
    cr_expect(!v.ok && v.bad == 1 && strstr(v.message, "never written"), "%s", v.message);
    int sorted[6];
    lab_apps_reference(LAB_OP_SORT, in, 6, DIST_SMALL, sorted);
    int keys[6] = {sorted[0], sorted[1], LAB_POISON, sorted[3], sorted[4], sorted[5]};
    lab_apps_check(LAB_OP_SORT, in, 6, keys, 6, sorted, 6, &v);
    cr_expect(!v.ok && v.bad == 2 && strstr(v.message, "never written"), "%s", v.message);
    int offs[10];
    memcpy(offs, off, sizeof(offs));
    offs[5] = LAB_POISON;
    lab_apps_check(LAB_OP_CSR, rows, 4, offs, 10, off, 10, &v);
    cr_expect(!v.ok && v.bad == 5 && strstr(v.message, "never written"), "%s", v.message);
}
