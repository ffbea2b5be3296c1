/* sandbox_write_file.cu — a correct kernel whose launcher opens a file for writing: in a graded
 * run (--sandbox) the seccomp filter stops the open. */
#define FIXTURE_ID "fixture_sandbox_write_file"
#define FIXTURE_SUMMARY "Kogge-Stone that writes a file"
#include "lab.h"
#include <stdio.h>
static void write_a_file(void)
{
    FILE *f = fopen("lab-was-here.txt", "w");
    if (f)
        fclose(f);
}
#define FIXTURE_HOST_HOOK write_a_file

#include "correct_kernel.h"
#include "fixture.h"
