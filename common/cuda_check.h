/* cuda_check.h — error checks for CUDA calls and kernel launches.
 *
 * CUDA_CHECK(call)  runs call; if it does not return cudaSuccess, prints
 *                   "file:line: CUDA error in 'call': <message> (<name>)" to stderr and ends the
 *                   process with LAB_EXIT_CUDA_ERROR. It never returns to the caller on failure.
 * LAUNCH_CHECK()    put after every kernel launch. It catches launch-configuration errors; built
 *                   with `make DEBUG=1` it also synchronises, so an asynchronous fault (an illegal
 *                   address, say) is reported at the launch that caused it, not at a later call.
 *
 * Usable from C and CUDA/C++.
 */
#ifndef SCAN_CUDA_CHECK_H
#define SCAN_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reports a failed CUDA call and exits with LAB_EXIT_CUDA_ERROR (common/cuda_check.c). */
#if defined(__cplusplus)
[[noreturn]]
#else
_Noreturn
#endif
void lab_cuda_fail(const char *file, int line, const char *expr, cudaError_t err);

/* Called by lab_cuda_fail before it exits, when set: the harness uses it to still print its
 * one-line (or JSON) result with status "cuda_error". */
extern void (*lab_cuda_fail_hook)(const char *what, cudaError_t err);

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t cuda_check_err_ = (call);                                                      \
        if (cuda_check_err_ != cudaSuccess)                                                        \
            lab_cuda_fail(__FILE__, __LINE__, #call, cuda_check_err_);                             \
    } while (0)

#ifdef LAB_DEBUG_SYNC
#define LAUNCH_CHECK()                                                                             \
    do {                                                                                           \
        CUDA_CHECK(cudaGetLastError());                                                            \
        CUDA_CHECK(cudaDeviceSynchronize());                                                       \
    } while (0)
#else
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())
#endif

/* Number of blocks of size b that cover n items. */
#define CEIL_DIV(n, b) (((n) + (b)-1) / (b))

#endif /* SCAN_CUDA_CHECK_H */
