/* Schedule rule for pointwise (1x1) convolutions in NCHW (schedule_rules.h).
 *
 * A 1x1 conv with stride 1 is, per image, a GEMM: C[f, p] = sum_c W[f, c] * X[c, p]
 * with p = y * W + x over the flattened spatial dims (contiguous in NCHW). The
 * general conv rule vectorizes the output channels and tiles along x, so its
 * write-back transposes every tile into rows of x (16 x 16 in registers), and for the
 * small channel counts of MobileNetV2's expand and project convs (16-160 input
 * channels) that transpose costs as much as the FMAs. Here the vector runs along p
 * instead, and the register tile is ROWS output channels x VECS vectors of pixels:
 *
 *   for fo in T.parallel(N * P / (VECS * L) * F / ROWS):      n, pb, fb = unfuse(fo)
 *     acc = T.alloc_buffer((ROWS, VECS * L), scope="local")
 *     for r, vi, fi:  acc[r, vi * L + fi] = init
 *     for c:                                                  (the reduction, in order)
 *       for r in T.unroll(ROWS): for vi in T.unroll(VECS): for fi in T.vectorized(L):
 *         acc[r, vi * L + fi] = g(acc[r, vi * L + fi], X[n, c, p], W[f, c, 0, 0])
 *     for r, vi, fi:  OUT[n, f, p] = epilogue(acc[r, vi * L + fi])
 *
 * with f = fb * ROWS + r and p = pb * VECS * L + vi * L + fi. When H * W is not a
 * multiple of VECS * L (14x14, 7x7) the last block runs past the last pixel: its loads of
 * X are masked and its write-back goes lane by lane (tail_store). Per c that is VECS
 * contiguous loads of X and ROWS broadcasts of W for ROWS * VECS FMAs (the GEMM tile of
 * schedule_conv.c with the roles of the operands swapped), and the write-back stores
 * contiguous vectors of pixels with the batch-norm / clip / residual epilogue fused.
 *
 * The pixel index is built as y = p // W, x = p % W (exact everywhere); every access
 * [.., p // W, p % W] of a buffer whose last dim is W is then rewritten to a flat view
 * [.., p] of the same storage (same data var, last two dims merged), so the loads and
 * stores are contiguous vectors. When some access is not of that form (a stride-2 conv,
 * an input of another shape) the rule declines and the conv rule takes the nest.
 *
 * Each output starts from the init value and takes its terms in the original c order,
 * so the results keep their bits (tests/models/pointwise_kernels.rx). */
#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

/* Accumulators per tile: 24 of AVX-512's 32 registers (the rest hold the broadcasts
 * and a vector of X), 12 of 16 otherwise. */
#define MAX_ACC_WIDE 24
#define MAX_ACC 12
#define MAX_ROWS 8
#define MAX_VECS 8
#define MAX_VIEWS 8
#define MIN_USEFUL_ACC 4.0
/* A tile with a masked tail counts its useful accumulators at this discount against one
 * without (the masks and the tail's scalar write-back): 32->192 at 28x28 (784 pixels)
 * took 0.07 ms as 3 x 7 vectors, 0.12 as 6 x 4 vectors over 13 blocks (the last one
 * 3/4 masked). */
#define TAIL_PENALTY 0.85
/* A tile without a tail of at least this many accumulators is taken over any tile with
 * one: ResNet-50's 256->64 at 56x56 (196 vectors of pixels) took 0.83-0.84 ms as 4 x 6
 * vectors over 33 blocks (the last one 2/3 masked, every load of X masked) and
 * 0.735-0.744 as 4 x 4 over 49 (bench_kernels, thread-CPU min of 100, Ice Lake, 2
 * rounds; 8 x 2 took 0.86-0.90, 4 x 7 1.13). */
#define EXACT_MIN_ACC 16
#define CHANNEL_TILE_VECS_MIN 3
#define CHANNEL_TILE_MAX_WEIGHT_BYTES (512 << 10)
/* On a host whose FP units are half as wide as its vectors (opts->datapath_bits: Zen 4
 * runs a 512-bit FMA as two 256-bit halves, one per cycle), this tile is bound by its
 * FMAs, lanes past the last pixel included, and with the weight a constant (packed once,
 * at load, by the conv rule: no per-call repack) the channel tile takes every 1x1 conv
 * with a tail over fewer pixel vectors than this and at least 2 vectors of output
 * channels: the 7x7 ones (49 pixels in 64 lanes) and 14x14 ones (196 in 208). AMD EPYC
 * Zen 4, 1 thread, MobileNetV2 `tvmjit bench --profile` medians, 2 rounds: 320->1280
 * at 7x7 0.556-0.564 -> 0.439-0.445 ms, 960->320 0.394-0.399 -> 0.299-0.304, 960->160
 * 0.198-0.200 -> 0.155-0.159, 576->160 0.122-0.126 -> 0.096-0.098, 384->64 at 14x14
 * 0.117-0.119 -> 0.100-0.105, 192->64 0.060-0.062 -> 0.053-0.055. The 28x28 ones (49
 * whole vectors, a tail only from the tile's shape) stay: 192->32 at 28x28 took
 * 0.114-0.117 ms as the conv rule's 7 x 2 tile against 0.091-0.093 here. On Ice Lake
 * (two full-width FMA ports) the channel tile measured no faster than this one for the
 * 7x7 convs (docs/cpu-schedule.md), so full-width hosts keep this tile. */
#define CHANNEL_TILE_MAX_PIXEL_VECTORS 16
#define CHANNEL_TILE_CONSTANT_VECS_MIN 2

typedef struct pointwise {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st, *init;
  int n_it, f_it, y_it, x_it, c_it; /* iter var indices; c_it: the one reduce var of extent > 1 */
  int64_t N, F, H, W, C, lanes, rows, vecs;
  int64_t blocks;   /* pixel blocks of vecs * lanes; the last one may run past H * W */
  bool mask_loads;  /* building the update of a tile that may run past H * W */
  const tj_block_t *pad; /* the padding nest inlined into the conv's loads, or NULL */
  const tj_buffer_t *pad_buf;
  const tj_tir_expr_t *fi; /* the lane var: no floordiv/floormod of it may remain */
  int n_views;
  const tj_buffer_t *view_from[MAX_VIEWS], *view_to[MAX_VIEWS];
  bool declined; /* an access along the pixels was left gathered */
  const tj_buffer_t *weight, *packed; /* W[f, c, 0, 0] read as packed[fb, c, 0, 0, r] (packed_weight) */
} pointwise_t;

static int64_t extent_of(const pointwise_t *k, int it) { return k->nest.extent[k->nest.loop_of_iter[it]]; }

static bool has_tail(const pointwise_t *k) { return k->blocks * k->vecs * k->lanes != k->H * k->W; }

/* ---- matching ---- */

typedef struct f32_scan {
  bool ok;
} f32_scan_t;

static bool only_f32(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  f32_scan_t *s = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && !tj_dtype_eq(e->dtype, TJ_F32)) s->ok = false;
  return s->ok;
}

/* C[n, f, y, x] = g(C[n, f, y, x], ...) over float32, with one reduce var of extent > 1
 * and the others of extent 1 (a 1x1 kernel's ry, rx). */
static bool match_update(pointwise_t *k) {
  const tj_block_t *b = k->b;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE) return false;
  const tj_buffer_t *cb = st->store.buffer;
  if (in->store.buffer != cb || cb->ndim != 4 || st->store.n_indices != 4 || cb->strides || cb->elem_offset ||
      !tj_dtype_eq(cb->dtype, TJ_F32) || k->nest.n - k->nest.n_reduce != 4)
    return false;
  int its[4];
  for (int d = 0; d < 4; d++) {
    its[d] = tj_sched_iter_index(b, st->store.indices[d]);
    if (its[d] < 0 || b->iter_vars[its[d]].kind != TJ_ITER_SPATIAL || in->store.indices[d] != st->store.indices[d])
      return false;
    for (int e = 0; e < d; e++)
      if (its[e] == its[d]) return false;
  }
  k->n_it = its[0], k->f_it = its[1], k->y_it = its[2], k->x_it = its[3];
  k->c_it = -1;
  for (int it = 0; it < b->n_iter_vars; it++) {
    if (b->iter_vars[it].kind != TJ_ITER_REDUCE || extent_of(k, it) == 1) continue;
    if (k->c_it >= 0) return false;
    k->c_it = it;
  }
  if (k->c_it < 0 || !tj_sched_pure_update(b, st) || tj_sched_count_uses(in, cb) != 1) return false;
  f32_scan_t s = {true};
  tj_tir_visitor_t v = {.expr = only_f32, .ctx = &s};
  tj_tir_visit_expr(&v, st->store.value);
  k->st = st, k->init = in;
  k->N = extent_of(k, k->n_it), k->F = extent_of(k, k->f_it), k->H = extent_of(k, k->y_it);
  k->W = extent_of(k, k->x_it), k->C = extent_of(k, k->c_it);
  return s.ok;
}

/* The most useful tile (see pick_tile) among those without a tail when `exact`, else
 * among all; its useful accumulators, 0 when there is none. */
static double best_tile(pointwise_t *k, int64_t nv, int64_t budget, bool exact) {
  int64_t P = k->H * k->W;
  double best = 0;
  k->rows = k->vecs = 0;
  for (int64_t v = 1; v <= MAX_VECS; v++)
    for (int64_t r = 1; r <= MAX_ROWS; r++) {
      int64_t blocks = (nv + v - 1) / v;
      bool tail = blocks * v * k->lanes != P;
      if (k->F % r || r * v > budget || (exact && tail)) continue;
      double useful = (double)(r * v) * (double)P / (double)(blocks * v * k->lanes);
      if (tail) useful *= TAIL_PENALTY;
      if (useful > best + 1e-9 || (useful > best - 1e-9 && r + v < k->rows + k->vecs))
        best = useful, k->rows = r, k->vecs = v, k->blocks = blocks;
    }
  return best;
}

static const tj_buffer_t *find_weight(const pointwise_t *k);

/* The conv's weight is a constant of the model that the conv rule would pack at load. */
static bool constant_weight(const pointwise_t *k) {
  const tj_sched_ctx_t *c = k->c;
  const tj_buffer_t *w = find_weight(k);
  for (int p = 0; w && p < c->func->n_params && p < 64; p++)
    if (c->func->buffer_map[p] == w) return c->opts->prepacked && (c->opts->constant_params >> p & 1);
  return false;
}

/* The tile: VECS vectors along the pixels by ROWS output channels (dividing F), the most
 * useful accumulators within the register budget (ROWS * VECS times the share of lanes
 * that hold pixels: blocks of VECS vectors past H * W compute masked lanes), then the
 * fewest loads per FMA (ROWS + VECS smallest); a tile without a tail first when one has
 * EXACT_MIN_ACC accumulators. 7x7 = 49 pixels: 4 vectors, 77% of the lanes; 14x14 =
 * 196: 5 blocks of 3 vectors, 82%. */
static bool pick_tile(pointwise_t *k) {
  int bits = k->c->opts->vector_bits;
  k->lanes = tj_sched_lanes(k->c, TJ_F32);
  int64_t P = k->H * k->W;
  if (k->lanes < 8) return false;
  int64_t nv = (P + k->lanes - 1) / k->lanes, budget = bits >= 512 ? MAX_ACC_WIDE : MAX_ACC;
  double best = best_tile(k, nv, budget, true);
  if (best < EXACT_MIN_ACC) best = best_tile(k, nv, budget, false);
  /* Fewer useful accumulators than that is no GEMM tile: the conv rule does as well. */
  if (best < MIN_USEFUL_ACC) return false;
  /* With a masked tail, the conv rule's tile of 7 pixels x 3 vectors of output channels
   * (schedule_conv.c, channel_tile) does better while its per-call weight repack is
   * small: MobileNetV2's 64->384 and 96->576 at 14x14 took 0.13 and 0.28 ms that way,
   * 0.18 and 0.345 here; 160->960 at 7x7 (614 KB of weights) 0.37-0.41 there, 0.16 here.
   * With the weight packed at load and half-width FP units it does for any size
   * (CHANNEL_TILE_MAX_PIXEL_VECTORS): every lane holds an output. */
  if (!has_tail(k) || bits < 512) return true;
  int64_t wide = k->lanes * CHANNEL_TILE_VECS_MIN;
  if (k->F % wide == 0 && k->F * k->C * 4 <= CHANNEL_TILE_MAX_WEIGHT_BYTES) return false;
  int dp = k->c->opts->datapath_bits;
  bool half_width = dp > 0 && dp < bits;
  return !half_width || k->F % (k->lanes * CHANNEL_TILE_CONSTANT_VECS_MIN) || nv >= CHANNEL_TILE_MAX_PIXEL_VECTORS ||
         !constant_weight(k);
}

/* stmts[i] writes a root buffer at its identity indices that only stmts[i + 1] reads:
 * the padding (for a 1x1 conv, a copy), inlined into the conv's loads. */
static bool match_pad(pointwise_t *k, int i) {
  tj_sched_ctx_t *c = k->c;
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return false;
  const tj_tir_stmt_t *st = nest.block->body;
  if (st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(nest.block, st)) return false;
  const tj_buffer_t *p = st->store.buffer;
  if (tj_sched_root_alloc(c, p) < 0 || tj_sched_is_param(c, p) || tj_sched_count_uses(k->st, p) == 0) return false;
  for (int j = 0; j < c->n_stmts; j++)
    if (j != i && j != i + 1 && tj_sched_count_uses(c->stmts[j], p) > 0) return false;
  k->pad = nest.block;
  k->pad_buf = p;
  return true;
}

static bool pointwise_matches(tj_sched_ctx_t *c, int i, pointwise_t *k) {
  *k = (pointwise_t){.c = c};
  if (i >= c->n_stmts || !tj_sched_collect_nest(c->stmts[i], &k->nest) || !k->nest.n_reduce) return false;
  k->b = k->nest.block;
  return match_update(k) && pick_tile(k);
}

/* ---- flat views of [.., H, W] buffers ---- */

static const tj_tir_expr_t *strip_plus_zero(const tj_tir_expr_t *e) {
  int64_t z;
  while (e->kind == TJ_TIR_ADD) {
    if (tj_tir_is_const_int(e->binary.b, &z) && z == 0) e = e->binary.a;
    else if (tj_tir_is_const_int(e->binary.a, &z) && z == 0) e = e->binary.b;
    else break;
  }
  return e;
}

/* The view of `b` with its last two dims merged (same storage). */
static const tj_buffer_t *flat_view(pointwise_t *k, const tj_buffer_t *b) {
  for (int i = 0; i < k->n_views; i++)
    if (k->view_from[i] == b) return k->view_to[i];
  if (k->n_views == MAX_VIEWS) return NULL;
  tj_arena_t *a = k->c->arena;
  tj_buffer_t *v = TJ_ARENA_NEW(a, tj_buffer_t);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, b->ndim - 1);
  int64_t h, w;
  if (!v || !shape) return (void)(k->c->oom = true), NULL;
  if (!tj_tir_is_const_int(b->shape[b->ndim - 2], &h) || !tj_tir_is_const_int(b->shape[b->ndim - 1], &w)) return NULL;
  *v = *b;
  for (int d = 0; d + 2 < b->ndim; d++) shape[d] = b->shape[d];
  shape[b->ndim - 2] = tj_tir_int(a, b->shape[b->ndim - 1]->dtype, h * w);
  v->ndim = b->ndim - 1;
  v->shape = shape;
  v->name = tj_arena_printf(a, "%s_flat", b->name);
  if (!shape[b->ndim - 2] || !v->name) return (void)(k->c->oom = true), NULL;
  k->view_from[k->n_views] = b;
  k->view_to[k->n_views++] = v;
  return v;
}

/* An access b[.., p // W, p % W] (b's last dim W, no strides) becomes view[.., p]:
 * returns the view and writes its indices to out; NULL when it does not have that form. */
static const tj_buffer_t *flat_access(pointwise_t *k, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx,
                                      const tj_tir_expr_t **out) {
  int64_t w, dw, mw;
  if (n < 2 || b->ndim != n || b->strides || !tj_tir_is_const_int(b->shape[n - 1], &w) || w != k->W) return NULL;
  const tj_tir_expr_t *y = strip_plus_zero(idx[n - 2]), *x = strip_plus_zero(idx[n - 1]);
  if (y->kind != TJ_TIR_FLOOR_DIV || x->kind != TJ_TIR_FLOOR_MOD || !tj_tir_is_const_int(y->binary.b, &dw) ||
      !tj_tir_is_const_int(x->binary.b, &mw) || dw != w || mw != w ||
      !tj_struct_equal_tir_expr(y->binary.a, x->binary.a))
    return NULL;
  for (int d = 0; d + 2 < n; d++) out[d] = idx[d];
  out[n - 2] = y->binary.a;
  return flat_view(k, b);
}

/* if_then_else(p < H * W, load, 0): codegen reads it with a masked load, so the lanes
 * past the last pixel (the last channel's row runs to the buffer's end) read nothing. */
static const tj_tir_expr_t *masked(pointwise_t *k, const tj_tir_expr_t *p, const tj_tir_expr_t *load) {
  tj_arena_t *a = k->c->arena;
  const tj_tir_expr_t *args[3] = {tj_tir_binary(a, TJ_TIR_LT, p, tj_tir_int(a, p->dtype, k->H * k->W)), load,
                                  tj_tir_float(a, load->dtype, 0.0)};
  return args[0] && args[2] ? tj_tir_call(a, load->dtype, "tir.if_then_else", 3, args) : NULL;
}

static const tj_tir_expr_t *flatten_load(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  pointwise_t *k = m->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return NULL;
  const tj_tir_expr_t *r = tj_tir_mutate_expr_children(m, e);
  if (!r || r->kind != TJ_TIR_BUFFER_LOAD) return r;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
  const tj_buffer_t *v = flat_access(k, r->load.buffer, r->load.n_indices, r->load.indices, idx);
  if (!v) return r;
  const tj_tir_expr_t *l = tj_tir_load(m->arena, v, r->load.n_indices - 1, idx);
  if (l && k->mask_loads) l = masked(k, idx[r->load.n_indices - 2], l);
  if (!l) m->failed = true;
  return l;
}

static const tj_tir_expr_t *flatten_loads(pointwise_t *k, const tj_tir_expr_t *e) {
  if (!e) return NULL;
  tj_tir_mutator_t m = {.arena = k->c->arena, .expr = flatten_load, .ctx = k};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, e);
  if (m.failed || !r) k->c->oom = true;
  return m.failed ? NULL : r;
}

/* ---- inlining the padding ---- */

static const tj_tir_expr_t *inline_pad(pointwise_t *k, const tj_tir_expr_t *e) {
  if (!e || !k->pad) return e;
  const tj_tir_expr_t *r = tj_sched_inline_producer(k->c, e, k->pad, k->pad_buf);
  if (!r) k->c->oom = true;
  return r;
}

/* ---- building ---- */

typedef struct pixel_scan {
  const tj_tir_expr_t *lane;
  bool gathered;
} pixel_scan_t;

static bool find_gather(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  pixel_scan_t *s = v->ctx;
  if ((e->kind == TJ_TIR_FLOOR_DIV || e->kind == TJ_TIR_FLOOR_MOD) && tj_tir_expr_uses_var(e, s->lane)) s->gathered = true;
  return !s->gathered;
}

/* Notes when a floordiv/floormod of the lane var is left in e (an access not flattened). */
static const tj_tir_expr_t *check_flat(pointwise_t *k, const tj_tir_expr_t *e) {
  if (!e) return NULL;
  pixel_scan_t s = {k->fi, false};
  tj_tir_visitor_t v = {.expr = find_gather, .ctx = &s};
  tj_tir_visit_expr(&v, e);
  k->declined |= s.gathered;
  return e;
}

typedef struct tile_vars {
  const tj_tir_expr_t *n, *f, *p;  /* this element's image, output channel and pixel */
  const tj_tir_expr_t *fb;         /* its tile of output channels (f = fb * ROWS + r) */
  const tj_tir_expr_t *r, *lane;   /* its acc row and column */
  const tj_tir_expr_t *const *reduce; /* by iter var: the reduce loop vars (NULL in init / store) */
  const tj_sched_epilogue_t *ep;
  const tj_buffer_t *acc;
  const tj_buffer_t *partial; /* blocked over c: the group's tiles between c blocks */
  const tj_tir_expr_t *g;     /* this tile's place in the group */
} tile_vars_t;

/* ---- the weights packed in tile order ----
 * A tile reads W[f, c, 0, 0] for its ROWS output channels at every c: ROWS broadcasts
 * from ROWS rows of W, C * 4 bytes apart, and with the input channels blocked (960 ->
 * 320 at 7x7: runs of 128-160 bytes, a row apart) a pattern the prefetchers follow
 * poorly while the weights come from memory (every inference, in the whole model). A
 * constant weight is packed once, at load, as [F / ROWS, C, 1, 1, ROWS]
 * (schedule_prepack.c): the ROWS values of one c are adjacent and a tile's weights are
 * one contiguous run. Same values, same order of the terms: same bits. A weight passed
 * in keeps its layout (a per-call copy would not pay for itself). MobileNetV2 in the
 * whole model (Ice Lake, 1 thread, `tvmjit bench --profile` kernel medians of 40 runs,
 * 3 rounds interleaved with the OIHW layout): 160->960 at 7x7 0.162-0.167 -> 0.136-0.156
 * ms (x3), 960->160 0.155-0.157 -> 0.147-0.156 (x2), 960->320 0.310-0.316 -> 0.299-0.310;
 * the 14x14 to 112x112 ones unchanged. */

/* The parameter the update reads at [f, c, a, b] (a, b free of the tile's other vars). */
static const tj_buffer_t *find_weight(const pointwise_t *k) {
  const tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *fv = k->b->iter_vars[k->f_it].var, *cv = k->b->iter_vars[k->c_it].var;
  for (int p = 0; p < c->func->n_params; p++) {
    const tj_buffer_t *w = c->func->buffer_map ? c->func->buffer_map[p] : NULL;
    const tj_tir_expr_t *l = w ? tj_sched_single_load(k->st->store.value, w) : NULL;
    if (!l || w->ndim != 4 || l->load.n_indices != 4 || w->strides || w->elem_offset || l->load.indices[0] != fv ||
        l->load.indices[1] != cv || !tj_dtype_eq(w->dtype, TJ_F32))
      continue;
    bool plain = true;
    for (int d = 2; d < 4; d++) {
      int it = tj_sched_iter_index(k->b, l->load.indices[d]);
      int64_t z;
      plain &= (it >= 0 && k->b->iter_vars[it].kind == TJ_ITER_REDUCE && it != k->c_it) ||
               (tj_tir_is_const_int(l->load.indices[d], &z) && z == 0);
    }
    if (plain) return w;
  }
  return NULL;
}

static void packed_weight(pointwise_t *k) {
  tj_sched_ctx_t *c = k->c;
  const tj_buffer_t *w = find_weight(k);
  if (!w || k->rows < 2 || !c->opts->prepacked) return;
  int param = -1;
  for (int p = 0; p < c->func->n_params; p++)
    if (c->func->buffer_map[p] == w) param = p;
  tj_tir_prepack_t want = {.param = param, .ndim = 4, .lanes = (int)k->rows, .dtype = TJ_F32, .perm = {1, 2, 3, 0}};
  const tj_tir_expr_t *shape[5] = {tj_tir_i64(c->arena, k->F / k->rows), w->shape[1], w->shape[2], w->shape[3],
                                   tj_tir_i64(c->arena, k->rows)};
  const tj_buffer_t *to =
      tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_packed", w->name), TJ_F32, 5, shape, NULL);
  if (!to) return (void)(c->oom = true);
  k->packed = tj_sched_prepack(c, &want, to);
  if (k->packed) k->weight = w;
}

typedef struct weight_sub {
  pointwise_t *k;
  const tile_vars_t *t;
} weight_sub_t;

static const tj_tir_expr_t *packed_load(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  weight_sub_t *ws = m->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer != ws->k->weight) return NULL;
  const tj_tir_expr_t *idx[5] = {tj_sched_cast_like(ws->k->c, e->load.indices[0], ws->t->fb), e->load.indices[1],
                                 e->load.indices[2], e->load.indices[3],
                                 tj_sched_cast_like(ws->k->c, e->load.indices[0], ws->t->r)};
  const tj_tir_expr_t *l = idx[0] && idx[4] ? tj_tir_load(m->arena, ws->k->packed, 5, idx) : NULL;
  if (!l) m->failed = true;
  return l;
}

static const tj_tir_expr_t *read_packed(pointwise_t *k, const tile_vars_t *t, const tj_tir_expr_t *v) {
  if (!v || !k->packed) return v;
  weight_sub_t ws = {k, t};
  tj_tir_mutator_t m = {.arena = k->c->arena, .expr = packed_load, .ctx = &ws};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, v);
  if (m.failed || !r) return (void)(k->c->oom = true), NULL;
  return r;
}

/* The block's iter values for the element: y = p // W, x = p % W, reduce vars of
 * extent 1 at 0. */
static void element_values(pointwise_t *k, const tile_vars_t *t, bool with_reduce, const tj_tir_expr_t **vals) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *w = tj_tir_i64(a, k->W);
  for (int it = 0; it < k->b->n_iter_vars; it++) {
    const tj_tir_expr_t *v;
    if (it == k->n_it) v = t->n;
    else if (it == k->f_it) v = t->f;
    else if (it == k->y_it) v = w ? tj_tir_binary(a, TJ_TIR_FLOOR_DIV, t->p, w) : NULL;
    else if (it == k->x_it) v = w ? tj_tir_binary(a, TJ_TIR_FLOOR_MOD, t->p, w) : NULL;
    else v = with_reduce && it == k->c_it ? t->reduce[it] : tj_tir_i64(a, 0);
    vals[it] = tj_sched_cast_like(c, k->b->iter_vars[it].var, v);
    if (!vals[it]) c->oom = true;
  }
}

static const tj_tir_stmt_t *acc_store(pointwise_t *k, const tile_vars_t *t, const tj_tir_expr_t *value) {
  const tj_tir_expr_t *idx[2] = {t->r, t->lane};
  const tj_tir_stmt_t *s = value ? tj_tir_store(k->c->arena, t->acc, 2, idx, value) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

static const tj_tir_expr_t *acc_load(pointwise_t *k, const tile_vars_t *t) {
  const tj_tir_expr_t *idx[2] = {t->r, t->lane};
  const tj_tir_expr_t *l = tj_tir_load(k->c->arena, t->acc, 2, idx);
  if (!l) k->c->oom = true;
  return l;
}

static const tj_tir_stmt_t *init_body(pointwise_t *k, const tile_vars_t *t) {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  element_values(k, t, false, vals);
  return acc_store(k, t, tj_sched_subst_expr(k->c, k->b, k->init->store.value, vals));
}

static const tj_tir_stmt_t *update_body(pointwise_t *k, const tile_vars_t *t) {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  element_values(k, t, true, vals);
  const tj_tir_expr_t *v = inline_pad(k, tj_sched_subst_expr(k->c, k->b, k->st->store.value, vals));
  v = read_packed(k, t, v);
  v = v ? tj_sched_replace_load(k->c, v, k->st->store.buffer, acc_load(k, t)) : NULL;
  k->mask_loads = has_tail(k);
  v = check_flat(k, flatten_loads(k, v));
  k->mask_loads = false;
  return acc_store(k, t, v);
}

static const tj_tir_stmt_t *store_body(pointwise_t *k, const tile_vars_t *t) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST], *idx[4], *flat[4];
  element_values(k, t, false, vals);
  for (int d = 0; d < 4; d++) idx[d] = vals[tj_sched_iter_index(k->b, k->st->store.indices[d])];
  const tj_tir_expr_t *v = acc_load(k, t);
  if (v && t->ep->n) v = tj_sched_apply_epilogue(c, t->ep, v, idx);
  v = check_flat(k, flatten_loads(k, v));
  const tj_buffer_t *out = v ? flat_access(k, t->ep->out, 4, idx, flat) : NULL;
  if (!out) return (void)(k->declined = true), NULL;
  const tj_tir_stmt_t *s = tj_tir_store(c->arena, out, 3, flat, v);
  if (!s) c->oom = true;
  return s;
}

static const tj_tir_stmt_t *partial_store(tj_sched_ctx_t *c, const tile_vars_t *t, const tj_tir_expr_t *v) {
  const tj_tir_expr_t *idx[3] = {t->g, t->r, t->lane};
  const tj_tir_stmt_t *s = v ? tj_tir_store(c->arena, t->partial, 3, idx, v) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* acc = partial[g]: the tile's sums over the c blocks before (stored exactly). */
static const tj_tir_stmt_t *resume_body(pointwise_t *k, const tile_vars_t *t) {
  const tj_tir_expr_t *idx[3] = {t->g, t->r, t->lane};
  const tj_tir_expr_t *v = tj_tir_load(k->c->arena, t->partial, 3, idx);
  if (!v) k->c->oom = true;
  return acc_store(k, t, v);
}

static const tj_tir_stmt_t *suspend_body(pointwise_t *k, const tile_vars_t *t) {
  return partial_store(k->c, t, acc_load(k, t));
}

typedef const tj_tir_stmt_t *(*body_fn)(pointwise_t *k, const tile_vars_t *t);

/* The write-back of one vector of a tile that may run past the last pixel:
 *   if (vector's last pixel < H * W) { vector_store }
 *   else for fi in serial(L): if (p < H * W) { store }
 * (the vectorizer keeps a lane-dependent if serial; only the last block's vectors take
 * the second branch). */
static const tj_tir_stmt_t *tail_store(pointwise_t *k, const tile_vars_t *vec, const tj_tir_expr_t *vi,
                                       const tj_tir_expr_t *pb, const tj_tir_stmt_t *vector_store) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *fi = tj_sched_var(c, "fi_tail");
  if (!fi || !vector_store) return NULL;
  tile_vars_t t = *vec;
  t.lane = tj_sched_add(c, tj_sched_mul(c, vi, k->lanes), fi);
  t.p = tj_sched_add(c, tj_sched_mul(c, pb, k->vecs * k->lanes), t.lane);
  const tj_tir_expr_t *P = tj_tir_i64(a, k->H * k->W);
  const tj_tir_expr_t *first = tj_sched_add(c, tj_sched_mul(c, pb, k->vecs * k->lanes), tj_sched_mul(c, vi, k->lanes));
  const tj_tir_expr_t *last = tj_sched_add(c, first, tj_tir_i64(a, k->lanes - 1));
  if (!t.lane || !t.p || !last) return NULL;
  const tj_tir_stmt_t *one = store_body(k, &t);
  one = one ? tj_tir_if(a, tj_tir_binary(a, TJ_TIR_LT, t.p, P), one, NULL) : NULL;
  const tj_tir_stmt_t *lanes = tj_sched_loop(c, fi, k->lanes, TJ_FOR_SERIAL, one);
  const tj_tir_stmt_t *s = lanes ? tj_tir_if(a, tj_tir_binary(a, TJ_TIR_LT, last, P), vector_store, lanes) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* for r in unroll(ROWS): for vi in unroll(VECS): for fi in vectorized(L): body, with
 * f = fb * ROWS + r and p = pb * VECS * L + vi * L + fi. */
static const tj_tir_stmt_t *tile_loops(pointwise_t *k, const tile_vars_t *outer, const tj_tir_expr_t *fb,
                                       const tj_tir_expr_t *pb, body_fn body) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *r = tj_sched_var(c, "r"), *vi = tj_sched_var(c, "vi"), *fi = tj_sched_var(c, "fi");
  if (!r || !vi || !fi) return NULL;
  k->fi = fi;
  tile_vars_t t = *outer;
  t.r = r;
  t.lane = tj_sched_add(c, tj_sched_mul(c, vi, k->lanes), fi);
  t.f = tj_sched_add(c, tj_sched_mul(c, fb, k->rows), r);
  t.fb = fb;
  t.p = tj_sched_add(c, tj_sched_mul(c, pb, k->vecs * k->lanes), t.lane);
  if (!t.lane || !t.f || !t.p) return NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, fi, k->lanes, TJ_FOR_VECTORIZED, body(k, &t));
  if (body == store_body && has_tail(k)) s = tail_store(k, &t, vi, pb, s);
  s = tj_sched_loop(c, vi, k->vecs, k->vecs > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
  return tj_sched_loop(c, r, k->rows, k->rows > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
}

/* ---- the next pixel block's lines, prefetched into L2 ----
 * MobileNetV2's 32->16 projection at 112x112 takes 0.112 ms called alone (96% of the
 * FMA peak) and 0.19-0.26 ms in the model, right after the depthwise conv that wrote its
 * 1.6 MB input (Zen 4, 1 MiB L2): each pixel block reads 32 planes 50 KB apart and writes
 * 16 (48 streams of 256 bytes, more than the hardware prefetchers follow), and every
 * output line is read for ownership before it is written. So when a conv's input and
 * output pass PREFETCH_MIN_BYTES per image, each tile prefetches into L2 (prefetcht1)
 * the lines the next pixel block reads in its c steps (VECS a step) and, before its
 * init, the ROWS x VECS output lines it will write there (prefetchw). A block's tiles
 * take about 2000 cycles: one block ahead is ahead enough. Addresses past the last pixel
 * are clamped to it. Hints only: the results keep their bits. Measured in the docs
 * (docs/cpu-schedule.md, "Prefetching the next pixel block"). */
#define PREFETCH_MIN_BYTES (1 << 20)
#define PREFETCH_AHEAD_BLOCKS 1
#define PREFETCH_LOCALITY 2 /* llvm.prefetch locality 2: prefetcht1, into L2 */

static bool prefetch_applies(const pointwise_t *k) { return (k->C + k->F) * k->H * k->W * 4 >= PREFETCH_MIN_BYTES; }

typedef struct view_scan {
  const pointwise_t *k;
  const tj_tir_expr_t *load;
} view_scan_t;

/* The first load through a flat view of an input (not of the conv's own output). */
static bool find_view_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  view_scan_t *s = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || s->load) return !s->load;
  for (int i = 0; i < s->k->n_views; i++)
    if (s->k->view_to[i] == e->load.buffer && s->k->view_from[i] != s->k->st->store.buffer) s->load = e;
  return !s->load;
}

/* Evaluate(tir.prefetch(tir.address_of(v), rw, PREFETCH_LOCALITY, 1)) (codegen: llvm.prefetch). */
static const tj_tir_stmt_t *prefetch_of(tj_sched_ctx_t *c, const tj_tir_expr_t *v, int rw) {
  const tj_tir_expr_t *addr = v ? tj_tir_call(c->arena, TJ_HANDLE, "tir.address_of", 1, &v) : NULL;
  const tj_tir_expr_t *args[4] = {addr, tj_tir_int(c->arena, TJ_I32, rw),
                                  tj_tir_int(c->arena, TJ_I32, PREFETCH_LOCALITY), tj_tir_int(c->arena, TJ_I32, 1)};
  const tj_tir_expr_t *call =
      addr && args[1] && args[2] && args[3] ? tj_tir_call(c->arena, TJ_VOID, "tir.prefetch", 4, args) : NULL;
  const tj_tir_stmt_t *s = call ? tj_tir_evaluate(c->arena, call) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* Element (f, vector j of pixel block pb + PREFETCH_AHEAD_BLOCKS, clamped to the last
 * pixel) of the tile at fb: t's f and p. */
static bool ahead(pointwise_t *k, tile_vars_t *t, const tj_tir_expr_t *pb, const tj_tir_expr_t *f, int64_t j) {
  tj_sched_ctx_t *c = k->c;
  int64_t block = k->vecs * k->lanes;
  const tj_tir_expr_t *p =
      tj_sched_add(c, tj_sched_mul(c, pb, block), tj_tir_i64(c->arena, PREFETCH_AHEAD_BLOCKS * block + j * k->lanes));
  t->f = f;
  t->p = p && f ? tj_tir_binary(c->arena, TJ_TIR_MIN, p, tj_tir_i64(c->arena, k->H * k->W - 1)) : NULL;
  if (!t->p) c->oom = true;
  return t->p != NULL;
}

/* The c step's prefetches of the next block's lines of the input, then the update. */
static const tj_tir_stmt_t *with_input_prefetch(pointwise_t *k, const tile_vars_t *outer, const tj_tir_expr_t *fb,
                                                const tj_tir_expr_t *pb, const tj_tir_stmt_t *upd) {
  tj_sched_ctx_t *c = k->c;
  if (!upd || !prefetch_applies(k)) return upd;
  const tj_tir_stmt_t *seq[MAX_VECS + 1];
  int n = 0;
  for (int64_t j = 0; j < k->vecs; j++) {
    tile_vars_t t = *outer;
    if (!ahead(k, &t, pb, tj_sched_mul(c, fb, k->rows), j)) return NULL;
    const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
    element_values(k, &t, true, vals);
    const tj_tir_expr_t *v = flatten_loads(k, inline_pad(k, tj_sched_subst_expr(c, k->b, k->st->store.value, vals)));
    if (!v) return NULL;
    view_scan_t s = {k, NULL};
    tj_tir_visitor_t vis = {.expr = find_view_load, .ctx = &s};
    tj_tir_visit_expr(&vis, v);
    if (!s.load) return upd;
    if (!(seq[n++] = prefetch_of(c, s.load, 0))) return NULL;
  }
  seq[n++] = upd;
  return tj_tir_seq(c->arena, n, seq);
}

/* The tile's output lines in the next block, prefetched for writing, then the tile. */
static const tj_tir_stmt_t *with_output_prefetch(pointwise_t *k, const tile_vars_t *outer, const tj_tir_expr_t *fb,
                                                 const tj_tir_expr_t *pb, const tj_tir_stmt_t *tile) {
  tj_sched_ctx_t *c = k->c;
  if (!tile || !prefetch_applies(k)) return tile;
  const tj_tir_stmt_t *seq[MAX_VECS * MAX_ROWS + 1];
  int n = 0;
  for (int64_t r = 0; r < k->rows; r++)
    for (int64_t j = 0; j < k->vecs; j++) {
      tile_vars_t t = *outer;
      if (!ahead(k, &t, pb, tj_sched_add(c, tj_sched_mul(c, fb, k->rows), tj_tir_i64(c->arena, r)), j)) return NULL;
      const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST], *idx[4], *flat[4];
      element_values(k, &t, false, vals);
      for (int d = 0; d < 4; d++) idx[d] = vals[tj_sched_iter_index(k->b, k->st->store.indices[d])];
      const tj_buffer_t *out = flat_access(k, outer->ep->out, 4, idx, flat);
      if (!out) return tile;
      const tj_tir_expr_t *l = tj_tir_load(c->arena, out, 3, flat);
      if (!l) return (void)(c->oom = true), NULL;
      if (!(seq[n++] = prefetch_of(c, l, 1))) return NULL;
    }
  seq[n++] = tile;
  return tj_tir_seq(c->arena, n, seq);
}

/* ---- blocking over the input channels ----
 * A tile reads a block of VECS vectors of every input channel: 960 channels at 7x7 is
 * 188 KB (in L2, not L1), read again for every tile of ROWS output channels. When that
 * is over X_BLOCK_MIN_BYTES, the input channels go in blocks of CB (at most
 * X_BLOCK_BYTES of input) and each parallel iteration runs a group of G tiles over one
 * block before the next, keeping the group's sums between blocks in a local buffer
 * (stored and reloaded exactly: c still runs in order from the init value, same bits).
 * The block's input then stays in L1 across the group's tiles. */
#define X_BLOCK_MIN_BYTES (40 << 10)
#define X_BLOCK_BYTES (8 << 10)
#define PARTIAL_MAX_BYTES (16 << 10)
#define GROUP_MIN_ITERATIONS 4

static int64_t largest_divisor_at_most(int64_t n, int64_t cap) {
  for (int64_t d = cap < n ? cap : n; d > 1; d--)
    if (n % d == 0) return d;
  return 1;
}

/* CB and G (1 and 1: not blocked). */
static void pick_blocks(const pointwise_t *k, int64_t *cb, int64_t *g) {
  int64_t tile_bytes = k->rows * k->vecs * k->lanes * 4, slice = k->vecs * k->lanes * 4;
  int64_t tiles = k->F / k->rows;
  *cb = *g = 1;
  if (k->C * slice <= X_BLOCK_MIN_BYTES) return;
  int64_t b = largest_divisor_at_most(k->C, X_BLOCK_BYTES / slice);
  int64_t gmax = PARTIAL_MAX_BYTES / tile_bytes;
  int64_t min_iters = (GROUP_MIN_ITERATIONS + k->N * k->blocks - 1) / (k->N * k->blocks);
  if (tiles / min_iters < gmax) gmax = tiles / min_iters;
  int64_t gr = largest_divisor_at_most(tiles, gmax);
  /* An odd count of parallel iterations splits unevenly over 2 threads: MobileNetV2's
   * 384->64 at 14x14 ran 5 (5 pixel blocks, one group of all 8 tiles), 3/2, so the
   * busier thread took 60% instead of 50%; in groups of 4 tiles it runs 10. */
  int64_t per_group = k->N * k->blocks;
  if ((per_group * (tiles / gr)) % 2)
    for (int64_t d = gr - 1; d >= 2; d--)
      if (tiles % d == 0 && (tiles / d) % 2 == 0) {
        gr = d;
        break;
      }
  if (b < 2 || gr < 2) return;
  *cb = b, *g = gr;
}

/* for cb: for g: (init | resume) tile; for ci: update; (store | suspend) tile. */
static const tj_tir_stmt_t *blocked_tiles(pointwise_t *k, tile_vars_t *t, const tj_tir_expr_t *fg,
                                          const tj_tir_expr_t *pb, const tj_tir_expr_t **reduce, int64_t cb,
                                          int64_t g) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  const tj_tir_expr_t *cbv = tj_sched_var(c, "cb"), *gv = tj_sched_var(c, "g"), *ci = tj_sched_var(c, "ci");
  if (!cbv || !gv || !ci) return NULL;
  int64_t nb = k->C / cb;
  const tj_tir_expr_t *shape[3] = {tj_tir_i64(a, g), tj_tir_i64(a, k->rows), tj_tir_i64(a, k->vecs * k->lanes)};
  const tj_buffer_t *partial =
      tj_buffer_new(a, tj_arena_printf(a, "%s_partial", k->st->store.buffer->name), TJ_F32, 3, shape, NULL);
  if (!partial) return (void)(c->oom = true), NULL;
  ((tj_buffer_t *)partial)->scope = "local";
  t->partial = partial;
  t->g = gv;
  reduce[k->c_it] = tj_sched_add(c, tj_sched_mul(c, cbv, cb), ci);
  const tj_tir_expr_t *fb = tj_sched_add(c, tj_sched_mul(c, fg, g), gv);
  const tj_tir_expr_t *first = tj_tir_binary(a, TJ_TIR_EQ, cbv, tj_tir_i64(a, 0));
  const tj_tir_expr_t *last = tj_tir_binary(a, TJ_TIR_EQ, cbv, tj_tir_i64(a, nb - 1));
  if (!reduce[k->c_it] || !fb || !first || !last) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *start = tj_tir_if(a, first, tile_loops(k, t, fb, pb, init_body), tile_loops(k, t, fb, pb, resume_body));
  const tj_tir_stmt_t *upd = tj_sched_loop(c, ci, cb, TJ_FOR_SERIAL, tile_loops(k, t, fb, pb, update_body));
  const tj_tir_stmt_t *end = tj_tir_if(a, last, tile_loops(k, t, fb, pb, store_body), tile_loops(k, t, fb, pb, suspend_body));
  if (!start || !upd || !end) return NULL;
  const tj_tir_stmt_t *three[3] = {start, upd, end};
  const tj_tir_stmt_t *s = tj_tir_seq(a, 3, three);
  s = tj_sched_loop(c, gv, g, TJ_FOR_SERIAL, s);
  s = tj_sched_loop(c, cbv, nb, TJ_FOR_SERIAL, s);
  return s ? tj_tir_allocate(a, partial, s) : NULL;
}

/* ---- the order of the tiles ----
 * With the pixel blocks outermost, one block's tiles (every ROWS output channels) write
 * F rows of VECS * L pixels each, a plane apart: MobileNetV2's 16->96 expand at 112x112
 * wrote 96 streams of 256 bytes at a time and took 1.2-1.4 ms (its 4.8 MB output goes
 * to L3). In superblocks of S pixel blocks whose input (C x S blocks) stays within
 * SUPERBLOCK_BYTES of L2, the tiles of output channels go outside the blocks of one
 * superblock: each tile writes ROWS runs of S * VECS * L pixels, and the superblock's
 * input is read once per tile from L2: 0.58-0.81 ms (1 thread, Ice Lake, per-kernel
 * median of `tvmjit bench --profile`, A/B in one binary; 0.65 against 1.37-1.54 in
 * another A/B). Only for outputs over OUTPUT_MIN_BYTES per image: the 1x1 convs at
 * 56x56 and 28x28 (outputs of 0.2-1.8 MB) measured the same or slower that way
 * (32->192 at 28x28 0.088 -> 0.104-0.112 ms). */
#define SUPERBLOCK_BYTES (256 << 10)
#define OUTPUT_MIN_BYTES (2 << 20)

static int64_t superblock(const pointwise_t *k) {
  int64_t slice = k->C * k->vecs * k->lanes * 4;
  if (k->F * k->H * k->W * 4 <= OUTPUT_MIN_BYTES) return 1;
  return largest_divisor_at_most(k->blocks, SUPERBLOCK_BYTES / slice);
}

/* fo's image, pixel block and group of output channel tiles (unf[0..2]). */
static bool unfuse_tiles(pointwise_t *k, const tj_tir_expr_t *fo, int64_t g, const tj_tir_expr_t **unf) {
  tj_sched_ctx_t *c = k->c;
  int64_t s = g == 1 ? superblock(k) : 1;
  if (s == 1) {
    int64_t ext[3] = {k->N, k->blocks, k->F / k->rows / g};
    return tj_sched_unfuse(c, fo, 3, ext, unf);
  }
  int64_t ext[4] = {k->N, k->blocks / s, k->F / k->rows, s};
  const tj_tir_expr_t *u[4];
  if (!tj_sched_unfuse(c, fo, 4, ext, u)) return false;
  unf[0] = u[0];
  unf[1] = tj_sched_add(c, tj_sched_mul(c, u[1], s), u[3]);
  unf[2] = u[2];
  return unf[1] || !(c->oom = true);
}

static const tj_tir_stmt_t *build(pointwise_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  tj_arena_t *a = c->arena;
  int64_t cb, g;
  pick_blocks(k, &cb, &g);
  int64_t ext[3] = {k->N, k->blocks, k->F / k->rows / g};
  const tj_tir_expr_t *fo = tj_sched_var(c, "fo"), *unf[3];
  if (!fo || !unfuse_tiles(k, fo, g, unf)) return NULL;
  const tj_tir_expr_t *reduce[TJ_SCHED_MAX_NEST] = {0};
  reduce[k->c_it] = tj_sched_var(c, k->b->iter_vars[k->c_it].var->var.name);
  const tj_tir_expr_t *shape[2] = {tj_tir_i64(a, k->rows), tj_tir_i64(a, k->vecs * k->lanes)};
  const tj_buffer_t *acc = tj_buffer_new(a, tj_arena_printf(a, "%s_acc", k->st->store.buffer->name), TJ_F32, 2, shape, NULL);
  if (!acc || !reduce[k->c_it]) return (void)(c->oom = true), NULL;
  ((tj_buffer_t *)acc)->scope = "local";
  tile_vars_t t = {.n = unf[0], .reduce = reduce, .ep = ep, .acc = acc};
  int64_t iters = ext[0] * ext[1] * ext[2], work = k->N * k->F * k->H * k->W * k->C;
  tj_for_kind_t kind = iters > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL;
  if (g > 1) {
    const tj_tir_stmt_t *s = blocked_tiles(k, &t, unf[2], unf[1], reduce, cb, g);
    s = s ? tj_tir_allocate(a, acc, s) : NULL;
    return tj_sched_loop(c, fo, iters, kind, s);
  }
  const tj_tir_stmt_t *upd = tile_loops(k, &t, unf[2], unf[1], update_body);
  upd = with_input_prefetch(k, &t, unf[2], unf[1], upd);
  upd = tj_sched_loop(c, reduce[k->c_it], k->C, TJ_FOR_SERIAL, upd);
  const tj_tir_stmt_t *three[3] = {tile_loops(k, &t, unf[2], unf[1], init_body), upd,
                                   tile_loops(k, &t, unf[2], unf[1], store_body)};
  if (!three[0] || !three[1] || !three[2]) return NULL;
  const tj_tir_stmt_t *s = tj_tir_seq(a, 3, three);
  s = with_output_prefetch(k, &t, unf[2], unf[1], s);
  s = s ? tj_tir_allocate(a, acc, s) : NULL;
  return tj_sched_loop(c, fo, iters, kind, s);
}

/* The conv at stmts[i] (its padding at stmts[i - 1] when pad_at >= 0) scheduled with its
 * epilogue; NULL with *used 0 when some access along the pixels would be gathered. */
static const tj_tir_stmt_t *pointwise_nest(tj_sched_ctx_t *c, int i, pointwise_t *k, int *used) {
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i, i + 1, k->st->store.buffer, &ep);
  /* Build on a scratch copy of the dropped-alloc marks: a declined build must leave them. */
  int n_alloc = c->root->n_alloc_buffers + 1;
  bool *saved = TJ_ARENA_ARRAY(c->arena, bool, n_alloc);
  if (!saved) return (void)(c->oom = true), NULL;
  for (int j = 0; j < n_alloc; j++) saved[j] = c->drop_alloc[j];
  int packs_before = c->opts->prepacked ? c->opts->prepacked->n : 0;
  packed_weight(k);
  const tj_tir_stmt_t *r = c->oom ? NULL : build(k, &ep);
  if (c->oom) return NULL;
  if (!r || k->declined) {
    for (int j = 0; j < n_alloc; j++) c->drop_alloc[j] = saved[j];
    if (c->opts->prepacked) c->opts->prepacked->n = packs_before;
    *used = 0;
    return NULL;
  }
  r = tj_sched_with_before(c, &ep, r);
  if (!r) return (void)(c->oom = true), NULL;
  c->stats.conv++;
  c->stats.pointwise++;
  c->stats.fused_epilogues += ep.n;
  *used = 1 + ep.span;
  return r;
}

int tj_sched_rule_pointwise(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  pointwise_t k;
  int used = 0;
  if (pointwise_matches(c, i, &k)) {
    *out = pointwise_nest(c, i, &k, &used);
    return c->oom ? 1 : used;
  }
  if (!pointwise_matches(c, i + 1, &k) || !match_pad(&k, i)) return 0;
  *out = pointwise_nest(c, i + 1, &k, &used);
  if (c->oom) return 1;
  if (!used) return 0;
  c->drop_alloc[tj_sched_root_alloc(c, k.pad_buf)] = true;
  return 1 + used;
}
