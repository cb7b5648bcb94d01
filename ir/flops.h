/* Floating-point operation counts of a Relax function, for GFLOP/s figures.
 *
 * What is counted: every float arithmetic operation in the TIR that the function's
 * R.call_tir bindings run, once per execution: +, -, *, /, min, max, float
 * comparisons and calls of math intrinsics (exp, sqrt, rsqrt, ...) count 1 each,
 * per vector lane; a multiply-accumulate `acc = acc + a * b` is therefore 2. The
 * statements of a block (body and T.init) are counted once per iteration of the
 * loops around them. Not counted: integer index arithmetic, casts, loads, stores,
 * selects' choice itself, logic on bool. Both branches of an `if` count (an upper
 * bound). On the seed network this gives 2 x MACs for the three convolutions
 * (226.5 MFLOP) plus the relus and layer_norm. */
#ifndef TJ_IR_FLOPS_H
#define TJ_IR_FLOPS_H

#include <stdbool.h>

#include "ir/module.h"

/* The count for one PrimFunc; false when a loop extent is not a constant. */
bool tj_flops_prim_func(const tj_prim_func_t *f, double *out_flops);
/* The count for one run of the Relax function `name`: the sum over its call_tir
 * bindings. False when the count is unknown: a symbolic loop, a call of anything but
 * a PrimFunc of the module (high-level operators not yet legalized, other Relax
 * functions, external functions), or control flow. */
bool tj_flops_relax_func(const tj_module_t *m, const char *name, double *out_flops);

#endif
