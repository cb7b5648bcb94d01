/* Binary ops (TVM's src/relax/op/tensor/binary.cc) with numpy broadcasting:
 * arithmetic, the six comparisons (result bool), minimum/maximum, logical_* and
 * bitwise_* (result in the operand dtype, as TVM). Operands are tensors (0-d and
 * constants included) or PrimValues (treated as 0-d); both must have the same dtype.
 * kFollow. One BINARY_OP line per op. */
#include "ir/op/common.h"

static tj_status_t *operand(const char *op, const tj_rx_expr_t *call, int i, const tj_sinfo_t **out) {
  const tj_sinfo_t *s = call->call.args[i]->sinfo;
  if (!s || (s->kind != TJ_SINFO_TENSOR && s->kind != TJ_SINFO_PRIM))
    return tj_op_error("%s: operand %d must be a tensor or a PrimValue", op, i + 1);
  *out = s;
  return NULL;
}

static tj_dtype_t operand_dtype(const tj_sinfo_t *s) {
  return s->kind == TJ_SINFO_TENSOR ? s->tensor.dtype : s->prim.dtype;
}

static int operand_ndim(const tj_sinfo_t *s) { return s->kind == TJ_SINFO_TENSOR ? s->tensor.ndim : 0; }

static const tj_tir_expr_t *const *operand_shape(const tj_sinfo_t *s) {
  static const tj_tir_expr_t *const scalar[1] = {NULL};
  return s->kind == TJ_SINFO_TENSOR ? s->tensor.shape : scalar;
}

static tj_status_t *infer_binary(const char *op, bool compare, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                 const tj_sinfo_t **out) {
  const tj_sinfo_t *a = NULL, *b = NULL;
  TJ_RETURN_IF_ERROR(operand(op, call, 0, &a));
  TJ_RETURN_IF_ERROR(operand(op, call, 1, &b));
  tj_dtype_t dtype;
  TJ_RETURN_IF_ERROR(tj_op_common_dtype(op, operand_dtype(a), operand_dtype(b), &dtype));
  if (compare) dtype = TJ_BOOL; /* InferStructInfoBroadcastCMP */
  if (a->kind == TJ_SINFO_PRIM && b->kind == TJ_SINFO_PRIM) {
    *out = tj_sinfo_prim(ctx->arena, dtype, NULL);
    return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  const char *vdev = tj_op_vdevice(a, b);
  int na = operand_ndim(a), nb = operand_ndim(b);
  if (na < 0 || nb < 0) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, -1, NULL, vdev), NULL;
  int n = na > nb ? na : nb;
  if (n > TJ_OP_MAX_NDIM) return tj_op_error("%s: more than %d dimensions", op, TJ_OP_MAX_NDIM);
  const tj_tir_expr_t *const *sa = operand_shape(a), *const *sb = operand_shape(b);
  if (!sa || !sb) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, n, NULL, vdev), NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  bool known;
  TJ_RETURN_IF_ERROR(tj_op_broadcast(op, ctx->arena, na, sa, nb, sb, shape, &known));
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, n, known ? shape : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

#define BINARY_OP(ident, compare, dtypes_text, notes_text)                                                  \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) { \
    return infer_binary(#ident, compare, ctx, call, out);                                                    \
  }                                                                                                          \
  const tj_op_def_t tj_op_##ident = {                                                                        \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 2, .max_args = 2,                     \
      .mp_policy = TJ_MP_FOLLOW, .infer = infer_##ident, .arg_names = binary_args,                           \
      .dtypes = dtypes_text, .notes = notes_text,                                                            \
  };

static const char *const binary_args[] = {"x1", "x2"};

#define INT_DIV_NOTE "integer x / 0 is 0 (no SIGFPE), INT_MIN / -1 wraps"

/*        op             compare dtypes            notes */
BINARY_OP(add,           false,  "any",            NULL)
BINARY_OP(subtract,      false,  "any",            NULL)
BINARY_OP(multiply,      false,  "any",            NULL)
BINARY_OP(divide,        false,  "any",            "integers truncate (C division); " INT_DIV_NOTE)
BINARY_OP(power,         false,  "float",          NULL)
BINARY_OP(maximum,       false,  "any",            "max(NaN, y) is y and max(x, NaN) is NaN, as TVM's select")
BINARY_OP(minimum,       false,  "any",            "as maximum for NaN")
BINARY_OP(floor_divide,  false,  "any",            "floats: floor(x / y); " INT_DIV_NOTE)
BINARY_OP(floor_mod,     false,  "any",            "sign of y (numpy mod); integer x mod 0 is 0")
BINARY_OP(mod,           false,  "any",            "sign of x (C fmod, truncmod); integer x mod 0 is 0")
BINARY_OP(equal,         true,   "any -> bool",    NULL)
BINARY_OP(not_equal,     true,   "any -> bool",    "ordered compare: NaN != x is false, as TVM")
BINARY_OP(less,          true,   "any -> bool",    NULL)
BINARY_OP(less_equal,    true,   "any -> bool",    NULL)
BINARY_OP(greater,       true,   "any -> bool",    NULL)
BINARY_OP(greater_equal, true,   "any -> bool",    NULL)
BINARY_OP(logical_and,   false,  "bool",           NULL)
BINARY_OP(logical_or,    false,  "bool",           NULL)
BINARY_OP(logical_xor,   false,  "bool, int",      "bitwise xor on integers, as TVM")
BINARY_OP(bitwise_and,   false,  "int, uint",      NULL)
BINARY_OP(bitwise_or,    false,  "int, uint",      NULL)
BINARY_OP(bitwise_xor,   false,  "int, uint",      NULL)
BINARY_OP(left_shift,    false,  "int, uint",      "a shift by a negative amount or >= the bit width gives 0 (numpy)")
BINARY_OP(right_shift,   false,  "int, uint",      "arithmetic for signed; a shift >= the bit width gives 0 or -1 (numpy)")
