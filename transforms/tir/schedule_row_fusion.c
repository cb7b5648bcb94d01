/* Schedule rule: consecutive nests over the same rows, run row by row (schedule.h).
 * softmax is four nests over its 12 x 128 rows (max, exp, sum, divide) and layer_norm
 * two (statistics, normalize); scheduled one by one, each is its own parallel loop
 * (a fork and join each) and each pass streams the whole tensor through the cache
 * again (softmax's exp buffer alone is 768 KB). When every buffer the nests write is
 * accessed, by every one of them, at exactly that nest's row iter vars in its leading
 * indices, row r of each nest depends only on row r of the nests before it, so
 *   for r in T.parallel(rows):  nest_1 at row r;  nest_2 at row r;  ...
 * computes the same elements with the same operations as the nests one after the
 * other: exact. Each nest at one row (its leading R loops removed, their iter vars
 * bound to the row) is scheduled by the injective or row reduction rule as usual, so
 * the row is vectorized (and reduced in vector partial results where reordering is
 * allowed) while it is in L1.
 *
 * The group: a run of at least two nests, one of them a row reduction (its reduce
 * loops innermost), whose first R loops are spatial with the same extents, R the
 * spatial loops of the first row reduction. */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

#define MAX_GROUP 16
#define MAX_WRITTEN 16

typedef struct group {
  int n, rows_dims; /* nests; R */
  tj_sched_nest_t nests[MAX_GROUP];
  int64_t extent[TJ_SCHED_MAX_NEST]; /* of the row loops */
  bool block; /* rows shorter than two vectors, fused by blocks (short_row_block) */
  int n_written;
  const tj_buffer_t *written[MAX_WRITTEN];
  /* intermediates only the group uses: one row of each, local to the row */
  int n_local;
  const tj_buffer_t *local_from[MAX_WRITTEN], *local_to[MAX_WRITTEN];
} group_t;

typedef struct row_reads {
  const tj_sched_nest_t *nest;
  int rows_dims;
  bool ok;
} row_reads_t;

static bool uses_reduce_var(const tj_sched_nest_t *n, const tj_tir_expr_t *e) {
  for (int l = n->n - n->n_reduce; l < n->n; l++)
    if (tj_tir_expr_uses_var(e, n->block->iter_vars[n->iter_of_loop[l]].var)) return true;
  return false;
}

static bool row_read_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  row_reads_t *r = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || !uses_reduce_var(r->nest, e)) return r->ok;
  if (e->load.n_indices <= r->rows_dims) r->ok = false;
  for (int l = 0; r->ok && l < r->rows_dims; l++)
    if (e->load.indices[l] != r->nest->block->iter_vars[r->nest->iter_of_loop[l]].var) r->ok = false;
  return r->ok;
}

/* What the reduction reduces is its own row: every load along the reduce vars has the
 * row iter vars leading (softmax, layer_norm). A matmul or conv, whose inputs are shared
 * by many outputs, keeps its own schedule. */
static bool reads_own_row(const tj_sched_nest_t *n) {
  row_reads_t r = {n, n->n - n->n_reduce, true};
  tj_tir_visitor_t v = {.expr = row_read_expr, .ctx = &r};
  tj_tir_visit_stmt(&v, n->block->body);
  return r.ok;
}

static bool is_row_reduction(const tj_sched_nest_t *n) {
  if (!n->n_reduce || !n->block->init) return false;
  int ns = n->n - n->n_reduce;
  for (int l = 0; l < n->n; l++)
    if ((n->block->iter_vars[n->iter_of_loop[l]].kind == TJ_ITER_REDUCE) != (l >= ns)) return false;
  return ns > 0 && reads_own_row(n);
}

/* The first R loops spatial with the group's extents. */
static bool rows_match(const group_t *g, const tj_sched_nest_t *n) {
  if (n->n < g->rows_dims) return false;
  for (int l = 0; l < g->rows_dims; l++)
    if (n->extent[l] != g->extent[l] || n->block->iter_vars[n->iter_of_loop[l]].kind != TJ_ITER_SPATIAL) return false;
  return !n->block->n_alloc_buffers && !n->block->n_match_buffers;
}

static bool writes_collect(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  group_t *g = v->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE) return true;
  for (int i = 0; i < g->n_written; i++)
    if (g->written[i] == s->store.buffer) return true;
  if (g->n_written == MAX_WRITTEN) g->n_written = MAX_WRITTEN + 1; /* too many: reject */
  else g->written[g->n_written++] = s->store.buffer;
  return true;
}

typedef struct access_check {
  const group_t *g;
  const tj_sched_nest_t *nest;
  bool ok;
} access_check_t;

static bool is_written(const group_t *g, const tj_buffer_t *b) {
  for (int i = 0; i < g->n_written; i++)
    if (g->written[i] == b) return true;
  return false;
}

/* indices[0..R) are the nest's row iter vars, in order. */
static bool row_indexed(const access_check_t *a, int n, const tj_tir_expr_t *const *idx) {
  if (n < a->g->rows_dims) return false;
  for (int l = 0; l < a->g->rows_dims; l++)
    if (idx[l] != a->nest->block->iter_vars[a->nest->iter_of_loop[l]].var) return false;
  return true;
}

static bool access_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  access_check_t *a = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && is_written(a->g, e->load.buffer) &&
      !row_indexed(a, e->load.n_indices, e->load.indices))
    a->ok = false;
  return a->ok;
}

static bool access_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  access_check_t *a = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE && !row_indexed(a, s->store.n_indices, s->store.indices)) a->ok = false;
  return a->ok;
}

/* Every access to a buffer the group writes is at the accessing nest's row. */
static bool rows_independent(group_t *g) {
  for (int j = 0; j < g->n; j++) {
    tj_tir_visitor_t v = {.stmt = writes_collect, .ctx = g};
    tj_tir_visit_stmt(&v, g->nests[j].block->body);
    if (g->nests[j].block->init) tj_tir_visit_stmt(&v, g->nests[j].block->init);
  }
  if (g->n_written > MAX_WRITTEN) return false;
  for (int j = 0; j < g->n; j++) {
    access_check_t a = {g, &g->nests[j], true};
    tj_tir_visitor_t v = {.expr = access_expr, .stmt = access_stmt, .ctx = &a};
    tj_tir_visit_stmt(&v, g->nests[j].block->body);
    if (g->nests[j].block->init) tj_tir_visit_stmt(&v, g->nests[j].block->init);
    if (!a.ok) return false;
  }
  return true;
}

static bool is_other_reduction(const group_t *g, const tj_sched_nest_t *n) {
  return n->n_reduce && (!is_row_reduction(n) || n->n - n->n_reduce != g->rows_dims);
}

/* The group starting at stmts[i], or false. */
static bool find_group(tj_sched_ctx_t *c, int i, group_t *g) {
  memset(g, 0, sizeof *g);
  int first_reduction = -1;
  for (int j = i; j < c->n_stmts && g->n < MAX_GROUP; j++) {
    tj_sched_nest_t *n = &g->nests[g->n];
    if (!tj_sched_collect_nest(c->stmts[j], n)) break;
    if (first_reduction < 0 && is_row_reduction(n)) {
      first_reduction = g->n;
      g->rows_dims = n->n - n->n_reduce;
      memcpy(g->extent, n->extent, sizeof(int64_t) * (size_t)g->rows_dims);
    }
    g->n++;
  }
  if (first_reduction < 0) return false;
  /* the nests up to the first row reduction, and the ones after it while they match */
  int end = 0;
  while (end < g->n && rows_match(g, &g->nests[end]) && !is_other_reduction(g, &g->nests[end])) end++;
  if (end <= first_reduction) return false;
  g->n = end;
  /* shrink from the end until the rows are independent */
  for (; g->n >= 2 && g->n > first_reduction; g->n--) {
    g->n_written = 0;
    if (rows_independent(g)) return true;
  }
  return false;
}

/* A root allocation the group writes and nothing outside it touches becomes one row,
 * allocated per row: the leading R dims dropped (softmax's 768 KB of exps become 512
 * bytes in L1, its row max and sum scalars). */
static void plan_locals(tj_sched_ctx_t *c, int i, group_t *g) {
  for (int w = 0; w < g->n_written; w++) {
    const tj_buffer_t *b = g->written[w];
    if (tj_sched_root_alloc(c, b) < 0 || tj_sched_is_param(c, b) || b->ndim < g->rows_dims || b->strides ||
        b->elem_offset)
      continue;
    bool outside = false;
    for (int k = 0; k < c->n_stmts && !outside; k++)
      if ((k < i || k >= i + g->n) && tj_sched_count_uses(c->stmts[k], b) > 0) outside = true;
    if (outside) continue;
    int nd = b->ndim - g->rows_dims;
    const tj_tir_expr_t *one = tj_tir_i64(c->arena, 1);
    const tj_buffer_t *l = one ? tj_buffer_new(c->arena, b->name, b->dtype, nd ? nd : 1,
                                               nd ? b->shape + g->rows_dims : &one, NULL)
                               : NULL;
    if (!l) return (void)(c->oom = true);
    g->local_from[g->n_local] = b;
    g->local_to[g->n_local++] = l;
  }
}

static const tj_buffer_t *local_of(const group_t *g, const tj_buffer_t *b) {
  for (int k = 0; k < g->n_local; k++)
    if (g->local_from[k] == b) return g->local_to[k];
  return NULL;
}

/* The indices of a row-local access: the leading R dropped (a scalar row: [0]). */
static const tj_tir_expr_t **local_indices(tj_tir_mutator_t *m, const group_t *g, int n,
                                           const tj_tir_expr_t *const *idx, int *out_n) {
  int nd = n - g->rows_dims;
  const tj_tir_expr_t **r = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, nd ? nd : 1);
  if (!r) return (void)(m->failed = true), NULL;
  if (!nd) r[0] = tj_tir_i64(m->arena, 0);
  for (int k = 0; k < nd; k++) r[k] = tj_tir_mutate_expr(m, idx[g->rows_dims + k]);
  for (int k = 0; k < (nd ? nd : 1); k++)
    if (!r[k]) return (void)(m->failed = true), NULL;
  *out_n = nd ? nd : 1;
  return r;
}

static const tj_tir_expr_t *local_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  const group_t *g = m->ctx;
  const tj_buffer_t *l = e->kind == TJ_TIR_BUFFER_LOAD ? local_of(g, e->load.buffer) : NULL;
  if (!l) return NULL;
  int n;
  const tj_tir_expr_t **idx = local_indices(m, g, e->load.n_indices, e->load.indices, &n);
  const tj_tir_expr_t *r = idx ? tj_tir_load(m->arena, l, n, idx) : NULL;
  if (!r) m->failed = true;
  return r;
}

static const tj_tir_stmt_t *local_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  const group_t *g = m->ctx;
  const tj_buffer_t *l = s->kind == TJ_TIR_BUFFER_STORE ? local_of(g, s->store.buffer) : NULL;
  if (!l) return NULL;
  int n;
  const tj_tir_expr_t **idx = local_indices(m, g, s->store.n_indices, s->store.indices, &n);
  const tj_tir_expr_t *v = idx ? tj_tir_mutate_expr(m, s->store.value) : NULL;
  const tj_tir_stmt_t *r = v ? tj_tir_store(m->arena, l, n, idx, v) : NULL;
  if (!r) m->failed = true;
  return r;
}

/* s (a block's body or init at one row) with the row-local buffers in place. */
static const tj_tir_stmt_t *to_locals(tj_sched_ctx_t *c, const group_t *g, const tj_tir_stmt_t *s) {
  if (!s || !g->n_local) return s;
  tj_tir_mutator_t m = {.arena = c->arena, .expr = local_expr, .stmt = local_stmt, .ctx = (void *)g};
  const tj_tir_stmt_t *r = tj_tir_mutate_stmt(&m, s);
  if (m.failed || !r) return (void)(c->oom = true), NULL;
  return r;
}

/* Nest j with its row loops removed and its row iter vars bound to row[0..R). */
static const tj_tir_stmt_t *nest_at_row(tj_sched_ctx_t *c, const group_t *g, const tj_sched_nest_t *n,
                                        const tj_tir_expr_t **row) {
  const tj_block_t *b = n->block;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  tj_iter_var_t *ivs = TJ_ARENA_ARRAY(c->arena, tj_iter_var_t, b->n_iter_vars);
  const tj_tir_expr_t **values = TJ_ARENA_ARRAY(c->arena, const tj_tir_expr_t *, b->n_iter_vars);
  tj_block_t *nb = tj_block_new(c->arena, b->name);
  if (!ivs || !values || !nb) return (void)(c->oom = true), NULL;
  for (int k = 0; k < b->n_iter_vars; k++) vals[k] = b->iter_vars[k].var;
  for (int l = 0; l < g->rows_dims; l++) vals[n->iter_of_loop[l]] = tj_sched_cast_like(c, b->iter_vars[n->iter_of_loop[l]].var, row[l]);
  int m = 0;
  for (int l = g->rows_dims; l < n->n; l++) {
    ivs[m] = b->iter_vars[n->iter_of_loop[l]];
    values[m++] = n->realize->realize.iter_values[n->iter_of_loop[l]];
  }
  *nb = *b;
  nb->n_iter_vars = m;
  nb->iter_vars = ivs;
  nb->n_reads = nb->n_writes = 0; /* the regions name the row iter vars; nothing after the schedule reads them */
  nb->reads = nb->writes = NULL;
  nb->body = to_locals(c, g, tj_sched_subst_stmt(c, b, b->body, vals));
  nb->init = b->init ? to_locals(c, g, tj_sched_subst_stmt(c, b, b->init, vals)) : NULL;
  if (!nb->body || (b->init && !nb->init)) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *s = tj_tir_realize(c->arena, m, values, n->realize->realize.predicate, nb);
  for (int l = n->n - 1; s && l >= g->rows_dims; l--) {
    const tj_tir_stmt_t *loop = n->loops[l];
    s = tj_tir_for(c->arena, loop->loop.var, loop->loop.min, loop->loop.extent, TJ_FOR_SERIAL, s);
  }
  if (!s) c->oom = true;
  return s;
}

/* The statement list the rules see for the group at i: the nests at one row in its
 * place, the statements before as they are, and the ones after it behind a sequence (so
 * that no rule fuses a whole-tensor nest into a row, while epilogue fusion still sees
 * their uses of an intermediate buffer). */
static const tj_tir_stmt_t **row_stmts(tj_sched_ctx_t *c, int i, const group_t *g, const tj_tir_expr_t **row) {
  const tj_tir_stmt_t **list = TJ_ARENA_ARRAY(c->arena, const tj_tir_stmt_t *, c->n_stmts);
  const tj_tir_stmt_t *nop = tj_tir_evaluate(c->arena, tj_tir_i64(c->arena, 0));
  if (!list || !nop) return (void)(c->oom = true), NULL;
  for (int k = 0; k < c->n_stmts; k++) {
    if (k < i) list[k] = c->stmts[k];
    else if (k < i + g->n) list[k] = nest_at_row(c, g, &g->nests[k - i], row);
    else list[k] = tj_tir_seq(c->arena, 2, (const tj_tir_stmt_t *[]){c->stmts[k], nop});
    if (!list[k]) return (void)(c->oom = true), NULL;
  }
  return list;
}

/* The group's nests at one row, each through the injective or row reduction rule. */
static const tj_tir_stmt_t *schedule_row(tj_sched_ctx_t *c, int i, const group_t *g, const tj_tir_expr_t **row) {
  const tj_tir_stmt_t **outs = TJ_ARENA_ARRAY(c->arena, const tj_tir_stmt_t *, g->n);
  tj_sched_ctx_t sub = *c;
  sub.stmts = row_stmts(c, i, g, row);
  if (!outs || !sub.stmts) return (void)(c->oom = true), NULL;
  int n_out = 0;
  for (int j = i; j < i + g->n && !sub.oom;) {
    const tj_tir_stmt_t *r = NULL;
    int used = tj_sched_rule_injective(&sub, j, &r);
    if (used && g->block && r) r = tj_sched_hoist_row_values(&sub, r);
    if (!used && !sub.oom) {
      used = tj_sched_rule_reduction(&sub, j, &r);
      if (used && g->block && r) r = tj_sched_row_lanes(&sub, r);
    }
    if (!used) { /* kept as it is; a nest of only row loops is one element per row: scheduled */
      r = sub.stmts[j], used = 1;
      sub.stats.injective += r->kind == TJ_TIR_BLOCK_REALIZE;
    }
    outs[n_out++] = r;
    j += used;
  }
  c->stats = sub.stats;
  if (sub.oom) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *s = tj_tir_seq(c->arena, n_out, outs);
  for (int k = 0; k < g->n_local && s; k++) {
    s = tj_tir_allocate(c->arena, g->local_to[k], s);
    c->drop_alloc[tj_sched_root_alloc(c, g->local_from[k])] = true;
  }
  if (!s) c->oom = true;
  return s;
}

/* Rows shorter than two vectors: one row is too little work per step of a fused row
 * loop, so the group runs by blocks of rows: the row dims after the parallel prefix
 * (tj_sched_fused_prefix: the seed's 32 rows of a [16, 32, 32, 16] tensor) stay inside
 * each nest, each nest runs over the whole block before the next one, and what the
 * nests pass each other is one block (2 KB for the seed) in L1. Taken when the block
 * is at most BLOCK_MAX_WORK elements per nest (so the rules inside keep it serial). */
#define BLOCK_MAX_WORK 4096
static bool short_row_block(group_t *g, int64_t rows, int64_t longest_row) {
  int nf = tj_sched_fused_prefix(g->extent, g->rows_dims);
  if (nf == 0 || nf == g->rows_dims) return false;
  int64_t outer = 1;
  for (int l = 0; l < nf; l++) outer *= g->extent[l];
  if ((rows / outer) * longest_row > BLOCK_MAX_WORK) return false;
  /* a prefix of the row dims: every access the group checked at R row indices is
   * still at its nest's first nf of them */
  g->rows_dims = nf;
  g->block = true;
  return true;
}

int tj_sched_rule_row_fusion(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  group_t *g = TJ_ARENA_NEW(c->arena, group_t);
  if (!g) return c->oom = true, 1;
  if (!find_group(c, i, g)) return 0;
  int64_t rows = 1, work = 0, longest_row = 0;
  for (int l = 0; l < g->rows_dims; l++) rows *= g->extent[l];
  for (int j = 0; j < g->n; j++) {
    int64_t w = 1;
    for (int l = 0; l < g->nests[j].n; l++) w *= g->nests[j].extent[l];
    work += w;
    if (w / rows > longest_row) longest_row = w / rows;
  }
  /* Rows shorter than two vectors (the seed's layer_norm over 16 channels) are fused by
   * blocks of rows (short_row_block) instead. */
  if (longest_row < 2 * tj_sched_lanes(c, TJ_F32) && !short_row_block(g, rows, longest_row)) return 0;
  plan_locals(c, i, g);
  if (c->oom) return 1;
  /* The parallel loop runs over the leading row dims (fused until >= 64 iterations), the
   * others are serial loops inside it: a row then costs a pointer increment, where
   * unfusing every row dim from one index cost ~25 integer ops a row (floor div/mod). */
  int nf = tj_sched_fused_prefix(g->extent, g->rows_dims);
  const tj_tir_expr_t *fo = tj_sched_var(c, "rows");
  const tj_tir_expr_t *row[TJ_SCHED_MAX_NEST];
  if (!fo || !tj_sched_unfuse(c, fo, nf, g->extent, row)) return c->oom = true, 1;
  for (int l = nf; l < g->rows_dims; l++) row[l] = tj_sched_var(c, "i");
  const tj_tir_stmt_t *body = schedule_row(c, i, g, row);
  for (int l = g->rows_dims - 1; l >= nf; l--) body = tj_sched_loop(c, row[l], g->extent[l], TJ_FOR_SERIAL, body);
  if (!body) return c->oom = true, 1;
  int64_t outer = 1;
  for (int l = 0; l < nf; l++) outer *= g->extent[l];
  const tj_tir_stmt_t *r = tj_sched_loop(
      c, fo, outer, outer > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, body);
  if (!r) return c->oom = true, 1;
  c->stats.row_groups++;
  *out = r;
  return g->n;
}
