#include "transforms/fuse_util.h"

#include <stdint.h>
#include <string.h>

bool tj_ptr_vec_push(tj_arena_t *a, tj_ptr_vec_t *v, const void *item) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    const void **items = TJ_ARENA_ARRAY(a, const void *, cap);
    if (!items) return false;
    if (v->n) memcpy(items, v->items, sizeof(*items) * (size_t)v->n);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->n++] = item;
  return true;
}

int tj_ptr_vec_find(const tj_ptr_vec_t *v, const void *item) {
  for (int i = 0; i < v->n; i++)
    if (v->items[i] == item) return i;
  return -1;
}

static size_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static void raw_put(tj_ptr_map_t *m, const void *key, void *value) {
  size_t i = hash_ptr(key) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key;
  m->values[i] = value;
}

bool tj_ptr_map_put(tj_arena_t *a, tj_ptr_map_t *m, const void *key, void *value) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    tj_ptr_map_t bigger = {TJ_ARENA_ARRAY(a, const void *, cap), TJ_ARENA_ARRAY(a, void *, cap), cap, 0};
    if (!bigger.keys || !bigger.values) return false;
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) raw_put(&bigger, m->keys[i], m->values[i]);
    *m = bigger;
  }
  raw_put(m, key, value);
  return true;
}

void *tj_ptr_map_get(const tj_ptr_map_t *m, const void *key) {
  if (!m->cap || !key) return NULL;
  size_t i = hash_ptr(key) & (m->cap - 1);
  while (m->keys[i]) {
    if (m->keys[i] == key) return m->values[i];
    i = (i + 1) & (m->cap - 1);
  }
  return NULL;
}
