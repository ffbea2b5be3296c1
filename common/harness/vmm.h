/* vmm.h — a judge's shared device buffers on a GPU (vmm.c): allocated and kept by the judge,
 * exported as file descriptors, imported and mapped by the lab process. GPU builds only.
 * Internal to the harness. */
#ifndef SCAN_HARNESS_VMM_H
#define SCAN_HARNESS_VMM_H

#include "call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Finds the driver's functions (and makes the context): before the lab process's sandbox. */
void lab_vmm_load(void);

/* A shared buffer of at least bytes, its mapped size in *mapped (kept: a freed one is taken
 * again); -1 with r's status ST_NO_MEMORY and message when there is none. */
int lab_vmm_malloc(void **p, size_t bytes, size_t *mapped, lab_report *r, const char *what);
void lab_vmm_free(void *p);
/* The kept buffers not in use, each moved to newly allocated memory (the old released). */
void lab_vmm_renew(void);

/* The buffer holding p: a new file descriptor for it (the caller closes it), its start and its
 * mapped size. -1 when p is in none, or the driver refused. */
int lab_vmm_export(const void *p, int *fd, void **base, size_t *size);

/* The lab process: maps the buffer fd names (size bytes; fd is closed); NULL when it cannot. */
void *lab_vmm_import(int fd, size_t size);
void lab_vmm_unimport(void *p, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_VMM_H */
