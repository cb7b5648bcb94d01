/* STUB: each pass moves to its own file (to_mixed_precision.c, legalize_ops.c, ...) and
 * its stub here is deleted by the helper who writes it. */
#include "transforms/transforms.h"
static tj_status_t *not_built(const char *name) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "pass %s is not built yet", name);
}
void tj_pass_context_init(tj_pass_context_t *ctx, tj_arena_t *arena) {
  ctx->arena = arena;
  ctx->opt_level = 2;
  ctx->fuse_max_depth = 256;
}
tj_status_t *tj_to_mixed_precision(const tj_pass_context_t *ctx, const tj_module_t *in, const char *out_dtype,
                                   int n_fp16_inputs, const char *const *fp16_input_names,
                                   const tj_module_t **out) { return not_built("ToMixedPrecision"); }
tj_status_t *tj_legalize_ops(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  return not_built("LegalizeOps");
}
tj_status_t *tj_annotate_tir_op_pattern(const tj_pass_context_t *ctx, const tj_module_t *in,
                                        const tj_module_t **out) { return not_built("AnnotateTIROpPattern"); }
tj_status_t *tj_fuse_ops(const tj_pass_context_t *ctx, const tj_module_t *in, int fuse_opt_level,
                         const tj_module_t **out) { return not_built("FuseOps"); }
tj_status_t *tj_fuse_tir(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  return not_built("FuseTIR");
}
tj_status_t *tj_dead_code_elimination(const tj_pass_context_t *ctx, const tj_module_t *in,
                                      const tj_module_t **out) { return not_built("DeadCodeElimination"); }
