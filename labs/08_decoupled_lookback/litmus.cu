/* litmus.cu — lab 08's message-passing litmus test: how often does a block that sees another
 * block's flag still read that block's value from before it was written? (make litmus, a GPU
 * only; nothing here is graded.)
 *
 * Pairs of warps in different blocks pass messages: lane 0 of a writer warp stores a value, then
 * a flag; lane 0 of its reader warp looks at the value once early (as a look-back reads a
 * predecessor's aggregate and comes back later for its prefix), spins until it sees the flag,
 * then loads the value with a plain load. Every message has its own two words, the values in one
 * array and the flags in another. A reader that finds an old value saw the flag but not the value
 * it announces (here: served from the line its early look left in the SM's L1). Three ways:
 *   weak      plain value store, relaxed flag store; relaxed flag load, plain value load
 *             (lab 08's look-back with two words and no ordering: the bug the handout describes)
 *   fenced    the same with __threadfence() between the stores and between the loads
 *   ordered   flag store memory_order_release, flag load memory_order_acquire
 * It prints, for each, the messages sent and the stale values read. Measured on an H100 (80GB
 * HBM3, driver 580.159.04, 2026-12-06): weak 1,702 of 10.8 million (157 per million) and 74,400
 * of 432.5 million (172 per million); fenced and ordered 0 of 432.5 million each. Without the
 * early look, the weak version read no stale value in 432.5 million messages: a count of 0 is a
 * measurement, not a proof, and the memory model allows the weak version to go wrong either way.
 *
 *   make litmus                          (ARGS='--rounds 20' for more messages)
 */
#include "cuda_check.h"

#include <cuda/atomic>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WEAK, FENCED, ORDERED };
static const char *const KIND_NAME[] = {"weak", "fenced", "ordered"};

#define WARPS_PER_BLOCK 8
#define MESSAGES_PER_PAIR 4096
#define SPIN_LIMIT (1u << 24) /* a reader gives up on a flag after this many polls */

/* Blocks [0, pairs_blocks) write, [pairs_blocks, 2 pairs_blocks) read; warp w of writer block b
 * talks to warp w of reader block pairs_blocks + b. */
__global__ void message_passing(unsigned *value, unsigned *flag, unsigned pairs_blocks, int kind,
                                unsigned long long *stale, unsigned long long *lost)
{
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool writer = blockIdx.x < pairs_blocks;
    const unsigned pair =
        (writer ? blockIdx.x : blockIdx.x - pairs_blocks) * WARPS_PER_BLOCK + warp;
    const unsigned pairs = pairs_blocks * WARPS_PER_BLOCK;
    if (lane != 0)
        return;
    unsigned long long my_stale = 0, my_lost = 0;
    unsigned seen = 0; /* what the early looks read (kept, so that they are made) */
    for (unsigned m = 0; m < MESSAGES_PER_PAIR; m++) {
        const size_t slot = (size_t)m * pairs + pair; /* a fresh pair of words per message */
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(flag[slot]);
        if (writer) {
            value[slot] = m + 1;
            if (kind == FENCED)
                __threadfence();
            f.store(1, kind == ORDERED ? cuda::memory_order_release : cuda::memory_order_relaxed);
        } else {
            /* a look at the value before the flag is up (as a look-back reads a predecessor's
             * aggregate, then comes back for its prefix): the line may stay in this SM's L1 */
            seen += __ldca(&value[slot]);
            unsigned polls = 0;
            while (f.load(kind == ORDERED ? cuda::memory_order_acquire
                                          : cuda::memory_order_relaxed) == 0)
                if (++polls == SPIN_LIMIT)
                    break;
            if (polls == SPIN_LIMIT) {
                my_lost++;
                continue;
            }
            if (kind == FENCED)
                __threadfence();
            if (value[slot] != m + 1) /* a plain load, as lab 08's value load would be */
                my_stale++;
        }
    }
    if (my_stale)
        atomicAdd(stale, my_stale);
    if (seen == 0xFFFFFFFFu) /* never true: the early looks read values not yet written, mostly 0 */
        atomicAdd(lost, 0ull);
    if (my_lost)
        atomicAdd(lost, my_lost);
}

int main(int argc, char **argv)
{
    int rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--rounds N]  (N > 0: launches of each kind)\n", argv[0]);
            return 2;
        }
    }
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        fprintf(stderr, "litmus: no usable GPU: the litmus test measures a GPU's memory system\n");
        return 5;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    /* one writer and one reader block per SM: every block resident at once, so no reader spins
     * on a writer that has not started */
    const unsigned pairs_blocks = (unsigned)sms / 2 > 0 ? (unsigned)sms / 2 : 1;
    const size_t slots = (size_t)MESSAGES_PER_PAIR * pairs_blocks * WARPS_PER_BLOCK;
    unsigned *value, *flag;
    unsigned long long *counts;
    CUDA_CHECK(cudaMalloc((void **)&value, slots * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc((void **)&flag, slots * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc((void **)&counts, 2 * sizeof(unsigned long long)));
    printf("%s: %u writer and %u reader blocks, %u message pairs, %d rounds of %zu messages\n",
           prop.name, pairs_blocks, pairs_blocks, pairs_blocks * WARPS_PER_BLOCK, rounds, slots);
    for (int kind = WEAK; kind <= ORDERED; kind++) {
        unsigned long long total[2] = {0, 0}, got[2];
        for (int r = 0; r < rounds; r++) {
            CUDA_CHECK(cudaMemset(value, 0, slots * sizeof(unsigned)));
            CUDA_CHECK(cudaMemset(flag, 0, slots * sizeof(unsigned)));
            CUDA_CHECK(cudaMemset(counts, 0, 2 * sizeof(unsigned long long)));
            message_passing<<<2 * pairs_blocks, WARPS_PER_BLOCK * 32>>>(value, flag, pairs_blocks,
                                                                        kind, counts, counts + 1);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(got, counts, sizeof(got), cudaMemcpyDeviceToHost));
            total[0] += got[0];
            total[1] += got[1];
        }
        const double sent = (double)slots * rounds;
        printf("  %-8s %12.0f messages  %10llu stale values read (%.3g per million)%s\n",
               KIND_NAME[kind], sent, total[0], 1e6 * (double)total[0] / sent,
               total[1] ? "  (some flags never came: the count is a lower bound)" : "");
    }
    CUDA_CHECK(cudaFree(value));
    CUDA_CHECK(cudaFree(flag));
    CUDA_CHECK(cudaFree(counts));
    return 0;
}
