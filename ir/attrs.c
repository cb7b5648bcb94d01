#include "ir/attrs.h"

#include <string.h>

const tj_attr_value_t *tj_attrs_get(const tj_attrs_t *attrs, const char *key) {
  if (!attrs) return NULL;
  for (int i = 0; i < attrs->n; i++)
    if (strcmp(attrs->keys[i], key) == 0) return &attrs->values[i];
  return NULL;
}

int64_t tj_attrs_get_int(const tj_attrs_t *attrs, const char *key, int64_t dflt) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  return (v && v->kind == TJ_ATTR_INT) ? v->i : dflt;
}

const char *tj_attrs_get_str(const tj_attrs_t *attrs, const char *key, const char *dflt) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  return (v && v->kind == TJ_ATTR_STR) ? v->s : dflt;
}

static tj_attrs_t *attrs_alloc(tj_arena_t *arena, int n) {
  tj_attrs_t *d = TJ_ARENA_NEW(arena, tj_attrs_t);
  if (!d) return NULL;
  d->n = n;
  d->keys = TJ_ARENA_ARRAY(arena, const char *, n);
  d->values = TJ_ARENA_ARRAY(arena, tj_attr_value_t, n);
  return (d->keys && d->values) ? d : NULL;
}

const tj_attrs_t *tj_attrs_set(tj_arena_t *arena, const tj_attrs_t *attrs, const char *key,
                               tj_attr_value_t value) {
  int n = attrs ? attrs->n : 0;
  int found = -1;
  for (int i = 0; i < n; i++)
    if (strcmp(attrs->keys[i], key) == 0) found = i;
  tj_attrs_t *d = attrs_alloc(arena, found >= 0 ? n : n + 1);
  if (!d) return NULL;
  const char **keys = (const char **)d->keys;
  tj_attr_value_t *values = (tj_attr_value_t *)d->values;
  for (int i = 0; i < n; i++) {
    keys[i] = attrs->keys[i];
    values[i] = attrs->values[i];
  }
  int slot = found >= 0 ? found : n;
  keys[slot] = tj_arena_strdup(arena, key);
  values[slot] = value;
  return keys[slot] ? d : NULL;
}

const tj_attrs_t *tj_attrs_remove(tj_arena_t *arena, const tj_attrs_t *attrs, const char *key) {
  if (!tj_attrs_get(attrs, key)) return attrs;
  if (attrs->n == 1) return NULL;
  tj_attrs_t *d = attrs_alloc(arena, attrs->n - 1);
  if (!d) return attrs; /* caller sees the old dict; arena failure is recorded */
  int j = 0;
  for (int i = 0; i < attrs->n; i++) {
    if (strcmp(attrs->keys[i], key) == 0) continue;
    ((const char **)d->keys)[j] = attrs->keys[i];
    ((tj_attr_value_t *)d->values)[j++] = attrs->values[i];
  }
  return d;
}

tj_attr_value_t tj_attr_int(int64_t v) {
  tj_attr_value_t a = {.kind = TJ_ATTR_INT, .dtype = TJ_I32, .i = v};
  return a;
}

tj_attr_value_t tj_attr_bool(bool v) {
  tj_attr_value_t a = {.kind = TJ_ATTR_INT, .dtype = TJ_BOOL, .i = v};
  return a;
}

tj_attr_value_t tj_attr_str(const char *s) {
  tj_attr_value_t a = {.kind = TJ_ATTR_STR, .s = s};
  return a;
}

bool tj_attr_value_equal(const tj_attr_value_t *a, const tj_attr_value_t *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TJ_ATTR_NONE: return true;
    case TJ_ATTR_INT: return a->i == b->i && tj_dtype_eq(a->dtype, b->dtype);
    case TJ_ATTR_FLOAT: return a->f == b->f;
    case TJ_ATTR_STR: return strcmp(a->s, b->s) == 0;
    case TJ_ATTR_DTYPE: return tj_dtype_eq(a->dtype, b->dtype);
    case TJ_ATTR_DICT: return tj_attrs_equal(a->dict, b->dict);
    case TJ_ATTR_BUFFER: return a->buffer == b->buffer;
    case TJ_ATTR_LIST:
      if (a->list.n != b->list.n) return false;
      for (int i = 0; i < a->list.n; i++)
        if (!tj_attr_value_equal(&a->list.items[i], &b->list.items[i])) return false;
      return true;
  }
  return false;
}

bool tj_attrs_equal(const tj_attrs_t *a, const tj_attrs_t *b) {
  int na = a ? a->n : 0, nb = b ? b->n : 0;
  if (na != nb) return false;
  for (int i = 0; i < na; i++) {
    const tj_attr_value_t *vb = tj_attrs_get(b, a->keys[i]);
    if (!vb || !tj_attr_value_equal(&a->values[i], vb)) return false;
  }
  return true;
}
