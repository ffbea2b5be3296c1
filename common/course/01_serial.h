/* common/course/01_serial.h — lab 01's contract with the course: what labs/01_serial/scan.cu
 * defines.
 *
 * Owned by the course, like the lab's descriptor built from it (common/course/01_serial.c: `LAB`,
 * its id, variants and sizes). scan.cu includes this header and defines the entry point declared
 * below; the harness, the tests and the grader reach the student's code through the descriptor.
 */
#ifndef LABS_01_SERIAL_H
#define LABS_01_SERIAL_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Variant "serial": inclusive scan of in[0..n) into out[0..n) on the host; temp is unused. */
lab_result serial_scan(const int *in, int *out, size_t n, void *temp);

#ifdef __cplusplus
}
#endif

#endif /* LABS_01_SERIAL_H */
