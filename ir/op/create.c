/* Creation ops (TVM's src/relax/op/tensor/create.cc): relax.full, full_like, ones,
 * ones_like, zeros, zeros_like (attr dtype), arange (start, end, step PrimValues,
 * attr dtype), tril and triu (x and the diagonal offset k as a PrimValue).
 * Mixed precision as TVM registers it: full, full_like, ones, zeros and arange follow;
 * ones_like, zeros_like, tril and triu have no policy (kNever). R.eye does not exist
 * at the TVM commit tvmjit follows (added later, PR #17462). */
#include <math.h>

#include "ir/op/common.h"

static const char *const dtype_attrs[] = {"dtype", NULL};

static tj_status_t *normalize_dtype_attr(const char *op, bool required, tj_arena_t *arena, const tj_attrs_t *given,
                                         const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, dtype_attrs));
  tj_dtype_t dt;
  TJ_RETURN_IF_ERROR(tj_op_read_dtype(op, given, "dtype", &dt));
  if (required && tj_dtype_is_void(dt)) return tj_op_error("%s: needs a dtype, e.g. R.%s((2, 3), \"float32\")", op, op);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "dtype", tj_op_dtype_attr(dt));
  return tj_attr_builder_finish(arena, &b, out);
}

/* A shape written as a tuple of ints becomes a ShapeExpr, as TVM's Python wrapper does. */
static tj_status_t *canonical_shape_arg(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t **arg) {
  const tj_rx_expr_t *t = *arg;
  if (t->kind != TJ_RX_TUPLE) return NULL;
  if (t->tuple.n > TJ_OP_MAX_NDIM) return tj_op_error("%s: shape has more than %d dimensions", op, TJ_OP_MAX_NDIM);
  const tj_tir_expr_t *dims[TJ_OP_MAX_NDIM];
  for (int i = 0; i < t->tuple.n; i++) {
    const tj_rx_expr_t *f = t->tuple.fields[i];
    if (f->kind != TJ_RX_PRIM_VALUE || !tj_dtype_is_int(f->prim_value.value->dtype))
      return tj_op_error("%s: shape must be a tuple of integers, entry %d is not", op, i);
    const tj_tir_expr_t *v = f->prim_value.value;
    int64_t c;
    if (tj_tir_is_const_int(v, &c)) {
      if (c < 0) return tj_op_error("%s: shape entry %d is %lld; extents must not be negative", op, i, (long long)c);
      if (v->dtype.bits != 64) v = tj_tir_i64(ctx->arena, c);
    }
    dims[i] = v;
  }
  const tj_rx_expr_t *e = tj_rx_shape_expr(ctx->arena, t->tuple.n, dims);
  e = e ? tj_rx_with_sinfo(ctx->arena, e, tj_sinfo_shape(ctx->arena, t->tuple.n, dims)) : NULL;
  if (!e) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  *arg = e;
  return NULL;
}

/* The result sinfo from a shape argument: its values when known, else its ndim. */
static tj_status_t *shape_result(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *shape, tj_dtype_t dt,
                                 const tj_sinfo_t **out) {
  const tj_sinfo_t *s = shape->sinfo;
  if (!s || s->kind != TJ_SINFO_SHAPE) return tj_op_error("%s: shape must be a shape such as (2, 3)", op);
  *out = tj_op_tensor_sinfo(ctx->arena, dt, s->shape.ndim, s->shape.values, NULL);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static tj_status_t *scalar_fill(const char *op, const tj_rx_expr_t *call, int i, const tj_sinfo_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, i, "fill_value", out));
  if ((*out)->tensor.ndim > 0)
    return tj_op_error("%s: fill_value must be a 0-d tensor (a scalar), got %d dimensions", op, (*out)->tensor.ndim);
  return NULL;
}

/* ---------------- full, ones, zeros ---------------- */

static tj_status_t *canonicalize_shape0_full(const tj_infer_ctx_t *ctx, int n, const tj_rx_expr_t **args) {
  (void)n;
  return canonical_shape_arg("full", ctx, &args[0]);
}
static tj_status_t *canonicalize_shape0_ones(const tj_infer_ctx_t *ctx, int n, const tj_rx_expr_t **args) {
  (void)n;
  return canonical_shape_arg("ones", ctx, &args[0]);
}
static tj_status_t *canonicalize_shape0_zeros(const tj_infer_ctx_t *ctx, int n, const tj_rx_expr_t **args) {
  (void)n;
  return canonical_shape_arg("zeros", ctx, &args[0]);
}

static tj_status_t *normalize_full(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("full", false, arena, given, out);
}

static tj_status_t *infer_full(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *fill = NULL;
  TJ_RETURN_IF_ERROR(scalar_fill("full", call, 1, &fill));
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "dtype");
  return shape_result("full", ctx, call->call.args[0], tj_dtype_is_void(dt) ? fill->tensor.dtype : dt, out);
}

static const char *const full_args[] = {"shape", "fill_value"};

const tj_op_def_t tj_op_full = {
    .name = "relax.full", .script_name = "R.full", .min_args = 2, .max_args = 2, .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_full, .infer = infer_full, .arg_names = full_args, .positional_attrs = dtype_attrs,
    .canonicalize_args = canonicalize_shape0_full,
};

static tj_status_t *normalize_ones(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("ones", true, arena, given, out);
}
static tj_status_t *normalize_zeros(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("zeros", true, arena, given, out);
}
static tj_status_t *infer_ones(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return shape_result("ones", ctx, call->call.args[0], tj_op_attr_dtype(call->call.attrs, "dtype"), out);
}
static tj_status_t *infer_zeros(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return shape_result("zeros", ctx, call->call.args[0], tj_op_attr_dtype(call->call.attrs, "dtype"), out);
}

static const char *const shape_args[] = {"shape"};

const tj_op_def_t tj_op_ones = {
    .name = "relax.ones", .script_name = "R.ones", .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_ones, .infer = infer_ones, .arg_names = shape_args, .positional_attrs = dtype_attrs,
    .canonicalize_args = canonicalize_shape0_ones,
};

const tj_op_def_t tj_op_zeros = {
    .name = "relax.zeros", .script_name = "R.zeros", .min_args = 1, .max_args = 1, .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_zeros, .infer = infer_zeros, .arg_names = shape_args, .positional_attrs = dtype_attrs,
    .canonicalize_args = canonicalize_shape0_zeros,
};

/* ---------------- full_like, ones_like, zeros_like ---------------- */

/* x's struct info with the dtype replaced when the attr names one. */
static tj_status_t *like_result(const char *op, const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "dtype");
  if (tj_dtype_is_void(dt)) return *out = x, NULL;
  *out = tj_op_tensor_sinfo(ctx->arena, dt, x->tensor.ndim, x->tensor.shape, x->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static tj_status_t *normalize_full_like(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("full_like", false, arena, given, out);
}
static tj_status_t *infer_full_like(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *fill = NULL;
  TJ_RETURN_IF_ERROR(scalar_fill("full_like", call, 1, &fill));
  return like_result("full_like", ctx, call, out);
}

static const char *const full_like_args[] = {"x", "fill_value"};

const tj_op_def_t tj_op_full_like = {
    .name = "relax.full_like", .script_name = "R.full_like", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_FOLLOW, .normalize_attrs = normalize_full_like, .infer = infer_full_like,
    .arg_names = full_like_args, .positional_attrs = dtype_attrs,
};

static tj_status_t *normalize_ones_like(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("ones_like", false, arena, given, out);
}
static tj_status_t *normalize_zeros_like(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("zeros_like", false, arena, given, out);
}
static tj_status_t *infer_ones_like(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return like_result("ones_like", ctx, call, out);
}
static tj_status_t *infer_zeros_like(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  return like_result("zeros_like", ctx, call, out);
}

static const char *const x_args[] = {"x"};

const tj_op_def_t tj_op_ones_like = {
    .name = "relax.ones_like", .script_name = "R.ones_like", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_ones_like, .infer = infer_ones_like,
    .arg_names = x_args, .positional_attrs = dtype_attrs,
};

const tj_op_def_t tj_op_zeros_like = {
    .name = "relax.zeros_like", .script_name = "R.zeros_like", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_zeros_like, .infer = infer_zeros_like,
    .arg_names = x_args, .positional_attrs = dtype_attrs,
};

/* ---------------- tril, triu ---------------- */

static tj_status_t *infer_trilu(const char *op, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "x", &x));
  if (x->tensor.ndim >= 0 && x->tensor.ndim < 2)
    return tj_op_error("%s: x must have at least 2 dimensions, got %d", op, x->tensor.ndim);
  if (call->call.n_args > 1) {
    const tj_sinfo_t *k = call->call.args[1]->sinfo;
    if (!k || k->kind != TJ_SINFO_PRIM || !tj_dtype_is_int(k->prim.dtype))
      return tj_op_error("%s: k must be an integer (the diagonal offset), e.g. k=1", op);
  }
  *out = x;
  return NULL;
}

static tj_status_t *infer_tril(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return infer_trilu("tril", call, out);
}
static tj_status_t *infer_triu(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return infer_trilu("triu", call, out);
}

static const char *const trilu_args[] = {"x", "k"};

const tj_op_def_t tj_op_tril = {
    .name = "relax.tril", .script_name = "R.tril", .min_args = 1, .max_args = 2, .mp_policy = TJ_MP_NEVER,
    .infer = infer_tril, .arg_names = trilu_args,
};

const tj_op_def_t tj_op_triu = {
    .name = "relax.triu", .script_name = "R.triu", .min_args = 1, .max_args = 2, .mp_policy = TJ_MP_NEVER,
    .infer = infer_triu, .arg_names = trilu_args,
};

/* ---------------- arange ---------------- */

/* R.arange(end), R.arange(start, end) and R.arange(start, end, step): the missing
 * values are start 0 and step 1. The dtype attr void means int64 when every value is an
 * integer, else float32 (the Python wrapper's rule). */
static tj_status_t *normalize_arange(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return normalize_dtype_attr("arange", false, arena, given, out);
}

static tj_status_t *arange_value(const tj_rx_expr_t *call, int i, const tj_tir_expr_t **out) {
  const tj_sinfo_t *s = call->call.args[i]->sinfo;
  static const char *const names[] = {"start", "end", "step"};
  if (!s || s->kind != TJ_SINFO_PRIM)
    return tj_op_error("arange: %s must be a number or R.prim_value", names[call->call.n_args == 1 ? 1 : i]);
  *out = s->prim.value;
  return NULL;
}

/* The (start, end, step) of a call, any of them NULL when unknown. */
static tj_status_t *arange_values(const tj_rx_expr_t *call, tj_arena_t *a, const tj_tir_expr_t **v) {
  int n = call->call.n_args;
  const tj_tir_expr_t *got[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++) TJ_RETURN_IF_ERROR(arange_value(call, i, &got[i]));
  v[0] = n == 1 ? tj_tir_i64(a, 0) : got[0];
  v[1] = n == 1 ? got[0] : got[1];
  v[2] = n == 3 ? got[2] : tj_tir_i64(a, 1);
  return NULL;
}

static tj_status_t *infer_arange(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_tir_expr_t *v[3];
  TJ_RETURN_IF_ERROR(arange_values(call, a, v));
  tj_dtype_t dt = tj_op_attr_dtype(call->call.attrs, "dtype");
  bool all_int = true;
  for (int i = 0; i < 3; i++) {
    const tj_sinfo_t *s = i < call->call.n_args ? call->call.args[i]->sinfo : NULL;
    if (s && !tj_dtype_is_int(s->prim.dtype)) all_int = false;
  }
  if (tj_dtype_is_void(dt)) dt = all_int ? TJ_I64 : TJ_F32;
  const tj_tir_expr_t *len = NULL;
  bool known = v[0] && v[1] && v[2];
  int64_t s0, s1, s2;
  if (known && tj_tir_is_const_int(v[0], &s0) && tj_tir_is_const_int(v[1], &s1) && tj_tir_is_const_int(v[2], &s2)) {
    if (s2 == 0) return tj_op_error("arange: step must not be 0");
    /* TVM's integer formula floordiv(end - start + step - 1, step) */
    int64_t num = s1 - s0 + s2 - 1, q = num / s2;
    if ((num % s2 != 0) && ((num < 0) != (s2 < 0))) q--;
    len = tj_tir_i64(a, q < 0 ? 0 : q);
  } else if (known && v[0]->kind != TJ_TIR_FLOAT_IMM && v[1]->kind != TJ_TIR_FLOAT_IMM &&
             v[2]->kind != TJ_TIR_FLOAT_IMM) {
    const tj_tir_expr_t *span = tj_tir_binary(a, TJ_TIR_SUB, v[1], v[0]);
    len = tj_op_simplify_dim(
        a, tj_tir_binary(a, TJ_TIR_FLOOR_DIV, tj_tir_binary(a, TJ_TIR_ADD, span, tj_tir_binary(a, TJ_TIR_SUB, v[2], tj_tir_i64(a, 1))),
                         v[2]));
  } else if (known && v[0]->kind == TJ_TIR_FLOAT_IMM && v[1]->kind == TJ_TIR_FLOAT_IMM &&
             v[2]->kind == TJ_TIR_FLOAT_IMM) {
    if (v[2]->float_imm == 0) return tj_op_error("arange: step must not be 0");
    double n = ceil((double)(float)(v[1]->float_imm - v[0]->float_imm) / v[2]->float_imm);
    len = tj_tir_i64(a, n < 0 ? 0 : (int64_t)n);
  }
  *out = tj_op_tensor_sinfo(a, dt, 1, len ? &len : NULL, NULL);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "arange: out of memory");
}

static const char *const arange_args[] = {"start", "end", "step"};

const tj_op_def_t tj_op_arange = {
    .name = "relax.arange", .script_name = "R.arange", .min_args = 1, .max_args = 3, .mp_policy = TJ_MP_FOLLOW,
    .normalize_attrs = normalize_arange, .infer = infer_arange, .arg_names = arange_args,
    .positional_attrs = NULL,
};
