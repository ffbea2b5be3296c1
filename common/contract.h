/* contract.h — generated from contract.json by contract.py — do not edit.
 *
 * The facts the harness and the tests (C) share with the grader and the Python tests:
 * change common/contract.json, then run `make contract` (python3 common/contract.py).
 * tests/test_contract.py fails when this file is stale or a fact is copied elsewhere.
 */
/* formatted by its generator, so clang-format leaves it alone: */
/* clang-format off */
#ifndef SCAN_CONTRACT_H
#define SCAN_CONTRACT_H

#include <stddef.h>

#define LAB_CONTRACT_VERSION 1

/* ---- the element, the operator and the traffic model ---- */
#define LAB_ELEMENT_NAME "int32"
#define LAB_ELEMENT_BYTES 4
#define LAB_OPERATOR_NAME "add"
/* A scan must at the least read every element once and write every element once. */
#define LAB_TRAFFIC_READS 1
#define LAB_TRAFFIC_WRITES 1

/* ---- exit codes of a lab binary (README.md documents them; the grader relies on them) */
enum {
    LAB_EXIT_OK = 0, /* ran, output correct (or --list, --describe, --help) */
    /* wrong output, a wrong tile total, a write outside out[0..n), the input modified, or device
     * memory leaked call after call */
    LAB_EXIT_WRONG = 1,
    LAB_EXIT_USAGE = 2, /* bad command line */
    LAB_EXIT_NOT_IMPLEMENTED = 3, /* the lab's code returns LAB_NOT_IMPLEMENTED */
    LAB_EXIT_CUDA_ERROR = 4, /* a CUDA call or kernel launch failed */
    LAB_EXIT_NO_DEVICE = 5, /* no usable CUDA device */
    LAB_EXIT_NO_MEMORY = 6, /* n does not fit in device or host memory */
    LAB_EXIT_TOO_LARGE = 7, /* n is over the lab's max_n (pass --force to run anyway) */
    /* the process ended before the harness reported a result (the lab's code called exit(),
     * say): the harness's atexit check */
    LAB_EXIT_TAMPERED = 8,
    /* graded runs: the lab's code made a system call the sandbox does not allow
     * (common/sandbox.h) */
    LAB_EXIT_SANDBOX = 9,
};

/* The exit codes in one paragraph, for --help. */
#define LAB_EXIT_CODES_HELP \
    "exit codes: 0 correct, 1 wrong (or wrote outside the output / changed the\n" \
    "  input), 2 usage error, 3 not implemented yet, 4 CUDA error, 5 no CUDA device,\n" \
    "  6 out of memory, 7 n over the lab's limit, 8 the process ended before the\n" \
    "  harness reported (the lab's code called exit()), 9 the sandbox stopped a\n" \
    "  system call\n"

/* ---- outcomes of a run, as printed (status) and as exit codes ---- */
typedef enum {
    ST_OK, /* "ok": the output is correct */
    ST_WRONG, /* "wrong": an output element or a tile total differs from the reference */
    ST_OUT_OF_BOUNDS, /* "out_of_bounds": a canary word next to the output changed */
    ST_INPUT_MODIFIED, /* "input_modified": the input buffer changed */
    ST_NOT_IMPLEMENTED, /* "not_implemented": the lab's code returns LAB_NOT_IMPLEMENTED */
    ST_CUDA_ERROR, /* "cuda_error": a CUDA call or kernel failed */
    ST_NO_DEVICE, /* "no_device": no usable CUDA device */
    ST_NO_MEMORY, /* "no_memory": n does not fit in device or host memory */
    ST_TOO_LARGE, /* "too_large": n is over the lab's max_n */
    ST_USAGE, /* "usage_error": bad command line */
    ST_LEAK, /* "leak": device memory the lab allocated and never freed, growing call by call */
    ST_COUNT
} lab_status;

/* Indexed by lab_status: the name printed in reports, and the exit code. */
#define LAB_STATUS_NAMES { \
    "ok", "wrong", "out_of_bounds", "input_modified", "not_implemented", "cuda_error", \
    "no_device", "no_memory", "too_large", "usage_error", "leak" \
    }
#define LAB_STATUS_EXIT_CODES { \
    LAB_EXIT_OK, LAB_EXIT_WRONG, LAB_EXIT_WRONG, LAB_EXIT_WRONG, LAB_EXIT_NOT_IMPLEMENTED, \
    LAB_EXIT_CUDA_ERROR, LAB_EXIT_NO_DEVICE, LAB_EXIT_NO_MEMORY, LAB_EXIT_TOO_LARGE, \
    LAB_EXIT_USAGE, LAB_EXIT_WRONG \
    }

/* ---- why a variant returned LAB_NOT_IMPLEMENTED (lab.h: lab_not_implemented_why) ---- */
typedef enum {
    WHY_TODO, /* "todo": the lab's own TODO(student) parts are not written (the usual reason) */
    /* "base_unwritten": a lab built on others (lab 10): the scan it runs on, lab 08's, else lab
     * 07's, returns LAB_NOT_IMPLEMENTED too */
    WHY_BASE_UNWRITTEN,
    WHY_COUNT
} lab_why;

/* Indexed by lab_why: the name a report gives ("reason"). */
#define LAB_WHY_NAMES {"todo", "base_unwritten"}

/* ---- input distributions: each a deterministic function of (seed, index), gen.h ---- */
typedef enum {
    DIST_SMALL, /* "small": uniform in [-16, 16]: sums stay readable */
    DIST_ONES, /* "ones": all 1: inclusive out[i] = i + 1, so a wrong index is obvious */
    DIST_ALT, /* "alt": alternating signs, +k, -k, ...: partial sums stay near zero */
    DIST_LARGE, /* "large": magnitudes in [2^29, 2^31): sums overflow and must wrap mod 2^32 */
    DIST_RANDOM, /* "random": any 32-bit value */
    /* "negative": every value negative, in [-2^31, -1]: a running maximum never reaches 0, so a
     * max scan that starts from 0 instead of INT_MIN is caught */
    DIST_NEGATIVE,
    /* "positive": every value positive, in [1, 2^31 - 1], INT_MAX among them: a min scan that
     * starts from 0 instead of INT_MAX is caught */
    DIST_POSITIVE,
    DIST_COUNT
} lab_dist;

/* Indexed by lab_dist; and the same names as one phrase for messages. */
#define LAB_DIST_NAMES {"small", "ones", "alt", "large", "random", "negative", "positive"}
#define LAB_DIST_NAMES_TEXT "small, ones, alt, large, random, negative, positive"

/* ---- the names of lab.h's enums scan_type and lab_shape, in their order; build modes */
#define LAB_SCAN_TYPE_NAMES {"inclusive", "exclusive"}
#define LAB_SHAPE_NAMES {"host", "whole", "tile"}
#define LAB_MODE_GPU "gpu"
#define LAB_MODE_CPU "cpu"

/* ---- the edge sizes every lab is tested and graded at (contract.json: edge_sizes) ---- */
#define LAB_DEFAULT_TILE ((size_t)1024) /* for a lab without a tile */
#define LAB_EDGE_FIXED {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 1009, 65521, 1000003}
/* 2^k - 1 and 2^k + 1 for each k */
#define LAB_EDGE_POW2_EXPONENTS {10, 12, 16, 20}

/* n = tiles * tile + plus: tile-1, tile, tile+1, 2tile-1, 2tile, 2tile+1, 3tile+5 */
typedef struct {
    size_t tiles;
    long plus;
} lab_tile_size;
#define LAB_EDGE_TILE_RELATIVE {{1, -1}, {1, 0}, {1, 1}, {2, -1}, {2, 0}, {2, 1}, {3, 5}}
#define LAB_EDGE_LARGE_N ((size_t)16777223) /* "large" */

#endif /* SCAN_CONTRACT_H */
/* clang-format on */
