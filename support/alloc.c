#include "support/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
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

void *tj_aligned_alloc(size_t size) {
  if (should_fail()) return NULL;
  size_t rounded = (size + 63) & ~(size_t)63;
  return counted(aligned_alloc(64, rounded ? rounded : 64));
}

void tj_free(void *ptr) {
  if (ptr) atomic_fetch_sub(&live_count, 1);
  free(ptr);
}

void tj_aligned_free(void *ptr) { tj_free(ptr); }

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
