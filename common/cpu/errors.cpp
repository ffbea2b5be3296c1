/* errors.cpp (CPU mode) — kernel errors and their reports. Part of CPU mode's runtime (runtime.h
 * lists its files; common/cpu/README.md explains the design).
 *
 * A kernel error (a barrier that cannot complete, a warp operation some lanes never reach, an
 * access out of bounds, a fault, a timeout, a deadlock) is reported once on stderr with kernel,
 * block, thread, place and seed; the kernel is abandoned and the error is sticky, as on a GPU:
 * every later call returns it, and cudaGetErrorString gives the full report.
 */
#include "runtime.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

namespace lab_cpu {
namespace rt {

cudaError_t g_sticky = cudaSuccess;
cudaError_t g_last = cudaSuccess;
char g_report[2048];

/* "0..31, 40, 42..63" for a sorted list of thread numbers. */
std::string ranges(const std::vector<int> &v)
{
    std::string out;
    char buf[48];
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1)
            j++;
        if (j == i)
            snprintf(buf, sizeof(buf), "%s%d", out.empty() ? "" : ", ", v[i]);
        else
            snprintf(buf, sizeof(buf), "%s%d..%d", out.empty() ? "" : ", ", v[i], v[j]);
        out += buf;
        i = j + 1;
        if (out.size() > 400) {
            out += ", ...";
            break;
        }
    }
    return out;
}

std::string where(const char *file, int line)
{
    if (!file)
        return "an unknown place";
    const char *slash = strrchr(file, '/');
    char buf[300];
    snprintf(buf, sizeof(buf), "%s:%d", slash ? slash + 1 : file, line);
    return buf;
}

/* "kernel k, block (3,0,0)" */
std::string kernel_and_block()
{
    char buf[400];
    snprintf(buf, sizeof(buf), "kernel %s, block (%u,%u,%u)", g_launch->name, blockIdx.x,
             blockIdx.y, blockIdx.z);
    return buf;
}

/* Records a kernel error: the sticky error, its report (printed once to stderr), the end of the
 * launch. Returns: from a fiber, fiber_error() then leaves the fiber. */
void kernel_error(cudaError_t err, const char *fmt, ...)
{
    char what[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(g_report, sizeof(g_report), "CPU mode: %s (launched at %s; CPU_SCHED_SEED=%llu)", what,
             g_launch ? where(g_launch->file, g_launch->line).c_str() : "?", g_seed);
    fprintf(stderr, "%s\n", g_report);
    fflush(stderr);
    g_sticky = err;
    set_error(err);
    g_aborted = true;
}

/* kernel_error naming the thread threadIdx: the running fiber, or the one that faulted. */
void thread_error(cudaError_t err, const char *what)
{
    kernel_error(err, "%s, thread (%u,%u,%u): %s", kernel_and_block().c_str(), threadIdx.x,
                 threadIdx.y, threadIdx.z, what);
}

/* Ends the process after a fatal misuse outside a kernel (the message is already on stderr).
 * _exit, not exit: the harness's atexit check (common/harness.h) would otherwise report the
 * lab's code as having ended the process itself. */
[[noreturn]] void fatal_exit()
{
    fflush(NULL);
    _exit(4);
}

/* ---- reports of a block that cannot go on (blocks.cpp) ------------------------------------- */

/* Everyone left waits and nothing can run: say why, and end the launch. */
void report_stuck()
{
    std::vector<int> done, at_bar, at_warp;
    for (int i = 0; i < g_nthreads; i++) {
        const fiber *f = g_fibers[i];
        (f->state == F_DONE ? done : f->state == F_BARRIER ? at_bar : at_warp).push_back(i);
    }
    std::string kb = kernel_and_block();
    if (!at_warp.empty()) {
        const fiber *f = g_fibers[at_warp[0]];
        const int warp = f->linear / 32;
        std::vector<int> missing, waiting;
        for (int l = 0; l < 32; l++) {
            const int t = warp * 32 + l;
            if (!((f->wmask >> l) & 1u) || t >= g_nthreads)
                continue;
            const fiber *g = g_fibers[t];
            if (g->state == F_WARP && g->wmask == f->wmask)
                waiting.push_back(t);
            else
                missing.push_back(t);
        }
        kernel_error(cudaErrorLaunchFailure,
                     "%s: a warp operation (mask 0x%08x) at %s waits for lanes that never reach "
                     "it: threads %s wait, threads %s %s",
                     kb.c_str(), f->wmask, where(f->file, f->line).c_str(), ranges(waiting).c_str(),
                     ranges(missing).c_str(),
                     missing.empty() ? ""
                     : g_fibers[missing[0]]->state == F_DONE
                         ? "have returned"
                         : "wait elsewhere (divergent warp operations)");
        return;
    }
    if (!done.empty()) {
        kernel_error(
            cudaErrorLaunchFailure,
            "%s: __syncthreads() at %s is reached by %zu of %d threads; threads %s returned "
            "without reaching it (an early return before a barrier?); waiting: threads %s",
            kb.c_str(), where(g_bar_file, g_bar_line).c_str(), at_bar.size(), g_nthreads,
            ranges(done).c_str(), ranges(at_bar).c_str());
        return;
    }
    /* divergent: group the waiting threads by barrier */
    std::map<std::string, std::vector<int>> by_site;
    for (int t : at_bar)
        by_site[where(g_fibers[t]->file, g_fibers[t]->line)].push_back(t);
    std::string parts;
    for (auto &kv : by_site) {
        if (!parts.empty())
            parts += "; ";
        parts += "threads " + ranges(kv.second) + " at " + kv.first;
    }
    kernel_error(cudaErrorLaunchFailure,
                 "%s: divergent __syncthreads(): the threads wait at different barriers (%s)",
                 kb.c_str(), parts.c_str());
}

/* "threads 0..31 spin at scan.cu:190; threads 32..127 wait at __syncthreads() at scan.cu:300" for
 * the block whose threads are fs[0..nthreads). */
std::string describe_threads(fiber **fs, int nthreads)
{
    std::map<std::string, std::vector<int>> groups;
    for (int i = 0; i < nthreads; i++) {
        const fiber *f = fs[i];
        std::string what;
        if (f->state == F_DONE)
            what = "have returned";
        else if (f->state == F_BARRIER)
            what = "wait at __syncthreads() at " + where(f->file, f->line);
        else if (f->state == F_WARP)
            what = "wait in a warp operation at " + where(f->file, f->line);
        else if (f->spin_file)
            what = "spin at " + where(f->spin_file, f->spin_line);
        else
            what = "are ready to run";
        groups[what].push_back(i);
    }
    std::string out;
    for (auto &kv : groups) {
        if (!out.empty())
            out += ", ";
        out += "threads " + ranges(kv.second) + " " + kv.first;
    }
    return out;
}

} /* namespace rt */
} /* namespace lab_cpu */
