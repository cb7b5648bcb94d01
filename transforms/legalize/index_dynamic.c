/* R.dynamic_strided_slice (TVM's legalize_ops/index.py): the output shape depends on
 * the values of begin, end and strides, so the legalization emits three bindings before
 * the slice itself:
 *
 *   gv = R.call_tir(shape_func, (x, begin, end, strides), R.Tensor((ndim,), "int64"))
 *   gv1: R.Shape(ndim=n) = R.call_pure_packed("vm.builtin.tensor_to_shape", gv, ...)
 *   gv2: R.Shape([s, s_1, ...]) = R.match_cast(gv1, R.Shape([s, s_1, ...]))
 *   R.call_tir(dynamic_strided_slice, (x, begin, end, strides), R.Tensor((s, s_1, ...)))
 *
 * shape_func (block T_shape_func_strided_slice_dynamic) computes each axis's length
 * with numpy's clamping: a negative index gets + extent, then it is clamped to
 * [0, extent] (stride > 0) or [-1, extent - 1] (stride < 0), and the length is
 * ceildiv(end - begin, stride). The expressions are written in the form TVM's
 * create_prim_func leaves after its simplifier (`b - e - s - 1` for
 * `ceildiv(b - e, -s)`). The slice (topi's relax::dynamic_strided_slice, block
 * T_strided_slice_dynamic) reads x[min(begin[i], extent_i - 1) + ax_i * strides[i]]:
 * TOPI clamps begin only from above, so a negative begin is read as written. */
#include "transforms/legalize/legalize.h"
#include "transforms/tensor_to_shape.h"

static const tj_tir_expr_t *i64(tj_arena_t *a, int64_t v) { return tj_tir_i64(a, v); }

/* x's extent along axis v_i: Select(v_i == n-1, e_{n-1}, ... Select(v_i == 0, e_0, -1)). */
static const tj_tir_expr_t *extent_of_axis(tj_arena_t *a, const tj_buffer_t *x, const tj_tir_expr_t *vi) {
  const tj_tir_expr_t *len = i64(a, -1);
  for (int d = 0; d < x->ndim && len; d++)
    len = tj_tir_select(a, tj_lg_bin(a, TJ_TIR_EQ, vi, i64(a, d)), x->shape[d], len);
  return len;
}

/* An index clamped for a negative (`neg`) or positive stride. */
static const tj_tir_expr_t *canonical_index(tj_arena_t *a, const tj_tir_expr_t *idx, const tj_tir_expr_t *extent,
                                            bool neg) {
  const tj_tir_expr_t *wrapped =
      tj_tir_select(a, tj_lg_bin(a, TJ_TIR_LT, idx, i64(a, 0)), tj_lg_bin(a, TJ_TIR_ADD, idx, extent), idx);
  const tj_tir_expr_t *lo = tj_lg_bin(a, TJ_TIR_MAX, wrapped, i64(a, neg ? -1 : 0));
  return tj_lg_bin(a, TJ_TIR_MIN, lo, neg ? tj_lg_bin(a, TJ_TIR_SUB, extent, i64(a, 1)) : extent);
}

/* The length of axis v_i of the result. */
static const tj_tir_expr_t *slice_length(tj_arena_t *a, const tj_buffer_t *x, const tj_buffer_t *begin,
                                         const tj_buffer_t *end, const tj_buffer_t *strides,
                                         const tj_tir_expr_t *vi) {
  const tj_tir_expr_t *e = extent_of_axis(a, x, vi);
  const tj_tir_expr_t *b = tj_lg_load(a, begin, 1, &vi), *en = tj_lg_load(a, end, 1, &vi);
  const tj_tir_expr_t *s = tj_lg_load(a, strides, 1, &vi);
  /* stride < 0: ceildiv(b - e, -s) = (b - e - s - 1) // (s * -1) */
  const tj_tir_expr_t *neg = tj_lg_bin(a, TJ_TIR_SUB, canonical_index(a, b, e, true), canonical_index(a, en, e, true));
  neg = tj_lg_bin(a, TJ_TIR_SUB, tj_lg_bin(a, TJ_TIR_SUB, neg, s), i64(a, 1));
  neg = tj_lg_bin(a, TJ_TIR_FLOOR_DIV, neg, tj_lg_bin(a, TJ_TIR_MUL, s, i64(a, -1)));
  /* stride > 0: ceildiv(e - b, s) = (e + s - b - 1) // s */
  const tj_tir_expr_t *pos = tj_lg_bin(a, TJ_TIR_ADD, canonical_index(a, en, e, false), s);
  pos = tj_lg_bin(a, TJ_TIR_SUB, tj_lg_bin(a, TJ_TIR_SUB, pos, canonical_index(a, b, e, false)), i64(a, 1));
  pos = tj_lg_bin(a, TJ_TIR_FLOOR_DIV, pos, s);
  return tj_tir_select(a, tj_lg_bin(a, TJ_TIR_LT, s, i64(a, 0)), neg, pos);
}

/* The four placeholders in TVM's order; false when one cannot be made. */
static bool placeholders(tj_lg_te_t *te, const tj_rx_expr_t *call, const tj_buffer_t **out) {
  for (int i = 0; i < 4; i++)
    if (!(out[i] = tj_lg_placeholder(te, call->call.args[i]))) return false;
  return true;
}

/* gv = R.call_tir(shape_func, ...): the result's shape as an int64 tensor. */
static tj_status_t *shape_func_call(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, int ndim,
                                    const tj_rx_expr_t **out_call) {
  tj_arena_t *a = ctx->arena;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *p[4];
  if (!placeholders(&te, call, p)) return tj_lg_te_finish(&te, "shape_func", NULL, out_call);
  const tj_tir_expr_t *n = i64(a, ndim);
  const char *name = "T_shape_func_strided_slice_dynamic";
  const tj_buffer_t *out = tj_lg_output(&te, name, TJ_I64, 1, &n);
  tj_lg_stage_t st;
  tj_iter_kind_t kind = TJ_ITER_SPATIAL;
  const char *loop = "i";
  tj_lg_stage_begin(&te, &st, name, 1, &n, &kind, &loop);
  if (te.failed || !out) return tj_lg_te_finish(&te, "shape_func", NULL, out_call);
  const tj_tir_expr_t *len = slice_length(a, p[0], p[1], p[2], p[3], st.iv[0]);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, 1, st.iv, len));
  return tj_lg_te_finish(&te, "shape_func", tj_sinfo_tensor(a, TJ_I64, 1, &n), out_call);
}

/* R.call_tir(dynamic_strided_slice, ...) with the output shape `shape` (Relax vars). */
static tj_status_t *slice_call(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, int ndim,
                               const tj_tir_expr_t *const *shape, const tj_rx_expr_t **out_call) {
  tj_arena_t *a = ctx->arena;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *p[4];
  if (!placeholders(&te, call, p)) return tj_lg_te_finish(&te, "dynamic_strided_slice", NULL, out_call);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int d = 0; d < ndim; d++) oshape[d] = tj_lg_shape_expr(&te, shape[d]);
  const char *name = "T_strided_slice_dynamic";
  const tj_buffer_t *out = tj_lg_output(&te, name, p[0]->dtype, ndim, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, name, ndim, oshape, "ax");
  if (te.failed || !out) return tj_lg_te_finish(&te, "dynamic_strided_slice", NULL, out_call);
  for (int d = 0; d < ndim; d++) {
    const tj_tir_expr_t *k = i64(a, d);
    const tj_tir_expr_t *start = tj_lg_bin(a, TJ_TIR_MIN, tj_lg_load(a, p[1], 1, &k), tj_lg_sub(a, p[0]->shape[d], i64(a, 1)));
    idx[d] = tj_lg_bin(a, TJ_TIR_ADD, start, tj_lg_bin(a, TJ_TIR_MUL, st.iv[d], tj_lg_load(a, p[3], 1, &k)));
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, ndim, st.iv, tj_lg_load(a, p[0], ndim, idx)));
  const tj_sinfo_t *os = tj_sinfo_tensor(a, p[0]->dtype, ndim, shape);
  return tj_lg_te_finish(&te, "dynamic_strided_slice", os, out_call);
}

tj_status_t *tj_legalize_dynamic_strided_slice(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                               const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  if (!ctx->builder || call->call.n_args != 4) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim < 1 || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  for (int i = 1; i < 4; i++)
    if (!tj_lg_tensor_known(tj_lg_arg_sinfo(a, call->call.args[i]))) return NULL;
  int ndim = xs->tensor.ndim;
  const tj_rx_expr_t *shape_call = NULL;
  TJ_RETURN_IF_ERROR(shape_func_call(ctx, call, ndim, &shape_call));
  if (!shape_call) return NULL;
  const tj_rx_expr_t *shape_tensor = tj_rx_emit_fresh(ctx->builder, shape_call);
  const tj_tir_expr_t *const *vars = NULL;
  if (!shape_tensor || !tj_emit_tensor_to_shape(ctx->builder, shape_tensor, tj_sinfo_shape(a, ndim, NULL), "s", &vars))
    return NULL; /* the builder holds the error */
  return slice_call(ctx, call, ndim, vars, out_expr);
}
