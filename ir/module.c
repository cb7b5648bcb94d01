#include "ir/module.h"

#include <stdio.h>
#include <string.h>

const tj_func_entry_t *tj_module_find(const tj_module_t *m, const char *name) {
  for (int i = 0; i < m->n_funcs; i++)
    if (strcmp(m->funcs[i].name, name) == 0) return &m->funcs[i];
  return NULL;
}

const tj_prim_func_t *tj_module_find_prim(const tj_module_t *m, const char *name) {
  const tj_func_entry_t *f = tj_module_find(m, name);
  return (f && f->is_prim) ? f->prim : NULL;
}

const tj_rx_func_t *tj_module_find_relax(const tj_module_t *m, const char *name) {
  const tj_func_entry_t *f = tj_module_find(m, name);
  return (f && !f->is_prim) ? f->relax : NULL;
}

tj_module_t *tj_module_new(tj_arena_t *a, int n_funcs, const tj_func_entry_t *funcs, const tj_attrs_t *attrs) {
  tj_module_t *m = TJ_ARENA_NEW(a, tj_module_t);
  if (!m) return NULL;
  m->n_funcs = n_funcs;
  m->funcs = n_funcs ? tj_arena_memdup(a, funcs, sizeof(*funcs) * (size_t)n_funcs) : NULL;
  m->attrs = attrs;
  return (n_funcs && !m->funcs) ? NULL : m;
}

tj_module_t *tj_module_with_func(tj_arena_t *a, const tj_module_t *m, tj_func_entry_t entry) {
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, m->n_funcs + 1);
  if (!funcs) return NULL;
  int n = 0;
  bool replaced = false;
  for (int i = 0; i < m->n_funcs; i++) {
    if (strcmp(m->funcs[i].name, entry.name) == 0) {
      funcs[n++] = entry;
      replaced = true;
    } else {
      funcs[n++] = m->funcs[i];
    }
  }
  if (!replaced) funcs[n++] = entry;
  tj_module_t *out = tj_module_new(a, n, funcs, m->attrs);
  if (out) out->global_infos = m->global_infos;
  return out;
}

tj_module_t *tj_module_without_func(tj_arena_t *a, const tj_module_t *m, const char *name) {
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, m->n_funcs + 1);
  if (!funcs) return NULL;
  int n = 0;
  for (int i = 0; i < m->n_funcs; i++)
    if (strcmp(m->funcs[i].name, name) != 0) funcs[n++] = m->funcs[i];
  tj_module_t *out = tj_module_new(a, n, funcs, m->attrs);
  if (out) out->global_infos = m->global_infos;
  return out;
}

const char *tj_module_unique_name(tj_arena_t *a, const tj_module_t *m, const char *base) {
  if (!tj_module_find(m, base)) return tj_arena_strdup(a, base);
  for (int i = 1;; i++) {
    char *name = tj_arena_printf(a, "%s%d", base, i);
    if (!name || !tj_module_find(m, name)) return name;
  }
}

bool tj_func_is_public(const tj_func_entry_t *f) {
  const tj_attrs_t *attrs = f->is_prim ? f->prim->attrs : f->relax->attrs;
  return tj_attrs_get(attrs, "global_symbol") != NULL;
}
