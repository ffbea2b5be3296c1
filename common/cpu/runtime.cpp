/* runtime.cpp (CPU mode) — runs CUDA kernels on the host, one fiber per GPU thread, and provides
 * the runtime API of cuda_runtime_api.h. See common/cpu/README.md for the design and its limits.
 *
 * Scheduling. Up to CPU_RESIDENT_BLOCKS (4) blocks run together, switched only at inter-block
 * points ("blocks that run together" below); a kernel without such points runs block after block.
 * Within a block each
 * thread is a fiber: a glibc ucontext (makecontext) gives it its own stack, and from then on the
 * switches are _setjmp/_longjmp between the scheduler and the fibers (no signal-mask system call,
 * ~30 times faster than swapcontext). A fiber runs until it reaches __syncthreads, a warp operation
 * or its end; the scheduler always picks the next fiber at random among those that can run, from a
 * generator seeded by CPU_SCHED_SEED, the launch number and the block index. A missing barrier
 * therefore shows as a wrong result for some seed, and the same seed gives the same order again.
 *
 * Errors. A barrier that cannot complete (some threads returned, or wait at another barrier) is
 * reported with kernel, block and threads, as is a warp operation some lanes never reach. Every
 * cudaMalloc buffer lies between two inaccessible pages, its end against the upper one, so an
 * access past the end faults at once; the SIGSEGV handler names kernel, block, thread, offset and
 * index. The few bytes of padding around a buffer are filled with a pattern and checked after each
 * kernel. Shared-memory arrays are checked on every subscript (lab_cpu.h). A launch still running
 * after CPU_KERNEL_TIMEOUT seconds (default 120) is stopped and reported. After any of these
 * the kernel is abandoned and the error is sticky, as on a GPU: every later call returns it, and
 * cudaGetErrorString gives the full report.
 */
/* _longjmp from a fiber back to the scheduler's stack is what the fortified longjmp
 * (__longjmp_chk, chosen by _FORTIFY_SOURCE, which some compilers enable by default) refuses as
 * "uninitialized stack frame": this file switches stacks on purpose, so it opts out. */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE
#endif

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "banks.h"
#include "cuda_runtime.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace {

/* ---- errors ---------------------------------------------------------------------------------- */

cudaError_t g_sticky = cudaSuccess; /* a kernel fault: every later call returns it */
cudaError_t g_last = cudaSuccess;   /* the last error, cleared by cudaGetLastError */
char g_report[2048];                /* the full description of g_sticky */

cudaError_t set_error(cudaError_t e)
{
    if (e != cudaSuccess && g_last == cudaSuccess)
        g_last = e;
    return e;
}

/* Every API call starts here: after a kernel fault nothing works any more (as on a GPU). */
#define API_ENTER()                                                                                \
    do {                                                                                           \
        if (g_sticky != cudaSuccess)                                                               \
            return g_sticky;                                                                       \
    } while (0)

/* ---- memory ---------------------------------------------------------------------------------- */

const unsigned char PAD_BYTE = 0xCB; /* fills the padding next to a buffer and fresh buffers */
size_t g_page;

struct allocation {
    char *map; /* the whole mapping: guard page, data pages, guard page */
    size_t map_len;
    char *user;      /* what cudaMalloc returned */
    size_t bytes;    /* what was asked for */
    char *data;      /* first data page */
    size_t data_len; /* data pages */
};
std::map<uintptr_t, allocation> g_allocs; /* by user address */

size_t page_size()
{
    if (!g_page)
        g_page = (size_t)sysconf(_SC_PAGESIZE);
    return g_page;
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
    snprintf(buf, len,
             "byte offset %lld (int index %lld) %s a cudaMalloc buffer of %zu bytes (%zu ints)",
             off, off >= 0 ? off / 4 : -((-off + 3) / 4),
             off < 0 ? "before the start of" : "past the end of", al->bytes, al->bytes / 4);
}

/* ---- fibers and the scheduler ---------------------------------------------------------------- */

enum fiber_state { F_READY, F_BARRIER, F_WARP, F_DONE };

struct fiber {
    jmp_buf jb;    /* where the fiber continues when resumed */
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
    unsigned spins;
    const char *spin_file; /* its last inter-block point (a deadlock report names it) */
    int spin_line;
};

const size_t STACK_BYTES = 256 * 1024; /* per thread; kernels keep small arrays there */
const int MAX_THREADS = 1024;

std::vector<std::vector<fiber *>> g_fiber_sets; /* one set of MAX_THREADS per resident block */
fiber **g_fibers;                  /* the threads of the block being run: its slot's set */
std::vector<char *> g_stack_areas; /* each: MAX_THREADS stacks, each above a guard page */
ucontext_t g_template_uc;          /* a getcontext result, copied for each start */
ucontext_t g_sched_uc;
jmp_buf g_sched_jb;
fiber *g_cur; /* the running fiber; NULL on the scheduler */
bool g_aborted;

/* What a fiber's _longjmp back to the scheduler (g_sched_jb) means. */
enum { JUMP_YIELD = 1, JUMP_FAULT = 2 };

struct launch_t {
    const char *name, *file;
    int line;
    dim3 block;
    void (*thunk)(void *);
    void *ctx;
    unsigned long long number;
};
launch_t *g_launch;
unsigned long long g_launches;
unsigned long long g_seed = 1;
bool g_seed_read, g_seed_printed;
int g_timeout_s = 120;
int g_resident = 4; /* blocks resident at once (CPU_RESIDENT_BLOCKS) */

/* this block */
int g_nthreads, g_ndone, g_nbar;
const char *g_bar_file;
int g_bar_line;
bool g_bar_divergent;
int g_bar_result;
std::vector<int> g_pool; /* fibers that can run */
unsigned long long g_rng;
char *g_dyn;
size_t g_dyn_bytes;
struct shared_reg {
    void *p;
    size_t bytes;
    const char *name;
};
std::vector<shared_reg> g_shared;
std::map<const void *, int> g_func_smem; /* cudaFuncAttributeMaxDynamicSharedMemorySize */

unsigned long long splitmix(unsigned long long &s)
{
    unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void read_settings()
{
    if (g_seed_read)
        return;
    g_seed_read = true;
    const char *s = getenv("CPU_SCHED_SEED");
    if (s && *s)
        g_seed = strtoull(s, NULL, 10);
    const char *t = getenv("CPU_KERNEL_TIMEOUT");
    if (t && *t)
        g_timeout_s = atoi(t);
    const char *r = getenv("CPU_RESIDENT_BLOCKS");
    if (r && *r)
        g_resident = std::max(1, std::min(64, atoi(r)));
}

/* "0..31, 40, 42..63" for a sorted list of thread numbers. */
std::string ranges(const std::vector<int> &v)
{
    std::string out;
    char buf[48];
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1)
            j++;
        if (j == i)
            snprintf(buf, sizeof(buf), "%s%d", out.empty() ? "" : ", ", v[i]);
        else
            snprintf(buf, sizeof(buf), "%s%d..%d", out.empty() ? "" : ", ", v[i], v[j]);
        out += buf;
        i = j + 1;
        if (out.size() > 400) {
            out += ", ...";
            break;
        }
    }
    return out;
}

std::string where(const char *file, int line)
{
    if (!file)
        return "an unknown place";
    const char *slash = strrchr(file, '/');
    char buf[300];
    snprintf(buf, sizeof(buf), "%s:%d", slash ? slash + 1 : file, line);
    return buf;
}

/* "kernel k, block (3,0,0)" */
std::string kernel_and_block()
{
    char buf[400];
    snprintf(buf, sizeof(buf), "kernel %s, block (%u,%u,%u)", g_launch->name, blockIdx.x,
             blockIdx.y, blockIdx.z);
    return buf;
}

/* Records a kernel error: the sticky error, its report (printed once to stderr), the end of the
 * launch. Returns: from a fiber, fiber_error() then leaves the fiber. */
void kernel_error(cudaError_t err, const char *fmt, ...)
{
    char what[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(g_report, sizeof(g_report), "CPU mode: %s (launched at %s; CPU_SCHED_SEED=%llu)", what,
             g_launch ? where(g_launch->file, g_launch->line).c_str() : "?", g_seed);
    fprintf(stderr, "%s\n", g_report);
    fflush(stderr);
    g_sticky = err;
    set_error(err);
    g_aborted = true;
}

/* kernel_error naming the thread threadIdx: the running fiber, or the one that faulted. */
void thread_error(cudaError_t err, const char *what)
{
    kernel_error(err, "%s, thread (%u,%u,%u): %s", kernel_and_block().c_str(), threadIdx.x,
                 threadIdx.y, threadIdx.z, what);
}

/* An error the running fiber found: report it, then leave the fiber for good (the scheduler sees
 * g_aborted and abandons the launch). */
[[noreturn]] void fiber_error(cudaError_t err, const char *what)
{
    thread_error(err, what);
    g_cur->started = false;
    _longjmp(g_sched_jb, JUMP_YIELD);
}

void fiber_main()
{
    for (;;) {
        g_launch->thunk(g_launch->ctx);
        fiber *f = g_cur;
        f->state = F_DONE;
        g_ndone++;
        lab_cpu::g_progress++;
        if (!_setjmp(f->jb))
            _longjmp(g_sched_jb, JUMP_YIELD);
    }
}

/* Returns to the scheduler; comes back when the scheduler resumes this fiber. */
void yield()
{
    fiber *f = g_cur;
    if (!_setjmp(f->jb))
        _longjmp(g_sched_jb, JUMP_YIELD);
}

/* Starts f on its own stack, or continues it where it yielded. Does not return: f comes back to
 * resume()'s _setjmp with a _longjmp. */
[[noreturn]] void enter(fiber *f)
{
    if (f->started)
        _longjmp(f->jb, 1);
    f->started = true;
    f->uc = g_template_uc;
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = STACK_BYTES;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, fiber_main, 0);
    swapcontext(&g_sched_uc, &f->uc);
    abort(); /* not reached: fiber_main never returns */
}

void report_fault();

/* Runs f until it yields, ends or faults. */
void resume(fiber *f)
{
    g_cur = f;
    threadIdx = f->tid;
    switch (_setjmp(g_sched_jb)) {
    case 0:
        enter(f);
    case JUMP_FAULT: /* the fault handler jumped here: describe the fault, out of the handler */
        f->started = false;
        report_fault();
        break;
    default: /* JUMP_YIELD */
        break;
    }
    g_cur = NULL;
}

/* ---- signals ----------------------------------------------------------------------------------
 * A signal can arrive anywhere, inside malloc or stdio too, so the handlers do only what is
 * async-signal-safe: they note what happened, and the report is written in normal code.
 *
 * SIGSEGV, SIGBUS and SIGFPE in a kernel are synchronous faults of the running fiber's
 * instruction. The handler notes the signal and the address and _longjmps to the scheduler
 * (resume), which reports them and abandons the fiber; the fiber is never continued. Outside a
 * kernel the signal takes its default action.
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

const unsigned TIMEOUT_GRACE_S = 2;

struct fault_t {
    int sig;
    const char *addr;
    const char *access; /* "read", "write" or "access" */
};
fault_t g_fault; /* written by the fault handler just before it jumps to resume() */

volatile sig_atomic_t g_watching; /* 1 while a launch runs: the alarm is for it */
char g_timeout_what[400];         /* "still running after N s: ..." */
char g_timeout_head[400];         /* "CPU mode: kernel K" of this launch */
char g_timeout_tail[600];         /* ": <g_timeout_what> (launched at ...; CPU_SCHED_SEED=S)\n" */

} /* namespace */

namespace lab_cpu {
volatile sig_atomic_t g_timed_out;
}

namespace {

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
    bool on_stack = false;
    for (const char *area : g_stack_areas)
        on_stack |= addr >= area && addr < area + (size_t)MAX_THREADS * (STACK_BYTES + page_size());
    if (on_stack) {
        snprintf(what, sizeof(what), "stack overflow (over %zu KiB of local variables?)",
                 STACK_BYTES / 1024);
    } else {
        char where_buf[400];
        describe_address(addr, where_buf, sizeof(where_buf));
        snprintf(what, sizeof(what), "out-of-bounds global memory %s at %s", g_fault.access,
                 where_buf);
    }
    thread_error(cudaErrorIllegalAddress, what);
}

/* SIGSEGV/SIGBUS/SIGFPE: see "signals" above. */
void on_fault(int sig, siginfo_t *si, void *uctx)
{
    if (!g_cur || !g_launch) {
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
    _longjmp(g_sched_jb, JUMP_FAULT);
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

/* The scheduler's safe point: true when the launch must end, after a kernel error or because the
 * watchdog fired (reported here without a thread: none is running). */
bool launch_stopped()
{
    if (lab_cpu::g_timed_out && !g_aborted)
        kernel_error(cudaErrorLaunchTimeout, "%s: %s", kernel_and_block().c_str(), g_timeout_what);
    return g_aborted;
}

/* The fault handler and the watchdog, on a stack of their own (a fiber's may be what overflowed).
 * SA_NODEFER: on_fault leaves by _longjmp, which restores no signal mask, so its signal must not
 * stay blocked. */
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

/* Ends the process after a fatal misuse outside a kernel (the message is already on stderr).
 * _exit, not exit: the harness's atexit check (common/harness.h) would otherwise report the
 * lab's code as having ended the process itself. */
[[noreturn]] void fatal_exit()
{
    fflush(NULL);
    _exit(4);
}

/* MAX_THREADS fibers, each with its stack (the threads of one resident block). */
void make_fibers(std::vector<fiber *> &fibers)
{
    const size_t per = STACK_BYTES + page_size();
    char *area = (char *)mmap(NULL, per * MAX_THREADS, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED) {
        fprintf(stderr, "CPU mode: cannot map %zu MiB for thread stacks\n",
                per * MAX_THREADS >> 20);
        fatal_exit();
    }
    g_stack_areas.push_back(area);
    fibers.resize(MAX_THREADS);
    for (int i = 0; i < MAX_THREADS; i++) {
        char *base = area + (size_t)i * per;
        mprotect(base, page_size(), PROT_NONE); /* below the stack: overflow faults */
        fibers[i] = new fiber();
        fibers[i]->stack = base + page_size();
    }
}

void init_once()
{
    static bool done;
    if (done)
        return;
    done = true;
    read_settings();
    g_fiber_sets.resize(1);
    make_fibers(g_fiber_sets[0]);
    g_fibers = g_fiber_sets[0].data();
    getcontext(&g_template_uc);
    install_handlers();
}

/* Fills the block's shared memory with a pattern: shared memory starts undefined on a GPU. */
void poison_shared()
{
    for (const shared_reg &r : g_shared)
        memset(r.p, PAD_BYTE, r.bytes);
    if (g_dyn_bytes)
        memset(g_dyn, PAD_BYTE, g_dyn_bytes);
}

/* Everyone left waits and nothing can run: say why, and end the launch. */
void report_stuck()
{
    std::vector<int> done, at_bar, at_warp;
    for (int i = 0; i < g_nthreads; i++) {
        const fiber *f = g_fibers[i];
        (f->state == F_DONE ? done : f->state == F_BARRIER ? at_bar : at_warp).push_back(i);
    }
    std::string kb = kernel_and_block();
    if (!at_warp.empty()) {
        const fiber *f = g_fibers[at_warp[0]];
        const int warp = f->linear / 32;
        std::vector<int> missing, waiting;
        for (int l = 0; l < 32; l++) {
            const int t = warp * 32 + l;
            if (!((f->wmask >> l) & 1u) || t >= g_nthreads)
                continue;
            const fiber *g = g_fibers[t];
            if (g->state == F_WARP && g->wmask == f->wmask)
                waiting.push_back(t);
            else
                missing.push_back(t);
        }
        kernel_error(cudaErrorLaunchFailure,
                     "%s: a warp operation (mask 0x%08x) at %s waits for lanes that never reach "
                     "it: threads %s wait, threads %s %s",
                     kb.c_str(), f->wmask, where(f->file, f->line).c_str(), ranges(waiting).c_str(),
                     ranges(missing).c_str(),
                     missing.empty() ? ""
                     : g_fibers[missing[0]]->state == F_DONE
                         ? "have returned"
                         : "wait elsewhere (divergent warp operations)");
        return;
    }
    if (!done.empty()) {
        kernel_error(
            cudaErrorLaunchFailure,
            "%s: __syncthreads() at %s is reached by %zu of %d threads; threads %s returned "
            "without reaching it (an early return before a barrier?); waiting: threads %s",
            kb.c_str(), where(g_bar_file, g_bar_line).c_str(), at_bar.size(), g_nthreads,
            ranges(done).c_str(), ranges(at_bar).c_str());
        return;
    }
    /* divergent: group the waiting threads by barrier */
    std::map<std::string, std::vector<int>> by_site;
    for (int t : at_bar)
        by_site[where(g_fibers[t]->file, g_fibers[t]->line)].push_back(t);
    std::string parts;
    for (auto &kv : by_site) {
        if (!parts.empty())
            parts += "; ";
        parts += "threads " + ranges(kv.second) + " at " + kv.first;
    }
    kernel_error(cudaErrorLaunchFailure,
                 "%s: divergent __syncthreads(): the threads wait at different barriers (%s)",
                 kb.c_str(), parts.c_str());
}

/* Readies every thread of the block blockIdx, in a fresh shuffle of its own. */
void start_block()
{
    const launch_t &L = *g_launch;
    g_nthreads = (int)(L.block.x * L.block.y * L.block.z);
    g_ndone = g_nbar = 0;
    g_bar_divergent = false;
    unsigned long long s =
        g_seed * 0x100000001B3ull ^ (L.number << 32) ^
        ((unsigned long long)blockIdx.x +
         (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z));
    g_rng = splitmix(s);
    poison_shared();
    if (lab_cpu::banks::g_on)
        lab_cpu::banks::block_start(g_nthreads);
    g_pool.clear();
    for (int i = 0; i < g_nthreads; i++) {
        fiber *f = g_fibers[i];
        f->state = F_READY;
        f->linear = i;
        f->tid = uint3{(unsigned)i % L.block.x, ((unsigned)i / L.block.x) % L.block.y,
                       (unsigned)i / (L.block.x * L.block.y)};
        f->spins = 0;
        f->spin_file = NULL;
        f->spin_line = 0;
        g_pool.push_back(i);
    }
}

/* Takes a thread that can run out of the pool, at random. */
int pick_next()
{
    const size_t k = (size_t)(splitmix(g_rng) % g_pool.size());
    const int t = g_pool[k];
    g_pool[k] = g_pool.back();
    g_pool.pop_back();
    return t;
}

/* ---- blocks that run together ------------------------------------------------------------------
 * Up to g_resident blocks of a launch are resident at once, each in a slot with its own threads
 * (a fiber set), its own barrier state, thread order and dynamic shared memory. Which block starts
 * next is picked at random among the next g_resident not yet started, in blockIdx order, so a later
 * block can start, and run, ahead of an earlier one. The scheduler runs the threads of one slot at
 * a time; it may switch to another slot only where blocks can interact: before an atomic or
 * cuda::atomic_ref operation on global memory, at a fence, __nanosleep, and every 16th pass of a
 * loop's safe point (rewrite.py). Which block runs follows priorities, as in PCT (probabilistic
 * concurrency testing): each block gets a random one when it starts, the highest runs, and at an
 * inter-block point the running block may drop below all the others (DEMOTE_WRITE, _READ). So a
 * block is often suspended for a long stretch at one point (between a value and its flag, say)
 * while the others run ahead, which a fair coin at every point would almost never do.
 * A switch saves the running block's static shared memory (every registered __shared__ array and
 * scalar) and puts the other block's back in place, so each block sees only its own. A kernel with
 * none of these points runs block after block, as before. Memory stays sequentially consistent:
 * a switch happens only between whole operations.
 *
 * Deadlock: when DEADLOCK_POINTS inter-block points pass with no progress (no atomic changed
 * global memory, no barrier opened, no thread ended and no block started), the resident blocks
 * only poll: the launch ends with a report naming each one and where its threads wait. */

struct block_slot {
    bool busy;
    uint3 idx;
    int nthreads, ndone, nbar;
    const char *bar_file;
    int bar_line;
    bool bar_divergent;
    int bar_result;
    std::vector<int> pool;
    unsigned long long rng;
    std::vector<char> dyn_store; /* its dynamic shared memory */
    char *dyn;
    std::vector<char> image; /* its static shared memory while another block's is in place */
    long long prio;          /* the highest busy one runs */
};
std::vector<block_slot> g_slots;
int g_loaded = -1;        /* the slot whose state is in the globals; -1 none */
bool g_switch_req;        /* the fiber that just yielded was at an inter-block point */
unsigned g_switch_demote; /* ... where its block drops with probability 1/this (0: never) */
unsigned long long g_sched_rng;
const unsigned long long DEADLOCK_POINTS = 200000;
/* A block drops to the lowest priority at an inter-block point of a warp's lane 0 (the lanes of a
 * warp reach one together on a GPU: 32 chances would make a long run ahead rare) with probability
 * 1/DEMOTE_WRITE before a write (an atomic, a store: where a publisher can be caught between its
 * value and its flag) and 1/DEMOTE_READ elsewhere (a load, a fence, a loop, __nanosleep). */
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

/* Puts the running block's state into its slot (and its static shared memory into the image). */
void save_slot(int k)
{
    block_slot &b = g_slots[k];
    b.idx = blockIdx;
    b.nthreads = g_nthreads;
    b.ndone = g_ndone;
    b.nbar = g_nbar;
    b.bar_file = g_bar_file;
    b.bar_line = g_bar_line;
    b.bar_divergent = g_bar_divergent;
    b.bar_result = g_bar_result;
    b.rng = g_rng;
    std::swap(b.pool, g_pool);
    if (lab_cpu::banks::g_on)
        lab_cpu::banks::save_block(k);
    size_t total = 0;
    for (const shared_reg &r : g_shared)
        total += r.bytes;
    b.image.resize(total);
    size_t off = 0;
    for (const shared_reg &r : g_shared) {
        memcpy(b.image.data() + off, r.p, r.bytes);
        off += r.bytes;
    }
    g_loaded = -1;
}

/* The reverse: slot k's block becomes the running one. A __shared__ array registered after the
 * slot was saved (its first use, by another block) starts with the fill pattern. */
void load_slot(int k)
{
    block_slot &b = g_slots[k];
    blockIdx = b.idx;
    g_nthreads = b.nthreads;
    g_ndone = b.ndone;
    g_nbar = b.nbar;
    g_bar_file = b.bar_file;
    g_bar_line = b.bar_line;
    g_bar_divergent = b.bar_divergent;
    g_bar_result = b.bar_result;
    g_rng = b.rng;
    std::swap(b.pool, g_pool);
    if (lab_cpu::banks::g_on)
        lab_cpu::banks::load_block(k);
    g_fibers = g_fiber_sets[k].data();
    g_dyn = b.dyn;
    size_t off = 0;
    for (const shared_reg &r : g_shared) {
        if (off + r.bytes <= b.image.size())
            memcpy(r.p, b.image.data() + off, r.bytes);
        else
            memset(r.p, PAD_BYTE, r.bytes);
        off += r.bytes;
    }
    g_loaded = k;
}

/* "threads 0..31 spin at scan.cu:190; threads 32..127 wait at __syncthreads() at scan.cu:300" for
 * the block whose threads are fs[0..nthreads). */
std::string describe_threads(fiber **fs, int nthreads)
{
    std::map<std::string, std::vector<int>> groups;
    for (int i = 0; i < nthreads; i++) {
        const fiber *f = fs[i];
        std::string what;
        if (f->state == F_DONE)
            what = "have returned";
        else if (f->state == F_BARRIER)
            what = "wait at __syncthreads() at " + where(f->file, f->line);
        else if (f->state == F_WARP)
            what = "wait in a warp operation at " + where(f->file, f->line);
        else if (f->spin_file)
            what = "spin at " + where(f->spin_file, f->spin_line);
        else
            what = "are ready to run";
        groups[what].push_back(i);
    }
    std::string out;
    for (auto &kv : groups) {
        if (!out.empty())
            out += ", ";
        out += "threads " + ranges(kv.second) + " " + kv.first;
    }
    return out;
}

/* The resident blocks only poll: report each with where its threads are, and end the launch. */
void report_deadlock(unsigned long long finished, unsigned long long not_started, int resident)
{
    if (g_loaded >= 0)
        save_slot(g_loaded);
    std::string parts;
    for (size_t k = 0; k < g_slots.size() && (int)k < resident; k++) {
        const block_slot &b = g_slots[k];
        if (!b.busy)
            continue;
        char head[96];
        snprintf(head, sizeof(head), "%sblock (%u,%u,%u): ", parts.empty() ? "" : "; ", b.idx.x,
                 b.idx.y, b.idx.z);
        parts += head + describe_threads(g_fiber_sets[k].data(), b.nthreads);
    }
    if (parts.size() > 900)
        parts = parts.substr(0, 900) + " ...";
    kernel_error(cudaErrorLaunchFailure,
                 "kernel %s: deadlock: the resident blocks wait and none makes progress (%llu "
                 "inter-block points with no atomic changing global memory, no barrier opening and "
                 "no thread ending): %s. %llu block(s) finished, %llu not started; CPU mode keeps "
                 "%d blocks resident, started in an order the seed picks, so a block that waits "
                 "for one that is not running, or for a value no block publishes, waits forever, "
                 "as on a GPU",
                 g_launch->name, DEADLOCK_POINTS, parts.c_str(), finished, not_started, resident);
}

/* Every block of the grid, up to `resident` at a time, until one is abandoned. */
void run_blocks(const dim3 &grid, size_t shmem)
{
    const unsigned long long total = (unsigned long long)grid.x * grid.y * grid.z;
    int resident = g_resident;
    if ((unsigned long long)resident > total)
        resident = (int)total;
    lab_cpu::g_blocks_together = resident > 1;
    if ((int)g_slots.size() < resident)
        g_slots.resize(resident);
    while ((int)g_fiber_sets.size() < resident) {
        g_fiber_sets.emplace_back();
        make_fibers(g_fiber_sets.back());
    }
    for (int k = 0; k < resident; k++) {
        block_slot &b = g_slots[k];
        b.busy = false;
        b.pool.clear();
        b.image.clear();
        b.dyn_store.assign(shmem + 16, 0); /* 16-byte aligned */
        b.dyn = (char *)(((uintptr_t)b.dyn_store.data() + 15) & ~(uintptr_t)15);
    }
    unsigned long long s = g_seed * 0x9E3779B97F4A7C15ull ^ g_launch->number;
    g_sched_rng = splitmix(s);
    std::vector<unsigned long long> pending(total);
    for (unsigned long long i = 0; i < total; i++)
        pending[i] = i;
    unsigned long long head = 0, finished = 0;
    /* starts the next block in slot k, which is loaded (its globals are the running ones) */
    auto start_next = [&](int k) {
        const unsigned long long window = std::min<unsigned long long>(resident, total - head);
        const unsigned long long j = head + (window > 1 ? splitmix(g_sched_rng) % window : 0);
        std::swap(pending[head], pending[j]);
        const unsigned long long l = pending[head++];
        blockIdx = uint3{(unsigned)(l % grid.x), (unsigned)(l / grid.x % grid.y),
                         (unsigned)(l / ((unsigned long long)grid.x * grid.y))};
        g_slots[k].busy = true;
        g_slots[k].prio = (long long)(splitmix(g_sched_rng) >> 33);
        start_block();
        lab_cpu::g_progress++;
    };
    g_pool.clear();
    for (int k = 0; k < resident; k++) {
        load_slot(k);
        start_next(k);
        if (resident > 1)
            save_slot(k);
    }
    int busy = resident, cur = resident > 1 ? -1 : 0;
    g_switch_req = false;
    unsigned long long idle = 0, seen = lab_cpu::g_progress;
    long long floor = 0; /* below every priority given so far */
    auto highest = [&]() {
        int best = -1;
        for (int k = 0; k < resident; k++)
            if (g_slots[k].busy && (best < 0 || g_slots[k].prio > g_slots[best].prio))
                best = k;
        return best;
    };
    while (busy > 0) {
        if (cur < 0) {
            cur = highest();
            load_slot(cur);
        }
        bool switched = false;
        while (!g_pool.empty() && !switched) {
            resume(g_fibers[pick_next()]);
            if (launch_stopped())
                return;
            if (!g_switch_req)
                continue;
            g_switch_req = false;
            if (lab_cpu::g_progress != seen) {
                seen = lab_cpu::g_progress;
                idle = 0;
            } else if (++idle > DEADLOCK_POINTS) {
                report_deadlock(finished, total - head, resident);
                return;
            }
            if (busy > 1 && g_switch_demote && splitmix(g_sched_rng) % g_switch_demote == 0)
                g_slots[cur].prio = --floor;
            if (busy > 1 && highest() != cur) {
                save_slot(cur);
                cur = -1;
                switched = true;
            }
        }
        if (switched)
            continue;
        if (g_ndone == g_nthreads) { /* the block has ended */
            if (lab_cpu::banks::g_on)
                lab_cpu::banks::flush();
            finished++;
            if (head < total) {
                start_next(cur);
                if (resident > 1 && highest() != cur) {
                    save_slot(cur);
                    cur = -1;
                }
            } else {
                g_slots[cur].busy = false;
                busy--;
                g_loaded = -1;
                cur = resident > 1 ? -1 : 0;
            }
            continue;
        }
        if (g_nbar != g_nthreads || g_bar_divergent) {
            report_stuck();
            return;
        }
        if (lab_cpu::banks::g_on) /* the accesses before a barrier pair up by lane and site */
            lab_cpu::banks::flush();
        g_nbar = 0; /* every thread waits at the same barrier: open it */
        lab_cpu::g_progress++;
        for (int i = 0; i < g_nthreads; i++) {
            g_fibers[i]->state = F_READY;
            g_fibers[i]->spin_file = NULL; /* a deadlock report names only later spins */
            g_pool.push_back(i);
        }
    }
}

/* Checks the padding around every buffer after a kernel: a write there is out of bounds too. */
void check_padding()
{
    for (auto &kv : g_allocs) {
        const allocation &al = kv.second;
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

/* ---- warp operations --------------------------------------------------------------------- */

using namespace lab_cpu; /* the warp_kind names, loop_point() */

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

/* A mask that leaves out the calling lane, or a width that is not a power of two up to 32: an
 * error on a GPU too (undefined behaviour there). */
void check_warp_call(const fiber *f, unsigned mask, int width, const char *file, int line)
{
    const int lane = f->linear & 31;
    char what[300];
    if (!((mask >> lane) & 1u)) {
        snprintf(what, sizeof(what),
                 "warp operation at %s with mask 0x%08x, which leaves out the calling lane %d",
                 where(file, line).c_str(), mask, lane);
        fiber_error(cudaErrorIllegalInstruction, what);
    }
    if (width < 1 || width > 32 || (width & (width - 1))) {
        snprintf(what, sizeof(what), "shuffle width %d at %s is not a power of two up to 32", width,
                 where(file, line).c_str());
        fiber_error(cudaErrorIllegalInstruction, what);
    }
}

/* The lanes of the warp starting at thread base that exist: a block whose size is not a multiple
 * of 32 ends in a warp with fewer lanes. */
unsigned present_lanes(int base)
{
    return g_nthreads - base >= 32 ? 0xffffffffu : (1u << (g_nthreads - base)) - 1u;
}

/* True when every lane of group waits in a warp operation with the same mask. */
bool all_arrived(int base, unsigned group, unsigned mask)
{
    for (int l = 0; l < 32; l++) {
        if (!((group >> l) & 1u))
            continue;
        const fiber *g = g_fibers[base + l];
        if (g->state != F_WARP || g->wmask != mask)
            return false;
    }
    return true;
}

/* The lane whose value lane `lane` receives from a shuffle, by the rules of PTX's shfl.sync: lanes
 * form segments of `width`; an index shuffle wraps within the segment; up, down and xor use the
 * low 5 bits of their argument, and a source past the segment's last lane (or, going up, before
 * its first) gives the lane its own value. xor may read an earlier segment, as on a GPU. */
int shuffle_source(int kind, int lane, int arg, int width)
{
    const int first = lane & ~(width - 1), last = first + width - 1, b = arg & 31;
    switch (kind) {
    case W_SHFL:
        return first + (arg & (width - 1));
    case W_SHFL_UP:
        return lane - b >= first ? lane - b : lane;
    case W_SHFL_DOWN:
        return lane + b <= last ? lane + b : lane;
    case W_SHFL_XOR:
        return (lane ^ b) <= last ? lane ^ b : lane;
    default:
        return lane;
    }
}

/* Every lane of group has arrived: checks that they are at the same kind of operation and returns
 * the ballot of their values. */
unsigned gather_ballot(const fiber *f, int base, unsigned group, const char *file, int line)
{
    unsigned ballot = 0;
    for (int l = 0; l < 32; l++) {
        if (!((group >> l) & 1u))
            continue;
        const fiber *g = g_fibers[base + l];
        if (g->wkind != f->wkind) {
            char what[300];
            snprintf(
                what, sizeof(what),
                "lanes of warp %d meet at different warp operations: lane %d at %s, lane %d at %s",
                base / 32, f->linear & 31, where(file, line).c_str(), l,
                where(g->file, g->line).c_str());
            fiber_error(cudaErrorIllegalInstruction, what);
        }
        if (g->wval)
            ballot |= 1u << l;
    }
    return ballot;
}

/* Gives each lane of group its result, and the lanes that waited back to the scheduler. */
void complete_warp_op(const fiber *f, int base, unsigned group, unsigned ballot)
{
    for (int l = 0; l < 32; l++) {
        if (!((group >> l) & 1u))
            continue;
        fiber *g = g_fibers[base + l];
        switch (f->wkind) {
        case W_BALLOT:
            g->wres = ballot;
            break;
        case W_ANY:
            g->wres = ballot != 0;
            break;
        case W_ALL:
            g->wres = ballot == group;
            break;
        case W_SYNC:
            g->wres = 0;
            break;
        default: {
            int src = shuffle_source(f->wkind, l, g->warg, g->wwidth);
            if (!((group >> src) & 1u))
                src = l; /* outside the mask: undefined on a GPU; the lane's own value here */
            g->wres = g_fibers[base + src]->wval;
        }
        }
        if (g != f) {
            g->state = F_READY;
            g_pool.push_back(base + l);
        }
    }
}

} /* namespace */

/* ---- the device-side entry points (lab_cpu.h) ------------------------------------------------ */

namespace lab_cpu {

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
    return g_bar_result; /* nobody changes it before every thread has left this barrier */
}

/* A lane arrives and waits; the last lane of the mask to arrive computes every lane's result. */
unsigned long long warp_op(int kind, unsigned mask, unsigned long long value, int arg, int width,
                           const char *file, int line)
{
    fiber *f = running_fiber("a warp operation", file, line);
    if (g_timed_out)
        timeout_stop();
    check_warp_call(f, mask, width, file, line);
    f->wkind = kind;
    f->wmask = mask;
    f->wval = value;
    f->warg = arg;
    f->wwidth = width;
    f->file = file;
    f->line = line;
    f->state = F_WARP;
    f->spins = 0;
    const int base = f->linear & ~31;
    const unsigned group = mask & present_lanes(base);
    if (!all_arrived(base, group, mask)) {
        yield(); /* a later lane completes the operation, f's result included */
        return f->wres;
    }
    complete_warp_op(f, base, group, gather_ballot(f, base, group, file, line));
    f->state = F_READY;
    return f->wres;
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
    if (g_blocks_together && !(addr && in_shared(addr))) {
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

long long device_clock()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void timeout_stop()
{
    if (g_cur)
        fiber_error(cudaErrorLaunchTimeout, g_timeout_what);
    /* on the scheduler's side (host code of a .cu file does not run during a launch):
     * launch_stopped() reports it */
}

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

int current_thread()
{
    return g_cur ? g_cur->linear : -1;
}

bool in_shared(const void *p)
{
    for (const shared_reg &r : g_shared)
        if (r.p <= p && p < (const void *)((const char *)r.p + r.bytes))
            return true;
    return g_dyn && g_dyn <= p && p < (const void *)(g_dyn + g_dyn_bytes);
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
void thread_fence()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

} /* namespace lab_cpu */

/* ---- launches ---------------------------------------------------------------------------- */

namespace {

/* The seed, once per process on stderr (CPU_SCHED_QUIET=1 hides it). */
void print_seed_once()
{
    if (g_seed_printed)
        return;
    g_seed_printed = true;
    const char *quiet = getenv("CPU_SCHED_QUIET");
    if (!quiet || strcmp(quiet, "1") != 0)
        fprintf(stderr,
                "CPU mode: kernels run on the CPU, thread order between barriers shuffled with "
                "CPU_SCHED_SEED=%llu\n",
                g_seed);
}

/* A launch a GPU would refuse: says why on stderr, sets the error a GPU gives, returns false. */
bool launch_ok(const char *name, const char *file, int line, const void *fn,
               const lab_cpu::launch_config &cfg)
{
    const unsigned long long threads = (unsigned long long)cfg.block.x * cfg.block.y * cfg.block.z;
    const unsigned long long blocks = (unsigned long long)cfg.grid.x * cfg.grid.y * cfg.grid.z;
    if (threads == 0 || threads > (unsigned long long)MAX_THREADS || cfg.block.z > 64 ||
        blocks == 0 || cfg.grid.y > 65535 || cfg.grid.z > 65535) {
        fprintf(stderr,
                "CPU mode: kernel %s launched at %s with grid (%u,%u,%u) and block (%u,%u,%u): "
                "invalid configuration\n",
                name, where(file, line).c_str(), cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x,
                cfg.block.y, cfg.block.z);
        set_error(cudaErrorInvalidConfiguration);
        return false;
    }
    /* fn is null for a kernel template deduced at the launch (lab_cpu.h, launch_named): its
     * specialization's address is unknown, so the largest opt-in of any kernel applies */
    size_t smem_limit = 48 * 1024;
    auto attr = g_func_smem.find(fn);
    if (attr != g_func_smem.end())
        smem_limit = (size_t)attr->second;
    else if (!fn)
        for (const auto &kv : g_func_smem)
            smem_limit = std::max(smem_limit, (size_t)kv.second);
    if (cfg.shmem > smem_limit) {
        fprintf(stderr,
                "CPU mode: kernel %s launched at %s asks for %zu bytes of dynamic shared memory, "
                "over the %zu allowed (cudaFuncSetAttribute raises it to 227 KiB)\n",
                name, where(file, line).c_str(), cfg.shmem, smem_limit);
        set_error(cudaErrorInvalidValue);
        return false;
    }
    return true;
}

} /* namespace */

namespace lab_cpu {

void run_kernel(const char *name, const char *file, int line, const void *fn,
                const launch_config &cfg, void (*thunk)(void *), void *ctx)
{
    init_once();
    if (g_sticky != cudaSuccess)
        return;
    print_seed_once();
    if (!launch_ok(name, file, line, fn, cfg))
        return;
    launch_t L{name, file, line, cfg.block, thunk, ctx, ++g_launches};
    g_launch = &L;
    gridDim = cfg.grid;
    blockDim = cfg.block;
    g_dyn_bytes = cfg.shmem; /* each resident block has its own (run_blocks) */
    g_aborted = false;
    if (banks::g_on)
        banks::launch_begin(name);
    watchdog_start();
    run_blocks(cfg.grid, cfg.shmem);
    g_blocks_together = 0; /* host code after the launch is no inter-block point */
    watchdog_stop();
    if (g_aborted) /* fibers stopped mid-kernel start afresh next time */
        for (auto &set : g_fiber_sets)
            for (fiber *f : set)
                f->started = false;
    else
        check_padding();
    g_launch = NULL;
    g_dyn = NULL;
    g_dyn_bytes = 0;
}

} /* namespace lab_cpu */

/* ---- the runtime API ------------------------------------------------------------------------- */

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
    char *map = (char *)mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
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
    /* fresh device memory holds no useful values: a pattern, not zeros, so code that forgets to
     * initialise shows it */
    memset(al.data, PAD_BYTE, data_len);
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
    munmap(it->second.map, it->second.map_len);
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
    memmove(dst, src, bytes);
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
    memset(ptr, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t)
{
    return cudaMemset(ptr, value, bytes);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    API_ENTER();
    /* /proc/meminfo, opened by the first call (the harness's, before the sandbox of graded
     * runs, which lets no file be opened) and read again from its start by every later one */
    static int fd = -1;
    double avail = 0, total = 0, kb;
    char buf[8192];
    if (fd < 0)
        fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    const ssize_t got = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
    if (got > 0) {
        buf[got] = '\0';
        const char *line = strstr(buf, "MemAvailable:");
        if (line && sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            avail = kb * 1024;
        line = strstr(buf, "MemTotal:");
        if (line && sscanf(line, "MemTotal: %lf kB", &kb) == 1)
            total = kb * 1024;
    }
    if (free_bytes)
        *free_bytes = avail > 0 ? (size_t)avail : (size_t)1 << 32;
    if (total_bytes)
        *total_bytes = total > 0 ? (size_t)total : (size_t)1 << 32;
    return cudaSuccess;
}

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
