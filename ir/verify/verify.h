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

#endif
