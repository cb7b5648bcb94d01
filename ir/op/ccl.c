/* The collective communication operators (TVM's src/relax/op/ccl/ccl.cc): allreduce,
 * allgather and broadcast_from_worker0. They run across the workers of a disco session;
 * LegalizeOps turns them into calls of the runtime's `runtime.disco.*` packed functions,
 * which tvmjit (one process) does not provide, so a legalized model parses, infers and
 * prints but does not run. */
#include <string.h>

#include "ir/op/common.h"
#include "ir/sinfo.h"

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory"); }

static tj_attr_value_t bool_attr(bool v) { return (tj_attr_value_t){.kind = TJ_ATTR_INT, .dtype = TJ_BOOL, .i = v}; }

/* ---------------- allreduce ---------------- */

static const char *const allreduce_attrs[] = {"op_type", "in_group", NULL};

/* AllReduceAttrs: op_type (one of sum, prod, min, max, avg; LegalizeOps checks the name,
 * as TVM does), in_group (default True). */
static tj_status_t *normalize_allreduce(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("allreduce", given, allreduce_attrs));
  const char *op_type;
  bool in_group;
  TJ_RETURN_IF_ERROR(tj_op_read_str("allreduce", given, "op_type", "sum", &op_type));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("allreduce", given, "in_group", true, &in_group));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "op_type", (tj_attr_value_t){.kind = TJ_ATTR_STR, .s = op_type});
  tj_attr_builder_add(&b, "in_group", bool_attr(in_group));
  return tj_attr_builder_finish(arena, &b, out);
}

/* TVM's InferStructInfoAllReduce (and BroadcastFromZero): the input's struct info. */
static tj_status_t *infer_same_as_input(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const char *op = strrchr(call->call.callee->op.name, '.') + 1;
  return tj_op_tensor_arg(op, call, 0, "x", out);
}

static const char *const x_arg[] = {"x"};

const tj_op_def_t tj_op_ccl_allreduce = {
    .name = "relax.ccl.allreduce", .script_name = "R.ccl.allreduce", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_allreduce, .infer = infer_same_as_input,
    .arg_names = x_arg, .positional_attrs = allreduce_attrs,
    .notes = "legalizes to runtime.disco.allreduce; not run (one process)",
};

/* ---------------- allgather ---------------- */

static const char *const allgather_attrs[] = {"num_workers", "in_group", NULL};

/* AllGatherAttrs: num_workers (required), in_group (default True). */
static tj_status_t *normalize_allgather(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("allgather", given, allgather_attrs));
  if (!tj_attrs_get(given, "num_workers")) return tj_op_error("allgather: needs num_workers");
  int64_t num_workers;
  bool in_group;
  TJ_RETURN_IF_ERROR(tj_op_read_int("allgather", given, "num_workers", 0, &num_workers));
  TJ_RETURN_IF_ERROR(tj_op_read_bool("allgather", given, "in_group", true, &in_group));
  if (num_workers <= 0) return tj_op_error("allgather: num_workers must be positive, got %lld", (long long)num_workers);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "num_workers", (tj_attr_value_t){.kind = TJ_ATTR_INT, .dtype = TJ_I32, .i = num_workers});
  tj_attr_builder_add(&b, "in_group", bool_attr(in_group));
  return tj_attr_builder_finish(arena, &b, out);
}

/* TVM's InferStructInfoAllGather: axis 0 grows num_workers times. */
static tj_status_t *infer_allgather(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("allgather", call, 0, "x", &x));
  if (!x->tensor.shape || x->tensor.ndim < 1) return *out = x, NULL;
  int64_t k;
  tj_op_read_int("allgather", call->call.attrs, "num_workers", 1, &k);
  int n = x->tensor.ndim;
  const tj_tir_expr_t **shape = tj_arena_alloc(ctx->arena, sizeof(void *) * (size_t)n);
  if (!shape) return oom();
  memcpy(shape, x->tensor.shape, sizeof(void *) * (size_t)n);
  const tj_tir_expr_t *kk = tj_tir_i64(ctx->arena, k);
  shape[0] = kk ? tj_op_simplify_dim(ctx->arena, tj_tir_binary(ctx->arena, TJ_TIR_MUL, shape[0], kk)) : NULL;
  if (!shape[0]) return oom();
  const tj_sinfo_t *r = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, shape, x->tensor.vdevice);
  return (*out = r) ? NULL : oom();
}

const tj_op_def_t tj_op_ccl_allgather = {
    .name = "relax.ccl.allgather", .script_name = "R.ccl.allgather", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_allgather, .infer = infer_allgather,
    .arg_names = x_arg, .positional_attrs = allgather_attrs,
    .notes = "legalizes to runtime.disco.allgather; not run (one process)",
};

/* ---------------- broadcast_from_worker0 ---------------- */

const tj_op_def_t tj_op_ccl_broadcast_from_worker0 = {
    .name = "relax.ccl.broadcast_from_worker0", .script_name = "R.ccl.broadcast_from_worker0", .min_args = 1,
    .max_args = 1, .mp_policy = TJ_MP_NEVER, .infer = infer_same_as_input, .arg_names = x_arg,
    .notes = "legalizes to runtime.disco.broadcast_from_worker0; not run (one process)",
};

/* ---------------- scatter_from_worker0 ---------------- */

static const char *const scatter_attrs[] = {"num_workers", "axis", NULL};

/* ScatterCollectiveAttrs: num_workers (required), axis (default 0 here; required by
 * R.dist.redistribute_replica_to_shard, which shares them). */
tj_status_t *tj_op_normalize_scatter_attrs(const char *op, bool axis_required, tj_arena_t *arena,
                                           const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, scatter_attrs));
  if (!tj_attrs_get(given, "num_workers")) return tj_op_error("%s: needs num_workers", op);
  if (axis_required && !tj_attrs_get(given, "axis")) return tj_op_error("%s: needs axis", op);
  int64_t num_workers, axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "num_workers", 0, &num_workers));
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "axis", 0, &axis));
  if (num_workers <= 0) return tj_op_error("%s: num_workers must be positive, got %lld", op, (long long)num_workers);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "num_workers", (tj_attr_value_t){.kind = TJ_ATTR_INT, .dtype = TJ_I32, .i = num_workers});
  tj_attr_builder_add(&b, "axis", (tj_attr_value_t){.kind = TJ_ATTR_INT, .dtype = TJ_I32, .i = axis});
  return tj_attr_builder_finish(arena, &b, out);
}

/* TVM's InferStructInfoScatter / InferStructInfoRtoS: the input must have a known shape;
 * the dim `checked_axis` (scatter checks axis 0 whatever its axis is, as TVM does) must
 * not be provably indivisible by num_workers; the output divides dim `axis` by it
 * (truncating, TVM's div). An axis out of range, where TVM's Array::Set aborts, is an
 * error here. */
tj_status_t *tj_op_infer_scatter(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, bool check_axis0,
                                 const tj_sinfo_t **out) {
  const char *op = strrchr(call->call.callee->op.name, '.') + 1;
  const tj_sinfo_t *x;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  if (!x->tensor.shape || x->tensor.ndim < 1) return tj_op_error("%s: the input needs a known shape of rank >= 1", op);
  int64_t k, axis;
  tj_op_read_int(op, call->call.attrs, "num_workers", 1, &k);
  tj_op_read_int(op, call->call.attrs, "axis", 0, &axis);
  int n = x->tensor.ndim;
  if (axis < 0 || axis >= n) return tj_op_error("%s: axis %lld is out of range for a %d-D input", op, (long long)axis, n);
  int64_t d;
  const tj_tir_expr_t *checked = x->tensor.shape[check_axis0 ? 0 : axis];
  if (k > 0 && tj_tir_is_const_int(checked, &d) && d % k != 0)
    return tj_op_error("%s: dim %lld of the input (%lld) is not divisible by num_workers (%lld)", op,
                       (long long)(check_axis0 ? 0 : axis), (long long)d, (long long)k);
  const tj_tir_expr_t **shape = tj_arena_alloc(ctx->arena, sizeof(void *) * (size_t)n);
  const tj_tir_expr_t *kk = tj_tir_i64(ctx->arena, k);
  if (!shape || !kk) return oom();
  memcpy(shape, x->tensor.shape, sizeof(void *) * (size_t)n);
  shape[axis] = tj_tir_is_const_int(shape[axis], &d)
                    ? tj_tir_i64(ctx->arena, d / k)
                    : tj_op_simplify_dim(ctx->arena, tj_tir_binary(ctx->arena, TJ_TIR_DIV, shape[axis], kk));
  if (!shape[axis]) return oom();
  const tj_sinfo_t *r = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, shape, x->tensor.vdevice);
  return (*out = r) ? NULL : oom();
}

static tj_status_t *normalize_scatter(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_scatter_attrs("scatter_from_worker0", false, arena, given, out);
}

static tj_status_t *infer_scatter(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return tj_op_infer_scatter(ctx, call, true, out);
}

const tj_op_def_t tj_op_ccl_scatter_from_worker0 = {
    .name = "relax.ccl.scatter_from_worker0", .script_name = "R.ccl.scatter_from_worker0", .min_args = 1,
    .max_args = 1, .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_scatter, .infer = infer_scatter,
    .arg_names = x_arg, .positional_attrs = scatter_attrs,
    .notes = "legalizes to reshape, transpose and runtime.disco.scatter_from_worker0; not run (one process)",
};
