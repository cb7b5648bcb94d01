/* The driver (driver.h): parse -> verify -> passes -> compile, in one place. */
#include "api/driver.h"

#include <string.h>

#include "ir/text/parse.h"
#include "ir/verify/verify.h"

tj_status_t *tj_driver_parse(tj_arena_t *arena, const char *name, const char *text, size_t length,
                             tj_module_t **out_module) {
  if (text) return tj_parse_module(arena, name ? name : "<string>", text, length, out_module);
  return tj_parse_file(arena, name, out_module);
}

/* "ToMixedPrecision(out_dtype=...)" in front of the pass list ("none" adds nothing). */
static tj_status_t *pipeline_text(tj_arena_t *arena, const tj_driver_passes_t *o, const char **out_text) {
  const char *passes = o->passes ? o->passes : "default";
  if (o->n_bound > 0) {
    /* TVM's pipeline with FoldConstant after AnnotateTIROpPattern; DeadCodeElimination
     * drops the bindings folding left unused, so their constants are not kept. */
    if (strcmp(passes, "default") == 0)
      passes = "LegalizeOps,AnnotateTIROpPattern,FoldConstant,DeadCodeElimination,FuseOps,FuseTIR";
    passes = tj_arena_printf(arena, "BindParams%s%s", strcmp(passes, "none") ? "," : "", strcmp(passes, "none") ? passes : "");
    if (!passes) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  }
  const char *mp = o->mixed_precision;
  if (!mp) return *out_text = passes, NULL;
  if (strcmp(mp, "float16") && strcmp(mp, "float32") && strcmp(mp, "bfloat16"))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "mixed precision '%s': use float32, float16 or bfloat16", mp);
  bool none = strcmp(passes, "none") == 0;
  /* bfloat16: bfloat16 storage, float32 accumulation (bfloat16 sums lose too much: 8 bits) */
  const char *pass = strcmp(mp, "bfloat16") == 0 ? "ToMixedPrecision(out_dtype=\"float32\", storage_dtype=\"bfloat16\")"
                                                 : tj_arena_printf(arena, "ToMixedPrecision(out_dtype=\"%s\")", mp);
  *out_text = pass ? tj_arena_printf(arena, "%s%s%s", pass, none ? "" : ",", none ? "" : passes) : NULL;
  return *out_text ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

tj_status_t *tj_driver_pipeline(tj_arena_t *arena, const tj_driver_passes_t *o, tj_pipeline_t *out_pipeline) {
  const char *text;
  TJ_RETURN_IF_ERROR(pipeline_text(arena, o, &text));
  return tj_pipeline_parse(arena, text, out_pipeline);
}

tj_status_t *tj_driver_run_passes(tj_arena_t *arena, const tj_driver_passes_t *o, const tj_module_t *in,
                                  const tj_module_t **out_module, tj_pass_report_t *out_report) {
  tj_pipeline_t pipeline;
  TJ_RETURN_IF_ERROR(tj_driver_pipeline(arena, o, &pipeline));
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, arena);
  ctx.n_bound_params = o->n_bound;
  ctx.bound_params = o->bound;
  ctx.bind_skip_unknown = o->bind_skip_unknown;
  ctx.eval = o->eval;
  ctx.eval_user = o->eval_user;
  ctx.fold_no_direct = o->fold_no_direct;
  return tj_pipeline_run(&ctx, &pipeline, o->instruments, in, out_module, out_report);
}

tj_status_t *tj_driver_load(tj_arena_t *arena, const char *name, const char *text, size_t length,
                            const tj_driver_passes_t *o, const tj_module_t **out_module,
                            tj_pass_report_t *out_report, const tj_module_t **out_parsed) {
  tj_module_t *parsed = NULL;
  TJ_RETURN_IF_ERROR(tj_driver_parse(arena, name, text, length, &parsed));
  /* Parse errors already start with file:line:col; the verifier's do not. */
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_verify_module(parsed), "%s", name ? name : "<string>"));
  TJ_RETURN_IF_ERROR(tj_driver_run_passes(arena, o, parsed, out_module, out_report));
  if (out_parsed) *out_parsed = parsed;
  return NULL;
}

tj_status_t *tj_driver_compile(tj_jit_t *jit, const tj_module_t *m, const char *function,
                               const tj_jit_options_t *opts, tj_thread_pool_t *pool, tj_executable_t **out_exe) {
  tj_executable_t *exe = NULL;
  /* The instance's pool packs the constant weights (runtime/prepack_set.c): ResNet-18's
   * 57 MB of packed weights are most of the work of a start from the kernel cache. */
  tj_thread_pool_t *previous = tj_thread_pool_set_current(pool);
  tj_status_t *st = tj_jit_compile_module(jit, m, function, opts, &exe);
  tj_thread_pool_set_current(previous);
  TJ_RETURN_IF_ERROR(st);
  tj_executable_set_thread_pool(exe, pool);
  *out_exe = exe;
  return NULL;
}
