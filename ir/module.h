/* IRModule: an ordered list of named functions (PrimFuncs and Relax functions) plus
 * module attrs, and the compile context whose arena owns every node. */
#ifndef TJ_IR_MODULE_H
#define TJ_IR_MODULE_H

#include <stdbool.h>

#include "ir/relax.h"
#include "ir/tir.h"
#include "support/arena.h"

typedef struct tj_func_entry {
  const char *name;    /* the GlobalVar name */
  bool is_prim;
  const tj_prim_func_t *prim;  /* when is_prim */
  const tj_rx_func_t *relax;   /* otherwise */
} tj_func_entry_t;

typedef struct tj_module {
  int n_funcs;
  const tj_func_entry_t *funcs;
  const tj_attrs_t *attrs;       /* I.module_attrs; NULL = none */
  const tj_attrs_t *global_infos;/* I.module_global_infos (kept opaque); NULL = none */
  bool standalone;               /* parsed from a bare @R.function / @T.prim_func: no IRModule */
} tj_module_t;

const tj_func_entry_t *tj_module_find(const tj_module_t *m, const char *name);
const tj_prim_func_t *tj_module_find_prim(const tj_module_t *m, const char *name);
const tj_rx_func_t *tj_module_find_relax(const tj_module_t *m, const char *name);
/* A new module with `name` added or replaced (order kept; new names go last). */
tj_module_t *tj_module_with_func(tj_arena_t *a, const tj_module_t *m, tj_func_entry_t entry);
tj_module_t *tj_module_without_func(tj_arena_t *a, const tj_module_t *m, const char *name);
tj_module_t *tj_module_new(tj_arena_t *a, int n_funcs, const tj_func_entry_t *funcs, const tj_attrs_t *attrs);
/* A name not yet used in the module: base, base1, base2, ... (TVM's counter, no underscore). */
const char *tj_module_unique_name(tj_arena_t *a, const tj_module_t *m, const char *base);
/* True when the function has a global_symbol attr (public). */
bool tj_func_is_public(const tj_func_entry_t *f);

#endif
