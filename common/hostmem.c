/* hostmem.c — the host's memory from /proc/meminfo (see hostmem.h). */
#define _GNU_SOURCE
#include "hostmem.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The value of "name: N kB" in text, in bytes; 0 when absent. */
static double field_bytes(const char *text, const char *name)
{
    double kb = 0;
    const char *line = strstr(text, name);
    return line && sscanf(line + strlen(name), "%lf", &kb) == 1 ? kb * 1024.0 : 0;
}

int lab_host_memory(double *available, double *total)
{
    static int fd = -1;
    char buf[8192];
    if (fd < 0)
        fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    const ssize_t got = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
    if (available)
        *available = 0;
    if (total)
        *total = 0;
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    if (available)
        *available = field_bytes(buf, "MemAvailable:");
    if (total)
        *total = field_bytes(buf, "MemTotal:");
    return 0;
}
