/* relax.scatter_elements (TVM's src/relax/op/tensor/manipulate.cc, ONNX ScatterElements):
 * data, indices and updates of one rank; the result is data's struct info. */
#include <string.h>

#include "ir/op/common.h"

/* Canonical attrs: axis int (default 0), reduction str (default "update"). No
 * mixed-precision policy is registered: kNever. */
static const char *const scatter_attrs[] = {"axis", "reduction", NULL};
static const char *const scatter_args[] = {"data", "indices", "updates"};
static const char *const reductions[] = {"update", "add", "mul", "mean", "min", "max"};

static tj_status_t *normalize_scatter(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("scatter_elements", given, scatter_attrs));
  int64_t axis;
  const char *red;
  TJ_RETURN_IF_ERROR(tj_op_read_int("scatter_elements", given, "axis", 0, &axis));
  TJ_RETURN_IF_ERROR(tj_op_read_str("scatter_elements", given, "reduction", "update", &red));
  bool known = false;
  for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++) known |= strcmp(red, reductions[i]) == 0;
  /* TOPI raises on any other reduction; rejecting it here names the attribute. */
  if (!known)
    return tj_op_error("scatter_elements: reduction '%s' is not one of update, add, mul, mean, min, max", red);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  tj_attr_builder_add(&b, "reduction", tj_attr_str(tj_arena_strdup(arena, red)));
  return tj_attr_builder_finish(arena, &b, out);
}

/* TVM's checks, in its order: ranks, dtypes, integer indices, provably different shapes. */
static tj_status_t *check_scatter(const tj_sinfo_t *d, const tj_sinfo_t *i, const tj_sinfo_t *u) {
  char b1[TJ_DTYPE_BUFSIZE], b2[TJ_DTYPE_BUFSIZE];
  if (i->tensor.ndim >= 0 && u->tensor.ndim >= 0) {
    if (d->tensor.ndim != i->tensor.ndim)
      return tj_op_error("scatter_elements: data and indices must have the same rank, got data %d-d, indices %d-d",
                         d->tensor.ndim, i->tensor.ndim);
    if (i->tensor.ndim != u->tensor.ndim)
      return tj_op_error("scatter_elements: indices and updates must have the same rank, got indices %d-d, "
                         "updates %d-d", i->tensor.ndim, u->tensor.ndim);
  }
  if (!tj_dtype_is_void(d->tensor.dtype) && !tj_dtype_is_void(u->tensor.dtype) &&
      !tj_dtype_eq(d->tensor.dtype, u->tensor.dtype))
    return tj_op_error("scatter_elements: data and updates must have the same dtype, got data %s, updates %s",
                       tj_dtype_str(d->tensor.dtype, b1), tj_dtype_str(u->tensor.dtype, b2));
  if (!tj_dtype_is_void(i->tensor.dtype) && !tj_dtype_is_int(i->tensor.dtype))
    return tj_op_error("scatter_elements: indices must have an integer dtype, got %s",
                       tj_dtype_str(i->tensor.dtype, b1));
  if (i->tensor.shape && u->tensor.shape)
    for (int k = 0; k < i->tensor.ndim; k++) {
      int64_t a, c;
      if (tj_tir_is_const_int(i->tensor.shape[k], &a) && tj_tir_is_const_int(u->tensor.shape[k], &c) && a != c)
        return tj_op_error("scatter_elements: indices and updates must have the same shape, they differ in dim %d "
                           "(%lld vs %lld)", k, (long long)a, (long long)c);
    }
  return NULL;
}

static tj_status_t *infer_scatter(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *d = NULL, *i = NULL, *u = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("scatter_elements", call, 0, "data", &d));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("scatter_elements", call, 1, "indices", &i));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("scatter_elements", call, 2, "updates", &u));
  if (d->tensor.ndim < 0)
    return *out = tj_op_tensor_sinfo(ctx->arena, d->tensor.dtype, -1, NULL, d->tensor.vdevice), NULL;
  TJ_RETURN_IF_ERROR(check_scatter(d, i, u));
  if (d->tensor.ndim > 0) {
    int ax;
    TJ_RETURN_IF_ERROR(tj_op_axis("scatter_elements", tj_attrs_get_int(call->call.attrs, "axis", 0), d->tensor.ndim,
                                  &ax));
  }
  *out = tj_op_tensor_sinfo(ctx->arena, d->tensor.dtype, d->tensor.ndim, d->tensor.shape, d->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "scatter_elements: out of memory");
}

const tj_op_def_t tj_op_scatter_elements = {
    .name = "relax.scatter_elements", .script_name = "R.scatter_elements", .min_args = 3, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_scatter, .infer = infer_scatter,
    .arg_names = scatter_args, .positional_attrs = scatter_attrs, .dtypes = "any (int indices)",
    .notes = "a negative index is wrapped once (+dim) as TOPI does; an index still outside [0, dim) updates "
             "TOPI's flat offset if that lies inside the tensor, else nothing (TVM writes out of bounds); mean is "
             "(old + new) / 2 pairwise as TOPI, floats only",
};
