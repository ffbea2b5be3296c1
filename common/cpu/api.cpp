/* api.cpp (CPU mode) — the CUDA runtime API besides memory (memory.cpp) and launches (launch.cpp):
 * errors, the device and its properties, events, streams and kernel attributes, with CPU-mode
 * values. Part of CPU mode's runtime (runtime.h lists its files; common/cpu/README.md explains the
 * design).
 */
#include "runtime.h"

#include <string.h>
#include <time.h>

using namespace lab_cpu::rt;

extern "C" {

cudaError_t cudaGetLastError(void)
{
    if (g_sticky != cudaSuccess)
        return g_sticky;
    cudaError_t e = g_last;
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return g_sticky != cudaSuccess ? g_sticky : g_last;
}

const char *cudaGetErrorName(cudaError_t err)
{
    switch (err) {
        // clang-format off
#define NAME(e) case e: return #e;
        NAME(cudaSuccess)
        NAME(cudaErrorInvalidValue)
        NAME(cudaErrorMemoryAllocation)
        NAME(cudaErrorInitializationError)
        NAME(cudaErrorInvalidConfiguration)
        NAME(cudaErrorInvalidDevicePointer)
        NAME(cudaErrorInvalidMemcpyDirection)
        NAME(cudaErrorInvalidDeviceFunction)
        NAME(cudaErrorNoDevice)
        NAME(cudaErrorInvalidDevice)
        NAME(cudaErrorInvalidResourceHandle)
        NAME(cudaErrorNotReady)
        NAME(cudaErrorIllegalAddress)
        NAME(cudaErrorLaunchOutOfResources)
        NAME(cudaErrorLaunchTimeout)
        NAME(cudaErrorAssert)
        NAME(cudaErrorIllegalInstruction)
        NAME(cudaErrorLaunchFailure)
        NAME(cudaErrorNotSupported)
        NAME(cudaErrorUnknown)
        // clang-format on
#undef NAME
    }
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t err)
{
    if (err != cudaSuccess && err == g_sticky && g_report[0])
        return g_report; /* the CPU-mode report: kernel, block, thread, index */
    switch (err) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorIllegalAddress:
        return "an illegal memory access was encountered";
    case cudaErrorLaunchTimeout:
        return "the launch timed out and was terminated";
    case cudaErrorIllegalInstruction:
        return "an illegal instruction was encountered";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure";
    case cudaErrorInvalidMemcpyDirection:
        return "invalid copy direction for memcpy";
    default:
        return "unknown error";
    }
}

cudaError_t cudaDeviceSynchronize(void)
{
    API_ENTER();
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "CPU mode");
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    prop->totalGlobalMem = total_b;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->sharedMemPerBlockOptin = 227 * 1024;
    prop->sharedMemPerMultiprocessor = 228 * 1024;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->memPitch = (size_t)1 << 31;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->clockRate = 1000000;
    prop->totalConstMem = 65536;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 1; /* one block at a time */
    prop->concurrentKernels = 0;
    prop->memoryClockRate = 1000000;
    prop->memoryBusWidth = 64;
    prop->l2CacheSize = 4 * 1024 * 1024;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->unifiedAddressing = 1;
    prop->managedMemory = 1;
    prop->canMapHostMemory = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return e;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
        *value = p.maxThreadsPerBlock;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = (int)p.sharedMemPerBlock;
        break;
    case cudaDevAttrWarpSize:
        *value = p.warpSize;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = p.multiProcessorCount;
        break;
    case cudaDevAttrComputeCapabilityMajor:
        *value = p.major;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = p.minor;
        break;
    case cudaDevAttrL2CacheSize:
        *value = p.l2CacheSize;
        break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
        *value = p.maxThreadsPerMultiProcessor;
        break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        *value = (int)p.sharedMemPerBlockOptin;
        break;
    default:
        return set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

struct lab_cpu_event {
    double ms;
};
struct lab_cpu_stream {
    int unused;
};

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    API_ENTER();
    *event = new lab_cpu_event{0};
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t)
{
    API_ENTER();
    if (!event)
        return set_error(cudaErrorInvalidResourceHandle);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    event->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    API_ENTER();
    return event ? cudaSuccess : set_error(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    API_ENTER();
    if (!ms || !start || !end)
        return set_error(cudaErrorInvalidValue);
    *ms = (float)(end->ms - start->ms); /* host time of the emulation: says nothing about a GPU */
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    *stream = new lab_cpu_stream{0};
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    delete stream;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    API_ENTER();
    return cudaSuccess;
}

cudaError_t lab_cpu_func_set_attribute(const void *func, cudaFuncAttribute attr, int value)
{
    API_ENTER();
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || value > 227 * 1024)
            return set_error(cudaErrorInvalidValue);
        g_func_smem[func] = value;
    }
    return cudaSuccess;
}

cudaError_t lab_cpu_func_get_attributes(cudaFuncAttributes *attr, const void *func)
{
    API_ENTER();
    if (!attr || !func)
        return set_error(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof(*attr));
    attr->maxThreadsPerBlock = 1024;
    attr->numRegs = 32;
    attr->ptxVersion = attr->binaryVersion = 90;
    auto opt_in = g_func_smem.find(func);
    attr->maxDynamicSharedSizeBytes = opt_in != g_func_smem.end() ? opt_in->second : 48 * 1024;
    attr->preferredShmemCarveout = -1;
    return cudaSuccess;
}

} /* extern "C" */
