/* Unary elementwise ops (TVM's legalize_ops/unary.py): R.<op> →
 * `_call_topi_without_attr(topi.<op>, "tir_<op>")`, i.e. the PrimFunc `tir_<op>(x,
 * compute)` with one block `compute` over loops i0, i1, ... storing the TIR intrinsic
 * of x[i] in x's own dtype (float16 data is computed in float16, as topi does).
 * One UNARY_INTRINSIC line per op. */
#include "transforms/legalize/legalize.h"

static tj_status_t *legalize_intrinsic(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint,
                                       tj_lg_unary_body_fn body, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  return tj_lg_unary(ctx, call, name_hint, xs->tensor.dtype, body, out_expr);
}

#define UNARY_INTRINSIC(ident, intrinsic)                                                                 \
  static const tj_tir_expr_t *body_##ident(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t out_dtype) { \
    return tj_lg_call1(a, intrinsic, x);                                                                  \
  }                                                                                                        \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    return legalize_intrinsic(ctx, call, "tir_" #ident, body_##ident, out_expr);                           \
  }

/*              op   TIR intrinsic */
UNARY_INTRINSIC(exp, "tir.exp")
UNARY_INTRINSIC(sqrt, "tir.sqrt")
