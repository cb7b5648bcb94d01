/* NN ops (TVM's legalize_ops/nn.py): relu, layer_norm, softmax. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "ir/struct_equal.h"
#include "transforms/legalize/legalize.h"

/* ---------------- relu ----------------
 * R.nn.relu → topi.nn.relu (`relu`): one block `compute`, max(x, 0)
 * (docs/semantics.md §2.4). */

static const tj_tir_expr_t *relu_body(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t out_dtype) {
  (void)out_dtype;
  if (!x) return NULL;
  return tj_tir_binary(a, TJ_TIR_MAX, x, tj_lg_zero(a, x->dtype));
}

tj_status_t *tj_legalize_relu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  return tj_lg_unary(ctx, call, "relu", xs->tensor.dtype, relu_body, out_expr);
}

/* ---------------- layer_norm ----------------
 * R.nn.layer_norm → topi.nn.layer_norm (`layer_norm`), docs/semantics.md §2.3.
 *
 * We implement the one-pass form of TVM at the conformance commit (and of the seed
 * module): a tuple reduction `<data>_red_temp` computing Σx and Σx² into the root
 * buffers `<data>_red_temp_v0/_v1` (float32 when data is float16), then
 * `T_layer_norm` with mean = Σx / n and var = Σx² / n − mean². As in TVM at that
 * commit a division by a literal n is written as a multiplication by 1/n
 * (`x * T.float32(0.05)`), while a non-literal n (float16 products such as
 * `T.float16(4) * T.float16(5)`, or symbolic extents) stays a division.
 *
 * Known limitation, kept on purpose for conformance: E[x²] − E[x]² cancels
 * catastrophically when |mean| ≫ std (TVM issue #19592, fixed upstream by the
 * two-pass form of PR #19643: Σx, mean, Σ(x − mean)², then var = that / n). The
 * two-pass form would be a drop-in alternative here (same inputs, same output
 * block) if accuracy on such inputs matters more than matching TVM 0.18's IR.
 * center/scale are not consulted (gamma and beta are always applied), as in TVM. */

/* mean-style division: by a literal it is a multiplication by the reciprocal. */
static const tj_tir_expr_t *div_extent(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *n) {
  if (!x || !n) return NULL;
  n = tj_lg_cast(a, x->dtype, n);
  if (n && n->kind == TJ_TIR_FLOAT_IMM && n->float_imm != 0)
    return tj_tir_binary(a, TJ_TIR_MUL, x, tj_tir_float(a, x->dtype, 1.0 / n->float_imm));
  return tj_lg_div(a, x, n);
}

static int cmp_int(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

typedef struct ln_plan {
  int ndim, n_axes;
  int axes[TJ_LG_MAX_ITERS]; /* sorted, non-negative */
  bool reduced[TJ_LG_MAX_ITERS];
  double epsilon;
  tj_dtype_t dtype, acc_dtype;
} ln_plan_t;

static bool plan(const tj_rx_expr_t *call, const tj_sinfo_t *xs, ln_plan_t *p) {
  memset(p, 0, sizeof *p);
  p->ndim = xs->tensor.ndim;
  p->dtype = xs->tensor.dtype;
  if (p->ndim < 1 || p->ndim > TJ_LG_MAX_ITERS) return false;
  if (!tj_dtype_eq(p->dtype, TJ_F32) && !tj_dtype_eq(p->dtype, TJ_F16)) return false;
  p->acc_dtype = TJ_F32;
  if (tj_dtype_eq(p->dtype, TJ_F32)) p->acc_dtype = p->dtype;
  int64_t axes[TJ_LG_MAX_ITERS];
  int n = tj_lg_attr_ints(call->call.attrs, "axes", axes, TJ_LG_MAX_ITERS);
  if (n <= 0) return false;
  for (int i = 0; i < n; i++) {
    if (!tj_lg_axis(axes[i], p->ndim, &p->axes[i]) || p->reduced[p->axes[i]]) return false;
    p->reduced[p->axes[i]] = true;
  }
  p->n_axes = n;
  qsort(p->axes, (size_t)n, sizeof p->axes[0], cmp_int);
  const tj_attr_value_t *eps = tj_attrs_get(call->call.attrs, "epsilon");
  p->epsilon = eps && eps->kind == TJ_ATTR_FLOAT ? eps->f : 1e-5;
  return true;
}

/* The `<data>_red_temp` tuple reduction; returns the two accumulators. */
static void emit_red_temp(tj_lg_te_t *te, const tj_buffer_t *x, const ln_plan_t *p, const tj_buffer_t **out_v0,
                          const tj_buffer_t **out_v1) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS + 1], *tshape[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS + 1];
  const char *names[TJ_LG_MAX_ITERS + 1];
  int ns = 0;
  for (int d = 0; d < p->ndim; d++)
    if (!p->reduced[d]) tshape[ns++] = x->shape[d];
  bool padded = ns == 0; /* atleast1d: a reduction over every axis keeps shape (1,) */
  if (padded) tshape[ns++] = tj_tir_i64(a, 1);
  int n = 0;
  for (int i = 0; i < ns; i++) {
    ext[n] = tshape[i];
    kinds[n] = TJ_ITER_SPATIAL;
    names[n++] = tj_arena_printf(a, "ax%d", i);
  }
  for (int i = 0; i < p->n_axes; i++) {
    ext[n] = x->shape[p->axes[i]];
    kinds[n] = TJ_ITER_REDUCE;
    names[n++] = tj_arena_printf(a, "k%d", p->axes[i]);
  }
  const char *base = tj_arena_printf(a, "%s_red_temp", x->name);
  const tj_buffer_t *v0 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v0", base), p->acc_dtype, ns, tshape);
  const tj_buffer_t *v1 = tj_lg_alloc(te, tj_arena_printf(a, "%s_v1", base), p->acc_dtype, ns, tshape);
  *out_v0 = v0;
  *out_v1 = v1;
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, base, n, ext, kinds, names);
  if (te->failed) return;
  const tj_tir_expr_t *eval[TJ_LG_MAX_ITERS];
  int si = 0, ri = ns;
  for (int d = 0; d < p->ndim; d++) eval[d] = p->reduced[d] ? st.iv[ri++] : st.iv[si++];
  const tj_tir_expr_t *const *ridx = st.iv; /* the spatial iterators index the accumulators */
  const tj_tir_expr_t *x0 = tj_lg_cast(a, p->acc_dtype, tj_lg_load(a, x, p->ndim, eval));
  const tj_tir_expr_t *x1 = tj_lg_cast(a, p->acc_dtype, tj_lg_load(a, x, p->ndim, eval));
  const tj_tir_expr_t *x2 = tj_lg_cast(a, p->acc_dtype, tj_lg_load(a, x, p->ndim, eval));
  const tj_tir_expr_t *l0 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v0 ? v0->name : "v0"), p->acc_dtype);
  const tj_tir_expr_t *l1 = tj_tir_var(a, tj_arena_printf(a, "v_%s", v1 ? v1->name : "v1"), p->acc_dtype);
  const tj_tir_stmt_t *inits[2] = {tj_lg_store(a, v0, ns, ridx, tj_lg_zero(a, p->acc_dtype)),
                                   tj_lg_store(a, v1, ns, ridx, tj_lg_zero(a, p->acc_dtype))};
  const tj_tir_stmt_t *stores[2] = {tj_lg_store(a, v0, ns, ridx, l0), tj_lg_store(a, v1, ns, ridx, l1)};
  if (!inits[0] || !inits[1] || !stores[0] || !stores[1]) {
    te->failed = true;
    return;
  }
  const tj_tir_expr_t *sum0 = tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, v0, ns, ridx), x0);
  const tj_tir_expr_t *sq = x1 && x2 ? tj_tir_binary(a, TJ_TIR_MUL, x1, x2) : NULL;
  const tj_tir_expr_t *sum1 = sq ? tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, v1, ns, ridx), sq) : NULL;
  const tj_tir_stmt_t *body = tj_tir_let_stmt(a, l0, sum0, tj_tir_let_stmt(a, l1, sum1, tj_tir_seq(a, 2, stores)));
  tj_lg_stage_end(te, &st, tj_tir_seq(a, 2, inits), body);
}

tj_status_t *tj_legalize_layer_norm(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 3) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  for (int i = 1; i < 3; i++) {
    const tj_sinfo_t *s = tj_lg_arg_sinfo(a, call->call.args[i]);
    if (!tj_lg_tensor_known(s) || !tj_dtype_eq(s->tensor.dtype, xs->tensor.dtype)) return NULL;
  }
  ln_plan_t p;
  if (!plan(call, xs, &p)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *gamma = tj_lg_placeholder(&te, call->call.args[1]);
  const tj_buffer_t *beta = tj_lg_placeholder(&te, call->call.args[2]);
  if (!x || !gamma || !beta || gamma->ndim != p.n_axes || beta->ndim != p.n_axes)
    return te.failed ? tj_lg_te_finish(&te, "layer_norm", NULL, out_expr) : NULL;
  const tj_buffer_t *v0 = NULL, *v1 = NULL;
  emit_red_temp(&te, x, &p, &v0, &v1);
  if (te.failed) return tj_lg_te_finish(&te, "layer_norm", NULL, out_expr);

  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, xs);
  const tj_buffer_t *out = tj_lg_output(&te, "T_layer_norm", p.dtype, x->ndim, x->shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_layer_norm", x->ndim, x->shape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "layer_norm", NULL, out_expr);
  const tj_tir_expr_t *nr[TJ_LG_MAX_ITERS], *ri[TJ_LG_MAX_ITERS];
  int n_nr = 0, n_ri = 0;
  for (int d = 0; d < p.ndim; d++) {
    if (p.reduced[d]) ri[n_ri++] = st.iv[d];
    else nr[n_nr++] = st.iv[d];
  }
  if (n_nr == 0) nr[n_nr++] = tj_tir_i64(a, 0);
  /* reduce_extent = make_const(dtype, 1) * shape[axis]... with TVM's folding */
  const tj_tir_expr_t *extent = tj_lg_const(a, p.dtype, 1);
  for (int i = 0; i < p.n_axes; i++) extent = tj_lg_mul(a, extent, x->shape[p.axes[i]]);
  const tj_tir_expr_t *mean = div_extent(a, tj_lg_load(a, v0, n_nr, nr), extent);
  const tj_tir_expr_t *var = tj_lg_sub(a, div_extent(a, tj_lg_load(a, v1, n_nr, nr), extent), tj_lg_mul(a, mean, mean));
  const tj_tir_expr_t *eps = tj_tir_float(a, p.acc_dtype, p.epsilon);
  const tj_tir_expr_t *norm =
      tj_lg_mul(a, tj_lg_sub(a, tj_lg_load(a, x, p.ndim, st.iv), mean), tj_lg_call1(a, "tir.rsqrt", tj_lg_add(a, var, eps)));
  norm = tj_lg_cast(a, p.dtype, norm);
  const tj_tir_expr_t *value =
      tj_lg_add(a, tj_lg_mul(a, norm, tj_lg_load(a, gamma, n_ri, ri)), tj_lg_load(a, beta, n_ri, ri));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, p.ndim, st.iv, value));
  return tj_lg_te_finish(&te, "layer_norm", out_sinfo, out_expr);
}

/* ---------------- softmax ----------------
 * R.nn.softmax → topi.nn.softmax (`softmax`): four blocks T_softmax_maxelem
 * (max-reduction, init = lowest value of the dtype), T_softmax_exp, T_softmax_expsum
 * and the output T_softmax_norm (annotated {"axis": axis}). */

static double lowest(tj_dtype_t d) { return -tj_dtype_float_max(d); }

/* Indices with the reduce var inserted at `axis` / the axis removed. */
static void insert_at(const tj_tir_expr_t *const *iv, int n, int axis, const tj_tir_expr_t *k,
                      const tj_tir_expr_t **out) {
  int j = 0;
  for (int i = 0; i <= n; i++) out[i] = i == axis ? k : iv[j++];
}

static int drop_at(const tj_tir_expr_t *const *iv, int n, int axis, const tj_tir_expr_t **out) {
  int j = 0;
  for (int i = 0; i < n; i++)
    if (i != axis) out[j++] = iv[i];
  return j;
}

/* A reduction stage over `rshape` (n - 1 dims) plus k over the softmax axis. */
static void begin_reduce(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int nr,
                         const tj_tir_expr_t *const *rshape, const tj_tir_expr_t *k_extent) {
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  for (int i = 0; i < nr; i++) {
    ext[i] = rshape[i];
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(te->arena, "i%d", i);
  }
  ext[nr] = k_extent;
  kinds[nr] = TJ_ITER_REDUCE;
  names[nr] = "k";
  tj_lg_stage_begin(te, st, name, nr + 1, ext, kinds, names);
}

/* The input of softmax and log_softmax: one float tensor of known rank and the axis
 * attr normalised. False: the call is not legalized (left as it is). */
static bool softmax_like_input(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out_sinfo,
                               int *out_axis) {
  if (call->call.n_args != 1) return false;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || !tj_dtype_is_floating(xs->tensor.dtype) || xs->tensor.ndim < 1 ||
      xs->tensor.ndim >= TJ_LG_MAX_ITERS)
    return false;
  *out_sinfo = xs;
  return tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", -1), xs->tensor.ndim, out_axis);
}

tj_status_t *tj_legalize_softmax(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs;
  int axis;
  if (!softmax_like_input(ctx, call, &xs, &axis)) return NULL;
  tj_arena_t *a = ctx->arena;
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *rshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS], *ridx[TJ_LG_MAX_ITERS];
  int nr = drop_at(x->shape, n, axis, rshape);
  const tj_buffer_t *maxelem = tj_lg_alloc(&te, "T_softmax_maxelem", dt, nr, rshape);
  const tj_buffer_t *ex = tj_lg_alloc(&te, "T_softmax_exp", dt, n, x->shape);
  const tj_buffer_t *expsum = tj_lg_alloc(&te, "T_softmax_expsum", dt, nr, rshape);
  const tj_buffer_t *out = tj_lg_output(&te, "T_softmax_norm", dt, n, x->shape);
  tj_lg_stage_t st;

  begin_reduce(&te, &st, "T_softmax_maxelem", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, maxelem, nr, st.iv, tj_tir_float(a, dt, lowest(dt))),
                  tj_lg_store(a, maxelem, nr, st.iv,
                              tj_tir_binary(a, TJ_TIR_MAX, tj_lg_load(a, maxelem, nr, st.iv), tj_lg_load(a, x, n, idx))));

  tj_lg_stage_spatial(&te, &st, "T_softmax_exp", n, x->shape, "i");
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  drop_at(st.iv, n, axis, ridx);
  const tj_tir_expr_t *diff = tj_lg_sub(a, tj_lg_load(a, x, n, st.iv), tj_lg_load(a, maxelem, nr, ridx));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, ex, n, st.iv, tj_lg_call1(a, "tir.exp", diff)));

  begin_reduce(&te, &st, "T_softmax_expsum", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, expsum, nr, st.iv, tj_lg_zero(a, dt)),
                  tj_lg_store(a, expsum, nr, st.iv,
                              tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, expsum, nr, st.iv), tj_lg_load(a, ex, n, idx))));

  tj_lg_stage_spatial(&te, &st, "T_softmax_norm", n, x->shape, "i");
  if (te.failed) return tj_lg_te_finish(&te, "softmax", NULL, out_expr);
  st.annotations = tj_attrs_set(a, NULL, "axis", tj_attr_int(axis));
  drop_at(st.iv, n, axis, ridx);
  const tj_tir_expr_t *norm = tj_lg_div(a, tj_lg_load(a, ex, n, st.iv), tj_lg_load(a, expsum, nr, ridx));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, norm));
  return tj_lg_te_finish(&te, "softmax", tj_lg_call_sinfo(call, xs), out_expr);
}

/* ---------------- gelu, gelu_tanh, silu, leakyrelu ----------------
 * Chains of elementwise TE stages, one block each, as TVM's te_gelu / te_gelu_tanh /
 * silu (multiply(x, sigmoid(x))) and topi.nn.leaky_relu write them (the block
 * sequence of tvm-ops.md §13). */

typedef enum ew_kind {
  EW_MUL_C,  /* x * c */
  EW_C_MUL,  /* c * x */
  EW_C_ADD,  /* c + x */
  EW_MUL,    /* x * y */
  EW_CALL,   /* intrin(x) */
  EW_CAST,   /* cast(dt, x) */
} ew_kind_t;

/* One elementwise stage `block` writing `dst` (NULL: a new root buffer named after
 * the block) of dtype dt over x's shape. */
static const tj_buffer_t *ew_stage(tj_lg_te_t *te, const char *block, const tj_buffer_t *dst, ew_kind_t k,
                                   const tj_buffer_t *x, const tj_buffer_t *y, double c, const char *intrin,
                                   tj_dtype_t dt) {
  tj_arena_t *a = te->arena;
  if (te->failed || !x) {
    te->failed = true;
    return NULL;
  }
  int n = x->ndim;
  if (!dst) dst = tj_lg_alloc(te, block, dt, n, x->shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, block, n, x->shape, "ax");
  if (te->failed || !dst) return NULL;
  const tj_tir_expr_t *xv = tj_lg_load(a, x, n, st.iv), *v = NULL;
  const tj_tir_expr_t *cv = tj_tir_float(a, x->dtype, c);
  switch (k) {
  case EW_MUL_C: v = tj_lg_bin(a, TJ_TIR_MUL, xv, cv); break;
  case EW_C_MUL: v = tj_lg_bin(a, TJ_TIR_MUL, cv, xv); break;
  case EW_C_ADD: v = tj_lg_bin(a, TJ_TIR_ADD, cv, xv); break;
  case EW_MUL: v = y ? tj_lg_bin(a, TJ_TIR_MUL, xv, tj_lg_load(a, y, n, st.iv)) : NULL; break;
  case EW_CALL: v = tj_lg_call1(a, intrin, xv); break;
  case EW_CAST: v = xv ? tj_tir_cast(a, dt, xv) : NULL; break;
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, dst, n, st.iv, v));
  return dst;
}

typedef enum act_kind { ACT_GELU, ACT_GELU_TANH, ACT_SILU, ACT_LEAKY } act_kind_t;

static tj_status_t *legalize_activation(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, act_kind_t kind,
                                        const tj_rx_expr_t **out_expr) {
  static const char *const names[] = {"gelu", "gelu_tanh", "silu", "leaky_relu"};
  const char *name = names[kind];
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || !tj_dtype_is_floating(xs->tensor.dtype) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int n = x->ndim;
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, xs);
  const tj_buffer_t *out;
  switch (kind) {
  case ACT_GELU: {
    out = tj_lg_output(&te, "T_multiply", dt, n, x->shape);
    const tj_buffer_t *t = ew_stage(&te, "T_multiply", NULL, EW_MUL_C, x, NULL, 0.70710678118654757, NULL, dt);
    const tj_buffer_t *e;
    if (dt.bits == 16) { /* erf of a float16 runs in float32 */
      const tj_buffer_t *c = ew_stage(&te, "compute", NULL, EW_CAST, t, NULL, 0, NULL, TJ_F32);
      const tj_buffer_t *e32 = ew_stage(&te, "compute_1", NULL, EW_CALL, c, NULL, 0, "tir.erf", TJ_F32);
      e = ew_stage(&te, "compute_2", NULL, EW_CAST, e32, NULL, 0, NULL, dt);
    } else {
      e = ew_stage(&te, "compute", NULL, EW_CALL, t, NULL, 0, "tir.erf", dt);
    }
    const tj_buffer_t *h = ew_stage(&te, "T_multiply_1", NULL, EW_MUL_C, e, NULL, 0.5, NULL, dt);
    const tj_buffer_t *s = ew_stage(&te, "T_add", NULL, EW_C_ADD, h, NULL, 0.5, NULL, dt);
    ew_stage(&te, "T_multiply_2", out, EW_MUL, x, s, 0, NULL, dt);
    break;
  }
  case ACT_GELU_TANH: {
    out = tj_lg_output(&te, "T_multiply", dt, n, x->shape);
    const tj_buffer_t *m0 = ew_stage(&te, "T_multiply", NULL, EW_C_MUL, x, NULL, 0.5, NULL, dt);
    const tj_buffer_t *m1 = ew_stage(&te, "T_multiply_1", NULL, EW_C_MUL, x, NULL, 0.79788456080286541, NULL, dt);
    const tj_buffer_t *m2 = ew_stage(&te, "T_multiply_2", NULL, EW_C_MUL, x, NULL, 0.044714999999999998, NULL, dt);
    const tj_buffer_t *m3 = ew_stage(&te, "T_multiply_3", NULL, EW_MUL, m2, x, 0, NULL, dt);
    const tj_buffer_t *a0 = ew_stage(&te, "T_add", NULL, EW_C_ADD, m3, NULL, 1.0, NULL, dt);
    const tj_buffer_t *m4 = ew_stage(&te, "T_multiply_4", NULL, EW_MUL, m1, a0, 0, NULL, dt);
    const tj_buffer_t *th = ew_stage(&te, "compute", NULL, EW_CALL, m4, NULL, 0, "tir.tanh", dt);
    const tj_buffer_t *a1 = ew_stage(&te, "T_add_1", NULL, EW_C_ADD, th, NULL, 1.0, NULL, dt);
    ew_stage(&te, "T_multiply_5", out, EW_MUL, m0, a1, 0, NULL, dt);
    break;
  }
  case ACT_SILU: {
    out = tj_lg_output(&te, "T_multiply", dt, n, x->shape);
    const tj_buffer_t *sg = ew_stage(&te, "compute", NULL, EW_CALL, x, NULL, 0, "tir.sigmoid", dt);
    ew_stage(&te, "T_multiply", out, EW_MUL, x, sg, 0, NULL, dt);
    break;
  }
  case ACT_LEAKY: {
    const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "alpha");
    double alpha = av && av->kind == TJ_ATTR_FLOAT ? av->f : 0.01;
    out = tj_lg_output(&te, "compute", dt, n, x->shape);
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, "compute", n, x->shape, "i");
    if (te.failed) break;
    const tj_tir_expr_t *xv = tj_lg_load(a, x, n, st.iv);
    const tj_tir_expr_t *cond = xv ? tj_tir_binary(a, TJ_TIR_LT, tj_lg_zero(a, dt), xv) : NULL;
    const tj_tir_expr_t *neg = xv ? tj_lg_bin(a, TJ_TIR_MUL, xv, tj_tir_float(a, dt, alpha)) : NULL;
    const tj_tir_expr_t *v = cond && neg ? tj_tir_select(a, cond, xv, neg) : NULL;
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, v));
    break;
  }
  }
  return tj_lg_te_finish(&te, name, te.failed ? NULL : out_sinfo, out_expr);
}

tj_status_t *tj_legalize_gelu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_activation(ctx, call, ACT_GELU, out_expr);
}
tj_status_t *tj_legalize_gelu_tanh(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_activation(ctx, call, ACT_GELU_TANH, out_expr);
}
tj_status_t *tj_legalize_silu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_activation(ctx, call, ACT_SILU, out_expr);
}
tj_status_t *tj_legalize_leakyrelu(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_activation(ctx, call, ACT_LEAKY, out_expr);
}

/* ---------------- log_softmax ----------------
 * topi.nn.log_softmax (`log_softmax`): T_softmax_maxelem (max-reduction), `compute`
 * (Σ exp(x − max), a reduction) and the output `compute_1` = x − max − log(sum),
 * annotated {"axis": axis}. All in the data dtype. */
tj_status_t *tj_legalize_log_softmax(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs;
  int axis;
  if (!softmax_like_input(ctx, call, &xs, &axis)) return NULL;
  tj_arena_t *a = ctx->arena;
  tj_dtype_t dt = xs->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "log_softmax", NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *rshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS], *ridx[TJ_LG_MAX_ITERS];
  int nr = drop_at(x->shape, n, axis, rshape);
  const tj_buffer_t *out = tj_lg_output(&te, "compute", dt, n, x->shape);
  const tj_buffer_t *maxelem = tj_lg_alloc(&te, "T_softmax_maxelem", dt, nr, rshape);
  const tj_buffer_t *sum = tj_lg_alloc(&te, "compute_1", dt, nr, rshape);
  tj_lg_stage_t st;

  begin_reduce(&te, &st, "T_softmax_maxelem", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "log_softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, maxelem, nr, st.iv, tj_tir_float(a, dt, lowest(dt))),
                  tj_lg_store(a, maxelem, nr, st.iv,
                              tj_tir_binary(a, TJ_TIR_MAX, tj_lg_load(a, maxelem, nr, st.iv), tj_lg_load(a, x, n, idx))));

  begin_reduce(&te, &st, "compute", nr, rshape, x->shape[axis]);
  if (te.failed) return tj_lg_te_finish(&te, "log_softmax", NULL, out_expr);
  insert_at(st.iv, nr, axis, st.iv[nr], idx);
  const tj_tir_expr_t *e =
      tj_lg_call1(a, "tir.exp", tj_lg_sub(a, tj_lg_load(a, x, n, idx), tj_lg_load(a, maxelem, nr, st.iv)));
  tj_lg_stage_end(&te, &st, tj_lg_store(a, sum, nr, st.iv, tj_lg_zero(a, dt)),
                  tj_lg_store(a, sum, nr, st.iv, e ? tj_tir_binary(a, TJ_TIR_ADD, tj_lg_load(a, sum, nr, st.iv), e) : NULL));

  tj_lg_stage_spatial(&te, &st, "compute_1", n, x->shape, "i");
  if (te.failed) return tj_lg_te_finish(&te, "log_softmax", NULL, out_expr);
  st.annotations = tj_attrs_set(a, NULL, "axis", tj_attr_int(axis));
  drop_at(st.iv, n, axis, ridx);
  const tj_tir_expr_t *v = tj_lg_sub(a, tj_lg_sub(a, tj_lg_load(a, x, n, st.iv), tj_lg_load(a, maxelem, nr, ridx)),
                                     tj_lg_call1(a, "tir.log", tj_lg_load(a, sum, nr, ridx)));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, v));
  return tj_lg_te_finish(&te, "log_softmax", tj_lg_call_sinfo(call, xs), out_expr);
}

/* ---------------- batch_norm ----------------
 * R.nn.batch_norm → topi.nn.batch_norm(..., training=True, momentum) (`batch_norm`,
 * three outputs), as TVM's LegalizeOps hard-codes it (tvm-ops.md §12): output 0
 * normalises with the *batch* statistics (two-pass mean and biased variance over
 * every axis but `axis`), outputs 1 and 2 are (1 − momentum)·moving + momentum·batch.
 * The inference form (normalise with the moving statistics) is TVM's separate
 * DecomposeOpsForInference pass, not LegalizeOps. The 26 stages and their names are
 * TOPI's: `<x>_red`, T_divide, T_reshape, T_subtract(_1,_2), T_multiply,
 * T_multiply_red, T_divide_1, T_reshape_1, T_add, compute (sqrt), T_divide_2,
 * T_reshape_2, T_multiply_1, T_reshape_3, T_add_1, T_multiply_2, T_multiply_3,
 * T_add_2, T_multiply_4, T_subtract_3, T_subtract_4, T_multiply_5,
 * T_multiply_red_1, T_divide_3, T_multiply_6, T_add_3. */

typedef struct bn_ctx {
  tj_lg_te_t *te;
  tj_arena_t *a;
  const tj_buffer_t *x;
  int n, axis;
  const tj_tir_expr_t *pshape[TJ_LG_MAX_ITERS]; /* (1, .., C, .., 1) */
  const tj_tir_expr_t *cshape[1];               /* (C,) */
  tj_dtype_t dt;
} bn_ctx_t;

/* Index of a (1, .., C, .., 1) buffer from the data's iter vars (0 on unit dims). */
static void bn_bidx(const bn_ctx_t *b, const tj_tir_expr_t *const *iv, const tj_tir_expr_t **idx) {
  for (int d = 0; d < b->n; d++) {
    int64_t e;
    bool unit_in_x = tj_tir_is_const_int(b->x->shape[d], &e) && e == 1;
    idx[d] = d == b->axis || unit_in_x ? iv[d] : tj_tir_i64(b->a, 0);
  }
}

/* `<src>_red`-style reduction over every axis but `axis` into a (C,) buffer. */
static const tj_buffer_t *bn_reduce(bn_ctx_t *b, const char *name, const tj_buffer_t *src) {
  tj_arena_t *a = b->a;
  const tj_buffer_t *dst = tj_lg_alloc(b->te, name, b->dt, 1, b->cshape);
  const tj_tir_expr_t *ext[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  ext[0] = b->cshape[0];
  kinds[0] = TJ_ITER_SPATIAL;
  names[0] = "ax0";
  int m = 1;
  for (int d = 0; d < b->n; d++) {
    if (d == b->axis) continue;
    ext[m] = src->shape[d];
    kinds[m] = TJ_ITER_REDUCE;
    names[m++] = tj_arena_printf(a, "k%d", d);
  }
  tj_lg_stage_t st;
  tj_lg_stage_begin(b->te, &st, name, m, ext, kinds, names);
  if (b->te->failed || !dst) return NULL;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  for (int d = 0, r = 1; d < b->n; d++) idx[d] = d == b->axis ? st.iv[0] : st.iv[r++];
  const tj_tir_expr_t *cur = tj_lg_load(a, dst, 1, st.iv), *v = tj_lg_load(a, src, b->n, idx);
  tj_lg_stage_end(b->te, &st, tj_lg_store(a, dst, 1, st.iv, tj_lg_zero(a, b->dt)),
                  tj_lg_store(a, dst, 1, st.iv, cur && v ? tj_tir_binary(a, TJ_TIR_ADD, cur, v) : NULL));
  return dst;
}

typedef enum bn_op { BN_MUL_C, BN_C_MUL, BN_ADD_C, BN_ADD, BN_SUB_B, BN_MUL, BN_MUL_B, BN_DIV_B, BN_ADD_B, BN_SQRT, BN_RESHAPE } bn_op_t;

/* One stage: dst (NULL: new root buffer named `name`) over `shape` (rank nd).
 * _B: y is a (1,..,C,..,1) buffer broadcast over the data. */
static const tj_buffer_t *bn_stage(bn_ctx_t *b, const char *name, const tj_buffer_t *dst, int nd,
                                   const tj_tir_expr_t *const *shape, bn_op_t op, const tj_buffer_t *x,
                                   const tj_buffer_t *y, const tj_tir_expr_t *c, const char *prefix) {
  tj_arena_t *a = b->a;
  if (!dst) dst = tj_lg_alloc(b->te, name, b->dt, nd, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(b->te, &st, name, nd, shape, prefix);
  if (b->te->failed || !dst || !x) {
    b->te->failed = true;
    return NULL;
  }
  const tj_tir_expr_t *bi[TJ_LG_MAX_ITERS];
  const tj_tir_expr_t *xv = op == BN_RESHAPE ? NULL : tj_lg_load(a, x, nd, st.iv), *v = NULL;
  if (op == BN_SUB_B || op == BN_MUL_B || op == BN_DIV_B || op == BN_ADD_B) bn_bidx(b, st.iv, bi);
  switch (op) {
  case BN_MUL_C: v = tj_lg_bin(a, TJ_TIR_MUL, xv, c); break;
  case BN_C_MUL: v = tj_lg_bin(a, TJ_TIR_MUL, c, xv); break;
  case BN_ADD_C: v = tj_lg_bin(a, TJ_TIR_ADD, xv, c); break;
  case BN_ADD: v = tj_lg_bin(a, TJ_TIR_ADD, xv, tj_lg_load(a, y, nd, st.iv)); break;
  case BN_MUL: v = tj_lg_bin(a, TJ_TIR_MUL, xv, tj_lg_load(a, y, nd, st.iv)); break;
  case BN_SUB_B: v = tj_lg_bin(a, TJ_TIR_SUB, xv, tj_lg_load(a, y, nd, bi)); break;
  case BN_MUL_B: v = tj_lg_bin(a, TJ_TIR_MUL, xv, tj_lg_load(a, y, nd, bi)); break;
  case BN_DIV_B: v = tj_lg_bin(a, TJ_TIR_DIV, xv, tj_lg_load(a, y, nd, bi)); break;
  case BN_ADD_B: v = tj_lg_bin(a, TJ_TIR_ADD, xv, tj_lg_load(a, y, nd, bi)); break;
  case BN_SQRT: v = tj_lg_call1(a, "tir.sqrt", xv); break;
  case BN_RESHAPE: {
    /* topi.reshape of (C,) to (1, .., C, .., 1): ravel the output index over that
     * shape, unravel it over (C,) (one floormod); the block's simplification turns
     * it into TVM's canonical form, `(v1 + v2 + v3) % 3` or `(v0 * h + v1 + ..) % h` */
    const tj_tir_expr_t *flat = st.iv[0];
    for (int d = 1; d < nd; d++) flat = tj_lg_add(a, tj_lg_mul(a, flat, shape[d]), st.iv[d]);
    const tj_tir_expr_t *i0 = tj_lg_floormod(a, flat, x->shape[0]);
    v = tj_lg_load(a, x, 1, &i0);
    break;
  }
  }
  tj_lg_stage_end(b->te, &st, NULL, tj_lg_store(a, dst, nd, st.iv, v));
  return dst;
}

/* topi's BroadcastShape for one dim: equal extents stay, an extent 1 yields to the
 * other, two symbolic extents that differ give max(x, y), a symbolic one yields to a
 * literal. Works on either side's vars (Relax shape or PrimFunc buffer). */
static const tj_tir_expr_t *bn_broadcast_dim(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  int64_t vx, vy;
  bool sx = tj_tir_is_const_int(x, &vx), sy = tj_tir_is_const_int(y, &vy);
  if (tj_struct_equal_tir_expr_ex(x, y, TJ_SEQ_INT_VALUES)) return x;
  if (sx && vx == 1) return y;
  if (sy && vy == 1) return x;
  if (!sx && !sy) return tj_tir_binary(a, TJ_TIR_MAX, x, y);
  return sx ? x : y;
}

/* src[i] or src[0] when src's single dim is a literal 1 broadcast against `out`. */
static const tj_tir_expr_t *bn_broadcast_load(tj_arena_t *a, const tj_buffer_t *src, const tj_tir_expr_t *out,
                                              const tj_tir_expr_t *iv) {
  int64_t v;
  bool one = tj_tir_is_const_int(src->shape[0], &v) && v == 1;
  bool keep = !one || tj_struct_equal_tir_expr_ex(src->shape[0], out, TJ_SEQ_INT_VALUES);
  const tj_tir_expr_t *idx = keep ? iv : tj_tir_i64(a, 0);
  return tj_lg_load(a, src, 1, &idx);
}

/* The moving-statistic update's T_add: x + y broadcast into `dst` (1-d). */
static void bn_broadcast_add(bn_ctx_t *b, const char *name, const tj_buffer_t *dst, const tj_buffer_t *x,
                             const tj_buffer_t *y) {
  tj_lg_stage_t st;
  tj_lg_stage_spatial(b->te, &st, name, 1, dst ? dst->shape : NULL, "ax");
  if (b->te->failed || !x || !y || !dst) {
    b->te->failed = true;
    return;
  }
  const tj_tir_expr_t *v = tj_lg_bin(b->a, TJ_TIR_ADD, bn_broadcast_load(b->a, x, dst->shape[0], st.iv[0]),
                                     bn_broadcast_load(b->a, y, dst->shape[0], st.iv[0]));
  tj_lg_stage_end(b->te, &st, NULL, tj_lg_store(b->a, dst, 1, st.iv, v));
}

tj_status_t *tj_legalize_batch_norm(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 5) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || !tj_dtype_is_floating(xs->tensor.dtype) || xs->tensor.ndim < 1 ||
      xs->tensor.ndim >= TJ_LG_MAX_ITERS)
    return NULL;
  for (int i = 1; i < 5; i++) {
    const tj_sinfo_t *s = tj_lg_arg_sinfo(a, call->call.args[i]);
    if (!tj_lg_tensor_known(s) || s->tensor.ndim != 1 || !tj_dtype_eq(s->tensor.dtype, xs->tensor.dtype)) return NULL;
  }
  bn_ctx_t b = {.a = a, .n = xs->tensor.ndim, .dt = xs->tensor.dtype};
  if (!tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", 1), b.n, &b.axis)) return NULL;
  const tj_attr_value_t *ev = tj_attrs_get(call->call.attrs, "epsilon");
  const tj_attr_value_t *mv = tj_attrs_get(call->call.attrs, "momentum");
  double eps = ev && ev->kind == TJ_ATTR_FLOAT ? ev->f : 1e-5;
  double momentum = mv && mv->kind == TJ_ATTR_FLOAT ? mv->f : 0.1;
  bool center = tj_attrs_get_int(call->call.attrs, "center", 1) != 0;
  bool scale = tj_attrs_get_int(call->call.attrs, "scale", 1) != 0;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  b.te = &te;
  const tj_buffer_t *in[5];
  for (int i = 0; i < 5; i++) in[i] = tj_lg_placeholder(&te, call->call.args[i]);
  if (te.failed) return tj_lg_te_finish(&te, "batch_norm", NULL, out_expr);
  const tj_buffer_t *x = b.x = in[0];
  int n = b.n;
  b.cshape[0] = x->shape[b.axis];
  for (int d = 0; d < n; d++) b.pshape[d] = d == b.axis ? x->shape[d] : tj_tir_i64(a, 1);
  const tj_buffer_t *out0 = tj_lg_output(&te, "T_add", b.dt, n, x->shape);
  /* The moving statistics broadcast against the batch ones (TVM's out_sinfo is the
   * TE output shape: T.max(c, h) when a symbolic moving dim differs from the axis). */
  const tj_tir_expr_t *rx_axis = xs->tensor.shape[b.axis];
  const tj_tir_expr_t *rx_mdim[2], *mdim[2];
  for (int i = 0; i < 2; i++) {
    rx_mdim[i] = bn_broadcast_dim(a, tj_lg_arg_sinfo(a, call->call.args[3 + i])->tensor.shape[0], rx_axis);
    mdim[i] = bn_broadcast_dim(a, in[3 + i]->shape[0], b.cshape[0]);
  }
  const tj_buffer_t *out1 = tj_lg_output(&te, "T_add_1", b.dt, 1, &mdim[0]);
  const tj_buffer_t *out2 = tj_lg_output(&te, "T_add_2", b.dt, 1, &mdim[1]);
  /* 1/N with N the product of the reduced extents (a reciprocal literal when static) */
  /* TOPI multiplies the int64 extents first and the division casts the product. */
  const tj_tir_expr_t *count = tj_tir_i64(a, 1);
  for (int d = 0; d < n; d++)
    if (d != b.axis) count = tj_lg_mul(a, count, x->shape[d]);
  count = tj_lg_cast(a, b.dt, count);
  const tj_tir_expr_t *one_m = tj_tir_float(a, b.dt, 1.0 - momentum), *mom = tj_tir_float(a, b.dt, momentum);
  const tj_tir_expr_t *const *xsh = x->shape;

  /* mean */
  const tj_buffer_t *red = bn_reduce(&b, tj_arena_printf(a, "%s_red", x->name), x);
  const tj_buffer_t *mean = tj_lg_alloc(&te, "T_divide", b.dt, 1, b.cshape);
  {
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, "T_divide", 1, b.cshape, "ax");
    if (te.failed || !red) return tj_lg_te_finish(&te, "batch_norm", NULL, out_expr);
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, mean, 1, st.iv, div_extent(a, tj_lg_load(a, red, 1, st.iv), count)));
  }
  const tj_buffer_t *mean_r = bn_stage(&b, "T_reshape", NULL, n, b.pshape, BN_RESHAPE, mean, NULL, NULL, "ax");
  const tj_buffer_t *centered = bn_stage(&b, "T_subtract", NULL, n, xsh, BN_SUB_B, x, mean_r, NULL, "ax");
  /* variance */
  const tj_buffer_t *s1 = bn_stage(&b, "T_subtract_1", NULL, n, xsh, BN_SUB_B, x, mean_r, NULL, "ax");
  const tj_buffer_t *s2 = bn_stage(&b, "T_subtract_2", NULL, n, xsh, BN_SUB_B, x, mean_r, NULL, "ax");
  const tj_buffer_t *sq = bn_stage(&b, "T_multiply", NULL, n, xsh, BN_MUL, s1, s2, NULL, "ax");
  const tj_buffer_t *sqr = sq ? bn_reduce(&b, "T_multiply_red", sq) : NULL;
  const tj_buffer_t *var = tj_lg_alloc(&te, "T_divide_1", b.dt, 1, b.cshape);
  {
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, "T_divide_1", 1, b.cshape, "ax");
    if (te.failed || !sqr) return tj_lg_te_finish(&te, "batch_norm", NULL, out_expr);
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, var, 1, st.iv, div_extent(a, tj_lg_load(a, sqr, 1, st.iv), count)));
  }
  const tj_buffer_t *var_r = bn_stage(&b, "T_reshape_1", NULL, n, b.pshape, BN_RESHAPE, var, NULL, NULL, "ax");
  const tj_buffer_t *var_eps = bn_stage(&b, "T_add", NULL, n, b.pshape, BN_ADD_C, var_r, NULL, tj_tir_float(a, b.dt, eps), "ax");
  const tj_buffer_t *sd = bn_stage(&b, "compute", NULL, n, b.pshape, BN_SQRT, var_eps, NULL, NULL, "i");
  const tj_buffer_t *last = !scale && !center ? out0 : NULL;
  const tj_buffer_t *normed = bn_stage(&b, "T_divide_2", last, n, xsh, BN_DIV_B, centered, sd, NULL, "ax");
  if (scale) {
    const tj_buffer_t *g = bn_stage(&b, "T_reshape_2", NULL, n, b.pshape, BN_RESHAPE, in[1], NULL, NULL, "ax");
    normed = bn_stage(&b, "T_multiply_1", center ? NULL : out0, n, xsh, BN_MUL_B, normed, g, NULL, "ax");
  }
  if (center) {
    const tj_buffer_t *be = bn_stage(&b, "T_reshape_3", NULL, n, b.pshape, BN_RESHAPE, in[2], NULL, NULL, "ax");
    bn_stage(&b, "T_add_1", out0, n, xsh, BN_ADD_B, normed, be, NULL, "ax");
  }
  /* moving mean */
  const tj_buffer_t *m2 = bn_stage(&b, "T_multiply_2", NULL, 1, in[3]->shape, BN_C_MUL, in[3], NULL, one_m, "ax");
  const tj_buffer_t *m3 = bn_stage(&b, "T_multiply_3", NULL, 1, b.cshape, BN_C_MUL, mean, NULL, mom, "ax");
  bn_broadcast_add(&b, "T_add_2", out1, m2, m3);
  /* moving var (the biased batch variance computed again); TOPI builds its first
   * product (T_multiply_4) before the variance stages */
  const tj_buffer_t *m4 = bn_stage(&b, "T_multiply_4", NULL, 1, in[4]->shape, BN_C_MUL, in[4], NULL, one_m, "ax");
  const tj_buffer_t *s3 = bn_stage(&b, "T_subtract_3", NULL, n, xsh, BN_SUB_B, x, mean_r, NULL, "ax");
  const tj_buffer_t *s4 = bn_stage(&b, "T_subtract_4", NULL, n, xsh, BN_SUB_B, x, mean_r, NULL, "ax");
  const tj_buffer_t *m5 = bn_stage(&b, "T_multiply_5", NULL, n, xsh, BN_MUL, s3, s4, NULL, "ax");
  const tj_buffer_t *r1 = m5 ? bn_reduce(&b, "T_multiply_red_1", m5) : NULL;
  const tj_buffer_t *var2 = tj_lg_alloc(&te, "T_divide_3", b.dt, 1, b.cshape);
  {
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, "T_divide_3", 1, b.cshape, "ax");
    if (te.failed || !r1) return tj_lg_te_finish(&te, "batch_norm", NULL, out_expr);
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, var2, 1, st.iv, div_extent(a, tj_lg_load(a, r1, 1, st.iv), count)));
  }
  const tj_buffer_t *m6 = bn_stage(&b, "T_multiply_6", NULL, 1, b.cshape, BN_C_MUL, var2, NULL, mom, "ax");
  bn_broadcast_add(&b, "T_add_3", out2, m4, m6);
  const tj_sinfo_t *fields[3] = {tj_sinfo_tensor(a, b.dt, n, xs->tensor.shape),
                                 tj_sinfo_tensor(a, b.dt, 1, &rx_mdim[0]), tj_sinfo_tensor(a, b.dt, 1, &rx_mdim[1])};
  const tj_sinfo_t *out_sinfo = tj_sinfo_tuple(a, 3, fields);
  return tj_lg_te_finish(&te, "batch_norm", te.failed ? NULL : out_sinfo, out_expr);
}
