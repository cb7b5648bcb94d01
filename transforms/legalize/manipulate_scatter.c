/* R.scatter_elements → topi.scatter_elements (TVM's legalize_ops/manipulate.py), an
 * ir_builder extern `scatter_elements.generic` (extern.c): a parallel copy of data into
 * out_buf, then, per (before, after) position of indices, a serial loop over the axis
 * applying the reduction at
 *   out[pre + (k + (k < 0) * dim) * after]      (k = indices[...]).
 * The index arithmetic is TOPI's, with TVM's constant folding (tj_lg_add, ...), so the
 * conformance pairs compare. An index out of range after the one wrap would write out
 * of bounds in TVM; tvmjit's FlattenBuffers skips such stores (docs: data-dependent
 * indices). "mean" on integers has no TOPI form (Python's `/` on ints raises): kept. */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct scatter_ir {
  const tj_buffer_t *data, *ind, *upd, *out;
  const char *reduction;
  int axis;
} scatter_ir_t;

static const tj_tir_expr_t *reduce(tj_arena_t *a, const char *red, const tj_tir_expr_t *old,
                                   const tj_tir_expr_t *upd) {
  if (strcmp(red, "update") == 0) return upd;
  if (strcmp(red, "add") == 0) return tj_lg_bin(a, TJ_TIR_ADD, old, upd);
  if (strcmp(red, "mul") == 0) return tj_lg_bin(a, TJ_TIR_MUL, old, upd);
  if (strcmp(red, "mean") == 0)
    return tj_lg_bin(a, TJ_TIR_DIV, tj_lg_bin(a, TJ_TIR_ADD, old, upd), tj_lg_const(a, old->dtype, 2));
  if (strcmp(red, "min") == 0) return tj_lg_bin(a, TJ_TIR_MIN, old, upd);
  return tj_lg_bin(a, TJ_TIR_MAX, old, upd);
}

static const tj_tir_stmt_t *scatter_body(tj_arena_t *a, const scatter_ir_t *s) {
  const tj_buffer_t *d = s->data, *ind = s->ind;
  const tj_tir_expr_t *full = tj_tir_i64(a, 1), *after = tj_tir_i64(a, 1);
  for (int i = 0; i < d->ndim; i++) {
    full = tj_lg_mul(a, full, d->shape[i]);
    if (i > s->axis) after = tj_lg_mul(a, after, d->shape[i]);
  }
  const tj_tir_expr_t *axis_range = tj_lg_cast(a, ind->dtype, d->shape[s->axis]);
  const tj_tir_expr_t *before_stride = tj_lg_mul(a, axis_range, after);
  const tj_tir_expr_t *ind_before = tj_tir_i64(a, 1), *ind_after = tj_tir_i64(a, 1);
  for (int i = 0; i < ind->ndim; i++) {
    if (i < s->axis) ind_before = tj_lg_mul(a, ind_before, ind->shape[i]);
    else if (i > s->axis) ind_after = tj_lg_mul(a, ind_after, ind->shape[i]);
  }
  const tj_tir_expr_t *ind_axis = ind->shape[s->axis];
  const tj_tir_expr_t *ind_before_stride = tj_lg_mul(a, ind_axis, ind_after);
  /* copy */
  const tj_tir_expr_t *i = tj_tir_var(a, "i", full->dtype);
  const tj_tir_stmt_t *copy = tj_tir_for(a, i, tj_tir_i64(a, 0), full, TJ_FOR_PARALLEL,
                                         tj_lg_flat_store(a, s->out, i, tj_lg_flat_load(a, d, i)));
  /* scatter */
  const tj_tir_expr_t *extent = tj_lg_mul(a, ind_before, ind_after);
  const tj_tir_expr_t *fused = tj_tir_var(a, "fused", extent->dtype);
  const tj_tir_expr_t *fi = tj_lg_floordiv(a, fused, ind_after), *fj = tj_lg_floormod(a, fused, ind_after);
  const tj_tir_expr_t *pre1 = tj_lg_add(a, tj_lg_mul(a, fi, ind_before_stride), fj);
  const tj_tir_expr_t *pre2 = tj_lg_add(a, tj_lg_mul(a, fi, before_stride), fj);
  const tj_tir_expr_t *k = tj_tir_var(a, "k", ind_axis->dtype);
  const tj_tir_expr_t *index1 = tj_lg_add(a, pre1, tj_lg_mul(a, k, ind_after));
  const tj_tir_expr_t *k_new = tj_lg_flat_load(a, ind, index1);
  const tj_tir_expr_t *neg = tj_lg_cast(a, ind->dtype, tj_lg_bin(a, TJ_TIR_LT, k_new, tj_lg_zero(a, ind->dtype)));
  const tj_tir_expr_t *shifted = tj_lg_add(a, k_new, tj_lg_mul(a, neg, axis_range));
  const tj_tir_expr_t *index2 = tj_lg_add(a, pre2, tj_lg_mul(a, shifted, after));
  const tj_tir_expr_t *val = reduce(a, s->reduction, tj_lg_flat_load(a, s->out, index2), tj_lg_flat_load(a, s->upd, index1));
  const tj_tir_stmt_t *inner = tj_tir_for(a, k, tj_tir_i64(a, 0), ind_axis, TJ_FOR_SERIAL,
                                          tj_lg_flat_store(a, s->out, index2, val));
  const tj_tir_stmt_t *outer = tj_tir_for(a, fused, tj_tir_i64(a, 0), extent, TJ_FOR_PARALLEL, inner);
  if (!copy || !outer) return NULL;
  const tj_tir_stmt_t *both[2] = {copy, outer};
  return tj_tir_seq(a, 2, both);
}

tj_status_t *tj_legalize_scatter_elements(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *is = tj_lg_arg_sinfo(a, call->call.args[1]);
  const tj_sinfo_t *us = tj_lg_arg_sinfo(a, call->call.args[2]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(is) || !tj_lg_tensor_known(us) || ds->tensor.ndim < 1 ||
      is->tensor.ndim != ds->tensor.ndim || us->tensor.ndim != ds->tensor.ndim)
    return NULL;
  scatter_ir_t s = {.reduction = "update"};
  const tj_attr_value_t *rv = tj_attrs_get(call->call.attrs, "reduction");
  if (rv && rv->kind == TJ_ATTR_STR) s.reduction = rv->s;
  if (strcmp(s.reduction, "mean") == 0 && !tj_dtype_is_floating(ds->tensor.dtype)) return NULL;
  if (!tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", 0), ds->tensor.ndim, &s.axis)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  s.data = tj_lg_extern_input(&te, call->call.args[0]);
  s.ind = tj_lg_extern_input(&te, call->call.args[1]);
  s.upd = tj_lg_extern_input(&te, call->call.args[2]);
  if (te.failed) return tj_lg_te_finish(&te, "scatter_elements", NULL, out_expr);
  s.out = tj_lg_output(&te, "out_buf", s.data->dtype, s.data->ndim, s.data->shape);
  if (te.failed) return tj_lg_te_finish(&te, "scatter_elements", NULL, out_expr);
  tj_lg_extern_block(&te, "scatter_elements_generic", scatter_body(a, &s));
  const tj_sinfo_t *os = tj_sinfo_tensor(a, ds->tensor.dtype, ds->tensor.ndim, ds->tensor.shape);
  return tj_lg_te_finish(&te, "scatter_elements", os, out_expr);
}
