/* 1-D convolution (TVM's src/relax/op/nn/convolution.cc): relax.nn.conv1d. Same
 * contract as conv2d (ir/op/convolution.c) with one spatial dim W. */
#include <string.h>

#include "ir/op/common.h"

/* Canonical attrs: strides [int64 x1], padding [int64 x2: left, right], dilation
 * [int64 x1], groups int32, data_layout/kernel_layout/out_layout STR, out_dtype DTYPE
 * (void = the inputs' dtype). kAlways, like conv2d. */
static const char *const conv1d_attrs[] = {"strides",       "padding",    "dilation",  "groups", "data_layout",
                                           "kernel_layout", "out_layout", "out_dtype", NULL};

static tj_status_t *read_one(const char *key, const tj_attrs_t *given, int64_t *out) {
  int n;
  int64_t v[2];
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv1d", given, key, 2, v, &n));
  if (n == 0) v[0] = 1;
  else if (n != 1) return tj_op_error("conv1d: '%s' needs 1 value, got %d", key, n);
  if (v[0] < 1) return tj_op_error("conv1d: '%s' must be >= 1, got %lld", key, (long long)v[0]);
  *out = v[0];
  return NULL;
}

/* padding: 1 value -> both sides; 2 = (left, right). */
static tj_status_t *read_padding(const tj_attrs_t *given, int64_t out[2]) {
  int n;
  int64_t v[2] = {0, 0};
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv1d", given, "padding", 2, v, &n));
  if (n == 1) v[1] = v[0];
  for (int i = 0; i < 2; i++) {
    if (v[i] < 0) return tj_op_error("conv1d: 'padding' values must be >= 0, got %lld", (long long)v[i]);
    out[i] = v[i];
  }
  return NULL;
}

static tj_status_t *read_layout(const tj_attrs_t *given, const char *key, const char *dflt, const char *letters,
                                const char **out) {
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv1d", given, key, dflt, out));
  if (!tj_op_layout_is(*out, letters))
    return tj_op_error("conv1d: %s \"%s\" is not supported; use a 3-letter permutation of %s", key, *out, letters);
  return NULL;
}

static tj_status_t *normalize_conv1d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("conv1d", given, conv1d_attrs));
  int64_t stride, dilation, padding[2], groups;
  const char *data_layout, *kernel_layout, *out_layout;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(read_one("strides", given, &stride));
  TJ_RETURN_IF_ERROR(read_padding(given, padding));
  TJ_RETURN_IF_ERROR(read_one("dilation", given, &dilation));
  TJ_RETURN_IF_ERROR(tj_op_read_int("conv1d", given, "groups", 1, &groups));
  if (groups < 1) return tj_op_error("conv1d: 'groups' must be >= 1, got %lld", (long long)groups);
  TJ_RETURN_IF_ERROR(read_layout(given, "data_layout", "NCW", "NCW", &data_layout));
  TJ_RETURN_IF_ERROR(read_layout(given, "kernel_layout", "OIW", "OIW", &kernel_layout));
  TJ_RETURN_IF_ERROR(read_layout(given, "out_layout", data_layout, "NCW", &out_layout));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("conv1d", given, "out_dtype", &out_dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, 1, &stride, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 2, padding, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, 1, &dilation, TJ_I64));
  tj_attr_builder_add(&b, "groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "data_layout", tj_attr_str(tj_arena_strdup(arena, data_layout)));
  tj_attr_builder_add(&b, "kernel_layout", tj_attr_str(tj_arena_strdup(arena, kernel_layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

/* Output width: (in + pads − dil·(k − 1) − 1) // stride + 1, folded when static. */
static const tj_tir_expr_t *out_width(tj_arena_t *a, const tj_tir_expr_t *in, const tj_tir_expr_t *k, int64_t pads,
                                      int64_t dil, int64_t stride) {
  int64_t iv, kv;
  if (tj_tir_is_const_int(in, &iv) && tj_tir_is_const_int(k, &kv)) {
    int64_t num = iv + pads - dil * (kv - 1) - 1;
    return tj_tir_i64(a, (num < 0 ? -1 : num / stride) + 1);
  }
  const tj_tir_expr_t *span =
      tj_tir_binary(a, TJ_TIR_MUL, tj_tir_i64(a, dil), tj_tir_binary(a, TJ_TIR_SUB, k, tj_tir_i64(a, 1)));
  const tj_tir_expr_t *num =
      tj_tir_binary(a, TJ_TIR_SUB,
                    tj_tir_binary(a, TJ_TIR_SUB, tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, pads)), span),
                    tj_tir_i64(a, 1));
  const tj_tir_expr_t *q = stride == 1 ? num : tj_tir_binary(a, TJ_TIR_FLOOR_DIV, num, tj_tir_i64(a, stride));
  return tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_ADD, q, tj_tir_i64(a, 1)));
}

static tj_status_t *check_channels(const tj_tir_expr_t *c, const tj_tir_expr_t *i, const tj_tir_expr_t *o,
                                   int64_t groups, tj_arena_t *a) {
  const tj_tir_expr_t *i_groups = tj_tir_binary(a, TJ_TIR_MUL, i, tj_tir_i64(a, groups));
  if (!i_groups) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv1d: out of memory");
  if (tj_op_compare_dims(c, i_groups) == TJ_DIM_DIFFERENT) {
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_strbuf_append(&sb, "conv1d: data has ");
    tj_op_format_dim(&sb, c);
    tj_strbuf_append(&sb, " input channels but the weight expects ");
    tj_op_format_dim(&sb, i);
    tj_strbuf_printf(&sb, " x groups %lld", (long long)groups);
    tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "conv1d: input channels do not match the weight");
    tj_strbuf_free(&sb);
    return s;
  }
  int64_t ov;
  if (tj_tir_is_const_int(o, &ov) && ov % groups != 0)
    return tj_op_error("conv1d: the weight has %lld output channels, which groups %lld does not divide", (long long)ov,
                       (long long)groups);
  return NULL;
}

static tj_status_t *infer_conv1d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL, *w = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv1d", call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv1d", call, 1, "weight", &w));
  const tj_attrs_t *attrs = call->call.attrs;
  const char *dl = tj_attrs_get_str(attrs, "data_layout", "NCW");
  const char *kl = tj_attrs_get_str(attrs, "kernel_layout", "OIW");
  const char *ol = tj_attrs_get_str(attrs, "out_layout", dl);
  if (!tj_op_layout_is(dl, "NCW") || !tj_op_layout_is(kl, "OIW") || !tj_op_layout_is(ol, "NCW"))
    return tj_op_error("conv1d: unsupported layouts %s/%s/%s", dl, kl, ol);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != 3)
    return tj_op_error("conv1d: data must be 3-D (%s), got %d-D", dl, x->tensor.ndim);
  if (w->tensor.ndim >= 0 && w->tensor.ndim != 3)
    return tj_op_error("conv1d: weight must be 3-D (%s), got %d-D", kl, w->tensor.ndim);
  tj_dtype_t dtype = tj_op_attr_dtype(attrs, "out_dtype");
  if (tj_dtype_is_void(dtype))
    TJ_RETURN_IF_ERROR(tj_op_common_dtype("conv1d", x->tensor.dtype, w->tensor.dtype, &dtype));
  const char *vdev = tj_op_vdevice(x, w);
  if (!x->tensor.shape || !w->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, 3, NULL, vdev), NULL;
  int64_t stride = 1, dilation = 1, padding[2] = {0, 0};
  tj_op_attr_ints(attrs, "strides", &stride, 1);
  tj_op_attr_ints(attrs, "dilation", &dilation, 1);
  tj_op_attr_ints(attrs, "padding", padding, 2);
  int64_t groups = tj_attrs_get_int(attrs, "groups", 1);
  const tj_tir_expr_t *const *xs = x->tensor.shape, *const *ws = w->tensor.shape;
  const tj_tir_expr_t *o = ws[tj_op_layout_pos(kl, 'O')];
  TJ_RETURN_IF_ERROR(check_channels(xs[tj_op_layout_pos(dl, 'C')], ws[tj_op_layout_pos(kl, 'I')], o, groups, ctx->arena));
  const tj_tir_expr_t *in_w = xs[tj_op_layout_pos(dl, 'W')], *k = ws[tj_op_layout_pos(kl, 'W')];
  const tj_tir_expr_t *ow = out_width(ctx->arena, in_w, k, padding[0] + padding[1], dilation, stride);
  if (!ow) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv1d: out of memory");
  int64_t owv;
  if (tj_tir_is_const_int(ow, &owv) && owv <= 0)
    return tj_op_error("conv1d: the output would be empty: the padded input is shorter than the dilated kernel");
  const tj_tir_expr_t *shape[3];
  shape[tj_op_layout_pos(ol, 'N')] = xs[tj_op_layout_pos(dl, 'N')];
  shape[tj_op_layout_pos(ol, 'C')] = o;
  shape[tj_op_layout_pos(ol, 'W')] = ow;
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, 3, shape, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv1d: out of memory");
}

static const char *const conv1d_args[] = {"data", "weight"};

const tj_op_def_t tj_op_conv1d = {
    .name = "relax.nn.conv1d",
    .script_name = "R.nn.conv1d",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_ALWAYS,
    .normalize_attrs = normalize_conv1d,
    .infer = infer_conv1d,
    .arg_names = conv1d_args,
    .positional_attrs = conv1d_attrs,
    .mixed_precision_call = tj_op_mixed_set_out_dtype,
};
