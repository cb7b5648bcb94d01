/* tile, repeat and flip (TVM's legalize_ops/manipulate.py → topi.tile, topi.repeat,
 * topi.flip): one copy block each, reading the data at a modular, divided or
 * reversed index. The output shape is the call's inferred struct info. */
#include "transforms/legalize/legalize.h"

/* Declines unless data and the call's result have known shapes; else begins the
 * PrimFunc with its placeholder and output `block` and opens the block's stage. */
static bool begin_copy(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, tj_lg_te_t *te, const char *block,
                       const tj_buffer_t **out_x, const tj_buffer_t **out_y, tj_lg_stage_t *st) {
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  const tj_sinfo_t *os = call->sinfo;
  if (call->call.n_args != 1 || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os) ||
      xs->tensor.ndim > TJ_LG_MAX_ITERS || os->tensor.ndim > TJ_LG_MAX_ITERS || os->tensor.ndim < 1)
    return false;
  tj_lg_te_init(te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(te, call->call.args[0]);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < os->tensor.ndim; i++) oshape[i] = tj_lg_shape_expr(te, os->tensor.shape[i]);
  const tj_buffer_t *y = x ? tj_lg_output(te, block, x->dtype, os->tensor.ndim, oshape) : NULL;
  if (y) tj_lg_stage_spatial(te, st, block, y->ndim, y->shape, "ax");
  *out_x = x;
  *out_y = y;
  return true;
}

/* ---------------- tile ----------------
 * T_tile[i...] = data[i_k % dim_k] over the trailing data dims. */
tj_status_t *tj_legalize_tile(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  tj_lg_stage_t st;
  const tj_buffer_t *x, *y;
  if (!begin_copy(ctx, call, &te, "T_tile", &x, &y, &st)) return NULL;
  if (te.failed || !y || y->ndim < x->ndim) return tj_lg_te_finish(&te, "tile", NULL, out_expr);
  tj_arena_t *a = te.arena;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  int off = y->ndim - x->ndim;
  for (int d = 0; d < x->ndim; d++) idx[d] = tj_lg_floormod(a, st.iv[off + d], x->shape[d]);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, y, y->ndim, st.iv, tj_lg_load(a, x, x->ndim, idx)));
  return tj_lg_te_finish(&te, "tile", call->sinfo, out_expr);
}

/* ---------------- flip ----------------
 * T_reverse_sequence: the axis is read at dim − 1 − i (folded to a literal when the
 * dim is static, `dim − i − 1` otherwise, as TVM prints them). */
tj_status_t *tj_legalize_flip(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  tj_lg_stage_t st;
  const tj_buffer_t *x, *y;
  if (!begin_copy(ctx, call, &te, "T_reverse_sequence", &x, &y, &st)) return NULL;
  int axis;
  if (te.failed || !y || !tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", 0), x->ndim, &axis))
    return tj_lg_te_finish(&te, "flip", NULL, out_expr);
  tj_arena_t *a = te.arena;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0; d < x->ndim; d++) idx[d] = st.iv[d];
  int64_t n;
  const tj_tir_expr_t *one = tj_tir_i64(a, 1), *v = st.iv[axis];
  idx[axis] = tj_tir_is_const_int(x->shape[axis], &n) ? tj_lg_sub(a, tj_tir_i64(a, n - 1), v)
                                                      : tj_lg_sub(a, tj_lg_sub(a, x->shape[axis], v), one);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, y, y->ndim, st.iv, tj_lg_load(a, x, x->ndim, idx)));
  return tj_lg_te_finish(&te, "flip", call->sinfo, out_expr);
}

/* ---------------- repeat ----------------
 * With an axis: T_repeat[..., i, ...] = data[..., i // repeats, ...]. Without one,
 * topi first flattens into a root buffer T_reshape (block T_reshape, read at
 * `i % (P·s) // P` per dim, P the product of the later dims) and repeats that. */

static void flatten_stage(tj_lg_te_t *te, const tj_buffer_t *x, const tj_buffer_t *flat) {
  tj_arena_t *a = te->arena;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "T_reshape", 1, flat->shape, "ax");
  if (te->failed) return;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS], *v = st.iv[0];
  const tj_tir_expr_t *P = tj_tir_i64(a, 1);
  for (int d = x->ndim - 1; d >= 0; d--) {
    const tj_tir_expr_t *span = tj_lg_mul(a, P, x->shape[d]);
    const tj_tir_expr_t *within = tj_lg_floormod(a, v, span);
    int64_t p;
    idx[d] = tj_tir_is_const_int(P, &p) && p == 1 ? within : tj_lg_floordiv(a, within, P);
    P = span;
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, flat, 1, st.iv, tj_lg_load(a, x, x->ndim, idx)));
}

/* topi.repeat's output dim is `repeats * dim` as TE builds it (constants folded, nothing
 * reordered): that is the output buffer's shape and call_tir's out_sinfo, while the loops
 * run over the extent Relax inferred and simplified (`a * 2` against `2 * a`). */
static tj_status_t *repeat_axis(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, int64_t axis_attr, int64_t reps,
                                const tj_rx_expr_t **out_expr) {
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]), *os = call->sinfo;
  int axis;
  if (call->call.n_args != 1 || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os) ||
      os->tensor.ndim > TJ_LG_MAX_ITERS || os->tensor.ndim != xs->tensor.ndim || !tj_lg_axis(axis_attr, xs->tensor.ndim, &axis))
    return NULL;
  tj_lg_te_t te;
  tj_lg_stage_t st;
  tj_lg_te_init(&te, ctx);
  tj_arena_t *a = te.arena;
  int nd = os->tensor.ndim;
  const tj_tir_expr_t **rx_shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, nd);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *extent[TJ_LG_MAX_ITERS];
  tj_sinfo_t *out_sinfo = TJ_ARENA_NEW(a, tj_sinfo_t);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!rx_shape || !out_sinfo || !x) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
  for (int i = 0; i < nd; i++) {
    rx_shape[i] = i == axis ? tj_lg_mul(a, tj_tir_i64(a, reps), xs->tensor.shape[i]) : os->tensor.shape[i];
    oshape[i] = tj_lg_shape_expr(&te, rx_shape[i]);
    extent[i] = tj_lg_shape_expr(&te, os->tensor.shape[i]);
  }
  *out_sinfo = *os;
  out_sinfo->tensor.shape = rx_shape;
  const tj_buffer_t *y = tj_lg_output(&te, "T_repeat", x->dtype, nd, oshape);
  if (!y) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
  tj_lg_stage_spatial(&te, &st, "T_repeat", nd, extent, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0; d < nd; d++) idx[d] = st.iv[d];
  idx[axis] = tj_lg_floordiv(a, st.iv[axis], tj_tir_i64(a, reps));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, y, nd, st.iv, tj_lg_load(a, x, nd, idx)));
  return tj_lg_te_finish(&te, "repeat", out_sinfo, out_expr);
}

tj_status_t *tj_legalize_repeat(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  bool flat = !av || av->kind == TJ_ATTR_NONE;
  int64_t reps = tj_attrs_get_int(call->call.attrs, "repeats", 1);
  if (flat) {
    tj_lg_stage_t st;
    const tj_buffer_t *x, *y;
    /* the flattening stage must come first, so the output stage is opened after it */
    const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
    if (call->call.n_args != 1 || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(call->sinfo) ||
        xs->tensor.ndim > TJ_LG_MAX_ITERS || call->sinfo->tensor.ndim != 1)
      return NULL;
    tj_lg_te_init(&te, ctx);
    tj_arena_t *a = te.arena;
    x = tj_lg_placeholder(&te, call->call.args[0]);
    if (!x) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
    const tj_tir_expr_t *n = tj_tir_i64(a, 1);
    for (int d = 0; d < x->ndim; d++) n = tj_lg_mul(a, n, x->shape[d]);
    const tj_tir_expr_t *oshape[1] = {tj_lg_shape_expr(&te, call->sinfo->tensor.shape[0])};
    y = tj_lg_output(&te, "T_repeat", x->dtype, 1, oshape);
    const tj_buffer_t *f = tj_lg_alloc(&te, "T_reshape", x->dtype, 1, &n);
    if (!y || !f) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
    flatten_stage(&te, x, f);
    tj_lg_stage_spatial(&te, &st, "T_repeat", 1, y->shape, "ax");
    if (te.failed) return tj_lg_te_finish(&te, "repeat", NULL, out_expr);
    const tj_tir_expr_t *i0 = tj_lg_floordiv(a, st.iv[0], tj_tir_i64(a, reps));
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, y, 1, st.iv, tj_lg_load(a, f, 1, &i0)));
    return tj_lg_te_finish(&te, "repeat", call->sinfo, out_expr);
  }
  return repeat_axis(ctx, call, av->i, reps, out_expr);
}
