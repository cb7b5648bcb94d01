/* R.permute_dims → topi.transpose (`transpose`, block T_transpose) and
 * R.reshape → topi.reshape (`reshape`, block T_reshape).
 *
 * reshape reads x at unravel(ravel(out index)). TVM's simplifier rewrites the
 * index expressions; we emit the forms it produces for static shapes: flat =
 * Σ ax_i * stride_i, and per input dim of size s and inner stride P:
 * `flat % (P*s) // P` (P > 1), `flat % s` (P = 1), 0 (s = 1); symbolic dims keep
 * `flat // P % s`. Shapes whose dims cancel out (e.g. (2,3,4) → (6,4)) would be
 * simplified further by TVM; those PrimFuncs are correct but not identical. */
#include "transforms/legalize/legalize.h"

tj_status_t *tj_legalize_permute_dims(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  int n = xs->tensor.ndim;
  int64_t raw[TJ_LG_MAX_ITERS];
  int axes[TJ_LG_MAX_ITERS];
  int given = tj_lg_attr_ints(call->call.attrs, "axes", raw, TJ_LG_MAX_ITERS);
  bool seen[TJ_LG_MAX_ITERS] = {false};
  for (int i = 0; i < n; i++) {
    if (given < 0) {
      axes[i] = n - 1 - i; /* axes=None reverses */
    } else if (given != n || !tj_lg_axis(raw[i], n, &axes[i])) {
      return NULL;
    }
    if (seen[axes[i]]) return NULL;
    seen[axes[i]] = true;
  }
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "transpose", NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = xs->tensor.shape[axes[i]];
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, xs->tensor.dtype, n, oshape));
  for (int i = 0; i < n; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_transpose", xs->tensor.dtype, n, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_transpose", n, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "transpose", NULL, out_expr);
  for (int i = 0; i < n; i++) idx[axes[i]] = st.iv[i];
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, tj_lg_load(a, x, n, idx)));
  return tj_lg_te_finish(&te, "transpose", out_sinfo, out_expr);
}

/* ax * e with e's product chain flattened: ax * (b * 2) → ax * b * 2 (canonical form). */
static const tj_tir_expr_t *mul_flat(tj_arena_t *a, const tj_tir_expr_t *ax, const tj_tir_expr_t *e) {
  if (e && e->kind == TJ_TIR_MUL) return mul_flat(a, mul_flat(a, ax, e->binary.a), e->binary.b);
  return tj_lg_mul(a, ax, e);
}

static bool is_const(const tj_tir_expr_t *e, int64_t v) {
  int64_t x;
  return tj_tir_is_const_int(e, &x) && x == v;
}

tj_status_t *tj_legalize_reshape(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args < 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  const tj_sinfo_t *fallback = NULL;
  if (call->call.n_args > 1 && call->call.args[1]->kind == TJ_RX_SHAPE_EXPR)
    fallback = tj_sinfo_tensor(a, xs->tensor.dtype, call->call.args[1]->shape_expr.n, call->call.args[1]->shape_expr.values);
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, fallback);
  if (!tj_lg_tensor_known(out_sinfo) || out_sinfo->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  for (int i = 0; i < out_sinfo->tensor.ndim; i++)
    if (is_const(out_sinfo->tensor.shape[i], -1)) return NULL; /* -1 must be resolved by inference */
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "reshape", NULL, out_expr);
  int no = out_sinfo->tensor.ndim, ni = x->ndim;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < no; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_reshape", xs->tensor.dtype, no, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_reshape", no, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "reshape", NULL, out_expr);
  /* flat index over the output */
  const tj_tir_expr_t *flat = tj_tir_i64(a, 0);
  for (int i = 0; i < no; i++) {
    if (is_const(oshape[i], 1)) continue; /* an extent-1 iterator is 0 */
    const tj_tir_expr_t *term = st.iv[i];
    for (int j = i + 1; j < no; j++) term = mul_flat(a, term, oshape[j]);
    flat = tj_lg_add(a, flat, term);
  }
  /* unravel over the input */
  for (int d = ni - 1; d >= 0; d--) {
    const tj_tir_expr_t *P = tj_tir_i64(a, 1);
    for (int j = d + 1; j < ni; j++) P = tj_lg_mul(a, P, x->shape[j]);
    const tj_tir_expr_t *s = x->shape[d];
    int64_t pv, sv;
    if (is_const(s, 1)) {
      idx[d] = tj_tir_i64(a, 0);
    } else if (is_const(P, 1)) {
      idx[d] = tj_lg_floormod(a, flat, s);
    } else if (tj_tir_is_const_int(P, &pv) && tj_tir_is_const_int(s, &sv)) {
      idx[d] = tj_lg_floordiv(a, tj_lg_floormod(a, flat, tj_tir_i64(a, pv * sv)), P);
    } else {
      idx[d] = tj_lg_floormod(a, tj_lg_floordiv(a, flat, P), s);
    }
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, no, st.iv, tj_lg_load(a, x, ni, idx)));
  return tj_lg_te_finish(&te, "reshape", out_sinfo, out_expr);
}
