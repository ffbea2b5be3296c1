/* correct.cu — the control: the same Kogge-Stone as missing_barrier.cu with both barriers. It must
 * pass for every CPU_SCHED_SEED, so a failure of missing_barrier.cu is the missing barrier's
 * doing and not the scheduler's. */
#define FIXTURE_ID "fixture_correct"
#define FIXTURE_SUMMARY "Kogge-Stone with both barriers (control)"
#include "lab.h"

#include "correct_kernel.h"

#include "fixture.h"
