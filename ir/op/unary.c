/* Unary elementwise ops (TVM's src/relax/op/tensor/unary.cc): one tensor argument
 * `x`, no attrs, the result is x's struct info (shape, ndim, vdevice and dtype), kFollow.
 * Ops registered with `require_float_dtype` reject a known non-float dtype (an unknown
 * dtype passes, as in TVM's InferStructInfoUnaryArith). One UNARY_OP line per op. */
#include "ir/op/common.h"

static tj_status_t *infer_unary(const char *op, bool require_float, const tj_rx_expr_t *call,
                                const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  if (require_float && !tj_dtype_is_void(x->tensor.dtype) && !tj_dtype_is_float(x->tensor.dtype)) {
    char b[TJ_DTYPE_BUFSIZE];
    return tj_op_error("%s: x must be a float tensor, got %s; insert R.astype(x, \"float32\") first", op,
                       tj_dtype_str(x->tensor.dtype, b));
  }
  *out = x;
  return NULL;
}

static const char *const unary_args[] = {"x"};

#define UNARY_OP(ident, require_float)                                                                    \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                  \
                                    const tj_sinfo_t **out) {                                              \
    return infer_unary(#ident, require_float, call, out);                                                 \
  }                                                                                                        \
  const tj_op_def_t tj_op_##ident = {                                                                     \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 1, .max_args = 1,                  \
      .mp_policy = TJ_MP_FOLLOW, .infer = infer_##ident, .arg_names = unary_args,                         \
  };

/*       op    require_float */
UNARY_OP(exp,  true)
UNARY_OP(sqrt, true)
