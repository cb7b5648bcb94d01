/* Manipulation (TVM's src/relax/op/tensor/manipulate.cc): relax.permute_dims,
 * relax.reshape. */
#include <string.h>

#include "ir/op/common.h"

/* ---------------- permute_dims ---------------- */

/* Canonical attrs: axes [int32 ...] or NONE (= reverse). */
static const char *const permute_attrs[] = {"axes", NULL};

static tj_status_t *normalize_permute(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("permute_dims", given, permute_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, "permute_dims", given, "axes", true, TJ_I32));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_permute(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("permute_dims", call, 0, "the input", &x));
  int ndim = x->tensor.ndim;
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "axes");
  bool reverse = !v || v->kind != TJ_ATTR_LIST;
  if (ndim < 0) {
    int n = reverse ? -1 : v->list.n;
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, NULL, x->tensor.vdevice), NULL;
  }
  if (ndim > TJ_OP_MAX_NDIM) return tj_op_error("permute_dims: more than %d dimensions", TJ_OP_MAX_NDIM);
  int perm[TJ_OP_MAX_NDIM];
  if (reverse) {
    for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  } else {
    if (v->list.n != ndim)
      return tj_op_error("permute_dims: axes has %d entries but the input is %d-D; give one axis per dimension",
                         v->list.n, ndim);
    bool seen[TJ_OP_MAX_NDIM] = {false};
    for (int i = 0; i < ndim; i++) {
      TJ_RETURN_IF_ERROR(tj_op_axis("permute_dims", v->list.items[i].i, ndim, &perm[i]));
      if (seen[perm[i]]) return tj_op_error("permute_dims: axis %d appears twice in axes", perm[i]);
      seen[perm[i]] = true;
    }
  }
  if (!x->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  for (int i = 0; i < ndim; i++) shape[i] = x->tensor.shape[perm[i]];
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "permute_dims: out of memory");
}

static const char *const permute_args[] = {"x"};

const tj_op_def_t tj_op_permute_dims = {
    .name = "relax.permute_dims", .script_name = "R.permute_dims", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_permute, .infer = infer_permute,
    .arg_names = permute_args, .positional_attrs = permute_attrs,
};

/* ---------------- reshape ---------------- */

static const tj_tir_expr_t *product(tj_arena_t *a, int n, const tj_tir_expr_t *const *dims, int skip) {
  const tj_tir_expr_t *p = NULL;
  int64_t acc = 1;
  for (int i = 0; i < n; i++) {
    int64_t v;
    if (i == skip) continue;
    if (tj_tir_is_const_int(dims[i], &v)) acc *= v;
    else p = p ? tj_tir_binary(a, TJ_TIR_MUL, p, dims[i]) : dims[i];
  }
  if (!p) return tj_tir_i64(a, acc);
  return acc == 1 ? p : tj_tir_binary(a, TJ_TIR_MUL, p, tj_tir_i64(a, acc));
}

/* Reads the script's new shape (ShapeExpr, or a tuple of int PrimValues) as int64 exprs. */
static tj_status_t *shape_values(tj_arena_t *a, const tj_rx_expr_t *shape, int *out_n, const tj_tir_expr_t **out) {
  int n = shape->kind == TJ_RX_SHAPE_EXPR ? shape->shape_expr.n : shape->tuple.n;
  if (n > TJ_OP_MAX_NDIM) return tj_op_error("reshape: more than %d dimensions", TJ_OP_MAX_NDIM);
  for (int i = 0; i < n; i++) {
    const tj_tir_expr_t *v;
    if (shape->kind == TJ_RX_SHAPE_EXPR) {
      v = shape->shape_expr.values[i];
    } else {
      const tj_rx_expr_t *f = shape->tuple.fields[i];
      if (f->kind != TJ_RX_PRIM_VALUE || !tj_dtype_is_int(f->prim_value.value->dtype))
        return tj_op_error("reshape: the new shape must be a tuple of integers, entry %d is not", i);
      v = f->prim_value.value;
    }
    int64_t c;
    if (tj_tir_is_const_int(v, &c) && v->dtype.bits != 64) v = tj_tir_i64(a, c);
    if (!v) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "reshape: out of memory");
    out[i] = v;
  }
  *out_n = n;
  return NULL;
}

/* Turns the script's shape argument into a ShapeExpr with -1 resolved. */
static tj_status_t *canonical_shape(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *data,
                                    const tj_rx_expr_t *shape, const tj_rx_expr_t **out_shape) {
  if (shape->kind != TJ_RX_SHAPE_EXPR && shape->kind != TJ_RX_TUPLE) return *out_shape = shape, NULL;
  tj_arena_t *a = ctx->arena;
  const tj_tir_expr_t *dims[TJ_OP_MAX_NDIM];
  int n = 0, infer_at = -1;
  TJ_RETURN_IF_ERROR(shape_values(a, shape, &n, dims));
  for (int i = 0; i < n; i++) {
    int64_t c;
    if (!tj_tir_is_const_int(dims[i], &c)) continue;
    if (c == -1 && infer_at >= 0) return tj_op_error("reshape: at most one -1 is allowed in the new shape");
    if (c == -1) infer_at = i;
    else if (c < 1) return tj_op_error("reshape: new shape extents must be positive or -1, got %lld", (long long)c);
  }
  if (infer_at >= 0) {
    const tj_sinfo_t *ds = data->sinfo;
    if (!tj_sinfo_is_tensor(ds) || !ds->tensor.shape)
      return tj_op_error("reshape: -1 in the new shape needs the input shape to be known");
    const tj_tir_expr_t *total = product(a, ds->tensor.ndim, ds->tensor.shape, -1);
    const tj_tir_expr_t *known = product(a, n, dims, infer_at);
    int64_t t, k;
    if (tj_tir_is_const_int(total, &t) && tj_tir_is_const_int(known, &k)) {
      if (k == 0 || t % k != 0)
        return tj_op_error("reshape: cannot infer -1: %lld elements do not split into groups of %lld", (long long)t,
                           (long long)k);
      dims[infer_at] = tj_tir_i64(a, t / k);
    } else {
      dims[infer_at] = tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_FLOOR_DIV, total, known));
    }
  }
  const tj_rx_expr_t *e = tj_rx_shape_expr(a, n, dims);
  e = tj_rx_with_sinfo(a, e, tj_sinfo_shape(a, n, dims));
  if (!e) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "reshape: out of memory");
  *out_shape = e;
  return NULL;
}

static tj_status_t *canonicalize_reshape(const tj_infer_ctx_t *ctx, int n_args, const tj_rx_expr_t **args) {
  return canonical_shape(ctx, args[0], args[1], &args[1]);
}

static tj_status_t *infer_reshape(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("reshape", call, 0, "the input", &x));
  const tj_rx_expr_t *shape = call->call.args[1];
  const tj_sinfo_t *ss = shape->sinfo;
  int n;
  const tj_tir_expr_t *const *values;
  if (shape->kind == TJ_RX_SHAPE_EXPR) {
    n = shape->shape_expr.n;
    values = shape->shape_expr.values;
  } else if (ss && ss->kind == TJ_SINFO_SHAPE) {
    n = ss->shape.ndim;
    values = ss->shape.values;
  } else {
    return tj_op_error("reshape: the new shape must be a shape (e.g. R.shape([8, 3]) or (8, 3))");
  }
  if (x->tensor.shape && values && n >= 0) {
    const tj_tir_expr_t *before = product(ctx->arena, x->tensor.ndim, x->tensor.shape, -1);
    const tj_tir_expr_t *after = product(ctx->arena, n, values, -1);
    int64_t b, f;
    if (tj_tir_is_const_int(before, &b) && tj_tir_is_const_int(after, &f) && b != f) {
      tj_strbuf_t sb;
      tj_strbuf_init(&sb);
      tj_strbuf_append(&sb, "reshape: cannot reshape ");
      tj_op_format_shape(&sb, x->tensor.ndim, x->tensor.shape);
      tj_strbuf_printf(&sb, " (%lld elements) into ", (long long)b);
      tj_op_format_shape(&sb, n, values);
      tj_strbuf_printf(&sb, " (%lld elements)", (long long)f);
      tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "reshape: element counts differ");
      tj_strbuf_free(&sb);
      return s;
    }
  }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, values, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "reshape: out of memory");
}

static const char *const reshape_args[] = {"x", "shape"};

const tj_op_def_t tj_op_reshape = {
    .name = "relax.reshape", .script_name = "R.reshape", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_reshape, .arg_names = reshape_args,
    .canonicalize_args = canonicalize_reshape,
};

/* ---------------- flatten ---------------- */

static tj_status_t *infer_flatten(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("flatten", call, 0, "the input", &x));
  if (x->tensor.ndim == 1) return *out = x, NULL;
  if (x->tensor.ndim < 0 || !x->tensor.shape)
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, 1, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *n = product(ctx->arena, x->tensor.ndim, x->tensor.shape, -1);
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, 1, &n, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "flatten: out of memory");
}

const tj_op_def_t tj_op_flatten = {
    .name = "relax.flatten", .script_name = "R.flatten", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_flatten, .arg_names = permute_args,
};

/* ---------------- squeeze ---------------- */

/* Canonical attrs: axis [int64 ...] or NONE (every static unit dim). */
static const char *const squeeze_attrs[] = {"axis", NULL};

static tj_status_t *normalize_squeeze(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("squeeze", given, squeeze_attrs));
  tj_attr_builder_t b = {0};
  const tj_attr_value_t *v = tj_attrs_get(given, "axis");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
    tj_attr_builder_add(&b, "axis", none);
  } else {
    int64_t axes[TJ_OP_MAX_NDIM];
    int n;
    TJ_RETURN_IF_ERROR(tj_op_read_ints("squeeze", given, "axis", TJ_OP_MAX_NDIM, axes, &n));
    tj_attr_builder_add(&b, "axis", tj_op_int_list(arena, n, axes, TJ_I64));
  }
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_squeeze(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("squeeze", call, 0, "the input", &x));
  int ndim = x->tensor.ndim;
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "axis");
  bool all = !v || v->kind != TJ_ATTR_LIST;
  if (ndim < 0) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
  bool drop[TJ_OP_MAX_NDIM] = {false};
  if (all) {
    if (!x->tensor.shape) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
    for (int i = 0; i < ndim; i++) {
      int64_t e;
      if (!tj_tir_is_const_int(x->tensor.shape[i], &e))
        return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
      drop[i] = e == 1;
    }
  } else {
    if (v->list.n == 0) return *out = x, NULL;
    for (int i = 0; i < v->list.n; i++) {
      int ax;
      TJ_RETURN_IF_ERROR(tj_op_axis("squeeze", v->list.items[i].i, ndim, &ax));
      if (drop[ax]) return tj_op_error("squeeze: axis %d appears twice", ax);
      drop[ax] = true;
      int64_t e;
      if (x->tensor.shape && tj_tir_is_const_int(x->tensor.shape[ax], &e) && e != 1)
        return tj_op_error("squeeze: axis %d has extent %lld; only unit dimensions can be squeezed", ax, (long long)e);
    }
  }
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  int n = 0;
  for (int i = 0; i < ndim; i++)
    if (!drop[i]) {
      if (x->tensor.shape) shape[n] = x->tensor.shape[i];
      n++;
    }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, x->tensor.shape ? shape : NULL, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "squeeze: out of memory");
}

const tj_op_def_t tj_op_squeeze = {
    .name = "relax.squeeze", .script_name = "R.squeeze", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_squeeze, .infer = infer_squeeze,
    .arg_names = permute_args, .positional_attrs = squeeze_attrs,
};

/* ---------------- expand_dims ---------------- */

/* Canonical attrs: axis [int64 ...] (required; an int becomes a list). Axes are
 * normalised against the output rank. */
static tj_status_t *normalize_expand_dims(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("expand_dims", given, squeeze_attrs));
  if (!tj_attrs_get(given, "axis")) return tj_op_error("expand_dims: needs 'axis', e.g. axis=[0]");
  int64_t axes[TJ_OP_MAX_NDIM];
  int n;
  TJ_RETURN_IF_ERROR(tj_op_read_ints("expand_dims", given, "axis", TJ_OP_MAX_NDIM, axes, &n));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_op_int_list(arena, n, axes, TJ_I64));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_expand_dims(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("expand_dims", call, 0, "the input", &x));
  int64_t raw[TJ_OP_MAX_NDIM];
  int n_axes = tj_op_attr_ints(call->call.attrs, "axis", raw, TJ_OP_MAX_NDIM);
  if (x->tensor.ndim < 0) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
  int ndim = x->tensor.ndim + n_axes;
  if (ndim > TJ_OP_MAX_NDIM) return tj_op_error("expand_dims: more than %d dimensions", TJ_OP_MAX_NDIM);
  bool added[TJ_OP_MAX_NDIM] = {false};
  for (int i = 0; i < n_axes; i++) {
    int ax;
    TJ_RETURN_IF_ERROR(tj_op_axis("expand_dims", raw[i], ndim, &ax));
    if (added[ax]) return tj_op_error("expand_dims: axis %d appears twice", ax);
    added[ax] = true;
  }
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  for (int i = 0, j = 0; i < ndim; i++)
    shape[i] = added[i] ? tj_tir_i64(ctx->arena, 1) : (x->tensor.shape ? x->tensor.shape[j++] : NULL);
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, ndim, x->tensor.shape ? shape : NULL, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "expand_dims: out of memory");
}

const tj_op_def_t tj_op_expand_dims = {
    .name = "relax.expand_dims", .script_name = "R.expand_dims", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_expand_dims, .infer = infer_expand_dims,
    .arg_names = permute_args, .positional_attrs = squeeze_attrs,
};

/* ---------------- broadcast_to ---------------- */

static tj_status_t *canonicalize_broadcast_to(const tj_infer_ctx_t *ctx, int n_args, const tj_rx_expr_t **args) {
  (void)n_args;
  return canonical_shape(ctx, args[0], args[1], &args[1]);
}

static tj_status_t *infer_broadcast_to(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("broadcast_to", call, 0, "the input", &x));
  const tj_rx_expr_t *shape = call->call.args[1];
  if (shape->kind != TJ_RX_SHAPE_EXPR)
    return tj_op_error("broadcast_to: the target shape must be a shape (e.g. (4, 2, 5, 3))");
  int n = shape->shape_expr.n;
  const tj_tir_expr_t *const *t = shape->shape_expr.values;
  if (x->tensor.ndim > n)
    return tj_op_error("broadcast_to: the input has %d dimensions, more than the target's %d", x->tensor.ndim, n);
  if (x->tensor.shape)
    for (int i = 0; i < x->tensor.ndim; i++) {
      const tj_tir_expr_t *d = x->tensor.shape[i], *e = t[n - x->tensor.ndim + i];
      int64_t dv;
      if (tj_tir_is_const_int(d, &dv) && dv == 1) continue;
      if (tj_op_compare_dims(d, e) == TJ_DIM_DIFFERENT) {
        tj_strbuf_t sb;
        tj_strbuf_init(&sb);
        tj_strbuf_append(&sb, "broadcast_to: cannot broadcast ");
        tj_op_format_shape(&sb, x->tensor.ndim, x->tensor.shape);
        tj_strbuf_append(&sb, " to ");
        tj_op_format_shape(&sb, n, t);
        tj_strbuf_printf(&sb, ": dimension %d differs and is not 1", i);
        tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "broadcast_to: shapes differ");
        tj_strbuf_free(&sb);
        return s;
      }
    }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, n, t, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "broadcast_to: out of memory");
}

static const char *const broadcast_to_args[] = {"x", "shape"};

const tj_op_def_t tj_op_broadcast_to = {
    .name = "relax.broadcast_to", .script_name = "R.broadcast_to", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_FOLLOW, .infer = infer_broadcast_to, .arg_names = broadcast_to_args,
    .canonicalize_args = canonicalize_broadcast_to,
};

/* ---------------- concat ---------------- */

/* Canonical attrs: axis int32 (default 0) or NONE (the inputs must be 1-D). */
static const char *const concat_attrs[] = {"axis", NULL};

static tj_status_t *normalize_concat(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("concat", given, concat_attrs));
  tj_attr_builder_t b = {0};
  const tj_attr_value_t *v = tj_attrs_get(given, "axis");
  if (v && v->kind == TJ_ATTR_NONE) {
    tj_attr_builder_add(&b, "axis", *v);
  } else {
    int64_t axis;
    TJ_RETURN_IF_ERROR(tj_op_read_int("concat", given, "axis", 0, &axis));
    tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  }
  (void)arena;
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_concat(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *t = call->call.args[0]->sinfo;
  if (!t || t->kind != TJ_SINFO_TUPLE)
    return tj_op_error("concat: the input must be a tuple of tensors, e.g. R.concat((x, y), axis=0)");
  if (t->tuple.n == 0) return tj_op_error("concat: the input tuple is empty");
  const tj_sinfo_t *f0 = t->tuple.fields[0];
  for (int i = 0; i < t->tuple.n; i++)
    if (!tj_sinfo_is_tensor(t->tuple.fields[i])) return tj_op_error("concat: field %d of the input is not a tensor", i);
  if (t->tuple.n == 1) return *out = f0, NULL;
  tj_dtype_t dt = f0->tensor.dtype;
  int ndim = -1;
  char b0[TJ_DTYPE_BUFSIZE], b1[TJ_DTYPE_BUFSIZE];
  for (int i = 0; i < t->tuple.n; i++) {
    const tj_sinfo_t *f = t->tuple.fields[i];
    if (!tj_dtype_is_void(f->tensor.dtype)) {
      if (!tj_dtype_is_void(dt) && !tj_dtype_eq(dt, f->tensor.dtype))
        return tj_op_error("concat: field %d is %s but field 0 is %s; all must have the same dtype", i,
                           tj_dtype_str(f->tensor.dtype, b0), tj_dtype_str(dt, b1));
      dt = f->tensor.dtype;
    }
    if (f->tensor.ndim >= 0) {
      if (ndim >= 0 && ndim != f->tensor.ndim)
        return tj_op_error("concat: field %d is %d-D but another is %d-D; all must have the same rank", i,
                           f->tensor.ndim, ndim);
      ndim = f->tensor.ndim;
    }
  }
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  int64_t raw = av && av->kind == TJ_ATTR_INT ? av->i : 0;
  if (av && av->kind == TJ_ATTR_NONE) {
    if (ndim >= 0 && ndim != 1) return tj_op_error("concat: with axis=None the inputs must be 1-D, got %d-D", ndim);
    raw = 0;
  }
  if (ndim < 0) return *out = tj_op_tensor_sinfo(ctx->arena, dt, -1, NULL, NULL), NULL;
  int axis;
  TJ_RETURN_IF_ERROR(tj_op_axis("concat", raw, ndim, &axis));
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  bool known = true;
  for (int i = 0; i < t->tuple.n; i++)
    if (!t->tuple.fields[i]->tensor.shape) known = false;
  if (!known) return *out = tj_op_tensor_sinfo(ctx->arena, dt, ndim, NULL, NULL), NULL;
  for (int d = 0; d < ndim; d++) shape[d] = f0->tensor.shape[d];
  const tj_tir_expr_t *sum = NULL;
  for (int i = 0; i < t->tuple.n; i++) {
    const tj_sinfo_t *f = t->tuple.fields[i];
    for (int d = 0; d < ndim; d++) {
      if (d == axis) continue;
      tj_dim_cmp_t c = tj_op_compare_dims(f->tensor.shape[d], f0->tensor.shape[d]);
      if (c == TJ_DIM_DIFFERENT) {
        tj_strbuf_t sb;
        tj_strbuf_init(&sb);
        tj_strbuf_printf(&sb, "concat: field %d has shape ", i);
        tj_op_format_shape(&sb, ndim, f->tensor.shape);
        tj_strbuf_append(&sb, " but field 0 has ");
        tj_op_format_shape(&sb, ndim, f0->tensor.shape);
        tj_strbuf_printf(&sb, "; they may differ only at axis %d", axis);
        tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "concat: shapes differ");
        tj_strbuf_free(&sb);
        return s;
      }
      if (c == TJ_DIM_UNKNOWN) return *out = tj_op_tensor_sinfo(ctx->arena, dt, ndim, NULL, NULL), NULL;
    }
    sum = sum ? tj_tir_binary(ctx->arena, TJ_TIR_ADD, sum, f->tensor.shape[axis]) : f->tensor.shape[axis];
  }
  shape[axis] = tj_op_simplify_dim(ctx->arena, sum);
  *out = tj_op_tensor_sinfo(ctx->arena, dt, ndim, shape, f0->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "concat: out of memory");
}

static const char *const concat_args[] = {"tensors"};

const tj_op_def_t tj_op_concat = {
    .name = "relax.concat", .script_name = "R.concat", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_concat, .infer = infer_concat,
    .arg_names = concat_args, .positional_attrs = concat_attrs,
};

/* ---------------- split ---------------- */

/* Canonical attrs: indices_or_sections (INT int64 = sections, or LIST of int64 =
 * indices), axis int32 (default 0). Result: a tuple of the pieces. */
static const char *const split_attrs[] = {"indices_or_sections", "axis", NULL};

static tj_status_t *normalize_split(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("split", given, split_attrs));
  const tj_attr_value_t *v = tj_attrs_get(given, "indices_or_sections");
  if (!v) return tj_op_error("split: needs 'indices_or_sections' (a number of sections or a list of indices)");
  tj_attr_builder_t b = {0};
  if (v->kind == TJ_ATTR_INT) {
    if (v->i <= 0) return tj_op_error("split: the number of sections must be positive, got %lld", (long long)v->i);
    tj_attr_value_t s = {.kind = TJ_ATTR_INT, .dtype = TJ_I64, .i = v->i};
    tj_attr_builder_add(&b, "indices_or_sections", s);
  } else if (v->kind == TJ_ATTR_LIST) {
    int64_t idx[64];
    int n;
    TJ_RETURN_IF_ERROR(tj_op_read_ints("split", given, "indices_or_sections", 64, idx, &n));
    tj_attr_builder_add(&b, "indices_or_sections", tj_op_int_list(arena, n, idx, TJ_I64));
  } else {
    return tj_op_error("split: 'indices_or_sections' must be an integer or a list of integers");
  }
  int64_t axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int("split", given, "axis", 0, &axis));
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_split(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("split", call, 0, "the input", &x));
  const tj_attr_value_t *v = tj_attrs_get(call->call.attrs, "indices_or_sections");
  int ndim = x->tensor.ndim, axis = 0;
  if (ndim >= 0) TJ_RETURN_IF_ERROR(tj_op_axis("split", tj_attrs_get_int(call->call.attrs, "axis", 0), ndim, &axis));
  int n_out = !v ? 1 : v->kind == TJ_ATTR_INT ? (int)v->i : v->list.n + 1;
  if (n_out < 1 || n_out > 64) return tj_op_error("split: %d pieces are not supported", n_out);
  const tj_sinfo_t **fields = TJ_ARENA_ARRAY(a, const tj_sinfo_t *, n_out);
  if (!fields) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "split: out of memory");
  if (n_out == 1) {
    fields[0] = x;
    return *out = tj_sinfo_tuple(a, 1, fields), NULL;
  }
  int64_t dim;
  bool static_dim = ndim >= 0 && x->tensor.shape && tj_tir_is_const_int(x->tensor.shape[axis], &dim);
  for (int i = 0; i < n_out; i++) {
    if (!x->tensor.shape) {
      fields[i] = tj_op_tensor_sinfo(a, x->tensor.dtype, ndim, NULL, x->tensor.vdevice);
      continue;
    }
    const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
    memcpy(shape, x->tensor.shape, sizeof shape[0] * (size_t)ndim);
    if (v->kind == TJ_ATTR_INT) {
      int64_t n = v->i;
      if (static_dim) {
        int64_t each = (dim + n - 1) / n;
        int64_t ext = i < n - 1 ? each : dim - (n - 1) * each;
        shape[axis] = tj_tir_i64(a, ext < 0 ? 0 : ext);
      } else {
        /* ceildiv(dim, n) for every piece but the last */
        const tj_tir_expr_t *each = tj_op_simplify_dim(
            a, tj_tir_binary(a, TJ_TIR_FLOOR_DIV, tj_tir_binary(a, TJ_TIR_ADD, x->tensor.shape[axis], tj_tir_i64(a, n - 1)),
                             tj_tir_i64(a, n)));
        shape[axis] = i < n - 1 ? each
                                : tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_SUB, x->tensor.shape[axis],
                                                                      tj_tir_binary(a, TJ_TIR_MUL, each, tj_tir_i64(a, n - 1))));
      }
    } else {
      if (!static_dim) {
        fields[i] = tj_op_tensor_sinfo(a, x->tensor.dtype, ndim, NULL, x->tensor.vdevice);
        continue;
      }
      int64_t lo = i == 0 ? 0 : v->list.items[i - 1].i, hi = i == v->list.n ? dim : v->list.items[i].i;
      lo = lo < 0 ? 0 : lo > dim ? dim : lo;
      hi = hi < 0 ? 0 : hi > dim ? dim : hi;
      shape[axis] = tj_tir_i64(a, hi - lo > 0 ? hi - lo : 0);
    }
    fields[i] = tj_op_tensor_sinfo(a, x->tensor.dtype, ndim, shape, x->tensor.vdevice);
    if (!fields[i]) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "split: out of memory");
  }
  *out = tj_sinfo_tuple(a, n_out, fields);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "split: out of memory");
}

static const char *const split_args[] = {"x"};

const tj_op_def_t tj_op_split = {
    .name = "relax.split", .script_name = "R.split", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_split, .infer = infer_split,
    .arg_names = split_args, .positional_attrs = split_attrs,
};
