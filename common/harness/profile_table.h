/* profile_table.h — the algorithm profile of a lab's first call as `make run LAB=NN CPU=1` prints
 * it, after the bank and sector tables (profile_table.c; CPU mode only: the counts come from CPU
 * mode's runtime, common/cpu/profile.cpp). */
#ifndef SCAN_HARNESS_PROFILE_TABLE_H
#define SCAN_HARNESS_PROFILE_TABLE_H

#include "report.h"

#include <stdio.h>

/* The table of r's call 1 on f; nothing outside CPU mode, or when the lab is not written. */
void lab_print_profile(FILE *f, const lab_report *r);

#endif /* SCAN_HARNESS_PROFILE_TABLE_H */
