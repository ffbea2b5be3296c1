/* spawn.c — the judge's lab process: its start (a fork and exec of the lab's binary with --serve,
 * the channel and the arena its only descriptors, under the run user, its output capped), the
 * channel's own cost measured before any of the lab's code runs (the rigs take it off each timed
 * call, and it bounds what lab_port_channel_ms may say), and its end, whose exit becomes the
 * run's. The protocol itself is port.c's (port_judge.h).
 */
#define _GNU_SOURCE
#include "port.h"
#include "arena.h"
#include "cuda_check.h"
#include "driver.h"
#include "port_judge.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the lab process: its start and end ------------------------------------------------- */

/* Splits wrap on spaces into argv[0..] (at most max - 1 words); returns the count. */
static int split_words(char *wrap, char **argv, int max)
{
    int k = 0;
    char *save = NULL;
    for (char *w = strtok_r(wrap, " ", &save); w && k < max - 1; w = strtok_r(NULL, " ", &save))
        argv[k++] = w;
    return k;
}

int lab_port_judge_start(const char *binary, long uid, long gid, const char *wrap, char *why,
                         size_t whylen)
{
    int sv[2];
    static char wrap_copy[2048];
    char *argv[64];
    char chan[16], arena[16];
    if (lab_arena_create(why, whylen) != 0)
        return -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, whylen, "cannot make the channel: %s", strerror(errno));
        return -1;
    }
    int k = 0;
    if (wrap) {
        snprintf(wrap_copy, sizeof(wrap_copy), "%s", wrap);
        k = split_words(wrap_copy, argv, 48);
        lab_judge.wrapped = k > 0;
    }
    snprintf(chan, sizeof(chan), "%d", PORT_CHANNEL_FD);
    snprintf(arena, sizeof(arena), "%d", PORT_ARENA_FD);
    argv[k++] = (char *)binary;
    argv[k++] = "--serve";
    argv[k++] = chan;
    argv[k++] = arena;
    argv[k] = NULL;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "cannot start the lab's process: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) { /* the lab process: stdin /dev/null, the channel and the arena, no more */
        const int devnull = open("/dev/null", O_RDONLY);
        const int chan = fcntl(sv[1], F_DUPFD, 16), mem = fcntl(lab_arena_fd(), F_DUPFD, 16);
        if (devnull < 0 || chan < 0 || mem < 0 || dup2(devnull, STDIN_FILENO) < 0 ||
            dup2(chan, PORT_CHANNEL_FD) < 0 || dup2(mem, PORT_ARENA_FD) < 0)
            _exit(127);
        for (int fd = PORT_ARENA_FD + 1; fd < 1024; fd++)
            close(fd);
        /* what the lab prints goes to the grader's files: bounded where it is written, each
         * stream at output_cap bytes (a write past it ends the process with SIGXFSZ) */
        const struct rlimit cap = {(rlim_t)lab_judge.output_cap, (rlim_t)lab_judge.output_cap};
        if (lab_judge.output_cap > 0 && setrlimit(RLIMIT_FSIZE, &cap) != 0)
            _exit(126);
        if (gid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)gid) != 0))
            _exit(126);
        if (uid >= 0 && setuid((uid_t)uid) != 0)
            _exit(126);
        /* ETXTBSY: the grader copied the binary a moment ago, and a process another of its
         * threads forked meanwhile still holds the copy's write end (until that process's own
         * exec closes it): a few milliseconds, so try again for up to a second */
        for (int tries = 0; tries < 50; tries++) {
            execv(argv[0], argv);
            if (errno != ETXTBSY)
                break;
            const struct timespec wait = {0, 20 * 1000 * 1000};
            nanosleep(&wait, NULL);
        }
        if (argv[0][0] != '/')
            execvp(argv[0], argv);
        fprintf(stderr, "harness: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(sv[1]);
    lab_judge.fd = sv[0];
    lab_judge.pid = pid;
    lab_judge.on = 1;
#ifndef LAB_CPU_MODE
    cudaSetDeviceFlags(cudaDeviceScheduleSpin);
#endif
    signal(SIGPIPE, SIG_IGN); /* a closed channel is an error of write, read as the lab's end */
    /* the lab process's first words: it is ready (its sandbox entered, or why not) */
    port_request hello = {.op = REQ_HELLO, .seq = 0};
    port_reply a;
    lab_port_await(&hello, &a);
    lab_judge.sandboxed = a.value == 1;
    if (!lab_judge.sandboxed && a.why[0])
        fprintf(stderr, "harness: %s\n", a.why);
    lab_port_calibrate();
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One null call, timed as the rigs time a call of the lab: on a GPU (device 1), events around an
 * empty kernel launched in the lab process (what a call of the lab adds to its own kernels: the
 * request, the switch between the two processes' contexts, the answer); on the host's clock
 * (device 0), a call that runs nothing. */
static double null_call_ms(int device)
{
    port_request q = {.op = REQ_NULL};
    port_reply a;
#ifndef LAB_CPU_MODE
    if (device) {
        cudaEvent_t *ev = lab_case_events();
        CUDA_CHECK(cudaEventRecord(ev[0], 0));
        q.k = 1;
        lab_port_request(&q);
        lab_port_await(&q, &a);
        if (a.cuda_error)
            lab_port_gone("in a null call of the judge's");
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(ev[1], 0));
        CUDA_CHECK(cudaEventSynchronize(ev[1]));
        return lab_event_ms(ev[0], ev[1]);
    }
#else
    (void)device;
#endif
    const double t0 = lab_now_ms();
    q.k = 0;
    lab_port_request(&q);
    lab_port_await_spins(&q, &a, device ? PORT_SPINS : 0); /* as the calls it stands for */
    return lab_now_ms() - t0;
}

/* The channel's own cost, before any of the lab's code has run (so nothing the lab does can make
 * it larger): CALIBRATE_WARM null calls to wake the channel and the GPU's clocks, then
 * CALIBRATE_CALLS, their median, on each clock. It bounds what lab_port_channel_ms may say. */
#define CALIBRATE_WARM 8
#define CALIBRATE_CALLS 41
static double calibrated(int device)
{
    double t[CALIBRATE_CALLS];
    for (int i = 0; i < CALIBRATE_WARM; i++)
        null_call_ms(device);
    for (int i = 0; i < CALIBRATE_CALLS; i++)
        t[i] = null_call_ms(device);
    qsort(t, CALIBRATE_CALLS, sizeof(double), cmp_double);
    return t[CALIBRATE_CALLS / 2];
}

void lab_port_calibrate(void)
{
    lab_judge.host_overhead_ms = calibrated(0);
#ifndef LAB_CPU_MODE
    lab_judge.gpu_overhead_ms = calibrated(1);
#else
    lab_judge.gpu_overhead_ms =
        lab_judge.host_overhead_ms; /* CPU mode's kernels are timed on the host's clock */
#endif
}

double lab_port_channel_ms(int device)
{
    return lab_judge.on ? null_call_ms(device) : 0.0;
}

void lab_port_set_output_cap(long long bytes)
{
    lab_judge.output_cap = bytes;
}

double lab_port_overhead_ms(int device)
{
    return !lab_judge.on ? 0.0 : device ? lab_judge.gpu_overhead_ms : lab_judge.host_overhead_ms;
}

/* At the end of the judge's input: the lab process is told to end, and its exit is the run's
 * when the judge's own is 0, or when a tool runs the lab process and exits with a code: a
 * compute-sanitizer in front of it exits with the grader's code when it found errors, and that
 * is the run's exit code as it is without a judge, whatever the verdict (a kernel without its
 * barrier is wrong and racy; the report says wrong, the exit code says what the tool found). */
int lab_port_judge_finish(int rc)
{
    int st = 0;
    if (!lab_judge.on || lab_judge.pid <= 0)
        return rc;
    shutdown(lab_judge.fd, SHUT_WR);
    while (waitpid(lab_judge.pid, &st, 0) < 0 && errno == EINTR) {
    }
    lab_judge.pid = -1;
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        fflush(NULL);
        kill(getpid(), WTERMSIG(st));
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && (rc == 0 || lab_judge.wrapped))
        return WEXITSTATUS(st);
    return rc;
}
