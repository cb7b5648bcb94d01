/* Indexing (TVM's legalize_ops/index.py): R.take → topi.take(mode="fast") (`take`,
 * block T_take) and R.strided_slice → topi.strided_slice (`strided_slice`, block
 * T_strided_slice_with_axes).
 *
 * take: x[.., indices[j..], ..] with no clamping or wrapping (TVM's fast mode: an
 * out-of-range index reads out of bounds). A PrimValue index is a literal when known,
 * else a scalar parameter.
 * strided_slice: the static path (x's whole shape and every begin/end/stride known):
 * negative bounds get + extent and are clamped as TOPI does, the index is
 * begin + i * stride (`b - i * |s|` for a negative stride). A symbolic x (TOPI's
 * dynamic path, which does not clamp) keeps the op. */
#include <string.h>

#include "transforms/legalize/legalize.h"

tj_status_t *tj_legalize_take(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  if (call->call.n_args != 2) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  const tj_sinfo_t *is = tj_lg_arg_sinfo(a, call->call.args[1]);
  const tj_sinfo_t *os = call->sinfo;
  if (!tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os) || os->tensor.ndim > TJ_LG_MAX_ITERS || !is) return NULL;
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  int axis = 0;
  if (av && av->kind == TJ_ATTR_INT && !tj_lg_axis(av->i, xs->tensor.ndim, &axis)) return NULL;
  bool prim = is->kind == TJ_SINFO_PRIM;
  if (!prim && !tj_lg_tensor_known(is)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *ind = NULL;
  const tj_tir_expr_t *scalar = NULL;
  if (prim) {
    const tj_rx_expr_t *arg = call->call.args[1];
    /* call_te inlines an R.prim_value's expression (`n - 1`, n bound by x's shape) rather
     * than passing it as a parameter */
    if (arg->kind == TJ_RX_PRIM_VALUE)
      scalar = tj_lg_cast(a, TJ_I64, tj_lg_shape_expr(&te, arg->prim_value.value));
    else if (is->prim.value && is->prim.value->kind == TJ_TIR_INT_IMM)
      scalar = tj_lg_cast(a, TJ_I64, is->prim.value);
    else
      scalar = tj_lg_prim_param(&te, arg);
  } else {
    ind = tj_lg_placeholder(&te, call->call.args[1]);
  }
  if (te.failed || !x) return tj_lg_te_finish(&te, "take", NULL, out_expr);
  int no = os->tensor.ndim, ni = prim ? 0 : ind->ndim;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < no; i++) oshape[i] = tj_lg_shape_expr(&te, os->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_take", x->dtype, no, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_take", no, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "take", NULL, out_expr);
  const tj_tir_expr_t *sel = scalar;
  if (!prim) {
    const tj_tir_expr_t *l = tj_lg_load(a, ind, ni, st.iv + axis);
    sel = l && !tj_dtype_eq(l->dtype, TJ_I64) ? tj_tir_cast(a, TJ_I64, l) : l;
  }
  for (int i = 0; i < axis; i++) idx[i] = st.iv[i];
  idx[axis] = sel;
  for (int i = axis + 1; i < x->ndim; i++) idx[i] = st.iv[i - 1 + ni];
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, no, st.iv, tj_lg_load(a, x, x->ndim, idx)));
  return tj_lg_te_finish(&te, "take", os, out_expr);
}

tj_status_t *tj_legalize_strided_slice(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  if (call->call.n_args < 4) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  int n = xs->tensor.ndim;
  int64_t axes[TJ_LG_MAX_ITERS], begin[TJ_LG_MAX_ITERS], end[TJ_LG_MAX_ITERS], strides[TJ_LG_MAX_ITERS];
  int na = tj_rx_const_int_values(call->call.args[1], axes, TJ_LG_MAX_ITERS);
  if (na < 0 || tj_rx_const_int_values(call->call.args[2], begin, TJ_LG_MAX_ITERS) != na ||
      tj_rx_const_int_values(call->call.args[3], end, TJ_LG_MAX_ITERS) != na)
    return NULL;
  if (call->call.n_args > 4) {
    if (tj_rx_const_int_values(call->call.args[4], strides, TJ_LG_MAX_ITERS) != na) return NULL;
  } else {
    for (int i = 0; i < na; i++) strides[i] = 1;
  }
  /* per dim: start and step of the read index, output extent. Dims not sliced keep
   * their (maybe symbolic) extent. A sliced dim of static extent clamps as TOPI's
   * static path; one of symbolic extent takes TOPI's dynamic path, which trusts the
   * bounds (only non-negative bounds and positive steps, as the corpus prints them). */
  int64_t start[TJ_LG_MAX_ITERS], step[TJ_LG_MAX_ITERS];
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  bool dynamic = false;
  for (int d = 0; d < n; d++) start[d] = 0, step[d] = 1, oshape[d] = xs->tensor.shape[d];
  for (int i = 0; i < na; i++) {
    int ax;
    if (!tj_lg_axis(axes[i], n, &ax) || strides[i] == 0) return NULL;
    int64_t e, b = begin[i], en = end[i], s = strides[i], len;
    if (!tj_tir_is_const_int(xs->tensor.shape[ax], &e)) {
      if (b < 0 || en < 0 || s < 0) return NULL;
      dynamic = true;
      len = en > b ? (en - b + s - 1) / s : 0;
    } else if (s > 0) {
      if (b < 0) b += e;
      if (en < 0) en += e;
      b = b < 0 ? 0 : b > e ? e : b;
      en = en < 0 ? 0 : en > e ? e : en;
      len = en > b ? (en - b + s - 1) / s : 0;
    } else {
      if (b < 0) b += e;
      if (en < 0) en += e;
      b = b < -1 ? -1 : b > e - 1 ? e - 1 : b;
      en = en < -1 ? -1 : en > e - 1 ? e - 1 : en;
      len = b > en ? (b - en - s - 1) / (-s) : 0;
    }
    start[ax] = b;
    step[ax] = s;
    oshape[ax] = tj_tir_i64(a, len);
  }
  const char *block = dynamic ? "T_dynamic_strided_slice_with_axes" : "T_strided_slice_with_axes";
  const tj_sinfo_t *os = tj_sinfo_tensor(a, xs->tensor.dtype, n, oshape);
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "strided_slice", NULL, out_expr);
  const tj_tir_expr_t *pshape[TJ_LG_MAX_ITERS]; /* oshape in the PrimFunc's own vars */
  for (int d = 0; d < n; d++) pshape[d] = tj_lg_shape_expr(&te, oshape[d]);
  const tj_buffer_t *out = tj_lg_output(&te, block, x->dtype, n, pshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, block, n, pshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "strided_slice", NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0; d < n; d++) {
    const tj_tir_expr_t *v = st.iv[d];
    if (step[d] > 0) {
      idx[d] = tj_lg_add(a, tj_lg_mul(a, v, tj_tir_i64(a, step[d])), tj_tir_i64(a, start[d]));
    } else {
      idx[d] = tj_lg_sub(a, tj_tir_i64(a, start[d]), tj_lg_mul(a, v, tj_tir_i64(a, -step[d])));
    }
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, tj_lg_load(a, x, n, idx)));
  return tj_lg_te_finish(&te, "strided_slice", os, out_expr);
}
