/* lab_05_barriers.c — Blelloch: the barriers matter, and the tests can tell.
 *
 * Both variants, through the barrier test shared by the tile labs (tests/barriers.c: what it does
 * and why) and this lab's hook, tests/hooks/05_blelloch.cu. Linked into
 * build/tests/kernels_05_blelloch with the reference solution, and into
 * build/tests/labs/kernels_05_blelloch with labs/ by make test TEST_SRC=labs.
 */
#include "barriers.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>

TestSuite(blelloch_barriers, .timeout = 300);

Test(blelloch_barriers, padded,
     .description = "padded: right with its barriers, caught without them")
{
    lab_check_barriers("padded", lab_hook_scan_tiles);
}

Test(blelloch_barriers, plain, .description = "plain: right with its barriers, caught without them")
{
    lab_check_barriers("plain", lab_hook_scan_tiles);
}
