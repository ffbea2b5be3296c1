/* validate.c — the first mismatch, the canary words and what a wrong value hints at (see
 * validate.h). */
#include "validate.h"
#include "gen.h"

#include <stdint.h>
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

/* The poison means never written; in CPU mode, a value within a little of 1 to 4 times the fill
 * of memory no thread wrote (0xCB bytes) is one or a few such slots summed into an answer. */
const char *lab_wrong_value_hint(long long got)
{
    if (got == LAB_POISON)
        return " (never written)";
#ifdef LAB_CPU_MODE
    for (unsigned k = 1; k <= 4; k++) {
        const int32_t off = (int32_t)((uint32_t)got - k * 0xCBCBCBCBu);
        if (off > -(1 << 16) && off < (1 << 16))
            return " (near CPU mode's fill 0xCBCBCBCB of memory no thread wrote: shared memory "
                   "read "
                   "before any thread wrote it, a missing barrier or a wrong index?)";
    }
#endif
    return "";
}
