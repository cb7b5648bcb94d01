/* Symbolic signatures. A Relax function whose parameters have symbolic dims
 * (`x: R.Tensor(("n", 4))`) is compiled once as a program (jit.h) and at each call its
 * vars are bound from the inputs' shapes (tj_signature_bind) to make or find the
 * executable for that binding (api/tvmjit.c). A function the program cannot express is
 * specialised instead: BindSymbolicVars, the passes and the JIT once per distinct
 * binding. Internal: not part of include/tvmjit.h. */
#ifndef TJ_API_SPECIALIZE_H
#define TJ_API_SPECIALIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/relax.h"
#include "runtime/executable.h"
#include "runtime/tensor.h"
#include "support/arena.h"
#include "support/status.h"

#define TJ_MAX_SYMBOLIC_VARS 16

/* Values of the symbolic vars of a signature, in order of first appearance. */
typedef struct tj_shape_binding {
  int n;
  const tj_tir_expr_t *vars[TJ_MAX_SYMBOLIC_VARS];
  int64_t values[TJ_MAX_SYMBOLIC_VARS];
} tj_shape_binding_t;

/* True when some tensor parameter of f has a dim that is not a constant. */
bool tj_signature_is_symbolic(const tj_rx_func_t *f);

/* Descriptors of f's tensor parameters (`results` false) or results (true, the fields
 * of a returned tuple), symbolic dims as -1; allocated in `arena`. */
tj_status_t *tj_signature_describe(tj_arena_t *arena, const tj_rx_func_t *f, bool results, int *out_n,
                                   tj_value_desc_t **out_descs);

/* Binds f's symbolic vars from the inputs: each var takes the size of the first dim it
 * names, every other dim must then agree. A mismatch is TJ_ERR_INVALID_ARGUMENT naming
 * the input, the dim and the var ("input 'x': dim 0 is 7, but n = 5 from input 'y'"). */
tj_status_t *tj_signature_bind(const tj_rx_func_t *f, int n_inputs, const tj_tensor_t *const *inputs,
                               tj_shape_binding_t *out_binding);

#endif
