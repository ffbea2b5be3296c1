/* runtime.h (CPU mode, internal) — what the files of CPU mode's runtime share, in namespace
 * lab_cpu::rt: the kernel error state, the fibers and the block they run, the block scheduler's
 * state, the shared-memory registry. Lab code never includes it: it sees the runtime through
 * cuda_runtime.h (cuda_runtime_api.h and lab_cpu.h). See common/cpu/README.md for the design.
 *
 * The runtime runs CUDA kernels on the host, one fiber per GPU thread, and provides the runtime API
 * of cuda_runtime_api.h. One file per job:
 *   fibers.cpp  each GPU thread as a fiber: starting it, switching to it and back, and the points
 *               where a thread yields (barriers, atomics, loops' safe points)
 *   blocks.cpp  the block scheduler: each block's threads in a seeded random order, blocks
 *               resident together, barriers opening, the deadlock report
 *   warp.cpp    warp operations: shuffles, votes, __syncwarp
 *   memory.cpp  cudaMalloc between guard pages, the padding check, cudaMemcpy and cudaMemset,
 *               shared memory (registration, bounds faults, each block's copy saved and restored)
 *   errors.cpp  kernel errors and their reports (also a barrier or warp operation that cannot
 *               complete, and where a deadlocked block's threads wait)
 *   signals.cpp the fault handler and the watchdog
 *   launch.cpp  settings, start-up, a launch's checks and run_kernel
 *   api.cpp     the rest of the runtime API: errors, device properties, events, streams
 *
 * The hot path is a fiber switch: run_blocks (blocks.cpp) resumes a fiber (resume, fibers.cpp),
 * and the fiber comes back through yield (fibers.cpp) from a barrier, an atomic or a warp
 * operation. resume and yield save their place with GCC's __builtin_setjmp and leave with
 * __builtin_longjmp (jump_to), a few inline instructions each: glibc's _setjmp/_longjmp cost
 * several times more per switch (a call through the PLT, the pthread cleanup walk and the unwind
 * checks of _longjmp), which no switch here needs. resume and yield are never inlined into their
 * callers (a function that calls __builtin_setjmp saves every callee-saved register), so they cost
 * the same from any file; the small helpers on the path stay in the file of their caller
 * (pick_next, launch_stopped) or are inline here (shared_holds).
 */
#ifndef LAB_CPU_RUNTIME_H
#define LAB_CPU_RUNTIME_H

/* A fortified longjmp (__longjmp_chk, chosen by _FORTIFY_SOURCE, which some compilers enable by
 * default) refuses a jump to another stack as "uninitialized stack frame": the runtime switches
 * stacks on purpose (makecontext, the fault handler), so it opts out. Every file of the runtime
 * includes this header first, before any system header. */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE
#endif

#include <map>
#include <string>
#include <vector>

#include "banks.h"
#include "cuda_runtime.h"

#include <signal.h>
#include <ucontext.h>

namespace lab_cpu {
namespace rt {

/* ---- errors (errors.cpp) --------------------------------------------------------------------- */

extern cudaError_t g_sticky; /* a kernel fault: every later call returns it */
extern cudaError_t g_last;   /* the last error, cleared by cudaGetLastError */
extern char g_report[2048];  /* the full description of g_sticky */

/* Records e as the last error (unless one is pending) and returns it. */
inline cudaError_t set_error(cudaError_t e)
{
    if (e != cudaSuccess && g_last == cudaSuccess)
        g_last = e;
    return e;
}

/* Every API call starts here: after a kernel fault nothing works any more (as on a GPU). */
#define API_ENTER()                                                                                \
    do {                                                                                           \
        if (::lab_cpu::rt::g_sticky != cudaSuccess)                                                \
            return ::lab_cpu::rt::g_sticky;                                                        \
    } while (0)

std::string ranges(const std::vector<int> &v); /* "0..31, 40, 42..63" */
std::string where(const char *file, int line); /* "scan.cu:57" */
std::string kernel_and_block();                /* "kernel k, block (3,0,0)" */
void kernel_error(cudaError_t err, const char *fmt, ...);
void thread_error(cudaError_t err, const char *what);
[[noreturn]] void fatal_exit();

/* A block that cannot go on: every thread left waits (report_stuck); describe_threads says where
 * the threads of fs[0..nthreads) are, for the deadlock report. */
struct fiber;
void report_stuck();
std::string describe_threads(fiber **fs, int nthreads);

/* ---- signals (signals.cpp) ------------------------------------------------------------------- */

extern char g_timeout_what[400]; /* "still running after N s: ..." */
void report_fault();
void install_handlers();
void watchdog_start();
void watchdog_stop();

/* ---- settings (launch.cpp) ------------------------------------------------------------------- */

extern unsigned long long g_seed; /* CPU_SCHED_SEED */
extern int g_timeout_s;           /* CPU_KERNEL_TIMEOUT */
extern int g_resident;            /* blocks resident at once (CPU_RESIDENT_BLOCKS) */
extern unsigned long long
    g_deadlock_points; /* no-progress points before a deadlock (CPU_DEADLOCK_POINTS) */

/* ---- memory (memory.cpp) --------------------------------------------------------------------- */

const unsigned char PAD_BYTE = 0xCB; /* fills the padding next to a buffer and fresh buffers */

size_t page_size();
/* "byte offset 4100 (int index 1025) past the end of a cudaMalloc buffer of 4096 bytes (1024
 * ints)" for an address in a buffer's mapping, or where it lies otherwise. */
void describe_address(const void *p, char *buf, size_t len);
void check_padding(); /* after a kernel: a write into a buffer's padding is a kernel error */
/* Device memory closed to host code: from lab_cpu_host_guard(1) to (0), every cudaMalloc
 * buffer's pages are inaccessible except inside a kernel and the runtime's own copies and fills,
 * which open them (open_device_memory) and close them again (close_device_memory). open returns
 * whether it opened them (false when they were open already), for close. */
bool open_device_memory();
void close_device_memory(bool opened);
/* Whether the lab's code runs now: the pages are closed (lab_cpu_host_guard(1) to (0)). */
bool in_lab_code();
/* Whether p lies in a cudaMalloc buffer's data pages while they are closed: a fault there comes
 * from host code reading device memory (signals.cpp). Async-signal-safe: no allocation. */
bool in_closed_device_memory(const void *p);
/* Whether p lies in one of the lab's __device__ or __constant__ variables (LAB_CPU_DEVINFO):
 * then buf says which ("the __constant__ variable 'w' (scan.cu:12)") and *constant whether it
 * is __constant__. */
bool device_variable_at(const void *p, char *buf, size_t len, bool *constant);

/* The static __shared__ arrays and scalars (one copy each, registered at their first use) and the
 * running block's dynamic shared memory. */
struct shared_reg {
    void *p;
    size_t bytes;
    const char *name;
};
extern std::vector<shared_reg> g_shared;
extern char *g_dyn;
extern size_t g_dyn_bytes;
extern std::map<const void *, int> g_func_smem; /* cudaFuncAttributeMaxDynamicSharedMemorySize */

/* Whether p is in the running block's shared memory (lab_cpu::in_shared; inline for spin_point,
 * which asks before every atomic while blocks run together). */
inline bool shared_holds(const void *p)
{
    for (const shared_reg &r : g_shared)
        if (r.p <= p && p < (const void *)((const char *)r.p + r.bytes))
            return true;
    return g_dyn && g_dyn <= p && p < (const void *)(g_dyn + g_dyn_bytes);
}
void poison_shared();                                /* fill the block's shared memory */
void save_shared(std::vector<char> &image);          /* static shared memory into image */
void restore_shared(const std::vector<char> &image); /* and back (the fill where image ends) */

/* ---- fibers (fibers.cpp) --------------------------------------------------------------------- */

enum fiber_state { F_READY, F_BARRIER, F_WARP, F_DONE };

/* Where a fiber continues, for __builtin_setjmp/__builtin_longjmp: five words (GCC's rule; it
 * uses three on x86-64: the frame, the stack pointer, the place to continue). */
typedef void *jump_buf[5];

struct fiber {
    jump_buf jb;   /* where the fiber continues when resumed */
    ucontext_t uc; /* only to start it on its stack */
    char *stack;
    bool started; /* false: the next resume starts it afresh */
    int state;
    int linear; /* thread index within the block */
    uint3 tid;
    const char *file; /* where it waits */
    int line;
    /* the warp operation it waits in */
    int wkind;
    unsigned wmask;
    unsigned long long wval, wres;
    int warg, wwidth;
    unsigned warp_waiting; /* on a warp's lane 0: the lanes of its warp in state F_WARP */
    int bar_result;        /* its last __syncthreads_count/_and/_or result (open_barrier) */
    unsigned spins;
    const char *spin_file; /* its last inter-block point (a deadlock report names it) */
    int spin_line;
    unsigned long long idle_mark; /* the stretch without progress it was last counted in */
};

const size_t STACK_BYTES = 256 * 1024; /* per thread; kernels keep small arrays there */
const int MAX_THREADS = 1024;

extern std::vector<std::vector<fiber *>> g_fiber_sets; /* one set of MAX_THREADS per slot */
extern fiber **g_fibers;                  /* the threads of the block being run: its slot's set */
extern std::vector<char *> g_stack_areas; /* each: MAX_THREADS stacks, each above a guard page */
extern ucontext_t g_template_uc;          /* a getcontext result, copied for each start */
extern jump_buf g_sched_jb;               /* the scheduler's side of resume() */
extern fiber *g_cur;                      /* the running fiber; NULL on the scheduler */
extern bool g_aborted;                    /* a kernel error ended the launch */

/* What a jump back to the scheduler (g_sched_jb) means: g_jump_kind, set before the jump (a
 * __builtin_longjmp carries no value; the fault handler sets JUMP_FAULT, the rest JUMP_YIELD). */
enum { JUMP_YIELD = 1, JUMP_FAULT = 2 };
extern volatile sig_atomic_t g_jump_kind;

/* Continues where __builtin_setjmp saved buf (never returns). Apart from the functions that call
 * __builtin_setjmp, as GCC requires. */
[[noreturn]] void jump_to(jump_buf buf);

void make_fibers(std::vector<fiber *> &fibers, int count);
void resume(fiber *f);
void yield();
[[noreturn]] void fiber_error(cudaError_t err, const char *what);
fiber *running_fiber(const char *what, const char *file, int line);

/* ---- the launch and the running block (blocks.cpp, launch.cpp) ------------------------------- */

struct launch_t {
    const char *name, *file;
    int line;
    dim3 block;
    void (*thunk)(void *);
    void *ctx;
    unsigned long long number;
};
extern launch_t *g_launch;

/* the running block */
extern int g_nthreads, g_ndone, g_nbar;
extern const char *g_bar_file;
extern int g_bar_line;
extern bool g_bar_divergent;
extern int g_bar_result;
extern std::vector<int> g_pool; /* fibers that can run */

/* An inter-block point was reached (block_switch_point): the scheduler may switch blocks. */
extern bool g_switch_req;        /* the fiber that just yielded was at an inter-block point */
extern unsigned g_switch_demote; /* ... where its block drops with probability 1/this (0: never) */

void run_blocks(const dim3 &grid, const dim3 &block, size_t shmem);

} /* namespace rt */
} /* namespace lab_cpu */

#endif /* LAB_CPU_RUNTIME_H */
