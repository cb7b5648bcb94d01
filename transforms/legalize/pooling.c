/* Pooling (TVM's legalize_ops/nn.py): R.nn.max_pool{1,2,3}d / R.nn.avg_pool{1,2,3}d →
 * topi.nn.pool1d/pool2d/pool3d (`max_pool2d` / `avg_pool2d` ...) and
 * R.nn.adaptive_avg_pool{1,2,3}d → topi.nn.adaptive_pool{1d,,3d}
 * (`adaptive_avg_pool2d` ...). One implementation over the spatial dims (W; H, W;
 * D, H, W): topi's pool_impl_nd is one too, with reduce axes rv0 .. rv<nsp-1>.
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

#define MAX_SP 3

static const char *const spatial_letters[MAX_SP + 1] = {"", "W", "HW", "DHW"};

/* Positions of the nsp spatial axes (in D, H, W order) in a layout of ndim axes. */
static bool spatial_axes(const char *layout, int nsp, int ndim, int *axes) {
  int n = 0;
  for (int i = 0; i < nsp; i++) axes[i] = -1;
  for (const char *p = layout; *p; p++) {
    if (isdigit((unsigned char)*p)) continue;
    const char *sp = isupper((unsigned char)*p) ? strchr(spatial_letters[nsp], *p) : NULL;
    if (sp) axes[sp - spatial_letters[nsp]] = n;
    n++;
  }
  for (int i = 0; i < nsp; i++)
    if (axes[i] < 0) return false;
  return n == ndim;
}

static double lowest(tj_dtype_t d) {
  if (tj_dtype_is_floating(d)) return -tj_dtype_float_max(d);
  if (d.code == TJ_DT_UINT || d.bits == 1) return 0;
  return -(double)((uint64_t)1 << (d.bits - 1));
}

/* Default layout of each spatial rank (the attrs are normalised, so only a hand-built
 * call lacks one). */
static const char *const default_layout[MAX_SP + 1] = {"", "NCW", "NCHW", "NCDHW"};

/* The layout's spatial axes and their static input extents; false (keep the op) when
 * out_layout differs from layout or a spatial extent is symbolic. */
static bool plan_axes(const tj_rx_expr_t *call, const tj_sinfo_t *xs, int nsp, int *axes, int64_t *in) {
  const tj_attrs_t *at = call->call.attrs;
  const char *layout = tj_attrs_get_str(at, "layout", default_layout[nsp]);
  const char *out_layout = tj_attrs_get_str(at, "out_layout", layout);
  if (strcmp(layout, out_layout) != 0) return false;
  if (xs->tensor.ndim > TJ_LG_MAX_ITERS - nsp || !spatial_axes(layout, nsp, xs->tensor.ndim, axes)) return false;
  for (int i = 0; i < nsp; i++)
    if (!tj_tir_is_const_int(xs->tensor.shape[axes[i]], &in[i])) return false;
  return true;
}

typedef struct pool_plan {
  int ndim, nsp, axis[MAX_SP];
  int64_t in[MAX_SP], k[MAX_SP], s[MAX_SP], d[MAX_SP], pb[MAX_SP], pa[MAX_SP], extra[MAX_SP];
  bool ceil_mode, count_include_pad;
} pool_plan_t;

static bool plan_pool(const tj_rx_expr_t *call, const tj_sinfo_t *xs, int nsp, pool_plan_t *p) {
  memset(p, 0, sizeof *p);
  const tj_attrs_t *at = call->call.attrs;
  p->ndim = xs->tensor.ndim;
  p->nsp = nsp;
  if (!plan_axes(call, xs, nsp, p->axis, p->in)) return false;
  int64_t pad[2 * MAX_SP];
  if (tj_lg_attr_ints(at, "pool_size", p->k, nsp) != nsp || tj_lg_attr_ints(at, "strides", p->s, nsp) != nsp ||
      tj_lg_attr_ints(at, "dilation", p->d, nsp) != nsp || tj_lg_attr_ints(at, "padding", pad, 2 * nsp) != 2 * nsp)
    return false;
  p->ceil_mode = tj_attrs_get_int(at, "ceil_mode", 0) != 0;
  p->count_include_pad = tj_attrs_get_int(at, "count_include_pad", 0) != 0;
  for (int i = 0; i < nsp; i++) {
    if (p->k[i] < 1 || p->s[i] < 1 || p->d[i] < 1) return false;
    p->pb[i] = pad[i];
    p->pa[i] = pad[nsp + i];
    p->extra[i] = p->ceil_mode ? p->s[i] - 1 : 0;
  }
  return true;
}

/* pad_temp: x padded on the spatial dims by (pb, pa + extra) with `fill`. */
static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *x, const pool_plan_t *p, double fill) {
  tj_arena_t *a = te->arena;
  int64_t before[TJ_LG_MAX_ITERS] = {0}, after[TJ_LG_MAX_ITERS] = {0};
  for (int i = 0; i < p->nsp; i++) {
    before[p->axis[i]] = p->pb[i];
    after[p->axis[i]] = p->pa[i] + p->extra[i];
  }
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

/* A window reduction stage over the output shape plus rv0 .. rv<nsp-1>. */
static void begin_window(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n, const tj_tir_expr_t *const *oshape,
                         int nsp, const int64_t *k) {
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) {
    ext[i] = oshape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(te->arena, "ax%d", i);
  }
  static const char *const rv[MAX_SP] = {"rv0", "rv1", "rv2"};
  for (int i = 0; i < nsp; i++) {
    ext[n + i] = tj_tir_i64(te->arena, k[i]);
    kinds[n + i] = TJ_ITER_REDUCE;
    names[n + i] = rv[i];
  }
  tj_lg_stage_begin(te, st, name, n + nsp, ext, kinds, names);
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

/* The window count of the average: a product over the spatial dims. */
static const tj_tir_expr_t *avg_divisor(tj_arena_t *a, const pool_plan_t *p, tj_dtype_t dt,
                                        const tj_tir_expr_t *const *iv) {
  int64_t window = 1;
  for (int i = 0; i < p->nsp; i++) window *= p->k[i];
  if (p->count_include_pad && !p->ceil_mode) return tj_lg_const(a, dt, (double)window);
  const tj_tir_expr_t *count = NULL;
  for (int i = 0; i < p->nsp; i++) {
    const tj_tir_expr_t *v = iv[p->axis[i]];
    const tj_tir_expr_t *c =
        p->count_include_pad ? padded_count(a, v, p->in[i], p->k[i], p->s[i], p->d[i], p->pb[i], p->pa[i], p->ceil_mode)
                             : window_count(a, v, p->in[i], p->k[i], p->s[i], p->d[i], p->pb[i]);
    count = count ? bin(a, TJ_TIR_MUL, count, c) : c;
  }
  if (!p->count_include_pad) count = bin(a, TJ_TIR_MAX, count, tj_tir_i64(a, 1));
  return count ? tj_tir_cast(a, dt, count) : NULL;
}

static tj_status_t *legalize_pool(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool is_max, int nsp,
                                  const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const char *name = tj_arena_printf(a, "%s_pool%dd", is_max ? "max" : "avg", nsp);
  if (call->call.n_args != 1) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  pool_plan_t p;
  if (!plan_pool(call, xs, nsp, &p)) return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  int n = p.ndim;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = x->shape[i];
  bool do_pad = false;
  for (int i = 0; i < nsp; i++) {
    int64_t num = p.in[i] + p.pb[i] + p.pa[i] - p.d[i] * (p.k[i] - 1) - 1 + p.extra[i];
    if (num < 0) return NULL;
    oshape[p.axis[i]] = tj_tir_i64(a, num / p.s[i] + 1);
    do_pad = do_pad || p.pb[i] || p.pa[i] + p.extra[i];
  }
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dt, n, oshape));
  const tj_buffer_t *src = x;
  const tj_buffer_t *out = NULL, *sum = NULL;
  /* Parameter buffers are named first, then the intermediates in program order. */
  out = tj_lg_output(&te, is_max ? "pool_max" : "pool_avg", dt, n, oshape);
  if (do_pad) src = emit_pad(&te, x, &p, is_max ? lowest(dt) : 0.0);
  if (!is_max) sum = tj_lg_alloc(&te, "pool_sum", dt, n, oshape);
  if (te.failed || !src) return tj_lg_te_finish(&te, name, NULL, out_expr);

  tj_lg_stage_t st;
  begin_window(&te, &st, is_max ? "pool_max" : "pool_sum", n, oshape, nsp, p.k);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) idx[i] = st.iv[i];
  for (int i = 0; i < nsp; i++)
    idx[p.axis[i]] = tj_lg_add(a, tj_lg_mul(a, st.iv[p.axis[i]], tj_tir_i64(a, p.s[i])),
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
  const tj_tir_expr_t *value = bin(a, TJ_TIR_DIV, tj_lg_load(a, sum, n, st.iv), avg_divisor(a, &p, dt, st.iv));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

#define POOL_LEGALIZER(ident, is_max, nsp)                                                                  \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    return legalize_pool(ctx, call, is_max, nsp, out_expr);                                                 \
  }
POOL_LEGALIZER(max_pool1d, true, 1)
POOL_LEGALIZER(max_pool2d, true, 2)
POOL_LEGALIZER(max_pool3d, true, 3)
POOL_LEGALIZER(avg_pool1d, false, 1)
POOL_LEGALIZER(avg_pool2d, false, 2)
POOL_LEGALIZER(avg_pool3d, false, 3)

/* ---------------- adaptive_avg_pool ---------------- */

/* Window of output v along one dim: [floor(v*I/O), ceil((v+1)*I/O)). `k` is its width
 * when O divides I, else the widest window (the reduction then has a guard). */
static int64_t adaptive_width(int64_t in, int64_t osz) { return in % osz == 0 ? in / osz : (in + osz - 1) / osz + 1; }

/* The number of cells of output v's window along one dim. */
static const tj_tir_expr_t *adaptive_count(tj_arena_t *a, const tj_tir_expr_t *v, int64_t in, int64_t osz) {
  if (in % osz == 0) return tj_tir_i64(a, in / osz);
  const tj_tir_expr_t *vi = tj_lg_mul(a, v, tj_tir_i64(a, in));
  return tj_lg_sub(a, bin(a, TJ_TIR_FLOOR_DIV, tj_lg_add(a, vi, tj_tir_i64(a, in + osz - 1)), tj_tir_i64(a, osz)),
                   bin(a, TJ_TIR_FLOOR_DIV, vi, tj_tir_i64(a, osz)));
}

static tj_status_t *legalize_adaptive(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, int nsp,
                                      const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const char *name = tj_arena_printf(a, "adaptive_avg_pool%dd", nsp);
  if (call->call.n_args != 1) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  int n = xs->tensor.ndim, axis[MAX_SP];
  int64_t in[MAX_SP], osz[MAX_SP], k[MAX_SP];
  if (!plan_axes(call, xs, nsp, axis, in)) return NULL;
  if (tj_lg_attr_ints(call->call.attrs, "output_size", osz, nsp) != nsp) memcpy(osz, in, sizeof osz);
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = x->shape[i];
  bool even = true;
  int64_t window = 1;
  for (int i = 0; i < nsp; i++) {
    if (osz[i] < 1) return NULL;
    oshape[axis[i]] = tj_tir_i64(a, osz[i]);
    even = even && in[i] % osz[i] == 0;
    k[i] = adaptive_width(in[i], osz[i]);
    window *= k[i];
  }
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dt, n, oshape));
  const tj_buffer_t *out = tj_lg_output(&te, "adaptive_pool_avg", dt, n, oshape);
  const tj_buffer_t *sum = tj_lg_alloc(&te, "adaptive_pool_sum", dt, n, oshape);
  tj_lg_stage_t st;
  begin_window(&te, &st, "adaptive_pool_sum", n, oshape, nsp, k);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS], *guard = NULL;
  for (int i = 0; i < n; i++) idx[i] = st.iv[i];
  for (int i = 0; i < nsp; i++) {
    const tj_tir_expr_t *v = st.iv[axis[i]], *rv = st.iv[n + i];
    if (in[i] % osz[i] == 0) {
      idx[axis[i]] = tj_lg_add(a, tj_lg_mul(a, v, tj_tir_i64(a, k[i])), rv);
      continue;
    }
    /* read min(start + rv, I-1) where rv < end - start */
    const tj_tir_expr_t *start = bin(a, TJ_TIR_FLOOR_DIV, tj_lg_mul(a, v, tj_tir_i64(a, in[i])), tj_tir_i64(a, osz[i]));
    idx[axis[i]] = bin(a, TJ_TIR_MIN, tj_lg_add(a, start, rv), tj_tir_i64(a, in[i] - 1));
    const tj_tir_expr_t *g = bin(a, TJ_TIR_LT, rv, adaptive_count(a, v, in[i], osz[i]));
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
  const tj_tir_expr_t *value = tj_lg_load(a, sum, n, st.iv);
  if (even && window != 1) { /* x * 1 folds away */
    value = bin(a, TJ_TIR_MUL, value, tj_tir_float(a, dt, 1.0 / (double)window));
  } else if (!even) {
    const tj_tir_expr_t *cnt = NULL;
    for (int i = 0; i < nsp; i++) {
      const tj_tir_expr_t *c = adaptive_count(a, st.iv[axis[i]], in[i], osz[i]);
      cnt = cnt ? bin(a, TJ_TIR_MUL, cnt, c) : c;
    }
    value = bin(a, TJ_TIR_DIV, value, cnt ? tj_tir_cast(a, dt, cnt) : NULL);
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

#define ADAPTIVE_LEGALIZER(nsp)                                                                           \
  tj_status_t *tj_legalize_adaptive_avg_pool##nsp##d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,          \
                                                     const tj_rx_expr_t **out_expr) {                      \
    return legalize_adaptive(ctx, call, nsp, out_expr);                                                   \
  }
ADAPTIVE_LEGALIZER(1)
ADAPTIVE_LEGALIZER(2)
ADAPTIVE_LEGALIZER(3)
