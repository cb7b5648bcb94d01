/* BindSymbolicVars (TVM's relax.transform.BindSymbolicVars): replaces symbolic shape
 * vars of a Relax function with values everywhere they occur — parameter and return
 * struct info, the struct info of every expression and var, call_tir's out_sinfo,
 * shape expressions and prim values — and folds what becomes constant ((n * 3) // 3
 * with n = 5 is 5). Nothing is re-inferred: like TVM's pass this is a substitution, so
 * a module that was well formed stays so. The runtime uses it to specialise a symbolic
 * `main` to the shapes of a call before LegalizeOps (api/specialize.c). */
#include "ir/op.h"
#include "ir/rx_mutator.h"
#include "ir/visit.h"
#include "transforms/transforms.h"

typedef struct binder {
  tj_arena_t *arena;
  int n;
  const tj_tir_expr_t *const *vars, *const *values;
  bool oom;
} binder_t;

static const tj_tir_expr_t *bind_dim(binder_t *b, const tj_tir_expr_t *e) {
  if (!e) return e;
  const tj_tir_expr_t *sub = tj_tir_substitute_expr(b->arena, e, b->n, b->vars, b->values);
  if (!sub) return b->oom = true, e;
  if (sub == e) return e;
  int64_t v;
  const tj_tir_expr_t *r = tj_tir_eval_int(sub, &v) ? tj_tir_int(b->arena, sub->dtype, v)
                                                    : tj_op_simplify_dim(b->arena, sub);
  return r ? r : (b->oom = true, e);
}

/* dims bound, or `dims` itself when none changed. */
static const tj_tir_expr_t *const *bind_dims(binder_t *b, int n, const tj_tir_expr_t *const *dims) {
  if (!dims || n <= 0) return dims;
  const tj_tir_expr_t **out = TJ_ARENA_ARRAY(b->arena, const tj_tir_expr_t *, n);
  if (!out) return b->oom = true, dims;
  bool changed = false;
  for (int i = 0; i < n; i++) changed |= (out[i] = bind_dim(b, dims[i])) != dims[i];
  return changed ? out : dims;
}

static const tj_sinfo_t *bind_sinfo(binder_t *b, const tj_sinfo_t *s);

static const tj_sinfo_t *const *bind_sinfos(binder_t *b, int n, const tj_sinfo_t *const *list) {
  if (!list || n <= 0) return list;
  const tj_sinfo_t **out = TJ_ARENA_ARRAY(b->arena, const tj_sinfo_t *, n);
  if (!out) return b->oom = true, list;
  bool changed = false;
  for (int i = 0; i < n; i++) changed |= (out[i] = bind_sinfo(b, list[i])) != list[i];
  return changed ? out : list;
}

static const tj_sinfo_t *bind_sinfo(binder_t *b, const tj_sinfo_t *s) {
  if (!s) return s;
  tj_sinfo_t copy = *s;
  bool changed = false;
  switch (s->kind) {
    case TJ_SINFO_TENSOR:
      changed = (copy.tensor.shape = bind_dims(b, s->tensor.ndim, s->tensor.shape)) != s->tensor.shape;
      break;
    case TJ_SINFO_SHAPE:
      changed = (copy.shape.values = bind_dims(b, s->shape.ndim, s->shape.values)) != s->shape.values;
      break;
    case TJ_SINFO_PRIM: changed = (copy.prim.value = bind_dim(b, s->prim.value)) != s->prim.value; break;
    case TJ_SINFO_TUPLE:
      changed = (copy.tuple.fields = bind_sinfos(b, s->tuple.n, s->tuple.fields)) != s->tuple.fields;
      break;
    case TJ_SINFO_FUNC:
      changed = (copy.func.params = bind_sinfos(b, s->func.n_params, s->func.params)) != s->func.params;
      changed |= (copy.func.ret = bind_sinfo(b, s->func.ret)) != s->func.ret;
      break;
    default: break;
  }
  if (!changed) return s;
  tj_sinfo_t *r = TJ_ARENA_NEW(b->arena, tj_sinfo_t);
  if (!r) return b->oom = true, s;
  *r = copy;
  return r;
}

/* Every node after its children: its struct info and the TIR exprs it holds, bound. */
static const tj_rx_expr_t *bind_node(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  binder_t *b = m->ctx;
  tj_rx_expr_t copy = *e;
  bool changed = (copy.sinfo = bind_sinfo(b, e->sinfo)) != e->sinfo;
  if (e->kind == TJ_RX_CALL)
    changed |= (copy.call.sinfo_args = bind_sinfos(b, e->call.n_sinfo_args, e->call.sinfo_args)) != e->call.sinfo_args;
  if (e->kind == TJ_RX_SHAPE_EXPR)
    changed |= (copy.shape_expr.values = bind_dims(b, e->shape_expr.n, e->shape_expr.values)) != e->shape_expr.values;
  if (e->kind == TJ_RX_PRIM_VALUE)
    changed |= (copy.prim_value.value = bind_dim(b, e->prim_value.value)) != e->prim_value.value;
  if (b->oom) return tj_rx_mutator_oom(m);
  if (!changed) return e;
  tj_rx_expr_t *r = tj_rx_expr_copy(m->arena, &copy);
  return r ? r : tj_rx_mutator_oom(m);
}

/* A var: its replacement when one was made (params, re-emitted bindings), else a new
 * var with bound struct info the first time it is met. */
static const tj_rx_expr_t *bind_var(tj_rx_mutator_t *m, const tj_rx_expr_t *v) {
  const tj_rx_expr_t *r = tj_rx_mutator_lookup(m, v);
  if (r != v) return r;
  binder_t *b = m->ctx;
  const tj_sinfo_t *s = bind_sinfo(b, v->sinfo);
  if (b->oom) return tj_rx_mutator_oom(m);
  if (s == v->sinfo) return v;
  r = v->kind == TJ_RX_DATAFLOW_VAR ? tj_rx_dataflow_var(m->arena, v->var.name, s) : tj_rx_var(m->arena, v->var.name, s);
  if (!r || !tj_rx_mutator_remap(m, v, r)) return tj_rx_mutator_oom(m);
  return r;
}

/* match_cast bindings keep their var; their target struct info is bound too. */
static void bind_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *bd) {
  binder_t *b = m->ctx;
  tj_rx_binding_t copy = *bd;
  copy.match_cast = bind_sinfo(b, bd->match_cast);
  if (bd->match_cast) copy.var = bind_var(m, bd->var);
  tj_rx_reemit(m, &copy, tj_rx_mutate_expr(m, bd->value));
}

tj_status_t *tj_bind_symbolic_vars(tj_arena_t *arena, const tj_module_t *in, const char *function, int n,
                                   const tj_tir_expr_t *const *vars, const int64_t *values,
                                   const tj_module_t **out) {
  const tj_func_entry_t *entry = tj_module_find(in, function);
  if (!entry || entry->is_prim)
    return tj_status_new(TJ_ERR_NOT_FOUND, "BindSymbolicVars: the module has no Relax function '%s'", function);
  const tj_tir_expr_t **imms = TJ_ARENA_ARRAY(arena, const tj_tir_expr_t *, n > 0 ? n : 1);
  for (int i = 0; imms && i < n; i++)
    if (!(imms[i] = tj_tir_int(arena, vars[i]->dtype, values[i]))) imms = NULL;
  if (!imms) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "BindSymbolicVars: out of memory");
  binder_t b = {arena, n, vars, imms, false};
  tj_rx_mutator_t m;
  tj_rx_mutator_init(&m, arena, "BindSymbolicVars");
  m.ctx = &b;
  m.post = bind_node;
  m.var = bind_var;
  m.binding = bind_binding;
  const tj_rx_func_t *f = entry->relax;
  for (int i = 0; i < f->n_params; i++) bind_var(&m, f->params[i]);
  const tj_rx_func_t *nf = m.error ? NULL : tj_rx_mutate_func(&m, f);
  const tj_sinfo_t *ret = nf ? bind_sinfo(&b, f->ret_sinfo) : NULL;
  tj_rx_func_t *copy = nf ? TJ_ARENA_NEW(arena, tj_rx_func_t) : NULL;
  if (m.error) return tj_status_annotate(m.error, "in function '%s'", function);
  if (!copy || b.oom) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "BindSymbolicVars: out of memory");
  *copy = *nf;
  copy->ret_sinfo = ret;
  tj_func_entry_t ne = *entry;
  ne.relax = copy;
  *out = tj_module_with_func(arena, in, ne);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "BindSymbolicVars: out of memory");
}
