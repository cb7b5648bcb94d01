#include "support/vec.h"

#include <string.h>

#include "support/alloc.h"

void *tj_vec_grow_(const void *items, int n, int *cap, int need, size_t elem, tj_arena_t *arena) {
  int new_cap = *cap ? *cap : 8;
  while (new_cap < need) {
    if (new_cap > (1 << 29)) return (void *)items; /* int sizes: refuse to overflow */
    new_cap *= 2;
  }
  void *grown;
  if (arena) {
    /* Arena storage is never freed: copy into a fresh, larger block. */
    grown = tj_arena_alloc(arena, elem * (size_t)new_cap);
    if (grown && n) memcpy(grown, items, elem * (size_t)n);
  } else {
    grown = tj_realloc((void *)items, elem * (size_t)new_cap);
  }
  if (!grown) return (void *)items;
  *cap = new_cap;
  return grown;
}

void tj_vec_free_(const void *items, tj_arena_t *arena) {
  if (!arena) tj_free((void *)items);
}

int tj_ptr_vec_find(const tj_ptr_vec_t *v, const void *p) {
  for (int i = 0; i < v->n; i++)
    if (v->items[i] == p) return i;
  return -1;
}

bool tj_ptr_vec_add_unique(tj_ptr_vec_t *v, const void *p) {
  return tj_ptr_vec_find(v, p) >= 0 || tj_vec_push(v, p);
}

void tj_ptr_vec_remove_at(tj_ptr_vec_t *v, int i) {
  if (i < 0 || i >= v->n) return;
  memmove(&v->items[i], &v->items[i + 1], sizeof(v->items[0]) * (size_t)(v->n - i - 1));
  v->n--;
}
