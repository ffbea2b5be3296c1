/* port.h — where the harness reaches the lab's code: every call of an entry point and every
 * temp_bytes question goes through here, in one of two ways.
 *
 *   local   (make run, make test, make bench): the lab's code is in this process; the port calls
 *           the variant's function pointer. Nothing is graded this way.
 *   judge   (scan's judge, `judge --judge LAB_BINARY`, every graded run): this process holds no
 *           lab code. It starts the lab's binary as a second process (`scan --serve`, serve.c),
 *           shares with it the buffers a call passes (CUDA IPC on a GPU; a memfd arena for host
 *           arrays and in CPU mode), and asks it, over one socket, to make one call and answer
 *           when it is over. Inputs, references, checks, the leak check's numbers, timings and the
 *           report all stay here, where the lab's code cannot address them.
 *
 * The lab process may answer only the fixed-size reply of the request it was sent (port.c:
 * lab_port_reply); anything else on the channel, or the process ending, is reported as what it
 * is (tampered, crashed, a sandbox refusal) and ends the run. Internal to the harness.
 */
#ifndef SCAN_HARNESS_PORT_H
#define SCAN_HARNESS_PORT_H

#include "rig.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One call of an entry point, whatever its kind (lab.h: lab_entry_kind). Pointers the kind does
 * not take are NULL. */
typedef struct {
    lab_entry_kind kind;
    const int *in;
    const int *heads; /* LAB_ENTRY_SEG */
    int *out;
    int *tile_sums; /* LAB_ENTRY_TILES */
    size_t *count;  /* LAB_ENTRY_COMPACT */
    void *temp;
    size_t n, n_rows; /* n_rows: LAB_ENTRY_CSR */
} lab_port_args;

/* 1 when this process is a judge (lab_port_judge_start succeeded). */
int lab_port_remote(void);

/* Call k of variant v with a's arguments; what the lab returned. In a judge, a lab process that
 * failed (crashed, tampered, a CUDA error in its call) ends this process with the report the
 * failure calls for (lab_port_fail): the call never returns then. */
lab_result lab_port_call(const lab_case *c, int k, const lab_port_args *a);

/* Call k of variant v here, in this process, guarded (call.h), with its kernels kept to squeeze
 * of the GPU's SMs when squeeze > 0 (lab_squeeze_begin): the lab process's side of a call. */
lab_result lab_port_call_local(const lab_variant *v, int k, const lab_port_args *a, int squeeze);

/* --algorithm, after a run's calls, CPU mode: which of the course's algorithms call 0 was, in
 * r's alg_* fields. The evidence is counted where the lab's code ran (a judge asks its lab process
 * for it, refuses numbers no profile can give as tampering, and classifies them itself); a lab
 * that rewrites its own counts can claim an algorithm, nothing more. Nothing outside CPU mode. */
void lab_port_algorithm(const lab_variant *v, lab_report *r);

/* v->temp_bytes(n) (0 when the variant has none), asked where the lab's code is. */
size_t lab_port_temp_bytes(const lab_variant *v, size_t n);

/* The lab's live cudaMalloc allocations (count and bytes) as the leak check counts them. In a
 * judge, the count the lab process sent with its last answer: the one number the judge takes
 * from it (a lab that rewrites it can hide a leak of its own, nothing more). */
void lab_port_live(size_t *count, size_t *bytes);

/* Buffers the lab's code is handed. A judge shares them with the lab process: on a GPU as CUDA
 * IPC allocations (lab_port_malloc is cudaMalloc, each buffer exported when first passed), in CPU
 * mode and for host arrays from the shared arena (a memfd both processes map). Locally these are
 * cudaMalloc and lab_host_alloc. Kept (call.h) where the harness keeps buffers. Never used for
 * what only the harness reads (references, seeds, the check's temp): those stay private. */
int lab_port_malloc(void **p, size_t bytes, lab_report *r, const char *what);
void lab_port_free(void *p);
/* The lab process forgets the shared buffer p, if it has it (before p is freed). */
void lab_port_forget(void *p);
/* --new-buffers: a judge on a GPU moves the device buffers it keeps between runs to newly
 * allocated memory (vmm.c: lab_vmm_renew), so that this run's arrays land somewhere else, as a
 * new process's would. Nothing elsewhere (host arrays, CPU mode, a local run). */
void lab_port_renew(void);
void *lab_port_host_alloc(size_t bytes);
void lab_port_host_free(void *p);

/* The judge's side: starts the lab process from binary (argv0 for it), dropping to uid/gid when
 * they are not -1 (the grader is root), wrap (NULL or a command, e.g. compute-sanitizer and its
 * options, split on spaces) put in front of it. Returns 0, or -1 with the reason in why. */
int lab_port_judge_start(const char *binary, long uid, long gid, const char *wrap, char *why,
                         size_t whylen);

/* The judge's end of its input: tells the lab process to end and waits for it; its exit code
 * (when the run's, rc, is 0) or its signal becomes the judge's. Returns the exit code. rc as is
 * in a process that is not a judge. */
int lab_port_judge_finish(int rc);

/* The lab process's side: `scan --serve CHANNEL_FD ARENA_FD` (serve.c). Returns the exit code. */
int lab_port_serve(int channel_fd, int arena_fd);

/* The most bytes the lab process may write to a file (its stdout and stderr, the grader's
 * files): its RLIMIT_FSIZE, set before lab_port_judge_start; 0: no limit. */
void lab_port_set_output_cap(long long bytes);

/* The judge's channel's own cost per timed call, in milliseconds, measured when the lab process
 * started, before any of the lab's code ran (port.c: calibrate): device 1, by events around an
 * empty kernel in the lab process; 0, by the host's clock around a call of nothing. 0 in a
 * process that is not a judge. */
double lab_port_overhead_ms(int device);

/* One null call's cost now, timed as lab_port_overhead_ms's calls were (0 where not a judge).
 * A timed run makes one after each timed call and takes the smaller of their median and
 * lab_port_overhead_ms off the call's times (case.c: timings_finish): the channel's cost as it
 * is while the run is timed (the GPU's clocks, the two processes' CPUs), never more than it was
 * before the lab's code could slow it down. */
double lab_port_channel_ms(int device);

/* The "not implemented" message the lab process gave with its last answer (once), its reason
 * (contract.h: lab_why) in *reason, or NULL. */
const char *lab_port_why(int *reason);

/* 1 when the lab process said it entered its sandbox. */
int lab_port_sandboxed(void);

/* A case that failed: the report is printed by the session (session.c installs it), then the
 * process ends with code. Used by the port when the lab process fails mid-call. */
extern void (*lab_port_fail_hook)(lab_status st, const char *msg, int exit_code);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_PORT_H */
