/* hostmem.h — how much host memory the machine has and can still give (from /proc/meminfo), for
 * the harness's "not enough memory" refusal and CPU mode's cudaMemGetInfo. */
#ifndef SCAN_HOSTMEM_H
#define SCAN_HOSTMEM_H

#ifdef __cplusplus
extern "C" {
#endif

/* MemAvailable and MemTotal in bytes, each 0 when unknown. /proc/meminfo is opened by the first
 * call (before the sandbox of a graded run, which lets no file be opened) and read again from its
 * start by every later one. Returns 0, or -1 when nothing could be read. */
int lab_host_memory(double *available, double *total);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HOSTMEM_H */
