/* Shape vars as kernel parameters. A PrimFunc over symbolic buffers
 * (`T.match_buffer(var_x, (n, 128))`, n not a parameter) defines n by the shape of the
 * buffer it is given. A compiled kernel only sees pointers, so before lowering each such
 * var becomes a trailing scalar parameter (the kernel ABI's int64s, runtime/kernel.h):
 * one kernel then serves every n, and the caller passes n read off the argument it
 * names. Vars that already are parameters (call_tir's tir_vars) stay where they are. */
#ifndef TJ_TRANSFORMS_TIR_SHAPE_PARAMS_H
#define TJ_TRANSFORMS_TIR_SHAPE_PARAMS_H

#include "ir/tir.h"
#include "support/arena.h"
#include "support/status.h"

#define TJ_TIR_MAX_SHAPE_PARAMS 16

/* Where the caller reads an appended var: dim `dim` of buffer argument `buffer`
 * (counting buffer parameters only). */
typedef struct tj_tir_shape_param {
  const tj_tir_expr_t *var; /* the var itself, a node of f */
  int buffer, dim;
} tj_tir_shape_param_t;

/* f with its free shape vars appended as scalar parameters (f itself when there are
 * none), in order of first appearance in the buffer map; out_params[k] says where the
 * k-th one is read (room for TJ_TIR_MAX_SHAPE_PARAMS). A var that is never a dim by
 * itself (only `n * 2`) is TJ_ERR_UNSUPPORTED: the caller specialises instead. */
tj_status_t *tj_tir_expose_shape_params(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                        const tj_prim_func_t **out_f, int *out_n, tj_tir_shape_param_t *out_params);

#endif
