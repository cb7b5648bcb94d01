/* Losses (TVM's legalize_ops/nn.py):
 *
 * R.nn.cross_entropy_with_logits → TE `-topi.sum(x * y) / x.shape[0]` (without the
 * division for 1-D inputs), PrimFunc `cross_entropy_with_logits`: blocks `T_multiply`
 * (x * y), `T_multiply_red` (the sum over every axis), `T_multiply_1` (the negation,
 * TE's multiply by -1) and `T_divide` (a multiplication by 1/N, as tvmjit writes every
 * division by a literal count, see statistical.c). Buffers are named parameters first:
 * for 1-D inputs the output is `T_multiply` and the product `T_multiply_1`.
 *
 * R.nn.nll_loss → topi.nn.nll_loss (`nll_loss`), or without weights the TE
 * `nll_loss_without_weight` that first builds `T_full` (ones of length C):
 *   nll_loss[n, d..] = Select(t != ignore_index, (0 - pred[n, t, d..]) * w[t], 0)
 *   mean: nll_loss_red (sum), nll_loss_1 (Select(t != ignore_index, w[t], 0)),
 *         nll_loss_red_1 (its sum), T_divide (the quotient);
 *   sum:  nll_loss_red;   none: nll_loss.
 * For (C,) predictions with () targets the stages are 0-d and mean divides nll_loss by
 * nll_loss_1 directly. */
#include <string.h>

#include "ir/struct_equal.h"
#include "transforms/legalize/legalize.h"

/* A known 0-d shape (NULL would mean "unknown"). */
static const tj_tir_expr_t *const scalar_shape[1] = {NULL};

/* ---------------- cross_entropy_with_logits ---------------- */

/* out[()] = src[()] * k, a 0-d stage. */
static void scale_scalar(tj_lg_te_t *te, const char *block, const tj_buffer_t *out, const tj_buffer_t *src,
                         const tj_tir_expr_t *k) {
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, block, 0, NULL, NULL, NULL);
  const tj_tir_expr_t *v = tj_lg_load(te->arena, src, 0, NULL);
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(te->arena, out, 0, NULL, v && k ? tj_lg_bin(te->arena, TJ_TIR_MUL, v, k) : NULL));
}

/* out[()] = sum of src over every axis; loops k0, k1, ... */
static void sum_all(tj_lg_te_t *te, const char *block, const tj_buffer_t *out, const tj_buffer_t *src) {
  tj_arena_t *a = te->arena;
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS] = {TJ_ITER_REDUCE};
  const char *names[TJ_LG_MAX_ITERS] = {NULL};
  int n = src ? src->ndim : 0;
  for (int i = 0; i < n; i++) {
    kinds[i] = TJ_ITER_REDUCE;
    names[i] = tj_arena_printf(a, "k%d", i);
  }
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, block, n, src ? src->shape : NULL, kinds, names);
  if (te->failed || !src || !out) {
    te->failed = true;
    return;
  }
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 0, NULL), *v = tj_lg_load(a, src, n, st.iv);
  tj_lg_stage_end(te, &st, tj_lg_store(a, out, 0, NULL, tj_lg_zero(a, out->dtype)),
                  tj_lg_store(a, out, 0, NULL, acc && v ? tj_lg_bin(a, TJ_TIR_ADD, acc, v) : NULL));
}

tj_status_t *tj_legalize_cross_entropy_with_logits(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call,
                                                   const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const char *name = "cross_entropy_with_logits";
  if (call->call.n_args != 2) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]), *ys = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_lg_tensor_known(xs) || !tj_lg_tensor_known(ys) || xs->tensor.ndim != ys->tensor.ndim || xs->tensor.ndim < 1 ||
      tj_dtype_is_void(xs->tensor.dtype) || xs->tensor.dtype.code != ys->tensor.dtype.code ||
      xs->tensor.dtype.bits != ys->tensor.dtype.bits)
    return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  bool batched = xs->tensor.ndim > 1;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]), *y = tj_lg_placeholder(&te, call->call.args[1]);
  if (!x || !y) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int n = x->ndim;
  const tj_buffer_t *out = tj_lg_output(&te, batched ? "T_divide" : "T_multiply", dt, 0, NULL);
  const tj_buffer_t *prod = tj_lg_alloc(&te, batched ? "T_multiply" : "T_multiply_1", dt, n, x->shape);
  const tj_buffer_t *red = tj_lg_alloc(&te, "T_multiply_red", dt, 0, NULL);
  const tj_buffer_t *neg = batched ? tj_lg_alloc(&te, "T_multiply_1", dt, 0, NULL) : out;
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_multiply", n, x->shape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  tj_lg_stage_end(&te, &st, NULL,
                  tj_lg_store(a, prod, n, st.iv,
                              tj_lg_bin(a, TJ_TIR_MUL, tj_lg_load(a, x, n, st.iv), tj_lg_load(a, y, n, st.iv))));
  sum_all(&te, "T_multiply_red", red, prod);
  scale_scalar(&te, "T_multiply_1", neg, red, tj_lg_const(a, dt, -1.0));
  int64_t batch;
  if (batched) {
    if (!tj_tir_is_const_int(x->shape[0], &batch) || batch == 0) {
      /* a symbolic batch: TVM's T_divide by the cast extent */
      const tj_tir_expr_t *v = tj_lg_load(a, neg, 0, NULL);
      tj_lg_stage_begin(&te, &st, "T_divide", 0, NULL, NULL, NULL);
      tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, 0, NULL, tj_lg_div(a, v, tj_lg_cast(a, dt, x->shape[0]))));
    } else {
      scale_scalar(&te, "T_divide", out, neg, tj_tir_float(a, dt, 1.0 / (double)batch));
    }
  }
  return tj_lg_te_finish(&te, name, tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dt, 0, scalar_shape)), out_expr);
}

/* ---------------- nll_loss ---------------- */

typedef struct nll_plan {
  const tj_buffer_t *pred, *tgt, *w;
  tj_dtype_t dt;
  const tj_tir_expr_t *ignore; /* ignore_index in the targets' dtype */
} nll_plan_t;

/* Select(t != ignore_index, value, 0) at the targets' index iv. */
static const tj_tir_expr_t *nll_select(tj_arena_t *a, const nll_plan_t *p, const tj_tir_expr_t *const *iv,
                                       bool loss) {
  int nt = p->tgt->ndim;
  const tj_tir_expr_t *t = tj_lg_load(a, p->tgt, nt, iv);
  const tj_tir_expr_t *widx[1] = {t};
  const tj_tir_expr_t *value = tj_lg_load(a, p->w, 1, widx);
  if (loss) {
    const tj_tir_expr_t *pidx[TJ_LG_MAX_ITERS];
    int np = 0;
    if (nt == 0) {
      pidx[np++] = t;
    } else {
      pidx[np++] = iv[0];
      pidx[np++] = t;
      for (int i = 1; i < nt; i++) pidx[np++] = iv[i];
    }
    const tj_tir_expr_t *neg = tj_lg_bin(a, TJ_TIR_SUB, tj_lg_zero(a, p->dt), tj_lg_load(a, p->pred, np, pidx));
    value = tj_lg_bin(a, TJ_TIR_MUL, neg, value);
  }
  const tj_tir_expr_t *cond = tj_lg_bin(a, TJ_TIR_NE, t, p->ignore);
  if (!cond || !value) return NULL;
  return tj_tir_select(a, cond, value, tj_lg_zero(a, p->dt));
}

static void nll_stage(tj_lg_te_t *te, const char *block, const tj_buffer_t *out, const nll_plan_t *p, bool loss) {
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, block, p->tgt->ndim, p->tgt->shape, "ax");
  st.int64_scalar_dom = true;
  if (te->failed || !out) {
    te->failed = true;
    return;
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(te->arena, out, p->tgt->ndim, st.iv, nll_select(te->arena, p, st.iv, loss)));
}

/* T_full: ones of length C (nll_loss_without_weight). */
static const tj_buffer_t *ones(tj_lg_te_t *te, tj_dtype_t dt, const tj_tir_expr_t *c) {
  const tj_buffer_t *buf = tj_lg_alloc(te, "T_full", dt, 1, &c);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "T_full", 1, &c, "ax");
  if (te->failed || !buf) return NULL;
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(te->arena, buf, 1, st.iv, tj_lg_const(te->arena, dt, 1.0)));
  return buf;
}

/* The TIR reads predictions at the targets' positions (n, d..): they must be the same
 * dims. An annotated call may have skipped the inference that checks it (the parser
 * takes the annotation when inference fails, and `tvmjit conformance` trusts it), so
 * the legalization checks it again. */
static bool same_positions(const tj_sinfo_t *ps, const tj_sinfo_t *ts) {
  for (int i = 0; i < ts->tensor.ndim; i++)
    if (!tj_struct_equal_tir_expr(ps->tensor.shape[i == 0 ? 0 : i + 1], ts->tensor.shape[i])) return false;
  return true;
}

tj_status_t *tj_legalize_nll_loss(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  int nargs = call->call.n_args;
  if (nargs != 2 && nargs != 3) return NULL;
  tj_arena_t *a = ctx->arena;
  const char *name = nargs == 3 ? "nll_loss" : "nll_loss_without_weight";
  for (int i = 0; i < nargs; i++)
    if (!tj_lg_tensor_known(tj_lg_arg_sinfo(a, call->call.args[i]))) return NULL;
  const tj_sinfo_t *ps = tj_lg_arg_sinfo(a, call->call.args[0]), *ts = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (ps->tensor.ndim < 1 || ts->tensor.ndim != (ps->tensor.ndim == 1 ? 0 : ps->tensor.ndim - 1) ||
      !tj_dtype_is_int(ts->tensor.dtype) || !same_positions(ps, ts))
    return NULL;
  const char *reduction = tj_attrs_get_str(call->call.attrs, "reduction", "mean");
  bool mean = strcmp(reduction, "mean") == 0, sum = strcmp(reduction, "sum") == 0;
  nll_plan_t p = {.dt = ps->tensor.dtype};
  p.ignore = tj_tir_int(a, ts->tensor.dtype, tj_attrs_get_int(call->call.attrs, "ignore_index", -100));
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  p.pred = tj_lg_placeholder(&te, call->call.args[0]);
  p.tgt = tj_lg_placeholder(&te, call->call.args[1]);
  if (nargs == 3) p.w = tj_lg_placeholder(&te, call->call.args[2]);
  if (!p.pred || !p.tgt || (nargs == 3 && !p.w)) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int nt = p.tgt->ndim;
  bool reduce = nt > 0 && (mean || sum); /* a 0-d loss is never summed */
  const char *out_name = mean ? "T_divide" : reduce ? "nll_loss_red" : "nll_loss";
  int out_nd = mean || reduce ? 0 : nt;
  const tj_buffer_t *out = tj_lg_output(&te, out_name, p.dt, out_nd, p.tgt->shape);
  if (!p.w) p.w = ones(&te, p.dt, p.pred->shape[p.pred->ndim == 1 ? 0 : 1]);
  const tj_buffer_t *loss = strcmp(out_name, "nll_loss") == 0 ? out : tj_lg_alloc(&te, "nll_loss", p.dt, nt, p.tgt->shape);
  const tj_buffer_t *loss_red = reduce ? (sum ? out : tj_lg_alloc(&te, "nll_loss_red", p.dt, 0, NULL)) : loss;
  const tj_buffer_t *wsel = NULL, *wsel_red = NULL;
  if (mean) {
    wsel = tj_lg_alloc(&te, "nll_loss_1", p.dt, nt, p.tgt->shape);
    wsel_red = reduce ? tj_lg_alloc(&te, "nll_loss_red_1", p.dt, 0, NULL) : wsel;
  }
  if (te.failed || !p.w) return tj_lg_te_finish(&te, name, NULL, out_expr);
  nll_stage(&te, "nll_loss", loss, &p, true);
  if (reduce) sum_all(&te, "nll_loss_red", loss_red, loss);
  if (mean) {
    nll_stage(&te, "nll_loss_1", wsel, &p, false);
    if (reduce) sum_all(&te, "nll_loss_red_1", wsel_red, wsel);
    tj_lg_stage_t st;
    tj_lg_stage_begin(&te, &st, "T_divide", 0, NULL, NULL, NULL);
    const tj_tir_expr_t *q = tj_lg_bin(a, TJ_TIR_DIV, tj_lg_load(a, loss_red, 0, NULL), tj_lg_load(a, wsel_red, 0, NULL));
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, 0, NULL, q));
  }
  return tj_lg_te_finish(&te, name, tj_lg_call_sinfo(call, tj_sinfo_tensor(a, p.dt, out_nd, out_nd ? p.tgt->shape : scalar_shape)), out_expr);
}
