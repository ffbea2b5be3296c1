/* profile.h (CPU mode, internal) — the algorithm profile of a lab's first call (profile.cpp),
 * between the bank and sector counter, which measures each phase (banks.cpp), and the C API.
 * Lab code never includes it. */
#ifndef LAB_CPU_PROFILE_H
#define LAB_CPU_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace lab_cpu {
namespace profile {

/* What block 0's threads did between two barriers (or a barrier and the block's start or end). */
struct phase {
    unsigned long long shared_loads, shared_stores; /* accesses (an int4 is one), by all threads */
    unsigned long long shared_store_words;          /* the 4-byte words those stores wrote */
    unsigned threads_loading;                       /* threads with a shared-memory load */
    unsigned min_thread_loads;                      /* the fewest 4-byte words one of them loaded */
    unsigned threads_storing;                       /* threads with a shared-memory store */
    unsigned long long global_loads, global_stores;
    unsigned long long shuffles; /* warp shuffles, one per thread each */
};

/* The 4-byte words lo..hi of a __shared__ array that a phase read (or wrote). */
struct span {
    std::string array;
    uintptr_t lo, hi;
};

/* The span of array name in spans grown to hold word (a new span when it has none). */
void widen(std::vector<span> &spans, const char *name, uintptr_t word);

void clear();                                                                 /* counting starts */
void launch(const char *kernel, unsigned threads, unsigned long long blocks); /* a launch starts */
/* One phase of the launch's block 0, with the __shared__ arrays it read and wrote, by name. */
void add_phase(const phase &p, const std::vector<span> &reads, const std::vector<span> &writes);

} /* namespace profile */
} /* namespace lab_cpu */

#endif /* LAB_CPU_PROFILE_H */
