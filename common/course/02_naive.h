/* common/course/02_naive.h — lab 02's contract with the course: what labs/02_naive/scan.cu defines.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/02_naive.c: `LAB`,
 * its id, variants and sizes). scan.cu includes this header and defines the entry point declared
 * below; the harness, the tests and the grader reach the student's code through the descriptor.
 */
#ifndef LABS_02_NAIVE_H
#define LABS_02_NAIVE_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Variant "naive": inclusive scan of d_in[0..n) into d_out[0..n) on the device; d_temp is
 * unused. */
lab_result naive_scan(const int *d_in, int *d_out, size_t n, void *d_temp);

#ifdef __cplusplus
}
#endif

#endif /* LABS_02_NAIVE_H */
