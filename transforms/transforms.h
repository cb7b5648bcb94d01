/* Everything transforms/ offers: TVM's Relax passes with TVM's names and meaning
 * (docs/semantics.md §1-§5), the pass manager, and TIR lowering for the JIT.
 * Each pass is a plain function from one module to the next; the input is never
 * modified and the output shares unchanged nodes with it. */
#ifndef TJ_TRANSFORMS_TRANSFORMS_H
#define TJ_TRANSFORMS_TRANSFORMS_H

#include "ir/module.h"
#include "support/status.h"

/* One tensor for BindParams, by parameter name; data is dense row-major and borrowed:
 * the constants BindParams makes point at it, so it must outlive every module and
 * executable made from the result. */
typedef struct tj_bound_param {
  const char *name;
  tj_dtype_t dtype;
  int ndim;
  const int64_t *shape;
  const void *data;
  size_t nbytes;
} tj_bound_param_t;

/* Runs PrimFunc `f` (called `name`) on dense buffers, its parameters in order (no
 * scalar parameters): FoldConstant's evaluator. The API plugs in the JIT, so that a
 * folded value is what the compiled kernel computes; NULL = the reference interpreter. */
typedef tj_status_t *(*tj_prim_eval_fn)(void *user, const char *name, const tj_prim_func_t *f, int n_buffers,
                                        void *const *buffers);

typedef struct tj_pass_context {
  tj_arena_t *arena;   /* owns every node the passes create */
  int opt_level;       /* PassContext opt_level; TVM's default 2 */
  int fuse_max_depth;  /* relax.FuseOps.max_depth; default 256 */
  /* BindParams(func_name, params): none by default (the pass is then a no-op, as TVM's
   * with an empty dict). skip_unknown: names that are no parameter of the function are
   * ignored instead of an error (a whole checkpoint given by a tool). */
  const char *bind_function; /* NULL = "main" */
  int n_bound_params;
  const tj_bound_param_t *bound_params;
  bool bind_skip_unknown;
  /* FoldConstant's evaluator (NULL = interpreter) and its user pointer. */
  tj_prim_eval_fn eval;
  void *eval_user;
  /* FoldConstant never evaluates a call directly in C (fold_direct.h), only through
   * eval or the interpreter: tests fold the same constants both ways. */
  bool fold_no_direct;
} tj_pass_context_t;

void tj_pass_context_init(tj_pass_context_t *ctx, tj_arena_t *arena);

/* ToMixedPrecision(out_dtype="float32", fp16_input_names=None, storage_dtype="float16"):
 * storage_dtype (NULL = "float16") is tvmjit's: "bfloat16" stores in bfloat16 instead. */
tj_status_t *tj_to_mixed_precision(const tj_pass_context_t *ctx, const tj_module_t *in, const char *out_dtype,
                                   const char *storage_dtype, int n_fp16_inputs, const char *const *fp16_input_names,
                                   const tj_module_t **out);
/* DispatchSortScan: cumsum/cumprod to their TOPI kernels (TVM runs it before LegalizeOps). */
tj_status_t *tj_dispatch_sort_scan(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
tj_status_t *tj_legalize_ops(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
tj_status_t *tj_annotate_tir_op_pattern(const tj_pass_context_t *ctx, const tj_module_t *in,
                                        const tj_module_t **out);
/* fuse_opt_level -1 = ctx->opt_level. */
tj_status_t *tj_fuse_ops(const tj_pass_context_t *ctx, const tj_module_t *in, int fuse_opt_level,
                         const tj_module_t **out);
tj_status_t *tj_fuse_tir(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
/* DecomposeOpsForInference: batch_norm in its inference form, in plain Relax ops. */
/* BindSymbolicVars: Relax function `function` of `in` with vars[i] (TIR vars of its
 * signature) replaced by values[i] in every struct info and shape it holds, constants
 * folded. Not a pipeline row: the runtime calls it with the shapes of a call. */
tj_status_t *tj_bind_symbolic_vars(tj_arena_t *arena, const tj_module_t *in, const char *function, int n,
                                   const tj_tir_expr_t *const *vars, const int64_t *values,
                                   const tj_module_t **out);
tj_status_t *tj_decompose_ops_for_inference(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
/* BindParams(func_name, params): the function's parameters named in ctx->bound_params
 * become constants of its body and leave its signature. */
tj_status_t *tj_bind_params(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
/* FoldConstant: every R.call_tir whose arguments are all constants (and whose result
 * has a static shape) is run at compile time (ctx->eval) and replaced by its value;
 * uses of a var bound to a constant see the constant. Dead bindings stay (DCE). */
tj_status_t *tj_fold_constant(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
/* CanonicalizeBindings (the binding part): get-items of known tuples resolved, trivial
 * dataflow bindings removed (transforms/canonicalize_bindings.c). */
tj_status_t *tj_canonicalize_bindings(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
tj_status_t *tj_dead_code_elimination(const tj_pass_context_t *ctx, const tj_module_t *in,
                                      const tj_module_t **out);

#endif
