/* FoldConstant's evaluator for the API: the PrimFunc compiled by the JIT (with the
 * module's options and kernel cache) and run once, so that a folded constant is what
 * the kernel would compute at run time (the interpreter rounds float32 differently
 * from a schedule that contracts multiply-adds). Internal. */
#ifndef TJ_API_FOLD_EVAL_H
#define TJ_API_FOLD_EVAL_H

#include "jit/jit.h"
#include "transforms/transforms.h"

typedef struct tj_fold_eval {
  tj_jit_t *jit;
  const tj_jit_options_t *opts;
} tj_fold_eval_t;

/* A tj_prim_eval_fn; `user` is a tj_fold_eval_t. */
tj_status_t *tj_fold_eval_jit(void *user, const char *name, const tj_prim_func_t *f, int n_buffers,
                              void *const *buffers);

#endif
