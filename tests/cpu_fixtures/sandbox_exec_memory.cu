/* sandbox_exec_memory.cu — a correct kernel whose launcher maps executable memory (the first
 * step of patching code at run time): in a graded run (--sandbox) the seccomp filter stops it. */
#define FIXTURE_ID "fixture_sandbox_exec_memory"
#define FIXTURE_SUMMARY "Kogge-Stone that maps executable memory"
#include "lab.h"
#include <sys/mman.h>
static void map_exec(void)
{
    void *p =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        munmap(p, 4096);
}
#define FIXTURE_HOST_HOOK map_exec

#include "correct_kernel.h"
#include "fixture.h"
