/* R.nn.attention → TVM's `_te_attention` (legalize_ops/nn.py), PrimFunc `attention`,
 * or `attention_bias` with a bias. In BNSH after transposes and reshapes to (B*N, S, H):
 *
 *   T_transpose, T_reshape (q); T_transpose_1, T_reshape_1 (k);
 *   T_batch_matmul_NT (q k^T; as topi's batch_matmul, the block attr
 *     {"layout_free_placeholders": [T_reshape_1]} names its second operand);
 *   T_multiply (* scale) or T_divide (/ sqrt(float(H)));
 *   with bias: T_reshape_2 (to (B, N, Sq, Skv)), T_add (broadcast bias), T_reshape_3;
 *   causal_mask: trilu (scores where j <= i + offset, else 0), trilu_red (row max),
 *     T_subtract, compute (exp), trilu_1 (mask again), trilu_red_1 (row sum), T_divide;
 *     offset 0 for "TopLeft", |Sq - Skv| for "BottomRight";
 *   no mask: topi softmax (T_softmax_maxelem, T_softmax_exp, T_softmax_expsum,
 *     T_softmax_norm);
 *   T_transpose_2, T_reshape_4 (v); T_batch_matmul_NN (P v; the same block attr, naming T_reshape_4); T_reshape_5 (to
 *   (B, N, Sq, Hv)); T_transpose_3 (back to BSNH, the output buffer T_transpose).
 *
 * Everything runs in the input dtype (no f32 upcast, as TVM). The reshape indices are
 * topi's ravel/unravel of the merged or split leading dims (numerically exact; their
 * printed form may differ from TVM's simplified one). Declines (keeps the op) for
 * symbolic shapes, different head counts of q/k/v (TVM cannot legalize them either) and
 * a window_size (TVM asserts it is None). */
#include <float.h>
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct att {
  tj_lg_te_t te;
  tj_arena_t *a;
  tj_dtype_t dt;
  int64_t B, N, Sq, Skv, H, Hv;
} att_t;

static const tj_tir_expr_t *c64(att_t *s, int64_t v) { return tj_tir_i64(s->a, v); }

/* A spatial stage over `shape` writing `out` with value(iv). */
typedef const tj_tir_expr_t *(*value_fn)(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx);

static void stage(att_t *s, const char *name, const tj_buffer_t *out, const char *prefix, value_fn f, const void *ctx) {
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&s->te, &st, name, out ? out->ndim : 0, out ? out->shape : NULL, prefix);
  if (s->te.failed || !out) {
    s->te.failed = true;
    return;
  }
  tj_lg_stage_end(&s->te, &st, NULL, tj_lg_store(s->a, out, out->ndim, st.iv, f(s, st.iv, ctx)));
}

static const tj_buffer_t *buf(att_t *s, const char *name, int n, const int64_t *dims) {
  const tj_tir_expr_t *shape[4];
  for (int i = 0; i < n; i++) shape[i] = c64(s, dims[i]);
  return tj_lg_alloc(&s->te, name, s->dt, n, shape);
}

/* ---- transpose (0, 2, 1, 3) ---- */
static const tj_tir_expr_t *v_transpose(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const tj_tir_expr_t *idx[4] = {iv[0], iv[2], iv[1], iv[3]};
  return tj_lg_load(s->a, ctx, 4, idx);
}

/* ---- reshape (B, N, S, K) -> (B*N, S, K): ravel the output index, unravel it over
 * the input shape ---- */
static const tj_tir_expr_t *v_merge(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const tj_buffer_t *src = ctx;
  tj_arena_t *a = s->a;
  int64_t n = 0, sl = 0, k = 0;
  tj_tir_is_const_int(src->shape[1], &n);
  tj_tir_is_const_int(src->shape[2], &sl);
  tj_tir_is_const_int(src->shape[3], &k);
  const tj_tir_expr_t *rows = tj_lg_add(a, tj_lg_floordiv(a, iv[2], c64(s, k)), iv[1]); /* (x // K + i) */
  const tj_tir_expr_t *heads = tj_lg_add(a, tj_lg_floordiv(a, rows, c64(s, sl)), iv[0]);
  const tj_tir_expr_t *idx[4] = {
      tj_lg_floordiv(a, tj_lg_floormod(a, heads, c64(s, s->B * n)), c64(s, n)),
      tj_lg_floormod(a, heads, c64(s, n)),
      tj_lg_floormod(a, rows, c64(s, sl)),
      tj_lg_floormod(a, iv[2], c64(s, k)),
  };
  return tj_lg_load(a, src, 4, idx);
}

/* ---- reshape (B*N, S, K) -> (B, N, S, K) ---- */
static const tj_tir_expr_t *v_split(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const tj_buffer_t *src = ctx;
  tj_arena_t *a = s->a;
  int64_t sl = 0, k = 0;
  tj_tir_is_const_int(src->shape[1], &sl);
  tj_tir_is_const_int(src->shape[2], &k);
  const tj_tir_expr_t *rows = tj_lg_add(a, tj_lg_floordiv(a, iv[3], c64(s, k)), iv[2]);
  const tj_tir_expr_t *bh =
      tj_lg_add(a, tj_lg_add(a, tj_lg_mul(a, iv[0], c64(s, s->N)), tj_lg_floordiv(a, rows, c64(s, sl))), iv[1]);
  const tj_tir_expr_t *idx[3] = {tj_lg_floormod(a, bh, c64(s, s->B * s->N)), tj_lg_floormod(a, rows, c64(s, sl)),
                                 tj_lg_floormod(a, iv[3], c64(s, k))};
  return tj_lg_load(a, src, 3, idx);
}

static const tj_buffer_t *transpose_reshape(att_t *s, const tj_buffer_t *x, const char *tblock, const char *tbuf,
                                            const char *rname) {
  int64_t b, sl, n, k;
  tj_tir_is_const_int(x->shape[0], &b);
  tj_tir_is_const_int(x->shape[1], &sl);
  tj_tir_is_const_int(x->shape[2], &n);
  tj_tir_is_const_int(x->shape[3], &k);
  const tj_buffer_t *t = buf(s, tbuf, 4, (int64_t[]){b, n, sl, k});
  const tj_buffer_t *r = buf(s, rname, 3, (int64_t[]){b * n, sl, k});
  stage(s, tblock, t, "ax", v_transpose, x);
  stage(s, rname, r, "ax", v_merge, t);
  return r;
}

/* ---- batch matmul: out[b, i, j] = sum_k x[b, i, k] * y[b, j, k] (NT) or y[b, k, j] (NN) ---- */
static void batch_matmul(att_t *s, const char *name, const tj_buffer_t *out, const tj_buffer_t *x,
                         const tj_buffer_t *y, bool nt, int64_t kext) {
  tj_arena_t *a = s->a;
  const tj_tir_expr_t *ext[4] = {out->shape[0], out->shape[1], out->shape[2], c64(s, kext)};
  tj_iter_kind_t kinds[4] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_REDUCE};
  const char *names[4] = {"b", "i", "j", "k"};
  tj_lg_stage_t st;
  tj_lg_stage_begin(&s->te, &st, name, 4, ext, kinds, names);
  if (s->te.failed) return;
  tj_attr_value_t placeholder = {.kind = TJ_ATTR_BUFFER, .buffer = y};
  tj_attr_value_t list = {.kind = TJ_ATTR_LIST, .list = {1, tj_arena_memdup(a, &placeholder, sizeof placeholder)}};
  st.annotations = list.list.items ? tj_attrs_set(a, NULL, "layout_free_placeholders", list) : NULL;
  if (!st.annotations) {
    s->te.failed = true;
    return;
  }
  const tj_tir_expr_t *xi[3] = {st.iv[0], st.iv[1], st.iv[3]};
  const tj_tir_expr_t *yi[3] = {st.iv[0], nt ? st.iv[2] : st.iv[3], nt ? st.iv[3] : st.iv[2]};
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 3, st.iv);
  const tj_tir_expr_t *prod = tj_lg_bin(a, TJ_TIR_MUL, tj_lg_load(a, x, 3, xi), tj_lg_load(a, y, 3, yi));
  tj_lg_stage_end(&s->te, &st, tj_lg_store(a, out, 3, st.iv, tj_lg_zero(a, s->dt)),
                  tj_lg_store(a, out, 3, st.iv, tj_lg_bin(a, TJ_TIR_ADD, acc, prod)));
}

/* ---- scores ---- */
typedef struct binop_ctx {
  const tj_buffer_t *x, *y; /* y NULL: a scalar operand k */
  const tj_tir_expr_t *k;
  tj_tir_expr_kind_t op;
} binop_ctx_t;

static const tj_tir_expr_t *v_scalar(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const binop_ctx_t *c = ctx;
  return tj_lg_bin(s->a, c->op, tj_lg_load(s->a, c->x, c->x->ndim, iv), c->k);
}

/* T_add with the bias broadcast over its extent-1 dims */
static const tj_tir_expr_t *v_add_bias(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const binop_ctx_t *c = ctx;
  const tj_tir_expr_t *bi[4];
  for (int d = 0; d < 4; d++) {
    int64_t e;
    bi[d] = tj_tir_is_const_int(c->y->shape[d], &e) && e == 1 ? c64(s, 0) : iv[d];
  }
  return tj_lg_bin(s->a, TJ_TIR_ADD, tj_lg_load(s->a, c->x, 4, iv), tj_lg_load(s->a, c->y, 4, bi));
}

/* x[b, i, j] op y[b, i, 0] (row statistic broadcast) */
static const tj_tir_expr_t *v_row(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const binop_ctx_t *c = ctx;
  const tj_tir_expr_t *ri[3] = {iv[0], iv[1], c64(s, 0)};
  return tj_lg_bin(s->a, c->op, tj_lg_load(s->a, c->x, 3, iv), tj_lg_load(s->a, c->y, c->y->ndim, ri));
}

/* trilu: Select(j <= i + offset, x, 0) */
static const tj_tir_expr_t *v_trilu(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const binop_ctx_t *c = ctx;
  const tj_tir_expr_t *cond = tj_lg_bin(s->a, TJ_TIR_LE, iv[2], tj_lg_add(s->a, iv[1], c->k));
  const tj_tir_expr_t *x = tj_lg_load(s->a, c->x, 3, iv);
  return cond && x ? tj_tir_select(s->a, cond, x, tj_lg_zero(s->a, s->dt)) : NULL;
}

static const tj_tir_expr_t *v_exp(att_t *s, const tj_tir_expr_t *const *iv, const void *ctx) {
  const binop_ctx_t *c = ctx;
  return tj_lg_call1(s->a, "tir.exp", tj_lg_load(s->a, c->x, 3, iv));
}

static double lowest(tj_dtype_t d) { return -tj_dtype_float_max(d); }

/* Row max or sum of x (BN, Sq, Skv) into out; keepdims gives (BN, Sq, 1) with loops
 * ax0, ax1, ax2, k2; without, (BN, Sq) with loops i0, i1, k (topi softmax). */
static void row_reduce(att_t *s, const char *name, const tj_buffer_t *out, const tj_buffer_t *x, bool is_max,
                       bool keepdims) {
  tj_arena_t *a = s->a;
  int ns = keepdims ? 3 : 2;
  const tj_tir_expr_t *ext[4] = {x->shape[0], x->shape[1], c64(s, 1), x->shape[2]};
  if (!keepdims) ext[2] = x->shape[2];
  tj_iter_kind_t kinds[4] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_REDUCE};
  kinds[ns] = TJ_ITER_REDUCE;
  static const char *const kd[4] = {"ax0", "ax1", "ax2", "k2"}, *const sm[3] = {"i0", "i1", "k"};
  tj_lg_stage_t st;
  tj_lg_stage_begin(&s->te, &st, name, ns + 1, ext, kinds, keepdims ? kd : sm);
  if (s->te.failed || !out) {
    s->te.failed = true;
    return;
  }
  const tj_tir_expr_t *xi[3] = {st.iv[0], st.iv[1], st.iv[ns]};
  const tj_tir_expr_t *acc = tj_lg_load(a, out, ns, st.iv), *v = tj_lg_load(a, x, 3, xi);
  const tj_tir_expr_t *init = is_max ? tj_lg_const(a, s->dt, lowest(s->dt)) : tj_lg_zero(a, s->dt);
  tj_lg_stage_end(&s->te, &st, tj_lg_store(a, out, ns, st.iv, init),
                  tj_lg_store(a, out, ns, st.iv, tj_lg_bin(a, is_max ? TJ_TIR_MAX : TJ_TIR_ADD, acc, v)));
}

/* softmax over the keys: the masked form (causal) or topi's softmax. */
static const tj_buffer_t *probabilities(att_t *s, const tj_buffer_t *p, const char *mask) {
  int64_t sh3[3] = {s->B * s->N, s->Sq, s->Skv}, row[3] = {s->B * s->N, s->Sq, 1};
  if (!mask) {
    const tj_buffer_t *mx = buf(s, "T_softmax_maxelem", 2, row), *ex = buf(s, "T_softmax_exp", 3, sh3);
    const tj_buffer_t *sum = buf(s, "T_softmax_expsum", 2, row), *norm = buf(s, "T_softmax_norm", 3, sh3);
    if (!mx || !ex || !sum || !norm) return NULL;
    row_reduce(s, "T_softmax_maxelem", mx, p, true, false);
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&s->te, &st, "T_softmax_exp", 3, ex->shape, "i");
    if (s->te.failed) return NULL;
    const tj_tir_expr_t *ri[2] = {st.iv[0], st.iv[1]};
    const tj_tir_expr_t *d = tj_lg_bin(s->a, TJ_TIR_SUB, tj_lg_load(s->a, p, 3, st.iv), tj_lg_load(s->a, mx, 2, ri));
    tj_lg_stage_end(&s->te, &st, NULL, tj_lg_store(s->a, ex, 3, st.iv, tj_lg_call1(s->a, "tir.exp", d)));
    row_reduce(s, "T_softmax_expsum", sum, ex, false, false);
    tj_lg_stage_spatial(&s->te, &st, "T_softmax_norm", 3, norm->shape, "i");
    if (s->te.failed) return NULL;
    st.annotations = tj_attrs_set(s->a, NULL, "axis", tj_attr_int(2));
    ri[0] = st.iv[0], ri[1] = st.iv[1];
    const tj_tir_expr_t *q = tj_lg_bin(s->a, TJ_TIR_DIV, tj_lg_load(s->a, ex, 3, st.iv), tj_lg_load(s->a, sum, 2, ri));
    tj_lg_stage_end(&s->te, &st, NULL, tj_lg_store(s->a, norm, 3, st.iv, q));
    return norm;
  }
  int64_t off = strcmp(mask, "BottomRight") == 0 ? (s->Sq > s->Skv ? s->Sq - s->Skv : s->Skv - s->Sq) : 0;
  const tj_buffer_t *tr = buf(s, "trilu", 3, sh3), *mx = buf(s, "trilu_red", 3, row);
  const tj_buffer_t *sub = buf(s, "T_subtract", 3, sh3), *ex = buf(s, "compute", 3, sh3);
  const tj_buffer_t *tr1 = buf(s, "trilu_1", 3, sh3), *sum = buf(s, "trilu_red_1", 3, row);
  const tj_buffer_t *div = buf(s, "T_divide", 3, sh3);
  if (!tr || !mx || !sub || !ex || !tr1 || !sum || !div) return NULL;
  binop_ctx_t c = {.x = p, .k = c64(s, off)};
  stage(s, "trilu", tr, "i", v_trilu, &c);
  row_reduce(s, "trilu_red", mx, tr, true, true);
  binop_ctx_t cs = {.x = tr, .y = mx, .op = TJ_TIR_SUB};
  stage(s, "T_subtract", sub, "ax", v_row, &cs);
  binop_ctx_t ce = {.x = sub};
  stage(s, "compute", ex, "i", v_exp, &ce);
  binop_ctx_t c1 = {.x = ex, .k = c64(s, off)};
  stage(s, "trilu_1", tr1, "i", v_trilu, &c1);
  row_reduce(s, "trilu_red_1", sum, tr1, false, true);
  binop_ctx_t cd = {.x = tr1, .y = sum, .op = TJ_TIR_DIV};
  stage(s, "T_divide", div, "ax", v_row, &cd);
  return div;
}

static bool static_dims(const tj_sinfo_t *x, int64_t *d) {
  if (!tj_lg_tensor_known(x) || x->tensor.ndim != 4) return false;
  for (int i = 0; i < 4; i++)
    if (!tj_tir_is_const_int(x->tensor.shape[i], &d[i])) return false;
  return true;
}

tj_status_t *tj_legalize_attention(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  int nargs = call->call.n_args;
  if (nargs != 3 && nargs != 4) return NULL;
  const tj_attrs_t *at = call->call.attrs;
  const tj_attr_value_t *win = tj_attrs_get(at, "window_size");
  if (win && win->kind != TJ_ATTR_NONE) return NULL;
  att_t s = {.a = ctx->arena};
  tj_arena_t *a = ctx->arena;
  int64_t dq[4], dk[4], dv[4], db[4];
  if (!static_dims(tj_lg_arg_sinfo(a, call->call.args[0]), dq) || !static_dims(tj_lg_arg_sinfo(a, call->call.args[1]), dk) ||
      !static_dims(tj_lg_arg_sinfo(a, call->call.args[2]), dv) ||
      (nargs == 4 && !static_dims(tj_lg_arg_sinfo(a, call->call.args[3]), db)))
    return NULL;
  if (dk[2] != dq[2] || dv[2] != dq[2] || dk[0] != dq[0] || dv[0] != dq[0] || dk[3] != dq[3] || dv[1] != dk[1])
    return NULL;
  s.dt = tj_lg_arg_sinfo(a, call->call.args[0])->tensor.dtype;
  if (!tj_dtype_is_floating(s.dt)) return NULL;
  s.B = dq[0], s.Sq = dq[1], s.N = dq[2], s.H = dq[3], s.Skv = dk[1], s.Hv = dv[3];
  const char *name = nargs == 4 ? "attention_bias" : "attention";
  const tj_attr_value_t *mv = tj_attrs_get(at, "causal_mask");
  const char *mask = mv && mv->kind == TJ_ATTR_STR ? mv->s : NULL;
  const tj_attr_value_t *sv = tj_attrs_get(at, "scale");
  tj_lg_te_init(&s.te, ctx);
  const tj_buffer_t *q = tj_lg_placeholder(&s.te, call->call.args[0]), *k = tj_lg_placeholder(&s.te, call->call.args[1]);
  const tj_buffer_t *v = tj_lg_placeholder(&s.te, call->call.args[2]);
  const tj_buffer_t *bias = nargs == 4 ? tj_lg_placeholder(&s.te, call->call.args[3]) : NULL;
  if (!q || !k || !v || (nargs == 4 && !bias)) return tj_lg_te_finish(&s.te, name, NULL, out_expr);
  int64_t BN = s.B * s.N, oshape[4] = {s.B, s.Sq, s.N, s.Hv};
  const tj_tir_expr_t *osh[4];
  for (int i = 0; i < 4; i++) osh[i] = c64(&s, oshape[i]);
  const tj_buffer_t *out = tj_lg_output(&s.te, "T_transpose", s.dt, 4, osh);
  const tj_buffer_t *qr = transpose_reshape(&s, q, "T_transpose", "T_transpose_1", "T_reshape");
  const tj_buffer_t *kr = transpose_reshape(&s, k, "T_transpose_1", "T_transpose_2", "T_reshape_1");
  const tj_buffer_t *p = buf(&s, "T_batch_matmul_NT", 3, (int64_t[]){BN, s.Sq, s.Skv});
  if (!qr || !kr || !p) return tj_lg_te_finish(&s.te, name, NULL, out_expr);
  batch_matmul(&s, "T_batch_matmul_NT", p, qr, kr, true, s.H);
  bool scaled = sv && sv->kind == TJ_ATTR_FLOAT;
  const tj_buffer_t *ps = buf(&s, scaled ? "T_multiply" : "T_divide", 3, (int64_t[]){BN, s.Sq, s.Skv});
  binop_ctx_t sc = {.x = p, .op = scaled ? TJ_TIR_MUL : TJ_TIR_DIV};
  sc.k = scaled ? tj_tir_float(a, s.dt, sv->f)
                : tj_lg_call1(a, "tir.sqrt", tj_tir_float(a, s.dt, (double)s.H)); /* sqrt(Cast(dtype, H)) */
  if (ps) stage(&s, scaled ? "T_multiply" : "T_divide", ps, "ax", v_scalar, &sc);
  if (bias && ps) {
    const tj_buffer_t *r2 = buf(&s, "T_reshape_2", 4, (int64_t[]){s.B, s.N, s.Sq, s.Skv});
    const tj_buffer_t *add = buf(&s, "T_add", 4, (int64_t[]){s.B, s.N, s.Sq, s.Skv});
    const tj_buffer_t *r3 = buf(&s, "T_reshape_3", 3, (int64_t[]){BN, s.Sq, s.Skv});
    if (!r2 || !add || !r3) return tj_lg_te_finish(&s.te, name, NULL, out_expr);
    stage(&s, "T_reshape_2", r2, "ax", v_split, ps);
    binop_ctx_t ba = {.x = r2, .y = bias};
    stage(&s, "T_add", add, "ax", v_add_bias, &ba);
    stage(&s, "T_reshape_3", r3, "ax", v_merge, add);
    ps = r3;
  }
  const tj_buffer_t *prob = ps ? probabilities(&s, ps, mask) : NULL;
  const tj_buffer_t *vr = transpose_reshape(&s, v, "T_transpose_2", "T_transpose_3", "T_reshape_4");
  const tj_buffer_t *o = buf(&s, "T_batch_matmul_NN", 3, (int64_t[]){BN, s.Sq, s.Hv});
  const tj_buffer_t *o4 = buf(&s, "T_reshape_5", 4, (int64_t[]){s.B, s.N, s.Sq, s.Hv});
  if (!prob || !vr || !o || !o4) return tj_lg_te_finish(&s.te, name, NULL, out_expr);
  batch_matmul(&s, "T_batch_matmul_NN", o, prob, vr, false, s.Skv);
  stage(&s, "T_reshape_5", o4, "ax", v_split, o);
  stage(&s, "T_transpose_3", out, "ax", v_transpose, o4);
  return tj_lg_te_finish(&s.te, name, tj_lg_call_sinfo(call, tj_sinfo_tensor(a, s.dt, 4, osh)), out_expr);
}
