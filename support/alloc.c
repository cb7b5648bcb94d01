#include "support/alloc.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

/* Remaining successful allocations before injected failures start; -1 = never fail. */
static atomic_long fail_budget = -1;
static atomic_long alloc_count = 0;
/* Blocks handed out and not yet freed: lets tests check for leaks without LSan. */
static atomic_long live_count = 0;

static void *counted(void *p) {
  if (p) atomic_fetch_add(&live_count, 1);
  return p;
}

static int should_fail(void) {
  atomic_fetch_add(&alloc_count, 1);
  long budget = atomic_load(&fail_budget);
  while (budget >= 0) {
    if (budget == 0) return 1;
    if (atomic_compare_exchange_weak(&fail_budget, &budget, budget - 1)) return 0;
  }
  return 0;
}

void *tj_malloc(size_t size) { return should_fail() ? NULL : counted(malloc(size ? size : 1)); }

void *tj_calloc(size_t count, size_t size) {
  return should_fail() ? NULL : counted(calloc(count ? count : 1, size ? size : 1));
}

void *tj_realloc(void *ptr, size_t size) {
  if (should_fail()) return NULL;
  void *p = realloc(ptr, size ? size : 1);
  return ptr ? p : counted(p);
}

#define HUGE_PAGE ((size_t)2 << 20)

void tj_advise_huge_pages(void *ptr, size_t size) {
  if (!ptr || size < 2 * HUGE_PAGE) return;
  uintptr_t lo = ((uintptr_t)ptr + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)ptr + size) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* ---- a cache of large aligned blocks ----
 * Each run allocates its workspace, outputs and kernel temporaries (megabytes) and
 * frees them at the end; glibc serves such sizes with fresh mmaps (or trims them off
 * the heap), so every run pays a page fault per 4 KiB touched. On this project's VM
 * that cost 48 of 50 ms per seed run, randomly (by glibc's heuristics), against 1.8 ms
 * when the memory is reused. Freed large blocks are kept here and handed out again.
 * Bounded; sanitizer builds bypass it so use-after-free is still caught. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TJ_BLOCK_CACHE 0
#else
#define TJ_BLOCK_CACHE 1
#endif

enum { CACHE_MIN_BYTES = 128 * 1024, CACHE_SLOTS = 32 };
#define CACHE_MAX_BYTES ((size_t)256 << 20)

typedef struct cached_block {
  void *ptr;
  size_t size; /* malloc_usable_size */
} cached_block_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached_block_t cache[CACHE_SLOTS];
static int cache_n;
static size_t cache_bytes;

/* The smallest cached block of at least `size` bytes and at most twice that. */
static void *cache_take(size_t size) {
  pthread_mutex_lock(&cache_lock);
  int best = -1;
  for (int i = 0; i < cache_n; i++)
    if (cache[i].size >= size && cache[i].size / 2 <= size && (best < 0 || cache[i].size < cache[best].size)) best = i;
  void *p = NULL;
  if (best >= 0) {
    p = cache[best].ptr;
    cache_bytes -= cache[best].size;
    cache[best] = cache[--cache_n];
  }
  pthread_mutex_unlock(&cache_lock);
  return p;
}

/* Keeps `ptr` (a large, 64-byte aligned block) when there is room. */
static int cache_put(void *ptr) {
  if (((uintptr_t)ptr & 63) != 0) return 0;
  size_t size = malloc_usable_size(ptr);
  if (size < CACHE_MIN_BYTES) return 0;
  pthread_mutex_lock(&cache_lock);
  int kept = cache_n < CACHE_SLOTS && cache_bytes + size <= CACHE_MAX_BYTES;
  if (kept) {
    cache[cache_n++] = (cached_block_t){ptr, size};
    cache_bytes += size;
  }
  pthread_mutex_unlock(&cache_lock);
  return kept;
}

void tj_alloc_release_cached(void) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < cache_n; i++) free(cache[i].ptr);
  cache_n = 0;
  cache_bytes = 0;
  pthread_mutex_unlock(&cache_lock);
}

void *tj_aligned_alloc(size_t size) {
  if (should_fail()) return NULL;
  size_t rounded = (size + 63) & ~(size_t)63;
  if (TJ_BLOCK_CACHE && rounded >= CACHE_MIN_BYTES) {
    void *p = cache_take(rounded);
    if (p) return counted(p);
  }
  return counted(aligned_alloc(64, rounded ? rounded : 64));
}

void tj_free(void *ptr) {
  if (ptr) atomic_fetch_sub(&live_count, 1);
  free(ptr);
}

/* A cached block counts as freed (live_count) until it is handed out again. */
void tj_aligned_free(void *ptr) {
  if (TJ_BLOCK_CACHE && ptr && cache_put(ptr)) {
    atomic_fetch_sub(&live_count, 1);
    return;
  }
  tj_free(ptr);
}

char *tj_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tj_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void tj_alloc_fail_after(long n) {
  atomic_store(&alloc_count, 0);
  atomic_store(&fail_budget, n < 0 ? -1 : n);
}

void tj_alloc_fail_reset(void) { atomic_store(&fail_budget, -1); }

long tj_alloc_count(void) { return atomic_load(&alloc_count); }

long tj_alloc_live(void) { return atomic_load(&live_count); }
