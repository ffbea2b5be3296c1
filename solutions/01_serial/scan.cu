/* 01_serial — the CPU scan every speedup in this course is measured against.
 *
 * One loop, one running total: out[i] = in[0] + ... + in[i]. n - 1 additions, n - 1 steps, and no
 * parallelism at all: step i needs the result of step i - 1. The later labs break that chain.
 * Sums wrap modulo 2^32, as int32 additions do on the GPU (the loop adds as unsigned so C's
 * rule against signed overflow never applies).
 *
 * Run: make run LAB=01      Test: make test TEST_SRC=labs LAB=01      Grade: make grade
 */
#include "course/01_serial.h"

/* ---- the scan ---------------------------------------------------------- */

/* Inclusive scan of in[0..n) into out[0..n) on the host. temp is unused. */
lab_result serial_scan(const int *in, int *out, size_t n, void *temp)
{
    (void)temp;
    unsigned running = 0;
    for (size_t i = 0; i < n; i++) {
        running += (unsigned)in[i];
        out[i] = (int)running;
    }
    return LAB_OK;
}
