/* lab_04_phases.c — Brent-Kung: each tree checked on its own against a CPU model of it.
 *
 * Linked into build/tests/kernels_04_brent_kung with the reference solution. The kernel adds
 * each thread's two elements in registers and runs the trees on the pair sums in shared memory
 * (see the solution's header), so the state is one word per thread: lab_hook_state_words()
 * words per tile, half the tile. The course's test hook lab_hook_phase
 * (tests/hooks/04_brent_kung.cu, compiled together with the lab's scan.cu) copies a prepared
 * shared-memory state into a block, runs one tree on it and copies the state back; the CPU
 * models below say, word by word, what each tree must leave there. So a wrong reduction tree is
 * named as such even when the reverse tree would hide or compound the error, and a wrong reverse
 * tree is tested from a known-good starting state.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define PHASE_REDUCE 1
#define PHASE_REVERSE 2
#define TILES 16 /* tiles per test; each is checked separately */

/* CPU model of the reduction tree on one tile s[0..T): at stride d = 1, 2, ..., T/2 the right
 * end of each block of 2d elements adds the right end of its left half. */
static void model_reduce(unsigned *s, size_t T)
{
    for (size_t d = 1; d < T; d *= 2)
        for (size_t i = 2 * d - 1; i < T; i += 2 * d)
            s[i] += s[i - d];
}

/* CPU model of the reverse tree: at stride d = T/4, ..., 1 each right end of a block of 2d
 * elements passes its (complete) prefix to the position d past it. */
static void model_reverse(unsigned *s, size_t T)
{
    for (size_t d = T / 4; d >= 1; d /= 2)
        for (size_t i = 2 * d - 1; i + d < T; i += 2 * d)
            s[i + d] += s[i];
}

/* Runs phase on TILES tiles of state and compares every word with want. */
static void run_phase(int phase, const unsigned *state, const unsigned *want, const char *what)
{
    const size_t T = lab_hook_state_words(), words = TILES * T;
    int *h_got = malloc(words * sizeof(int));
    int *d_state, *d_out;
    cr_assert(h_got);
    CUDA_CHECK(cudaMalloc((void **)&d_state, words * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, words * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_state, state, words * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, words * sizeof(int)));
    lab_hook_phase(0, phase, d_state, d_out, TILES);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_got, d_out, words * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < TILES; k++) {
        size_t bad = lab_first_mismatch(h_got + k * T, (const int *)want + k * T, T);
        cr_expect(bad == T, "%s, block %zu of %d (%zu words): shared word %zu expected %d, got %d",
                  what, k, TILES, T, bad, bad < T ? (int)want[k * T + bad] : 0,
                  bad < T ? h_got[k * T + bad] : 0);
    }
    cudaFree(d_out);
    cudaFree(d_state);
    free(h_got);
}

/* TILES tiles of input: small values (readable in a failure message) for seed 1, any 32-bit
 * value for the others. */
static unsigned *make_tiles(uint64_t seed)
{
    const size_t words = TILES * lab_hook_state_words();
    unsigned *s = malloc(words * sizeof(*s));
    cr_assert(s);
    lab_fill_input((int *)s, words, seed == 1 ? DIST_SMALL : DIST_RANDOM, seed);
    return s;
}

TestSuite(brent_kung_phases, .timeout = 120);

Test(brent_kung_phases, models_compose_to_a_scan,
     .description = "CPU models: reduction then reverse tree is the inclusive scan")
{
    const size_t T = lab_hook_state_words();
    unsigned *s = make_tiles(lab_test_seed() + 1);
    int *want = malloc(T * sizeof(*want));
    cr_assert(want);
    int *in = malloc(T * sizeof(*in));
    cr_assert(in);
    memcpy(in, s, T * sizeof(*in));
    model_reduce(s, T);
    model_reverse(s, T);
    lab_reference_scan(in, want, T, SCAN_INCLUSIVE);
    size_t bad = lab_first_mismatch((const int *)s, want, T);
    cr_expect(bad == T, "the CPU models disagree with the reference at %zu", bad);
    free(in);
    free(want);
    free(s);
}

Test(brent_kung_phases, reduction_tree,
     .description = "after bk_reduction_tree alone, shared memory matches the model word for word")
{
    lab_test_need_device(&LAB);
    for (uint64_t seed = lab_test_seed(); seed < lab_test_seed() + 2; seed++) {
        unsigned *state = make_tiles(seed);
        unsigned *want = malloc(TILES * lab_hook_state_words() * sizeof(*want));
        cr_assert(want);
        memcpy(want, state, TILES * lab_hook_state_words() * sizeof(*want));
        for (size_t k = 0; k < TILES; k++)
            model_reduce(want + k * lab_hook_state_words(), lab_hook_state_words());
        run_phase(PHASE_REDUCE, state, want, "after the reduction tree");
        free(want);
        free(state);
    }
}

Test(brent_kung_phases, reverse_tree,
     .description =
         "bk_reverse_tree alone, from the model's reduced state, gives the inclusive scan")
{
    lab_test_need_device(&LAB);
    for (uint64_t seed = lab_test_seed(); seed < lab_test_seed() + 2; seed++) {
        unsigned *state = make_tiles(seed);
        unsigned *want = malloc(TILES * lab_hook_state_words() * sizeof(*want));
        cr_assert(want);
        for (size_t k = 0; k < TILES; k++)
            model_reduce(state + k * lab_hook_state_words(), lab_hook_state_words());
        memcpy(want, state, TILES * lab_hook_state_words() * sizeof(*want));
        for (size_t k = 0; k < TILES; k++)
            model_reverse(want + k * lab_hook_state_words(), lab_hook_state_words());
        run_phase(PHASE_REVERSE, state, want, "after the reverse tree");
        free(want);
        free(state);
    }
}

Test(brent_kung_phases, both_trees,
     .description = "both trees in a row give each tile's inclusive scan")
{
    lab_test_need_device(&LAB);
    const size_t T = lab_hook_state_words();
    unsigned *state = make_tiles(lab_test_seed() + 2);
    unsigned *want = malloc(TILES * T * sizeof(*want));
    cr_assert(want);
    for (size_t k = 0; k < TILES; k++)
        lab_reference_scan((const int *)state + k * T, (int *)want + k * T, T, SCAN_INCLUSIVE);
    run_phase(PHASE_REDUCE | PHASE_REVERSE, state, want, "after both trees");
    free(want);
    free(state);
}
