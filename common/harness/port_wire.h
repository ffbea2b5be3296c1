/* port_wire.h — the judge's channel as both ends write it (port.c: the judge, serve.c: the lab
 * process): one fixed-size request, one fixed-size reply naming it. Internal to the harness. */
#ifndef SCAN_HARNESS_PORT_WIRE_H
#define SCAN_HARNESS_PORT_WIRE_H

#include "profile_table.h"

#include <stddef.h>
#include <stdint.h>

#define PORT_MAGIC 0x4a554447u /* "JUDG" */
#define PORT_CHANNEL_FD 3      /* the lab process's end of the channel */
#define PORT_ARENA_FD 4        /* the shared arena (a memfd) */
/* Non-blocking reads, each after sched_yield, before a side sleeps in poll (about a second's
 * worth). Yielding, not sleeping: a sleeping side wakes late by a varying amount, which lands
 * inside the judge's timed window (measured: the reference against itself from 0.87 to 1.18);
 * yielding, not spinning: a spin without a yield would take a shared core from the process that
 * is working. A host lab's call is the exception (port.c: await_reply_spins): the grader runs its
 * judge and lab process on one core, and the judge sleeps through the call. */
#ifdef LAB_CPU_MODE /* it times no GPU lab, and a judge's spin would count as the case's CPU */
#define PORT_SPINS 8
#else
#define PORT_SPINS 1000000
#endif
/* The arena's size: sparse, so only the pages in use take memory (1 TiB of address space). */
#define LAB_ARENA_BYTES ((size_t)1 << 40)

enum {
    REQ_HELLO = 1, /* the lab process's first reply, unasked: value 1 when it is sandboxed */
    REQ_OPEN,      /* open buffer id: a CUDA IPC handle, or a mapping in the arena */
    REQ_CLOSE,     /* forget buffer id (the judge is about to free it) */
    REQ_TEMP,      /* value = variants[variant].temp_bytes(n) */
    REQ_CALL,      /* call variants[variant]'s entry point (kind) on the buffers named */
    REQ_NULL,      /* the calibration: no lab code; k = 1: one empty kernel, then synchronise */
    REQ_PROFILE,   /* CPU mode: the evidence of the algorithm of call 0 (counted: record) */
};

/* A pointer as the lab process names it: the buffer's id (0: NULL) and an offset into it. */
typedef struct {
    uint64_t id, offset;
} port_ref;

typedef struct {
    uint32_t magic, op;
    uint64_t seq;
    int32_t variant, k, kind, arena;
    int32_t squeeze; /* REQ_CALL: the SMs its kernels may use (0: all; lab_squeeze_begin) */
    int32_t record;  /* REQ_CALL, CPU mode: count the call's accesses for REQ_PROFILE */
    uint64_t n, n_rows;
    port_ref in, heads, out, sums, count, temp;
    uint64_t id, bytes, map_off, map_len, user_off; /* REQ_OPEN, REQ_CLOSE */
    /* REQ_OPEN of a device buffer on a GPU: its file descriptor comes with the request */
} port_request;

typedef struct {
    uint32_t magic, op;
    uint64_t seq;
    int32_t result;     /* REQ_CALL: what the lab returned; REQ_OPEN: 0 or -1 */
    int32_t cuda_error; /* REQ_CALL: a CUDA error of the lab's call (why says which), else 0 */
    int32_t reason;     /* REQ_CALL that returned LAB_NOT_IMPLEMENTED: a lab_why (contract.h) */
    uint64_t value;     /* REQ_TEMP: bytes; REQ_HELLO: 1 when sandboxed */
    uint64_t live_count, live_bytes; /* the lab's cudaMalloc buffers alive after the call */
    char why[2304]; /* NUL-terminated: a CUDA error's name and text, a "not implemented" reason */
    lab_algorithm_evidence evidence; /* REQ_PROFILE */
} port_reply;

#endif /* SCAN_HARNESS_PORT_WIRE_H */
