/* rig_host.c — the calls of a host lab (lab 01): host arrays, the lab's scan timed by the host's
 * monotonic clock, every call checked on the host (see rig.h).
 *
 * Call k's input is call 0's with a constant c added to every element (c = 0 for call 0), so
 * every call scans a new input yet its answer follows from the CPU reference without a new serial
 * scan (verdict.c: shifted_ref): the checks stay cheap next to the lab's own scan.
 */
#include "rig.h"
#include "gen.h"
#include "port.h"
#include "verdict.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int *in, *out; /* guarded, cap elements */
    void *temp;
    size_t cap, temp_bytes, temp_n;
    lab_layout li, lo; /* the call's */
    unsigned c;        /* the call's constant */
} host_rig;

static int host_accepts(const lab_info *lab, const lab_variant *v)
{
    (void)v;
    return lab->shape == LAB_HOST;
}

static int host_alloc(void *self, const lab_case *c, size_t cap, lab_report *r)
{
    host_rig *g = self;
    r->mode = "host";
    r->device = "CPU (serial)";
    g->cap = cap;
    g->temp_bytes = lab_port_temp_bytes(c->v, cap);
    g->temp_n = (size_t)-1;
    g->in = lab_port_host_alloc(lab_layout_words(cap) * sizeof(int));
    g->out = lab_port_host_alloc(lab_layout_words(cap) * sizeof(int));
    g->temp = g->temp_bytes ? lab_port_host_alloc(g->temp_bytes) : NULL;
    if (!g->in || !g->out || (g->temp_bytes && !g->temp)) {
        r->status = ST_NO_MEMORY;
        lab_report_msg(r, "cannot allocate host memory for n=%zu", cap);
        return -1;
    }
    return 0;
}

static void host_prepare(void *self, const lab_case *c, int k, size_t n)
{
    host_rig *g = self;
    g->c = k == 0 ? 0u : (unsigned)lab_call_seed(c->o->seed, (unsigned)k);
    g->li = lab_make_layout(g->cap, n, c->o->offset_in);
    g->lo = lab_make_layout(g->cap, n, c->o->offset_out);
    int *in = g->in + g->li.front;
    for (size_t i = 0; i < n; i++)
        in[i] = (int)((unsigned)c->first->in[i] + g->c);
    lab_guard_host(g->in, g->li);
    memset(g->out + g->lo.front, LAB_POISON_BYTE, n * sizeof(int));
    lab_guard_host(g->out, g->lo);
    if (g->temp_bytes && g->temp_n != n) { /* zero-filled for each new n (lab.h) */
        memset(g->temp, 0, g->temp_bytes);
        g->temp_n = n;
    }
}

static lab_result host_invoke(void *self, const lab_case *c, int k, size_t n, lab_call_ms *ms)
{
    host_rig *g = self;
    const lab_port_args a = {.kind = LAB_ENTRY_SCAN,
                             .in = g->in + g->li.front,
                             .out = g->out + g->lo.front,
                             .temp = g->temp,
                             .n = n};
    const double t0 = lab_now_ms();
    const lab_result res = lab_port_call(c, k, &a);
    const double t1 = lab_now_ms();
    if (ms) {
        ms->scan = t1 - t0; /* less the channel's: case.c, timings_finish */
        ms->tile = 0;
    }
    return res;
}

static lab_status host_check(void *self, const lab_case *c, int k, size_t n, lab_report *r)
{
    host_rig *g = self;
    (void)k, (void)n;
    return lab_validate(c->lab, c->first->in, c->first->ref, g->c, g->in, g->li, g->out, g->lo, r);
}

static double host_copy_ms(void *self, const lab_case *c, size_t n)
{
    host_rig *g = self;
    (void)c;
    const double t0 = lab_now_ms();
    memcpy(g->out + g->lo.front, g->in + g->li.front, n * sizeof(int));
    return lab_now_ms() - t0;
}

static void host_free(void *self)
{
    host_rig *g = self;
    lab_port_host_free(g->temp);
    lab_port_host_free(g->out);
    lab_port_host_free(g->in);
}

const lab_rig lab_rig_host = {
    .size = sizeof(host_rig),
    .reference = LAB_REF_ALWAYS,
    .accepts = host_accepts,
    .alloc = host_alloc,
    .prepare = host_prepare,
    .invoke = host_invoke,
    .check = host_check,
    .copy_ms = host_copy_ms,
    .free = host_free,
};
