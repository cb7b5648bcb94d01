/* Datatype ops: R.astype → topi.cast (`cast`), one block `compute` over loops
 * i0, i1, ... (docs/semantics.md §2.5); astype of a 0-d constant folds to a
 * constant, as TVM's legalization does. */
#include <string.h>

#include "transforms/legalize/legalize.h"

static const tj_tir_expr_t *cast_body(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t out_dtype) {
  return tj_lg_cast(a, out_dtype, x);
}

/* Stores `v` (a double or an int64) as one element of `dtype`, as numpy's astype. */
static bool store_scalar(tj_dtype_t dtype, double f, int64_t i, bool from_float, void *out) {
  if (dtype.code == TJ_DT_BFLOAT) { /* through float32, as a compiled cast (jit/codegen_bf16.c) */
    uint16_t b = tj_float_to_bfloat((float)(from_float ? f : (double)i));
    memcpy(out, &b, 2);
    return true;
  }
  if (dtype.code == TJ_DT_FLOAT) {
    double v = from_float ? f : (double)i;
    if (dtype.bits == 16) {
      uint16_t h = tj_float_to_half((float)v);
      memcpy(out, &h, 2);
    } else if (dtype.bits == 32) {
      float x = (float)v;
      memcpy(out, &x, 4);
    } else if (dtype.bits == 64) {
      memcpy(out, &v, 8);
    } else {
      return false;
    }
    return true;
  }
  int64_t v = from_float ? (int64_t)f : i; /* float → int truncates toward zero */
  if (dtype.code == TJ_DT_BOOL) v = from_float ? (f != 0) : (i != 0);
  size_t bytes = tj_dtype_bytes(dtype);
  if (bytes == 0 || bytes > 8) return false;
  /* little-endian: the low bytes carry the wrapped value */
  memcpy(out, &v, bytes);
  return true;
}

/* astype of a scalar constant folds to a constant (TVM's legalization does the same). */
static tj_status_t *fold_astype(tj_lg_ctx_t *ctx, const tj_rx_expr_t *arg, tj_dtype_t dtype,
                                const tj_rx_expr_t **out_expr) {
  const tj_tir_expr_t *v = tj_lg_scalar_const(ctx->arena, arg);
  unsigned char buf[8];
  bool is_f = v && v->kind == TJ_TIR_FLOAT_IMM;
  if (!v || !store_scalar(dtype, is_f ? v->float_imm : 0, is_f ? 0 : v->int_imm, is_f, buf)) return NULL;
  const tj_rx_expr_t *c = tj_rx_constant(ctx->arena, dtype, 0, NULL, buf, tj_dtype_bytes(dtype));
  const tj_sinfo_t *s = tj_sinfo_tensor_static(ctx->arena, dtype, 0, NULL);
  *out_expr = (c && s) ? tj_rx_with_sinfo(ctx->arena, c, s) : NULL;
  if (!*out_expr) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory folding astype");
  return NULL;
}

tj_status_t *tj_legalize_astype(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args < 1) return NULL;
  tj_dtype_t dtype = tj_lg_attr_dtype(call->call.attrs, "dtype");
  if (tj_dtype_is_void(dtype) && call->call.n_args > 1 && call->call.args[1]->kind == TJ_RX_DATA_TYPE_IMM)
    dtype = call->call.args[1]->dtype_imm;
  if (tj_dtype_is_void(dtype)) return NULL;
  const tj_rx_expr_t *arg = call->call.args[0];
  if (arg->kind == TJ_RX_CONSTANT && arg->constant.ndim == 0) return fold_astype(ctx, arg, dtype, out_expr);
  return tj_lg_unary(ctx, call, "cast", dtype, cast_body, out_expr);
}
