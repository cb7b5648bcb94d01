/* R.einsum → topi.einsum (`einsum`, block T_einsum; TVM's legalize_ops/linear_algebra.py).
 * Spatial loops ax0.. over the output labels, then one reduce loop per label missing
 * from the output, named after the label, in sorted order (topi's std::set). The body
 * is the product of the operands (left to right) and, with reduce labels, a sum
 * from zero in the operand dtype. An operand dim of extent 1 under a label of another
 * extent is read at 0 (topi's GetIndexForBroadcastedDim). The tuple's fields are read
 * as concat reads them. */
#include <string.h>

#include "ir/op/einsum.h"
#include "transforms/legalize/legalize.h"

static const tj_rx_expr_t *operand_tuple(tj_arena_t *a, const tj_rx_expr_t *tup) {
  const tj_sinfo_t *ts = tj_lg_arg_sinfo(a, tup);
  if (tup->kind == TJ_RX_TUPLE || !ts || ts->kind != TJ_SINFO_TUPLE || ts->tuple.n < 1 ||
      ts->tuple.n >= TJ_LG_MAX_PARAMS)
    return tup;
  const tj_rx_expr_t *fields[TJ_LG_MAX_PARAMS];
  for (int i = 0; i < ts->tuple.n; i++) {
    fields[i] = tj_rx_with_sinfo(a, tj_rx_get_item(a, tup, i), ts->tuple.fields[i]);
    if (!fields[i]) return NULL;
  }
  return tj_rx_tuple(a, ts->tuple.n, fields);
}

tj_status_t *tj_legalize_einsum(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_attr_value_t *sv = tj_attrs_get(call->call.attrs, "subscripts");
  tj_einsum_eq_t q;
  char err[160];
  if (!sv || sv->kind != TJ_ATTR_STR || !tj_einsum_parse(sv->s, &q, err, sizeof err)) return NULL;
  const tj_rx_expr_t *tup = operand_tuple(a, call->call.args[0]);
  if (!tup) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
  const tj_sinfo_t *os = call->sinfo;
  int nout = (int)strlen(q.output), nred = (int)strlen(q.reduce);
  if (tup->kind != TJ_RX_TUPLE || tup->tuple.n != q.n_inputs || tup->tuple.n > TJ_LG_MAX_PARAMS - 1 ||
      !tj_lg_tensor_known(os) || os->tensor.ndim != nout || nout + nred > TJ_LG_MAX_ITERS)
    return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *xs[TJ_LG_MAX_PARAMS];
  const tj_tir_expr_t *ext[256] = {NULL};
  for (int i = 0; i < q.n_inputs; i++) {
    xs[i] = tj_lg_placeholder(&te, tup->tuple.fields[i]);
    if (!xs[i] || xs[i]->ndim != (int)strlen(q.inputs[i])) return te.failed ? tj_lg_te_finish(&te, "einsum", NULL, out_expr) : NULL;
    for (int d = 0; d < xs[i]->ndim; d++) {
      unsigned char c = (unsigned char)q.inputs[i][d];
      int64_t v;
      if (!ext[c] || (tj_tir_is_const_int(ext[c], &v) && v == 1)) ext[c] = xs[i]->shape[d];
    }
  }
  const tj_tir_expr_t *extent[TJ_LG_MAX_ITERS], *oshape[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < nout; i++) {
    oshape[i] = extent[i] = tj_lg_shape_expr(&te, os->tensor.shape[i]);
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(a, "ax%d", i);
  }
  for (int r = 0; r < nred; r++) {
    extent[nout + r] = ext[(unsigned char)q.reduce[r]];
    kinds[nout + r] = TJ_ITER_REDUCE;
    names[nout + r] = tj_arena_printf(a, "%c", q.reduce[r]);
  }
  const tj_buffer_t *out = tj_lg_output(&te, "T_einsum", xs[0]->dtype, nout, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, "T_einsum", nout + nred, extent, kinds, names);
  if (te.failed) return tj_lg_te_finish(&te, "einsum", NULL, out_expr);
  const tj_tir_expr_t *iv[256] = {NULL};
  for (int i = 0; i < nout; i++) iv[(unsigned char)q.output[i]] = st.iv[i];
  for (int r = 0; r < nred; r++) iv[(unsigned char)q.reduce[r]] = st.iv[nout + r];
  const tj_tir_expr_t *prod = NULL;
  for (int i = 0; i < q.n_inputs; i++) {
    const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
    for (int d = 0; d < xs[i]->ndim; d++) {
      unsigned char c = (unsigned char)q.inputs[i][d];
      int64_t v, w;
      bool bcast = tj_tir_is_const_int(xs[i]->shape[d], &v) && v == 1 && !(tj_tir_is_const_int(ext[c], &w) && w == 1);
      idx[d] = bcast ? tj_tir_i64(a, 0) : iv[c];
    }
    const tj_tir_expr_t *t = tj_lg_load(a, xs[i], xs[i]->ndim, idx);
    prod = prod ? tj_lg_bin(a, TJ_TIR_MUL, prod, t) : t;
  }
  const tj_tir_stmt_t *init = NULL;
  const tj_tir_expr_t *value = prod;
  if (nred > 0) {
    init = tj_lg_store(a, out, nout, st.iv, tj_lg_zero(a, out->dtype));
    value = tj_lg_bin(a, TJ_TIR_ADD, tj_lg_load(a, out, nout, st.iv), prod);
  }
  tj_lg_stage_end(&te, &st, init, tj_lg_store(a, out, nout, st.iv, value));
  return tj_lg_te_finish(&te, "einsum", os, out_expr);
}
