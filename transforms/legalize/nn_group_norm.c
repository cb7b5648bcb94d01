/* R.nn.group_norm → topi.nn.group_norm (`group_norm`), with TVM's stages:
 *   T_reshape       data → (…, G, C/G, …) at the channel axis (buffer T_reshape_1)
 *   T_cast          to float32 for float16 data (the statistics run in f32)
 *   <data>_red_temp Σx and Σx² over C/G and the axes (one-pass, as layer_norm)
 *   T_reshape_1/_2  gamma, beta → (G, C/G) (buffers T_reshape_2/_3)
 *   T_group_norm    (x − mean) · rsqrt(var + eps) · gamma + beta, var = E[x²] − mean²
 *   T_reshape_3     back to data's shape, into the output `T_reshape`.
 * center/scale are not consulted (TVM always applies gamma and beta).
 *
 * The reshapes read through topi.reshape's flattened index, which the simplifier
 * prints as TVM does (`((v1 * 2 + (v4 // 5 + v3) // 4 + v2) // 4 + v0) % 2`).
 * Static channel counts only (TVM's topi needs C divisible by G). */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct gn_plan {
  int nd, c;                     /* data rank, channel axis */
  int64_t C, G;                  /* channels (when a literal), groups */
  bool reduced[TJ_LG_MAX_ITERS]; /* over the reshaped rank nd + 1 */
  double eps;
  tj_dtype_t dt, acc;
} gn_plan_t;

static bool gn_plan(const tj_rx_expr_t *call, const tj_sinfo_t *xs, gn_plan_t *p) {
  memset(p, 0, sizeof *p);
  const tj_attrs_t *at = call->call.attrs;
  p->nd = xs->tensor.ndim;
  p->dt = xs->tensor.dtype;
  p->acc = p->dt.bits == 16 ? TJ_F32 : p->dt;
  p->G = tj_attrs_get_int(at, "num_groups", 1);
  if (p->nd < 2 || p->nd + 1 > TJ_LG_MAX_ITERS || !tj_dtype_is_floating(p->dt)) return false;
  if (!tj_lg_axis(tj_attrs_get_int(at, "channel_axis", 1), p->nd, &p->c)) return false;
  /* a literal channel count must split into the groups (topi asserts it); a
   * symbolic one is split as C // G, as topi writes it */
  if (p->G < 1) return false;
  if (tj_tir_is_const_int(xs->tensor.shape[p->c], &p->C) && p->C % p->G) return false;
  int64_t axes[TJ_LG_MAX_ITERS];
  int n = tj_lg_attr_ints(at, "axes", axes, TJ_LG_MAX_ITERS);
  p->reduced[p->c + 1] = true;
  for (int i = 0; i < n; i++) {
    int ax;
    if (!tj_lg_axis(axes[i], p->nd, &ax) || ax == p->c) return false;
    p->reduced[ax > p->c ? ax + 1 : ax] = true;
  }
  const tj_attr_value_t *e = tj_attrs_get(at, "epsilon");
  p->eps = e && e->kind == TJ_ATTR_FLOAT ? e->f : 1e-5;
  return true;
}

/* A copy stage `block` into dst: dst[iv] = cast(dst dtype, src[idx(iv)]), where idx
 * is topi.reshape's ravel/unravel between the two shapes (reshape = true; the
 * block's simplification prints it as TVM does) or iv itself (a plain cast). */
static void regroup_stage(tj_lg_te_t *te, const char *block, const tj_buffer_t *dst, const tj_buffer_t *src,
                          bool reshape) {
  tj_arena_t *a = te->arena;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, block, dst->ndim, dst->shape, "ax");
  if (te->failed) return;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  if (reshape) tj_lg_reshape_index(a, dst->ndim, st.iv, dst->shape, src->ndim, src->shape, idx);
  else memcpy(idx, st.iv, sizeof(idx[0]) * (size_t)src->ndim);
  const tj_tir_expr_t *v = tj_lg_cast(a, dst->dtype, tj_lg_load(a, src, src->ndim, idx));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, dst, dst->ndim, st.iv, v));
}

/* The one-pass statistics over the reduced dims of the grouped buffer xr. */
static void gn_red_temp(tj_lg_te_t *te, const char *base, const tj_buffer_t *xr, const gn_plan_t *p,
                        const tj_buffer_t **out_v0, const tj_buffer_t **out_v1) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS], *kshape[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  int nk = 0, n = 0, r = xr->ndim;
  for (int d = 0; d < r; d++)
    if (!p->reduced[d])
      kshape[nk] = xr->shape[d], ext[n] = xr->shape[d], kinds[n] = TJ_ITER_SPATIAL,
      names[n++] = tj_arena_printf(a, "ax%d", nk++);
  for (int d = 0; d < r; d++)
    if (p->reduced[d]) ext[n] = xr->shape[d], kinds[n] = TJ_ITER_REDUCE, names[n++] = tj_arena_printf(a, "k%d", d);
  const tj_buffer_t *v0 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v0", base), p->acc, nk, kshape);
  const tj_buffer_t *v1 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v1", base), p->acc, nk, kshape);
  *out_v0 = v0, *out_v1 = v1;
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, base, n, ext, kinds, names);
  if (te->failed || !v0 || !v1) return;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0, si = 0, ri = nk; d < r; d++) idx[d] = p->reduced[d] ? st.iv[ri++] : st.iv[si++];
  const tj_tir_expr_t *x = tj_lg_load(a, xr, r, idx);
  const tj_tir_expr_t *l0 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v0->name), p->acc);
  const tj_tir_expr_t *l1 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v1->name), p->acc);
  const tj_tir_stmt_t *inits[2] = {tj_lg_store(a, v0, nk, st.iv, tj_lg_zero(a, p->acc)),
                                   tj_lg_store(a, v1, nk, st.iv, tj_lg_zero(a, p->acc))};
  const tj_tir_stmt_t *stores[2] = {tj_lg_store(a, v0, nk, st.iv, l0), tj_lg_store(a, v1, nk, st.iv, l1)};
  const tj_tir_expr_t *s0 = tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, v0, nk, st.iv), x);
  const tj_tir_expr_t *s1 =
      tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, v1, nk, st.iv), tj_tir_binary(a, TJ_TIR_MUL, x, x));
  if (!inits[0] || !inits[1] || !stores[0] || !stores[1] || !s0 || !s1) {
    te->failed = true;
    return;
  }
  tj_lg_stage_end(te, &st, tj_tir_seq(a, 2, inits),
                  tj_tir_let_stmt(a, l0, s0, tj_tir_let_stmt(a, l1, s1, tj_tir_seq(a, 2, stores))));
}

/* x · (1/n) for a literal count n of reduced elements, x / n for a symbolic one
 * (n = Cast(c) * Cast(h) * ..., as TOPI divides by the product of the extents). */
static const tj_tir_expr_t *mean_of(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *n) {
  if (!x || !n) return NULL;
  if (n->kind == TJ_TIR_FLOAT_IMM) return tj_tir_binary(a, TJ_TIR_MUL, x, tj_tir_float(a, x->dtype, 1.0 / n->float_imm));
  return tj_lg_div(a, x, n);
}

static void gn_normalize(tj_lg_te_t *te, const tj_buffer_t *dst, const tj_buffer_t *xr, const tj_buffer_t *v0,
                         const tj_buffer_t *v1, const tj_buffer_t *g, const tj_buffer_t *b, const gn_plan_t *p) {
  tj_arena_t *a = te->arena;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "T_group_norm", dst->ndim, dst->shape, "ax");
  if (te->failed) return;
  const tj_tir_expr_t *count = tj_tir_float(a, p->acc, 1), *kept[TJ_LG_MAX_ITERS];
  int nk = 0;
  for (int d = 0; d < dst->ndim; d++) {
    if (!p->reduced[d]) kept[nk++] = st.iv[d];
    else count = tj_lg_mul(a, count, tj_lg_cast(a, p->acc, xr->shape[d]));
  }
  const tj_tir_expr_t *mean = mean_of(a, tj_lg_load(a, v0, nk, kept), count);
  const tj_tir_expr_t *mean2 = mean_of(a, tj_lg_load(a, v0, nk, kept), count);
  const tj_tir_expr_t *var =
      tj_lg_sub(a, mean_of(a, tj_lg_load(a, v1, nk, kept), count), tj_lg_mul(a, mean, mean2));
  const tj_tir_expr_t *rs = tj_lg_call1(a, "tir.rsqrt", tj_lg_add(a, var, tj_tir_float(a, p->acc, p->eps)));
  const tj_tir_expr_t *norm =
      tj_lg_cast(a, p->dt, tj_lg_mul(a, tj_lg_sub(a, tj_lg_load(a, xr, xr->ndim, st.iv), mean), rs));
  const tj_tir_expr_t *gc[2] = {st.iv[p->c], st.iv[p->c + 1]};
  const tj_tir_expr_t *v = tj_lg_add(a, tj_lg_mul(a, norm, tj_lg_load(a, g, 2, gc)), tj_lg_load(a, b, 2, gc));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, dst, dst->ndim, st.iv, v));
}

tj_status_t *tj_legalize_group_norm(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 3) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  for (int i = 1; i < 3; i++) {
    const tj_sinfo_t *s = tj_lg_arg_sinfo(a, call->call.args[i]);
    if (!tj_lg_tensor_known(s) || s->tensor.ndim != 1 || !tj_dtype_eq(s->tensor.dtype, xs->tensor.dtype)) return NULL;
  }
  gn_plan_t p;
  if (!gn_plan(call, xs, &p)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *gamma = tj_lg_placeholder(&te, call->call.args[1]);
  const tj_buffer_t *beta = tj_lg_placeholder(&te, call->call.args[2]);
  if (!x || !gamma || !beta) return tj_lg_te_finish(&te, "group_norm", NULL, out_expr);
  const tj_tir_expr_t *rshape[TJ_LG_MAX_ITERS],
      *pshape[2] = {tj_tir_i64(a, p.G), tj_lg_floordiv(a, x->shape[p.c], tj_tir_i64(a, p.G))};
  for (int d = 0, s = 0; d < p.nd; d++, s++) {
    if (d == p.c) rshape[s++] = pshape[0], rshape[s] = pshape[1];
    else rshape[s] = x->shape[d];
  }
  const tj_buffer_t *out = tj_lg_output(&te, "T_reshape", p.dt, p.nd, x->shape);
  const tj_buffer_t *xr = tj_lg_alloc(&te, "T_reshape_1", p.dt, p.nd + 1, rshape);
  if (!out || !xr) return tj_lg_te_finish(&te, "group_norm", NULL, out_expr);
  regroup_stage(&te, "T_reshape", xr, x, true);
  const tj_buffer_t *xs32 = xr;
  if (!tj_dtype_eq(p.acc, p.dt)) {
    xs32 = tj_lg_alloc(&te, "T_cast", p.acc, p.nd + 1, rshape);
    if (xs32) regroup_stage(&te, "T_cast", xs32, xr, false);
  }
  const tj_buffer_t *v0 = NULL, *v1 = NULL;
  if (xs32) gn_red_temp(&te, tj_arena_printf(a, "%s_red_temp", x->name), xs32, &p, &v0, &v1);
  const tj_buffer_t *g = tj_lg_alloc(&te, "T_reshape_2", p.dt, 2, pshape);
  const tj_buffer_t *b = tj_lg_alloc(&te, "T_reshape_3", p.dt, 2, pshape);
  const tj_buffer_t *normed = tj_lg_alloc(&te, "T_group_norm", p.dt, p.nd + 1, rshape);
  if (te.failed || !xs32 || !v0 || !v1 || !g || !b || !normed)
    return tj_lg_te_finish(&te, "group_norm", NULL, out_expr);
  regroup_stage(&te, "T_reshape_1", g, gamma, true);
  regroup_stage(&te, "T_reshape_2", b, beta, true);
  gn_normalize(&te, normed, xs32, v0, v1, g, b, &p);
  regroup_stage(&te, "T_reshape_3", out, normed, true);
  return tj_lg_te_finish(&te, "group_norm", te.failed ? NULL : tj_lg_call_sinfo(call, xs), out_expr);
}
