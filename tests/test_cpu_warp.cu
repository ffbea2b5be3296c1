/* test_cpu_warp.cu — CPU mode's warp operations (common/cpu/warp.cpp) against the CUDA rules,
 * which this file writes out again on its own (model_source, model_ballot) from the CUDA C++
 * Programming Guide, "Warp Shuffle Functions":
 *   - the lanes of a warp form segments of `width` lanes (a power of two up to 32);
 *   - __shfl_sync reads lane srcLane of the lane's segment, srcLane taken modulo width;
 *   - __shfl_up_sync reads lane − delta; a source before the segment's first lane gives the lane
 *     its own value ("the lower delta lanes will be unchanged");
 *   - __shfl_down_sync reads lane + delta; a source past the segment's last lane gives its own;
 *   - __shfl_xor_sync reads lane ^ laneMask; it may read an earlier segment, while a source in a
 *     later segment gives the lane its own value;
 *   - __ballot_sync sets bit l for each lane l of the mask whose predicate is non-zero;
 *   - __match_any_sync ("Warp Match Functions") sets bit l for each lane l of the mask whose
 *     value is the caller's.
 * Where CUDA leaves the result undefined (a source lane outside the mask, or past the end of a
 * block whose size is not a multiple of 32), CPU mode gives the lane its own value
 * (common/cpu/README.md); the tests check that choice too. And the misuses CPU mode reports:
 * a width that is not a power of two, a mask without the calling lane, lanes at different warp
 * operations, lanes of one warp waiting with different masks. Last, the block-wide votes
 * (__syncthreads_count, _and, _or): every thread gets the block's result, also when a warp runs on
 * to the next barrier before the others have left this one.
 *
 * Built in CPU mode only: rewrite.py, the host compiler, linked with the CPU runtime alone.
 *   make build/cpu/tests/test_cpu_warp CPU=1 && build/cpu/tests/test_cpu_warp
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <stdlib.h>
#include <string.h>

enum op { OP_SHFL, OP_UP, OP_DOWN, OP_XOR, OP_BALLOT, OP_ANY, OP_ALL, OP_MATCH };
static const char *const OP_NAMES[] = {"__shfl_sync",     "__shfl_up_sync",  "__shfl_down_sync",
                                       "__shfl_xor_sync", "__ballot_sync",   "__any_sync",
                                       "__all_sync",      "__match_any_sync"};

#define MAX_THREADS 64
#define NOT_IN_MASK (-1)

/* Each thread t whose lane is in mask does one warp operation on the value 1000 + t with its own
 * argument arg[t] (a lane, a delta, a lane mask or a predicate); the others write NOT_IN_MASK. */
__global__ void warp_kernel(int op, unsigned mask, const int *arg, int width, int *out)
{
    const unsigned t = threadIdx.x, lane = t % 32;
    const int v = 1000 + (int)t;
    if (!((mask >> lane) & 1u)) {
        out[t] = NOT_IN_MASK;
        return;
    }
    int r = 0;
    switch (op) {
    case OP_SHFL:
        r = __shfl_sync(mask, v, arg[t], width);
        break;
    case OP_UP:
        r = __shfl_up_sync(mask, v, (unsigned)arg[t], width);
        break;
    case OP_DOWN:
        r = __shfl_down_sync(mask, v, (unsigned)arg[t], width);
        break;
    case OP_XOR:
        r = __shfl_xor_sync(mask, v, arg[t], width);
        break;
    case OP_BALLOT:
        r = (int)__ballot_sync(mask, arg[t]);
        break;
    case OP_ANY:
        r = __any_sync(mask, arg[t]);
        break;
    case OP_ALL:
        r = __all_sync(mask, arg[t]);
        break;
    case OP_MATCH:
        r = (int)__match_any_sync(mask, arg[t]);
        break;
    }
    out[t] = r;
}

/* The thread whose value thread t receives, by the rules above, for a block of `threads`. */
static int model_source(int op, int t, int arg, int width, unsigned mask, int threads)
{
    const int warp = t / 32 * 32, lane = t % 32;
    const int seg_first = lane / width * width, seg_end = seg_first + width;
    int src = lane;
    switch (op) {
    case OP_SHFL:
        src = seg_first + ((arg % width) + width) % width;
        break;
    case OP_UP:
        src = lane - arg >= seg_first ? lane - arg : lane;
        break;
    case OP_DOWN:
        src = lane + arg < seg_end ? lane + arg : lane;
        break;
    case OP_XOR:
        src = (lane ^ arg) < seg_end ? (lane ^ arg) : lane;
        break;
    }
    if (!((mask >> src) & 1u) || warp + src >= threads)
        src = lane; /* undefined in CUDA; CPU mode's choice: the lane's own value */
    return warp + src;
}

/* What thread t's __ballot_sync / __any_sync / __all_sync / __match_any_sync returns. */
static int model_vote(int op, int t, const int *pred, unsigned mask, int threads)
{
    const int warp = t / 32 * 32;
    unsigned ballot = 0, members = 0, same = 0;
    for (int l = 0; l < 32 && warp + l < threads; l++)
        if ((mask >> l) & 1u) {
            members |= 1u << l;
            if (pred[warp + l])
                ballot |= 1u << l;
            if (pred[warp + l] == pred[t])
                same |= 1u << l;
        }
    if (op == OP_MATCH)
        return (int)same;
    if (op == OP_BALLOT)
        return (int)ballot;
    return op == OP_ANY ? ballot != 0 : ballot == members;
}

/* Runs warp_kernel on one block of `threads` and returns the number of wrong results (each one
 * reported). */
static int check(int op, unsigned mask, const int *arg, int width, int threads)
{
    int *d_arg, *d_out, out[MAX_THREADS];
    cr_assert_eq(cudaMalloc((void **)&d_arg, threads * sizeof(int)), cudaSuccess);
    cr_assert_eq(cudaMalloc((void **)&d_out, threads * sizeof(int)), cudaSuccess);
    cr_assert_eq(cudaMemcpy(d_arg, arg, threads * sizeof(int), cudaMemcpyHostToDevice),
                 cudaSuccess);
    warp_kernel<<<1, threads>>>(op, mask, d_arg, width, d_out);
    cudaError_t err = cudaGetLastError();
    cr_assert_eq(err, cudaSuccess, "%s: %s", OP_NAMES[op], cudaGetErrorString(err));
    cr_assert_eq(cudaMemcpy(out, d_out, threads * sizeof(int), cudaMemcpyDeviceToHost),
                 cudaSuccess);
    cudaFree(d_arg);
    cudaFree(d_out);
    int wrong = 0;
    for (int t = 0; t < threads; t++) {
        int want = NOT_IN_MASK;
        if ((mask >> (t % 32)) & 1u)
            want = op >= OP_BALLOT ? model_vote(op, t, arg, mask, threads)
                                   : 1000 + model_source(op, t, arg[t], width, mask, threads);
        if (out[t] != want && wrong++ < 8)
            cr_log_error("%s, mask 0x%08x, width %d, %d threads: thread %d (argument %d) got %d, "
                         "expected %d",
                         OP_NAMES[op], mask, width, threads, t, arg[t], out[t], want);
    }
    return wrong;
}

/* Every shuffle at every width, with per-lane arguments that reach past the segment on both sides
 * (negative lanes, lanes past width, deltas up to 31, lane masks reaching other segments). */
static void check_all_widths(int op, unsigned mask, int threads)
{
    int arg[MAX_THREADS];
    for (int width = 1; width <= 32; width *= 2) {
        for (int t = 0; t < threads; t++)
            arg[t] = op == OP_SHFL ? (t * 7 + 3) % 45 - 6 : (t * 5 + width) % 32;
        cr_expect_eq(check(op, mask, arg, width, threads), 0,
                     "%s, mask 0x%08x, width %d, %d threads", OP_NAMES[op], mask, width, threads);
    }
}

TestSuite(warp, .init = cr_redirect_stderr, .timeout = 60);

Test(warp, shfl, .description = "__shfl_sync: source lane modulo width, within the segment")
{
    check_all_widths(OP_SHFL, 0xffffffffu, 64);
}

Test(warp, shfl_up,
     .description = "__shfl_up_sync: the first delta lanes of a segment keep their value")
{
    check_all_widths(OP_UP, 0xffffffffu, 64);
}

Test(warp, shfl_down,
     .description = "__shfl_down_sync: the last delta lanes of a segment keep their value")
{
    check_all_widths(OP_DOWN, 0xffffffffu, 64);
}

Test(warp, shfl_xor,
     .description = "__shfl_xor_sync: earlier segments readable, later ones give the own value")
{
    check_all_widths(OP_XOR, 0xffffffffu, 64);
    /* width 8, lane mask 8: lanes 0..7 would read 8..15 (later: own value), lanes 8..15 read 0..7
     */
    int arg[32];
    for (int t = 0; t < 32; t++)
        arg[t] = 8;
    cr_expect_eq(check(OP_XOR, 0xffffffffu, arg, 8, 32), 0);
}

Test(warp, partial_mask,
     .description = "lanes outside the mask: not run; reading one gives the own value")
{
    for (int op = OP_SHFL; op <= OP_XOR; op++)
        check_all_widths(op, 0x0f0ff0f5u, 64);
}

Test(warp, partial_warp,
     .description = "a block of 48: the last warp's 16 missing lanes read as the own value")
{
    for (int op = OP_SHFL; op <= OP_XOR; op++)
        check_all_widths(op, 0xffffffffu, 48);
}

Test(warp, votes,
     .description = "__ballot_sync, __any_sync, __all_sync over full and partial masks")
{
    int pred[MAX_THREADS];
    const unsigned masks[] = {0xffffffffu, 0x0f0ff0f5u, 0x00000001u};
    for (int pattern = 0; pattern < 3; pattern++) {
        for (int t = 0; t < MAX_THREADS; t++)
            pred[t] = pattern == 0 ? (t * 13) % 5 == 0 : pattern == 1 ? 1 : (t % 32 == 17 ? 9 : 0);
        for (int m = 0; m < 3; m++)
            for (int op = OP_BALLOT; op <= OP_ALL; op++) {
                cr_expect_eq(check(op, masks[m], pred, 32, 64), 0, "%s, pattern %d", OP_NAMES[op],
                             pattern);
                cr_expect_eq(check(op, masks[m], pred, 32, 48), 0, "%s, pattern %d", OP_NAMES[op],
                             pattern);
            }
    }
}

Test(warp, match_any,
     .description = "__match_any_sync: the lanes of the mask with the caller's value, also in a "
                    "partial warp and with a partial mask")
{
    int value[MAX_THREADS];
    const unsigned masks[] = {0xffffffffu, 0x0f0ff0f5u, 0x00000001u, 0x80000001u};
    for (int pattern = 0; pattern < 4; pattern++) {
        /* digits of a radix sort; all alike; all apart; two values, one negative */
        for (int t = 0; t < MAX_THREADS; t++)
            value[t] = pattern == 0   ? (t * 37 + 11) % 7
                       : pattern == 1 ? 5
                       : pattern == 2 ? t
                                      : (t % 3 == 0 ? -1 : 1 << 30);
        for (int m = 0; m < 4; m++) {
            cr_expect_eq(check(OP_MATCH, masks[m], value, 32, 64), 0, "pattern %d, mask 0x%08x",
                         pattern, masks[m]);
            cr_expect_eq(check(OP_MATCH, masks[m], value, 32, 48), 0, "pattern %d, mask 0x%08x",
                         pattern, masks[m]);
        }
    }
}

/* ---- the counting barriers ---------------------------------------------------------------------
 * __syncthreads_count / _and / _or return, to every thread of the block, the count (all, any) of
 * the predicates its threads passed. CPU mode lets the threads leave a barrier one at a time, in a
 * random order, so a warp may run on through warp operations to the next barrier while others
 * have not yet left this one: their result must not change when it does. */

#define VOTE_THREADS 256
#define VOTE_LAUNCHES 40

/* Thread t: predicates t % 3 == 0 (86 of 256), t >= 0 (all) and t == 77 (one); between the
 * barriers, warp operations that let a warp run ahead of the others. out[3t + k]: vote k. */
__global__ void barrier_votes_kernel(int *out)
{
    const int t = (int)threadIdx.x;
    const int count = __syncthreads_count(t % 3 == 0);
    for (int r = 0; r < 4; r++)
        (void)__ballot_sync(0xffffffffu, (t + r) % 2);
    const int all = __syncthreads_and(t >= 0);
    (void)__ballot_sync(0xffffffffu, t % 5 == 0);
    const int any = __syncthreads_or(t == 77);
    (void)__ballot_sync(0xffffffffu, t % 7 == 0);
    __syncthreads();
    out[3 * t] = count;
    out[3 * t + 1] = all;
    out[3 * t + 2] = any;
}

TestSuite(barrier_votes, .init = cr_redirect_stderr, .timeout = 60);

Test(barrier_votes, every_thread_gets_the_blocks_result,
     .description = "__syncthreads_count/_and/_or: each of 256 threads gets 86, 1, 1, in "
                    "40 launches (each its own random order of leaving the barrier)")
{
    int *d_out, out[3 * VOTE_THREADS];
    cr_assert_eq(cudaMalloc((void **)&d_out, sizeof out), cudaSuccess);
    int wrong = 0;
    for (int launch = 0; launch < VOTE_LAUNCHES; launch++) {
        barrier_votes_kernel<<<1, VOTE_THREADS>>>(d_out);
        const cudaError_t err = cudaGetLastError();
        cr_assert_eq(err, cudaSuccess, "launch %d: %s", launch, cudaGetErrorString(err));
        cr_assert_eq(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
        const int want[3] = {86, 1, 1};
        static const char *const names[3] = {"__syncthreads_count", "__syncthreads_and",
                                             "__syncthreads_or"};
        for (int t = 0; t < VOTE_THREADS; t++)
            for (int k = 0; k < 3; k++)
                if (out[3 * t + k] != want[k] && wrong++ < 8)
                    cr_log_error("launch %d: thread %d's %s returned %d, expected %d", launch, t,
                                 names[k], out[3 * t + k], want[k]);
    }
    cudaFree(d_out);
    cr_expect_eq(wrong, 0, "%d wrong results of the counting barriers (first 8 logged)", wrong);
}

/* ---- misuse: reported as a kernel error naming the place ----------------------------------------
 */

__global__ void bad_width_kernel(int *out)
{
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1, 12);
}

__global__ void mask_without_caller_kernel(int *out)
{
    out[threadIdx.x] =
        __shfl_sync(0x0000ffffu, (int)threadIdx.x, 0); /* lanes 16..31 are not in it */
}

__global__ void different_ops_kernel(int *out)
{
    if (threadIdx.x < 16)
        out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
    else
        out[threadIdx.x] = (int)__ballot_sync(0xffffffffu, 1);
}

__global__ void different_masks_kernel(int *out)
{
    const unsigned mask = threadIdx.x < 16 ? 0xffffffffu : 0xfffffffeu; /* neither can complete */
    out[threadIdx.x] = __shfl_sync(mask, (int)threadIdx.x, 16);
}

TestSuite(warp_misuse, .init = cr_redirect_stderr, .timeout = 60);

/* Launches kernel on one warp; returns the sticky error and its report in *report. */
static cudaError_t launch_misuse(void (*kernel)(int *), const char **report)
{
    int *d_out;
    cr_assert_eq(cudaMalloc((void **)&d_out, 32 * sizeof(int)), cudaSuccess);
    kernel<<<1, 32>>>(d_out);
    const cudaError_t err = cudaGetLastError();
    *report = cudaGetErrorString(err);
    return err;
}

Test(warp_misuse, width_not_a_power_of_two)
{
    const char *report;
    cr_assert_eq(launch_misuse(bad_width_kernel, &report), cudaErrorIllegalInstruction);
    cr_expect(strstr(report, "shuffle width 12 at test_cpu_warp.cu:") != NULL, "%s", report);
    cr_expect(strstr(report, "is not a power of two up to 32") != NULL, "%s", report);
}

Test(warp_misuse, mask_without_the_calling_lane)
{
    const char *report;
    cr_assert_eq(launch_misuse(mask_without_caller_kernel, &report), cudaErrorIllegalInstruction);
    const char *lane = strstr(report, "with mask 0x0000ffff, which leaves out the calling lane ");
    cr_assert(lane != NULL, "%s", report);
    const int l = atoi(lane + strlen("with mask 0x0000ffff, which leaves out the calling lane "));
    cr_expect(l >= 16 && l <= 31, "%s", report); /* whichever of lanes 16..31 ran first */
}

Test(warp_misuse, lanes_at_different_operations)
{
    const char *report;
    cr_assert_eq(launch_misuse(different_ops_kernel, &report), cudaErrorIllegalInstruction);
    cr_expect(strstr(report, "lanes of warp 0 meet at different warp operations") != NULL, "%s",
              report);
}

Test(warp_misuse, lanes_with_different_masks)
{
    const char *report;
    cr_assert_eq(launch_misuse(different_masks_kernel, &report), cudaErrorLaunchFailure);
    cr_expect(strstr(report, "a warp operation (mask 0xffffffff) at test_cpu_warp.cu:") != NULL,
              "%s", report);
    cr_expect(strstr(report, "threads 0..15 wait, threads 16..31 wait elsewhere (divergent warp "
                             "operations)") != NULL,
              "%s", report);
}
