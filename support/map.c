#include "support/map.h"

#include <stdint.h>
#include <string.h>

#include "support/alloc.h"

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

static uint64_t hash_key(const tj_map_t *m, const void *key) {
  if (!m->str_keys) return mix64((uint64_t)(uintptr_t)key);
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (const unsigned char *p = key; *p; p++) h = (h ^ *p) * 1099511628211ULL;
  return mix64(h);
}

static bool same_key(const tj_map_t *m, const void *a, const void *b) {
  return a == b || (m->str_keys && strcmp(a, b) == 0);
}

/* The slot holding key, or the empty slot where it would go. cap must be > 0. */
static size_t slot_of(const tj_map_t *m, const void *key) {
  size_t mask = m->cap - 1, i = (size_t)hash_key(m, key) & mask;
  while (m->keys[i] && !same_key(m, m->keys[i], key)) i = (i + 1) & mask;
  return i;
}

static void *alloc_zeroed(tj_arena_t *arena, size_t n, size_t size) {
  return arena ? tj_arena_alloc(arena, n * size) : tj_calloc(n, size);
}

static void release(const tj_map_t *m) {
  if (m->arena) return;
  tj_free(m->keys);
  tj_free(m->values);
}

static bool grow(tj_map_t *m) {
  tj_map_t bigger = *m;
  bigger.cap = m->cap ? m->cap * 2 : 64;
  bigger.n = 0;
  bigger.keys = alloc_zeroed(m->arena, bigger.cap, sizeof *bigger.keys);
  bigger.values = alloc_zeroed(m->arena, bigger.cap, sizeof *bigger.values);
  if (!bigger.keys || !bigger.values) {
    release(&bigger);
    return false;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = slot_of(&bigger, m->keys[i]);
    bigger.keys[j] = m->keys[i];
    bigger.values[j] = m->values[i];
    bigger.n++;
  }
  release(m);
  *m = bigger;
  return true;
}

bool tj_map_put(tj_map_t *m, const void *key, void *value) {
  if (!key) return false;
  if ((m->n + 1) * 2 > m->cap && !grow(m)) return false;
  size_t i = slot_of(m, key);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key;
  m->values[i] = value;
  return true;
}

bool tj_map_find(const tj_map_t *m, const void *key, void **out_value) {
  if (!m->cap || !key) return false;
  size_t i = slot_of(m, key);
  if (!m->keys[i]) return false;
  if (out_value) *out_value = m->values[i];
  return true;
}

void *tj_map_get(const tj_map_t *m, const void *key) {
  void *v = NULL;
  return tj_map_find(m, key, &v) ? v : NULL;
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
bool tj_map_remove(tj_map_t *m, const void *key) {
  if (!m->cap || !key) return false;
  size_t mask = m->cap - 1, i = slot_of(m, key);
  if (!m->keys[i]) return false;
  for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
    size_t home = (size_t)hash_key(m, m->keys[j]) & mask;
    /* the entry at j may fill the hole at i iff i lies on its probe path home..j */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->keys[i] = m->keys[j];
      m->values[i] = m->values[j];
      i = j;
    }
  }
  m->keys[i] = NULL;
  m->values[i] = NULL;
  m->n--;
  return true;
}

bool tj_map_next(const tj_map_t *m, size_t *it, const void **out_key, void **out_value) {
  for (; *it < m->cap; (*it)++) {
    if (!m->keys[*it]) continue;
    if (out_key) *out_key = m->keys[*it];
    if (out_value) *out_value = m->values[*it];
    (*it)++;
    return true;
  }
  return false;
}

void tj_map_free(tj_map_t *m) {
  release(m);
  m->keys = NULL;
  m->values = NULL;
  m->cap = m->n = 0;
}
