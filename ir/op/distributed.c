/* The distributed operators (TVM's src/relax/op/distributed/distributed.cc):
 * relax.dist.redistribute_replica_to_shard, a replicated tensor sliced so that worker w
 * keeps part w of `axis`. Its struct info is ScatterCollective's (ccl.c) with the
 * divisibility checked on `axis`; LegalizeOps (transforms/legalize/distributed.c) reads
 * the worker id from the disco runtime, so a legalized model does not run in one
 * process. */
#include "ir/op/common.h"

static const char *const rtos_attrs[] = {"num_workers", "axis", NULL};

static tj_status_t *normalize_rtos(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_scatter_attrs("redistribute_replica_to_shard", true, arena, given, out);
}

static tj_status_t *infer_rtos(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return tj_op_infer_scatter(ctx, call, false, out);
}

static const char *const rtos_args[] = {"input"};

const tj_op_def_t tj_op_dist_redistribute_replica_to_shard = {
    .name = "relax.dist.redistribute_replica_to_shard", .script_name = "R.dist.redistribute_replica_to_shard",
    .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_rtos,
    .infer = infer_rtos, .arg_names = rtos_args, .positional_attrs = rtos_attrs,
    .notes = "legalizes to a strided_slice at runtime.disco.worker_id; not run (one process)",
};
