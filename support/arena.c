#include "support/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/alloc.h"

typedef struct chunk {
  struct chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
} chunk_t;

struct tj_arena {
  chunk_t *head;
  size_t total;
  bool failed;
};

enum { CHUNK_DEFAULT = 64 * 1024 };

tj_arena_t *tj_arena_create(void) { return tj_calloc(1, sizeof(tj_arena_t)); }

void tj_arena_free(tj_arena_t *arena) {
  if (!arena) return;
  for (chunk_t *c = arena->head, *next; c; c = next) {
    next = c->next;
    tj_free(c);
  }
  tj_free(arena);
}

/* Sizes are rounded up to 16 bytes (and 0 to 16), so every block is 16-byte aligned. */
static size_t rounded(size_t size) { return size ? (size + 15) & ~(size_t)15 : 16; }

void *tj_arena_alloc(tj_arena_t *arena, size_t size) {
  void *p = tj_arena_alloc_uninit(arena, size);
  if (p) memset(p, 0, rounded(size));
  return p;
}

void *tj_arena_alloc_uninit(tj_arena_t *arena, size_t size) {
  size = rounded(size);
  chunk_t *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > CHUNK_DEFAULT ? size : CHUNK_DEFAULT;
    c = tj_malloc(sizeof(chunk_t) + cap);
    if (!c) {
      arena->failed = true;
      return NULL;
    }
    tj_advise_huge_pages(c->data, cap); /* untouched yet: a large chunk faults in 2 MiB pages */
    c->size = cap;
    c->used = 0;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  arena->total += size;
  return p;
}

void *tj_arena_memdup(tj_arena_t *arena, const void *p, size_t n) {
  void *d = tj_arena_alloc(arena, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *tj_arena_strndup(tj_arena_t *arena, const char *s, size_t n) {
  char *d = tj_arena_alloc(arena, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *tj_arena_strdup(tj_arena_t *arena, const char *s) { return tj_arena_strndup(arena, s, strlen(s)); }

char *tj_arena_printf(tj_arena_t *arena, const char *fmt, ...) {
  va_list ap, copy;
  va_start(ap, fmt);
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  char *d = n < 0 ? NULL : tj_arena_alloc(arena, (size_t)n + 1);
  if (d) vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

bool tj_arena_failed(const tj_arena_t *arena) { return arena->failed; }

size_t tj_arena_bytes_used(const tj_arena_t *arena) { return arena->total; }
