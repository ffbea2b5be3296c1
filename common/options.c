/* options.c — the command line of a lab binary (see options.h): sizes, the option table and its
 * parser, the usage text, the choice of variant.
 *
 * Size: a little over 400 lines: the option table, its parser and the usage text it prints are one
 * job and must agree line for line.
 */
#include "options.h"
#include "inputs.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- sizes ------------------------------------------------------------ */

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

/* The rest of "2^k", "2^k+c" or "2^k-c" after its base, *p at the '^': the value in *v (whose
 * base must be 2), *p past it. 0, or -1 with err set. */
static int parse_power(const char **pp, const char *s, uint64_t *v, char *err, size_t errlen)
{
    const char *p = *pp + 1;
    uint64_t k, c = 0;
    if (*v != 2 || parse_decimal(&p, 63, &k) != 0 || k > 61) {
        set_err(err, errlen, "--n: only powers of two up to 2^61 are understood (got '%s')", s);
        return -1;
    }
    *v = UINT64_C(1) << k;
    if (*p == '+' || *p == '-') {
        const char sign = *p++;
        if (parse_decimal(&p, UINT64_C(1) << 62, &c) != 0) {
            set_err(err, errlen, "--n: expected a number after '%c' (got '%s')", sign, s);
            return -1;
        }
        if (sign == '-' && c > *v) {
            set_err(err, errlen, "--n must not be negative (got '%s')", s);
            return -1;
        }
        *v = sign == '+' ? *v + c : *v - c;
    }
    *pp = p;
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
        set_err(err, errlen, "--n must be a whole number such as 1000, 2^24+7 or 64M (got '%s')",
                s);
        return -1;
    }
    if (*p == '^') {
        if (parse_power(&p, s, &v, err, errlen) != 0)
            return -1;
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
        set_err(err, errlen, "--n must be a whole number such as 1000, 2^24+7 or 64M (got '%s')",
                s);
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

/* ---- option values ---------------------------------------------------- */

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
        set_err(err, errlen,
                "--sizes needs sizes separated by commas, e.g. --sizes 1000,33,2^16+1");
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

static int parse_n(const char *val, lab_options *o, char *err, size_t errlen)
{
    if (lab_parse_size(val, &o->n, err, errlen) != 0)
        return -1;
    o->n_given = 1;
    return 0;
}

static int parse_seed(const char *val, lab_options *o, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    if (val[0] == '-' || !isdigit((unsigned char)val[0])) {
        set_err(err, errlen, "--seed must be a non-negative whole number (got '%s')", val);
        return -1;
    }
    unsigned long long s = strtoull(val, &end, 10);
    if (errno || *end != '\0') {
        set_err(err, errlen, "--seed must be a non-negative whole number (got '%s')", val);
        return -1;
    }
    o->seed = (uint64_t)s;
    o->seed_given = 1;
    return 0;
}

static int parse_dist(const char *val, lab_options *o, char *err, size_t errlen)
{
    int d = lab_dist_from_name(val);
    if (d < 0) {
        set_err(err, errlen, "--dist must be one of " LAB_DIST_NAMES_TEXT " (got '%s')", val);
        return -1;
    }
    o->dist = (lab_dist)d;
    return 0;
}

static int parse_variant(const char *val, lab_options *o, char *err, size_t errlen)
{
    if (!*val) {
        set_err(err, errlen, "--variant needs a name or number (see --list)");
        return -1;
    }
    o->variant = val;
    return 0;
}

/* ---- the option table ------------------------------------------------- */

typedef enum {
    OPT_SWITCH, /* no value: sets the int field to 1 */
    OPT_INT,    /* a whole number in [lo, hi] into the int field */
    OPT_PARSE,  /* a value for parse() */
} option_kind;

typedef struct {
    const char *flag;  /* "--reps" */
    const char *alias; /* another spelling ("-h"), or NULL */
    option_kind kind;
    size_t field; /* OPT_SWITCH, OPT_INT: offsetof the int in lab_options */
    long lo, hi;  /* OPT_INT: the range (lo 0 when not given) */
    size_t given; /* OPT_INT: offsetof an int set to 1 when the option is given; 0: none */
    int (*parse)(const char *val, lab_options *o, char *err, size_t errlen); /* OPT_PARSE */
} option_spec;

/* Where an option's int lives in lab_options. */
#define FIELD(member) offsetof(lab_options, member)

/* Every option; lab_print_usage documents them. */
static const option_spec OPTIONS[] = {
    {.flag = "--help", .alias = "-h", .kind = OPT_SWITCH, .field = FIELD(help)},
    {.flag = "--list", .kind = OPT_SWITCH, .field = FIELD(list)},
    {.flag = "--describe", .kind = OPT_SWITCH, .field = FIELD(describe)},
    {.flag = "--json", .kind = OPT_SWITCH, .field = FIELD(json)},
    {.flag = "--force", .kind = OPT_SWITCH, .field = FIELD(force)},
    {.flag = "--sandbox", .kind = OPT_SWITCH, .field = FIELD(sandbox)},
    {.flag = "--n", .kind = OPT_PARSE, .parse = parse_n},
    {.flag = "--seed", .kind = OPT_PARSE, .parse = parse_seed},
    {.flag = "--dist", .kind = OPT_PARSE, .parse = parse_dist},
    {.flag = "--reps",
     .kind = OPT_INT,
     .field = FIELD(reps),
     .hi = 100000,
     .given = FIELD(reps_given)},
    {.flag = "--warmup", .kind = OPT_INT, .field = FIELD(warmup), .hi = 1000},
    {.flag = "--variant", .kind = OPT_PARSE, .parse = parse_variant},
    {.flag = "--sizes", .kind = OPT_PARSE, .parse = parse_sizes},
    {.flag = "--calls",
     .kind = OPT_INT,
     .field = FIELD(calls),
     .lo = 1,
     .hi = 1000,
     .given = FIELD(calls_given)},
    {.flag = "--offset-in", .kind = OPT_INT, .field = FIELD(offset_in), .hi = LAB_MAX_OFFSET},
    {.flag = "--offset-out", .kind = OPT_INT, .field = FIELD(offset_out), .hi = LAB_MAX_OFFSET},
    {.flag = "--squeeze", .kind = OPT_INT, .field = FIELD(squeeze), .hi = 1024},
    {.flag = "--new-buffers", .kind = OPT_SWITCH, .field = FIELD(new_buffers)},
    {.flag = "--algorithm", .kind = OPT_SWITCH, .field = FIELD(algorithm)},
};

static const option_spec *find_option(const char *name)
{
    for (size_t i = 0; i < sizeof(OPTIONS) / sizeof(OPTIONS[0]); i++)
        if (strcmp(name, OPTIONS[i].flag) == 0 ||
            (OPTIONS[i].alias && strcmp(name, OPTIONS[i].alias) == 0))
            return &OPTIONS[i];
    return NULL;
}

static int *int_field(lab_options *o, size_t offset)
{
    return (int *)((char *)o + offset);
}

/* Applies one option with its value (NULL for a switch). Returns 0 or -1 with a reason. */
static int apply_option(const option_spec *spec, const char *val, lab_options *o, char *err,
                        size_t errlen)
{
    switch (spec->kind) {
    case OPT_SWITCH:
        *int_field(o, spec->field) = 1;
        return 0;
    case OPT_INT:
        if (parse_int_opt(spec->flag, val, spec->lo, spec->hi, int_field(o, spec->field), err,
                          errlen) != 0)
            return -1;
        if (spec->given)
            *int_field(o, spec->given) = 1;
        return 0;
    case OPT_PARSE:
    default:
        return spec->parse(val, o, err, errlen);
    }
}

/* --sizes given: its first size is n (and --n, if given too, must agree). */
static int settle_sizes(lab_options *o, char *err, size_t errlen)
{
    if (o->n_sizes == 0)
        return 0;
    if (o->n_given && o->sizes[0] != o->n) {
        set_err(err, errlen, "--n and the first of --sizes differ; give one of them");
        return -1;
    }
    o->n = o->sizes[0];
    o->n_given = 1;
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
        const option_spec *spec = find_option(a);
        if (!spec) {
            set_err(err, errlen, "unknown option '%s' (see --help)", argv[i]);
            return LAB_EXIT_USAGE;
        }
        if (spec->kind != OPT_SWITCH && !val) {
            if (i + 1 >= argc) {
                set_err(err, errlen, "%s needs a value (see --help)", a);
                return LAB_EXIT_USAGE;
            }
            val = argv[++i];
        }
        if (apply_option(spec, val, o, err, errlen) != 0)
            return LAB_EXIT_USAGE;
    }
    return settle_sizes(o, err, errlen) == 0 ? 0 : LAB_EXIT_USAGE;
}

/* ---- usage and variants ------------------------------------------------ */

void lab_print_usage(FILE *f, const char *prog)
{
    fprintf(
        f,
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
        "  --squeeze K    run the checked calls on K of the GPU's SMs (a course kernel holds the\n"
        "                 rest): more tiles wait for a block than run at once (labs 08-10)\n"
        "  --sandbox      run the lab's code in the seccomp sandbox of graded runs\n"
        "  --new-buffers  graded runs: the arrays in newly allocated device memory, not the\n"
        "                 memory of the run before (a timed round's new placement)\n"
        "  --algorithm    CPU mode: the JSON report names the algorithm of the first call's\n"
        "                 kernels (the profile make run CPU=1 prints)\n"
        "  --list         list the lab's variants\n"
        "  --describe     print the lab's description as one JSON object (for programs)\n"
        "  --help         this text\n",
        prog, LAB_DEFAULT_SEED, LAB_DEFAULT_REPS, LAB_DEFAULT_WARMUP);
#ifdef LAB_CPU_MODE
    fprintf(f,
            "\n"
            "  CPU mode, a GPU lab without --n or --sizes: three checked calls, n = the benchmark\n"
            "  size (at most 2^20) + 7, then sixteen tiles + 1 twice, seed %u (every input starts\n"
            "  negative); no timing without --reps\n",
            LAB_CPU_DEFAULT_SEED);
#endif
    fputs("\n" LAB_EXIT_CODES_HELP, f);
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
