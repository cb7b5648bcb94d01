/* The call operators (TVM's src/relax/op/op.cc): relax.call_tir. */
#include "ir/op/common.h"

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
