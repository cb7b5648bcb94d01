/* Schedule rule for global pooling (schedule_rules.h): a reduction over the whole of
 * the last two dims of one input, as adaptive_avg_pool2d to 1x1 and mean / sum / max
 * over (H, W) legalize it,
 *   for s..., ry, rx:  S[s] = S[s] (+) X[.., ry, rx]         (ry, rx over all of H, W)
 *   (then elementwise stages of S, e.g. the average's multiply by 1 / (H * W))
 * becomes, in the default float mode (reorder_reductions),
 *   for fo in T.parallel(rows):                    s = unfuse(fo)
 *     acc = one element, local
 *     the row of H * W contiguous elements X_flat[.., r] reduced in vector partial
 *     results (tj_sched_row_reduce_vector), into acc
 *     OUT[s] = stages(acc)
 * where X_flat is X with its last two dims merged (the same storage).
 *
 * Why: the conv rule took the nest as a conv vectorized along the channels, so it
 * repacked the input channels-last on every call (a strided copy of the whole input)
 * and summed 49 vectors per 16 channels: MobileNetV2's 1280 x 7x7 pool took 0.07-0.09
 * ms, ResNet-18's 512 x 7x7 one 0.03-0.05 ms, against oneDNN's 0.008 ms for the latter.
 * Here each channel's 49 contiguous elements are three vector loads, adds and a
 * horizontal fold, and nothing is copied.
 *
 * The terms are summed in another order (vector partial results, then the lanes folded
 * by halving, then the scalar tail), so float results differ from the IR's order by
 * rounding; in the strict float mode the rule declines and the conv rule keeps the
 * order. */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct gpool {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st, *init;
  const tj_tir_expr_t *plane; /* the load X[.., ry, rx] */
  int ry_it, rx_it;
  int64_t H, W;
} gpool_t;

static int64_t extent_of(const gpool_t *g, int it) { return g->nest.extent[g->nest.loop_of_iter[it]]; }

/* e is 0 wherever the block runs: a constant 0, an iter var of extent 1, or products
 * and sums of those (adaptive pooling's `ax2 * 7` with ax2 in [0, 1)). */
static bool always_zero(const gpool_t *g, const tj_tir_expr_t *e) {
  int64_t v;
  if (tj_tir_is_const_int(e, &v)) return v == 0;
  int it = tj_sched_iter_index(g->b, e);
  if (it >= 0) return extent_of(g, it) == 1;
  if (e->kind == TJ_TIR_MUL) return always_zero(g, e->binary.a) || always_zero(g, e->binary.b);
  if (e->kind == TJ_TIR_ADD) return always_zero(g, e->binary.a) && always_zero(g, e->binary.b);
  return false;
}

/* The reduce iter var that e is (plus something always 0), or -1. */
static int reduce_index(const gpool_t *g, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_ADD) {
    if (always_zero(g, e->binary.a)) e = e->binary.b;
    else if (always_zero(g, e->binary.b)) e = e->binary.a;
    else return -1;
  }
  int it = tj_sched_iter_index(g->b, e);
  return it >= 0 && g->b->iter_vars[it].kind == TJ_ITER_REDUCE ? it : -1;
}

typedef struct plane_scan {
  const gpool_t *g;
  const tj_tir_expr_t *load; /* the first load that uses a reduce var */
  bool ok;
} plane_scan_t;

static bool uses_reduce_var(const gpool_t *g, const tj_tir_expr_t *e) {
  for (int k = 0; k < g->b->n_iter_vars; k++)
    if (g->b->iter_vars[k].kind == TJ_ITER_REDUCE && tj_tir_expr_uses_var(e, g->b->iter_vars[k].var)) return true;
  return false;
}

static bool find_plane(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  plane_scan_t *s = v->ctx;
  if (!s->ok || e->kind != TJ_TIR_BUFFER_LOAD || !uses_reduce_var(s->g, e)) return s->ok;
  if (s->load && s->load->load.buffer != e->load.buffer) s->ok = false;
  if (!s->load) s->load = e;
  return false;
}

/* The one input read along the reduce vars: X[i..., ry, rx] with ry, rx the two reduce
 * iter vars over all of X's last two dims, i... free of them. */
static bool match_plane(gpool_t *g) {
  plane_scan_t s = {g, NULL, true};
  tj_tir_visitor_t v = {.expr = find_plane, .ctx = &s};
  tj_tir_visit_expr(&v, g->st->store.value);
  if (!s.ok || !s.load) return false;
  const tj_buffer_t *x = s.load->load.buffer;
  int n = s.load->load.n_indices;
  int64_t h, w;
  if (n < 2 || x->ndim != n || x->strides || !tj_dtype_eq(x->dtype, g->st->store.buffer->dtype) ||
      !tj_tir_is_const_int(x->shape[n - 2], &h) || !tj_tir_is_const_int(x->shape[n - 1], &w) ||
      !tj_sched_single_load(g->st->store.value, x))
    return false;
  g->ry_it = reduce_index(g, s.load->load.indices[n - 2]);
  g->rx_it = reduce_index(g, s.load->load.indices[n - 1]);
  if (g->ry_it < 0 || g->rx_it < 0 || g->ry_it == g->rx_it || extent_of(g, g->ry_it) != h ||
      extent_of(g, g->rx_it) != w)
    return false;
  for (int d = 0; d + 2 < n; d++)
    if (uses_reduce_var(g, s.load->load.indices[d])) return false;
  g->plane = s.load;
  g->H = h, g->W = w;
  return true;
}

/* S[s...] = f(S[s...], X[.., ry, rx]) with init S[s...] = constant: the spatial loops
 * outside the two reduce loops, every spatial var indexing S once. */
static bool gpool_matches(tj_sched_ctx_t *c, int i, gpool_t *g) {
  *g = (gpool_t){.c = c};
  if (!c->opts->reorder_reductions || !tj_sched_collect_nest(c->stmts[i], &g->nest) || g->nest.n_reduce != 2)
    return false;
  const tj_block_t *b = g->b = g->nest.block;
  int ns = g->nest.n - 2;
  for (int l = 0; l < g->nest.n; l++)
    if ((b->iter_vars[g->nest.iter_of_loop[l]].kind == TJ_ITER_REDUCE) != (l >= ns)) return false;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE || in->store.buffer != st->store.buffer ||
      st->store.n_indices != ns || in->store.n_indices != ns || tj_sched_count_uses(in, st->store.buffer) != 1 ||
      !tj_sched_pure_update(b, st))
    return false;
  for (int d = 0; d < ns; d++) {
    int it = tj_sched_iter_index(b, st->store.indices[d]);
    if (it < 0 || b->iter_vars[it].kind != TJ_ITER_SPATIAL || in->store.indices[d] != st->store.indices[d]) return false;
    for (int e = 0; e < d; e++)
      if (st->store.indices[e] == st->store.indices[d]) return false;
  }
  g->st = st, g->init = in;
  return match_plane(g) && !uses_reduce_var(g, in->store.value);
}

/* ---- building ---- */

/* X with its last two dims merged: the same storage, [.., H * W]. */
static const tj_buffer_t *flat_view(gpool_t *g, const tj_buffer_t *x) {
  tj_arena_t *a = g->c->arena;
  tj_buffer_t *v = TJ_ARENA_NEW(a, tj_buffer_t);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, x->ndim - 1);
  if (!v || !shape) return NULL;
  *v = *x;
  for (int d = 0; d + 2 < x->ndim; d++) shape[d] = x->shape[d];
  shape[x->ndim - 2] = tj_tir_int(a, x->shape[x->ndim - 1]->dtype, g->H * g->W);
  v->ndim = x->ndim - 1;
  v->shape = shape;
  v->name = tj_arena_printf(a, "%s_flat", x->name);
  return shape[x->ndim - 2] && v->name ? v : NULL;
}

typedef struct rewrite {
  const tj_buffer_t *sum, *acc;   /* S, and what replaces it (NULL: S stays) */
  const tj_tir_expr_t *plane;     /* X[.., ry, rx] */
  const tj_tir_expr_t *flat_load; /* what replaces it */
} rewrite_t;

static const tj_tir_expr_t *zero_index(tj_tir_mutator_t *m) {
  const tj_tir_expr_t *z = tj_tir_i64(m->arena, 0);
  if (!z) m->failed = true;
  return z;
}

static const tj_tir_expr_t *rewrite_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  rewrite_t *r = m->ctx;
  if (e == r->plane) return r->flat_load;
  if (e->kind != TJ_TIR_BUFFER_LOAD || !r->acc || e->load.buffer != r->sum) return NULL;
  const tj_tir_expr_t *z = zero_index(m), *l = z ? tj_tir_load(m->arena, r->acc, 1, &z) : NULL;
  if (!l) m->failed = true;
  return l;
}

static const tj_tir_stmt_t *rewrite_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  rewrite_t *r = m->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE || !r->acc || s->store.buffer != r->sum) return NULL;
  const tj_tir_expr_t *v = tj_tir_mutate_expr(m, s->store.value), *z = zero_index(m);
  const tj_tir_stmt_t *s2 = v && z ? tj_tir_store(m->arena, r->acc, 1, &z, v) : NULL;
  if (!s2) m->failed = true;
  return s2;
}

/* s (the block's init or body) with X[.., ry, rx] read as X_flat[.., rvar] and S as acc
 * (when acc), then the block's iter vars bound to vals. */
static const tj_tir_stmt_t *rewrite(gpool_t *g, const tj_tir_stmt_t *s, const tj_buffer_t *acc,
                                    const tj_tir_expr_t *flat_load, const tj_tir_expr_t *const *vals) {
  rewrite_t r = {g->st->store.buffer, acc, g->plane, flat_load};
  tj_tir_mutator_t m = {.arena = g->c->arena, .expr = rewrite_expr, .stmt = rewrite_stmt, .ctx = &r};
  const tj_tir_stmt_t *out = tj_tir_mutate_stmt(&m, s);
  if (m.failed || !out) return (void)(g->c->oom = true), NULL;
  return tj_sched_subst_stmt(g->c, g->b, out, vals);
}

/* The nest at stmts[i] with its elementwise stages; NULL (c->oom unset) when the row
 * does not vectorize (too short, or not a reassociable combine). */
static const tj_tir_stmt_t *build(gpool_t *g, int i, int *used) {
  tj_sched_ctx_t *c = g->c;
  tj_arena_t *a = c->arena;
  const tj_buffer_t *sum = g->st->store.buffer;
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i, i + 1, sum, &ep);
  int ns = g->nest.n - 2;
  const tj_tir_expr_t *fo = tj_sched_var(c, "rows"), *spatial[TJ_SCHED_MAX_NEST], *vals[TJ_SCHED_MAX_NEST];
  const tj_tir_expr_t *r = tj_sched_var(c, "r");
  if (!fo || !r || !tj_sched_unfuse(c, fo, ns, g->nest.extent, spatial)) return NULL;
  for (int l = 0; l < g->nest.n; l++) {
    int it = g->nest.iter_of_loop[l];
    vals[it] = tj_sched_cast_like(c, g->b->iter_vars[it].var, l < ns ? spatial[l] : tj_tir_i64(a, 0));
  }
  /* X_flat[i..., r], i... as in the load (free of the reduce vars) */
  const tj_tir_expr_t *pl = g->plane, *idx[TJ_SCHED_MAX_NEST];
  int n = pl->load.n_indices;
  for (int d = 0; d + 2 < n; d++) idx[d] = pl->load.indices[d];
  idx[n - 2] = r;
  const tj_buffer_t *flat = flat_view(g, pl->load.buffer);
  const tj_tir_expr_t *flat_load = flat ? tj_tir_load(a, flat, n - 1, idx) : NULL;
  /* With stages after it, S lives in one local element per row (and is dropped). */
  const tj_tir_expr_t *one = tj_tir_i64(a, 1);
  const tj_buffer_t *acc = NULL;
  if (ep.n) {
    acc = one ? tj_buffer_new(a, tj_arena_printf(a, "%s_row", sum->name), sum->dtype, 1, &one, NULL) : NULL;
    if (acc) ((tj_buffer_t *)acc)->scope = "local";
  }
  if (!flat_load || (ep.n && !acc)) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *init = rewrite(g, g->init, acc, flat_load, vals);
  const tj_tir_stmt_t *body = rewrite(g, g->st, acc, flat_load, vals);
  if (!init || !body) return NULL;
  const tj_tir_stmt_t *row = tj_sched_row_reduce_vector(c, init, body, r, g->H * g->W);
  if (!row) return NULL;
  if (ep.n) {
    const tj_tir_expr_t *out_idx[TJ_SCHED_MAX_NEST], *z = tj_tir_i64(a, 0);
    for (int d = 0; d < ns; d++) out_idx[d] = vals[tj_sched_iter_index(g->b, g->st->store.indices[d])];
    const tj_tir_expr_t *v = z ? tj_sched_apply_epilogue(c, &ep, tj_tir_load(a, acc, 1, &z), out_idx) : NULL;
    const tj_tir_stmt_t *pair[2] = {row, v ? tj_tir_store(a, ep.out, ns, out_idx, v) : NULL};
    row = pair[1] ? tj_tir_seq(a, 2, pair) : NULL;
    row = row ? tj_tir_allocate(a, acc, row) : NULL;
    int k = tj_sched_root_alloc(c, sum);
    if (k >= 0) c->drop_alloc[k] = true;
  }
  int64_t rows = 1;
  for (int l = 0; l < ns; l++) rows *= g->nest.extent[l];
  int64_t work = rows * g->H * g->W;
  row = tj_sched_loop(c, fo, rows, rows > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, row);
  row = tj_sched_with_before(c, &ep, row);
  if (!row) return (void)(c->oom = true), NULL;
  c->stats.reduction++;
  c->stats.global_pools++;
  c->stats.fused_epilogues += ep.n;
  *used = 1 + ep.span;
  return row;
}

int tj_sched_rule_global_pool(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  gpool_t g;
  if (!gpool_matches(c, i, &g)) return 0;
  int used = 0;
  *out = build(&g, i, &used);
  return c->oom ? 1 : used;
}
