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

/* A heap block the arena frees with its chunks (tj_arena_adopt). */
typedef struct adopted {
  struct adopted *next;
  void *block;
} adopted_t;

struct tj_arena {
  chunk_t *head;
  adopted_t *adopted;
  size_t total;
  bool failed;
};

enum { CHUNK_DEFAULT = 64 * 1024 };

tj_arena_t *tj_arena_create(void) { return tj_calloc(1, sizeof(tj_arena_t)); }

void tj_arena_free(tj_arena_t *arena) {
  if (!arena) return;
  for (adopted_t *a = arena->adopted; a; a = a->next) tj_free(a->block);
  for (chunk_t *c = arena->head, *next; c; c = next) {
    next = c->next;
    tj_free(c);
  }
  tj_free(arena);
}

void *tj_arena_alloc(tj_arena_t *arena, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  chunk_t *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > CHUNK_DEFAULT ? size : CHUNK_DEFAULT;
    c = tj_malloc(sizeof(chunk_t) + cap);
    if (!c) {
      arena->failed = true;
      return NULL;
    }
    c->size = cap;
    c->used = 0;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  arena->total += size;
  memset(p, 0, size);
  return p;
}

bool tj_arena_adopt(tj_arena_t *arena, void *block) {
  adopted_t *a = TJ_ARENA_NEW(arena, adopted_t);
  if (!a) return false;
  a->block = block;
  a->next = arena->adopted;
  arena->adopted = a;
  return true;
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
