/* Schedule rule for 3x3 stride-1 convolutions in NHWC (OHWI weights) by Winograd's
 * minimal filtering F(m x m, 3x3), the channels-last sibling of schedule_winograd.c
 * (which explains the method; the same reassociation rules: default float mode only,
 * TVMJIT_WINOGRAD=0 and --strict-float keep the direct conv).
 *
 * With the channels innermost every transform is a vector op along the channels and no
 * interleave is needed: the conv as LegalizeOps writes it (a padding nest, then
 *   C[n, y, x, f] = C[n, y, x, f] + P[n, y + ry, x + rx, c] * W[f, ry, rx, c])
 * with its elementwise epilogue becomes
 *
 *   [U[fv, p, c, fl] = (G W[fv * FL + fl, :, :, c] G^T)[p], by the kernel on every call
 *    or, for a constant weight, once at load (runtime/prepack_winograd.c, lanes FL)]
 *   for (n, block) in T.parallel:         (a block: R consecutive tiles)
 *     V = T.alloc_buffer((a^2, R, C))
 *     for each tile r of the block: for c (vectors):
 *       V[p, r, c] = (B^T d B)[p], d the tile's a x a pixels read through the padding
 *     for fb (FV vectors of FL output channels):
 *       for p:  acc[r, f] = sum_c V[p, r, c] * U[fb, p, c, f]   (R broadcasts of V,
 *               FV loads of U per c: R * FV FMAs);  mloc[p] = acc
 *       for r, v:  Y = A^T mloc A as vectors along f;  OUT[n, y, x, f] = epilogue(Y)
 *
 * Tiles are numbered row-major over the image (t = ty * TW + tx); the last block's
 * tiles past the image read the padding's zeros and store nothing. Measured against the
 * direct NHWC conv: docs/cpu-schedule.md. */
#include <string.h>

#include "support/winograd.h"
#include "transforms/tir/schedule_rules.h"

#define MAX_ALPHA TJ_WINOGRAD_MAX_ALPHA
/* Below this many input or output channels the transforms cost more than they save. */
#define MIN_CHANNELS 16
/* Transformed weights read by every block on every call: kept in L2 with room for V. */
#define MAX_U_BYTES (9 << 19)
/* The GEMM tile: R tiles x FV vectors of output channels, at most this many
 * accumulators (plus FV loads of U and a broadcast: 32 vector registers). */
#define MAX_ACCS 24
#define MAX_FV 4
#define MAX_R 8

typedef struct wino_nhwc {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st;
  const tj_block_t *pad;
  const tj_buffer_t *pad_buf, *w;
  int w_param;
  int n_it, y_it, x_it, f_it, c_it;
  int64_t N, H, W, F, C;
  const tj_winograd_t *mt;
  int64_t TH, TW, T; /* tile rows and columns, tiles per image */
  int64_t cl, fl;    /* lanes along the input channels (transforms), output channels (GEMM) */
  int64_t fv, r;     /* GEMM tile: FV vectors of FL output channels x R tiles */
  int64_t blocks;    /* blocks of R tiles per image: the parallel iterations */
  const tj_buffer_t *u, *v;
  bool u_given;
} wino_nhwc_t;

static int64_t extent_of(const wino_nhwc_t *k, int it) { return k->nest.extent[k->nest.loop_of_iter[it]]; }

/* ---- matching ---- */

static bool is_iter(const wino_nhwc_t *k, const tj_tir_expr_t *e, int it) { return tj_sched_iter_index(k->b, e) == it; }

static bool is_sum(const wino_nhwc_t *k, const tj_tir_expr_t *e, int a, int b) {
  if (e->kind != TJ_TIR_ADD) return false;
  return (is_iter(k, e->binary.a, a) && is_iter(k, e->binary.b, b)) ||
         (is_iter(k, e->binary.a, b) && is_iter(k, e->binary.b, a));
}

static bool iter_of_kind(const wino_nhwc_t *k, const tj_tir_expr_t *e, int kind, int *it) {
  *it = tj_sched_iter_index(k->b, e);
  return *it >= 0 && (int)k->b->iter_vars[*it].kind == kind;
}

static bool f32_buffer(const tj_buffer_t *b) {
  return b->ndim == 4 && !b->strides && !b->elem_offset && tj_dtype_eq(b->dtype, TJ_F32);
}

/* W[f, ry, rx, c] (a 3x3 float32 parameter) and P[n, y + ry, x + rx, c]. */
static bool match_loads(wino_nhwc_t *k, const tj_tir_expr_t *wl, const tj_tir_expr_t *pl) {
  if (wl->kind != TJ_TIR_BUFFER_LOAD || pl->kind != TJ_TIR_BUFFER_LOAD) return false;
  const tj_buffer_t *w = wl->load.buffer, *p = pl->load.buffer;
  if (!f32_buffer(w) || !f32_buffer(p) || wl->load.n_indices != 4 || pl->load.n_indices != 4) return false;
  int ry, rx, f;
  const tj_tir_expr_t *const *wi = wl->load.indices, *const *pi = pl->load.indices;
  if (!iter_of_kind(k, wi[0], TJ_ITER_SPATIAL, &f) || !iter_of_kind(k, wi[1], TJ_ITER_REDUCE, &ry) ||
      !iter_of_kind(k, wi[2], TJ_ITER_REDUCE, &rx) || !iter_of_kind(k, wi[3], TJ_ITER_REDUCE, &k->c_it) || ry == rx ||
      ry == k->c_it || rx == k->c_it || f != k->f_it)
    return false;
  if (extent_of(k, ry) != 3 || extent_of(k, rx) != 3) return false;
  if (!is_iter(k, pi[0], k->n_it) || !is_sum(k, pi[1], k->y_it, ry) || !is_sum(k, pi[2], k->x_it, rx) ||
      !is_iter(k, pi[3], k->c_it))
    return false;
  k->w_param = -1;
  for (int i = 0; i < k->c->func->n_params && k->c->func->buffer_map; i++)
    if (k->c->func->buffer_map[i] == w) k->w_param = i;
  int64_t s[4];
  for (int d = 0; d < 4; d++)
    if (!tj_tir_is_const_int(w->shape[d], &s[d])) return false;
  k->w = w, k->pad_buf = p;
  return k->w_param >= 0 && s[1] == 3 && s[2] == 3;
}

/* C[n, y, x, f] = C[n, y, x, f] + P[..] * W[..] from C = 0, float32. */
static bool match_update(wino_nhwc_t *k) {
  const tj_block_t *b = k->b;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE || k->nest.n != 7 ||
      k->nest.n_reduce != 3)
    return false;
  const tj_buffer_t *cb = st->store.buffer;
  if (in->store.buffer != cb || !f32_buffer(cb) || st->store.n_indices != 4 ||
      in->store.value->kind != TJ_TIR_FLOAT_IMM || in->store.value->float_imm != 0.0)
    return false;
  int its[4];
  for (int d = 0; d < 4; d++) {
    if (!iter_of_kind(k, st->store.indices[d], TJ_ITER_SPATIAL, &its[d]) ||
        in->store.indices[d] != st->store.indices[d])
      return false;
    for (int e = 0; e < d; e++)
      if (its[e] == its[d]) return false;
  }
  k->n_it = its[0], k->y_it = its[1], k->x_it = its[2], k->f_it = its[3];
  const tj_tir_expr_t *v = st->store.value;
  if (v->kind != TJ_TIR_ADD) return false;
  const tj_tir_expr_t *acc = v->binary.a, *prod = v->binary.b;
  if (prod->kind == TJ_TIR_BUFFER_LOAD) acc = v->binary.b, prod = v->binary.a;
  if (acc->kind != TJ_TIR_BUFFER_LOAD || acc->load.buffer != cb || prod->kind != TJ_TIR_MUL) return false;
  for (int d = 0; d < 4; d++)
    if (acc->load.indices[d] != st->store.indices[d]) return false;
  if (!match_loads(k, prod->binary.b, prod->binary.a) && !match_loads(k, prod->binary.a, prod->binary.b)) return false;
  k->st = st;
  k->N = extent_of(k, k->n_it), k->H = extent_of(k, k->y_it), k->W = extent_of(k, k->x_it);
  k->F = extent_of(k, k->f_it), k->C = extent_of(k, k->c_it);
  return true;
}

/* stmts[i] writes P (a root buffer only the conv reads) as if_then_else(cond, X, 0),
 * padded by one on each side of y and x: inlined into the input transform. */
static bool match_pad(wino_nhwc_t *k, int i) {
  tj_sched_ctx_t *c = k->c;
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return false;
  const tj_tir_stmt_t *st = nest.block->body;
  if (st->kind != TJ_TIR_BUFFER_STORE || st->store.buffer != k->pad_buf || !tj_sched_store_is_identity(nest.block, st))
    return false;
  const tj_tir_expr_t *v = st->store.value;
  if (v->kind != TJ_TIR_CALL || strcmp(v->call.op, "tir.if_then_else") || v->call.n_args != 3 ||
      v->call.args[2]->kind != TJ_TIR_FLOAT_IMM || v->call.args[2]->float_imm != 0.0)
    return false;
  int64_t ph, pw, pc;
  const tj_buffer_t *p = k->pad_buf;
  if (!tj_tir_is_const_int(p->shape[1], &ph) || !tj_tir_is_const_int(p->shape[2], &pw) ||
      !tj_tir_is_const_int(p->shape[3], &pc) || ph != k->H + 2 || pw != k->W + 2 || pc != k->C ||
      tj_sched_root_alloc(c, p) < 0 || tj_sched_is_param(c, p))
    return false;
  for (int j = 0; j < c->n_stmts; j++)
    if (j != i && j != i + 1 && tj_sched_count_uses(c->stmts[j], p) > 0) return false;
  k->pad = nest.block;
  return true;
}

static int64_t lanes_dividing(int64_t n, int64_t max_lanes) {
  int64_t l = max_lanes;
  while (l > 1 && n % l) l /= 2;
  return l;
}

/* F(4x4) where both sides are at least 14 (as the NCHW rule), else F(2x2); the GEMM
 * tile: FV vectors of output channels (up to 4, dividing them) x R tiles, at most
 * MAX_ACCS accumulators and at most MAX_R tiles. Measured (conv3x3_64_56_nhwc and the
 * seed, docs/cpu-schedule.md): R = 8 against 12 with one vector (the seed's 16 channels)
 * 0.26 against 0.31 ms a conv; with four vectors R = 4, 5 and 6 alike, 7 slower. */
static void pick_tiles(wino_nhwc_t *k, bool small_u) {
  bool f4 = k->H >= 14 && k->W >= 14 && !small_u;
  k->mt = tj_winograd(f4 ? 4 : 2);
  int64_t m = k->mt->m;
  k->TH = (k->H + m - 1) / m, k->TW = (k->W + m - 1) / m, k->T = k->TH * k->TW;
  int64_t nfv = k->F / k->fl;
  k->fv = 1;
  for (int64_t v = MAX_FV; v > 1; v--)
    if (nfv % v == 0) {
      k->fv = v;
      break;
    }
  k->r = MAX_ACCS / k->fv < MAX_R ? MAX_ACCS / k->fv : MAX_R;
  k->blocks = (k->T + k->r - 1) / k->r;
}

static bool wino_matches(tj_sched_ctx_t *c, int i, wino_nhwc_t *k) {
  *k = (wino_nhwc_t){.c = c};
  if (!c->opts->winograd || !c->opts->reorder_reductions || i + 1 >= c->n_stmts || tj_sched_lanes(c, TJ_F32) < 8)
    return false;
  if (!tj_sched_collect_nest(c->stmts[i + 1], &k->nest)) return false;
  k->b = k->nest.block;
  if (!match_update(k) || !match_pad(k, i)) return false;
  if (k->C < MIN_CHANNELS || k->F < MIN_CHANNELS || k->H < 2 || k->W < 2) return false;
  int64_t L = tj_sched_lanes(c, TJ_F32);
  k->cl = lanes_dividing(k->C, L), k->fl = lanes_dividing(k->F, L);
  if (k->cl < 4 || k->fl < 8) return false;
  pick_tiles(k, false);
  if (36 * k->C * k->F * 4 > MAX_U_BYTES) pick_tiles(k, true); /* F(4x4)'s U too large: F(2x2)'s */
  int64_t alpha = k->mt->alpha;
  return alpha * alpha * k->C * k->F * 4 <= MAX_U_BYTES;
}

/* ---- building ---- */

static const tj_tir_expr_t *fconst(wino_nhwc_t *k, double v) { return tj_tir_float(k->c->arena, TJ_F32, v); }
static const tj_tir_expr_t *i64(wino_nhwc_t *k, int64_t v) { return tj_tir_i64(k->c->arena, v); }

static const tj_tir_expr_t *load(wino_nhwc_t *k, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx) {
  for (int d = 0; d < n; d++)
    if (!idx[d]) return NULL;
  return tj_tir_load(k->c->arena, b, n, idx);
}

static const tj_tir_stmt_t *store(wino_nhwc_t *k, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx,
                                  const tj_tir_expr_t *v) {
  for (int d = 0; d < n; d++)
    if (!idx[d]) return NULL;
  return v ? tj_tir_store(k->c->arena, b, n, idx, v) : NULL;
}

/* local[row, li] (li the vector lane var) */
static const tj_tir_expr_t *lrow(wino_nhwc_t *k, const tj_buffer_t *b, int64_t row, const tj_tir_expr_t *li) {
  const tj_tir_expr_t *idx[2] = {i64(k, row), li};
  return load(k, b, 2, idx);
}

/* for li in T.vectorized(lanes): b[row, li] = value(li) */
static const tj_tir_stmt_t *lrow_store(wino_nhwc_t *k, const tj_tir_expr_t *li, int64_t lanes, const tj_buffer_t *b,
                                       int64_t row, const tj_tir_expr_t *value) {
  const tj_tir_expr_t *idx[2] = {i64(k, row), li};
  return tj_sched_loop(k->c, li, lanes, TJ_FOR_VECTORIZED, store(k, b, 2, idx, value));
}

/* U[fo, p, co * CL + l, fi] = ul[p, l] as a serial loop over the positions and lanes
 * (a stride of FL): written as 36 unrolled rows of lane-by-lane stores, these were 576
 * scalar stores in one basic block, on which LLVM's SLP vectorizer and DSE spent
 * most of the seed's cold compile (docs/cpu-schedule.md). */
static const tj_tir_stmt_t *scatter_u(wino_nhwc_t *k, const tj_tir_expr_t *fo, const tj_tir_expr_t *fi,
                                      const tj_tir_expr_t *co, const tj_buffer_t *ul) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *p = tj_sched_var(c, "wp"), *l = tj_sched_var(c, "wl");
  if (!p || !l) return NULL;
  const tj_tir_expr_t *li[2] = {p, l};
  const tj_tir_expr_t *ui[4] = {fo, p, tj_sched_add(c, tj_sched_mul(c, co, k->cl), l), fi};
  const tj_tir_stmt_t *s = store(k, k->u, 4, ui, load(k, ul, 2, li));
  int P = k->mt->alpha * k->mt->alpha;
  return tj_sched_loop(c, p, P, TJ_FOR_SERIAL, tj_sched_loop(c, l, k->cl, TJ_FOR_SERIAL, s));
}

/* U[f / FL, p, c, f % FL] = (G W[f, :, :, c] G^T)[p], per call: in parallel over the
 * vectors of output channels, vectors along c (each tap a contiguous load), stored
 * lane by lane (a stride of FL). */
static const tj_tir_stmt_t *weight_transform(wino_nhwc_t *k) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_winograd_t *mt = k->mt;
  int al = mt->alpha;
  const tj_tir_expr_t *fo = tj_sched_var(c, "wf"), *fi = tj_sched_var(c, "wfi"), *co = tj_sched_var(c, "wc");
  int64_t gshape[2] = {9, k->cl}, tshape[2] = {3 * al, k->cl};
  int64_t ushape[2] = {al * al, k->cl};
  const tj_buffer_t *gl = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_g", 2, gshape, true),
                    *gt = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_gt", 2, tshape, true);
  const tj_buffer_t *ul = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_ul", 2, ushape, true);
  if (!fo || !fi || !co || !gl || !gt || !ul) return NULL;
  const tj_tir_expr_t *f = tj_sched_add(c, tj_sched_mul(c, fo, k->fl), fi);
  const tj_tir_stmt_t *st[9 + 3 * MAX_ALPHA + MAX_ALPHA * MAX_ALPHA + 1];
  int ns = 0;
  for (int t = 0; t < 9; t++) {
    const tj_tir_expr_t *li = tj_sched_var(c, "li");
    const tj_tir_expr_t *wi[4] = {f, i64(k, t / 3), i64(k, t % 3), tj_sched_add(c, tj_sched_mul(c, co, k->cl), li)};
    st[ns++] = lrow_store(k, li, k->cl, gl, t, load(k, k->w, 4, wi));
  }
  for (int r = 0; r < al; r++) /* gt[r, j] = sum_i G[r, i] g[i, j] */
    for (int j = 0; j < 3; j++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[3];
      for (int i = 0; i < 3; i++) terms[i] = lrow(k, gl, i * 3 + j, li);
      st[ns++] = lrow_store(k, li, k->cl, gt, r * 3 + j, tj_sched_wino_lin_comb(k->c, 3, mt->g[r], terms));
    }
  for (int r = 0; r < al; r++) /* ul[r * al + b] = sum_j gt[r, j] G[b, j] */
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[3];
      for (int j = 0; j < 3; j++) terms[j] = lrow(k, gt, r * 3 + j, li);
      st[ns++] = lrow_store(k, li, k->cl, ul, r * al + b, tj_sched_wino_lin_comb(k->c, 3, mt->g[b], terms));
    }
  st[ns++] = scatter_u(k, fo, fi, co, ul);
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  body = body ? tj_tir_allocate(a, gl, tj_tir_allocate(a, gt, tj_tir_allocate(a, ul, body))) : NULL;
  body = tj_sched_loop(c, co, k->C / k->cl, TJ_FOR_SERIAL, body);
  body = tj_sched_loop(c, fi, k->fl, TJ_FOR_SERIAL, body);
  int64_t nfo = k->F / k->fl;
  return tj_sched_loop(c, fo, nfo, nfo > 1 && k->C * k->F >= 4096 ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, body);
}

/* The tile's row and column: t / TW, t % TW. */
static void tile_pos(wino_nhwc_t *k, const tj_tir_expr_t *t, const tj_tir_expr_t **ty, const tj_tir_expr_t **tx) {
  tj_arena_t *a = k->c->arena;
  *ty = t ? tj_tir_binary(a, TJ_TIR_FLOOR_DIV, t, i64(k, k->TW)) : NULL;
  *tx = t ? tj_tir_binary(a, TJ_TIR_FLOOR_MOD, t, i64(k, k->TW)) : NULL;
}

/* V[p, r, c] = (B^T d B)[p] for the R tiles of the block (image tile t = t0 + r),
 * vectors of CL input channels:
 *   d[i * a + j, l] = P[n, ty * m + i, tx * m + j, c]   (the padding inlined)
 *   col[q * a + j, l] = sum_i B^T[q, i] d[i * a + j, l]
 *   V[q * a + b, r, c] = sum_j B^T[b, j] col[q * a + j, l] */
static const tj_tir_stmt_t *input_transform(wino_nhwc_t *k, const tj_tir_expr_t *n, const tj_tir_expr_t *t0) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_winograd_t *mt = k->mt;
  int al = mt->alpha, m = mt->m;
  const tj_tir_expr_t *r = tj_sched_var(c, "vr"), *co = tj_sched_var(c, "vc");
  int64_t dshape[2] = {al * al, k->cl};
  const tj_buffer_t *d = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_d", 2, dshape, true),
                    *col = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_col", 2, dshape, true);
  if (!r || !co || !d || !col) return NULL;
  const tj_tir_expr_t *ty, *tx;
  tile_pos(k, tj_sched_add(c, t0, r), &ty, &tx);
  const tj_tir_stmt_t *st[3 * MAX_ALPHA * MAX_ALPHA];
  int ns = 0;
  for (int i = 0; i < al; i++)
    for (int j = 0; j < al; j++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li");
      const tj_tir_expr_t *pi[4] = {n, tj_sched_add(c, tj_sched_mul(c, ty, m), i64(k, i)),
                                    tj_sched_add(c, tj_sched_mul(c, tx, m), i64(k, j)),
                                    tj_sched_add(c, tj_sched_mul(c, co, k->cl), li)};
      bool ok = pi[0] && pi[1] && pi[2] && pi[3];
      st[ns++] = lrow_store(k, li, k->cl, d, i * al + j, ok ? tj_sched_producer_value(c, k->pad, pi) : NULL);
    }
  for (int q = 0; q < al; q++)
    for (int j = 0; j < al; j++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[MAX_ALPHA];
      for (int i = 0; i < al; i++) terms[i] = lrow(k, d, i * al + j, li);
      st[ns++] = lrow_store(k, li, k->cl, col, q * al + j, tj_sched_wino_lin_comb(k->c, al, mt->bt[q], terms));
    }
  for (int q = 0; q < al; q++)
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[MAX_ALPHA];
      for (int j = 0; j < al; j++) terms[j] = lrow(k, col, q * al + j, li);
      const tj_tir_expr_t *vi[3] = {i64(k, q * al + b), r, tj_sched_add(c, tj_sched_mul(c, co, k->cl), li)};
      st[ns++] = tj_sched_loop(c, li, k->cl, TJ_FOR_VECTORIZED,
                               store(k, k->v, 3, vi, tj_sched_wino_lin_comb(k->c, al, mt->bt[b], terms)));
    }
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  body = body ? tj_tir_allocate(a, d, tj_tir_allocate(a, col, body)) : NULL;
  body = tj_sched_loop(c, co, k->C / k->cl, TJ_FOR_SERIAL, body);
  return tj_sched_loop(c, r, k->r, TJ_FOR_SERIAL, body);
}

typedef struct gemm_vars {
  const tj_tir_expr_t *n, *fb, *t0, *p, *ri, *vi, *li, *ch;
  const tj_buffer_t *acc, *mloc;
} gemm_vars_t;

/* acc[ri, vi * FL + li] */
static const tj_tir_expr_t *acc_col(wino_nhwc_t *k, const gemm_vars_t *g) {
  return tj_sched_add(k->c, tj_sched_mul(k->c, g->vi, k->fl), g->li);
}

/* for ri in T.unroll(R): for vi in T.unroll(FV): for li in T.vectorized(FL): body */
static const tj_tir_stmt_t *tile_loops(wino_nhwc_t *k, gemm_vars_t *g,
                                       const tj_tir_stmt_t *(*body)(wino_nhwc_t *, gemm_vars_t *)) {
  tj_sched_ctx_t *c = k->c;
  g->ri = tj_sched_var(c, "ri"), g->vi = tj_sched_var(c, "vi"), g->li = tj_sched_var(c, "li");
  if (!g->ri || !g->vi || !g->li) return NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, g->li, k->fl, TJ_FOR_VECTORIZED, body(k, g));
  s = tj_sched_loop(c, g->vi, k->fv, k->fv > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
  return tj_sched_loop(c, g->ri, k->r, k->r > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
}

static const tj_tir_stmt_t *acc_zero(wino_nhwc_t *k, gemm_vars_t *g) {
  const tj_tir_expr_t *idx[2] = {g->ri, acc_col(k, g)};
  return store(k, g->acc, 2, idx, fconst(k, 0));
}

/* acc[r, f] += V[p, r, c] * U[fb * FV + vi, p, c, li]: a broadcast of V per tile, a
 * vector load of U per vector of output channels. */
static const tj_tir_stmt_t *acc_update(wino_nhwc_t *k, gemm_vars_t *g) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *ai[2] = {g->ri, acc_col(k, g)};
  const tj_tir_expr_t *vx[3] = {g->p, g->ri, g->ch};
  const tj_tir_expr_t *ux[4] = {tj_sched_add(c, tj_sched_mul(c, g->fb, k->fv), g->vi), g->p, g->ch, g->li};
  const tj_tir_expr_t *vl = load(k, k->v, 3, vx), *ul = load(k, k->u, 4, ux), *al = load(k, g->acc, 2, ai);
  const tj_tir_expr_t *prod = vl && ul ? tj_tir_binary(a, TJ_TIR_MUL, vl, ul) : NULL;
  return store(k, g->acc, 2, ai, prod && al ? tj_tir_binary(a, TJ_TIR_ADD, al, prod) : NULL);
}

static const tj_tir_stmt_t *acc_save(wino_nhwc_t *k, gemm_vars_t *g) {
  const tj_tir_expr_t *ai[2] = {g->ri, acc_col(k, g)}, *mi[3] = {g->p, g->ri, ai[1]};
  return store(k, g->mloc, 3, mi, load(k, g->acc, 2, ai));
}

/* OUT[n, y, x, f] = epilogue(v) for one vector of output channels. */
static const tj_tir_stmt_t *out_store(wino_nhwc_t *k, const gemm_vars_t *g, const tj_sched_epilogue_t *ep,
                                      const tj_tir_expr_t *y, const tj_tir_expr_t *x, const tj_tir_expr_t *v) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST] = {0}, *idx[4];
  const tj_tir_expr_t *f =
      tj_sched_add(c, tj_sched_mul(c, tj_sched_add(c, tj_sched_mul(c, g->fb, k->fv), g->vi), k->fl), g->li);
  vals[k->n_it] = g->n, vals[k->y_it] = y, vals[k->x_it] = x, vals[k->f_it] = f;
  for (int d = 0; d < 4; d++) {
    int it = tj_sched_iter_index(k->b, k->st->store.indices[d]);
    idx[d] = vals[it] ? tj_sched_cast_like(c, k->b->iter_vars[it].var, vals[it]) : NULL;
    if (!idx[d]) return NULL;
  }
  if (v && ep->n) v = tj_sched_apply_epilogue(c, ep, v, idx);
  return store(k, ep->n ? ep->out : k->st->store.buffer, 4, idx, v);
}

/* For tile ri of the block and vector vi of output channels: Y = A^T M A as vectors
 * along f, each output pixel stored (through the epilogue) where it is inside the
 * output:
 *   am[i * a + b, l] = sum_q A^T[i, q] mloc[q * a + b, ri, vi * FL + l]
 *   OUT[n, ty * m + i, tx * m + j, f] = sum_b A^T[j, b] am[i * a + b, l] */
static const tj_tir_stmt_t *output_tile(wino_nhwc_t *k, gemm_vars_t *g, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_winograd_t *mt = k->mt;
  int al = mt->alpha, m = mt->m;
  int64_t amshape[2] = {m * al, k->fl};
  const tj_buffer_t *am = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_am", 2, amshape, true);
  if (!am) return NULL;
  const tj_tir_stmt_t *st[MAX_ALPHA * MAX_ALPHA + MAX_ALPHA * MAX_ALPHA];
  int ns = 0;
  for (int i = 0; i < m; i++)
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *terms[MAX_ALPHA];
      g->li = tj_sched_var(c, "li");
      for (int q = 0; q < al; q++) {
        const tj_tir_expr_t *mi[3] = {i64(k, q * al + b), g->ri, acc_col(k, g)};
        terms[q] = load(k, g->mloc, 3, mi);
      }
      st[ns++] = lrow_store(k, g->li, k->fl, am, i * al + b, tj_sched_wino_lin_comb(k->c, al, mt->at[i], terms));
    }
  const tj_tir_expr_t *ty, *tx;
  tile_pos(k, tj_sched_add(c, g->t0, g->ri), &ty, &tx);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      const tj_tir_expr_t *terms[MAX_ALPHA];
      g->li = tj_sched_var(c, "li");
      for (int b = 0; b < al; b++) terms[b] = lrow(k, am, i * al + b, g->li);
      const tj_tir_expr_t *y = tj_sched_add(c, tj_sched_mul(c, ty, m), i64(k, i));
      const tj_tir_expr_t *x = tj_sched_add(c, tj_sched_mul(c, tx, m), i64(k, j));
      const tj_tir_stmt_t *s = out_store(k, g, ep, y, x, tj_sched_wino_lin_comb(k->c, al, mt->at[j], terms));
      s = tj_sched_loop(c, g->li, k->fl, TJ_FOR_VECTORIZED, s);
      const tj_tir_expr_t *in_y = y ? tj_tir_binary(a, TJ_TIR_LT, y, i64(k, k->H)) : NULL;
      const tj_tir_expr_t *in_x = x ? tj_tir_binary(a, TJ_TIR_LT, x, i64(k, k->W)) : NULL;
      const tj_tir_expr_t *cond = in_y && in_x ? tj_tir_binary(a, TJ_TIR_AND, in_y, in_x) : NULL;
      st[ns++] = s && cond ? tj_tir_if(a, cond, s, NULL) : NULL;
    }
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  return body ? tj_tir_allocate(a, am, body) : NULL;
}

/* One block of R tiles for the output channels fb: the GEMMs position by position, then
 * the output transform of its R x FV vectors. */
static const tj_tir_stmt_t *gemm_block(wino_nhwc_t *k, gemm_vars_t *g, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  int P = k->mt->alpha * k->mt->alpha;
  const tj_tir_stmt_t *upd = tj_sched_loop(c, g->ch, k->C, TJ_FOR_SERIAL, tile_loops(k, g, acc_update));
  const tj_tir_stmt_t *three[3] = {tile_loops(k, g, acc_zero), upd, tile_loops(k, g, acc_save)};
  const tj_tir_stmt_t *pos = tj_sched_wino_seq(k->c, 3, three);
  pos = pos ? tj_tir_allocate(a, g->acc, pos) : NULL;
  pos = tj_sched_loop(c, g->p, P, TJ_FOR_SERIAL, pos);
  g->ri = tj_sched_var(c, "ri"), g->vi = tj_sched_var(c, "vi");
  if (!g->ri || !g->vi) return NULL;
  const tj_tir_stmt_t *out = output_tile(k, g, ep);
  out = tj_sched_loop(c, g->vi, k->fv, TJ_FOR_SERIAL, out);
  out = tj_sched_loop(c, g->ri, k->r, TJ_FOR_SERIAL, out);
  const tj_tir_stmt_t *two[2] = {pos, out};
  const tj_tir_stmt_t *blk = tj_sched_wino_seq(k->c, 2, two);
  return blk ? tj_tir_allocate(a, g->mloc, blk) : NULL;
}

/* In parallel over (n, block of R tiles): the block's input transform into V (36 KB
 * at 64 channels, in L1/L2), then for each group fb of FV vectors of output channels
 * the GEMMs and the output transform. Blocks of several R-tile blocks sharing one V
 * (bands, as the NCHW rule has) were slower on Zen 4: docs/cpu-schedule.md. */
static const tj_tir_stmt_t *blocks(wino_nhwc_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  int P = k->mt->alpha * k->mt->alpha;
  gemm_vars_t g = {0};
  const tj_tir_expr_t *it = tj_sched_var(c, "wg"), *unf[2];
  int64_t ext[2] = {k->N, k->blocks};
  g.fb = tj_sched_var(c, "wf");
  if (!it || !g.fb || !tj_sched_unfuse(c, it, 2, ext, unf)) return NULL;
  g.n = unf[0], g.t0 = tj_sched_mul(c, unf[1], k->r);
  g.p = tj_sched_var(c, "p"), g.ch = tj_sched_var(c, "rc");
  int64_t ashape[2] = {k->r, k->fv * k->fl}, mshape[3] = {P, k->r, k->fv * k->fl};
  g.acc = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_acc", 2, ashape, true);
  g.mloc = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_m", 3, mshape, true);
  if (!g.p || !g.ch || !g.acc || !g.mloc) return NULL;
  const tj_tir_stmt_t *gb = tj_sched_loop(c, g.fb, k->F / (k->fl * k->fv), TJ_FOR_SERIAL, gemm_block(k, &g, ep));
  const tj_tir_stmt_t *two[2] = {input_transform(k, g.n, g.t0), gb};
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, 2, two);
  body = body ? tj_tir_allocate(a, k->v, body) : NULL;
  int64_t iters = k->N * k->blocks;
  return tj_sched_loop(c, it, iters, iters > 1 ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, body);
}

/* U from the caller (packed at load, OHWI read through perm {0, 3, 1, 2}) when W is a
 * constant of the model, else a buffer the kernel fills. */
static bool plan_weights(wino_nhwc_t *k) {
  int P = k->mt->alpha * k->mt->alpha;
  int64_t ushape[4] = {k->F / k->fl, P, k->C, k->fl}, vshape[3] = {P, k->r, k->C};
  k->u = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_u", 4, ushape, false);
  k->v = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_v", 3, vshape, false);
  if (!k->u || !k->v) return false;
  tj_tir_prepack_t want = {
      .param = k->w_param, .ndim = 4, .perm = {0, 3, 1, 2}, .lanes = k->fl, .dtype = TJ_F32, .winograd_m = k->mt->m};
  const tj_buffer_t *given = k->c->opts->prepacked ? tj_sched_prepack(k->c, &want, k->u) : NULL;
  k->u_given = given != NULL;
  if (given) k->u = given;
  return true;
}

static const tj_tir_stmt_t *build(wino_nhwc_t *k, const tj_sched_epilogue_t *ep) {
  if (!plan_weights(k)) return NULL;
  const tj_tir_stmt_t *parts[2];
  int n = 0;
  if (!k->u_given) parts[n++] = weight_transform(k);
  parts[n++] = blocks(k, ep);
  const tj_tir_stmt_t *s = tj_sched_wino_seq(k->c, n, parts);
  if (s && !k->u_given) s = tj_tir_allocate(k->c->arena, k->u, s);
  return s;
}

int tj_sched_rule_winograd_nhwc(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  wino_nhwc_t k;
  if (!wino_matches(c, i, &k)) return 0;
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i + 1, i + 2, k.st->store.buffer, &ep);
  return tj_sched_winograd_commit(c, build(&k, &ep), k.pad_buf, k.st->store.buffer, &ep, out);
}
