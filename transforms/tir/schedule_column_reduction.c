/* Schedule rule for reductions over leading axes (schedule.h), e.g. R.sum(x, axis=0)
 * of x (K, N):
 *   for ax0 (N), k0 (K):  block { init: out[ax0] = 0;  out[ax0] = out[ax0] + x[k0, ax0] }
 * The row rule would walk x with stride N for each output. Here the innermost spatial
 * var s is the last index of every store and of every load, so V neighbouring outputs
 * are V neighbouring elements everywhere: they are reduced together, one vector each,
 * with the reduce loops outside the vector loop:
 *   for fo in T.parallel(E0 * ... * (N / W)):     (outer spatial dims and strips of W fused)
 *     for vb in range(B): for l in T.vectorized(V): init at s = (fo % (N/W)) * W + vb*V + l
 *     for k0 ...:
 *       for vb in range(B): for l in T.vectorized(V): body at s = ... + vb*V + l
 * (W = B * V, B up to 8 vectors, so each row of the reduction reads whole cache lines).
 * Each output starts from its init and takes its terms in the original order, so the
 * result is bit-identical to the serial nest. */
#include <string.h>

#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct column_ctx {
  const tj_block_t *block;
  const tj_tir_expr_t *last; /* the innermost spatial iter var */
  int n_spatial;
  bool ok;
} column_ctx_t;

static bool find_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  const tj_tir_expr_t **want = v->ctx;
  if (e == want[0]) want[1] = e;
  return true;
}

static bool uses_var(const tj_tir_expr_t *e, const tj_tir_expr_t *var) {
  const tj_tir_expr_t *want[2] = {var, NULL};
  tj_tir_visitor_t v = {.expr = find_var, .ctx = want};
  tj_tir_visit_expr(&v, e);
  return want[1] != NULL;
}

static bool is_iter(const tj_block_t *b, const tj_tir_expr_t *e, tj_iter_kind_t kind) {
  for (int k = 0; k < b->n_iter_vars; k++)
    if (b->iter_vars[k].var == e) return b->iter_vars[k].kind == kind;
  return false;
}

/* Stores: each spatial var once, `last` last. Loads: `last` as the last index and
 * nowhere else. */
static void check_indices(column_ctx_t *c, int n, const tj_tir_expr_t *const *idx, bool is_store) {
  if (n == 0 || idx[n - 1] != c->last) {
    c->ok = false;
    return;
  }
  if (is_store && n != c->n_spatial) c->ok = false;
  for (int i = 0; c->ok && i < n - 1; i++) {
    if (is_store && !is_iter(c->block, idx[i], TJ_ITER_SPATIAL)) c->ok = false;
    for (int j = 0; j < i; j++)
      if (is_store && idx[j] == idx[i]) c->ok = false;
    /* `last` inside another index would make that access strided or overlapping */
    if (uses_var(idx[i], c->last)) c->ok = false;
  }
}

static bool column_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  column_ctx_t *c = v->ctx;
  if (c->ok && e->kind == TJ_TIR_BUFFER_LOAD) check_indices(c, e->load.n_indices, e->load.indices, false);
  return c->ok;
}

static bool column_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  column_ctx_t *c = v->ctx;
  if (c->ok && s->kind == TJ_TIR_BUFFER_STORE) check_indices(c, s->store.n_indices, s->store.indices, true);
  return c->ok;
}

static bool columns_contiguous(const tj_block_t *b, const tj_tir_expr_t *last, int n_spatial, const tj_tir_stmt_t *s) {
  column_ctx_t c = {b, last, n_spatial, true};
  tj_tir_visitor_t v = {.expr = column_expr, .stmt = column_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, s);
  return c.ok;
}

static bool has_load_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_BUFFER_LOAD) *(bool *)v->ctx = true;
  return true;
}

static bool init_reads_nothing(const tj_tir_stmt_t *s) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = has_load_expr, .ctx = &found};
  tj_tir_visit_stmt(&v, s);
  return !found;
}

static bool matches(const tj_sched_nest_t *nest, int ns, int64_t lanes) {
  const tj_block_t *b = nest->block;
  if (!b->init || ns == 0 || ns == nest->n) return false;
  for (int l = 0; l < nest->n; l++)
    if ((b->iter_vars[nest->iter_of_loop[l]].kind == TJ_ITER_REDUCE) != (l >= ns)) return false;
  int64_t e = nest->extent[ns - 1];
  if (e < lanes || e % lanes != 0) return false;
  const tj_tir_expr_t *last = b->iter_vars[nest->iter_of_loop[ns - 1]].var;
  if (!tj_sched_pure_update(b, b->body) || !tj_sched_pure_update(b, b->init) || !init_reads_nothing(b->init))
    return false;
  return columns_contiguous(b, last, ns, b->body) && columns_contiguous(b, last, ns, b->init);
}

/* The vector lanes: those of the stored dtype (every store of the nest has one). */
static tj_dtype_t stored_dtype(const tj_tir_stmt_t *s) {
  while (s->kind == TJ_TIR_SEQ || s->kind == TJ_TIR_LET_STMT)
    s = s->kind == TJ_TIR_SEQ ? s->seq.stmts[0] : s->let.body;
  return s->kind == TJ_TIR_BUFFER_STORE ? s->store.buffer->dtype : TJ_F32;
}

/* Vectors per task along the last dim: a strip of up to 8 vectors, so that each row
 * of the reduction reads whole cache lines. */
static int64_t strip_vectors(int64_t vectors) {
  for (int64_t b = 8; b > 1; b /= 2)
    if (vectors % b == 0) return b;
  return 1;
}

/* for vb in range(B): for lane in T.vectorized(V): `s` with the block's iter vars
 * bound to vals, the last spatial one to strip_base + vb * V + lane. */
static const tj_tir_stmt_t *strip(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_stmt_t *s, int last_iter,
                                  const tj_tir_expr_t **vals, const tj_tir_expr_t *strip_base, int64_t B, int64_t V) {
  const tj_tir_expr_t *vb = tj_sched_var(c, "vb"), *lane = tj_sched_var(c, "lane");
  /* one vector per strip: no vb loop, so vb must not appear */
  const tj_tir_expr_t *in_strip = B > 1 ? tj_sched_add(c, tj_sched_mul(c, vb, V), lane) : lane;
  const tj_tir_expr_t *col = tj_sched_add(c, strip_base, in_strip);
  vals[last_iter] = tj_sched_cast_like(c, b->iter_vars[last_iter].var, col);
  const tj_tir_stmt_t *inner = tj_sched_loop(c, lane, V, TJ_FOR_VECTORIZED, tj_sched_subst_stmt(c, b, s, vals));
  return B > 1 ? tj_sched_loop(c, vb, B, TJ_FOR_SERIAL, inner) : inner;
}

int tj_sched_rule_column_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || !nest.n_reduce) return 0;
  const tj_block_t *b = nest.block;
  int ns = nest.n - nest.n_reduce;
  int64_t V = tj_sched_lanes(c, stored_dtype(b->body));
  if (!matches(&nest, ns, V)) return 0;
  int64_t B = strip_vectors(nest.extent[ns - 1] / V), W = B * V;
  /* fused parallel loop over the outer spatial dims and the strips of the last one */
  int64_t ext[TJ_SCHED_MAX_NEST], fused = 1, work = 1;
  for (int l = 0; l < ns; l++) ext[l] = l == ns - 1 ? nest.extent[l] / W : nest.extent[l];
  for (int l = 0; l < ns; l++) fused *= ext[l];
  for (int l = 0; l < nest.n; l++) work *= nest.extent[l];
  const tj_tir_expr_t *fo = tj_sched_var(c, "cols");
  const tj_tir_expr_t *spatial[TJ_SCHED_MAX_NEST], *reduce_vars[TJ_SCHED_MAX_NEST], *vals[TJ_SCHED_MAX_NEST];
  if (!fo || !tj_sched_unfuse(c, fo, ns, ext, spatial)) return c->oom = true, 1;
  const tj_tir_expr_t *strip_base = tj_sched_mul(c, spatial[ns - 1], W);
  int last_iter = nest.iter_of_loop[ns - 1];
  for (int l = 0; l < nest.n; l++) {
    int k = nest.iter_of_loop[l];
    if (l >= ns) reduce_vars[l] = tj_sched_var(c, "r");
    vals[k] = tj_sched_cast_like(c, b->iter_vars[k].var, l < ns ? spatial[l] : reduce_vars[l]);
  }
  const tj_tir_stmt_t *body = strip(c, b, b->body, last_iter, vals, strip_base, B, V);
  for (int l = nest.n - 1; l >= ns; l--) body = tj_sched_loop(c, reduce_vars[l], nest.extent[l], TJ_FOR_SERIAL, body);
  /* The init uses no reduce var: bind them to 0. */
  for (int l = ns; l < nest.n; l++) {
    int k = nest.iter_of_loop[l];
    vals[k] = tj_sched_cast_like(c, b->iter_vars[k].var, tj_tir_i64(c->arena, 0));
  }
  const tj_tir_stmt_t *init = strip(c, b, b->init, last_iter, vals, strip_base, B, V);
  if (!body || !init) return c->oom = true, 1;
  const tj_tir_stmt_t *pair[2] = {init, body};
  const tj_tir_stmt_t *cols = tj_tir_seq(c->arena, 2, pair);
  bool parallel = fused > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK;
  const tj_tir_stmt_t *r = cols ? tj_sched_loop(c, fo, fused, parallel ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, cols) : NULL;
  if (!r) return c->oom = true, 1;
  c->stats.reduction++;
  *out = r;
  return 1;
}
