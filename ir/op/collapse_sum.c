/* relax.collapse_sum_like and relax.collapse_sum_to (TVM's
 * src/relax/op/tensor/manipulate.cc): sum `data` down to a shape it broadcasts to
 * (the gradient of broadcasting). kNever. */
#include "ir/op/common.h"

/* Checks that data's shape broadcasts to `target` (numpy rules, compared from the
 * right), where both are known; `op` names the caller. */
static tj_status_t *check_collapsible(const char *op, const tj_sinfo_t *x, int nt, const tj_tir_expr_t *const *target) {
  if (x->tensor.ndim < 0 || !x->tensor.shape || !target) return NULL;
  int nd = x->tensor.ndim;
  if (nt > nd)
    return tj_op_error("%s: the target shape has %d dims but data has only %d; it can only remove dims", op, nt, nd);
  for (int j = 0; j < nt; j++) {
    const tj_tir_expr_t *d = x->tensor.shape[nd - nt + j], *t = target[j];
    int64_t tv;
    if (tj_tir_is_const_int(t, &tv) && tv == 1) continue;
    if (tj_op_compare_dims(d, t) == TJ_DIM_DIFFERENT)
      return tj_op_error("%s: data dim %d does not broadcast from target dim %d (it must equal it or the target be 1)",
                         op, nd - nt + j, j);
  }
  return NULL;
}

static tj_status_t *infer_collapse_sum_like(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                            const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL, *t = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("collapse_sum_like", call, 0, "data", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("collapse_sum_like", call, 1, "collapse_target", &t));
  if (t->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(check_collapsible("collapse_sum_like", x, t->tensor.ndim, t->tensor.shape));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, t->tensor.ndim, t->tensor.shape, x->tensor.vdevice);
  return NULL;
}

static const char *const like_args[] = {"data", "collapse_target"};

const tj_op_def_t tj_op_collapse_sum_like = {
    .name = "relax.collapse_sum_like",
    .script_name = "R.collapse_sum_like",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_NEVER,
    .infer = infer_collapse_sum_like,
    .arg_names = like_args,
};

/* The script's shape (a tuple of ints or a ShapeExpr) becomes a ShapeExpr. */
static tj_status_t *canonicalize_collapse_sum_to(const tj_infer_ctx_t *ctx, int n_args, const tj_rx_expr_t **args) {
  (void)n_args;
  const tj_rx_expr_t *s = args[1];
  if (s->kind != TJ_RX_TUPLE) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_tir_expr_t *dims[TJ_OP_MAX_NDIM];
  if (s->tuple.n > TJ_OP_MAX_NDIM) return tj_op_error("collapse_sum_to: more than %d dimensions", TJ_OP_MAX_NDIM);
  for (int i = 0; i < s->tuple.n; i++) {
    const tj_rx_expr_t *f = s->tuple.fields[i];
    int64_t c;
    if (f->kind != TJ_RX_PRIM_VALUE || !tj_dtype_is_int(f->prim_value.value->dtype))
      return tj_op_error("collapse_sum_to: the shape must be a tuple of integers, entry %d is not", i);
    dims[i] = tj_tir_is_const_int(f->prim_value.value, &c) ? tj_tir_i64(a, c) : f->prim_value.value;
  }
  const tj_rx_expr_t *e =
      tj_rx_with_sinfo(a, tj_rx_shape_expr(a, s->tuple.n, dims), tj_sinfo_shape(a, s->tuple.n, dims));
  if (!e) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "collapse_sum_to: out of memory");
  args[1] = e;
  return NULL;
}

static tj_status_t *infer_collapse_sum_to(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("collapse_sum_to", call, 0, "data", &x));
  const tj_rx_expr_t *shape = call->call.args[1];
  const tj_sinfo_t *ss = shape->sinfo;
  if (!ss || ss->kind != TJ_SINFO_SHAPE)
    return tj_op_error("collapse_sum_to: the second argument must be a shape, e.g. R.collapse_sum_to(x, (2, 1))");
  TJ_RETURN_IF_ERROR(check_collapsible("collapse_sum_to", x, ss->shape.ndim, ss->shape.values));
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ss->shape.ndim, ss->shape.values, x->tensor.vdevice);
  return NULL;
}

static const char *const to_args[] = {"data", "shape"};

const tj_op_def_t tj_op_collapse_sum_to = {
    .name = "relax.collapse_sum_to",
    .script_name = "R.collapse_sum_to",
    .min_args = 2,
    .max_args = 2,
    .mp_policy = TJ_MP_NEVER,
    .infer = infer_collapse_sum_to,
    .arg_names = to_args,
    .canonicalize_args = canonicalize_collapse_sum_to,
};
