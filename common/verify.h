/* verify.h — the harness's trusted device code around each call of a lab: fresh inputs, guard
 * words and poison written on the GPU, and the output checked on the GPU, element by element
 * against the input regenerated from its seed (no reference scan is needed: verify.cu). With these,
 * every call of a timed run scans a new input and is validated, at device speed, so a lab cannot
 * replay an old answer or idle on the calls it guesses are timed.
 *
 * Buffers: `front` guard words, n data words, `back` guard words, all in one allocation.
 */
#ifndef SCAN_VERIFY_H
#define SCAN_VERIFY_H

#include "lab.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills base[0..front) and base[front+n..front+n+back) with canary words and base[front+i] with
 * input element i of distribution dist (a lab_dist). The seed is kept on the device at d_seed:
 * seed itself, or with secret set, seed mixed with the GPU's clocks, a value no host memory
 * holds, so the lab's host code cannot recreate the input (only read it on the GPU).
 * Asynchronous, default stream. */
void lab_gen_input(int *d_base, size_t front, size_t n, size_t back, int dist, uint64_t seed,
                   int secret, uint64_t *d_seed);

/* Canary words around the output and LAB_POISON in its n data words. Asynchronous. */
void lab_prep_output(int *d_base, size_t front, size_t n, size_t back);

/* Bytes of device scratch lab_verify_call needs at n elements. */
size_t lab_verify_temp_bytes(size_t n);

/* What the check of one call found (lab_verify_call on the GPU, the harness's own check on the
 * host): each field the first bad index, or -1 when none; expected and got belong to the first
 * field set, in the order of the fields (the order the harness reports them in). */
typedef struct {
    long long
        out_front;      /* front guard word of the output, counted back from out[0] (1 = out[-1]) */
    long long out_back; /* back guard word k: out[n + k] */
    long long in_guard; /* guard word around the input (index in the front guard, or n + k) */
    long long in;       /* input element that no longer holds what was generated */
    long long out;      /* first wrong output element */
    long long sum;      /* first wrong tile total (tile labs) */
    /* values at the first bad index, for the message */
    long long expected, got;
} lab_call_verdict;

/* Checks one call on the GPU: the input (seed at d_seed) and its guards still hold what
 * lab_gen_input wrote,
 * the output guards are intact, out[0..n) is the scan of the input (type), and, when
 * d_sums is not NULL, d_sums[t] is the total of tile t (tiles of `tile` elements). d_temp holds
 * lab_verify_temp_bytes(n) bytes. Synchronises; returns 0 when everything is right, 1 if not. */
int lab_verify_call(const int *d_in_base, const int *d_out_base, size_t front_in, size_t front_out,
                    size_t n, size_t back_in, size_t back_out, int dist, const uint64_t *d_seed,
                    scan_type type, const int *d_sums, size_t tile, void *d_temp,
                    lab_call_verdict *v);

/* Lab 10's sort and compaction (is_sort: LAB_OP_SORT, else LAB_OP_COMPACT) checked on the GPU:
 * the input (seed at d_seed, lab_gen_input's) and its guards unchanged, the output's guards
 * intact, and the output right: for the sort, ascending as unsigned with the same multiset of
 * keys (lab_sort_matches's hash sums); for the compaction, *d_count the number of kept elements
 * (APPS_KEEP), out[j] the j-th of them and out[count..n) still LAB_POISON. Pass or fail only:
 * on a failure the harness reads the call back and its host check says what is wrong. d_temp
 * holds lab_verify_temp_bytes(n) bytes. Synchronises; returns 0 when right, 1 if not. */
int lab_verify_app(int is_sort, const int *d_in_base, const int *d_out_base, size_t front_in,
                   size_t front_out, size_t n, size_t back_in, size_t back_out, int dist,
                   const uint64_t *d_seed, const size_t *d_count, void *d_temp);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_VERIFY_H */
