/* sandbox.h — the seccomp filter a graded run enters just before the lab's code first runs.
 *
 * After CUDA is initialised and the harness's buffers exist, the process may only make the system
 * calls a CUDA program needs to compute (sandbox.c lists them and says why): no new processes,
 * no exec, no new sessions or process groups, no signals to other processes, no ptrace, no
 * executable memory, no file opened for writing. Any other system call stops the process at once:
 * one line on stderr naming the call, exit code LAB_EXIT_SANDBOX. The filter holds for every
 * thread and cannot be lifted.
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

#ifdef __cplusplus
}
#endif

#endif /* SCAN_SANDBOX_H */
