/* common/labs/09_operators.c — lab 09's descriptor, owned by the course (see lab.h for the fields).
 *
 * Linked into every binary of the lab, whichever scan.cu it is built from. One generic scan, five
 * operators: each variant says what it computes (op), so the harness makes its inputs and checks
 * it against the right reference (common/ops.c).
 */
#include "labs/09_operators.h"

/* The tile of the course's generic scan (09_operators.h; lab.h). */
size_t lab_work_tiles(size_t *tiles, size_t max)
{
    size_t k = 0;
    if (k < max)
        tiles[k++] = OPS_TILE;
    return k;
}

static const lab_variant VARIANTS[] = {
    {"add", "int +, wrapping: the generic scan with lab 01's operator", ops_scan_add, NULL,
     ops_temp_bytes, LAB_OP_ADD, NULL, NULL, NULL},
    {"max", "int max: a running maximum", ops_scan_max, NULL, ops_temp_bytes, LAB_OP_MAX, NULL,
     NULL, NULL},
    {"min", "int min: a running minimum", ops_scan_min, NULL, ops_temp_bytes, LAB_OP_MIN, NULL,
     NULL, NULL},
    {"fadd", "float +: within the rounding bound of any order", ops_scan_fadd, NULL, ops_temp_bytes,
     LAB_OP_FADD, NULL, NULL, NULL},
    {"segmented", "int +, restarting at every segment head ((flag, value) operator)", NULL, NULL,
     ops_temp_bytes, LAB_OP_SEG_ADD, ops_scan_segmented, NULL, NULL},
};

const lab_info LAB = {
    "09_operators",
    "Any operator: max, min, float +, segmented",
    LAB_WHOLE,
    SCAN_INCLUSIVE,
    0,               /* no tiles visible to the harness */
    0,               /* no size limit */
    (size_t)1 << 26, /* benchmark n */
    sizeof(VARIANTS) / sizeof(VARIANTS[0]),
    VARIANTS,
};
