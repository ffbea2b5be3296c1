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
 * Size: about 500 lines, over the house's 400, because the protocol is read as one: the requests
 * and replies and the buffer registry that turns the judge's pointers into (buffer, offset) pairs
 * must agree. The lab process's start, the channel's calibration and its end are spawn.c; the
 * arena the pointers come from (its allocator) is arena.c.
 */
#define _GNU_SOURCE
#include "port.h"
#include "arena.h"
#include "cuda_check.h"
#include "driver.h"
#include "port_judge.h"
#include "port_wire.h"
#include "vmm.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

port_judge lab_judge = {.fd = -1};

int lab_port_remote(void)
{
    return lab_judge.on;
}

int lab_port_sandboxed(void)
{
    return lab_judge.sandboxed;
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

/* The lab process forgets buffer b (before the judge frees it). */
static void shared_drop(shared_buf *b)
{
    if (b->opened && lab_judge.on && lab_judge.pid > 0) {
        port_request q = {.op = REQ_CLOSE, .id = b->id};
        port_reply a;
        lab_port_request(&q);
        lab_port_await(&q, &a);
    }
    b->id = 0;
}

int lab_port_malloc(void **p, size_t bytes, lab_report *r, const char *what)
{
    if (!lab_judge.on)
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
    if (!lab_judge.on) {
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

void lab_port_renew(void)
{
#ifndef LAB_CPU_MODE
    if (lab_judge.on)
        lab_vmm_renew();
#endif
}

void lab_port_forget(void *p)
{
    shared_buf *s = lab_judge.on ? shared_find(p) : NULL;
    if (s)
        shared_drop(s);
}

void *lab_port_host_alloc(size_t bytes)
{
    if (!lab_judge.on)
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
    if (!lab_judge.on) {
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
void lab_port_gone(const char *during)
{
    int st = 0;
    if (lab_judge.pid > 0) {
        kill(lab_judge.pid, SIGKILL);
        while (waitpid(lab_judge.pid, &st, 0) < 0 && errno == EINTR) {
        }
        lab_judge.pid = -1;
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
    if (lab_judge.pid > 0)
        kill(lab_judge.pid, SIGKILL);
    _exit(LAB_EXIT_TAMPERED);
}

/* Sends q, and with it the file descriptor fd (when not -1: a buffer to open). */
static void request_fd(port_request *q, int fd)
{
    q->magic = PORT_MAGIC;
    q->seq = ++lab_judge.seq;
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
        while ((k = sendmsg(lab_judge.fd, &m, 0)) < 0 && errno == EINTR) {
        }
        if (k != 1)
            lab_port_gone("before it was asked to make a call");
        p++;
        left--;
    }
    while (left > 0) {
        ssize_t k = write(lab_judge.fd, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            lab_port_gone("before it was asked to make a call");
        p += k;
        left -= (size_t)k;
    }
}

void lab_port_request(port_request *q)
{
    request_fd(q, -1);
}

/* Reads exactly one reply: a few yielding tries (port_wire.h: PORT_SPINS), then sleeps in poll. */
void lab_port_await(const port_request *q, port_reply *a)
{
    lab_port_await_spins(q, a, PORT_SPINS);
}

/* await_reply with at most `spins` yielding tries before poll (0: sleeps at once). A host lab's
 * call is waited for asleep: the grader runs a host lab's judge and lab process on one core (the
 * one it keeps for timing it), where a judge yielding in a loop would share the core the lab's
 * code is timed on (H100 hosts, one grade each: lab 01 at 2^23 took 8-10 ms a call beside a
 * yielding judge, 5 ms beside a sleeping one); a call of milliseconds hardly notices the wake-up.
 */
void lab_port_await_spins(const port_request *q, port_reply *a, int spins_left)
{
    char *p = (char *)a;
    size_t got = 0;
    int spins = 0;
    while (got < sizeof(*a)) {
        ssize_t k = recv(lab_judge.fd, p + got, sizeof(*a) - got, MSG_DONTWAIT);
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        if (k == 0)
            lab_port_gone(q->op == REQ_CALL ? "during the lab's call" : "between calls");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            lab_port_gone("during the lab's call");
        if (++spins < spins_left) {
            sched_yield();
            continue;
        }
        struct pollfd pf = {.fd = lab_judge.fd, .events = POLLIN};
        poll(&pf, 1, -1);
    }
    if (a->magic != PORT_MAGIC || a->seq != q->seq || a->op != q->op)
        tampered("a message that is not the answer it was asked for");
    if (a->why[sizeof(a->why) - 1] != '\0')
        tampered("an answer whose text does not end");
    char extra;
    if (recv(lab_judge.fd, &extra, 1, MSG_DONTWAIT | MSG_PEEK) == 1)
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
        lab_port_await(&q, &a);
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
    if (!lab_judge.on)
        return lab_port_call_local(c->v, k, a, squeeze);
    port_request q = {.op = REQ_CALL,
                      .variant = (int32_t)(c->v - c->lab->variants),
                      .k = k,
                      .kind = (int32_t)a->kind,
                      .squeeze = squeeze,
                      .record = c->o && c->o->algorithm && k == 0,
                      .n = a->n,
                      .n_rows = a->n_rows};
    q.in = translate(a->in);
    q.heads = translate(a->heads);
    q.out = translate(a->out);
    q.sums = translate(a->tile_sums);
    q.count = translate(a->count);
    q.temp = translate(a->temp);
    port_reply ans;
    lab_port_request(&q);
    lab_port_await_spins(&q, &ans, c->lab->shape == LAB_HOST ? 0 : PORT_SPINS);
    lab_judge.live_count = ans.live_count;
    lab_judge.live_bytes = ans.live_bytes;
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

void lab_port_algorithm(const lab_variant *v, lab_report *r)
{
#ifdef LAB_CPU_MODE
    lab_algorithm_evidence e;
    if (!lab_judge.on) {
        lab_algorithm_measure(LAB.tile, &e);
    } else {
        port_request q = {.op = REQ_PROFILE};
        port_reply a;
        lab_port_request(&q);
        lab_port_await(&q, &a);
        e = a.evidence;
        if (!lab_algorithm_evidence_ok(&e))
            tampered("an algorithm profile no run can give");
    }
    const lab_algorithm found = lab_algorithm_classify(&e, v->algorithm);
    r->alg_asked = lab_algorithm_id(v->algorithm);
    r->alg_found = lab_algorithm_id(found);
    r->alg_same = lab_algorithm_same(v->algorithm, found);
    lab_algorithm_measured(&e, v->algorithm, r->alg_measured, sizeof(r->alg_measured));
    lab_algorithm_verdict(v->algorithm, found, v->name, r->alg_verdict, sizeof(r->alg_verdict));
#else
    (void)v;
    (void)r;
#endif
}

size_t lab_port_temp_bytes(const lab_variant *v, size_t n)
{
    if (!lab_judge.on)
        return v->temp_bytes ? v->temp_bytes(n) : 0;
    if (!v->temp_bytes)
        return 0;
    port_request q = {.op = REQ_TEMP, .n = n};
    port_reply a;
    q.variant = (int32_t)(v - LAB.variants);
    lab_port_request(&q);
    lab_port_await(&q, &a);
    return (size_t)a.value;
}

void lab_port_live(size_t *count, size_t *bytes)
{
    if (lab_judge.on) {
        *count = lab_judge.live_count;
        *bytes = lab_judge.live_bytes;
    } else {
        lab_live_allocations(count, bytes);
    }
}
