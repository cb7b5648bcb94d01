/* The struct info of a call of a Relax function (TVM's DeriveCallRetStructInfo): the
 * callee's symbolic variables are matched against the arguments' struct info, the
 * return struct info is rewritten in the caller's terms, and what cannot be expressed
 * there (a variable no argument binds) is erased to unknown (EraseToWellDefined). */
#include "ir/sinfo.h"
#include "ir/visit.h"

enum { MAX_BOUND = 64 };

typedef struct var_map {
  int n;
  const tj_tir_expr_t *vars[MAX_BOUND];
  const tj_tir_expr_t *values[MAX_BOUND];
} var_map_t;

static bool is_mapped(const var_map_t *m, const tj_tir_expr_t *var) {
  for (int i = 0; i < m->n; i++)
    if (m->vars[i] == var) return true;
  return false;
}

static void bind_dim(var_map_t *m, const tj_tir_expr_t *param, const tj_tir_expr_t *arg) {
  if (!param || !arg || param->kind != TJ_TIR_VAR || is_mapped(m, param) || m->n >= MAX_BOUND) return;
  m->vars[m->n] = param;
  m->values[m->n++] = arg;
}

static void bind_dims(var_map_t *m, int n, const tj_tir_expr_t *const *param, const tj_tir_expr_t *const *arg) {
  if (!param || !arg) return;
  for (int i = 0; i < n; i++) bind_dim(m, param[i], arg[i]);
}

/* Binds the bare variables of `param` to the matching parts of `arg`. */
static void match_sinfo(var_map_t *m, const tj_sinfo_t *param, const tj_sinfo_t *arg) {
  if (!param || !arg || param->kind != arg->kind) return;
  switch (param->kind) {
    case TJ_SINFO_TENSOR:
      if (param->tensor.ndim == arg->tensor.ndim) bind_dims(m, param->tensor.ndim, param->tensor.shape, arg->tensor.shape);
      return;
    case TJ_SINFO_SHAPE:
      if (param->shape.ndim == arg->shape.ndim) bind_dims(m, param->shape.ndim, param->shape.values, arg->shape.values);
      return;
    case TJ_SINFO_PRIM: bind_dim(m, param->prim.value, arg->prim.value); return;
    case TJ_SINFO_TUPLE:
      for (int i = 0; i < param->tuple.n && i < arg->tuple.n; i++) match_sinfo(m, param->tuple.fields[i], arg->tuple.fields[i]);
      return;
    default: return;
  }
}

typedef struct unbound_ctx {
  const var_map_t *m;
  bool found;
} unbound_ctx_t;

static bool find_unbound(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  unbound_ctx_t *u = v->ctx;
  if (e->kind == TJ_TIR_VAR && !is_mapped(u->m, e)) u->found = true;
  return !u->found;
}

/* The expression in the caller's terms, or NULL when it uses an unbound variable. */
static const tj_tir_expr_t *rewrite_dim(tj_arena_t *a, const var_map_t *m, const tj_tir_expr_t *e) {
  if (!e) return NULL;
  unbound_ctx_t u = {m, false};
  tj_tir_visitor_t v = {.expr = find_unbound, .ctx = &u};
  tj_tir_visit_expr(&v, e);
  if (u.found) return NULL;
  return m->n ? tj_tir_substitute_expr(a, e, m->n, m->vars, m->values) : e;
}

/* All dims rewritten, or NULL (unknown) when one cannot be. */
static const tj_tir_expr_t *const *rewrite_dims(tj_arena_t *a, const var_map_t *m, int n,
                                                const tj_tir_expr_t *const *dims, bool *out_oom) {
  if (!dims || n < 0) return NULL;
  const tj_tir_expr_t **out = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, n + 1);
  if (!out) return *out_oom = true, NULL;
  for (int i = 0; i < n; i++)
    if (!(out[i] = rewrite_dim(a, m, dims[i]))) return NULL;
  return out;
}

static const tj_sinfo_t *rewrite_sinfo(tj_arena_t *a, const var_map_t *m, const tj_sinfo_t *s, bool *oom) {
  if (!s) return NULL;
  tj_sinfo_t *r = NULL;
  switch (s->kind) {
    case TJ_SINFO_TENSOR: {
      const tj_tir_expr_t *const *dims = rewrite_dims(a, m, s->tensor.ndim, s->tensor.shape, oom);
      r = (tj_sinfo_t *)tj_sinfo_tensor(a, s->tensor.dtype, s->tensor.ndim, dims);
      if (r && dims && s->tensor.ndim == 0) r->tensor.shape = dims;
      if (r) r->tensor.vdevice = s->tensor.vdevice;
      break;
    }
    case TJ_SINFO_SHAPE: {
      const tj_tir_expr_t *const *vals = rewrite_dims(a, m, s->shape.ndim, s->shape.values, oom);
      r = (tj_sinfo_t *)tj_sinfo_shape(a, s->shape.ndim, vals);
      if (r && vals && s->shape.ndim == 0) r->shape.values = vals;
      break;
    }
    case TJ_SINFO_PRIM: return tj_sinfo_prim(a, s->prim.dtype, rewrite_dim(a, m, s->prim.value));
    case TJ_SINFO_TUPLE: {
      const tj_sinfo_t **f = TJ_ARENA_ARRAY(a, const tj_sinfo_t *, s->tuple.n + 1);
      if (!f) return *oom = true, NULL;
      for (int i = 0; i < s->tuple.n; i++)
        if (!(f[i] = rewrite_sinfo(a, m, s->tuple.fields[i], oom))) return NULL;
      return tj_sinfo_tuple(a, s->tuple.n, f);
    }
    default: return s; /* Object, Callable: no variables of their own to rewrite here */
  }
  if (!r) *oom = true;
  return r;
}

const tj_sinfo_t *tj_sinfo_derive_call_ret(tj_arena_t *a, const tj_sinfo_t *func, int n_args,
                                           const tj_sinfo_t *const *arg_sinfo) {
  if (!func || func->kind != TJ_SINFO_FUNC || !func->func.ret) return tj_sinfo_object(a);
  var_map_t m = {0};
  if (func->func.n_params == n_args)
    for (int i = 0; i < n_args; i++) match_sinfo(&m, func->func.params[i], arg_sinfo[i]);
  bool oom = false;
  const tj_sinfo_t *r = rewrite_sinfo(a, &m, func->func.ret, &oom);
  if (oom) return NULL;
  /* unchanged (e.g. static shapes): the callee's own node, shared as before */
  return r && tj_sinfo_equal_static(r, func->func.ret) ? func->func.ret : r;
}

const tj_sinfo_t *tj_sinfo_erase_to_params(tj_arena_t *a, const tj_sinfo_t *s, int n_params,
                                           const tj_sinfo_t *const *param_sinfo) {
  if (!s) return NULL;
  var_map_t m = {0};
  for (int i = 0; i < n_params; i++) match_sinfo(&m, param_sinfo[i], param_sinfo[i]);
  bool oom = false;
  const tj_sinfo_t *r = rewrite_sinfo(a, &m, s, &oom);
  if (oom) return NULL;
  return r && tj_sinfo_equal_static(r, s) ? s : r;
}
