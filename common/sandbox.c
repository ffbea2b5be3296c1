/* sandbox.c — the seccomp filter of graded runs (sandbox.h), built with libseccomp.
 *
 * An allowlist: what the CUDA runtime (and CPU mode's fibers) were measured to need once the
 * context, the modules and the harness's buffers exist, plus what a computing program needs
 * (memory, time, futexes, its own output). Everything else traps to a SIGSYS handler that names
 * the call and ends the process with LAB_EXIT_SANDBOX. Notable limits and why:
 *   clone      threads only (CLONE_THREAD): the runtime may start helper threads; processes no
 *   clone3     refused with ENOSYS, so glibc falls back to clone (clone3's flags sit in memory
 *              a filter cannot read)
 *   mmap, mprotect   never PROT_EXEC: no code is written at run time (a patched timer, say)
 *   open, openat, creat, openat2, name_to_handle_at, open_by_handle_at
 *              no file at all where the runtime opens none once the filter is in (OPEN_PATHS:
 *              measured by grader/tools/measure_opens.py; CPU mode opens none): the handler
 *              names the call and the path ("the lab's code opened /autograder/... (openat):
 *              graded runs may not open files"). A filter cannot read a path, so where the
 *              runtime does open some, read-only open/openat stay allowed and Landlock (when the
 *              kernel has it) limits reading to those paths; the grader's uid drop (an
 *              unprivileged run user that cannot read the course or the grader's folders) is the
 *              guard that holds everywhere. Until a mode is measured (OPEN_MEASURED 0), read-only
 *              opens are allowed as before and the uid drop alone keeps the course out of reach.
 *   kill, tgkill     only this process: abort() still works, other processes cannot be reached
 *   rt_sigaction     any signal but SIGSYS, so the handler below stays in place
 *   prctl            names of threads only
 *   shutdown         compute-sanitizer's code in the process closes its socket at exit
 * Absent on purpose: fork, vfork, execve, execveat, setsid, setpgid, ptrace, process_vm_*,
 * socket, connect, unlink, rename, truncate, dup2/dup3 (an fd cannot be moved over the report
 * channel), memfd_create, seccomp, personality, chdir, mount, and the rest.
 *
 * Measuring (LAB_SANDBOX_TRACE_OPEN=1 in the environment, read before the harness empties it):
 * every open-family call traps too, and the handler prints "harness: sandbox-trace: <call>
 * <path> flags=0x..", then makes the call itself (read-only ones only; the filter lets the
 * handler's own call through by a random cookie in an argument the call does not have) and
 * returns its result, so the run goes on and every path shows. grader/tools/measure_opens.py
 * runs every lab's reference that way and tabulates the paths.
 *
 * Under compute-sanitizer (whose code runs inside the process and, to report an error, reads
 * files and their metadata: lstat, ...) the filter is the other way round: everything is allowed
 * except the calls named above as absent on purpose and the same limits on clone, memory, files
 * (no file opened for writing) and signals (add_denials). The lab gains nothing there: only the
 * sanitizer's verdict comes from such runs, and the uid drop keeps the course unreadable.
 *
 * Size: about 500 lines, over the house's 400, because an allowlist is read whole: the rules, the
 * SIGSYS handler that names a refused call and the measured OPEN_PATHS must be checked against
 * each other, and most lines are the list itself with why each call is there.
 */
#define _GNU_SOURCE
#include "sandbox.h"
#include "contract.h"

#include <stdio.h>
#include <string.h>

#ifdef LAB_HAVE_SECCOMP
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<linux/landlock.h>) && defined(__NR_landlock_create_ruleset)
#include <linux/landlock.h>
#define LAB_HAVE_LANDLOCK 1
#endif
#endif

#define MAX_SYSCALL 512
static const char *g_names[MAX_SYSCALL]; /* resolved before the filter, read by the handler */

/* ---- files ------------------------------------------------------------------------------ */

/* What the runtime opens once the filter is in, per mode, as grader/tools/measure_opens.py
 * measured it (every lab's reference: a correctness case, a many-calls case, a timed run). A
 * path ending in '/' stands for everything beneath it. OPEN_MEASURED 0: not measured yet, so
 * read-only opens stay allowed (the grader's uid drop keeps the course out of reach). */
#ifdef LAB_CPU_MODE
#define OPEN_MEASURED 1 /* 2 cores, CPU mode, labs 01-10: no open after the filter */
static const char *const OPEN_PATHS[] = {NULL};
#else
/* the GPU runtime, 2026-11-25 on an H100 (CUDA 13, driver of the device machine), labs 01-10,
 * 40 runs as the run user nobody: no open after the filter */
#define OPEN_MEASURED 1
static const char *const OPEN_PATHS[] = {NULL};
#endif

/* The calls that open a file: where the path and the flags are among their arguments, and an
 * argument the call does not have, for the trace mode's cookie (-1: none). */
typedef struct {
    const char *name;
    int path_arg, flags_arg, cookie_arg;
    int nr; /* resolved before the filter */
} open_call;
static open_call g_open_calls[] = {
    {"open", 0, 1, 3, -1},
    {"openat", 1, 2, 4, -1},
    {"creat", 0, -1, 2, -1},
    {"openat2", 1, -1, 4, -1},
    {"name_to_handle_at", 1, -1, 5, -1},
    {"open_by_handle_at", -1, 2, 3, -1},
};
#define N_OPEN_CALLS (sizeof(g_open_calls) / sizeof(g_open_calls[0]))
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)

static int g_trace_opens; /* LAB_SANDBOX_TRACE_OPEN: log every open-family call, then make it */
static long g_cookie;     /* trace mode: the argument that lets the handler's own call through */
static int g_probe[2] = {-1, -1}; /* a pipe the handler copies a path through (see copy_path) */
static volatile int g_probe_lock;

void lab_sandbox_trace_opens(int on)
{
    g_trace_opens = on;
}

/* The arguments of the trapped system call, from the signal's context; 0 where the
 * architecture is not known here. */
static int call_args(void *ctx, unsigned long a[6])
{
#if defined(__x86_64__)
    const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
    a[0] = (unsigned long)g[REG_RDI];
    a[1] = (unsigned long)g[REG_RSI];
    a[2] = (unsigned long)g[REG_RDX];
    a[3] = (unsigned long)g[REG_R10];
    a[4] = (unsigned long)g[REG_R8];
    a[5] = (unsigned long)g[REG_R9];
    return 1;
#elif defined(__aarch64__)
    for (int i = 0; i < 6; i++)
        a[i] = (unsigned long)((ucontext_t *)ctx)->uc_mcontext.regs[i];
    return 1;
#else
    (void)ctx;
    (void)a;
    return 0;
#endif
}

/* Makes the trapped call return v (trace mode: the result of the handler's own call). */
static void set_return(void *ctx, long v)
{
#if defined(__x86_64__)
    ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RAX] = (greg_t)v;
#elif defined(__aarch64__)
    ((ucontext_t *)ctx)->uc_mcontext.regs[0] = (unsigned long long)v;
#else
    (void)ctx;
    (void)v;
#endif
}

/* Copies the string at addr (the lab's pointer, maybe a bad one) into buf one byte at a time
 * through a pipe: write(2) fails with EFAULT where reading the byte would crash the handler. */
static void copy_path(unsigned long addr, char *buf, size_t cap)
{
    size_t i = 0;
    char c;
    while (__atomic_test_and_set(&g_probe_lock, __ATOMIC_ACQUIRE))
        ;
    for (; addr && g_probe[0] >= 0 && i + 1 < cap; i++) {
        if (write(g_probe[1], (const char *)addr + i, 1) != 1 || read(g_probe[0], &c, 1) != 1 ||
            c == '\0')
            break;
        buf[i] = c;
    }
    __atomic_clear(&g_probe_lock, __ATOMIC_RELEASE);
    if (i == 0 && cap > 2)
        memcpy(buf, "?", 2);
    else
        buf[i] = '\0';
}

/* Writes s to stderr with write(2) alone: this runs in a signal handler. */
static void say(const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t k = write(STDERR_FILENO, s, len);
        if (k <= 0)
            return;
        s += k;
        len -= (size_t)k;
    }
}

/* Writes u to stderr in the given base (10 or 16). */
static void say_num(unsigned long u, unsigned base)
{
    char num[24];
    int i = (int)sizeof(num) - 1;
    num[i] = '\0';
    do {
        num[--i] = "0123456789abcdef"[u % base];
        u /= base;
    } while (u && i > 0);
    say(num + i);
}

/* An open-family call trapped: in trace mode, logged and (read-only open/openat) made by the
 * handler, its result returned to the caller; otherwise refused, naming the call and the path. */
static void on_open(const open_call *oc, void *ctx)
{
    unsigned long a[6] = {0};
    char path[512] = "?";
    const int have = call_args(ctx, a);
    if (have && oc->path_arg >= 0)
        copy_path(a[oc->path_arg], path, sizeof(path));
    const unsigned long flags = have && oc->flags_arg >= 0 ? a[oc->flags_arg] : 0;
    const int writes = strcmp(oc->name, "creat") == 0 || (flags & WRITE_FLAGS) != 0 ||
                       strcmp(oc->name, "openat2") == 0; /* its flags sit in memory */
    if (g_trace_opens) {
        const int saved = errno;
        say("harness: sandbox-trace: ");
        say(oc->name);
        say(" ");
        say(path);
        say(" flags=0x");
        say_num(flags, 16);
        say("\n");
        if (!writes && have && oc->flags_arg >= 0 && oc->path_arg >= 0) {
            a[oc->cookie_arg] = (unsigned long)g_cookie;
            const long r = syscall(oc->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
            set_return(ctx, r < 0 ? -(long)errno : r);
            errno = saved;
            return;
        }
        if (!writes) { /* name_to_handle_at, open_by_handle_at: not made, "not supported" */
            set_return(ctx, -ENOSYS);
            errno = saved;
            return;
        }
    }
    say("harness: sandbox: the lab's code opened ");
    say(path);
    say(" (");
    say(oc->name);
    say(writes ? ", for writing" : "");
    say("): graded runs may not open files: exit code 9\n");
    _exit(LAB_EXIT_SANDBOX);
}

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
    const int nr = info->si_syscall;
    (void)sig;
    for (size_t k = 0; k < N_OPEN_CALLS; k++)
        if (g_open_calls[k].nr >= 0 && nr == g_open_calls[k].nr) {
            on_open(&g_open_calls[k], ctx);
            return;
        }
    say("harness: sandbox: the lab's code made a system call that graded runs do not allow: ");
    say(nr >= 0 && nr < MAX_SYSCALL && g_names[nr] ? g_names[nr] : "?");
    say(" (system call ");
    say_num(nr < 0 ? 0u : (unsigned)nr, 10);
    say("); lab code may only compute, not start processes, write files or change memory "
        "protections: exit code 9\n");
    _exit(LAB_EXIT_SANDBOX);
}

/* Names of the system calls, for the handler's message, and the numbers of the open-family
 * calls (resolved now: the handler cannot allocate). */
static void resolve_names(void)
{
    for (int nr = 0; nr < MAX_SYSCALL; nr++)
        if (!g_names[nr])
            g_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    for (size_t k = 0; k < N_OPEN_CALLS; k++) {
        const int nr = seccomp_syscall_resolve_name(g_open_calls[k].name);
        g_open_calls[k].nr = nr >= 0 ? nr : -1; /* no such call here (open on arm64) */
    }
}

/* The open-family rules of the allowlist: trace mode lets through only the handler's own calls
 * (the cookie); a mode measured to open nothing lets none through (they trap to on_open); else
 * read-only open/openat (Landlock, limit_reads, narrows them to OPEN_PATHS where it can). */
static int add_open_rules(scmp_filter_ctx ctx)
{
    int rc = 0;
    if (g_trace_opens) {
        for (size_t k = 0; k < N_OPEN_CALLS; k++) {
            const open_call *oc = &g_open_calls[k];
            if (oc->nr >= 0 && oc->path_arg >= 0 && oc->flags_arg >= 0)
                rc |= seccomp_rule_add(
                    ctx, SCMP_ACT_ALLOW, oc->nr, 1,
                    SCMP_CMP((unsigned)oc->cookie_arg, SCMP_CMP_EQ, (scmp_datum_t)g_cookie));
        }
        return rc;
    }
    if (OPEN_MEASURED && !OPEN_PATHS[0])
        return 0;
    const scmp_datum_t write_flags = WRITE_FLAGS;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                           SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, 0));
    if (seccomp_syscall_resolve_name("open") >= 0)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, 0));
    return rc;
}

#ifdef LAB_HAVE_LANDLOCK
/* Where OPEN_PATHS is not empty: limits reading files (and writing any) to those paths with
 * Landlock, for this thread and the threads it starts (Landlock binds the calling thread; the
 * runtime's helper threads started before run no lab code, and the seccomp filter and the uid
 * drop bind them too). Returns 1 when in force, 0 when the kernel has no Landlock (the uid drop
 * is the guard then), -1 when it failed. */
static int limit_reads(void)
{
    const long abi =
        syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        return 0;
    struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE |
                                                              LANDLOCK_ACCESS_FS_READ_DIR |
                                                              LANDLOCK_ACCESS_FS_WRITE_FILE};
    const int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
    if (rs < 0)
        return -1;
    int rc = 0;
    for (size_t k = 0; OPEN_PATHS[k] && rc == 0; k++) {
        const int fd = open(OPEN_PATHS[k], O_PATH | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue; /* not on this machine */
        struct landlock_path_beneath_attr pb = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE,
                                                .parent_fd = fd};
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
            pb.allowed_access |= LANDLOCK_ACCESS_FS_READ_DIR;
        rc = syscall(__NR_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == 0 ? 0 : -1;
        close(fd);
    }
    if (rc == 0)
        rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                     syscall(__NR_landlock_restrict_self, rs, 0) == 0
                 ? 1
                 : -1;
    close(rs);
    return rc;
}
#else
static int limit_reads(void)
{
    return 0; /* built where the headers have no Landlock: the uid drop is the guard */
}
#endif

#define ALLOW(name) rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(name), 0)
#define ALLOW_IF(name, ...) rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(name), __VA_ARGS__)

/* The allowlist (the header comment says why each limit is there). */
static int add_rules(scmp_filter_ctx ctx)
{
    const scmp_datum_t self = (scmp_datum_t)getpid();
    int rc = add_open_rules(ctx);

    /* output, and reading what is already open */
    /* one group of calls a line, as a table */
    // clang-format off
    ALLOW(read); ALLOW(readv); ALLOW(pread64); ALLOW(write); ALLOW(writev); ALLOW(pwrite64);
    ALLOW_IF(recvmsg, 1, SCMP_A0(SCMP_CMP_EQ, 3)); /* a judge's channel (port_wire.h) */
    ALLOW(close); ALLOW(shutdown); ALLOW(fstat); ALLOW(newfstatat); ALLOW(statx); ALLOW(lseek); ALLOW(fcntl);
    ALLOW(readlink); ALLOW(readlinkat); ALLOW(access); ALLOW(faccessat); ALLOW(faccessat2);
    ALLOW(getdents64);
    /* the driver */
    ALLOW(ioctl); ALLOW(poll); ALLOW(ppoll); ALLOW(select); ALLOW(pselect6);
    ALLOW(epoll_wait); ALLOW(epoll_pwait); ALLOW(epoll_ctl); ALLOW(eventfd2);
    /* memory, never executable */
    ALLOW_IF(mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    ALLOW_IF(mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    ALLOW(munmap); ALLOW(mremap); ALLOW(brk); ALLOW(madvise); ALLOW(mincore);
    /* threads, waiting, time */
    ALLOW_IF(clone, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    ALLOW(futex); ALLOW(set_robust_list); ALLOW(get_robust_list); ALLOW(rseq);
    ALLOW(set_tid_address); ALLOW(sched_yield); ALLOW(sched_getaffinity);
    ALLOW(sched_setaffinity); ALLOW(getpriority); ALLOW(nanosleep); ALLOW(clock_nanosleep);
    ALLOW(clock_gettime); ALLOW(clock_getres); ALLOW(gettimeofday); ALLOW(time);
    ALLOW(setitimer); ALLOW(getitimer); ALLOW(alarm); /* CPU mode's watchdog */
    /* who am I, signals to myself */
    ALLOW(getpid); ALLOW(gettid); ALLOW(getppid); ALLOW(getuid); ALLOW(geteuid); ALLOW(getgid);
    ALLOW(getegid); ALLOW(getrusage); ALLOW(sysinfo); ALLOW(uname); ALLOW(getcwd);
    ALLOW(getrandom);
    ALLOW_IF(rt_sigaction, 1, SCMP_A0(SCMP_CMP_NE, SIGSYS));
    ALLOW(rt_sigprocmask); ALLOW(rt_sigreturn); ALLOW(sigaltstack); ALLOW(restart_syscall);
    ALLOW_IF(kill, 1, SCMP_A0(SCMP_CMP_EQ, self));
    ALLOW_IF(tgkill, 1, SCMP_A0(SCMP_CMP_EQ, self));
    ALLOW_IF(prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    ALLOW_IF(prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    ALLOW(exit); ALLOW(exit_group);
    // clang-format on
    return rc;
}

#define TRAP_IF(name, ...) rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(name), __VA_ARGS__)
#define TRAP(name) rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(name), 0)

/* Under compute-sanitizer: everything but what the header comment lists as absent on purpose, and
 * the same limits on clone, memory, files and signals (the tool's code in the process reads files
 * and their metadata to report what it found, calls this allowlist was not measured for). */
static int add_denials(scmp_filter_ctx ctx)
{
    const scmp_datum_t self = (scmp_datum_t)getpid();
    const scmp_datum_t write_flags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND};
    int rc = 0;

    TRAP(fork);
    TRAP(vfork);
    TRAP(execve);
    TRAP(execveat);
    TRAP(setsid);
    TRAP(setpgid);
    TRAP(ptrace);
    TRAP(process_vm_writev);
    TRAP(process_vm_readv);
    TRAP(tkill);
    TRAP(unlink);
    TRAP(unlinkat);
    TRAP(rename);
    TRAP(renameat);
    TRAP(renameat2);
    TRAP(truncate);
    TRAP(ftruncate);
    TRAP(creat);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0); /* flags in memory */
    TRAP(memfd_create);
    TRAP(dup2);
    TRAP(dup3);
    TRAP(pkey_mprotect);
    TRAP(personality);
    TRAP(chdir);
    TRAP(mount);
    TRAP(seccomp);
    TRAP_IF(clone, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    TRAP_IF(kill, 1, SCMP_A0(SCMP_CMP_NE, self));
    TRAP_IF(tgkill, 1, SCMP_A0(SCMP_CMP_NE, self));
    TRAP_IF(mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    TRAP_IF(mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    TRAP_IF(rt_sigaction, 1, SCMP_A0(SCMP_CMP_EQ, SIGSYS));
    for (size_t i = 0; i < sizeof(write_flags) / sizeof(write_flags[0]); i++) {
        TRAP_IF(openat, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
        TRAP_IF(open, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
    }
    return rc;
}

int lab_sandbox_enter(int under_tool, char *why, size_t whylen)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) != 0) {
        snprintf(why, whylen, "sandbox: cannot install the SIGSYS handler");
        return -1;
    }
    resolve_names();
    if (under_tool)
        g_trace_opens = 0; /* the tool's own reads are not the runtime's */
    if (g_probe[0] < 0 && pipe2(g_probe, O_CLOEXEC) != 0)
        g_probe[0] = g_probe[1] = -1;
    if (g_trace_opens && getrandom(&g_cookie, sizeof(g_cookie), 0) != (ssize_t)sizeof(g_cookie))
        g_cookie = (long)getpid() * 2654435761L ^ 0x5eccL;
    if (!under_tool && !g_trace_opens && OPEN_PATHS[0] && limit_reads() < 0) {
        snprintf(why, whylen, "sandbox: Landlock refused the file rules (%s)", strerror(errno));
        return -1;
    }
    scmp_filter_ctx ctx = seccomp_init(under_tool ? SCMP_ACT_ALLOW : SCMP_ACT_TRAP);
    if (!ctx) {
        snprintf(why, whylen, "sandbox: seccomp_init failed");
        return -1;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    rc |= under_tool ? add_denials(ctx) : add_rules(ctx);
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(why, whylen, "sandbox: the kernel refused the seccomp filter (%s)", strerror(-rc));
        return -1;
    }
    return 0;
}

#else /* built without libseccomp */

void lab_sandbox_trace_opens(int on)
{
    (void)on;
}

int lab_sandbox_enter(int under_tool, char *why, size_t whylen)
{
    (void)under_tool;
    snprintf(why, whylen,
             "sandbox unavailable: built without libseccomp (install libseccomp-dev "
             "and rebuild)");
    return -1;
}

#endif
