/* Schedule rule for convolution-like reductions (schedule.h). A reduction nest
 *   for n, y, x, f, ry, rx, c:  block { init: C[n,y,x,f] = i0;  C[n,y,x,f] = g(C[n,y,x,f], P[..], W[f,ry,rx,c]) }
 * whose store indexes every spatial iter var once becomes, with the vector dim f (C's
 * last), the tile dim x (C's second-to-last), T outputs a tile and L lanes:
 *   Wp[ry, rx, c, f] = W[f, ry, rx, c]             (read-only weights indexed by f outside
 *                                                  their last dim: repacked once per call)
 *   for fo in T.parallel(N*Y):                     n, y = unfuse(fo)
 *     for xo, fv:                                  x = xo*T + xi, f = fv*L + fi
 *       acc = T.alloc_buffer((T, L), scope="local")
 *       for xi in T.unroll(T): for fi in T.vectorized(L):  acc[xi, fi] = i0
 *       for ry, rx, c:                             (reduce loops, original order)
 *         for xi in T.unroll(T): for fi in T.vectorized(L):  acc[xi, fi] = g(acc[xi, fi], P[..], Wp[ry,rx,c,f])
 *       for xi in T.unroll(T): for fi in T.vectorized(L):  OUT[n,y,x,f] = epilogue(acc[xi, fi])
 * The epilogue is the chain of elementwise nests after the reduction that consume only
 * its result (relu, casts, bias add): they are fused into the write-back, and the
 * intermediate buffers disappear. Every output starts from the init value and takes its
 * terms in the original (ry, rx, c) order, so float16 accumulation stays bit-exact.
 * The vector and tile dims shown are the default; schedule_conv_axes.c picks others
 * from the shape (NCHW: output channels as the vector, x as the tile; then the
 * weights are packed blocked, [f / L, ..., f % L], and large ones walked one block at a
 * time, see channel_blocks). */
#include <string.h>

#include "ir/visit.h"
#include "support/intmath.h"
#include "transforms/tir/schedule_rules.h"

/* Outputs per register tile: 16 accumulators fit AVX-512's 32 registers (with room for
 * the weight vector) and cost 4% less than 8 on the seed's float32 conv (0.392 vs 0.409
 * ms, bench_kernels); 16-register ISAs (AVX2, SSE) keep 8. */
#define DEFAULT_TILE_WIDE 16
#define DEFAULT_TILE 8
#define MAX_REPACK 4
#define MAX_RESIDUAL 2
/* A padding window serves up to this many output rows, as long as that leaves at least
 * MIN_WINDOWS windows to run in parallel: fewer refills (a 3x3 window of one row
 * computes each padded row 3 times, of 8 rows 1.25 times). */
#define MAX_WINDOW_ROWS 8
#define MIN_WINDOWS 32
/* Weights this large (beyond L2 with room for the input) are walked one vector
 * block of output channels at a time: the blocks go outermost in the parallel loop, so
 * each block's weights (C*K*K*L values) are read from L2 for every output row instead
 * of the whole weight tensor streaming from memory once per row. ResNet-18's layer4
 * 3x3 conv (512 channels, 9.4 MB of weights, 7x7 outputs) reads 66 MB per call without
 * this. The padding is then materialised (a window per block and row would recompute
 * it F/L times), which pays only while the padded input is small. 512 KB itself counts
 * (ResNet-18's 1x1/2 256->512 downsample, 7 output rows: 16 blocks of channels split
 * evenly over 2 threads where the rows split 4/3; 8 such convs, constant weights, Ice
 * Lake, 2 threads, latency min of 200 runs, 2 interleaved rounds: 1.42-1.56 ->
 * 1.13-1.33 ms; 1 thread unchanged within the noise, 2.0-2.3 ms per-run CPU). */
#define CHANNEL_BLOCKS_MIN_WEIGHT_BYTES (512 << 10)
#define CHANNEL_BLOCKS_MAX_PADDED_BYTES (2 << 20)
/* The largest kernel width whose reduction is unrolled inside the tile when reordered. */
#define MAX_INNER_REDUCE 8

/* Weights this large repack in parallel (below, a fork costs more than it saves). */
#define REPACK_PARALLEL_MIN_ELEMS (1 << 16)

typedef struct repack {
  const tj_buffer_t *from, *to;
  /* from's dims in to's order, the vector dim last: to is [F / L, from's dims perm[0..n-1)
   * of extent, L], the vector dim split around the others */
  int perm[TJ_SCHED_MAX_NEST];
  /* A constant weight packed by the caller, once (schedule_prepack.c): `to` is a
   * parameter and the kernel has no repack of its own. */
  bool outside;
} repack_t;

typedef struct conv {
  tj_sched_ctx_t *c;
  tj_sched_nest_t nest;
  const tj_block_t *b;
  const tj_tir_stmt_t *st, *init;
  const tj_buffer_t *acc;
  int vec_iter, tile_iter; /* iter var indices (tile_iter -1: none) */
  int64_t lanes, tile;
  /* When lanes spans several hardware vectors (a matmul tile): the vector each op works
   * on, lanes / vec_unit of them unrolled; 0 = one vector of `lanes`. */
  int64_t vec_unit;
  bool gemv; /* a matrix-vector product (matmul-like, fewer rows than MATMUL_TILE) */
  repack_t repacks[MAX_REPACK];
  int n_repacks;
  /* Widened: float16 values computed in float32 registers (see widen()). */
  bool widen;
  const tj_buffer_t *shadow_from, *shadow_to; /* a float16 input read from a float32 copy */
  const tj_tir_expr_t *acc_value;             /* what widen() makes of a load of C */
  /* The padded input computed per outer iteration (schedule_window.c). */
  bool windowed;
  tj_sched_window_t window;
  const tj_tir_expr_t *const *cur_vals; /* iter values of the element being built */
  const tj_tir_expr_t *cur_fv, *cur_fi;  /* its vector block and lane */
  int inner_reduce; /* reduce iter var moved innermost (reorder_reductions), or -1 */
  bool channel_blocks; /* the vector dim's blocks (fv) outermost in the parallel loop */
  bool ep_in_acc;      /* the epilogue applied in the accumulators, before the transposed store */
  /* The one repack is of a [K, N] weight and fv is the only outer iteration: each
   * parallel iteration copies its own panels [G, K, W] (see with_panel), G =
   * panel_group consecutive column blocks, and panel_g (0 when G is 1) is the block's
   * index among them. */
  bool panel;
  int64_t panel_group;
  const tj_tir_expr_t *panel_g;
  const tj_tir_expr_t *panel_first; /* the group's first column block */
  /* Epilogue inputs read at the output's own indices (a residual add), copied per
   * output row into a local buffer before the row's tiles (see plan_residual_rows). */
  const tj_buffer_t *residual_from[MAX_RESIDUAL], *residual_to[MAX_RESIDUAL];
  int n_residual;
  /* K-blocked (see plan_k_blocks): the reduce iter split into blocks of kblock, and the
   * partial sums of every tile of a channel block. */
  int kblock_iter;
  int64_t kblock;
  const tj_buffer_t *part;
  int64_t q_per; /* output positions (q) per parallel iteration: all, or a share (see q_shares) */
  /* K blocks (see k_block_depth): the reduction in blocks of k_block, the block loop
   * kc around the parallel loop, partial sums in `partial` (the output's shape). */
  int64_t k_block;
  const tj_tir_expr_t *kc, *kk;
  const tj_buffer_t *partial;
  /* The x tile (see x_vector_tile): x vectorized, output channels as the tile dim, the
   * input read at x * s + r through a window phased along x. Allowed: the padding is
   * the conv's producer. */
  bool x_tile, x_tile_allowed;
  int x_reduce; /* r, a reduce iter var */
  /* bfloat16 pairs (see pick_pair): the reduce iter var taken two steps at a time, or -1 */
  int pair_iter;
} conv_t;

static bool is_f16(tj_dtype_t d) { return d.code == TJ_DT_FLOAT && d.bits == 16 && d.lanes == 1; }
/* float16 or bfloat16 (scalar): widened convs read either from float32 copies. */
static bool is_narrow(tj_dtype_t d) { return is_f16(d) || tj_dtype_eq(d, TJ_BF16); }

typedef struct find_f16 {
  bool found;
} find_f16_t;

static bool find_f16(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_BUFFER_LOAD && is_narrow(e->dtype)) ((find_f16_t *)v->ctx)->found = true;
  return true;
}

static int64_t largest_divisor(int64_t n, int64_t at_most) {
  for (int64_t d = at_most < n ? at_most : n; d > 1; d--)
    if (n % d == 0) return d;
  return 1;
}

/* ---- matching ---- */

/* A matmul's update (C[.., x, f] += A[.., x, k] * B[k, f]) reads a 2-D parameter at
 * [reduce var, vector var]. Its register tile is MATMUL_VECTORS vectors wide and
 * MATMUL_TILE rows tall (16 accumulators, 4 weight vectors per A broadcast) instead of
 * one vector by 16 rows: BERT's matmuls at 1 thread (Intel Xeon, old and new builds
 * interleaved on a noisy VM) 2.4-2.8 -> 2.0-2.1 ms (768x768), 13.7-15.0 -> 10.4-11.3 and
 * 13.2-15.2 -> 10.6-11.5 ms (the FFN pair); bits unchanged (k stays in order).
 * batch_matmul's [B, K, N] weight counts too (matmul_weight): attention's 12x128x64 by
 * 12x64x128 went from the conv rule's 16 x 1-vector tile to 4 x 64 lanes, 0.278 ->
 * 0.147 ms (thread-CPU min, 1 thread, Ice Lake; oneDNN brgemm 0.198 ms). */
#define MATMUL_VECTORS 4
#define MATMUL_TILE 4

/* A matrix-vector product (fewer rows than MATMUL_TILE: M = 1 in a batch-1 linear
 * layer) does one multiply-add per weight element: it is bound by streaming the weight,
 * not by the FMA units. Each parallel block spans the narrowest column range that reads
 * at least GEMV_MIN_RUN_BYTES of each weight row per k (a run the hardware prefetcher
 * follows), at most GEMV_VECTORS vectors for all its rows. Hand-written variants, 1
 * thread, Intel Xeon, kernel medians, weight in L3 / after a 192 MB sweep:
 *   MobileNetV2's classifier 1x1280 by 1280x1000: 40 columns per block (the matmul tile)
 *   0.25 / 0.66-0.73 ms, 50: 0.25-0.28 / 0.67-0.78, 100: 0.20-0.21 / 0.41-0.50, 200-250
 *   (16 vectors): 0.27-0.30 / 0.40-0.47;
 *   1x768 by 768x768: 64 columns 0.052 / 0.16, 128: 0.061-0.068 / 0.17, 256: 0.069-0.076
 *   / 0.16-0.19.
 * The block count is kept even (or at least GEMV_MIN_BLOCKS) so two threads split the
 * columns evenly. */
#define GEMV_VECTORS 8
#define GEMV_MIN_RUN_BYTES 256
#define GEMV_MIN_BLOCKS 8

static int64_t gemv_lanes(const conv_t *k, int64_t ev, int64_t rows) {
  int64_t hw = tj_sched_lanes(k->c, k->st->store.buffer->dtype);
  int64_t bytes = (int64_t)tj_dtype_bytes(k->st->store.buffer->dtype);
  int64_t cap = hw * GEMV_VECTORS / (rows > 0 ? rows : 1), widest = k->lanes;
  for (int64_t w = k->lanes; w <= cap && w <= ev; w += k->lanes) {
    if (ev % w || (ev / w % 2 && ev / w < GEMV_MIN_BLOCKS)) continue;
    if (w * bytes >= GEMV_MIN_RUN_BYTES) return w;
    widest = w;
  }
  return widest;
}

/* The GEMM register tile: GEMM_TILE_ROWS rows x GEMM_TILE_VECTORS hardware vectors
 * (24 accumulators, 3 weight vectors and a broadcast in AVX-512's 32 registers), as
 * oneDNN's AVX-512 sgemm kernel: 3 weight loads and 8 broadcasts per 24 FMAs, half the
 * weight traffic per FMA of the 4 x 4 tile (the weight panel streams from L2).
 * Taken when the rows and columns divide evenly with full vectors; otherwise the
 * 4 x 4 tile below. */
#define GEMM_TILE_ROWS 8
#define GEMM_TILE_VECTORS 3

static bool gemm_tile(conv_t *k, int64_t ev, int64_t rows, int64_t *tile_max) {
  int64_t hw = tj_sched_lanes(k->c, k->st->store.buffer->dtype);
  if (k->c->opts->vector_bits < 512 || k->lanes != hw || rows % GEMM_TILE_ROWS || ev % (hw * GEMM_TILE_VECTORS))
    return false;
  k->vec_unit = hw;
  k->lanes = hw * GEMM_TILE_VECTORS;
  *tile_max = GEMM_TILE_ROWS;
  return true;
}

/* ---- channel-blocked conv tile ----
 * A conv vectorized along its output channels (NCHW or NHWC with the weights repacked
 * [F / L, ..., L]) with one vector per tile is bound by loads, not FMAs: ResNet's x
 * widths (7, 14, 28, 56, 112) give tiles of 7, 14 or 16 accumulators, and a strided conv
 * (no input reuse along rx) pays a weight load and a broadcast per FMA. Spanning several
 * channel vectors as well, the tile is T x-positions by V vectors: per k step V weight
 * loads and T broadcasts feed T*V FMAs (oneDNN's AVX-512 direct conv blocks the same
 * way: ur_w x-positions by up to 4 blocks of 16 output channels).
 * At most CONV_TILE_ACCS accumulators: with the sliding rx unrolled inside the tile
 * (3 weight vectors per V and T + 2 broadcasts live), 28 spilled in the inner loop and
 * ran slower than one vector (3x3 at 28x28, 128 channels: 2.5 vs 1.9 ms); 24 and 16
 * ran the same. Measured with build/bench_kernels (thread-CPU min of 15, default float
 * mode, 1 thread, Intel Xeon Ice Lake, loaded host, old and new builds interleaved),
 * before -> after: stem 7x7/2 3->64 at 224 2.90 -> 1.69-1.74 ms; 3x3/2 64->128 at 56
 * 1.74 -> 0.87; 3x3/2 256->512 at 14 3.09 -> 2.43 (1.5 of them the per-call repack);
 * 1x1/2 64->128 0.182 -> 0.122; 1x1 24->144 0.36 -> 0.27-0.29; ResNet's 3x3/1 at 28x28
 * (128 ch) 1.91 -> 1.63, at 56x56 (64 ch) 1.51 -> 1.51, at 14x14 (256 ch) 2.29 -> 2.23,
 * at 7x7 (512 ch) 5.61 -> 5.40 (3.1 ms of it the repack of 9.4 MB). */
#define CONV_TILE_ACCS 24
#define CONV_TILE_MAX_VECTORS 4

typedef struct vec_reads {
  const tj_tir_expr_t *var; /* the vector dim's iter var */
  const tj_buffer_t *acc;   /* the output, read at the store's own indices */
  bool only_weights;        /* every other load reads var only outside its last dim */
  bool some_weight;         /* at least one such load */
} vec_reads_t;


static bool check_vec_read(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  vec_reads_t *r = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer == r->acc) return true;
  int n = e->load.n_indices;
  bool outside = false;
  for (int d = 0; d + 1 < n; d++) outside |= tj_tir_expr_uses_var(e->load.indices[d], r->var);
  if (n > 0 && tj_tir_expr_uses_var(e->load.indices[n - 1], r->var)) r->only_weights = false;
  r->some_weight |= outside;
  return true;
}

/* The vector dim is read only through weights that get repacked with it innermost
 * (the input is broadcast along it): wider tiles along it cost one more contiguous
 * weight load per vector. Depthwise convs (input read along the channels) and the
 * default NHWC x-vectorized case fail this. */
static bool channels_from_weights(const conv_t *k) {
  vec_reads_t r = {k->b->iter_vars[k->vec_iter].var, k->st->store.buffer, true, false};
  tj_tir_visitor_t v = {.expr = check_vec_read, .ctx = &r};
  tj_tir_visit_expr(&v, k->st->store.value);
  return r.only_weights && r.some_weight;
}

/* Picks V (vectors of output channels) and the tile along x: the most accumulators,
 * then the most vectors (fewer broadcasts per FMA). */
static void channel_tile(conv_t *k, int64_t ev, int64_t rows, int64_t *tile_max) {
  int64_t hw = tj_sched_lanes(k->c, k->st->store.buffer->dtype);
  if (k->c->opts->vector_bits < 512 || k->c->opts->conv_tile > 0 || k->lanes != hw || k->tile_iter < 0 ||
      !channels_from_weights(k))
    return;
  int64_t best_v = 1, best = largest_divisor(rows, *tile_max);
  for (int64_t v = 2; v <= CONV_TILE_MAX_VECTORS; v++) {
    if (ev % (hw * v)) continue;
    int64_t t = largest_divisor(rows, CONV_TILE_ACCS / v);
    if (t * v >= best * best_v) best_v = v, best = t;
  }
  if (best_v == 1) return;
  k->vec_unit = hw;
  k->lanes = hw * best_v;
  *tile_max = best;
}

static bool is_iter_kind(const conv_t *k, const tj_tir_expr_t *e, tj_iter_kind_t kind) {
  int it = tj_sched_iter_index(k->b, e);
  return it >= 0 && k->b->iter_vars[it].kind == kind;
}

/* A matmul's weight: a parameter read at [batch..., reduce var, vector var], the batch
 * indices spatial iter vars (batch_matmul's [B, K, N]; a conv's HWIO weight, [ry, rx,
 * c, f], is not one); NULL if none. */
static const tj_buffer_t *matmul_weight(const conv_t *k) {
  const tj_tir_expr_t *vvar = k->b->iter_vars[k->vec_iter].var;
  const tj_sched_ctx_t *c = k->c;
  for (int p = 0; p < c->func->n_params; p++) {
    const tj_buffer_t *w = c->func->buffer_map ? c->func->buffer_map[p] : NULL;
    const tj_tir_expr_t *load = w && w->ndim >= 2 ? tj_sched_single_load(k->st->store.value, w) : NULL;
    int n = w ? w->ndim : 0;
    if (!load || load->load.indices[n - 1] != vvar || !is_iter_kind(k, load->load.indices[n - 2], TJ_ITER_REDUCE))
      continue;
    bool batch = true;
    for (int d = 0; d + 2 < n; d++) batch &= is_iter_kind(k, load->load.indices[d], TJ_ITER_SPATIAL);
    if (batch) return w;
  }
  return NULL;
}

static bool matmul_like(const conv_t *k) { return matmul_weight(k) != NULL; }

static int64_t reduce_terms(const conv_t *k);

/* ---- x tile: strided convs with few input channels ----
 * MobileNetV2's stem (3x3/2, 3 -> 32 channels at 112x112, NCHW) sums 27 terms per
 * output. Vectorized along its 32 output channels (channel_tile above: 8 x-positions x
 * 2 vectors) each tile's 27 k steps are followed by a transposed NCHW write-back of 16
 * accumulators. Vectorized along x instead (the x tile), the output rows are stored
 * whole, the weights are scalar broadcasts (one per output channel per k step), and the
 * input at x * 2 + rx is read from a window phased along x ([c, ry, rx, x], schedule_
 * window.c), so each k step loads whole, 64-byte aligned vectors. The tile is T output
 * channels by V vectors of x (T * V <= CONV_TILE_ACCS: 2 x 7 for the stem); each output
 * still takes its terms in the original order, so the bits are those of the plain loops.
 * MobileNetV2's stem, `bench_kernels --float-modes --repeat 100` (the model's fused
 * kernel with its batch norm and clip), thread-CPU min, Ice Lake, 1 thread, main and
 * this interleaved over 3 rounds: 0.371-0.384 -> 0.330-0.334 ms (a third, noisy round
 * 0.426); the window split into even and odd columns instead, the rx = 2 loads one
 * float off alignment: 0.391-0.440. In the model: 0.369-0.402 -> 0.303-0.338 ms.
 * Kernels wider than X_TILE_MAX_TAPS along x keep the channel tile: ResNet-18's 7x7/2
 * stem's phased window (66 KB a row) does not fit, and read through even and odd columns
 * 6 of every 7 of its zmm loads split over two cache lines: 2.9-3.0 ms against 1.7
 * (thread-CPU min, `bench_kernels --float-modes`, interleaved; with the shifts dropped,
 * wrong values but no split loads, 1.5-1.6 ms). */
#define X_TILE_MAX_TERMS 32 /* reduction terms per output: RGB 3x3 stems (27); wider ones not measured */
#define X_TILE_MAX_VECTORS 8
#define X_TILE_MAX_TAPS 3

typedef struct x_read {
  const conv_t *k;
  const tj_tir_expr_t *xvar;
  int reduce; /* r of a load whose last index is x * s + r (s >= 2), or -1 */
} x_read_t;

/* e = x * s + r (either order), s >= 2 a constant, r a reduce iter var: r's index */
static bool strided_x_index(const conv_t *k, const tj_tir_expr_t *e, const tj_tir_expr_t *xvar, int *r) {
  if (e->kind != TJ_TIR_ADD) return false;
  for (int swap = 0; swap < 2; swap++) {
    const tj_tir_expr_t *m = swap ? e->binary.b : e->binary.a, *y = swap ? e->binary.a : e->binary.b;
    int64_t s;
    if (m->kind != TJ_TIR_MUL || m->binary.a != xvar || !tj_tir_is_const_int(m->binary.b, &s) || s < 2 ||
        !is_iter_kind(k, y, TJ_ITER_REDUCE))
      continue;
    *r = tj_sched_iter_index(k->b, y);
    return true;
  }
  return false;
}

static bool find_x_read(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  x_read_t *x = v->ctx;
  int n = e->kind == TJ_TIR_BUFFER_LOAD ? e->load.n_indices : 0;
  if (n > 0 && x->reduce < 0) strided_x_index(x->k, e->load.indices[n - 1], x->xvar, &x->reduce);
  return x->reduce < 0;
}

/* The conv's innermost loop is reduce iter var it (unrolling it keeps the term order). */
static bool innermost_reduce(const conv_t *k, int it) { return k->nest.iter_of_loop[k->nest.n - 1] == it; }

/* Switches a channel-vectorized NCHW conv that reads its input at x * s + r (s >= 2)
 * with few terms per output to the x tile; the caller needs the padding window. */
static bool x_vector_tile(conv_t *k, int64_t *tile_max) {
  const tj_sched_ctx_t *c = k->c;
  int64_t hw = tj_sched_lanes(c, k->st->store.buffer->dtype);
  int d = k->st->store.n_indices;
  if (c->opts->vector_bits < 512 || c->opts->conv_tile > 0 || !tj_dtype_eq(k->st->store.buffer->dtype, TJ_F32) ||
      d < 2 || k->tile_iter < 0 || k->b->iter_vars[k->tile_iter].var != k->st->store.indices[d - 1] ||
      reduce_terms(k) > X_TILE_MAX_TERMS || !channels_from_weights(k))
    return false;
  int64_t ex = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  int64_t ef = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]];
  x_read_t x = {k, k->b->iter_vars[k->tile_iter].var, -1};
  tj_tir_visitor_t v = {.expr = find_x_read, .ctx = &x};
  tj_tir_visit_expr(&v, k->st->store.value);
  if (ex % hw || x.reduce < 0 || !innermost_reduce(k, x.reduce) ||
      k->nest.extent[k->nest.loop_of_iter[x.reduce]] > X_TILE_MAX_TAPS)
    return false;
  int64_t vectors = largest_divisor(ex / hw, X_TILE_MAX_VECTORS);
  int it = k->vec_iter;
  k->vec_iter = k->tile_iter;
  k->tile_iter = it;
  k->vec_unit = hw;
  k->lanes = hw * vectors;
  *tile_max = largest_divisor(ef, CONV_TILE_ACCS / vectors);
  k->x_tile = true;
  k->x_reduce = x.reduce;
  return true;
}

/* The planned window holds the input's last dim phased along x ([.., r, x]): the tile's
 * loads of it are contiguous vectors. */
static bool x_phased(const conv_t *k) {
  const tj_sched_window_dim_t *last = &k->window.dims[k->window.from->ndim - 1];
  return last->mode == TJ_WINDOW_PHASED && last->vec_iter == k->vec_iter && last->reduce_iter == k->x_reduce;
}

/* ---- row reductions are not convs ---- */

typedef struct load_scan {
  const conv_t *k;
  const tj_buffer_t *first; /* first buffer loaded */
  bool product;             /* two different buffers' loads multiplied */
  bool row_read;            /* a load whose last index is a reduce iter var */
} load_scan_t;

static bool first_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  load_scan_t *s = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && !s->first) s->first = e->load.buffer;
  return !s->first;
}

static const tj_buffer_t *loaded_buffer(const conv_t *k, const tj_tir_expr_t *e) {
  load_scan_t s = {k, NULL, false, false};
  tj_tir_visitor_t v = {.expr = first_load, .ctx = &s};
  tj_tir_visit_expr(&v, e);
  return s.first;
}

static bool scan_loads(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  load_scan_t *s = v->ctx;
  if (e->kind == TJ_TIR_MUL) {
    const tj_buffer_t *a = loaded_buffer(s->k, e->binary.a), *b = loaded_buffer(s->k, e->binary.b);
    s->product |= a && b && a != b;
  } else if (e->kind == TJ_TIR_BUFFER_LOAD && e->load.n_indices > 0) {
    const conv_t *k = s->k;
    int it = tj_sched_iter_index(k->b, e->load.indices[e->load.n_indices - 1]);
    /* rows shorter than two vectors are better read across rows, as a conv does */
    s->row_read |= it >= 0 && k->b->iter_vars[it].kind == TJ_ITER_REDUCE &&
                   k->nest.extent[k->nest.loop_of_iter[it]] >= 2 * tj_sched_lanes(k->c, e->load.buffer->dtype);
  }
  return true;
}

/* A reduction along rows (softmax's max and sum, a mean over the last axis): no two
 * inputs multiplied, and an input read along its contiguous last axis by a reduce var
 * over at least two vectors of elements.
 * Vectorized across output positions as a conv it reads strided columns; the row rule
 * reads each row contiguously (softmax over 12x128x128 on an Intel Xeon, 1 thread: 1.2
 * ms as a conv, 0.76 ms unscheduled). A pool (window index h*s + r) stays a conv. */
static bool row_reduction(const conv_t *k) {
  load_scan_t s = {k, NULL, false, false};
  tj_tir_visitor_t v = {.expr = scan_loads, .ctx = &s};
  tj_tir_visit_expr(&v, k->b->body->store.value);
  return !s.product && s.row_read;
}

static bool match(conv_t *k) {
  const tj_block_t *b = k->b;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (!in || st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE) return false;
  const tj_buffer_t *cb = st->store.buffer;
  int d = st->store.n_indices;
  if (in->store.buffer != cb || in->store.n_indices != d || d < 1 || cb->strides || cb->dtype.lanes != 1) return false;
  int n_spatial = k->nest.n - k->nest.n_reduce;
  if (d != n_spatial) return false;
  for (int i = 0; i < d; i++) {
    int it = tj_sched_iter_index(b, st->store.indices[i]);
    if (it < 0 || b->iter_vars[it].kind != TJ_ITER_SPATIAL || in->store.indices[i] != st->store.indices[i]) return false;
    for (int j = 0; j < i; j++)
      if (st->store.indices[j] == st->store.indices[i]) return false;
  }
  if (!tj_sched_pure_update(b, st) || tj_sched_count_uses(in, cb) != 1 || row_reduction(k)) return false;
  k->st = st;
  k->init = in;
  k->vec_iter = tj_sched_iter_index(b, st->store.indices[d - 1]);
  k->tile_iter = d >= 2 ? tj_sched_iter_index(b, st->store.indices[d - 2]) : -1;
  tj_sched_conv_pick_axes(k->c, &k->nest, st, &k->vec_iter, &k->tile_iter);
  int64_t ev = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]];
  k->lanes = largest_divisor(ev, tj_sched_lanes(k->c, cb->dtype));
  if (k->lanes < 2) return false;
  int64_t tile_max = k->c->opts->conv_tile > 0          ? k->c->opts->conv_tile
                     : k->c->opts->vector_bits >= 512 ? DEFAULT_TILE_WIDE
                                                      : DEFAULT_TILE;
  int64_t rows = k->tile_iter < 0 ? 1 : k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  bool mm = matmul_like(k);
  if (mm && rows < MATMUL_TILE) {
    k->gemv = true;
    k->lanes = gemv_lanes(k, ev, rows);
  } else if (mm && !gemm_tile(k, ev, rows, &tile_max)) {
    int64_t wide = largest_divisor(ev, k->lanes * MATMUL_VECTORS);
    if (wide % k->lanes == 0) k->lanes = wide, tile_max = MATMUL_TILE;
  } else if (!mm && !(k->x_tile_allowed && x_vector_tile(k, &tile_max))) {
    channel_tile(k, ev, rows, &tile_max);
  }
  if (k->x_tile) rows = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]]; /* the tile dim changed */
  k->tile = largest_divisor(rows, tile_max);
  return true;
}

/* ---- weight repacking ---- */

static bool stored_anywhere(const tj_sched_ctx_t *c, const tj_buffer_t *buf) {
  for (int i = 0; i < c->n_stmts; i++)
    if (tj_sched_writes(c->stmts[i], buf)) return true;
  return false;
}

/* A matmul's [K, N] weight read a vector of N at a time steps N*4 bytes per k: with long
 * rows and a weight larger than L2 every column block streams from memory through a few
 * cache sets (N = 3072: 12 KB, a multiple of 4 KB, so every k falls into one L1 set).
 * Packed [N/16, K, 16] it streams contiguously. Measured on BERT's layer (Intel Xeon,
 * 1 thread): the 768x3072 and 3072x768 FFN matmuls 40 -> 19 and 21 -> 11 ms; the 768x768
 * ones, 2.25 MB, got slower packed (2.0 -> 2.6 ms: the per-call repack costs more). */
#define LONG_ROW_BYTES 2048
#define PACK_ROWS_MIN_BYTES (4 << 20)

/* Packing costs a pass over the weight per call: it pays only when each element is used
 * by many outputs (a matrix-vector product, M = 1, packed its 1280 x 1000 weight in 1.1 of
 * its 1.9 ms). */
#define PACK_ROWS_MIN_REUSE 16

/* How many outputs use each element of the weight `load` reads: the product of the
 * extents of the block's spatial iter vars the load does not index with. */
static int64_t reuse(const conv_t *k, const tj_tir_expr_t *load) {
  int64_t r = 1;
  for (int i = 0; i < k->b->n_iter_vars; i++) {
    const tj_iter_var_t *iv = &k->b->iter_vars[i];
    int64_t e;
    if (iv->kind != TJ_ITER_SPATIAL || !tj_tir_is_const_int(iv->dom.extent, &e)) continue;
    bool used = false;
    for (int d = 0; d < load->load.n_indices && !used; d++) used = tj_tir_expr_uses_var(load->load.indices[d], iv->var);
    if (!used) r *= e;
  }
  return r;
}

/* A 2-D weight input used by many rows is copied per group of column panels (see
 * with_panel), one pass over it that reads each row's group contiguously: that pays
 * from 1 MB. 128x768 by an input 768x768 (2.25 MB, read in place before), 1 thread,
 * Ice Lake, `tvmjit bench` min of 40 calls, 4 interleaved rounds: 1.00-1.08 -> 0.98-0.99
 * ms, medians 1.11-1.23 -> 1.02-1.06. With 16 rows (two row blocks per panel) the copy
 * is not measured to pay, so it stays with the 4 MB floor. */
#define PANEL_MIN_BYTES (1 << 20)
#define PANEL_MIN_REUSE 64

static int64_t per_call_pack_floor(const conv_t *k, const tj_buffer_t *w, const tj_tir_expr_t *load) {
  return w->ndim == 2 && reuse(k, load) >= PANEL_MIN_REUSE ? PANEL_MIN_BYTES : PACK_ROWS_MIN_BYTES;
}

static bool long_rows(const tj_buffer_t *w, int64_t min_bytes) {
  int64_t n, elems;
  int64_t bytes = (int64_t)tj_dtype_bytes(w->dtype);
  return tj_tir_is_const_int(w->shape[w->ndim - 1], &n) && n * bytes >= LONG_ROW_BYTES &&
         tj_buffer_static_size(w, &elems) && elems * bytes >= min_bytes;
}

/* A GEMV's weight packed at load: only a 2-D one, rows of at least LONG_ROW_BYTES. */
#define GEMV_PACK_MIN_BYTES 0
static bool gemv_packs(const tj_buffer_t *w) { return w->ndim == 2 && long_rows(w, GEMV_PACK_MIN_BYTES); }

/* Loads of a read-only parameter whose vector-dim index f sits outside its last dim, or
 * in a last dim of long rows: repacked to [f / L, the other dims in order, f % L] (OIHW
 * -> O/16 I H W 16o; a matmul's K x N -> N/16 K 16), so the weights of one block of L
 * output channels are contiguous: a conv walking one block at a time (channel_blocks)
 * keeps it in cache, where rows of the unblocked layout, F*4 bytes apart, would fall
 * into a few cache sets. */
static void plan_repacks(conv_t *k, const tj_tir_expr_t *value) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *vvar = k->b->iter_vars[k->vec_iter].var;
  for (int p = 0; p < c->func->n_params && k->n_repacks < MAX_REPACK; p++) {
    const tj_buffer_t *w = c->func->buffer_map ? c->func->buffer_map[p] : NULL;
    int64_t elems;
    if (!w || w->ndim < 2 || w->ndim >= TJ_SCHED_MAX_NEST || w->strides || w->elem_offset ||
        !tj_buffer_static_size(w, &elems) || elems > TJ_SCHED_MAX_REPACK_ELEMS || w->dtype.lanes != 1)
      continue;
    const tj_tir_expr_t *load = tj_sched_single_load(value, w);
    if (!load || stored_anywhere(c, w)) continue;
    int at = -1;
    for (int i = 0; i < w->ndim; i++)
      if (load->load.indices[i] == vvar) at = i;
    /* A constant weight is packed once, at load (schedule_prepack.c): then its size no
     * longer has to pay for the copy. BERT's 768x768 projections (2.25 MB, rows of 3 KB)
     * went from 1.25-1.37 to 1.09-1.16 ms each, 1 thread, A/B interleaved 4 x 40 runs. */
    bool constant = c->opts->prepacked && p < 64 && (c->opts->constant_params >> p & 1);
    /* A GEMV's constant weight is packed too, once at load, as [N / W, K, W] with W its
     * parallel block's columns: each block then streams one contiguous run instead of K
     * runs of W * 4 bytes, one row apart (GEMV_PACK_MIN_BYTES). */
    bool gemv_pack = constant && k->gemv && gemv_packs(w);
    if (at == w->ndim - 1 && !gemv_pack &&
        (!long_rows(w, constant ? 0 : per_call_pack_floor(k, w, load)) || reuse(k, load) < PACK_ROWS_MIN_REUSE))
      continue;
    if (at < 0) continue;
    repack_t *r = &k->repacks[k->n_repacks];
    const tj_tir_expr_t *shape[TJ_SCHED_MAX_NEST];
    int64_t f;
    if (!tj_tir_is_const_int(w->shape[at], &f)) continue;
    int q = 0;
    for (int i = 0; i < w->ndim; i++)
      if (i != at) r->perm[q++] = i;
    r->perm[q] = at;
    shape[0] = tj_tir_i64(c->arena, f / k->lanes);
    for (int i = 0; i + 1 < w->ndim; i++) shape[1 + i] = w->shape[r->perm[i]];
    shape[w->ndim] = tj_tir_i64(c->arena, k->lanes);
    r->from = w;
    /* Widened kernels read float16 weights as float32: convert them once here. */
    tj_dtype_t dt = k->widen && is_narrow(w->dtype) ? TJ_F32 : w->dtype;
    r->to = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_packed", w->name), dt, w->ndim + 1, shape, NULL);
    if (!r->to) return (void)(c->oom = true);
    tj_tir_prepack_t want = {.param = p, .ndim = w->ndim, .lanes = k->lanes, .dtype = dt};
    for (int i = 0; i < w->ndim; i++) want.perm[i] = r->perm[i];
    const tj_buffer_t *given = tj_sched_prepack(c, &want, r->to);
    r->outside = given != NULL;
    if (given) r->to = given;
    k->n_repacks++;
  }
}

typedef struct repack_sub {
  const conv_t *k;
} repack_sub_t;

/* A load of a repacked weight at f = fv * L + fi (the element being built) becomes
 * packed[fv, the other indices..., fi]. */
static const tj_tir_expr_t *repack_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  const conv_t *k = ((repack_sub_t *)m->ctx)->k;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return NULL;
  for (int i = 0; i < k->n_repacks; i++) {
    const repack_t *r = &k->repacks[i];
    if (e->load.buffer != r->from) continue;
    int nd = r->from->ndim;
    const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
    idx[0] = k->panel ? tj_sched_cast_like(k->c, e->load.indices[r->perm[nd - 1]], k->panel_g)
                      : tj_sched_cast_like(k->c, e->load.indices[r->perm[nd - 1]], k->cur_fv);
    idx[nd] = tj_sched_cast_like(k->c, e->load.indices[r->perm[nd - 1]], k->cur_fi);
    for (int q = 0; q + 1 < nd; q++)
      if (!(idx[1 + q] = tj_tir_mutate_expr(m, e->load.indices[r->perm[q]]))) return NULL;
    /* panels of one K block hold its rows only: the weight's row index is kc * k_block + kk */
    if (k->panel && k->k_block) idx[1] = tj_sched_cast_like(k->c, e->load.indices[r->perm[0]], k->kk);
    const tj_tir_expr_t *l = idx[0] && idx[nd] ? tj_tir_load(m->arena, r->to, nd + 1, idx) : NULL;
    if (!l) m->failed = true;
    return l;
  }
  return NULL;
}

static const tj_tir_expr_t *apply_repacks(conv_t *k, const tj_tir_expr_t *e) {
  if (!k->n_repacks || !e) return e;
  repack_sub_t rs = {k};
  tj_tir_mutator_t m = {.arena = k->c->arena, .expr = repack_expr, .ctx = &rs};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, e);
  if (m.failed || !r) return (void)(k->c->oom = true), NULL;
  return r;
}

/* for fv, j..., fi: to[fv, j..., fi] = from[..., fv * L + fi, ...], loops in to's order so
 * the writes are contiguous; large weights repack in parallel over the blocks. The fi
 * loop is vectorized here (a strided load, one vector store): left to LLVM's loop
 * vectorizer, the nest doubled the compile time of a ResNet conv (gathers, runtime
 * alias checks and an interleaved copy of the loop). */
static const tj_tir_stmt_t *repack_nest(conv_t *k, const repack_t *r) {
  tj_sched_ctx_t *c = k->c;
  int nd = r->from->ndim;
  const tj_tir_expr_t *vars[TJ_SCHED_MAX_NEST], *src[TJ_SCHED_MAX_NEST];
  for (int q = 0; q <= nd; q++)
    if (!(vars[q] = tj_sched_var(c, "p"))) return (void)(c->oom = true), NULL;
  for (int q = 0; q + 1 < nd; q++) src[r->perm[q]] = vars[1 + q];
  src[r->perm[nd - 1]] = tj_sched_add(c, tj_sched_mul(c, vars[0], k->lanes), vars[nd]);
  if (!src[r->perm[nd - 1]]) return (void)(c->oom = true), NULL;
  const tj_tir_expr_t *v = tj_tir_load(c->arena, r->from, nd, src);
  if (v && !tj_dtype_eq(v->dtype, r->to->dtype)) v = tj_tir_cast(c->arena, r->to->dtype, v);
  const tj_tir_stmt_t *s = v ? tj_tir_store(c->arena, r->to, nd + 1, vars, v) : NULL;
  int64_t elems = 0;
  tj_buffer_static_size(r->to, &elems);
  /* Loops in to's order, except for a weight packed along its own last dim (a matmul's
   * [K, N] -> [N/L, K, L]): there the block loop goes inside, so each source row is read
   * once, contiguously, and written to N/L streams. Block-outer order walked all K rows
   * (12 KB apart for N = 3072, a new page each) once per block: 48 x 768 pages per call. */
  int order[TJ_SCHED_MAX_NEST + 1];
  bool rows_outer = r->perm[nd - 1] == nd - 1 && nd >= 2;
  for (int q = 0; q <= nd; q++) order[q] = q;
  if (rows_outer) {
    for (int q = 0; q + 1 < nd; q++) order[q] = q + 1;
    order[nd - 1] = 0;
  }
  for (int i = nd; i >= 0 && s; i--) {
    int q = order[i];
    int64_t e;
    tj_tir_is_const_int(r->to->shape[q], &e);
    bool par = i == 0 && e > 1 && elems >= REPACK_PARALLEL_MIN_ELEMS;
    tj_for_kind_t kind = par ? TJ_FOR_PARALLEL : q == nd ? TJ_FOR_VECTORIZED : TJ_FOR_SERIAL;
    s = tj_sched_loop(c, vars[q], e, kind, s);
  }
  if (!s) c->oom = true;
  return s;
}

/* ---- widening ----
 * float16 arithmetic as written rounds after every operation. LLVM does it by
 * promoting: fpext both operands, the float32 op, fptrunc. Done explicitly here, the
 * accumulator lives in float32 registers holding float16 values, inputs come from
 * float32 copies (packed weights, the padded input) and each op is
 *   round(op(a, b)),  round(x) = float32(float16(x)),
 * which is the correctly rounded float16 result: a float16 product is exact in float32,
 * and float32's 24 bits are >= 2*11 + 2, so rounding a float32 sum, difference or
 * quotient again to float16 is innocuous. Same bits, fewer conversions, and the
 * input's broadcast is a plain float32 load. bfloat16 the same way: its ops are float32
 * ops rounded once (jit/codegen_bf16.c), and its loads widen exactly; a bfloat16 conv
 * under --mixed-precision=bfloat16 (the seed's) went from 0.75 to 0.5 ms per conv. */

static const tj_tir_expr_t *round_to(tj_arena_t *a, tj_dtype_t narrow, const tj_tir_expr_t *x) {
  const tj_tir_expr_t *h = x ? tj_tir_cast(a, narrow, x) : NULL;
  return h ? tj_tir_cast(a, TJ_F32, h) : NULL;
}

/* An f32 expression with the exact value of e (f16 or f32); NULL if e has a form not
 * handled (the caller then keeps the kernel unwidened). */
static const tj_tir_expr_t *widen(conv_t *k, const tj_tir_expr_t *e) {
  tj_arena_t *a = k->c->arena;
  bool narrow = is_narrow(e->dtype), f32 = tj_dtype_eq(e->dtype, TJ_F32);
  if (!narrow && !f32) return NULL;
  switch (e->kind) {
    case TJ_TIR_FLOAT_IMM: /* a bfloat16 literal is the rounded value, as codegen makes it */
      if (tj_dtype_eq(e->dtype, TJ_BF16))
        return tj_tir_float(a, TJ_F32, tj_bfloat_to_float(tj_float_to_bfloat((float)e->float_imm)));
      return f32 ? e : tj_tir_float(a, TJ_F32, e->float_imm);
    case TJ_TIR_BUFFER_LOAD:
      if (e->load.buffer == k->st->store.buffer) return k->acc_value ? k->acc_value : tj_tir_cast(a, TJ_F32, e);
      if (e->load.buffer == k->shadow_from && k->windowed) return tj_sched_window_load(k->c, &k->window, k->cur_vals);
      if (e->load.buffer == k->shadow_from) return tj_tir_load(a, k->shadow_to, e->load.n_indices, e->load.indices);
      return f32 ? e : tj_tir_cast(a, TJ_F32, e);
    case TJ_TIR_CAST: {
      const tj_tir_expr_t *x = e->unary.operand;
      bool from_float = is_narrow(x->dtype) || tj_dtype_eq(x->dtype, TJ_F32);
      if (!from_float) return f32 ? e : tj_tir_cast(a, TJ_F32, e);
      const tj_tir_expr_t *w = widen(k, x);
      return f32 || tj_dtype_eq(x->dtype, e->dtype) ? w : round_to(a, e->dtype, w);
    }
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV:
    case TJ_TIR_MIN: case TJ_TIR_MAX: {
      const tj_tir_expr_t *x = widen(k, e->binary.a), *y = widen(k, e->binary.b);
      const tj_tir_expr_t *r = x && y ? tj_tir_binary(a, e->kind, x, y) : NULL;
      bool exact = e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX;
      return narrow && !exact ? round_to(a, e->dtype, r) : r;
    }
    default: return NULL;
  }
}

/* Widen when the arithmetic involves float16 and the accumulator is float16 or float32;
 * a float16 accumulator stays float16 where the host has float16 vector arithmetic. */
static bool wants_widen(const conv_t *k) {
  const tj_buffer_t *cb = k->st->store.buffer;
  if (!is_f16(cb->dtype) && !tj_dtype_eq(cb->dtype, TJ_F32)) return false;
  if (is_f16(cb->dtype)) return !k->c->opts->native_f16;
  find_f16_t f = {false};
  tj_tir_visitor_t v = {.expr = find_f16, .ctx = &f};
  tj_tir_visit_expr(&v, k->st->store.value);
  return f.found;
}

/* ---- building ---- */

/* Iter values for one element of the tile: outer (by iter var) + xi, fi + reduce vars. */
typedef struct element {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
} element_t;

static void element_values(conv_t *k, const tj_tir_expr_t *const *outer, const tj_tir_expr_t *xo,
                           const tj_tir_expr_t *xi, const tj_tir_expr_t *fv, const tj_tir_expr_t *fi,
                           const tj_tir_expr_t *const *reduce, element_t *out) {
  tj_sched_ctx_t *c = k->c;
  const tj_block_t *b = k->b;
  for (int it = 0; it < b->n_iter_vars; it++) {
    const tj_tir_expr_t *v;
    if (it == k->vec_iter) v = tj_sched_add(c, tj_sched_mul(c, fv, k->lanes), fi);
    else if (it == k->tile_iter) v = tj_sched_add(c, tj_sched_mul(c, xo, k->tile), xi);
    else if (b->iter_vars[it].kind == TJ_ITER_REDUCE) v = reduce ? reduce[it] : tj_tir_i64(c->arena, 0);
    else v = outer[it];
    out->vals[it] = tj_sched_cast_like(c, b->iter_vars[it].var, v);
    if (!out->vals[it]) c->oom = true;
  }
}

/* for xi in unroll(T): for fi in vectorized(L): make(xi, fi) */
typedef const tj_tir_stmt_t *(*tile_body_fn)(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi,
                                             void *arg);

/* With vec_unit: for xi in unroll(T): for vi in unroll(L / U): for fi in vectorized(U):
 * make(xi, vi * U + fi). One LLVM vector per hardware register: a 48-lane vector (three
 * zmm) is legalized through shuffles and spills (a 128x768x768 matmul with an 8 x 48
 * tile took 160 ms instead of 1). */
static const tj_tir_stmt_t *tile_loops(conv_t *k, tile_body_fn body, void *arg) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *xi = tj_sched_var(c, "xi"), *fi = tj_sched_var(c, "fi");
  if (!xi || !fi) return NULL;
  const tj_tir_stmt_t *s;
  if (k->vec_unit > 0 && k->vec_unit < k->lanes) {
    const tj_tir_expr_t *vi = tj_sched_var(c, "vi");
    const tj_tir_expr_t *lane = tj_sched_add(c, tj_sched_mul(c, vi, k->vec_unit), fi);
    if (!lane) return NULL;
    s = tj_sched_loop(c, fi, k->vec_unit, TJ_FOR_VECTORIZED, body(k, xi, lane, arg));
    s = tj_sched_loop(c, vi, k->lanes / k->vec_unit, TJ_FOR_UNROLLED, s);
  } else {
    s = tj_sched_loop(c, fi, k->lanes, TJ_FOR_VECTORIZED, body(k, xi, fi, arg));
  }
  return tj_sched_loop(c, xi, k->tile, k->tile > 1 ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, s);
}

/* The write-back: when the output's contiguous dim is the tile's (NCHW with the output
 * channels vectorized), lanes unrolled and the tile vectorized, so each store is one
 * contiguous vector (the acc's transpose is done in registers); stored along the vector
 * dim instead, each lane became a scalar store: 224 of them per tile, and a ResNet conv
 * took 14x as long to optimize (868 vs 61 ms, 1x1 conv 24 -> 144). */
static bool output_contiguous_along_tile(const conv_t *k) {
  const tj_tir_stmt_t *st = k->st;
  int d = st->store.n_indices;
  return k->tile_iter >= 0 && k->tile > 1 && st->store.indices[d - 1] == k->b->iter_vars[k->tile_iter].var;
}

typedef struct tile_arg {
  const tj_tir_expr_t *const *outer;
  const tj_tir_expr_t *xo, *fv;
  const tj_tir_expr_t *q; /* K-blocked: the output position block the tile belongs to */
  const tj_tir_expr_t *const *reduce;
  const tj_sched_epilogue_t *ep;
  /* bfloat16 pairs: the reduce values of the pair's second term (reduce: its first) */
  const tj_tir_expr_t *const *reduce2;
} tile_arg_t;

static const tj_tir_expr_t *acc_load(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi) {
  const tj_tir_expr_t *idx[2] = {xi, fi};
  const tj_tir_expr_t *l = tj_tir_load(k->c->arena, k->acc, 2, idx);
  if (!l) k->c->oom = true;
  return l;
}

static const tj_tir_stmt_t *acc_store(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi,
                                      const tj_tir_expr_t *value) {
  const tj_tir_expr_t *idx[2] = {xi, fi};
  const tj_tir_stmt_t *s = value ? tj_tir_store(k->c->arena, k->acc, 2, idx, value) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

/* The output's indices of tile element (xi, fi): where its value is stored. */
static void tile_output_indices(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi,
                                const tj_tir_expr_t **idx) {
  element_t el;
  element_values(k, a->outer, a->xo, xi, a->fv, fi, NULL, &el);
  for (int i = 0; i < k->st->store.n_indices; i++)
    idx[i] = el.vals[tj_sched_iter_index(k->b, k->st->store.indices[i])];
}

static const tj_tir_stmt_t *init_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  tile_arg_t *a = arg;
  element_t el;
  element_values(k, a->outer, a->xo, xi, a->fv, fi, NULL, &el);
  const tj_tir_expr_t *v = tj_sched_subst_expr(k->c, k->b, k->init->store.value, el.vals);
  if (v && k->widen && !(v = widen(k, v))) k->c->oom = true;
  return acc_store(k, xi, fi, v);
}

/* ---- bfloat16 pairs ----
 * With AVX512-BF16 (opts->bf16_dot), an update C += f32(a) * f32(b) of bfloat16 loads
 * a, b into a float32 C takes its reduction two steps at a time:
 *   C = tir.tvmjit.bf16_dot2(C, a[r = 2j], a[r = 2j + 1], b[r = 2j], b[r = 2j + 1])
 * one vdpbf16ps per pair and vector (jit/codegen_bf16.c), on the bfloat16 values as
 * stored: nothing is widened, the window and packed weights stay bfloat16. An odd
 * extent ends with one plain term. The pair is summed in the instruction's order with
 * denormals flushed (docs/numerics.md): a reordered float32 sum, so never under
 * strict float (bf16_dot is off there). */
typedef struct bf16_terms {
  const tj_tir_expr_t *a, *b; /* the two bfloat16 loads of the product */
} bf16_terms_t;

static const tj_tir_expr_t *bf16_load_in_cast(const tj_tir_expr_t *e) {
  if (e->kind != TJ_TIR_CAST || !tj_dtype_eq(e->dtype, TJ_F32)) return NULL;
  const tj_tir_expr_t *x = e->unary.operand;
  return x->kind == TJ_TIR_BUFFER_LOAD && tj_dtype_eq(x->dtype, TJ_BF16) ? x : NULL;
}

/* value = C + f32(a) * f32(b), C the output's own load (either order of each). */
static bool bf16_product(const conv_t *k, const tj_tir_expr_t *value, bf16_terms_t *out) {
  if (value->kind != TJ_TIR_ADD) return false;
  const tj_tir_expr_t *acc = value->binary.a, *prod = value->binary.b;
  if (prod->kind == TJ_TIR_BUFFER_LOAD) acc = value->binary.b, prod = value->binary.a;
  if (acc->kind != TJ_TIR_BUFFER_LOAD || acc->load.buffer != k->st->store.buffer || prod->kind != TJ_TIR_MUL)
    return false;
  out->a = bf16_load_in_cast(prod->binary.a);
  out->b = bf16_load_in_cast(prod->binary.b);
  return out->a && out->b;
}

/* The reduce iter var to pair: the longest one not unrolled inside the tile that walks
 * the broadcast operand's contiguous last dim (the input channels of an NHWC conv, K of
 * a matmul: the pair is one 32-bit load), when the tile's ops split into 16-lane float32
 * vectors (vdpbf16ps's zmm form; the caller then sets vec_unit 16); -1 otherwise.
 * NCHW convs keep the widened path: their pair (two channel planes) took two loads and
 * a pack per broadcast, and ResNet-18's strided and 256-channel convs got slower (see
 * docs/cpu-schedule.md "bfloat16"). */
static int pick_pair(const conv_t *k) {
  bf16_terms_t t;
  int64_t unit = k->vec_unit > 0 ? k->vec_unit : k->lanes;
  if (!k->c->opts->bf16_dot || k->x_tile || unit % 16 || !tj_dtype_eq(k->st->store.buffer->dtype, TJ_F32) ||
      !bf16_product(k, k->st->store.value, &t))
    return -1;
  const tj_tir_expr_t *vec = k->b->iter_vars[k->vec_iter].var;
  const tj_tir_expr_t *bc = t.a;
  for (int i = 0; i < t.a->load.n_indices; i++)
    if (tj_tir_expr_uses_var(t.a->load.indices[i], vec)) bc = t.b;
  if (bc->load.n_indices < 1) return -1;
  const tj_tir_expr_t *last = bc->load.indices[bc->load.n_indices - 1];
  int best = -1;
  int64_t best_extent = 2;
  for (int l = 0; l < k->nest.n; l++) {
    int it = k->nest.iter_of_loop[l];
    if (k->b->iter_vars[it].kind != TJ_ITER_REDUCE || it == k->inner_reduce || k->nest.extent[l] < best_extent ||
        !tj_tir_expr_uses_var(last, k->b->iter_vars[it].var))
      continue;
    best = it;
    best_extent = k->nest.extent[l];
  }
  return best;
}

/* One bfloat16 operand of a pair's term at element el: repacked, read from the window. */
static const tj_tir_expr_t *pair_operand(conv_t *k, const tj_tir_expr_t *load, const element_t *el) {
  const tj_tir_expr_t *v = apply_repacks(k, tj_sched_subst_expr(k->c, k->b, load, el->vals));
  if (v && k->windowed)
    v = tj_sched_replace_load(k->c, v, k->window.from, tj_sched_window_load(k->c, &k->window, el->vals));
  return v;
}

static const tj_tir_stmt_t *pair_update_body(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *xi,
                                             const tj_tir_expr_t *fi) {
  bf16_terms_t t;
  if (!bf16_product(k, k->st->store.value, &t)) return (void)(k->c->oom = true), NULL;
  element_t e0, e1;
  element_values(k, a->outer, a->xo, xi, a->fv, fi, a->reduce, &e0);
  element_values(k, a->outer, a->xo, xi, a->fv, fi, a->reduce2, &e1);
  k->cur_fv = a->fv;
  k->cur_fi = fi;
  const tj_tir_expr_t *args[5] = {acc_load(k, xi, fi), pair_operand(k, t.a, &e0), pair_operand(k, t.a, &e1),
                                  pair_operand(k, t.b, &e0), pair_operand(k, t.b, &e1)};
  for (int i = 0; i < 5; i++)
    if (!args[i]) return (void)(k->c->oom = true), NULL;
  return acc_store(k, xi, fi, tj_tir_call(k->c->arena, TJ_F32, "tir.tvmjit.bf16_dot2", 5, args));
}

static const tj_tir_stmt_t *update_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  tile_arg_t *a = arg;
  if (a->reduce2) return pair_update_body(k, a, xi, fi);
  element_t el;
  element_values(k, a->outer, a->xo, xi, a->fv, fi, a->reduce, &el);
  k->cur_fv = a->fv;
  k->cur_fi = fi;
  const tj_tir_expr_t *v = apply_repacks(k, tj_sched_subst_expr(k->c, k->b, k->st->store.value, el.vals));
  k->cur_vals = el.vals;
  if (k->widen) {
    k->acc_value = acc_load(k, xi, fi);
    if (v && !(v = widen(k, v))) k->c->oom = true;
    k->acc_value = NULL;
  } else {
    v = tj_sched_replace_load(k->c, v, k->st->store.buffer, acc_load(k, xi, fi));
    if (v && k->windowed) v = tj_sched_replace_load(k->c, v, k->window.from, tj_sched_window_load(k->c, &k->window, el.vals));
  }
  k->cur_vals = NULL;
  return acc_store(k, xi, fi, v);
}

static const tj_tir_stmt_t *store_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  tile_arg_t *a = arg;
  tj_sched_ctx_t *c = k->c;
  int d = k->st->store.n_indices;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
  tile_output_indices(k, a, xi, fi, idx);
  const tj_tir_expr_t *v = acc_load(k, xi, fi);
  if (v && k->widen && !tj_dtype_eq(v->dtype, k->st->store.buffer->dtype))
    v = tj_tir_cast(c->arena, k->st->store.buffer->dtype, v); /* exact: acc holds a float16 value */
  if (a->ep->n && !k->ep_in_acc) v = tj_sched_apply_epilogue(c, a->ep, v, idx);
  if (k->n_residual && v) {
    const tj_tir_expr_t *at[2] = {k->channel_blocks ? fi : tj_sched_add(c, tj_sched_mul(c, a->fv, k->lanes), fi),
                                  tj_sched_add(c, tj_sched_mul(c, a->xo, k->tile), xi)};
    for (int r = 0; r < k->n_residual && v && at[0] && at[1]; r++)
      v = tj_sched_replace_load(c, v, k->residual_from[r], tj_tir_load(c->arena, k->residual_to[r], 2, at));
  }
  const tj_tir_stmt_t *s = v ? tj_tir_store(c->arena, a->ep->out, d, idx, v) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* ---- the epilogue in the accumulators ----
 * NCHW with the output channels vectorized, the write-back transposes the tile (T
 * positions x V vectors of channels) into T-wide runs along x, and the epilogue ran on
 * those runs: per output channel a broadcast of each batch-norm parameter, a scalar
 * reciprocal and 5 ops on a T-lane vector, 48 times per tile of MobileNetV2's 96->576
 * expand (~400 of the ~1100 instructions after its 96-step k loop of 21 FMAs each).
 * When every input the epilogue reads other than the conv's value is indexed by the
 * output channel alone (a batch norm's parameters, a clip's constants), it is applied
 * to the accumulators first, in their own layout: contiguous parameter vectors, one op
 * per accumulator. Each element goes through the same ops in the same order (same bits
 * in the strict float mode); only the store is left to the transpose. */
typedef struct channel_only {
  const conv_t *k;
  bool ok;
} channel_only_t;

static bool check_channel_only(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  channel_only_t *co = v->ctx;
  const conv_t *k = co->k;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer == k->st->store.buffer) return co->ok;
  for (int d = 0; d < e->load.n_indices; d++)
    for (int it = 0; it < k->b->n_iter_vars; it++) {
      const tj_iter_var_t *iv = &k->b->iter_vars[it];
      int64_t ext;
      bool single = tj_tir_is_const_int(iv->dom.extent, &ext) && ext == 1; /* batch 1 */
      if (it != k->vec_iter && !single && tj_tir_expr_uses_var(e->load.indices[d], iv->var)) co->ok = false;
    }
  return co->ok;
}

static bool plan_ep_in_acc(conv_t *k, const tj_sched_epilogue_t *ep) {
  const tj_tir_stmt_t *st = k->st;
  if (!ep->n || k->widen || k->n_residual || !output_contiguous_along_tile(k) ||
      !tj_dtype_eq(ep->out->dtype, st->store.buffer->dtype))
    return false;
  const tj_tir_expr_t *conv = tj_tir_load(k->c->arena, st->store.buffer, st->store.n_indices, st->store.indices);
  const tj_tir_expr_t *v = conv ? tj_sched_apply_epilogue(k->c, ep, conv, st->store.indices) : NULL;
  if (!v) return (void)(k->c->oom = true), false;
  channel_only_t co = {k, true};
  tj_tir_visitor_t vis = {.expr = check_channel_only, .ctx = &co};
  tj_tir_visit_expr(&vis, v);
  return co.ok;
}

static const tj_tir_stmt_t *ep_acc_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  tile_arg_t *a = arg;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
  tile_output_indices(k, a, xi, fi, idx);
  const tj_tir_expr_t *v = acc_load(k, xi, fi);
  return acc_store(k, xi, fi, v ? tj_sched_apply_epilogue(k->c, a->ep, v, idx) : NULL);
}

/* ---- residual rows ----
 * A residual add in the epilogue reads a tensor at the output's own indices. NCHW
 * with the tile along x, each tile's write-back reads a short run of every channel's
 * row (V*16 channel planes at once, 16 bytes each for a 4-wide tile), and the tensor,
 * written two kernels before, has left L2 by then: those loads miss with a stream per
 * channel, more than the prefetchers follow, and each epilogue waited for them.
 * ResNet-18's 64-channel 3x3 conv at 56x56 took 1.77 ms with its residual add against
 * 1.52 without (min of 40 calls, 1 thread, Intel Xeon Ice Lake), and 1.52 when the
 * added tensor was one still in cache. Copied first, a row (the block's channels x the
 * row's width, 14 KB) is read in one pass of independent contiguous loads, and the
 * write-back reads the copy. Same values, same bits. */
#define RESIDUAL_MIN_REDUCE 64 /* reduction terms per output: below, a copy is not small */

typedef struct residual_scan {
  const tj_tir_stmt_t *store;      /* the epilogue stage's store */
  const tj_buffer_t *buf;          /* the buffer looked at, or NULL: collect candidates */
  const tj_buffer_t *found[MAX_RESIDUAL + 1];
  int n_found;
  bool other_use;                  /* buf loaded at other indices */
} residual_scan_t;

static bool at_store_indices(const tj_tir_expr_t *load, const tj_tir_stmt_t *store) {
  if (load->load.n_indices != store->store.n_indices) return false;
  for (int i = 0; i < load->load.n_indices; i++)
    if (load->load.indices[i] != store->store.indices[i]) return false;
  return true;
}

static bool scan_residual(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  residual_scan_t *r = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return true;
  bool same = at_store_indices(e, r->store);
  if (r->buf) {
    r->other_use |= e->load.buffer == r->buf && !same;
    return true;
  }
  for (int i = 0; i < r->n_found; i++)
    if (r->found[i] == e->load.buffer) return true;
  if (same && r->n_found <= MAX_RESIDUAL) r->found[r->n_found++] = e->load.buffer;
  return true;
}

/* b is read by the epilogue only at its stages' own indices and written by none of it. */
static bool residual_candidate(const conv_t *k, const tj_sched_epilogue_t *ep, const tj_buffer_t *b) {
  if (b == k->st->store.buffer || b->dtype.lanes != 1 || b->strides || !tj_dtype_eq(b->dtype, ep->out->dtype))
    return false;
  for (int s = 0; s < ep->n; s++) {
    if (b == ep->inputs[s] || b == ep->stores[s]->store.buffer) return false;
    residual_scan_t r = {.store = ep->stores[s], .buf = b};
    tj_tir_visitor_t v = {.expr = scan_residual, .ctx = &r};
    tj_tir_visit_expr(&v, ep->stores[s]->store.value);
    if (r.other_use) return false;
  }
  return true;
}

static int64_t reduce_terms(const conv_t *k) {
  int64_t n = 1;
  for (int l = 0; l < k->nest.n; l++)
    if (k->b->iter_vars[k->nest.iter_of_loop[l]].kind == TJ_ITER_REDUCE) n *= k->nest.extent[l];
  return n;
}

/* The channels of one row copy: the block's (channel_blocks) or all of them. */
static int64_t residual_channels(const conv_t *k) {
  return k->channel_blocks ? k->lanes : k->nest.extent[k->nest.loop_of_iter[k->vec_iter]];
}

static void plan_residual_rows(conv_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  if (!ep->n || !output_contiguous_along_tile(k) || k->widen || k->panel || reduce_terms(k) < RESIDUAL_MIN_REDUCE)
    return;
  for (int s = 0; s < ep->n; s++) {
    residual_scan_t r = {.store = ep->stores[s]};
    tj_tir_visitor_t v = {.expr = scan_residual, .ctx = &r};
    tj_tir_visit_expr(&v, ep->stores[s]->store.value);
    for (int i = 0; i < r.n_found && k->n_residual < MAX_RESIDUAL; i++) {
      const tj_buffer_t *b = r.found[i];
      bool seen = false;
      for (int j = 0; j < k->n_residual; j++) seen |= k->residual_from[j] == b;
      if (seen || !residual_candidate(k, ep, b)) continue;
      int64_t x = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
      const tj_tir_expr_t *shape[2] = {tj_tir_i64(c->arena, residual_channels(k)), tj_tir_i64(c->arena, x)};
      const tj_buffer_t *to = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_row", b->name), b->dtype, 2, shape, NULL);
      if (!to) return (void)(c->oom = true);
      ((tj_buffer_t *)to)->scope = "local";
      k->residual_from[k->n_residual] = b;
      k->residual_to[k->n_residual++] = to;
    }
  }
}

/* copy[f, x] = from[.., f, y, x] for the row's channels, then body (the row's tiles). */
static const tj_tir_stmt_t *with_residual_rows(conv_t *k, const tile_arg_t *a, const tj_tir_stmt_t *body) {
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *rf = tj_sched_var(c, "rf"), *rx = tj_sched_var(c, "rx"), *zero = tj_tir_i64(c->arena, 0);
  if (!rf || !rx || !zero || !body) return NULL;
  element_t el;
  element_values(k, a->outer, zero, rx, k->channel_blocks ? a->fv : zero, rf, NULL, &el);
  int d = k->st->store.n_indices;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST], *at[2] = {rf, rx};
  for (int i = 0; i < d; i++) idx[i] = el.vals[tj_sched_iter_index(k->b, k->st->store.indices[i])];
  const tj_tir_stmt_t *copies[MAX_RESIDUAL];
  for (int r = 0; r < k->n_residual; r++) {
    const tj_tir_expr_t *v = tj_tir_load(c->arena, k->residual_from[r], d, idx);
    if (!v || !(copies[r] = tj_tir_store(c->arena, k->residual_to[r], 2, at, v))) return (void)(c->oom = true), NULL;
  }
  const tj_tir_stmt_t *fill = k->n_residual > 1 ? tj_tir_seq(c->arena, k->n_residual, copies) : copies[0];
  int64_t x = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  fill = tj_sched_loop(c, rx, x, TJ_FOR_VECTORIZED, fill);
  fill = tj_sched_loop(c, rf, residual_channels(k), TJ_FOR_SERIAL, fill);
  const tj_tir_stmt_t *two[2] = {fill, body};
  const tj_tir_stmt_t *s = fill ? tj_tir_seq(c->arena, 2, two) : NULL;
  for (int r = k->n_residual - 1; r >= 0 && s; r--) s = tj_tir_allocate(c->arena, k->residual_to[r], s);
  if (!s) c->oom = true;
  return s;
}

/* The extent of outer iter var `it` in the fused outer loop: a row-blocked one counts
 * blocks. */
static int64_t outer_extent(const conv_t *k, int it) {
  int64_t e = k->nest.extent[k->nest.loop_of_iter[it]];
  const tj_sched_row_block_t *rb = &k->window.block;
  return k->windowed && rb->rows > 1 && it == rb->row_iter ? e / rb->rows : e;
}

/* The outer spatial iter vars (all but the vector and tile dims), fused into one loop;
 * returns its extent. */
static int64_t outer_iters(const conv_t *k, bool *is_outer) {
  int64_t p = 1;
  for (int it = 0; it < k->b->n_iter_vars; it++) {
    is_outer[it] = k->b->iter_vars[it].kind != TJ_ITER_REDUCE && it != k->vec_iter && it != k->tile_iter;
    if (is_outer[it]) p *= outer_extent(k, it);
  }
  return p;
}

/* fill; for each row of the block: body  with the window allocated around both, the
 * outer iter vars bound (`start`: the row-blocked one at the block's first row). */
static const tj_tir_stmt_t *with_window(conv_t *k, const tj_tir_expr_t *const *start, const tj_tir_stmt_t *body) {
  tj_sched_ctx_t *c = k->c;
  const tj_sched_row_block_t *rb = &k->window.block;
  if (rb->rows > 1) body = tj_sched_loop(c, rb->row_offset, rb->rows, TJ_FOR_SERIAL, body);
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  for (int it = 0; it < k->b->n_iter_vars; it++)
    vals[it] = start[it] ? tj_sched_cast_like(c, k->b->iter_vars[it].var, start[it]) : k->b->iter_vars[it].var;
  if (!body || !tj_sched_window_bind(c, &k->window, vals)) return NULL;
  const tj_tir_stmt_t *two[2] = {tj_sched_window_fill(c, &k->window), body};
  const tj_tir_stmt_t *s = two[0] ? tj_tir_seq(c->arena, 2, two) : NULL;
  return s ? tj_tir_allocate(c->arena, k->window.local, s) : NULL;
}

static const tj_tir_stmt_t *write_back_loops(conv_t *k, tile_arg_t *arg) {
  if (!output_contiguous_along_tile(k)) return tile_loops(k, store_body, arg);
  tj_sched_ctx_t *c = k->c;
  const tj_tir_expr_t *xi = tj_sched_var(c, "xi"), *fi = tj_sched_var(c, "fi");
  if (!xi || !fi) return NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, xi, k->tile, TJ_FOR_VECTORIZED, store_body(k, xi, fi, arg));
  s = tj_sched_loop(c, fi, k->lanes, TJ_FOR_UNROLLED, s);
  if (!k->ep_in_acc || !s) return s;
  const tj_tir_stmt_t *two[2] = {tile_loops(k, ep_acc_body, arg), s};
  return two[0] ? tj_tir_seq(c->arena, 2, two) : NULL;
}

/* A matmul's packed weight copied per parallel iteration: the panels of its
 * panel_group column blocks, to[g, k, j] = from[k, (first + g) * W + j] (G x K x W, in
 * L2), then the row blocks read them. The whole-weight repack wrote and re-read the
 * packed copy through memory (9.4 MB each way for BERT's FFN). */
static bool panel_applies(conv_t *k) {
  if (!k->channel_blocks || k->n_repacks != 1 || k->tile_iter < 0 || k->repacks[0].outside) return false;
  const repack_t *r = &k->repacks[0];
  bool is_outer[TJ_SCHED_MAX_NEST];
  return r->from->ndim == 2 && r->perm[1] == 1 && outer_iters(k, is_outer) == 1;
}

/* Column blocks copied together: one block's panel reads W * 4 = 192 bytes of each weight
 * row, rows N * 4 bytes apart (a new 4 KB page per row for N >= 1024), so the copy of
 * 128x768x3072's weight waited on 64 x 768 short strided reads per call. G blocks read
 * G * W * 4 bytes per row in one run. G is the largest divisor of the block count that
 * keeps the group's panels (of the rows copied at a time: a K block or all of K) within
 * PANEL_GROUP_MAX_BYTES, with A's rows beside them in L2 (1.25 MB on Ice Lake), and at
 * least PANEL_GROUP_MIN_ITERS parallel iterations so two threads still split evenly.
 * 320 KB (was 640): the copy itself runs faster into a smaller buffer. Copying
 * 128x768x3072's weight alone (Ice Lake, thread-CPU min of 30): 384-byte runs into 288 KB
 * 0.55 ms (17 GB/s), 768-byte runs into 576 KB 0.71 ms (13 GB/s), 3 KB runs into 2.3 MB
 * 0.83 ms. The whole matmul, G 4 -> 2 (32 iterations), `bench_kernels --float-modes`
 * thread-CPU min / median of 21, 6 rounds interleaved: 4.39-4.57 / 4.57-4.69 ->
 * 4.21-4.44 / 4.51-4.60 ms. 128x768x768 and the K-blocked 128x3072x768 keep G = 2. */
#define PANEL_GROUP_MAX_BYTES (320 << 10)
#define PANEL_GROUP_MIN_ITERS 8

static int64_t panel_group(const conv_t *k) {
  const repack_t *r = &k->repacks[0];
  int64_t rows, blocks = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]] / k->lanes, best = 1;
  if (!tj_tir_is_const_int(r->to->shape[1], &rows)) return 1;
  if (k->k_block) rows = k->k_block;
  int64_t bytes = rows * k->lanes * (int64_t)tj_dtype_bytes(r->to->dtype);
  for (int64_t g = 2; g <= blocks / PANEL_GROUP_MIN_ITERS; g++)
    if (blocks % g == 0 && g * bytes <= PANEL_GROUP_MAX_BYTES) best = g;
  return best;
}

/* alloc to[G, K, W]: for k: for g: to[g, k, :] = from[k, (first + g) * W :]; body.
 * With K blocks (k_block), to is [G, k_block, W] and holds block kc's rows. */
static const tj_tir_stmt_t *with_panel(conv_t *k, const tj_tir_expr_t *first, const tj_tir_stmt_t *body) {
  tj_sched_ctx_t *c = k->c;
  const repack_t *r = &k->repacks[0];
  const tj_tir_expr_t *pk = tj_sched_var(c, "pk"), *pg = tj_sched_var(c, "pg"), *pj = tj_sched_var(c, "pj");
  if (!pk || !pg || !pj || !body || !first) return NULL;
  int64_t rows;
  tj_tir_is_const_int(r->to->shape[1], &rows);
  const tj_tir_expr_t *row = k->k_block ? tj_sched_add(c, tj_sched_mul(c, k->kc, k->k_block), pk) : pk;
  const tj_tir_expr_t *col = tj_sched_add(c, tj_sched_mul(c, tj_sched_add(c, first, pg), k->lanes), pj);
  const tj_tir_expr_t *src[2] = {row, col};
  const tj_tir_expr_t *dst[3] = {pg, pk, pj};
  const tj_tir_expr_t *v = row && col ? tj_tir_load(c->arena, r->from, 2, src) : NULL;
  if (v && !tj_dtype_eq(v->dtype, r->to->dtype)) v = tj_tir_cast(c->arena, r->to->dtype, v);
  const tj_tir_stmt_t *st = v ? tj_tir_store(c->arena, r->to, 3, dst, v) : NULL;
  st = tj_sched_loop(c, pj, k->lanes, TJ_FOR_VECTORIZED, st);
  st = tj_sched_loop(c, pg, k->panel_group, TJ_FOR_SERIAL, st);
  st = tj_sched_loop(c, pk, k->k_block ? k->k_block : rows, TJ_FOR_SERIAL, st);
  const tj_tir_stmt_t *two[2] = {st, body};
  const tj_tir_stmt_t *s = st ? tj_tir_seq(c->arena, 2, two) : NULL;
  s = s ? tj_tir_allocate(c->arena, r->to, s) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* ---- the next weight panel, prefetched ----
 * A matmul walking column blocks (channel_blocks) reads each block's weight panel
 * [K, W] from memory on its first row block and from L2 on the others. Read on demand,
 * the first row block waits for memory: 128x768x3072 with its weight packed at load ran
 * at 4.4-4.6 ms (thread-CPU min, 1 thread, Ice Lake), 3.5-3.6 ms when every block read
 * the same (cached) panel. So each k step of row block xo also prefetches into L2 one
 * line of the next block's panel: line (xo * K + k) / q of its K * lines_per_k, with q =
 * row blocks / lines_per_k, so the whole next panel arrives spread over this block's
 * row blocks. */
#define PREFETCH_LINE_BYTES 64
#define PREFETCH_LOCALITY 2 /* llvm.prefetch locality 2: prefetcht1, into L2 */

static const repack_t *packed_weight(const conv_t *k, const tj_buffer_t *w) {
  for (int i = 0; i < k->n_repacks && !k->panel; i++)
    if (k->repacks[i].from == w) return &k->repacks[i];
  return NULL;
}

/* A matmul register tile walking column blocks over one reduction: its weight, or NULL. */
static const tj_buffer_t *column_walk_weight(const conv_t *k) {
  return k->vec_unit > 0 && k->channel_blocks && k->tile_iter >= 0 && k->nest.n_reduce == 1 && k->inner_reduce < 0 &&
                 !k->windowed && k->pair_iter < 0
             ? matmul_weight(k)
             : NULL;
}

/* Only a weight packed [N/W, K, W] (at load, or whole per call): its next panel is one
 * contiguous run. Read unpacked (rows of N apart) or copied per block, the prefetches
 * of strided rows cost more than they saved (128x768x3072 with the weight an input:
 * 4.77 -> 4.95 ms, 5 A/B rounds). */
static bool prefetch_applies(const conv_t *k) {
  const tj_buffer_t *w = column_walk_weight(k);
  return w && packed_weight(k, w);
}

static const tj_tir_expr_t *bin(tj_sched_ctx_t *c, tj_tir_expr_kind_t kind, const tj_tir_expr_t *x, int64_t y) {
  return tj_tir_binary(c->arena, kind, x, tj_tir_i64(c->arena, y));
}

/* Evaluate(tir.prefetch(tir.address_of(v), 0, PREFETCH_LOCALITY, 1)): a read hint for
 * the element v loads, as TVM writes the builtin (codegen: llvm.prefetch). */
static const tj_tir_stmt_t *prefetch_into_l2(tj_sched_ctx_t *c, const tj_tir_expr_t *v) {
  const tj_tir_expr_t *addr = v ? tj_tir_call(c->arena, TJ_HANDLE, "tir.address_of", 1, &v) : NULL;
  const tj_tir_expr_t *args[4] = {addr, tj_tir_int(c->arena, TJ_I32, 0), tj_tir_int(c->arena, TJ_I32, PREFETCH_LOCALITY),
                                  tj_tir_int(c->arena, TJ_I32, 1)};
  const tj_tir_expr_t *call =
      addr && args[1] && args[2] && args[3] ? tj_tir_call(c->arena, TJ_VOID, "tir.prefetch", 4, args) : NULL;
  return call ? tj_tir_evaluate(c->arena, call) : NULL;
}

/* Evaluate(tir.prefetch(tir.address_of(Wp[line]), 0, locality, 1)) for k step `kk` of
 * row block `xo` in column block `fv`, Wp the packed weight. */
static const tj_tir_stmt_t *prefetch_next_panel(conv_t *k, const tile_arg_t *a, int kit) {
  tj_sched_ctx_t *c = k->c;
  const tj_buffer_t *w = matmul_weight(k);
  const repack_t *rp = packed_weight(k, w);
  int64_t bytes = (int64_t)tj_dtype_bytes(rp->to->dtype);
  int64_t per_line = bytes < PREFETCH_LINE_BYTES ? PREFETCH_LINE_BYTES / bytes : 1;
  int64_t lines_per_k = (k->lanes + per_line - 1) / per_line;
  int64_t depth = k->nest.extent[k->nest.loop_of_iter[kit]];
  int64_t row_blocks = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]] / k->tile;
  int64_t blocks = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]] / k->lanes;
  int64_t q = row_blocks > lines_per_k ? row_blocks / lines_per_k : 1;
  /* K-blocked: the rows of the next panel in this K block, [kc * k_block, + k_block) */
  int64_t span = k->k_block ? k->k_block : depth;
  const tj_tir_expr_t *t = tj_sched_add(c, tj_sched_mul(c, a->xo, span), k->k_block ? k->kk : a->reduce[kit]);
  const tj_tir_expr_t *line = bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_FLOOR_DIV, t, q), span * lines_per_k - 1);
  const tj_tir_expr_t *reduce[TJ_SCHED_MAX_NEST] = {0};
  reduce[kit] = bin(c, TJ_TIR_FLOOR_DIV, line, lines_per_k);
  if (k->k_block) reduce[kit] = tj_sched_add(c, tj_sched_mul(c, k->kc, k->k_block), reduce[kit]);
  const tj_tir_expr_t *lane = bin(c, TJ_TIR_MUL, bin(c, TJ_TIR_FLOOR_MOD, line, lines_per_k), per_line);
  const tj_tir_expr_t *next = bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_ADD, a->fv, 1), blocks - 1);
  if (!reduce[kit] || !lane || !next) return (void)(c->oom = true), NULL;
  element_t el;
  element_values(k, a->outer, a->xo, tj_tir_i64(c->arena, 0), next, lane, reduce, &el);
  k->cur_fv = next;
  k->cur_fi = lane;
  const tj_tir_expr_t *v = apply_repacks(k, tj_sched_subst_expr(c, k->b, tj_sched_single_load(k->st->store.value, w), el.vals));
  const tj_tir_stmt_t *s = prefetch_into_l2(c, v);
  if (!s) c->oom = true;
  return s;
}

/* Repacks first, each buffer allocated around everything. */
static const tj_tir_stmt_t *with_repacks(conv_t *k, const tj_tir_stmt_t *s) {
  tj_sched_ctx_t *c = k->c;
  if (k->n_repacks && !k->panel && s) {
    const tj_tir_stmt_t *seq[MAX_REPACK + 1];
    int n = 0;
    for (int i = 0; i < k->n_repacks; i++)
      if (!k->repacks[i].outside && !(seq[n++] = repack_nest(k, &k->repacks[i]))) return NULL;
    seq[n] = s;
    s = n ? tj_tir_seq(c->arena, n + 1, seq) : s;
    for (int i = k->n_repacks - 1; i >= 0 && s; i--)
      if (!k->repacks[i].outside) s = tj_tir_allocate(c->arena, k->repacks[i].to, s);
  }
  if (!s) c->oom = true;
  return s;
}

/* The k step's tile update with the next panel's prefetch in front. */
static const tj_tir_stmt_t *with_prefetch(conv_t *k, const tile_arg_t *a, const tj_tir_stmt_t *upd) {
  int kit = -1;
  for (int it = 0; it < k->b->n_iter_vars; it++)
    if (k->b->iter_vars[it].kind == TJ_ITER_REDUCE) kit = it;
  const tj_tir_stmt_t *two[2] = {kit >= 0 && upd ? prefetch_next_panel(k, a, kit) : NULL, upd};
  return two[0] ? tj_tir_seq(k->c->arena, 2, two) : NULL;
}

/* ---- the next panel group's rows, prefetched (a weight input copied per group) ----
 * Each parallel iteration first copies its group's rows [G * W] of the weight (see
 * with_panel): from L3, a few lines in flight at a time. While the row blocks of one
 * group compute, each k step also prefetches into L2 about one line of the rows the
 * next group will copy (line t / q of its rows x G * W / 16 lines, t counting the
 * group's k steps), so that copy reads L2. Only when those rows spread over enough L2
 * sets to stay there beside the group's own panels and A: row k starts at set
 * (k * N * 4 / 64) mod L2_SETS, so rows N * 4 bytes apart cycle through L2_SETS /
 * gcd(N * 4 / 64, L2_SETS) starting sets. 1024 sets is the smallest L2 of the hosts
 * (Ice Lake 1.25 MB / 20 ways, Zen 5 1 MB / 16 ways; Sapphire Rapids 2 MB has 2048).
 * N = 768 (3 KB rows): 64 starting sets, 768 rows put 12 lines in each set a block
 * uses. N = 3072 (12 KB rows): 16 starting sets, 48 lines a set, more than the ways:
 * the prefetched lines would evict each other (measured slower, see above). */
#define L2_SETS 1024
#define GROUP_PREFETCH_MAX_LINES_PER_SET 8

static bool group_prefetch_applies(const conv_t *k) {
  if (!k->panel || !k->panel_first || !column_walk_weight(k)) return false;
  const repack_t *r = &k->repacks[0];
  int64_t rows, n, bytes = (int64_t)tj_dtype_bytes(r->from->dtype);
  int64_t blocks = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]] / k->lanes;
  if (!tj_tir_is_const_int(r->from->shape[0], &rows) || !tj_tir_is_const_int(r->from->shape[1], &n) ||
      (n * bytes) % PREFETCH_LINE_BYTES || (k->lanes * bytes) % PREFETCH_LINE_BYTES || blocks / k->panel_group < 2)
    return false;
  if (k->k_block) rows = k->k_block;
  int64_t starts = L2_SETS / tj_gcd64(n * bytes / PREFETCH_LINE_BYTES, L2_SETS), spacing = L2_SETS / starts;
  int64_t run = k->panel_group * k->lanes * bytes / PREFETCH_LINE_BYTES; /* consecutive sets a row's run takes */
  int64_t per_set = (rows + starts - 1) / starts * ((run + spacing - 1) / spacing);
  return per_set <= GROUP_PREFETCH_MAX_LINES_PER_SET;
}

/* Rows the group copy reads at a time (a K block, or all of K). */
static int64_t group_rows(const conv_t *k) {
  int64_t rows = 0;
  tj_tir_is_const_int(k->repacks[0].from->shape[0], &rows);
  return k->k_block ? k->k_block : rows;
}

/* k steps per prefetched line: a divisor of the rows, so the k loop splits into
 * ko x every with the prefetch in ko (its address math once per `every` k steps). */
static int64_t group_prefetch_every(const conv_t *k) {
  const repack_t *r = &k->repacks[0];
  int64_t rows = group_rows(k), per_line = PREFETCH_LINE_BYTES / (int64_t)tj_dtype_bytes(r->from->dtype);
  int64_t row_blocks = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]] / k->tile;
  int64_t lines = rows * k->panel_group * k->lanes / per_line, steps = k->panel_group * row_blocks * rows;
  return largest_divisor(rows, steps > lines ? steps / lines : 1);
}

/* prefetch(from[row, next_first * W + col]) for k step `kk` of row block xo, panel g */
static const tj_tir_stmt_t *prefetch_next_group(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *kk) {
  tj_sched_ctx_t *c = k->c;
  const repack_t *r = &k->repacks[0];
  int64_t rows = group_rows(k), per_line = PREFETCH_LINE_BYTES / (int64_t)tj_dtype_bytes(r->from->dtype);
  int64_t G = k->panel_group, blocks = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]] / k->lanes;
  int64_t row_blocks = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]] / k->tile;
  int64_t lines_per_row = G * k->lanes / per_line, lines = rows * lines_per_row;
  int64_t q = group_prefetch_every(k);
  const tj_tir_expr_t *step = tj_sched_add(c, tj_sched_mul(c, k->panel_g, row_blocks), a->xo);
  step = tj_sched_add(c, tj_sched_mul(c, step, rows), kk);
  const tj_tir_expr_t *line = step ? bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_FLOOR_DIV, step, q), lines - 1) : NULL;
  const tj_tir_expr_t *row = line ? bin(c, TJ_TIR_FLOOR_DIV, line, lines_per_row) : NULL;
  if (row && k->k_block) row = tj_sched_add(c, tj_sched_mul(c, k->kc, k->k_block), row);
  const tj_tir_expr_t *next = bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_ADD, k->panel_first, G), blocks - G);
  const tj_tir_expr_t *col =
      line && next ? tj_sched_add(c, tj_sched_mul(c, next, k->lanes), bin(c, TJ_TIR_MUL, bin(c, TJ_TIR_FLOOR_MOD, line, lines_per_row), per_line))
                   : NULL;
  const tj_tir_expr_t *idx[2] = {row ? tj_sched_cast_like(c, r->from->shape[0], row) : NULL,
                                 col ? tj_sched_cast_like(c, r->from->shape[1], col) : NULL};
  const tj_tir_expr_t *v = idx[0] && idx[1] ? tj_tir_load(c->arena, r->from, 2, idx) : NULL;
  const tj_tir_stmt_t *s = prefetch_into_l2(c, v);
  if (!s) c->oom = true;
  return s;
}

/* for ko in rows / q: prefetch; for ki in q: let kk = ko * q + ki: upd  (kk the k loop's
 * var; the same k order) */
static const tj_tir_stmt_t *group_prefetch_loop(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *kk,
                                                const tj_tir_stmt_t *upd) {
  tj_sched_ctx_t *c = k->c;
  int64_t q = group_prefetch_every(k), rows = group_rows(k);
  const tj_tir_expr_t *ko = tj_sched_var(c, "ko"), *ki = tj_sched_var(c, "ki");
  const tj_tir_expr_t *at = ko && ki ? tj_sched_cast_like(c, kk, tj_sched_mul(c, ko, q)) : NULL;
  const tj_tir_expr_t *kv = at ? tj_sched_add(c, at, tj_sched_cast_like(c, kk, ki)) : NULL;
  const tj_tir_stmt_t *inner = kv && upd ? tj_tir_let_stmt(c->arena, kk, kv, upd) : NULL;
  inner = inner ? tj_sched_loop(c, ki, q, TJ_FOR_SERIAL, inner) : NULL;
  const tj_tir_stmt_t *two[2] = {at ? prefetch_next_group(k, a, at) : NULL, inner};
  const tj_tir_stmt_t *s = two[0] && two[1] ? tj_tir_seq(c->arena, 2, two) : NULL;
  s = s ? tj_sched_loop(c, ko, rows / q, TJ_FOR_SERIAL, s) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* ---- K-blocked tile ----
 * A conv whose output positions are few and whose weights are large (ResNet-18's
 * 512-channel 3x3 convs at 7x7: 9.4 MB of weights for 49 outputs per channel) reads
 * each block's weights (590 KB for 32 channels) once per output row: the first row
 * streams them from memory, and that stream, faster than memory can deliver, stalls
 * the FMAs, while the six other rows read them from L2. Per channel block the input
 * channels are walked kblock at a time instead (the block's weights for them, <= 24
 * KB, stay in L1), each such step runs every tile of the block, with each tile's
 * partial sums kept in a local buffer (`part`) between steps; so the weights come from
 * memory at the pace of the FMAs. Every output still starts from the init value and
 * takes its terms in the same order: same bits.
 * `part` up to 32 KB (was 8 KB) takes the 14x14 convs with large weights too (ResNet-18's
 * 3x3/2 128->256 and 3x3 256->256: 14 x 14 x 32 floats, 25 KB): with the weight
 * prefetch below, 8 x 128->256 stride 2 at 28x28, constant weights, 1 thread, Ice Lake,
 * per-run CPU time of 100 runs, 3 interleaved rounds: 8.5-10.2 -> 6.5-7.1 ms; 6 x
 * 256->256 at 14x14 10.0-12.0 -> 8.8-9.9 ms (loaded host, load average 6-9). */
#define KBLOCK_MAX_PART_BYTES (32 << 10)
#define KBLOCK_MAX_WEIGHT_BYTES (24 << 10)
#define MAX_PREFETCH_PER_SLOT 16

static const tj_tir_expr_t *part_load(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *xi,
                                      const tj_tir_expr_t *fi) {
  const tj_tir_expr_t *at[3] = {a->q, tj_sched_add(k->c, tj_sched_mul(k->c, a->xo, k->tile), xi), fi};
  const tj_tir_expr_t *l = at[1] ? tj_tir_load(k->c->arena, k->part, 3, at) : NULL;
  if (!l) k->c->oom = true;
  return l;
}

static const tj_tir_stmt_t *save_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  tile_arg_t *a = arg;
  const tj_tir_expr_t *at[3] = {a->q, tj_sched_add(k->c, tj_sched_mul(k->c, a->xo, k->tile), xi), fi};
  const tj_tir_expr_t *v = acc_load(k, xi, fi);
  const tj_tir_stmt_t *s = v && at[1] ? tj_tir_store(k->c->arena, k->part, 3, at, v) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

/* ---- K blocks ----
 * 128x3072x768 (BERT's FFN out): A, 1.5 MB, does not fit L2, and each column block
 * reads all of it (from L3: 16 x 1.5 MB per call) while its 590 KB panel and the next
 * one's prefetch take L2 as well. With the reduction in blocks of K_BLOCK, the block
 * loop around the parallel loop, every column block of a K block reuses the same
 * 128 x K_BLOCK slice of A from L2; the partial sums go to a buffer of the output's
 * shape and come back for the next K block. Each output still takes its k terms in
 * order from the init value (same bits). */
#define K_BLOCK 512
#define K_BLOCK_MIN_A_BYTES (1 << 20)
#define K_BLOCK_MIN 128

static int64_t k_block_depth(const conv_t *k) {
  bool is_outer[TJ_SCHED_MAX_NEST];
  if (!(prefetch_applies(k) || (k->panel && column_walk_weight(k))) || outer_iters(k, is_outer) != 1) return 0;
  int kit = -1;
  for (int it = 0; it < k->b->n_iter_vars; it++)
    if (k->b->iter_vars[it].kind == TJ_ITER_REDUCE) kit = it;
  int64_t depth = k->nest.extent[k->nest.loop_of_iter[kit]];
  int64_t rows = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  if (rows * depth * (int64_t)sizeof(float) < K_BLOCK_MIN_A_BYTES) return 0;
  int64_t kb = largest_divisor(depth, K_BLOCK);
  return kb >= K_BLOCK_MIN && kb < depth ? kb : 0;
}

/* acc <-> partial at the tile element's output indices */
static const tj_tir_stmt_t *partial_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg,
                                         bool load) {
  tile_arg_t *a = arg;
  int d = k->st->store.n_indices;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
  tile_output_indices(k, a, xi, fi, idx);
  if (load) return acc_store(k, xi, fi, tj_tir_load(k->c->arena, k->partial, d, idx));
  const tj_tir_expr_t *v = acc_load(k, xi, fi);
  const tj_tir_stmt_t *s = v ? tj_tir_store(k->c->arena, k->partial, d, idx, v) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

static const tj_tir_stmt_t *restore_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  return acc_store(k, xi, fi, part_load(k, arg, xi, fi));
}

/* The reduce iter to split (the outermost one that does not slide along the tile) and
 * its block, or -1. */
static int kblock_iter(const conv_t *k, int64_t *block) {
  for (int l = 0; l < k->nest.n; l++) {
    int it = k->nest.iter_of_loop[l];
    if (k->b->iter_vars[it].kind != TJ_ITER_REDUCE || it == k->inner_reduce) continue;
    int64_t ext = k->nest.extent[l];
    int64_t per = reduce_terms(k) / ext * k->lanes * (int64_t)tj_dtype_bytes(k->st->store.buffer->dtype);
    *block = largest_divisor(ext, KBLOCK_MAX_WEIGHT_BYTES / per);
    return *block >= 2 && ext / *block >= 2 ? it : -1;
  }
  return -1;
}

static void plan_k_blocks(conv_t *k) {
  if (!k->channel_blocks || k->windowed || k->panel || k->tile_iter < 0 || k->widen || matmul_like(k) ||
      k->pair_iter >= 0)
    return;
  bool is_outer[TJ_SCHED_MAX_NEST];
  int64_t x = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  int64_t bytes = outer_iters(k, is_outer) * x * k->lanes * (int64_t)tj_dtype_bytes(k->st->store.buffer->dtype);
  if (bytes <= KBLOCK_MAX_PART_BYTES) k->kblock_iter = kblock_iter(k, &k->kblock);
}

/* Weights of the next block of input channels (the last block: its own again), one
 * prefetch per cache line: they come from memory while this block computes, where the
 * hardware prefetcher, which stops at each 4 KB page, left each step waiting for them.
 * The next block's weights are one contiguous run of the packed weight (the blocked
 * input channels are its first dim after the output-channel block), read through a
 * [blocks, elements] view of it; each tile's k step (a "slot", in the order the block
 * runs them: tile, then step) prefetches its share of the run's lines, so each line is
 * asked for about once, spread evenly over the block. The step is the k loops outside
 * the innermost reduce loop (the sliding rx, unrolled in the tile, or at stride 2 the
 * plain innermost one), so a stride-2 conv prefetches once per 3 x 14 FMAs too.
 * Before, each step prefetched the lines its own loads would read in the next block,
 * once per tile of the block (7 times for the 7 rows of a 7x7 output: 6 prefetches per
 * 42 FMAs), and stride-2 convs, whose steps had 2 prefetches per 14 FMAs, had none
 * (slower: 256->512 at 14x14 1.13-1.19 ms K-blocked, 1.22-1.26 with them). Measured with
 * ResNet-18's shapes and constant weights (packed at load), 1 thread, Intel Xeon Ice
 * Lake, per-run CPU time of 100 runs of `tvmjit bench`, old and new interleaved, load
 * average 6-9: 6 chained 512->512 3x3 convs at 7x7 12.3-16.9 -> 8.9-12.5 ms (best runs
 * 11.7 -> 8.7 ms latency min: 1.95 -> 1.45 ms a conv); 8 x 256->512 stride 2 at 14x14
 * 10.0-13.6 -> 7.6-9.7 ms. */
/* b [B, ...] viewed as [B, per_block] (the same storage) */
static const tj_buffer_t *block_view(tj_sched_ctx_t *c, const tj_buffer_t *b, int64_t per_block) {
  tj_buffer_t *v = TJ_ARENA_NEW(c->arena, tj_buffer_t);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(c->arena, const tj_tir_expr_t *, 2);
  if (!v || !shape) return (void)(c->oom = true), NULL;
  *v = *b;
  shape[0] = b->shape[0];
  shape[1] = tj_tir_int(c->arena, b->shape[0]->dtype, per_block);
  v->ndim = 2;
  v->shape = shape;
  v->name = tj_arena_printf(c->arena, "%s_blocks", b->name);
  return shape[1] && v->name ? v : NULL;
}

/* The reduce loop inside the weight prefetch: the sliding one (unrolled in the tile),
 * else the innermost reduce loop but the blocked one; -1 if none. */
static int prefetch_inner_iter(const conv_t *k) {
  if (k->inner_reduce >= 0) return k->inner_reduce;
  for (int l = k->nest.n - 1; l >= 0; l--) {
    int it = k->nest.iter_of_loop[l];
    if (k->b->iter_vars[it].kind == TJ_ITER_REDUCE) return it == k->kblock_iter ? -1 : it;
  }
  return -1;
}

static const tj_tir_stmt_t *with_weight_prefetch(conv_t *k, const tile_arg_t *a, const tj_tir_expr_t *const *loop_var,
                                                 int inner, const tj_tir_expr_t *co, int64_t n_blocks,
                                                 const tj_tir_stmt_t *body) {
  tj_sched_ctx_t *c = k->c;
  const tj_block_t *b = k->b;
  const repack_t *r = k->n_repacks == 1 && inner >= 0 ? &k->repacks[0] : NULL;
  const tj_tir_expr_t *load = r ? tj_sched_single_load(k->st->store.value, r->from) : NULL;
  if (!load || !body || load->load.indices[r->perm[0]] != b->iter_vars[k->kblock_iter].var) return body;
  const tj_buffer_t *to = r->to;
  int nd = to->ndim;
  int64_t ext[TJ_SCHED_MAX_NEST + 1], per_channel = 1;
  for (int d = 0; d < nd; d++)
    if (!tj_tir_is_const_int(to->shape[d], &ext[d])) return body;
  for (int d = 2; d < nd; d++) per_channel *= ext[d];
  int64_t bytes = (int64_t)tj_dtype_bytes(to->dtype), per_line = PREFETCH_LINE_BYTES / bytes;
  int64_t lines = (k->kblock * per_channel + per_line - 1) / per_line;
  /* step: the k step within the block, over the reduce loops outside the unrolled one */
  const tj_tir_expr_t *step = NULL;
  int64_t steps = 1;
  for (int l = 0; l < k->nest.n; l++) {
    int it = k->nest.iter_of_loop[l];
    if (b->iter_vars[it].kind != TJ_ITER_REDUCE || it == inner) continue;
    int64_t e = it == k->kblock_iter ? k->kblock : k->nest.extent[l];
    step = step ? tj_sched_add(c, tj_sched_mul(c, step, e), loop_var[it]) : loop_var[it];
    steps *= e;
  }
  int64_t xtiles = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]] / k->tile;
  int64_t slots = k->q_per * xtiles * steps, per_slot = (lines + slots - 1) / slots;
  if (!step || per_slot > MAX_PREFETCH_PER_SLOT) return body;
  const tj_tir_expr_t *tile = tj_sched_add(c, tj_sched_mul(c, a->q, xtiles), a->xo);
  const tj_tir_expr_t *slot = tile ? tj_sched_add(c, tj_sched_mul(c, tile, steps), step) : NULL;
  const tj_tir_expr_t *nb = bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_ADD, co, 1), n_blocks - 1);
  const tj_buffer_t *flat = block_view(c, to, ext[1] * per_channel);
  const tj_tir_stmt_t *seq[MAX_PREFETCH_PER_SLOT + 1];
  int n = 0;
  for (int64_t j = 0; j < per_slot && j < MAX_PREFETCH_PER_SLOT; j++) {
    /* fewer lines than slots: line slot * lines / slots, each asked for once or a few
     * times in a row */
    const tj_tir_expr_t *line =
        per_slot == 1 ? bin(c, TJ_TIR_FLOOR_DIV, bin(c, TJ_TIR_MUL, slot, lines), slots)
                      : bin(c, TJ_TIR_MIN, bin(c, TJ_TIR_ADD, bin(c, TJ_TIR_MUL, slot, per_slot), j), lines - 1);
    const tj_tir_expr_t *idx[2] = {a->fv, tj_sched_add(c, tj_sched_mul(c, nb, k->kblock * per_channel),
                                                       bin(c, TJ_TIR_MUL, line, per_line))};
    const tj_tir_expr_t *w = idx[1] && flat ? tj_tir_load(c->arena, flat, 2, idx) : NULL;
    if (!(seq[n++] = prefetch_into_l2(c, w))) return (void)(c->oom = true), NULL;
  }
  seq[n++] = body;
  const tj_tir_stmt_t *s = tj_tir_seq(c->arena, n, seq);
  if (!s) c->oom = true;
  return s;
}

/* for xo: alloc acc { body } */
static const tj_tir_stmt_t *per_tile(conv_t *k, const tile_arg_t *a, int n, const tj_tir_stmt_t *const *body) {
  tj_sched_ctx_t *c = k->c;
  for (int i = 0; i < n; i++)
    if (!body[i]) return NULL;
  const tj_tir_stmt_t *s = tj_tir_allocate(c->arena, k->acc, tj_tir_seq(c->arena, n, body));
  int64_t x = k->nest.extent[k->nest.loop_of_iter[k->tile_iter]];
  return tj_sched_loop(c, a->xo, x / k->tile, TJ_FOR_SERIAL, s);
}

/* An odd count of channel blocks, few of them, splits unevenly over 2 threads:
 * MobileNetV2's 960->160 at 7x7 ran 5 blocks of 32 channels 3/2 (the busier thread
 * 60% of the work). The blocks' output positions then go in Q_SHARES shares, each
 * block and share a parallel iteration (7 rows as 4 + 3: 10 iterations, 18/17 rows).
 * Each share reads its block's weights again (from L2, ~123 KB for 960->160);
 * every output still takes its terms in the same order (same bits). */
#define Q_SHARES 2
#define Q_SHARES_MAX_BLOCKS 16

static int64_t q_shares(int64_t blocks, int64_t q_ext) {
  return blocks % 2 && blocks < Q_SHARES_MAX_BLOCKS && q_ext >= Q_SHARES ? Q_SHARES : 1;
}

/* body, run only when the output position qg is one of the q_ext (the last share may
 * be short) */
static const tj_tir_stmt_t *in_range(tj_sched_ctx_t *c, const tj_tir_expr_t *qg, int64_t q_ext, int64_t q_all,
                                     const tj_tir_stmt_t *body) {
  if (!body || q_all == q_ext) return body;
  const tj_tir_expr_t *cond = tj_tir_binary(c->arena, TJ_TIR_LT, qg, tj_tir_i64(c->arena, q_ext));
  const tj_tir_stmt_t *s = cond ? tj_tir_if(c->arena, cond, body, NULL) : NULL;
  if (!s) c->oom = true;
  return s;
}

/*   for fv in T.parallel(F / L):
 *     part = T.alloc_buffer((Q, X, L), scope="local")     Q: the other output positions
 *     for q, xo:  acc = init;  part[q, xo*T:, :] = acc
 *     for co in K / kblock:
 *       for q, xo:  acc = part[q, ..];  for ci in kblock, (other reduce loops): update;  part[q, ..] = acc
 *     for q, xo:  acc = part[q, ..];  write-back */
static const tj_tir_stmt_t *build_k_blocked(conv_t *k, const tj_sched_epilogue_t *ep) {
  tj_sched_ctx_t *c = k->c;
  const tj_sched_nest_t *nest = &k->nest;
  const tj_block_t *b = k->b;
  bool is_outer[TJ_SCHED_MAX_NEST];
  int64_t q_ext = outer_iters(k, is_outer), ext[TJ_SCHED_MAX_NEST], work = 1;
  int64_t ev = nest->extent[nest->loop_of_iter[k->vec_iter]], x = nest->extent[nest->loop_of_iter[k->tile_iter]];
  int outer_iter[TJ_SCHED_MAX_NEST], n_outer = 0;
  for (int l = 0; l < nest->n; l++) {
    int it = nest->iter_of_loop[l];
    work *= nest->extent[l];
    if (is_outer[it]) outer_iter[n_outer] = it, ext[n_outer++] = nest->extent[l];
  }
  int64_t p = ev / k->lanes, shares = q_shares(p, q_ext);
  k->q_per = (q_ext + shares - 1) / shares;
  /* the parallel iteration fvs = fv * shares + share; its positions q_per * share + q */
  const tj_tir_expr_t *fvs = tj_sched_var(c, "fv"), *q = tj_sched_var(c, "q"), *xo = tj_sched_var(c, "xo");
  const tj_tir_expr_t *fv = shares > 1 ? bin(c, TJ_TIR_FLOOR_DIV, fvs, shares) : fvs;
  const tj_tir_expr_t *qg =
      shares > 1 ? tj_sched_add(c, tj_sched_mul(c, bin(c, TJ_TIR_FLOOR_MOD, fvs, shares), k->q_per), q) : q;
  const tj_tir_expr_t *co = tj_sched_var(c, "co"), *unf[TJ_SCHED_MAX_NEST], *outer[TJ_SCHED_MAX_NEST] = {0};
  if (!fv || !q || !qg || !xo || !co || (n_outer && !tj_sched_unfuse(c, qg, n_outer, ext, unf))) return NULL;
  for (int i = 0; i < n_outer; i++) outer[outer_iter[i]] = unf[i];
  const tj_tir_expr_t *reduce[TJ_SCHED_MAX_NEST] = {0}, *loop_var[TJ_SCHED_MAX_NEST] = {0};
  for (int it = 0; it < b->n_iter_vars; it++)
    if (b->iter_vars[it].kind == TJ_ITER_REDUCE) reduce[it] = loop_var[it] = tj_sched_var(c, b->iter_vars[it].var->var.name);
  int kb = k->kblock_iter;
  reduce[kb] = tj_sched_add(c, tj_sched_mul(c, co, k->kblock), loop_var[kb]);
  const tj_tir_expr_t *shape[3] = {tj_tir_i64(c->arena, k->tile), tj_tir_i64(c->arena, k->lanes), NULL};
  k->acc = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_acc", k->st->store.buffer->name), k->st->store.buffer->dtype, 2,
                         shape, NULL);
  shape[0] = tj_tir_i64(c->arena, k->q_per), shape[1] = tj_tir_i64(c->arena, x),
  shape[2] = tj_tir_i64(c->arena, k->lanes);
  k->part = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_part", k->st->store.buffer->name), k->st->store.buffer->dtype, 3,
                          shape, NULL);
  if (!k->acc || !k->part || !reduce[kb]) return NULL;
  ((tj_buffer_t *)k->acc)->scope = "local";
  ((tj_buffer_t *)k->part)->scope = "local";
  tile_arg_t arg = {outer, xo, fv, q, reduce, ep};
  const tj_tir_stmt_t *upd = tile_loops(k, update_body, &arg);
  int64_t n_blocks = nest->extent[nest->loop_of_iter[kb]] / k->kblock;
  int pf_inner = prefetch_inner_iter(k);
  if (pf_inner >= 0)
    upd = tj_sched_loop(c, reduce[pf_inner], nest->extent[nest->loop_of_iter[pf_inner]],
                        pf_inner == k->inner_reduce ? TJ_FOR_UNROLLED : TJ_FOR_SERIAL, upd);
  upd = with_weight_prefetch(k, &arg, loop_var, pf_inner, co, n_blocks, upd);
  for (int l = nest->n - 1; l >= 0; l--) {
    int it = nest->iter_of_loop[l];
    if (b->iter_vars[it].kind == TJ_ITER_REDUCE && it != pf_inner)
      upd = tj_sched_loop(c, loop_var[it], it == kb ? k->kblock : nest->extent[l], TJ_FOR_SERIAL, upd);
  }
  const tj_tir_stmt_t *first[2] = {tile_loops(k, init_body, &arg), tile_loops(k, save_body, &arg)};
  const tj_tir_stmt_t *step[3] = {tile_loops(k, restore_body, &arg), upd, tile_loops(k, save_body, &arg)};
  const tj_tir_stmt_t *last[2] = {tile_loops(k, restore_body, &arg), write_back_loops(k, &arg)};
  const tj_tir_stmt_t *last_rows = per_tile(k, &arg, 2, last);
  if (k->n_residual) last_rows = with_residual_rows(k, &arg, last_rows);
  int64_t q_all = k->q_per * shares;
  const tj_tir_stmt_t *phases[3] = {
      tj_sched_loop(c, q, k->q_per, TJ_FOR_SERIAL, in_range(c, qg, q_ext, q_all, per_tile(k, &arg, 2, first))),
      tj_sched_loop(c, co, n_blocks, TJ_FOR_SERIAL,
                    tj_sched_loop(c, q, k->q_per, TJ_FOR_SERIAL,
                                  in_range(c, qg, q_ext, q_all, per_tile(k, &arg, 3, step)))),
      tj_sched_loop(c, q, k->q_per, TJ_FOR_SERIAL, in_range(c, qg, q_ext, q_all, last_rows))};
  if (!phases[0] || !phases[1] || !phases[2]) return NULL;
  const tj_tir_stmt_t *s = tj_tir_allocate(c->arena, k->part, tj_tir_seq(c->arena, 3, phases));
  p *= shares;
  s = tj_sched_loop(c, fvs, p, p > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, s);
  return with_repacks(k, s);
}

static const tj_tir_stmt_t *partial_load_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  return partial_body(k, xi, fi, arg, true);
}

static const tj_tir_stmt_t *partial_store_body(conv_t *k, const tj_tir_expr_t *xi, const tj_tir_expr_t *fi, void *arg) {
  return partial_body(k, xi, fi, arg, false);
}

/* if kc == at: first else: other */
static const tj_tir_stmt_t *on_k_block(conv_t *k, int64_t at, const tj_tir_stmt_t *first, const tj_tir_stmt_t *other) {
  const tj_tir_expr_t *cond = first && other ? tj_tir_binary(k->c->arena, TJ_TIR_EQ, k->kc, tj_tir_i64(k->c->arena, at)) : NULL;
  const tj_tir_stmt_t *s = cond ? tj_tir_if(k->c->arena, cond, first, other) : NULL;
  if (!s) k->c->oom = true;
  return s;
}

static const tj_tir_stmt_t *build(conv_t *k, const tj_sched_epilogue_t *ep) {
  if (k->kblock_iter >= 0) return build_k_blocked(k, ep);
  tj_sched_ctx_t *c = k->c;
  const tj_sched_nest_t *nest = &k->nest;
  const tj_block_t *b = k->b;
  bool is_outer[TJ_SCHED_MAX_NEST];
  int64_t ext[TJ_SCHED_MAX_NEST], p = outer_iters(k, is_outer), work = 1;
  int outer_iter[TJ_SCHED_MAX_NEST], n_outer = 0;
  int64_t ev = nest->extent[nest->loop_of_iter[k->vec_iter]];
  int64_t group = k->panel ? k->panel_group : 1;
  if (k->channel_blocks) {
    outer_iter[n_outer] = -1; /* fv, or its group of panel_group blocks */
    ext[n_outer++] = ev / k->lanes / group;
    p *= ev / k->lanes / group;
  }
  for (int l = 0; l < nest->n; l++) {
    int it = nest->iter_of_loop[l];
    work *= nest->extent[l];
    if (!is_outer[it]) continue;
    outer_iter[n_outer] = it;
    ext[n_outer++] = outer_extent(k, it);
  }
  const tj_tir_expr_t *fo = tj_sched_var(c, "fo"), *unf[TJ_SCHED_MAX_NEST], *outer[TJ_SCHED_MAX_NEST] = {0};
  const tj_tir_expr_t *start[TJ_SCHED_MAX_NEST] = {0};
  if (!fo || (n_outer && !tj_sched_unfuse(c, fo, n_outer, ext, unf))) return NULL;
  const tj_tir_expr_t *xo = tj_sched_var(c, "xo"), *fv = tj_sched_var(c, "fv"), *fv_loop = fv, *first = NULL;
  for (int i = 0; i < n_outer; i++) {
    if (outer_iter[i] < 0) fv = first = unf[i];
    else outer[outer_iter[i]] = start[outer_iter[i]] = unf[i];
  }
  if (k->panel) {
    /* fv = group * G + g, g the panel's index in the group's copy */
    k->panel_g = group > 1 ? tj_sched_var(c, "g") : tj_tir_i64(c->arena, 0);
    first = group > 1 ? tj_sched_mul(c, first, group) : first;
    k->panel_first = first;
    fv = group > 1 ? tj_sched_add(c, first, k->panel_g) : first;
    if (!k->panel_g || !fv) return NULL;
  }
  const tj_sched_row_block_t *rb = &k->window.block;
  if (k->windowed && rb->rows > 1) {
    /* row = block * rows + row_offset; the window starts at block * rows */
    start[rb->row_iter] = tj_sched_mul(c, outer[rb->row_iter], rb->rows);
    outer[rb->row_iter] = tj_sched_add(c, start[rb->row_iter], rb->row_offset);
    if (!outer[rb->row_iter]) return NULL;
  }
  const tj_tir_expr_t *reduce[TJ_SCHED_MAX_NEST] = {0};
  for (int it = 0; it < b->n_iter_vars; it++)
    if (b->iter_vars[it].kind == TJ_ITER_REDUCE) reduce[it] = tj_sched_var(c, b->iter_vars[it].var->var.name);
  const tj_tir_expr_t *kvals[TJ_SCHED_MAX_NEST] = {0};
  int64_t kc_count = 1;
  for (int it = 0; it < b->n_iter_vars; it++) {
    kvals[it] = reduce[it];
    if (!reduce[it] || !k->k_block) continue;
    k->kk = reduce[it];
    k->kc = tj_sched_var(c, "kc");
    kvals[it] = tj_sched_add(c, tj_sched_mul(c, k->kc, k->k_block), reduce[it]);
    kc_count = nest->extent[nest->loop_of_iter[it]] / k->k_block;
    if (!kvals[it]) return NULL;
  }
  tile_arg_t arg = {outer, xo, fv, NULL, kvals, ep, NULL};
  /* acc[T, L] */
  const tj_tir_expr_t *shape[2] = {tj_tir_i64(c->arena, k->tile), tj_tir_i64(c->arena, k->lanes)};
  k->acc = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_acc", k->st->store.buffer->name),
                         k->widen ? TJ_F32 : k->st->store.buffer->dtype, 2, shape, NULL);
  if (!k->acc) return NULL;
  ((tj_buffer_t *)k->acc)->scope = "local";
  /* bfloat16 pairs: the paired loop runs extent / 2 pairs (first term at 2j, second at
   * 2j + 1), then for an odd extent the last term alone (`tail`, the same loops inside). */
  const tj_tir_expr_t *kvals2[TJ_SCHED_MAX_NEST], *kvals_tail[TJ_SCHED_MAX_NEST];
  int64_t pair_extent = k->pair_iter >= 0 ? nest->extent[nest->loop_of_iter[k->pair_iter]] : 0;
  tile_arg_t tail_arg = arg;
  const tj_tir_stmt_t *tail = NULL;
  if (k->pair_iter >= 0) {
    memcpy(kvals2, kvals, sizeof kvals2);
    memcpy(kvals_tail, kvals, sizeof kvals_tail);
    kvals[k->pair_iter] = tj_sched_mul(c, reduce[k->pair_iter], 2);
    kvals2[k->pair_iter] = tj_sched_add(c, kvals[k->pair_iter], tj_tir_i64(c->arena, 1));
    kvals_tail[k->pair_iter] = tj_tir_i64(c->arena, pair_extent - 1);
    if (!kvals[k->pair_iter] || !kvals2[k->pair_iter] || !kvals_tail[k->pair_iter]) return NULL;
    arg.reduce2 = kvals2;
    tail_arg.reduce = kvals_tail;
    if (pair_extent % 2 && !(tail = tile_loops(k, update_body, &tail_arg))) return NULL;
  }
  const tj_tir_stmt_t *upd = tile_loops(k, update_body, &arg);
  if (prefetch_applies(k)) upd = with_prefetch(k, &arg, upd);
  bool group_prefetch = !prefetch_applies(k) && group_prefetch_applies(k);
  if (k->inner_reduce >= 0) {
    int l = nest->loop_of_iter[k->inner_reduce];
    upd = tj_sched_loop(c, reduce[k->inner_reduce], nest->extent[l], TJ_FOR_UNROLLED, upd);
    if (tail) tail = tj_sched_loop(c, reduce[k->inner_reduce], nest->extent[l], TJ_FOR_UNROLLED, tail);
  }
  for (int l = nest->n - 1; l >= 0; l--) {
    int it = nest->iter_of_loop[l];
    if (b->iter_vars[it].kind != TJ_ITER_REDUCE || it == k->inner_reduce) continue;
    if (it == k->pair_iter) {
      upd = tj_sched_loop(c, reduce[it], pair_extent / 2, TJ_FOR_SERIAL, upd);
      const tj_tir_stmt_t *both[2] = {upd, tail};
      if (tail) upd = upd ? tj_tir_seq(c->arena, 2, both) : NULL;
      tail = NULL;
      continue;
    }
    if (tail) tail = tj_sched_loop(c, reduce[it], nest->extent[l], TJ_FOR_SERIAL, tail);
    upd = group_prefetch ? group_prefetch_loop(k, &arg, reduce[it], upd)
                         : tj_sched_loop(c, reduce[it], k->k_block ? k->k_block : nest->extent[l], TJ_FOR_SERIAL, upd);
  }
  const tj_tir_stmt_t *three[3] = {tile_loops(k, init_body, &arg), upd, write_back_loops(k, &arg)};
  if (k->k_block) {
    three[0] = on_k_block(k, 0, three[0], tile_loops(k, partial_load_body, &arg));
    three[2] = on_k_block(k, kc_count - 1, three[2], tile_loops(k, partial_store_body, &arg));
  }
  if (!three[0] || !three[1] || !three[2]) return NULL;
  const tj_tir_stmt_t *s = tj_tir_allocate(c->arena, k->acc, tj_tir_seq(c->arena, 3, three));
  if (!k->channel_blocks) s = tj_sched_loop(c, fv_loop, ev / k->lanes, TJ_FOR_SERIAL, s);
  if (k->tile_iter >= 0)
    s = tj_sched_loop(c, xo, nest->extent[nest->loop_of_iter[k->tile_iter]] / k->tile, TJ_FOR_SERIAL, s);
  else
    s = s ? tj_tir_let_stmt(c->arena, xo, tj_tir_i64(c->arena, 0), s) : NULL;
  if (k->n_residual) s = with_residual_rows(k, &arg, s);
  if (k->windowed) s = with_window(k, start, s);
  if (k->panel && group > 1) s = tj_sched_loop(c, k->panel_g, group, TJ_FOR_SERIAL, s);
  if (k->panel) s = with_panel(k, first, s);
  s = tj_sched_loop(c, fo, p, p > 1 && work >= TJ_SCHED_PARALLEL_MIN_WORK ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, s);
  if (k->k_block) {
    s = tj_sched_loop(c, k->kc, kc_count, TJ_FOR_SERIAL, s);
    s = s ? tj_tir_allocate(c->arena, k->partial, s) : NULL;
  }
  return with_repacks(k, s);
}

/* e = tile var + r (either order) with r a reduce iter var: returns r's index. */
static int sliding_reduce(const conv_t *k, const tj_tir_expr_t *e) {
  if (e->kind != TJ_TIR_ADD || k->tile_iter < 0) return -1;
  const tj_tir_expr_t *tile = k->b->iter_vars[k->tile_iter].var;
  const tj_tir_expr_t *x = e->binary.a, *y = e->binary.b;
  if (y == tile) x = e->binary.b, y = e->binary.a;
  if (x != tile) return -1;
  int r = tj_sched_iter_index(k->b, y);
  return r >= 0 && k->b->iter_vars[r].kind == TJ_ITER_REDUCE ? r : -1;
}

typedef struct slide_find {
  const conv_t *k;
  int found;
} slide_find_t;

static bool find_slide(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  slide_find_t *f = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD)
    for (int d = 0; d < e->load.n_indices && f->found < 0; d++) f->found = sliding_reduce(f->k, e->load.indices[d]);
  return f->found < 0;
}

/* The reduce iter var to run innermost, or -1 (see reorder_reductions). */
static int pick_inner_reduce(const conv_t *k) {
  tj_dtype_t d = k->st->store.buffer->dtype;
  if (!k->c->opts->reorder_reductions || d.code != TJ_DT_FLOAT || d.bits < 32 || d.lanes != 1) return -1;
  slide_find_t f = {k, -1};
  tj_tir_visitor_t v = {.expr = find_slide, .ctx = &f};
  tj_tir_visit_expr(&v, k->st->store.value);
  if (f.found < 0 || k->nest.extent[k->nest.loop_of_iter[f.found]] > MAX_INNER_REDUCE) return -1;
  return f.found;
}

/* ---- a copy as the padding: inlined ---- */

/* The padding nest of a conv without padding (a 1x1 conv: LegalizeOps still writes
 * pad_temp, as a plain copy of the input) is read through no window: each load of it
 * becomes the load of the input it copies. */
typedef struct copy_inline {
  const tj_block_t *copy; /* the copy nest's block: pad[i...] = X[f(i...)] */
  const tj_buffer_t *buf; /* pad */
} copy_inline_t;

/* stmts[i] as a plain copy of a parameter into pad (its value one load, no condition):
 * its block, else NULL. */
static const tj_block_t *copy_nest(tj_sched_ctx_t *c, int i, const tj_buffer_t *pad) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce || nest.block->body->store.buffer != pad)
    return NULL;
  const tj_tir_expr_t *v = nest.block->body->store.value;
  return v->kind == TJ_TIR_BUFFER_LOAD && tj_sched_is_param(c, v->load.buffer) ? nest.block : NULL;
}

/* Whether k reads pad along its reduction in pad's contiguous last dim (NHWC: the input
 * channels), so the tile's broadcasts walk the input in order. An NCHW 1x1 conv reads one
 * element per channel plane per k step: there the window, which packs the rows a block
 * reads into a few KB, measured faster (ResNet-18's 1x1/2 128->256 at 28x28: 0.157-0.167
 * ms windowed, 0.213-0.226 read in place; 64->128 at 56x56 0.181-0.188 against
 * 0.187-0.216; `tvmjit bench --profile` medians, 1 thread, Ice Lake, 3 interleaved rounds). */
static bool reads_along_reduction(const conv_t *k, const tj_buffer_t *pad) {
  const tj_tir_expr_t *load = tj_sched_single_load(k->st->store.value, pad);
  if (!load || load->load.n_indices < 1) return false;
  const tj_tir_expr_t *last = load->load.indices[load->load.n_indices - 1];
  for (int l = 0; l < k->nest.n; l++) {
    const tj_iter_var_t *iv = &k->b->iter_vars[k->nest.iter_of_loop[l]];
    if (iv->kind == TJ_ITER_REDUCE && k->nest.extent[l] > 1 && tj_tir_expr_uses_var(last, iv->var)) return true;
  }
  return false;
}

/* k's block with every load of ci->buf replaced by what the copy reads. */
static bool inline_copy(conv_t *k, copy_inline_t *ci) {
  const tj_tir_stmt_t *st = k->b->body;
  const tj_tir_expr_t *v = tj_sched_inline_producer(k->c, st->store.value, ci->copy, ci->buf);
  tj_block_t *nb = TJ_ARENA_NEW(k->c->arena, tj_block_t);
  if (!v || !nb) return (void)(k->c->oom = true), false;
  *nb = *k->b;
  nb->body = tj_tir_store(k->c->arena, st->store.buffer, st->store.n_indices, st->store.indices, v);
  if (!nb->body) return (void)(k->c->oom = true), false;
  k->b = k->nest.block = nb;
  return true;
}

/* Matches stmts[i] as a conv; on success fills k (widening decided). With ci, the loads
 * of a copy nest's buffer are inlined first. x_tile: the x tile may be chosen (the
 * padding is stmts[i - 1], to be read through a window). */
static bool conv_matches_inlined(tj_sched_ctx_t *c, int i, conv_t *k, copy_inline_t *ci, bool x_tile) {
  *k = (conv_t){.c = c, .inner_reduce = -1, .kblock_iter = -1, .x_tile_allowed = x_tile, .pair_iter = -1};
  if (i >= c->n_stmts || !tj_sched_collect_nest(c->stmts[i], &k->nest) || !k->nest.n_reduce) return false;
  k->b = k->nest.block;
  if (ci && !inline_copy(k, ci)) return false;
  if (!match(k)) return false;
  k->widen = wants_widen(k) && widen(k, k->st->store.value) && widen(k, k->init->store.value);
  k->inner_reduce = k->x_tile ? k->x_reduce : pick_inner_reduce(k);
  k->pair_iter = pick_pair(k);
  /* The pairs read bfloat16 as stored, in 16-lane ops. The sliding rx is not unrolled
   * inside the tile: each broadcast pair then has one use, and LLVM folds it into the
   * vdpbf16ps as an embedded {1to16} load, where the shared broadcasts took a
   * vbroadcastss each and spilled (37 zmm live): the seed's conv 0.40 -> 0.37 ms. */
  if (k->pair_iter >= 0) k->widen = false, k->vec_unit = 16, k->inner_reduce = -1;
  int64_t ev = k->nest.extent[k->nest.loop_of_iter[k->vec_iter]];
  k->channel_blocks = ev > k->lanes && tj_sched_conv_weight_bytes(c, &k->nest, k->st, k->vec_iter) >=
                                           CHANNEL_BLOCKS_MIN_WEIGHT_BYTES;
  return true;
}

static bool conv_matches(tj_sched_ctx_t *c, int i, conv_t *k) { return conv_matches_inlined(c, i, k, NULL, false); }

static const tj_tir_stmt_t *conv_nest(tj_sched_ctx_t *c, int i, conv_t *k, int *used) {
  plan_repacks(k, k->st->store.value);
  if (c->oom) return NULL;
  k->panel = panel_applies(k);
  plan_k_blocks(k);
  if (k->kblock_iter < 0 && (k->k_block = k_block_depth(k))) {
    const tj_buffer_t *out = k->st->store.buffer;
    k->partial = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_partial", out->name),
                               k->widen ? TJ_F32 : out->dtype, out->ndim, out->shape, NULL);
    if (!k->partial) return (void)(c->oom = true), NULL;
  }
  if (k->panel) {
    repack_t *r = &k->repacks[0];
    k->panel_group = panel_group(k);
    const tj_tir_expr_t *shape[3] = {tj_tir_i64(c->arena, k->panel_group),
                                     k->k_block ? tj_tir_i64(c->arena, k->k_block) : r->to->shape[1], r->to->shape[2]};
    if (!(r->to = tj_buffer_new(c->arena, r->to->name, r->to->dtype, 3, shape, NULL))) return (void)(c->oom = true), NULL;
  }
  tj_sched_epilogue_t ep;
  tj_sched_collect_epilogue(c, i, i + 1, k->st->store.buffer, &ep);
  plan_residual_rows(k, &ep);
  k->ep_in_acc = plan_ep_in_acc(k, &ep);
  if (c->oom) return NULL;
  const tj_tir_stmt_t *r = tj_sched_with_before(c, &ep, build(k, &ep));
  if (!r || c->oom) return (void)(c->oom = true), NULL;
  c->stats.conv++;
  c->stats.fused_epilogues += ep.n;
  c->stats.repacked += k->n_repacks;
  c->stats.widened += k->widen;
  c->stats.reordered += k->inner_reduce >= 0 && !k->x_tile; /* the x tile unrolls the innermost loop in place */
  *used = 1 + ep.span;
  return r;
}

/* stmts[i] writes a buffer the conv stmts[i+1] reads (its padding), and nothing else
 * uses it: it can be computed per outer iteration (window), or for a widened conv
 * written as a float32 copy. */
static const tj_buffer_t *padded_input(tj_sched_ctx_t *c, int i, const conv_t *k) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || nest.n_reduce) return NULL;
  const tj_tir_stmt_t *st = nest.block->body;
  if (st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(nest.block, st)) return NULL;
  const tj_buffer_t *p = st->store.buffer;
  int64_t n;
  if (p->strides || p->elem_offset || !tj_buffer_static_size(p, &n)) return NULL;
  if (tj_sched_root_alloc(c, p) < 0 || tj_sched_is_param(c, p)) return NULL;
  if (tj_sched_count_uses(k->st, p) == 0) return NULL;
  for (int j = 0; j < c->n_stmts; j++)
    if (j != i && j != i + 1 && tj_sched_count_uses(c->stmts[j], p) > 0) return NULL;
  return p;
}

/* A window per output row, then (when it fits) per block of rows. */
static bool plan_window(tj_sched_ctx_t *c, int i, conv_t *k, const tj_buffer_t *p) {
  bool is_outer[TJ_SCHED_MAX_NEST];
  int64_t iterations = outer_iters(k, is_outer);
  tj_dtype_t dt = k->widen && is_narrow(p->dtype) ? TJ_F32 : p->dtype;
  const tj_tir_expr_t *value = k->st->store.value;
  if (!tj_sched_window_plan(c, i, &k->nest, value, is_outer, iterations, dt, NULL, k->vec_iter, &k->window))
    return false;
  int row_iter = tj_sched_window_row_iter(&k->window);
  if (row_iter < 0 || !is_outer[row_iter]) return true;
  int64_t extent = k->nest.extent[k->nest.loop_of_iter[row_iter]];
  const tj_tir_expr_t *row_offset = tj_sched_var(c, "row");
  if (!row_offset) return c->oom = true, false;
  for (int64_t rows = MAX_WINDOW_ROWS; rows > 1; rows /= 2) {
    if (extent % rows || iterations / rows < MIN_WINDOWS) continue;
    tj_sched_row_block_t block = {row_iter, rows, row_offset};
    tj_sched_window_t w;
    if (tj_sched_window_plan(c, i, &k->nest, value, is_outer, iterations / rows, dt, &block, k->vec_iter, &w)) {
      k->window = w;
      return true;
    }
    if (c->oom) return false;
  }
  return true;
}

int tj_sched_rule_conv(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  conv_t k;
  int used = 0;
  if (conv_matches(c, i, &k)) {
    *out = conv_nest(c, i, &k, &used);
    return c->oom ? 1 : used;
  }
  if (!conv_matches(c, i + 1, &k)) return 0;
  const tj_buffer_t *p = padded_input(c, i, &k);
  if (!p) return 0;
  /* A copy (no padding) is read from the input itself when the conv walks it in order
   * (NHWC), or when it would otherwise be materialised whole (channel blocks). */
  copy_inline_t ci = {copy_nest(c, i, p), p};
  if (ci.copy && (k.channel_blocks || reads_along_reduction(&k, p))) {
    conv_t kc;
    if (conv_matches_inlined(c, i + 1, &kc, &ci, false) && !kc.widen) { /* widened: reads a float32 copy */
      *out = conv_nest(c, i + 1, &kc, &used);
      if (!*out) return c->oom = true, 1;
      c->drop_alloc[tj_sched_root_alloc(c, p)] = true;
      c->stats.inlined++;
      return 1 + used;
    }
    if (c->oom) return 1;
  }
  int64_t p_elems;
  if (k.channel_blocks && tj_buffer_static_size(p, &p_elems) &&
      p_elems * tj_dtype_bytes(p->dtype) <= CHANNEL_BLOCKS_MAX_PADDED_BYTES)
    return 0; /* the padding materialised by its own nest, the conv scheduled next */
  k.channel_blocks = false;
  conv_t kx; /* the x tile, when it applies and its window holds x phased */
  if (conv_matches_inlined(c, i + 1, &kx, NULL, true) && kx.x_tile && plan_window(c, i, &kx, p) && x_phased(&kx))
    k = kx;
  else if (c->oom)
    return 1;
  /* The padding computed per output row, read from a small local buffer. */
  if (k.x_tile || plan_window(c, i, &k, p)) {
    k.windowed = true;
    if (k.widen) k.shadow_from = p; /* widen() reads it from the (float32) window */
    *out = conv_nest(c, i + 1, &k, &used);
    if (!*out) return c->oom = true, 1;
    c->drop_alloc[tj_sched_root_alloc(c, p)] = true;
    c->stats.windowed++;
    return 1 + used;
  }
  if (c->oom) return 1;
  /* The padding of a widened conv: written as float32 once, read as float32. */
  if (!k.widen || !is_narrow(p->dtype)) return 0;
  const tj_buffer_t *p32 =
      tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_f32", p->name), TJ_F32, p->ndim, p->shape, NULL);
  if (!p32) return c->oom = true, 1;
  int used_pad = 0;
  const tj_tir_stmt_t *pad = tj_sched_injective_nest(c, i, p32, &used_pad);
  if (!pad) return c->oom ? 1 : 0;
  k.shadow_from = p;
  k.shadow_to = p32;
  const tj_tir_stmt_t *conv = conv_nest(c, i + 1, &k, &used);
  if (!conv) return c->oom = true, 1;
  const tj_tir_stmt_t *pair[2] = {pad, conv};
  const tj_tir_stmt_t *seq = tj_tir_seq(c->arena, 2, pair);
  *out = seq ? tj_tir_allocate(c->arena, p32, seq) : NULL;
  if (!*out) return c->oom = true, 1;
  c->drop_alloc[tj_sched_root_alloc(c, p)] = true;
  return 1 + used;
}
