/* TOPI's `te.extern` + `tir.ir_builder` ops (scatter_elements, cumsum, ...) as
 * create_prim_func turns them into a PrimFunc: each input is a `T.handle` parameter
 * matched to a buffer declared with offset_factor=1 (so its elem_offset is a var), the
 * output is the extern's own `out_buf`, and the ir_builder statements are the body of
 * the root block, named after the extern (`scatter_elements.generic` →
 * `scatter_elements_generic`) with no reads/writes listed: that is the module TVM's
 * tests expect (structurally; block names are not compared). */
#include "transforms/legalize/legalize.h"

const tj_buffer_t *tj_lg_extern_input(tj_lg_te_t *te, const tj_rx_expr_t *arg) {
  const tj_buffer_t *b = tj_lg_placeholder(te, arg);
  if (!b) return NULL;
  tj_buffer_t *nb = (tj_buffer_t *)tj_buffer_copy(te->arena, b);
  const tj_tir_expr_t *off = tj_tir_var(te->arena, "elem_offset", b->ndim ? b->shape[0]->dtype : TJ_I64);
  if (!nb || !off) {
    te->failed = true;
    return NULL;
  }
  nb->elem_offset = off;
  te->in_buffers[te->n_inputs - 1] = nb;
  return nb;
}

void tj_lg_extern_block(tj_lg_te_t *te, const char *name, const tj_tir_stmt_t *body) {
  if (!body || te->n_stmts == TJ_LG_MAX_STMTS) {
    te->failed = true;
    return;
  }
  te->root_name = name;
  te->stmts[te->n_stmts++] = body;
}

/* ir_builder's flat index into an n-d buffer (topi.utils.unravel_index): the last
 * coordinate is idx % d_last ... and the first one idx // (product of the others),
 * with no remainder (TOPI assumes the index is in bounds). */
static void unravel(tj_arena_t *a, const tj_buffer_t *b, const tj_tir_expr_t *idx, const tj_tir_expr_t **out) {
  int n = b->ndim;
  for (int i = n - 1; i >= 0; i--) {
    int64_t d;
    if (tj_tir_is_const_int(b->shape[i], &d) && d == 0) out[i] = tj_tir_i64(a, 0);
    else if (i == 0) out[i] = idx;
    else {
      out[i] = tj_lg_floormod(a, idx, b->shape[i]);
      idx = tj_lg_floordiv(a, idx, b->shape[i]);
    }
  }
}

const tj_tir_expr_t *tj_lg_flat_load(tj_arena_t *a, const tj_buffer_t *b, const tj_tir_expr_t *idx) {
  const tj_tir_expr_t *ix[TJ_LG_MAX_ITERS];
  if (b->ndim == 1) return tj_lg_load(a, b, 1, &idx);
  if (b->ndim > TJ_LG_MAX_ITERS) return NULL;
  unravel(a, b, idx, ix);
  return tj_lg_load(a, b, b->ndim, ix);
}

const tj_tir_stmt_t *tj_lg_flat_store(tj_arena_t *a, const tj_buffer_t *b, const tj_tir_expr_t *idx,
                                      const tj_tir_expr_t *value) {
  const tj_tir_expr_t *ix[TJ_LG_MAX_ITERS];
  if (b->ndim == 1) return tj_lg_store(a, b, 1, &idx, value);
  if (b->ndim > TJ_LG_MAX_ITERS) return NULL;
  unravel(a, b, idx, ix);
  return tj_lg_store(a, b, b->ndim, ix, value);
}
