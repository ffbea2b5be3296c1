/* corpus.h — the lab boilerplate of CPU mode's corpus of valid CUDA (tests/cpu_corpus/NAME.cu).
 *
 * Each NAME.cu is a correct tile scan (one block of CORPUS_TILE threads per tile, inclusive, the
 * tile's total to tile_sums) written in one form that nvcc accepts: a runtime call's default
 * arguments, a kernel template deduced at the launch, a lambda, a macro around the launch, a
 * byte-order mark, CRLF line ends... It defines corpus_scan_tiles (the launcher) and includes this
 * file last, which wraps it as a LAB_TILE lab the harness runs. tests/test_cpu_mode.py checks that
 * each one builds and passes in CPU mode, and compiles with nvcc where nvcc is installed.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include "lab.h"
#include "cuda_check.h"

static const lab_variant VARIANTS[] = {
    {.name = "corpus",
     .summary = CORPUS_SUMMARY,
     .op = LAB_OP_ADD,
     .fn = {.tiles = corpus_scan_tiles},
     .temp_bytes = NULL,
     .compare = 0,
     .algorithm = LAB_ALG_ANY},
};

extern "C" const lab_info LAB = {
    CORPUS_ID,       CORPUS_SUMMARY,
    LAB_TILE,        SCAN_INCLUSIVE,
    CORPUS_TILE,     0,
    (size_t)1 << 16, sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,        0, /* cpu_n: the default */
};

#endif /* CORPUS_H */
