/* Sorting (TVM's src/relax/op/tensor/sorting.cc): relax.sort, relax.argsort, relax.topk.
 * LegalizeOps keeps all three; DispatchSortScan lowers them (transforms/legalize/sorting.c).
 * No mixed-precision policy is registered (kNever). */
#include <string.h>

#include "ir/op/common.h"

static const char *const sort_args[] = {"data"};

static tj_status_t *data_arg(const char *op, const tj_rx_expr_t *call, const char *axis_key, const tj_sinfo_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "data", out));
  const tj_sinfo_t *x = *out;
  int ax;
  /* TVM checks no axis here (topi fails later); naming it at inference is clearer */
  if (x->tensor.ndim > 0)
    TJ_RETURN_IF_ERROR(tj_op_axis(op, tj_attrs_get_int(call->call.attrs, axis_key, -1), x->tensor.ndim, &ax));
  if (x->tensor.ndim == 0) return tj_op_error("%s: data must have at least one dimension", op);
  return NULL;
}

/* Canonical attrs shared by the three: axis int (-1), descending / largest bool, dtype. */
static tj_status_t *add_axis_flag(const char *op, tj_attr_builder_t *b, const tj_attrs_t *given, const char *flag,
                                  bool dflt) {
  int64_t axis;
  bool f;
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "axis", -1, &axis));
  TJ_RETURN_IF_ERROR(tj_op_read_bool(op, given, flag, dflt, &f));
  tj_attr_builder_add(b, "axis", tj_attr_int(axis));
  tj_attr_builder_add(b, flag, tj_attr_bool(f));
  return NULL;
}

/* ---------------- sort ---------------- */

static const char *const sort_attrs[] = {"axis", "descending", NULL};

static tj_status_t *normalize_sort(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("sort", given, sort_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(add_axis_flag("sort", &b, given, "descending", false));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_sort(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(data_arg("sort", call, "axis", &x));
  (void)ctx;
  *out = x;
  return NULL;
}

#define SORT_NOTES                                                                                          \
  "tvmjit's TIR (TVM calls tvm.contrib.sort.*): a stable all-pairs rank per row, O(n^2) per row, rows in " \
  "parallel; NaN sorts after every number (first when descending)"

const tj_op_def_t tj_op_sort = {
    .name = "relax.sort", .script_name = "R.sort", .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_sort, .infer = infer_sort, .arg_names = sort_args, .positional_attrs = sort_attrs,
    .dtypes = "int, float", .notes = SORT_NOTES,
};

/* ---------------- argsort ---------------- */

static const char *const argsort_attrs[] = {"axis", "descending", "dtype", NULL};

static tj_status_t *normalize_with_dtype(const char *op, const char *const *names, const char *flag, bool dflt,
                                         tj_arena_t *arena, const tj_attrs_t *given, tj_attr_builder_t *b) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, names));
  TJ_RETURN_IF_ERROR(add_axis_flag(op, b, given, flag, dflt));
  tj_dtype_t dt = TJ_I32; /* the Python wrapper's default "int32" */
  if (tj_attrs_get(given, "dtype")) TJ_RETURN_IF_ERROR(tj_op_read_dtype(op, given, "dtype", &dt));
  (void)arena;
  tj_attr_builder_add(b, "dtype", tj_op_dtype_attr(dt));
  return NULL;
}

static tj_status_t *normalize_argsort(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(normalize_with_dtype("argsort", argsort_attrs, "descending", false, arena, given, &b));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_dtype_t index_dtype(const tj_rx_expr_t *call, const tj_sinfo_t *x) {
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "dtype");
  return tj_dtype_is_void(dt) ? x->tensor.dtype : dt;
}

static tj_status_t *infer_argsort(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(data_arg("argsort", call, "axis", &x));
  *out = tj_op_tensor_sinfo(ctx->arena, index_dtype(call, x), x->tensor.ndim, x->tensor.shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "argsort: out of memory");
}

const tj_op_def_t tj_op_argsort = {
    .name = "relax.argsort", .script_name = "R.argsort", .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_argsort, .infer = infer_argsort, .arg_names = sort_args,
    .positional_attrs = argsort_attrs, .dtypes = "int, float", .notes = SORT_NOTES,
};

/* ---------------- topk ---------------- */

/* Print order (the Python signature): k, axis, ret_type, largest, dtype. */
static const char *const topk_attrs[] = {"k", "axis", "ret_type", "largest", "dtype", NULL};

static tj_status_t *normalize_topk(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  tj_attr_builder_t b = {0};
  int64_t k;
  const char *ret;
  TJ_RETURN_IF_ERROR(tj_op_read_int("topk", given, "k", 1, &k));
  TJ_RETURN_IF_ERROR(tj_op_read_str("topk", given, "ret_type", "both", &ret));
  if (strcmp(ret, "both") != 0 && strcmp(ret, "values") != 0 && strcmp(ret, "indices") != 0)
    return tj_op_error("topk: ret_type '%s' is not one of both, values, indices", ret);
  tj_attr_builder_add(&b, "k", tj_attr_int(k));
  TJ_RETURN_IF_ERROR(normalize_with_dtype("topk", topk_attrs, "largest", true, arena, given, &b));
  tj_attr_builder_add(&b, "ret_type", tj_attr_str(tj_arena_strdup(arena, ret)));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_topk(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(data_arg("topk", call, "axis", &x));
  tj_arena_t *a = ctx->arena;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  const tj_tir_expr_t *const *sp = NULL;
  if (x->tensor.shape && x->tensor.ndim <= TJ_OP_MAX_NDIM) {
    int ax;
    TJ_RETURN_IF_ERROR(tj_op_axis("topk", tj_attrs_get_int(call->call.attrs, "axis", -1), x->tensor.ndim, &ax));
    memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)x->tensor.ndim);
    int64_t k = tj_attrs_get_int(call->call.attrs, "k", 1), d;
    /* TVM writes k as an int32 literal; tvmjit keeps shapes int64 (the value is the same) */
    if (k > 0 && (!tj_tir_is_const_int(shape[ax], &d) || k < d)) shape[ax] = tj_tir_i64(a, k);
    sp = shape;
  }
  const tj_sinfo_t *fields[2] = {
      tj_op_tensor_sinfo(a, x->tensor.dtype, x->tensor.ndim, sp, x->tensor.vdevice),
      tj_op_tensor_sinfo(a, index_dtype(call, x), x->tensor.ndim, sp, x->tensor.vdevice)};
  const tj_attr_value_t *rv = tj_attrs_get(call->call.attrs, "ret_type");
  const char *ret = rv && rv->kind == TJ_ATTR_STR ? rv->s : "both";
  if (strcmp(ret, "values") == 0) *out = fields[0];
  else if (strcmp(ret, "indices") == 0) *out = fields[1];
  else *out = fields[0] && fields[1] ? tj_sinfo_tuple(a, 2, fields) : NULL;
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "topk: out of memory");
}

const tj_op_def_t tj_op_topk = {
    .name = "relax.topk", .script_name = "R.topk", .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_topk, .infer = infer_topk, .arg_names = sort_args, .positional_attrs = topk_attrs,
    .dtypes = "int, float", .notes = SORT_NOTES "; with k < dim it selects instead, O(n*k) per row; k < 1 or k >= dim keeps the whole "
                        "axis",
};
