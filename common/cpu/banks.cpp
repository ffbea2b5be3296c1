/* banks.cpp (CPU mode) — counts what a warp-wide memory access costs on a GPU: the passes a
 * shared-memory access needs (bank conflicts) and the 32-byte sectors a global-memory access
 * touches (coalescing). See banks.h for how the accesses are seen, common/cpu/README.md for the
 * rules.
 *
 * Size: about 590 lines, over the house's 400, because the two tables are one mechanism: the same
 * per-thread access log, the same warp pairing by loop path and source place (a lane's k-th
 * execution of one line) and the same report; split, each half would re-derive the pairing the
 * other needs. Where a site is in the source is sites.cpp; the atomic hooks, tsan_atomics.cpp.
 *
 * Shared memory has 32 banks, 4 bytes wide: word w (byte address / 4) is in bank w % 32. One
 * warp-wide access of 4 bytes per lane is served in as many passes ("wavefronts") as the largest
 * number of DIFFERENT words any one bank must deliver; lanes reading the same word share it (a
 * broadcast). Its conflict degree is that number: 1 is conflict-free, 32 is fully serial. Wider
 * accesses are split as the hardware splits them: 8 bytes per lane in two half-warps, 16 bytes in
 * four quarter-warps, each needing its own wavefronts; the degree is the worst part's. The extra
 * wavefronts (all of them minus one per part) are what Nsight Compute reports as bank conflicts
 * (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st).
 *
 * Global memory moves in 32-byte sectors. A warp-wide access touches every sector that holds a
 * byte one of its lanes reads or writes; the fewest it could touch is its distinct bytes / 32,
 * rounded up (neighbouring lanes at neighbouring addresses). Sectors are counted from the start
 * of the cudaMalloc buffer (a GPU's buffers start 256-byte aligned). Their ratio, per access site,
 * is Nsight Compute's "sectors per request" against the ideal.
 *
 * Lanes are paired by iteration: rewrite.py wraps each loop's condition in lab_cpu::loop_cond,
 * and each thread keeps the stack of loops it is in with their iteration numbers (its "path").
 * The k-th execution of a site on one path by each lane of a warp is one warp-wide access, as in
 * a GPU, where a warp runs a loop's iterations together and a lane that skips one is masked off.
 * A site is a source place (its inline chain of lines, from addr2line), not an instruction: the
 * host compiler may copy one access into several instructions that different lanes run.
 *
 * This file is compiled without instrumentation: it defines the __tsan_* functions that an
 * instrumented lab object calls, including the atomic ones (which simply do the operation).
 */
#include "banks.h"
#include "profile.h"
#include "sites.h"

#include "cuda_runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <map>
#include <string>
#include <unordered_map>
#include <unistd.h>
#include <vector>

namespace lab_cpu {
namespace banks {

bool g_on;
bool g_profile_only; /* lab_cpu_banks_record(2): the algorithm profile alone, no tables */

namespace {

struct record {
    const void *site;
    uint64_t path;  /* the loops the thread is in, with their iterations (hash) */
    uintptr_t addr; /* shared: the address; global: the offset in its cudaMalloc buffer */
    uintptr_t buf;  /* global: the buffer's start; 0 for shared memory */
    unsigned size;
    bool store;
};

struct loop_frame {
    unsigned id;
    unsigned iter;
};

/* One GPU thread of the running block: its records since the last barrier and its loops. */
struct lane_state {
    std::vector<record> rec;
    std::vector<loop_frame> loops;
    uint64_t path;
    unsigned shuffles; /* warp shuffles since the last barrier (the profile's) */
};

struct site_stats {
    unsigned long long accesses, sectors, min_sectors;
};

/* One shared-memory access site's warp-wide accesses: their passes beyond the first of each part
 * (extra), their degrees' sum and the worst degree. */
struct bank_site_stats {
    unsigned long long accesses, extra, degree_sum;
    unsigned worst;
};

struct kernel_stats {
    std::string name;
    unsigned long long loads, stores;      /* warp-wide shared accesses */
    unsigned long long extra_ld, extra_st; /* wavefronts beyond one per part */
    unsigned long long degree_sum;
    unsigned worst;
    std::map<std::pair<const void *, bool>, site_stats> global;      /* by (site, store) */
    std::map<std::pair<const void *, bool>, bank_site_stats> shared; /* by (site, store) */
};

std::vector<lane_state> g_lanes; /* per thread of the block */
int g_nthreads;
std::vector<kernel_stats> g_stats;
kernel_stats *g_cur_stats;

/* One lane's part of a grouped access. */
struct entry {
    const void *site;
    uint64_t path;
    unsigned occ; /* the k-th execution of the site on this path by this lane since the barrier */
    int lane;
    uintptr_t addr, buf;
    unsigned size;
    bool store;
};

/* Wavefronts one part of a warp-wide access needs: the most distinct words in one bank. */
unsigned part_wavefronts(const entry *e, size_t n)
{
    std::vector<uintptr_t> words;
    for (size_t i = 0; i < n; i++)
        for (uintptr_t w = e[i].addr / 4; w <= (e[i].addr + e[i].size - 1) / 4; w++)
            words.push_back(w);
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    unsigned per_bank[32] = {0}, most = 0;
    for (uintptr_t w : words)
        most = std::max(most, ++per_bank[w % 32]);
    return most;
}

/* Counts one warp-wide shared access: the entries [b, e) of one group, ordered by lane. */
void count_shared(const entry *b, const entry *e)
{
    unsigned width = 4;
    for (const entry *p = b; p < e; p++)
        width = std::max(width, std::min(p->size, 16u));
    const int lanes_per_part = width > 8 ? 8 : width > 4 ? 16 : 32;
    unsigned degree = 0, wavefronts = 0, parts = 0;
    for (const entry *p = b; p < e;) {
        const int part = p->lane / lanes_per_part;
        const entry *q = p;
        while (q < e && q->lane / lanes_per_part == part)
            q++;
        const unsigned w = part_wavefronts(p, (size_t)(q - p));
        degree = std::max(degree, w);
        wavefronts += w;
        parts++;
        p = q;
    }
    kernel_stats &s = *g_cur_stats;
    (b->store ? s.stores : s.loads)++;
    (b->store ? s.extra_st : s.extra_ld) += wavefronts - parts;
    s.degree_sum += degree;
    s.worst = std::max(s.worst, degree);
    bank_site_stats &site = s.shared[{b->site, b->store}];
    site.accesses++;
    site.extra += wavefronts - parts;
    site.degree_sum += degree;
    site.worst = std::max(site.worst, degree);
}

/* Counts one warp-wide global access: the sectors its bytes lie in, and the fewest that could
 * hold as many distinct bytes. */
void count_global(const entry *b, const entry *e)
{
    std::vector<std::pair<uintptr_t, uintptr_t>> spans; /* [from, to) by (buffer, offset) */
    std::vector<std::pair<uintptr_t, uintptr_t>> sectors;
    for (const entry *p = b; p < e; p++) {
        spans.push_back({p->addr, p->addr + p->size});
        for (uintptr_t s = p->addr / 32; s <= (p->addr + p->size - 1) / 32; s++)
            sectors.push_back({p->buf, s});
    }
    std::sort(sectors.begin(), sectors.end());
    const size_t touched = (size_t)(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    /* distinct bytes (entries of different buffers never share a site's access in practice;
     * their spans are merged per offset, which can only lower the minimum) */
    std::sort(spans.begin(), spans.end());
    uintptr_t bytes = 0, end = 0;
    for (const auto &sp : spans) {
        const uintptr_t from = std::max(sp.first, end);
        if (sp.second > from)
            bytes += sp.second - from;
        end = std::max(end, sp.second);
    }
    site_stats &st = g_cur_stats->global[{b->site, b->store}];
    st.accesses++;
    st.sectors += touched;
    st.min_sectors += std::max<uintptr_t>(1, (bytes + 31) / 32);
}

void flush_warp(int base, std::vector<entry> &all)
{
    all.clear();
    for (int lane = 0; lane < 32 && base + lane < g_nthreads; lane++) {
        std::vector<record> &r = g_lanes[base + lane].rec;
        std::map<std::pair<const void *, uint64_t>, unsigned> seen;
        for (const record &x : r)
            all.push_back(entry{x.site, x.path, seen[{x.site, x.path}]++, lane, x.addr, x.buf,
                                x.size, x.store});
        r.clear();
    }
    std::sort(all.begin(), all.end(), [](const entry &a, const entry &b) {
        if (a.site != b.site)
            return a.site < b.site;
        if (a.path != b.path)
            return a.path < b.path;
        if (a.occ != b.occ)
            return a.occ < b.occ;
        return a.lane < b.lane;
    });
    for (size_t i = 0; i < all.size();) {
        size_t j = i + 1;
        while (j < all.size() && all[j].site == all[i].site && all[j].path == all[i].path &&
               all[j].occ == all[i].occ)
            j++;
        if (all[i].buf)
            count_global(&all[i], &all[j]);
        else
            count_shared(&all[i], &all[j]);
        i = j;
    }
}

void record_access(const void *p, unsigned size, const void *site, bool store)
{
    const int t = current_thread();
    if (t < 0 || t >= g_nthreads || !g_cur_stats)
        return;
    uintptr_t buf = 0, addr = (uintptr_t)p;
    if (!in_shared(p)) {
        const void *start = global_buffer(p);
        if (!start)
            return; /* the thread's own stack or host memory */
        buf = (uintptr_t)start;
        addr -= buf;
    }
    lane_state &l = g_lanes[t];
    l.rec.push_back(record{site, l.path, addr, buf, size ? size : 1, store});
}

uint64_t path_hash(const std::vector<loop_frame> &loops)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (const loop_frame &f : loops) {
        h = (h ^ f.id) * 0x100000001B3ull;
        h = (h ^ f.iter) * 0x100000001B3ull;
    }
    return h;
}

/* The phase of block 0 that this barrier (or the block's end) closes, for the algorithm profile
 * (profile.h): its threads' records before flush_warp groups them by warp. */
void profile_phase()
{
    profile::phase p{};
    std::vector<profile::span> reads, writes;
    for (int t = 0; t < g_nthreads; t++) {
        p.shuffles += g_lanes[t].shuffles;
        bool stored = false;
        unsigned loaded = 0;
        for (const record &x : g_lanes[t].rec) {
            if (x.buf) {
                (x.store ? p.global_stores : p.global_loads)++;
                continue;
            }
            (x.store ? p.shared_stores : p.shared_loads)++;
            if (x.store)
                p.shared_store_words += (x.size + 3) / 4;
            else
                loaded += (x.size + 3) / 4;
            const void *base = NULL;
            const char *name = shared_name((const void *)x.addr, &base);
            profile::widen(x.store ? writes : reads, name, (x.addr - (uintptr_t)base) / 4);
            stored = stored || x.store;
        }
        p.threads_storing += stored;
        if (loaded) {
            p.min_thread_loads = p.threads_loading ? std::min(p.min_thread_loads, loaded) : loaded;
            p.threads_loading++;
        }
    }
    if (p.shared_loads + p.shared_stores + p.global_loads + p.global_stores + p.shuffles)
        profile::add_phase(p, reads, writes);
}

/* The canonical site of each record of the block's threads, placing new sites first. */
void canonical_sites()
{
    std::vector<const void *> fresh;
    for (int t = 0; t < g_nthreads; t++)
        for (const record &x : g_lanes[t].rec)
            if (!sites::known(x.site) &&
                std::find(fresh.begin(), fresh.end(), x.site) == fresh.end())
                fresh.push_back(x.site);
    if (!fresh.empty())
        sites::resolve(fresh);
    const void *last = NULL, *canon = NULL;
    for (int t = 0; t < g_nthreads; t++)
        for (record &x : g_lanes[t].rec) {
            if (x.site != last) {
                last = x.site;
                canon = sites::canonical(x.site);
            }
            x.site = canon;
        }
}

/* The rows lab_cpu_sectors_get and lab_cpu_bank_sites_get return: per kernel, per source line
 * and direction. */
template <class Stats> struct line_row {
    int kernel;
    std::string where;
    bool store;
    Stats s;
    std::string func; /* the function the line is in (sites::function), "" when unknown */
};
using sector_row = line_row<site_stats>;
using bank_row = line_row<bank_site_stats>;
std::vector<sector_row> g_rows;
std::vector<bank_row> g_bank_rows;
bool g_rows_stale = true;

void add_to(site_stats &to, const site_stats &s)
{
    to.accesses += s.accesses;
    to.sectors += s.sectors;
    to.min_sectors += s.min_sectors;
}

void add_to(bank_site_stats &to, const bank_site_stats &s)
{
    to.accesses += s.accesses;
    to.extra += s.extra;
    to.degree_sum += s.degree_sum;
    to.worst = std::max(to.worst, s.worst);
}

/* One kernel's sites summed per source line (several sites can share one), by line number
 * within the file, loads before stores. */
template <class Stats>
void add_rows(int k, const std::map<std::pair<const void *, bool>, Stats> &sites,
              std::vector<line_row<Stats>> &out)
{
    std::map<std::pair<std::string, bool>, Stats> lines;
    std::map<std::string, std::string> funcs; /* a line's function */
    for (const auto &kv : sites) {
        const std::string where = sites::where(kv.first.first);
        add_to(lines[{where, kv.first.second}], kv.second);
        funcs.emplace(where, sites::function(kv.first.first));
    }
    std::vector<line_row<Stats>> rows;
    for (const auto &kv : lines)
        rows.push_back(
            line_row<Stats>{k, kv.first.first, kv.first.second, kv.second, funcs[kv.first.first]});
    std::sort(rows.begin(), rows.end(), [](const line_row<Stats> &a, const line_row<Stats> &b) {
        const size_t ca = a.where.rfind(':'), cb = b.where.rfind(':');
        const std::string fa = a.where.substr(0, ca), fb = b.where.substr(0, cb);
        if (fa != fb)
            return fa < fb;
        const long la = ca == std::string::npos ? 0 : atol(a.where.c_str() + ca + 1);
        const long lb = cb == std::string::npos ? 0 : atol(b.where.c_str() + cb + 1);
        if (la != lb)
            return la < lb;
        return a.store < b.store;
    });
    out.insert(out.end(), rows.begin(), rows.end());
}

void make_rows()
{
    g_rows.clear();
    g_bank_rows.clear();
    for (size_t k = 0; k < g_stats.size(); k++) {
        add_rows((int)k, g_stats[k].global, g_rows);
        add_rows((int)k, g_stats[k].shared, g_bank_rows);
    }
    g_rows_stale = false;
}

} /* namespace */

void launch_begin(const char *kernel)
{
    profile::launch(kernel, blockDim.x * blockDim.y * blockDim.z,
                    (unsigned long long)gridDim.x * gridDim.y * gridDim.z);
    g_cur_stats = NULL;
    g_rows_stale = true;
    for (kernel_stats &s : g_stats)
        if (s.name == kernel)
            g_cur_stats = &s;
    if (!g_cur_stats) {
        g_stats.push_back(kernel_stats{kernel, 0, 0, 0, 0, 0, 0, {}, {}});
        g_cur_stats = &g_stats.back();
    }
}

void block_start(int nthreads)
{
    g_nthreads = nthreads;
    if ((int)g_lanes.size() < nthreads)
        g_lanes.resize(nthreads);
    const uint64_t empty = path_hash({});
    for (int i = 0; i < nthreads; i++) {
        g_lanes[i].rec.clear();
        g_lanes[i].loops.clear();
        g_lanes[i].path = empty;
        g_lanes[i].shuffles = 0;
    }
}

/* The lanes of the blocks resident besides the running one, by slot (blocks.cpp). */
std::vector<std::vector<lane_state>> g_saved_lanes;
std::vector<int> g_saved_nthreads;

void save_block(int slot)
{
    if ((int)g_saved_lanes.size() <= slot) {
        g_saved_lanes.resize(slot + 1);
        g_saved_nthreads.resize(slot + 1);
    }
    std::swap(g_lanes, g_saved_lanes[slot]);
    g_saved_nthreads[slot] = g_nthreads;
}

void load_block(int slot)
{
    if ((int)g_saved_lanes.size() <= slot)
        return; /* never saved: block_start follows */
    std::swap(g_lanes, g_saved_lanes[slot]);
    g_nthreads = g_saved_nthreads[slot];
}

void flush()
{
    if (!g_cur_stats)
        return;
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
        profile_phase();
    for (int t = 0; t < g_nthreads; t++)
        g_lanes[t].shuffles = 0;
    if (g_profile_only) { /* no source lines: nothing starts addr2line (graded runs may not) */
        for (int t = 0; t < g_nthreads; t++)
            g_lanes[t].rec.clear();
        return;
    }
    canonical_sites();
    std::vector<entry> all;
    for (int base = 0; base < g_nthreads; base += 32)
        flush_warp(base, all);
}

void shuffled()
{
    const int t = current_thread();
    if (t >= 0 && t < g_nthreads && g_cur_stats)
        g_lanes[t].shuffles++;
}

/* A loop's condition was evaluated to c by the running thread (rewrite.py's LAB_CPU_LOOP). The
 * loops inside this one that are still on the stack were left (a break, a return): they go. A
 * true condition starts the next iteration (the first one when the loop is new on the stack); a
 * false one leaves the loop. */
void loop_tick(unsigned id, bool c)
{
    const int t = current_thread();
    if (t < 0 || t >= g_nthreads || !g_cur_stats)
        return;
    lane_state &l = g_lanes[t];
    size_t k = l.loops.size();
    while (k > 0 && l.loops[k - 1].id != id)
        k--;
    if (k == 0) { /* not on the stack: entered now */
        if (!c)
            return; /* not even one iteration: no change of path */
        l.loops.push_back(loop_frame{id, 0});
    } else {
        l.loops.resize(c ? k : k - 1);
        if (c)
            l.loops.back().iter++;
    }
    l.path = path_hash(l.loops);
}

} /* namespace banks */

} /* namespace lab_cpu */

using namespace lab_cpu;

extern "C" {

void lab_cpu_banks_record(int on)
{
    banks::g_on = on != 0;
    banks::g_profile_only = on == 2;
    if (on) {
        profile::clear();
        banks::g_stats.clear();
        banks::g_rows_stale = true;
    }
    banks::g_cur_stats = NULL;
}

int lab_cpu_banks_count(void)
{
    return (int)banks::g_stats.size();
}

int lab_cpu_banks_get(int i, lab_cpu_bank_stats *out)
{
    if (i < 0 || i >= (int)banks::g_stats.size() || !out)
        return 0;
    const banks::kernel_stats &s = banks::g_stats[i];
    out->kernel = s.name.c_str();
    out->loads = s.loads;
    out->stores = s.stores;
    out->extra_ld = s.extra_ld;
    out->extra_st = s.extra_st;
    const unsigned long long n = s.loads + s.stores;
    out->mean_degree = n ? (double)s.degree_sum / (double)n : 0.0;
    out->worst = s.worst;
    return 1;
}

int lab_cpu_bank_sites_get(int i, lab_cpu_bank_site_stats *out)
{
    if (banks::g_rows_stale)
        banks::make_rows();
    if (i < 0 || i >= (int)banks::g_bank_rows.size() || !out)
        return 0;
    const banks::bank_row &r = banks::g_bank_rows[i];
    out->kernel = banks::g_stats[r.kernel].name.c_str();
    out->site = r.where.c_str();
    out->func = r.func.c_str();
    out->store = r.store;
    out->accesses = r.s.accesses;
    out->extra = r.s.extra;
    out->mean_degree = r.s.accesses ? (double)r.s.degree_sum / (double)r.s.accesses : 0.0;
    out->worst = r.s.worst;
    return 1;
}

int lab_cpu_sectors_get(int i, lab_cpu_sector_stats *out)
{
    if (banks::g_rows_stale)
        banks::make_rows();
    if (i < 0 || i >= (int)banks::g_rows.size() || !out)
        return 0;
    const banks::sector_row &r = banks::g_rows[i];
    out->kernel = banks::g_stats[r.kernel].name.c_str();
    out->site = r.where.c_str();
    out->func = r.func.c_str();
    out->store = r.store;
    out->accesses = r.s.accesses;
    out->sectors = r.s.sectors;
    out->min_sectors = r.s.min_sectors;
    return 1;
}

/* ---- the ThreadSanitizer entry points an instrumented object calls ----------------------------
 */

#define LAB_BANK_HOOK(kind, n, store)                                                              \
    void __tsan_##kind##n(void *p)                                                                 \
    {                                                                                              \
        if (__builtin_expect(banks::g_on, 0))                                                      \
            banks::record_access(p, n, __builtin_return_address(0), store);                        \
    }                                                                                              \
    void __tsan_unaligned_##kind##n(void *p)                                                       \
    {                                                                                              \
        if (__builtin_expect(banks::g_on, 0))                                                      \
            banks::record_access(p, n, __builtin_return_address(0), store);                        \
    }                                                                                              \
    void __tsan_volatile_##kind##n(void *p)                                                        \
    {                                                                                              \
        if (__builtin_expect(banks::g_on, 0))                                                      \
            banks::record_access(p, n, __builtin_return_address(0), store);                        \
    }
LAB_BANK_HOOK(read, 1, false)
LAB_BANK_HOOK(read, 2, false)
LAB_BANK_HOOK(read, 4, false)
LAB_BANK_HOOK(read, 8, false)
LAB_BANK_HOOK(read, 16, false)
LAB_BANK_HOOK(write, 1, true)
LAB_BANK_HOOK(write, 2, true)
LAB_BANK_HOOK(write, 4, true)
LAB_BANK_HOOK(write, 8, true)
LAB_BANK_HOOK(write, 16, true)
#undef LAB_BANK_HOOK

/* A range (a struct copy, say) counts as one access of its size, at most 16 bytes per lane. */
void __tsan_read_range(void *p, unsigned long size)
{
    if (__builtin_expect(banks::g_on, 0))
        banks::record_access(p, (unsigned)std::min(size, 16ul), __builtin_return_address(0), false);
}
void __tsan_write_range(void *p, unsigned long size)
{
    if (__builtin_expect(banks::g_on, 0))
        banks::record_access(p, (unsigned)std::min(size, 16ul), __builtin_return_address(0), true);
}

void __tsan_init(void) {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **, void *) {}
void __tsan_vptr_read(void **) {}

} /* extern "C" */
