/* R.matmul → TVM's te_matmul (`matmul`): one reduction block `matmul` over the
 * broadcast batch dims, m, n and k. A 1-d operand is promoted (prepended /
 * appended 1) and the promoted dim dropped from the output; batch dims that
 * differ are broadcast with index 0 on the constant-1 side; with out_dtype set
 * both operands are cast before the multiply. */
#include "transforms/legalize/legalize.h"

static bool const_eq(const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  int64_t a, b;
  return tj_tir_is_const_int(x, &a) && tj_tir_is_const_int(y, &b) && a == b;
}

static bool is_one(const tj_tir_expr_t *e) {
  int64_t v;
  return tj_tir_is_const_int(e, &v) && v == 1;
}

tj_status_t *tj_legalize_matmul(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *as = tj_lg_arg_sinfo(a, call->call.args[0]);
  const tj_sinfo_t *bs = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_sinfo_is_tensor(as) || !tj_sinfo_is_tensor(bs)) return NULL;
  /* TVM refuses too, with a message starting "To legalize R.matmul". */
  if (tj_dtype_is_void(as->tensor.dtype) || tj_dtype_is_void(bs->tensor.dtype))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "To legalize R.matmul, both operands need a known dtype; annotate them with one, "
                         "e.g. R.Tensor((16, 32), \"float32\")");
  if (!tj_lg_tensor_known(as) || !tj_lg_tensor_known(bs) || as->tensor.ndim < 1 || bs->tensor.ndim < 1) return NULL;
  tj_dtype_t cast_to = tj_lg_attr_dtype(call->call.attrs, "out_dtype");
  tj_dtype_t dtype = tj_dtype_is_void(cast_to) ? as->tensor.dtype : cast_to;

  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *A = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *B = tj_lg_placeholder(&te, call->call.args[1]);
  if (!A || !B) return tj_lg_te_finish(&te, "matmul", NULL, out_expr);
  const tj_tir_expr_t *ash[TJ_LG_MAX_ITERS], *bsh[TJ_LG_MAX_ITERS];
  int na = 0, nb = 0;
  bool a_prepended = A->ndim == 1, b_appended = B->ndim == 1;
  if (a_prepended) ash[na++] = tj_tir_i64(a, 1);
  for (int i = 0; i < A->ndim && na < TJ_LG_MAX_ITERS; i++) ash[na++] = A->shape[i];
  for (int i = 0; i < B->ndim && nb < TJ_LG_MAX_ITERS; i++) bsh[nb++] = B->shape[i];
  if (b_appended) bsh[nb++] = tj_tir_i64(a, 1);
  if (na >= TJ_LG_MAX_ITERS || nb >= TJ_LG_MAX_ITERS) return NULL;
  bool a_larger = na > nb;
  int offset = a_larger ? na - nb : nb - na;
  int nbatch = (a_larger ? na : nb) - 2;

  /* output shape: broadcast batch dims, then m and n unless promoted */
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  int no = 0;
  for (int i = 0; i < nbatch; i++) {
    const tj_tir_expr_t *ad = i < offset && !a_larger ? NULL : ash[a_larger ? i : i - offset];
    const tj_tir_expr_t *bd = i < offset && a_larger ? NULL : bsh[a_larger ? i - offset : i];
    if (!ad) oshape[no++] = bd;
    else if (!bd) oshape[no++] = ad;
    else if (is_one(ad)) oshape[no++] = bd;
    else oshape[no++] = ad;
  }
  if (!a_prepended) oshape[no++] = ash[na - 2];
  if (!b_appended) oshape[no++] = bsh[nb - 1];
  const tj_sinfo_t *fallback = tj_sinfo_tensor(a, dtype, no, oshape);
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, fallback);
  if (!out_sinfo || out_sinfo->tensor.ndim != no) return NULL;
  for (int i = 0; i < no; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "matmul", dtype, no, oshape);

  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS + 1];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS + 1];
  const char *names[TJ_LG_MAX_ITERS + 1];
  for (int i = 0; i < no; i++) {
    ext[i] = oshape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(a, "i%d", i);
  }
  ext[no] = ash[na - 1];
  kinds[no] = TJ_ITER_REDUCE;
  names[no] = "k";
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, "matmul", no + 1, ext, kinds, names);
  if (te.failed) return tj_lg_te_finish(&te, "matmul", NULL, out_expr);
  const tj_tir_expr_t *const *sp = st.iv;
  const tj_tir_expr_t *k = st.iv[no];
  const tj_tir_expr_t *ai[TJ_LG_MAX_ITERS], *bi[TJ_LG_MAX_ITERS];
  int nai = 0, nbi = 0;
  for (int i = 0; i < offset; i++) {
    if (a_larger) ai[nai++] = sp[i];
    else bi[nbi++] = sp[i];
  }
  int last = no - (2 - (int)a_prepended - (int)b_appended);
  for (int i = offset; i < last; i++) {
    const tj_tir_expr_t *ad = ash[a_larger ? i : i - offset];
    const tj_tir_expr_t *bd = bsh[a_larger ? i - offset : i];
    if (const_eq(ad, bd)) {
      ai[nai++] = sp[i];
      bi[nbi++] = sp[i];
    } else {
      ai[nai++] = is_one(ad) ? tj_tir_i64(a, 0) : sp[i];
      bi[nbi++] = is_one(bd) ? tj_tir_i64(a, 0) : sp[i];
    }
  }
  if (!a_prepended) ai[nai++] = sp[no - 2 + (int)b_appended];
  ai[nai++] = k;
  bi[nbi++] = k;
  if (!b_appended) bi[nbi++] = sp[no - 1];
  if (nai != A->ndim || nbi != B->ndim) return NULL;
  const tj_tir_expr_t *prod = tj_lg_mul(a, tj_lg_cast(a, dtype, tj_lg_load(a, A, nai, ai)),
                                        tj_lg_cast(a, dtype, tj_lg_load(a, B, nbi, bi)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, no, sp);
  const tj_tir_stmt_t *init = tj_lg_store(a, out, no, sp, tj_lg_zero(a, dtype));
  const tj_tir_stmt_t *body = tj_lg_store(a, out, no, sp, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL);
  tj_lg_stage_end(&te, &st, init, body);
  return tj_lg_te_finish(&te, "matmul", out_sinfo, out_expr);
}
