/* R.collapse_sum_like / R.collapse_sum_to → topi.collapse_sum(data, target shape)
 * (`collapse_sum`): one reduction block `<data>_red` writing the output over the
 * target's dims (loops ax<j>), summing over k<d> for each data dim d that is
 * leading (absent from the target) or has target extent 1 while data's is not 1.
 * Only data is passed to the PrimFunc (the target contributes its shape). */
#include "transforms/legalize/legalize.h"

static bool is_one(const tj_tir_expr_t *e) {
  int64_t v;
  return tj_tir_is_const_int(e, &v) && v == 1;
}

static tj_status_t *legalize_collapse_sum(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]), *os = call->sinfo;
  if (call->call.n_args != 2 || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os)) return NULL;
  int nd = xs->tensor.ndim, nt = os->tensor.ndim, lead = nd - nt;
  if (lead < 0 || nd + nt > TJ_LG_MAX_ITERS) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "collapse_sum", NULL, out_expr);
  const tj_tir_expr_t *tshape[TJ_LG_MAX_ITERS], *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  bool reduced[TJ_LG_MAX_ITERS];
  int n = 0;
  for (int j = 0; j < nt; j++) {
    tshape[j] = tj_lg_shape_expr(&te, os->tensor.shape[j]);
    ext[n] = tshape[j], kinds[n] = TJ_ITER_SPATIAL, names[n++] = tj_arena_printf(a, "ax%d", j);
  }
  for (int d = 0; d < nd; d++) {
    reduced[d] = d < lead || (is_one(tshape[d - lead]) && !is_one(x->shape[d]));
    if (reduced[d]) ext[n] = x->shape[d], kinds[n] = TJ_ITER_REDUCE, names[n++] = tj_arena_printf(a, "k%d", d);
  }
  const char *name = tj_arena_printf(a, "%s_red", x->name);
  const tj_buffer_t *out = tj_lg_output(&te, name, x->dtype, nt, tshape);
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, name, n, ext, kinds, names);
  if (te.failed || !out) return tj_lg_te_finish(&te, "collapse_sum", NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0, r = nt; d < nd; d++) idx[d] = reduced[d] ? st.iv[r++] : st.iv[d - lead];
  const tj_tir_expr_t *sum = tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, out, nt, st.iv), tj_lg_load(a, x, nd, idx));
  tj_lg_stage_end(&te, &st, tj_lg_store(a, out, nt, st.iv, tj_lg_zero(a, x->dtype)),
                  tj_lg_store(a, out, nt, st.iv, sum));
  return tj_lg_te_finish(&te, "collapse_sum", os, out_expr);
}

tj_status_t *tj_legalize_collapse_sum_like(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_collapse_sum(ctx, call, out_expr);
}

tj_status_t *tj_legalize_collapse_sum_to(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_collapse_sum(ctx, call, out_expr);
}
