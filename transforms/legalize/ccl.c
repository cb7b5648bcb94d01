/* LegalizeOps for the collective operators (TVM's python/tvm/relax/transform/legalize_ops/
 * ccl.py): each becomes R.call_dps_packed of the disco runtime function, with the
 * arguments TVM passes (allreduce: the reduction's code as a one-value shape and
 * in_group; allgather: in_group; broadcast_from_worker0: False). */
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
