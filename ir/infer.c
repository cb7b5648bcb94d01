/* STUB: replaced by struct-info inference. */
#include "ir/op.h"
tj_status_t *tj_rx_infer_sinfo(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out_sinfo) {
  tj_call_tir_view_t v;
  if (tj_rx_as_call_tir(e, &v)) return *out_sinfo = v.out_sinfo, NULL;
  if (e->sinfo) return *out_sinfo = e->sinfo, NULL;
  return tj_status_new(TJ_ERR_UNSUPPORTED, "struct info inference is not built yet");
}
const tj_sinfo_t *tj_rx_func_sinfo(tj_arena_t *arena, const tj_rx_func_t *f) { return NULL; }
