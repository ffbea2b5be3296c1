/* verdict.h — what a checked call found, as the report says it (verdict.c): the checks made on the
 * host (guards, input, output against the CPU reference, tile totals) and the one place that
 * turns a verdict, the host's or the GPU's (verify.cu), into a status and a message.
 * Internal to the harness (common/harness/).
 */
#ifndef SCAN_HARNESS_VERDICT_H
#define SCAN_HARNESS_VERDICT_H

#include "call.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the first wrong element out[bad] of a whole scan at n lies among the lab's work tiles
 * (lab_work_tiles: labs 07-09, which scan in one tile size), written into buf: "; tile 1 of 301
 * (6144 elements each) is the first wrong one, from its first element: the prefix carried into
 * it is wrong" or "...; element 17 of tile 3 of 301 ...". "" for a tile lab, a lab with no or
 * several work tiles, or n within one tile. Returns buf. */
const char *lab_tile_place(const lab_info *lab, size_t bad, size_t n, char *buf, size_t len);

/* Sets r's status, message and mismatch from a verdict (of the host's check or the GPU's) of a
 * call at n. Returns r->status (ST_OK when the verdict found nothing). */
lab_status lab_report_verdict(const lab_info *lab, const lab_call_verdict *v, size_t n,
                              lab_report *r);

/* Checks guards, input and output (all on the host) of a call whose input was h_in + c (c = 0:
 * h_in itself; every element c more, wrapping) and whose answer is therefore h_ref shifted
 * accordingly; in_base and out_base are the guarded buffers laid out as li and lo. Reports the
 * first thing wrong through lab_report_verdict, as the GPU's check does. */
lab_status lab_validate(const lab_info *lab, const int *h_in, const int *h_ref, unsigned c,
                        const int *in_base, lab_layout li, const int *out_base, lab_layout lo,
                        lab_report *r);

/* Tile labs: sums[t] must be the total of tile t of h_in[0..n), the last, ragged tile too. */
lab_status lab_validate_sums(const lab_info *lab, const int *h_in, size_t n, const int *sums,
                             lab_report *r);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_VERDICT_H */
