/* common/labs/01_serial.c — lab 01's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from: the variants point at
 * the entry points scan.cu defines (declared in 01_serial.h).
 */
#include "labs/01_serial.h"

static const lab_variant VARIANTS[] = {
    {"serial", "one running total, one pass over the array", serial_scan, NULL, NULL, LAB_OP_ADD,
     NULL, NULL, NULL},
};

const lab_info LAB = {
    "01_serial",
    "Serial CPU scan",
    LAB_HOST,
    SCAN_INCLUSIVE,
    0,               /* no tiles */
    0,               /* any n that fits in memory */
    (size_t)1 << 26, /* benchmark n: 64 Mi elements */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
