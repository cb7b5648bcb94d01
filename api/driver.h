/* The one path from TVMScript to running code: parse -> verify -> passes -> compile.
 * The public API (api/tvmjit.c), the tvmjit tool and the benches all go through it, so
 * a pipeline means the same thing everywhere (e.g. how --mixed-precision combines
 * with --passes). Internal: not part of include/tvmjit.h. */
#ifndef TJ_API_DRIVER_H
#define TJ_API_DRIVER_H

#include <stddef.h>

#include "ir/module.h"
#include "jit/jit.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"
#include "support/arena.h"
#include "support/status.h"
#include "transforms/pass_manager.h"

/* Which passes run, and how they are watched. */
typedef struct tj_driver_passes {
  const char *passes;          /* "none", "default" (also NULL) or a list in TVM's spelling */
  const char *mixed_precision; /* NULL, or "float16" / "float32": ToMixedPrecision first */
  const tj_pass_instruments_t *instruments; /* NULL: none */
  /* BindParams: n_bound > 0 puts BindParams first; a "default" pipeline is then TVM's
   * with FoldConstant (LegalizeOps, AnnotateTIROpPattern, FoldConstant,
   * DeadCodeElimination, FuseOps, FuseTIR). eval runs FoldConstant's kernels. */
  int n_bound;
  const tj_bound_param_t *bound;
  bool bind_skip_unknown;
  tj_prim_eval_fn eval;
  void *eval_user;
  bool fold_no_direct; /* tests: FoldConstant without its direct evaluator */
} tj_driver_passes_t;

/* Parses `text` (`length` bytes, called `name` in messages), or the file `name` when
 * `text` is NULL. */
tj_status_t *tj_driver_parse(tj_arena_t *arena, const char *name, const char *text, size_t length,
                             tj_module_t **out_module);

/* The pipeline `o` asks for: a bad --mixed-precision value or pass list is
 * TJ_ERR_INVALID_ARGUMENT (a usage error for the tools). */
tj_status_t *tj_driver_pipeline(tj_arena_t *arena, const tj_driver_passes_t *o, tj_pipeline_t *out_pipeline);

/* Runs the pipeline `o` asks for over `in`; `out_report` may be NULL. */
tj_status_t *tj_driver_run_passes(tj_arena_t *arena, const tj_driver_passes_t *o, const tj_module_t *in,
                                  const tj_module_t **out_module, tj_pass_report_t *out_report);

/* Parse, verify (the verifier's messages start with `name`), then the passes.
 * `out_parsed` (may be NULL) receives the verified module before the passes. */
tj_status_t *tj_driver_load(tj_arena_t *arena, const char *name, const char *text, size_t length,
                            const tj_driver_passes_t *o, const tj_module_t **out_module,
                            tj_pass_report_t *out_report, const tj_module_t **out_parsed);

/* JIT-compiles Relax function `function` of a module after the passes; its parallel
 * loops run on `pool` (NULL: the caller's current pool). */
tj_status_t *tj_driver_compile(tj_jit_t *jit, const tj_module_t *m, const char *function,
                               const tj_jit_options_t *opts, tj_thread_pool_t *pool, tj_executable_t **out_exe);

#endif
