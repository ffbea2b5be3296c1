/* memory.cpp (CPU mode) — device memory and its checks: cudaMalloc between guard pages, the padding
 * check after each kernel, cudaMemcpy and cudaMemset that refuse ranges leaving a buffer, the
 * lab's __device__ and __constant__ variables (found by their records, lab_cpu.h's
 * LAB_CPU_DEVINFO, and closed to host code like the buffers), and shared memory (registration,
 * bounds faults, each resident block's copy saved and restored).
 * Part of CPU mode's runtime (runtime.h lists its files; common/cpu/README.md explains the design).
 *
 * Every cudaMalloc buffer lies between two inaccessible pages, its end against the upper one, so an
 * access past the end faults at once (the SIGSEGV handler, errors.cpp, names kernel, block, thread,
 * offset and index). The few bytes of padding around a buffer are filled with a pattern and checked
 * after each kernel. Shared-memory arrays are checked on every subscript (lab_cpu.h), and
 * shared_index_fault here reports one out of bounds.
 *
 * Host code cannot read device memory on a GPU: a device pointer dereferenced there faults. Here
 * device memory is host memory, so while the harness runs each of the lab's calls
 * (lab_cpu_host_guard) the buffers' data pages are closed (PROT_NONE) and opened only for a
 * kernel and for the runtime's cudaMemcpy and cudaMemset; host code that reads or writes them
 * faults as on a GPU, and the fault handler (signals.cpp) says why. Without it, a launcher that
 * touched device memory passed here and crashed on a GPU.
 *
 * A judge's buffers (common/harness/port.c) are mappings of its shared arena: the judge's
 * cudaMalloc takes them from there (lab_cpu_share_hooks) and the lab process adopts them as its
 * own cudaMalloc buffers (lab_cpu_adopt), guards and checks included.
 *
 * Size: about 540 lines, over the house's 400: one allocator, the lab's device variables and the
 * checks on them, which share the table of allocations.
 */
#include "runtime.h"
#include "hostmem.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace lab_cpu {
namespace rt {

std::vector<shared_reg> g_shared;
char *g_dyn;
size_t g_dyn_bytes;

namespace {

size_t g_page;

struct allocation {
    char *map; /* the whole mapping: guard page, data pages, guard page */
    size_t map_len;
    char *user;      /* what cudaMalloc returned */
    size_t bytes;    /* what was asked for */
    char *data;      /* first data page */
    size_t data_len; /* data pages */
    bool shared;     /* a judge's shared mapping (lab_cpu_share_hooks) or one adopted from it */
    /* a __device__ or __constant__ variable of the lab's (lab_cpu.h: LAB_CPU_DEVINFO), else NULL */
    const char *var = NULL, *file = NULL;
    int line = 0;
    bool constant = false; /* __constant__ (or const): kernels may only read it */
};
void add_device_vars(std::map<uintptr_t, allocation> &to);
/* by user address; built on first use, with the lab's device variables (add_device_vars) */
std::map<uintptr_t, allocation> &allocs()
{
    static std::map<uintptr_t, allocation> by_user;
    static bool vars;
    if (!vars) {
        vars = true;
        add_device_vars(by_user);
    }
    return by_user;
}
#define g_allocs allocs()
bool g_closed; /* the data pages are inaccessible now: lab_cpu_host_guard(1), outside a kernel */
void *(*g_share_alloc)(size_t); /* lab_cpu_share_hooks: where a shared mapping comes from */
void (*g_share_release)(void *, size_t);

} /* namespace */

/* The lab's __device__ and __constant__ variables (lab_cpu.h, LAB_CPU_DEVINFO): each starts a page
 * of its sections, and the course's pages below end each section (the course's objects are linked
 * after the lab's), so a variable's pages hold nothing else and can be closed to host code. */
__attribute__((section("lab_cpu_devvars"), aligned(4096), used)) char g_devvars_end[4096];
__attribute__((section("lab_cpu_devconst"), aligned(4096), used))
const char g_devconst_end[4096] = {0};
__attribute__((section("lab_cpu_devinfo"), used))
const devvar_info g_devinfo_none = {NULL, 0, NULL, NULL, 0, 0};
extern "C" const devvar_info __start_lab_cpu_devinfo[], __stop_lab_cpu_devinfo[];
static_assert(sizeof(devvar_info) == 64, "the records' stride in their section");

namespace {

void add_device_vars(std::map<uintptr_t, allocation> &to)
{
    const uintptr_t pg = (uintptr_t)page_size();
    for (const devvar_info *d = __start_lab_cpu_devinfo; d < __stop_lab_cpu_devinfo; d++) {
        if (!d->addr || !d->bytes)
            continue;
        const uintptr_t at = (uintptr_t)d->addr, first = at & ~(pg - 1),
                        end = (at + d->bytes + pg - 1) & ~(pg - 1);
        allocation al;
        al.map = al.data = (char *)first;
        al.map_len = al.data_len = (size_t)(end - first);
        al.user = (char *)at;
        al.bytes = d->bytes;
        al.shared = false;
        al.var = d->name;
        al.file = d->file;
        al.line = d->line;
        al.constant = d->constant != 0;
        to[at] = al;
    }
}

/* Every buffer's data pages to prot; a __constant__ variable's to read-only at most. */
void protect_all(int prot)
{
    for (const auto &kv : g_allocs)
        mprotect(kv.second.data, kv.second.data_len,
                 kv.second.constant && prot != PROT_NONE ? PROT_READ : prot);
}

/* The allocation whose mapping (guards included) holds p, or NULL. */
const allocation *find_mapping(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    auto it =
        g_allocs.upper_bound(a + page_size()); /* user > a + page cannot hold a in its mapping */
    while (it != g_allocs.begin()) {
        --it;
        const allocation &al = it->second;
        if (a >= (uintptr_t)al.map && a < (uintptr_t)al.map + al.map_len)
            return &al;
        if ((uintptr_t)al.map + al.map_len + 2 * page_size() < a)
            break;
    }
    return NULL;
}

/* Checks that [p, p + bytes) stays inside its buffer when p points into one. */
bool range_ok(const void *p, size_t bytes)
{
    const allocation *al = find_mapping(p);
    if (!al)
        return true; /* host memory: the caller's business */
    const char *c = (const char *)p;
    return c >= al->user && c + bytes <= al->user + al->bytes;
}

} /* namespace */

size_t page_size()
{
    if (!g_page)
        g_page = (size_t)sysconf(_SC_PAGESIZE);
    return g_page;
}

bool open_device_memory()
{
    if (!g_closed)
        return false;
    protect_all(PROT_READ | PROT_WRITE);
    g_closed = false;
    return true;
}

bool in_lab_code()
{
    return g_closed;
}

void close_device_memory(bool opened)
{
    if (opened) {
        protect_all(PROT_NONE);
        g_closed = true;
    }
}

bool in_closed_device_memory(const void *p)
{
    if (!g_closed)
        return false;
    const allocation *al = find_mapping(p);
    return al && (const char *)p >= al->data && (const char *)p < al->data + al->data_len;
}

/* The file name of a path, as the course's messages name a lab's file (scan.cu:12). */
const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

/* "the __constant__ variable 'w' (scan.cu:12)" of device variable al into buf. */
static void name_variable(const allocation *al, char *buf, size_t len)
{
    snprintf(buf, len, "the %s variable '%s' (%s:%d)", al->constant ? "__constant__" : "__device__",
             al->var, base_name(al->file), al->line);
}

/* Describes where a faulting address lies: "byte offset 4100 (int index 1025) past the end of a
 * cudaMalloc buffer of 4096 bytes (1024 ints)". */
void describe_address(const void *p, char *buf, size_t len)
{
    const allocation *al = find_mapping(p);
    if (!al) {
        snprintf(buf, len,
                 "address %p, which is in no cudaMalloc buffer (a null, host or wild pointer?)", p);
        return;
    }
    const long long off = (long long)((const char *)p - al->user);
    char what[300], var[250];
    if (al->var) {
        name_variable(al, var, sizeof(var));
        snprintf(what, sizeof(what), "%s of %zu bytes", var, al->bytes);
    } else {
        snprintf(what, sizeof(what), "a cudaMalloc buffer of %zu bytes (%zu ints)", al->bytes,
                 al->bytes / 4);
    }
    snprintf(buf, len, "byte offset %lld (int index %lld) %s %s", off,
             off >= 0 ? off / 4 : -((-off + 3) / 4),
             off < 0                       ? "before the start of"
             : off >= (long long)al->bytes ? "past the end of"
                                           : "in",
             what);
}

bool device_variable_at(const void *p, char *buf, size_t len, bool *constant)
{
    const allocation *al = find_mapping(p);
    if (!al || !al->var || (const char *)p < al->user || (const char *)p >= al->user + al->bytes)
        return false;
    name_variable(al, buf, len);
    *constant = al->constant;
    return true;
}

/* Checks the padding around every buffer after a kernel: a write there is out of bounds too. */
void check_padding()
{
    for (auto &kv : g_allocs) {
        const allocation &al = kv.second;
        if (al.var)
            continue; /* a device variable: its page's rest is the section's, not padding */
        const char *p = NULL;
        for (const char *c = al.data; c < al.user; c++)
            if ((unsigned char)*c != PAD_BYTE) {
                p = c;
                break;
            }
        if (!p)
            for (const char *c = al.user + al.bytes; c < al.data + al.data_len; c++)
                if ((unsigned char)*c != PAD_BYTE) {
                    p = c;
                    break;
                }
        if (p) {
            char buf[400];
            describe_address(p, buf, sizeof(buf));
            kernel_error(cudaErrorIllegalAddress, "kernel %s wrote at %s", g_launch->name, buf);
            return;
        }
    }
}

/* ---- shared memory --------------------------------------------------------------------------- */

/* Fills the block's shared memory with a pattern: shared memory starts undefined on a GPU. */
void poison_shared()
{
    for (const shared_reg &r : g_shared)
        memset(r.p, PAD_BYTE, r.bytes);
    if (g_dyn_bytes)
        memset(g_dyn, PAD_BYTE, g_dyn_bytes);
}

/* Copies every registered static __shared__ array and scalar into image (a block switch). */
void save_shared(std::vector<char> &image)
{
    size_t total = 0;
    for (const shared_reg &r : g_shared)
        total += r.bytes;
    image.resize(total);
    size_t off = 0;
    for (const shared_reg &r : g_shared) {
        memcpy(image.data() + off, r.p, r.bytes);
        off += r.bytes;
    }
}

/* The reverse; an array registered after the image was saved starts with the fill pattern. */
void restore_shared(const std::vector<char> &image)
{
    size_t off = 0;
    for (const shared_reg &r : g_shared) {
        if (off + r.bytes <= image.size())
            memcpy(r.p, image.data() + off, r.bytes);
        else
            memset(r.p, PAD_BYTE, r.bytes);
        off += r.bytes;
    }
}

} /* namespace rt */

/* ---- the device-side entry points (lab_cpu.h, banks.h) --------------------------------------- */

using namespace rt;

void shared_index_fault(const void *array, long long index, unsigned long long count)
{
    const char *name = NULL;
    for (const shared_reg &r : g_shared)
        if (r.p <= array && (const char *)array < (const char *)r.p + r.bytes)
            name = r.name;
    if (array == g_dyn)
        name = "extern __shared__ (dynamic)";
    char what[400];
    snprintf(what, sizeof(what),
             "out-of-bounds shared-memory index %lld in %s%s%s array of %llu elements", index,
             name ? "the " : "a ", name ? name : "__shared__",
             name && array != g_dyn ? " __shared__" : "", count);
    if (!g_cur) {
        fprintf(stderr, "CPU mode: %s (outside a kernel)\n", what);
        fatal_exit();
    }
    fiber_error(cudaErrorIllegalAddress, what);
}

void register_shared(void *p, size_t bytes, const char *name)
{
    g_shared.push_back(shared_reg{p, bytes, name});
    memset(p, PAD_BYTE, bytes);
}

bool in_shared(const void *p)
{
    return shared_holds(p);
}

const char *shared_name(const void *p, const void **base)
{
    for (const shared_reg &r : g_shared)
        if (r.p <= p && (const char *)p < (const char *)r.p + r.bytes) {
            *base = r.p;
            return r.name;
        }
    *base = g_dyn;
    if (g_dyn && g_dyn <= (const char *)p && (const char *)p < g_dyn + g_dyn_bytes)
        return "extern __shared__";
    *base = p;
    return "__shared__";
}

const void *global_buffer(const void *p)
{
    const allocation *al = find_mapping(p);
    if (!al || (const char *)p < al->user || (const char *)p >= al->user + al->bytes)
        return NULL;
    return al->user;
}

void *dynamic_shared_base()
{
    return g_dyn;
}
size_t dynamic_shared_bytes()
{
    return g_dyn_bytes;
}

} /* namespace lab_cpu */

/* ---- the runtime API: memory ----------------------------------------------------------------- */

using namespace lab_cpu::rt;

extern "C" {

cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    API_ENTER();
    if (!ptr)
        return set_error(cudaErrorInvalidValue);
    *ptr = NULL;
    if (bytes == 0)
        return cudaSuccess;
    const size_t pg = page_size();
    const size_t rounded = (bytes + 15) & ~(size_t)15; /* 16-byte aligned start: int4 loads */
    const size_t data_len = (rounded + pg - 1) / pg * pg;
    const size_t map_len = data_len + 2 * pg;
    char *map = g_share_alloc ? (char *)g_share_alloc(map_len)
                              : (char *)mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED || !map)
        return set_error(cudaErrorMemoryAllocation);
    mprotect(map, pg, PROT_NONE);
    mprotect(map + pg + data_len, pg, PROT_NONE);
    allocation al;
    al.map = map;
    al.map_len = map_len;
    al.data = map + pg;
    al.data_len = data_len;
    al.user = al.data + (data_len - rounded); /* the end (rounded) touches the upper guard page */
    al.bytes = bytes;
    al.shared = g_share_alloc != NULL;
    /* fresh device memory holds no useful values: a pattern, not zeros, so code that forgets to
     * initialise shows it */
    memset(al.data, PAD_BYTE, data_len);
    if (g_closed) /* allocated by the lab's host code: closed to it like the others */
        mprotect(al.data, data_len, PROT_NONE);
    g_allocs[(uintptr_t)al.user] = al;
    *ptr = al.user;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    API_ENTER();
    if (!ptr)
        return cudaSuccess;
    auto it = g_allocs.find((uintptr_t)ptr);
    if (it == g_allocs.end())
        return set_error(cudaErrorInvalidValue);
    if (it->second.shared && g_share_release) {
        mprotect(it->second.map, it->second.map_len, PROT_READ | PROT_WRITE);
        g_share_release(it->second.map, it->second.map_len);
    } else if (!it->second.shared) {
        munmap(it->second.map, it->second.map_len);
    }
    g_allocs.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t bytes)
{
    API_ENTER();
    *ptr = malloc(bytes ? bytes : 1);
    return *ptr ? cudaSuccess : set_error(cudaErrorMemoryAllocation);
}

cudaError_t cudaFreeHost(void *ptr)
{
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    API_ENTER();
    if ((int)kind < 0 || (int)kind > 4)
        return set_error(cudaErrorInvalidMemcpyDirection);
    if (bytes == 0)
        return cudaSuccess;
    if (!dst || !src || !range_ok(dst, bytes) || !range_ok(src, bytes))
        return set_error(cudaErrorInvalidValue);
    const bool opened = open_device_memory();
    memmove(dst, src, bytes);
    close_device_memory(opened);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t)
{
    return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void *ptr, int value, size_t bytes)
{
    API_ENTER();
    if (bytes == 0)
        return cudaSuccess;
    if (!ptr || !range_ok(ptr, bytes))
        return set_error(cudaErrorInvalidValue);
    const bool opened = open_device_memory();
    memset(ptr, value, bytes);
    close_device_memory(opened);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t)
{
    return cudaMemset(ptr, value, bytes);
}

void lab_cpu_host_guard(int on)
{
    static bool handlers;
    if (on && !handlers) { /* a fault of host code is explained even before the first launch */
        handlers = true;
        install_handlers();
    }
    if ((on != 0) != g_closed) {
        protect_all(on ? PROT_NONE : PROT_READ | PROT_WRITE);
        g_closed = on != 0;
    }
}

void lab_cpu_share_hooks(void *(*alloc)(size_t), void (*release)(void *, size_t))
{
    g_share_alloc = alloc;
    if (release)
        g_share_release = release;
}

int lab_cpu_allocation(const void *p, void **map, size_t *map_len, size_t *user_off, size_t *bytes)
{
    const allocation *al = find_mapping(p);
    if (!al)
        return 0;
    *map = al->map;
    *map_len = al->map_len;
    *user_off = (size_t)(al->user - al->map);
    *bytes = al->bytes;
    return 1;
}

void *lab_cpu_adopt(void *map, size_t map_len, size_t user_off, size_t bytes)
{
    const size_t pg = page_size();
    allocation al;
    if (map_len < 2 * pg || user_off < pg || user_off + bytes > map_len - pg)
        return NULL;
    al.map = (char *)map;
    al.map_len = map_len;
    al.data = al.map + pg;
    al.data_len = map_len - 2 * pg;
    al.user = al.map + user_off;
    al.bytes = bytes;
    al.shared = true;
    mprotect(al.map, pg, PROT_NONE);
    mprotect(al.map + pg + al.data_len, pg, PROT_NONE);
    if (g_closed)
        mprotect(al.data, al.data_len, PROT_NONE);
    g_allocs[(uintptr_t)al.user] = al;
    return al.user;
}

void lab_cpu_unadopt(void *user)
{
    auto it = g_allocs.find((uintptr_t)user);
    if (it == g_allocs.end() || !it->second.shared)
        return;
    mprotect(it->second.map, it->second.map_len, PROT_NONE); /* the lab's view closes for good */
    g_allocs.erase(it);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    API_ENTER();
    double avail, total;
    lab_host_memory(&avail, &total);
    if (free_bytes)
        *free_bytes = avail > 0 ? (size_t)avail : (size_t)1 << 32;
    if (total_bytes)
        *total_bytes = total > 0 ? (size_t)total : (size_t)1 << 32;
    return cudaSuccess;
}

} /* extern "C" */
