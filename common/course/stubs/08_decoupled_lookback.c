/* common/course/stubs/08_decoupled_lookback.c — lab 08's entry points, not written: what the grader
 * links into a lab 10 binary when the submission's lab 08 did not build or was refused (Makefile:
 * lab-binary, LAB_BASES), so that lab 10 still runs, on lab 07's scan. */
#include "course/08_decoupled_lookback.h"

lab_result lookback_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    (void)d_in, (void)d_out, (void)n, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}

size_t lookback_temp_bytes(size_t n)
{
    (void)n;
    return 0;
}
