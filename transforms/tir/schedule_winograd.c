/* Schedule rule for 3x3 stride-1 convolutions in NCHW by Winograd's minimal filtering
 * (Lavin & Gray 2015, "Fast Algorithms for Convolutional Neural Networks"), tried before
 * the conv rule (schedule_rules.h).
 *
 * F(m x m, 3x3) computes an m x m block of outputs from an a x a block of the padded
 * input (a = m + 2) with a^2 multiplies per input/output channel pair instead of 9 m^2:
 *   U = G g G^T            (a x a, per output channel f and input channel c; g the 3x3 weight)
 *   V = B^T d B            (a x a, per tile and input channel; d the tile's a x a input)
 *   M[p] = sum_c V[p, c] U[p, c, f]    for each of the a^2 positions p: a GEMM
 *   Y = A^T M A            (m x m outputs of the tile)
 * The conv as LegalizeOps writes it (a padding nest, then
 *   C[n, f, y, x] = C[n, f, y, x] + P[n, c, y + ry, x + rx] * W[f, c, ry, rx])
 * with its elementwise epilogue (batch_norm, residual add, relu) becomes
 *
 *   [U = G W G^T into a [F, a^2, C, 1] buffer, unless the weight is a constant of the
 *    model: then the caller makes U once, at load (runtime/prepack_winograd.c)]
 *   for (n, tb) in T.parallel:              (a band of VECS * L tiles: whole tile rows)
 *     V = T.alloc_buffer((a^2, C, VECS * L))   (per chunk; 295 KB for 64 channels)
 *     for ty in the band: for c: for tx (vectors along the tiles of the row):
 *       V[p, c, (ty - band start) * TW + tx] = B^T d B, d read from X through the padding
 *     for fb:                                  (ROWS output channels x VECS vectors of tiles)
 *       mloc = T.alloc_buffer((a^2, ROWS, VECS * L), scope="local")
 *       for p:  acc = 0; for c: acc[r, t] += U[f, p, c] * V[p, c, t];  mloc[p] = acc
 *       for r, vi:  Y = A^T mloc A as vectors along the tiles, interleaved into output
 *                   rows; OUT[n, f, y, x] = epilogue(Y) row by row (contiguous in x)
 *
 * The GEMM is the rows x vectors idea of schedule_conv.c's matmul tile, along the tiles:
 * per c, ROWS broadcasts of U and VECS loads of V for ROWS * VECS FMAs. With the vectors
 * along the tiles, the output transform's results are whole output rows after one
 * interleave, so the epilogue (batch_norm, the residual add, relu) reads and writes
 * contiguous rows. The band's V is made inside the parallel iteration that reads it, so
 * it stays in L2: made whole first (V for all tiles: 2 MB at 64 channels and 56x56, a
 * parallel loop of its own) it went to L3 or memory between the two loops, and each
 * conv's input transform took 0.37-0.9 ms of thread-CPU against ~0.1-0.15 fused
 * (Ice Lake, 1 thread, ResNet-18; docs/cpu-schedule.md). The rounding differs from
 * the direct sum (exact in real arithmetic only), so the rule runs only in the default
 * float mode (opts->reorder_reductions); --strict-float keeps the direct conv, bit-exact.
 * Error against float64 numpy: docs/numerics.md. */
#include <string.h>

#include "support/winograd.h"
#include "transforms/tir/schedule_rules.h"

#define MAX_ALPHA TJ_WINOGRAD_MAX_ALPHA
#define MAX_ROWS 8
/* Below this many input or output channels the transforms cost more than the
 * multiplies saved (a 3x3 conv with 16 channels is a few microseconds either way). */
#define MIN_CHANNELS 16
/* U of a 256 x 256 conv by F(2x2) (4.2 MB) fits; not 256 x 256 by F(4x4) (9.4 MB) nor
 * 512 x 512 by F(2x2) (16.8 MB). */
#define MAX_U_BYTES (9 << 19)

typedef tj_winograd_t wino_mats_t;

typedef struct wino {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st, *init;
  const tj_block_t *pad;
  const tj_buffer_t *pad_buf, *w;
  int w_param;
  int n_it, f_it, y_it, x_it, c_it;
  int64_t N, F, H, W, C;
  const wino_mats_t *mt;
  int64_t TH, TW, T;  /* tile rows, columns (a power of two up to L), tiles per image */
  int64_t L;          /* lanes: the GEMM's vectors run along the tiles */
  int64_t Tp, THp;    /* tiles (and tile rows) rounded up to whole GEMM blocks */
  int64_t fl;         /* lanes along the output channels (the per-call weight transform) */
  int64_t rows, vecs; /* the GEMM tile: ROWS output channels x VECS vectors of tiles */
  const tj_buffer_t *u, *v; /* U [F, a^2, C, 1]; V [a^2, C, VECS * L]: one band of tiles */
  bool u_given;             /* U is a parameter the caller packs at load */
} wino_t;

static int64_t extent_of(const wino_t *k, int it) { return k->nest.extent[k->nest.loop_of_iter[it]]; }

/* ---- matching ---- */

static bool is_iter(const wino_t *k, const tj_tir_expr_t *e, int it) { return tj_sched_iter_index(k->b, e) == it; }

/* e is iter a + iter b, in either order. */
static bool is_sum(const wino_t *k, const tj_tir_expr_t *e, int a, int b) {
  if (e->kind != TJ_TIR_ADD) return false;
  return (is_iter(k, e->binary.a, a) && is_iter(k, e->binary.b, b)) ||
         (is_iter(k, e->binary.a, b) && is_iter(k, e->binary.b, a));
}

static bool spatial_iter(const wino_t *k, const tj_tir_expr_t *e, int *it) {
  *it = tj_sched_iter_index(k->b, e);
  return *it >= 0 && k->b->iter_vars[*it].kind == TJ_ITER_SPATIAL;
}

static bool reduce_iter(const wino_t *k, const tj_tir_expr_t *e, int *it) {
  *it = tj_sched_iter_index(k->b, e);
  return *it >= 0 && k->b->iter_vars[*it].kind == TJ_ITER_REDUCE;
}

static bool f32_buffer(const tj_buffer_t *b, int ndim) {
  return b->ndim == ndim && !b->strides && !b->elem_offset && tj_dtype_eq(b->dtype, TJ_F32);
}

/* The weight load W[f, c, ry, rx] (a 3x3 float32 parameter) and the input load
 * P[n, c, y + ry, x + rx]; records the iter vars. */
static bool match_loads(wino_t *k, const tj_tir_expr_t *wl, const tj_tir_expr_t *pl) {
  if (wl->kind != TJ_TIR_BUFFER_LOAD || pl->kind != TJ_TIR_BUFFER_LOAD) return false;
  const tj_buffer_t *w = wl->load.buffer, *p = pl->load.buffer;
  if (!f32_buffer(w, 4) || !f32_buffer(p, 4) || wl->load.n_indices != 4 || pl->load.n_indices != 4) return false;
  int ry, rx;
  if (!spatial_iter(k, wl->load.indices[0], &k->f_it) || !reduce_iter(k, wl->load.indices[1], &k->c_it) ||
      !reduce_iter(k, wl->load.indices[2], &ry) || !reduce_iter(k, wl->load.indices[3], &rx) || ry == rx)
    return false;
  if (extent_of(k, ry) != 3 || extent_of(k, rx) != 3) return false;
  const tj_tir_expr_t *const *pi = pl->load.indices;
  if (!is_iter(k, pi[0], k->n_it) || !is_iter(k, pi[1], k->c_it) || !is_sum(k, pi[2], k->y_it, ry) ||
      !is_sum(k, pi[3], k->x_it, rx))
    return false;
  k->w_param = -1;
  for (int i = 0; i < k->c->func->n_params && k->c->func->buffer_map; i++)
    if (k->c->func->buffer_map[i] == w) k->w_param = i;
  int64_t s[4];
  for (int d = 0; d < 4; d++)
    if (!tj_tir_is_const_int(w->shape[d], &s[d])) return false;
  k->w = w;
  k->pad_buf = p;
  return k->w_param >= 0 && s[2] == 3 && s[3] == 3;
}

/* C[n, f, y, x] = C[n, f, y, x] + P[..] * W[..] from C = 0, float32. */
static bool match_update(wino_t *k) {
  const tj_block_t *b = k->b;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE || k->nest.n != 7 ||
      k->nest.n_reduce != 3)
    return false;
  const tj_buffer_t *cb = st->store.buffer;
  double z;
  if (in->store.buffer != cb || !f32_buffer(cb, 4) || st->store.n_indices != 4 ||
      in->store.value->kind != TJ_TIR_FLOAT_IMM)
    return false;
  z = in->store.value->float_imm;
  if (z != 0.0) return false;
  int its[4];
  for (int d = 0; d < 4; d++) {
    if (!spatial_iter(k, st->store.indices[d], &its[d]) || in->store.indices[d] != st->store.indices[d]) return false;
    for (int e = 0; e < d; e++)
      if (its[e] == its[d]) return false;
  }
  k->n_it = its[0], k->y_it = its[2], k->x_it = its[3];
  const tj_tir_expr_t *v = st->store.value;
  if (v->kind != TJ_TIR_ADD) return false;
  const tj_tir_expr_t *acc = v->binary.a, *prod = v->binary.b;
  if (prod->kind == TJ_TIR_BUFFER_LOAD) acc = v->binary.b, prod = v->binary.a;
  if (acc->kind != TJ_TIR_BUFFER_LOAD || acc->load.buffer != cb || prod->kind != TJ_TIR_MUL) return false;
  for (int d = 0; d < 4; d++)
    if (acc->load.indices[d] != st->store.indices[d]) return false;
  if (!match_loads(k, prod->binary.b, prod->binary.a) && !match_loads(k, prod->binary.a, prod->binary.b)) return false;
  if (its[1] != k->f_it) return false;
  k->st = st, k->init = in;
  k->N = extent_of(k, k->n_it), k->F = extent_of(k, k->f_it), k->H = extent_of(k, k->y_it);
  k->W = extent_of(k, k->x_it), k->C = extent_of(k, k->c_it);
  return true;
}

/* stmts[i] writes P (a root buffer only the conv reads) as if_then_else(cond, X, 0),
 * padded by one on each side: inlined into the input transform, which reads it past
 * the output's last tile too (the condition is false there). */
static bool match_pad(wino_t *k, int i) {
  tj_sched_ctx_t *c = k->c;
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return false;
  const tj_tir_stmt_t *st = nest.block->body;
  if (st->kind != TJ_TIR_BUFFER_STORE || st->store.buffer != k->pad_buf || !tj_sched_store_is_identity(nest.block, st))
    return false;
  const tj_tir_expr_t *v = st->store.value;
  if (v->kind != TJ_TIR_CALL || strcmp(v->call.op, "tir.if_then_else") || v->call.n_args != 3) return false;
  double z;
  if (v->call.args[2]->kind != TJ_TIR_FLOAT_IMM) return false;
  z = v->call.args[2]->float_imm;
  int64_t ph, pw;
  const tj_buffer_t *p = k->pad_buf;
  if (z != 0.0 || !tj_tir_is_const_int(p->shape[2], &ph) || !tj_tir_is_const_int(p->shape[3], &pw) ||
      ph != k->H + 2 || pw != k->W + 2 || tj_sched_root_alloc(c, p) < 0 || tj_sched_is_param(c, p))
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

/* F(4x4) where the tiles are many (m = 4 cuts the multiplies 4x, m = 2 2.25x); F(2x2)
 * where 4x4 tiles would be mostly past the output (7x7: 4 tiles of 16 for 49 outputs)
 * or make a single band (one parallel iteration: 14x14 has 16 tiles of 4x4, 64 of 2x2
 * in two bands).
 * The GEMM's vectors run along the tiles (t = ty * TW + tx, TW a power of two up to L,
 * so a vector holds whole tile rows or one row's L tiles); its tile is ROWS output
 * channels (broadcasts of U) x VECS vectors of tiles, VECS 3 or 2, whichever pads the
 * tile vectors less (3 on a tie). False when a tile row is wider than a vector (W > m L:
 * the output rows would take segments). Measured: see docs/cpu-schedule.md. */
static bool pick_tiles_for(wino_t *k, int m);

static bool pick_tiles(wino_t *k) {
  if (k->H >= 14 && k->W >= 14 && pick_tiles_for(k, 4) && k->N * k->Tp / (k->vecs * k->L) >= 2) return true;
  return pick_tiles_for(k, 2);
}

static bool pick_tiles_for(wino_t *k, int mm) {
  k->mt = tj_winograd(mm);
  int64_t m = k->mt->m;
  k->L = tj_sched_lanes(k->c, TJ_F32);
  k->TH = (k->H + m - 1) / m;
  int64_t tw = (k->W + m - 1) / m;
  if (tw > k->L) return false;
  k->TW = 1;
  while (k->TW < tw) k->TW *= 2;
  k->T = k->TH * k->TW;
  k->fl = lanes_dividing(k->F, k->L);
  k->rows = 1;
  for (int64_t r = MAX_ROWS; r > 1; r /= 2)
    if (k->F % r == 0) {
      k->rows = r;
      break;
    }
  int64_t tv = (k->T + k->L - 1) / k->L;
  k->vecs = tv <= 1 ? 1 : (tv + 2) / 3 * 3 <= (tv + 1) / 2 * 2 ? 3 : 2;
  k->Tp = (tv + k->vecs - 1) / k->vecs * k->vecs * k->L;
  k->THp = k->Tp / k->TW;
  return true;
}

static bool wino_matches(tj_sched_ctx_t *c, int i, wino_t *k) {
  *k = (wino_t){.c = c};
  if (!c->opts->winograd || !c->opts->reorder_reductions || i + 1 >= c->n_stmts || tj_sched_lanes(c, TJ_F32) < 8) return false;
  if (!tj_sched_collect_nest(c->stmts[i + 1], &k->nest)) return false;
  k->b = k->nest.block;
  if (!match_update(k) || !match_pad(k, i)) return false;
  if (k->C < MIN_CHANNELS || k->F < MIN_CHANNELS || k->H < 2 || k->W < 2) return false;
  if (!pick_tiles(k)) return false;
  /* Transformed weights over MAX_U_BYTES come from memory on every call (each band
   * reads all of U), (m+2)^2 / 9 times the direct conv's bytes: ResNet-18's 512-channel
   * convs at 7x7 (F(2x2): 16.8 MB against 9.4) took 4-5 ms of thread-CPU in the model
   * against 2.1-2.5 for the direct tile (pool trace, 2 threads, Ice Lake, loaded host).
   * Its 256-channel ones at 14x14 by F(2x2) (4.2 MB, two bands) are ~17% faster than
   * direct (docs/cpu-schedule.md). */
  int64_t alpha = k->mt->alpha;
  return alpha * alpha * k->C * k->F * 4 <= MAX_U_BYTES;
}

/* ---- building ---- */

static const tj_tir_expr_t *fconst(wino_t *k, double v) { return tj_tir_float(k->c->arena, TJ_F32, v); }

const tj_tir_expr_t *tj_sched_wino_lin_comb(tj_sched_ctx_t *c, int n, const double *coef,
                                            const tj_tir_expr_t *const *term) {
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *s = NULL;
  for (int i = 0; i < n; i++) {
    double w = coef[i];
    if (w == 0) continue;
    const tj_tir_expr_t *t = term[i];
    bool neg = w < 0;
    if (w != 1 && w != -1) t = tj_tir_binary(a, TJ_TIR_MUL, t, tj_tir_float(a, TJ_F32, neg ? -w : w));
    if (!t) return NULL;
    if (!s) s = neg ? tj_tir_binary(a, TJ_TIR_SUB, tj_tir_float(a, TJ_F32, 0), t) : t;
    else s = tj_tir_binary(a, neg ? TJ_TIR_SUB : TJ_TIR_ADD, s, t);
    if (!s) return NULL;
  }
  return s ? s : tj_tir_float(a, TJ_F32, 0);
}

static const tj_tir_expr_t *i64(wino_t *k, int64_t v) { return tj_tir_i64(k->c->arena, v); }

static const tj_tir_expr_t *load2(wino_t *k, const tj_buffer_t *b, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  const tj_tir_expr_t *idx[2] = {x, y};
  return x && y ? tj_tir_load(k->c->arena, b, 2, idx) : NULL;
}

/* for fi in T.vectorized(lanes): b[row, fi] = value(fi) */
static const tj_tir_stmt_t *vec_store2(wino_t *k, const tj_tir_expr_t *fi, int64_t lanes, const tj_buffer_t *b,
                                       int64_t row, const tj_tir_expr_t *value) {
  const tj_tir_expr_t *idx[2] = {i64(k, row), fi};
  const tj_tir_stmt_t *s = value && idx[0] ? tj_tir_store(k->c->arena, b, 2, idx, value) : NULL;
  return tj_sched_loop(k->c, fi, lanes, TJ_FOR_VECTORIZED, s);
}

const tj_buffer_t *tj_sched_wino_buffer(tj_sched_ctx_t *c, const tj_buffer_t *named_after, const char *suffix, int n,
                                        const int64_t *shape, bool local) {
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *sh[6];
  for (int d = 0; d < n; d++)
    if (!(sh[d] = tj_tir_i64(a, shape[d]))) return NULL;
  const tj_buffer_t *b = tj_buffer_new(a, tj_arena_printf(a, "%s_%s", named_after->name, suffix), TJ_F32, n, sh, NULL);
  if (b && local) ((tj_buffer_t *)b)->scope = "local";
  return b;
}

const tj_tir_stmt_t *tj_sched_wino_seq(tj_sched_ctx_t *c, int n, const tj_tir_stmt_t *const *s) {
  for (int i = 0; i < n; i++)
    if (!s[i]) return NULL;
  return n == 1 ? s[0] : tj_tir_seq(c->arena, n, s);
}

/* The padded input P[n, c, py, px] as the padding nest computes it (inlined). */
static const tj_tir_expr_t *pad_value(wino_t *k, const tj_tir_expr_t *n, const tj_tir_expr_t *ch,
                                      const tj_tir_expr_t *py, const tj_tir_expr_t *px) {
  const tj_tir_expr_t *in[4] = {n, ch, py, px};
  return tj_sched_producer_value(k->c, k->pad, in);
}

/* U[fo * L + fi, p, c, 0] = ul[p, fi] as a serial loop over the positions and lanes (a
 * stride of a^2 C): written as a^2 unrolled rows of lane-by-lane stores, these were
 * hundreds of scalar stores in one basic block, on which LLVM's SLP vectorizer and DSE
 * spent most of the kernel's cold compile (as in schedule_winograd_nhwc.c). */
static const tj_tir_stmt_t *scatter_u(wino_t *k, const tj_tir_expr_t *fo, const tj_tir_expr_t *cv,
                                      const tj_buffer_t *ul) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *p = tj_sched_var(c, "wp"), *fi = tj_sched_var(c, "wl");
  if (!p || !fi) return NULL;
  const tj_tir_expr_t *idx[4] = {tj_sched_add(c, tj_sched_mul(c, fo, k->fl), fi), p, cv, i64(k, 0)};
  const tj_tir_expr_t *v = load2(k, ul, p, fi);
  const tj_tir_stmt_t *s = v && idx[0] && idx[3] ? tj_tir_store(k->c->arena, k->u, 4, idx, v) : NULL;
  int P = k->mt->alpha * k->mt->alpha;
  return tj_sched_loop(c, p, P, TJ_FOR_SERIAL, tj_sched_loop(c, fi, k->fl, TJ_FOR_SERIAL, s));
}

/* U[f, p, c, 0] = (G W[f, c] G^T)[p], per call: for c in
 * T.parallel: for f (vectors): the 9 taps gathered once, then G along each axis. */
static const tj_tir_stmt_t *weight_transform(wino_t *k) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const wino_mats_t *mt = k->mt;
  int al = mt->alpha;
  const tj_tir_expr_t *cv = tj_sched_var(c, "wc"), *fo = tj_sched_var(c, "wf");
  int64_t gshape[2] = {9, k->fl}, tshape[2] = {3 * al, k->fl};
  int64_t ushape[2] = {al * al, k->fl};
  const tj_buffer_t *gl = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_g", 2, gshape, true),
                    *gt = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_gt", 2, tshape, true);
  const tj_buffer_t *ul = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_ul", 2, ushape, true);
  if (!cv || !fo || !gl || !gt || !ul) return NULL;
  const tj_tir_stmt_t *st[9 + 3 * MAX_ALPHA + MAX_ALPHA * MAX_ALPHA + 1];
  int ns = 0;
  /* g[t, fi] = W[fo * L + fi, c, t / 3, t % 3]: scalar copies of each kernel's 9
   * contiguous taps (a 16-lane gather along f touched 16 pages per load: the transform
   * took 4-5 ms of ResNet's 256-channel conv at 14x14 that way, 1 thread, Ice Lake) */
  {
    const tj_tir_expr_t *fi = tj_sched_var(c, "fi"), *t = tj_sched_var(c, "t");
    const tj_tir_expr_t *idx[4] = {tj_sched_add(c, tj_sched_mul(c, fo, k->fl), fi), cv,
                                   t ? tj_tir_binary(a, TJ_TIR_FLOOR_DIV, t, i64(k, 3)) : NULL,
                                   t ? tj_tir_binary(a, TJ_TIR_FLOOR_MOD, t, i64(k, 3)) : NULL};
    const tj_tir_expr_t *gi[2] = {t, fi};
    const tj_tir_stmt_t *cp = idx[0] && idx[2] && idx[3] ? tj_tir_store(a, gl, 2, gi, tj_tir_load(a, k->w, 4, idx)) : NULL;
    cp = tj_sched_loop(c, t, 9, TJ_FOR_UNROLLED, cp);
    st[ns++] = tj_sched_loop(c, fi, k->fl, TJ_FOR_SERIAL, cp);
  }
  /* gt[a, j] = sum_i G[a, i] g[i, j] */
  for (int r = 0; r < al; r++)
    for (int j = 0; j < 3; j++) {
      const tj_tir_expr_t *fi = tj_sched_var(c, "fi"), *terms[3];
      for (int i = 0; i < 3; i++) terms[i] = load2(k, gl, i64(k, i * 3 + j), fi);
      st[ns++] = vec_store2(k, fi, k->fl, gt, r * 3 + j, tj_sched_wino_lin_comb(k->c, 3, mt->g[r], terms));
    }
  /* ul[r * al + b, fi] = sum_j gt[r, j] G[b, j] */
  for (int r = 0; r < al; r++)
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *fi = tj_sched_var(c, "fi"), *terms[3];
      for (int j = 0; j < 3; j++) terms[j] = load2(k, gt, i64(k, r * 3 + j), fi);
      st[ns++] = vec_store2(k, fi, k->fl, ul, r * al + b, tj_sched_wino_lin_comb(k->c, 3, mt->g[b], terms));
    }
  st[ns++] = scatter_u(k, fo, cv, ul);
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  body = body ? tj_tir_allocate(a, gl, tj_tir_allocate(a, gt, tj_tir_allocate(a, ul, body))) : NULL;
  body = tj_sched_loop(c, cv, k->C, TJ_FOR_SERIAL, body);
  return tj_sched_loop(c, fo, k->F / k->fl, k->C * k->F >= 4096 ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, body);
}

/* V[p, c, t] = (B^T d B)[p] for the tiles t = (ty - band start) * TW + tx of band tb
 * of image n and every channel c, vectors along the tiles of the row (TW rounded up to
 * a power of two: the tiles past the output read zeros and are never written back):
 *   rows[i, x] = P[n, c, ty * m + i, x]            (masked vector loads of the padding)
 *   ph[i, j, tx] = rows[i, tx * m + j]             (stride-m vector loads: each phase of x contiguous)
 *   col[a, j, tx] = sum_i B^T[a, i] ph[i, j, tx]   (vectors over tx)
 *   V[n, a * al + b, c, ty * TW + tx] = sum_j B^T[b, j] col[a, j, tx]
 * Vectorized over the channels instead, each of the a^2 loads per tile was a 16-lane
 * gather from 16 planes: the transform took 0.6 ms of ResNet's 256-channel conv at
 * 14x14 (1 thread, Ice Lake), as long as its GEMMs. */
static const tj_tir_stmt_t *input_transform(wino_t *k, const tj_tir_expr_t *n, const tj_tir_expr_t *tb) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const wino_mats_t *mt = k->mt;
  int al = mt->alpha, m = mt->m;
  int64_t lanes = tj_sched_lanes(c, TJ_F32), xw = (k->TW * m + 2 + lanes - 1) / lanes * lanes;
  int64_t band_rows = k->vecs * k->L / k->TW; /* the rows past TH read the padding: zeros */
  const tj_tir_expr_t *sr = tj_sched_var(c, "vs"), *ch = tj_sched_var(c, "vc");
  if (!sr || !ch) return NULL;
  const tj_tir_expr_t *ty = tj_sched_add(c, tj_sched_mul(c, tb, band_rows), sr);
  int64_t rshape[2] = {al, xw}, pshape[2] = {al * al, k->TW};
  const tj_buffer_t *rows = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_rows", 2, rshape, true);
  const tj_buffer_t *ph = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_ph", 2, pshape, true),
                    *col = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_col", 2, pshape, true);
  if (!rows || !ph || !col) return NULL;
  const tj_tir_stmt_t *st[MAX_ALPHA + 1 + 2 * MAX_ALPHA * MAX_ALPHA];
  int ns = 0;
  for (int i = 0; i < al; i++) {
    const tj_tir_expr_t *xo = tj_sched_var(c, "xo"), *xi = tj_sched_var(c, "xi");
    const tj_tir_expr_t *x = tj_sched_add(c, tj_sched_mul(c, xo, lanes), xi);
    const tj_tir_expr_t *py = tj_sched_add(c, tj_sched_mul(c, ty, m), i64(k, i));
    const tj_tir_expr_t *ri[2] = {i64(k, i), x}, *v = pad_value(k, n, ch, py, x);
    const tj_tir_stmt_t *s = v && ri[0] ? tj_tir_store(a, rows, 2, ri, v) : NULL;
    s = tj_sched_loop(c, xi, lanes, TJ_FOR_VECTORIZED, s);
    st[ns++] = tj_sched_loop(c, xo, xw / lanes, TJ_FOR_SERIAL, s);
  }
  /* the phase split: for i: for j in T.unroll(al): for tx in T.vectorized(TW), each
   * phase a stride-m vector load (codegen: the span's vectors and shuffles) */
  {
    const tj_tir_expr_t *i = tj_sched_var(c, "i"), *tx = tj_sched_var(c, "tx"), *j = tj_sched_var(c, "j");
    const tj_tir_expr_t *src = load2(k, rows, i, tj_sched_add(c, tj_sched_mul(c, tx, m), j));
    const tj_tir_expr_t *di[2] = {tj_sched_add(c, tj_sched_mul(c, i, al), j), tx};
    const tj_tir_stmt_t *cp = src && di[0] ? tj_tir_store(a, ph, 2, di, src) : NULL;
    cp = tj_sched_loop(c, tx, k->TW, k->TW > 1 ? TJ_FOR_VECTORIZED : TJ_FOR_SERIAL, cp);
    cp = tj_sched_loop(c, j, al, TJ_FOR_UNROLLED, cp);
    st[ns++] = tj_sched_loop(c, i, al, TJ_FOR_SERIAL, cp);
  }
  for (int r = 0; r < al; r++)
    for (int j = 0; j < al; j++) {
      const tj_tir_expr_t *tx = tj_sched_var(c, "tx"), *terms[MAX_ALPHA];
      for (int i = 0; i < al; i++) terms[i] = load2(k, ph, i64(k, i * al + j), tx);
      st[ns++] = vec_store2(k, tx, k->TW, col, r * al + j, tj_sched_wino_lin_comb(k->c, al, mt->bt[r], terms));
    }
  const tj_tir_expr_t *t0 = tj_sched_mul(c, sr, k->TW);
  for (int r = 0; r < al; r++)
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *tx = tj_sched_var(c, "tx"), *terms[MAX_ALPHA];
      for (int j = 0; j < al; j++) terms[j] = load2(k, col, i64(k, r * al + j), tx);
      const tj_tir_expr_t *idx[3] = {i64(k, r * al + b), ch, tj_sched_add(c, t0, tx)};
      const tj_tir_expr_t *v = tj_sched_wino_lin_comb(k->c, al, mt->bt[b], terms);
      const tj_tir_stmt_t *s = v && idx[0] && idx[2] ? tj_tir_store(a, k->v, 3, idx, v) : NULL;
      st[ns++] = tj_sched_loop(c, tx, k->TW, TJ_FOR_VECTORIZED, s);
    }
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  body = body ? tj_tir_allocate(a, rows, tj_tir_allocate(a, ph, tj_tir_allocate(a, col, body))) : NULL;
  body = tj_sched_loop(c, ch, k->C, TJ_FOR_SERIAL, body);
  return tj_sched_loop(c, sr, band_rows, TJ_FOR_SERIAL, body);
}

typedef struct gemm_vars {
  const tj_tir_expr_t *n, *fb, *tb, *p, *r, *vi, *li, *ch;
  const tj_buffer_t *acc, *mloc;
} gemm_vars_t;

/* acc[r, vi * L + li] (and mloc[p, r, vi * L + li]). */
static const tj_tir_expr_t *acc_index(wino_t *k, const gemm_vars_t *g) {
  return tj_sched_add(k->c, tj_sched_mul(k->c, g->vi, k->L), g->li);
}

/* for r in T.unroll(ROWS): for vi in T.unroll(VECS): for li in T.vectorized(L): body */
static const tj_tir_stmt_t *tile_loops(wino_t *k, gemm_vars_t *g, const tj_tir_stmt_t *(*body)(wino_t *, gemm_vars_t *)) {
  tj_sched_ctx_t *c = k->c;
  g->r = tj_sched_var(c, "r"), g->vi = tj_sched_var(c, "vi"), g->li = tj_sched_var(c, "li");
  if (!g->r || !g->vi || !g->li) return NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, g->li, k->L, TJ_FOR_VECTORIZED, body(k, g));
  s = tj_sched_loop(c, g->vi, k->vecs, k->vecs > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
  return tj_sched_loop(c, g->r, k->rows, k->rows > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
}

static const tj_tir_stmt_t *acc_zero(wino_t *k, gemm_vars_t *g) {
  const tj_tir_expr_t *idx[2] = {g->r, acc_index(k, g)};
  return idx[1] ? tj_tir_store(k->c->arena, g->acc, 2, idx, fconst(k, 0)) : NULL;
}

static const tj_tir_expr_t *f_index(wino_t *k, const gemm_vars_t *g) {
  return tj_sched_add(k->c, tj_sched_mul(k->c, g->fb, k->rows), g->r);
}

/* The block's first tile. */
static const tj_tir_expr_t *block_tile(wino_t *k, const gemm_vars_t *g) {
  return tj_sched_mul(k->c, g->tb, k->vecs * k->L);
}

/* acc[r, t] += U[f, p, c, 0] * V[n, p, c, t]: one broadcast of U per row, one vector
 * load of V per vector of tiles. */
static const tj_tir_stmt_t *acc_update(wino_t *k, gemm_vars_t *g) {
  tj_arena_t *a = k->c->arena;
  const tj_tir_expr_t *ai[2] = {g->r, acc_index(k, g)};
  const tj_tir_expr_t *vi[3] = {g->p, g->ch, ai[1]};
  const tj_tir_expr_t *ui[4] = {f_index(k, g), g->p, g->ch, i64(k, 0)};
  if (!ai[1] || !ui[0]) return NULL;
  const tj_tir_expr_t *prod = tj_tir_binary(a, TJ_TIR_MUL, tj_tir_load(a, k->u, 4, ui), tj_tir_load(a, k->v, 3, vi));
  const tj_tir_expr_t *sum = prod ? tj_tir_binary(a, TJ_TIR_ADD, tj_tir_load(a, g->acc, 2, ai), prod) : NULL;
  return sum ? tj_tir_store(a, g->acc, 2, ai, sum) : NULL;
}

static const tj_tir_stmt_t *acc_save(wino_t *k, gemm_vars_t *g) {
  tj_arena_t *a = k->c->arena;
  const tj_tir_expr_t *ai[2] = {g->r, acc_index(k, g)}, *mi[3] = {g->p, g->r, ai[1]};
  const tj_tir_expr_t *v = ai[1] ? tj_tir_load(a, g->acc, 2, ai) : NULL;
  return v ? tj_tir_store(a, g->mloc, 3, mi, v) : NULL;
}

/* cond && x < bound (x alone when cond is NULL). */
static const tj_tir_expr_t *and_lt(wino_t *k, const tj_tir_expr_t *cond, const tj_tir_expr_t *x, int64_t bound) {
  tj_arena_t *a = k->c->arena;
  const tj_tir_expr_t *lt = x ? tj_tir_binary(a, TJ_TIR_LT, x, i64(k, bound)) : NULL;
  if (!lt) return NULL;
  return cond ? tj_tir_binary(a, TJ_TIR_AND, cond, lt) : lt;
}

/* for x in T.vectorized(lanes), x = x0 + xi: OUT[n, f, y, x] = epilogue(yrow[i, off + x]) */
static const tj_tir_stmt_t *row_store(wino_t *k, gemm_vars_t *g, const tj_sched_epilogue_t *ep, const tj_buffer_t *yrow,
                                      int i, const tj_tir_expr_t *off, const tj_tir_expr_t *y, int64_t x0, int64_t lanes) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *xo = lanes < k->L || x0 ? NULL : tj_sched_var(c, "xo"), *xi = tj_sched_var(c, "xi");
  if (!xi) return NULL;
  const tj_tir_expr_t *x = xo ? tj_sched_add(c, tj_sched_mul(c, xo, k->L), xi) : tj_sched_add(c, i64(k, x0), xi);
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST] = {0}, *idx[4];
  vals[k->n_it] = g->n, vals[k->f_it] = f_index(k, g), vals[k->y_it] = y, vals[k->x_it] = x;
  for (int d = 0; d < 4; d++) {
    int it = tj_sched_iter_index(k->b, k->st->store.indices[d]);
    idx[d] = vals[it] ? tj_sched_cast_like(c, k->b->iter_vars[it].var, vals[it]) : NULL;
    if (!idx[d]) return NULL;
  }
  const tj_tir_expr_t *v = load2(k, yrow, i64(k, i), tj_sched_add(c, off, x));
  if (v && ep->n) v = tj_sched_apply_epilogue(c, ep, v, idx);
  const tj_buffer_t *out = ep->n ? ep->out : k->st->store.buffer;
  const tj_tir_stmt_t *s = v ? tj_tir_store(a, out, 4, idx, v) : NULL;
  s = tj_sched_loop(c, xi, lanes, TJ_FOR_VECTORIZED, s);
  return xo ? tj_sched_loop(c, xo, k->W / k->L, TJ_FOR_SERIAL, s) : s;
}

/* For the vector vi of tiles of row r of the block: Y = A^T M A as vectors along the
 * tiles, interleaved into output rows (yrow[i, tile * m + j], lane by lane), then each
 * output row written contiguously through the epilogue (a residual read the same way):
 * the tiles' rows of the vector (L / TW of them), y < H, x < W as whole vectors plus a
 * shorter one. */
static const tj_tir_stmt_t *output_vector(wino_t *k, gemm_vars_t *g, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const wino_mats_t *mt = k->mt;
  int al = mt->alpha, m = mt->m;
  int64_t amshape[2] = {m * al, k->L}, yshape[2] = {m, k->L * m};
  const tj_buffer_t *am = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_am", 2, amshape, true),
                    *yrow = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_yrow", 2, yshape, true);
  if (!am || !yrow) return NULL;
  enum { MAX_ST = MAX_ALPHA * MAX_ALPHA * 2 + 64 };
  const tj_tir_stmt_t *st[MAX_ST];
  int ns = 0;
  /* am[i * al + b, l] = sum_q A^T[i, q] mloc[q * al + b, r, vi * L + l] */
  for (int i = 0; i < m; i++)
    for (int b = 0; b < al; b++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[MAX_ALPHA];
      g->li = li;
      for (int q = 0; q < al; q++) {
        const tj_tir_expr_t *mi[3] = {i64(k, q * al + b), g->r, acc_index(k, g)};
        terms[q] = mi[0] && mi[2] ? tj_tir_load(a, g->mloc, 3, mi) : NULL;
      }
      st[ns++] = vec_store2(k, li, k->L, am, i * al + b, tj_sched_wino_lin_comb(k->c, al, mt->at[i], terms));
    }
  /* yrow[i, l * m + j] = sum_b am[i * al + b, l] A^T[j, b] */
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      const tj_tir_expr_t *li = tj_sched_var(c, "li"), *terms[MAX_ALPHA];
      for (int b = 0; b < al; b++) terms[b] = load2(k, am, i64(k, i * al + b), li);
      const tj_tir_expr_t *yi[2] = {i64(k, i), li ? tj_sched_add(c, tj_sched_mul(c, li, m), i64(k, j)) : NULL};
      const tj_tir_expr_t *v = tj_sched_wino_lin_comb(k->c, al, mt->at[j], terms);
      const tj_tir_stmt_t *s = v && yi[0] && yi[1] ? tj_tir_store(a, yrow, 2, yi, v) : NULL;
      st[ns++] = tj_sched_loop(c, li, k->L, TJ_FOR_VECTORIZED, s);
    }
  /* the vector's tile rows: ty = (t0 + s * TW) / TW */
  int64_t nsub = k->L / k->TW, full = k->W / k->L * k->L, tail = k->W - full;
  const tj_tir_expr_t *t0 = tj_sched_add(c, block_tile(k, g), tj_sched_mul(c, g->vi, k->L));
  const tj_tir_expr_t *ty0 = t0 ? tj_tir_binary(a, TJ_TIR_FLOOR_DIV, t0, i64(k, k->TW)) : NULL;
  if (!ty0) return NULL;
  for (int64_t s = 0; s < nsub; s++) {
    const tj_tir_expr_t *ty = tj_sched_add(c, ty0, i64(k, s)), *off = i64(k, s * k->TW * m);
    for (int i = 0; i < m; i++) {
      const tj_tir_expr_t *y = tj_sched_add(c, tj_sched_mul(c, ty, m), i64(k, i));
      const tj_tir_stmt_t *parts[2];
      int np = 0;
      if (full) parts[np++] = row_store(k, g, ep, yrow, i, off, y, 0, k->L);
      if (tail) parts[np++] = row_store(k, g, ep, yrow, i, off, y, full, tail);
      const tj_tir_stmt_t *rs = tj_sched_wino_seq(k->c, np, parts);
      const tj_tir_expr_t *cond = NULL;
      if (k->THp * m > k->H) cond = and_lt(k, cond, y, k->H);
      if (rs && cond) rs = tj_tir_if(a, cond, rs, NULL);
      if (ns >= MAX_ST) return NULL;
      st[ns++] = rs;
    }
  }
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, ns, st);
  return body ? tj_tir_allocate(a, am, tj_tir_allocate(a, yrow, body)) : NULL;
}

/* In parallel over bands (n, tb) of VECS x L tiles: the band's input transform into V
 * (in L2), then for each block fb of ROWS output channels the GEMMs, position by position
 *   for p: acc = 0; for c: acc[r, t] += U[f, p, c] * V[p, c, t]; mloc[p] = acc
 * and the output transform of its ROWS x VECS x L tiles. */
static const tj_tir_stmt_t *gemm_and_output(wino_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  int P = k->mt->alpha * k->mt->alpha;
  int64_t nfb = k->F / k->rows, ntb = k->Tp / (k->vecs * k->L);
  gemm_vars_t g = {0};
  const tj_tir_expr_t *fo = tj_sched_var(c, "wg"), *unf[2];
  int64_t ext[2] = {k->N, ntb};
  g.fb = tj_sched_var(c, "wf");
  if (!fo || !g.fb || !tj_sched_unfuse(c, fo, 2, ext, unf)) return NULL;
  g.n = unf[0], g.tb = unf[1];
  g.p = tj_sched_var(c, "p"), g.ch = tj_sched_var(c, "rc");
  int64_t ashape[2] = {k->rows, k->vecs * k->L}, mshape[3] = {P, k->rows, k->vecs * k->L};
  g.acc = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_acc", 2, ashape, true);
  g.mloc = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_m", 3, mshape, true);
  if (!g.p || !g.ch || !g.acc || !g.mloc) return NULL;
  const tj_tir_stmt_t *upd = tj_sched_loop(c, g.ch, k->C, TJ_FOR_SERIAL, tile_loops(k, &g, acc_update));
  const tj_tir_stmt_t *three[3] = {tile_loops(k, &g, acc_zero), upd, tile_loops(k, &g, acc_save)};
  const tj_tir_stmt_t *pos = tj_sched_wino_seq(k->c, 3, three);
  pos = pos ? tj_tir_allocate(a, g.acc, pos) : NULL;
  pos = tj_sched_loop(c, g.p, P, TJ_FOR_SERIAL, pos);
  g.r = tj_sched_var(c, "r"), g.vi = tj_sched_var(c, "vi");
  if (!g.r || !g.vi) return NULL;
  const tj_tir_stmt_t *out = output_vector(k, &g, ep);
  out = tj_sched_loop(c, g.vi, k->vecs, TJ_FOR_SERIAL, out);
  out = tj_sched_loop(c, g.r, k->rows, TJ_FOR_SERIAL, out);
  const tj_tir_stmt_t *two[2] = {pos, out};
  const tj_tir_stmt_t *blk = tj_sched_wino_seq(k->c, 2, two);
  blk = blk ? tj_tir_allocate(a, g.mloc, blk) : NULL;
  blk = tj_sched_loop(c, g.fb, nfb, TJ_FOR_SERIAL, blk);
  const tj_tir_stmt_t *band[2] = {input_transform(k, g.n, g.tb), blk};
  const tj_tir_stmt_t *body = tj_sched_wino_seq(k->c, 2, band);
  body = body ? tj_tir_allocate(a, k->v, body) : NULL;
  int64_t iters = k->N * ntb;
  return tj_sched_loop(c, fo, iters, iters > 1 ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, body);
}

/* U from the caller (packed at load) when W is a constant of the model, else a buffer
 * the kernel fills. */
static bool plan_weights(wino_t *k) {
  int P = k->mt->alpha * k->mt->alpha;
  int64_t ushape[4] = {k->F, P, k->C, 1}, vshape[3] = {P, k->C, k->vecs * k->L};
  k->u = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_u", 4, ushape, false);
  k->v = tj_sched_wino_buffer(k->c, k->st->store.buffer, "wino_v", 3, vshape, false);
  if (!k->u || !k->v) return false;
  tj_tir_prepack_t want = {.param = k->w_param, .ndim = 4, .perm = {0, 1, 2, 3}, .lanes = 1, .dtype = TJ_F32,
                           .winograd_m = k->mt->m};
  const tj_buffer_t *given = k->c->opts->prepacked ? tj_sched_prepack(k->c, &want, k->u) : NULL;
  k->u_given = given != NULL;
  if (given) k->u = given;
  return true;
}

static const tj_tir_stmt_t *build(wino_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  if (!plan_weights(k)) return NULL;
  const tj_tir_stmt_t *parts[3];
  int n = 0;
  if (!k->u_given) parts[n++] = weight_transform(k);
  parts[n++] = gemm_and_output(k, ep);
  const tj_tir_stmt_t *s = tj_sched_wino_seq(k->c, n, parts);
  if (s && !k->u_given) s = tj_tir_allocate(a, k->u, s);
  return s;
}

int tj_sched_rule_winograd(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  wino_t k;
  if (!wino_matches(c, i, &k)) return 0;
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i + 1, i + 2, k.st->store.buffer, &ep);
  return tj_sched_winograd_commit(c, build(&k, &ep), k.pad_buf, k.st->store.buffer, &ep, out);
}

/* The rule's result for a Winograd conv (either layout) built as r, with its epilogue
 * fused: the padding copy and the conv's output (when an epilogue stage writes the
 * result instead) are no longer allocated. Returns the statements consumed. */
int tj_sched_winograd_commit(tj_sched_ctx_t *c, const tj_tir_stmt_t *r, const tj_buffer_t *pad,
                             const tj_buffer_t *conv_out, const tj_sched_epilogue_t *ep, const tj_tir_stmt_t **out) {
  r = r ? tj_sched_with_before(c, ep, r) : NULL;
  if (!r) return (void)(c->oom = true), 1;
  *out = r;
  c->drop_alloc[tj_sched_root_alloc(c, pad)] = true;
  int ci = tj_sched_root_alloc(c, conv_out);
  if (ep->n && ci >= 0) c->drop_alloc[ci] = true;
  c->stats.conv++;
  c->stats.winograd++;
  c->stats.fused_epilogues += ep->n;
  return 2 + ep->span;
}
