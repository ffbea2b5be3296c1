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
 *   openat, open     read-only flags only: no file is opened for writing
 *   kill, tgkill     only this process: abort() still works, other processes cannot be reached
 *   rt_sigaction     any signal but SIGSYS, so the handler below stays in place
 *   prctl            names of threads only
 *   shutdown         compute-sanitizer's code in the process closes its socket at exit
 * Absent on purpose: fork, vfork, execve, execveat, setsid, setpgid, ptrace, process_vm_*,
 * socket, connect, unlink, rename, truncate, dup2/dup3 (an fd cannot be moved over the report
 * channel), memfd_create, seccomp, personality, chdir, mount, and the rest.
 *
 * Under compute-sanitizer (whose code runs inside the process and, to report an error, reads
 * files and their metadata: lstat, ...) the filter is the other way round: everything is allowed
 * except the calls named above as absent on purpose and the same limits on clone, memory, files
 * and signals (add_denials). The lab gains nothing there: only the sanitizer's verdict comes
 * from such runs.
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
#include <unistd.h>

#define MAX_SYSCALL 512
static const char *g_names[MAX_SYSCALL]; /* resolved before the filter, read by the handler */

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

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
    char num[24];
    int nr = info->si_syscall, i = (int)sizeof(num) - 1;
    (void)sig;
    (void)ctx;
    num[i] = '\0';
    unsigned u = nr < 0 ? 0u : (unsigned)nr;
    do {
        num[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u && i > 0);
    say("harness: sandbox: the lab's code made a system call that graded runs do not allow: ");
    say(nr >= 0 && nr < MAX_SYSCALL && g_names[nr] ? g_names[nr] : "?");
    say(" (system call ");
    say(num + i);
    say("); lab code may only compute, not start processes, write files or change memory "
        "protections: exit code 9\n");
    _exit(LAB_EXIT_SANDBOX);
}

/* Names of the system calls, for the handler's message (resolved now: it cannot allocate). */
static void resolve_names(void)
{
    for (int nr = 0; nr < MAX_SYSCALL; nr++)
        if (!g_names[nr])
            g_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
}

#define ALLOW(name) rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(name), 0)
#define ALLOW_IF(name, ...) rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(name), __VA_ARGS__)

/* The allowlist (the header comment says why each limit is there). */
static int add_rules(scmp_filter_ctx ctx)
{
    const scmp_datum_t self = (scmp_datum_t)getpid();
    const scmp_datum_t write_flags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    int rc = 0;

    /* output, and reading what is already open */
    /* one group of calls a line, as a table */
    // clang-format off
    ALLOW(read); ALLOW(readv); ALLOW(pread64); ALLOW(write); ALLOW(writev); ALLOW(pwrite64);
    ALLOW(close); ALLOW(shutdown); ALLOW(fstat); ALLOW(newfstatat); ALLOW(statx); ALLOW(lseek); ALLOW(fcntl);
    ALLOW(readlink); ALLOW(readlinkat); ALLOW(access); ALLOW(faccessat); ALLOW(faccessat2);
    ALLOW(getdents64);
    ALLOW_IF(openat, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, 0));
    ALLOW_IF(open, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, 0));
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

int lab_sandbox_enter(int under_tool, char *why, size_t whylen)
{
    (void)under_tool;
    snprintf(why, whylen,
             "sandbox unavailable: built without libseccomp (install libseccomp-dev "
             "and rebuild)");
    return -1;
}

#endif
