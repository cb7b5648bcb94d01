/* Neural-network ops (TVM's src/relax/op/nn/nn.cc): relax.nn.relu,
 * relax.nn.layer_norm, relax.nn.softmax. */
#include <string.h>

#include "ir/op/common.h"

/* The data argument of a normalisation or float-only op: a tensor whose dtype, when known,
 * is floating point. */
static tj_status_t *float_data_arg(const char *op, const tj_rx_expr_t *call, const tj_sinfo_t **x) {
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", x));
  if (!tj_dtype_is_void((*x)->tensor.dtype) && !tj_dtype_is_floating((*x)->tensor.dtype)) {
    char b[TJ_DTYPE_BUFSIZE];
    return tj_op_error("%s: data must be a float tensor, got %s", op, tj_dtype_str((*x)->tensor.dtype, b));
  }
  return NULL;
}

/* The "axes" attribute of layer_norm and rms_norm, each normalised against ndim and
 * distinct. */
static tj_status_t *read_norm_axes(const char *op, const tj_rx_expr_t *call, int ndim, int *axes, int *n_axes) {
  int64_t raw[TJ_OP_MAX_NDIM];
  *n_axes = tj_op_attr_ints(call->call.attrs, "axes", raw, TJ_OP_MAX_NDIM);
  for (int i = 0; i < *n_axes; i++) {
    TJ_RETURN_IF_ERROR(tj_op_axis(op, raw[i], ndim, &axes[i]));
    for (int j = 0; j < i; j++)
      if (axes[j] == axes[i]) return tj_op_error("%s: axis %d appears twice in axes", op, axes[i]);
  }
  return NULL;
}

/* ---------------- relu ---------------- */

static tj_status_t *infer_relu(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return tj_op_tensor_arg("relu", call, 0, "the input", out);
}

static const char *const unary_args[] = {"data"};

const tj_op_def_t tj_op_relu = {
    .name = "relax.nn.relu", .script_name = "R.nn.relu", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_relu, .arg_names = unary_args,
};

/* ---------------- layer_norm ---------------- */

/* Canonical attrs: axes [int32 ...], epsilon FLOAT (float64), center/scale bool. */
static const char *const layer_norm_attrs[] = {"axes", "epsilon", "center", "scale", NULL};

static tj_status_t *normalize_layer_norm(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("layer_norm", given, layer_norm_attrs));
  int64_t axes[TJ_OP_MAX_NDIM];
  int n_axes;
  double eps;
  bool center, scale;
  if (!tj_attrs_get(given, "axes")) return tj_op_error("layer_norm: needs 'axes', e.g. axes=[-1]");
  TJ_RETURN_IF_ERROR(tj_op_read_ints("layer_norm", given, "axes", TJ_OP_MAX_NDIM, axes, &n_axes));
  TJ_RETURN_IF_ERROR(tj_op_read_float("layer_norm", given, "epsilon", 1e-5, &eps));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("layer_norm", given, "center", true, &center));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("layer_norm", given, "scale", true, &scale));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axes", tj_op_int_list(arena, n_axes, axes, TJ_I32));
  tj_attr_value_t e = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = eps};
  tj_attr_builder_add(&b, "epsilon", e);
  tj_attr_builder_add(&b, "center", tj_attr_bool(center));
  tj_attr_builder_add(&b, "scale", tj_attr_bool(scale));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *check_norm_param(const char *op, const tj_sinfo_t *x, const tj_sinfo_t *p, const char *what,
                                     int n_axes, const int *axes) {
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  if (!tj_dtype_is_void(x->tensor.dtype) && !tj_dtype_is_void(p->tensor.dtype) &&
      !tj_dtype_eq(x->tensor.dtype, p->tensor.dtype))
    return tj_op_error("%s: %s is %s but data is %s; they must have the same dtype", op, what,
                       tj_dtype_str(p->tensor.dtype, b0), tj_dtype_str(x->tensor.dtype, b1));
  if (p->tensor.ndim >= 0 && p->tensor.ndim != n_axes)
    return tj_op_error("%s: %s must have one dimension per normalised axis (%d), got %d", op, what, n_axes,
                       p->tensor.ndim);
  if (!p->tensor.shape || !x->tensor.shape) return NULL;
  for (int i = 0; i < n_axes; i++)
    if (tj_op_compare_dims(p->tensor.shape[i], x->tensor.shape[axes[i]]) == TJ_DIM_DIFFERENT) {
      tj_strbuf_t sb;
      tj_strbuf_init(&sb);
      tj_strbuf_printf(&sb, "%s: %s has shape ", op, what);
      tj_op_format_shape(&sb, p->tensor.ndim, p->tensor.shape);
      tj_strbuf_append(&sb, " but data (");
      tj_op_format_shape(&sb, x->tensor.ndim, x->tensor.shape);
      tj_strbuf_append(&sb, ") has ");
      tj_op_format_dim(&sb, x->tensor.shape[axes[i]]);
      tj_strbuf_printf(&sb, " at normalised axis %d", axes[i]);
      tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "normalisation parameter shape mismatch");
      tj_strbuf_free(&sb);
      return s;
    }
  return NULL;
}

static tj_status_t *infer_layer_norm(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL, *gamma = NULL, *beta = NULL;
  TJ_RETURN_IF_ERROR(float_data_arg("layer_norm", call, &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("layer_norm", call, 1, "gamma", &gamma));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("layer_norm", call, 2, "beta", &beta));
  if (x->tensor.ndim < 0) return *out = x, NULL;
  int axes[TJ_OP_MAX_NDIM], n_axes;
  TJ_RETURN_IF_ERROR(read_norm_axes("layer_norm", call, x->tensor.ndim, axes, &n_axes));
  TJ_RETURN_IF_ERROR(check_norm_param("layer_norm", x, gamma, "gamma", n_axes, axes));
  TJ_RETURN_IF_ERROR(check_norm_param("layer_norm", x, beta, "beta", n_axes, axes));
  *out = x;
  return NULL;
}

static const char *const layer_norm_args[] = {"data", "gamma", "beta"};

const tj_op_def_t tj_op_layer_norm = {
    .name = "relax.nn.layer_norm", .script_name = "R.nn.layer_norm", .min_args = 3, .max_args = 3,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_layer_norm, .infer = infer_layer_norm,
    .arg_names = layer_norm_args, .positional_attrs = layer_norm_attrs,
};

/* ---------------- rms_norm ----------------
 * R.nn.rms_norm(data, weight, axes=[-1], epsilon=1e-5): no bias (TVM's RMSNormAttrs);
 * the result has data's struct info. kFollow. */
static const char *const rms_norm_attrs[] = {"axes", "epsilon", NULL};

static tj_status_t *normalize_rms_norm(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("rms_norm", given, rms_norm_attrs));
  int64_t axes[TJ_OP_MAX_NDIM] = {-1};
  int n_axes = 1;
  double eps;
  if (tj_attrs_get(given, "axes"))
    TJ_RETURN_IF_ERROR(tj_op_read_ints("rms_norm", given, "axes", TJ_OP_MAX_NDIM, axes, &n_axes));
  TJ_RETURN_IF_ERROR(tj_op_read_float("rms_norm", given, "epsilon", 1e-5, &eps));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axes", tj_op_int_list(arena, n_axes, axes, TJ_I32));
  tj_attr_value_t e = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = eps};
  tj_attr_builder_add(&b, "epsilon", e);
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_rms_norm(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL, *weight = NULL;
  TJ_RETURN_IF_ERROR(float_data_arg("rms_norm", call, &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("rms_norm", call, 1, "weight", &weight));
  if (x->tensor.ndim < 0) return *out = x, NULL;
  int axes[TJ_OP_MAX_NDIM], n_axes;
  TJ_RETURN_IF_ERROR(read_norm_axes("rms_norm", call, x->tensor.ndim, axes, &n_axes));
  TJ_RETURN_IF_ERROR(check_norm_param("rms_norm", x, weight, "weight", n_axes, axes));
  *out = x;
  return NULL;
}

static const char *const rms_norm_args[] = {"data", "weight"};

const tj_op_def_t tj_op_rms_norm = {
    .name = "relax.nn.rms_norm",
    .script_name = "R.nn.rms_norm",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_rms_norm,
    .infer = infer_rms_norm,
    .arg_names = rms_norm_args,
    .positional_attrs = rms_norm_attrs,
};

/* ---------------- softmax ---------------- */

/* Canonical attrs: axis int32. kNever (TVM registers no policy). */
static const char *const softmax_attrs[] = {"axis", NULL};

static tj_status_t *normalize_softmax(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("softmax", given, softmax_attrs));
  int64_t axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int("softmax", given, "axis", -1, &axis));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_softmax(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(float_data_arg("softmax", call, &x));
  int axis;
  if (x->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(tj_op_axis("softmax", tj_attrs_get_int(call->call.attrs, "axis", -1), x->tensor.ndim, &axis));
  *out = x;
  return NULL;
}

const tj_op_def_t tj_op_softmax = {
    .name = "relax.nn.softmax", .script_name = "R.nn.softmax", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_softmax, .infer = infer_softmax,
    .arg_names = unary_args, .positional_attrs = softmax_attrs,
};

/* ---------------- gelu, gelu_tanh, silu (float unary, kFollow) ---------------- */

static tj_status_t *float_unary(const char *op, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(float_data_arg(op, call, &x));
  *out = x;
  return NULL;
}

static tj_status_t *infer_gelu(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return float_unary("gelu", call, out);
}
static tj_status_t *infer_gelu_tanh(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return float_unary("gelu_tanh", call, out);
}
static tj_status_t *infer_silu(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return float_unary("silu", call, out);
}

const tj_op_def_t tj_op_gelu = {
    .name = "relax.nn.gelu", .script_name = "R.nn.gelu", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_gelu, .arg_names = unary_args,
};
const tj_op_def_t tj_op_gelu_tanh = {
    .name = "relax.nn.gelu_tanh", .script_name = "R.nn.gelu_tanh", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_gelu_tanh, .arg_names = unary_args,
};
const tj_op_def_t tj_op_silu = {
    .name = "relax.nn.silu", .script_name = "R.nn.silu", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_silu, .arg_names = unary_args,
};

/* ---------------- leakyrelu ---------------- */

/* Canonical attrs: alpha FLOAT (float64), default 0.01. kNever (TVM registers none). */
static const char *const leakyrelu_attrs[] = {"alpha", NULL};

static tj_status_t *normalize_leakyrelu(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("leakyrelu", given, leakyrelu_attrs));
  double alpha;
  TJ_RETURN_IF_ERROR(tj_op_read_float("leakyrelu", given, "alpha", 0.01, &alpha));
  tj_attr_builder_t b = {0};
  tj_attr_value_t v = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = alpha};
  tj_attr_builder_add(&b, "alpha", v);
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_leakyrelu(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return float_unary("leakyrelu", call, out);
}

const tj_op_def_t tj_op_leakyrelu = {
    .name = "relax.nn.leakyrelu", .script_name = "R.nn.leakyrelu", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_leakyrelu, .infer = infer_leakyrelu,
    .arg_names = unary_args, .positional_attrs = leakyrelu_attrs,
};

/* ---------------- log_softmax (as softmax; kNever) ---------------- */

static tj_status_t *normalize_log_softmax(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("log_softmax", given, softmax_attrs));
  int64_t axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int("log_softmax", given, "axis", -1, &axis));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_log_softmax(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(float_unary("log_softmax", call, &x));
  int axis;
  if (x->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(
        tj_op_axis("log_softmax", tj_attrs_get_int(call->call.attrs, "axis", -1), x->tensor.ndim, &axis));
  *out = x;
  return NULL;
}

const tj_op_def_t tj_op_log_softmax = {
    .name = "relax.nn.log_softmax", .script_name = "R.nn.log_softmax", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_log_softmax, .infer = infer_log_softmax,
    .arg_names = unary_args, .positional_attrs = softmax_attrs,
};

/* ---------------- batch_norm ---------------- */

/* Canonical attrs (print order): axis int32 (required), epsilon FLOAT (1e-5),
 * center, scale bool (True), momentum FLOAT (0.1). kNever. The result is
 * Tuple(data, moving_mean, moving_var) struct info. */
static const char *const batch_norm_attrs[] = {"axis", "epsilon", "center", "scale", "momentum", NULL};

static tj_status_t *normalize_batch_norm(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("batch_norm", given, batch_norm_attrs));
  if (!tj_attrs_get(given, "axis")) return tj_op_error("batch_norm: needs 'axis', e.g. axis=1");
  int64_t axis;
  double eps, momentum;
  bool center, scale;
  TJ_RETURN_IF_ERROR(tj_op_read_int("batch_norm", given, "axis", 1, &axis));
  TJ_RETURN_IF_ERROR(tj_op_read_float("batch_norm", given, "epsilon", 1e-5, &eps));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("batch_norm", given, "center", true, &center));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("batch_norm", given, "scale", true, &scale));
  TJ_RETURN_IF_ERROR(tj_op_read_float("batch_norm", given, "momentum", 0.1, &momentum));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  tj_attr_value_t e = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = eps};
  tj_attr_builder_add(&b, "epsilon", e);
  tj_attr_builder_add(&b, "center", tj_attr_bool(center));
  tj_attr_builder_add(&b, "scale", tj_attr_bool(scale));
  tj_attr_value_t m = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = momentum};
  tj_attr_builder_add(&b, "momentum", m);
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_batch_norm(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  static const char *const what[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  const tj_sinfo_t *s[5];
  for (int i = 0; i < 5; i++) TJ_RETURN_IF_ERROR(tj_op_tensor_arg("batch_norm", call, i, what[i], &s[i]));
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  tj_dtype_t dt = s[0]->tensor.dtype;
  if (!tj_dtype_is_void(dt) && !tj_dtype_is_floating(dt))
    return tj_op_error("batch_norm: data must be a float tensor, got %s", tj_dtype_str(dt, b0));
  int axis = -1;
  if (s[0]->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(tj_op_axis("batch_norm", tj_attrs_get_int(call->call.attrs, "axis", 1), s[0]->tensor.ndim, &axis));
  for (int i = 1; i < 5; i++) {
    if (!tj_dtype_is_void(dt) && !tj_dtype_is_void(s[i]->tensor.dtype) && !tj_dtype_eq(dt, s[i]->tensor.dtype))
      return tj_op_error("batch_norm: %s is %s but data is %s; they must have the same dtype", what[i],
                         tj_dtype_str(s[i]->tensor.dtype, b0), tj_dtype_str(dt, b1));
    if (s[i]->tensor.ndim >= 0 && s[i]->tensor.ndim != 1)
      return tj_op_error("batch_norm: %s must be 1-D, got %d-D", what[i], s[i]->tensor.ndim);
    if (axis >= 0 && s[0]->tensor.shape && s[i]->tensor.shape &&
        tj_op_compare_dims(s[i]->tensor.shape[0], s[0]->tensor.shape[axis]) == TJ_DIM_DIFFERENT) {
      tj_strbuf_t sb;
      tj_strbuf_init(&sb);
      tj_strbuf_printf(&sb, "batch_norm: %s has length ", what[i]);
      tj_op_format_dim(&sb, s[i]->tensor.shape[0]);
      tj_strbuf_printf(&sb, " but data has ");
      tj_op_format_dim(&sb, s[0]->tensor.shape[axis]);
      tj_strbuf_printf(&sb, " channels at axis %d", axis);
      tj_status_t *st = tj_op_error("%s", sb.data ? sb.data : "batch_norm: parameter length mismatch");
      tj_strbuf_free(&sb);
      return st;
    }
  }
  const tj_sinfo_t *fields[3] = {s[0], s[3], s[4]};
  *out = tj_sinfo_tuple(ctx->arena, 3, fields);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "batch_norm: out of memory");
}

static const char *const batch_norm_args[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};

const tj_op_def_t tj_op_batch_norm = {
    .name = "relax.nn.batch_norm", .script_name = "R.nn.batch_norm", .min_args = 5, .max_args = 5,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_batch_norm, .infer = infer_batch_norm,
    .arg_names = batch_norm_args, .positional_attrs = batch_norm_attrs,
};

/* ---------------- pad ----------------
 * R.nn.pad(data, pad_width, pad_value=0, pad_mode="constant"). TVM's PadAttrs hold
 * pad_width (before₀, after₀, before₁, ...) and pad_mode; TVM passes pad_value as a
 * second argument (an R.const). Here pad_value is a float attr so that the script
 * call `R.nn.pad(x, (0, 0, 1, 1))` maps its second positional onto pad_width as
 * TVM's Python wrapper does; LegalizeOps produces the same PrimFunc either way.
 * kNever (TVM registers no policy). */
static const char *const pad_attrs[] = {"pad_width", "pad_value", "pad_mode", NULL};

static tj_status_t *normalize_pad(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("pad", given, pad_attrs));
  if (!tj_attrs_get(given, "pad_width"))
    return tj_op_error("pad: needs 'pad_width' (before and after for each axis), e.g. pad_width=[0, 0, 1, 1]");
  int64_t width[2 * TJ_OP_MAX_NDIM];
  int n;
  double value;
  const char *mode;
  TJ_RETURN_IF_ERROR(tj_op_read_ints("pad", given, "pad_width", 2 * TJ_OP_MAX_NDIM, width, &n));
  TJ_RETURN_IF_ERROR(tj_op_read_float("pad", given, "pad_value", 0.0, &value));
  TJ_RETURN_IF_ERROR(tj_op_read_str("pad", given, "pad_mode", "constant", &mode));
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
    return tj_op_error("pad: pad_mode must be \"constant\", \"edge\" or \"reflect\", got \"%s\"", mode);
  for (int i = 0; i < n; i++)
    if (width[i] < 0)
      return tj_op_error("pad: pad_width[%d] is %lld; padding must not be negative", i, (long long)width[i]);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "pad_width", tj_op_int_list(arena, n, width, TJ_I64));
  tj_attr_value_t v = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = value};
  tj_attr_builder_add(&b, "pad_value", v);
  tj_attr_builder_add(&b, "pad_mode", tj_attr_str(mode));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_pad(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("pad", call, 0, "data", &x));
  int64_t width[2 * TJ_OP_MAX_NDIM];
  int n = tj_op_attr_ints(call->call.attrs, "pad_width", width, 2 * TJ_OP_MAX_NDIM);
  int ndim = x->tensor.ndim;
  if (ndim < 0) return *out = x, NULL;
  if (n != 2 * ndim)
    return tj_op_error(
        "pad: pad_width has %d values but data is %d-D; give a (before, after) pair per axis (%d values)", n, ndim,
        2 * ndim);
  if (!x->tensor.shape) return *out = x, NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  for (int d = 0; d < ndim; d++)
    shape[d] = tj_op_simplify_dim(ctx->arena, tj_tir_binary(ctx->arena, TJ_TIR_ADD, x->tensor.shape[d],
                                                            tj_tir_i64(ctx->arena, width[2 * d] + width[2 * d + 1])));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, shape, x->tensor.vdevice);
  return NULL;
}

const tj_op_def_t tj_op_pad = {
    .name = "relax.nn.pad",
    .script_name = "R.nn.pad",
    .min_args = 1,
    .max_args = 1,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_pad,
    .infer = infer_pad,
    .arg_names = unary_args,
    .positional_attrs = pad_attrs,
};

/* ---------------- group_norm ----------------
 * R.nn.group_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon=1e-5,
 * center=True, scale=True). The result has data's struct info. kFollow. */
static const char *const group_norm_attrs[] = {"num_groups", "channel_axis", "axes", "epsilon",
                                               "center",     "scale",        NULL};

static tj_status_t *normalize_group_norm(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("group_norm", given, group_norm_attrs));
  for (int i = 0; i < 3; i++)
    if (!tj_attrs_get(given, group_norm_attrs[i]))
      return tj_op_error("group_norm: needs '%s', e.g. num_groups=2, channel_axis=1, axes=[2, 3]", group_norm_attrs[i]);
  int64_t groups, channel_axis, axes[TJ_OP_MAX_NDIM];
  int n_axes;
  double eps;
  bool center, scale;
  TJ_RETURN_IF_ERROR(tj_op_read_int("group_norm", given, "num_groups", 1, &groups));
  if (groups < 1) return tj_op_error("group_norm: num_groups must be >= 1, got %lld", (long long)groups);
  TJ_RETURN_IF_ERROR(tj_op_read_int("group_norm", given, "channel_axis", 1, &channel_axis));
  TJ_RETURN_IF_ERROR(tj_op_read_ints("group_norm", given, "axes", TJ_OP_MAX_NDIM, axes, &n_axes));
  TJ_RETURN_IF_ERROR(tj_op_read_float("group_norm", given, "epsilon", 1e-5, &eps));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("group_norm", given, "center", true, &center));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("group_norm", given, "scale", true, &scale));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "num_groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "channel_axis", tj_attr_int(channel_axis));
  tj_attr_builder_add(&b, "axes", tj_op_int_list(arena, n_axes, axes, TJ_I32));
  tj_attr_value_t e = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = eps};
  tj_attr_builder_add(&b, "epsilon", e);
  tj_attr_builder_add(&b, "center", tj_attr_bool(center));
  tj_attr_builder_add(&b, "scale", tj_attr_bool(scale));
  return tj_attr_builder_finish(arena, &b, out);
}

/* gamma / beta: 1-D of the channel count and data's dtype. */
static tj_status_t *check_group_param(const tj_sinfo_t *x, const tj_sinfo_t *p, const char *what, int channel_axis) {
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  if (!tj_dtype_is_void(x->tensor.dtype) && !tj_dtype_is_void(p->tensor.dtype) &&
      !tj_dtype_eq(x->tensor.dtype, p->tensor.dtype))
    return tj_op_error("group_norm: %s is %s but data is %s; they must have the same dtype", what,
                       tj_dtype_str(p->tensor.dtype, b0), tj_dtype_str(x->tensor.dtype, b1));
  if (p->tensor.ndim >= 0 && p->tensor.ndim != 1)
    return tj_op_error("group_norm: %s must be 1-D, got %d-D", what, p->tensor.ndim);
  if (x->tensor.shape && p->tensor.shape &&
      tj_op_compare_dims(p->tensor.shape[0], x->tensor.shape[channel_axis]) == TJ_DIM_DIFFERENT)
    return tj_op_error("group_norm: %s must have one value per channel (data axis %d)", what, channel_axis);
  return NULL;
}

static tj_status_t *infer_group_norm(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL, *gamma = NULL, *beta = NULL;
  TJ_RETURN_IF_ERROR(float_data_arg("group_norm", call, &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("group_norm", call, 1, "gamma", &gamma));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("group_norm", call, 2, "beta", &beta));
  if (x->tensor.ndim < 0) return *out = x, NULL;
  const tj_attrs_t *at = call->call.attrs;
  int c, axes[TJ_OP_MAX_NDIM];
  int64_t raw[TJ_OP_MAX_NDIM], groups = tj_attrs_get_int(at, "num_groups", 1);
  TJ_RETURN_IF_ERROR(tj_op_axis("group_norm", tj_attrs_get_int(at, "channel_axis", 1), x->tensor.ndim, &c));
  int n_axes = tj_op_attr_ints(at, "axes", raw, TJ_OP_MAX_NDIM);
  for (int i = 0; i < n_axes; i++) {
    TJ_RETURN_IF_ERROR(tj_op_axis("group_norm", raw[i], x->tensor.ndim, &axes[i]));
    if (axes[i] == c) return tj_op_error("group_norm: axes must not contain the channel axis %d", c);
  }
  int64_t cv;
  if (x->tensor.shape && tj_tir_is_const_int(x->tensor.shape[c], &cv) && cv % groups != 0)
    return tj_op_error("group_norm: %lld channels do not divide into num_groups = %lld", (long long)cv,
                       (long long)groups);
  TJ_RETURN_IF_ERROR(check_group_param(x, gamma, "gamma", c));
  TJ_RETURN_IF_ERROR(check_group_param(x, beta, "beta", c));
  *out = x;
  return NULL;
}

const tj_op_def_t tj_op_group_norm = {
    .name = "relax.nn.group_norm",
    .script_name = "R.nn.group_norm",
    .min_args = 3,
    .max_args = 3,
    .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_group_norm,
    .infer = infer_group_norm,
    .arg_names = layer_norm_args,
    .positional_attrs = group_norm_attrs,
};

/* ---------------- dropout ---------------- */

/* Canonical attrs: rate float (0.5). TVM returns Tuple(output, mask), both with the
 * data's struct info, and registers no legalization: LegalizeOps leaves the call, as a
 * frontend is expected to drop it for inference. kFollow. */
static const char *const dropout_attrs[] = {"rate", NULL};

static tj_status_t *normalize_dropout(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("dropout", given, dropout_attrs));
  double rate;
  TJ_RETURN_IF_ERROR(tj_op_read_float("dropout", given, "rate", 0.5, &rate));
  tj_attr_builder_t b = {0};
  tj_attr_value_t v = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = rate};
  tj_attr_builder_add(&b, "rate", v);
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_dropout(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("dropout", call, 0, "data", &x));
  const tj_sinfo_t *fields[2] = {x, x};
  *out = tj_sinfo_tuple(ctx->arena, 2, fields);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "dropout: out of memory");
}

static const char *const dropout_args[] = {"data"};

const tj_op_def_t tj_op_dropout = {
    .name = "relax.nn.dropout", .script_name = "R.nn.dropout", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_dropout, .infer = infer_dropout,
    .arg_names = dropout_args, .positional_attrs = dropout_attrs, .dtypes = "any",
    .notes = "not legalized (as TVM): a model must drop it before running",
};
