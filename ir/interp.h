/* The reference TIR interpreter: executes a PrimFunc directly, unlowered (blocks with
 * iter var bindings, T.init, alloc_buffers, match_buffers, lets, if/else) or lowered
 * (plain loops, Allocate), one scalar at a time. Slow and obviously correct; tests hold
 * the JIT's kernels against it.
 *
 * Semantics (docs/semantics.md §7):
 * - float16 values are rounded to binary16 (nearest even) after every operation and
 *   float32 values to binary32, so results match IEEE arithmetic in the stated dtype;
 *   exp/log/tanh/pow/sqrt are computed in double and rounded to the dtype;
 *   rsqrt(x) is 1 / sqrt(x) with both steps rounded.
 * - `T.if_then_else` evaluates only the chosen branch; `T.Select` evaluates both.
 * - int `//` and `%` (FloorDiv/FloorMod) are floor division and modulo; Div/Mod on ints
 *   truncate; integer arithmetic wraps at the dtype's width.
 * - max(a, b) is `a > b ? a : b`, min(a, b) is `a < b ? a : b`.
 * - float -> int casts truncate toward zero and saturate (NaN -> 0).
 * - A block's T.init runs when every reduce iter var equals its domain minimum; the
 *   block is skipped when its predicate (T.where) is false; iter values outside their
 *   domain are an error. Buffers made by alloc_buffer / Allocate are zero-filled.
 * Errors (index out of bounds, division by zero, unknown intrinsic, vector types,
 * unbound variables) come back as a status naming the function and block, e.g.
 *   conv2d2: block 'pad_temp': index 34 is out of bounds for dimension 1 of buffer 'data' (extent 32)
 * never as a crash. Thread-safe: every run has its own state. */
#ifndef TJ_IR_INTERP_H
#define TJ_IR_INTERP_H

#include <stdint.h>

#include "ir/tir.h"
#include "support/status.h"

/* Runs `f`. n_args must equal f->n_params. The arguments are packed like a kernel's:
 * `buffers` holds the data of the buffer parameters in parameter order, `scalars` the
 * values of the scalar (non-buffer) parameters in parameter order (NULL if none).
 * Buffer data must be dense and sized for the parameter's buffer shape. The function
 * is named by its global_symbol attr in messages, else "prim_func". */
tj_status_t *tj_interp_run_prim_func(const tj_prim_func_t *f, int n_args, void *const *buffers,
                                     const int64_t *scalars);

/* Same, with the function's name for messages (e.g. the module's GlobalVar name). */
tj_status_t *tj_interp_run_named(const char *name, const tj_prim_func_t *f, int n_args, void *const *buffers,
                                 const int64_t *scalars);

#endif
