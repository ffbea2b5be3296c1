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

/* The verdict under the table: what call 1 did, what that is, and whether it is what the
 * variant asks for. */
static void print_verdict(FILE *f, const lab_report *r)
{
    const lab_variant *v = variant_of(r);
    if (!v || v->algorithm == LAB_ALG_ANY)
        return;
    const int passes = v->algorithm == LAB_ALG_HIERARCHICAL || v->algorithm == LAB_ALG_SINGLE_PASS;
    if (!passes && LAB.shape != LAB_TILE)
        return;
    lab_algorithm_evidence e;
    char line[512];
    lab_algorithm_measure(LAB.tile, &e);
    lab_algorithm_measured(&e, v->algorithm, line, sizeof(line));
    fprintf(f, "  algorithm: %s\n", line);
    if (passes && e.most_blocks < 2)
        return;
    lab_algorithm_verdict(v->algorithm, lab_algorithm_classify(&e, v->algorithm), v->name, line,
                          sizeof(line));
    fprintf(f, "  -> %s\n", line);
}

void lab_print_profile(FILE *f, const lab_report *r)
{
    lab_cpu_launch_profile l;
    if (!lab_cpu_profile_launch(0, &l) || r->status == ST_NOT_IMPLEMENTED)
        return;
    if (l.phases == 0) { /* even a kernel without a barrier has a phase: nothing was counted */
        const lab_variant *v = variant_of(r);
        if (v && v->algorithm != LAB_ALG_ANY)
            fprintf(f, "algorithm: nothing counted: call 1's first kernel made no memory access "
                       "CPU mode saw (a kernel that does nothing, or a binary built without CPU "
                       "mode's counting hooks: BANKS=0, or a reference shipped compiled)\n");
        return;
    }
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
