/* Pooling (TVM's src/relax/op/nn/pooling.cc): relax.nn.max_pool2d,
 * relax.nn.avg_pool2d, relax.nn.adaptive_avg_pool2d.
 *
 * Layouts: any layout whose primal axes include N, C, H and W, with optional split
 * sub-axes ("NCHW", "NHWC", "NCHW16c"); out_layout defaults to the layout. All three
 * are kFollow. */
#include <ctype.h>
#include <string.h>

#include "ir/op/common.h"

/* Axis positions of H and W in a layout string and its number of axes ("NCHW16c" ->
 * 5 axes, H at 2, W at 3); false when the layout is not a pooling layout. */
static bool pool_layout(const char *layout, int *ndim, int *h, int *w) {
  int n = 0;
  *h = *w = -1;
  bool seen[26] = {false};
  for (const char *p = layout; *p;) {
    if (isdigit((unsigned char)*p)) {
      while (isdigit((unsigned char)*p)) p++;
      if (!islower((unsigned char)*p)) return false;
      p++;
      n++;
      continue;
    }
    if (islower((unsigned char)*p)) {
      p++;
      n++;
      continue;
    }
    if (!isupper((unsigned char)*p) || seen[*p - 'A']) return false;
    seen[*p - 'A'] = true;
    if (*p == 'H') *h = n;
    if (*p == 'W') *w = n;
    p++;
    n++;
  }
  *ndim = n;
  return *h >= 0 && *w >= 0 && seen['N' - 'A'] && seen['C' - 'A'] && n <= TJ_OP_MAX_NDIM;
}

static tj_status_t *read_layouts(const char *op, const tj_attrs_t *given, const char **layout, const char **out_layout) {
  int n, h, w;
  TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "layout", "NCHW", layout));
  if (!pool_layout(*layout, &n, &h, &w))
    return tj_op_error("%s: layout \"%s\" is not supported; it needs N, C, H and W (e.g. NCHW, NHWC, NCHW16c)", op,
                       *layout);
  const tj_attr_value_t *v = tj_attrs_get(given, "out_layout");
  if (!v || v->kind == TJ_ATTR_NONE) *out_layout = *layout;
  else TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "out_layout", *layout, out_layout));
  if (!pool_layout(*out_layout, &n, &h, &w))
    return tj_op_error("%s: out_layout \"%s\" is not supported; it needs N, C, H and W", op, *out_layout);
  return NULL;
}

/* ---------------- max_pool2d / avg_pool2d ---------------- */

/* Canonical attrs (TVM's print order): pool_size, strides, dilation [int64 x2],
 * padding [int64 x4: top, left, bottom, right], ceil_mode, count_include_pad bool,
 * layout, out_layout STR. */
static const char *const pool2d_attrs[] = {"pool_size", "strides", "dilation", "padding", "ceil_mode",
                                           "count_include_pad", "layout", "out_layout", NULL};

static tj_status_t *read_pair(const char *op, const char *key, const tj_attrs_t *given, int64_t out[2]) {
  int n;
  int64_t v[4];
  TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, key, 4, v, &n));
  if (n == 0) v[0] = v[1] = 1;
  else if (n == 1) v[1] = v[0];
  else if (n != 2) return tj_op_error("%s: '%s' needs 1 or 2 values, got %d", op, key, n);
  if (v[0] < 1 || v[1] < 1)
    return tj_op_error("%s: '%s' values must be >= 1, got [%lld, %lld]", op, key, (long long)v[0], (long long)v[1]);
  out[0] = v[0];
  out[1] = v[1];
  return NULL;
}

static tj_status_t *normalize_pool2d(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                     const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, pool2d_attrs));
  int64_t pool[2], strides[2], dilation[2], padding[4] = {0, 0, 0, 0};
  int n;
  bool ceil_mode, count_include_pad;
  const char *layout, *out_layout;
  TJ_RETURN_IF_ERROR(read_pair(op, "pool_size", given, pool));
  TJ_RETURN_IF_ERROR(read_pair(op, "strides", given, strides));
  TJ_RETURN_IF_ERROR(read_pair(op, "dilation", given, dilation));
  TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, "padding", 4, padding, &n));
  if (n == 1) padding[1] = padding[2] = padding[3] = padding[0];
  else if (n == 2) padding[2] = padding[0], padding[3] = padding[1];
  else if (n != 0 && n != 4) return tj_op_error("%s: 'padding' needs 1, 2 or 4 values, got %d", op, n);
  for (int i = 0; i < 4; i++)
    if (padding[i] < 0) return tj_op_error("%s: 'padding' values must be >= 0, got %lld", op, (long long)padding[i]);
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "ceil_mode", false, &ceil_mode));
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "count_include_pad", false, &count_include_pad));
  TJ_RETURN_IF_ERROR(read_layouts(op, given, &layout, &out_layout));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "pool_size", tj_op_int_list(arena, 2, pool, TJ_I64));
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, 2, strides, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, 2, dilation, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 4, padding, TJ_I64));
  tj_attr_builder_add(&b, "ceil_mode", tj_attr_bool(ceil_mode));
  tj_attr_builder_add(&b, "count_include_pad", tj_attr_bool(count_include_pad));
  tj_attr_builder_add(&b, "layout", tj_attr_str(tj_arena_strdup(arena, layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *normalize_max_pool2d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_pool2d("max_pool2d", arena, given, out);
}

static tj_status_t *normalize_avg_pool2d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_pool2d("avg_pool2d", arena, given, out);
}

/* floor((in + pads - dil*(k-1) - 1 [+ stride-1]) / stride) + 1 */
static const tj_tir_expr_t *pool_out_dim(tj_arena_t *a, const tj_tir_expr_t *in, int64_t k, int64_t pads, int64_t dil,
                                         int64_t stride, bool ceil_mode) {
  int64_t extra = pads - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t iv;
  if (tj_tir_is_const_int(in, &iv)) {
    int64_t num = iv + extra;
    return tj_tir_i64(a, (num < 0 ? -1 : num / stride) + 1);
  }
  const tj_tir_expr_t *num = tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, extra));
  const tj_tir_expr_t *q = stride == 1 ? num : tj_tir_binary(a, TJ_TIR_FLOOR_DIV, num, tj_tir_i64(a, stride));
  return tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_ADD, q, tj_tir_i64(a, 1)));
}

/* The output shape: `shape` laid out as `layout`, re-ordered into `out_layout` (the
 * two have the same axes). */
static tj_status_t *relayout(const char *op, const char *layout, const char *out_layout, int ndim,
                             const tj_tir_expr_t *const *in, const tj_tir_expr_t **out) {
  if (strcmp(layout, out_layout) == 0) {
    memcpy(out, in, sizeof in[0] * (size_t)ndim);
    return NULL;
  }
  /* Only primal-letter permutations ("NCHW" -> "NHWC"). */
  if ((int)strlen(layout) != ndim || (int)strlen(out_layout) != ndim)
    return tj_op_error("%s: cannot convert layout %s to %s", op, layout, out_layout);
  for (int i = 0; i < ndim; i++) {
    const char *p = strchr(layout, out_layout[i]);
    if (!p) return tj_op_error("%s: cannot convert layout %s to %s", op, layout, out_layout);
    out[i] = in[p - layout];
  }
  return NULL;
}

static tj_status_t *infer_pool2d(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                 const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", &x));
  const tj_attrs_t *attrs = call->call.attrs;
  const char *layout = tj_attrs_get_str(attrs, "layout", "NCHW");
  const char *out_layout = tj_attrs_get_str(attrs, "out_layout", layout);
  int ndim, h, w;
  if (!pool_layout(layout, &ndim, &h, &w)) return tj_op_error("%s: unsupported layout \"%s\"", op, layout);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != ndim)
    return tj_op_error("%s: data must be %d-D (layout %s), got %d-D", op, ndim, layout, x->tensor.ndim);
  if (!x->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice), NULL;
  int64_t pool[2] = {1, 1}, strides[2] = {1, 1}, dilation[2] = {1, 1}, padding[4] = {0, 0, 0, 0};
  tj_op_attr_ints(attrs, "pool_size", pool, 2);
  tj_op_attr_ints(attrs, "strides", strides, 2);
  tj_op_attr_ints(attrs, "dilation", dilation, 2);
  tj_op_attr_ints(attrs, "padding", padding, 4);
  bool ceil_mode = tj_attrs_get_int(attrs, "ceil_mode", 0) != 0;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM], *oshape[TJ_OP_MAX_NDIM];
  memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
  shape[h] = pool_out_dim(ctx->arena, x->tensor.shape[h], pool[0], padding[0] + padding[2], dilation[0], strides[0],
                          ceil_mode);
  shape[w] = pool_out_dim(ctx->arena, x->tensor.shape[w], pool[1], padding[1] + padding[3], dilation[1], strides[1],
                          ceil_mode);
  if (!shape[h] || !shape[w]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  int64_t oh, ow;
  if ((tj_tir_is_const_int(shape[h], &oh) && oh <= 0) || (tj_tir_is_const_int(shape[w], &ow) && ow <= 0))
    return tj_op_error("%s: the output would be empty: the padded input is smaller than the dilated %lldx%lld window",
                       op, (long long)pool[0], (long long)pool[1]);
  TJ_RETURN_IF_ERROR(relayout(op, layout, out_layout, ndim, shape, oshape));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, oshape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static tj_status_t *infer_max_pool2d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return infer_pool2d("max_pool2d", ctx, call, out);
}

static tj_status_t *infer_avg_pool2d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return infer_pool2d("avg_pool2d", ctx, call, out);
}

static const char *const pool_args[] = {"data"};

const tj_op_def_t tj_op_max_pool2d = {
    .name = "relax.nn.max_pool2d", .script_name = "R.nn.max_pool2d", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_max_pool2d, .infer = infer_max_pool2d,
    .arg_names = pool_args, .positional_attrs = pool2d_attrs,
};

const tj_op_def_t tj_op_avg_pool2d = {
    .name = "relax.nn.avg_pool2d", .script_name = "R.nn.avg_pool2d", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_avg_pool2d, .infer = infer_avg_pool2d,
    .arg_names = pool_args, .positional_attrs = pool2d_attrs,
};

/* ---------------- adaptive_avg_pool2d ---------------- */

/* Canonical attrs: output_size [int64 x2] or NONE (keep H and W), layout, out_layout STR. */
static const char *const adaptive_attrs[] = {"output_size", "layout", "out_layout", NULL};

static tj_status_t *normalize_adaptive(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  const char *op = "adaptive_avg_pool2d";
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, adaptive_attrs));
  tj_attr_builder_t b = {0};
  const tj_attr_value_t *v = tj_attrs_get(given, "output_size");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
    tj_attr_builder_add(&b, "output_size", none);
  } else {
    int64_t size[4];
    int n;
    TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, "output_size", 4, size, &n));
    if (n == 1) size[1] = size[0];
    else if (n != 2) return tj_op_error("%s: 'output_size' needs 1 or 2 values, got %d", op, n);
    if (size[0] < 1 || size[1] < 1)
      return tj_op_error("%s: 'output_size' values must be >= 1, got [%lld, %lld]", op, (long long)size[0],
                         (long long)size[1]);
    tj_attr_builder_add(&b, "output_size", tj_op_int_list(arena, 2, size, TJ_I64));
  }
  const char *layout, *out_layout;
  TJ_RETURN_IF_ERROR(read_layouts(op, given, &layout, &out_layout));
  tj_attr_builder_add(&b, "layout", tj_attr_str(tj_arena_strdup(arena, layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_adaptive(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const char *op = "adaptive_avg_pool2d";
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", &x));
  const tj_attrs_t *attrs = call->call.attrs;
  const char *layout = tj_attrs_get_str(attrs, "layout", "NCHW");
  const char *out_layout = tj_attrs_get_str(attrs, "out_layout", layout);
  int ndim, h, w;
  if (!pool_layout(layout, &ndim, &h, &w)) return tj_op_error("%s: unsupported layout \"%s\"", op, layout);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != ndim)
    return tj_op_error("%s: data must be %d-D (layout %s), got %d-D", op, ndim, layout, x->tensor.ndim);
  if (!x->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM], *oshape[TJ_OP_MAX_NDIM];
  memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
  int64_t size[2];
  if (tj_op_attr_ints(attrs, "output_size", size, 2) == 2) {
    shape[h] = tj_tir_i64(ctx->arena, size[0]);
    shape[w] = tj_tir_i64(ctx->arena, size[1]);
  }
  TJ_RETURN_IF_ERROR(relayout(op, layout, out_layout, ndim, shape, oshape));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, oshape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

const tj_op_def_t tj_op_adaptive_avg_pool2d = {
    .name = "relax.nn.adaptive_avg_pool2d", .script_name = "R.nn.adaptive_avg_pool2d", .min_args = 1,
    .max_args = 1, .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_adaptive, .infer = infer_adaptive,
    .arg_names = pool_args, .positional_attrs = adaptive_attrs,
};
