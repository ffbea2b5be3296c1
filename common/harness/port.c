/* port.c — where the harness reaches the lab's code (port.h): the local port, and the judge's
 * side of the two-process one (the lab process's side is serve.c).
 *
 * The channel: a socket pair, one fixed-size request (port_request) from the judge, one fixed-size
 * reply (port_reply) back, naming the request's sequence number. The judge reads the reply in
 * full, and anything that is not exactly that reply (a short or extra message, another magic,
 * sequence or operation, a result the contract does not have) is tampering. A lab process that
 * ends while the judge waits for it ends the judge the same way (its exit code, or its signal),
 * so the grader diagnoses the run as if it were one process.
 *
 * Shared buffers: on a GPU, buffers the harness allocates for the lab (lab_port_malloc) are
 * exported with cudaIpcGetMemHandle when a call first passes them, and the lab process opens each
 * once (REQ_OPEN). Host arrays (lab 01) and, in CPU mode, every such buffer come from the arena:
 * a memfd of ARENA_BYTES (sparse: only what is used takes memory), mapped whole by both processes
 * before the lab's code runs. Nothing the judge keeps for itself (inputs' private copies,
 * references, seeds, the check's temp, the L2 flush) is ever in the arena or exported.
 *
 * Size: about 700 lines, over the house's 400, because the judge's side of the protocol is read
 * as one: the requests and replies, the buffer registry that turns the judge's pointers into
 * (buffer, offset) pairs, the spawn of the lab process, its calibration and the reading of its
 * end must agree. The arena those pointers come from (its allocator) is arena.c.
 */
#define _GNU_SOURCE
#include "port.h"
#include "arena.h"
#include "cuda_check.h"
#include "driver.h"
#include "port_wire.h"
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void (*lab_port_fail_hook)(lab_status st, const char *msg, int exit_code);

/* ---- the local port ---------------------------------------------------------------------- */

/* The lab's allocations, counted by the renamed cudaMalloc/cudaFree of its object (case.c). */
void lab_live_allocations(size_t *count, size_t *bytes);

/* The reason the lab process gave for a LAB_NOT_IMPLEMENTED (lab_port_why takes it). */
static char g_why_text[sizeof(((port_reply *)0)->why)];
static int g_why_set, g_why_reason;

const char *lab_port_why(int *reason)
{
    if (!g_why_set)
        return NULL;
    g_why_set = 0;
    *reason = g_why_reason;
    return g_why_text;
}

/* The variant's entry point for a's kind of call. */
static lab_result entry(const lab_variant *v, const lab_port_args *a)
{
    switch (a->kind) {
    case LAB_ENTRY_TILES:
        return v->fn.tiles(a->in, a->out, a->tile_sums, a->n);
    case LAB_ENTRY_SEG:
        return v->fn.seg(a->in, a->heads, a->out, a->n, a->temp);
    case LAB_ENTRY_COMPACT:
        return v->fn.compact(a->in, a->out, a->n, a->count, a->temp);
    case LAB_ENTRY_CSR:
        return v->fn.csr(a->in, a->out, a->n, a->n_rows, a->temp);
    default:
        return v->fn.scan(a->in, a->out, a->n, a->temp);
    }
}

/* Call k in this process, between lab_code_begin and lab_code_end (call.h: CPU mode's guard on
 * device memory and its bank counting). */
lab_result lab_port_call_local(const lab_variant *v, int k, const lab_port_args *a, int squeeze)
{
    if (squeeze > 0)
        lab_squeeze_begin(squeeze);
    lab_code_begin(k);
    const lab_result res = entry(v, a);
    lab_code_end();
    if (squeeze > 0)
        lab_squeeze_end();
    return res;
}

/* ---- the judge's state ------------------------------------------------------------------- */

static struct {
    int on;                                   /* this process is a judge */
    int fd;                                   /* its end of the channel */
    pid_t pid;                                /* the lab process */
    uint64_t seq;                             /* of the last request */
    int sandboxed;                            /* the lab process said it is in its sandbox */
    double gpu_overhead_ms, host_overhead_ms; /* the channel's own cost (calibrate) */
    long long output_cap; /* RLIMIT_FSIZE of the lab process (lab_port_set_output_cap) */
    int wrapped;          /* the lab process runs under a tool (compute-sanitizer) */
    size_t live_count, live_bytes;
} J = {.fd = -1};

int lab_port_remote(void)
{
    return J.on;
}

int lab_port_sandboxed(void)
{
    return J.sandboxed;
}

/* ---- the registry of shared buffers --------------------------------------------------------- */

#define SHARED_MAX 256
typedef struct {
    char *base; /* what the lab's view of the buffer starts at (GPU: the allocation) */
    size_t bytes;
    uint64_t id;  /* 0: an empty slot */
    int opened;   /* the lab process has it */
    int in_arena; /* host arrays, CPU mode */
    int device;   /* in the arena: a CPU-mode device buffer (adopted as one there) */
    size_t map_off, map_len, user_off; /* in the arena: the mapping and where the buffer starts */
} shared_buf;
static shared_buf g_shared[SHARED_MAX];
static uint64_t g_next_id = 1;

static shared_buf *shared_add(void *base, size_t bytes)
{
    for (int i = 0; i < SHARED_MAX; i++)
        if (!g_shared[i].id) {
            memset(&g_shared[i], 0, sizeof(g_shared[i]));
            g_shared[i].base = base;
            g_shared[i].bytes = bytes;
            g_shared[i].id = g_next_id++;
            return &g_shared[i];
        }
    return NULL;
}

static shared_buf *shared_find(const void *p)
{
    for (int i = 0; i < SHARED_MAX; i++)
        if (g_shared[i].id && (const char *)p >= g_shared[i].base &&
            (const char *)p < g_shared[i].base + (g_shared[i].bytes ? g_shared[i].bytes : 1))
            return &g_shared[i];
    return NULL;
}

static void request(port_request *q);
static void calibrate(void);
static void await_reply(const port_request *q, port_reply *a);
static void await_reply_spins(const port_request *q, port_reply *a, int spins);

/* The lab process forgets buffer b (before the judge frees it). */
static void shared_drop(shared_buf *b)
{
    if (b->opened && J.on && J.pid > 0) {
        port_request q = {.op = REQ_CLOSE, .id = b->id};
        port_reply a;
        request(&q);
        await_reply(&q, &a);
    }
    b->id = 0;
}

int lab_port_malloc(void **p, size_t bytes, lab_report *r, const char *what)
{
    if (!J.on)
        return lab_kept_malloc(p, bytes, r, what);
#ifdef LAB_CPU_MODE
    lab_cpu_share_hooks(lab_arena_alloc, lab_arena_release);
    const int rc = lab_try_malloc(p, bytes, r, what);
    lab_cpu_share_hooks(NULL, NULL);
    if (rc != 0)
        return rc;
    void *map;
    size_t map_len, user_off, b;
    shared_buf *s =
        lab_cpu_allocation(*p, &map, &map_len, &user_off, &b) ? shared_add(*p, b) : NULL;
    if (s) {
        s->in_arena = 1;
        s->device = 1;
        s->map_off = lab_arena_offset(map);
        s->map_len = map_len;
        s->user_off = user_off;
    }
#else
    size_t mapped = 0;
    if (lab_vmm_malloc(p, bytes, &mapped, r, what) != 0)
        return -1;
    if (!shared_find(*p) && !shared_add(*p, mapped)) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "more than %d buffers shared with the lab's process", SHARED_MAX);
        return -1;
    }
#endif
    return 0;
}

void lab_port_free(void *p)
{
    if (!J.on) {
        lab_kept_free(p);
        return;
    }
    if (!p)
        return;
#ifdef LAB_CPU_MODE
    shared_buf *s = shared_find(p);
    if (s)
        shared_drop(s);
    CUDA_CHECK(cudaFree(p));
#else
    lab_vmm_free(p); /* kept: the lab process keeps it open too, until lab_port_forget */
#endif
}

void lab_port_forget(void *p)
{
    shared_buf *s = J.on ? shared_find(p) : NULL;
    if (s)
        shared_drop(s);
}

void *lab_port_host_alloc(size_t bytes)
{
    if (!J.on)
        return lab_host_alloc(bytes);
    const size_t pg = lab_page_bytes();
    const size_t len = (bytes + pg - 1) / pg * pg + pg;
    char *map = lab_arena_alloc(len);
    shared_buf *s = map ? shared_add(map, len) : NULL;
    if (!s)
        return NULL;
    s->in_arena = 1;
    s->map_off = lab_arena_offset(map);
    s->map_len = len;
    s->user_off = 0;
    return map;
}

void lab_port_host_free(void *p)
{
    if (!J.on) {
        free(p);
        return;
    }
    shared_buf *s = p ? shared_find(p) : NULL;
    if (!s)
        return;
    const size_t len = s->map_len;
    shared_drop(s);
    lab_arena_release(p, len);
}

/* ---- the channel -------------------------------------------------------------------------- */

/* The lab process ended (or must end) while the judge needed it: the judge ends the same way. */
static void lab_process_gone(const char *during)
{
    int st = 0;
    if (J.pid > 0) {
        kill(J.pid, SIGKILL);
        while (waitpid(J.pid, &st, 0) < 0 && errno == EINTR) {
        }
        J.pid = -1;
    }
    if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
        signal(WTERMSIG(st), SIG_DFL);
        fflush(NULL);
        kill(getpid(), WTERMSIG(st));
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        fflush(NULL);
        _exit(WEXITSTATUS(st));
    }
    fprintf(stderr,
            "harness: the lab's process ended before the harness reported a result (%s, without "
            "its answer; the lab's code must not end the process): exit code 8\n",
            during);
    _exit(LAB_EXIT_TAMPERED);
}

static void tampered(const char *what)
{
    fprintf(stderr,
            "harness: the lab's process wrote to the judge's channel %s (it may send only the "
            "answer to the call it was asked to make): exit code 8\n",
            what);
    if (J.pid > 0)
        kill(J.pid, SIGKILL);
    _exit(LAB_EXIT_TAMPERED);
}

/* Sends q, and with it the file descriptor fd (when not -1: a buffer to open). */
static void request_fd(port_request *q, int fd)
{
    q->magic = PORT_MAGIC;
    q->seq = ++J.seq;
    const char *p = (const char *)q;
    size_t left = sizeof(*q);
    if (fd >= 0) { /* the descriptor rides on the request's first byte */
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = (void *)p, .iov_len = 1};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
        memset(ctl, 0, sizeof(ctl));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        ssize_t k;
        while ((k = sendmsg(J.fd, &m, 0)) < 0 && errno == EINTR) {
        }
        if (k != 1)
            lab_process_gone("before it was asked to make a call");
        p++;
        left--;
    }
    while (left > 0) {
        ssize_t k = write(J.fd, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            lab_process_gone("before it was asked to make a call");
        p += k;
        left -= (size_t)k;
    }
}

static void request(port_request *q)
{
    request_fd(q, -1);
}

/* Reads exactly one reply: a few yielding tries (port_wire.h: PORT_SPINS), then sleeps in poll. */
static void await_reply(const port_request *q, port_reply *a)
{
    await_reply_spins(q, a, PORT_SPINS);
}

/* await_reply with at most `spins` yielding tries before poll (0: sleeps at once). A host lab's
 * call is waited for asleep: the grader runs a host lab's judge and lab process on one core (the
 * one it keeps for timing it), where a judge yielding in a loop would share the core the lab's
 * code is timed on (H100 hosts, one grade each: lab 01 at 2^23 took 8-10 ms a call beside a
 * yielding judge, 5 ms beside a sleeping one); a call of milliseconds hardly notices the wake-up.
 */
static void await_reply_spins(const port_request *q, port_reply *a, int spins_left)
{
    char *p = (char *)a;
    size_t got = 0;
    int spins = 0;
    while (got < sizeof(*a)) {
        ssize_t k = recv(J.fd, p + got, sizeof(*a) - got, MSG_DONTWAIT);
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        if (k == 0)
            lab_process_gone(q->op == REQ_CALL ? "during the lab's call" : "between calls");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            lab_process_gone("during the lab's call");
        if (++spins < spins_left) {
            sched_yield();
            continue;
        }
        struct pollfd pf = {.fd = J.fd, .events = POLLIN};
        poll(&pf, 1, -1);
    }
    if (a->magic != PORT_MAGIC || a->seq != q->seq || a->op != q->op)
        tampered("a message that is not the answer it was asked for");
    if (a->why[sizeof(a->why) - 1] != '\0')
        tampered("an answer whose text does not end");
    char extra;
    if (recv(J.fd, &extra, 1, MSG_DONTWAIT | MSG_PEEK) == 1)
        tampered("more than its answer");
}

/* The pointer p (inside a shared buffer, or NULL) as the lab process names it: opens the buffer
 * there first when it is new to it. */
static port_ref translate(const void *p)
{
    port_ref ref = {0, 0};
    if (!p)
        return ref;
    shared_buf *b = shared_find(p);
    if (!b) { /* a harness bug, never the lab's doing */
        fprintf(stderr, "harness: internal error: a buffer passed to the lab is not shared\n");
        abort();
    }
    if (!b->opened) {
        port_request q = {.op = REQ_OPEN, .id = b->id, .bytes = b->bytes};
        port_reply a;
        int fd = -1;
        if (b->in_arena) {
            q.arena = b->device ? 2 : 1;
            q.map_off = b->map_off;
            q.map_len = b->map_len;
            q.user_off = b->user_off;
        } else {
#ifndef LAB_CPU_MODE
            void *base;
            size_t size;
            if (lab_vmm_export(b->base, &fd, &base, &size) != 0) {
                fprintf(stderr, "harness: cannot export a shared buffer to the lab's process\n");
                _exit(LAB_EXIT_CUDA_ERROR);
            }
            b->bytes = size;
            q.bytes = size;
#endif
        }
        request_fd(&q, fd);
        if (fd >= 0)
            close(fd);
        await_reply(&q, &a);
        if (a.result != 0) {
            fprintf(stderr, "harness: the lab's process could not open a shared buffer: %s\n",
                    a.why);
            _exit(LAB_EXIT_CUDA_ERROR);
        }
        b->opened = 1;
    }
    ref.id = b->id;
    ref.offset = (uint64_t)((const char *)p - b->base);
    return ref;
}

lab_result lab_port_call(const lab_case *c, int k, const lab_port_args *a)
{
    /* a checked call (not a timed one) of a run with --squeeze */
    const int squeeze = c->o && k < c->o->calls ? c->o->squeeze : 0;
    if (!J.on)
        return lab_port_call_local(c->v, k, a, squeeze);
    port_request q = {.op = REQ_CALL,
                      .variant = (int32_t)(c->v - c->lab->variants),
                      .k = k,
                      .kind = (int32_t)a->kind,
                      .squeeze = squeeze,
                      .n = a->n,
                      .n_rows = a->n_rows};
    q.in = translate(a->in);
    q.heads = translate(a->heads);
    q.out = translate(a->out);
    q.sums = translate(a->tile_sums);
    q.count = translate(a->count);
    q.temp = translate(a->temp);
    port_reply ans;
    request(&q);
    await_reply_spins(&q, &ans, c->lab->shape == LAB_HOST ? 0 : PORT_SPINS);
    J.live_count = ans.live_count;
    J.live_bytes = ans.live_bytes;
    if (ans.cuda_error != 0) {
        char msg[LAB_MESSAGE_BYTES];
        snprintf(msg, sizeof(msg), "CUDA error %s", ans.why);
        if (lab_port_fail_hook)
            lab_port_fail_hook(ST_CUDA_ERROR, msg, LAB_EXIT_CUDA_ERROR);
        fprintf(stderr, "harness: %s\n", msg);
        _exit(LAB_EXIT_CUDA_ERROR);
    }
    if (ans.result != LAB_OK && ans.result != LAB_NOT_IMPLEMENTED)
        tampered("a result that is neither LAB_OK nor LAB_NOT_IMPLEMENTED");
    if (ans.result == LAB_NOT_IMPLEMENTED && (ans.reason < 0 || ans.reason >= WHY_COUNT))
        tampered("a reason the contract does not have");
    if (ans.result == LAB_NOT_IMPLEMENTED && ans.why[0] && ans.reason != WHY_TODO) {
        snprintf(g_why_text, sizeof(g_why_text), "%s", ans.why);
        g_why_reason = ans.reason;
        g_why_set = 1;
    }
    return (lab_result)ans.result;
}

size_t lab_port_temp_bytes(const lab_variant *v, size_t n)
{
    if (!J.on)
        return v->temp_bytes ? v->temp_bytes(n) : 0;
    if (!v->temp_bytes)
        return 0;
    port_request q = {.op = REQ_TEMP, .n = n};
    port_reply a;
    q.variant = (int32_t)(v - LAB.variants);
    request(&q);
    await_reply(&q, &a);
    return (size_t)a.value;
}

void lab_port_live(size_t *count, size_t *bytes)
{
    if (J.on) {
        *count = J.live_count;
        *bytes = J.live_bytes;
    } else {
        lab_live_allocations(count, bytes);
    }
}

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
        J.wrapped = k > 0;
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
        const struct rlimit cap = {(rlim_t)J.output_cap, (rlim_t)J.output_cap};
        if (J.output_cap > 0 && setrlimit(RLIMIT_FSIZE, &cap) != 0)
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
    J.fd = sv[0];
    J.pid = pid;
    J.on = 1;
#ifndef LAB_CPU_MODE
    cudaSetDeviceFlags(cudaDeviceScheduleSpin);
#endif
    signal(SIGPIPE, SIG_IGN); /* a closed channel is an error of write, read as the lab's end */
    /* the lab process's first words: it is ready (its sandbox entered, or why not) */
    port_request hello = {.op = REQ_HELLO, .seq = 0};
    port_reply a;
    await_reply(&hello, &a);
    J.sandboxed = a.value == 1;
    if (!J.sandboxed && a.why[0])
        fprintf(stderr, "harness: %s\n", a.why);
    calibrate();
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
        request(&q);
        await_reply(&q, &a);
        if (a.cuda_error)
            lab_process_gone("in a null call of the judge's");
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
    request(&q);
    await_reply_spins(&q, &a, device ? PORT_SPINS : 0); /* as the calls it stands for */
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

static void calibrate(void)
{
    J.host_overhead_ms = calibrated(0);
#ifndef LAB_CPU_MODE
    J.gpu_overhead_ms = calibrated(1);
#else
    J.gpu_overhead_ms = J.host_overhead_ms; /* CPU mode's kernels are timed on the host's clock */
#endif
}

double lab_port_channel_ms(int device)
{
    return J.on ? null_call_ms(device) : 0.0;
}

void lab_port_set_output_cap(long long bytes)
{
    J.output_cap = bytes;
}

double lab_port_overhead_ms(int device)
{
    return !J.on ? 0.0 : device ? J.gpu_overhead_ms : J.host_overhead_ms;
}

/* At the end of the judge's input: the lab process is told to end, and its exit is the run's
 * when the judge's own is 0, or when a tool runs the lab process and exits with a code: a
 * compute-sanitizer in front of it exits with the grader's code when it found errors, and that
 * is the run's exit code as it is without a judge, whatever the verdict (a kernel without its
 * barrier is wrong and racy; the report says wrong, the exit code says what the tool found). */
int lab_port_judge_finish(int rc)
{
    int st = 0;
    if (!J.on || J.pid <= 0)
        return rc;
    shutdown(J.fd, SHUT_WR);
    while (waitpid(J.pid, &st, 0) < 0 && errno == EINTR) {
    }
    J.pid = -1;
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        fflush(NULL);
        kill(getpid(), WTERMSIG(st));
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && (rc == 0 || J.wrapped))
        return WEXITSTATUS(st);
    return rc;
}
