/* Schedule rule for injective (spatial, elementwise) nests (schedule.h):
 *
 *   for i0, i1, i2, i3:  block: O[i0, i1, i2, i3] = f(...)
 * becomes
 *   for fo in T.parallel(E0*E1):              i0, i1 = unfuse(fo)  (fused until >= 64)
 *    for i2 in range(E2):
 *     for io in range(E3 / L):
 *       for ii in T.vectorized(L):            O[.., io*L + ii] = f(...)
 *     for it in range(E3 % L):                (the tail, when L does not divide E3)
 * with the elementwise nests that only consume O fused into the store. Each element is
 * computed once by the same expression, so any order is exact. The innermost loop is
 * vectorized only when it indexes the output's last (contiguous) dimension. */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct inj {
  tj_sched_ctx_t *c;
  const tj_sched_nest_t *nest;
  const tj_tir_stmt_t *store;
  const tj_sched_epilogue_t *ep;
  const tj_tir_expr_t *outer[TJ_SCHED_MAX_NEST]; /* iter values of the outer loops (by loop) */
} inj_t;

/* The store for the innermost iter value `inner`. */
static const tj_tir_stmt_t *element(inj_t *s, const tj_tir_expr_t *inner) {
  tj_sched_ctx_t *c = s->c;
  const tj_sched_nest_t *nest = s->nest;
  const tj_block_t *b = nest->block;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  for (int l = 0; l < nest->n; l++) {
    const tj_tir_expr_t *v = l == nest->n - 1 ? inner : s->outer[l];
    vals[nest->iter_of_loop[l]] = tj_sched_cast_like(c, b->iter_vars[nest->iter_of_loop[l]].var, v);
  }
  const tj_tir_stmt_t *st = tj_sched_subst_stmt(c, b, s->store, vals);
  if (!st || s->ep->n == 0) return st;
  /* The producer stores at its identity indices: stage dim k is iter var k. */
  const tj_tir_expr_t *value = tj_sched_apply_epilogue(c, s->ep, st->store.value, st->store.indices);
  const tj_tir_stmt_t *r = value ? tj_tir_store(c->arena, s->ep->out, st->store.n_indices, st->store.indices, value)
                                 : NULL;
  if (!r) c->oom = true;
  return r;
}

/* base + i, or i when there is no base. */
static const tj_tir_expr_t *offset(tj_sched_ctx_t *c, const tj_tir_expr_t *base, const tj_tir_expr_t *i) {
  return base ? tj_sched_add(c, base, i) : i;
}

/* The innermost loop over e elements from `base` (NULL: 0): vectorized by L with a
 * serial tail, or serial. */
static const tj_tir_stmt_t *inner_loops(inj_t *s, bool vectorize, int64_t e, const tj_tir_expr_t *base) {
  tj_sched_ctx_t *c = s->c;
  int L = tj_sched_lanes(c, s->store->store.buffer->dtype);
  if (!vectorize || e < 2) {
    const tj_tir_expr_t *i = tj_sched_var(c, "i");
    return tj_sched_loop(c, i, e, TJ_FOR_SERIAL, element(s, offset(c, base, i)));
  }
  if (e <= L) {
    const tj_tir_expr_t *i = tj_sched_var(c, "vi");
    return tj_sched_loop(c, i, e, TJ_FOR_VECTORIZED, element(s, offset(c, base, i)));
  }
  const tj_tir_expr_t *io = tj_sched_var(c, "vo"), *ii = tj_sched_var(c, "vi");
  const tj_tir_stmt_t *main_loop = tj_sched_loop(
      c, io, e / L, TJ_FOR_SERIAL,
      tj_sched_loop(c, ii, L, TJ_FOR_VECTORIZED, element(s, offset(c, base, tj_sched_add(c, tj_sched_mul(c, io, L), ii)))));
  if (e % L == 0) return main_loop;
  const tj_tir_expr_t *it = tj_sched_var(c, "vt");
  const tj_tir_stmt_t *tail = tj_sched_loop(
      c, it, e % L, TJ_FOR_SERIAL, element(s, offset(c, base, tj_sched_add(c, tj_tir_i64(c->arena, e / L * L), it))));
  const tj_tir_stmt_t *pair[2] = {main_loop, tail};
  const tj_tir_stmt_t *r = main_loop && tail ? tj_tir_seq(c->arena, 2, pair) : NULL;
  if (!r) c->oom = true;
  return r;
}

/* Transposes. An input read with the innermost loop's var outside its last index and the
 * next loop's var in it (O[i, j] = W[j, i]) is a gather along the row of O, and each cache
 * line of W it touches holds the next rows' elements: a row of 3072 floats touches 3072
 * lines, more than L1 holds, so each line is loaded again for every row (BERT's weight
 * transposes ran at 1.3 GB/s). Tiles of TILE_ROWS x TILE_COLS outputs touch TILE_COLS
 * lines of W and use each for TILE_ROWS consecutive rows. Wider tiles were slower on
 * the transpose of a 768 x 3072 input (16 columns: 1.38 ms, 64: 7.06 ms, AMD Zen 5): rows of a
 * power-of-two-ish stride map 64 lines into few cache sets. */
#define TILE_ROWS 16
#define TILE_COLS 16

typedef struct transposed_read {
  const tj_tir_expr_t *inner, *row; /* the block's iter vars of the two innermost loops */
  bool found;
} transposed_read_t;

static bool find_transposed_read(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  transposed_read_t *t = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.n_indices < 2) return true;
  const tj_tir_expr_t *last = e->load.indices[e->load.n_indices - 1];
  if (tj_tir_expr_uses_var(last, t->inner) || !tj_tir_expr_uses_var(last, t->row)) return true;
  for (int k = 0; k < e->load.n_indices - 1; k++) t->found |= tj_tir_expr_uses_var(e->load.indices[k], t->inner);
  return true;
}

/* The largest multiple of `step` that divides n and is at most `at_most`, or 0. */
static int64_t tile_size(int64_t n, int64_t at_most, int64_t step) {
  for (int64_t t = at_most / step * step; t >= step; t -= step)
    if (n % t == 0) return t;
  return 0;
}

/* Tile sizes (rows, cols) for a nest that reads an input transposed, else false. */
static bool transpose_tile(inj_t *s, int64_t *rows, int64_t *cols) {
  const tj_sched_nest_t *nest = s->nest;
  if (nest->n < 2) return false;
  const tj_block_t *b = nest->block;
  transposed_read_t t = {b->iter_vars[nest->iter_of_loop[nest->n - 1]].var,
                         b->iter_vars[nest->iter_of_loop[nest->n - 2]].var, false};
  tj_tir_visitor_t v = {.expr = find_transposed_read, .ctx = &t};
  tj_tir_visit_expr(&v, s->store->store.value);
  if (!t.found) return false;
  *rows = tile_size(nest->extent[nest->n - 2], TILE_ROWS, 1);
  int64_t lanes = tj_sched_lanes(s->c, s->store->store.buffer->dtype);
  /* Half vectors where no multiple of a whole one divides the row (1000 = 8 x 125). */
  int64_t at_most = lanes > TILE_COLS ? lanes : TILE_COLS;
  *cols = tile_size(nest->extent[nest->n - 1], at_most, lanes);
  if (!*cols && lanes >= 16) *cols = tile_size(nest->extent[nest->n - 1], at_most, lanes / 2);
  return *rows >= 4 && *cols > 0;
}

/* Leading loops fused into the parallel loop: enough of them for 64 chunks (or all but the
 * innermost), so the floordiv/floormod that undo the fusion run once per row. */
int tj_sched_fused_prefix(const int64_t *extent, int n_outer) {
  int k = 0;
  for (int64_t p = 1; k < n_outer && p < 64; k++) p *= extent[k];
  return k;
}

/* ---- data movement inlined ----
 * A nest that only copies elements (its value one load: a reshape, a transpose) into a
 * root buffer that only the next nest reads is substituted into that nest's loads, as
 * TVM's compute_inline: BERT's fused_reshape_transpose1_transpose2 (the keys, [128, 768]
 * -> [12, 64, 128]) ran three parallel loops through two 393 KB intermediates, now one
 * loop from the input. A chain of them (reshape -> transpose -> transpose) inlines
 * whole. */
#define MAX_INLINED 4

typedef struct inlined {
  const tj_block_t *block[MAX_INLINED];
  const tj_buffer_t *buf[MAX_INLINED];
  int n;
} inlined_t;

/* stmts[i] copies one load into a root buffer that no statement but stmts[i + 1] reads. */
static bool inlinable(tj_sched_ctx_t *c, int i, const tj_block_t **block) {
  tj_sched_nest_t nest;
  if (i + 1 >= c->n_stmts || !tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return false;
  const tj_block_t *b = nest.block;
  const tj_tir_stmt_t *st = b->body;
  if (b->init || st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(b, st) ||
      st->store.value->kind != TJ_TIR_BUFFER_LOAD || !tj_sched_pure_update(b, st))
    return false;
  const tj_buffer_t *o = st->store.buffer;
  if (tj_sched_root_alloc(c, o) < 0 || tj_sched_is_param(c, o) || st->store.value->load.buffer == o) return false;
  for (int k = 0; k < c->n_stmts; k++)
    if (k != i && k != i + 1 && tj_sched_count_uses(c->stmts[k], o) > 0) return false;
  if (tj_sched_count_uses(c->stmts[i + 1], o) == 0) return false;
  *block = b;
  return true;
}

/* st with every inlined producer's loads replaced, the last producer first (its value
 * may read the one before it). */
static const tj_tir_stmt_t *with_inlined(tj_sched_ctx_t *c, const inlined_t *in, const tj_tir_stmt_t *st) {
  const tj_tir_expr_t *v = st->store.value;
  for (int k = in->n - 1; k >= 0 && v; k--) v = tj_sched_inline_producer(c, v, in->block[k], in->buf[k]);
  const tj_tir_stmt_t *r = v ? tj_tir_store(c->arena, st->store.buffer, st->store.n_indices, st->store.indices, v) : NULL;
  if (!r) c->oom = true;
  return r;
}

static const tj_tir_stmt_t *injective_nest(tj_sched_ctx_t *c, int i, const tj_buffer_t *retarget, const inlined_t *in,
                                           int *used) {
  tj_sched_nest_t nest;
  *used = 0;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return NULL;
  const tj_block_t *b = nest.block;
  const tj_tir_stmt_t *st = b->body;
  if (b->init || st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_pure_update(b, st)) return NULL;
  if (in && in->n && !(st = with_inlined(c, in, st))) return NULL;
  const tj_buffer_t *o = st->store.buffer;
  if (retarget) {
    /* The same element, converted, into another buffer of the same shape. */
    const tj_tir_expr_t *v = tj_tir_cast(c->arena, retarget->dtype, st->store.value);
    st = v ? tj_tir_store(c->arena, retarget, st->store.n_indices, st->store.indices, v) : NULL;
    if (!st) return (void)(c->oom = true), NULL;
  }
  tj_sched_epilogue_t ep = {0};
  if (!retarget && tj_sched_store_is_identity(b, st)) tj_sched_collect_epilogue(c, i, i + 1, o, &ep);
  inj_t s = {c, &nest, st, &ep, {0}};
  int ni = st->store.n_indices;
  bool vectorize = ni > 0 && st->store.indices[ni - 1] == b->iter_vars[nest.iter_of_loop[nest.n - 1]].var &&
                   !o->strides && o->dtype.lanes == 1;
  int64_t rows = 0, cols = 0;
  bool tiled = vectorize && transpose_tile(&s, &rows, &cols);
  /* The loops outside the innermost (tiled: outside the tile): their extents, each
   * loop's var or, fused, its part of the parallel loop's var. */
  int n_outer = nest.n - 1 + tiled;
  int64_t ext[TJ_SCHED_MAX_NEST + 1];
  for (int l = 0; l < nest.n; l++) ext[l] = nest.extent[l];
  if (tiled) ext[nest.n - 2] /= rows, ext[nest.n - 1] /= cols;
  const tj_tir_expr_t *outer[TJ_SCHED_MAX_NEST + 1] = {0};
  int nf = tj_sched_fused_prefix(ext, n_outer);
  int64_t p = 1, work = 1;
  for (int l = 0; l < nf; l++) p *= ext[l];
  for (int l = 0; l < nest.n; l++) work *= nest.extent[l];
  const tj_tir_expr_t *fo = nf ? tj_sched_var(c, "fused") : NULL;
  if (nf && !tj_sched_unfuse(c, fo, nf, ext, outer)) return NULL;
  for (int l = nf; l < n_outer; l++) outer[l] = tj_sched_var(c, "i");
  for (int l = 0; l < nest.n - 1; l++) s.outer[l] = outer[l];
  const tj_tir_stmt_t *r;
  if (tiled) {
    const tj_tir_expr_t *row = tj_sched_var(c, "ti");
    s.outer[nest.n - 2] = tj_sched_add(c, tj_sched_mul(c, outer[nest.n - 2], rows), row);
    r = tj_sched_loop(c, row, rows, TJ_FOR_SERIAL, inner_loops(&s, true, cols, tj_sched_mul(c, outer[nest.n - 1], cols)));
  } else {
    r = inner_loops(&s, vectorize, nest.extent[nest.n - 1], NULL);
  }
  for (int l = n_outer - 1; l >= nf; l--) r = tj_sched_loop(c, outer[l], ext[l], TJ_FOR_SERIAL, r);
  if (nf) r = tj_sched_loop(c, fo, p, p > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, r);
  r = tj_sched_with_before(c, &ep, r);
  if (c->oom || !r) return (void)(c->oom = true), NULL;
  c->stats.injective++;
  c->stats.transpose_tiles += tiled;
  c->stats.fused_epilogues += ep.n;
  *used = 1 + ep.span;
  return r;
}

const tj_tir_stmt_t *tj_sched_injective_nest(tj_sched_ctx_t *c, int i, const tj_buffer_t *retarget, int *used) {
  return injective_nest(c, i, retarget, NULL, used);
}

int tj_sched_rule_injective(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  int used = 0;
  inlined_t in = {.n = 0};
  int j = i;
  while (in.n < MAX_INLINED && inlinable(c, j, &in.block[in.n])) {
    in.buf[in.n] = in.block[in.n]->body->store.buffer;
    in.n++, j++;
  }
  if (in.n) {
    *out = injective_nest(c, j, NULL, &in, &used);
    if (c->oom) return 1;
    if (*out) {
      for (int k = 0; k < in.n; k++) c->drop_alloc[tj_sched_root_alloc(c, in.buf[k])] = true;
      c->stats.inlined += in.n;
      return j - i + used;
    }
    /* the consumer is no injective nest: schedule the producer alone */
  }
  *out = tj_sched_injective_nest(c, i, NULL, &used);
  return c->oom ? 1 : used;
}
