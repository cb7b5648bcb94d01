/* Datatype ops (TVM's src/relax/op/tensor/datatype.cc): relax.astype. */
#include "ir/op/common.h"

/* ---------------- astype ---------------- */

/* Canonical attrs: dtype DTYPE. */
static const char *const astype_attrs[] = {"dtype", NULL};

static tj_status_t *normalize_astype(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("astype", given, astype_attrs));
  tj_dtype_t dtype;
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("astype", given, "dtype", &dtype));
  if (tj_dtype_is_void(dtype)) return tj_op_error("astype: needs a target dtype, e.g. R.astype(x, \"float16\")");
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "dtype", tj_op_dtype_attr(dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_astype(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("astype", call, 0, "the input", &x));
  tj_dtype_t dtype = tj_op_attr_dtype(call->call.attrs, "dtype");
  const tj_sinfo_t *s = tj_op_tensor_sinfo(ctx->arena, dtype, x->tensor.ndim, x->tensor.shape, x->tensor.vdevice);
  if (!s) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "astype: out of memory");
  *out = s;
  return NULL;
}

static const char *const astype_args[] = {"x"};

const tj_op_def_t tj_op_astype = {
    .name = "relax.astype", .script_name = "R.astype", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_astype, .infer = infer_astype,
    .arg_names = astype_args, .positional_attrs = astype_attrs,
};
