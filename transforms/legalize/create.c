/* Creation ops (TVM's legalize_ops/create.py):
 *   full/full_like     topi.full → `full`, block T_full; a 0-d constant fill becomes a
 *                      literal of the output dtype (no input buffer), a tensor fill is
 *                      read as fill[()] (cast when the dtypes differ); x of full_like is
 *                      not passed, only its shape is used;
 *   ones/zeros(_like)  topi.full with 1 / 0 → `ones` / `zeros`;
 *   tril/triu          topi.trilu → `tril` / `triu`, block `trilu`:
 *                      Select(col <= row + k (tril) / col >= row + k (triu), x, 0), written
 *                      in the form TVM's simplifier leaves for a literal k;
 *   arange             all three values literal: folded to R.const (numpy.arange), as TVM
 *                      does; otherwise topi.arange → `arange`, block T_arange, with the
 *                      symbolic values as trailing parameters passed by tir_vars.
 * The output dtype and shape come from the call's struct info (an annotation wins). */
#include <math.h>
#include <string.h>

#include "transforms/legalize/legalize.h"

/* ---------------- full and friends ---------------- */

/* Builds the T_full PrimFunc; fill_arg NULL means the literal `fill` (1 or 0). */
static tj_status_t *legalize_fill(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t *fill_arg,
                                  double fill, const char *name, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *out_sinfo = call->sinfo;
  if (!tj_lg_tensor_known(out_sinfo) || out_sinfo->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  tj_dtype_t dt = out_sinfo->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_tir_expr_t *value = NULL;
  if (!fill_arg) {
    value = tj_lg_const(a, dt, fill);
  } else if ((value = tj_lg_scalar_const(a, fill_arg)) != NULL) {
    value = tj_lg_cast(a, dt, value);
  } else {
    const tj_sinfo_t *fs = tj_lg_arg_sinfo(a, fill_arg);
    if (!tj_lg_tensor_known(fs) || fs->tensor.ndim != 0) return NULL;
    const tj_buffer_t *f = tj_lg_placeholder(&te, fill_arg);
    value = f ? tj_lg_cast(a, dt, tj_lg_load(a, f, 0, NULL)) : NULL;
  }
  int n = out_sinfo->tensor.ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) shape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_full", dt, n, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_full", n, shape, "ax");
  if (te.failed || !value || !out) return tj_lg_te_finish(&te, name, NULL, out_expr);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

tj_status_t *tj_legalize_full(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  return call->call.n_args == 2 ? legalize_fill(ctx, call, call->call.args[1], 0, "full", out_expr) : NULL;
}
tj_status_t *tj_legalize_full_like(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  return call->call.n_args == 2 ? legalize_fill(ctx, call, call->call.args[1], 0, "full", out_expr) : NULL;
}
tj_status_t *tj_legalize_ones(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_fill(ctx, call, NULL, 1, "ones", out_expr);
}
tj_status_t *tj_legalize_ones_like(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_fill(ctx, call, NULL, 1, "ones", out_expr);
}
tj_status_t *tj_legalize_zeros(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_fill(ctx, call, NULL, 0, "zeros", out_expr);
}
tj_status_t *tj_legalize_zeros_like(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_fill(ctx, call, NULL, 0, "zeros", out_expr);
}

/* ---------------- tril, triu ---------------- */

static const tj_tir_expr_t *plus(tj_arena_t *a, const tj_tir_expr_t *x, int64_t c) {
  return tj_tir_binary(a, TJ_TIR_ADD, x, tj_tir_i64(a, c));
}

/* col <= row + k (tril) or col >= row + k (triu), simplified as TVM prints it. */
static const tj_tir_expr_t *trilu_cond(tj_arena_t *a, bool upper, const tj_tir_expr_t *row, const tj_tir_expr_t *col,
                                       const tj_tir_expr_t *k) {
  int64_t kv;
  if (!tj_tir_is_const_int(k, &kv))
    return tj_tir_binary(a, upper ? TJ_TIR_GE : TJ_TIR_LE, col, tj_tir_binary(a, TJ_TIR_ADD, row, k));
  if (!upper) {
    if (kv > 0) return tj_tir_binary(a, TJ_TIR_LE, col, plus(a, row, kv));
    if (kv == 0) return tj_tir_binary(a, TJ_TIR_LE, col, row);
    if (kv == -1) return tj_tir_binary(a, TJ_TIR_LT, col, row);
    return tj_tir_binary(a, TJ_TIR_LE, plus(a, col, -kv), row);
  }
  if (kv == 1) return tj_tir_binary(a, TJ_TIR_LT, row, col);
  if (kv > 1) return tj_tir_binary(a, TJ_TIR_LE, plus(a, row, kv), col);
  if (kv == 0) return tj_tir_binary(a, TJ_TIR_LE, row, col);
  return tj_tir_binary(a, TJ_TIR_LE, row, plus(a, col, -kv));
}

static tj_status_t *legalize_trilu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool upper,
                                   const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = upper ? "triu" : "tril";
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim < 2 || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_tir_expr_t *k = tj_tir_i64(a, 0);
  if (call->call.n_args > 1) {
    const tj_sinfo_t *ks = tj_lg_arg_sinfo(a, call->call.args[1]);
    if (!ks || ks->kind != TJ_SINFO_PRIM) return NULL;
    k = ks->prim.value ? tj_lg_shape_expr(&te, ks->prim.value) : tj_lg_prim_param(&te, call->call.args[1]);
  }
  if (!x || !k) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int n = x->ndim;
  const tj_buffer_t *out = tj_lg_output(&te, "trilu", x->dtype, n, x->shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "trilu", n, x->shape, "i");
  if (te.failed || !out) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *cond = trilu_cond(a, upper, st.iv[n - 2], st.iv[n - 1], k);
  const tj_tir_expr_t *value = tj_tir_select(a, cond, tj_lg_load(a, x, n, st.iv), tj_lg_zero(a, x->dtype));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, tj_lg_call_sinfo(call, xs), out_expr);
}

tj_status_t *tj_legalize_tril(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_trilu(ctx, call, false, out_expr);
}
tj_status_t *tj_legalize_triu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_trilu(ctx, call, true, out_expr);
}

/* ---------------- arange ---------------- */

static bool literal(const tj_rx_expr_t *arg, double *out) {
  if (arg->kind != TJ_RX_PRIM_VALUE) return false;
  const tj_tir_expr_t *v = arg->prim_value.value;
  if (v->kind == TJ_TIR_INT_IMM) return *out = (double)v->int_imm, true;
  if (v->kind == TJ_TIR_FLOAT_IMM) return *out = v->float_imm, true;
  return false;
}

/* Writes element i = start + i * step in dtype dt (int64/int32/float32/float64). */
static bool store_element(tj_dtype_t dt, void *data, int64_t i, double value) {
  if (tj_dtype_eq(dt, TJ_I64)) ((int64_t *)data)[i] = (int64_t)value;
  else if (tj_dtype_eq(dt, TJ_I32)) ((int32_t *)data)[i] = (int32_t)value;
  else if (tj_dtype_eq(dt, TJ_F32)) ((float *)data)[i] = (float)value;
  else if (tj_dtype_eq(dt, TJ_F64)) ((double *)data)[i] = value;
  else return false;
  return true;
}

/* topi.arange with a symbolic value: block T_arange, i * step + start, its length
 * from the call's struct info; symbolic values become trailing int64 parameters. */
static tj_status_t *legalize_symbolic_arange(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                             const tj_rx_expr_t **out_expr) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *s = call->sinfo;
  if (!tj_lg_tensor_known(s) || s->tensor.ndim != 1) return NULL;
  tj_dtype_t dt = s->tensor.dtype;
  int n_args = call->call.n_args;
  const tj_tir_expr_t *start = tj_tir_i64(a, 0), *step = tj_tir_i64(a, 1);
  for (int i = 0; i < n_args; i++) {
    const tj_rx_expr_t *arg = call->call.args[i];
    if (arg->kind != TJ_RX_PRIM_VALUE) return NULL;
    int slot = n_args == 1 ? 1 : i;
    if (slot == 0) start = arg->prim_value.value;
    if (slot == 2) step = arg->prim_value.value;
  }
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_tir_expr_t *len = tj_lg_shape_expr(&te, s->tensor.shape[0]);
  start = tj_lg_cast(a, dt, tj_lg_shape_expr(&te, start));
  step = tj_lg_cast(a, dt, tj_lg_shape_expr(&te, step));
  const tj_buffer_t *out = tj_lg_output(&te, "T_arange", dt, 1, &len);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_arange", 1, &len, "ax");
  if (te.failed || !out || !start || !step) return tj_lg_te_finish(&te, "arange", NULL, out_expr);
  const tj_tir_expr_t *value = tj_tir_binary(a, TJ_TIR_ADD, tj_tir_binary(a, TJ_TIR_MUL, tj_lg_cast(a, dt, st.iv[0]), step), start);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, 1, st.iv, value));
  return tj_lg_te_finish(&te, "arange", s, out_expr);
}

tj_status_t *tj_legalize_arange(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  int n_args = call->call.n_args;
  double v[3] = {0, 0, 1};
  for (int i = 0; i < n_args; i++)
    if (!literal(call->call.args[i], &v[n_args == 1 ? 1 : i])) return legalize_symbolic_arange(ctx, call, out_expr);
  const tj_sinfo_t *s = call->sinfo;
  if (!tj_lg_tensor_known(s) || s->tensor.ndim != 1 || v[2] == 0) return NULL;
  tj_dtype_t dt = s->tensor.dtype;
  /* numpy.arange's length, which is what TVM's constant holds */
  double len_d = ceil((v[1] - v[0]) / v[2]);
  int64_t len = len_d > 0 ? (int64_t)len_d : 0;
  if (len > (1 << 24)) return NULL;
  size_t nbytes = (size_t)len * tj_dtype_bytes(dt);
  void *data = tj_arena_alloc(a, nbytes ? nbytes : 1);
  if (!data) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory folding arange");
  for (int64_t i = 0; i < len; i++)
    if (!store_element(dt, data, i, v[0] + (double)i * v[2])) return NULL;
  const tj_rx_expr_t *c = tj_rx_constant(a, dt, 1, &len, data, nbytes);
  const tj_tir_expr_t *ext = tj_tir_i64(a, len);
  const tj_sinfo_t *cs = tj_sinfo_tensor(a, dt, 1, &ext);
  *out_expr = c && cs ? tj_rx_with_sinfo(a, c, cs) : NULL;
  if (!*out_expr) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory folding arange");
  return NULL;
}
