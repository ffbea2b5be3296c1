/* gen.h — the input generator, one definition for the host (inputs.c) and the device (verify.cu).
 *
 * Element i of an input is a pure function of (seed, distribution, i), so the harness can make
 * a fresh input for every call on the GPU and check it there, and the CPU reference sees exactly
 * the same numbers. d is a lab_dist (contract.h), passed as an int.
 */
#ifndef SCAN_GEN_H
#define SCAN_GEN_H

#include <stdint.h>

#if defined(__CUDACC__)
#define LAB_HD __host__ __device__
#else
#define LAB_HD
#endif

/* splitmix64 of (seed, i): a counter-based generator, so element i does not depend on n. */
LAB_HD static inline uint64_t lab_mix64(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Element i of the input of distribution d (a lab_dist) under seed. */
LAB_HD static inline int lab_input_value(uint64_t seed, int d, uint64_t i)
{
    uint64_t r = lab_mix64(seed, i);
    switch (d) {
    case 0: /* DIST_SMALL: uniform in [-16, 16] */
        return (int)(r % 33) - 16;
    case 1: /* DIST_ONES */
        return 1;
    case 2: { /* DIST_ALT: +k, -k, ... */
        int k = (int)(r % 100) + 1;
        return (i % 2 == 0) ? k : -k;
    }
    case 3: { /* DIST_LARGE: magnitude in [2^29, 2^31 - 1], random sign */
        int32_t mag = (int32_t)((1u << 29) + (uint32_t)(r % ((1u << 31) - (1u << 29))));
        return (r >> 63) ? -mag : mag;
    }
    case 5: /* DIST_NEGATIVE: in [-2^31, -1] */
        return (int)(0x80000000u | (uint32_t)(r >> 33));
    case 6: { /* DIST_POSITIVE: in [1, 2^31 - 1]; one element in eight is INT_MAX */
        if ((r & 7u) == 0)
            return 0x7FFFFFFF;
        const uint32_t v = (uint32_t)(r >> 33);
        return (int)(v ? v : 1u);
    }
    default: /* DIST_RANDOM: any 32-bit value */
        return (int)(uint32_t)(r >> 32);
    }
}

/* The seed of call k of a process (k = 0 is the case's own seed): every later call scans a new
 * input, so an answer remembered from an earlier call is wrong. */
LAB_HD static inline uint64_t lab_call_seed(uint64_t seed, unsigned k)
{
    return k == 0 ? seed : lab_mix64(seed ^ 0xA5A5A5A55A5A5A5Aull, k);
}

/* Canary value for guard word i (varies with i so a shifted copy is also caught). */
LAB_HD static inline int lab_canary_value(uint64_t i)
{
    return (int)(0xC0FFEE00u ^ (uint32_t)(i * 2654435761u));
}

#endif /* SCAN_GEN_H */
