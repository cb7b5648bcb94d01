/* Shape vars as kernel parameters (shape_params.h). */
#include "transforms/tir/shape_params.h"

static bool is_param(const tj_prim_func_t *f, const tj_tir_expr_t *v) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i] == v) return true;
  return false;
}

static bool seen(const tj_tir_expr_t *const *vars, int n, const tj_tir_expr_t *v) {
  for (int i = 0; i < n; i++)
    if (vars[i] == v) return true;
  return false;
}

/* Vars of e not yet in vars[] and not params of f, appended in order of appearance. */
static bool collect(const tj_prim_func_t *f, const tj_tir_expr_t *e, const tj_tir_expr_t **vars, int *n) {
  if (!e) return true;
  if (e->kind == TJ_TIR_VAR) {
    if (is_param(f, e) || seen(vars, *n, e)) return true;
    if (*n == TJ_TIR_MAX_SHAPE_PARAMS) return false;
    vars[(*n)++] = e;
    return true;
  }
  if (tj_tir_kind_is_binary(e->kind)) return collect(f, e->binary.a, vars, n) && collect(f, e->binary.b, vars, n);
  if (e->kind == TJ_TIR_CAST || e->kind == TJ_TIR_NOT) return collect(f, e->unary.operand, vars, n);
  return e->kind == TJ_TIR_INT_IMM;
}

/* Where the kernel's caller reads var v: the first buffer dim that is v itself. */
static bool find_source(const tj_prim_func_t *f, const tj_tir_expr_t *v, tj_tir_shape_param_t *out) {
  for (int i = 0, b = 0; i < f->n_params; i++) {
    const tj_buffer_t *buf = f->buffer_map ? f->buffer_map[i] : NULL;
    if (!buf) continue;
    for (int d = 0; d < buf->ndim; d++)
      if (buf->shape[d] == v) return out->buffer = b, out->dim = d, true;
    b++;
  }
  return false;
}

tj_status_t *tj_tir_expose_shape_params(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                        const tj_prim_func_t **out_f, int *out_n, tj_tir_shape_param_t *out_params) {
  const tj_tir_expr_t *vars[TJ_TIR_MAX_SHAPE_PARAMS];
  int n = 0;
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *buf = f->buffer_map ? f->buffer_map[i] : NULL;
    for (int d = 0; buf && d < buf->ndim; d++)
      if (!collect(f, buf->shape[d], vars, &n))
        return tj_status_new(TJ_ERR_UNSUPPORTED,
                             "PrimFunc '%s': parameter '%s' dim %d is a shape the JIT cannot pass (more than %d vars, "
                             "or not integer arithmetic of vars)",
                             name, buf->name, d, TJ_TIR_MAX_SHAPE_PARAMS);
  }
  for (int k = 0; k < n; k++)
    if ((out_params[k].var = vars[k]), !find_source(f, vars[k], &out_params[k]))
      return tj_status_new(TJ_ERR_UNSUPPORTED,
                           "PrimFunc '%s': shape var '%s' appears only inside expressions of its buffers' dims; "
                           "the JIT reads each var from a dim that is the var alone",
                           name, vars[k]->var.name);
  *out_n = n;
  if (n == 0) return *out_f = f, NULL;
  tj_prim_func_t *nf = TJ_ARENA_NEW(arena, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(arena, const tj_tir_expr_t *, f->n_params + n);
  const tj_buffer_t **bmap = TJ_ARENA_ARRAY(arena, const tj_buffer_t *, f->n_params + n);
  if (!nf || !params || !bmap) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "PrimFunc '%s': out of memory", name);
  for (int i = 0; i < f->n_params; i++) {
    params[i] = f->params[i];
    bmap[i] = f->buffer_map ? f->buffer_map[i] : NULL;
  }
  for (int k = 0; k < n; k++) {
    params[f->n_params + k] = vars[k];
    bmap[f->n_params + k] = NULL;
  }
  *nf = *f;
  nf->n_params = f->n_params + n;
  nf->params = params;
  nf->buffer_map = bmap;
  *out_f = nf;
  return NULL;
}
