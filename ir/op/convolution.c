/* Convolution (TVM's src/relax/op/nn/convolution.cc): relax.nn.conv1d, relax.nn.conv2d
 * and relax.nn.conv3d, one implementation over the spatial dims (W; H W; D H W): TVM's
 * Conv1DAttrs, Conv2DAttrs and Conv3DAttrs differ only in that count. */
#include <string.h>

#include "ir/op/common.h"

/* What tells conv2d and conv3d apart. */
typedef struct conv_kind {
  const char *op;     /* "conv2d" */
  int nsp;            /* spatial dims */
  const char *data;   /* default data layout, also its letters: NCHW, NCDHW */
  const char *kernel; /* default kernel layout: OIHW, OIDHW */
  const char *spatial; /* the spatial letters in order: HW, DHW */
} conv_kind_t;

static const conv_kind_t conv1d_kind = {"conv1d", 1, "NCW", "OIW", "W"};
static const conv_kind_t conv2d_kind = {"conv2d", 2, "NCHW", "OIHW", "HW"};
static const conv_kind_t conv3d_kind = {"conv3d", 3, "NCDHW", "OIDHW", "DHW"};

/* Canonical attrs: strides [int64 x nsp], padding [int64 x 2*nsp: the befores then the
 * afters], dilation [int64 x nsp], groups int32, data_layout/kernel_layout/out_layout STR,
 * out_dtype DTYPE (void = infer from the inputs). kAlways. */
static const char *const conv_attrs[] = {"strides", "padding", "dilation", "groups", "data_layout",
                                         "kernel_layout", "out_layout", "out_dtype", NULL};

/* nsp values >= 1: none gives 1s, one is repeated. */
static tj_status_t *read_sizes(const conv_kind_t *k, const char *key, const tj_attrs_t *given, int64_t *out) {
  int n;
  int64_t v[8];
  TJ_RETURN_IF_ERROR(tj_op_read_ints(k->op, given, key, 8, v, &n));
  if (n != 0 && n != 1 && n != k->nsp)
    return tj_op_error("%s: '%s' needs 1 or %d values, got %d", k->op, key, k->nsp, n);
  for (int i = 0; i < k->nsp; i++) {
    out[i] = n == 0 ? 1 : n == 1 ? v[0] : v[i];
    if (out[i] < 1) return tj_op_error("%s: '%s' values must be >= 1, got %lld", k->op, key, (long long)out[i]);
  }
  return NULL;
}

/* padding: 1 value -> all sides; nsp values -> the same before and after; 2*nsp =
 * (befores, afters), as TVM's GetCompletePadding2D/3D. */
static tj_status_t *read_padding(const conv_kind_t *k, const tj_attrs_t *given, int64_t *out) {
  int n, nsp = k->nsp;
  int64_t v[12];
  TJ_RETURN_IF_ERROR(tj_op_read_ints(k->op, given, "padding", 12, v, &n));
  if (n != 0 && n != 1 && n != nsp && n != 2 * nsp)
    return tj_op_error("%s: 'padding' needs 1, %d or %d values, got %d", k->op, nsp, 2 * nsp, n);
  for (int i = 0; i < 2 * nsp; i++) {
    out[i] = n == 0 ? 0 : n == 1 ? v[0] : n == nsp ? v[i % nsp] : v[i];
    if (out[i] < 0) return tj_op_error("%s: 'padding' values must be >= 0, got %lld", k->op, (long long)out[i]);
  }
  return NULL;
}

static tj_status_t *read_layout(const conv_kind_t *k, const tj_attrs_t *given, const char *key, const char *dflt,
                                const char *letters, const char **out) {
  TJ_RETURN_IF_ERROR(tj_op_read_str(k->op, given, key, dflt, out));
  if (!tj_op_layout_is(*out, letters))
    return tj_op_error("%s: %s \"%s\" is not supported; use a %d-letter permutation of %s (e.g. %s)", k->op, key, *out,
                       k->nsp + 2, letters, letters);
  return NULL;
}

static tj_status_t *normalize_conv(const conv_kind_t *k, tj_arena_t *arena, const tj_attrs_t *given,
                                   const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(k->op, given, conv_attrs));
  int64_t strides[3], dilation[3], padding[6], groups;
  const char *data_layout, *kernel_layout, *out_layout;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(read_sizes(k, "strides", given, strides));
  TJ_RETURN_IF_ERROR(read_padding(k, given, padding));
  TJ_RETURN_IF_ERROR(read_sizes(k, "dilation", given, dilation));
  TJ_RETURN_IF_ERROR(tj_op_read_int(k->op, given, "groups", 1, &groups));
  if (groups < 1) return tj_op_error("%s: 'groups' must be >= 1, got %lld", k->op, (long long)groups);
  TJ_RETURN_IF_ERROR(read_layout(k, given, "data_layout", k->data, k->data, &data_layout));
  TJ_RETURN_IF_ERROR(read_layout(k, given, "kernel_layout", k->kernel, k->kernel, &kernel_layout));
  TJ_RETURN_IF_ERROR(read_layout(k, given, "out_layout", data_layout, k->data, &out_layout));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype(k->op, given, "out_dtype", &out_dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, k->nsp, strides, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 2 * k->nsp, padding, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, k->nsp, dilation, TJ_I64));
  tj_attr_builder_add(&b, "groups", tj_attr_int(groups));
  tj_attr_builder_add(&b, "data_layout", tj_attr_str(tj_arena_strdup(arena, data_layout)));
  tj_attr_builder_add(&b, "kernel_layout", tj_attr_str(tj_arena_strdup(arena, kernel_layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *channel_error(const conv_kind_t *k, const tj_sinfo_t *w, const char *kernel_layout,
                                  const tj_tir_expr_t *c, const tj_tir_expr_t *i, int64_t groups) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s: data has ", k->op);
  tj_op_format_dim(&sb, c);
  tj_strbuf_printf(&sb, " input channels but the weight (%s ", kernel_layout);
  tj_op_format_shape(&sb, k->nsp + 2, w->tensor.shape);
  tj_strbuf_append(&sb, ") expects ");
  tj_op_format_dim(&sb, i);
  tj_strbuf_printf(&sb, " x groups %lld", (long long)groups);
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "conv: input channels do not match the weight");
  tj_strbuf_free(&sb);
  return s;
}

/* "input 2x2 padded by [0, 0, 0, 0] is smaller than the dilated kernel 3x3". */
static tj_status_t *empty_error(const conv_kind_t *k, const tj_tir_expr_t *const *in, const tj_tir_expr_t *const *kd,
                                const int64_t *padding) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s: the output would be empty: input ", k->op);
  for (int i = 0; i < k->nsp; i++) {
    if (i) tj_strbuf_append(&sb, "x");
    tj_op_format_dim(&sb, in[i]);
  }
  tj_strbuf_append(&sb, " padded by [");
  for (int i = 0; i < 2 * k->nsp; i++) tj_strbuf_printf(&sb, "%s%lld", i ? ", " : "", (long long)padding[i]);
  tj_strbuf_append(&sb, "] is smaller than the dilated kernel ");
  for (int i = 0; i < k->nsp; i++) {
    if (i) tj_strbuf_append(&sb, "x");
    tj_op_format_dim(&sb, kd[i]);
  }
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "conv: the output would be empty");
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

/* The input and weight struct info checked against the layouts; *out set (ndim only)
 * when a shape is unknown. */
static tj_status_t *conv_args(const conv_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                              const tj_sinfo_t **x, const tj_sinfo_t **w, tj_dtype_t *dtype, const tj_sinfo_t **out) {
  const char *op = k->op;
  int nd = k->nsp + 2;
  *out = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 1, "weight", w));
  const tj_attrs_t *attrs = call->call.attrs;
  const char *dl = tj_attrs_get_str(attrs, "data_layout", k->data);
  const char *kl = tj_attrs_get_str(attrs, "kernel_layout", k->kernel);
  const char *ol = tj_attrs_get_str(attrs, "out_layout", dl);
  if (!tj_op_layout_is(dl, k->data) || !tj_op_layout_is(kl, k->kernel) || !tj_op_layout_is(ol, k->data))
    return tj_op_error("%s: unsupported layouts %s/%s/%s", op, dl, kl, ol);
  if ((*x)->tensor.ndim >= 0 && (*x)->tensor.ndim != nd)
    return tj_op_error("%s: data must be %d-D (%s), got %d-D", op, nd, dl, (*x)->tensor.ndim);
  if ((*w)->tensor.ndim >= 0 && (*w)->tensor.ndim != nd)
    return tj_op_error("%s: weight must be %d-D (%s), got %d-D", op, nd, kl, (*w)->tensor.ndim);
  *dtype = tj_op_attr_dtype(attrs, "out_dtype");
  if (tj_dtype_is_void(*dtype)) TJ_RETURN_IF_ERROR(tj_op_common_dtype(op, (*x)->tensor.dtype, (*w)->tensor.dtype, dtype));
  if (!(*x)->tensor.shape || !(*w)->tensor.shape) {
    *out = tj_op_tensor_sinfo(ctx->arena, *dtype, nd, NULL, tj_op_vdevice(*x, *w));
    if (!*out) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  return NULL;
}

static tj_status_t *infer_conv(const conv_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                               const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL, *w = NULL;
  tj_dtype_t dtype;
  TJ_RETURN_IF_ERROR(conv_args(k, ctx, call, &x, &w, &dtype, out));
  if (*out) return NULL;
  const tj_attrs_t *attrs = call->call.attrs;
  const char *dl = tj_attrs_get_str(attrs, "data_layout", k->data);
  const char *kl = tj_attrs_get_str(attrs, "kernel_layout", k->kernel);
  const char *ol = tj_attrs_get_str(attrs, "out_layout", dl);
  int nsp = k->nsp;
  int64_t strides[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, padding[6] = {0};
  tj_op_attr_ints(attrs, "strides", strides, nsp);
  tj_op_attr_ints(attrs, "dilation", dilation, nsp);
  tj_op_attr_ints(attrs, "padding", padding, 2 * nsp);
  int64_t groups = tj_attrs_get_int(attrs, "groups", 1);
  const tj_tir_expr_t *const *xs = x->tensor.shape, *const *ws = w->tensor.shape;
  const tj_tir_expr_t *c = xs[tj_op_layout_pos(dl, 'C')];
  const tj_tir_expr_t *o = ws[tj_op_layout_pos(kl, 'O')], *i = ws[tj_op_layout_pos(kl, 'I')];

  int64_t ov;
  const tj_tir_expr_t *i_groups = tj_tir_binary(ctx->arena, TJ_TIR_MUL, i, tj_tir_i64(ctx->arena, groups));
  if (!i_groups) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", k->op);
  if (tj_op_compare_dims(c, i_groups) == TJ_DIM_DIFFERENT) return channel_error(k, w, kl, c, i, groups);
  if (tj_tir_is_const_int(o, &ov) && ov % groups != 0)
    return tj_op_error("%s: the weight has %lld output channels, which groups %lld does not divide", k->op,
                       (long long)ov, (long long)groups);

  const tj_tir_expr_t *shape[5], *in[3], *kd[3], *od[3];
  bool empty = false;
  for (int s = 0; s < nsp; s++) {
    in[s] = xs[tj_op_layout_pos(dl, k->spatial[s])];
    kd[s] = ws[tj_op_layout_pos(kl, k->spatial[s])];
    od[s] = conv_out_dim(ctx->arena, in[s], kd[s], padding[s] + padding[s + nsp], dilation[s], strides[s]);
    if (!od[s]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", k->op);
    int64_t v;
    empty = empty || (tj_tir_is_const_int(od[s], &v) && v <= 0);
    shape[tj_op_layout_pos(ol, k->spatial[s])] = od[s];
  }
  if (empty) return empty_error(k, in, kd, padding);
  shape[tj_op_layout_pos(ol, 'N')] = xs[tj_op_layout_pos(dl, 'N')];
  shape[tj_op_layout_pos(ol, 'C')] = o;
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, nsp + 2, shape, tj_op_vdevice(x, w));
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", k->op);
}

static const char *const conv_args_names[] = {"data", "weight"};

#define CONV_OP(ident)                                                                                           \
  static tj_status_t *normalize_##ident(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {   \
    return normalize_conv(&ident##_kind, arena, given, out);                                                    \
  }                                                                                                              \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) { \
    return infer_conv(&ident##_kind, ctx, call, out);                                                           \
  }                                                                                                              \
  const tj_op_def_t tj_op_##ident = {                                                                            \
      .name = "relax.nn." #ident, .script_name = "R.nn." #ident, .min_args = 2, .max_args = 2,                 \
      .mp_policy = TJ_MP_ALWAYS, .normalize_attrs = normalize_##ident, .infer = infer_##ident,                  \
      .arg_names = conv_args_names, .positional_attrs = conv_attrs,                                             \
      .mixed_precision_call = tj_op_mixed_set_out_dtype,                                                        \
  };

CONV_OP(conv1d)
CONV_OP(conv2d)
CONV_OP(conv3d)
