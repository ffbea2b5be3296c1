/* options.h — the command line of a lab binary: sizes, options, the usage text, and the choice of
 * variant. Pure C, no CUDA, so the tests exercise every option on any machine.
 */
#ifndef SCAN_OPTIONS_H
#define SCAN_OPTIONS_H

#include "contract.h" /* lab_dist, the exit codes */
#include "lab.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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
    size_t n;    /* elements */
    int n_given; /* 0: use the lab's bench_n */
    uint64_t seed;
    lab_dist dist;
    int reps;                    /* timed repetitions; 0 skips timing */
    int reps_given;              /* 1: --reps was on the command line */
    int warmup;                  /* untimed runs before the timed ones */
    const char *variant;         /* name or index; NULL: the default variant */
    int json;                    /* print one JSON object instead of a line */
    int list;                    /* list variants and exit */
    int describe;                /* print the lab's description as one JSON object and exit */
    int help;                    /* print usage and exit */
    int force;                   /* allow n over the lab's max_n */
    size_t sizes[LAB_MAX_SIZES]; /* --sizes: the n of call k is sizes[k % n_sizes]; sizes[0] = n */
    int n_sizes;                 /* 0: no --sizes, every call has n elements */
    int calls;                   /* checked calls before the warm-up and timed ones (default 1) */
    int offset_in; /* in and out start this many words past 16-byte alignment (0..3) */
    int offset_out;
    int sandbox; /* enter the seccomp sandbox before the lab's code first runs */
    /* last, so that the fields above keep their places (grader/fixtures' stack_walk_seed copies
     * them by hand, and the grader must keep catching it) */
    int seed_given;  /* 1: --seed was on the command line */
    int calls_given; /* 1: --calls was on the command line */
    /* --squeeze K: the checked calls run with the lab's kernels kept to K of the GPU's SMs (a
     * course kernel holds the others: lab_squeeze_begin in driver.h); 0: the whole GPU */
    int squeeze;
    int new_buffers; /* --new-buffers: a judge's shared device buffers in new memory (port.h) */
    int algorithm;   /* --algorithm: CPU mode profiles call 1 and the report names its algorithm */
} lab_options;

#define LAB_DEFAULT_SEED 1u
/* CPU mode's default seed for a GPU lab: the first element of both default calls' inputs is
 * negative (-12, then -7, dist small), so a max scan whose identity is 0 fails at once. */
#define LAB_CPU_DEFAULT_SEED 6u
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

#ifdef __cplusplus
}
#endif

#endif /* SCAN_OPTIONS_H */
