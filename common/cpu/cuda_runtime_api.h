/* cuda_runtime_api.h (CPU mode) — the part of the CUDA runtime API the labs, the harness and the
 * tests call, implemented on the host by CPU mode's runtime (common/cpu/runtime.h lists its files).
 *
 * In CPU mode (make CPU=1) the compiler finds this header instead of the CUDA Toolkit's, so the
 * same sources build without nvcc and without a GPU. Usable from C and C++; the names, types and
 * error codes match the real ones so code that checks them behaves the same.
 */
#ifndef LAB_CPU_CUDA_RUNTIME_API_H
#define LAB_CPU_CUDA_RUNTIME_API_H

#include <stddef.h>

#ifndef LAB_CPU_MODE
#define LAB_CPU_MODE 1
#endif

/* A default argument, as the CUDA runtime's headers give one (their __dv(v)): C++ only. */
#ifdef __cplusplus
#define LAB_CPU_DV(v) = v
#else
#define LAB_CPU_DV(v)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The error codes keep the CUDA runtime's numbers. */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorIllegalInstruction = 715,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
} cudaError_t;

typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
} cudaMemcpyKind;

typedef enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
} cudaFuncAttribute;

typedef enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrL2CacheSize = 89,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
} cudaDeviceAttr;

/* The fields of cudaDeviceProp that code commonly reads, with CPU-mode values (see api.cpp). */
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int unifiedAddressing;
    int managedMemory;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    int pciBusID;
    int ECCEnabled;
};
typedef struct cudaDeviceProp cudaDeviceProp;

typedef struct lab_cpu_event *cudaEvent_t;
typedef struct lab_cpu_stream *cudaStream_t;

cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaMallocHost(void **ptr, size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream LAB_CPU_DV(0));
cudaError_t cudaMemset(void *ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream LAB_CPU_DV(0));
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t err);
const char *cudaGetErrorName(cudaError_t err);

cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);

/* Events record host time: in CPU mode the numbers say nothing about GPU speed. */
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream LAB_CPU_DV(0));
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* Streams exist only as names: all work runs at once, in order. */
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

/* Declared, never defined: CUDA runtime calls that no lab may make (grader/config.json's symbol
 * allowlist refuses them on the GPU). Declared here, code that makes them compiles in CPU mode as
 * it does with nvcc, and the grader's CPU-mode checks refuse it by name, as the GPU path does,
 * instead of a build error about an unknown name; linking it fails. */
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostRegisterDefault 0x00
#define cudaMemAttachGlobal 0x01
#define cudaEnableDefault 0x0
typedef enum cudaDriverEntryPointQueryResult {
    cudaDriverEntryPointSuccess = 0,
    cudaDriverEntryPointSymbolNotFound = 1,
    cudaDriverEntryPointVersionNotSufficent = 2
} cudaDriverEntryPointQueryResult;
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags);
cudaError_t cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags);
cudaError_t cudaHostRegister(void *ptr, size_t bytes, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);

/* The stream handles the CUDA runtime predefines (nothing runs concurrently here). */
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                           size_t bytes);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *status);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult *status);

/* Kernel attributes: the dynamic shared-memory opt-in is checked at launch, the rest ignored. */
cudaError_t lab_cpu_func_set_attribute(const void *func, cudaFuncAttribute attr, int value);

/* What cudaFuncGetAttributes reports (the CUDA runtime's fields); CPU mode knows a kernel's
 * dynamic shared-memory opt-in and fills the rest with an H100's limits. */
struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
};
typedef struct cudaFuncAttributes cudaFuncAttributes;
cudaError_t lab_cpu_func_get_attributes(struct cudaFuncAttributes *attr, const void *func);

#define cudaOccupancyDefault 0x00
#define cudaOccupancyDisableCachingOverride 0x01

/* Device memory closed to host code (CPU mode only; common/cpu/memory.cpp): from
 * lab_cpu_host_guard(1) until lab_cpu_host_guard(0), every cudaMalloc buffer is inaccessible to
 * host code, as on a GPU, and open only to kernels, cudaMemcpy and cudaMemset. The harness closes
 * it around the lab's first call of each case (common/harness/call.c). */
void lab_cpu_host_guard(int on);

/* Device memory shared by a judge with its lab process (common/harness/port.c). In the judge,
 * while alloc is set, cudaMalloc takes each buffer's mapping (guard pages included) from
 * alloc(len) instead of mmap, and cudaFree of such a buffer gives it back to release(map, len);
 * lab_cpu_share_hooks(NULL, NULL) ends that for later allocations. lab_cpu_allocation: where
 * p's buffer lies (its mapping, the offset of what cudaMalloc returned, its bytes), 0 when p is
 * in none. In the lab process, lab_cpu_adopt makes the judge's mapping (map_len bytes mapped at
 * map) a cudaMalloc buffer of bytes at map + user_off, its guard pages closed, and returns that
 * pointer (NULL when the numbers do not describe a mapping); lab_cpu_unadopt forgets it. */
void lab_cpu_share_hooks(void *(*alloc)(size_t), void (*release)(void *, size_t));
int lab_cpu_allocation(const void *p, void **map, size_t *map_len, size_t *user_off, size_t *bytes);
void *lab_cpu_adopt(void *map, size_t map_len, size_t user_off, size_t bytes);
void lab_cpu_unadopt(void *user);

/* Shared-memory bank conflicts (CPU mode only; common/cpu/banks.cpp). lab_cpu_banks_record(1)
 * clears the counts and counts every later launch of a kernel from an instrumented object (a .cu
 * file that declares __shared__ memory) until lab_cpu_banks_record(0). Counts are per kernel
 * name (the launch's text, "bl_kernel<true, SYNC>"), in the order of their first launch.
 * lab_cpu_banks_record(2) counts only the algorithm profile (lab_cpu_profile_*), without the
 * bank and sector tables, whose source lines need addr2line. */
typedef struct lab_cpu_bank_stats {
    const char *kernel;
    unsigned long long loads, stores;      /* warp-wide shared-memory accesses */
    unsigned long long extra_ld, extra_st; /* wavefronts beyond the first of each access (part):
                                              Nsight Compute's "bank conflicts" */
    double mean_degree;                    /* over the accesses: 1.0 when conflict-free */
    unsigned worst;                        /* the worst access's degree: n-way */
} lab_cpu_bank_stats;
void lab_cpu_banks_record(int on);
int lab_cpu_banks_count(void);
int lab_cpu_banks_get(int i, lab_cpu_bank_stats *out); /* 0 when there is no i-th kernel */
/* The same counts per kernel and per source line of a shared-memory access, loads and stores
 * apart, in the order of lab_cpu_sectors_get's rows: where a kernel's conflicts are. */
typedef struct lab_cpu_bank_site_stats {
    const char *kernel;
    const char *site; /* "scan.cu:67", "?" when addr2line cannot place it */
    int store;
    unsigned long long accesses, extra; /* extra: the passes beyond the first (conflicts) */
    double mean_degree;
    unsigned worst;
    const char *func; /* the function the line is in, its name only ("scan_tile"), "" if unknown */
} lab_cpu_bank_site_stats;
int lab_cpu_bank_sites_get(int i, lab_cpu_bank_site_stats *out); /* 0 when there is no i-th row */
/* Global-memory sectors, counted with the banks: per kernel and per source line of an access,
 * loads and stores apart, the warp-wide accesses, the 32-byte sectors they touched and the fewest
 * that could hold their bytes (sectors / min_sectors is 1.0 when coalesced). Rows come by kernel
 * (first launch first), then by line; the source line is found by addr2line (binutils), "?" when
 * it cannot be. */
typedef struct lab_cpu_sector_stats {
    const char *kernel;
    const char *site; /* "scan.cu:67" */
    int store;
    unsigned long long accesses, sectors, min_sectors;
    const char *func; /* the function the line is in, its name only ("scan_tile"), "" if unknown */
} lab_cpu_sector_stats;
int lab_cpu_sectors_get(int i, lab_cpu_sector_stats *out); /* 0 when there is no i-th row */
/* The algorithm profile, counted with the banks (common/cpu/profile.cpp): each launch in order,
 * and what its block 0 did in each phase between two barriers. */
typedef struct lab_cpu_launch_profile {
    const char *kernel;
    unsigned threads; /* per block */
    unsigned long long blocks;
    int phases;
} lab_cpu_launch_profile;
typedef struct lab_cpu_phase_profile {
    unsigned long long shared_loads, shared_stores; /* accesses (an int4 is one), by all threads */
    unsigned long long shared_store_words;          /* the 4-byte words those stores wrote */
    unsigned threads_storing;                       /* threads that stored to shared memory */
    unsigned threads_loading;                       /* threads that loaded from shared memory */
    unsigned min_thread_loads;                      /* the fewest 4-byte words one of them loaded */
    unsigned long long global_loads, global_stores;
    unsigned long long shuffles; /* warp shuffles (__shfl*_sync), one per thread each */
    /* the words of each __shared__ array read and written, "name[lo..hi]", ", " between them */
    const char *reads, *writes;
    int disjoint; /* 1: no word both read and written (a double buffer's step) */
    /* the words the reads spanned: each array's from its first word read to its last, added */
    unsigned long long read_words;
} lab_cpu_phase_profile;
int lab_cpu_profile_launch(int i, lab_cpu_launch_profile *out);      /* 0: no i-th launch */
int lab_cpu_profile_phase(int i, int k, lab_cpu_phase_profile *out); /* 0: no such phase */

#ifdef __cplusplus
}

template <class T>
static inline cudaError_t cudaFuncSetAttribute(T *func, cudaFuncAttribute attr, int value)
{
    return lab_cpu_func_set_attribute((const void *)func, attr, value);
}

template <class T>
static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, T *func)
{
    return lab_cpu_func_get_attributes(attr, (const void *)func);
}

/* cudaMalloc(&d_ints, bytes) with an int ** (or any T **), as the CUDA runtime's template allows.
 */
template <class T> static inline cudaError_t cudaMalloc(T **ptr, size_t bytes)
{
    return cudaMalloc((void **)ptr, bytes);
}

/* The blocks the scheduler keeps resident at once (launch.cpp: CPU_RESIDENT_BLOCKS, 4 unless
 * set), which the occupancy calls report. */
extern "C" int lab_cpu_resident_blocks(void);

/* Blocks of blockSize threads that run at once on the one multiprocessor CPU mode reports: 2048
 * threads' worth (an H100's limit), but no more than the scheduler keeps resident, so that a grid
 * sized by this call (a grid barrier's, a persistent kernel's) is all resident, as on a GPU. */
template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num_blocks, T func,
                                                                        int block_size,
                                                                        size_t dynamic_smem)
{
    (void)func;
    (void)dynamic_smem;
    if (!num_blocks || block_size <= 0 || block_size > 1024)
        return cudaErrorInvalidValue;
    const int fit = 2048 / block_size, resident = lab_cpu_resident_blocks();
    *num_blocks = fit < resident ? fit : resident;
    return cudaSuccess;
}

template <class T>
static inline cudaError_t
cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *num_blocks, T func, int block_size,
                                                       size_t dynamic_smem, unsigned int flags)
{
    if (flags & ~(unsigned)cudaOccupancyDisableCachingOverride)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, func, block_size,
                                                         dynamic_smem);
}
#else
#define cudaFuncSetAttribute(func, attr, value)                                                    \
    lab_cpu_func_set_attribute((const void *)(func), attr, value)
#define cudaFuncGetAttributes(attr, func) lab_cpu_func_get_attributes(attr, (const void *)(func))
#endif

#endif /* LAB_CPU_CUDA_RUNTIME_API_H */
