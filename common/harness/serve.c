/* serve.c — the lab process of a judged run (port.h): `scan --serve CHANNEL_FD ARENA_FD`, started
 * by the judge, never by hand.
 *
 * The thinnest loop that makes the lab's calls: it maps the shared arena, enters the sandbox
 * (sandbox.h), says hello, then reads one request at a time from the channel and answers it: open
 * or forget a shared buffer, a variant's temp_bytes(n), or one call of an entry point followed by
 * cudaDeviceSynchronize (so the answer comes when every stream of the lab's work is over). It
 * checks nothing and times nothing: whatever it answered, the judge checks the buffers itself.
 * The channel ends: the process ends with exit code 0.
 */
#define _GNU_SOURCE
#include "port.h"
#include "cuda_check.h"
#include "driver.h"
#include "hostmem.h"
#include "port_wire.h"
#include "vmm.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define OPEN_MAX 256
static struct {
    uint64_t id;
    char *ptr;
    size_t bytes;
    int kind; /* 0: CUDA IPC, 1: a host array in the arena, 2: CPU mode's device buffer there */
} g_open[OPEN_MAX];

static int g_chan = -1;
static char *g_arena;

/* Reads one whole request, and the file descriptor that came with it into *fd (-1: none): 1, or 0
 * at the end of the channel. */
static int read_request(port_request *q, int *fd)
{
    char *p = (char *)q;
    size_t got = 0;
    int spins = 0;
    *fd = -1;
    while (got < sizeof(*q)) {
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = p + got, .iov_len = sizeof(*q) - got};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
        ssize_t k = recvmsg(g_chan, &m, MSG_CMSG_CLOEXEC);
        struct cmsghdr *c = k > 0 ? CMSG_FIRSTHDR(&m) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof(int));
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        if (k == 0)
            return 0;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return 0;
        if (++spins < PORT_SPINS) {
            sched_yield();
            continue;
        }
        struct pollfd pf = {.fd = g_chan, .events = POLLIN};
        poll(&pf, 1, -1);
    }
    return q->magic == PORT_MAGIC;
}

static void send_reply(port_reply *a)
{
    const char *p = (const char *)a;
    size_t left = sizeof(*a);
    a->magic = PORT_MAGIC;
    a->why[sizeof(a->why) - 1] = '\0';
    while (left > 0) {
        ssize_t k = write(g_chan, p, left);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {.fd = g_chan, .events = POLLOUT};
            poll(&pf, 1, -1);
            continue;
        }
        if (k <= 0)
            _exit(0); /* the judge is gone */
        p += k;
        left -= (size_t)k;
    }
}

static char *resolve(port_ref r)
{
    if (!r.id)
        return NULL;
    for (int i = 0; i < OPEN_MAX; i++)
        if (g_open[i].id == r.id && r.offset <= g_open[i].bytes)
            return g_open[i].ptr + r.offset;
    return NULL;
}

static void open_buffer(const port_request *q, int fd, port_reply *a)
{
    int slot = -1;
    for (int i = 0; i < OPEN_MAX && slot < 0; i++)
        if (!g_open[i].id)
            slot = i;
    a->result = -1;
    if (slot < 0) {
        snprintf(a->why, sizeof(a->why), "more than %d shared buffers", OPEN_MAX);
        return;
    }
    char *p = NULL;
    if (q->arena) {
        if (!g_arena || q->map_off + q->map_len > LAB_ARENA_BYTES) {
            snprintf(a->why, sizeof(a->why), "a mapping outside the arena");
            return;
        }
        p = g_arena + q->map_off + q->user_off;
#ifdef LAB_CPU_MODE
        if (q->arena == 2)
            p = lab_cpu_adopt(g_arena + q->map_off, q->map_len, q->user_off, q->bytes);
#endif
    } else {
#ifndef LAB_CPU_MODE
        p = fd >= 0 ? lab_vmm_import(fd, q->bytes) : NULL;
        if (!p) {
            snprintf(a->why, sizeof(a->why), "cannot map a shared device buffer");
            return;
        }
#else
        (void)fd;
#endif
    }
    if (!p) {
        snprintf(a->why, sizeof(a->why), "not a buffer");
        return;
    }
    g_open[slot].id = q->id;
    g_open[slot].ptr = p;
    g_open[slot].bytes = q->bytes;
    g_open[slot].kind = q->arena;
    a->result = 0;
}

static void close_buffer(const port_request *q)
{
    for (int i = 0; i < OPEN_MAX; i++)
        if (g_open[i].id == q->id) {
#ifdef LAB_CPU_MODE
            if (g_open[i].kind == 2)
                lab_cpu_unadopt(g_open[i].ptr);
#else
            if (g_open[i].kind == 0)
                lab_vmm_unimport(g_open[i].ptr, g_open[i].bytes);
#endif
            g_open[i].id = 0;
        }
}

/* One call of the lab's code, to its end on every stream. */
static void make_call(const port_request *q, port_reply *a)
{
    const lab_variant *v = &LAB.variants[q->variant];
    lab_port_args args = {.kind = (lab_entry_kind)q->kind,
                          .in = (const int *)resolve(q->in),
                          .heads = (const int *)resolve(q->heads),
                          .out = (int *)resolve(q->out),
                          .tile_sums = (int *)resolve(q->sums),
                          .count = (size_t *)resolve(q->count),
                          .temp = resolve(q->temp),
                          .n = q->n,
                          .n_rows = q->n_rows};
    const lab_result res = lab_port_call_local(v, q->k, &args, q->squeeze);
    cudaError_t err = cudaGetLastError();
    const char *where = "the lab's call (a launch)";
    if (err == cudaSuccess) {
        err = cudaDeviceSynchronize();
        where = "cudaDeviceSynchronize()";
    }
    a->result = (int32_t)res;
    if (err != cudaSuccess) {
        a->cuda_error = (int32_t)err;
        snprintf(a->why, sizeof(a->why), "%s (%s) in %s", cudaGetErrorName(err),
                 cudaGetErrorString(err), where);
    } else if (res == LAB_NOT_IMPLEMENTED && lab_not_implemented_why) {
        a->reason = lab_not_implemented_why(v, a->why, sizeof(a->why) - 1);
        if (a->reason == WHY_TODO)
            a->why[0] = '\0';
    }
    size_t count, bytes;
    lab_port_live(&count, &bytes);
    a->live_count = count;
    a->live_bytes = bytes;
}

int lab_port_serve(int channel_fd, int arena_fd)
{
    char why[256] = "";
    port_request q;
    g_chan = channel_fd;
    if (fcntl(g_chan, F_GETFD) < 0) {
        fprintf(stderr, "scan --serve: runs only as the lab process of a judge (grader)\n");
        return LAB_EXIT_USAGE;
    }
    fcntl(g_chan, F_SETFL, fcntl(g_chan, F_GETFL) | O_NONBLOCK);
    if (arena_fd >= 0) {
        g_arena = mmap(NULL, LAB_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                       arena_fd, 0);
        close(arena_fd);
        if (g_arena == MAP_FAILED)
            g_arena = NULL;
    }
#ifndef LAB_CPU_MODE
    cudaSetDeviceFlags(cudaDeviceScheduleSpin); /* the shortest wait for a call's end */
    lab_vmm_load();        /* the context and the driver's functions, before the sandbox */
    lab_squeeze_prepare(); /* what --squeeze needs, made while the sandbox allows it */
#endif
    /* what the runtime opens on its first use, opened now, while opening is allowed: the host's
     * memory (CPU mode's device properties and cudaMemGetInfo read it), the device's properties */
    double avail = 0, total = 0;
    lab_host_memory(&avail, &total);
#ifndef LAB_CPU_MODE
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
#endif
    const int under_tool = lab_under_tool();
    clearenv();
    port_reply hello;
    memset(&hello, 0, sizeof(hello));
    hello.op = REQ_HELLO;
    hello.value = lab_sandbox_enter(under_tool, why, sizeof(why)) == 0;
    if (!hello.value)
        snprintf(hello.why, sizeof(hello.why), "%s", why);
    send_reply(&hello);
    int fd;
    while (read_request(&q, &fd)) {
        port_reply a;
        memset(&a, 0, sizeof(a));
        a.op = q.op;
        a.seq = q.seq;
        switch (q.op) {
        case REQ_OPEN:
            open_buffer(&q, fd, &a);
            fd = -1;
            break;
        case REQ_CLOSE:
            close_buffer(&q);
            break;
        case REQ_TEMP:
            if (q.variant >= 0 && q.variant < LAB.n_variants && LAB.variants[q.variant].temp_bytes)
                a.value = LAB.variants[q.variant].temp_bytes(q.n);
            break;
        case REQ_NULL:
#ifndef LAB_CPU_MODE
            if (q.k == 1) {
                lab_launch_empty();
                a.cuda_error = (int32_t)cudaDeviceSynchronize();
            }
#endif
            break;
        case REQ_CALL:
            if (q.variant < 0 || q.variant >= LAB.n_variants)
                return LAB_EXIT_USAGE;
            lab_harness_banks = q.record ? 2 : 0; /* CPU mode: call 0's profile (lab_code_begin) */
            make_call(&q, &a);
            break;
        case REQ_PROFILE:
            lab_algorithm_measure(LAB.tile, &a.evidence);
            break;
        default:
            return LAB_EXIT_USAGE;
        }
        if (fd >= 0)
            close(fd); /* a descriptor with anything but an open request */
        send_reply(&a);
    }
    return LAB_EXIT_OK;
}
