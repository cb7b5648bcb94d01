/* Pooling (TVM's src/relax/op/nn/pooling.cc): relax.nn.max_pool1d/2d/3d,
 * relax.nn.avg_pool1d/2d/3d, relax.nn.adaptive_avg_pool1d/2d/3d.
 *
 * One implementation over the number of spatial dims (1: W, 2: H W, 3: D H W), as
 * TVM's Pool1DAttrs/Pool2DAttrs/Pool3DAttrs differ only in that count. Layouts: any
 * layout whose primal axes are N, C and the spatial letters, with optional split
 * sub-axes ("NCHW", "NHWC", "NCHW16c"); out_layout defaults to the layout. All are
 * kFollow. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ir/op/common.h"

/* What tells the 1-, 2- and 3-d variants apart. */
typedef struct pool_kind {
  const char *op;     /* "max_pool2d" */
  int nsp;            /* spatial dims */
  const char *layout; /* default layout: NCW, NCHW, NCDHW */
} pool_kind_t;

static const char *const spatial_letters[4] = {"", "W", "HW", "DHW"};

/* Number of axes of a layout string and the positions of its spatial axes ("NCHW16c",
 * 2 spatial dims -> 5 axes, H at 2, W at 3); false when the layout's primal axes are
 * not exactly N, C and the nsp spatial letters. */
static bool pool_layout(const char *layout, int nsp, int *ndim, int *axes) {
  int n = 0, primal = 0;
  bool seen[26] = {false};
  for (int i = 0; i < nsp; i++) axes[i] = -1;
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
    const char *sp = strchr(spatial_letters[nsp], *p);
    if (sp) axes[sp - spatial_letters[nsp]] = n;
    primal++;
    p++;
    n++;
  }
  *ndim = n;
  for (int i = 0; i < nsp; i++)
    if (axes[i] < 0) return false;
  return primal == nsp + 2 && seen['N' - 'A'] && seen['C' - 'A'] && n <= TJ_OP_MAX_NDIM;
}

static tj_status_t *read_layouts(const pool_kind_t *k, const tj_attrs_t *given, const char **layout,
                                 const char **out_layout) {
  int n, axes[3];
  const char *op = k->op;
  TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "layout", k->layout, layout));
  if (!pool_layout(*layout, k->nsp, &n, axes))
    return tj_op_error("%s: layout \"%s\" is not supported; it needs N, C and %s (e.g. %s)", op, *layout,
                       spatial_letters[k->nsp], k->layout);
  const tj_attr_value_t *v = tj_attrs_get(given, "out_layout");
  if (!v || v->kind == TJ_ATTR_NONE) *out_layout = *layout;
  else TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "out_layout", *layout, out_layout));
  if (!pool_layout(*out_layout, k->nsp, &n, axes))
    return tj_op_error("%s: out_layout \"%s\" is not supported; it needs N, C and %s", op, *out_layout,
                       spatial_letters[k->nsp]);
  return NULL;
}

/* ---------------- max_pool / avg_pool ---------------- */

/* Canonical attrs (TVM's print order): pool_size, strides, dilation [int64 x nsp],
 * padding [int64 x 2*nsp: the befores, then the afters], ceil_mode,
 * count_include_pad bool, layout, out_layout STR. */
static const char *const pool_attrs[] = {"pool_size", "strides", "dilation", "padding", "ceil_mode",
                                         "count_include_pad", "layout", "out_layout", NULL};

/* nsp values >= 1; one value is repeated, none gives 1s. */
static tj_status_t *read_sizes(const char *op, const char *key, const tj_attrs_t *given, int nsp, int64_t *out) {
  int n;
  int64_t v[8];
  TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, key, 8, v, &n));
  if (n != 0 && n != 1 && n != nsp) return tj_op_error("%s: '%s' needs 1 or %d values, got %d", op, key, nsp, n);
  for (int i = 0; i < nsp; i++) {
    out[i] = n == 0 ? 1 : n == 1 ? v[0] : v[i];
    if (out[i] < 1) return tj_op_error("%s: '%s' values must be >= 1, got %lld", op, key, (long long)out[i]);
  }
  return NULL;
}

/* padding: 1 value -> all sides; nsp values -> the same before and after; 2*nsp. */
static tj_status_t *read_padding(const char *op, const tj_attrs_t *given, int nsp, int64_t *out) {
  int n;
  int64_t v[12];
  TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, "padding", 12, v, &n));
  if (n != 0 && n != 1 && n != nsp && n != 2 * nsp)
    return tj_op_error("%s: 'padding' needs 1, %d or %d values, got %d", op, nsp, 2 * nsp, n);
  for (int i = 0; i < 2 * nsp; i++) {
    out[i] = n == 0 ? 0 : n == 1 ? v[0] : n == nsp ? v[i % nsp] : v[i];
    if (out[i] < 0) return tj_op_error("%s: 'padding' values must be >= 0, got %lld", op, (long long)out[i]);
  }
  return NULL;
}

static tj_status_t *normalize_pool(const pool_kind_t *k, tj_arena_t *arena, const tj_attrs_t *given,
                                   const tj_attrs_t **out) {
  const char *op = k->op;
  int nsp = k->nsp;
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, pool_attrs));
  int64_t pool[3], strides[3], dilation[3], padding[6];
  bool ceil_mode, count_include_pad;
  const char *layout, *out_layout;
  TJ_RETURN_IF_ERROR(read_sizes(op, "pool_size", given, nsp, pool));
  TJ_RETURN_IF_ERROR(read_sizes(op, "strides", given, nsp, strides));
  TJ_RETURN_IF_ERROR(read_sizes(op, "dilation", given, nsp, dilation));
  TJ_RETURN_IF_ERROR(read_padding(op, given, nsp, padding));
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "ceil_mode", false, &ceil_mode));
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "count_include_pad", false, &count_include_pad));
  TJ_RETURN_IF_ERROR(read_layouts(k, given, &layout, &out_layout));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "pool_size", tj_op_int_list(arena, nsp, pool, TJ_I64));
  tj_attr_builder_add(&b, "strides", tj_op_int_list(arena, nsp, strides, TJ_I64));
  tj_attr_builder_add(&b, "dilation", tj_op_int_list(arena, nsp, dilation, TJ_I64));
  tj_attr_builder_add(&b, "padding", tj_op_int_list(arena, 2 * nsp, padding, TJ_I64));
  tj_attr_builder_add(&b, "ceil_mode", tj_attr_bool(ceil_mode));
  tj_attr_builder_add(&b, "count_include_pad", tj_attr_bool(count_include_pad));
  tj_attr_builder_add(&b, "layout", tj_attr_str(tj_arena_strdup(arena, layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  return tj_attr_builder_finish(arena, &b, out);
}

tj_status_t *tj_op_normalize_pool2d_attrs(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                          const tj_attrs_t **out) {
  const pool_kind_t k = {op, 2, "NCHW"};
  return normalize_pool(&k, arena, given, out);
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

static tj_status_t *empty_output_error(const char *op, int nsp, const int64_t *pool) {
  char win[64] = "";
  for (int i = 0; i < nsp; i++)
    snprintf(win + strlen(win), sizeof win - strlen(win), "%s%lld", i ? "x" : "", (long long)pool[i]);
  return tj_op_error("%s: the output would be empty: the padded input is smaller than the dilated %s window", op,
                     win);
}

/* The data's struct info checked against the layout: *out_ndim, the spatial axes, and
 * *done set when the shape is unknown (the result then has only ndim). */
static tj_status_t *pool_data(const pool_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                              const tj_sinfo_t **x, int *ndim, int *axes, const tj_sinfo_t **out) {
  const char *op = k->op;
  *out = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", x));
  const char *layout = tj_attrs_get_str(call->call.attrs, "layout", k->layout);
  if (!pool_layout(layout, k->nsp, ndim, axes)) return tj_op_error("%s: unsupported layout \"%s\"", op, layout);
  if ((*x)->tensor.ndim >= 0 && (*x)->tensor.ndim != *ndim)
    return tj_op_error("%s: data must be %d-D (layout %s), got %d-D", op, *ndim, layout, (*x)->tensor.ndim);
  if (!(*x)->tensor.shape) {
    *out = tj_op_tensor_sinfo(ctx->arena, (*x)->tensor.dtype, *ndim, NULL, (*x)->tensor.vdevice);
    if (!*out) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  return NULL;
}

static tj_status_t *finish_shape(const pool_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                 const tj_sinfo_t *x, int ndim, const tj_tir_expr_t *const *shape,
                                 const tj_sinfo_t **out) {
  const tj_attrs_t *attrs = call->call.attrs;
  const char *layout = tj_attrs_get_str(attrs, "layout", k->layout);
  const char *out_layout = tj_attrs_get_str(attrs, "out_layout", layout);
  const tj_tir_expr_t *oshape[TJ_OP_MAX_NDIM];
  TJ_RETURN_IF_ERROR(relayout(k->op, layout, out_layout, ndim, shape, oshape));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, oshape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", k->op);
}

static tj_status_t *infer_pool(const pool_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                               const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  int ndim, axes[3], nsp = k->nsp;
  TJ_RETURN_IF_ERROR(pool_data(k, ctx, call, &x, &ndim, axes, out));
  if (*out) return NULL;
  const tj_attrs_t *attrs = call->call.attrs;
  int64_t pool[3] = {1, 1, 1}, strides[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, padding[6] = {0};
  tj_op_attr_ints(attrs, "pool_size", pool, nsp);
  tj_op_attr_ints(attrs, "strides", strides, nsp);
  tj_op_attr_ints(attrs, "dilation", dilation, nsp);
  tj_op_attr_ints(attrs, "padding", padding, 2 * nsp);
  bool ceil_mode = tj_attrs_get_int(attrs, "ceil_mode", 0) != 0;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
  for (int i = 0; i < nsp; i++) {
    int ax = axes[i];
    shape[ax] = pool_out_dim(ctx->arena, x->tensor.shape[ax], pool[i], padding[i] + padding[i + nsp], dilation[i],
                             strides[i], ceil_mode);
    if (!shape[ax]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", k->op);
    int64_t o;
    if (tj_tir_is_const_int(shape[ax], &o) && o <= 0) return empty_output_error(k->op, nsp, pool);
  }
  return finish_shape(k, ctx, call, x, ndim, shape, out);
}

/* ---------------- adaptive_avg_pool ---------------- */

/* Canonical attrs: output_size [int64 x nsp] or NONE (keep the spatial dims), layout,
 * out_layout STR. */
static const char *const adaptive_attrs[] = {"output_size", "layout", "out_layout", NULL};

static tj_status_t *normalize_adaptive(const pool_kind_t *k, tj_arena_t *arena, const tj_attrs_t *given,
                                       const tj_attrs_t **out) {
  const char *op = k->op;
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, adaptive_attrs));
  tj_attr_builder_t b = {0};
  const tj_attr_value_t *v = tj_attrs_get(given, "output_size");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
    tj_attr_builder_add(&b, "output_size", none);
  } else {
    int64_t size[3];
    TJ_RETURN_IF_ERROR(read_sizes(op, "output_size", given, k->nsp, size));
    tj_attr_builder_add(&b, "output_size", tj_op_int_list(arena, k->nsp, size, TJ_I64));
  }
  const char *layout, *out_layout;
  TJ_RETURN_IF_ERROR(read_layouts(k, given, &layout, &out_layout));
  tj_attr_builder_add(&b, "layout", tj_attr_str(tj_arena_strdup(arena, layout)));
  tj_attr_builder_add(&b, "out_layout", tj_attr_str(tj_arena_strdup(arena, out_layout)));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_adaptive(const pool_kind_t *k, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                   const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  int ndim, axes[3];
  TJ_RETURN_IF_ERROR(pool_data(k, ctx, call, &x, &ndim, axes, out));
  if (*out) return NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
  int64_t size[3];
  if (tj_op_attr_ints(call->call.attrs, "output_size", size, k->nsp) == k->nsp)
    for (int i = 0; i < k->nsp; i++) shape[axes[i]] = tj_tir_i64(ctx->arena, size[i]);
  return finish_shape(k, ctx, call, x, ndim, shape, out);
}

/* ---------------- the nine ops ---------------- */

static const char *const pool_args[] = {"data"};

#define POOL_OP(ident, nsp_, layout_, norm, inf, attrs)                                                          \
  static const pool_kind_t kind_##ident = {#ident, nsp_, layout_};                                              \
  static tj_status_t *normalize_##ident(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {   \
    return norm(&kind_##ident, arena, given, out);                                                              \
  }                                                                                                              \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) { \
    return inf(&kind_##ident, ctx, call, out);                                                                  \
  }                                                                                                              \
  const tj_op_def_t tj_op_##ident = {                                                                            \
      .name = "relax.nn." #ident, .script_name = "R.nn." #ident, .min_args = 1, .max_args = 1,                 \
      .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_##ident, .infer = infer_##ident,                  \
      .arg_names = pool_args, .positional_attrs = attrs,                                                        \
  };

POOL_OP(max_pool1d, 1, "NCW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(max_pool2d, 2, "NCHW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(max_pool3d, 3, "NCDHW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(avg_pool1d, 1, "NCW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(avg_pool2d, 2, "NCHW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(avg_pool3d, 3, "NCDHW", normalize_pool, infer_pool, pool_attrs)
POOL_OP(adaptive_avg_pool1d, 1, "NCW", normalize_adaptive, infer_adaptive, adaptive_attrs)
POOL_OP(adaptive_avg_pool2d, 2, "NCHW", normalize_adaptive, infer_adaptive, adaptive_attrs)
POOL_OP(adaptive_avg_pool3d, 3, "NCDHW", normalize_adaptive, infer_adaptive, adaptive_attrs)
