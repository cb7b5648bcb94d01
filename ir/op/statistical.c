/* Reductions and scans (TVM's src/relax/op/tensor/statistical.cc): relax.sum, mean,
 * max, min, prod, variance, std (attrs axis: Optional[Array[int]], keepdims: bool)
 * and relax.cumsum, cumprod (axis: Optional[int], dtype, exclusive).
 *
 * None of them registers a mixed-precision policy (kNever), and the reductions do not
 * check for float: the mean of an int tensor is an integer mean, as in TVM. */
#include "ir/op/common.h"

static const char *const data_args[] = {"x"};

/* ---------------- sum, mean, max, min, prod, variance, std ---------------- */

/* Canonical attrs: axis NONE or [int64 ...] (an int becomes a list), keepdims bool. */
static const char *const reduce_attrs[] = {"axis", "keepdims", NULL};

static tj_status_t *normalize_reduce(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                     const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, reduce_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, op, given, "axis", true, TJ_I64));
  bool keepdims;
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "keepdims", false, &keepdims));
  tj_attr_builder_add(&b, "keepdims", tj_attr_bool(keepdims));
  return tj_attr_builder_finish(arena, &b, out);
}

/* Marks the reduced axes (all of them for axis=None); an out-of-range or repeated
 * axis is an error, as in TVM's NormalizeAxes. */
static tj_status_t *reduced_axes(const char *op, const tj_attrs_t *attrs, int ndim, bool *reduced) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, "axis");
  if (!v || v->kind != TJ_ATTR_LIST) {
    for (int i = 0; i < ndim; i++) reduced[i] = true;
    return NULL;
  }
  for (int i = 0; i < v->list.n; i++) {
    int ax;
    TJ_RETURN_IF_ERROR(tj_op_axis(op, v->list.items[i].i, ndim, &ax));
    if (reduced[ax]) return tj_op_error("%s: axis %d appears twice in axis; list each axis once", op, ax);
    reduced[ax] = true;
  }
  return NULL;
}

/* TVM's InferStructInfoStatistical. */
static tj_status_t *infer_reduce(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                 const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  const tj_attrs_t *attrs = call->call.attrs;
  const tj_attr_value_t *axis = tj_attrs_get(attrs, "axis");
  bool all = !axis || axis->kind != TJ_ATTR_LIST;
  bool keepdims = tj_attrs_get_int(attrs, "keepdims", 0) != 0;
  int ndim = x->tensor.ndim;
  tj_dtype_t dt = x->tensor.dtype;
  const char *vdev = x->tensor.vdevice;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  if (ndim < 0) {
    /* Unknown rank: only "everything, no keepdims" has a known (0-d) result. */
    *out = tj_op_tensor_sinfo(ctx->arena, dt, all && !keepdims ? 0 : -1, shape, vdev);
    return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  bool reduced[TJ_OP_MAX_NDIM] = {false};
  TJ_RETURN_IF_ERROR(reduced_axes(op, attrs, ndim, reduced));
  int n = 0;
  for (int i = 0; i < ndim; i++) {
    if (reduced[i] && !keepdims) continue;
    shape[n++] = reduced[i] ? tj_tir_i64(ctx->arena, 1) : (x->tensor.shape ? x->tensor.shape[i] : NULL);
  }
  /* Without the input shape, only all-ones (axis=None, keepdims) or () are known. */
  bool known = x->tensor.shape || (all && keepdims) || n == 0;
  *out = tj_op_tensor_sinfo(ctx->arena, dt, n, known ? shape : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

#define REDUCE_OP(ident)                                                                                   \
  static tj_status_t *normalize_##ident(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) { \
    return normalize_reduce(#ident, arena, given, out);                                                    \
  }                                                                                                        \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                   \
                                    const tj_sinfo_t **out) {                                               \
    return infer_reduce(#ident, ctx, call, out);                                                           \
  }                                                                                                        \
  const tj_op_def_t tj_op_##ident = {                                                                      \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 1, .max_args = 1,                   \
      .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_##ident, .infer = infer_##ident,              \
      .arg_names = data_args, .positional_attrs = reduce_attrs,                                            \
  };

REDUCE_OP(sum)
REDUCE_OP(mean)
REDUCE_OP(max)
REDUCE_OP(min)
REDUCE_OP(prod)
REDUCE_OP(variance)
REDUCE_OP(std)

/* ---------------- cumsum, cumprod ---------------- */

/* Canonical attrs (ScanopAttrs print order): axis NONE or int, dtype (void = data's),
 * exclusive bool (the Python wrapper passes None, read as False). */
static const char *const scan_attrs[] = {"axis", "dtype", "exclusive", NULL};
static const char *const scan_args[] = {"data"};

static tj_status_t *normalize_scan(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                   const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, scan_attrs));
  tj_attr_builder_t b = {0};
  const tj_attr_value_t *v = tj_attrs_get(given, "axis");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
    tj_attr_builder_add(&b, "axis", none);
  } else {
    int64_t axis;
    TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "axis", 0, &axis));
    tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  }
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(tj_op_read_dtype(op, given, "dtype", &dt));
  tj_attr_builder_add(&b, "dtype", tj_op_dtype_attr(dt));
  bool exclusive;
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, "exclusive", false, &exclusive));
  tj_attr_builder_add(&b, "exclusive", tj_attr_bool(exclusive));
  return tj_attr_builder_finish(arena, &b, out);
}

/* prod(shape), constants folded (symbolic dims stay a product, as TVM prints it). */
static const tj_tir_expr_t *element_count(tj_arena_t *a, int n, const tj_tir_expr_t *const *dims) {
  const tj_tir_expr_t *p = NULL;
  int64_t acc = 1;
  for (int i = 0; i < n; i++) {
    int64_t v;
    if (tj_tir_is_const_int(dims[i], &v)) acc *= v;
    else p = p ? tj_tir_binary(a, TJ_TIR_MUL, p, dims[i]) : dims[i];
  }
  if (!p) return tj_tir_i64(a, acc);
  return acc == 1 ? p : tj_tir_binary(a, TJ_TIR_MUL, p, tj_tir_i64(a, acc));
}

/* TVM's InferStructInfoScan: axis=None flattens to 1-D; the dtype attr overrides. */
static tj_status_t *infer_scan(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                               const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", &x));
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "dtype");
  if (tj_dtype_is_void(dt)) dt = x->tensor.dtype;
  const tj_attr_value_t *axis = tj_attrs_get(call->call.attrs, "axis");
  const char *vdev = x->tensor.vdevice;
  if (axis && axis->kind == TJ_ATTR_INT) {
    int ax;
    if (x->tensor.ndim >= 0) TJ_RETURN_IF_ERROR(tj_op_axis(op, axis->i, x->tensor.ndim, &ax));
    *out = tj_op_tensor_sinfo(ctx->arena, dt, x->tensor.ndim, x->tensor.shape, vdev);
    return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  const tj_tir_expr_t *len = x->tensor.shape ? element_count(ctx->arena, x->tensor.ndim, x->tensor.shape) : NULL;
  *out = tj_op_tensor_sinfo(ctx->arena, dt, 1, len ? &len : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

#define SCAN_OP(ident)                                                                                     \
  static tj_status_t *normalize_##ident(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) { \
    return normalize_scan(#ident, arena, given, out);                                                      \
  }                                                                                                        \
  static tj_status_t *infer_##ident(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,                   \
                                    const tj_sinfo_t **out) {                                               \
    return infer_scan(#ident, ctx, call, out);                                                             \
  }                                                                                                        \
  const tj_op_def_t tj_op_##ident = {                                                                      \
      .name = "relax." #ident, .script_name = "R." #ident, .min_args = 1, .max_args = 1,                   \
      .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_##ident, .infer = infer_##ident,              \
      .arg_names = scan_args, .positional_attrs = scan_attrs, .dtypes = "any",                             \
      .notes = "LegalizeOps keeps it; DispatchSortScan (before LegalizeOps, as in TVM's build) lowers it to "  \
               "topi." #ident "'s serial scan per row, rows in parallel",                                    \
  };

SCAN_OP(cumsum)
SCAN_OP(cumprod)
