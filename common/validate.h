/* validate.h — how the harness checks a call: the first wrong element, the canary words around
 * every buffer it hands to a lab, and the poison the output starts as. Pure C, no CUDA.
 */
#ifndef SCAN_VALIDATE_H
#define SCAN_VALIDATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Index of the first i with got[i] != want[i], or n when they agree. */
size_t lab_first_mismatch(const int *got, const int *want, size_t n);

/* Canary words guard both ends of every buffer the harness hands to a lab. */
#define LAB_GUARD_WORDS ((size_t)4096)

/* Canary value for guard word i (varies with i so a shifted copy is also caught). */
int lab_canary_word(size_t i);
void lab_canary_fill(int *guard, size_t words);
/* Index of the first guard word that changed, or words when none did. */
size_t lab_canary_check(const int *guard, size_t words);

/* Value the output is filled with before a run, so unwritten elements are caught: every byte
 * LAB_POISON_BYTE, so that memset and cudaMemset can write it. */
#define LAB_POISON_BYTE 0x7E
#define LAB_POISON ((int)(0x01010101u * LAB_POISON_BYTE))

/* Why a wrong value looks the way it does ("never written", or CPU mode's fill of memory no
 * thread wrote), with a leading space; "" otherwise. */
const char *lab_wrong_value_hint(long long got);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_VALIDATE_H */
