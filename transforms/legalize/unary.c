/* Unary elementwise ops (TVM's legalize_ops/unary.py): R.<op> →
 * `_call_topi_without_attr(topi.<op>, "tir_<op>")`, i.e. the PrimFunc `tir_<op>(x,
 * compute)` storing body(x[i]) in x's own dtype (float16 data is computed in float16,
 * as topi does). The Python computes of topi/math.py are one block `compute` over loops
 * i0, i1, ...; the C++ ones (sign, logical_not, bitwise_not, and square's `x * x`,
 * which is topi.multiply) are `T_<op>` over ax0, ax1, ... .
 * One line per op: UNARY_INTRINSIC (a TIR intrinsic of a float), UNARY_BODY (a body
 * written here, `compute` block), UNARY_TOPI_CPP (a body written here, `T_<op>` block). */
#include <math.h>

#include "transforms/legalize/legalize.h"

static tj_status_t *legalize_elemwise(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint,
                                      const char *block, const char *prefix, bool to_bool, tj_lg_unary_body_fn body,
                                      const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  tj_dtype_t out_dtype = to_bool ? TJ_BOOL : xs->tensor.dtype;
  return tj_lg_elemwise(ctx, call, name_hint, block, prefix, out_dtype, body, out_expr);
}

/* ---------------- bodies (TVM's tir/op/op.cc and topi) ---------------- */

static bool is_float(const tj_tir_expr_t *x) { return x && tj_dtype_is_floating(x->dtype); }

/* tvm::neg: 0 - x. */
static const tj_tir_expr_t *neg(tj_arena_t *a, const tj_tir_expr_t *x) {
  return x ? tj_tir_binary(a, TJ_TIR_SUB, tj_lg_zero(a, x->dtype), x) : NULL;
}

/* tvm::abs: fabs for floats, Select(x >= 0, x, -x) for signed ints, x otherwise. */
static const tj_tir_expr_t *body_abs(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  if (is_float(x)) return tj_lg_call1(a, "tir.fabs", x);
  if (!x || x->dtype.code != TJ_DT_INT) return x;
  return tj_tir_select(a, tj_tir_binary(a, TJ_TIR_GE, x, tj_lg_zero(a, x->dtype)), x, neg(a, x));
}

static const tj_tir_expr_t *body_negative(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return neg(a, x);
}

static const tj_tir_expr_t *body_square(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return tj_lg_bin(a, TJ_TIR_MUL, x, x);
}

/* tvm::floor/ceil/round/trunc are the identity on integers (the body is a copy). */
#define ROUNDING_BODY(ident)                                                                          \
  static const tj_tir_expr_t *body_##ident(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {     \
    (void)d;                                                                                          \
    return is_float(x) ? tj_lg_call1(a, "tir." #ident, x) : x;                                        \
  }
ROUNDING_BODY(floor)
ROUNDING_BODY(ceil)
ROUNDING_BODY(round)
ROUNDING_BODY(trunc)

/* topi::sign: Select(x > 0, 1, Select(x < 0, -1, 0)); NaN gives 0. */
static const tj_tir_expr_t *body_sign(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  const tj_tir_expr_t *zero = tj_lg_zero(a, d);
  const tj_tir_expr_t *s1 = tj_tir_select(a, tj_tir_binary(a, TJ_TIR_LT, x, zero), tj_lg_const(a, d, -1), zero);
  return tj_tir_select(a, tj_tir_binary(a, TJ_TIR_GT, x, zero), tj_lg_const(a, d, 1), s1);
}

static const tj_tir_expr_t *body_logical_not(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return tj_tir_not(a, x);
}

static const tj_tir_expr_t *body_bitwise_not(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return tj_lg_call1(a, "tir.bitwise_not", x);
}

/* tvm::isnan: false for integers; float16 is tested in float32. */
static const tj_tir_expr_t *isnan_of(tj_arena_t *a, const tj_tir_expr_t *x) {
  if (!is_float(x)) return tj_tir_bool(a, false);
  const tj_tir_expr_t *arg = x->dtype.bits == 16 ? tj_tir_cast(a, TJ_F32, x) : x;
  return arg ? tj_tir_call(a, TJ_BOOL, "tir.isnan", 1, &arg) : NULL;
}

/* tvm::isinf: |x| == inf && !isnan(x); false for integers. */
static const tj_tir_expr_t *isinf_of(tj_arena_t *a, const tj_tir_expr_t *x) {
  if (!is_float(x)) return tj_tir_bool(a, false);
  const tj_tir_expr_t *inf = tj_tir_float(a, x->dtype, INFINITY);
  const tj_tir_expr_t *eq = tj_tir_binary(a, TJ_TIR_EQ, tj_lg_call1(a, "tir.fabs", x), inf);
  return tj_tir_binary(a, TJ_TIR_AND, eq, tj_tir_not(a, isnan_of(a, x)));
}

static const tj_tir_expr_t *body_isnan(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return isnan_of(a, x);
}

static const tj_tir_expr_t *body_isinf(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  return isinf_of(a, x);
}

/* tvm::isfinite: !isinf(x) && !isnan(x), folded to true for integers. */
static const tj_tir_expr_t *body_isfinite(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  (void)d;
  if (!is_float(x)) return tj_tir_bool(a, true);
  return tj_tir_binary(a, TJ_TIR_AND, tj_tir_not(a, isinf_of(a, x)), tj_tir_not(a, isnan_of(a, x)));
}

/* ---------------- the legalizers ---------------- */

#define UNARY_INTRINSIC(ident, intrinsic)                                                                 \
  static const tj_tir_expr_t *body_##ident(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t out_dtype) { \
    (void)out_dtype;                                                                                       \
    return tj_lg_call1(a, intrinsic, x);                                                                  \
  }                                                                                                        \
  UNARY_BODY(ident, false)

#define UNARY_BODY(ident, to_bool)                                                                        \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    return legalize_elemwise(ctx, call, "tir_" #ident, "compute", "i", to_bool, body_##ident, out_expr);   \
  }

#define UNARY_TOPI_CPP(ident, block)                                                                      \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    return legalize_elemwise(ctx, call, "tir_" #ident, block, "ax", false, body_##ident, out_expr);        \
  }

/*              op       TIR intrinsic */
UNARY_INTRINSIC(exp,     "tir.exp")
UNARY_INTRINSIC(log,     "tir.log")
UNARY_INTRINSIC(sqrt,    "tir.sqrt")
UNARY_INTRINSIC(rsqrt,   "tir.rsqrt")
UNARY_INTRINSIC(sin,     "tir.sin")
UNARY_INTRINSIC(cos,     "tir.cos")
UNARY_INTRINSIC(tan,     "tir.tan")
UNARY_INTRINSIC(asin,    "tir.asin")
UNARY_INTRINSIC(acos,    "tir.acos")
UNARY_INTRINSIC(atan,    "tir.atan")
UNARY_INTRINSIC(sinh,    "tir.sinh")
UNARY_INTRINSIC(cosh,    "tir.cosh")
UNARY_INTRINSIC(tanh,    "tir.tanh")
UNARY_INTRINSIC(asinh,   "tir.asinh")
UNARY_INTRINSIC(acosh,   "tir.acosh")
UNARY_INTRINSIC(atanh,   "tir.atanh")
UNARY_INTRINSIC(sigmoid, "tir.sigmoid")

/*         op        result is bool */
UNARY_BODY(abs,      false)
UNARY_BODY(negative, false)
UNARY_BODY(floor,    false)
UNARY_BODY(ceil,     false)
UNARY_BODY(round,    false)
UNARY_BODY(trunc,    false)
UNARY_BODY(isnan,    true)
UNARY_BODY(isinf,    true)
UNARY_BODY(isfinite, true)

/*             op      block */
UNARY_TOPI_CPP(square, "T_multiply")
UNARY_TOPI_CPP(sign,   "T_sign")

/* Ops whose TIR TVM cannot build for every dtype: TVM fails inside LegalizeOps (an
 * ICHECK in tir/op.cc); tvmjit says which dtype the op needs instead. */
static tj_status_t *check_dtype(const tj_rx_expr_t *call, const char *op, bool want_bool, const char *fix) {
  const tj_sinfo_t *xs = call->call.n_args == 1 ? call->call.args[0]->sinfo : NULL;
  if (!xs || xs->kind != TJ_SINFO_TENSOR || tj_dtype_is_void(xs->tensor.dtype)) return NULL;
  tj_dtype_t d = xs->tensor.dtype;
  bool ok = want_bool ? d.code == TJ_DT_BOOL : (d.code == TJ_DT_INT || d.code == TJ_DT_UINT);
  if (ok) return NULL;
  char b[TJ_DTYPE_BUFSIZE];
  return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "LegalizeOps: R.%s needs %s, got %s; %s", op,
                       want_bool ? "a bool tensor" : "an integer tensor", tj_dtype_str(d, b), fix);
}

tj_status_t *tj_legalize_logical_not(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  TJ_RETURN_IF_ERROR(check_dtype(call, "logical_not", true, "compare first, e.g. R.equal(x, zero)"));
  return legalize_elemwise(ctx, call, "tir_logical_not", "T_logical_not", "ax", false, body_logical_not, out_expr);
}

tj_status_t *tj_legalize_bitwise_not(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  TJ_RETURN_IF_ERROR(check_dtype(call, "bitwise_not", false, "use R.logical_not for bool tensors"));
  return legalize_elemwise(ctx, call, "tir_bitwise_not", "T_bitwise_not", "ax", false, body_bitwise_not, out_expr);
}

/* erf: the PrimFunc is `erf` (TVM's te_erf); float16 is computed in float32, as TVM
 * does, here in one block (TVM's three casting stages fuse to the same kernel). */
static const tj_tir_expr_t *body_erf(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t d) {
  if (!x || x->dtype.bits != 16) return tj_lg_call1(a, "tir.erf", x);
  return tj_tir_cast(a, d, tj_lg_call1(a, "tir.erf", tj_tir_cast(a, TJ_F32, x)));
}

tj_status_t *tj_legalize_erf(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_elemwise(ctx, call, "erf", "compute", "i", false, body_erf, out_expr);
}

/* A clip bound: the PrimValue's known value, else a scalar parameter of the PrimFunc. */
static const tj_tir_expr_t *clip_bound(tj_lg_te_t *te, const tj_rx_expr_t *arg) {
  const tj_sinfo_t *s = tj_lg_arg_sinfo(te->arena, arg);
  if (arg->kind == TJ_RX_PRIM_VALUE && s && s->kind == TJ_SINFO_PRIM && s->prim.value) return s->prim.value;
  return tj_lg_prim_param(te, arg);
}

/* topi.clip: max(min(x, Cast(dtype, max)), Cast(dtype, min)) in one `compute` block;
 * the casts are nodes (tir.Cast does not fold), so a float bound on an int tensor is
 * truncated at run time, as in TVM. */
tj_status_t *tj_legalize_clip(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 3) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  tj_dtype_t d = xs->tensor.dtype;
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, xs);
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_tir_expr_t *lo = clip_bound(&te, call->call.args[1]);
  const tj_tir_expr_t *hi = clip_bound(&te, call->call.args[2]);
  if (!x || !lo || !hi) return tj_lg_te_finish(&te, "tir_clip", NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) shape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "compute", d, n, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "compute", n, shape, "i");
  const tj_tir_expr_t *v = tj_lg_load(a, x, n, st.iv);
  v = tj_tir_binary(a, TJ_TIR_MIN, v, tj_tir_cast(a, d, hi));
  v = tj_tir_binary(a, TJ_TIR_MAX, v, tj_tir_cast(a, d, lo));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, v));
  return tj_lg_te_finish(&te, "tir_clip", out_sinfo, out_expr);
}
