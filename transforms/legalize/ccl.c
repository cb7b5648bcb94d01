/* LegalizeOps for the collective operators (TVM's python/tvm/relax/transform/legalize_ops/
 * ccl.py): each becomes R.call_dps_packed of the disco runtime function, with the
 * arguments TVM passes (allreduce: the reduction's code as a one-value shape and
 * in_group; allgather: in_group; broadcast_from_worker0: False). scatter_from_worker0
 * first moves the scattered axis to the front (a reshape and a transpose, emitted as
 * bindings) and passes False. */
#include <string.h>

#include "ir/attrs.h"
#include "ir/sinfo.h"
#include "transforms/legalize/legalize.h"

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory"); }

static const tj_rx_expr_t *prim_bool(tj_arena_t *a, bool v) {
  const tj_tir_expr_t *b = tj_tir_bool(a, v);
  const tj_rx_expr_t *e = b ? tj_rx_prim_value(a, b) : NULL;
  const tj_sinfo_t *s = b ? tj_sinfo_prim(a, TJ_BOOL, b) : NULL;
  return e && s ? tj_rx_with_sinfo(a, e, s) : NULL;
}

/* R.call_dps_packed(func, (args...), out_sinfo=out). */
static tj_status_t *dps_packed(tj_arena_t *a, const char *func, int n, const tj_rx_expr_t *const *args,
                               const tj_sinfo_t *out, const tj_rx_expr_t **out_expr) {
  const tj_sinfo_t *fields[4];
  for (int i = 0; i < n; i++)
    if (!args[i] || !(fields[i] = args[i]->sinfo)) return oom();
  const tj_rx_expr_t *tuple = tj_rx_tuple(a, n, args);
  const tj_sinfo_t *ts = tj_sinfo_tuple(a, n, fields);
  tuple = tuple && ts ? tj_rx_with_sinfo(a, tuple, ts) : NULL;
  const tj_rx_expr_t *callee = tj_rx_extern_func(a, func);
  if (!tuple || !callee) return oom();
  const tj_rx_expr_t *call_args[2] = {callee, tuple};
  const tj_rx_expr_t *call = tj_rx_call(a, tj_rx_op(a, "relax.call_dps_packed"), 2, call_args, NULL, 1, &out);
  *out_expr = call ? tj_rx_with_sinfo(a, call, out) : NULL;
  return *out_expr ? NULL : oom();
}

static bool attr_bool(const tj_rx_expr_t *call, const char *key, bool dflt) {
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, key);
  return v && v->kind == TJ_ATTR_INT ? v->i != 0 : dflt;
}

tj_status_t *tj_legalize_ccl_allreduce(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  static const char *const op_types[] = {"sum", "prod", "min", "max", "avg"};
  tj_arena_t *a = ctx->arena;
  const tj_attr_value_t *op = tj_attrs_get(call->call.attrs, "op_type");
  int code = -1;
  for (int i = 0; op && op->kind == TJ_ATTR_STR && i < 5; i++)
    if (!strcmp(op->s, op_types[i])) code = i;
  if (code < 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "LegalizeOps: allreduce: unsupported reduction '%s'; supported: sum, prod, min, max, avg",
                         op && op->kind == TJ_ATTR_STR ? op->s : "?");
  const tj_tir_expr_t *c = tj_tir_i64(a, code);
  const tj_rx_expr_t *shape = c ? tj_rx_shape_expr(a, 1, &c) : NULL;
  const tj_sinfo_t *ss = c ? tj_sinfo_shape(a, 1, &c) : NULL;
  const tj_rx_expr_t *args[3] = {call->call.args[0], shape && ss ? tj_rx_with_sinfo(a, shape, ss) : NULL,
                                 prim_bool(a, attr_bool(call, "in_group", true))};
  return dps_packed(a, "runtime.disco.allreduce", 3, args, call->call.args[0]->sinfo, out_expr);
}

tj_status_t *tj_legalize_ccl_allgather(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  const tj_sinfo_t *s = call->sinfo;
  /* TVM asserts a known shape; without one the call stays. */
  if (!s || s->kind != TJ_SINFO_TENSOR || !s->tensor.shape) return *out_expr = NULL, NULL;
  const tj_rx_expr_t *args[2] = {call->call.args[0], prim_bool(ctx->arena, attr_bool(call, "in_group", true))};
  return dps_packed(ctx->arena, "runtime.disco.allgather", 2, args, s, out_expr);
}

tj_status_t *tj_legalize_ccl_broadcast_from_worker0(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                    const tj_rx_expr_t **out_expr) {
  const tj_rx_expr_t *args[2] = {call->call.args[0], prim_bool(ctx->arena, false)};
  return dps_packed(ctx->arena, "runtime.disco.broadcast_from_worker0", 2, args, call->call.args[0]->sinfo,
                    out_expr);
}

/* A tensor struct info on the input's virtual device (TVM passes vdevice along). */
static const tj_sinfo_t *tensor_on(tj_arena_t *a, tj_dtype_t dtype, int n, const tj_tir_expr_t *const *shape,
                                   const char *vdevice) {
  const tj_sinfo_t *s = tj_sinfo_tensor(a, dtype, n, shape);
  if (!s || !vdevice) return s;
  tj_sinfo_t *c = TJ_ARENA_NEW(a, tj_sinfo_t);
  if (!c) return NULL;
  *c = *s;
  c->tensor.vdevice = vdevice;
  return c;
}

/* TVM's _transpose_for_ccl: x reshaped so that `axis` splits into (num_workers, rest),
 * then (unless axis is 0) transposed to bring num_workers first; both are emitted as
 * bindings (topi.reshape and topi.transpose through the reshape and permute_dims
 * legalizations, the PrimFuncs TVM's emit_te makes). Declines (NULL *out_var) when the
 * split dim is symbolic; an indivisible dim is an error, as TVM's assert. */
static tj_status_t *transpose_for_ccl(tj_lg_ctx_t *ctx, const tj_rx_expr_t *x, int axis, int64_t k,
                                      const tj_rx_expr_t **out_var) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = x->sinfo;
  int n = xs->tensor.ndim;
  int64_t dim;
  *out_var = NULL;
  if (!tj_tir_is_const_int(xs->tensor.shape[axis], &dim) || n + 1 > TJ_LG_MAX_ITERS) return NULL;
  if (dim % k != 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "LegalizeOps: scatter_from_worker0: dim %d of the input (%lld) is not divisible by "
                         "num_workers (%lld)", axis, (long long)dim, (long long)k);
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0, j = 0; i < n; i++) {
    if (i != axis) {
      shape[j++] = xs->tensor.shape[i];
      continue;
    }
    shape[j++] = tj_tir_i64(a, k);
    shape[j++] = tj_tir_i64(a, dim / k);
  }
  const tj_sinfo_t *rs = tj_sinfo_tensor(a, xs->tensor.dtype, n + 1, shape);
  const tj_rx_expr_t *se = tj_rx_shape_expr(a, n + 1, shape);
  se = se ? tj_rx_with_sinfo(a, se, tj_sinfo_shape(a, n + 1, shape)) : NULL;
  const tj_rx_expr_t *rargs[2] = {x, se};
  const tj_rx_expr_t *reshape = se && rs ? tj_rx_call(a, tj_rx_op(a, "relax.reshape"), 2, rargs, NULL, 0, NULL) : NULL;
  reshape = reshape ? tj_rx_with_sinfo(a, reshape, rs) : NULL;
  if (!reshape) return oom();
  const tj_rx_expr_t *lowered = NULL, *var = NULL;
  TJ_RETURN_IF_ERROR(tj_legalize_reshape(ctx, reshape, &lowered));
  if (!lowered) return NULL;
  TJ_RETURN_IF_ERROR(tj_lg_emit(ctx, lowered, NULL, &var));
  if (axis == 0) return *out_var = var, NULL;
  tj_attr_value_t *order = TJ_ARENA_ARRAY(a, tj_attr_value_t, n + 1);
  const tj_tir_expr_t *tshape[TJ_LG_MAX_ITERS];
  if (!order) return oom();
  for (int i = 0; i <= n; i++) {
    int src = i == 0 ? axis : i <= axis ? i - 1 : i;
    order[i] = (tj_attr_value_t){.kind = TJ_ATTR_INT, .dtype = TJ_I64, .i = src};
    tshape[i] = shape[src];
  }
  tj_attr_value_t axes = {.kind = TJ_ATTR_LIST, .list = {n + 1, order}};
  const tj_attrs_t *attrs = tj_attrs_set(a, NULL, "axes", axes);
  const tj_rx_expr_t *transpose = attrs ? tj_rx_call(a, tj_rx_op(a, "relax.permute_dims"), 1, &var, attrs, 0, NULL) : NULL;
  const tj_sinfo_t *ts = tj_sinfo_tensor(a, xs->tensor.dtype, n + 1, tshape);
  transpose = transpose && ts ? tj_rx_with_sinfo(a, transpose, ts) : NULL;
  if (!transpose) return oom();
  TJ_RETURN_IF_ERROR(tj_legalize_permute_dims(ctx, transpose, &lowered));
  if (!lowered) return NULL;
  return tj_lg_emit(ctx, lowered, NULL, out_var);
}

/* R.call_dps_packed("runtime.disco.scatter_from_worker0", (transposed, False)) whose
 * result is the transposed shape without its leading num_workers. */
tj_status_t *tj_legalize_ccl_scatter_from_worker0(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                  const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_rx_expr_t *x = call->call.args[0];
  const tj_sinfo_t *xs = x->sinfo;
  int64_t k = tj_attrs_get_int(call->call.attrs, "num_workers", 0), axis = tj_attrs_get_int(call->call.attrs, "axis", 0);
  if (!tj_sinfo_is_tensor(xs) || !xs->tensor.shape || axis < 0 || axis >= xs->tensor.ndim || k <= 0) return NULL;
  const tj_rx_expr_t *moved = NULL;
  TJ_RETURN_IF_ERROR(transpose_for_ccl(ctx, x, (int)axis, k, &moved));
  if (!moved) return NULL;
  const tj_sinfo_t *ms = moved->sinfo;
  const tj_sinfo_t *os = tensor_on(a, xs->tensor.dtype, ms->tensor.ndim - 1, ms->tensor.shape + 1, xs->tensor.vdevice);
  if (!os) return oom();
  const tj_rx_expr_t *args[2] = {moved, prim_bool(a, false)};
  return dps_packed(a, "runtime.disco.scatter_from_worker0", 2, args, os, out_expr);
}
