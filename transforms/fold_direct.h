/* FoldConstant's direct evaluator: the PrimFuncs that LegalizeOps makes for elementwise
 * ops, broadcasts, expand_dims, transposes and reshapes are one spatial block over the
 * output, `out[v0, ..] = expr(loads)`; such a function is evaluated here in C, a chunk of
 * elements at a time, instead of in the reference interpreter (~800 ns per element: a
 * hash lookup per variable) or through the JIT (a kernel lookup or compile per fold).
 *
 * Same bits as the interpreter (ir/interp.h semantics): every float operation is done
 * in double and rounded to its dtype, the interpreter's own rule; for + - * / sqrt on
 * float32 that is the IEEE float32 result, which is also what compiled kernels give.
 * A result that is one load of an input is copied as raw bits (as compiled kernels do).
 * Anything else (other intrinsics, reductions, several blocks, symbolic shapes,
 * float16, an index out of bounds, ...) is not handled: the caller falls back. */
#ifndef TJ_TRANSFORMS_FOLD_DIRECT_H
#define TJ_TRANSFORMS_FOLD_DIRECT_H

#include <stdbool.h>

#include "ir/tir.h"

/* Evaluates `f` over dense buffers, buffers[0..n_buffers-2] the inputs and
 * buffers[n_buffers-1] the output (f's params, all buffers, in that order). True when it
 * wrote the whole output; false when `f` is not of the handled form or memory ran out
 * (the output may then hold anything: the caller evaluates `f` another way). */
bool tj_fold_direct(const tj_prim_func_t *f, int n_buffers, void *const *buffers);

#endif
