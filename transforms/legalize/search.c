/* Search ops (TVM's legalize_ops/search.py):
 *   where          topi.where → `where`: block T_where, Select(0 < Cast(int64, cond), x1, x2)
 *                  with numpy broadcasting (extent-1 input dims read at 0);
 *   argmax/argmin  topi.argmax/argmin → `argmax`/`argmin`: a tuple reduction
 *                  `<x>_red_temp` (v0 = int64 index, v1 = value; ties keep the smaller
 *                  index) and `<x>_red` copying v0. The index is the row-major flat index
 *                  over the reduced axes (k0 * 60 + k1 * 20 + ... for axis=None). */
#include <stdint.h>
#include <string.h>

#include "transforms/legalize/legalize.h"

/* ---------------- where ---------------- */

static bool static_one(const tj_tir_expr_t *e) {
  int64_t v;
  return tj_tir_is_const_int(e, &v) && v == 1;
}

/* Load of `b` at the output iterators, right-aligned; an input dim of 1 against a
 * different output dim reads index 0. */
static const tj_tir_expr_t *broadcast_load(tj_arena_t *a, const tj_buffer_t *b, int n_out,
                                           const tj_tir_expr_t *const *oshape, const tj_tir_expr_t *const *iv) {
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  int off = n_out - b->ndim;
  for (int d = 0; d < b->ndim; d++)
    idx[d] = static_one(b->shape[d]) && !static_one(oshape[d + off]) ? tj_tir_i64(a, 0) : iv[d + off];
  return tj_lg_load(a, b, b->ndim, idx);
}

tj_status_t *tj_legalize_where(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 3) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *out_sinfo = call->sinfo; /* the broadcast shape, as inferred */
  if (!tj_lg_tensor_known(out_sinfo) || out_sinfo->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  for (int i = 0; i < 3; i++)
    if (!tj_lg_tensor_known(tj_lg_arg_sinfo(a, call->call.args[i]))) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *c = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *x1 = tj_lg_placeholder(&te, call->call.args[1]);
  const tj_buffer_t *x2 = tj_lg_placeholder(&te, call->call.args[2]);
  int n = out_sinfo->tensor.ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) shape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  if (!c || !x1 || !x2 || c->ndim > n || x1->ndim > n || x2->ndim > n)
    return te.failed ? tj_lg_te_finish(&te, "where", NULL, out_expr) : NULL;
  const tj_buffer_t *out = tj_lg_output(&te, "T_where", x1->dtype, n, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_where", n, shape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "where", NULL, out_expr);
  const tj_tir_expr_t *cond = tj_tir_binary(a, TJ_TIR_LT, tj_tir_i64(a, 0),
                                            tj_tir_cast(a, TJ_I64, broadcast_load(a, c, n, shape, st.iv)));
  const tj_tir_expr_t *value =
      tj_tir_select(a, cond, broadcast_load(a, x1, n, shape, st.iv), broadcast_load(a, x2, n, shape, st.iv));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, "where", out_sinfo, out_expr);
}

/* ---------------- argmax, argmin ---------------- */


typedef struct arg_plan {
  int ndim;
  bool reduced[TJ_LG_MAX_ITERS];
  bool keepdims;
} arg_plan_t;

static bool plan_arg(const tj_rx_expr_t *call, const tj_sinfo_t *xs, arg_plan_t *p) {
  memset(p, 0, sizeof *p);
  p->ndim = xs->tensor.ndim;
  if (p->ndim < 1 || p->ndim > TJ_LG_MAX_ITERS / 2) return false;
  p->keepdims = tj_attrs_get_int(call->call.attrs, "keepdims", 0) != 0;
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "axis");
  if (v && v->kind == TJ_ATTR_INT) {
    int ax;
    if (!tj_lg_axis(v->i, p->ndim, &ax)) return false;
    p->reduced[ax] = true;
  } else {
    for (int i = 0; i < p->ndim; i++) p->reduced[i] = true;
  }
  return true;
}

/* The row-major flat index over the reduced axes: TOPI writes ((k0 * e1 + k1) * e2 + k2)
 * and TVM's simplifier distributes it when every extent is a literal
 * (k0 * 60 + k1 * 20 + k2 * 5 + k3); symbolic extents keep the nested form. */
static const tj_tir_expr_t *flat_index(tj_arena_t *a, const arg_plan_t *p, const tj_buffer_t *x,
                                       const tj_tir_expr_t *const *kvars) {
  bool all_const = true;
  for (int d = 0; d < p->ndim; d++) {
    int64_t v;
    if (p->reduced[d] && !tj_tir_is_const_int(x->shape[d], &v)) all_const = false;
  }
  const tj_tir_expr_t *idx = NULL;
  int j = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (!p->reduced[d]) continue;
    const tj_tir_expr_t *k = kvars[j++];
    if (!all_const) {
      idx = idx ? tj_tir_binary(a, TJ_TIR_ADD, tj_tir_binary(a, TJ_TIR_MUL, idx, x->shape[d]), k) : k;
      continue;
    }
    const tj_tir_expr_t *stride = tj_tir_i64(a, 1);
    for (int e = d + 1; e < p->ndim; e++)
      if (p->reduced[e]) stride = tj_lg_mul(a, stride, x->shape[e]);
    int64_t s;
    const tj_tir_expr_t *term = tj_tir_is_const_int(stride, &s) && s == 1 ? k : tj_tir_binary(a, TJ_TIR_MUL, k, stride);
    idx = idx ? tj_tir_binary(a, TJ_TIR_ADD, idx, term) : term;
  }
  return idx;
}

static void emit_red_temp(tj_lg_te_t *te, const tj_buffer_t *x, const arg_plan_t *p, bool is_max,
                          const tj_buffer_t **out_v0, int *out_ns, const tj_tir_expr_t **oshape) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  int ns = 0, n = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (!p->reduced[d]) oshape[ns++] = x->shape[d];
    else if (p->keepdims) oshape[ns++] = tj_tir_i64(a, 1);
  }
  for (int i = 0; i < ns; i++, n++) {
    ext[n] = oshape[i];
    kinds[n] = TJ_ITER_SPATIAL;
    names[n] = tj_arena_printf(a, "ax%d", i);
  }
  for (int d = 0; d < p->ndim; d++)
    if (p->reduced[d]) {
      ext[n] = x->shape[d];
      kinds[n] = TJ_ITER_REDUCE;
      names[n++] = tj_arena_printf(a, "k%d", d);
    }
  *out_ns = ns;
  const char *base = tj_arena_printf(a, "%s_red_temp", x->name);
  const tj_buffer_t *v0 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v0", base), TJ_I64, ns, oshape);
  const tj_buffer_t *v1 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v1", base), x->dtype, ns, oshape);
  *out_v0 = v0;
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, base, n, ext, kinds, names);
  if (te->failed || !v0 || !v1) {
    te->failed = true;
    return;
  }
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  int si = 0, ri = ns;
  for (int d = 0; d < p->ndim; d++) {
    if (p->reduced[d]) {
      idx[d] = st.iv[ri++];
      if (p->keepdims) si++;
    } else {
      idx[d] = st.iv[si++];
    }
  }
  const tj_tir_expr_t *const *oidx = st.iv;
  const tj_tir_expr_t *k = flat_index(a, p, x, st.iv + ns);
  const tj_tir_expr_t *acc0 = tj_lg_load(a, v0, ns, oidx), *acc1 = tj_lg_load(a, v1, ns, oidx);
  const tj_tir_expr_t *val = tj_lg_load(a, x, p->ndim, idx);
  tj_tir_expr_kind_t better = is_max ? TJ_TIR_GT : TJ_TIR_LT;
  /* keep the accumulator when it is strictly better, or equal with a smaller index */
  const tj_tir_expr_t *keep = tj_tir_binary(
      a, TJ_TIR_OR, tj_tir_binary(a, better, acc1, val),
      tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_EQ, acc1, val), tj_tir_binary(a, TJ_TIR_LT, acc0, k)));
  const tj_tir_expr_t *new0 = tj_tir_select(a, keep, acc0, k);
  const tj_tir_expr_t *new1 = tj_tir_select(a, tj_tir_binary(a, better, acc1, val), acc1, val);
  const tj_tir_expr_t *l0 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v0->name), TJ_I64);
  const tj_tir_expr_t *l1 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v1->name), x->dtype);
  const tj_tir_stmt_t *inits[2] = {tj_lg_store(a, v0, ns, oidx, tj_tir_i64(a, -1)),
                                   tj_lg_store(a, v1, ns, oidx, tj_lg_limit_value(a, x->dtype, !is_max))};
  const tj_tir_stmt_t *stores[2] = {tj_lg_store(a, v0, ns, oidx, l0), tj_lg_store(a, v1, ns, oidx, l1)};
  if (!inits[0] || !inits[1] || !stores[0] || !stores[1] || !l0 || !l1) {
    te->failed = true;
    return;
  }
  const tj_tir_stmt_t *body =
      tj_tir_let_stmt(a, l0, new0, tj_tir_let_stmt(a, l1, new1, tj_tir_seq(a, 2, stores)));
  tj_lg_stage_end(te, &st, tj_tir_seq(a, 2, inits), body);
}

static tj_status_t *legalize_arg(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, bool is_max, const char *name,
                                 const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  arg_plan_t p;
  if (!tj_lg_tensor_known(xs) || !plan_arg(call, xs, &p)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  const tj_buffer_t *v0 = NULL;
  int ns = 0;
  emit_red_temp(&te, x, &p, is_max, &v0, &ns, oshape);
  const char *red_name = tj_arena_printf(a, "%s_red", x->name);
  const tj_buffer_t *out = red_name ? tj_lg_output(&te, red_name, TJ_I64, ns, oshape) : NULL;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, red_name, ns, oshape, "ax");
  if (te.failed || !out) return tj_lg_te_finish(&te, name, NULL, out_expr);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, ns, st.iv, tj_lg_load(a, v0, ns, st.iv)));
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, TJ_I64, ns, oshape));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

tj_status_t *tj_legalize_argmax(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_arg(ctx, call, true, "argmax", out_expr);
}
tj_status_t *tj_legalize_argmin(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_arg(ctx, call, false, "argmin", out_expr);
}
