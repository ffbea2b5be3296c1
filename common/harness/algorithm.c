/* algorithm.c — which of the course's tile algorithms a kernel is, read from CPU mode's algorithm
 * profile of call 1 (profile_table.h: lab_profile_algorithm; the course's reasons are in
 * labs/README.md, "CPU mode"). Only CPU mode counts; elsewhere nothing is recognised. */
#include "profile_table.h"

#include <string.h>

#ifdef LAB_CPU_MODE
#include <cuda_runtime_api.h>

/* Where the profile of launch 0's block 0 puts a tile of `tile` elements (profile_table.h). */
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m)
{
    lab_cpu_launch_profile l;
    lab_cpu_phase_profile p;
    memset(m, 0, sizeof(*m));
    if (!lab_cpu_profile_launch(0, &l) || tile < 2)
        return LAB_ALG_ANY;
    int first = -1, steps = 0, crossed = 0, swaps = 0, storing = 0;
    unsigned long long work = 0;
    const unsigned per_thread = l.threads ? (unsigned)(tile / l.threads) : 0;
    for (int k = 0; lab_cpu_profile_phase(0, k, &p); k++) {
        work += p.shuffles; /* a shuffle is a step of one lane, as a store is of one word */
        /* after the load, most threads each reading at least their share of the tile */
        if (first >= 0 && per_thread >= 2 && 2 * p.threads_loading >= l.threads &&
            p.min_thread_loads >= per_thread)
            m->serial_phases++;
        if (!p.shared_stores)
            continue;
        if (first < 0) { /* the tile's load */
            first = k;
            continue;
        }
        storing++;
        work += p.shared_store_words;
        steps++;
        if (p.reads[0] && p.disjoint)
            crossed++;
        if (p.threads_storing && p.shared_store_words == 2ull * p.threads_storing)
            swaps++;
    }
    int log2t = 0;
    while (((size_t)1 << (log2t + 1)) <= tile)
        log2t++;
    m->steps = steps;
    m->log2_tile = log2t;
    m->work_per_element = (double)work / (double)tile;
    m->double_buffered = storing > 1 && crossed == storing;
    m->swaps = swaps;
    m->per_thread = (int)per_thread;
    if (first < 0 && !work)
        return LAB_ALG_ANY; /* no shared memory and no shuffles: nothing to read */
    /* coarsened: one or two phases where each thread reads its C >= 2 elements (the serial pass,
     * the add-back), where a Kogge-Stone of C per thread reads them at every one of its steps,
     * in fewer steps than a tree's */
    if (m->serial_phases >= 1 && m->serial_phases <= 2 && 2 * steps < 3 * log2t)
        return LAB_ALG_COARSENED;
    if (m->work_per_element >= 0.5 * log2t) /* every element at (nearly) every step */
        return m->double_buffered ? LAB_ALG_KOGGE_STONE_DB : LAB_ALG_KOGGE_STONE;
    if (steps >= log2t + log2t / 2) /* a tree: up, and down again */
        return swaps >= log2t - 1 ? LAB_ALG_BLELLOCH : LAB_ALG_BRENT_KUNG;
    return LAB_ALG_ANY;
}

lab_algorithm lab_profile_passes(int *passes, int *launches)
{
    lab_cpu_launch_profile l;
    unsigned long long most = 0;
    int n = 0, k = 0;
    for (; lab_cpu_profile_launch(n, &l); n++)
        most = l.blocks > most ? l.blocks : most;
    for (int i = 0; i < n && lab_cpu_profile_launch(i, &l); i++)
        k += l.blocks + 1 >= most; /* lab 07's add-back skips tile 0: one block fewer */
    *passes = k;
    *launches = n;
    if (most < 2)
        return LAB_ALG_ANY;
    return k >= 2 ? LAB_ALG_HIERARCHICAL : LAB_ALG_SINGLE_PASS;
}
#else
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m)
{
    (void)tile;
    memset(m, 0, sizeof(*m));
    return LAB_ALG_ANY;
}

lab_algorithm lab_profile_passes(int *passes, int *launches)
{
    *passes = *launches = 0;
    return LAB_ALG_ANY;
}
#endif
