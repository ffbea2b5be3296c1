/* warp.cpp (CPU mode) — warp operations: __shfl_sync and its _up/_down/_xor forms, __ballot_sync,
 * __any_sync, __all_sync, __match_any_sync and __syncwarp, all through lab_cpu::warp_op. Part of
 * CPU mode's runtime (runtime.h lists its files; common/cpu/README.md explains the design).
 *
 * A lane arrives and waits (its fiber yields); the last lane of the mask to arrive computes every
 * lane's result, by the rules of PTX's shfl.sync, and readies the others. A lane that never
 * arrives leaves the others waiting: the scheduler reports it (report_stuck, blocks.cpp).
 */
#include "banks.h"
#include "runtime.h"

namespace lab_cpu {
namespace rt {
namespace {

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

/* True when every lane of group waits in a warp operation with the same mask. The warp's
 * warp_waiting bits (on its lane 0) say which lanes wait at all: until every lane of group does,
 * the answer is no without looking at each lane. */
bool all_arrived(int base, unsigned group, unsigned mask)
{
    if ((g_fibers[base]->warp_waiting & group) != group)
        return false;
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
        case W_MATCH_ANY: { /* the lanes of group whose value has g's bits */
            unsigned same = 0;
            for (int k = 0; k < 32; k++)
                if (((group >> k) & 1u) && g_fibers[base + k]->wval == g->wval)
                    same |= 1u << k;
            g->wres = same;
            break;
        }
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
    g_fibers[base]->warp_waiting &= ~group; /* f's bit too: it leaves with its result */
}

} /* namespace */
} /* namespace rt */

/* ---- the device-side entry point (lab_cpu.h) ------------------------------------------------- */

/* A lane arrives and waits; the last lane of the mask to arrive computes every lane's result. */
unsigned long long warp_op(int kind, unsigned mask, unsigned long long value, int arg, int width,
                           const char *file, int line)
{
    using namespace rt;
    fiber *f = running_fiber("a warp operation", file, line);
    if (g_timed_out)
        timeout_stop();
    check_warp_call(f, mask, width, file, line);
    if (banks::g_on && kind >= W_SHFL && kind <= W_SHFL_XOR)
        banks::shuffled();
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
    g_fibers[base]->warp_waiting |= 1u << (f->linear & 31);
    const unsigned group = mask & present_lanes(base);
    if (!all_arrived(base, group, mask)) {
        yield(); /* a later lane completes the operation, f's result included */
        return f->wres;
    }
    complete_warp_op(f, base, group, gather_ballot(f, base, group, file, line));
    f->state = F_READY;
    return f->wres;
}

} /* namespace lab_cpu */
