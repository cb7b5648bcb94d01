/* Quantization (TVM's src/relax/op/tensor/qdq.cc): relax.quantize and
 * relax.dequantize. Arguments: data, scale, zero_point; attrs axis (default -1)
 * and out_dtype. scale and zero_point are 0-d (per tensor) or 1-d with one value per
 * entry of data's `axis` (per axis). kNever. */
#include "ir/op/common.h"

static const char *const qdq_attrs[] = {"axis", "out_dtype", NULL};
static const char *const qdq_args[] = {"data", "scale", "zero_point"};

static tj_status_t *normalize_qdq(const char *op, const char *dflt_dtype, tj_arena_t *arena, const tj_attrs_t *given,
                                  const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, qdq_attrs));
  int64_t axis;
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "axis", -1, &axis));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype(op, given, "out_dtype", &dt));
  if (tj_dtype_is_void(dt)) tj_dtype_parse(dflt_dtype, &dt);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(dt));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *normalize_quantize(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_qdq("quantize", "int8", arena, given, out);
}

static tj_status_t *normalize_dequantize(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_qdq("dequantize", "float32", arena, given, out);
}

/* scale / zero_point: 0-d, or 1-d with as many values as data has at `axis`. */
static tj_status_t *check_param(const char *op, const tj_sinfo_t *x, int axis, const tj_sinfo_t *p, const char *what) {
  if (p->tensor.ndim > 1) return tj_op_error("%s: %s must be 0-d or 1-d, got %d-D", op, what, p->tensor.ndim);
  if (p->tensor.ndim == 1 && p->tensor.shape && x->tensor.shape && axis >= 0) {
    int64_t n;
    bool single = tj_tir_is_const_int(p->tensor.shape[0], &n) && n == 1;
    if (!single && tj_op_compare_dims(p->tensor.shape[0], x->tensor.shape[axis]) == TJ_DIM_DIFFERENT)
      return tj_op_error("%s: %s must have one value per entry of data's axis %d", op, what, axis);
  }
  return NULL;
}

static tj_status_t *infer_qdq(const char *op, bool quantize, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                              const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL, *s = NULL, *z = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 1, "scale", &s));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 2, "zero_point", &z));
  tj_dtype_t out_dt = tj_op_attr_dtype(call->call.attrs, "out_dtype");
  char b0[TJ_DTYPE_BUFSIZE];
  tj_dtype_t in_dt = x->tensor.dtype;
  if (quantize && !tj_dtype_is_void(in_dt) && !tj_dtype_is_float(in_dt))
    return tj_op_error("quantize: data must be float16 or float32, got %s", tj_dtype_str(in_dt, b0));
  if (!quantize && !tj_dtype_is_void(in_dt) && !tj_dtype_is_int(in_dt))
    return tj_op_error("dequantize: data must be an integer tensor (int8, uint8, ...), got %s",
                       tj_dtype_str(in_dt, b0));
  if (quantize ? !tj_dtype_is_int(out_dt) : !tj_dtype_is_float(out_dt))
    return tj_op_error("%s: out_dtype %s is not supported; use %s", op, tj_dtype_str(out_dt, b0),
                       quantize ? "int8 or uint8" : "float16 or float32");
  if (!tj_dtype_is_void(s->tensor.dtype) && !tj_dtype_is_float(s->tensor.dtype))
    return tj_op_error("%s: scale must be a float tensor, got %s", op, tj_dtype_str(s->tensor.dtype, b0));
  if (!tj_dtype_is_void(z->tensor.dtype) && !tj_dtype_is_int(z->tensor.dtype))
    return tj_op_error("%s: zero_point must be an integer tensor, got %s", op, tj_dtype_str(z->tensor.dtype, b0));
  int axis = -1;
  if (x->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(tj_op_axis(op, tj_attrs_get_int(call->call.attrs, "axis", -1), x->tensor.ndim, &axis));
  TJ_RETURN_IF_ERROR(check_param(op, x, axis, s, "scale"));
  TJ_RETURN_IF_ERROR(check_param(op, x, axis, z, "zero_point"));
  *out = tj_op_tensor_sinfo(ctx->arena, out_dt, x->tensor.ndim, x->tensor.shape, x->tensor.vdevice);
  return NULL;
}

static tj_status_t *infer_quantize(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return infer_qdq("quantize", true, ctx, call, out);
}

static tj_status_t *infer_dequantize(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return infer_qdq("dequantize", false, ctx, call, out);
}

const tj_op_def_t tj_op_quantize = {
    .name = "relax.quantize",
    .script_name = "R.quantize",
    .min_args = 3,
    .max_args = 3,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_quantize,
    .infer = infer_quantize,
    .arg_names = qdq_args,
    .positional_attrs = qdq_attrs,
};

const tj_op_def_t tj_op_dequantize = {
    .name = "relax.dequantize",
    .script_name = "R.dequantize",
    .min_args = 3,
    .max_args = 3,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_dequantize,
    .infer = infer_dequantize,
    .arg_names = qdq_args,
    .positional_attrs = qdq_attrs,
};
