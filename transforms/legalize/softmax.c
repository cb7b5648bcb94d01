/* R.nn.softmax → topi.nn.softmax (`softmax`): four blocks T_softmax_maxelem
 * (max-reduction, init = lowest value of the dtype), T_softmax_exp, T_softmax_expsum
 * and the output T_softmax_norm (annotated {"axis": axis}). */
#include <float.h>

#include "transforms/legalize/legalize.h"

static double lowest(tj_dtype_t d) {
  if (d.bits == 16) return -65504.0;
  if (d.bits == 32) return -(double)FLT_MAX;
  return -DBL_MAX;
}

/* Indices with the reduce var inserted at `axis` / the axis removed. */
static void insert_at(const tj_tir_expr_t *const *iv, int n, int axis, const tj_tir_expr_t *k,
                      const tj_tir_expr_t **out) {
  int j = 0;
  for (int i = 0; i <= n; i++) out[i] = i == axis ? k : iv[j++];
}

static int drop_at(const tj_tir_expr_t *const *iv, int n, int axis, const tj_tir_expr_t **out) {
  int j = 0;
  for (int i = 0; i < n; i++)
    if (i != axis) out[j++] = iv[i];
  return j;
}

/* A reduction stage over `rshape` (n - 1 dims) plus k over the softmax axis. */
static void begin_reduce(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int nr,
                         const tj_tir_expr_t *const *rshape, const tj_tir_expr_t *k_extent) {
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < nr; i++) {
    ext[i] = rshape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(te->arena, "i%d", i);
  }
  ext[nr] = k_extent;
  kinds[nr] = TJ_ITER_REDUCE;
  names[nr] = "k";
  tj_lg_stage_begin(te, st, name, nr + 1, ext, kinds, names);
}

tj_status_t *tj_legalize_softmax(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || !tj_dtype_is_float(xs->tensor.dtype) || xs->tensor.ndim < 1 ||
      xs->tensor.ndim >= TJ_LG_MAX_ITERS)
    return NULL;
  int axis;
  if (!tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", -1), xs->tensor.ndim, &axis)) return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *rshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS], *ridx[TJ_LG_MAX_ITERS];
  int nr = drop_at(x->shape, n, axis, rshape);
  const tj_buffer_t *maxelem = tj_lg_alloc(&te, "T_softmax_maxelem", dt, nr, rshape);
  const tj_buffer_t *ex = tj_lg_alloc(&te, "T_softmax_exp", dt, n, x->shape);
  const tj_buffer_t *expsum = tj_lg_alloc(&te, "T_softmax_expsum", dt, nr, rshape);
  const tj_buffer_t *out = tj_lg_output(&te, "T_softmax_norm", dt, n, x->shape);
  tj_lg_stage_t st;

  begin_reduce(&te, &st, "T_softmax_maxelem", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, maxelem, nr, st.iv, tj_tir_float(a, dt, lowest(dt))),
                  tj_lg_store(a, maxelem, nr, st.iv,
                              tj_tir_binary(a, TJ_TIR_MAX, tj_lg_load(a, maxelem, nr, st.iv), tj_lg_load(a, x, n, idx))));

  tj_lg_stage_spatial(&te, &st, "T_softmax_exp", n, x->shape, "i");
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  drop_at(st.iv, n, axis, ridx);
  const tj_tir_expr_t *diff = tj_lg_sub(a, tj_lg_load(a, x, n, st.iv), tj_lg_load(a, maxelem, nr, ridx));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, ex, n, st.iv, tj_lg_call1(a, "tir.exp", diff)));

  begin_reduce(&te, &st, "T_softmax_expsum", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, expsum, nr, st.iv, tj_lg_zero(a, dt)),
                  tj_lg_store(a, expsum, nr, st.iv,
                              tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, expsum, nr, st.iv), tj_lg_load(a, ex, n, idx))));

  tj_lg_stage_spatial(&te, &st, "T_softmax_norm", n, x->shape, "i");
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  st.annotations = tj_attrs_set(a, NULL, "axis", tj_attr_int(axis));
  drop_at(st.iv, n, axis, ridx);
  const tj_tir_expr_t *norm = tj_lg_div(a, tj_lg_load(a, ex, n, st.iv), tj_lg_load(a, expsum, nr, ridx));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, norm));
  return tj_lg_te_finish(&te, "softmax", tj_lg_call_sinfo(call, xs), out_expr);
}
