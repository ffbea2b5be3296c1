/* report.h — what a run reports: the status names and exit codes, one line or one JSON object
 * per run, the bandwidth it is quoted at, and the lab's own description (--list, --describe).
 * Pure C, no CUDA.
 */
#ifndef SCAN_REPORT_H
#define SCAN_REPORT_H

#include "contract.h" /* lab_status, the exit codes, the names */
#include "lab.h"
#include "options.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of lab_report.message, the terminating NUL included. */
#define LAB_MESSAGE_BYTES 4096

/* The outcome of a run (lab_status: contract.h) as printed, and as the process's exit code. */
const char *lab_status_name(lab_status s);
/* Why a run is not implemented (lab_why: contract.h), as a report's "reason" names it. */
const char *lab_why_name(lab_why w);
int lab_status_exit_code(lab_status s);
/* The names of lab.h's scan_type and lab_shape values ("inclusive", "tile", ...), or "?". */
const char *lab_scan_type_name(scan_type t);
const char *lab_shape_name(lab_shape s);
/* The identifier of lab.h's lab_algorithm ("kogge_stone", ...; "none" for LAB_ALG_ANY), as
 * --describe and a report's "algorithm" name it, or "?". */
const char *lab_algorithm_id(lab_algorithm a);

typedef struct {
    const char *lab;
    const char *variant;
    const char *mode;   /* "gpu", "cpu" (CPU mode) or "host" (lab 01) */
    const char *device; /* GPU or CPU name, may be NULL */
    size_t n;
    uint64_t seed;
    lab_dist dist;
    lab_status status;
    lab_why reason; /* ST_NOT_IMPLEMENTED: why (WHY_TODO: its own TODO(student) parts) */
    /* one line: what went wrong, or empty. Large enough for a CPU-mode CUDA error (the report
     * of common/cpu/errors.cpp, up to 2048 bytes, names kernel, block, thread, place and seed)
     * inside the harness's "CUDA error <name> (<report>) in <call>"; a mismatch message (index,
     * expected, got, n) is under 200 bytes. */
    char message[LAB_MESSAGE_BYTES];
    int has_mismatch;
    long long mismatch_index; /* index into out (negative: front guard), guard word, or input */
    long long expected, got;
    int reps;          /* 0: not timed */
    double ms;         /* median time of the whole scan */
    double tile_ms;    /* tile labs: median time of the tile pass alone; else 0 */
    double memcpy_ms;  /* median time of a copy of the same bytes, same process */
    double channel_ms; /* a judge: its channel's cost, taken off each timed call (0: none) */
    int calls;         /* calls of the lab's code made (each on a new input, each checked) */
    int sandbox;       /* 1: the lab's code ran inside the seccomp sandbox */
    const char *op;    /* the variant's operator (ops.h): "add" in every lab but 09 */
    /* "fadd": the largest |float result - double reference| over the checked calls, and the
     * largest error as a fraction of its bound (ops.h's bound_d) */
    double fp_max_error, fp_max_ratio;
    /* --algorithm: which of the course's algorithms call 1 was (CPU mode's profile;
     * profile_table.h), set when the variant asks for one (alg_asked not LAB_ALG_ANY) and call 1
     * was counted */
    const char *alg_asked, *alg_found; /* identifiers ("kogge_stone"); NULL: not profiled */
    int alg_same;                      /* 1: found is what was asked for */
    char alg_measured[256];            /* what was measured, in words */
    char alg_verdict[512];             /* what that is, against what was asked (its "-> " line) */
} lab_report;

/* Median of v[0..count) (sorts v in place); 0 when count is 0. */
double lab_median(double *v, size_t count);

/* Bytes a scan of n elements must move at the least (contract.h: read n, write n). */
double lab_bytes_moved(size_t n);
/* GB/s for n elements in ms milliseconds (0 when ms is 0). */
double lab_gbps(size_t n, double ms);

void lab_report_init(lab_report *r, const lab_info *lab, const char *variant, const lab_options *o);
/* One human-readable line (no colour). */
void lab_print_report_text(FILE *f, const lab_report *r);
/* One JSON object on one line. */
void lab_print_report_json(FILE *f, const lab_report *r);

/* --list: the lab and its variants, for people. */
void lab_print_list(FILE *f, const lab_info *lab);
/* --describe: the lab as one JSON object on one line, for programs (README.md: its fields);
 * mode is the build's, LAB_MODE_GPU or LAB_MODE_CPU. */
void lab_print_describe(FILE *f, const lab_info *lab, const char *mode);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_REPORT_H */
