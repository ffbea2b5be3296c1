/* report.c — the names of statuses, scan types and shapes, the result of a run as one line or
 * one JSON object, and the bandwidth it is quoted at (see report.h).
 */
#include "report.h"
#include "ops.h"
#include "inputs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(int) == LAB_ELEMENT_BYTES, "the contract's element is a 4-byte int");

static const char *const STATUS_NAMES[ST_COUNT] = LAB_STATUS_NAMES;
static const char *const WHY_NAMES[WHY_COUNT] = LAB_WHY_NAMES;
static const int STATUS_EXIT_CODES[ST_COUNT] = LAB_STATUS_EXIT_CODES;
static const char *const SCAN_TYPE_NAMES[] = LAB_SCAN_TYPE_NAMES;
static const char *const SHAPE_NAMES[] = LAB_SHAPE_NAMES;

/* ---- names ------------------------------------------------------------ */

const char *lab_status_name(lab_status s)
{
    return (s >= 0 && s < ST_COUNT) ? STATUS_NAMES[s] : "?";
}

const char *lab_why_name(lab_why w)
{
    return (w >= 0 && w < WHY_COUNT) ? WHY_NAMES[w] : "?";
}

int lab_status_exit_code(lab_status s)
{
    return (s >= 0 && s < ST_COUNT) ? STATUS_EXIT_CODES[s] : LAB_EXIT_USAGE;
}

const char *lab_scan_type_name(scan_type t)
{
    return ((size_t)t < sizeof(SCAN_TYPE_NAMES) / sizeof(SCAN_TYPE_NAMES[0])) ? SCAN_TYPE_NAMES[t]
                                                                              : "?";
}

const char *lab_algorithm_id(lab_algorithm a)
{
    static const char *const ID[] = {
        [LAB_ALG_ANY] = "none",
        [LAB_ALG_KOGGE_STONE] = "kogge_stone",
        [LAB_ALG_KOGGE_STONE_DB] = "kogge_stone_double_buffered",
        [LAB_ALG_BRENT_KUNG] = "brent_kung",
        [LAB_ALG_BLELLOCH] = "blelloch",
        [LAB_ALG_COARSENED] = "coarsened",
        [LAB_ALG_HIERARCHICAL] = "hierarchical",
        [LAB_ALG_SINGLE_PASS] = "single_pass",
    };
    return (int)a >= 0 && (size_t)a < sizeof(ID) / sizeof(ID[0]) ? ID[a] : "?";
}

const char *lab_shape_name(lab_shape s)
{
    return ((size_t)s < sizeof(SHAPE_NAMES) / sizeof(SHAPE_NAMES[0])) ? SHAPE_NAMES[s] : "?";
}

/* ---- timings and bandwidth --------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double lab_median(double *v, size_t count)
{
    if (count == 0)
        return 0.0;
    qsort(v, count, sizeof(*v), cmp_double);
    return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

double lab_bytes_moved(size_t n)
{
    return (double)(LAB_TRAFFIC_READS + LAB_TRAFFIC_WRITES) * LAB_ELEMENT_BYTES * (double)n;
}

double lab_gbps(size_t n, double ms)
{
    return ms > 0 ? lab_bytes_moved(n) / (ms * 1e6) : 0.0;
}

/* ---- reports ---------------------------------------------------------- */

void lab_report_init(lab_report *r, const lab_info *lab, const char *variant, const lab_options *o)
{
    memset(r, 0, sizeof(*r));
    r->lab = lab ? lab->id : "?";
    r->variant = variant ? variant : "?";
    r->op = "add";
    for (int i = 0; lab && variant && i < lab->n_variants; i++)
        if (strcmp(lab->variants[i].name, variant) == 0)
            r->op = lab_op_name(lab->variants[i].op);
    r->mode = LAB_MODE_GPU;
    r->n = o->n;
    r->seed = o->seed;
    r->dist = o->dist;
    r->status = ST_OK;
}

void lab_print_report_text(FILE *f, const lab_report *r)
{
    fprintf(f, "%s/%s n=%zu seed=%" PRIu64 " dist=%s: %s", r->lab, r->variant, r->n, r->seed,
            lab_dist_name(r->dist), r->status == ST_OK ? "ok" : lab_status_name(r->status));
    if (r->message[0])
        fprintf(f, ": %s", r->message);
    if (r->status == ST_OK && r->reps > 0) {
        fprintf(f, " | %.4f ms, %.1f GB/s", r->ms, lab_gbps(r->n, r->ms));
        if (r->memcpy_ms > 0)
            fprintf(f, ", %.1f%% of %s memcpy (%.4f ms)", 100.0 * r->memcpy_ms / r->ms,
                    strcmp(r->mode, "host") == 0 ? "host" : "device", r->memcpy_ms);
        if (r->tile_ms > 0)
            fprintf(f, " | tile pass %.4f ms, %.1f GB/s, %.1f%% of memcpy", r->tile_ms,
                    lab_gbps(r->n, r->tile_ms), 100.0 * r->memcpy_ms / r->tile_ms);
        fprintf(f, " | median of %d", r->reps);
    }
    if (r->status == ST_OK && strcmp(r->op, "fadd") == 0)
        fprintf(f, " | float: largest error %.3g, %.2f%% of its bound", r->fp_max_error,
                100.0 * r->fp_max_ratio);
    fputc('\n', f);
}

/* Writes s as a JSON string literal. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* A JSON number, or null for "not measured". */
static void json_ms(FILE *f, double v)
{
    if (v > 0)
        fprintf(f, "%.6f", v);
    else
        fputs("null", f);
}

void lab_print_report_json(FILE *f, const lab_report *r)
{
    fputs("{\"lab\":", f);
    json_string(f, r->lab);
    fputs(",\"variant\":", f);
    json_string(f, r->variant);
    fputs(",\"mode\":", f);
    json_string(f, r->mode);
    fputs(",\"device\":", f);
    if (r->device)
        json_string(f, r->device);
    else
        fputs("null", f);
    fprintf(f, ",\"n\":%zu,\"seed\":%" PRIu64 ",\"dist\":", r->n, r->seed);
    json_string(f, lab_dist_name(r->dist));
    fputs(",\"status\":", f);
    json_string(f, lab_status_name(r->status));
    fputs(",\"message\":", f);
    json_string(f, r->message);
    if (r->status == ST_NOT_IMPLEMENTED) {
        fputs(",\"reason\":", f);
        json_string(f, lab_why_name(r->reason));
    }
    if (r->has_mismatch)
        fprintf(f, ",\"mismatch\":{\"index\":%lld,\"expected\":%lld,\"got\":%lld}",
                r->mismatch_index, r->expected, r->got);
    else
        fputs(",\"mismatch\":null", f);
    fprintf(f, ",\"calls\":%d,\"sandbox\":%s", r->calls, r->sandbox ? "true" : "false");
    fputs(",\"op\":", f);
    json_string(f, r->op);
    if (strcmp(r->op, "fadd") == 0)
        fprintf(f, ",\"float_max_error\":%.6g,\"float_error_vs_bound\":%.6g", r->fp_max_error,
                r->fp_max_ratio);
    fprintf(f, ",\"reps\":%d,\"ms\":", r->reps);
    json_ms(f, r->ms);
    fputs(",\"tile_ms\":", f);
    json_ms(f, r->tile_ms);
    fputs(",\"memcpy_ms\":", f);
    json_ms(f, r->memcpy_ms);
    if (r->channel_ms > 0)
        fprintf(f, ",\"channel_ms\":%.6f", r->channel_ms);
    fputs(",\"gbps\":", f);
    if (r->ms > 0)
        fprintf(f, "%.3f", lab_gbps(r->n, r->ms));
    else
        fputs("null", f);
    fputs(",\"pct_memcpy\":", f);
    if (r->ms > 0 && r->memcpy_ms > 0)
        fprintf(f, "%.3f", 100.0 * r->memcpy_ms / r->ms);
    else
        fputs("null", f);
    if (r->alg_asked && r->alg_found) {
        fputs(",\"algorithm\":{\"asked\":", f);
        json_string(f, r->alg_asked);
        fputs(",\"found\":", f);
        json_string(f, r->alg_found);
        fprintf(f, ",\"same\":%s,\"measured\":", r->alg_same ? "true" : "false");
        json_string(f, r->alg_measured);
        fputs(",\"verdict\":", f);
        json_string(f, r->alg_verdict);
        fputs("}", f);
    }
    fputs("}\n", f);
}

/* ---- the lab's description --------------------------------------------- */

void lab_print_list(FILE *f, const lab_info *lab)
{
    fprintf(f, "%s: %s\n", lab->id, lab->title);
    fprintf(f, "  %s scan, %s", lab_scan_type_name(lab->type),
            lab->shape == LAB_HOST    ? "host arrays"
            : lab->shape == LAB_WHOLE ? "whole array on the GPU"
                                      : "tile scan on the GPU");
    if (lab->shape == LAB_TILE)
        fprintf(f, ", tile %zu", lab->tile);
    fprintf(f, ", benchmark n=%zu", lab->bench_n);
    if (lab->max_n)
        fprintf(f, ", practical up to n=%zu", lab->max_n);
    fprintf(f, "\nvariants:\n");
    for (int i = 0; i < lab->n_variants; i++)
        fprintf(f, "  %d %-22s %s%s\n", i, lab->variants[i].name, lab->variants[i].summary,
                i == 0                     ? " (default, graded)"
                : lab->variants[i].compare ? " (for comparison, not graded)"
                                           : "");
}

void lab_print_describe(FILE *f, const lab_info *lab, const char *mode)
{
    fprintf(f, "{\"contract\":%d,\"id\":", LAB_CONTRACT_VERSION);
    json_string(f, lab->id);
    fputs(",\"title\":", f);
    json_string(f, lab->title);
    fputs(",\"shape\":", f);
    json_string(f, lab_shape_name(lab->shape));
    fputs(",\"type\":", f);
    json_string(f, lab_scan_type_name(lab->type));
    fprintf(f, ",\"tile\":%zu,\"bench_n\":%zu,\"max_n\":%zu,\"element\":",
            lab->shape == LAB_TILE ? lab->tile : (size_t)0, lab->bench_n, lab->max_n);
    json_string(f, LAB_ELEMENT_NAME);
    fputs(",\"operator\":", f);
    json_string(f, LAB_OPERATOR_NAME);
    fputs(",\"variants\":[", f);
    for (int i = 0; i < lab->n_variants; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        json_string(f, lab->variants[i].name);
        fputs(",\"summary\":", f);
        json_string(f, lab->variants[i].summary);
        fprintf(f, ",\"temp\":%s,\"compare\":%s,\"op\":",
                lab->variants[i].temp_bytes ? "true" : "false",
                lab->variants[i].compare ? "true" : "false");
        json_string(f, lab_op_name(lab->variants[i].op));
        fputs(",\"algorithm\":", f);
        json_string(f, lab_algorithm_id(lab->variants[i].algorithm));
        fputc('}', f);
    }
    fputs("],\"work_tiles\":[", f);
    if (lab_work_tiles) {
        size_t tiles[4];
        const size_t k = lab_work_tiles(tiles, sizeof(tiles) / sizeof(tiles[0]));
        for (size_t i = 0; i < k; i++)
            fprintf(f, i ? ",%zu" : "%zu", tiles[i]);
    }
    fputs("],\"mode\":", f);
    json_string(f, mode);
    fputs("}\n", f);
}
