/* device_var_host_read.cu — a correct Kogge-Stone whose launcher reads a __device__ variable on
 * every call, through an extern "C" helper with a default argument: syntax a search of host code
 * for the variable's name does not follow. On a GPU host code reads its own copy of the variable
 * (nvcc refuses the read); CPU mode keeps the variable on device-memory pages of its own, closed
 * to host code during each call, so the read faults and the fault names the variable. */
#define FIXTURE_ID "fixture_device_var_host_read"
#define FIXTURE_SUMMARY "Kogge-Stone whose launcher reads a __device__ variable"
#include "lab.h"

#include "correct_kernel.h"

__device__ unsigned g_launches;

extern "C" unsigned launches_so_far(const unsigned *counter = &g_launches)
{
    return *counter; /* BUG: host code reading device memory */
}

static volatile unsigned g_seen; /* the value read is kept: the read stays in the program */
#define FIXTURE_HOST_HOOK() (g_seen = launches_so_far())
#include "fixture.h"
