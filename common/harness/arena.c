/* arena.c — the judge's shared arena (arena.h): one memfd of LAB_ARENA_BYTES, mapped whole by
 * the judge and, before any of the lab's code runs, by the lab process, handed out page by page
 * (first fit over a sorted free list); a released range's pages are punched out of the file, so
 * they read as zeros in both processes and go back to the system. */
#define _GNU_SOURCE
#include "arena.h"
#include "port_wire.h" /* LAB_ARENA_BYTES */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int g_fd = -1;
static char *g_arena;

#define FREE_MAX 1024
static struct {
    size_t off, len;
} g_free[FREE_MAX];
static int g_nfree;

size_t lab_page_bytes(void)
{
    static size_t pg;
    if (!pg)
        pg = (size_t)sysconf(_SC_PAGESIZE);
    return pg;
}

int lab_arena_create(char *why, size_t whylen)
{
    g_fd = (int)syscall(SYS_memfd_create, "lab-shared", 0);
    if (g_fd < 0 || ftruncate(g_fd, (off_t)LAB_ARENA_BYTES) != 0) {
        snprintf(why, whylen, "cannot make the shared arena: %s", strerror(errno));
        return -1;
    }
    g_arena =
        mmap(NULL, LAB_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, g_fd, 0);
    if (g_arena == MAP_FAILED) {
        g_arena = NULL;
        snprintf(why, whylen, "cannot map the shared arena: %s", strerror(errno));
        return -1;
    }
    g_free[0].off = 0;
    g_free[0].len = LAB_ARENA_BYTES;
    g_nfree = 1;
    return 0;
}

void *lab_arena_alloc(size_t len)
{
    const size_t pg = lab_page_bytes();
    len = (len + pg - 1) / pg * pg;
    for (int i = 0; i < g_nfree; i++)
        if (g_free[i].len >= len) {
            char *p = g_arena + g_free[i].off;
            g_free[i].off += len;
            g_free[i].len -= len;
            return p;
        }
    return NULL;
}

void lab_arena_release(void *p, size_t len)
{
    const size_t pg = lab_page_bytes();
    size_t off = (size_t)((char *)p - g_arena);
    len = (len + pg - 1) / pg * pg;
    /* the pages go back to the system, and read as zeros in both processes from now on */
    fallocate(g_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    int i = 0;
    while (i < g_nfree && g_free[i].off < off)
        i++;
    if (i > 0 && g_free[i - 1].off + g_free[i - 1].len == off) { /* joins the one before */
        g_free[i - 1].len += len;
        if (i < g_nfree && off + len == g_free[i].off) {
            g_free[i - 1].len += g_free[i].len;
            memmove(&g_free[i], &g_free[i + 1], (size_t)(g_nfree - i - 1) * sizeof(g_free[0]));
            g_nfree--;
        }
        return;
    }
    if (i < g_nfree && off + len == g_free[i].off) { /* joins the one after */
        g_free[i].off = off;
        g_free[i].len += len;
        return;
    }
    if (g_nfree == FREE_MAX)
        return; /* lost to the arena, not to the machine (the pages were punched out) */
    memmove(&g_free[i + 1], &g_free[i], (size_t)(g_nfree - i) * sizeof(g_free[0]));
    g_free[i].off = off;
    g_free[i].len = len;
    g_nfree++;
}

int lab_arena_fd(void)
{
    return g_fd;
}

size_t lab_arena_offset(const void *p)
{
    return (size_t)((const char *)p - g_arena);
}
