/* call.h — what every kind of call shares (call.c): the guarded buffer layout, the report's
 * message, clocks, allocations that report instead of exiting, the L2 flush and the copy
 * baseline of device calls, the one "not implemented" message, and CPU mode's bank counting
 * around the lab's call. Internal to the harness (common/harness/): no lab code includes it.
 *
 * Every name here starts with lab_, a prefix the grader refuses in a lab's code, so no lab can
 * define one of them and replace the harness's.
 */
#ifndef SCAN_HARNESS_CALL_H
#define SCAN_HARNESS_CALL_H

#include "harness.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The mode a report names: this build's (contract.h). */
#ifdef LAB_CPU_MODE
#define LAB_MODE_NAME LAB_MODE_CPU
#else
#define LAB_MODE_NAME LAB_MODE_GPU
#endif

/* One guarded buffer: `front` canary words, n data words, `back` canary words. */
typedef struct {
    size_t front, n, back;
} lab_layout;

/* Words of one guarded buffer for up to cap elements at any offset. */
size_t lab_layout_words(size_t cap);

/* The layout of n elements at offset (0..LAB_MAX_OFFSET words) in a buffer sized for cap. */
lab_layout lab_make_layout(size_t cap, size_t n, int offset);

/* Canary words around data[0..l.n) of a guarded host buffer laid out as l. */
void lab_guard_host(int *base, lab_layout l);

/* Sets r->message, printf-style. */
void lab_report_msg(lab_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The monotonic clock in milliseconds. */
double lab_now_ms(void);

/* Host memory for a large array (huge pages where offered); never NULL for a size of 0. */
void *lab_host_alloc(size_t bytes);

/* cudaMalloc that reports an out-of-memory as ST_NO_MEMORY (what: the buffer, for the message)
 * and returns -1 instead of exiting; any other failure exits through CUDA_CHECK. */
int lab_try_malloc(void **p, size_t bytes, lab_report *r, const char *what);

/* Device buffers the process keeps from case to case. A graded process runs hundreds of cases;
 * a cudaMalloc and cudaFree of each case's buffers (and its events, and a query of the device for
 * each report) call into the driver, which waits there while any process on the machine, on any
 * GPU, creates its CUDA context: measured on two H200s, 8 processes of cases on GPU 0 took 2.9 ms
 * a case alone and 40.8 ms beside a stream of process starts on GPU 1, and 2.7 ms when they kept
 * their buffers and events (without it four GPUs graded a class only 1.9 times as fast as one).
 *
 * lab_kept_malloc gives a buffer of at least `bytes`: the smallest kept buffer not in use that is
 * large enough, else a new one in place of the largest kept one that is too small (so the process
 * keeps about one buffer per role, each as large as the largest case has needed). It reports an
 * out-of-memory as lab_try_malloc does, after freeing the kept buffers not in use and trying
 * once more. lab_kept_free returns a buffer to the kept ones. Nothing is kept under
 * compute-sanitizer, whose memcheck must see each case's buffers at their own sizes, nor in CPU
 * mode, whose cudaMalloc puts each buffer against a guard page (an access past its end faults at
 * once) and whose driver has no such lock: there lab_kept_malloc is lab_try_malloc and
 * lab_kept_free is cudaFree, as before. lab_kept_enable(1) keeps them anyway (the tests of this
 * logic, which run in CPU mode), lab_kept_enable(0) never; so does LAB_KEEP_BUFFERS=1 or 0 in the
 * environment of the process's first case. */
int lab_kept_malloc(void **p, size_t bytes, lab_report *r, const char *what);

/* One kept buffer (this policy's and vmm.c's): where it is, its bytes, whether a case holds it. */
typedef struct {
    void *p;
    size_t bytes;
    int busy;
} lab_kept_slot;

/* The kept policy: among the count slots not in use, the smallest buffer of at least bytes (its
 * index), else -1 with *replace the slot a new buffer takes: the largest buffer too small, else
 * an empty slot, else -1 (every slot in use). */
int lab_kept_pick(const lab_kept_slot *slots, int count, size_t bytes, int *replace);
void lab_kept_free(void *p);
void lab_kept_enable(int on);

/* Bytes of kept buffers not in use now (device memory a case can have without a cudaMalloc). */
size_t lab_kept_spare(void);

/* The process's events for a case's calls (LAB_CASE_EVENTS of them), created at the first call. */
#define LAB_CASE_EVENTS 3
cudaEvent_t *lab_case_events(void);

/* 1 when the process runs under compute-sanitizer (its injection names itself in the
 * environment), decided at the first call (before the sandbox empties the environment). */
int lab_under_tool(void);

/* Milliseconds between two recorded events. */
double lab_event_ms(cudaEvent_t a, cudaEvent_t b);

/* The name of device 0, for the report (one static buffer, asked once). */
const char *lab_device_name(void);

/* Bytes of the buffer written before each device call so that no call starts with a warm L2:
 * twice the L2 cache. */
size_t lab_flush_bytes(void);

/* The process's flush buffer of lab_flush_bytes() bytes (its size in *bytes), allocated for the
 * first timed run (a run of checked calls only has none: nothing of it is timed) and kept until the
 * process ends: a graded process runs hundreds of cases, and a buffer this size allocated and freed
 * for each costs the driver time under a lock that every GPU of the machine shares. NULL, with r's
 * status ST_NO_MEMORY, when it cannot be allocated. */
void *lab_flush_buffer(size_t *bytes, lab_report *r);

/* The copy baseline of a device call: n elements from d_src to d_dst after a cold L2 (d_flush,
 * flush_bytes), timed like the lab's call (events around the copy and a cudaDeviceSynchronize). */
double lab_time_copy(int *d_dst, const int *d_src, size_t n, void *d_flush, size_t flush_bytes,
                     cudaEvent_t ev[2]);

/* A call that returned LAB_NOT_IMPLEMENTED: the status and its message, the descriptor's own
 * (lab.h: lab_not_implemented_why) when it has one. Returns r->status. */
lab_status lab_not_implemented(const lab_variant *v, lab_report *r);

/* CPU mode counts the shared-memory bank conflicts of the lab's first call and prints them after
 * the result line (common/cpu/banks.cpp): 1, set by the session (not in a graded run); 2, the
 * algorithm's profile alone (--algorithm: lab_port_algorithm), in a graded run too. */
extern int lab_harness_banks;

/* Around the lab's own call k (not the harness's kernels), in CPU mode only, for call 0: bank
 * counting on when lab_harness_banks is set, and device memory closed to host code (as on a GPU,
 * where host code cannot read it: common/cpu/memory.cpp); then both off. */
void lab_code_begin(int k);
void lab_code_end(void);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_CALL_H */
