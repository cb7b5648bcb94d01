/* The Relax rewriter (see rx_mutator.h). */
#include "ir/rx_mutator.h"

#include "ir/sinfo.h"

void tj_rx_mutator_init(tj_rx_mutator_t *m, tj_arena_t *arena, const char *pass_name) {
  *m = (tj_rx_mutator_t){.arena = arena, .pass_name = pass_name ? pass_name : "rewrite"};
  m->remap = TJ_PTR_MAP(arena);
  m->out.arena = arena;
}

void *tj_rx_mutator_fail(tj_rx_mutator_t *m, tj_status_t *status) {
  if (!m->error) m->error = status;
  else tj_status_free(status);
  return NULL;
}

void *tj_rx_mutator_oom(tj_rx_mutator_t *m) {
  return tj_rx_mutator_fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", m->pass_name));
}

/* ---------------- var remapping ---------------- */

bool tj_rx_mutator_remap(tj_rx_mutator_t *m, const tj_rx_expr_t *from, const tj_rx_expr_t *to) {
  return tj_map_put(&m->remap, from, (void *)to) || tj_rx_mutator_oom(m);
}

const tj_rx_expr_t *tj_rx_mutator_lookup(const tj_rx_mutator_t *m, const tj_rx_expr_t *var) {
  const tj_rx_expr_t *r = tj_map_get(&m->remap, var);
  return r ? r : var;
}

const tj_rx_expr_t *tj_rx_new_var(tj_rx_mutator_t *m, const char *name, const tj_sinfo_t *sinfo) {
  const tj_rx_expr_t *v = m->dataflow ? tj_rx_dataflow_var(m->arena, name, sinfo) : tj_rx_var(m->arena, name, sinfo);
  return v ? v : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *var_like(tj_rx_mutator_t *m, const tj_rx_expr_t *var, const tj_sinfo_t *sinfo) {
  const tj_rx_expr_t *v = var->kind == TJ_RX_DATAFLOW_VAR ? tj_rx_dataflow_var(m->arena, var->var.name, sinfo)
                                                          : tj_rx_var(m->arena, var->var.name, sinfo);
  return v ? v : tj_rx_mutator_oom(m);
}

/* ---------------- struct info of rebuilt nodes ---------------- */

const tj_rx_expr_t *tj_rx_with_inferred(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (!e) return m->error ? NULL : tj_rx_mutator_oom(m);
  if (e->sinfo || !m->infer) return e;
  const tj_sinfo_t *s = NULL;
  tj_status_t *err = tj_rx_infer_sinfo(m->infer, e, &s);
  if (err) return tj_rx_mutator_fail(m, err);
  const tj_rx_expr_t *r = tj_rx_with_sinfo(m->arena, e, s);
  return r ? r : tj_rx_mutator_oom(m);
}

/* A rebuilt node: inferred struct info when the mutator normalises, else the old. */
static const tj_rx_expr_t *rebuilt(tj_rx_mutator_t *m, const tj_rx_expr_t *r, const tj_rx_expr_t *old) {
  if (!r) return tj_rx_mutator_oom(m);
  if (m->infer) return tj_rx_with_inferred(m, r);
  r = tj_rx_with_sinfo(m->arena, r, old->sinfo);
  return r ? r : tj_rx_mutator_oom(m);
}

/* ---------------- expressions ---------------- */

/* Mutates n expressions; *out is es itself when none changed. False on error. */
static bool mutate_list(tj_rx_mutator_t *m, int n, const tj_rx_expr_t *const *es, const tj_rx_expr_t *const **out) {
  const tj_rx_expr_t **r = NULL;
  for (int i = 0; i < n; i++) {
    const tj_rx_expr_t *x = tj_rx_mutate_expr(m, es[i]);
    if (!x) return false;
    if (x != es[i] && !r) {
      if (!(r = TJ_ARENA_ARRAY(m->arena, const tj_rx_expr_t *, n))) return tj_rx_mutator_oom(m);
      for (int k = 0; k < i; k++) r[k] = es[k];
    }
    if (r) r[i] = x;
  }
  *out = r ? r : es;
  return true;
}

static const tj_rx_expr_t *mutate_tuple(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *const *f;
  if (!mutate_list(m, e->tuple.n, e->tuple.fields, &f)) return NULL;
  if (f == e->tuple.fields) return e;
  const tj_rx_expr_t *t = tj_rx_tuple(m->arena, e->tuple.n, f);
  const tj_sinfo_t **fs = TJ_ARENA_ARRAY(m->arena, const tj_sinfo_t *, e->tuple.n + 1);
  if (!t || !fs) return tj_rx_mutator_oom(m);
  bool all = true;
  for (int i = 0; i < e->tuple.n; i++) all &= (fs[i] = f[i]->sinfo) != NULL;
  if (!all) return rebuilt(m, t, e);
  const tj_sinfo_t *s = tj_sinfo_tuple(m->arena, e->tuple.n, fs);
  t = s ? tj_rx_with_sinfo(m->arena, t, s) : NULL;
  return t ? t : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *mutate_call(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *callee = tj_rx_mutate_expr(m, e->call.callee);
  const tj_rx_expr_t *const *args;
  if (!callee || !mutate_list(m, e->call.n_args, e->call.args, &args)) return NULL;
  if (callee == e->call.callee && args == e->call.args) return e;
  return rebuilt(m, tj_rx_call(m->arena, callee, e->call.n_args, args, e->call.attrs, e->call.n_sinfo_args,
                               e->call.sinfo_args), e);
}

static const tj_rx_expr_t *mutate_if(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *c = tj_rx_mutate_expr(m, e->if_.cond), *t = tj_rx_mutate_expr(m, e->if_.then_branch),
                     *f = tj_rx_mutate_expr(m, e->if_.else_branch);
  if (!c || !t || !f) return NULL;
  if (c == e->if_.cond && t == e->if_.then_branch && f == e->if_.else_branch) return e;
  const tj_rx_expr_t *r = tj_rx_with_sinfo(m->arena, tj_rx_if(m->arena, c, t, f), e->sinfo);
  return r ? r : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *mutate_seq(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  tj_rx_block_t *blocks = TJ_ARENA_ARRAY(m->arena, tj_rx_block_t, e->seq.n_blocks + 1);
  if (!blocks) return tj_rx_mutator_oom(m);
  bool changed = false;
  for (int i = 0; i < e->seq.n_blocks; i++) {
    const tj_rx_block_t *nb = tj_rx_mutate_block(m, &e->seq.blocks[i]);
    if (!nb) return NULL;
    blocks[i] = *nb;
    changed |= nb != &e->seq.blocks[i];
  }
  const tj_rx_expr_t *body = tj_rx_mutate_expr(m, e->seq.body);
  if (!body) return NULL;
  if (!changed && body == e->seq.body) return e;
  const tj_rx_expr_t *r = tj_rx_seq(m->arena, e->seq.n_blocks, blocks, body);
  return r ? r : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *mutate_function(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  const tj_rx_func_t *f = tj_rx_mutate_func(m, e->function);
  if (!f) return NULL;
  if (f == e->function) return e;
  const tj_rx_expr_t *r = tj_rx_with_sinfo(m->arena, tj_rx_function_expr(m->arena, f), e->sinfo);
  return r ? r : tj_rx_mutator_oom(m);
}

const tj_rx_expr_t *tj_rx_mutate_children(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  switch (e->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: return m->var ? m->var(m, e) : tj_rx_mutator_lookup(m, e);
    case TJ_RX_TUPLE: return mutate_tuple(m, e);
    case TJ_RX_TUPLE_GET_ITEM: {
      const tj_rx_expr_t *t = tj_rx_mutate_expr(m, e->get_item.tuple);
      if (!t || t == e->get_item.tuple) return t ? e : NULL;
      return rebuilt(m, tj_rx_get_item(m->arena, t, e->get_item.index), e);
    }
    case TJ_RX_CALL: return mutate_call(m, e);
    case TJ_RX_IF: return mutate_if(m, e);
    case TJ_RX_SEQ: return mutate_seq(m, e);
    case TJ_RX_FUNCTION: return mutate_function(m, e);
    default: return e;
  }
}

const tj_rx_expr_t *tj_rx_mutate_expr(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (m->error) return NULL;
  if (!e) return tj_rx_mutator_oom(m); /* a constructor upstream failed */
  const tj_rx_expr_t *r = tj_rx_mutate_children(m, e);
  if (r && m->post) r = m->post(m, r);
  if (!r && !m->error) tj_rx_mutator_oom(m);
  return m->error ? NULL : r;
}

/* TVM's ExprMutator keeps the old return struct info while the new body's is less
 * specific (a pass may lose shape information it cannot propagate); a body that refines
 * it (`-> R.Tensor(ndim=4)` over a static call_tir) or no longer fits it (squeeze or
 * strided_slice re-inferred by LegalizeOps) gives the body's, as TVM rebuilds the
 * Function without one; an equal one (`2 * a` for `a * 2`) too, as Function's
 * constructor prefers the body's form. */
static const tj_sinfo_t *ret_after_mutation(const tj_sinfo_t *old_ret, const tj_sinfo_t *body) {
  if (!old_ret || !body) return body ? body : old_ret;
  return tj_sinfo_is_base_of(body, old_ret) && !tj_sinfo_is_base_of(old_ret, body) ? old_ret : body;
}

/* The body's struct info as the function's return: without the vars only the body defines. */
static const tj_sinfo_t *erase_to_params(tj_rx_mutator_t *m, int n, const tj_rx_expr_t *const *params,
                                         const tj_sinfo_t *body) {
  const tj_sinfo_t **ps = TJ_ARENA_ARRAY(m->arena, const tj_sinfo_t *, n + 1);
  if (!ps) return NULL;
  for (int i = 0; i < n; i++) ps[i] = params[i]->sinfo;
  return tj_sinfo_erase_to_params(m->arena, body, n, ps);
}

const tj_rx_func_t *tj_rx_mutate_func(tj_rx_mutator_t *m, const tj_rx_func_t *f) {
  const tj_rx_expr_t *body = tj_rx_mutate_expr(m, f->body);
  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(m->arena, const tj_rx_expr_t *, f->n_params + 1);
  if (!body) return NULL;
  if (!params) return tj_rx_mutator_oom(m);
  bool changed = body != f->body;
  for (int i = 0; i < f->n_params; i++) changed |= (params[i] = tj_rx_mutator_lookup(m, f->params[i])) != f->params[i];
  if (!changed) return f;
  tj_rx_func_t *nf = TJ_ARENA_NEW(m->arena, tj_rx_func_t);
  if (!nf) return tj_rx_mutator_oom(m);
  *nf = *f;
  nf->params = params;
  nf->body = body;
  nf->ret_sinfo = ret_after_mutation(f->ret_sinfo, body->sinfo);
  if (nf->ret_sinfo == body->sinfo && !(nf->ret_sinfo = erase_to_params(m, f->n_params, params, body->sinfo)))
    return tj_rx_mutator_oom(m);
  return nf;
}

/* ---------------- block builder ---------------- */

bool tj_rx_emit(tj_rx_mutator_t *m, const tj_rx_expr_t *var, const tj_rx_expr_t *value, const tj_sinfo_t *match_cast) {
  if (m->error) return false;
  if (!var || !value) return tj_rx_mutator_oom(m);
  return tj_vec_push(&m->out, ((tj_rx_binding_t){var, value, match_cast})) || tj_rx_mutator_oom(m);
}

const tj_rx_expr_t *tj_rx_emit_named(tj_rx_mutator_t *m, const char *name, const tj_rx_expr_t *value) {
  if (!value || m->error) return m->error ? NULL : tj_rx_mutator_oom(m);
  const tj_rx_expr_t *var = name ? tj_rx_new_var(m, name, value->sinfo) : tj_rx_mutator_oom(m);
  return var && tj_rx_emit(m, var, value, NULL) ? var : NULL;
}

const tj_rx_expr_t *tj_rx_emit_fresh(tj_rx_mutator_t *m, const tj_rx_expr_t *value) {
  int k = m->n_fresh++;
  return tj_rx_emit_named(m, k == 0 ? "lv" : tj_arena_printf(m->arena, "lv%d", k), value);
}

void tj_rx_reemit(tj_rx_mutator_t *m, const tj_rx_binding_t *b, const tj_rx_expr_t *value) {
  if (!value || m->error) return;
  const tj_rx_expr_t *var = tj_rx_mutator_lookup(m, b->var);
  if (value == b->value && var == b->var) { /* TVM's fast path: nothing changed */
    tj_rx_emit(m, b->var, b->value, b->match_cast);
    return;
  }
  if (!b->match_cast && value->sinfo && !tj_sinfo_equal_static(value->sinfo, var->sinfo)) {
    var = var_like(m, b->var, value->sinfo);
    if (!var || !tj_rx_mutator_remap(m, b->var, var)) return;
  }
  tj_rx_emit(m, var, value, b->match_cast);
}

/* Call arguments are leaves or tuples of leaves: nested calls and get-items are bound. */
static const tj_rx_expr_t *normalize_arg(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (!e || m->error) return NULL;
  if (e->kind == TJ_RX_CALL || e->kind == TJ_RX_TUPLE_GET_ITEM) return tj_rx_emit_fresh(m, tj_rx_normalize(m, e));
  if (e->kind == TJ_RX_TUPLE) return tj_rx_normalize(m, e);
  return e;
}

static bool normalize_list(tj_rx_mutator_t *m, int n, const tj_rx_expr_t *const *es,
                           const tj_rx_expr_t *const **out) {
  const tj_rx_expr_t **r = TJ_ARENA_ARRAY(m->arena, const tj_rx_expr_t *, n + 1);
  if (!r) return tj_rx_mutator_oom(m);
  bool changed = false;
  for (int i = 0; i < n; i++) {
    if (!(r[i] = normalize_arg(m, es[i]))) return false;
    changed |= r[i] != es[i];
  }
  *out = changed ? r : es;
  return true;
}

const tj_rx_expr_t *tj_rx_normalize(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (!e || m->error) return m->error ? NULL : tj_rx_mutator_oom(m);
  const tj_rx_expr_t *const *list;
  switch (e->kind) {
    case TJ_RX_CALL:
      if (!normalize_list(m, e->call.n_args, e->call.args, &list)) return NULL;
      if (list == e->call.args) return tj_rx_with_inferred(m, e);
      return tj_rx_with_inferred(m, tj_rx_call(m->arena, e->call.callee, e->call.n_args, list, e->call.attrs,
                                               e->call.n_sinfo_args, e->call.sinfo_args));
    case TJ_RX_TUPLE:
      if (!normalize_list(m, e->tuple.n, e->tuple.fields, &list)) return NULL;
      return tj_rx_with_inferred(m, list == e->tuple.fields ? e : tj_rx_tuple(m->arena, e->tuple.n, list));
    case TJ_RX_TUPLE_GET_ITEM: {
      const tj_rx_expr_t *t = normalize_arg(m, e->get_item.tuple);
      if (!t) return NULL;
      return tj_rx_with_inferred(m, t == e->get_item.tuple ? e : tj_rx_get_item(m->arena, t, e->get_item.index));
    }
    default: return tj_rx_with_inferred(m, e);
  }
}

void tj_rx_mutator_default_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  tj_rx_reemit(m, b, tj_rx_mutate_expr(m, b->value));
}

static bool same_bindings(const tj_rx_binding_vec_t *out, const tj_rx_block_t *blk) {
  if (out->n != blk->n_bindings) return false;
  for (int i = 0; i < out->n; i++)
    if (out->items[i].var != blk->bindings[i].var || out->items[i].value != blk->bindings[i].value) return false;
  return true;
}

const tj_rx_block_t *tj_rx_mutate_block(tj_rx_mutator_t *m, const tj_rx_block_t *blk) {
  tj_rx_binding_vec_t saved = m->out; /* blocks nest through If branches and local functions */
  bool saved_dataflow = m->dataflow;
  m->out = (tj_rx_binding_vec_t){.arena = m->arena};
  m->dataflow = blk->is_dataflow;
  if (m->block) {
    m->block(m, blk);
  } else {
    for (int i = 0; i < blk->n_bindings && !m->error; i++) {
      if (m->binding) m->binding(m, &blk->bindings[i]);
      else tj_rx_mutator_default_binding(m, &blk->bindings[i]);
    }
  }
  tj_rx_binding_vec_t out = m->out;
  m->out = saved;
  m->dataflow = saved_dataflow;
  if (m->error) return NULL;
  if (same_bindings(&out, blk)) return blk;
  tj_rx_block_t *nb = TJ_ARENA_NEW(m->arena, tj_rx_block_t);
  if (!nb) return tj_rx_mutator_oom(m);
  *nb = (tj_rx_block_t){blk->is_dataflow, out.n, out.items};
  return nb;
}

tj_status_t *tj_rx_mutate_module(tj_arena_t *arena, const char *pass_name, const tj_module_t *in,
                                 void (*setup)(tj_rx_mutator_t *m, void *ctx), void *ctx, const tj_module_t **out) {
  const tj_module_t *mod = in;
  for (int i = 0; i < in->n_funcs; i++) {
    const tj_func_entry_t *e = &in->funcs[i];
    if (e->is_prim) continue;
    tj_rx_mutator_t rw;
    tj_rx_mutator_init(&rw, arena, pass_name);
    setup(&rw, ctx);
    const tj_rx_func_t *nf = tj_rx_mutate_func(&rw, e->relax);
    if (rw.error) return tj_status_annotate(rw.error, "in function '%s'", e->name);
    if (nf == e->relax) continue;
    tj_func_entry_t ne = *e;
    ne.relax = nf;
    if (!(mod = tj_module_with_func(arena, mod, ne))) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", pass_name);
  }
  *out = mod;
  return NULL;
}
