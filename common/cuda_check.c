/* cuda_check.c — the one place a failed CUDA call is reported (see cuda_check.h). */
#include "cuda_check.h"
#include "contract.h"

#include <stdio.h>
#include <stdlib.h>

void (*lab_cuda_fail_hook)(const char *what, cudaError_t err) = NULL;

void lab_cuda_fail(const char *file, int line, const char *expr, cudaError_t err)
{
    fprintf(stderr, "%s:%d: CUDA error in '%s': %s (%s)\n", file, line, expr,
            cudaGetErrorString(err), cudaGetErrorName(err));
    if (lab_cuda_fail_hook) {
        void (*hook)(const char *, cudaError_t) = lab_cuda_fail_hook;
        lab_cuda_fail_hook = NULL; /* a failing call inside the hook must not recurse */
        hook(expr, err);
    }
    exit(LAB_EXIT_CUDA_ERROR);
}
