/* signals.cpp (CPU mode) — the fault handler (SIGSEGV, SIGBUS, SIGFPE in a kernel) and the
 * watchdog (SIGALRM, CPU_KERNEL_TIMEOUT). Part of CPU mode's runtime (runtime.h lists its files;
 * common/cpu/README.md explains the design).
 *
 * A signal can arrive anywhere, inside malloc or stdio too, so the handlers do only what is
 * async-signal-safe: they note what happened, and the report is written in normal code.
 *
 * SIGSEGV, SIGBUS and SIGFPE in a kernel are synchronous faults of the running fiber's
 * instruction. The handler notes the signal and the address and jumps to the scheduler
 * (resume), which reports them and abandons the fiber; the fiber is never continued. Outside a
 * kernel the signal takes its default action, after one line on stderr when the address is in
 * device memory closed to host code (memory.cpp): the lab's host code dereferenced a device
 * pointer, which on a GPU faults the same way.
 *
 * SIGALRM is the watchdog (CPU_KERNEL_TIMEOUT). Its first delivery only sets g_timed_out and
 * sets the alarm again, TIMEOUT_GRACE_S later. The flag is polled at every safe point: the
 * condition of every loop in a rewritten .cu file (rewrite.py), every barrier, warp operation and
 * atomic, and the scheduler between fibers; there the timeout is reported like any kernel error
 * (sticky cudaErrorLaunchTimeout, the harness's result line, exit code 4). If the alarm fires a
 * second time, no safe point came in the grace period: the kernel spins where nothing polls (a
 * goto loop, a loop in a header rewrite.py does not see). Then the only way out is from the
 * handler, and it does only what is safe there: it writes the same report, built from text
 * prepared at the launch with no stdio and no malloc, with write(2), and ends the process with
 * _exit(4) (the harness's exit code for a CUDA error; its result line is not printed). */

#include "runtime.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

namespace lab_cpu {
namespace rt {

char g_timeout_what[400]; /* "still running after N s: ..." */

namespace {

const unsigned TIMEOUT_GRACE_S = 2;

struct fault_t {
    int sig;
    const char *addr;
    const char *access; /* "read", "write" or "access" */
};
fault_t g_fault; /* written by the fault handler just before it jumps to resume() */

volatile sig_atomic_t g_watching; /* 1 while a launch runs: the alarm is for it */
char g_timeout_head[400];         /* "CPU mode: kernel K" of this launch */
char g_timeout_tail[600];         /* ": <g_timeout_what> (launched at ...; CPU_SCHED_SEED=S)\n" */

} /* namespace */
} /* namespace rt */

volatile sig_atomic_t g_timed_out;

namespace rt {

/* Describes the fault g_fault of the thread threadIdx (normal code, after the handler). */
void report_fault()
{
    char what[600];
    if (g_fault.sig == SIGFPE) {
        thread_error(cudaErrorIllegalInstruction,
                     "integer division by zero (a GPU gives an unspecified value; the CPU traps)");
        return;
    }
    const char *addr = g_fault.addr;
    bool on_stack = false, constant = false;
    for (const char *area : g_stack_areas)
        on_stack |= addr >= area && addr < area + (size_t)MAX_THREADS * (STACK_BYTES + page_size());
    if (on_stack) {
        snprintf(what, sizeof(what), "stack overflow (over %zu KiB of local variables?)",
                 STACK_BYTES / 1024);
    } else if (char var[300]; device_variable_at(addr, var, sizeof(var), &constant) && constant) {
        snprintf(what, sizeof(what),
                 "a store to %s, which kernels may only read (nvcc refuses a direct store)", var);
    } else {
        char where_buf[400];
        describe_address(addr, where_buf, sizeof(where_buf));
        snprintf(what, sizeof(what), "out-of-bounds global memory %s at %s", g_fault.access,
                 where_buf);
    }
    thread_error(cudaErrorIllegalAddress, what);
}

namespace {

/* SIGSEGV/SIGBUS/SIGFPE: see "signals" above. */
void on_fault(int sig, siginfo_t *si, void *uctx)
{
    if (!g_cur || !g_launch) {
        if (sig == SIGSEGV && in_closed_device_memory(si->si_addr)) {
            static const char why[] =
                "CPU mode: host code read or wrote device memory (a cudaMalloc buffer) outside a "
                "kernel: a device pointer dereferenced on the host, which faults on a GPU too; "
                "only kernels may touch device memory\n";
            static char var[300], line[700];
            bool constant;
            const char *text = why;
            size_t len = sizeof(why) - 1;
            if (device_variable_at(si->si_addr, var, sizeof(var), &constant)) {
                /* the process ends here: formatting is safe enough, and names the variable */
                const int k = snprintf(line, sizeof(line),
                                       "CPU mode: host code read or wrote %s outside a kernel: on "
                                       "a GPU host code has its own copy of a device variable, "
                                       "which no kernel reads or writes (nvcc refuses such code); "
                                       "pass the value to the kernel as a parameter\n",
                                       var);
                text = line;
                len = k > 0 ? (size_t)k : 0;
            }
            ssize_t ignored = write(2, text, len);
            (void)ignored;
        }
        signal(sig, SIG_DFL);
        return; /* the faulting instruction runs again and the default action ends the process */
    }
    g_fault.sig = sig;
    g_fault.addr = (const char *)si->si_addr;
    g_fault.access = "access";
#if defined(__x86_64__) && defined(REG_ERR)
    g_fault.access = (((ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
#else
    (void)uctx;
#endif
    g_jump_kind = JUMP_FAULT;
    jump_to(g_sched_jb);
}

/* Async-signal-safe text for the watchdog's last resort: no stdio, no malloc. */
struct signal_text {
    char buf[1600];
    size_t len;
    void add(const char *s)
    {
        while (*s && len < sizeof(buf))
            buf[len++] = *s++;
    }
    void add(unsigned v)
    {
        char digits[10];
        int n = 0;
        do
            digits[n++] = (char)('0' + v % 10);
        while (v /= 10);
        while (n && len < sizeof(buf))
            buf[len++] = digits[--n];
    }
    void add(uint3 v)
    {
        add("(");
        add(v.x);
        add(",");
        add(v.y);
        add(",");
        add(v.z);
        add(")");
    }
};

/* SIGALRM: see "signals" above. */
void on_alarm(int)
{
    if (!g_watching)
        return;
    if (!lab_cpu::g_timed_out) {
        lab_cpu::g_timed_out = 1;
        alarm(TIMEOUT_GRACE_S);
        return;
    }
    signal_text t;
    t.len = 0;
    t.add(g_timeout_head);
    t.add(", block ");
    t.add(blockIdx);
    if (g_cur) {
        t.add(", thread ");
        t.add(threadIdx);
    }
    t.add(g_timeout_tail);
    t.add("CPU mode: cudaErrorLaunchTimeout: the kernel reached no point where CPU mode can stop "
          "it in ");
    t.add(TIMEOUT_GRACE_S);
    t.add(" more seconds (a loop rewrite.py does not see: a goto, or a header file?); the process "
          "ends here with exit code 4\n");
    ssize_t ignored = write(STDERR_FILENO, t.buf, t.len);
    (void)ignored;
    _exit(4);
}

} /* namespace */

/* Prepares the watchdog's text for this launch and starts it (normal code: snprintf is fine). */
void watchdog_start()
{
    if (g_timeout_s <= 0)
        return;
    if (!g_timeout_what[0])
        snprintf(g_timeout_what, sizeof(g_timeout_what),
                 "still running after %d s: a spin-wait that never ends? "
                 "(CPU_KERNEL_TIMEOUT=seconds sets the limit)",
                 g_timeout_s);
    snprintf(g_timeout_head, sizeof(g_timeout_head), "CPU mode: kernel %s", g_launch->name);
    snprintf(g_timeout_tail, sizeof(g_timeout_tail), ": %s (launched at %s; CPU_SCHED_SEED=%llu)\n",
             g_timeout_what, where(g_launch->file, g_launch->line).c_str(), g_seed);
    lab_cpu::g_timed_out = 0;
    g_watching = 1;
    alarm((unsigned)g_timeout_s);
}

void watchdog_stop()
{
    alarm(0);
    g_watching = 0;
    lab_cpu::g_timed_out = 0; /* an alarm that came after the last block: the kernel did finish */
}

/* The fault handler and the watchdog, on a stack of their own (a fiber's may be what overflowed).
 * SA_NODEFER: on_fault leaves by jump_to (__builtin_longjmp), which restores no signal mask, so its
 * signal must not stay blocked. */
void install_handlers()
{
    static char altstack[64 * 1024];
    stack_t ss;
    ss.ss_sp = altstack;
    ss.ss_size = sizeof(altstack);
    ss.ss_flags = 0;
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    struct sigaction al;
    memset(&al, 0, sizeof(al));
    al.sa_handler = on_alarm;
    al.sa_flags = SA_ONSTACK | SA_RESTART;
    sigemptyset(&al.sa_mask);
    sigaction(SIGALRM, &al, NULL);
}

} /* namespace rt */
} /* namespace lab_cpu */
