/* sandbox_whoami.cu — a correct kernel whose launcher prints the user and group it runs as on
 * stderr and ends without a report, so that the grader's message shows them: a graded run started
 * by a root grader runs as the unprivileged run user (grader/gradelib/proc.py), never as root. */
#define FIXTURE_ID "fixture_sandbox_whoami"
#define FIXTURE_SUMMARY "Kogge-Stone that says who it runs as"
#include "lab.h"
#include <stdio.h>
#include <unistd.h>
static void say_who(void)
{
    fprintf(stderr, "whoami: uid=%u euid=%u gid=%u egid=%u\n", (unsigned)getuid(),
            (unsigned)geteuid(), (unsigned)getgid(), (unsigned)getegid());
    _exit(42); /* ends without a report: the end of stderr goes in the feedback */
}
#define FIXTURE_HOST_HOOK say_who

#include "correct_kernel.h"
#include "fixture.h"
