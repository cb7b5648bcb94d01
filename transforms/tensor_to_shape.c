/* See tensor_to_shape.h. */
#include "transforms/tensor_to_shape.h"

#include "ir/op.h"

static const tj_rx_expr_t *packed_tensor_to_shape(tj_rx_mutator_t *m, const tj_rx_expr_t *tensor,
                                                  const tj_sinfo_t *shape_sinfo) {
  const tj_rx_expr_t *args[2] = {tj_rx_extern_func(m->arena, "vm.builtin.tensor_to_shape"), tensor};
  if (!args[0]) return tj_rx_mutator_oom(m);
  const tj_rx_expr_t *call =
      tj_rx_call(m->arena, tj_rx_op(m->arena, "relax.call_pure_packed"), 2, args, NULL, 1, &shape_sinfo);
  return call ? tj_rx_with_sinfo(m->arena, call, shape_sinfo) : tj_rx_mutator_oom(m);
}

bool tj_emit_tensor_to_shape(tj_rx_mutator_t *m, const tj_rx_expr_t *tensor, const tj_sinfo_t *shape_sinfo,
                             const char *var_name, const tj_tir_expr_t *const **out_vars) {
  if (m->error) return false;
  int n = shape_sinfo && shape_sinfo->kind == TJ_SINFO_SHAPE ? shape_sinfo->shape.ndim : -1;
  if (n < 0) {
    tj_rx_mutator_fail(m, tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s: tensor_to_shape needs a shape of known ndim",
                                        m->pass_name ? m->pass_name : "pass"));
    return false;
  }
  const tj_rx_expr_t *shape = tj_rx_emit_fresh(m, packed_tensor_to_shape(m, tensor, shape_sinfo));
  const tj_tir_expr_t **vars = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, n + 1);
  if (!shape || !vars) return vars ? false : tj_rx_mutator_oom(m);
  for (int i = 0; i < n; i++)
    if (!(vars[i] = tj_tir_var(m->arena, var_name, TJ_I64))) return tj_rx_mutator_oom(m);
  const tj_sinfo_t *cast = tj_sinfo_shape(m->arena, n, vars);
  const tj_rx_expr_t *y = cast ? tj_rx_new_var(m, "y", cast) : tj_rx_mutator_oom(m);
  if (!y || !tj_rx_emit(m, y, shape, cast)) return false;
  *out_vars = vars;
  return true;
}
