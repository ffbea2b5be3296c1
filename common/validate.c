/* validate.c — the first mismatch and the canary words (see validate.h). */
#include "validate.h"
#include "gen.h"

#include <string.h>

size_t lab_first_mismatch(const int *got, const int *want, size_t n)
{
    /* memcmp finds a differing block fast; the loop then names the element */
    const size_t chunk = 4096;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (memcmp(got + i, want + i, len * sizeof(*got)) != 0)
            for (size_t j = i; j < i + len; j++)
                if (got[j] != want[j])
                    return j;
    }
    return n;
}

int lab_canary_word(size_t i)
{
    return lab_canary_value(i);
}

void lab_canary_fill(int *guard, size_t words)
{
    for (size_t i = 0; i < words; i++)
        guard[i] = lab_canary_word(i);
}

size_t lab_canary_check(const int *guard, size_t words)
{
    for (size_t i = 0; i < words; i++)
        if (guard[i] != lab_canary_word(i))
            return i;
    return words;
}
