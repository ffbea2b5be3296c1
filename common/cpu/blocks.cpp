/* blocks.cpp (CPU mode) — the block scheduler: which thread runs next, which block runs, when a
 * barrier opens, and the report for resident blocks that only poll (a block whose threads all wait
 * where none can go on is reported by report_stuck, errors.cpp). Part of CPU mode's runtime
 * (runtime.h lists its files; common/cpu/README.md explains the design).
 *
 * Threads. The scheduler always picks the next fiber at random among those that can run, from a
 * generator seeded by CPU_SCHED_SEED, the launch number (launch.cpp: among the lab's launches) and
 * the block index. A missing barrier therefore shows as a wrong result for some seed, and the same
 * seed gives the same order again.
 * A barrier that cannot complete (some threads returned, or wait at another barrier) is reported
 * with kernel, block and threads, as is a warp operation some lanes never reach.
 *
 * Blocks that run together. Up to g_resident blocks of a launch are resident at once, each in a
 * slot with its own threads (a fiber set), its own barrier state, thread order and dynamic shared
 * memory. Which block starts next is picked at random among the next g_resident not yet started,
 * in blockIdx order, so a later block can start, and run, ahead of an earlier one. The scheduler
 * runs the threads of one slot at a time; it may switch to another slot only where blocks can
 * interact: before an atomic or cuda::atomic_ref operation on global memory, at a fence,
 * __nanosleep, and every 16th pass of a loop's safe point (rewrite.py; block_switch_point in
 * fibers.cpp). Which block runs follows priorities, as in PCT (probabilistic concurrency testing):
 * each block gets a random one when it starts, the highest runs, and at an inter-block point the
 * running block may drop below all the others (DEMOTE_WRITE, _READ in fibers.cpp). So a block is
 * often suspended for a long stretch at one point (between a value and its flag, say) while the
 * others run ahead, which a fair coin at every point would almost never do. A switch saves the
 * running block's static shared memory (every registered __shared__ array and scalar) and puts the
 * other block's back in place, so each block sees only its own. A kernel with none of these points
 * runs block after block, as before. Memory stays sequentially consistent: a switch happens only
 * between whole operations.
 *
 * Deadlock: when g_deadlock_points (200,000; CPU_DEADLOCK_POINTS) inter-block points pass with no
 * progress (no atomic changed global memory, no barrier opened, no thread ended and no block
 * started), and at least POINTS_PER_THREAD for each thread that reached one, the resident blocks
 * only poll: the launch ends with a report naming each one and where its threads wait. The second
 * bound is for long loops that are work, not waiting: every thread of four resident blocks summing
 * 20,000 elements in a loop of its own (a correct O(n^2) scan) passes 1,250 points each before the
 * first ends.
 */
#include "runtime.h"

#include <algorithm>
#include <string.h>

namespace lab_cpu {
namespace rt {

int g_nthreads, g_ndone, g_nbar;
const char *g_bar_file;
int g_bar_line;
bool g_bar_divergent;
int g_bar_result;
std::vector<int> g_pool;
bool g_switch_req;
unsigned g_switch_demote;

namespace {

unsigned long long g_rng; /* the running block's thread order */

unsigned long long splitmix(unsigned long long &s)
{
    unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
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
        f->warp_waiting = 0;
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

/* ---- blocks that run together ---------------------------------------------------------------- */

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
int g_loaded = -1; /* the slot whose state is in the globals; -1 none */
unsigned long long g_sched_rng;
const unsigned long long POINTS_PER_THREAD = 4096;
unsigned long long g_idle_stretch; /* numbers the stretches without progress (fiber::idle_mark) */

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
    save_shared(b.image);
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
    restore_shared(b.image);
    g_loaded = k;
}

/* The resident blocks only poll: report each with where its threads are, and end the launch. */
void report_deadlock(unsigned long long points, unsigned long long finished,
                     unsigned long long not_started, int resident)
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
                 g_launch->name, points, parts.c_str(), finished, not_started, resident);
}

/* The scheduler's safe point: true when the launch must end, after a kernel error or because the
 * watchdog fired (reported here without a thread: none is running). */
bool launch_stopped()
{
    if (lab_cpu::g_timed_out && !g_aborted)
        kernel_error(cudaErrorLaunchTimeout, "%s: %s", kernel_and_block().c_str(), g_timeout_what);
    return g_aborted;
}

/* ---- running a grid -------------------------------------------------------------------------- */

/* One launch's grid while run_blocks runs it. */
struct grid_run {
    dim3 grid;
    unsigned long long total;                /* blocks in the grid */
    int resident;                            /* slots in use */
    std::vector<unsigned long long> pending; /* linear block numbers; [0, head) started */
    unsigned long long head, finished;
    int busy;                      /* slots with a block */
    int cur;                       /* the loaded slot; -1 none */
    unsigned long long idle, seen; /* inter-block points since g_progress was last seen to move */
    unsigned long long pollers;    /* the threads that reached one of them */
    long long floor;               /* below every priority given so far */
};

/* The slots (and their fiber sets, of at least `threads` fibers each) for `resident` blocks with
 * shmem bytes of dynamic shared memory each. */
void prepare_slots(int resident, int threads, size_t shmem)
{
    if ((int)g_slots.size() < resident)
        g_slots.resize(resident);
    if ((int)g_fiber_sets.size() < resident)
        g_fiber_sets.resize(resident);
    for (int k = 0; k < resident; k++)
        make_fibers(g_fiber_sets[k], threads);
    for (int k = 0; k < resident; k++) {
        block_slot &b = g_slots[k];
        b.busy = false;
        b.pool.clear();
        b.image.clear();
        b.dyn_store.assign(shmem + 16, 0); /* 16-byte aligned */
        b.dyn = (char *)(((uintptr_t)b.dyn_store.data() + 15) & ~(uintptr_t)15);
    }
}

/* Starts the next block in slot k, which is loaded (its globals are the running ones). */
void start_next(grid_run &r, int k)
{
    const unsigned long long window = std::min<unsigned long long>(r.resident, r.total - r.head);
    const unsigned long long j = r.head + (window > 1 ? splitmix(g_sched_rng) % window : 0);
    std::swap(r.pending[r.head], r.pending[j]);
    const unsigned long long l = r.pending[r.head++];
    blockIdx = uint3{(unsigned)(l % r.grid.x), (unsigned)(l / r.grid.x % r.grid.y),
                     (unsigned)(l / ((unsigned long long)r.grid.x * r.grid.y))};
    g_slots[k].busy = true;
    g_slots[k].prio = (long long)(splitmix(g_sched_rng) >> 33);
    start_block();
    lab_cpu::g_progress++;
}

/* The busy slot of the highest priority. */
int highest(const grid_run &r)
{
    int best = -1;
    for (int k = 0; k < r.resident; k++)
        if (g_slots[k].busy && (best < 0 || g_slots[k].prio > g_slots[best].prio))
            best = k;
    return best;
}

enum slot_run { SLOT_WAITS, SLOT_SWITCHED, SLOT_STOPPED };

/* Runs the threads of the loaded slot r.cur until none can run (SLOT_WAITS), the scheduler
 * switches to another block at an inter-block point (SLOT_SWITCHED), or the launch ends: a kernel
 * error, the watchdog, a deadlock (SLOT_STOPPED). */
slot_run run_slot(grid_run &r)
{
    while (!g_pool.empty()) {
        fiber *f = g_fibers[pick_next()];
        resume(f);
        if (launch_stopped())
            return SLOT_STOPPED;
        if (!g_switch_req)
            continue;
        g_switch_req = false;
        if (lab_cpu::g_progress != r.seen) {
            r.seen = lab_cpu::g_progress;
            r.idle = r.pollers = 0;
            g_idle_stretch++;
        } else {
            if (f->idle_mark != g_idle_stretch) {
                f->idle_mark = g_idle_stretch;
                r.pollers++;
            }
            if (++r.idle > g_deadlock_points && r.idle > POINTS_PER_THREAD * r.pollers) {
                report_deadlock(r.idle, r.finished, r.total - r.head, r.resident);
                return SLOT_STOPPED;
            }
        }
        if (r.busy > 1 && g_switch_demote && splitmix(g_sched_rng) % g_switch_demote == 0)
            g_slots[r.cur].prio = --r.floor;
        if (r.busy > 1 && highest(r) != r.cur) {
            save_slot(r.cur);
            r.cur = -1;
            return SLOT_SWITCHED;
        }
    }
    return SLOT_WAITS;
}

/* The block of the loaded slot has ended: the next block takes its slot, or the slot stays free. */
void end_block(grid_run &r)
{
    if (lab_cpu::banks::g_on)
        lab_cpu::banks::flush();
    r.finished++;
    if (r.head < r.total) {
        start_next(r, r.cur);
        if (r.resident > 1 && highest(r) != r.cur) {
            save_slot(r.cur);
            r.cur = -1;
        }
    } else {
        g_slots[r.cur].busy = false;
        r.busy--;
        g_loaded = -1;
        r.cur = r.resident > 1 ? -1 : 0;
    }
}

/* Every thread of the loaded block waits at the same barrier: open it. */
void open_barrier()
{
    if (lab_cpu::banks::g_on) /* the accesses before a barrier pair up by lane and site */
        lab_cpu::banks::flush();
    g_nbar = 0;
    lab_cpu::g_progress++;
    for (int i = 0; i < g_nthreads; i++) {
        /* each thread's own copy: a thread that runs on to the next barrier before the others
         * have left this one starts a new g_bar_result */
        g_fibers[i]->bar_result = g_bar_result;
        g_fibers[i]->state = F_READY;
        g_fibers[i]->spin_file = NULL; /* a deadlock report names only later spins */
        g_pool.push_back(i);
    }
}

} /* namespace */

/* Every block of the grid, up to g_resident at a time, until one is abandoned. */
void run_blocks(const dim3 &grid, const dim3 &block, size_t shmem)
{
    grid_run r;
    r.grid = grid;
    r.total = (unsigned long long)grid.x * grid.y * grid.z;
    r.resident = g_resident;
    if ((unsigned long long)r.resident > r.total)
        r.resident = (int)r.total;
    lab_cpu::g_blocks_together = r.resident > 1;
    prepare_slots(r.resident, (int)(block.x * block.y * block.z), shmem);
    unsigned long long s = g_seed * 0x9E3779B97F4A7C15ull ^ g_launch->number;
    g_sched_rng = splitmix(s);
    r.pending.resize(r.total);
    for (unsigned long long i = 0; i < r.total; i++)
        r.pending[i] = i;
    r.head = r.finished = 0;
    g_pool.clear();
    for (int k = 0; k < r.resident; k++) {
        load_slot(k);
        start_next(r, k);
        if (r.resident > 1)
            save_slot(k);
    }
    r.busy = r.resident;
    r.cur = r.resident > 1 ? -1 : 0;
    g_switch_req = false;
    r.idle = r.pollers = 0;
    g_idle_stretch++;
    r.seen = lab_cpu::g_progress;
    r.floor = 0;
    while (r.busy > 0) {
        if (r.cur < 0) {
            r.cur = highest(r);
            load_slot(r.cur);
        }
        const slot_run how = run_slot(r);
        if (how == SLOT_STOPPED)
            return;
        if (how == SLOT_SWITCHED)
            continue;
        if (g_ndone == g_nthreads) { /* the block has ended */
            end_block(r);
            continue;
        }
        if (g_nbar != g_nthreads || g_bar_divergent) {
            report_stuck();
            return;
        }
        open_barrier();
    }
}

} /* namespace rt */
} /* namespace lab_cpu */
