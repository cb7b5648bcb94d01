/* The verifier: Relax well-formedness as TVM checks it (docs/semantics.md §6.1)
 * plus the checks TVM lacked when the seed bug happened (§6.2): call_tir arguments
 * and out_sinfo against the callee's buffers, TIR buffer scoping and dtype agreement,
 * and the FuseTIR invariant in Primitive functions. */
#ifndef TJ_IR_VERIFY_H
#define TJ_IR_VERIFY_H

#include "ir/module.h"
#include "support/status.h"

/* NULL when the module is well-formed. Otherwise a TJ_ERR_VERIFY status whose message
 * has one line per problem, each naming function, binding, callee and parameter, e.g.
 * main: binding 'lv11': call_tir argument 0 ('lv10': float32[16, 32, 32, 16]) does not
 * match parameter 0 'lv' of 'relu' (float16[16, 32, 32, 16]) */
tj_status_t *tj_verify_module(const tj_module_t *m);

/* What differs between the TVM versions whose rules the verifier can apply. */
typedef struct tj_verify_options {
  /* TVM at the corpus commit (docs/tvm-semantics.md) took a binding's annotation as the
   * struct info of its call, unchecked (`lv: R.Shape([3]) = R.tensor_to_shape(x)` of a
   * (3,) tensor was well-formed). Later TVM's well-formed check (#17332) re-infers every
   * op call and rejects an annotation that inference contradicts; that is the default
   * (false). */
  bool trust_call_annotations;
} tj_verify_options_t;

/* tj_verify_module with options (NULL: the defaults). */
tj_status_t *tj_verify_module_with(const tj_module_t *m, const tj_verify_options_t *options);

#endif
