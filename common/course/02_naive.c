/* common/course/02_naive.c — lab 02's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 02_naive.h).
 */
#include "course/02_naive.h"

static const lab_variant VARIANTS[] = {
    {.name = "naive",
     .summary = "thread i sums in[0..i] by itself: O(n^2) work",
     .fn.scan = naive_scan},
};

const lab_info LAB = {
    .id = "02_naive",
    .title = "Naive parallel scan",
    .shape = LAB_WHOLE,
    .type = SCAN_INCLUSIVE,
    .tile = 0,                  /* no tiles */
    .max_n = (size_t)1 << 20,   /* practical limit: 2^20 elements is ~5.5e11 loads */
    .bench_n = (size_t)1 << 16, /* benchmark n */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
