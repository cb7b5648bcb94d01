/* Normalisations of TVM's legalize_ops/nn.py beyond layer_norm and batch_norm (which
 * live in nn.c): rms_norm. Kept apart so that each file stays one concept. */
#include <string.h>

#include "transforms/legalize/legalize.h"

/* x / n as TOPI writes a mean: a literal n becomes a multiplication by 1/n (TVM's
 * constant folding at the corpus commit), a symbolic n stays a division. */
static const tj_tir_expr_t *divide_by_extent(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *n) {
  if (!x || !n) return NULL;
  n = tj_lg_cast(a, x->dtype, n);
  if (n && n->kind == TJ_TIR_FLOAT_IMM && n->float_imm != 0)
    return tj_tir_binary(a, TJ_TIR_MUL, x, tj_tir_float(a, x->dtype, 1.0 / n->float_imm));
  return tj_lg_div(a, x, n);
}

/* One elementwise stage `block` writing dst[i] = cast(dt, src[i]) over src's shape. */
static void cast_stage(tj_lg_te_t *te, const char *block, const tj_buffer_t *dst, const tj_buffer_t *src) {
  tj_lg_stage_t st;
  if (te->failed || !dst || !src) {
    te->failed = true;
    return;
  }
  tj_lg_stage_spatial(te, &st, block, src->ndim, src->shape, "ax");
  if (te->failed) return;
  const tj_tir_expr_t *v = tj_lg_cast(te->arena, dst->dtype, tj_lg_load(te->arena, src, src->ndim, st.iv));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(te->arena, dst, dst->ndim, st.iv, v));
}

/* ---------------- rms_norm ----------------
 * R.nn.rms_norm → topi.nn.rms_norm (`rms_norm`). The whole op runs in float32
 * (tvm-ops.md, rms_norm row): T_cast (data → f32, a plain copy for f32 data),
 * T_multiply (x²), T_multiply_red (Σ over the axes), rsqrt (of Σ/n + eps),
 * T_cast_1 (weight → f32), T_rms_norm (rsqrt · x · w) and T_cast_2 back to the data
 * dtype into the output `T_cast`. The buffer of block T_cast is T_cast_1 and so on,
 * because TE names the output first. */

typedef struct rms_plan {
  int ndim, n_axes;
  int axes[TJ_LG_MAX_ITERS]; /* ascending */
  bool reduced[TJ_LG_MAX_ITERS];
  double epsilon;
} rms_plan_t;

static bool rms_plan(const tj_rx_expr_t *call, int ndim, rms_plan_t *p) {
  memset(p, 0, sizeof *p);
  p->ndim = ndim;
  if (ndim < 1 || ndim >= TJ_LG_MAX_ITERS) return false;
  int64_t axes[TJ_LG_MAX_ITERS];
  int n = tj_lg_attr_ints(call->call.attrs, "axes", axes, TJ_LG_MAX_ITERS);
  if (n <= 0) return false;
  for (int i = 0; i < n; i++) {
    int ax;
    if (!tj_lg_axis(axes[i], ndim, &ax) || p->reduced[ax]) return false;
    p->reduced[ax] = true;
  }
  for (int d = 0; d < ndim; d++)
    if (p->reduced[d]) p->axes[p->n_axes++] = d;
  const tj_attr_value_t *eps = tj_attrs_get(call->call.attrs, "epsilon");
  p->epsilon = eps && eps->kind == TJ_ATTR_FLOAT ? eps->f : 1e-5;
  return true;
}

/* T_multiply_red: Σ sq over the reduced axes into a buffer of the kept dims
 * ((1,) when every axis is reduced). Loops: ax<i> for kept dims, k<d> for reduced. */
static const tj_buffer_t *rms_square_sum(tj_lg_te_t *te, const tj_buffer_t *sq, const rms_plan_t *p) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS + 1], *kept[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS + 1];
  const char *names[TJ_LG_MAX_ITERS + 1];
  int nk = 0, n = 0;
  for (int d = 0; d < p->ndim; d++)
    if (!p->reduced[d]) kept[nk++] = sq->shape[d];
  if (nk == 0) kept[nk++] = tj_tir_i64(a, 1);
  for (int i = 0; i < nk; i++, n++) {
    ext[n] = kept[i];
    kinds[n] = TJ_ITER_SPATIAL;
    names[n] = tj_arena_printf(a, "ax%d", i);
  }
  for (int i = 0; i < p->n_axes; i++, n++) {
    ext[n] = sq->shape[p->axes[i]];
    kinds[n] = TJ_ITER_REDUCE;
    names[n] = tj_arena_printf(a, "k%d", p->axes[i]);
  }
  const tj_buffer_t *red = tj_lg_alloc(te, "T_multiply_red", TJ_F32, nk, kept);
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, "T_multiply_red", n, ext, kinds, names);
  if (te->failed || !red) return NULL;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  bool all_reduced = p->n_axes == p->ndim;
  for (int d = 0, si = 0, ri = all_reduced ? 1 : nk; d < p->ndim; d++)
    idx[d] = p->reduced[d] ? st.iv[ri++] : st.iv[si++];
  const tj_tir_expr_t *sum =
      tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, red, nk, st.iv), tj_lg_load(a, sq, p->ndim, idx));
  tj_lg_stage_end(te, &st, tj_lg_store(a, red, nk, st.iv, tj_lg_zero(a, TJ_F32)), tj_lg_store(a, red, nk, st.iv, sum));
  return red;
}

/* rsqrt[kept] = rsqrt(Σ · (1/n) + eps). */
static const tj_buffer_t *rms_rsqrt(tj_lg_te_t *te, const tj_buffer_t *red, const tj_buffer_t *x, const rms_plan_t *p) {
  tj_arena_t *a = te->arena;
  if (!red) return NULL;
  const tj_buffer_t *r = tj_lg_alloc(te, "rsqrt", TJ_F32, red->ndim, red->shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "rsqrt", red->ndim, red->shape, "ax");
  if (te->failed || !r) return NULL;
  const tj_tir_expr_t *extent = tj_lg_const(a, TJ_F32, 1);
  for (int i = 0; i < p->n_axes; i++) extent = tj_lg_mul(a, extent, x->shape[p->axes[i]]);
  const tj_tir_expr_t *mean = divide_by_extent(a, tj_lg_load(a, red, red->ndim, st.iv), extent);
  const tj_tir_expr_t *v = tj_lg_call1(a, "tir.rsqrt", tj_lg_add(a, mean, tj_tir_float(a, TJ_F32, p->epsilon)));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, r, red->ndim, st.iv, v));
  return r;
}

/* T_rms_norm = rsqrt[kept] · x · w[reduced]. */
static void rms_scale(tj_lg_te_t *te, const tj_buffer_t *dst, const tj_buffer_t *r, const tj_buffer_t *x32,
                      const tj_buffer_t *w32, const rms_plan_t *p) {
  tj_arena_t *a = te->arena;
  tj_lg_stage_t st;
  if (te->failed || !r || !x32 || !w32 || !dst) {
    te->failed = true;
    return;
  }
  tj_lg_stage_spatial(te, &st, "T_rms_norm", p->ndim, x32->shape, "ax");
  if (te->failed) return;
  const tj_tir_expr_t *kept[TJ_LG_MAX_ITERS], *red[TJ_LG_MAX_ITERS];
  int nk = 0, nr = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (p->reduced[d]) red[nr++] = st.iv[d];
    else kept[nk++] = st.iv[d];
  }
  if (nk == 0) kept[nk++] = tj_tir_i64(a, 0);
  const tj_tir_expr_t *v = tj_lg_bin(a, TJ_TIR_MUL, tj_lg_load(a, r, nk, kept), tj_lg_load(a, x32, p->ndim, st.iv));
  v = tj_lg_bin(a, TJ_TIR_MUL, v, tj_lg_load(a, w32, nr, red));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, dst, p->ndim, st.iv, v));
}

tj_status_t *tj_legalize_rms_norm(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  const tj_sinfo_t *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_lg_tensor_known(xs) || !tj_lg_tensor_known(ws) || !tj_dtype_is_floating(xs->tensor.dtype)) return NULL;
  rms_plan_t p;
  if (!rms_plan(call, xs->tensor.ndim, &p) || ws->tensor.ndim != p.n_axes) return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *w = tj_lg_placeholder(&te, call->call.args[1]);
  if (!x || !w) return tj_lg_te_finish(&te, "rms_norm", NULL, out_expr);
  const tj_buffer_t *out = tj_lg_output(&te, "T_cast", dt, x->ndim, x->shape);
  const tj_buffer_t *x32 = tj_lg_alloc(&te, "T_cast_1", TJ_F32, x->ndim, x->shape);
  const tj_buffer_t *sq = tj_lg_alloc(&te, "T_multiply", TJ_F32, x->ndim, x->shape);
  cast_stage(&te, "T_cast", x32, x);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_multiply", x->ndim, x->shape, "ax");
  if (te.failed || !sq) return tj_lg_te_finish(&te, "rms_norm", NULL, out_expr);
  const tj_tir_expr_t *xv = tj_lg_load(a, x32, x->ndim, st.iv);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, sq, x->ndim, st.iv, tj_lg_bin(a, TJ_TIR_MUL, xv, xv)));
  const tj_buffer_t *r = rms_rsqrt(&te, rms_square_sum(&te, sq, &p), x, &p);
  const tj_buffer_t *w32 = tj_lg_alloc(&te, "T_cast_2", TJ_F32, w->ndim, w->shape);
  cast_stage(&te, "T_cast_1", w32, w);
  const tj_buffer_t *normed = tj_lg_alloc(&te, "T_rms_norm", TJ_F32, x->ndim, x->shape);
  rms_scale(&te, normed, r, x32, w32, &p);
  cast_stage(&te, "T_cast_2", out, normed);
  return tj_lg_te_finish(&te, "rms_norm", te.failed ? NULL : tj_lg_call_sinfo(call, xs), out_expr);
}
