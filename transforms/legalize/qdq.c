/* R.quantize / R.dequantize → TVM's legalize_ops/qdq.py te computes, one block each
 * (`quantized`, `dequantized`, loops i0, i1, ...).
 *   quantize:   cast(out, max(min(round(x / s) + cast(x dtype, zp), qmax), qmin)),
 *               in the data dtype;
 *   dequantize: cast(f32, cast(i32, x) − cast(i32, zp)) · cast(f32, s), and for a
 *               non-f32 out_dtype clamped to its finite range, then cast.
 * A 0-d constant scale or zero point is inlined as a literal (x / s then prints as
 * x · (1/s), as TVM's constant folding gives it); any other is a PrimFunc parameter
 * read at the data's `axis` index (at 0 when it holds one value). */
#include "transforms/legalize/legalize.h"

typedef struct qdq_param {
  const tj_tir_expr_t *literal; /* a 0-d constant, or NULL */
  const tj_buffer_t *buf;       /* otherwise its placeholder */
} qdq_param_t;

static void param_of(tj_lg_te_t *te, const tj_rx_expr_t *arg, qdq_param_t *p) {
  p->literal = tj_lg_scalar_const(te->arena, arg);
  p->buf = p->literal ? NULL : tj_lg_placeholder(te, arg);
}

/* The parameter's value at output index iv. */
static const tj_tir_expr_t *param_at(tj_arena_t *a, const qdq_param_t *p, const tj_tir_expr_t *const *iv, int axis) {
  if (p->literal) return p->literal;
  if (!p->buf) return NULL;
  if (p->buf->ndim == 0) return tj_lg_load(a, p->buf, 0, NULL);
  int64_t n;
  const tj_tir_expr_t *i = tj_tir_is_const_int(p->buf->shape[0], &n) && n == 1 ? tj_tir_i64(a, 0) : iv[axis];
  return tj_lg_load(a, p->buf, 1, &i);
}

/* Largest finite value of an integer dtype (lowest when `lowest`). */
static double int_limit(tj_dtype_t d, bool lowest) {
  if (d.code == TJ_DT_UINT) return lowest ? 0.0 : (double)((1ull << d.bits) - 1);
  return lowest ? -(double)(1ull << (d.bits - 1)) : (double)((1ull << (d.bits - 1)) - 1);
}

static const tj_tir_expr_t *clamp(tj_arena_t *a, const tj_tir_expr_t *v, double lo, double hi) {
  if (!v) return NULL;
  v = tj_tir_binary(a, TJ_TIR_MIN, v, tj_tir_float(a, v->dtype, hi));
  return v ? tj_tir_binary(a, TJ_TIR_MAX, v, tj_tir_float(a, v->dtype, lo)) : NULL;
}

static const tj_tir_expr_t *quantized_value(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *s,
                                            const tj_tir_expr_t *z, tj_dtype_t out) {
  if (!x || !s || !z) return NULL;
  const tj_tir_expr_t *scaled = s->kind == TJ_TIR_FLOAT_IMM && s->float_imm != 0
                                    ? tj_tir_binary(a, TJ_TIR_MUL, x, tj_tir_float(a, x->dtype, 1.0 / s->float_imm))
                                    : tj_lg_bin(a, TJ_TIR_DIV, x, tj_lg_cast(a, x->dtype, s));
  const tj_tir_expr_t *v = tj_lg_bin(a, TJ_TIR_ADD, tj_lg_call1(a, "tir.round", scaled), tj_lg_cast(a, x->dtype, z));
  v = clamp(a, v, int_limit(out, true), int_limit(out, false));
  return v ? tj_tir_cast(a, out, v) : NULL;
}

static const tj_tir_expr_t *dequantized_value(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *s,
                                              const tj_tir_expr_t *z, tj_dtype_t out) {
  if (!x || !s || !z) return NULL;
  const tj_tir_expr_t *diff = tj_lg_bin(a, TJ_TIR_SUB, tj_lg_cast(a, TJ_I32, x), tj_lg_cast(a, TJ_I32, z));
  const tj_tir_expr_t *v = tj_lg_bin(a, TJ_TIR_MUL, tj_lg_cast(a, TJ_F32, diff), tj_lg_cast(a, TJ_F32, s));
  if (tj_dtype_eq(out, TJ_F32)) return v;
  double hi = out.bits == 16 ? 65504.0 : 3.4028234663852886e38;
  v = clamp(a, v, -hi, hi);
  return v ? tj_tir_cast(a, out, v) : NULL;
}

static tj_status_t *legalize_qdq(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool quantize,
                                 const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = quantize ? "quantize" : "dequantize", *block = quantize ? "quantized" : "dequantized";
  tj_arena_t *a = ctx->arena;
  if (call->call.n_args != 3 || !tj_lg_tensor_known(call->sinfo)) return NULL;
  for (int i = 0; i < 3; i++)
    if (!tj_lg_tensor_known(tj_lg_arg_sinfo(a, call->call.args[i]))) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  int axis;
  if (xs->tensor.ndim < 1 || xs->tensor.ndim > TJ_LG_MAX_ITERS ||
      !tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", -1), xs->tensor.ndim, &axis))
    return NULL;
  tj_dtype_t out_dt = call->sinfo->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  qdq_param_t s, z;
  param_of(&te, call->call.args[1], &s);
  param_of(&te, call->call.args[2], &z);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_buffer_t *out = tj_lg_output(&te, block, out_dt, x->ndim, x->shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, block, x->ndim, x->shape, "i");
  if (te.failed || !out) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *xv = tj_lg_load(a, x, x->ndim, st.iv);
  const tj_tir_expr_t *sv = param_at(a, &s, st.iv, axis), *zv = param_at(a, &z, st.iv, axis);
  const tj_tir_expr_t *v = quantize ? quantized_value(a, xv, sv, zv, out_dt) : dequantized_value(a, xv, sv, zv, out_dt);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, x->ndim, st.iv, v));
  return tj_lg_te_finish(&te, name, te.failed ? NULL : call->sinfo, out_expr);
}

tj_status_t *tj_legalize_quantize(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_qdq(ctx, call, true, out_expr);
}

tj_status_t *tj_legalize_dequantize(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_qdq(ctx, call, false, out_expr);
}
