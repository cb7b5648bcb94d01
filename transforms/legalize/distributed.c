/* LegalizeOps for the distributed operators (TVM's legalize_ops/distributed.py).
 *
 * R.dist.redistribute_replica_to_shard(x, num_workers=k, axis=a): TVM emits
 *   gv  = R.call_pure_packed("runtime.disco.worker_id", sinfo_args=(R.Shape(ndim=-1),))
 *   gv1 = R.match_cast(gv, R.Shape([worker_id]))
 * and slices x along a from worker_id * d // k to (worker_id + 1) * d // k, which
 * LegalizeOps lowers through topi.strided_slice: the PrimFunc `strided_slice` takes
 * worker_id as a trailing int64 parameter (the call's tir_vars) and reads
 * x[.., worker_id * (d / k) + i, ..], the form TVM's simplifier leaves when k divides d.
 * The slice is built here directly rather than as a symbolic R.strided_slice. Declines
 * when d is symbolic or not divisible by k (slices of varying length). */
#include "ir/attrs.h"
#include "ir/sinfo.h"
#include "transforms/legalize/legalize.h"

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory"); }

/* Emits the worker-id query and its match_cast; returns the Relax-level var it defines. */
static tj_status_t *emit_worker_id(tj_lg_ctx_t *ctx, const tj_tir_expr_t **out_worker) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *any_shape = tj_sinfo_shape(a, -1, NULL);
  const tj_rx_expr_t *fn = tj_rx_extern_func(a, "runtime.disco.worker_id");
  const tj_rx_expr_t *query = fn && any_shape ? tj_rx_call(a, tj_rx_op(a, "relax.call_pure_packed"), 1, &fn, NULL, 1,
                                                           &any_shape)
                                              : NULL;
  query = query ? tj_rx_with_sinfo(a, query, any_shape) : NULL;
  const tj_tir_expr_t *worker = tj_tir_var(a, "worker_id", TJ_I64);
  const tj_sinfo_t *one = worker ? tj_sinfo_shape(a, 1, &worker) : NULL;
  if (!query || !one) return oom();
  const tj_rx_expr_t *gv = NULL, *gv1 = NULL;
  TJ_RETURN_IF_ERROR(tj_lg_emit(ctx, query, NULL, &gv));
  TJ_RETURN_IF_ERROR(tj_lg_emit(ctx, gv, one, &gv1));
  *out_worker = worker;
  return NULL;
}

tj_status_t *tj_legalize_dist_redistribute_replica_to_shard(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                            const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  int64_t k = tj_attrs_get_int(call->call.attrs, "num_workers", 0), d;
  int axis;
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS || k <= 0 ||
      !tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", 0), xs->tensor.ndim, &axis) ||
      !tj_tir_is_const_int(xs->tensor.shape[axis], &d) || d % k != 0)
    return NULL;
  const tj_tir_expr_t *worker = NULL;
  TJ_RETURN_IF_ERROR(emit_worker_id(ctx, &worker));
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "strided_slice", NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = i == axis ? tj_tir_i64(a, d / k) : x->shape[i];
  const tj_buffer_t *out = tj_lg_output(&te, "T_strided_slice_with_axes", x->dtype, n, oshape);
  const tj_tir_expr_t *w = tj_lg_shape_expr(&te, worker);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_strided_slice_with_axes", n, oshape, "i");
  if (te.failed || !out) return tj_lg_te_finish(&te, "strided_slice", NULL, out_expr);
  for (int i = 0; i < n; i++) idx[i] = i == axis ? tj_lg_add(a, tj_lg_mul(a, w, tj_tir_i64(a, d / k)), st.iv[i]) : st.iv[i];
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, tj_lg_load(a, x, n, idx)));
  const tj_tir_expr_t *rshape[TJ_LG_MAX_ITERS]; /* the result's shape in main's terms */
  for (int i = 0; i < n; i++) rshape[i] = i == axis ? oshape[i] : xs->tensor.shape[i];
  const tj_sinfo_t *os = tj_sinfo_tensor(a, x->dtype, n, rshape);
  return tj_lg_te_finish(&te, "strided_slice", tj_lg_call_sinfo(call, os), out_expr);
}
