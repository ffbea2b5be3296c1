/* common/course/01_serial.c — lab 01's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 01_serial.h).
 */
#include "course/01_serial.h"

static const lab_variant VARIANTS[] = {
    {.name = "serial",
     .summary = "one running total, one pass over the array",
     .fn.scan = serial_scan},
};

const lab_info LAB = {
    .id = "01_serial",
    .title = "Serial CPU scan",
    .shape = LAB_HOST,
    .type = SCAN_INCLUSIVE,
    .tile = 0,                  /* no tiles */
    .max_n = 0,                 /* any n that fits in memory */
    .bench_n = (size_t)1 << 26, /* benchmark n: 64 Mi elements */
    .n_variants = sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    .variants = VARIANTS,
};
