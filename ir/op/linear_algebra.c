/* Linear algebra (TVM's src/relax/op/tensor/linear_algebra.cc): relax.matmul. */
#include "ir/op/common.h"

/* ---------------- matmul ---------------- */

/* Canonical attrs: out_dtype DTYPE (void = the inputs' dtype). kAlways. */
static const char *const matmul_attrs[] = {"out_dtype", NULL};

static tj_status_t *normalize_matmul(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("matmul", given, matmul_attrs));
  tj_dtype_t dtype;
  TJ_RETURN_IF_ERROR(tj_op_read_dtype("matmul", given, "out_dtype", &dtype));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "out_dtype", tj_op_dtype_attr(dtype));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *matmul_reduction_error(const tj_sinfo_t *a, const tj_sinfo_t *b, const tj_tir_expr_t *ka,
                                           const tj_tir_expr_t *kb) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, "matmul: the reduction lengths differ: x1 (");
  tj_op_format_shape(&sb, a->tensor.ndim, a->tensor.shape);
  tj_strbuf_append(&sb, ") has ");
  tj_op_format_dim(&sb, ka);
  tj_strbuf_append(&sb, " columns but x2 (");
  tj_op_format_shape(&sb, b->tensor.ndim, b->tensor.shape);
  tj_strbuf_append(&sb, ") has ");
  tj_op_format_dim(&sb, kb);
  tj_strbuf_append(&sb, " rows");
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "matmul: the reduction lengths differ");
  tj_strbuf_free(&sb);
  return s;
}

static tj_status_t *infer_matmul(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *a = NULL, *b = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("matmul", call, 0, "x1", &a));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("matmul", call, 1, "x2", &b));
  tj_dtype_t dtype = tj_op_attr_dtype(call->call.attrs, "out_dtype");
  if (tj_dtype_is_void(dtype)) TJ_RETURN_IF_ERROR(tj_op_common_dtype("matmul", a->tensor.dtype, b->tensor.dtype, &dtype));
  const char *vdev = tj_op_vdevice(a, b);
  int na = a->tensor.ndim, nb = b->tensor.ndim;
  if (na == 0 || nb == 0) return tj_op_error("matmul: both inputs need at least 1 dimension, got %s", na == 0 ? "a scalar x1" : "a scalar x2");
  if (na < 0 || nb < 0) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, -1, NULL, vdev), NULL;
  bool prepend = na == 1, append = nb == 1;
  int ea = prepend ? 2 : na, eb = append ? 2 : nb;
  int n_out = (ea > eb ? ea : eb) - prepend - append;
  if (!a->tensor.shape || !b->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, dtype, n_out, NULL, vdev), NULL;
  if (n_out > TJ_OP_MAX_NDIM) return tj_op_error("matmul: more than %d dimensions", TJ_OP_MAX_NDIM);
  const tj_tir_expr_t *ka = a->tensor.shape[na - 1];
  const tj_tir_expr_t *kb = b->tensor.shape[append ? 0 : nb - 2];
  if (tj_op_compare_dims(ka, kb) == TJ_DIM_DIFFERENT) return matmul_reduction_error(a, b, ka, kb);
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM + 2];
  bool known = true;
  int n_batch = n_out - (prepend ? 0 : 1) - (append ? 0 : 1);
  int ba = prepend ? 0 : na - 2, bb = append ? 0 : nb - 2;
  TJ_RETURN_IF_ERROR(tj_op_broadcast("matmul", ctx->arena, ba, a->tensor.shape, bb, b->tensor.shape, shape, &known));
  int n = n_batch;
  if (!prepend) shape[n++] = a->tensor.shape[na - 2];
  if (!append) shape[n++] = b->tensor.shape[nb - 1];
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, n_out, known ? shape : NULL, vdev);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "matmul: out of memory");
}

static const char *const matmul_args[] = {"x1", "x2"};

const tj_op_def_t tj_op_matmul = {
    .name = "relax.matmul", .script_name = "R.matmul", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_ALWAYS, .normalize_attrs = normalize_matmul, .infer = infer_matmul,
    .arg_names = matmul_args, .positional_attrs = matmul_attrs, .mixed_precision_call = tj_op_mixed_set_out_dtype,
};
