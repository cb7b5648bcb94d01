/* Row-independent kernels and their fixed-size chunks (row_split.h). */
#include "transforms/tir/row_split.h"

#include <stdint.h>

#include "ir/visit.h"

/* ---------------- the check ---------------- */

enum { MAX_ROW_VARS = 64 };

typedef struct rows_ctx {
  const tj_tir_expr_t *n;
  const tj_tir_expr_t *loops[MAX_ROW_VARS], *iters[MAX_ROW_VARS]; /* loops over n; block iters bound to them */
  int n_loops, n_iters;
  /* block iters whose domain is [0, 1): always 0, so `row iter + unit` is the row iter
   * (a depthwise conv reads pad[n, f + rc, ..] with rc over one channel) */
  const tj_tir_expr_t *units[MAX_ROW_VARS];
  int n_units;
  int block_rows; /* row iters of the innermost block being visited */
  bool fail;
} rows_ctx_t;

static bool in(const tj_tir_expr_t *const *set, int n, const tj_tir_expr_t *v) {
  for (int i = 0; i < n; i++)
    if (set[i] == v) return true;
  return false;
}

/* The dim of b that is n (-1: none). A row buffer is dense, has n in one dim only, 1s
 * before it (so that a run of rows is contiguous) and constants elsewhere. */
static int row_dim(rows_ctx_t *c, const tj_buffer_t *b) {
  int dim = -1;
  for (int d = 0; d < b->ndim; d++)
    if (b->shape[d] == c->n) {
      if (dim >= 0) c->fail = true;
      dim = d;
    } else if (tj_tir_expr_uses_var(b->shape[d], c->n)) {
      c->fail = true;
    }
  if (dim < 0) return -1;
  for (int d = 0; d < b->ndim; d++) {
    int64_t v;
    if (d != dim && (!tj_tir_is_const_int(b->shape[d], &v) || (d < dim && v != 1))) c->fail = true;
  }
  if (b->strides || b->elem_offset) c->fail = true;
  return dim;
}

static void visit_expr(rows_ctx_t *c, tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  (void)c;
  tj_tir_visit_expr(v, e);
}

static bool add(const tj_tir_expr_t **set, int *n, const tj_tir_expr_t *v);

/* A row iter, or a row iter plus a unit iter (whose value is always 0). */
static bool is_row_index(const rows_ctx_t *c, const tj_tir_expr_t *e) {
  if (in(c->iters, c->n_iters, e)) return true;
  return e->kind == TJ_TIR_ADD && in(c->iters, c->n_iters, e->binary.a) && in(c->units, c->n_units, e->binary.b);
}

/* An access: the row dim of a row buffer is indexed by a row iter, nothing else is. */
static void check_access(rows_ctx_t *c, tj_tir_visitor_t *v, const tj_buffer_t *b, int n_idx,
                         const tj_tir_expr_t *const *idx, bool store) {
  int dim = row_dim(c, b);
  if (store && c->block_rows > 0 && dim < 0) c->fail = true; /* one row's result in a buffer of all rows */
  for (int i = 0; i < n_idx && !c->fail; i++) {
    if (i == dim) {
      if (!is_row_index(c, idx[i])) c->fail = true;
      continue;
    }
    visit_expr(c, v, idx[i]);
  }
}

static bool rows_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  rows_ctx_t *c = v->ctx;
  if (c->fail) return false;
  if (e->kind == TJ_TIR_VAR && (e == c->n || in(c->loops, c->n_loops, e) || in(c->iters, c->n_iters, e)))
    c->fail = true;
  if (e->kind == TJ_TIR_BUFFER_LOAD) {
    check_access(c, v, e->load.buffer, e->load.n_indices, e->load.indices, false);
    return false;
  }
  return !c->fail;
}

static bool add(const tj_tir_expr_t **set, int *n, const tj_tir_expr_t *v) {
  if (*n == MAX_ROW_VARS) return false;
  set[(*n)++] = v;
  return true;
}

static void check_realize(rows_ctx_t *c, tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  const tj_block_t *b = s->realize.block;
  int rows = 0;
  if (b->n_match_buffers || s->realize.n_iter_values != b->n_iter_vars) c->fail = true;
  for (int i = 0; i < b->n_iter_vars && !c->fail; i++) {
    const tj_iter_var_t *iv = &b->iter_vars[i];
    const tj_tir_expr_t *value = s->realize.iter_values[i];
    int64_t mn, ext;
    if (tj_tir_is_const_int(iv->dom.min, &mn) && mn == 0 && tj_tir_is_const_int(iv->dom.extent, &ext) && ext == 1 &&
        !add(c->units, &c->n_units, iv->var))
      c->fail = true;
    if (iv->dom.extent != c->n) {
      visit_expr(c, v, iv->dom.extent);
      visit_expr(c, v, value);
      continue;
    }
    if (iv->kind != TJ_ITER_SPATIAL || !tj_tir_is_const_int(iv->dom.min, &mn) || mn != 0 ||
        !in(c->loops, c->n_loops, value) || !add(c->iters, &c->n_iters, iv->var))
      c->fail = true;
    rows++;
  }
  for (int i = 0; i < b->n_alloc_buffers; i++) row_dim(c, b->alloc_buffers[i]);
  visit_expr(c, v, s->realize.predicate);
  int outer = c->block_rows;
  c->block_rows = rows;
  tj_tir_visit_stmt(v, b->init);
  tj_tir_visit_stmt(v, b->body);
  c->block_rows = outer;
}

static bool rows_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  rows_ctx_t *c = v->ctx;
  if (c->fail) return false;
  int64_t mn;
  switch (s->kind) {
    case TJ_TIR_FOR:
      if (s->loop.extent != c->n) return true;
      if (!tj_tir_is_const_int(s->loop.min, &mn) || mn != 0 || !add(c->loops, &c->n_loops, s->loop.var))
        c->fail = true;
      tj_tir_visit_stmt(v, s->loop.body);
      return false;
    case TJ_TIR_BLOCK_REALIZE: check_realize(c, v, s); return false;
    case TJ_TIR_BUFFER_STORE:
      check_access(c, v, s->store.buffer, s->store.n_indices, s->store.indices, true);
      visit_expr(c, v, s->store.value);
      return false;
    case TJ_TIR_ALLOCATE: row_dim(c, s->allocate.buffer); return !c->fail;
    default: return true;
  }
}

bool tj_tir_rows_independent(const tj_prim_func_t *f, const tj_tir_expr_t *n) {
  rows_ctx_t c = {.n = n};
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    if (!b) return false; /* scalar params (tir_vars) may say anything about rows */
    row_dim(&c, b);
  }
  tj_tir_visitor_t v = {.expr = rows_expr, .stmt = rows_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, f->body);
  return !c.fail;
}

/* ---------------- work per row ---------------- */

static int64_t sat_mul(int64_t a, int64_t b) { return a > 0 && b > INT64_MAX / 2 / a ? INT64_MAX / 2 : a * b; }
static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX / 2 - b ? INT64_MAX / 2 : a + b; }

static int64_t work(const tj_tir_stmt_t *s) {
  if (!s) return 0;
  int64_t ext, sum = 0;
  switch (s->kind) {
    case TJ_TIR_FOR:
      return sat_mul(tj_tir_is_const_int(s->loop.extent, &ext) && ext > 0 ? ext : 1, work(s->loop.body));
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) sum = sat_add(sum, work(s->seq.stmts[i]));
      return sum;
    case TJ_TIR_BLOCK_REALIZE: return sat_add(work(s->realize.block->init), sat_add(1, work(s->realize.block->body)));
    case TJ_TIR_LET_STMT: return work(s->let.body);
    case TJ_TIR_IF: return sat_add(work(s->if_.then_stmt), work(s->if_.else_stmt));
    case TJ_TIR_ALLOCATE: return work(s->allocate.body);
    default: return 1;
  }
}

int64_t tj_tir_row_work(const tj_prim_func_t *f, const tj_tir_expr_t *n) {
  (void)n; /* loops over n have a non-constant extent: they count 1 */
  return work(f->body);
}

/* ---------------- the chunk ---------------- */

enum { MAX_BUFFERS = 256 };

typedef struct chunk_ctx {
  const tj_prim_func_t *f;
  const tj_tir_expr_t *n, *rows, *offset;
  const tj_buffer_t *from[MAX_BUFFERS], *to[MAX_BUFFERS];
  int n_map;
  bool overflow;
} chunk_ctx_t;

static bool is_param_buffer(const tj_prim_func_t *f, const tj_buffer_t *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->buffer_map && f->buffer_map[i] == b) return true;
  return false;
}

/* b with n := rows; a parameter also starts `offset` rows in. */
static const tj_buffer_t *chunk_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  chunk_ctx_t *c = m->ctx;
  for (int i = 0; i < c->n_map; i++)
    if (c->from[i] == b) return c->to[i];
  int dim = -1;
  int64_t stride = 1, v;
  for (int d = 0; d < b->ndim; d++)
    if (b->shape[d] == c->n) dim = d;
    else if (dim >= 0 && tj_tir_is_const_int(b->shape[d], &v)) stride *= v;
  if (dim < 0) return NULL;
  if (c->n_map == MAX_BUFFERS) return c->overflow = true, NULL;
  tj_buffer_t *nb = (tj_buffer_t *)tj_buffer_copy(m->arena, b);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, b->ndim);
  if (!nb || !shape) return m->failed = true, NULL;
  for (int d = 0; d < b->ndim; d++) shape[d] = d == dim ? c->rows : b->shape[d];
  nb->shape = shape;
  if (is_param_buffer(c->f, b)) {
    nb->elem_offset = tj_tir_binary(m->arena, TJ_TIR_MUL, c->offset, tj_tir_i64(m->arena, stride));
    if (!nb->elem_offset) return m->failed = true, NULL;
  }
  c->from[c->n_map] = b;
  c->to[c->n_map++] = nb;
  return nb;
}

static const tj_tir_expr_t *chunk_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  chunk_ctx_t *c = m->ctx;
  return e == c->n ? c->rows : NULL;
}

tj_status_t *tj_tir_row_chunk(tj_arena_t *arena, const tj_prim_func_t *f, const tj_tir_expr_t *n, int64_t rows,
                              const tj_prim_func_t **out) {
  chunk_ctx_t c = {.f = f, .n = n, .rows = tj_tir_i64(arena, rows), .offset = tj_tir_var(arena, "row_offset", TJ_I64)};
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(arena, const tj_tir_expr_t *, f->n_params + 1);
  const tj_buffer_t **bmap = TJ_ARENA_ARRAY(arena, const tj_buffer_t *, f->n_params + 1);
  tj_prim_func_t *nf = TJ_ARENA_NEW(arena, tj_prim_func_t);
  if (!c.rows || !c.offset || !params || !bmap || !nf) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "row chunk: out of memory");
  tj_tir_mutator_t m = {.arena = arena, .expr = chunk_expr, .buffer = chunk_buffer, .ctx = &c};
  for (int i = 0; i < f->n_params; i++) {
    params[i] = f->params[i];
    bmap[i] = f->buffer_map[i] ? tj_tir_mutate_buffer(&m, f->buffer_map[i]) : NULL;
  }
  params[f->n_params] = c.offset;
  bmap[f->n_params] = NULL;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(&m, f->body);
  if (m.failed || !body) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "row chunk: out of memory");
  if (c.overflow) return tj_status_new(TJ_ERR_UNSUPPORTED, "row chunk: more than %d buffers", MAX_BUFFERS);
  *nf = *f;
  nf->n_params = f->n_params + 1;
  nf->params = params;
  nf->buffer_map = bmap;
  nf->body = body;
  *out = nf;
  return NULL;
}
