/* Transposed 2-D convolution (TVM's src/relax/op/nn/convolution.cc):
 * relax.nn.conv2d_transpose. kNever (TVM registers no mixed-precision policy). */
#include <string.h>

#include "ir/op/common.h"

/* Canonical attrs: strides [int64 x2], padding [int64 x4: top, left, bottom, right],
 * output_padding [int64 x2], dilation [int64 x2], groups int32,
 * data_layout/kernel_layout/out_layout STR, out_dtype DTYPE (void = the inputs'). */
static const char *const convt_attrs[] = {"strides",     "padding",       "output_padding", "dilation",  "groups",
                                          "data_layout", "kernel_layout", "out_layout",     "out_dtype", NULL};

/* 1 value -> both; 2 values as given. `min` is the smallest allowed value. */
static tj_status_t *read_pair(const tj_attrs_t *given, const char *key, int64_t dflt, int64_t min, int64_t out[2]) {
  int n;
  int64_t v[4];
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv2d_transpose", given, key, 4, v, &n));
  if (n == 0) v[0] = v[1] = dflt;
  else if (n == 1) v[1] = v[0];
  else if (n != 2) return tj_op_error("conv2d_transpose: '%s' needs 1 or 2 values, got %d", key, n);
  if (v[0] < min || v[1] < min)
    return tj_op_error("conv2d_transpose: '%s' values must be >= %lld, got [%lld, %lld]", key, (long long)min,
                       (long long)v[0], (long long)v[1]);
  out[0] = v[0], out[1] = v[1];
  return NULL;
}

static tj_status_t *read_padding(const tj_attrs_t *given, int64_t out[4]) {
  int n;
  int64_t v[4] = {0, 0, 0, 0};
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv2d_transpose", given, "padding", 4, v, &n));
  if (n == 1) v[1] = v[2] = v[3] = v[0];
  else if (n == 2) v[2] = v[0], v[3] = v[1];
  else if (n != 0 && n != 4) return tj_op_error("conv2d_transpose: 'padding' needs 1, 2 or 4 values, got %d", n);
  for (int i = 0; i < 4; i++) {
    if (v[i] < 0) return tj_op_error("conv2d_transpose: 'padding' values must be >= 0, got %lld", (long long)v[i]);
    out[i] = v[i];
  }
  return NULL;
}

static tj_status_t *read_layout(const tj_attrs_t *given, const char *key, const char *dflt, const char *letters,
                                const char **out) {
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv2d_transpose", given, key, dflt, out));
  if (!tj_op_layout_is(*out, letters))
    return tj_op_error("conv2d_transpose: %s \"%s\" is not supported; use a 4-letter permutation of %s", key, *out,
                       letters);
  return NULL;
}

static tj_status_t *normalize_convt(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("conv2d_transpose", given, convt_attrs));
  int64_t strides[2], padding[4], opad[2], dilation[2], groups;
  const char *dl, *kl, *ol;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(read_pair(given, "strides", 1, 1, strides));
  TJ_RETURN_IF_ERROR(read_padding(given, padding));
  TJ_RETURN_IF_ERROR(read_pair(given, "output_padding", 0, 0, opad));
  TJ_RETURN_IF_ERROR(read_pair(given, "dilation", 1, 1, dilation));
  for (int i = 0; i < 2; i++)
    if (opad[i] >= strides[i])
      return tj_op_error("conv2d_transpose: output_padding[%d] = %lld must be smaller than strides[%d] = %lld", i,
                         (long long)opad[i], i, (long long)strides[i]);
  TJ_RETURN_IF_ERROR(tj_op_read_int("conv2d_transpose", given, "groups", 1, &groups));
  if (groups < 1) return tj_op_error("conv2d_transpose: 'groups' must be >= 1, got %lld", (long long)groups);
  TJ_RETURN_IF_ERROR(read_layout(given, "data_layout", "NCHW", "NCHW", &dl));
  TJ_RETURN_IF_ERROR(read_layout(given, "kernel_layout", "IOHW", "OIHW", &kl));
  TJ_RETURN_IF_ERROR(read_layout(given, "out_layout", dl, "NCHW", &ol));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("conv2d_transpose", given, "out_dtype", &out_dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, 2, strides, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 4, padding, TJ_I64));
  tj_attr_builder_add(&b, "output_padding", tj_op_int_list(arena, 2, opad, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, 2, dilation, TJ_I64));
  tj_attr_builder_add(&b, "groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "data_layout", tj_attr_str(tj_arena_strdup(arena, dl)));
  tj_attr_builder_add(&b, "kernel_layout", tj_attr_str(tj_arena_strdup(arena, kl)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, ol)));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

/* (in − 1)·s − pads + d·(k − 1) + out_pad + 1. */
static const tj_tir_expr_t *out_dim(tj_arena_t *a, const tj_tir_expr_t *in, const tj_tir_expr_t *k, int64_t s,
                                    int64_t pads, int64_t d, int64_t opad) {
  int64_t iv, kv;
  if (tj_tir_is_const_int(in, &iv) && tj_tir_is_const_int(k, &kv))
    return tj_tir_i64(a, (iv - 1) * s - pads + d * (kv - 1) + opad + 1);
  const tj_tir_expr_t *x =
      tj_tir_binary(a, TJ_TIR_MUL, tj_tir_binary(a, TJ_TIR_SUB, in, tj_tir_i64(a, 1)), tj_tir_i64(a, s));
  const tj_tir_expr_t *kk =
      tj_tir_binary(a, TJ_TIR_MUL, tj_tir_i64(a, d), tj_tir_binary(a, TJ_TIR_SUB, k, tj_tir_i64(a, 1)));
  x = tj_tir_binary(a, TJ_TIR_ADD, x, kk);
  return tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_ADD, x, tj_tir_i64(a, opad + 1 - pads)));
}

/* The output channels of a transposed conv: the weight's O dim times groups, after checking
 * that data's channels match the weight's I dim and divide into groups. */
static tj_status_t *convt_out_channels(tj_arena_t *a, const char *op, const tj_sinfo_t *x, const tj_sinfo_t *w,
                                       const char *dl, const char *kl, int64_t groups, const tj_tir_expr_t **oc) {
  const tj_tir_expr_t *c = x->tensor.shape[tj_op_layout_pos(dl, 'C')];
  const tj_tir_expr_t *i = w->tensor.shape[tj_op_layout_pos(kl, 'I')], *o = w->tensor.shape[tj_op_layout_pos(kl, 'O')];
  int64_t iv;
  if (tj_op_compare_dims(c, i) == TJ_DIM_DIFFERENT)
    return tj_op_error("%s: data has a different number of input channels than the weight's I dim (%s)", op, kl);
  if (tj_tir_is_const_int(i, &iv) && iv % groups != 0)
    return tj_op_error("%s: the weight's %lld input channels are not divisible by groups %lld", op, (long long)iv,
                       (long long)groups);
  *oc = groups == 1 ? o : tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_MUL, o, tj_tir_i64(a, groups)));
  return NULL;
}

static tj_status_t *infer_convt(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *x = NULL, *w = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv2d_transpose", call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv2d_transpose", call, 1, "weight", &w));
  const tj_attrs_t *at = call->call.attrs;
  const char *dl = tj_attrs_get_str(at, "data_layout", "NCHW"), *kl = tj_attrs_get_str(at, "kernel_layout", "IOHW");
  const char *ol = tj_attrs_get_str(at, "out_layout", dl);
  if (!tj_op_layout_is(dl, "NCHW") || !tj_op_layout_is(kl, "OIHW") || !tj_op_layout_is(ol, "NCHW"))
    return tj_op_error("conv2d_transpose: unsupported layouts %s/%s/%s", dl, kl, ol);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != 4)
    return tj_op_error("conv2d_transpose: data must be 4-D (%s), got %d-D", dl, x->tensor.ndim);
  if (w->tensor.ndim >= 0 && w->tensor.ndim != 4)
    return tj_op_error("conv2d_transpose: weight must be 4-D (%s), got %d-D", kl, w->tensor.ndim);
  tj_dtype_t dtype = tj_op_attr_dtype(at, "out_dtype");
  if (tj_dtype_is_void(dtype))
    TJ_RETURN_IF_ERROR(tj_op_common_dtype("conv2d_transpose", x->tensor.dtype, w->tensor.dtype, &dtype));
  const char *vdev = tj_op_vdevice(x, w);
  if (!x->tensor.shape || !w->tensor.shape) return *out = tj_op_tensor_sinfo(a, dtype, 4, NULL, vdev), NULL;
  int64_t s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, op[2] = {0, 0}, d[2] = {1, 1};
  tj_op_attr_ints(at, "strides", s, 2);
  tj_op_attr_ints(at, "padding", p, 4);
  tj_op_attr_ints(at, "output_padding", op, 2);
  tj_op_attr_ints(at, "dilation", d, 2);
  int64_t groups = tj_attrs_get_int(at, "groups", 1);
  const tj_tir_expr_t *const *xs = x->tensor.shape, *const *ws = w->tensor.shape;
  const tj_tir_expr_t *shape[4];
  shape[tj_op_layout_pos(ol, 'N')] = xs[tj_op_layout_pos(dl, 'N')];
  TJ_RETURN_IF_ERROR(convt_out_channels(a, "conv2d_transpose", x, w, dl, kl, groups, &shape[tj_op_layout_pos(ol, 'C')]));
  shape[tj_op_layout_pos(ol, 'H')] =
      out_dim(a, xs[tj_op_layout_pos(dl, 'H')], ws[tj_op_layout_pos(kl, 'H')], s[0], p[0] + p[2], d[0], op[0]);
  shape[tj_op_layout_pos(ol, 'W')] =
      out_dim(a, xs[tj_op_layout_pos(dl, 'W')], ws[tj_op_layout_pos(kl, 'W')], s[1], p[1] + p[3], d[1], op[1]);
  for (int k = 0; k < 4; k++) {
    int64_t v;
    if (tj_tir_is_const_int(shape[k], &v) && v <= 0) return tj_op_error("conv2d_transpose: the output would be empty");
  }
  *out = tj_op_tensor_sinfo(a, dtype, 4, shape, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv2d_transpose: out of memory");
}

static const char *const convt_args[] = {"data", "weight"};

const tj_op_def_t tj_op_conv2d_transpose = {
    .name = "relax.nn.conv2d_transpose",
    .script_name = "R.nn.conv2d_transpose",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_convt,
    .infer = infer_convt,
    .arg_names = convt_args,
    .positional_attrs = convt_attrs,
};

/* ---------------- conv1d_transpose ----------------
 * Canonical attrs as conv2d_transpose with one spatial dim: strides [int64 x1],
 * padding [int64 x2: left, right], output_padding [int64 x1], dilation [int64 x1],
 * groups, layouts (default NCW / IOW), out_dtype. kNever. */
static tj_status_t *read_single(const tj_attrs_t *given, const char *key, int64_t dflt, int64_t min, int64_t *out) {
  int n;
  int64_t v[2];
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv1d_transpose", given, key, 2, v, &n));
  if (n == 0) v[0] = dflt;
  else if (n != 1) return tj_op_error("conv1d_transpose: '%s' needs 1 value, got %d", key, n);
  if (v[0] < min)
    return tj_op_error("conv1d_transpose: '%s' must be >= %lld, got %lld", key, (long long)min, (long long)v[0]);
  *out = v[0];
  return NULL;
}

static tj_status_t *normalize_convt1d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("conv1d_transpose", given, convt_attrs));
  int64_t stride, opad, dilation, groups, padding[2] = {0, 0};
  int n;
  TJ_RETURN_IF_ERROR(read_single(given, "strides", 1, 1, &stride));
  TJ_RETURN_IF_ERROR(read_single(given, "output_padding", 0, 0, &opad));
  TJ_RETURN_IF_ERROR(read_single(given, "dilation", 1, 1, &dilation));
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv1d_transpose", given, "padding", 2, padding, &n));
  if (n == 1) padding[1] = padding[0];
  if (padding[0] < 0 || padding[1] < 0) return tj_op_error("conv1d_transpose: 'padding' values must be >= 0");
  if (opad >= stride)
    return tj_op_error("conv1d_transpose: output_padding %lld must be smaller than strides %lld", (long long)opad,
                       (long long)stride);
  TJ_RETURN_IF_ERROR(tj_op_read_int("conv1d_transpose", given, "groups", 1, &groups));
  if (groups < 1) return tj_op_error("conv1d_transpose: 'groups' must be >= 1, got %lld", (long long)groups);
  const char *dl, *kl, *ol;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv1d_transpose", given, "data_layout", "NCW", &dl));
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv1d_transpose", given, "kernel_layout", "IOW", &kl));
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv1d_transpose", given, "out_layout", dl, &ol));
  if (!tj_op_layout_is(dl, "NCW") || !tj_op_layout_is(kl, "OIW") || !tj_op_layout_is(ol, "NCW"))
    return tj_op_error("conv1d_transpose: layouts %s/%s/%s are not supported; use permutations of NCW and IOW", dl, kl,
                       ol);
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("conv1d_transpose", given, "out_dtype", &out_dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, 1, &stride, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 2, padding, TJ_I64));
  tj_attr_builder_add(&b, "output_padding", tj_op_int_list(arena, 1, &opad, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, 1, &dilation, TJ_I64));
  tj_attr_builder_add(&b, "groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "data_layout", tj_attr_str(tj_arena_strdup(arena, dl)));
  tj_attr_builder_add(&b, "kernel_layout", tj_attr_str(tj_arena_strdup(arena, kl)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, ol)));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_convt1d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *x = NULL, *w = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv1d_transpose", call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv1d_transpose", call, 1, "weight", &w));
  const tj_attrs_t *at = call->call.attrs;
  const char *dl = tj_attrs_get_str(at, "data_layout", "NCW"), *kl = tj_attrs_get_str(at, "kernel_layout", "IOW");
  const char *ol = tj_attrs_get_str(at, "out_layout", dl);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != 3)
    return tj_op_error("conv1d_transpose: data must be 3-D (%s), got %d-D", dl, x->tensor.ndim);
  if (w->tensor.ndim >= 0 && w->tensor.ndim != 3)
    return tj_op_error("conv1d_transpose: weight must be 3-D (%s), got %d-D", kl, w->tensor.ndim);
  tj_dtype_t dtype = tj_op_attr_dtype(at, "out_dtype");
  if (tj_dtype_is_void(dtype))
    TJ_RETURN_IF_ERROR(tj_op_common_dtype("conv1d_transpose", x->tensor.dtype, w->tensor.dtype, &dtype));
  const char *vdev = tj_op_vdevice(x, w);
  if (!x->tensor.shape || !w->tensor.shape) return *out = tj_op_tensor_sinfo(a, dtype, 3, NULL, vdev), NULL;
  int64_t s = 1, p[2] = {0, 0}, op = 0, d = 1;
  tj_op_attr_ints(at, "strides", &s, 1);
  tj_op_attr_ints(at, "padding", p, 2);
  tj_op_attr_ints(at, "output_padding", &op, 1);
  tj_op_attr_ints(at, "dilation", &d, 1);
  int64_t groups = tj_attrs_get_int(at, "groups", 1);
  const tj_tir_expr_t *const *xs = x->tensor.shape, *const *ws = w->tensor.shape;
  const tj_tir_expr_t *shape[3];
  shape[tj_op_layout_pos(ol, 'N')] = xs[tj_op_layout_pos(dl, 'N')];
  TJ_RETURN_IF_ERROR(convt_out_channels(a, "conv1d_transpose", x, w, dl, kl, groups, &shape[tj_op_layout_pos(ol, 'C')]));
  shape[tj_op_layout_pos(ol, 'W')] = out_dim(a, xs[tj_op_layout_pos(dl, 'W')], ws[tj_op_layout_pos(kl, 'W')], s, p[0] + p[1], d, op);
  int64_t v;
  if (tj_tir_is_const_int(shape[tj_op_layout_pos(ol, 'W')], &v) && v <= 0)
    return tj_op_error("conv1d_transpose: the output would be empty");
  *out = tj_op_tensor_sinfo(a, dtype, 3, shape, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv1d_transpose: out of memory");
}

const tj_op_def_t tj_op_conv1d_transpose = {
    .name = "relax.nn.conv1d_transpose",
    .script_name = "R.nn.conv1d_transpose",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_convt1d,
    .infer = infer_convt1d,
    .arg_names = convt_args,
    .positional_attrs = convt_attrs,
};
