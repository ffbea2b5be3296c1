/* algorithm.c — which of the course's algorithms a lab's first call is, read from CPU mode's
 * algorithm profile of call 1 (profile_table.h; the course's reasons are in labs/README.md, "CPU
 * mode"). Measuring needs CPU mode's counts; classifying the evidence is plain arithmetic, done
 * where the verdict is made: in a judge, on the numbers its lab process measured. */
#include "profile_table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const ALG_NAME[] = {
    [LAB_ALG_ANY] = "none of the course's scans",
    [LAB_ALG_KOGGE_STONE] = "Kogge-Stone (T*log2(T) work, log2(T) steps)",
    [LAB_ALG_KOGGE_STONE_DB] = "Kogge-Stone with double buffering (T*log2(T) work, log2(T) steps, "
                               "each reading one buffer and writing the other)",
    [LAB_ALG_BRENT_KUNG] =
        "Brent-Kung's work-efficient tree (under 2T work in about 2*log2(T) steps)",
    [LAB_ALG_BLELLOCH] =
        "Blelloch's exclusive scan (an up-sweep, the root cleared, a down-sweep that "
        "swaps: about 2T work in 2*log2(T) steps)",
    [LAB_ALG_COARSENED] = "a coarsened scan (each thread's C elements scanned serially, one "
                          "block-wide scan of the thread totals, the add-back)",
    [LAB_ALG_HIERARCHICAL] = "a hierarchy (the tiles scanned, their totals scanned, the carries "
                             "added: two or more passes over the tiles)",
    [LAB_ALG_SINGLE_PASS] = "a single pass (each tile read and written once, its carry from the "
                            "tiles before it)",
};

static int known(lab_algorithm a)
{
    return (int)a >= LAB_ALG_ANY && (int)a <= LAB_ALG_SINGLE_PASS;
}

const char *lab_algorithm_name(lab_algorithm a)
{
    return known(a) ? ALG_NAME[a] : "?";
}

int lab_algorithm_same(lab_algorithm asked, lab_algorithm found)
{
    return found == asked || (asked == LAB_ALG_KOGGE_STONE && found == LAB_ALG_KOGGE_STONE_DB);
}

static int passes_asked(lab_algorithm asked)
{
    return asked == LAB_ALG_HIERARCHICAL || asked == LAB_ALG_SINGLE_PASS;
}

lab_algorithm lab_classify_tile(const lab_profile_measure *m)
{
    const int log2t = m->log2_tile, steps = m->steps;
    if (m->empty)
        return LAB_ALG_ANY; /* no shared memory and no shuffles: nothing to read */
    /* coarsened: one or two phases where each thread reads its C >= 2 elements (the serial pass,
     * the add-back), where a Kogge-Stone of C per thread reads them at every one of its steps;
     * with C = 2 or 3 also in fewer steps than a tree's (a tree over two elements a thread reads
     * two at its first step too), with C >= 4 whatever scans the thread totals */
    if (m->serial_phases >= 1 && m->serial_phases <= 2 &&
        (m->per_thread >= 4 || 2 * steps < 3 * log2t))
        return LAB_ALG_COARSENED;
    if (m->work_per_element >= 0.5 * log2t) /* every element at (nearly) every step */
        return m->double_buffered ? LAB_ALG_KOGGE_STONE_DB : LAB_ALG_KOGGE_STONE;
    if (steps >= log2t + log2t / 2) /* a tree: up, and down again */
        return m->swaps >= log2t - 1 ? LAB_ALG_BLELLOCH : LAB_ALG_BRENT_KUNG;
    return LAB_ALG_ANY;
}

lab_algorithm lab_classify_passes(int passes, unsigned long long most_blocks)
{
    if (most_blocks < 2)
        return LAB_ALG_ANY;
    return passes >= 2 ? LAB_ALG_HIERARCHICAL : LAB_ALG_SINGLE_PASS;
}

int lab_algorithm_evidence_ok(const lab_algorithm_evidence *e)
{
    const lab_profile_measure *m = &e->tile;
    return e->launches >= 0 && e->launches <= 1000000 && e->passes >= 0 &&
           e->passes <= e->launches && e->most_blocks <= ((unsigned long long)1 << 40) &&
           m->steps >= 0 && m->steps <= 1000000 && m->log2_tile >= 0 && m->log2_tile <= 40 &&
           m->swaps >= 0 && m->swaps <= m->steps && m->per_thread >= 0 && m->serial_phases >= 0 &&
           m->serial_phases <= 1000000 && (m->double_buffered == 0 || m->double_buffered == 1) &&
           (m->empty == 0 || m->empty == 1) && isfinite(m->work_per_element) &&
           m->work_per_element >= 0 && m->work_per_element <= 1e9;
}

lab_algorithm lab_algorithm_classify(const lab_algorithm_evidence *e, lab_algorithm asked)
{
    return passes_asked(asked) ? lab_classify_passes(e->passes, e->most_blocks)
                               : lab_classify_tile(&e->tile);
}

void lab_algorithm_measured(const lab_algorithm_evidence *e, lab_algorithm asked, char *buf,
                            size_t len)
{
    const lab_profile_measure *m = &e->tile;
    if (passes_asked(asked) && e->most_blocks < 2)
        snprintf(buf, len, "call 1 was one tile: a larger n shows its passes");
    else if (passes_asked(asked))
        snprintf(buf, len, "%d launch%s in call 1, %d of them over every tile", e->launches,
                 e->launches == 1 ? "" : "es", e->passes);
    else
        snprintf(buf, len,
                 "%d steps after the tile's load (log2 of the tile: %d), %.1f updates per element "
                 "(stores and shuffles)%s",
                 m->steps, m->log2_tile, m->work_per_element,
                 m->double_buffered ? ", each step reading one buffer and writing the other" : "");
}

void lab_algorithm_verdict(lab_algorithm asked, lab_algorithm found, const char *variant, char *buf,
                           size_t len)
{
    if (lab_algorithm_same(asked, found))
        snprintf(buf, len, "%s: what %s asks for", lab_algorithm_name(found), variant);
    else if (found == LAB_ALG_ANY)
        snprintf(buf, len, "none of the course's tile scans; %s asks for %s", variant,
                 lab_algorithm_name(asked));
    else
        snprintf(buf, len, "this is %s; %s asks for %s", lab_algorithm_name(found), variant,
                 lab_algorithm_name(asked));
}

#ifdef LAB_CPU_MODE
#include <cuda_runtime_api.h>

/* Where the profile of launch 0's block 0 puts a tile of `tile` elements (profile_table.h). */
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m)
{
    lab_cpu_launch_profile l;
    lab_cpu_phase_profile p;
    memset(m, 0, sizeof(*m));
    m->empty = 1;
    if (!lab_cpu_profile_launch(0, &l) || tile < 2)
        return LAB_ALG_ANY;
    int first = -1, steps = 0, crossed = 0, swaps = 0, storing = 0;
    unsigned long long work = 0;
    const unsigned per_thread = l.threads ? (unsigned)(tile / l.threads) : 0;
    for (int k = 0; lab_cpu_profile_phase(0, k, &p); k++) {
        work += p.shuffles; /* a shuffle is a step of one lane, as a store is of one word */
        /* after the load, most threads each reading at least their share of the tile, and
         * the reads spanning half the tile at least (not a few totals read by every thread) */
        if (first >= 0 && per_thread >= 2 && 2 * p.threads_loading >= l.threads &&
            p.min_thread_loads >= per_thread && 2 * p.read_words >= tile)
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
    m->empty = first < 0 && !work;
    return lab_classify_tile(m);
}

/* The launches of call 1 and the largest grid among them. */
static int count_passes(int *launches, unsigned long long *most)
{
    lab_cpu_launch_profile l;
    int n = 0, k = 0;
    *most = 0;
    for (; lab_cpu_profile_launch(n, &l); n++)
        *most = l.blocks > *most ? l.blocks : *most;
    for (int i = 0; i < n && lab_cpu_profile_launch(i, &l); i++)
        k += l.blocks + 1 >= *most; /* lab 07's add-back skips tile 0: one block fewer */
    *launches = n;
    return k;
}

lab_algorithm lab_profile_passes(int *passes, int *launches)
{
    unsigned long long most;
    *passes = count_passes(launches, &most);
    return lab_classify_passes(*passes, most);
}

void lab_algorithm_measure(size_t tile, lab_algorithm_evidence *e)
{
    memset(e, 0, sizeof(*e));
    lab_profile_algorithm(tile, &e->tile);
    e->passes = count_passes(&e->launches, &e->most_blocks);
}
#else
lab_algorithm lab_profile_algorithm(size_t tile, lab_profile_measure *m)
{
    (void)tile;
    memset(m, 0, sizeof(*m));
    m->empty = 1;
    return LAB_ALG_ANY;
}

lab_algorithm lab_profile_passes(int *passes, int *launches)
{
    *passes = *launches = 0;
    return LAB_ALG_ANY;
}

void lab_algorithm_measure(size_t tile, lab_algorithm_evidence *e)
{
    (void)tile;
    memset(e, 0, sizeof(*e));
    e->tile.empty = 1;
}
#endif
