/* profile.cpp (CPU mode) — the algorithm profile of a lab's first call: for each kernel launch
 * while bank counting is on (banks.h: lab_cpu_banks_record), what block 0 did between each two
 * barriers: its threads' shared-memory loads and stores (accesses: an int4 is one), how many
 * threads stored, their warp shuffles, which words of which __shared__ array were read and which
 * written, and its global loads and stores. The phases are what tell one scan algorithm from
 * another: a Kogge-Stone tile of T threads takes about log2(T) of them, each reading one array and
 * writing the other when double-buffered; Brent-Kung's tree takes about 2 log2(T), with half the
 * threads storing, then a quarter, ... (labs/04_brent_kung/README.md). banks.cpp measures a phase
 * when it flushes a barrier's records; this file keeps the phases and answers the C API
 * (cuda_runtime_api.h: lab_cpu_profile_*). */
#include "profile.h"

#include "cuda_runtime.h"

#include <algorithm>
#include <string>
#include <vector>

namespace lab_cpu {
namespace profile {

namespace {

struct phase_row {
    phase p;
    std::string reads, writes;     /* "name[lo..hi]" of each array, ", " between them */
    bool disjoint;                 /* it wrote no word it read */
    unsigned long long read_words; /* the words from each array's first read to its last */
};

struct launch_row {
    std::string kernel;
    unsigned threads;
    unsigned long long blocks;
    std::vector<phase_row> phases;
};

std::vector<launch_row> g_launches;

std::string joined(const std::vector<span> &spans)
{
    std::string out;
    for (const span &s : spans)
        out += (out.empty() ? "" : ", ") + s.array + "[" + std::to_string(s.lo) + ".." +
               std::to_string(s.hi) + "]";
    return out;
}

unsigned long long spanned(const std::vector<span> &spans)
{
    unsigned long long words = 0;
    for (const span &s : spans)
        words += s.hi - s.lo + 1;
    return words;
}

bool disjoint(const std::vector<span> &reads, const std::vector<span> &writes)
{
    for (const span &r : reads)
        for (const span &w : writes)
            if (r.array == w.array && r.lo <= w.hi && w.lo <= r.hi)
                return false;
    return true;
}

} /* namespace */

void widen(std::vector<span> &spans, const char *name, uintptr_t word)
{
    for (span &s : spans)
        if (s.array == name) {
            s.lo = std::min(s.lo, word);
            s.hi = std::max(s.hi, word);
            return;
        }
    spans.push_back(span{name, word, word});
}

void clear()
{
    g_launches.clear();
}

void launch(const char *kernel, unsigned threads, unsigned long long blocks)
{
    g_launches.push_back(launch_row{kernel ? kernel : "?", threads, blocks, {}});
}

void add_phase(const phase &p, const std::vector<span> &reads, const std::vector<span> &writes)
{
    if (g_launches.empty())
        return;
    g_launches.back().phases.push_back(
        phase_row{p, joined(reads), joined(writes), disjoint(reads, writes), spanned(reads)});
}

} /* namespace profile */
} /* namespace lab_cpu */

using namespace lab_cpu;

extern "C" {

int lab_cpu_profile_launch(int i, lab_cpu_launch_profile *out)
{
    if (i < 0 || i >= (int)profile::g_launches.size() || !out)
        return 0;
    const profile::launch_row &l = profile::g_launches[i];
    out->kernel = l.kernel.c_str();
    out->threads = l.threads;
    out->blocks = l.blocks;
    out->phases = (int)l.phases.size();
    return 1;
}

int lab_cpu_profile_phase(int i, int k, lab_cpu_phase_profile *out)
{
    if (i < 0 || i >= (int)profile::g_launches.size() || !out)
        return 0;
    const profile::launch_row &l = profile::g_launches[i];
    if (k < 0 || k >= (int)l.phases.size())
        return 0;
    const profile::phase_row &r = l.phases[k];
    out->shared_loads = r.p.shared_loads;
    out->shared_stores = r.p.shared_stores;
    out->shared_store_words = r.p.shared_store_words;
    out->threads_loading = r.p.threads_loading;
    out->min_thread_loads = r.p.min_thread_loads;
    out->threads_storing = r.p.threads_storing;
    out->global_loads = r.p.global_loads;
    out->global_stores = r.p.global_stores;
    out->shuffles = r.p.shuffles;
    out->reads = r.reads.c_str();
    out->writes = r.writes.c_str();
    out->disjoint = r.disjoint;
    out->read_words = r.read_words;
    return 1;
}

} /* extern "C" */
