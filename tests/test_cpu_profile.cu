/* test_cpu_profile.cu — CPU mode's algorithm profile (common/cpu/profile.cpp): what block 0 of a
 * launch did between each two barriers. Two scans whose phases follow from their algorithm, written
 * out here: a double-buffered Kogge-Stone of T threads (a load phase, log2(T) steps each storing T
 * words into the half it does not read, a last phase that only reads) and Brent-Kung's in-place
 * tree on 2T words (T threads store in the load, then T, T/2, ..., 1 in the up-sweep and 1, 3,
 * 7, ..., T - 1 in the down-sweep), and a warp's scan in shuffles (counted, one per lane). Only
 * block 0 is profiled, and nothing unless counting is on. Each is recognised as its algorithm
 * (lab_profile_algorithm): the Kogge-Stones by their updates per element, shuffles counted as
 * steps, the tree by its steps; and a coarsened scan (C = 2) whose scan of the thread totals is a
 * Kogge-Stone as coarsened, by its one serial pass, though its work per element is a
 * Kogge-Stone's.
 *
 * Built in CPU mode only, instrumented like a lab file with shared memory:
 *   make build/cpu/tests/test_cpu_profile CPU=1 && build/cpu/tests/test_cpu_profile
 */
#include <criterion/criterion.h>

#include "harness/profile_table.h"

#include <string.h>

#define T 128

__global__ void ks_kernel(const int *in, int *out)
{
    __shared__ int buf[2][T];
    const unsigned t = threadIdx.x;
    int cur = 0;
    buf[0][t] = in[blockIdx.x * T + t];
    __syncthreads();
    for (unsigned d = 1; d < T; d *= 2) {
        buf[1 - cur][t] = t >= d ? buf[cur][t] + buf[cur][t - d] : buf[cur][t];
        cur = 1 - cur;
        __syncthreads();
    }
    out[blockIdx.x * T + t] = buf[cur][t];
}

__global__ void bk_kernel(const int *in, int *out)
{
    __shared__ int s[2 * T];
    const unsigned t = threadIdx.x;
    s[2 * t] = in[blockIdx.x * 2 * T + 2 * t];
    s[2 * t + 1] = in[blockIdx.x * 2 * T + 2 * t + 1];
    __syncthreads();
    for (unsigned stride = 1; stride <= T; stride *= 2) {
        const unsigned i = (t + 1) * 2 * stride - 1;
        if (i < 2 * T)
            s[i] += s[i - stride];
        __syncthreads();
    }
    for (unsigned stride = T / 2; stride >= 1; stride /= 2) {
        const unsigned i = (t + 1) * 2 * stride - 1;
        if (i + stride < 2 * T)
            s[i + stride] += s[i];
        __syncthreads();
    }
    out[blockIdx.x * 2 * T + 2 * t] = s[2 * t];
    out[blockIdx.x * 2 * T + 2 * t + 1] = s[2 * t + 1];
}

/* A warp's inclusive scan in shuffles: five steps, each a __shfl_up_sync by every lane, and no
 * barrier: one phase, 32 * 5 shuffles, no shared memory. */
__global__ void shuffle_kernel(const int *in, int *out)
{
    int v = in[threadIdx.x];
    for (int d = 1; d < 32; d *= 2) {
        const int up = __shfl_up_sync(0xffffffffu, v, d);
        if ((int)(threadIdx.x & 31) >= d)
            v += up;
    }
    out[threadIdx.x] = v;
}

/* A coarsened scan of 2T elements, C = 2 per thread, whose scan of the thread totals is a
 * double-buffered Kogge-Stone: the load, the serial pass (each thread reads its two elements and
 * writes its total), log2(T) steps over the totals, the add-back (each thread reads one carry).
 * Its updates per element reach a Kogge-Stone's (log2(T) over C), but its threads read their C
 * elements in one phase only: coarsened, as lab 06 may be written. */
__global__ void coarse_ks_kernel(const int *in, int *out)
{
    __shared__ int tile[2 * T];
    __shared__ int tot[2][T];
    const int t = threadIdx.x;
    tile[2 * t] = in[2 * t];
    tile[2 * t + 1] = in[2 * t + 1];
    __syncthreads();
    const int a = tile[2 * t], b = a + tile[2 * t + 1];
    tot[0][t] = b;
    __syncthreads();
    int i = 0;
    for (int d = 1; d < T; d *= 2, i ^= 1) {
        tot[i ^ 1][t] = tot[i][t] + (t >= d ? tot[i][t - d] : 0);
        __syncthreads();
    }
    const int carry = t ? tot[i][t - 1] : 0;
    out[2 * t] = a + carry;
    out[2 * t + 1] = b + carry;
}

static int *g_in, *g_out;

static void setup(void)
{
    cr_assert_eq(cudaMalloc(&g_in, 4 * 2 * T * sizeof(int)), cudaSuccess);
    cr_assert_eq(cudaMalloc(&g_out, 4 * 2 * T * sizeof(int)), cudaSuccess);
    cr_assert_eq(cudaMemset(g_in, 0, 4 * 2 * T * sizeof(int)), cudaSuccess);
}

static void teardown(void)
{
    cudaFree(g_in);
    cudaFree(g_out);
}

/* The profile of the one launch that launch() makes, counted. */
template <class F> static lab_cpu_launch_profile profiled(F launch)
{
    lab_cpu_banks_record(1);
    launch();
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    lab_cpu_banks_record(0);
    lab_cpu_launch_profile l;
    lab_cpu_launch_profile one;
    cr_expect(!lab_cpu_profile_launch(1, &one), "one launch, and %s profiled too", one.kernel);
    cr_assert(lab_cpu_profile_launch(0, &l), "no launch was profiled");
    return l;
}

Test(cpu_profile, kogge_stone_double_buffered, .init = setup, .fini = teardown,
     .description = "log2(T) steps after the load, each storing T words it does not read")
{
    const lab_cpu_launch_profile l = profiled([] { ks_kernel<<<4, T>>>(g_in, g_out); });
    cr_expect_eq(l.threads, (unsigned)T);
    cr_expect_eq(l.blocks, 4ull);
    cr_assert_eq(l.phases, 1 + 7 + 1, "phases: %d, want the load, 7 steps and the store", l.phases);
    lab_cpu_phase_profile p;
    cr_assert(lab_cpu_profile_phase(0, 0, &p));
    cr_expect_eq(p.shared_stores, (unsigned long long)T);
    cr_expect_eq(p.global_loads, (unsigned long long)T, "block 0 alone: %llu loads",
                 p.global_loads);
    for (int k = 1; k <= 7; k++) {
        cr_assert(lab_cpu_profile_phase(0, k, &p));
        cr_expect_eq(p.threads_storing, (unsigned)T, "step %d", k);
        cr_expect_eq(p.shared_stores, (unsigned long long)T, "step %d", k);
        cr_expect(p.disjoint, "step %d reads %s and writes %s", k, p.reads, p.writes);
        cr_expect_eq(strncmp(p.reads, "buf[", 4), 0, "step %d: %s", k, p.reads);
    }
    cr_assert(lab_cpu_profile_phase(0, 8, &p));
    cr_expect_eq(p.shared_stores, 0ull);
    cr_expect_eq(p.global_stores, (unsigned long long)T);
    cr_expect(!lab_cpu_profile_phase(0, 9, &p));
    lab_profile_measure m;
    cr_expect_eq(lab_profile_algorithm(T, &m), LAB_ALG_KOGGE_STONE_DB,
                 "recognised as %d: %d steps, %.2f updates per element",
                 (int)lab_profile_algorithm(T, &m), m.steps, m.work_per_element);
    cr_expect_eq(m.steps, 7);
    cr_expect_float_eq(m.work_per_element, 7.0, 1e-9);
}

Test(cpu_profile, brent_kung_tree, .init = setup, .fini = teardown,
     .description = "T, then T/2 ... 1 threads storing up the tree, 1, 3 ... T-1 down it, in place")
{
    const lab_cpu_launch_profile l = profiled([] { bk_kernel<<<2, T>>>(g_in, g_out); });
    /* the load (every thread, two words each); up the tree at stride 1, 2, ..., T: the threads t
     * with (t + 1) 2 stride <= 2T; down it at stride T/2, ..., 1: those with (t + 1) 2 stride +
     * stride <= 2T; then the store, from registers to global memory only */
    const unsigned storing[] = {T, 128, 64, 32, 16, 8, 4, 2, 1, 1, 3, 7, 15, 31, 63, 127, 0};
    const int phases = (int)(sizeof(storing) / sizeof(storing[0]));
    cr_assert_eq(l.phases, phases, "phases: %d, want %d", l.phases, phases);
    lab_cpu_phase_profile p;
    for (int k = 0; k < phases; k++) {
        cr_assert(lab_cpu_profile_phase(0, k, &p));
        cr_expect_eq(p.threads_storing, storing[k], "phase %d: %u threads stored, want %u", k + 1,
                     p.threads_storing, storing[k]);
        if (k > 0 && k < phases - 1)
            cr_expect(!p.disjoint, "phase %d is in place: %s -> %s", k + 1, p.reads, p.writes);
    }
    cr_expect_eq(p.global_stores, 2ull * T);
    lab_profile_measure m; /* a tile of 2T elements: under two updates per element, 15 steps */
    cr_expect_eq(lab_profile_algorithm(2 * T, &m), LAB_ALG_BRENT_KUNG,
                 "%d steps, %.2f updates per element", m.steps, m.work_per_element);
    cr_expect_eq(m.steps, 15);
    cr_expect_lt(m.work_per_element, 2.0);
    cr_expect_eq(m.swaps, 0);
}

Test(cpu_profile, warp_shuffles, .init = setup, .fini = teardown,
     .description = "a warp scan in shuffles: one phase, 5 shuffles per lane, no shared memory")
{
    const lab_cpu_launch_profile l = profiled([] { shuffle_kernel<<<1, 32>>>(g_in, g_out); });
    cr_assert_eq(l.phases, 1);
    lab_cpu_phase_profile p;
    cr_assert(lab_cpu_profile_phase(0, 0, &p));
    cr_expect_eq(p.shuffles, 32ull * 5, "shuffles: %llu", p.shuffles);
    cr_expect_eq(p.shared_loads + p.shared_stores, 0ull);
    cr_expect_eq(p.global_loads, 32ull);
    cr_expect_eq(p.global_stores, 32ull);
    /* shuffles are steps: a warp's scan in shuffles is a Kogge-Stone (5 updates per element) */
    lab_profile_measure m;
    cr_expect_eq(lab_profile_algorithm(32, &m), LAB_ALG_KOGGE_STONE, "%.2f updates per element",
                 m.work_per_element);
    cr_expect_float_eq(m.work_per_element, 5.0, 1e-9);
}

Test(cpu_profile, coarsened_with_a_kogge_stone_of_the_totals, .init = setup, .fini = teardown,
     .description = "C = 2 with a Kogge-Stone over the totals: coarsened, not Kogge-Stone")
{
    profiled([] { coarse_ks_kernel<<<1, T>>>(g_in, g_out); });
    lab_profile_measure m;
    const lab_algorithm found = lab_profile_algorithm(2 * T, &m);
    cr_expect_eq(found, LAB_ALG_COARSENED,
                 "recognised as %d: %d steps, %.2f updates per element, %d serial phases",
                 (int)found, m.steps, m.work_per_element, m.serial_phases);
    cr_expect_eq(m.per_thread, 2);
    cr_expect_eq(m.serial_phases, 1);
    cr_expect_geq(m.work_per_element, 0.5 * m.log2_tile,
                  "as much work per element as a Kogge-Stone");
}

Test(cpu_profile, off_by_default, .init = setup, .fini = teardown,
     .description = "nothing is profiled unless counting is on")
{
    lab_cpu_banks_record(1);
    lab_cpu_banks_record(0);
    ks_kernel<<<1, T>>>(g_in, g_out);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    lab_cpu_launch_profile l;
    cr_expect(!lab_cpu_profile_launch(0, &l),
              "a launch after lab_cpu_banks_record(0) was profiled");
}
