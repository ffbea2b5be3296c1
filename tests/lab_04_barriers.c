/* lab_04_barriers.c — Brent-Kung: the barriers matter, and the tests can tell.
 *
 * Its one variant, through the barrier test shared by the tile labs (tests/barriers.c: what it does
 * and why) and this lab's hook, tests/hooks/04_brent_kung.cu. Linked into
 * build/tests/kernels_04_brent_kung with the reference solution, and into
 * build/tests/labs/kernels_04_brent_kung with labs/ by make test TEST_SRC=labs.
 */
#include "barriers.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>

TestSuite(brent_kung_barriers, .timeout = 300);

Test(brent_kung_barriers, brent_kung, .description = "right with its barriers, caught without them")
{
    lab_check_barriers("brent_kung", lab_hook_scan_tiles);
}
