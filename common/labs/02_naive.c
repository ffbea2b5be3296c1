/* common/labs/02_naive.c — lab 02's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 02_naive.h).
 */
#include "labs/02_naive.h"

static const lab_variant VARIANTS[] = {
    {"naive", "thread i sums in[0..i] by itself: O(n^2) work", naive_scan, NULL, NULL, LAB_OP_ADD,
     NULL, NULL, NULL},
};

const lab_info LAB = {
    "02_naive",
    "Naive parallel scan",
    LAB_WHOLE,
    SCAN_INCLUSIVE,
    0,               /* no tiles */
    (size_t)1 << 20, /* practical limit: 2^20 elements is ~5.5e11 loads */
    (size_t)1 << 16, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
