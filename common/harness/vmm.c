/* vmm.c — the device buffers a judge shares with its lab process (port.h), on a GPU: CUDA's
 * virtual memory management (cuMemCreate, exported as a POSIX file descriptor that the lab
 * process imports and maps), in 2 MiB pages on both sides, so that the lab's kernels read and
 * write them as fast as they would a cudaMalloc buffer of their own. (Legacy CUDA IPC handles
 * were measured slower there on an H100: a lab 08 scan at 2^28 took 1.17 ms in the lab process
 * against 0.82 ms in one process.)
 *
 * The judge keeps the buffers from case to case as call.c keeps its own (a process grades
 * hundreds of cases): a buffer freed goes back to the kept ones, the smallest kept one large
 * enough is taken again, and the kept ones not in use are released when memory runs short.
 * The driver's functions are found through the runtime (cudaGetDriverEntryPointByVersion), so
 * nothing links libcuda. CPU mode has none of this (port.c shares its arena instead).
 */
#include "vmm.h"
#include "cuda_check.h"
#include "port.h"

#ifndef LAB_CPU_MODE
#include <cuda.h>
#include <string.h>
#include <unistd.h>

static struct {
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*addr_free)(CUdeviceptr, size_t);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *,
                            CUmemAllocationGranularity_flags);
    CUresult (*export_fd)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                          unsigned long long);
    CUresult (*import_fd)(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType);
    int ready;
} D;

static void *entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn) {
        fprintf(stderr, "harness: the CUDA driver has no %s\n", name);
        exit(LAB_EXIT_CUDA_ERROR);
    }
    return fn;
}

void lab_vmm_load(void)
{
    if (D.ready)
        return;
    CUDA_CHECK(cudaFree(0)); /* the runtime's context, current for the driver's calls */
    *(void **)&D.create = entry("cuMemCreate");
    *(void **)&D.release = entry("cuMemRelease");
    *(void **)&D.reserve = entry("cuMemAddressReserve");
    *(void **)&D.addr_free = entry("cuMemAddressFree");
    *(void **)&D.map = entry("cuMemMap");
    *(void **)&D.unmap = entry("cuMemUnmap");
    *(void **)&D.access = entry("cuMemSetAccess");
    *(void **)&D.granularity = entry("cuMemGetAllocationGranularity");
    *(void **)&D.export_fd = entry("cuMemExportToShareableHandle");
    *(void **)&D.import_fd = entry("cuMemImportFromShareableHandle");
    D.ready = 1;
}

static CUmemAllocationProp prop_of(void)
{
    CUmemAllocationProp prop;
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/* Maps handle h (size bytes) at a new address, readable and writable by this device. */
static int map_handle(CUmemGenericAllocationHandle h, size_t size, void **p)
{
    CUdeviceptr ptr = 0;
    const CUmemAllocationProp prop = prop_of();
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof(acc));
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    /* aligned to the power of two at or above its size, up to 1 GiB, in both processes: each
     * maps it whole with the GPU's largest pages (measured on an H100, lab 08 at 2^26 through the
     * judge: 0.9 % between processes' medians instead of 2 % at the granularity's alignment) */
    size_t align = (size_t)2 << 20;
    while (align < size && align < ((size_t)1 << 30))
        align <<= 1;
    if (D.reserve(&ptr, size, align, 0, 0) != CUDA_SUCCESS)
        return -1;
    if (D.map(ptr, size, 0, h, 0) != CUDA_SUCCESS) {
        D.addr_free(ptr, size);
        return -1;
    }
    if (D.access(ptr, size, &acc, 1) != CUDA_SUCCESS) {
        D.unmap(ptr, size);
        D.addr_free(ptr, size);
        return -1;
    }
    *p = (void *)ptr;
    return 0;
}

static void unmap_handle(void *p, size_t size)
{
    D.unmap((CUdeviceptr)p, size);
    D.addr_free((CUdeviceptr)p, size);
}

#define VMM_MAX 32
static lab_kept_slot g_buf[VMM_MAX]; /* bytes: mapped, the granularity's multiple */
static CUmemGenericAllocationHandle g_handle[VMM_MAX]; /* g_buf[i]'s */

static void drop(int i)
{
    unmap_handle(g_buf[i].p, g_buf[i].bytes);
    D.release(g_handle[i]);
    memset(&g_buf[i], 0, sizeof(g_buf[i]));
}

static int create(size_t size, int slot, lab_report *r, const char *what)
{
    const CUmemAllocationProp prop = prop_of();
    CUmemGenericAllocationHandle h;
    CUresult res = D.create(&h, size, &prop, 0);
    if (res == CUDA_ERROR_OUT_OF_MEMORY) { /* the kept buffers not in use may be what is missing */
        for (int i = 0; i < VMM_MAX; i++)
            if (g_buf[i].p && !g_buf[i].busy)
                drop(i);
        res = D.create(&h, size, &prop, 0);
    }
    if (res != CUDA_SUCCESS) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "not enough device memory for %s (%zu bytes) at n=%zu", what, size, r->n);
        return -1;
    }
    if (map_handle(h, size, &g_buf[slot].p) != 0) {
        D.release(h);
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot map device memory for %s (%zu bytes)", what, size);
        return -1;
    }
    g_buf[slot].bytes = size;
    g_handle[slot] = h;
    g_buf[slot].busy = 1;
    return 0;
}

int lab_vmm_malloc(void **p, size_t bytes, size_t *mapped, lab_report *r, const char *what)
{
    lab_vmm_load();
    const CUmemAllocationProp prop = prop_of();
    size_t gran = 0;
    if (D.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS || !gran)
        gran = (size_t)2 << 20;
    const size_t size = ((bytes ? bytes : 1) + gran - 1) / gran * gran;
    int slot;
    const int fit = lab_kept_pick(g_buf, VMM_MAX, size, &slot);
    if (fit >= 0) {
        g_buf[fit].busy = 1;
        *p = g_buf[fit].p;
        *mapped = g_buf[fit].bytes;
        return 0;
    }
    if (slot < 0) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "more than %d shared device buffers for %s", VMM_MAX, what);
        return -1;
    }
    if (g_buf[slot].p) {
        lab_port_forget(g_buf[slot].p);
        drop(slot);
    }
    if (create(size, slot, r, what) != 0)
        return -1;
    *p = g_buf[slot].p;
    *mapped = size;
    return 0;
}

/* Each kept buffer not in use moves to memory of its own: the new allocation is made while the
 * old one is still held (so it cannot land where the old one was), then the old is released. A
 * timed round that asks for it (--new-buffers) measures the lab with its arrays somewhere else,
 * as a new process would, without the cost of starting two (measured: see grader/BENCH.md). */
void lab_vmm_renew(void)
{
    for (int i = 0; i < VMM_MAX; i++) {
        if (!g_buf[i].p || g_buf[i].busy)
            continue;
        const CUmemAllocationProp prop = prop_of();
        CUmemGenericAllocationHandle h;
        void *p = NULL;
        const size_t size = g_buf[i].bytes;
        const int made = D.create(&h, size, &prop, 0) == CUDA_SUCCESS;
        if (made && map_handle(h, size, &p) != 0) {
            D.release(h);
            p = NULL;
        }
        lab_port_forget(g_buf[i].p);
        drop(i);
        if (p) { /* else the slot stays empty: the next lab_vmm_malloc makes one */
            g_buf[i].p = p;
            g_buf[i].bytes = size;
            g_handle[i] = h;
        }
    }
}

void lab_vmm_free(void *p)
{
    for (int i = 0; p && i < VMM_MAX; i++)
        if (g_buf[i].p == p)
            g_buf[i].busy = 0;
}

int lab_vmm_export(const void *p, int *fd, void **base, size_t *size)
{
    for (int i = 0; i < VMM_MAX; i++)
        if (g_buf[i].p && (const char *)p >= (const char *)g_buf[i].p &&
            (const char *)p < (const char *)g_buf[i].p + g_buf[i].bytes) {
            *fd = -1;
            if (D.export_fd(fd, g_handle[i], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) !=
                CUDA_SUCCESS)
                return -1;
            *base = g_buf[i].p;
            *size = g_buf[i].bytes;
            return 0;
        }
    return -1;
}

void *lab_vmm_import(int fd, size_t size)
{
    CUmemGenericAllocationHandle h;
    void *p = NULL;
    lab_vmm_load();
    const CUresult res =
        D.import_fd(&h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    if (res != CUDA_SUCCESS)
        return NULL;
    if (map_handle(h, size, &p) != 0)
        p = NULL;
    D.release(h); /* the mapping keeps the memory until it is unmapped */
    return p;
}

void lab_vmm_unimport(void *p, size_t size)
{
    unmap_handle(p, size);
}

#endif
