/* sandbox_fork.cu — a correct kernel whose launcher forks a child (which exits at once): in a
 * graded run (--sandbox) the seccomp filter stops the fork and names the system call. */
#define FIXTURE_ID "fixture_sandbox_fork"
#define FIXTURE_SUMMARY "Kogge-Stone that forks"
#include "lab.h"
#include <unistd.h>
static void fork_a_child(void)
{
    if (fork() == 0)
        _exit(0);
}
#define FIXTURE_HOST_HOOK fork_a_child

#include "correct_kernel.h"
#include "fixture.h"
