/* common/course/stubs/07_hierarchical.c — lab 07's entry points lab 10 calls, not written: what the
 * grader links into a lab 10 binary when the submission's lab 07 did not build or was refused
 * (Makefile: lab-binary, LAB_BASES). */
#include "course/07_hierarchical.h"

lab_result scan_then_propagate(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    (void)d_in, (void)d_out, (void)n, (void)d_temp;
    return LAB_NOT_IMPLEMENTED;
}

size_t hier_temp_bytes(size_t n)
{
    (void)n;
    return 0;
}
