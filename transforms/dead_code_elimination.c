/* STUB: replaced by the pass implementation. */
#include "transforms/transforms.h"
static tj_status_t *not_built(const char *name) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "pass %s is not built yet", name);
}
tj_status_t *tj_dead_code_elimination(const tj_pass_context_t *ctx, const tj_module_t *in,
                                      const tj_module_t **out) { return not_built("DeadCodeElimination"); }
