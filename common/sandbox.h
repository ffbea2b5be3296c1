/* sandbox.h — the seccomp filter a graded run enters just before the lab's code first runs.
 *
 * After CUDA is initialised and the harness's buffers exist, the process may only make the system
 * calls a CUDA program needs to compute (sandbox.c lists them and says why): no new processes,
 * no exec, no new sessions or process groups, no signals to other processes, no ptrace, no
 * executable memory, no file opened where the runtime was measured to open none (CPU mode: none
 * at all; the message names the call and the path), never one for writing. Any other system call
 * stops the process at once: one line on stderr naming the call, exit code LAB_EXIT_SANDBOX. The
 * filter holds for every thread and cannot be lifted.
 */
#ifndef SCAN_SANDBOX_H
#define SCAN_SANDBOX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enters the sandbox; under_tool: the process runs under compute-sanitizer, whose own code in
 * the process needs more calls (sandbox.c). Returns 0, or -1 with the reason in why (built
 * without libseccomp, or the kernel refused the filter). */
int lab_sandbox_enter(int under_tool, char *why, size_t whylen);

/* Measuring (LAB_SANDBOX_TRACE_OPEN=1, grader/tools/measure_opens.py): before lab_sandbox_enter,
 * on != 0 makes every open-family call after the filter print its call and path on stderr
 * ("harness: sandbox-trace: openat /path flags=0x0") and go on (read-only ones are made). */
void lab_sandbox_trace_opens(int on);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_SANDBOX_H */
