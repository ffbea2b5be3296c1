/* inputs.c — the input distributions and the CPU reference scan (see inputs.h). */
#include "inputs.h"
#include "gen.h"

#include <string.h>

static const char *const DIST_NAMES[DIST_COUNT] = LAB_DIST_NAMES;

const char *lab_dist_name(lab_dist d)
{
    return (d >= 0 && d < DIST_COUNT) ? DIST_NAMES[d] : "?";
}

int lab_dist_from_name(const char *name)
{
    for (int d = 0; d < DIST_COUNT; d++)
        if (strcmp(name, DIST_NAMES[d]) == 0)
            return d;
    return -1;
}

void lab_fill_input(int *in, size_t n, lab_dist d, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        in[i] = lab_input_value(seed, (int)d, i);
}

void lab_reference_scan(const int *in, int *out, size_t n, scan_type type)
{
    uint32_t acc = 0; /* unsigned: wraps modulo 2^32 without undefined behaviour */
    for (size_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)in[i];
        if (type == SCAN_EXCLUSIVE) {
            out[i] = (int)acc;
            acc += x;
        } else {
            acc += x;
            out[i] = (int)acc;
        }
    }
}
