/* R.cumsum / R.cumprod as TVM's DispatchSortScan lowers them on CPU: topi.cumsum /
 * topi.cumprod (topi/scan.py, `scanop`), an ir_builder extern `cumsum_generic` /
 * `cumprod_generic` (extern.c). Per (before, after) position of the scanned axis, in
 * parallel, a serial loop carries the running value:
 *   out[base] = data[base]                (exclusive: the identity, 0 or 1)
 *   out[cur]  = out[prev] op data[cur]    (exclusive: data[prev])
 * with base = i * len * after + j and cur/prev k and k - 1 steps of `after` further.
 * axis=None scans the flattened tensor (out is 1-D); the dtype attr casts each element
 * before it is accumulated, as TOPI's maybe_cast does. */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct scan_ir {
  const tj_buffer_t *data, *out;
  bool prod, exclusive;
  const tj_tir_expr_t *before, *len, *after; /* int64 */
} scan_ir_t;

static const tj_tir_expr_t *maybe_cast(tj_arena_t *a, const scan_ir_t *s, const tj_tir_expr_t *x) {
  return tj_dtype_eq(x->dtype, s->out->dtype) ? x : tj_tir_cast(a, s->out->dtype, x);
}

static const tj_tir_stmt_t *scan_body(tj_arena_t *a, const scan_ir_t *s) {
  tj_dtype_t dt = s->out->dtype;
  const tj_tir_expr_t *extent = tj_lg_mul(a, s->before, s->after);
  int64_t len;
  /* an empty axis: TOPI would still store out[base]; nothing to do instead */
  if (tj_tir_is_const_int(s->len, &len) && len == 0) extent = tj_tir_i64(a, 0);
  const tj_tir_expr_t *fused = tj_tir_var(a, "fused", TJ_I64);
  const tj_tir_expr_t *i = tj_lg_floordiv(a, fused, s->after), *j = tj_lg_floormod(a, fused, s->after);
  const tj_tir_expr_t *base = tj_lg_add(a, tj_lg_mul(a, tj_lg_mul(a, i, s->len), s->after), j);
  const tj_tir_expr_t *first =
      s->exclusive ? tj_lg_const(a, dt, s->prod ? 1 : 0) : maybe_cast(a, s, tj_lg_flat_load(a, s->data, base));
  const tj_tir_expr_t *k0 = tj_tir_var(a, "_k", TJ_I64);
  const tj_tir_expr_t *k = tj_lg_add(a, k0, tj_tir_i64(a, 1));
  const tj_tir_expr_t *cur = tj_lg_add(a, base, tj_lg_mul(a, k, s->after));
  const tj_tir_expr_t *prev = tj_lg_add(a, base, tj_lg_mul(a, tj_lg_sub(a, k, tj_tir_i64(a, 1)), s->after));
  const tj_tir_expr_t *x = maybe_cast(a, s, tj_lg_flat_load(a, s->data, s->exclusive ? prev : cur));
  const tj_tir_expr_t *acc = tj_lg_bin(a, s->prod ? TJ_TIR_MUL : TJ_TIR_ADD, tj_lg_flat_load(a, s->out, prev), x);
  const tj_tir_stmt_t *loop = tj_tir_for(a, k0, tj_tir_i64(a, 0), tj_lg_sub(a, s->len, tj_tir_i64(a, 1)),
                                         TJ_FOR_SERIAL, tj_lg_flat_store(a, s->out, cur, acc));
  const tj_tir_stmt_t *seq[2] = {tj_lg_flat_store(a, s->out, base, first), loop};
  if (!seq[0] || !seq[1]) return NULL;
  return tj_tir_for(a, fused, tj_tir_i64(a, 0), extent, TJ_FOR_PARALLEL, tj_tir_seq(a, 2, seq));
}

static tj_status_t *dispatch_scan(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool prod,
                                  const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  const char *name = prod ? "cumprod" : "cumsum";
  scan_ir_t s = {.prod = prod, .exclusive = tj_attrs_get_int(call->call.attrs, "exclusive", 0) != 0};
  tj_dtype_t dt = tj_lg_attr_dtype(call->call.attrs, "dtype");
  if (tj_dtype_is_void(dt)) dt = xs->tensor.dtype;
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  s.data = tj_lg_extern_input(&te, call->call.args[0]);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int n = s.data->ndim, axis = -1;
  if (av && av->kind == TJ_ATTR_INT && !tj_lg_axis(av->i, n, &axis)) return NULL;
  s.before = s.after = tj_tir_i64(a, 1);
  const tj_tir_expr_t *total = tj_tir_i64(a, 1), *oshape[TJ_LG_MAX_ITERS];
  for (int d = 0; d < n; d++) {
    total = tj_lg_mul(a, total, s.data->shape[d]);
    if (axis >= 0 && d < axis) s.before = tj_lg_mul(a, s.before, s.data->shape[d]);
    if (axis >= 0 && d > axis) s.after = tj_lg_mul(a, s.after, s.data->shape[d]);
    oshape[d] = s.data->shape[d];
  }
  s.len = axis >= 0 ? s.data->shape[axis] : total;
  int on = axis >= 0 ? n : 1;
  if (axis < 0) oshape[0] = total;
  s.out = tj_lg_output(&te, "out_buf", dt, on, oshape);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  tj_lg_extern_block(&te, prod ? "cumprod_generic" : "cumsum_generic", scan_body(a, &s));
  const tj_sinfo_t *os = call->sinfo;
  if (!tj_lg_tensor_known(os)) return NULL;
  return tj_lg_te_finish(&te, name, os, out_expr);
}

tj_status_t *tj_dispatch_cumsum(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return dispatch_scan(ctx, call, false, out_expr);
}

tj_status_t *tj_dispatch_cumprod(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return dispatch_scan(ctx, call, true, out_expr);
}
