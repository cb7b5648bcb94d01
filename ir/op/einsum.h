/* The einsum equation as topi::EinsumEquation::FromString reads it (shared by the op's
 * inference and its legalization). Ellipsis ("...") is recognised and reported, not
 * supported: tvmjit rejects it with a clear error. */
#ifndef TJ_IR_OP_EINSUM_H
#define TJ_IR_OP_EINSUM_H

#include <stdbool.h>

#define TJ_EINSUM_MAX_OPERANDS 8
#define TJ_EINSUM_MAX_LABELS 12

typedef struct tj_einsum_eq {
  int n_inputs;
  char inputs[TJ_EINSUM_MAX_OPERANDS][TJ_EINSUM_MAX_LABELS + 1]; /* labels, NUL-terminated */
  char output[TJ_EINSUM_MAX_LABELS + 1];
  char reduce[TJ_EINSUM_MAX_LABELS + 1]; /* labels not in the output, sorted (std::set order) */
} tj_einsum_eq_t;

/* false with a message in err (size n) when the equation is malformed or uses '...'. */
bool tj_einsum_parse(const char *equation, tj_einsum_eq_t *out, char *err, int n);

#endif
