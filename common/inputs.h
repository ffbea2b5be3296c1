/* inputs.h — what a lab scans and what it must produce: the input distributions and the CPU
 * reference scan. Pure C, no CUDA, so the tests exercise it on any machine.
 */
#ifndef SCAN_INPUTS_H
#define SCAN_INPUTS_H

#include "contract.h" /* lab_dist, LAB_DIST_NAMES */
#include "lab.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name of distribution d ("small", ...), or "?" for a value out of range. */
const char *lab_dist_name(lab_dist d);
/* Returns the distribution called name, or -1. */
int lab_dist_from_name(const char *name);

/* Fills in[0..n) with distribution d under seed (gen.h: element i depends on seed and i alone). */
void lab_fill_input(int *in, size_t n, lab_dist d, uint64_t seed);

/* The CPU reference: scan in[0..n) into out[0..n), wrapping modulo 2^32. */
void lab_reference_scan(const int *in, int *out, size_t n, scan_type type);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_INPUTS_H */
