/* LegalizeOps for the gradient operators (TVM's legalize_ops/grad.py).
 *
 * R.grad.nll_loss_backward → the TE `te_nll_loss_backward` (PrimFunc `nll_loss_backward`;
 * without weights `te_nll_loss_backward_no_weight`, which first builds `T_full`, ones
 * of length C):
 *   weights_new[i] = Select(i == ignore_index, 0, w[i])       only when ignore_index >= 0
 *   all_weights[d..] = w[t[d..]]                               (targets' shape)
 *   sum:  T_broadcast_to = output_grad broadcast to the targets' shape
 *   mean: the same, then all_weights_red (the sum of all_weights; skipped for 0-d
 *         targets, TVM's topi_sum_extend) and T_divide = T_broadcast_to / that sum
 *   pred_grad[n, c, d..] = Select(c == t[n, d..], all_weights * -1 * g[n, d..], 0)
 * with g the reduced gradient (or output_grad itself for "none"). As in TVM, a target
 * equal to ignore_index (< 0) is not masked out: it only matches no class.
 *
 * R.grad.take_backward → the ir_builder extern `take_backward` (extern.c): out_buf is
 * zeroed by a serial loop `i` over every element, then for axis=a a loop `parallel`
 * over the fused (before, after) positions of output_grad and a loop `serial` over the
 * indices adds output_grad into out_buf at the index's row (without axis, over the
 * flattened x). The loop names are TVM's: ir_builder's for_range takes its third
 * argument as the loop var's name. Out-of-range indices are data-dependent stores that
 * tvmjit's FlattenBuffers skips (TVM writes out of bounds). */
#include <string.h>

#include "transforms/legalize/legalize.h"


/* x == y with BinaryOpMatchTypes' cast of the narrower integer. */
static const tj_tir_expr_t *eq(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  if (x->dtype.bits < y->dtype.bits) x = tj_lg_cast(a, y->dtype, x);
  else if (y->dtype.bits < x->dtype.bits) y = tj_lg_cast(a, x->dtype, y);
  return tj_lg_bin(a, TJ_TIR_EQ, x, y);
}

/* ---------------- nll_loss_backward ---------------- */

typedef struct nllb_plan {
  const tj_buffer_t *grad, *pred, *tgt, *w, *out;
  tj_dtype_t dt;
  int nt; /* targets' ndim */
} nllb_plan_t;

/* One stage over the targets' shape (loops `<prefix>0..`, a lone `i` when `single`
 * and 1-d) writing out[iv] = body(iv). int64_dom: a 0-d TE compute's iterator. */
typedef const tj_tir_expr_t *(*nllb_body_fn)(tj_arena_t *a, const nllb_plan_t *p, const tj_tir_expr_t *const *iv,
                                              const void *extra);

static void nllb_stage(tj_lg_te_t *te, const nllb_plan_t *p, const char *name, const char *prefix, bool int64_dom,
                       const tj_buffer_t *out, nllb_body_fn body, const void *extra) {
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, name, p->nt, p->tgt->shape, prefix);
  st.int64_scalar_dom = int64_dom;
  if (te->failed || !out) {
    te->failed = true;
    return;
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(te->arena, out, p->nt, st.iv, body(te->arena, p, st.iv, extra)));
}

static const tj_tir_expr_t *gather_weight(tj_arena_t *a, const nllb_plan_t *p, const tj_tir_expr_t *const *iv,
                                          const void *extra) {
  (void)extra;
  const tj_tir_expr_t *t = tj_lg_load(a, p->tgt, p->nt, iv);
  return tj_lg_load(a, p->w, 1, &t);
}

static const tj_tir_expr_t *broadcast_grad(tj_arena_t *a, const nllb_plan_t *p, const tj_tir_expr_t *const *iv,
                                           const void *extra) {
  (void)iv, (void)extra;
  return tj_lg_load(a, p->grad, 0, NULL);
}

/* T_divide: bcast[iv] / red[()] (red is all_weights itself for 0-d targets). */
typedef struct divide_args {
  const tj_buffer_t *bcast, *red;
} divide_args_t;

static const tj_tir_expr_t *divide(tj_arena_t *a, const nllb_plan_t *p, const tj_tir_expr_t *const *iv,
                                   const void *extra) {
  const divide_args_t *d = extra;
  return tj_lg_bin(a, TJ_TIR_DIV, tj_lg_load(a, d->bcast, p->nt, iv), tj_lg_load(a, d->red, 0, NULL));
}

/* weights_new[i] = Select(i == ignore_index, 0, w[i]) (loop `i`). */
static const tj_buffer_t *mask_ignored(tj_lg_te_t *te, const nllb_plan_t *p, int64_t ignore_index) {
  tj_arena_t *a = te->arena;
  const tj_buffer_t *wn = tj_lg_alloc(te, "weights_new", p->dt, 1, p->w->shape);
  static const tj_iter_kind_t spatial[1] = {TJ_ITER_SPATIAL};
  static const char *const names[1] = {"i"};
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, "weights_new", 1, p->w->shape, spatial, names);
  if (te->failed || !wn) return NULL;
  const tj_tir_expr_t *cond = eq(a, st.iv[0], tj_tir_i64(a, ignore_index));
  const tj_tir_expr_t *v = cond ? tj_tir_select(a, cond, tj_lg_zero(a, p->dt), tj_lg_load(a, p->w, 1, st.iv)) : NULL;
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, wn, 1, st.iv, v));
  return wn;
}

/* all_weights_red[()] = sum of all_weights (topi.sum over every axis, loops k0..). */
static void sum_all(tj_lg_te_t *te, const tj_buffer_t *out, const tj_buffer_t *src) {
  tj_arena_t *a = te->arena;
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  int n = src->ndim;
  for (int i = 0; i < n && i < TJ_LG_MAX_ITERS; i++) {
    kinds[i] = TJ_ITER_REDUCE;
    names[i] = tj_arena_printf(a, "k%d", i);
  }
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, "all_weights_red", n, src->shape, kinds, names);
  if (te->failed || !out) {
    te->failed = true;
    return;
  }
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 0, NULL), *v = tj_lg_load(a, src, n, st.iv);
  tj_lg_stage_end(te, &st, tj_lg_store(a, out, 0, NULL, tj_lg_zero(a, out->dtype)),
                  tj_lg_store(a, out, 0, NULL, acc && v ? tj_lg_bin(a, TJ_TIR_ADD, acc, v) : NULL));
}

/* pred_grad: Select(class == t, all_weights * -1 * g, 0); the class is axis 1 of
 * (N, C, d..) predictions, axis 0 of (C,) ones (loop `i`). */
static void pred_grad_stage(tj_lg_te_t *te, const nllb_plan_t *p, const tj_buffer_t *aw, const tj_buffer_t *g) {
  tj_arena_t *a = te->arena;
  int np = p->pred->ndim;
  tj_lg_stage_t st;
  if (np == 1) {
    static const tj_iter_kind_t spatial[1] = {TJ_ITER_SPATIAL};
    static const char *const names[1] = {"i"};
    tj_lg_stage_begin(te, &st, "pred_grad", 1, p->pred->shape, spatial, names);
  } else {
    tj_lg_stage_spatial(te, &st, "pred_grad", np, p->pred->shape, "i");
  }
  if (te->failed || !p->out) {
    te->failed = true;
    return;
  }
  const tj_tir_expr_t *rest[TJ_LG_MAX_ITERS]; /* the indices without the class axis */
  int nr = 0;
  for (int i = 0; i < np; i++)
    if (i != (np == 1 ? 0 : 1)) rest[nr++] = st.iv[i];
  const tj_tir_expr_t *cls = st.iv[np == 1 ? 0 : 1];
  const tj_tir_expr_t *neg = tj_lg_bin(a, TJ_TIR_MUL, tj_lg_load(a, aw, nr, rest), tj_lg_const(a, p->dt, -1));
  const tj_tir_expr_t *val = tj_lg_bin(a, TJ_TIR_MUL, neg, tj_lg_load(a, g, nr, rest));
  const tj_tir_expr_t *cond = eq(a, cls, tj_lg_load(a, p->tgt, nr, rest));
  const tj_tir_expr_t *sel = cond && val ? tj_tir_select(a, cond, val, tj_lg_zero(a, p->dt)) : NULL;
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, p->out, np, st.iv, sel));
}

/* Shapes TVM's TE accepts: (C,) predictions with () targets, or (N, C, d..) with
 * (N, d..); a 0-d output_grad for sum/mean, the targets' rank for none. */
static bool nllb_shapes_ok(const tj_sinfo_t *gs, const tj_sinfo_t *ps, const tj_sinfo_t *ts, const tj_sinfo_t *ws,
                           bool reduce) {
  if (!tj_lg_tensor_known(gs) || !tj_lg_tensor_known(ps) || !tj_lg_tensor_known(ts)) return false;
  if (ws && (!tj_lg_tensor_known(ws) || ws->tensor.ndim != 1)) return false;
  if (ps->tensor.ndim < 1 || ts->tensor.ndim != (ps->tensor.ndim == 1 ? 0 : ps->tensor.ndim - 1)) return false;
  if (!tj_dtype_is_int(ts->tensor.dtype) || !tj_dtype_is_float(ps->tensor.dtype)) return false;
  return gs->tensor.ndim == (reduce ? 0 : ts->tensor.ndim);
}

tj_status_t *tj_legalize_grad_nll_loss_backward(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  int nargs = call->call.n_args;
  if (nargs != 3 && nargs != 4) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *s[4] = {NULL};
  for (int i = 0; i < nargs; i++) s[i] = tj_lg_arg_sinfo(a, call->call.args[i]);
  const char *reduction = tj_attrs_get_str(call->call.attrs, "reduction", "mean");
  bool mean = strcmp(reduction, "mean") == 0, sum = strcmp(reduction, "sum") == 0;
  if (!nllb_shapes_ok(s[0], s[1], s[2], s[3], mean || sum)) return NULL;
  int64_t ignore_index = tj_attrs_get_int(call->call.attrs, "ignore_index", -100);
  const char *name = nargs == 4 ? "nll_loss_backward" : "te_nll_loss_backward_no_weight";
  nllb_plan_t p = {.dt = s[1]->tensor.dtype, .nt = s[2]->tensor.ndim};
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  p.grad = tj_lg_placeholder(&te, call->call.args[0]);
  p.pred = tj_lg_placeholder(&te, call->call.args[1]);
  p.tgt = tj_lg_placeholder(&te, call->call.args[2]);
  if (nargs == 4) p.w = tj_lg_placeholder(&te, call->call.args[3]);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  p.out = tj_lg_output(&te, "pred_grad", p.dt, p.pred->ndim, p.pred->shape);
  if (!p.w) {
    const tj_tir_expr_t *c = p.pred->shape[p.pred->ndim == 1 ? 0 : 1];
    p.w = tj_lg_alloc(&te, "T_full", p.dt, 1, &c);
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, "T_full", 1, &c, "ax");
    if (te.failed || !p.w) return tj_lg_te_finish(&te, name, NULL, out_expr);
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, p.w, 1, st.iv, tj_lg_const(a, p.dt, 1.0)));
  }
  if (ignore_index >= 0 && !te.failed) p.w = mask_ignored(&te, &p, ignore_index);
  if (te.failed || !p.w) return tj_lg_te_finish(&te, name, NULL, out_expr);
  const tj_buffer_t *aw = tj_lg_alloc(&te, "all_weights", p.dt, p.nt, p.tgt->shape);
  nllb_stage(&te, &p, "all_weights", "i", true, aw, gather_weight, NULL);
  const tj_buffer_t *g = p.grad;
  if (mean || sum) {
    const tj_buffer_t *bcast = tj_lg_alloc(&te, "T_broadcast_to", s[0]->tensor.dtype, p.nt, p.tgt->shape);
    g = bcast;
    if (mean) {
      const tj_buffer_t *red = p.nt > 0 ? tj_lg_alloc(&te, "all_weights_red", p.dt, 0, NULL) : aw;
      g = tj_lg_alloc(&te, "T_divide", p.dt, p.nt, p.tgt->shape);
      nllb_stage(&te, &p, "T_broadcast_to", "ax", false, bcast, broadcast_grad, NULL);
      if (p.nt > 0 && !te.failed) sum_all(&te, red, aw);
      divide_args_t d = {bcast, red};
      nllb_stage(&te, &p, "T_divide", "ax", false, g, divide, &d);
    } else {
      nllb_stage(&te, &p, "T_broadcast_to", "ax", false, bcast, broadcast_grad, NULL);
    }
  }
  if (!te.failed) pred_grad_stage(&te, &p, aw, g);
  const tj_sinfo_t *os = tj_sinfo_tensor(a, p.dt, p.pred->ndim, s[1]->tensor.shape);
  return tj_lg_te_finish(&te, name, tj_lg_call_sinfo(call, os), out_expr);
}

/* ---------------- take_backward ---------------- */

typedef struct take_ir {
  const tj_buffer_t *grad, *x, *ind, *out;
  bool has_axis;
  int axis;
} take_ir_t;

/* out_buf[l-th index's slot] += output_grad[l-th slot], over (parallel, serial). */
static const tj_tir_stmt_t *accumulate_axis(tj_arena_t *a, const take_ir_t *t) {
  const tj_buffer_t *g = t->grad;
  const tj_tir_expr_t *pre = tj_tir_i64(a, 1), *nxt = tj_tir_i64(a, 1);
  for (int i = 0; i < g->ndim; i++) {
    if (i < t->axis) pre = tj_lg_mul(a, pre, g->shape[i]);
    else if (i > t->axis) nxt = tj_lg_mul(a, nxt, g->shape[i]);
  }
  const tj_tir_expr_t *x_axis_len = t->x->shape[t->axis], *ind_len = t->ind->shape[0];
  const tj_tir_expr_t *fused = tj_tir_var(a, "parallel", TJ_I64), *l = tj_tir_var(a, "serial", TJ_I64);
  const tj_tir_expr_t *i = tj_lg_floordiv(a, fused, nxt), *j = tj_lg_floormod(a, fused, nxt);
  const tj_tir_expr_t *k = tj_lg_load(a, t->ind, 1, &l);
  const tj_tir_expr_t *out_idx =
      tj_lg_add(a, tj_lg_add(a, tj_lg_mul(a, tj_lg_mul(a, i, nxt), x_axis_len), tj_lg_mul(a, k, nxt)), j);
  const tj_tir_expr_t *grad_idx =
      tj_lg_add(a, tj_lg_add(a, tj_lg_mul(a, tj_lg_mul(a, i, nxt), ind_len), tj_lg_mul(a, l, nxt)), j);
  const tj_tir_expr_t *sum = tj_lg_bin(a, TJ_TIR_ADD, tj_lg_flat_load(a, t->out, out_idx), tj_lg_flat_load(a, g, grad_idx));
  const tj_tir_stmt_t *inner = tj_tir_for(a, l, tj_tir_i64(a, 0), ind_len, TJ_FOR_SERIAL,
                                          tj_lg_flat_store(a, t->out, out_idx, sum));
  /* ir_builder's "parallel" here is the loop's name, not its kind: the loop is serial */
  return tj_tir_for(a, fused, tj_tir_i64(a, 0), tj_lg_mul(a, pre, nxt), TJ_FOR_SERIAL, inner);
}

/* Without an axis: out_buf[indices[l]] += output_grad[l], over the flattened x. */
static const tj_tir_stmt_t *accumulate_flat(tj_arena_t *a, const take_ir_t *t) {
  const tj_tir_expr_t *l = tj_tir_var(a, "serial", TJ_I64);
  const tj_tir_expr_t *k = tj_lg_load(a, t->ind, 1, &l);
  const tj_tir_expr_t *sum = tj_lg_bin(a, TJ_TIR_ADD, tj_lg_flat_load(a, t->out, k), tj_lg_flat_load(a, t->grad, l));
  return tj_tir_for(a, l, tj_tir_i64(a, 0), t->ind->shape[0], TJ_FOR_SERIAL, tj_lg_flat_store(a, t->out, k, sum));
}

static const tj_tir_stmt_t *take_backward_body(tj_arena_t *a, const take_ir_t *t) {
  const tj_tir_expr_t *n = tj_tir_i64(a, 1);
  for (int d = 0; d < t->x->ndim; d++) n = tj_lg_mul(a, n, t->x->shape[d]);
  const tj_tir_expr_t *i = tj_tir_var(a, "i", TJ_I64);
  const tj_tir_stmt_t *zero = tj_tir_for(a, i, tj_tir_i64(a, 0), n, TJ_FOR_SERIAL,
                                         tj_lg_flat_store(a, t->out, i, tj_lg_zero(a, t->x->dtype)));
  const tj_tir_stmt_t *acc = t->has_axis ? accumulate_axis(a, t) : accumulate_flat(a, t);
  if (!zero || !acc) return NULL;
  const tj_tir_stmt_t *both[2] = {zero, acc};
  return tj_tir_seq(a, 2, both);
}

tj_status_t *tj_legalize_grad_take_backward(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                            const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *gs = tj_lg_arg_sinfo(a, call->call.args[0]), *xs = tj_lg_arg_sinfo(a, call->call.args[1]);
  const tj_sinfo_t *is = tj_lg_arg_sinfo(a, call->call.args[2]);
  /* TOPI asserts 1-d indices; the gradient has output_grad's rank with the axis
   * replaced by the indices' length */
  if (!tj_lg_tensor_known(gs) || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(is) || is->tensor.ndim != 1 ||
      !tj_dtype_is_int(is->tensor.dtype) || xs->tensor.ndim < 1)
    return NULL;
  take_ir_t t = {0};
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  t.has_axis = av && av->kind == TJ_ATTR_INT;
  if (t.has_axis && (!tj_lg_axis(av->i, xs->tensor.ndim, &t.axis) || gs->tensor.ndim != xs->tensor.ndim)) return NULL;
  if (!t.has_axis && gs->tensor.ndim != 1) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  t.grad = tj_lg_extern_input(&te, call->call.args[0]);
  t.x = tj_lg_extern_input(&te, call->call.args[1]);
  t.ind = tj_lg_extern_input(&te, call->call.args[2]);
  if (te.failed) return tj_lg_te_finish(&te, "take_backward", NULL, out_expr);
  t.out = tj_lg_output(&te, "out_buf", t.x->dtype, t.x->ndim, t.x->shape);
  if (te.failed) return tj_lg_te_finish(&te, "take_backward", NULL, out_expr);
  tj_lg_extern_block(&te, "take_backward", take_backward_body(a, &t));
  const tj_sinfo_t *os = tj_sinfo_tensor(a, xs->tensor.dtype, xs->tensor.ndim, xs->tensor.shape);
  return tj_lg_te_finish(&te, "take_backward", tj_lg_call_sinfo(call, os), out_expr);
}

/* ---------------- avg_pool2d_backward ---------------- */

/* TOPI's pool_grad_impl (avg) after create_prim_func's Simplify, for one spatial axis:
 * the input position x (iter var v) is covered by the windows of the outputs
 * o = D - r with D = Div(v + pad_before, stride) and r < ceil(k / stride) the reduce
 * iter var; o is valid when lower <= o < out (lower = the first window reaching x). */
typedef struct pg_axis {
  const tj_tir_expr_t *v, *r;        /* block iter vars: the input position, the window */
  int64_t in, k, s, pb, out;         /* extent, kernel, stride, padding before, output extent */
  const tj_tir_expr_t *d, *o, *lower; /* Div(v + pb, s), D - r, the lowest valid o */
} pg_axis_t;

static void pg_axis_exprs(tj_arena_t *a, pg_axis_t *x) {
  const tj_tir_expr_t *k_minus_pb = tj_tir_i64(a, x->k - x->pb);
  x->d = tj_lg_div(a, tj_lg_add(a, x->v, tj_tir_i64(a, x->pb)), tj_tir_i64(a, x->s));
  x->o = tj_lg_sub(a, x->d, x->r);
  /* Select(v + pb < k, 0, Div(v + pb - k, s) + 1), simplified to v < k - pb */
  const tj_tir_expr_t *first = tj_lg_add(a, tj_lg_div(a, tj_lg_sub(a, x->v, k_minus_pb), tj_tir_i64(a, x->s)),
                                         tj_tir_i64(a, 1));
  const tj_tir_expr_t *cond = tj_lg_bin(a, TJ_TIR_LT, x->v, k_minus_pb);
  x->lower = cond && first ? tj_tir_select(a, cond, tj_tir_i64(a, 0), first) : NULL;
}

/* The window's in-bounds extent, min(o*s - pb + k, in) - max(o*s - pb, 0), in the
 * simplifier's canonical order: D*s + (k - pb) - r*s and D*s - r*s - pb. */
static const tj_tir_expr_t *pg_window_extent(tj_arena_t *a, const pg_axis_t *x) {
  const tj_tir_expr_t *ds = tj_lg_mul(a, x->d, tj_tir_i64(a, x->s)), *rs = tj_lg_mul(a, x->r, tj_tir_i64(a, x->s));
  int64_t end_off = x->k - x->pb;
  const tj_tir_expr_t *end = end_off >= 0 ? tj_lg_sub(a, tj_lg_add(a, ds, tj_tir_i64(a, end_off)), rs)
                                          : tj_lg_sub(a, tj_lg_sub(a, ds, rs), tj_tir_i64(a, -end_off));
  const tj_tir_expr_t *start = tj_lg_sub(a, tj_lg_sub(a, ds, rs), tj_tir_i64(a, x->pb));
  return tj_lg_sub(a, tj_lg_bin(a, TJ_TIR_MIN, end, tj_tir_i64(a, x->in)),
                   tj_lg_bin(a, TJ_TIR_MAX, start, tj_tir_i64(a, 0)));
}

static const tj_tir_expr_t *and_all(tj_arena_t *a, int n, const tj_tir_expr_t *const *c) {
  const tj_tir_expr_t *r = c[0];
  for (int i = 1; i < n && r; i++) r = c[i] ? tj_tir_binary(a, TJ_TIR_AND, r, c[i]) : NULL;
  return r;
}

typedef struct pg_plan {
  int h_axis, w_axis;
  pg_axis_t ax[2];
  bool count_include_pad;
} pg_plan_t;

/* out_grad[.., o_h, o_w] / count when both o are valid windows, else 0. */
static const tj_tir_expr_t *pg_avg_term(tj_arena_t *a, const pg_plan_t *p, const tj_buffer_t *g,
                                        const tj_tir_expr_t *const *iv) {
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < g->ndim; i++) idx[i] = iv[i];
  idx[p->h_axis] = p->ax[0].o;
  idx[p->w_axis] = p->ax[1].o;
  const tj_tir_expr_t *conds[4];
  for (int i = 0; i < 2; i++) {
    conds[2 * i] = tj_lg_bin(a, TJ_TIR_LE, p->ax[i].lower, p->ax[i].o);
    conds[2 * i + 1] = tj_lg_bin(a, TJ_TIR_LT, p->ax[i].o, tj_tir_i64(a, p->ax[i].out));
  }
  const tj_tir_expr_t *v = tj_lg_load(a, g, g->ndim, idx), *val;
  if (p->count_include_pad) {
    /* Simplify turns a division by a float literal into a multiplication */
    val = tj_lg_bin(a, TJ_TIR_MUL, v, tj_lg_const(a, g->dtype, 1.0 / (double)(p->ax[0].k * p->ax[1].k)));
  } else {
    const tj_tir_expr_t *area = tj_lg_mul(a, pg_window_extent(a, &p->ax[0]), pg_window_extent(a, &p->ax[1]));
    const tj_tir_expr_t *count = tj_lg_bin(a, TJ_TIR_MAX, area, tj_tir_i64(a, 1));
    val = tj_lg_bin(a, TJ_TIR_DIV, v, count ? tj_tir_cast(a, g->dtype, count) : NULL);
  }
  const tj_tir_expr_t *args[3] = {and_all(a, 4, conds), val, tj_lg_zero(a, g->dtype)};
  return args[0] && val ? tj_tir_call(a, g->dtype, "tir.if_then_else", 3, args) : NULL;
}

/* Attrs TOPI's pool_grad takes: dilation 1, layout == out_layout with H and W; the
 * spatial extents static (TOPI's output extent is computed in int32 otherwise). */
static bool pg_plan(const tj_rx_expr_t *call, const tj_sinfo_t *gs, const tj_sinfo_t *xs, pg_plan_t *p) {
  const tj_attrs_t *at = call->call.attrs;
  int64_t k[2], s[2], pad[4], dil[2];
  if (tj_lg_attr_ints(at, "pool_size", k, 2) != 2 || tj_lg_attr_ints(at, "strides", s, 2) != 2 ||
      tj_lg_attr_ints(at, "padding", pad, 4) != 4 || tj_lg_attr_ints(at, "dilation", dil, 2) != 2 || dil[0] != 1 ||
      dil[1] != 1)
    return false;
  const char *layout = tj_attrs_get_str(at, "layout", "NCHW");
  if (strcmp(layout, tj_attrs_get_str(at, "out_layout", layout)) != 0 || xs->tensor.ndim != (int)strlen(layout) ||
      gs->tensor.ndim != xs->tensor.ndim || xs->tensor.ndim > TJ_LG_MAX_ITERS - 2)
    return false;
  const char *h = strchr(layout, 'H'), *w = strchr(layout, 'W');
  if (!h || !w) return false;
  p->h_axis = (int)(h - layout);
  p->w_axis = (int)(w - layout);
  bool ceil_mode = tj_attrs_get_int(at, "ceil_mode", 0) != 0;
  p->count_include_pad = tj_attrs_get_int(at, "count_include_pad", 0) != 0;
  for (int i = 0; i < 2; i++) {
    pg_axis_t *x = &p->ax[i];
    int axis = i == 0 ? p->h_axis : p->w_axis;
    if (!tj_tir_is_const_int(xs->tensor.shape[axis], &x->in) || k[i] < 1 || s[i] < 1) return false;
    int64_t after = pad[i + 2] + (ceil_mode ? s[i] - 1 : 0);
    *x = (pg_axis_t){.in = x->in, .k = k[i], .s = s[i], .pb = pad[i]};
    x->out = (x->in - k[i] + pad[i] + after) / s[i] + 1;
    if (x->out < 1) return false;
  }
  return true;
}

tj_status_t *tj_legalize_grad_avg_pool2d_backward(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                  const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *gs = tj_lg_arg_sinfo(a, call->call.args[0]), *xs = tj_lg_arg_sinfo(a, call->call.args[1]);
  pg_plan_t p;
  if (!tj_lg_tensor_known(gs) || !tj_lg_tensor_known(xs) || !tj_dtype_is_float(xs->tensor.dtype) ||
      !pg_plan(call, gs, xs, &p))
    return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *g = tj_lg_placeholder(&te, call->call.args[0]), *x = tj_lg_placeholder(&te, call->call.args[1]);
  if (!g || !x) return tj_lg_te_finish(&te, "avg_pool2d_backward", NULL, out_expr);
  const tj_buffer_t *out = tj_lg_output(&te, "T_pool_grad", g->dtype, x->ndim, x->shape);
  int n = x->ndim;
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) {
    ext[i] = x->shape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(a, "ax%d", i);
  }
  for (int i = 0; i < 2; i++) {
    ext[n + i] = tj_tir_i64(a, (p.ax[i].k + p.ax[i].s - 1) / p.ax[i].s);
    kinds[n + i] = TJ_ITER_REDUCE;
    names[n + i] = i == 0 ? "wh" : "ww";
  }
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, "T_pool_grad", n + 2, ext, kinds, names);
  if (te.failed || !out) return tj_lg_te_finish(&te, "avg_pool2d_backward", NULL, out_expr);
  for (int i = 0; i < 2; i++) {
    p.ax[i].v = st.iv[i == 0 ? p.h_axis : p.w_axis];
    p.ax[i].r = st.iv[n + i];
    pg_axis_exprs(a, &p.ax[i]);
  }
  const tj_tir_expr_t *acc = tj_lg_load(a, out, n, st.iv), *term = pg_avg_term(a, &p, g, st.iv);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, out, n, st.iv, tj_lg_zero(a, out->dtype)),
                  tj_lg_store(a, out, n, st.iv, acc && term ? tj_lg_bin(a, TJ_TIR_ADD, acc, term) : NULL));
  return tj_lg_te_finish(&te, "avg_pool2d_backward", tj_lg_call_sinfo(call, xs), out_expr);
}
