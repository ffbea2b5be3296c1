/* fibers.cpp (CPU mode) — each GPU thread as a fiber, and the points where a thread gives the CPU
 * back: barriers, atomics and fences, loops' safe points. Part of CPU mode's runtime (runtime.h
 * lists its files; common/cpu/README.md explains the design).
 *
 * A glibc ucontext (makecontext) starts each fiber on its own stack (STACK_BYTES, above a guard
 * page); from then on the switches are __builtin_setjmp/__builtin_longjmp between the scheduler
 * (resume, called by run_blocks in blocks.cpp) and the fibers (yield): no signal-mask system call
 * (swapcontext makes one each time) and none of the work glibc's _longjmp does. A fiber runs until
 * it reaches __syncthreads, a warp operation (warp.cpp), an inter-block point or its end. A fiber
 * that finds an error leaves for good (fiber_error): the scheduler sees g_aborted and abandons the
 * launch.
 */
#include "runtime.h"

#include <algorithm>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace lab_cpu {
namespace rt {

std::vector<std::vector<fiber *>> g_fiber_sets;
fiber **g_fibers;
std::vector<char *> g_stack_areas;
ucontext_t g_template_uc;
jump_buf g_sched_jb;
volatile sig_atomic_t g_jump_kind = JUMP_YIELD;
fiber *g_cur;
bool g_aborted;

namespace {
ucontext_t g_sched_uc; /* the scheduler's context while enter() starts a fiber */
} /* namespace */

/* Never inlined: GCC refuses a __builtin_longjmp in a function that calls __builtin_setjmp. */
__attribute__((noinline)) void jump_to(jump_buf buf)
{
    __builtin_longjmp(buf, 1);
}

/* An error the running fiber found: report it, then leave the fiber for good (the scheduler sees
 * g_aborted and abandons the launch). */
[[noreturn]] void fiber_error(cudaError_t err, const char *what)
{
    thread_error(err, what);
    g_cur->started = false;
    jump_to(g_sched_jb);
}

namespace {

void fiber_main()
{
    for (;;) {
        g_launch->thunk(g_launch->ctx);
        fiber *f = g_cur;
        f->state = F_DONE;
        g_ndone++;
        lab_cpu::g_progress++;
        if (!__builtin_setjmp(f->jb))
            jump_to(g_sched_jb);
    }
}

/* Starts f on its own stack, or continues it where it yielded. Does not return: f comes back to
 * resume()'s __builtin_setjmp through jump_to. */
[[noreturn]] void enter(fiber *f)
{
    if (f->started)
        jump_to(f->jb);
    f->started = true;
    f->uc = g_template_uc;
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = STACK_BYTES;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, fiber_main, 0);
    swapcontext(&g_sched_uc, &f->uc);
    abort(); /* not reached: fiber_main never returns */
}

} /* namespace */

/* Returns to the scheduler; comes back when the scheduler resumes this fiber. Never inlined: a
 * function that calls __builtin_setjmp saves every callee-saved register, which its callers (the
 * device-side entry points) need not pay for on their other paths. */
__attribute__((noinline)) void yield()
{
    fiber *f = g_cur;
    if (!__builtin_setjmp(f->jb))
        jump_to(g_sched_jb);
}

/* Runs f until it yields, ends or faults. */
__attribute__((noinline)) void resume(fiber *f)
{
    g_cur = f;
    threadIdx = f->tid;
    if (!__builtin_setjmp(g_sched_jb))
        enter(f);
    if (g_jump_kind == JUMP_FAULT) { /* the fault handler jumped here: describe the fault, out of
                                        the handler */
        g_jump_kind = JUMP_YIELD;
        f = g_cur;
        f->started = false;
        report_fault();
    }
    g_cur = NULL;
}

/* The fibers of one resident block's threads, at least count of them, each with its stack above
 * a guard page. The set's area (MAX_THREADS stacks) is mapped at its first call, reserved but not
 * backed, and a fiber is made the first time a block of that many threads runs: each guard page
 * is a mapping of its own, and making all 1,024 of every set up front was most of the system time
 * of a small case's two processes (the judge's and the lab's). The set never reallocates (its
 * capacity is MAX_THREADS), so g_fibers stays valid as it grows. */
void make_fibers(std::vector<fiber *> &fibers, int count)
{
    const size_t per = STACK_BYTES + page_size();
    char *area = fibers.empty() ? NULL : fibers[0]->stack - page_size();
    if (!area) {
        area = (char *)mmap(NULL, per * MAX_THREADS, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (area == MAP_FAILED) {
            fprintf(stderr, "CPU mode: cannot map %zu MiB for thread stacks\n",
                    per * MAX_THREADS >> 20);
            fatal_exit();
        }
        g_stack_areas.push_back(area);
        fibers.reserve(MAX_THREADS);
    }
    for (int i = (int)fibers.size(); i < std::max(count, 1) && i < MAX_THREADS; i++) {
        char *base = area + (size_t)i * per;
        mprotect(base, page_size(), PROT_NONE); /* below the stack: overflow faults */
        fiber *f = new fiber();
        f->stack = base + page_size();
        fibers.push_back(f);
    }
}

/* The running fiber; a barrier or warp operation outside a kernel ends the process. */
fiber *running_fiber(const char *what, const char *file, int line)
{
    if (!g_cur) {
        fprintf(stderr, "CPU mode: %s called outside a kernel at %s\n", what,
                where(file, line).c_str());
        fatal_exit();
    }
    return g_cur;
}

namespace {

/* A block drops to the lowest priority (blocks.cpp) at an inter-block point of a warp's lane 0 (the
 * lanes of a warp reach one together on a GPU: 32 chances would make a long run ahead rare) with
 * probability 1/DEMOTE_WRITE before a write (an atomic, a store: where a publisher can be caught
 * between its value and its flag) and 1/DEMOTE_READ elsewhere (a load, a fence, a loop,
 * __nanosleep). */
const unsigned DEMOTE_WRITE = 4, DEMOTE_READ = 16;

/* An inter-block point of fiber f: back to the scheduler, which may run another block. */
void block_switch_point(fiber *f, const char *file, int line, bool writes)
{
    g_switch_demote = (f->linear & 31) ? 0 : writes ? DEMOTE_WRITE : DEMOTE_READ;
    f->spin_file = file;
    f->spin_line = line;
    f->state = F_READY;
    g_pool.push_back(f->linear);
    g_switch_req = true;
    yield();
}

} /* namespace */
} /* namespace rt */

/* ---- the device-side entry points (lab_cpu.h) ------------------------------------------------ */

using namespace rt;

int block_barrier(int kind, int pred, const char *file, int line)
{
    fiber *f = running_fiber("__syncthreads()", file, line);
    if (g_timed_out)
        timeout_stop();
    if (g_nbar == 0) {
        g_bar_file = file;
        g_bar_line = line;
        g_bar_result = kind == B_AND ? 1 : 0;
    } else if (line != g_bar_line || strcmp(file, g_bar_file) != 0) {
        g_bar_divergent = true;
    }
    if (kind == B_COUNT)
        g_bar_result += pred;
    else if (kind == B_AND)
        g_bar_result = g_bar_result && pred;
    else if (kind == B_OR)
        g_bar_result = g_bar_result || pred;
    f->file = file;
    f->line = line;
    f->state = F_BARRIER;
    f->spins = 0;
    g_nbar++;
    yield();
    return f->bar_result; /* open_barrier's copy: g_bar_result may be the next barrier's */
}

unsigned long long g_progress;
int g_blocks_together;

void spin_point(const void *addr, const char *file, int line, bool writes)
{
    fiber *f = g_cur;
    if (!f)
        return;
    if (g_timed_out)
        timeout_stop();
    if (g_blocks_together && !(addr && shared_holds(addr))) {
        block_switch_point(f, file, line, writes);
        return;
    }
    if (++f->spins % 64 == 0) {
        f->state = F_READY;
        g_pool.push_back(f->linear);
        yield();
    }
}

void loop_poll(const char *file, int line)
{
    if (g_timed_out)
        timeout_stop();
    fiber *f = g_cur;
    if (g_blocks_together && f && ++f->spins % 16 == 0)
        block_switch_point(f, file, line, false);
}

void timeout_stop()
{
    if (g_cur)
        fiber_error(cudaErrorLaunchTimeout, g_timeout_what);
    /* on the scheduler's side (host code of a .cu file does not run during a launch):
     * launch_stopped() reports it */
}

int current_thread()
{
    return g_cur ? g_cur->linear : -1;
}

long long device_clock()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void thread_fence()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

} /* namespace lab_cpu */
