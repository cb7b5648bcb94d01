/* Schedule rule for windowed reductions over single NCHW planes: depthwise convs
 * (groups == channels: MobileNetV2's 3x3, stride 1 and 2) and pools (max_pool2d,
 * avg_pool2d), with their padding nest before them (schedule.h, rules list):
 *   P[n, c, h, w] = if_then_else(in bounds, X[n, c, h - p, w - p], pad)
 *   C[n, c, y, x] = g(C[n, c, y, x], P[n, c(+rc), y*sy + ry, x*sx + rx], W[c, .., ry, rx])
 * Each output plane is independent (no reduction over channels), so the plane is
 * walked along x in vectors, R output rows at a time:
 *   for fo in T.parallel(N * C * Y / R):            n, c, yb = unfuse(fo)
 *     window[(R-1)*sy + KY, Wp] = P[n, c, yb*R*sy + .., ..]   (the padded rows, in L1)
 *     for xo in range(ceil(X / L)):                 x0 = min(xo * L, X - L)
 *       acc[R, L] = init
 *       for ry, rx (unrolled, the nest's order): for yi (unrolled): for xi (vector):
 *         acc[yi, xi] = g(acc[yi, xi], window[yi*sy + ry, (x0 + xi)*sx + rx], W[c, .., ry, rx])
 *       out[n, c, yb*R + yi, x0 + xi] = epilogue(acc[yi, xi])   (batch norm, clip, ...)
 * Every output takes its terms in the nest's (ry, rx) order from the init value: the same
 * bits as the plain loops. A width that is not a multiple of L ends with a vector that
 * overlaps the one before (x0 = X - L): those outputs are computed twice, identically,
 * instead of a 14-lane vector (LLVM splits it into 8 + 4 + 2 loads) or a scalar tail.
 * With the row loops unrolled, LLVM loads each window row once per (rx, vector) and
 * feeds the up to KY accumulators that use it (stride 1: (R + 2) * 3 loads per 9 * R
 * FMAs). Stride 2 reads the window with a stride-2 vector load (codegen: full-width
 * vector loads over the span and a shuffle). The conv rule before this one tiled 14
 * rows of one vector (14 lanes at 56 wide) with the window of 4 whole channel planes
 * (54 KB, beyond L1), or
 * for 96 channels at 112x112 stride 2 materialised the padding (5 MB). */
#include "ir/op.h"
#include "ir/visit.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/schedule_rules.h"

/* Output rows per window: R accumulators plus KY*KX weight broadcasts and a few loaded
 * vectors stay within AVX-512's 32 registers. */
#define MAX_ROWS 8
/* The ry, rx and row loops are unrolled up to this many vector updates per tile. */
#define MAX_UNROLLED_UPDATES 128

typedef struct plane {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st, *init;
  const tj_buffer_t *p; /* the padded input */
  const tj_tir_expr_t *p_load;
  int y_iter, x_iter, ry_iter, rx_iter;
  int64_t sy, sx, Y, X, KY, KX, lanes, vlanes, rows, col_offset;
  tj_sched_window_t w;
} plane_t;

static int64_t extent_of(const plane_t *k, int it) { return k->nest.extent[k->nest.loop_of_iter[it]]; }

/* e = v * s + r or v + r (either order), v spatial iter `want`, r a reduce iter var. */
static bool strided_index(const plane_t *k, const tj_tir_expr_t *e, int want, int64_t *s, int *r) {
  if (e->kind != TJ_TIR_ADD) return false;
  for (int swap = 0; swap < 2; swap++) {
    const tj_tir_expr_t *m = swap ? e->binary.b : e->binary.a, *y = swap ? e->binary.a : e->binary.b;
    *r = tj_sched_iter_index(k->b, y);
    if (*r < 0 || k->b->iter_vars[*r].kind != TJ_ITER_REDUCE) continue;
    *s = 1;
    if (m->kind == TJ_TIR_MUL && (!tj_tir_is_const_int(m->binary.b, s) || *s < 1)) continue;
    if (tj_sched_iter_index(k->b, m->kind == TJ_TIR_MUL ? m->binary.a : m) == want) return true;
  }
  return false;
}

/* The conv's store indexes 4 distinct spatial iter vars; its init and update write only
 * that element. */
static bool match_store(plane_t *k) {
  const tj_block_t *b = k->b;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE) return false;
  const tj_buffer_t *cb = st->store.buffer;
  if (in->store.buffer != cb || st->store.n_indices != 4 || k->nest.n - k->nest.n_reduce != 4) return false;
  if (cb->strides || !tj_dtype_eq(cb->dtype, TJ_F32)) return false;
  for (int i = 0; i < 4; i++) {
    int it = tj_sched_iter_index(b, st->store.indices[i]);
    if (it < 0 || b->iter_vars[it].kind != TJ_ITER_SPATIAL || in->store.indices[i] != st->store.indices[i])
      return false;
    for (int j = 0; j < i; j++)
      if (st->store.indices[j] == st->store.indices[i]) return false;
  }
  if (!tj_sched_pure_update(b, st) || tj_sched_count_uses(in, cb) != 1) return false;
  k->st = st;
  k->init = in;
  k->y_iter = tj_sched_iter_index(b, st->store.indices[2]);
  k->x_iter = tj_sched_iter_index(b, st->store.indices[3]);
  return true;
}

/* stmts[i] writes P (a root buffer only it and the conv use) at its own indices with a
 * pure expression: its value can be computed into the window. */
static bool match_padding(plane_t *k, int i) {
  tj_sched_ctx_t *c = k->c;
  tj_sched_nest_t pn;
  if (!tj_sched_collect_nest(c->stmts[i], &pn) || pn.n_reduce) return false;
  const tj_tir_stmt_t *st = pn.block->body;
  if (pn.block->init || st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(pn.block, st) ||
      !tj_sched_pure_update(pn.block, st) || tj_sched_count_uses(st, st->store.buffer) != 1)
    return false;
  const tj_buffer_t *p = st->store.buffer;
  int64_t n;
  if (p->ndim != 4 || p->strides || p->elem_offset || !tj_dtype_eq(p->dtype, TJ_F32) ||
      !tj_buffer_static_size(p, &n) || tj_sched_root_alloc(c, p) < 0 || tj_sched_is_param(c, p))
    return false;
  for (int j = 0; j < c->n_stmts; j++)
    if (j != i && j != i + 1 && tj_sched_count_uses(c->stmts[j], p) > 0) return false;
  k->p = p;
  k->w.producer = pn.block;
  return true;
}

/* The conv reads P once, at [a, b, y*sy + ry, x*sx + rx] with a and b free of y, x, ry,
 * rx, and every other reduce iter var has extent 1 (a depthwise conv's rc). */
static bool match_window_read(plane_t *k) {
  const tj_tir_expr_t *l = tj_sched_single_load(k->st->store.value, k->p);
  if (!l || l->load.n_indices != 4) return false;
  if (!strided_index(k, l->load.indices[2], k->y_iter, &k->sy, &k->ry_iter) ||
      !strided_index(k, l->load.indices[3], k->x_iter, &k->sx, &k->rx_iter) || k->ry_iter == k->rx_iter)
    return false;
  const int used[4] = {k->y_iter, k->x_iter, k->ry_iter, k->rx_iter};
  for (int d = 0; d < 2; d++)
    for (int u = 0; u < 4; u++)
      if (tj_tir_expr_uses_var(l->load.indices[d], k->b->iter_vars[used[u]].var)) return false;
  for (int it = 0; it < k->b->n_iter_vars; it++)
    if (k->b->iter_vars[it].kind == TJ_ITER_REDUCE && it != k->ry_iter && it != k->rx_iter && extent_of(k, it) != 1)
      return false;
  k->p_load = l;
  return true;
}

static bool first_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  const tj_tir_expr_t **found = v->ctx;
  if (*found) return false;
  if (e->kind == TJ_TIR_BUFFER_LOAD) return *found = e, false;
  return true;
}

/* The padding puts one column before an input of wp - 2 columns: the producer's value
 * at padded column 1 loads input column 0 (so its in-bounds test has a lower bound, and
 * the columns before 0 that col_offset adds to the window are padding, not loads). */
static bool pads_one_column(plane_t *k, int64_t wp) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *idx[4] = {tj_tir_i64(c->arena, 0), tj_tir_i64(c->arena, 0), tj_tir_i64(c->arena, 1),
                                 tj_tir_i64(c->arena, 1)}, *l = NULL;
  const tj_tir_expr_t *v = tj_sched_producer_value(c, k->w.producer, idx);
  tj_tir_visitor_t vis = {.expr = first_load, .ctx = &l};
  if (v) tj_tir_visit_expr(&vis, v);
  int64_t width, col;
  if (!l || l->load.n_indices != 4 || l->load.buffer->ndim != 4) return false;
  const tj_tir_expr_t *i3 = tj_op_simplify_dim(c->arena, l->load.indices[3]);
  return tj_tir_is_const_int(l->load.buffer->shape[3], &width) && width == wp - 2 && i3 &&
         tj_tir_is_const_int(i3, &col) && col == 0;
}

/* Vector lanes along x, output rows per window, and the window (fits on the stack). */
static bool plan_tile(plane_t *k) {
  tj_sched_ctx_t *c = k->c;
  int hw = tj_sched_lanes(c, TJ_F32);
  k->Y = extent_of(k, k->y_iter);
  k->X = extent_of(k, k->x_iter);
  k->KY = extent_of(k, k->ry_iter);
  k->KX = extent_of(k, k->rx_iter);
  /* The vector load with a stride is a span load and a shuffle for strides 2-4 only. */
  if (hw < 4 || k->X < 4 || k->sx > 4) return false;
  k->lanes = k->X >= hw ? hw : k->X;
  /* At stride 2 a row of 7 or 14 outputs (MobileNetV2's 576 ch 14x14 -> 7x7, 192 ch
   * 28x28 -> 14x14) is computed in vectors of 8 or 16 (vlanes, a power of 2) and only
   * its `lanes` columns are stored: LLVM splits a 7-lane vector into 4 + 2 + 1 and
   * gathers each stride-2 load with ~6 shuffles (llvm-mca, znver4: 76 cycles a row
   * block, FP1/FP2 shuffle pressure), where 8 lanes are one span load and a permute.
   * The extra lanes read window columns past the padded row (row_stride covers them,
   * unfilled) and are never stored: same bits. Zen 4, bench_kernels --float-modes,
   * default mode, 3 rounds: 576 ch 0.024 -> 0.016-0.017 ms; not at stride 1 (960 ch at
   * 7x7 0.014 -> 0.026). */
  k->vlanes = k->lanes;
  if (k->sx >= 2 && k->lanes < hw && (k->lanes & (k->lanes - 1)))
    while (k->vlanes & (k->vlanes - 1)) k->vlanes++;
  /* A row of 9-15 at stride 1 is one odd vector (LLVM splits a 14-lane load into 8 + 4 +
   * 2): the conv rule's tile of 14 rows is faster there (MobileNetV2's 576 channels at
   * 14x14, default float mode: 0.054 vs 0.081 ms); at stride 2 (7 lanes) and at 7x7 this
   * rule is (0.094 -> 0.037 and 0.037 -> 0.023 ms). */
  if (k->lanes < hw && k->lanes > hw / 2 && k->sx == 1) return false;
  k->rows = 1;
  for (int64_t r = MAX_ROWS; r > 1; r--)
    if (k->Y % r == 0 && r * k->KY * k->KX <= MAX_UNROLLED_UPDATES) {
      k->rows = r;
      break;
    }
  /* At stride 2, 4 rows where 4 divides Y (a 9-row window): 144 channels at 56x56, 28
   * output rows, 0.205 -> 0.160 ms with 4 rows instead of 7 (default float mode, 1
   * thread); 14 output rows keep 7 (0.058 ms; 2 rows 0.068-0.095). */
  if (k->sy >= 2 && k->rows > 4 && k->Y % 4 == 0) k->rows = 4;
  int64_t wp;
  if (!tj_tir_is_const_int(k->p->shape[3], &wp)) return false;
  int64_t window_rows = (k->rows - 1) * k->sy + k->KY;
  /* Window rows padded to whole vectors (the padding columns are never filled nor read),
   * so every row starts 64-byte aligned: the fill's vector stores no longer split across
   * cache lines (a 114-float row put 7 of 8 of them across two lines) and the compute's
   * loads split less often. Ice Lake, `bench_kernels --float-modes`, thread-CPU min of
   * 100, 3 interleaved rounds: MobileNetV2's 3x3/2 96 ch at 112x112 0.402-0.432 ->
   * 0.378-0.391 ms, 3x3/1 144 ch at 56x56 0.191-0.196 -> 0.174-0.175, 3x3/2 192 ch at
   * 28x28 0.061-0.079 -> 0.051-0.052. */
  /* At stride 2 over input rows of whole vectors (112 wide), each window row is placed
   * hw - 1 columns in (its first hw - 1 slots hold zeros of the padding's expression),
   * so padded column 1, the input's column 0, starts a vector: the fill's loads of the
   * input and its stores into the window are all aligned (before, every input load
   * started a column before a line and split over two). The compute's loads split as
   * often as before (4 of 6 per row and vector). Ice Lake, `bench_kernels
   * --float-modes`, thread-CPU min of 100, 3 rounds alternating, default float mode:
   * 3x3/2 16 ch at 112x112 0.059-0.069 -> 0.046-0.048 ms, 96 ch 0.379-0.407 ->
   * 0.331-0.381. Not at stride 1 (32 ch at 112x112 0.149-0.191 -> 0.148-0.152: noise),
   * nor where input rows are not whole vectors (56, 28 wide: their rows start off a line
   * anyway). */
  k->col_offset = k->sx >= 2 && wp > 2 && (wp - 2) % hw == 0 && pads_one_column(k, wp) ? hw - 1 : 0;
  /* columns a row needs: the padded row, and for a widened vector (one, at x0 = 0) the
   * span its strided load reads from the last rx (KX - 1 + sx * vlanes) */
  int64_t need = wp + k->col_offset, span = k->KX - 1 + k->sx * k->vlanes + k->col_offset;
  if (k->vlanes > k->lanes && span > need) need = span;
  int64_t row_stride = (need + hw - 1) / hw * hw;
  if (k->col_offset && window_rows * row_stride * 4 > TJ_TIR_STACK_ALLOC_LIMIT) {
    k->col_offset = 0;
    row_stride = (wp + hw - 1) / hw * hw;
  }
  k->w.col_offset = k->col_offset;
  if (window_rows * row_stride * 4 > TJ_TIR_STACK_ALLOC_LIMIT) return false;
  /* the window: P's rows [yb*R*sy, + window_rows), all of its columns */
  k->w.from = k->p;
  k->w.consumer = k->b;
  k->w.block_dim = -1;
  for (int d = 0; d < 2; d++) k->w.dims[d] = (tj_sched_window_dim_t){TJ_WINDOW_FIXED, k->p_load->load.indices[d], 1, -1};
  k->w.dims[2] = (tj_sched_window_dim_t){TJ_WINDOW_SLIDE, NULL, window_rows, k->ry_iter};
  k->w.dims[3] = (tj_sched_window_dim_t){TJ_WINDOW_FULL, k->p_load->load.indices[3], wp, -1};
  const tj_tir_expr_t *shape[2] = {tj_tir_i64(c->arena, window_rows), tj_tir_i64(c->arena, row_stride)};
  k->w.fill_inner = wp + k->col_offset;
  /* Rows of 30 (28x28 planes) were filled as two 15-lane vectors; as two 16-lane ones,
   * the second overlapping: 3x3/1 192 ch at 28x28 0.068-0.069 -> 0.061-0.064 ms, 3x3/2
   * 0.048 -> 0.045 (Ice Lake, bench_kernels thread-CPU min of 200, 3 interleaved rounds). */
  k->w.fill_overlap = true;
  k->w.local = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_window", k->p->name), TJ_F32, 2, shape, NULL);
  if (!k->w.local) return c->oom = true, false;
  ((tj_buffer_t *)k->w.local)->scope = "local";
  return true;
}

static bool plane_matches(tj_sched_ctx_t *c, int i, plane_t *k) {
  *k = (plane_t){.c = c};
  if (i + 1 >= c->n_stmts || !tj_sched_collect_nest(c->stmts[i + 1], &k->nest) || !k->nest.n_reduce) return false;
  k->b = k->nest.block;
  return match_store(k) && match_padding(k, i) && match_window_read(k) && plan_tile(k);
}

/* ---- building ---- */

typedef struct tile {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST]; /* outer iter values (n, c); others set per element */
  const tj_tir_expr_t *y0, *x0, *ry, *rx;
  const tj_buffer_t *acc;
  const tj_sched_epilogue_t *ep;
} tile_t;

/* Iter values of the element (yi, xi) of the tile; ry, rx NULL: 0. */
static bool element(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi, const tj_tir_expr_t *xi,
                    const tj_tir_expr_t **vals) {
  tj_sched_ctx_t *c = k->c;
  for (int it = 0; it < k->b->n_iter_vars; it++) {
    const tj_tir_expr_t *v = t->vals[it];
    if (it == k->y_iter) v = tj_sched_add(c, t->y0, yi);
    else if (it == k->x_iter) v = tj_sched_add(c, t->x0, xi);
    else if (it == k->ry_iter && t->ry) v = t->ry;
    else if (it == k->rx_iter && t->rx) v = t->rx;
    else if (k->b->iter_vars[it].kind == TJ_ITER_REDUCE) v = tj_tir_i64(c->arena, 0);
    if (!(vals[it] = v ? tj_sched_cast_like(c, k->b->iter_vars[it].var, v) : NULL)) return !(c->oom = true);
  }
  return true;
}

static const tj_tir_expr_t *acc_load(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi, const tj_tir_expr_t *xi) {
  const tj_tir_expr_t *idx[2] = {yi, xi};
  const tj_tir_expr_t *l = tj_tir_load(k->c->arena, t->acc, 2, idx);
  if (!l) k->c->oom = true;
  return l;
}

typedef const tj_tir_stmt_t *(*element_fn)(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi,
                                           const tj_tir_expr_t *xi);

static const tj_tir_stmt_t *acc_store(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi, const tj_tir_expr_t *xi,
                                      const tj_tir_expr_t *v) {
  const tj_tir_expr_t *idx[2] = {yi, xi};
  const tj_tir_stmt_t *s = v ? tj_tir_store(k->c->arena, t->acc, 2, idx, v) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

static const tj_tir_stmt_t *init_element(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi, const tj_tir_expr_t *xi) {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  if (!element(k, t, yi, xi, vals)) return NULL;
  return acc_store(k, t, yi, xi, tj_sched_subst_expr(k->c, k->b, k->init->store.value, vals));
}

/* acc = g(acc, window[yi*sy + ry, (x0 + xi)*sx + rx], ...) */
static const tj_tir_stmt_t *update_element(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi,
                                           const tj_tir_expr_t *xi) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  if (!element(k, t, yi, xi, vals)) return NULL;
  /* window column (x0 + xi) * sx + rx, shifted by col_offset */
  const tj_tir_expr_t *col = tj_sched_add(c, tj_sched_mul(c, tj_sched_add(c, t->x0, xi), k->sx), t->rx);
  const tj_tir_expr_t *idx[2] = {tj_sched_add(c, tj_sched_mul(c, yi, k->sy), t->ry),
                                 tj_sched_add(c, col, tj_tir_i64(c->arena, k->col_offset))};
  const tj_tir_expr_t *win = idx[0] && idx[1] ? tj_tir_load(c->arena, k->w.local, 2, idx) : NULL;
  const tj_tir_expr_t *v = tj_sched_subst_expr(c, k->b, k->st->store.value, vals);
  v = v && win ? tj_sched_replace_load(c, v, k->w.from, win) : NULL;
  v = v ? tj_sched_replace_load(c, v, k->st->store.buffer, acc_load(k, t, yi, xi)) : NULL;
  return acc_store(k, t, yi, xi, v);
}

static const tj_tir_stmt_t *store_element(plane_t *k, const tile_t *t, const tj_tir_expr_t *yi,
                                          const tj_tir_expr_t *xi) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST], *idx[4];
  if (!element(k, t, yi, xi, vals)) return NULL;
  for (int d = 0; d < 4; d++) idx[d] = vals[tj_sched_iter_index(k->b, k->st->store.indices[d])];
  const tj_tir_expr_t *v = acc_load(k, t, yi, xi);
  if (v && t->ep->n) v = tj_sched_apply_epilogue(c, t->ep, v, idx);
  const tj_tir_stmt_t *s = v ? tj_tir_store(c->arena, t->ep->out, 4, idx, v) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* for yi in unroll(R): for xi in vectorized(L): make(yi, xi) */
static const tj_tir_stmt_t *tile_loops(plane_t *k, const tile_t *t, element_fn make) {
  tj_sched_ctx_t *c = k->c;
  int64_t lanes = make == store_element ? k->lanes : k->vlanes;
  const tj_tir_expr_t *yi = tj_sched_var(c, "yi"), *xi = tj_sched_var(c, "xi");
  if (!yi || !xi) return NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, xi, lanes, TJ_FOR_VECTORIZED, make(k, t, yi, xi));
  return tj_sched_loop(c, yi, k->rows, k->rows > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
}

/* The update over ry and rx in the nest's loop order (unrolled when small). */
static const tj_tir_stmt_t *update_loops(plane_t *k, tile_t *t) {
  tj_sched_ctx_t *c = k->c;
  t->ry = tj_sched_var(c, "ry");
  t->rx = tj_sched_var(c, "rx");
  const tj_tir_stmt_t *s = tile_loops(k, t, update_element);
  bool unroll = k->rows * k->KY * k->KX <= MAX_UNROLLED_UPDATES;
  bool ry_outer = k->nest.loop_of_iter[k->ry_iter] < k->nest.loop_of_iter[k->rx_iter];
  const tj_tir_expr_t *inner = ry_outer ? t->rx : t->ry, *outer = ry_outer ? t->ry : t->rx;
  s = tj_sched_loop(c, inner, ry_outer ? k->KX : k->KY, TJ_FOR_UNROLLED, s);
  s = tj_sched_loop(c, outer, ry_outer ? k->KY : k->KX, unroll ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
  t->ry = t->rx = NULL;
  return s;
}

static const tj_tir_stmt_t *build(plane_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  const tj_block_t *b = k->b;
  tile_t t = {.ep = ep};
  /* fo over the outer spatial iter vars (loop order), then the row blocks */
  int64_t ext[TJ_SCHED_MAX_NEST], p = 1, work = 1;
  int order[TJ_SCHED_MAX_NEST], n_outer = 0;
  for (int l = 0; l < k->nest.n; l++) {
    int it = k->nest.iter_of_loop[l];
    work *= k->nest.extent[l];
    if (b->iter_vars[it].kind == TJ_ITER_REDUCE || it == k->y_iter || it == k->x_iter) continue;
    order[n_outer] = it;
    ext[n_outer++] = k->nest.extent[l];
  }
  order[n_outer] = k->y_iter;
  ext[n_outer++] = k->Y / k->rows;
  for (int i = 0; i < n_outer; i++) p *= ext[i];
  const tj_tir_expr_t *fo = tj_sched_var(c, "fo"), *unf[TJ_SCHED_MAX_NEST];
  if (!fo || !tj_sched_unfuse(c, fo, n_outer, ext, unf)) return NULL;
  for (int i = 0; i + 1 < n_outer; i++) t.vals[order[i]] = unf[i];
  t.y0 = tj_sched_mul(c, unf[n_outer - 1], k->rows);
  const tj_tir_expr_t *xo = tj_sched_var(c, "xo");
  t.x0 = tj_sched_mul(c, xo, k->lanes);
  if (t.x0 && k->X % k->lanes) t.x0 = tj_tir_binary(c->arena, TJ_TIR_MIN, t.x0, tj_tir_i64(c->arena, k->X - k->lanes));
  /* acc[R, L] */
  const tj_tir_expr_t *shape[2] = {tj_tir_i64(c->arena, k->rows), tj_tir_i64(c->arena, k->vlanes)};
  t.acc = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_acc", k->st->store.buffer->name),
                        k->st->store.buffer->dtype, 2, shape, NULL);
  if (!t.acc || !t.x0 || !t.y0) return NULL;
  ((tj_buffer_t *)t.acc)->scope = "local";
  const tj_tir_stmt_t *three[3] = {tile_loops(k, &t, init_element), update_loops(k, &t), tile_loops(k, &t, store_element)};
  if (!three[0] || !three[1] || !three[2]) return NULL;
  const tj_tir_stmt_t *s = tj_tir_allocate(c->arena, t.acc, tj_tir_seq(c->arena, 3, three));
  s = tj_sched_loop(c, xo, (k->X + k->lanes - 1) / k->lanes, TJ_FOR_SERIAL, s);
  /* the window of this block's rows: bound at (n, c), first padded row y0 * sy */
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  if (!s || !element(k, &t, tj_tir_i64(c->arena, 0), tj_tir_i64(c->arena, 0), vals)) return NULL;
  for (int d = 0; d < 2; d++) k->w.bound[d] = tj_sched_subst_expr(c, b, k->w.dims[d].index, vals);
  k->w.bound[2] = tj_sched_cast_like(c, k->b->iter_vars[k->y_iter].var, tj_sched_mul(c, t.y0, k->sy));
  if (!k->w.bound[0] || !k->w.bound[1] || !k->w.bound[2]) return NULL;
  const tj_tir_stmt_t *two[2] = {tj_sched_window_fill(c, &k->w), s};
  s = two[0] ? tj_tir_allocate(c->arena, k->w.local, tj_tir_seq(c->arena, 2, two)) : NULL;
  return tj_sched_loop(c, fo, p, p > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, s);
}

int tj_sched_rule_plane_window(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  plane_t k;
  if (!c->opts || !plane_matches(c, i, &k)) return c->oom ? 1 : 0;
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i + 1, i + 2, k.st->store.buffer, &ep);
  *out = tj_sched_with_before(c, &ep, build(&k, &ep));
  if (!*out || c->oom) return c->oom = true, 1;
  c->drop_alloc[tj_sched_root_alloc(c, k.p)] = true;
  c->stats.conv++;
  c->stats.windowed++;
  c->stats.plane_windows++;
  c->stats.fused_epilogues += ep.n;
  return 2 + ep.span;
}
