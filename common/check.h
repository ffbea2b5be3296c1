/* check.h — the host-side helpers of the harness: inputs, the CPU reference, validation, canaries,
 * command-line parsing and result reports. Pure C, no CUDA, so the tests exercise every piece
 * on any machine.
 */
#ifndef SCAN_CHECK_H
#define SCAN_CHECK_H

#include "lab.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- inputs ----------------------------------------------------------- */

/* Input distributions; each is a deterministic function of (seed, index). */
typedef enum {
    DIST_SMALL,  /* uniform in [-16, 16]: sums stay readable */
    DIST_ONES,   /* all 1: inclusive out[i] = i + 1, so a wrong index is obvious */
    DIST_ALT,    /* alternating signs, +k, -k, ...: partial sums stay near zero */
    DIST_LARGE,  /* magnitudes in [2^29, 2^31): sums overflow and must wrap mod 2^32 */
    DIST_RANDOM, /* any 32-bit value */
    DIST_COUNT
} lab_dist;

const char *lab_dist_name(lab_dist d);
/* Returns the distribution called name, or -1. */
int lab_dist_from_name(const char *name);

/* Fills in[0..n) with distribution d under seed. */
void lab_fill_input(int *in, size_t n, lab_dist d, uint64_t seed);

/* ---- reference and validation ----------------------------------------- */

/* The CPU reference: scan in[0..n) into out[0..n), wrapping modulo 2^32. */
void lab_reference_scan(const int *in, int *out, size_t n, scan_type type);

/* Index of the first i with got[i] != want[i], or n when they agree. */
size_t lab_first_mismatch(const int *got, const int *want, size_t n);

/* Canary words guard both ends of every buffer the harness hands to a lab. */
#define LAB_GUARD_WORDS ((size_t)4096)

/* Canary value for guard word i (varies with i so a shifted copy is also caught). */
int lab_canary_word(size_t i);
void lab_canary_fill(int *guard, size_t words);
/* Index of the first guard word that changed, or words when none did. */
size_t lab_canary_check(const int *guard, size_t words);

/* Value the output is filled with before a run, so unwritten elements are caught. */
#define LAB_POISON ((int)0x7E7E7E7E) /* every byte 0x7E, so cudaMemset can write it */

/* Median of v[0..count) (sorts v in place); 0 when count is 0. */
double lab_median(double *v, size_t count);

/* ---- command line ----------------------------------------------------- */

/* Sizes above this are refused as absurd whatever memory the machine has (2^40 elements). */
#define LAB_N_ABSURD ((size_t)1 << 40)

/* Parses an element count: decimal ("1000"), a power of two with an optional offset
 * ("2^24", "2^24+7", "2^31-1"), or a K/M/G binary suffix ("64K", "256M").
 * Returns 0 and sets *n, or -1 and writes a one-line reason to err. */
int lab_parse_size(const char *s, size_t *n, char *err, size_t errlen);

/* Most sizes --sizes takes (the calls of a run cycle through them). */
#define LAB_MAX_SIZES 8
/* Largest --offset-in / --offset-out, in words: 3 words = 12 bytes past 16-byte alignment. */
#define LAB_MAX_OFFSET 3

typedef struct {
    size_t n;          /* elements */
    int n_given;       /* 0: use the lab's bench_n */
    uint64_t seed;
    lab_dist dist;
    int reps;          /* timed repetitions; 0 skips timing */
    int warmup;        /* untimed runs before the timed ones */
    const char *variant; /* name or index; NULL: the default variant */
    int json;          /* print one JSON object instead of a line */
    int list;          /* list variants and exit */
    int help;          /* print usage and exit */
    int force;         /* allow n over the lab's max_n */
    size_t sizes[LAB_MAX_SIZES]; /* --sizes: the n of call k is sizes[k % n_sizes]; sizes[0] = n */
    int n_sizes;       /* 0: no --sizes, every call has n elements */
    int calls;         /* checked calls before the warm-up and timed ones (default 1) */
    int offset_in;     /* in and out start this many words past 16-byte alignment (0..3) */
    int offset_out;
    int sandbox;       /* enter the seccomp sandbox before the lab's code first runs */
} lab_options;

#define LAB_DEFAULT_SEED 1u
#define LAB_DEFAULT_REPS 20
#define LAB_DEFAULT_WARMUP 3

void lab_default_options(lab_options *o);

/* The n of call k of a run: sizes[k % n_sizes] with --sizes, else n. */
size_t lab_call_n(const lab_options *o, int k);
/* The largest n of any call of a run. */
size_t lab_max_call_n(const lab_options *o);

/* Parses argv into o. Returns 0, or LAB_EXIT_USAGE with a one-line reason in err. */
int lab_parse_args(int argc, char **argv, lab_options *o, char *err, size_t errlen);

/* Prints the usage text for program prog. */
void lab_print_usage(FILE *f, const char *prog);

/* Finds the variant named (or numbered) sel in lab; NULL selects variants[0]. Returns its index
 * or -1. */
int lab_find_variant(const lab_info *lab, const char *sel);

/* ---- reports ---------------------------------------------------------- */

/* Bytes of lab_report.message, the terminating NUL included. */
#define LAB_MESSAGE_BYTES 4096

/* Outcome of one run, as printed and as the grader reads it. */
typedef enum {
    ST_OK,
    ST_WRONG,           /* an output element differs from the reference */
    ST_OUT_OF_BOUNDS,   /* a canary word next to the output changed */
    ST_INPUT_MODIFIED,  /* the input buffer changed */
    ST_NOT_IMPLEMENTED,
    ST_CUDA_ERROR,
    ST_NO_DEVICE,
    ST_NO_MEMORY,
    ST_TOO_LARGE,
    ST_USAGE,
    ST_LEAK,            /* device memory the lab allocated and never freed, growing call by call */
    ST_COUNT
} lab_status;

const char *lab_status_name(lab_status s);
/* The process exit code for status s. */
int lab_status_exit_code(lab_status s);

typedef struct {
    const char *lab;
    const char *variant;
    const char *mode;     /* "gpu", "cpu" (CPU mode) or "host" (lab 01) */
    const char *device;   /* GPU or CPU name, may be NULL */
    size_t n;
    uint64_t seed;
    lab_dist dist;
    lab_status status;
    /* one line: what went wrong, or empty. Large enough for a CPU-mode CUDA error (the report
     * of common/cpu/runtime.cpp, up to 2048 bytes, names kernel, block, thread, place and seed)
     * inside the harness's "CUDA error <name> (<report>) in <call>"; a mismatch message (index,
     * expected, got, n) is under 200 bytes. */
    char message[LAB_MESSAGE_BYTES];
    int has_mismatch;
    long long mismatch_index; /* index into out (negative: front guard), guard word, or input */
    long long expected, got;
    int reps;             /* 0: not timed */
    double ms;            /* median time of the whole scan */
    double tile_ms;       /* tile labs: median time of the tile pass alone; else 0 */
    double memcpy_ms;     /* median time of a copy of the same bytes, same process */
    int calls;            /* calls of the lab's code made (each on a new input, each checked) */
    int sandbox;          /* 1: the lab's code ran inside the seccomp sandbox */
} lab_report;

/* Bytes a scan of n int32 must move at the least: read n, write n. */
double lab_bytes_moved(size_t n);
/* GB/s for n elements in ms milliseconds (0 when ms is 0). */
double lab_gbps(size_t n, double ms);

void lab_report_init(lab_report *r, const lab_info *lab, const char *variant, const lab_options *o);
/* One human-readable line (no colour). */
void lab_print_report_text(FILE *f, const lab_report *r);
/* One JSON object on one line. */
void lab_print_report_json(FILE *f, const lab_report *r);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_CHECK_H */
