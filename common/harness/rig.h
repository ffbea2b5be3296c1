/* rig.h — one kind of call, as the harness's one call loop (case.c) drives it.
 *
 * A rig owns the buffers of a case and knows, for its kind of lab, how to make call k's input,
 * call the lab's entry point, check the call and time a copy of the same bytes. Everything else
 * is the loop's, the same for every kind: the refusals, the CPU reference, the sandbox, `calls`
 * checked calls then `warmup` + `reps` timed ones, the "not implemented" message, the leak
 * check, the timings and the report:
 *
 *     alloc(cap)  [warm]  sandbox  for k: prepare(k) -> invoke(k) -> check(k) -> [copy_ms]  free
 *
 * The rigs: rig_host.c (host arrays: lab 01), rig_scan.c (a whole or tile scan on the device:
 * labs 02-08, and lab 09's int + variant), rig_ops.c (any other operator or an application of a
 * scan: labs 09-10). A new kind of lab is one rig file plus its line in case.c's list.
 * Internal to the harness (common/harness/).
 */
#ifndef SCAN_HARNESS_RIG_H
#define SCAN_HARNESS_RIG_H

#include "call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The case's own input and its CPU reference at the largest n of the run (inputs are
 * prefix-consistent, so every call's n is a prefix of them). */
typedef struct {
    int *in, *ref;
} lab_host_case;

/* What every call of a case reads. first: call 0's input and CPU reference, made by the loop
 * when the rig's `reference` asks for it, else NULL. */
typedef struct {
    const lab_info *lab;
    const lab_variant *v;
    const lab_options *o;
    const lab_host_case *first;
} lab_case;

/* The times of one call, in milliseconds: the lab's call, and a tile lab's tile pass alone (0
 * for other labs). */
typedef struct {
    double scan, tile;
} lab_call_ms;

/* When the loop makes the CPU reference (lab_case.first). */
typedef enum {
    LAB_REF_NEVER,   /* the rig checks every call its own way */
    LAB_REF_UNTIMED, /* untimed runs only: call 0 is checked against it */
    LAB_REF_ALWAYS,  /* every run: every call is checked against it */
} lab_rig_ref;

/* The functions take the rig's state (`size` bytes, zero-filled by the loop) as `self`. */
typedef struct {
    size_t size;
    lab_rig_ref reference;
    /* 1 when this rig runs variant v of lab (the loop asks the rigs in the order of its list) */
    int (*accepts)(const lab_info *lab, const lab_variant *v);
    /* buffers for calls of up to cap elements (and r->device); -1 with r's status and message
     * set when they cannot be had (free is called either way) */
    int (*alloc)(void *self, const lab_case *c, size_t cap, lab_report *r);
    /* optional: run before the sandbox, so that what the harness's own device code needs is
     * loaded while loading is allowed */
    void (*warm)(void *self, const lab_case *c);
    /* call k's input at n, guards, poison, scratch, a cold cache; returns with the device idle */
    void (*prepare)(void *self, const lab_case *c, int k, size_t n);
    /* the lab's call, to its end on every stream; its times into *ms when ms is not NULL (a
     * timed call). Returns what the lab returned. */
    lab_result (*invoke)(void *self, const lab_case *c, int k, size_t n, lab_call_ms *ms);
    /* checks call k: r's status and message from the first thing wrong; returns r->status */
    lab_status (*check)(void *self, const lab_case *c, int k, size_t n, lab_report *r);
    /* the copy baseline: milliseconds of a copy of the call's n input elements to its output,
     * timed as invoke times the lab (after the call was checked) */
    double (*copy_ms)(void *self, const lab_case *c, size_t n);
    void (*free)(void *self);
} lab_rig;

extern const lab_rig lab_rig_host; /* rig_host.c */
extern const lab_rig lab_rig_scan; /* rig_scan.c */
extern const lab_rig lab_rig_ops;  /* rig_ops.c */

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_RIG_H */
