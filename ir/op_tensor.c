/* Tensor-level ops: relax.call_tir, relax.astype, relax.matmul. */
#include <string.h>

#include "ir/op_common.h"

/* ---------------- call_tir ---------------- */

static tj_status_t *infer_call_tir(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  if (call->call.n_sinfo_args != 1 || !call->call.sinfo_args[0])
    return tj_op_error("call_tir: needs exactly one out_sinfo (a tensor or a list of tensors)");
  *out = call->call.sinfo_args[0];
  return NULL;
}

static const char *const call_tir_args[] = {"gvar", "args", "tir_vars"};

/* The callee is opaque to the pass: it must see exactly the dtypes it was given. */
const tj_op_def_t tj_op_call_tir = {
    .name = "relax.call_tir", .script_name = "R.call_tir", .min_args = 2, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_tir, .arg_names = call_tir_args,
};

/* ---------------- astype ---------------- */

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

/* ---------------- matmul ---------------- */

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

static const tj_rx_expr_t *matmul_mixed(tj_arena_t *arena, const tj_rx_expr_t *call, tj_dtype_t out_dtype) {
  const tj_attrs_t *attrs = tj_attrs_set(arena, call->call.attrs, "out_dtype", tj_op_dtype_attr(out_dtype));
  return attrs ? tj_rx_call(arena, call->call.callee, call->call.n_args, call->call.args, attrs, 0, NULL) : NULL;
}

static const char *const matmul_args[] = {"x1", "x2"};

const tj_op_def_t tj_op_matmul = {
    .name = "relax.matmul", .script_name = "R.matmul", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_ALWAYS, .normalize_attrs = normalize_matmul, .infer = infer_matmul,
    .arg_names = matmul_args, .positional_attrs = matmul_attrs, .mixed_precision_call = matmul_mixed,
};
