/* Reductions (TVM's python/tvm/relax/transform/legalize_ops/statistical.py):
 *   sum/prod/max/min  topi.<op>(x, axis, keepdims): one block `<x>_red`;
 *   mean              sum, then `T_divide` by the product of the reduced extents;
 *   variance          _te_variance: mean with keepdims, T_subtract, T_multiply (the
 *                     square), then the mean of that (T_multiply_red, T_divide_1);
 *   std               sqrt of the variance, block `compute`.
 * Reduce loops are `k<axis>` over the sorted, deduplicated axes after the spatial
 * loops `ax<i>` of the output (keepdims keeps the reduced dims as extent-1 loops).
 * A 0-d input is kept unlegalized (TOPI refuses to reduce a 0-d tensor).
 * cumsum/cumprod have no LegalizeOps entry in TVM (KEEP rows). */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef enum red_kind { RED_SUM, RED_PROD, RED_MAX, RED_MIN } red_kind_t;

typedef struct red_plan {
  int ndim, n_axes;
  int axes[TJ_LG_MAX_ITERS]; /* sorted, distinct */
  bool reduced[TJ_LG_MAX_ITERS];
  bool keepdims;
} red_plan_t;

static bool plan_reduce(const tj_rx_expr_t *call, const tj_sinfo_t *xs, red_plan_t *p) {
  memset(p, 0, sizeof *p);
  p->ndim = xs->tensor.ndim;
  if (p->ndim < 1 || p->ndim > TJ_LG_MAX_ITERS / 2) return false;
  p->keepdims = tj_attrs_get_int(call->call.attrs, "keepdims", 0) != 0;
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "axis");
  if (v && v->kind == TJ_ATTR_LIST) {
    for (int i = 0; i < v->list.n; i++) {
      int ax;
      if (!tj_lg_axis(v->list.items[i].i, p->ndim, &ax)) return false;
      p->reduced[ax] = true; /* GetRealAxis deduplicates */
    }
  } else {
    for (int i = 0; i < p->ndim; i++) p->reduced[i] = true;
  }
  for (int i = 0; i < p->ndim; i++)
    if (p->reduced[i]) p->axes[p->n_axes++] = i;
  return true;
}

/* Shape of the reduction's result; returns its rank. */
static int reduced_shape(tj_arena_t *a, const red_plan_t *p, bool keepdims, const tj_tir_expr_t *const *in,
                         const tj_tir_expr_t **out) {
  int n = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (!p->reduced[d]) out[n++] = in[d];
    else if (keepdims) out[n++] = tj_tir_i64(a, 1);
  }
  return n;
}


static const tj_tir_expr_t *red_init(tj_arena_t *a, red_kind_t k, tj_dtype_t d) {
  switch (k) {
  case RED_SUM: return tj_lg_zero(a, d);
  case RED_PROD: return tj_lg_const(a, d, 1);
  case RED_MAX: return tj_lg_limit_value(a, d, false);
  case RED_MIN: return tj_lg_limit_value(a, d, true);
  }
  return NULL;
}

static const tj_tir_expr_t *red_combine(tj_arena_t *a, red_kind_t k, const tj_tir_expr_t *acc,
                                        const tj_tir_expr_t *x) {
  static const tj_tir_expr_kind_t ops[] = {TJ_TIR_ADD, TJ_TIR_MUL, TJ_TIR_MAX, TJ_TIR_MIN};
  return acc && x ? tj_tir_binary(a, ops[k], acc, x) : NULL;
}

/* The `<src>_red` block; writes the output `out_name` when it is the function's
 * result, else a root buffer named after the block. */
static const tj_buffer_t *emit_reduce(tj_lg_te_t *te, const tj_buffer_t *src, const red_plan_t *p, bool keepdims,
                                      red_kind_t kind, bool is_output) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  int ns = reduced_shape(a, p, keepdims, src->shape, oshape);
  int n = 0;
  for (int i = 0; i < ns; i++, n++) {
    ext[n] = oshape[i];
    kinds[n] = TJ_ITER_SPATIAL;
    names[n] = tj_arena_printf(a, "ax%d", i);
  }
  for (int i = 0; i < p->n_axes; i++, n++) {
    ext[n] = src->shape[p->axes[i]];
    kinds[n] = TJ_ITER_REDUCE;
    names[n] = tj_arena_printf(a, "k%d", p->axes[i]);
  }
  const char *name = tj_arena_printf(a, "%s_red", src->name);
  if (!name) {
    te->failed = true;
    return NULL;
  }
  const tj_buffer_t *out = is_output ? tj_lg_output(te, name, src->dtype, ns, oshape)
                                     : tj_lg_alloc(te, name, src->dtype, ns, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, name, n, ext, kinds, names);
  if (te->failed) return NULL;
  /* The input index: k<axis> on reduced dims, the matching output iterator elsewhere. */
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  int si = 0, ri = ns;
  for (int d = 0; d < p->ndim; d++) {
    if (p->reduced[d]) {
      idx[d] = st.iv[ri++];
      if (keepdims) si++;
    } else {
      idx[d] = st.iv[si++];
    }
  }
  const tj_tir_expr_t *acc = tj_lg_load(a, out, ns, st.iv);
  tj_lg_stage_end(te, &st, tj_lg_store(a, out, ns, st.iv, red_init(a, kind, src->dtype)),
                  tj_lg_store(a, out, ns, st.iv, red_combine(a, kind, acc, tj_lg_load(a, src, p->ndim, idx))));
  return out;
}

/* topi.divide(x, n) with n an int product: a literal n becomes a multiplication by
 * its reciprocal (TVM's simplifier at the conformance commit), a symbolic one a
 * division by T.Cast(dtype, n). Integer dtypes divide. */
static const tj_tir_expr_t *divide_by(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *n) {
  if (!x || !n) return NULL;
  n = tj_lg_cast(a, x->dtype, n);
  if (n && n->kind == TJ_TIR_FLOAT_IMM && n->float_imm != 0)
    return tj_tir_binary(a, TJ_TIR_MUL, x, tj_tir_float(a, x->dtype, 1.0 / n->float_imm));
  return tj_lg_div(a, x, n);
}

/* _compute_shape_prod: int32 1 times each reduced extent. */
static const tj_tir_expr_t *reduced_count(tj_arena_t *a, const red_plan_t *p, const tj_buffer_t *x) {
  const tj_tir_expr_t *n = tj_tir_int(a, TJ_I32, 1);
  for (int i = 0; i < p->n_axes; i++) n = tj_lg_mul(a, n, x->shape[p->axes[i]]);
  return n;
}

typedef enum ew_op { EW_DIVIDE, EW_SUBTRACT_BCAST, EW_SQUARE, EW_SQRT } ew_op_t;

/* One elementwise stage over `src`'s shape writing `buf`: src / count, src - mean
 * (mean broadcast over the reduced dims), src * src or sqrt(src). */
static void emit_elementwise(tj_lg_te_t *te, const char *block, const tj_buffer_t *buf, ew_op_t op,
                             const tj_buffer_t *src, const tj_buffer_t *other, const red_plan_t *p,
                             const tj_tir_expr_t *count) {
  tj_arena_t *a = te->arena;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, block, src->ndim, src->shape, op == EW_SQRT ? "i" : "ax");
  if (te->failed || !buf) {
    te->failed = true;
    return;
  }
  int n = src->ndim;
  const tj_tir_expr_t *x = tj_lg_load(a, src, n, st.iv), *value = NULL;
  if (op == EW_DIVIDE) {
    value = divide_by(a, x, count);
  } else if (op == EW_SUBTRACT_BCAST) {
    const tj_tir_expr_t *bidx[TJ_LG_MAX_ITERS];
    for (int d = 0; d < n; d++) bidx[d] = p->reduced[d] ? tj_tir_i64(a, 0) : st.iv[d];
    value = tj_lg_bin(a, TJ_TIR_SUB, x, tj_lg_load(a, other, n, bidx));
  } else if (op == EW_SQUARE) {
    value = tj_lg_bin(a, TJ_TIR_MUL, x, tj_lg_load(a, src, n, st.iv));
  } else {
    value = tj_lg_call1(a, "tir.sqrt", x);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, buf, n, st.iv, value));
}

static const tj_sinfo_t *result_sinfo(tj_arena_t *a, const tj_rx_expr_t *call, const tj_sinfo_t *xs,
                                      const red_plan_t *p) {
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  int n = reduced_shape(a, p, p->keepdims, xs->tensor.shape, shape);
  return tj_lg_call_sinfo(call, tj_sinfo_tensor(a, xs->tensor.dtype, n, shape));
}

/* Common entry: checks the input and sets up the builder with x's placeholder. */
static bool begin(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, tj_lg_te_t *te, red_plan_t *p,
                  const tj_sinfo_t **out_xs, const tj_buffer_t **out_x) {
  if (call->call.n_args != 1) return false;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || !plan_reduce(call, xs, p)) return false;
  tj_lg_te_init(te, ctx);
  *out_xs = xs;
  *out_x = tj_lg_placeholder(te, call->call.args[0]);
  return true;
}

static tj_status_t *legalize_simple(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, red_kind_t kind, const char *name,
                                    const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  red_plan_t p;
  const tj_sinfo_t *xs;
  const tj_buffer_t *x;
  if (!begin(ctx, call, &te, &p, &xs, &x)) return NULL;
  if (x) emit_reduce(&te, x, &p, p.keepdims, kind, true);
  return tj_lg_te_finish(&te, name, te.failed ? NULL : result_sinfo(ctx->arena, call, xs, &p), out_expr);
}

tj_status_t *tj_legalize_sum(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_simple(ctx, call, RED_SUM, "sum", out_expr);
}
tj_status_t *tj_legalize_prod(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_simple(ctx, call, RED_PROD, "prod", out_expr);
}
tj_status_t *tj_legalize_max(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_simple(ctx, call, RED_MAX, "max", out_expr);
}
tj_status_t *tj_legalize_min(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_simple(ctx, call, RED_MIN, "min", out_expr);
}

tj_status_t *tj_legalize_mean(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  red_plan_t p;
  const tj_sinfo_t *xs;
  const tj_buffer_t *x;
  if (!begin(ctx, call, &te, &p, &xs, &x)) return NULL;
  tj_arena_t *a = ctx->arena;
  if (x) {
    const tj_buffer_t *red = emit_reduce(&te, x, &p, p.keepdims, RED_SUM, false);
    const tj_buffer_t *out = red ? tj_lg_output(&te, "T_divide", x->dtype, red->ndim, red->shape) : NULL;
    if (red) emit_elementwise(&te, "T_divide", out, EW_DIVIDE, red, NULL, &p, reduced_count(a, &p, x));
  }
  return tj_lg_te_finish(&te, "mean", te.failed ? NULL : result_sinfo(a, call, xs, &p), out_expr);
}

/* _te_variance, then sqrt for std. TVM names the buffers parameters first: the
 * variance's output buffer is `T_divide` while its block is `T_divide_1`. */
static tj_status_t *legalize_variance(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool is_std, const char *name,
                                      const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_lg_te_t te;
  red_plan_t p;
  const tj_sinfo_t *xs;
  const tj_buffer_t *x;
  if (!begin(ctx, call, &te, &p, &xs, &x)) return NULL;
  tj_arena_t *a = ctx->arena;
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *count = reduced_count(a, &p, x);
  const tj_buffer_t *final_out = NULL;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  int on = reduced_shape(a, &p, p.keepdims, x->shape, oshape);
  if (!is_std) final_out = tj_lg_output(&te, "T_divide", x->dtype, on, oshape);
  else final_out = tj_lg_output(&te, "compute", x->dtype, on, oshape);
  const tj_buffer_t *red = emit_reduce(&te, x, &p, true, RED_SUM, false);
  const tj_buffer_t *mean = red ? tj_lg_alloc(&te, is_std ? "T_divide" : "T_divide_1", x->dtype, red->ndim, red->shape)
                                : NULL;
  if (red) emit_elementwise(&te, "T_divide", mean, EW_DIVIDE, red, NULL, &p, count);
  const tj_buffer_t *dev = tj_lg_alloc(&te, "T_subtract", x->dtype, x->ndim, x->shape);
  emit_elementwise(&te, "T_subtract", dev, EW_SUBTRACT_BCAST, x, mean, &p, NULL);
  const tj_buffer_t *sq = tj_lg_alloc(&te, "T_multiply", x->dtype, x->ndim, x->shape);
  if (dev) emit_elementwise(&te, "T_multiply", sq, EW_SQUARE, dev, NULL, &p, NULL);
  const tj_buffer_t *red2 = sq ? emit_reduce(&te, sq, &p, p.keepdims, RED_SUM, false) : NULL;
  const tj_buffer_t *var = is_std ? tj_lg_alloc(&te, "T_divide_1", x->dtype, on, oshape) : final_out;
  if (red2) emit_elementwise(&te, "T_divide_1", var, EW_DIVIDE, red2, NULL, &p, count);
  if (is_std && var) emit_elementwise(&te, "compute", final_out, EW_SQRT, var, NULL, &p, NULL);
  return tj_lg_te_finish(&te, name, te.failed ? NULL : result_sinfo(a, call, xs, &p), out_expr);
}

tj_status_t *tj_legalize_variance(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_variance(ctx, call, false, "variance", out_expr);
}
tj_status_t *tj_legalize_std(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_variance(ctx, call, true, "std", out_expr);
}
