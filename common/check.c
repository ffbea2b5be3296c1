/* check.c — inputs, CPU reference, validation, canaries, argument parsing and reports
 * (see check.h). No CUDA here: everything in this file is tested on the CPU.
 */
#include "check.h"
#include "gen.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- inputs ----------------------------------------------------------- */

static const char *const DIST_NAMES[DIST_COUNT] = {"small", "ones", "alt", "large", "random"};

const char *lab_dist_name(lab_dist d)
{
    return (d >= 0 && d < DIST_COUNT) ? DIST_NAMES[d] : "?";
}

int lab_dist_from_name(const char *name)
{
    for (int d = 0; d < DIST_COUNT; d++)
        if (strcmp(name, DIST_NAMES[d]) == 0)
            return d;
    return -1;
}

void lab_fill_input(int *in, size_t n, lab_dist d, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        in[i] = lab_input_value(seed, (int)d, i);
}

/* ---- reference and validation ----------------------------------------- */

void lab_reference_scan(const int *in, int *out, size_t n, scan_type type)
{
    uint32_t acc = 0; /* unsigned: wraps modulo 2^32 without undefined behaviour */
    for (size_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)in[i];
        if (type == SCAN_EXCLUSIVE) {
            out[i] = (int)acc;
            acc += x;
        } else {
            acc += x;
            out[i] = (int)acc;
        }
    }
}

size_t lab_first_mismatch(const int *got, const int *want, size_t n)
{
    /* memcmp finds a differing block fast; the loop then names the element */
    const size_t chunk = 4096;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (memcmp(got + i, want + i, len * sizeof(*got)) != 0)
            for (size_t j = i; j < i + len; j++)
                if (got[j] != want[j])
                    return j;
    }
    return n;
}

int lab_canary_word(size_t i)
{
    return lab_canary_value(i);
}

void lab_canary_fill(int *guard, size_t words)
{
    for (size_t i = 0; i < words; i++)
        guard[i] = lab_canary_word(i);
}

size_t lab_canary_check(const int *guard, size_t words)
{
    for (size_t i = 0; i < words; i++)
        if (guard[i] != lab_canary_word(i))
            return i;
    return words;
}

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

/* ---- command line ----------------------------------------------------- */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Parses a plain unsigned decimal at *s (advancing it); -1 when there are no digits or it
 * exceeds limit. */
static int parse_decimal(const char **s, uint64_t limit, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
        p++;
    }
    *s = p;
    *out = v;
    return 0;
}

int lab_parse_size(const char *s, size_t *n, char *err, size_t errlen)
{
    const uint64_t huge = UINT64_C(1) << 62;
    const char *p = s;
    uint64_t v;

    if (!s || !*s) {
        set_err(err, errlen, "--n needs a value, e.g. --n 1000 or --n 2^24+7");
        return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-') {
        set_err(err, errlen, "--n must not be negative (got '%s')", s);
        return -1;
    }
    if (*p == '+')
        p++;
    if (parse_decimal(&p, huge, &v) != 0) {
        set_err(err, errlen, "--n must be a whole number such as 1000, 2^24+7 or 64M (got '%s')", s);
        return -1;
    }
    if (*p == '^') { /* 2^k, optionally +c or -c */
        uint64_t k, c = 0;
        p++;
        if (v != 2 || parse_decimal(&p, 63, &k) != 0 || k > 61) {
            set_err(err, errlen, "--n: only powers of two up to 2^61 are understood (got '%s')", s);
            return -1;
        }
        v = UINT64_C(1) << k;
        if (*p == '+' || *p == '-') {
            char sign = *p++;
            if (parse_decimal(&p, huge, &c) != 0) {
                set_err(err, errlen, "--n: expected a number after '%c' (got '%s')", sign, s);
                return -1;
            }
            if (sign == '-' && c > v) {
                set_err(err, errlen, "--n must not be negative (got '%s')", s);
                return -1;
            }
            v = sign == '+' ? v + c : v - c;
        }
    } else if (*p == 'K' || *p == 'M' || *p == 'G' || *p == 'k' || *p == 'm' || *p == 'g') {
        int shift = (*p == 'K' || *p == 'k') ? 10 : (*p == 'M' || *p == 'm') ? 20 : 30;
        if (v > (huge >> shift)) {
            set_err(err, errlen, "--n is absurdly large (got '%s')", s);
            return -1;
        }
        v <<= shift;
        p++;
    }
    if (*p != '\0') {
        set_err(err, errlen, "--n must be a whole number such as 1000, 2^24+7 or 64M (got '%s')", s);
        return -1;
    }
    if (v > (uint64_t)LAB_N_ABSURD) {
        set_err(err, errlen, "--n %s is absurdly large (the limit is 2^40 elements)", s);
        return -1;
    }
    *n = (size_t)v;
    return 0;
}

void lab_default_options(lab_options *o)
{
    memset(o, 0, sizeof(*o));
    o->seed = LAB_DEFAULT_SEED;
    o->dist = DIST_SMALL;
    o->reps = LAB_DEFAULT_REPS;
    o->warmup = LAB_DEFAULT_WARMUP;
    o->n_sizes = 0; /* no --sizes: every call has n elements */
    o->calls = 1;
}

size_t lab_call_n(const lab_options *o, int k)
{
    return o->n_sizes > 0 ? o->sizes[k % o->n_sizes] : o->n;
}

size_t lab_max_call_n(const lab_options *o)
{
    size_t m = o->n;
    for (int k = 0; k < o->n_sizes; k++)
        if (o->sizes[k] > m)
            m = o->sizes[k];
    return m;
}

/* Parses --sizes "a,b,c" into o->sizes (each as lab_parse_size takes it). */
static int parse_sizes(const char *val, lab_options *o, char *err, size_t errlen)
{
    char buf[256];
    int k = 0;
    if (strlen(val) >= sizeof(buf)) {
        set_err(err, errlen, "--sizes is too long (at most %d sizes)", LAB_MAX_SIZES);
        return -1;
    }
    strcpy(buf, val);
    for (char *tok = buf, *next; tok && *tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (k == LAB_MAX_SIZES) {
            set_err(err, errlen, "--sizes takes at most %d sizes (got '%s')", LAB_MAX_SIZES, val);
            return -1;
        }
        if (lab_parse_size(tok, &o->sizes[k], err, errlen) != 0)
            return -1;
        k++;
    }
    if (k == 0) {
        set_err(err, errlen, "--sizes needs sizes separated by commas, e.g. --sizes 1000,33,2^16+1");
        return -1;
    }
    o->n_sizes = k;
    return 0;
}

/* Parses a non-negative int option value in [lo, hi]. */
static int parse_int_opt(const char *flag, const char *val, long lo, long hi, int *out, char *err,
                         size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end != '\0' || v < lo || v > hi) {
        set_err(err, errlen, "%s must be a whole number from %ld to %ld (got '%s')", flag, lo, hi,
                val);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int lab_parse_args(int argc, char **argv, lab_options *o, char *err, size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char flag[32];

        /* accept both "--flag value" and "--flag=value" */
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof(flag)) {
            memcpy(flag, a, (size_t)(eq - a));
            flag[eq - a] = '\0';
            val = eq + 1;
            a = flag;
        }

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (strcmp(a, "--list") == 0) {
            o->list = 1;
            continue;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--force") == 0) {
            o->force = 1;
            continue;
        }
        if (strcmp(a, "--sandbox") == 0) {
            o->sandbox = 1;
            continue;
        }

        int takes_value = strcmp(a, "--n") == 0 || strcmp(a, "--seed") == 0 ||
                          strcmp(a, "--dist") == 0 || strcmp(a, "--reps") == 0 ||
                          strcmp(a, "--warmup") == 0 || strcmp(a, "--variant") == 0 ||
                          strcmp(a, "--sizes") == 0 || strcmp(a, "--calls") == 0 ||
                          strcmp(a, "--offset-in") == 0 || strcmp(a, "--offset-out") == 0;
        if (!takes_value) {
            set_err(err, errlen, "unknown option '%s' (see --help)", argv[i]);
            return LAB_EXIT_USAGE;
        }
        if (!val) {
            if (i + 1 >= argc) {
                set_err(err, errlen, "%s needs a value (see --help)", a);
                return LAB_EXIT_USAGE;
            }
            val = argv[++i];
        }

        if (strcmp(a, "--n") == 0) {
            if (lab_parse_size(val, &o->n, err, errlen) != 0)
                return LAB_EXIT_USAGE;
            o->n_given = 1;
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            errno = 0;
            if (val[0] == '-' || !isdigit((unsigned char)val[0])) {
                set_err(err, errlen, "--seed must be a non-negative whole number (got '%s')", val);
                return LAB_EXIT_USAGE;
            }
            unsigned long long s = strtoull(val, &end, 10);
            if (errno || *end != '\0') {
                set_err(err, errlen, "--seed must be a non-negative whole number (got '%s')", val);
                return LAB_EXIT_USAGE;
            }
            o->seed = (uint64_t)s;
        } else if (strcmp(a, "--dist") == 0) {
            int d = lab_dist_from_name(val);
            if (d < 0) {
                set_err(err, errlen, "--dist must be one of small, ones, alt, large, random (got '%s')",
                        val);
                return LAB_EXIT_USAGE;
            }
            o->dist = (lab_dist)d;
        } else if (strcmp(a, "--reps") == 0) {
            if (parse_int_opt("--reps", val, 0, 100000, &o->reps, err, errlen) != 0)
                return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--warmup") == 0) {
            if (parse_int_opt("--warmup", val, 0, 1000, &o->warmup, err, errlen) != 0)
                return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--sizes") == 0) {
            if (parse_sizes(val, o, err, errlen) != 0)
                return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--calls") == 0) {
            if (parse_int_opt("--calls", val, 1, 1000, &o->calls, err, errlen) != 0)
                return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--offset-in") == 0 || strcmp(a, "--offset-out") == 0) {
            if (parse_int_opt(a, val, 0, LAB_MAX_OFFSET,
                              a[9] == 'i' ? &o->offset_in : &o->offset_out, err, errlen) != 0)
                return LAB_EXIT_USAGE;
        } else { /* --variant */
            if (!*val) {
                set_err(err, errlen, "--variant needs a name or number (see --list)");
                return LAB_EXIT_USAGE;
            }
            o->variant = val;
        }
    }
    if (o->n_sizes > 0) { /* --sizes given: its first size is n */
        if (o->n_given && o->sizes[0] != o->n) {
            set_err(err, errlen, "--n and the first of --sizes differ; give one of them");
            return LAB_EXIT_USAGE;
        }
        o->n = o->sizes[0];
        o->n_given = 1;
    }
    return 0;
}

void lab_print_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "  Scans n int32 values with this lab's code, checks the result against the CPU\n"
            "  reference, and times it against a device-to-device copy of the same bytes.\n"
            "\n"
            "  --n N          elements: 1000, 2^24+7, 64M (default: the lab's benchmark size)\n"
            "  --seed S       input seed (default %u); the same seed gives the same input\n"
            "  --dist D       input: small, ones, alt, large (overflows), random (default small)\n"
            "  --variant V    variant name or number (default: the first; see --list)\n"
            "  --reps R       timed repetitions, median reported; 0 = check only (default %d)\n"
            "  --warmup W     untimed runs before timing (default %d)\n"
            "  --json         print one JSON object instead of a line\n"
            "  --force        run even if n is over the lab's practical limit\n"
            "  --sizes A,B,.. the n of each checked call in turn (calls cycle through them)\n"
            "  --calls K      checked calls before the timed ones, each on a new input (default 1)\n"
            "  --offset-in W  start the input W words (0-3) past 16-byte alignment\n"
            "  --offset-out W the same for the output\n"
            "  --sandbox      run the lab's code in the seccomp sandbox of graded runs\n"
            "  --list         list the lab's variants\n"
            "  --help         this text\n"
            "\n"
            "exit codes: 0 correct, 1 wrong (or wrote outside the output / changed the input),\n"
            "  2 usage error, 3 not implemented, 4 CUDA error, 5 no CUDA device,\n"
            "  6 out of memory, 7 n over the lab's limit, 8 the process ended before the\n"
            "  harness reported (the lab's code called exit()), 9 the sandbox stopped a\n"
            "  system call\n",
            prog, LAB_DEFAULT_SEED, LAB_DEFAULT_REPS, LAB_DEFAULT_WARMUP);
}

int lab_find_variant(const lab_info *lab, const char *sel)
{
    if (lab->n_variants <= 0)
        return -1;
    if (!sel)
        return 0;
    for (int i = 0; i < lab->n_variants; i++)
        if (strcmp(sel, lab->variants[i].name) == 0)
            return i;
    char *end;
    long k = strtol(sel, &end, 10);
    if (end != sel && *end == '\0' && k >= 0 && k < lab->n_variants)
        return (int)k;
    return -1;
}

/* ---- reports ---------------------------------------------------------- */

static const char *const STATUS_NAMES[ST_COUNT] = {
    "ok",        "wrong",     "out_of_bounds", "input_modified", "not_implemented",
    "cuda_error", "no_device", "no_memory",     "too_large",      "usage_error",
    "leak",
};

const char *lab_status_name(lab_status s)
{
    return (s >= 0 && s < ST_COUNT) ? STATUS_NAMES[s] : "?";
}

int lab_status_exit_code(lab_status s)
{
    switch (s) {
    case ST_OK: return LAB_EXIT_OK;
    case ST_WRONG:
    case ST_OUT_OF_BOUNDS:
    case ST_INPUT_MODIFIED:
    case ST_LEAK: return LAB_EXIT_WRONG;
    case ST_NOT_IMPLEMENTED: return LAB_EXIT_NOT_IMPLEMENTED;
    case ST_CUDA_ERROR: return LAB_EXIT_CUDA_ERROR;
    case ST_NO_DEVICE: return LAB_EXIT_NO_DEVICE;
    case ST_NO_MEMORY: return LAB_EXIT_NO_MEMORY;
    case ST_TOO_LARGE: return LAB_EXIT_TOO_LARGE;
    case ST_USAGE:
    default: return LAB_EXIT_USAGE;
    }
}

double lab_bytes_moved(size_t n)
{
    return 2.0 * (double)n * sizeof(int);
}

double lab_gbps(size_t n, double ms)
{
    return ms > 0 ? lab_bytes_moved(n) / (ms * 1e6) : 0.0;
}

void lab_report_init(lab_report *r, const lab_info *lab, const char *variant, const lab_options *o)
{
    memset(r, 0, sizeof(*r));
    r->lab = lab ? lab->id : "?";
    r->variant = variant ? variant : "?";
    r->mode = "gpu";
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
    if (r->has_mismatch)
        fprintf(f, ",\"mismatch\":{\"index\":%lld,\"expected\":%lld,\"got\":%lld}",
                r->mismatch_index, r->expected, r->got);
    else
        fputs(",\"mismatch\":null", f);
    fprintf(f, ",\"calls\":%d,\"sandbox\":%s", r->calls, r->sandbox ? "true" : "false");
    fprintf(f, ",\"reps\":%d,\"ms\":", r->reps);
    json_ms(f, r->ms);
    fputs(",\"tile_ms\":", f);
    json_ms(f, r->tile_ms);
    fputs(",\"memcpy_ms\":", f);
    json_ms(f, r->memcpy_ms);
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
    fputs("}\n", f);
}
