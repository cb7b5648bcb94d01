/* FoldConstant through the JIT (fold_eval.h). */
#include "api/fold_eval.h"

#include "runtime/kernel.h"
#include "support/alloc.h"

tj_status_t *tj_fold_eval_jit(void *user, const char *name, const tj_prim_func_t *f, int n_buffers,
                              void *const *buffers) {
  const tj_fold_eval_t *ev = user;
  tj_jit_kernel_t k;
  TJ_RETURN_IF_ERROR(tj_jit_compile_prim_func(ev->jit, f, name, ev->opts, &k));
  if (k.n_buffers != n_buffers || k.n_scalars != 0)
    return tj_status_new(TJ_ERR_INTERNAL, "kernel '%s' takes %d buffers and %d scalars, FoldConstant passes %d buffers",
                         name, k.n_buffers, k.n_scalars, n_buffers);
  tj_kernel_t kernel;
  TJ_RETURN_IF_ERROR(tj_kernel_init(&kernel, name, k.fn, k.n_buffers, 0));
  void **argv = tj_calloc((size_t)n_buffers + 1, sizeof *argv);
  if (argv) tj_kernel_call(&kernel, buffers, NULL, argv);
  tj_free(argv);
  tj_kernel_release(&kernel);
  if (!argv) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory running kernel '%s'", name);
  if (tj_kernel_take_alloc_failures() > 0)
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "kernel '%s' could not allocate its scratch memory", name);
  return NULL;
}
