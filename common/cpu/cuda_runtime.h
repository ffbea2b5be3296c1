/* cuda_runtime.h (CPU mode) — what nvcc makes available to every .cu file, for the host compiler:
 * the runtime API (cuda_runtime_api.h) and, in C++, the device side (lab_cpu.h).
 * rewrite.py puts `#include "cuda_runtime.h"` at the top of each rewritten .cu file.
 */
#ifndef LAB_CPU_CUDA_RUNTIME_H
#define LAB_CPU_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"
#ifdef __cplusplus
#include "lab_cpu.h"
#endif

#endif /* LAB_CPU_CUDA_RUNTIME_H */
