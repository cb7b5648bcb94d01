/* relax.dynamic_strided_slice (TVM's src/relax/op/tensor/index.cc): strided_slice whose
 * begin, end and strides are int64 tensors read at run time, so the result has x's rank
 * and dtype but no known shape. */
#include "ir/op/common.h"

/* begin, end or strides: a 1-D int64 (or unknown dtype) tensor of static length ndim. */
static tj_status_t *check_index_tensor(const tj_rx_expr_t *call, int i, const char *what, int ndim) {
  const tj_sinfo_t *s = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("dynamic_strided_slice", call, i, what, &s));
  if (s->tensor.ndim != 1)
    return tj_op_error("dynamic_strided_slice: %s must be a 1-D tensor (one value per axis), got %d-D", what,
                       s->tensor.ndim);
  int64_t n;
  if (!s->tensor.shape || !tj_tir_is_const_int(s->tensor.shape[0], &n))
    return tj_op_error("dynamic_strided_slice: %s must have a known length", what);
  if (n != ndim)
    return tj_op_error("dynamic_strided_slice: %s has %lld values but x has %d axes", what, (long long)n, ndim);
  char b[TJ_DTYPE_BUFSIZE];
  if (!tj_dtype_is_void(s->tensor.dtype) && !tj_dtype_eq(s->tensor.dtype, TJ_I64))
    return tj_op_error("dynamic_strided_slice: %s must be int64, got %s", what, tj_dtype_str(s->tensor.dtype, b));
  return NULL;
}

static tj_status_t *infer_dynamic_strided_slice(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                                const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("dynamic_strided_slice", call, 0, "x", &x));
  int ndim = x->tensor.ndim;
  if (ndim >= 0) {
    /* TVM only warns when x's rank is unknown: the tensors cannot be checked then. */
    TJ_RETURN_IF_ERROR(check_index_tensor(call, 1, "begin", ndim));
    TJ_RETURN_IF_ERROR(check_index_tensor(call, 2, "end", ndim));
    TJ_RETURN_IF_ERROR(check_index_tensor(call, 3, "strides", ndim));
  }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "dynamic_strided_slice: out of memory");
}

static const char *const dynamic_strided_slice_args[] = {"x", "begin", "end", "strides"};

const tj_op_def_t tj_op_dynamic_strided_slice = {
    .name = "relax.dynamic_strided_slice", .script_name = "R.dynamic_strided_slice", .min_args = 4, .max_args = 4,
    .mp_policy = TJ_MP_NEVER, .infer = infer_dynamic_strided_slice, .arg_names = dynamic_strided_slice_args,
    .dtypes = "any",
    .notes = "legalized as TVM (a shape function, then the slice); the runtime refuses its "
             "data-dependent shape (UNSUPPORTED). As in TVM, end before begin gives a negative length "
             "and a negative begin is not wrapped by the kernel",
};
