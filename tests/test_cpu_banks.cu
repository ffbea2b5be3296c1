/* test_cpu_banks.cu — CPU mode's bank-conflict and sector counts (common/cpu/banks.cpp) against
 * the rules of shared and global memory, written out here on their own. Shared memory: 32 banks of 4 bytes, word w in bank w % 32; a
 * warp-wide access takes as many passes as the most DIFFERENT words one bank must deliver (lanes
 * on the same word share it); 8-byte accesses are served per half-warp and 16-byte ones per
 * quarter-warp. Global memory: a warp-wide access touches every 32-byte sector (from the
 * buffer's start) that holds a byte of one of its lanes; the fewest it could touch is its distinct
 * bytes / 32, rounded up. Each kernel below makes one warp-wide access pattern whose count follows
 * from those rules, and the test checks it. Lanes are paired by loop iteration, also in a loop
 * that is not unrolled and where lanes skip different iterations.
 *
 * Built in CPU mode only, instrumented like a lab file with shared memory:
 *   make build/cpu/tests/test_cpu_banks CPU=1 && build/cpu/tests/test_cpu_banks
 */
#include <criterion/criterion.h>

#include <stdint.h>

#define WORDS 2048

/* Every lane of one warp reads word (lane * stride) % WORDS, or word `fixed` when stride is 0. */
__global__ void stride_kernel(int stride, int fixed, unsigned *out)
{
    __shared__ unsigned s[WORDS];
    for (unsigned i = threadIdx.x; i < WORDS; i += blockDim.x)
        s[i] = i;
    __syncthreads();
    const unsigned w = stride ? (threadIdx.x * (unsigned)stride) % WORDS : (unsigned)fixed;
    out[threadIdx.x] = s[w];
}

/* Lane l reads the 8-byte word at element (l * stride) of a uint2-sized array. */
__global__ void wide8_kernel(int stride, unsigned long long *out)
{
    __shared__ unsigned long long s[WORDS / 2];
    for (unsigned i = threadIdx.x; i < WORDS / 2; i += blockDim.x)
        s[i] = i;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x * (unsigned)stride) % (WORDS / 2)];
}

/* Lane l reads the 16-byte int4 at element l (consecutive: conflict-free per quarter-warp). */
__global__ void wide16_kernel(int4 *out)
{
    __shared__ int4 s[WORDS / 4];
    unsigned *words = (unsigned *)(int4 *)s; /* filled 4 bytes at a time, consecutive words */
    for (unsigned i = threadIdx.x; i < WORDS; i += blockDim.x)
        words[i] = i;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

/* A loop unrolled as nvcc unrolls it, whose store is divergent in its last iterations: lane l
 * stores word j * 32 + l for j < C while j * 32 + l < len. Every store is 1-way. */
__global__ void ragged_kernel(unsigned len, unsigned *out)
{
    __shared__ unsigned s[8 * 32];
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const unsigned i = j * 32 + threadIdx.x;
        if (i < len)
            s[i] = i;
        else
            s[i] = 0;
    }
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

/* A loop that is NOT unrolled, whose lanes skip different iterations: lane l reads word j * 32 in
 * iteration j only when bit j of mask[l] is set. All the lanes that read in one iteration read
 * the same word (a broadcast): 1-way. Paired by how many reads each lane made instead of by
 * iteration, lanes would meet on words 32 apart, one bank: a phantom conflict. */
__global__ void skipping_loop_kernel(const unsigned *mask, unsigned *out)
{
    __shared__ unsigned s[8 * 32];
    for (unsigned i = threadIdx.x; i < 8 * 32; i += blockDim.x)
        s[i] = i;
    __syncthreads();
    unsigned sum = 0;
    const unsigned m = mask[threadIdx.x];
#pragma unroll 1
    for (int j = 0; j < 8; j++)
        if ((m >> j) & 1u)
            sum += s[j * 32];
    out[threadIdx.x] = sum;
}

/* Global memory: lane l of each warp reads in[l * stride + offset] (elements of `bytes` bytes). */
template <class T> __global__ void gather_kernel(const T *in, T *out, int stride, int offset)
{
    out[threadIdx.x] = in[threadIdx.x * stride + offset];
}

/* A load made in a helper inlined into the kernel: the tables name the helper as the line's
 * function (what lab_given_code's names are matched against). */
__device__ __forceinline__ int helper_load(const int *in, unsigned i)
{
    return in[i];
}
__global__ void helper_kernel(const int *in, int *out)
{
    out[threadIdx.x] = helper_load(in, threadIdx.x);
}

/* Thread t of a block of 32 loads ITEMS consecutive elements t * ITEMS + j (blocked ownership). */
__global__ void blocked_kernel(const int *in, int *out)
{
    int sum = 0;
#pragma unroll
    for (int j = 0; j < 4; j++)
        sum += in[threadIdx.x * 4 + j];
    out[threadIdx.x] = sum;
}

struct count {
    unsigned worst;
    unsigned long long accesses, extra;
};

/* The count of the kernel `name` after one launch made by launch(). */
template <class F> static count counted(const char *name, F launch)
{
    lab_cpu_banks_record(1);
    launch();
    lab_cpu_banks_record(0);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "%s failed: %s", name,
                 cudaGetErrorString(cudaGetLastError()));
    lab_cpu_bank_stats b;
    for (int i = 0; lab_cpu_banks_get(i, &b); i++)
        if (strncmp(b.kernel, name, strlen(name)) == 0)
            return count{b.worst, b.loads + b.stores, b.extra_ld + b.extra_st};
    cr_assert_fail("no count for kernel %s", name);
    return count{};
}

static unsigned *g_out;
static void setup(void)
{
    cr_assert_eq(cudaMalloc((void **)&g_out, 64 * 16), cudaSuccess);
}
static void teardown(void)
{
    cudaFree(g_out);
}
TestSuite(cpu_banks, .init = setup, .fini = teardown);

/* The degree a stride gives when 32 lanes read 4-byte words lane * stride: the number of lanes
 * sharing a bank, gcd(stride, 32) (each a different word). */
static unsigned want_stride_degree(unsigned stride)
{
    unsigned g = 32;
    while (stride % g)
        g /= 2;
    return g;
}

Test(cpu_banks, strides, .description = "stride 1..64 reads: gcd(stride, 32)-way, 32 - 32/way extra")
{
    for (int stride = 1; stride <= 64; stride++) {
        const count c = counted("stride_kernel", [&] { stride_kernel<<<1, 32>>>(stride, 0, g_out); });
        const unsigned want = want_stride_degree((unsigned)stride);
        cr_expect_eq(c.worst, want, "stride %d: %u-way, want %u-way", stride, c.worst, want);
        /* the read: `want` passes, want - 1 extra; the fill of 2048 words: 64 conflict-free */
        cr_expect_eq(c.extra, want - 1, "stride %d: %llu extra passes, want %u", stride, c.extra,
                     want - 1);
        cr_expect_eq(c.accesses, 64u + 1u, "stride %d: %llu warp-wide accesses, want 65", stride,
                     c.accesses);
    }
}

Test(cpu_banks, broadcast, .description = "all lanes on one word: a broadcast, 1-way")
{
    const count c = counted("stride_kernel", [] { stride_kernel<<<1, 32>>>(0, 77, g_out); });
    cr_expect_eq(c.worst, 1u);
    cr_expect_eq(c.extra, 0u);
}

Test(cpu_banks, two_warps, .description = "each warp is its own access: 64 threads, stride 32")
{
    const count c = counted("stride_kernel", [] { stride_kernel<<<1, 64>>>(32, 0, g_out); });
    cr_expect_eq(c.worst, 32u);
    cr_expect_eq(c.extra, 2u * 31u, "two warps, 31 extra passes each: got %llu", c.extra);
}

Test(cpu_banks, wide_accesses, .description = "8 bytes per half-warp, 16 bytes per quarter-warp")
{
    /* consecutive 8-byte words: each half-warp covers 32 banks once */
    count c = counted("wide8_kernel",
                      [] { wide8_kernel<<<1, 32>>>(1, (unsigned long long *)g_out); });
    cr_expect_eq(c.worst, 1u, "8-byte, stride 1: %u-way", c.worst);
    /* stride 2 (16 bytes apart): 16 lanes of a half-warp on 16 of the 32 banks twice: 2-way */
    c = counted("wide8_kernel", [] { wide8_kernel<<<1, 32>>>(2, (unsigned long long *)g_out); });
    cr_expect_eq(c.worst, 2u, "8-byte, stride 2: %u-way", c.worst);
    c = counted("wide16_kernel", [] { wide16_kernel<<<1, 32>>>((int4 *)g_out); });
    cr_expect_eq(c.worst, 1u, "16-byte, consecutive: %u-way", c.worst);
}

Test(cpu_banks, divergent_unrolled, .description = "a divergent store in an unrolled loop stays 1-way")
{
    for (unsigned len = 0; len <= 8 * 32; len += 37) {
        const count c = counted("ragged_kernel", [&] { ragged_kernel<<<1, 32>>>(len, g_out); });
        cr_expect_eq(c.worst, 1u, "len %u: %u-way", len, c.worst);
    }
}

Test(cpu_banks, per_line, .description = "a kernel's conflicts are placed on the line that has them")
{
    const count c = counted("stride_kernel", [] { stride_kernel<<<1, 32>>>(4, 0, g_out); });
    cr_assert_eq(c.extra, 3u, "stride 4: 4-way, 3 extra passes; got %llu", c.extra);
    lab_cpu_bank_site_stats s;
    unsigned long long accesses = 0, extra = 0;
    int conflicting = 0;
    for (int i = 0; lab_cpu_bank_sites_get(i, &s); i++) {
        if (strncmp(s.kernel, "stride_kernel", 13) != 0)
            continue;
        cr_expect(strstr(s.site, "test_cpu_banks.cu:") != NULL, "a shared access is placed at %s",
                  s.site);
        cr_expect_str_eq(s.func, "stride_kernel", "the function of %s", s.site);
        accesses += s.accesses;
        extra += s.extra;
        if (s.extra) { /* the read of s[w]: one warp-wide load, 4-way */
            conflicting++;
            cr_expect(!s.store && s.accesses == 1 && s.worst == 4u && s.extra == 3u,
                      "the conflicting row: %s %s, %llu accesses, %u-way, %llu extra", s.site,
                      s.store ? "store" : "load", s.accesses, s.worst, s.extra);
        } else {
            cr_expect(s.store && s.accesses == 64u && s.worst == 1u && s.mean_degree == 1.0,
                      "the fill: %s %s, %llu accesses, %u-way", s.site, s.store ? "store" : "load",
                      s.accesses, s.worst);
        }
    }
    cr_expect_eq(conflicting, 1, "one line has the conflicts, %d have some", conflicting);
    cr_expect_eq(accesses, c.accesses, "the lines' accesses (%llu) add up to the kernel's (%llu)",
                 accesses, c.accesses);
    cr_expect_eq(extra, c.extra);
}

Test(cpu_banks, off_by_default, .description = "nothing is counted unless asked")
{
    lab_cpu_banks_record(1);
    lab_cpu_banks_record(0);
    stride_kernel<<<1, 32>>>(32, 0, g_out);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_expect_eq(lab_cpu_banks_count(), 0, "a launch after lab_cpu_banks_record(0) was counted");
}

Test(cpu_banks, divergent_loop_not_unrolled,
     .description = "lanes that skip different iterations of a loop are paired by iteration")
{
    unsigned mask[32], *d_mask;
    for (int l = 0; l < 32; l++) /* every lane a different pattern of iterations */
        mask[l] = (unsigned)(l * 37 + 11) & 0xFFu;
    cr_assert_eq(cudaMalloc((void **)&d_mask, sizeof(mask)), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d_mask, mask, sizeof(mask), cudaMemcpyHostToDevice), cudaSuccess);
    const count c =
        counted("skipping_loop_kernel", [&] { skipping_loop_kernel<<<1, 32>>>(d_mask, g_out); });
    cudaFree(d_mask);
    cr_expect_eq(c.worst, 1u, "a broadcast in each iteration, counted %u-way", c.worst);
    /* the fill: 8 stores; the loop: one read per iteration that some lane takes (all 8 here) */
    cr_expect_eq(c.accesses, 8u + 8u, "%llu warp-wide accesses, want 16", c.accesses);
}

struct sectors {
    unsigned long long accesses, sectors, min;
};

/* The global-memory count of the kernel `name`'s loads after one launch made by launch(). */
template <class F> static sectors loads_of(const char *name, F launch)
{
    lab_cpu_banks_record(1);
    launch();
    lab_cpu_banks_record(0);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "%s failed: %s", name,
                 cudaGetErrorString(cudaGetLastError()));
    lab_cpu_sector_stats s;
    sectors sum = {0, 0, 0};
    for (int i = 0; lab_cpu_sectors_get(i, &s); i++)
        if (strncmp(s.kernel, name, strlen(name)) == 0 && !s.store) {
            cr_expect(strstr(s.site, "test_cpu_banks.cu:") != NULL,
                      "a load of %s is placed at %s, not in test_cpu_banks.cu", name, s.site);
            sum.accesses += s.accesses;
            sum.sectors += s.sectors;
            sum.min += s.min_sectors;
        }
    return sum;
}

static int *g_in;
static void setup_in(void)
{
    setup();
    cr_assert_eq(cudaMalloc((void **)&g_in, 64 * 32 * 16), cudaSuccess);
    cr_assert_eq(cudaMemset(g_in, 0, 64 * 32 * 16), cudaSuccess);
}
static void teardown_in(void)
{
    cudaFree(g_in);
    teardown();
}

Test(cpu_banks, sectors_name_the_function, .init = setup_in, .fini = teardown_in,
     .description = "each line of the sector table names its function, an inlined helper's too")
{
    lab_cpu_banks_record(1);
    helper_kernel<<<1, 32>>>(g_in, (int *)g_out);
    gather_kernel<int><<<1, 32>>>(g_in, (int *)g_out, 1, 0);
    lab_cpu_banks_record(0);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    lab_cpu_sector_stats s;
    int loads = 0;
    for (int i = 0; lab_cpu_sectors_get(i, &s); i++) {
        const char *want = strncmp(s.kernel, "helper_kernel", 13) == 0 && !s.store ? "helper_load"
                           : strncmp(s.kernel, "helper_kernel", 13) == 0       ? "helper_kernel"
                                                                                : "gather_kernel";
        cr_expect_str_eq(s.func, want, "%s %s at %s", s.kernel, s.store ? "store" : "load", s.site);
        loads += !s.store;
    }
    cr_expect_eq(loads, 2, "one load line per kernel, %d seen", loads);
}

Test(cpu_banks, sectors_coalesced, .init = setup_in, .fini = teardown_in,
     .description = "32 lanes on consecutive 4-byte words: 4 sectors, the fewest")
{
    const sectors s = loads_of("gather_kernel<int>",
                               [] { gather_kernel<int><<<1, 32>>>(g_in, (int *)g_out, 1, 0); });
    cr_expect_eq(s.accesses, 1u);
    cr_expect_eq(s.sectors, 4u, "coalesced: %llu sectors, want 4", s.sectors);
    cr_expect_eq(s.min, 4u);
}

Test(cpu_banks, sectors_strided, .init = setup_in, .fini = teardown_in,
     .description = "stride s (4-byte words): min(32, ceil(32 s / 8)) sectors against 4")
{
    for (int stride = 1; stride <= 16; stride++) {
        const sectors s = loads_of("gather_kernel<int>", [&] {
            gather_kernel<int><<<1, 32>>>(g_in, (int *)g_out, stride, 0);
        });
        /* lane l's word is at byte 4 l s: sector 4 l s / 32; distinct sectors over 32 lanes */
        unsigned long long want = 0, last = ~0ull;
        for (int l = 0; l < 32; l++)
            if ((unsigned long long)(4 * l * stride / 32) != last)
                want++, last = (unsigned long long)(4 * l * stride / 32);
        cr_expect_eq(s.sectors, want, "stride %d: %llu sectors, want %llu", stride, s.sectors, want);
        cr_expect_eq(s.min, 4u, "stride %d: min %llu, want 4", stride, s.min);
    }
}

Test(cpu_banks, sectors_misaligned_broadcast_wide, .init = setup_in, .fini = teardown_in,
     .description = "a start one word in: 5 sectors; a broadcast: 1; 16-byte lanes: 16 of 16")
{
    sectors s = loads_of("gather_kernel<int>",
                         [] { gather_kernel<int><<<1, 32>>>(g_in, (int *)g_out, 1, 1); });
    cr_expect_eq(s.sectors, 5u, "consecutive from word 1: %llu sectors, want 5", s.sectors);
    cr_expect_eq(s.min, 4u);
    s = loads_of("gather_kernel<int>", [] { gather_kernel<int><<<1, 32>>>(g_in, (int *)g_out, 0, 3); });
    cr_expect_eq(s.sectors, 1u, "a broadcast: %llu sectors, want 1", s.sectors);
    cr_expect_eq(s.min, 1u);
    s = loads_of("gather_kernel<int4>",
                 [] { gather_kernel<int4><<<1, 32>>>((int4 *)g_in, (int4 *)g_out, 1, 0); });
    cr_expect_eq(s.sectors, 16u, "32 consecutive int4: %llu sectors, want 16", s.sectors);
    cr_expect_eq(s.min, 16u);
}

Test(cpu_banks, sectors_blocked, .init = setup_in, .fini = teardown_in,
     .description = "blocked ownership (t * 4 + j): 16 sectors per access against 4")
{
    const sectors s = loads_of("blocked_kernel", [] { blocked_kernel<<<1, 32>>>(g_in, (int *)g_out); });
    cr_expect_eq(s.accesses, 4u, "4 warp-wide loads, counted %llu", s.accesses);
    cr_expect_eq(s.sectors, 4u * 16u, "%llu sectors, want 64 (each access spans 512 bytes)", s.sectors);
    cr_expect_eq(s.min, 4u * 4u);
}
