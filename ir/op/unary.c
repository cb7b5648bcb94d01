/* Unary elementwise ops (TVM's src/relax/op/tensor/unary.cc): one tensor argument
 * `x`, no attrs, kFollow.
 *   UNARY_OP        the result is x's struct info (shape, ndim, vdevice and dtype). Ops
 *                   registered with `require_float_dtype` reject a known non-float dtype
 *                   (an unknown dtype passes, as in TVM's InferStructInfoUnaryArith).
 *   UNARY_CHECK_OP  isnan/isinf/isfinite: x's shape with dtype bool
 *                   (InferStructInfoUnaryCheck).
 * relax.clip is registered by hand in TVM (x plus PrimValue bounds, no policy: kNever)
 * and is defined at the end. One line per op. */
#include "ir/op/common.h"

static tj_status_t *infer_unary(const char *op, bool require_float, const tj_rx_expr_t *call,
                                const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  if (require_float && !tj_dtype_is_void(x->tensor.dtype) && !tj_dtype_is_floating(x->tensor.dtype)) {
    char b[TJ_DTYPE_BUFSIZE];
    return tj_op_error("%s: x must be a float tensor, got %s; insert R.astype(x, \"float32\") first", op,
                       tj_dtype_str(x->tensor.dtype, b));
  }
  *out = x;
  return NULL;
}

static tj_status_t *infer_check(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  *out = tj_op_tensor_sinfo(ctx->arena, TJ_BOOL, x->tensor.ndim, x->tensor.shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static const char *const unary_args[] = {"x"};

#define UNARY_DEF(ident, dtypes_text, notes_text)                                                         \
  const tj_op_def_t tj_op_##ident = {                                                                     \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 1, .max_args = 1,                  \
      .mp_policy = TJ_MP_FOLLOW, .infer = infer_##ident, .arg_names = unary_args, .dtypes = dtypes_text,  \
      .notes = notes_text,                                                                                 \
  };

#define UNARY_OP(ident, require_float, dtypes_text, notes_text)                                           \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                  \
                                    const tj_sinfo_t **out) {                                              \
    (void)ctx;                                                                                             \
    return infer_unary(#ident, require_float, call, out);                                                 \
  }                                                                                                        \
  UNARY_DEF(ident, dtypes_text, notes_text)

#define UNARY_CHECK_OP(ident)                                                                             \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                  \
                                    const tj_sinfo_t **out) {                                              \
    return infer_check(#ident, ctx, call, out);                                                           \
  }                                                                                                        \
  UNARY_DEF(ident, "any -> bool", NULL)

/*       op           float  dtypes      notes */
UNARY_OP(abs,         false, "any",     "abs(INT_MIN) wraps to INT_MIN")
UNARY_OP(negative,    false, "any",     NULL)
UNARY_OP(exp,         true,  "float",   NULL)
UNARY_OP(log,         true,  "float",   NULL)
UNARY_OP(sqrt,        true,  "float",   NULL)
UNARY_OP(rsqrt,       true,  "float",   "1 / sqrt(x), two roundings, as TVM")
UNARY_OP(square,      false, "any",     NULL)
UNARY_OP(sin,         true,  "float",   NULL)
UNARY_OP(cos,         true,  "float",   NULL)
UNARY_OP(tan,         true,  "float",   NULL)
UNARY_OP(asin,        true,  "float",   NULL)
UNARY_OP(acos,        true,  "float",   NULL)
UNARY_OP(atan,        true,  "float",   NULL)
UNARY_OP(sinh,        true,  "float",   NULL)
UNARY_OP(cosh,        true,  "float",   NULL)
UNARY_OP(tanh,        true,  "float",   NULL)
UNARY_OP(asinh,       true,  "float",   NULL)
UNARY_OP(acosh,       true,  "float",   NULL)
UNARY_OP(atanh,       true,  "float",   NULL)
UNARY_OP(sigmoid,     true,  "float",   NULL)
UNARY_OP(erf,         true,  "float",   "float16 is computed in float32, as TVM")
UNARY_OP(floor,       false, "any",     "the identity on integers")
UNARY_OP(ceil,        false, "any",     "the identity on integers")
UNARY_OP(round,       false, "any",     "halves away from zero (TVM's llvm.round), not numpy's halves to even")
UNARY_OP(trunc,       false, "any",     "the identity on integers; R.trunc is TVM after the corpus commit (#17924)")
UNARY_OP(sign,        false, "any",     "sign(NaN) is 0, as TVM")
UNARY_OP(logical_not, false, "bool",    "TVM's TIR accepts bool only")
UNARY_OP(bitwise_not, false, "int, uint", "TVM's TIR accepts integers only")
UNARY_CHECK_OP(isnan)
UNARY_CHECK_OP(isinf)
UNARY_CHECK_OP(isfinite)

/* relax.clip(x, min, max): min and max are PrimValues (TVM checks it when the op is
 * built; an int literal in the script is an int64 PrimValue); the result is exactly
 * x's struct info. */
static tj_status_t *infer_clip(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("clip", call, 0, "x", &x));
  static const char *const bound[] = {"min", "max"};
  for (int i = 1; i <= 2; i++) {
    const tj_sinfo_t *s = call->call.args[i]->sinfo;
    if (!s || s->kind != TJ_SINFO_PRIM)
      return tj_op_error("clip: %s must be a PrimValue (R.clip(x, 0, 6) or R.prim_value(...)), not a tensor",
                         bound[i - 1]);
  }
  *out = x;
  return NULL;
}

static const char *const clip_args[] = {"x", "min", "max"};

const tj_op_def_t tj_op_clip = {
    .name = "relax.clip", .script_name = "R.clip", .min_args = 3, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_clip, .arg_names = clip_args, .dtypes = "any",
    .notes = "R.clip(x, min, max) with PrimValue bounds; NaN clips to max, as TVM",
};
