/* Pooling (TVM's legalize_ops/nn.py): R.nn.max_pool2d / R.nn.avg_pool2d →
 * topi.nn.pool2d (`max_pool2d` / `avg_pool2d`) and R.nn.adaptive_avg_pool2d →
 * topi.nn.adaptive_pool (`adaptive_avg_pool2d`).
 *
 * pool2d: an optional `pad_temp` (only when some padding, including ceil_mode's
 * extra stride - 1 at the end, is non-zero; padded with the dtype's lowest value for
 * max, 0 for avg), then `pool_max` (a max-reduction over rv0, rv1 reading
 * pad_temp[.., o * stride + rv * dilation, ..], annotated
 * {"schedule_rule": "meta_schedule.pool_max"}), or `pool_sum` and `pool_avg` (the
 * sum divided by the window's element count: all cells with count_include_pad, else
 * the in-bounds cells with a minimum of 1, in the canonical form TVM's simplifier
 * leaves it).
 *
 * adaptive_avg_pool2d: `adaptive_pool_sum` over the window [floor(i*I/O),
 * ceil((i+1)*I/O)) and `adaptive_pool_avg`. When O divides I the window is I/O wide
 * everywhere and the average is a multiplication by 1/(kh*kw) (TVM's TIR). When it
 * does not (the window width varies), the reduction runs over the widest window with a
 * guard and divides by the actual width: the same numbers as TOPI, a different TIR.
 *
 * Declines (keeps the op) when out_layout differs from layout or H/W are symbolic
 * (TOPI casts pooling shapes to int32; TVM does not support that case either). */
#include <ctype.h>
#include <float.h>
#include <string.h>

#include "transforms/legalize/legalize.h"

static bool hw_axes(const char *layout, int ndim, int *h, int *w) {
  int n = 0;
  *h = *w = -1;
  for (const char *p = layout; *p; p++) {
    if (isdigit((unsigned char)*p)) continue;
    if (*p == 'H') *h = n;
    if (*p == 'W') *w = n;
    n++;
  }
  return n == ndim && *h >= 0 && *w >= 0;
}

static double lowest(tj_dtype_t d) {
  if (tj_dtype_is_float(d)) {
    if (d.bits == 16) return -65504.0;
    if (d.bits == 32) return -(double)FLT_MAX;
    return -DBL_MAX;
  }
  if (d.code == TJ_DT_UINT || d.bits == 1) return 0;
  return -(double)((uint64_t)1 << (d.bits - 1));
}

typedef struct pool_plan {
  int ndim, h, w;
  int64_t in[2], k[2], s[2], d[2], pb[2], pa[2], extra[2];
  bool ceil_mode, count_include_pad;
} pool_plan_t;

static bool plan_pool(const tj_rx_expr_t *call, const tj_sinfo_t *xs, pool_plan_t *p) {
  memset(p, 0, sizeof *p);
  const tj_attrs_t *at = call->call.attrs;
  const char *layout = tj_attrs_get_str(at, "layout", "NCHW");
  const char *out_layout = tj_attrs_get_str(at, "out_layout", layout);
  if (strcmp(layout, out_layout) != 0) return false;
  p->ndim = xs->tensor.ndim;
  if (p->ndim > TJ_LG_MAX_ITERS - 2 || !hw_axes(layout, p->ndim, &p->h, &p->w)) return false;
  if (!tj_tir_is_const_int(xs->tensor.shape[p->h], &p->in[0]) || !tj_tir_is_const_int(xs->tensor.shape[p->w], &p->in[1]))
    return false;
  int64_t v[4];
  if (tj_lg_attr_ints(at, "pool_size", v, 2) != 2) return false;
  p->k[0] = v[0], p->k[1] = v[1];
  if (tj_lg_attr_ints(at, "strides", v, 2) != 2) return false;
  p->s[0] = v[0], p->s[1] = v[1];
  if (tj_lg_attr_ints(at, "dilation", v, 2) != 2) return false;
  p->d[0] = v[0], p->d[1] = v[1];
  if (tj_lg_attr_ints(at, "padding", v, 4) != 4) return false;
  p->pb[0] = v[0], p->pb[1] = v[1], p->pa[0] = v[2], p->pa[1] = v[3];
  p->ceil_mode = tj_attrs_get_int(at, "ceil_mode", 0) != 0;
  p->count_include_pad = tj_attrs_get_int(at, "count_include_pad", 0) != 0;
  for (int i = 0; i < 2; i++) {
    if (p->k[i] < 1 || p->s[i] < 1 || p->d[i] < 1) return false;
    p->extra[i] = p->ceil_mode ? p->s[i] - 1 : 0;
  }
  return true;
}

/* pad_temp: x padded on H and W by (pb, pa + extra) with `fill`. */
static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *x, const pool_plan_t *p, double fill) {
  tj_arena_t *a = te->arena;
  int64_t before[TJ_LG_MAX_ITERS] = {0}, after[TJ_LG_MAX_ITERS] = {0};
  before[p->h] = p->pb[0], before[p->w] = p->pb[1];
  after[p->h] = p->pa[0] + p->extra[0], after[p->w] = p->pa[1] + p->extra[1];
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int d = 0; d < x->ndim; d++) shape[d] = tj_lg_add(a, x->shape[d], tj_tir_i64(a, before[d] + after[d]));
  const tj_buffer_t *pad = tj_lg_alloc(te, "pad_temp", x->dtype, x->ndim, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "pad_temp", x->ndim, shape, "ax");
  if (te->failed) return NULL;
  const tj_tir_expr_t *guard = NULL;
  for (int d = 0; d < x->ndim; d++) {
    const tj_tir_expr_t *v = st.iv[d];
    if (before[d] == 0 && after[d] == 0) {
      idx[d] = v;
      continue;
    }
    idx[d] = tj_lg_sub(a, v, tj_tir_i64(a, before[d]));
    if (before[d] > 0) {
      const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LE, tj_tir_i64(a, before[d]), v);
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
    if (after[d] > 0) {
      const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LT, v, tj_lg_add(a, x->shape[d], tj_tir_i64(a, before[d])));
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
  }
  const tj_tir_expr_t *value = tj_lg_load(a, x, x->ndim, idx);
  if (guard && value) {
    const tj_tir_expr_t *args[3] = {guard, value, tj_lg_const(a, x->dtype, fill)};
    value = tj_tir_call(a, x->dtype, "tir.if_then_else", 3, args);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, pad, x->ndim, st.iv, value));
  return pad;
}

/* A window reduction stage over the output shape plus rv0, rv1. */
static void begin_window(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n, const tj_tir_expr_t *const *oshape,
                         int64_t k0, int64_t k1) {
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) {
    ext[i] = oshape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(te->arena, "ax%d", i);
  }
  ext[n] = tj_tir_i64(te->arena, k0);
  ext[n + 1] = tj_tir_i64(te->arena, k1);
  kinds[n] = kinds[n + 1] = TJ_ITER_REDUCE;
  names[n] = "rv0";
  names[n + 1] = "rv1";
  tj_lg_stage_begin(te, st, name, n + 2, ext, kinds, names);
}

static const tj_attrs_t *schedule_rule(tj_arena_t *a, const char *rule) {
  return tj_attrs_set(a, NULL, "schedule_rule", tj_attr_str(rule));
}

static const tj_tir_expr_t *bin(tj_arena_t *a, tj_tir_expr_kind_t k, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  return x && y ? tj_tir_binary(a, k, x, y) : NULL;
}

/* In-bounds cells of the window of output index v along one dim (count_include_pad
 * false), in the form TVM's simplifier prints for dilation 1. */
static const tj_tir_expr_t *window_count(tj_arena_t *a, const tj_tir_expr_t *v, int64_t in, int64_t k, int64_t s,
                                         int64_t d, int64_t pb) {
  const tj_tir_expr_t *I1 = tj_tir_i64(a, in - 1);
  if (d == 1 && s == 1) /* min(k-1-pb, I-1-v) + (pb+1) - max(pb - v, 0) */
    return bin(a, TJ_TIR_SUB,
               bin(a, TJ_TIR_ADD, bin(a, TJ_TIR_MIN, tj_tir_i64(a, k - 1 - pb), bin(a, TJ_TIR_SUB, I1, v)),
                   tj_tir_i64(a, pb + 1)),
               bin(a, TJ_TIR_MAX, bin(a, TJ_TIR_SUB, tj_tir_i64(a, pb), v), tj_tir_i64(a, 0)));
  const tj_tir_expr_t *vs = tj_lg_mul(a, v, tj_tir_i64(a, s));
  if (d == 1) /* min(v*s + (k-1-pb), I-1) + (pb+1) - max(pb - v*s, 0) - v*s */
    return bin(a, TJ_TIR_SUB,
               bin(a, TJ_TIR_SUB,
                   bin(a, TJ_TIR_ADD, bin(a, TJ_TIR_MIN, tj_lg_add(a, vs, tj_tir_i64(a, k - 1 - pb)), I1),
                       tj_tir_i64(a, pb + 1)),
                   bin(a, TJ_TIR_MAX, bin(a, TJ_TIR_SUB, tj_tir_i64(a, pb), vs), tj_tir_i64(a, 0))),
               vs);
  /* dilation > 1: first in-bounds tap start + ceil(max(-start, 0) / d) * d; count =
   * (min(start + (k-1)*d, I-1) - first) // d + 1 */
  const tj_tir_expr_t *start = tj_lg_sub(a, vs, tj_tir_i64(a, pb));
  const tj_tir_expr_t *skip = bin(a, TJ_TIR_FLOOR_DIV,
                                  tj_lg_add(a, bin(a, TJ_TIR_MAX, tj_lg_sub(a, tj_tir_i64(a, 0), start), tj_tir_i64(a, 0)),
                                            tj_tir_i64(a, d - 1)),
                                  tj_tir_i64(a, d));
  const tj_tir_expr_t *first = tj_lg_add(a, start, tj_lg_mul(a, skip, tj_tir_i64(a, d)));
  const tj_tir_expr_t *last = bin(a, TJ_TIR_MIN, tj_lg_add(a, start, tj_tir_i64(a, (k - 1) * d)), I1);
  return tj_lg_add(a, bin(a, TJ_TIR_FLOOR_DIV, tj_lg_sub(a, last, first), tj_tir_i64(a, d)), tj_tir_i64(a, 1));
}

/* count_include_pad: cells of the padded input (without ceil_mode's extra). */
static const tj_tir_expr_t *padded_count(tj_arena_t *a, const tj_tir_expr_t *v, int64_t in, int64_t k, int64_t s,
                                         int64_t d, int64_t pb, int64_t pa, bool ceil_mode) {
  if (!ceil_mode) return tj_tir_i64(a, k);
  const tj_tir_expr_t *start = tj_lg_sub(a, tj_lg_mul(a, v, tj_tir_i64(a, s)), tj_tir_i64(a, pb));
  const tj_tir_expr_t *end =
      bin(a, TJ_TIR_MIN, tj_lg_add(a, start, tj_tir_i64(a, (k - 1) * d)), tj_tir_i64(a, in + pa - 1));
  return tj_lg_add(a, bin(a, TJ_TIR_FLOOR_DIV, tj_lg_sub(a, end, start), tj_tir_i64(a, d)), tj_tir_i64(a, 1));
}

static tj_status_t *legalize_pool2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool is_max,
                                    const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = is_max ? "max_pool2d" : "avg_pool2d";
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  pool_plan_t p;
  if (!plan_pool(call, xs, &p)) return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  int n = p.ndim;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = x->shape[i];
  int axis[2] = {p.h, p.w};
  for (int i = 0; i < 2; i++) {
    int64_t num = p.in[i] + p.pb[i] + p.pa[i] - p.d[i] * (p.k[i] - 1) - 1 + p.extra[i];
    if (num < 0) return NULL;
    oshape[axis[i]] = tj_tir_i64(a, num / p.s[i] + 1);
  }
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dt, n, oshape));
  bool do_pad = p.pb[0] || p.pb[1] || p.pa[0] + p.extra[0] || p.pa[1] + p.extra[1];
  const tj_buffer_t *src = x;
  const tj_buffer_t *out = NULL, *sum = NULL;
  /* Parameter buffers are named first, then the intermediates in program order. */
  if (is_max) {
    out = tj_lg_output(&te, "pool_max", dt, n, oshape);
  } else {
    out = tj_lg_output(&te, "pool_avg", dt, n, oshape);
  }
  if (do_pad) src = emit_pad(&te, x, &p, is_max ? lowest(dt) : 0.0);
  if (!is_max) sum = tj_lg_alloc(&te, "pool_sum", dt, n, oshape);
  if (te.failed || !src) return tj_lg_te_finish(&te, name, NULL, out_expr);

  tj_lg_stage_t st;
  begin_window(&te, &st, is_max ? "pool_max" : "pool_sum", n, oshape, p.k[0], p.k[1]);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) idx[i] = st.iv[i];
  for (int i = 0; i < 2; i++)
    idx[axis[i]] = tj_lg_add(a, tj_lg_mul(a, st.iv[axis[i]], tj_tir_i64(a, p.s[i])),
                             tj_lg_mul(a, st.iv[n + i], tj_tir_i64(a, p.d[i])));
  const tj_buffer_t *acc = is_max ? out : sum;
  const tj_tir_expr_t *cur = tj_lg_load(a, acc, n, st.iv), *val = tj_lg_load(a, src, n, idx);
  if (is_max) {
    st.annotations = schedule_rule(a, "meta_schedule.pool_max");
    tj_lg_stage_end(&te, &st, tj_lg_store(a, acc, n, st.iv, tj_lg_const(a, dt, lowest(dt))),
                    tj_lg_store(a, acc, n, st.iv, bin(a, TJ_TIR_MAX, cur, val)));
    return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
  }
  tj_lg_stage_end(&te, &st, tj_lg_store(a, acc, n, st.iv, tj_lg_zero(a, dt)),
                  tj_lg_store(a, acc, n, st.iv, bin(a, TJ_TIR_ADD, cur, val)));

  tj_lg_stage_spatial(&te, &st, "pool_avg", n, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  st.annotations = schedule_rule(a, "meta_schedule.pool_avg");
  const tj_tir_expr_t *cnt[2];
  for (int i = 0; i < 2; i++) {
    const tj_tir_expr_t *v = st.iv[axis[i]];
    cnt[i] = p.count_include_pad ? padded_count(a, v, p.in[i], p.k[i], p.s[i], p.d[i], p.pb[i], p.pa[i], p.ceil_mode)
                                 : window_count(a, v, p.in[i], p.k[i], p.s[i], p.d[i], p.pb[i]);
  }
  const tj_tir_expr_t *count;
  if (p.count_include_pad && !p.ceil_mode)
    count = tj_tir_i64(a, p.k[0] * p.k[1]);
  else if (p.count_include_pad)
    count = bin(a, TJ_TIR_MUL, cnt[0], cnt[1]);
  else
    count = bin(a, TJ_TIR_MAX, bin(a, TJ_TIR_MUL, cnt[0], cnt[1]), tj_tir_i64(a, 1));
  const tj_tir_expr_t *divisor = count ? tj_tir_cast(a, dt, count) : NULL;
  if (p.count_include_pad && !p.ceil_mode) divisor = tj_lg_const(a, dt, (double)(p.k[0] * p.k[1]));
  const tj_tir_expr_t *value = bin(a, TJ_TIR_DIV, tj_lg_load(a, sum, n, st.iv), divisor);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

tj_status_t *tj_legalize_max_pool2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_pool2d(ctx, call, true, out_expr);
}

tj_status_t *tj_legalize_avg_pool2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_pool2d(ctx, call, false, out_expr);
}

/* ---------------- adaptive_avg_pool2d ---------------- */

tj_status_t *tj_legalize_adaptive_avg_pool2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                             const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = "adaptive_avg_pool2d";
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  const tj_attrs_t *at = call->call.attrs;
  const char *layout = tj_attrs_get_str(at, "layout", "NCHW");
  const char *out_layout = tj_attrs_get_str(at, "out_layout", layout);
  int n = xs->tensor.ndim, axis[2];
  if (strcmp(layout, out_layout) != 0 || n > TJ_LG_MAX_ITERS - 2 || !hw_axes(layout, n, &axis[0], &axis[1]))
    return NULL;
  int64_t in[2], osz[2];
  for (int i = 0; i < 2; i++)
    if (!tj_tir_is_const_int(xs->tensor.shape[axis[i]], &in[i])) return NULL;
  if (tj_lg_attr_ints(at, "output_size", osz, 2) != 2) osz[0] = in[0], osz[1] = in[1];
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = x->shape[i];
  bool even = true;
  int64_t k[2];
  for (int i = 0; i < 2; i++) {
    oshape[axis[i]] = tj_tir_i64(a, osz[i]);
    if (in[i] % osz[i] == 0) {
      k[i] = in[i] / osz[i];
    } else {
      even = false;
      k[i] = (in[i] + osz[i] - 1) / osz[i] + 1; /* the widest window */
    }
  }
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dt, n, oshape));
  const tj_buffer_t *out = tj_lg_output(&te, "adaptive_pool_avg", dt, n, oshape);
  const tj_buffer_t *sum = tj_lg_alloc(&te, "adaptive_pool_sum", dt, n, oshape);
  tj_lg_stage_t st;
  begin_window(&te, &st, "adaptive_pool_sum", n, oshape, k[0], k[1]);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS], *guard = NULL;
  for (int i = 0; i < n; i++) idx[i] = st.iv[i];
  for (int i = 0; i < 2; i++) {
    const tj_tir_expr_t *v = st.iv[axis[i]], *rv = st.iv[n + i];
    if (in[i] % osz[i] == 0) {
      idx[axis[i]] = tj_lg_add(a, tj_lg_mul(a, v, tj_tir_i64(a, k[i])), rv);
      continue;
    }
    /* start = i*I // O, end = ceildiv((i+1)*I, O); read min(start + rv, I-1) where rv < end - start */
    const tj_tir_expr_t *start = bin(a, TJ_TIR_FLOOR_DIV, tj_lg_mul(a, v, tj_tir_i64(a, in[i])), tj_tir_i64(a, osz[i]));
    const tj_tir_expr_t *end = bin(a, TJ_TIR_FLOOR_DIV,
                                   tj_lg_add(a, tj_lg_mul(a, v, tj_tir_i64(a, in[i])), tj_tir_i64(a, in[i] + osz[i] - 1)),
                                   tj_tir_i64(a, osz[i]));
    idx[axis[i]] = bin(a, TJ_TIR_MIN, tj_lg_add(a, start, rv), tj_tir_i64(a, in[i] - 1));
    const tj_tir_expr_t *g = bin(a, TJ_TIR_LT, rv, tj_lg_sub(a, end, start));
    guard = guard ? bin(a, TJ_TIR_AND, guard, g) : g;
  }
  const tj_tir_expr_t *val = tj_lg_load(a, x, n, idx);
  if (guard && val) {
    const tj_tir_expr_t *args[3] = {guard, val, tj_lg_zero(a, dt)};
    val = tj_tir_call(a, dt, "tir.if_then_else", 3, args);
  }
  tj_lg_stage_end(&te, &st, tj_lg_store(a, sum, n, st.iv, tj_lg_zero(a, dt)),
                  tj_lg_store(a, sum, n, st.iv, bin(a, TJ_TIR_ADD, tj_lg_load(a, sum, n, st.iv), val)));

  tj_lg_stage_spatial(&te, &st, "adaptive_pool_avg", n, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  st.annotations = schedule_rule(a, "meta_schedule.adaptive_pool_avg");
  const tj_tir_expr_t *value;
  if (even && k[0] * k[1] == 1) {
    value = tj_lg_load(a, sum, n, st.iv); /* x * 1 folds away */
  } else if (even) {
    value = bin(a, TJ_TIR_MUL, tj_lg_load(a, sum, n, st.iv), tj_tir_float(a, dt, 1.0 / (double)(k[0] * k[1])));
  } else {
    const tj_tir_expr_t *cnt = NULL;
    for (int i = 0; i < 2; i++) {
      const tj_tir_expr_t *v = st.iv[axis[i]], *c;
      if (in[i] % osz[i] == 0) {
        c = tj_tir_i64(a, k[i]);
      } else {
        const tj_tir_expr_t *vi = tj_lg_mul(a, v, tj_tir_i64(a, in[i]));
        c = tj_lg_sub(a, bin(a, TJ_TIR_FLOOR_DIV, tj_lg_add(a, vi, tj_tir_i64(a, in[i] + osz[i] - 1)), tj_tir_i64(a, osz[i])),
                      bin(a, TJ_TIR_FLOOR_DIV, vi, tj_tir_i64(a, osz[i])));
      }
      cnt = cnt ? bin(a, TJ_TIR_MUL, cnt, c) : c;
    }
    value = bin(a, TJ_TIR_DIV, tj_lg_load(a, sum, n, st.iv), cnt ? tj_tir_cast(a, dt, cnt) : NULL);
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}
