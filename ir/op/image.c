/* Image ops (TVM's src/relax/op/image/resize.cc): relax.image.resize2d(data, size).
 * kFollow. Supported here: methods nearest_neighbor and linear; coordinate modes
 * half_pixel, align_corners, asymmetric, pytorch_half_pixel; layouts with one H and
 * one W (NCHW, NHWC, NCHW16c, ...). roi (tf_crop_and_resize) and cubic are refused
 * with a message rather than computed wrongly. */
#include <string.h>

#include "ir/op/common.h"

static const char *const resize_attrs[] = {"roi",
                                           "layout",
                                           "method",
                                           "coordinate_transformation_mode",
                                           "rounding_method",
                                           "cubic_alpha",
                                           "cubic_exclude",
                                           "extrapolation_value",
                                           "out_dtype",
                                           NULL};

static bool one_of(const char *s, const char *const *options) {
  for (int i = 0; options[i]; i++)
    if (strcmp(s, options[i]) == 0) return true;
  return false;
}

/* Dim positions of H and W in a layout such as NCHW16c (digits belong to the next
 * letter); false unless each appears once and the layout has at most 8 dims. */
static bool resize_layout(const char *layout, int *out_ndim, int *out_h, int *out_w) {
  int nd = 0, h = -1, w = -1;
  for (const char *p = layout; *p; p++) {
    if (*p >= '0' && *p <= '9') continue;
    if (*p == 'H') h = h < 0 ? nd : -2;
    if (*p == 'W') w = w < 0 ? nd : -2;
    nd++;
  }
  if (h < 0 || w < 0 || nd > 8) return false;
  *out_ndim = nd, *out_h = h, *out_w = w;
  return true;
}

static tj_status_t *normalize_resize2d(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  static const char *const methods[] = {"nearest_neighbor", "linear", NULL};
  static const char *const modes[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", NULL};
  static const char *const roundings[] = {"",  "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil",
                                          NULL};
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("resize2d", given, resize_attrs));
  const char *layout, *method, *mode, *rounding;
  double alpha, extrapolation;
  int64_t exclude, nd;
  int h, w, ndim;
  tj_dtype_t out_dtype;
  TJ_RETURN_IF_ERROR(tj_op_read_str("resize2d", given, "layout", "NCHW", &layout));
  TJ_RETURN_IF_ERROR(tj_op_read_str("resize2d", given, "method", "linear", &method));
  TJ_RETURN_IF_ERROR(tj_op_read_str("resize2d", given, "coordinate_transformation_mode", "half_pixel", &mode));
  TJ_RETURN_IF_ERROR(tj_op_read_str("resize2d", given, "rounding_method", "round", &rounding));
  TJ_RETURN_IF_ERROR(tj_op_read_float("resize2d", given, "cubic_alpha", -0.5, &alpha));
  TJ_RETURN_IF_ERROR(tj_op_read_int("resize2d", given, "cubic_exclude", 0, &exclude));
  TJ_RETURN_IF_ERROR(tj_op_read_float("resize2d", given, "extrapolation_value", 0.0, &extrapolation));
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("resize2d", given, "out_dtype", &out_dtype));
  if (!resize_layout(layout, &ndim, &h, &w))
    return tj_op_error("resize2d: layout \"%s\" needs exactly one H and one W (e.g. NCHW, NHWC)", layout);
  if (!one_of(method, methods))
    return tj_op_error("resize2d: method \"%s\" is not supported; use \"nearest_neighbor\" or \"linear\"", method);
  if (!one_of(mode, modes))
    return tj_op_error(
        "resize2d: coordinate_transformation_mode \"%s\" is not supported; use half_pixel, "
        "align_corners, asymmetric or pytorch_half_pixel",
        mode);
  if (!one_of(rounding, roundings)) return tj_op_error("resize2d: unknown rounding_method \"%s\"", rounding);
  const tj_attr_value_t *roi = tj_attrs_get(given, "roi");
  if (roi && roi->kind == TJ_ATTR_LIST)
    for (int i = 0; i < roi->list.n; i++)
      if (roi->list.items[i].kind == TJ_ATTR_FLOAT ? roi->list.items[i].f != 0 : roi->list.items[i].i != 0)
        return tj_op_error("resize2d: a non-zero roi (tf_crop_and_resize) is not supported");
  (void)nd;
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "layout", tj_attr_str(tj_arena_strdup(arena, layout)));
  tj_attr_builder_add(&b, "method", tj_attr_str(tj_arena_strdup(arena, method)));
  tj_attr_builder_add(&b, "coordinate_transformation_mode", tj_attr_str(tj_arena_strdup(arena, mode)));
  tj_attr_builder_add(&b, "rounding_method", tj_attr_str(tj_arena_strdup(arena, rounding)));
  tj_attr_value_t a = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = alpha};
  tj_attr_builder_add(&b, "cubic_alpha", a);
  tj_attr_builder_add(&b, "cubic_exclude", tj_attr_int(exclude));
  tj_attr_value_t e = {.kind = TJ_ATTR_FLOAT, .dtype = TJ_F64, .f = extrapolation};
  tj_attr_builder_add(&b, "extrapolation_value", e);
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(out_dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

/* size as a tuple of ints → a ShapeExpr; one int means both sides. */
static tj_status_t *canonicalize_resize2d(const tj_infer_ctx_t *ctx, int n_args, const tj_rx_expr_t **args) {
  (void)n_args;
  const tj_rx_expr_t *s = args[1];
  tj_arena_t *a = ctx->arena;
  const tj_tir_expr_t *dims[2];
  if (s->kind == TJ_RX_PRIM_VALUE) {
    dims[0] = dims[1] = s->prim_value.value;
  } else if (s->kind == TJ_RX_TUPLE && (s->tuple.n == 1 || s->tuple.n == 2)) {
    for (int i = 0; i < 2; i++) {
      const tj_rx_expr_t *f = s->tuple.fields[s->tuple.n == 1 ? 0 : i];
      if (f->kind != TJ_RX_PRIM_VALUE || !tj_dtype_is_int(f->prim_value.value->dtype))
        return tj_op_error("resize2d: size must hold integers");
      dims[i] = f->prim_value.value;
    }
  } else {
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    int64_t c;
    if (tj_tir_is_const_int(dims[i], &c)) dims[i] = tj_tir_i64(a, c);
  }
  const tj_rx_expr_t *e = tj_rx_with_sinfo(a, tj_rx_shape_expr(a, 2, dims), tj_sinfo_shape(a, 2, dims));
  if (!e) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "resize2d: out of memory");
  args[1] = e;
  return NULL;
}

static tj_status_t *infer_resize2d(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("resize2d", call, 0, "data", &x));
  const tj_sinfo_t *ss = call->call.args[1]->sinfo;
  if (!ss || ss->kind != TJ_SINFO_SHAPE || (ss->shape.ndim >= 0 && ss->shape.ndim != 2))
    return tj_op_error("resize2d: size must be a shape of 2 values (height, width), e.g. size=(16, 16)");
  int nd, h, w;
  const char *layout = tj_attrs_get_str(call->call.attrs, "layout", "NCHW");
  if (!resize_layout(layout, &nd, &h, &w)) return tj_op_error("resize2d: bad layout \"%s\"", layout);
  if (x->tensor.ndim >= 0 && x->tensor.ndim != nd)
    return tj_op_error("resize2d: data is %d-D but layout %s has %d dims", x->tensor.ndim, layout, nd);
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "out_dtype");
  if (tj_dtype_is_void(dt)) dt = x->tensor.dtype;
  if (!x->tensor.shape || !ss->shape.values)
    return *out = tj_op_tensor_sinfo(ctx->arena, dt, nd, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *shape[8];
  for (int d = 0; d < nd; d++) shape[d] = x->tensor.shape[d];
  shape[h] = ss->shape.values[0];
  shape[w] = ss->shape.values[1];
  *out = tj_op_tensor_sinfo(ctx->arena, dt, nd, shape, x->tensor.vdevice);
  return NULL;
}

static const char *const resize_args[] = {"data", "size"};

const tj_op_def_t tj_op_resize2d = {
    .name = "relax.image.resize2d",
    .script_name = "R.image.resize2d",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_resize2d,
    .infer = infer_resize2d,
    .arg_names = resize_args,
    .positional_attrs = resize_attrs,
    .canonicalize_args = canonicalize_resize2d,
};
