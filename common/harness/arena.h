/* arena.h — the judge's shared arena (arena.c), internal to the harness: the memory that host
 * arrays (lab 01) and, in CPU mode, every buffer the harness shares with the lab process come
 * from (port.c). Nothing the judge keeps for itself is ever in it. */
#ifndef SCAN_HARNESS_ARENA_H
#define SCAN_HARNESS_ARENA_H

#include <stddef.h>

/* Makes and maps the arena: 0, or -1 with the reason in why[0..whylen). */
int lab_arena_create(char *why, size_t whylen);
/* len bytes (rounded up to whole pages) of the arena, or NULL when none are free. */
void *lab_arena_alloc(size_t len);
/* Gives back what lab_arena_alloc(len) returned at p; its pages read as zeros from now on. */
void lab_arena_release(void *p, size_t len);
/* The arena's file descriptor (for the lab process to map), -1 before lab_arena_create. */
int lab_arena_fd(void);
/* Where p (inside the arena) is, from its start. */
size_t lab_arena_offset(const void *p);
/* The system's page size. */
size_t lab_page_bytes(void);

#endif /* SCAN_HARNESS_ARENA_H */
