/* R.permute_dims → topi.transpose (`transpose`, block T_transpose) and
 * R.reshape → topi.reshape (`reshape`, block T_reshape).
 *
 * reshape reads x at unravel(ravel(out index)), with the index expressions in
 * the canonical form TVM's simplifier leaves them (it does not use iterator
 * bounds here): see unravel_dim. Symbolic shapes keep `flat // c // b % a`. */
#include "transforms/legalize/legalize.h"

tj_status_t *tj_legalize_permute_dims(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  int n = xs->tensor.ndim;
  int64_t raw[TJ_LG_MAX_ITERS];
  int axes[TJ_LG_MAX_ITERS];
  int given = tj_lg_attr_ints(call->call.attrs, "axes", raw, TJ_LG_MAX_ITERS);
  bool seen[TJ_LG_MAX_ITERS] = {false};
  for (int i = 0; i < n; i++) {
    if (given < 0) {
      axes[i] = n - 1 - i; /* axes=None reverses */
    } else if (given != n || !tj_lg_axis(raw[i], n, &axes[i])) {
      return NULL;
    }
    if (seen[axes[i]]) return NULL;
    seen[axes[i]] = true;
  }
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "transpose", NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = xs->tensor.shape[axes[i]];
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, xs->tensor.dtype, n, oshape));
  for (int i = 0; i < n; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_transpose", xs->tensor.dtype, n, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_transpose", n, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "transpose", NULL, out_expr);
  for (int i = 0; i < n; i++) idx[axes[i]] = st.iv[i];
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, tj_lg_load(a, x, n, idx)));
  return tj_lg_te_finish(&te, "transpose", out_sinfo, out_expr);
}

/* ax * e with e's product chain flattened: ax * (b * 2) → ax * b * 2 (canonical form). */
static const tj_tir_expr_t *mul_flat(tj_arena_t *a, const tj_tir_expr_t *ax, const tj_tir_expr_t *e) {
  if (e && e->kind == TJ_TIR_MUL) return mul_flat(a, mul_flat(a, ax, e->binary.a), e->binary.b);
  return tj_lg_mul(a, ax, e);
}

static bool is_const(const tj_tir_expr_t *e, int64_t v) {
  int64_t x;
  return tj_tir_is_const_int(e, &x) && x == v;
}

/* A linear index Σ coef_i * var_i with constant coefficients (static shapes). */
typedef struct lin {
  int n;
  const tj_tir_expr_t *var[TJ_LG_MAX_ITERS];
  int64_t coef[TJ_LG_MAX_ITERS];
} lin_t;

/* The sum in its original term order, leaving out terms whose coefficient is a
 * multiple of `drop_mod` (0: keep all); NULL when nothing is left. */
static const tj_tir_expr_t *lin_expr(tj_arena_t *a, const lin_t *l, int64_t drop_mod) {
  const tj_tir_expr_t *sum = NULL;
  for (int i = 0; i < l->n; i++) {
    if (drop_mod && l->coef[i] % drop_mod == 0) continue;
    const tj_tir_expr_t *t = l->coef[i] == 1 ? l->var[i] : tj_tir_binary(a, TJ_TIR_MUL, l->var[i], tj_tir_i64(a, l->coef[i]));
    sum = sum ? tj_tir_binary(a, TJ_TIR_ADD, sum, t) : t;
  }
  return sum;
}

/* Input index `flat // P % s` in the canonical form TVM's simplifier gives it:
 * terms divisible by P leave the division, terms divisible by s vanish under the
 * modulo, and `(r // P) % s` becomes `r % (P * s) // P`. */
static const tj_tir_expr_t *unravel_dim(tj_arena_t *a, const lin_t *flat, int64_t P, int64_t s) {
  if (s == 1) return tj_tir_i64(a, 0);
  lin_t rest = {0}, quot = {0};
  for (int i = 0; i < flat->n; i++) {
    lin_t *dst = flat->coef[i] % P == 0 ? &quot : &rest;
    dst->var[dst->n] = flat->var[i];
    dst->coef[dst->n++] = flat->coef[i] % P == 0 ? flat->coef[i] / P : flat->coef[i];
  }
  const tj_tir_expr_t *q = lin_expr(a, &quot, s);
  if (rest.n == 0) return q ? tj_tir_binary(a, TJ_TIR_FLOOR_MOD, q, tj_tir_i64(a, s)) : tj_tir_i64(a, 0);
  const tj_tir_expr_t *r = lin_expr(a, &rest, 0);
  if (!q)
    return tj_tir_binary(a, TJ_TIR_FLOOR_DIV, tj_tir_binary(a, TJ_TIR_FLOOR_MOD, r, tj_tir_i64(a, P * s)), tj_tir_i64(a, P));
  const tj_tir_expr_t *sum = tj_tir_binary(a, TJ_TIR_ADD, tj_tir_binary(a, TJ_TIR_FLOOR_DIV, r, tj_tir_i64(a, P)), q);
  return tj_tir_binary(a, TJ_TIR_FLOOR_MOD, sum, tj_tir_i64(a, s));
}

/* Static shapes: flat = Σ ax_i * (product of the later output dims). */
static bool static_unravel(tj_arena_t *a, const tj_tir_expr_t *const *iv, int no, const tj_tir_expr_t *const *oshape,
                           const tj_buffer_t *x, const tj_tir_expr_t **idx) {
  int64_t od[TJ_LG_MAX_ITERS], id[TJ_LG_MAX_ITERS];
  for (int i = 0; i < no; i++)
    if (!tj_tir_is_const_int(oshape[i], &od[i])) return false;
  for (int i = 0; i < x->ndim; i++)
    if (!tj_tir_is_const_int(x->shape[i], &id[i])) return false;
  lin_t flat = {0};
  for (int i = 0; i < no; i++) {
    int64_t c = 1;
    for (int j = i + 1; j < no; j++) c *= od[j];
    flat.var[flat.n] = iv[i];
    flat.coef[flat.n++] = c;
  }
  int64_t P = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    idx[d] = unravel_dim(a, &flat, P, id[d]);
    P *= id[d];
  }
  return true;
}

/* Symbolic shapes: `flat // P % s` with flat = Σ ax_i * stride_i. */
static void symbolic_unravel(tj_arena_t *a, const tj_tir_expr_t *const *iv, int no, const tj_tir_expr_t *const *oshape,
                             const tj_buffer_t *x, const tj_tir_expr_t **idx) {
  const tj_tir_expr_t *flat = tj_tir_i64(a, 0);
  for (int i = 0; i < no; i++) {
    const tj_tir_expr_t *term = iv[i];
    for (int j = i + 1; j < no; j++) term = mul_flat(a, term, oshape[j]);
    flat = tj_lg_add(a, flat, term);
  }
  /* topi's UnravelIndex divides step by step (flat // c // b % a); the simplifier
   * leaves divisions by symbolic extents nested */
  const tj_tir_expr_t *cur = flat;
  for (int d = x->ndim - 1; d >= 0; d--) {
    const tj_tir_expr_t *s = x->shape[d];
    idx[d] = is_const(s, 1) ? tj_tir_i64(a, 0) : tj_lg_floormod(a, cur, s);
    cur = tj_lg_floordiv(a, cur, s);
  }
}

tj_status_t *tj_legalize_reshape(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args < 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  const tj_sinfo_t *fallback = NULL;
  if (call->call.n_args > 1 && call->call.args[1]->kind == TJ_RX_SHAPE_EXPR)
    fallback = tj_sinfo_tensor(a, xs->tensor.dtype, call->call.args[1]->shape_expr.n, call->call.args[1]->shape_expr.values);
  /* flatten (one arg) reshapes to its call's struct info */
  const tj_sinfo_t *out_sinfo = fallback ? tj_lg_call_sinfo(call, fallback) : call->sinfo;
  if (!tj_lg_tensor_known(out_sinfo) || out_sinfo->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  for (int i = 0; i < out_sinfo->tensor.ndim; i++)
    if (is_const(out_sinfo->tensor.shape[i], -1)) return NULL; /* -1 must be resolved by inference */
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "reshape", NULL, out_expr);
  int no = out_sinfo->tensor.ndim, ni = x->ndim;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < no; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_reshape", xs->tensor.dtype, no, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_reshape", no, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "reshape", NULL, out_expr);
  if (!static_unravel(a, st.iv, no, oshape, x, idx)) symbolic_unravel(a, st.iv, no, oshape, x, idx);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, no, st.iv, tj_lg_load(a, x, ni, idx)));
  return tj_lg_te_finish(&te, "reshape", out_sinfo, out_expr);
}

/* R.flatten → topi.reshape(x, call.struct_info.shape) (`reshape`, block T_reshape). */
tj_status_t *tj_legalize_flatten(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *s = call->sinfo;
  if (!tj_lg_tensor_known(s) || call->call.n_args != 1) return NULL;
  return tj_legalize_reshape(ctx, call, out_expr);
}

/* A one-block copy `block` into output `block` over the output shape, reading x at
 * idx (built by `index`). */
typedef void (*index_fn)(tj_arena_t *a, const tj_tir_expr_t *const *iv, const void *info, const tj_tir_expr_t **idx);

static tj_status_t *copy_op(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name, const char *block,
                            const char *prefix, index_fn index, const void *info, const tj_sinfo_t *topi_sinfo,
                            const tj_rx_expr_t **out_expr) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *out_sinfo = topi_sinfo ? topi_sinfo : call->sinfo;
  if (!tj_lg_tensor_known(out_sinfo) || out_sinfo->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name, NULL, out_expr);
  int no = out_sinfo->tensor.ndim;
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < no; i++) oshape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, block, x->dtype, no, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, block, no, oshape, prefix);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  index(a, st.iv, info, idx);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, no, st.iv, tj_lg_load(a, x, x->ndim, idx)));
  return tj_lg_te_finish(&te, name, out_sinfo, out_expr);
}

typedef struct dims_info {
  int n_in;
  int map[TJ_LG_MAX_ITERS]; /* per input dim: the output iter var, or -1 for index 0 */
} dims_info_t;

static void index_by_map(tj_arena_t *a, const tj_tir_expr_t *const *iv, const void *info, const tj_tir_expr_t **idx) {
  const dims_info_t *d = info;
  for (int i = 0; i < d->n_in; i++) idx[i] = d->map[i] >= 0 ? iv[d->map[i]] : tj_tir_i64(a, 0);
}

/* R.squeeze → topi.squeeze (`squeeze`, block T_squeeze): removed dims read at 0. */
tj_status_t *tj_legalize_squeeze(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  dims_info_t d = {.n_in = xs->tensor.ndim};
  bool drop[TJ_LG_MAX_ITERS] = {false};
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "axis");
  if (!v || v->kind != TJ_ATTR_LIST) {
    for (int i = 0; i < d.n_in; i++) {
      int64_t e;
      if (!tj_tir_is_const_int(xs->tensor.shape[i], &e)) return NULL;
      drop[i] = e == 1;
    }
  } else {
    for (int i = 0; i < v->list.n; i++) {
      int ax;
      if (!tj_lg_axis(v->list.items[i].i, d.n_in, &ax)) return NULL;
      drop[ax] = true;
    }
  }
  /* out_sinfo is TOPI's shape (the input without the dropped dims), not an annotation */
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  int no = 0;
  for (int i = 0; i < d.n_in; i++) {
    d.map[i] = drop[i] ? -1 : no;
    if (!drop[i]) oshape[no++] = xs->tensor.shape[i];
  }
  const tj_sinfo_t *os = tj_sinfo_tensor(ctx->arena, xs->tensor.dtype, no, oshape);
  if (tj_lg_tensor_known(call->sinfo) && call->sinfo->tensor.ndim == no) os = call->sinfo;
  return copy_op(ctx, call, "squeeze", "T_squeeze", "ax", index_by_map, &d, os, out_expr);
}

/* R.expand_dims → TE `expand_dims` (block and output `expand_dims`): x read with the
 * output iter vars of the kept dims. */
tj_status_t *tj_legalize_expand_dims(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  const tj_sinfo_t *os = call->sinfo;
  if (!tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os) || os->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  int64_t raw[TJ_LG_MAX_ITERS];
  int n_axes = tj_lg_attr_ints(call->call.attrs, "axis", raw, TJ_LG_MAX_ITERS);
  int no = os->tensor.ndim;
  if (n_axes < 0 || no != xs->tensor.ndim + n_axes) return NULL;
  bool added[TJ_LG_MAX_ITERS] = {false};
  for (int i = 0; i < n_axes; i++) {
    int ax;
    if (!tj_lg_axis(raw[i], no, &ax)) return NULL;
    added[ax] = true;
  }
  dims_info_t d = {.n_in = xs->tensor.ndim};
  for (int o = 0, i = 0; o < no; o++)
    if (!added[o]) d.map[i++] = o;
  return copy_op(ctx, call, "expand_dims", "expand_dims", "i", index_by_map, &d, NULL, out_expr);
}

/* R.broadcast_to → topi.broadcast_to (`broadcast_to`, block T_broadcast_to): x's
 * dims right-aligned, extent-1 dims read at 0. */
tj_status_t *tj_legalize_broadcast_to(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  const tj_sinfo_t *os = call->sinfo;
  if (!tj_lg_tensor_known(xs) || !tj_lg_tensor_known(os) || os->tensor.ndim > TJ_LG_MAX_ITERS ||
      xs->tensor.ndim > os->tensor.ndim)
    return NULL;
  dims_info_t d = {.n_in = xs->tensor.ndim};
  int off = os->tensor.ndim - xs->tensor.ndim;
  for (int i = 0; i < d.n_in; i++) {
    int64_t e, oe;
    bool unit = tj_tir_is_const_int(xs->tensor.shape[i], &e) && e == 1;
    bool out_unit = tj_tir_is_const_int(os->tensor.shape[off + i], &oe) && oe == 1;
    d.map[i] = unit && !out_unit ? -1 : off + i;
  }
  /* The call passes only x: the shape argument is not a PrimFunc parameter. */
  return copy_op(ctx, call, "broadcast_to", "T_broadcast_to", "ax", index_by_map, &d, NULL, out_expr);
}

/* R.concat → topi.concatenate (`concatenate`, block T_concat): an if_then_else chain
 * tested from the last input to the first, `off_k <= i ? x_k[i - off_k] : (...)`.
 * A tuple-typed var is read through TupleGetItems, which LegalizeOps binds to vars
 * of their own (TVM follows a var bound to a Tuple back to it; otherwise it emits the
 * same TupleGetItems). */
tj_status_t *tj_legalize_concat(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_rx_expr_t *tup = call->call.args[0];
  const tj_sinfo_t *os = call->sinfo;
  const tj_sinfo_t *ts = tj_lg_arg_sinfo(a, tup);
  if (tup->kind != TJ_RX_TUPLE && ts && ts->kind == TJ_SINFO_TUPLE && ts->tuple.n >= 1 &&
      ts->tuple.n < TJ_LG_MAX_PARAMS) {
    /* a tuple-typed var: its fields through TupleGetItem (bound by LegalizeOps) */
    const tj_rx_expr_t *fields[TJ_LG_MAX_PARAMS];
    for (int i = 0; i < ts->tuple.n; i++) {
      fields[i] = tj_rx_with_sinfo(a, tj_rx_get_item(a, tup, i), ts->tuple.fields[i]);
      if (!fields[i]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
    }
    tup = tj_rx_tuple(a, ts->tuple.n, fields);
    if (!tup) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
  }
  if (tup->kind != TJ_RX_TUPLE || tup->tuple.n < 1 || tup->tuple.n > TJ_LG_MAX_PARAMS - 1 || !tj_lg_tensor_known(os) ||
      os->tensor.ndim > TJ_LG_MAX_ITERS || os->tensor.ndim < 1)
    return NULL;
  int n = os->tensor.ndim, k = tup->tuple.n;
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  int axis = 0;
  if (av && av->kind == TJ_ATTR_INT && !tj_lg_axis(av->i, n, &axis)) return NULL;
  for (int i = 0; i < k; i++) {
    const tj_sinfo_t *s = tj_lg_arg_sinfo(a, tup->tuple.fields[i]);
    if (!tj_lg_tensor_known(s) || s->tensor.ndim != n) return NULL;
  }
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *xs[TJ_LG_MAX_PARAMS];
  for (int i = 0; i < k; i++) xs[i] = tj_lg_placeholder(&te, tup->tuple.fields[i]);
  if (te.failed) return tj_lg_te_finish(&te, "concatenate", NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS], *idx[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) oshape[i] = tj_lg_shape_expr(&te, os->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "T_concat", os->tensor.dtype, n, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "T_concat", n, oshape, "ax");
  if (te.failed) return tj_lg_te_finish(&te, "concatenate", NULL, out_expr);
  /* topi.concatenate: ind -= size_i, then if_then_else(ind >= 0, x_{i+1}[ind], ...);
   * the block's simplification gives `T.int64(3) <= v` or `T.int64(0) <= v - b0 - b1` */
  const tj_tir_expr_t *value = NULL, *ind = st.iv[axis];
  for (int i = 0; i < k; i++) {
    for (int d = 0; d < n; d++) idx[d] = st.iv[d];
    if (i > 0) idx[axis] = ind = tj_lg_sub(a, ind, xs[i - 1]->shape[axis]);
    const tj_tir_expr_t *ld = tj_lg_load(a, xs[i], n, idx);
    if (i == 0) {
      value = ld;
    } else {
      const tj_tir_expr_t *args[3] = {tj_tir_binary(a, TJ_TIR_GE, ind, tj_tir_i64(a, 0)), ld, value};
      value = args[0] && ld && value ? tj_tir_call(a, os->tensor.dtype, "tir.if_then_else", 3, args) : NULL;
    }
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, "concatenate", os, out_expr);
}

/* R.split → topi.split (`split`): one output per piece, block T_split, T_split_1, ...
 * (indices) or T_split_sections, T_split_sections_1, ... (sections), reading
 * x[.., i + begin, ..]. n sections that do not divide a static dim keep the op, as
 * TVM does. */
tj_status_t *tj_legalize_split(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  const tj_sinfo_t *os = call->sinfo;
  if (!tj_lg_tensor_known(xs) || !os || os->kind != TJ_SINFO_TUPLE || xs->tensor.ndim > TJ_LG_MAX_ITERS ||
      os->tuple.n > TJ_LG_MAX_PARAMS - 1)
    return NULL;
  int n = xs->tensor.ndim, axis;
  if (!tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", 0), n, &axis)) return NULL;
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "indices_or_sections");
  if (!v) return NULL;
  bool sections = v->kind == TJ_ATTR_INT;
  int64_t dim;
  bool static_dim = tj_tir_is_const_int(xs->tensor.shape[axis], &dim);
  if (sections && static_dim && dim % v->i != 0) return NULL;
  if (!sections && !static_dim) return NULL;
  int k = os->tuple.n;
  for (int i = 0; i < k; i++)
    if (!tj_lg_tensor_known(os->tuple.fields[i]) || os->tuple.fields[i]->tensor.ndim != n) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "split", NULL, out_expr);
  const char *base = sections ? "T_split_sections" : "T_split";
  const tj_buffer_t *outs[TJ_LG_MAX_PARAMS];
  const tj_tir_expr_t *oshape[TJ_LG_MAX_PARAMS][TJ_LG_MAX_ITERS];
  for (int i = 0; i < k; i++) {
    for (int d = 0; d < n; d++) oshape[i][d] = tj_lg_shape_expr(&te, os->tuple.fields[i]->tensor.shape[d]);
    const char *name = i == 0 ? base : tj_arena_printf(a, "%s_%d", base, i);
    outs[i] = tj_lg_output(&te, name, x->dtype, n, oshape[i]);
  }
  const tj_tir_expr_t *begin = tj_tir_i64(a, 0);
  for (int i = 0; i < k; i++) {
    tj_lg_stage_t st;
    tj_lg_stage_spatial(&te, &st, outs[i] ? outs[i]->name : base, n, oshape[i], "ax");
    if (te.failed) return tj_lg_te_finish(&te, "split", NULL, out_expr);
    const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
    for (int d = 0; d < n; d++) idx[d] = st.iv[d];
    idx[axis] = tj_lg_add(a, st.iv[axis], begin);
    tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, outs[i], n, st.iv, tj_lg_load(a, x, n, idx)));
    if (sections) {
      begin = tj_lg_add(a, begin, oshape[0][axis]);
    } else {
      int64_t b = i < v->list.n ? v->list.items[i].i : dim;
      b = b < 0 ? 0 : b > dim ? dim : b;
      begin = tj_tir_i64(a, b);
    }
  }
  return tj_lg_te_finish(&te, "split", os, out_expr);
}
