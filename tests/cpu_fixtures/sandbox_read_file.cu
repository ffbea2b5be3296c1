/* sandbox_read_file.cu — a correct kernel whose launcher reads a file that exists and every user
 * may read (/etc/passwd; a lab 01 upload read the course's reference this way), prints it on
 * stderr and ends without a report, so that a graded run's feedback would carry the file: in a
 * graded run (--sandbox) the seccomp filter stops the open, names it, and no byte of the file is
 * printed. */
#define FIXTURE_ID "fixture_sandbox_read_file"
#define FIXTURE_SUMMARY "Kogge-Stone that prints a file"
#include "lab.h"
#include <stdio.h>
#include <unistd.h>
static void print_a_file(void)
{
    char line[256];
    FILE *f = fopen("/etc/passwd", "r");
    if (f) {
        while (fgets(line, sizeof(line), f))
            fputs(line, stderr);
        fclose(f);
    }
    _exit(42); /* ends without a report: the end of stderr goes in the feedback */
}
#define FIXTURE_HOST_HOOK print_a_file

#include "correct_kernel.h"
#include "fixture.h"
