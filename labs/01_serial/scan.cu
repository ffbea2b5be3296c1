/* 01_serial — the CPU scan every speedup in this course is measured against.
 *
 * One loop, one running total: out[i] = in[0] + ... + in[i]. n - 1 additions, n - 1 steps, and no
 * parallelism at all: step i needs the result of step i - 1. The later labs break that chain.
 * Sums wrap modulo 2^32, as int32 additions do on the GPU (the loop adds as unsigned so C's
 * rule against signed overflow never applies).
 *
 * Run: make run LAB=01      Test: make test TEST_SRC=labs LAB=01      Grade: make grade
 */
#include "labs/01_serial.h"

/* ---- the scan ---------------------------------------------------------- */

/* Inclusive scan of in[0..n) into out[0..n) on the host. temp is unused. */
lab_result serial_scan(const int *in, int *out, size_t n, void *temp)
{
    (void)temp;
    // TODO(student): keep a running total (as unsigned, so overflow wraps) and store it into
    // out[i] after adding in[i]; then delete the two lines below.
    (void)in;
    (void)out;
    (void)n;
    return LAB_NOT_IMPLEMENTED;
}
