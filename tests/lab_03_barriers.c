/* lab_03_barriers.c — Kogge-Stone: the barriers matter, and the tests can tell.
 *
 * Both variants, through the barrier test shared by the tile labs (tests/barriers.c: what it does
 * and why) and this lab's hook, tests/hooks/03_kogge_stone.cu. Linked into
 * build/tests/kernels_03_kogge_stone with the reference solution, and into
 * build/tests/labs/kernels_03_kogge_stone with labs/ by make test TEST_SRC=labs.
 */
#include "barriers.h"
#include "hooks/hooks.h"

#include <criterion/criterion.h>

TestSuite(kogge_stone_barriers, .timeout = 300);

Test(kogge_stone_barriers, double_buffer,
     .description = "double_buffer: right with its barriers, caught without them")
{
    lab_check_barriers("double_buffer", lab_hook_scan_tiles);
}

Test(kogge_stone_barriers, two_barrier,
     .description = "two_barrier: right with its barriers, caught without them")
{
    lab_check_barriers("two_barrier", lab_hook_scan_tiles);
}
