/* DispatchSortScan (TVM's python/tvm/relax/backend/dispatch_sort_scan.py): the sort and
 * scan ops, which LegalizeOps keeps, become call_tir of the TOPI kernel for the call's
 * target. TVM's build pipeline runs it right before LegalizeOps. On CPU:
 *   relax.cumsum / relax.cumprod → topi.cumsum / topi.cumprod (transforms/legalize/scan.c).
 * sort, argsort and topk dispatch on CPU to TOPI externs that call the packed functions
 * tvm.contrib.sort.*, which tvmjit does not have: tvmjit lowers them to its own TIR
 * (transforms/legalize/sorting.c). A call whose shape is unknown is kept (TVM raises). */
#include "transforms/legalize/legalize.h"
#include "transforms/transforms.h"

tj_status_t *tj_dispatch_sort_scan(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  static const tj_legalizer_t table[] = {
      {"relax.cumsum", tj_dispatch_cumsum},
      {"relax.cumprod", tj_dispatch_cumprod},
      {"relax.sort", tj_dispatch_sort},
      {"relax.argsort", tj_dispatch_argsort},
      {"relax.topk", tj_dispatch_topk},
  };
  const tj_legalize_options_t opts = {
      .n_custom = (int)(sizeof table / sizeof table[0]), .custom = table, .only_custom = true};
  return tj_legalize_ops_with(ctx, in, &opts, out);
}
