/* The one allocation hook of the library. Every allocation tvmjit makes goes through
 * these functions, so tests can make the Nth allocation fail and check that each error
 * path is clean. Thread-safe. */
#ifndef TJ_SUPPORT_ALLOC_H
#define TJ_SUPPORT_ALLOC_H

#include <stddef.h>

void *tj_malloc(size_t size);
void *tj_calloc(size_t count, size_t size);
void *tj_realloc(void *ptr, size_t size);
/* 64-byte aligned; free with tj_aligned_free. Large blocks (128 KiB and more) are kept
 * after free, up to 256 MiB, and reused by later allocations: runs allocate and free
 * the same sizes each time, and fresh memory costs a page fault per page. The contents
 * of a block are undefined, as with malloc. */
void *tj_aligned_alloc(size_t size);
void tj_aligned_free(void *ptr);
/* Asks the kernel to back the 2 MiB-aligned middle of a block about to be filled with
 * transparent huge pages (when THP is "madvise", as on the Ice Lake host): a fresh
 * 47 MB of weights then faults in 2 MiB at a time instead of 4 KiB (11,500 faults, page
 * clears and memcg charges). Blocks under 4 MiB are left alone; failure changes
 * nothing. */
void tj_advise_huge_pages(void *ptr, size_t size);
/* Frees the cached blocks (the instance does it when it is freed). */
void tj_alloc_release_cached(void);
void tj_free(void *ptr);
char *tj_strdup(const char *s);

/* Failure injection for tests: after `n` more successful allocations, every further
 * allocation fails until tj_alloc_fail_reset() is called. n < 0 disables injection. */
void tj_alloc_fail_after(long n);
void tj_alloc_fail_reset(void);
/* Number of allocations made since the last reset (successful or not). */
long tj_alloc_count(void);
/* Number of blocks allocated and not yet freed, over the whole process: equal before
 * and after an operation that should not leak. */
long tj_alloc_live(void);

#endif
