/* banks.cpp (CPU mode) — counts shared-memory bank conflicts the way the hardware serialises a
 * warp's access (see banks.h for how the accesses are seen, common/cpu/README.md for the rules).
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
 * This file is compiled without instrumentation: it defines the __tsan_* functions that an
 * instrumented lab object calls, including the atomic ones (which simply do the operation).
 */
#include "banks.h"

#include "cuda_runtime.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lab_cpu {
namespace banks {

bool g_on;

namespace {

struct record {
    const void *site;
    uintptr_t addr;
    unsigned size;
    bool store;
};

struct kernel_stats {
    std::string name;
    unsigned long long loads, stores;      /* warp-wide accesses */
    unsigned long long extra_ld, extra_st; /* wavefronts beyond one per part */
    unsigned long long degree_sum;
    unsigned worst;
};

std::vector<std::vector<record>> g_rec; /* per thread of the block */
int g_nthreads;
std::vector<kernel_stats> g_stats;
kernel_stats *g_cur_stats;

/* One lane's part of a grouped access. */
struct entry {
    const void *site;
    unsigned occ; /* the k-th execution of the site by this lane since the last barrier */
    int lane;
    uintptr_t addr;
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

/* Counts one warp-wide access: the entries [b, e) of one site and occurrence, ordered by lane. */
void count_access(const entry *b, const entry *e)
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
}

void flush_warp(int base, std::vector<entry> &all)
{
    all.clear();
    for (int lane = 0; lane < 32 && base + lane < g_nthreads; lane++) {
        std::vector<record> &r = g_rec[base + lane];
        std::map<const void *, unsigned> seen;
        for (const record &x : r)
            all.push_back(entry{x.site, seen[x.site]++, lane, x.addr, x.size, x.store});
        r.clear();
    }
    std::sort(all.begin(), all.end(), [](const entry &a, const entry &b) {
        if (a.site != b.site)
            return a.site < b.site;
        if (a.occ != b.occ)
            return a.occ < b.occ;
        return a.lane < b.lane;
    });
    for (size_t i = 0; i < all.size();) {
        size_t j = i + 1;
        while (j < all.size() && all[j].site == all[i].site && all[j].occ == all[i].occ)
            j++;
        count_access(&all[i], &all[j]);
        i = j;
    }
}

void record_access(const void *p, unsigned size, const void *site, bool store)
{
    const int t = current_thread();
    if (t < 0 || t >= g_nthreads || !g_cur_stats || !in_shared(p))
        return;
    g_rec[t].push_back(record{site, (uintptr_t)p, size ? size : 1, store});
}

} /* namespace */

void launch_begin(const char *kernel)
{
    g_cur_stats = NULL;
    for (kernel_stats &s : g_stats)
        if (s.name == kernel)
            g_cur_stats = &s;
    if (!g_cur_stats) {
        g_stats.push_back(kernel_stats{kernel, 0, 0, 0, 0, 0, 0});
        g_cur_stats = &g_stats.back();
    }
}

void block_start(int nthreads)
{
    g_nthreads = nthreads;
    if ((int)g_rec.size() < nthreads)
        g_rec.resize(nthreads);
    for (int i = 0; i < nthreads; i++)
        g_rec[i].clear();
}

/* The records of the blocks resident besides the running one, by slot (runtime.cpp). */
std::vector<std::vector<std::vector<record>>> g_saved_rec;
std::vector<int> g_saved_nthreads;

void save_block(int slot)
{
    if ((int)g_saved_rec.size() <= slot) {
        g_saved_rec.resize(slot + 1);
        g_saved_nthreads.resize(slot + 1);
    }
    std::swap(g_rec, g_saved_rec[slot]);
    g_saved_nthreads[slot] = g_nthreads;
}

void load_block(int slot)
{
    if ((int)g_saved_rec.size() <= slot)
        return; /* never saved: block_start follows */
    std::swap(g_rec, g_saved_rec[slot]);
    g_nthreads = g_saved_nthreads[slot];
}

void flush()
{
    if (!g_cur_stats)
        return;
    std::vector<entry> all;
    for (int base = 0; base < g_nthreads; base += 32)
        flush_warp(base, all);
}

} /* namespace banks */
} /* namespace lab_cpu */

using namespace lab_cpu;

extern "C" {

void lab_cpu_banks_record(int on)
{
    banks::g_on = on != 0;
    if (on)
        banks::g_stats.clear();
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

/* Atomics: done, always sequentially consistent (at least as strong as any order asked for).
 * Atomics are not counted: Nsight Compute's shared load/store metrics leave them out too. */
#define LAB_TSAN_ATOMIC(bits, T)                                                                   \
    T __tsan_atomic##bits##_load(const volatile T *a, int)                                         \
    {                                                                                              \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                               \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int)                                      \
    {                                                                                              \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                  \
    }                                                                                              \
    T __tsan_atomic##bits##_exchange(volatile T *a, T v, int)                                      \
    {                                                                                              \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int)                                      \
    {                                                                                              \
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                          \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int)                                    \
    {                                                                                              \
        return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int, int)          \
    {                                                                                              \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int, int)            \
    {                                                                                              \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
    }                                                                                              \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int, int)                \
    {                                                                                              \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
        return c;                                                                                  \
    }
LAB_TSAN_ATOMIC(8, unsigned char)
LAB_TSAN_ATOMIC(16, unsigned short)
LAB_TSAN_ATOMIC(32, unsigned)
LAB_TSAN_ATOMIC(64, unsigned long long)
#undef LAB_TSAN_ATOMIC

void __tsan_atomic_thread_fence(int)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

} /* extern "C" */
