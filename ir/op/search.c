/* Search ops (TVM's src/relax/op/tensor/search.cc): relax.where (condition, x1, x2)
 * and relax.argmax / relax.argmin (attrs axis: Optional[int], keepdims: bool).
 * None registers a mixed-precision policy (kNever). */
#include "ir/op/common.h"

/* ---------------- where ---------------- */

static const char *const where_args[] = {"condition", "x1", "x2"};

static tj_status_t *infer_where(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *c = NULL, *x1 = NULL, *x2 = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("where", call, 0, "condition", &c));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("where", call, 1, "x1", &x1));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("where", call, 2, "x2", &x2));
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  if (!tj_dtype_is_void(c->tensor.dtype) && !tj_dtype_eq(c->tensor.dtype, TJ_BOOL))
    return tj_op_error("where: condition must be a bool tensor, got %s; compare first (R.greater(...)) or "
                       "R.astype(condition, \"bool\")", tj_dtype_str(c->tensor.dtype, b0));
  if (!tj_dtype_is_void(x1->tensor.dtype) && !tj_dtype_is_void(x2->tensor.dtype) &&
      !tj_dtype_eq(x1->tensor.dtype, x2->tensor.dtype))
    return tj_op_error("where: x1 is %s but x2 is %s; they must have the same dtype (insert an R.astype)",
                       tj_dtype_str(x1->tensor.dtype, b0), tj_dtype_str(x2->tensor.dtype, b1));
  tj_dtype_t dt = tj_dtype_is_void(x1->tensor.dtype) ? x2->tensor.dtype : x1->tensor.dtype;
  const char *vdev = tj_op_vdevice(x1, x2);
  if (!vdev) vdev = c->tensor.vdevice;
  int n = c->tensor.ndim;
  if (x1->tensor.ndim > n) n = x1->tensor.ndim;
  if (x2->tensor.ndim > n) n = x2->tensor.ndim;
  if (c->tensor.ndim < 0 || x1->tensor.ndim < 0 || x2->tensor.ndim < 0 || !c->tensor.shape || !x1->tensor.shape ||
      !x2->tensor.shape) {
    bool known_ndim = c->tensor.ndim >= 0 && x1->tensor.ndim >= 0 && x2->tensor.ndim >= 0;
    *out = tj_op_tensor_sinfo(ctx->arena, dt, known_ndim ? n : -1, NULL, vdev);
    return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "where: out of memory");
  }
  const tj_tir_expr_t *xs[TJ_OP_MAX_NDIM], *all[TJ_OP_MAX_NDIM];
  bool known1 = false, known2 = false;
  TJ_RETURN_IF_ERROR(tj_op_broadcast("where", ctx->arena, x1->tensor.ndim, x1->tensor.shape, x2->tensor.ndim,
                                     x2->tensor.shape, xs, &known1));
  int nx = x1->tensor.ndim > x2->tensor.ndim ? x1->tensor.ndim : x2->tensor.ndim;
  if (known1)
    TJ_RETURN_IF_ERROR(tj_op_broadcast("where", ctx->arena, c->tensor.ndim, c->tensor.shape, nx, xs, all, &known2));
  *out = tj_op_tensor_sinfo(ctx->arena, dt, n, known1 && known2 ? all : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "where: out of memory");
}

const tj_op_def_t tj_op_where = {
    .name = "relax.where", .script_name = "R.where", .min_args = 3, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_where, .arg_names = where_args,
};

/* ---------------- argmax, argmin ---------------- */

/* Canonical attrs: axis NONE or int (int64), keepdims bool. */
static const char *const arg_attrs[] = {"axis", "keepdims", NULL};
static const char *const arg_args[] = {"x"};

static tj_status_t *normalize_arg(const char *op, tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, arg_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, op, given, "axis", false, TJ_I64));
  bool keepdims;
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "keepdims", false, &keepdims));
  tj_attr_builder_add(&b, "keepdims", tj_attr_bool(keepdims));
  return tj_attr_builder_finish(arena, &b, out);
}

/* TVM's InferStructInfoArgmaxArgmin: the result is int64. */
static tj_status_t *infer_arg(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                              const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  const tj_attr_value_t *axis = tj_attrs_get(call->call.attrs, "axis");
  bool all = !axis || axis->kind != TJ_ATTR_INT;
  bool keepdims = tj_attrs_get_int(call->call.attrs, "keepdims", 0) != 0;
  int ndim = x->tensor.ndim;
  const char *vdev = x->tensor.vdevice;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  int ax = -1;
  if (ndim >= 0 && !all) TJ_RETURN_IF_ERROR(tj_op_axis(op, axis->i, ndim, &ax));
  if (ndim < 0) {
    *out = tj_op_tensor_sinfo(ctx->arena, TJ_I64, all && !keepdims ? 0 : -1, shape, vdev);
    return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  int n = 0;
  for (int i = 0; i < ndim; i++) {
    bool reduced = all || i == ax;
    if (reduced && !keepdims) continue;
    shape[n++] = reduced ? tj_tir_i64(ctx->arena, 1) : (x->tensor.shape ? x->tensor.shape[i] : NULL);
  }
  bool known = x->tensor.shape || (all && keepdims) || n == 0;
  *out = tj_op_tensor_sinfo(ctx->arena, TJ_I64, n, known ? shape : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

#define ARG_OP(ident)                                                                                      \
  static tj_status_t *normalize_##ident(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) { \
    return normalize_arg(#ident, arena, given, out);                                                       \
  }                                                                                                        \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                   \
                                    const tj_sinfo_t **out) {                                               \
    return infer_arg(#ident, ctx, call, out);                                                              \
  }                                                                                                        \
  const tj_op_def_t tj_op_##ident = {                                                                      \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 1, .max_args = 1,                   \
      .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_##ident, .infer = infer_##ident,              \
      .arg_names = arg_args, .positional_attrs = arg_attrs,                                                \
  };

ARG_OP(argmax)
ARG_OP(argmin)
