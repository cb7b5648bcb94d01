/* A tensor's values as symbolic shape vars, the way TVM's data-dependent shapes are
 * built (DecomposeOpsForInference's R.tensor_to_shape, LegalizeOps' dynamic_strided_slice):
 *
 *   gv: S = R.call_pure_packed("vm.builtin.tensor_to_shape", t, sinfo_args=(S,))
 *   y: R.Shape([v0, v1, ...]) = R.match_cast(gv, R.Shape([v0, v1, ...]))
 *
 * with S.ndim fresh int64 TIR vars named `var_name`, which later bindings use as the
 * shape (TOPI needs the shape as expressions, not as a runtime value). */
#ifndef TJ_TRANSFORMS_TENSOR_TO_SHAPE_H
#define TJ_TRANSFORMS_TENSOR_TO_SHAPE_H

#include "ir/rx_mutator.h"

/* Emits both bindings into m's current block; *out_vars gets S.ndim vars (arena array).
 * false on error (recorded in m). S must be a shape struct info of known ndim. */
bool tj_emit_tensor_to_shape(tj_rx_mutator_t *m, const tj_rx_expr_t *tensor, const tj_sinfo_t *shape_sinfo,
                             const char *var_name, const tj_tir_expr_t *const **out_vars);

#endif
