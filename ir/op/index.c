/* Indexing (TVM's src/relax/op/tensor/index.cc): relax.take, relax.strided_slice. */
#include <string.h>

#include "ir/op/common.h"

/* ---------------- take ---------------- */

/* Canonical attrs: axis int32 or NONE (x must be 1-D). kNever. */
static const char *const take_attrs[] = {"axis", NULL};

static tj_status_t *normalize_take(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("take", given, take_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, "take", given, "axis", false, TJ_I32));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_take(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("take", call, 0, "x", &x));
  const tj_sinfo_t *is = call->call.args[1]->sinfo;
  char b[TJ_DTYPE_BUFSIZE];
  int ind_ndim;
  const tj_tir_expr_t *const *ind_shape = NULL;
  if (is && is->kind == TJ_SINFO_PRIM) {
    if (!tj_dtype_is_int(is->prim.dtype))
      return tj_op_error("take: the index must be an integer, got %s", tj_dtype_str(is->prim.dtype, b));
    ind_ndim = 0;
  } else if (tj_sinfo_is_tensor(is)) {
    if (!tj_dtype_is_void(is->tensor.dtype) && !tj_dtype_is_int(is->tensor.dtype))
      return tj_op_error("take: indices must be an integer tensor, got %s", tj_dtype_str(is->tensor.dtype, b));
    ind_ndim = is->tensor.ndim;
    ind_shape = is->tensor.shape;
  } else {
    return tj_op_error("take: indices must be a tensor or an integer PrimValue");
  }
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  int axis = 0;
  if (x->tensor.ndim >= 0) {
    if (!av || av->kind != TJ_ATTR_INT) {
      if (x->tensor.ndim != 1) return tj_op_error("take: with axis=None the input must be 1-D, got %d-D", x->tensor.ndim);
    } else {
      TJ_RETURN_IF_ERROR(tj_op_axis("take", av->i, x->tensor.ndim, &axis));
    }
  }
  if (x->tensor.ndim < 0 || ind_ndim < 0)
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
  int ndim = x->tensor.ndim - 1 + ind_ndim;
  if (ndim > TJ_OP_MAX_NDIM) return tj_op_error("take: more than %d dimensions", TJ_OP_MAX_NDIM);
  if (!x->tensor.shape || (ind_ndim > 0 && !ind_shape))
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  int n = 0;
  for (int i = 0; i < axis; i++) shape[n++] = x->tensor.shape[i];
  for (int i = 0; i < ind_ndim; i++) shape[n++] = ind_shape[i];
  for (int i = axis + 1; i < x->tensor.ndim; i++) shape[n++] = x->tensor.shape[i];
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "take: out of memory");
}

static const char *const take_args[] = {"x", "indices"};

const tj_op_def_t tj_op_take = {
    .name = "relax.take", .script_name = "R.take", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_take, .infer = infer_take,
    .arg_names = take_args, .positional_attrs = take_attrs,
};

/* ---------------- strided_slice ---------------- */

/* Args: x, axes, begin, end[, strides] (tuples of ints; the parser gives a list of
 * ints as a ShapeExpr). Attr: assume_inbound bool (the Python default False). */
static const char *const strided_slice_attrs[] = {"assume_inbound", NULL};

static tj_status_t *normalize_strided_slice(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("strided_slice", given, strided_slice_attrs));
  bool inbound;
  TJ_RETURN_IF_ERROR(tj_op_read_bool("strided_slice", given, "assume_inbound", false, &inbound));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "assume_inbound", tj_attr_bool(inbound));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_strided_slice(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("strided_slice", call, 0, "x", &x));
  int64_t axes[TJ_OP_MAX_NDIM], begin[TJ_OP_MAX_NDIM], end[TJ_OP_MAX_NDIM], strides[TJ_OP_MAX_NDIM];
  int na = tj_rx_const_int_values(call->call.args[1], axes, TJ_OP_MAX_NDIM);
  int nb = tj_rx_const_int_values(call->call.args[2], begin, TJ_OP_MAX_NDIM);
  int ne = tj_rx_const_int_values(call->call.args[3], end, TJ_OP_MAX_NDIM);
  int ns = na;
  if (call->call.n_args > 4) ns = tj_rx_const_int_values(call->call.args[4], strides, TJ_OP_MAX_NDIM);
  else
    for (int i = 0; i < na; i++) strides[i] = 1;
  if (na < 0 || nb < 0 || ne < 0 || ns < 0 || x->tensor.ndim < 0 || !x->tensor.shape)
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, x->tensor.ndim, NULL, x->tensor.vdevice), NULL;
  if (nb != na || ne != na || ns != na)
    return tj_op_error("strided_slice: axes (%d), begin (%d), end (%d) and strides (%d) must have the same length", na,
                       nb, ne, ns);
  int ndim = x->tensor.ndim;
  bool inbound = tj_attrs_get_int(call->call.attrs, "assume_inbound", 0) != 0;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
  bool seen[TJ_OP_MAX_NDIM] = {false};
  for (int i = 0; i < na; i++) {
    int ax;
    TJ_RETURN_IF_ERROR(tj_op_axis("strided_slice", axes[i], ndim, &ax));
    if (seen[ax]) return tj_op_error("strided_slice: axis %d appears twice in axes", ax);
    seen[ax] = true;
    if (strides[i] == 0) return tj_op_error("strided_slice: stride of axis %d is 0", ax);
    int64_t e;
    if (!tj_tir_is_const_int(x->tensor.shape[ax], &e))
      return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice), NULL;
    int64_t b = begin[i], en = end[i], s = strides[i], len;
    if (inbound) {
      len = s > 0 ? (en - b + s - 1) / s : (b - en + (-s) - 1) / (-s);
    } else if (s > 0) {
      if (b < 0) b += e;
      if (en < 0) en += e;
      b = b < 0 ? 0 : b > e ? e : b;
      en = en < 0 ? 0 : en > e ? e : en;
      len = en > b ? (en - b + s - 1) / s : 0;
    } else {
      if (b < 0) b += e;
      if (en < 0) en += e;
      b = b < -1 ? -1 : b > e - 1 ? e - 1 : b;
      en = en < -1 ? -1 : en > e - 1 ? e - 1 : en;
      len = b > en ? (b - en + (-s) - 1) / (-s) : 0;
    }
    shape[ax] = tj_tir_i64(ctx->arena, len < 0 ? 0 : len);
  }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "strided_slice: out of memory");
}

static const char *const strided_slice_args[] = {"x", "axes", "begin", "end", "strides"};

const tj_op_def_t tj_op_strided_slice = {
    .name = "relax.strided_slice", .script_name = "R.strided_slice", .min_args = 4, .max_args = 5,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_strided_slice, .infer = infer_strided_slice,
    .arg_names = strided_slice_args, .positional_attrs = strided_slice_attrs,
};
