/* FoldConstant, TVM's pass (relax/transform/fold_constant.cc): an R.call_tir of a
 * module PrimFunc whose tensor arguments are all constants and whose result is one
 * tensor of static shape is evaluated at compile time and replaced by the constant it
 * computes; a var bound to a constant is replaced by the constant at its uses, so
 * chains of such calls fold in one walk. Bindings left unused stay for
 * DeadCodeElimination, as in TVM.
 *
 * With weights bound as constants (BindParams) this moves the work that depends only
 * on the weights out of every call: a transposed matmul weight, batch_norm's
 * sqrt(var + eps). The PrimFunc is evaluated directly in C when it is one spatial
 * block of elementwise arithmetic, broadcasts or data movement (fold_direct.h: nearly
 * every fold of the model zoo), else through ctx->eval (the JIT, from the API) or the
 * reference interpreter. Not folded (as TVM): calls with symbolic shapes or tir_vars,
 * tuple results, call_tir_inplace, and calls of Relax functions or ops (LegalizeOps
 * first). */
#include <stdint.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/rx_mutator.h"
#include "support/alloc.h"
#include "transforms/fold_direct.h"
#include "transforms/transforms.h"

typedef struct fold_state {
  const tj_pass_context_t *ctx;
  const tj_module_t *module;
} fold_state_t;

static bool all_constant(const tj_call_tir_view_t *v) {
  for (int i = 0; i < v->n_args; i++)
    if (v->args[i]->kind != TJ_RX_CONSTANT || !v->args[i]->constant.data) return false;
  return true;
}

/* The PrimFunc takes exactly the arguments and the output, all as buffers. */
static bool buffers_only(const tj_prim_func_t *f, int n_buffers) {
  if (f->n_params != n_buffers) return false;
  for (int i = 0; i < f->n_params; i++)
    if (!f->buffer_map || !f->buffer_map[i]) return false;
  return true;
}

/* Results up to this size run in the interpreter even when an evaluator is given: a
 * batch_norm's sqrt(var + eps) over a few hundred channels takes microseconds there,
 * while getting its kernel from the JIT (a cache load and a link, or a compile) took
 * about 10 ms each, 0.5 s for MobileNetV2's 52 batch_norms. */
#define FOLD_INTERP_MAX_BYTES (16 << 10)
#define CONSTANT_ALIGN 64

/* The result block comes unzeroed: the direct evaluator writes every element; before
 * the interpreter or the JIT it is zeroed, as it always was for them. */
static tj_status_t *evaluate(const fold_state_t *st, const char *name, const tj_prim_func_t *f, int n,
                             void *const *buffers, size_t out_bytes) {
  if (!st->ctx->fold_no_direct && tj_fold_direct(f, n, buffers)) return NULL;
  memset(buffers[n - 1], 0, out_bytes);
  if (st->ctx->eval && out_bytes > FOLD_INTERP_MAX_BYTES) return st->ctx->eval(st->ctx->eval_user, name, f, n, buffers);
  return tj_interp_run_named(name, f, n, buffers, NULL);
}

/* The constant `call` computes, or `call` itself when it does not fold. */
static const tj_rx_expr_t *try_fold(tj_rx_mutator_t *m, const tj_rx_expr_t *call) {
  fold_state_t *st = m->ctx;
  tj_call_tir_view_t v;
  int ndim;
  int64_t dims[8];
  if (!tj_rx_as_call_tir(call, &v) || v.inplace_indices || v.tir_vars || v.callee->kind != TJ_RX_GLOBAL_VAR ||
      !all_constant(&v) || !tj_sinfo_static_shape(v.out_sinfo, &ndim, dims))
    return call;
  const tj_prim_func_t *f = tj_module_find_prim(st->module, v.callee->var.name);
  if (!f || !buffers_only(f, v.n_args + 1)) return call;
  tj_dtype_t dtype = v.out_sinfo->tensor.dtype;
  size_t nbytes = tj_dtype_bytes(dtype);
  for (int i = 0; i < ndim; i++) nbytes *= (size_t)dims[i];
  void **buffers = TJ_ARENA_ARRAY(m->arena, void *, v.n_args + 2);
  /* Computed in place, 64-byte aligned like every tensor the executable makes, so the
   * executable reads the constant where it is instead of keeping an aligned copy of its
   * own (BERT's folded weights: 28 MB held twice before). */
  unsigned char *raw = tj_arena_alloc_uninit(m->arena, (nbytes ? nbytes : 1) + CONSTANT_ALIGN);
  tj_rx_expr_t *c = (tj_rx_expr_t *)tj_rx_constant(m->arena, dtype, ndim, dims, NULL, 0);
  if (!buffers || !raw || !c) return tj_rx_mutator_oom(m);
  void *result = raw + (CONSTANT_ALIGN - (uintptr_t)raw % CONSTANT_ALIGN) % CONSTANT_ALIGN;
  for (int i = 0; i < v.n_args; i++) buffers[i] = (void *)v.args[i]->constant.data; /* inputs are read only */
  buffers[v.n_args] = result;
  tj_status_t *err = evaluate(st, v.callee->var.name, f, v.n_args + 1, buffers, nbytes);
  if (err) return tj_rx_mutator_fail(m, tj_status_annotate(err, "FoldConstant: evaluating '%s'", v.callee->var.name));
  c->constant.data = result;
  c->constant.nbytes = nbytes;
  c->sinfo = v.out_sinfo;
  return c;
}

/* TVM's ConstantFolder: fold the value, then let later uses of the var see a constant. */
static void fold_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = tj_rx_mutate_expr(m, b->value);
  if (!value) return;
  if (!b->match_cast) value = try_fold(m, value);
  if (!value) return;
  tj_rx_reemit(m, b, value);
  if (value->kind == TJ_RX_CONSTANT && !b->match_cast && !tj_rx_mutator_remap(m, b->var, value)) tj_rx_mutator_oom(m);
}

static void fold_setup(tj_rx_mutator_t *rw, void *ctx) {
  rw->binding = fold_binding;
  rw->ctx = ctx;
}

tj_status_t *tj_fold_constant(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  fold_state_t st = {ctx, in};
  return tj_rx_mutate_module(ctx->arena, "FoldConstant", in, fold_setup, &st, out);
}
