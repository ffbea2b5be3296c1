/* launch.cpp (CPU mode) — a kernel launch: the settings read from the environment, the runtime's
 * start-up, the checks a GPU makes before it runs a launch, and lab_cpu::run_kernel, which runs
 * the grid (run_blocks, blocks.cpp) under the watchdog. Part of CPU mode's runtime (runtime.h
 * lists its files; common/cpu/README.md explains the design).
 */
#include "runtime.h"

#include <algorithm>
#include <string.h>

namespace lab_cpu {
namespace rt {

launch_t *g_launch;
unsigned long long g_seed = 1;
int g_timeout_s = 120;
int g_resident = 4;
unsigned long long g_deadlock_points = 200000;
std::map<const void *, int> g_func_smem;

namespace {

/* The numbers that seed each launch's schedule (blocks.cpp): the lab's own launches (made while
 * its code runs, the host guard on: lab_cpu_host_guard) are numbered among themselves, every other
 * launch (the harness's inputs, checks and carries; a program without the guard) among those. So
 * the harness's kernels around a call never move a lab's schedules, and a run in one process
 * numbers the lab's launches as a judged run's lab process, which launches nothing else, does. */
unsigned long long g_launches, g_lab_launches;
bool g_seed_read, g_seed_printed;

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
    const char *d = getenv("CPU_DEADLOCK_POINTS"); /* tests: a smaller bound, found sooner */
    if (d && *d)
        g_deadlock_points = std::max(1000ull, strtoull(d, NULL, 10));
    const char *r = getenv("CPU_RESIDENT_BLOCKS");
    if (r && *r)
        g_resident = std::max(1, std::min(64, atoi(r)));
}

void init_once()
{
    static bool done;
    if (done)
        return;
    done = true;
    read_settings();
    g_fiber_sets.resize(1);
    make_fibers(g_fiber_sets[0], 1);
    g_fibers = g_fiber_sets[0].data();
    getcontext(&g_template_uc);
    install_handlers();
}

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
} /* namespace rt */

using namespace rt;

void run_kernel(const char *name, const char *file, int line, const void *fn,
                const launch_config &cfg, void (*thunk)(void *), void *ctx)
{
    init_once();
    if (g_sticky != cudaSuccess)
        return;
    print_seed_once();
    if (!launch_ok(name, file, line, fn, cfg))
        return;
    launch_t L{
        name, file, line, cfg.block, thunk, ctx, in_lab_code() ? ++g_lab_launches : ++g_launches};
    g_launch = &L;
    gridDim = cfg.grid;
    blockDim = cfg.block;
    g_dyn_bytes = cfg.shmem; /* each resident block has its own (run_blocks) */
    g_aborted = false;
    if (banks::g_on)
        banks::launch_begin(name);
    watchdog_start();
    const bool opened = open_device_memory(); /* kernels read and write it; host code may not */
    run_blocks(cfg.grid, cfg.block, cfg.shmem);
    g_blocks_together = 0; /* host code after the launch is no inter-block point */
    watchdog_stop();
    if (g_aborted) /* fibers stopped mid-kernel start afresh next time */
        for (auto &set : g_fiber_sets)
            for (fiber *f : set)
                f->started = false;
    else
        check_padding();
    close_device_memory(opened);
    g_launch = NULL;
    g_dyn = NULL;
    g_dyn_bytes = 0;
}

} /* namespace lab_cpu */

/* What the occupancy calls report (cuda_runtime_api.h): the blocks the scheduler keeps resident,
 * so that a grid sized by them (a grid barrier's) all runs at once, as on a GPU. */
extern "C" int lab_cpu_resident_blocks(void)
{
    lab_cpu::rt::read_settings();
    return lab_cpu::rt::g_resident;
}
