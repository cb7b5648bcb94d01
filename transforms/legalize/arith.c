/* TIR arithmetic with TVM's constant folding (arith::TryConstFold) and dtype
 * matching (BinaryOpMatchTypes), so that legalized PrimFuncs have exactly the
 * expression shapes TOPI produces: `yy * 1 + ry` is `yy + ry`, `1.0f * 4 * 5` is
 * `T.float32(20)`, while float16 products such as `T.float16(4) * T.float16(5)`
 * stay unfolded (TVM folds floats only at 32 and 64 bits). */
#include <math.h>

#include "transforms/legalize/legalize.h"

static bool is_int_imm(const tj_tir_expr_t *e) { return e && e->kind == TJ_TIR_INT_IMM; }
static bool is_float_imm(const tj_tir_expr_t *e) { return e && e->kind == TJ_TIR_FLOAT_IMM; }

const tj_tir_expr_t *tj_lg_const(tj_arena_t *a, tj_dtype_t dtype, double value) {
  if (tj_dtype_is_floating(dtype)) return tj_tir_float(a, dtype, value);
  if (dtype.code == TJ_DT_BOOL) return tj_tir_int(a, dtype, value != 0);
  return tj_tir_int(a, dtype, (int64_t)value);
}

const tj_tir_expr_t *tj_lg_zero(tj_arena_t *a, tj_dtype_t dtype) { return tj_lg_const(a, dtype, 0); }

const tj_tir_expr_t *tj_lg_cast(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *x) {
  if (!x) return NULL;
  if (tj_dtype_eq(x->dtype, dtype)) return x;
  /* tvm::cast folds literals (make_const of the new type). */
  if (is_int_imm(x)) return tj_lg_const(a, dtype, (double)x->int_imm);
  if (is_float_imm(x)) {
    if (tj_dtype_is_floating(dtype)) return tj_tir_float(a, dtype, x->float_imm);
    return tj_lg_const(a, dtype, trunc(x->float_imm));
  }
  return tj_tir_cast(a, dtype, x);
}

/* BinaryOpMatchTypes: an int operand meeting a float one becomes float; otherwise
 * the narrower operand is widened. */
static void match_types(tj_arena_t *a, const tj_tir_expr_t **x, const tj_tir_expr_t **y) {
  tj_dtype_t dx = (*x)->dtype, dy = (*y)->dtype;
  if (tj_dtype_eq(dx, dy)) return;
  if (tj_dtype_is_floating(dx) && !tj_dtype_is_floating(dy)) {
    *y = tj_lg_cast(a, dx, *y);
  } else if (!tj_dtype_is_floating(dx) && tj_dtype_is_floating(dy)) {
    *x = tj_lg_cast(a, dy, *x);
  } else if (dx.bits < dy.bits) {
    *x = tj_lg_cast(a, dy, *x);
  } else {
    *y = tj_lg_cast(a, dx, *y);
  }
}

static bool float_foldable(tj_dtype_t d) { return d.bits == 32 || d.bits == 64; }

/* The result of folding a float operation, rounded as TVM does for float32. */
static const tj_tir_expr_t *fold_float(tj_arena_t *a, tj_dtype_t d, double v) {
  if (d.bits == 32) v = (double)(float)v;
  return tj_tir_float(a, d, v);
}

const tj_tir_expr_t *tj_lg_bin(tj_arena_t *a, tj_tir_expr_kind_t kind, const tj_tir_expr_t *x,
                               const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  return tj_tir_binary(a, kind, x, y);
}

const tj_tir_expr_t *tj_lg_add(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y)) return tj_tir_int(a, x->dtype, x->int_imm + y->int_imm);
  if (is_int_imm(x) && x->int_imm == 0) return y;
  if (is_int_imm(y) && y->int_imm == 0) return x;
  if (is_float_imm(x) && is_float_imm(y) && float_foldable(x->dtype))
    return fold_float(a, x->dtype, x->float_imm + y->float_imm);
  if (is_float_imm(x) && x->float_imm == 0) return y;
  if (is_float_imm(y) && y->float_imm == 0) return x;
  return tj_tir_binary(a, TJ_TIR_ADD, x, y);
}

const tj_tir_expr_t *tj_lg_sub(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y)) return tj_tir_int(a, x->dtype, x->int_imm - y->int_imm);
  if (is_int_imm(y) && y->int_imm == 0) return x;
  if (is_float_imm(x) && is_float_imm(y) && float_foldable(x->dtype))
    return fold_float(a, x->dtype, x->float_imm - y->float_imm);
  if (is_float_imm(y) && y->float_imm == 0) return x;
  return tj_tir_binary(a, TJ_TIR_SUB, x, y);
}

const tj_tir_expr_t *tj_lg_mul(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y)) return tj_tir_int(a, x->dtype, x->int_imm * y->int_imm);
  if (is_int_imm(x)) {
    if (x->int_imm == 1) return y;
    if (x->int_imm == 0) return x;
  }
  if (is_int_imm(y)) {
    if (y->int_imm == 1) return x;
    if (y->int_imm == 0) return y;
  }
  if (is_float_imm(x) && is_float_imm(y) && float_foldable(x->dtype))
    return fold_float(a, x->dtype, x->float_imm * y->float_imm);
  if (is_float_imm(x)) {
    if (x->float_imm == 1) return y;
    if (x->float_imm == 0) return x;
  }
  if (is_float_imm(y)) {
    if (y->float_imm == 1) return x;
    if (y->float_imm == 0) return y;
  }
  return tj_tir_binary(a, TJ_TIR_MUL, x, y);
}

/* Truncating division for ints (TVM's Div), true division for floats. */
const tj_tir_expr_t *tj_lg_div(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y) && y->int_imm != 0) return tj_tir_int(a, x->dtype, x->int_imm / y->int_imm);
  if (is_int_imm(x) && x->int_imm == 0) return x;
  if (is_int_imm(y) && y->int_imm == 1) return x;
  if (is_float_imm(x) && is_float_imm(y) && y->float_imm != 0 && float_foldable(x->dtype))
    return fold_float(a, x->dtype, x->float_imm / y->float_imm);
  if (is_float_imm(x) && x->float_imm == 0) return x;
  if (is_float_imm(y) && y->float_imm == 1) return x;
  return tj_tir_binary(a, TJ_TIR_DIV, x, y);
}

static int64_t floordiv_i(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

const tj_tir_expr_t *tj_lg_floordiv(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y) && y->int_imm != 0) return tj_tir_int(a, x->dtype, floordiv_i(x->int_imm, y->int_imm));
  if (is_int_imm(x) && x->int_imm == 0) return x;
  if (is_int_imm(y) && y->int_imm == 1) return x;
  return tj_tir_binary(a, TJ_TIR_FLOOR_DIV, x, y);
}

const tj_tir_expr_t *tj_lg_floormod(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  match_types(a, &x, &y);
  if (is_int_imm(x) && is_int_imm(y) && y->int_imm != 0)
    return tj_tir_int(a, x->dtype, x->int_imm - floordiv_i(x->int_imm, y->int_imm) * y->int_imm);
  if (is_int_imm(x) && x->int_imm == 0) return x;
  if (is_int_imm(y) && y->int_imm == 1) return tj_tir_int(a, x->dtype, 0);
  return tj_tir_binary(a, TJ_TIR_FLOOR_MOD, x, y);
}

const tj_tir_expr_t *tj_lg_call1(tj_arena_t *a, const char *op, const tj_tir_expr_t *x) {
  if (!x) return NULL;
  return tj_tir_call(a, x->dtype, op, 1, &x);
}

const tj_tir_expr_t *tj_lg_load(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx) {
  for (int i = 0; i < n; i++)
    if (!idx[i]) return NULL;
  return tj_tir_load(a, b, n, idx);
}

const tj_tir_stmt_t *tj_lg_store(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx,
                                 const tj_tir_expr_t *value) {
  for (int i = 0; i < n; i++)
    if (!idx[i]) return NULL;
  return tj_tir_store(a, b, n, idx, value);
}

/* topi's RavelIndex over the output shape, then UnravelIndex over the input shape
 * (innermost first: idx % s, then idx // s), with tvm's operator folding. */
void tj_lg_reshape_index(tj_arena_t *a, int n_out, const tj_tir_expr_t *const *iv, const tj_tir_expr_t *const *out_shape,
                         int n_in, const tj_tir_expr_t *const *in_shape, const tj_tir_expr_t **out_idx) {
  const tj_tir_expr_t *flat = n_out > 0 ? iv[0] : tj_tir_i64(a, 0);
  for (int d = 1; d < n_out; d++) flat = tj_lg_add(a, tj_lg_mul(a, flat, out_shape[d]), iv[d]);
  for (int d = n_in - 1; d >= 0; d--) {
    out_idx[d] = tj_lg_floormod(a, flat, in_shape[d]);
    flat = tj_lg_floordiv(a, flat, in_shape[d]);
  }
}
