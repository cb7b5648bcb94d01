/* Schedule rule for row reductions (schedule.h): a reduction nest whose reduce loops
 * are all inside its spatial loops, e.g. layer_norm's statistics
 *   for ax0, ax1, ax2, k3:  block { init: v0[ax0,ax1,ax2] = 0 ...;  v0[..] = v0[..] + x[.., k3] ... }
 * becomes
 *   for fo in T.parallel(E0*E1):      ax0, ax1 = unfuse(fo)  (fused until >= 64)
 *     for ax2:
 *       init
 *       for k3:  body
 * Each row starts from its init and takes its terms in the original order: exact. The
 * rows are independent because every store indexes exactly the spatial iter vars, and
 * the written buffers are read only where they are stored. */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct rows_ctx {
  const tj_block_t *block;
  int n_spatial;
  bool ok;
} rows_ctx_t;

static bool is_spatial_var(const tj_block_t *b, const tj_tir_expr_t *e) {
  for (int k = 0; k < b->n_iter_vars; k++)
    if (b->iter_vars[k].var == e) return b->iter_vars[k].kind == TJ_ITER_SPATIAL;
  return false;
}

static bool rows_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  rows_ctx_t *r = v->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE) return r->ok;
  /* Every spatial iter var exactly once: distinct rows write distinct elements. */
  if (s->store.n_indices != r->n_spatial) r->ok = false;
  for (int i = 0; r->ok && i < s->store.n_indices; i++) {
    if (!is_spatial_var(r->block, s->store.indices[i])) r->ok = false;
    for (int j = 0; j < i; j++)
      if (s->store.indices[j] == s->store.indices[i]) r->ok = false;
  }
  return r->ok;
}

static bool stores_index_rows(const tj_block_t *b, int n_spatial, const tj_tir_stmt_t *s) {
  rows_ctx_t r = {b, n_spatial, true};
  tj_tir_visitor_t v = {.stmt = rows_stmt, .ctx = &r};
  tj_tir_visit_stmt(&v, s);
  return r.ok;
}

static bool block_var_store(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  const tj_block_t *b = ((rows_ctx_t *)v->ctx)->block;
  if (s->kind == TJ_TIR_BUFFER_STORE)
    for (int i = 0; i < s->store.n_indices; i++)
      for (int k = 0; k < b->n_iter_vars; k++)
        if (tj_tir_expr_uses_var(s->store.indices[i], b->iter_vars[k].var)) ((rows_ctx_t *)v->ctx)->ok = false;
  return true;
}

static bool stores_fixed(const tj_block_t *b, const tj_tir_stmt_t *s) {
  rows_ctx_t r = {b, 0, true};
  tj_tir_visitor_t v = {.stmt = block_var_store, .ctx = &r};
  tj_tir_visit_stmt(&v, s);
  return r.ok;
}

static bool load_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_BUFFER_LOAD) *(bool *)v->ctx = true;
  return true;
}

static bool has_load(const tj_tir_stmt_t *s) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = load_expr, .ctx = &found};
  tj_tir_visit_stmt(&v, s);
  return found;
}

int tj_sched_rule_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || !nest.n_reduce) return 0;
  const tj_block_t *b = nest.block;
  int ns = nest.n - nest.n_reduce;
  for (int l = 0; l < nest.n; l++)
    if ((b->iter_vars[nest.iter_of_loop[l]].kind == TJ_ITER_REDUCE) != (l >= ns)) return 0;
  if (!b->init) return 0;
  if (!tj_sched_pure_update(b, b->body) || !tj_sched_pure_update(b, b->init)) return 0;
  /* ns == 0: one row of a row-fused group (schedule_row_fusion.c), its row bound:
   * every store goes to one element, which no block var indexes */
  if (ns > 0 ? !stores_index_rows(b, ns, b->body) || !stores_index_rows(b, ns, b->init)
             : !stores_fixed(b, b->body) || !stores_fixed(b, b->init))
    return 0;
  /* The init reads no buffer (it runs once per row, before the body). */
  if (has_load(b->init)) return 0;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  const tj_tir_expr_t *spatial[TJ_SCHED_MAX_NEST], *reduce_vars[TJ_SCHED_MAX_NEST];
  int64_t work = 1;
  for (int l = 0; l < nest.n; l++) work *= nest.extent[l];
  int nf = tj_sched_fused_prefix(nest.extent, ns);
  const tj_tir_expr_t *fo = tj_sched_var(c, "rows");
  if (!fo || !tj_sched_unfuse(c, fo, nf, nest.extent, spatial)) return c->oom = true, 1;
  for (int l = nf; l < ns; l++) spatial[l] = tj_sched_var(c, "i");
  for (int l = 0; l < nest.n; l++) {
    const tj_tir_expr_t *var = b->iter_vars[nest.iter_of_loop[l]].var;
    if (l >= ns) reduce_vars[l] = tj_sched_var(c, "r");
    vals[nest.iter_of_loop[l]] = tj_sched_cast_like(c, var, l < ns ? spatial[l] : reduce_vars[l]);
  }
  const tj_tir_stmt_t *update = tj_sched_subst_stmt(c, b, b->body, vals), *body = update;
  for (int l = nest.n - 1; l >= ns; l--) body = tj_sched_loop(c, reduce_vars[l], nest.extent[l], TJ_FOR_SERIAL, body);
  /* The init uses no reduce var: bind them to their minimum (0) to be safe. */
  for (int l = ns; l < nest.n; l++) {
    int k = nest.iter_of_loop[l];
    vals[k] = tj_sched_cast_like(c, b->iter_vars[k].var, tj_tir_i64(c->arena, 0));
  }
  const tj_tir_stmt_t *init = tj_sched_subst_stmt(c, b, b->init, vals);
  if (!body || !init) return c->oom = true, 1;
  const tj_tir_stmt_t *pair[2] = {init, body};
  const tj_tir_stmt_t *row = nest.n_reduce == 1 ? tj_sched_row_reduce_vector(c, init, update, reduce_vars[ns], nest.extent[ns]) : NULL;
  if (c->oom) return 1;
  if (!row) row = tj_tir_seq(c->arena, 2, pair);
  if (ns == 0) {
    if (!row) return c->oom = true, 1;
    c->stats.reduction++;
    *out = row;
    return 1;
  }
  for (int l = ns - 1; l >= nf; l--) row = tj_sched_loop(c, spatial[l], nest.extent[l], TJ_FOR_SERIAL, row);
  int64_t rows = 1;
  for (int l = 0; l < nf; l++) rows *= nest.extent[l];
  const tj_tir_stmt_t *r = tj_sched_loop(
      c, fo, rows, rows > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, row);
  if (!r) return c->oom = true, 1;
  c->stats.reduction++;
  *out = r;
  return 1;
}
