/* profile_table.c — the algorithm profile of a lab's first call (profile_table.h): for each
 * kernel launch, what its block 0 did between each two barriers (a phase): how many of its threads
 * stored to shared memory, their shared-memory loads and stores (accesses: an int4 is one), their
 * warp shuffles, their global loads and stores, and which words of which __shared__ array each
 * phase read and wrote. A scan's
 * algorithm shows in these: the number of phases, the stores per phase (all threads in each of
 * Kogge-Stone's log2(T) steps; half, a quarter, ... in Brent-Kung's tree), and whether a phase
 * reads one array and writes the other (double buffering). labs/README.md says how to read
 * it. */
#include "profile_table.h"
#include "options.h"

/* The variant r ran, or NULL. */
static const lab_variant *variant_of(const lab_report *r)
{
    const int vi = r->variant ? lab_find_variant(&LAB, r->variant) : -1;
    return vi < 0 ? NULL : &LAB.variants[vi];
}

#ifdef LAB_CPU_MODE
#include <cuda_runtime_api.h>

#define MAX_LAUNCHES 6 /* shown; the rest are counted */
#define PHASES_HEAD 12 /* a launch of more phases shows its first ... */
#define PHASES_TAIL 4  /* ... and last ones */

static void print_phase(FILE *f, int k, const lab_cpu_phase_profile *p)
{
    fprintf(f, "    %5d %8u %10llu %10llu %9llu %8llu %8llu   %s -> %s\n", k + 1,
            p->threads_storing, p->shared_loads, p->shared_stores, p->shuffles, p->global_loads,
            p->global_stores, p->reads[0] ? p->reads : "-", p->writes[0] ? p->writes : "-");
}

/* One line on the launch as a whole: its phases, its stores, and whether every phase that stores
 * to shared memory after the first writes only words it does not read (a double buffer). */
static void print_summary(FILE *f, int i, const lab_cpu_launch_profile *l)
{
    lab_cpu_phase_profile p;
    unsigned long long stores = 0;
    int storing = 0, crossed = 0;
    for (int k = 0; lab_cpu_profile_phase(i, k, &p); k++) {
        stores += p.shared_stores;
        if (!p.shared_stores)
            continue;
        storing++;
        if (p.reads[0] && p.disjoint)
            crossed++;
    }
    if (!stores) {
        fprintf(f, "    %d phase%s, no shared-memory store\n", l->phases,
                l->phases == 1 ? "" : "s");
        return;
    }
    fprintf(f,
            "    %d phase%s, %d storing to shared memory: %llu shared stores by the block "
            "(%.1f per thread)%s\n",
            l->phases, l->phases == 1 ? "" : "s", storing, stores,
            l->threads ? (double)stores / l->threads : 0.0,
            storing > 1 && crossed == storing - 1
                ? "; after the first, each writes only words it does not read (double-buffered)"
                : "");
}

static const char *const ALG_NAME[] = {
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

/* The verdict under the table: what launch 0 did, what that is, and whether it is what the
 * variant asks for. */
static void print_verdict(FILE *f, const lab_report *r)
{
    const lab_variant *v = variant_of(r);
    if (!v || v->algorithm == LAB_ALG_ANY)
        return;
    lab_algorithm found;
    if (v->algorithm == LAB_ALG_HIERARCHICAL || v->algorithm == LAB_ALG_SINGLE_PASS) {
        int passes, launches;
        found = lab_profile_passes(&passes, &launches);
        if (found == LAB_ALG_ANY) {
            fprintf(f, "  algorithm: call 1 was one tile: run a larger --n to see its passes\n");
            return;
        }
        fprintf(f, "  algorithm: %d launch%s in call 1, %d of them over every tile\n", launches,
                launches == 1 ? "" : "es", passes);
    } else {
        if (LAB.shape != LAB_TILE)
            return;
        lab_profile_measure m;
        found = lab_profile_algorithm(LAB.tile, &m);
        fprintf(
            f,
            "  algorithm: %d steps after the tile's load (log2 of the tile: %d), %.1f updates per "
            "element (stores and shuffles)%s\n",
            m.steps, m.log2_tile, m.work_per_element,
            m.double_buffered ? ", each step reading one buffer and writing the other" : "");
    }
    const int same = found == v->algorithm ||
                     (v->algorithm == LAB_ALG_KOGGE_STONE && found == LAB_ALG_KOGGE_STONE_DB);
    if (same)
        fprintf(f, "  -> %s: what %s asks for\n", ALG_NAME[found], v->name);
    else if (found == LAB_ALG_ANY)
        fprintf(f, "  -> none of the course's tile scans; %s asks for %s\n", v->name,
                ALG_NAME[v->algorithm]);
    else
        fprintf(f, "  -> this is %s; %s asks for %s\n", ALG_NAME[found], v->name,
                ALG_NAME[v->algorithm]);
}

void lab_print_profile(FILE *f, const lab_report *r)
{
    lab_cpu_launch_profile l;
    if (!lab_cpu_profile_launch(0, &l) || r->status == ST_NOT_IMPLEMENTED)
        return;
    fprintf(f, "algorithm profile of call 1, counted by CPU mode: block 0 of each launch, phase by "
               "phase (a phase: what its threads did between two barriers):\n");
    int i = 0;
    for (; i < MAX_LAUNCHES && lab_cpu_profile_launch(i, &l); i++) {
        fprintf(f, "  %s: block 0 of %llu, %u threads\n", l.kernel, l.blocks, l.threads);
        fprintf(f, "    %5s %8s %10s %10s %9s %8s %8s   %s\n", "phase", "storing", "sh.loads",
                "sh.stores", "shuffles", "gl.loads", "gl.store", "shared arrays read -> written");
        lab_cpu_phase_profile p;
        for (int k = 0; lab_cpu_profile_phase(i, k, &p); k++) {
            if (l.phases > PHASES_HEAD + PHASES_TAIL && k == PHASES_HEAD)
                fprintf(f, "    %5s (%d more)\n", "...", l.phases - PHASES_HEAD - PHASES_TAIL);
            if (l.phases > PHASES_HEAD + PHASES_TAIL && k >= PHASES_HEAD &&
                k < l.phases - PHASES_TAIL)
                continue;
            print_phase(f, k, &p);
        }
        print_summary(f, i, &l);
    }
    int more = 0;
    while (lab_cpu_profile_launch(i + more, &l))
        more++;
    if (more)
        fprintf(f, "  (%d more launch%s in call 1)\n", more, more == 1 ? "" : "es");
    print_verdict(f, r);
}
#else
/* On a GPU nothing is counted: one line says where the algorithm is named. */
void lab_print_profile(FILE *f, const lab_report *r)
{
    const lab_variant *v = variant_of(r);
    if (v && v->algorithm != LAB_ALG_ANY && r->status != ST_NOT_IMPLEMENTED)
        fprintf(f,
                "which algorithm your kernel is (steps, updates per element, double buffering): "
                "make run LAB=%.2s CPU=1\n",
                LAB.id);
}
#endif
