/* Convolution (TVM's src/relax/op/nn/convolution.cc): relax.nn.conv2d. */
#include <string.h>

#include "ir/op/common.h"

/* ---------------- conv2d ---------------- */

/* Canonical attrs: strides [int64 x2], padding [int64 x4: top, left, bottom, right],
 * dilation [int64 x2], groups int32, data_layout/kernel_layout/out_layout STR,
 * out_dtype DTYPE (void = infer from the inputs). kAlways. */
static const char *const conv2d_attrs[] = {"strides", "padding", "dilation", "groups", "data_layout",
                                           "kernel_layout", "out_layout", "out_dtype", NULL};

static tj_status_t *read_pair(const char *key, const tj_attrs_t *given, int64_t out[2]) {
  int n;
  int64_t v[4];
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv2d", given, key, 4, v, &n));
  if (n == 0) v[0] = v[1] = 1;
  else if (n == 1) v[1] = v[0];
  else if (n != 2) return tj_op_error("conv2d: '%s' needs 1 or 2 values, got %d", key, n);
  if (v[0] < 1 || v[1] < 1) return tj_op_error("conv2d: '%s' values must be >= 1, got [%lld, %lld]", key, (long long)v[0], (long long)v[1]);
  out[0] = v[0];
  out[1] = v[1];
  return NULL;
}

/* padding: 1 value -> all sides; 2 (h, w) -> (h, w, h, w); 4 = (top, left, bottom, right). */
static tj_status_t *read_padding(const tj_attrs_t *given, int64_t out[4]) {
  int n;
  int64_t v[4] = {0, 0, 0, 0};
  TJ_RETURN_IF_ERROR(tj_op_read_ints("conv2d", given, "padding", 4, v, &n));
  if (n == 1) v[1] = v[2] = v[3] = v[0];
  else if (n == 2) v[2] = v[0], v[3] = v[1];
  else if (n != 0 && n != 4) return tj_op_error("conv2d: 'padding' needs 1, 2 or 4 values, got %d", n);
  for (int i = 0; i < 4; i++) {
    if (v[i] < 0) return tj_op_error("conv2d: 'padding' values must be >= 0, got %lld", (long long)v[i]);
    out[i] = v[i];
  }
  return NULL;
}

static tj_status_t *read_layout(const tj_attrs_t *given, const char *key, const char *dflt, const char *letters,
                                const char **out) {
  TJ_RETURN_IF_ERROR(tj_op_read_str("conv2d", given, key, dflt, out));
  if (!tj_op_layout_is(*out, letters))
    return tj_op_error("conv2d: %s \"%s\" is not supported; use a 4-letter permutation of %s (e.g. %s)", key, *out,
                       letters, letters);
  return NULL;
}

static tj_status_t *normalize_conv2d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("conv2d", given, conv2d_attrs));
  int64_t strides[2], dilation[2], padding[4], groups;
  const char *data_layout, *kernel_layout, *out_layout;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(read_pair("strides", given, strides));
  TJ_RETURN_IF_ERROR(read_padding(given, padding));
  TJ_RETURN_IF_ERROR(read_pair("dilation", given, dilation));
  TJ_RETURN_IF_ERROR(tj_op_read_int("conv2d", given, "groups", 1, &groups));
  if (groups < 1) return tj_op_error("conv2d: 'groups' must be >= 1, got %lld", (long long)groups);
  TJ_RETURN_IF_ERROR(read_layout(given, "data_layout", "NCHW", "NCHW", &data_layout));
  TJ_RETURN_IF_ERROR(read_layout(given, "kernel_layout", "OIHW", "OIHW", &kernel_layout));
  TJ_RETURN_IF_ERROR(read_layout(given, "out_layout", data_layout, "NCHW", &out_layout));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("conv2d", given, "out_dtype", &out_dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, 2, strides, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 4, padding, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, 2, dilation, TJ_I64));
  tj_attr_builder_add(&b, "groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "data_layout", tj_attr_str(tj_arena_strdup(arena, data_layout)));
  tj_attr_builder_add(&b, "kernel_layout", tj_attr_str(tj_arena_strdup(arena, kernel_layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *conv2d_channel_error(const tj_sinfo_t *w, const char *kernel_layout,
                                         const tj_tir_expr_t *c, const tj_tir_expr_t *i, int64_t groups) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, "conv2d: data has ");
  tj_op_format_dim(&sb, c);
  tj_strbuf_printf(&sb, " input channels but the weight (%s ", kernel_layout);
  tj_op_format_shape(&sb, 4, w->tensor.shape);
  tj_strbuf_append(&sb, ") expects ");
  tj_op_format_dim(&sb, i);
  tj_strbuf_printf(&sb, " x groups %lld", (long long)groups);
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "conv2d: input channels do not match the weight");
  tj_strbuf_free(&sb);
  return s;
}

/* Output extent of one spatial dim: (in + pads - dil*(k-1) - 1) // stride + 1. */
static const tj_tir_expr_t *conv_out_dim(tj_arena_t *a, const tj_tir_expr_t *in, const tj_tir_expr_t *k, int64_t pads,
                                         int64_t dil, int64_t stride) {
  int64_t iv, kv;
  if (tj_tir_is_const_int(in, &iv) && tj_tir_is_const_int(k, &kv)) {
    int64_t num = iv + pads - dil * (kv - 1) - 1;
    return tj_tir_i64(a, (num < 0 ? -1 : num / stride) + 1);
  }
  const tj_tir_expr_t *span = tj_tir_binary(a, TJ_TIR_MUL, tj_tir_i64(a, dil),
                                            tj_tir_binary(a, TJ_TIR_SUB, k, tj_tir_i64(a, 1)));
  const tj_tir_expr_t *num = tj_tir_binary(
      a, TJ_TIR_SUB, tj_tir_binary(a, TJ_TIR_SUB, tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, pads)), span),
      tj_tir_i64(a, 1));
  const tj_tir_expr_t *q = stride == 1 ? num : tj_tir_binary(a, TJ_TIR_FLOOR_DIV, num, tj_tir_i64(a, stride));
  return tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_ADD, q, tj_tir_i64(a, 1)));
}

static tj_status_t *infer_conv2d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL, *w = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv2d", call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("conv2d", call, 1, "weight", &w));
  const tj_attrs_t *attrs = call->call.attrs;
  const char *dl = tj_attrs_get_str(attrs, "data_layout", "NCHW");
  const char *kl = tj_attrs_get_str(attrs, "kernel_layout", "OIHW");
  const char *ol = tj_attrs_get_str(attrs, "out_layout", dl);
  if (!tj_op_layout_is(dl, "NCHW") || !tj_op_layout_is(kl, "OIHW") || !tj_op_layout_is(ol, "NCHW"))
    return tj_op_error("conv2d: unsupported layouts %s/%s/%s", dl, kl, ol);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != 4)
    return tj_op_error("conv2d: data must be 4-D (%s), got %d-D", dl, x->tensor.ndim);
  if (w->tensor.ndim >= 0 && w->tensor.ndim != 4)
    return tj_op_error("conv2d: weight must be 4-D (%s), got %d-D", kl, w->tensor.ndim);
  tj_dtype_t dtype = tj_op_attr_dtype(attrs, "out_dtype");
  if (tj_dtype_is_void(dtype)) TJ_RETURN_IF_ERROR(tj_op_common_dtype("conv2d", x->tensor.dtype, w->tensor.dtype, &dtype));
  const char *vdev = tj_op_vdevice(x, w);
  if (!x->tensor.shape || !w->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, 4, NULL, vdev), NULL;

  int64_t strides[2] = {1, 1}, dilation[2] = {1, 1}, padding[4] = {0, 0, 0, 0};
  tj_op_attr_ints(attrs, "strides", strides, 2);
  tj_op_attr_ints(attrs, "dilation", dilation, 2);
  tj_op_attr_ints(attrs, "padding", padding, 4);
  int64_t groups = tj_attrs_get_int(attrs, "groups", 1);
  const tj_tir_expr_t *const *xs = x->tensor.shape, *const *ws = w->tensor.shape;
  const tj_tir_expr_t *n = xs[tj_op_layout_pos(dl, 'N')], *c = xs[tj_op_layout_pos(dl, 'C')];
  const tj_tir_expr_t *h = xs[tj_op_layout_pos(dl, 'H')], *wd = xs[tj_op_layout_pos(dl, 'W')];
  const tj_tir_expr_t *o = ws[tj_op_layout_pos(kl, 'O')], *i = ws[tj_op_layout_pos(kl, 'I')];
  const tj_tir_expr_t *kh = ws[tj_op_layout_pos(kl, 'H')], *kw = ws[tj_op_layout_pos(kl, 'W')];

  int64_t ov;
  const tj_tir_expr_t *i_groups = tj_tir_binary(ctx->arena, TJ_TIR_MUL, i, tj_tir_i64(ctx->arena, groups));
  if (!i_groups) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv2d: out of memory");
  if (tj_op_compare_dims(c, i_groups) == TJ_DIM_DIFFERENT) return conv2d_channel_error(w, kl, c, i, groups);
  if (tj_tir_is_const_int(o, &ov) && ov % groups != 0)
    return tj_op_error("conv2d: the weight has %lld output channels, which groups %lld does not divide", (long long)ov,
                       (long long)groups);

  const tj_tir_expr_t *oh = conv_out_dim(ctx->arena, h, kh, padding[0] + padding[2], dilation[0], strides[0]);
  const tj_tir_expr_t *ow = conv_out_dim(ctx->arena, wd, kw, padding[1] + padding[3], dilation[1], strides[1]);
  if (!oh || !ow) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv2d: out of memory");
  int64_t ohv, owv;
  if ((tj_tir_is_const_int(oh, &ohv) && ohv <= 0) || (tj_tir_is_const_int(ow, &owv) && owv <= 0)) {
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_strbuf_append(&sb, "conv2d: the output would be empty: input ");
    tj_op_format_dim(&sb, h);
    tj_strbuf_append(&sb, "x");
    tj_op_format_dim(&sb, wd);
    tj_strbuf_printf(&sb, " padded by [%lld, %lld, %lld, %lld] is smaller than the dilated kernel ", (long long)padding[0],
                     (long long)padding[1], (long long)padding[2], (long long)padding[3]);
    tj_op_format_dim(&sb, kh);
    tj_strbuf_append(&sb, "x");
    tj_op_format_dim(&sb, kw);
    tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "conv2d: the output would be empty");
    tj_strbuf_free(&sb);
    return s;
  }
  const tj_tir_expr_t *shape[4];
  shape[tj_op_layout_pos(ol, 'N')] = n;
  shape[tj_op_layout_pos(ol, 'C')] = o;
  shape[tj_op_layout_pos(ol, 'H')] = oh;
  shape[tj_op_layout_pos(ol, 'W')] = ow;
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, 4, shape, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "conv2d: out of memory");
}

static const char *const conv2d_args[] = {"data", "weight"};

const tj_op_def_t tj_op_conv2d = {
    .name = "relax.nn.conv2d", .script_name = "R.nn.conv2d", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_ALWAYS, .normalize_attrs = normalize_conv2d, .infer = infer_conv2d,
    .arg_names = conv2d_args, .positional_attrs = conv2d_attrs, .mixed_precision_call = tj_op_mixed_set_out_dtype,
};

