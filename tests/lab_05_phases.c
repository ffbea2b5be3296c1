/* lab_05_phases.c — Blelloch: up-sweep and down-sweep checked on their own against CPU models.
 *
 * Linked into build/tests/kernels_05_blelloch with the reference solution. The course's test
 * hook lab_hook_phase (tests/hooks/05_blelloch.cu, compiled together with the lab's scan.cu)
 * copies a prepared tile into a block's shared memory through the variant's layout (slot()),
 * runs one sweep on it and copies the tile back; the CPU models below say, element by element,
 * what each sweep must leave there. The down-sweep starts from the model's up-swept state with
 * the root cleared, so each sweep is judged on its own. Both layouts (the padded and plain
 * variants) are checked.
 */
#include "lab_cases.h"
#include "cuda_check.h"
#include "validate.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define PHASE_UP 1
#define PHASE_DOWN 2
#define TILES 16 /* tiles per test; each is checked separately */

/* CPU model of the up-sweep on one tile s[0..T): at stride d = 1, 2, ..., T/2 the right end
 * of each block of 2d elements (the right child) adds the right end of its left half (the left
 * child). */
static void model_up(unsigned *s, size_t T)
{
    for (size_t d = 1; d < T; d *= 2)
        for (size_t i = 2 * d - 1; i < T; i += 2 * d)
            s[i] += s[i - d];
}

/* CPU model of the down-sweep (root already cleared): at stride d = T/2, ..., 1, for the same
 * pairs as the up-sweep, the left child takes the parent's value and the right child (the
 * parent's place) becomes parent + old left child. */
static void model_down(unsigned *s, size_t T)
{
    for (size_t d = T / 2; d >= 1; d /= 2)
        for (size_t r = 2 * d - 1; r < T; r += 2 * d) {
            unsigned l = s[r - d];
            s[r - d] = s[r];
            s[r] += l;
        }
}

/* Runs phase on TILES tiles of state and compares every word with want. */
static void run_phase(int variant, int phase, const unsigned *state, const unsigned *want,
                      const char *what)
{
    const size_t T = LAB.tile, words = TILES * T;
    int *h_got = malloc(words * sizeof(int));
    int *d_state, *d_out;
    cr_assert(h_got);
    CUDA_CHECK(cudaMalloc((void **)&d_state, words * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, words * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_state, state, words * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, LAB_POISON_BYTE, words * sizeof(int)));
    lab_hook_phase(variant, phase, d_state, d_out, TILES);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h_got, d_out, words * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < TILES; k++) {
        size_t bad = lab_first_mismatch(h_got + k * T, (const int *)want + k * T, T);
        cr_expect(bad == T, "%s (%s), tile %zu of %d (T=%zu): element %zu expected %d, got %d",
                  what, LAB.variants[variant].name, k, TILES, T, bad,
                  bad < T ? (int)want[k * T + bad] : 0, bad < T ? h_got[k * T + bad] : 0);
    }
    cudaFree(d_out);
    cudaFree(d_state);
    free(h_got);
}

/* TILES tiles of input: small values (readable in a failure message) for seed 1, any 32-bit
 * value for the others. */
static unsigned *make_tiles(uint64_t seed)
{
    const size_t words = TILES * LAB.tile;
    unsigned *s = malloc(words * sizeof(*s));
    cr_assert(s);
    lab_fill_input((int *)s, words, seed == 1 ? DIST_SMALL : DIST_RANDOM, seed);
    return s;
}

TestSuite(blelloch_phases, .timeout = 120);

Test(blelloch_phases, models_compose_to_a_scan,
     .description = "CPU models: up-sweep, clear root, down-sweep is the exclusive scan")
{
    const size_t T = LAB.tile;
    unsigned *s = make_tiles(lab_test_seed() + 1);
    int *want = malloc(T * sizeof(*want)), *in = malloc(T * sizeof(*in));
    cr_assert(want && in);
    memcpy(in, s, T * sizeof(*in));
    model_up(s, T);
    s[T - 1] = 0;
    model_down(s, T);
    lab_reference_scan(in, want, T, SCAN_EXCLUSIVE);
    size_t bad = lab_first_mismatch((const int *)s, want, T);
    cr_expect(bad == T, "the CPU models disagree with the reference at %zu", bad);
    free(in);
    free(want);
    free(s);
}

/* The up-sweep alone, for one layout: the variant's. */
static void check_up(int variant)
{
    cr_assert_geq(variant, 0, "%s has no such variant", LAB.id);
    for (uint64_t seed = lab_test_seed(); seed < lab_test_seed() + 2; seed++) {
        unsigned *state = make_tiles(seed);
        unsigned *want = malloc(TILES * LAB.tile * sizeof(*want));
        cr_assert(want);
        memcpy(want, state, TILES * LAB.tile * sizeof(*want));
        for (size_t k = 0; k < TILES; k++)
            model_up(want + k * LAB.tile, LAB.tile);
        run_phase(variant, PHASE_UP, state, want, "after the up-sweep");
        free(want);
        free(state);
    }
}

/* The down-sweep alone, from the model's up-swept tiles with the root cleared. */
static void check_down(int variant)
{
    cr_assert_geq(variant, 0, "%s has no such variant", LAB.id);
    const size_t T = LAB.tile;
    for (uint64_t seed = lab_test_seed(); seed < lab_test_seed() + 2; seed++) {
        unsigned *state = make_tiles(seed);
        unsigned *want = malloc(TILES * T * sizeof(*want));
        cr_assert(want);
        for (size_t k = 0; k < TILES; k++) {
            model_up(state + k * T, T);
            state[k * T + T - 1] = 0;
        }
        memcpy(want, state, TILES * T * sizeof(*want));
        for (size_t k = 0; k < TILES; k++)
            model_down(want + k * T, T);
        run_phase(variant, PHASE_DOWN, state, want, "after the down-sweep");
        free(want);
        free(state);
    }
}

Test(blelloch_phases, up_sweep_padded,
     .description = "padded layout: after the up-sweep alone, the tile matches the model")
{
    lab_test_need_device(&LAB);
    check_up(lab_find_variant(&LAB, "padded"));
}

Test(blelloch_phases, up_sweep_plain,
     .description = "plain layout: after the up-sweep alone, the tile matches the model")
{
    lab_test_need_device(&LAB);
    check_up(lab_find_variant(&LAB, "plain"));
}

Test(
    blelloch_phases, down_sweep_padded,
    .description = "padded layout: the down-sweep alone, from the model's state, matches the model")
{
    lab_test_need_device(&LAB);
    check_down(lab_find_variant(&LAB, "padded"));
}

Test(blelloch_phases, down_sweep_plain,
     .description = "plain layout: the down-sweep alone, from the model's state, matches the model")
{
    lab_test_need_device(&LAB);
    check_down(lab_find_variant(&LAB, "plain"));
}
