/* STUB: replaced by the pass implementation. */
#include "transforms/transforms.h"
static tj_status_t *not_built(const char *name) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "pass %s is not built yet", name);
}
tj_status_t *tj_to_mixed_precision(const tj_pass_context_t *ctx, const tj_module_t *in, const char *out_dtype,
                                   int n_fp16_inputs, const char *const *fp16_input_names,
                                   const tj_module_t **out) { return not_built("ToMixedPrecision"); }
