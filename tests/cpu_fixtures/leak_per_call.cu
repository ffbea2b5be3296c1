/* leak_per_call.cu — a correct kernel whose launcher cudaMallocs a buffer on every call and
 * never frees it: a device memory leak, which the harness's allocation count names when a run
 * makes several calls (--calls). */
#define FIXTURE_ID "fixture_leak_per_call"
#define FIXTURE_SUMMARY "Kogge-Stone that leaks a buffer per call"
#include "lab.h"
#include "cuda_check.h"
static void leak_a_buffer(void)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, 4096));
}
#define FIXTURE_HOST_HOOK leak_a_buffer

#include "correct_kernel.h"
#include "fixture.h"
