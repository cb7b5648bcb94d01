/* TIR expressions of the TVMScript reader: literals, operators with TVM's type matching
 * and constant folding (src/tir/op/op.cc, python/tvm/script/parser/tir/operation.py),
 * buffer loads and T.* intrinsics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse_ir.h"

static tj_val_t make_prim(tj_src_pos_t pos, const tj_tir_expr_t *e) {
  tj_val_t v = tj_val_make(V_PRIM, pos);
  v.prim = e;
  return v;
}

static bool is_literal(const tj_val_t *v) { return v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL; }

tj_dtype_t tj_val_dtype(tj_pctx_t *c, const tj_val_t *v) {
  const char *name = NULL;
  if (v->kind == V_STR) name = v->s;
  else if (v->kind == V_FUNC && strncmp(v->s, "T.", 2) == 0) name = v->s + 2;
  else if (v->kind == V_FUNC && strncmp(v->s, "R.", 2) == 0) name = v->s + 2;
  tj_dtype_t d;
  if (name && !strcmp(name, "handle")) return TJ_HANDLE;
  if (!name || !tj_dtype_parse(name, &d)) tj_parse_fail(c->src, v->pos, "expected a data type such as \"float32\"");
  return d;
}

/* TVM's make_const: a literal of the given dtype. */
static const tj_tir_expr_t *make_const(tj_pctx_t *c, tj_dtype_t dt, const tj_val_t *v) {
  double f = v->kind == V_FLOAT ? v->f : (double)v->i;
  if (tj_dtype_is_floating(dt)) return TJ_CHK(c, tj_tir_float(c->arena, dt, f));
  if (dt.code == TJ_DT_BOOL) return TJ_CHK(c, tj_tir_bool(c->arena, f != 0));
  if (tj_dtype_is_int(dt)) {
    /* -2^63 <= f < 2^63, written so that NaN fails too: converting anything else is UB. */
    if (v->kind == V_FLOAT && !(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
      tj_parse_fail(c->src, v->pos, "%g does not fit in a 64-bit integer; write an integer literal", f);
    return TJ_CHK(c, tj_tir_int(c->arena, dt, v->kind == V_FLOAT ? (int64_t)f : v->i));
  }
  tj_parse_fail(c->src, v->pos, "cannot make a literal of this data type");
}

const tj_tir_expr_t *tj_tir_as_expr(tj_pctx_t *c, const tj_val_t *v) {
  switch (v->kind) {
    case V_PRIM: return v->prim;
    case V_INT: return make_const(c, (v->i > INT32_MAX || v->i < INT32_MIN) ? TJ_I64 : TJ_I32, v);
    case V_FLOAT: return make_const(c, TJ_F32, v);
    case V_BOOL: return TJ_CHK(c, tj_tir_bool(c->arena, v->i != 0));
    case V_STR: return TJ_CHK(c, tj_tir_string(c->arena, v->s));
    default: tj_parse_fail(c->src, v->pos, "expected a TIR expression, found %s", tj_val_kind_name(v->kind));
  }
}

const tj_tir_expr_t *tj_tir_as_typed(tj_pctx_t *c, const tj_val_t *v, tj_dtype_t dtype) {
  if (is_literal(v)) return make_const(c, dtype, v);
  return tj_tir_as_expr(c, v);
}

/* TVM's cast(): folds literals, otherwise a Cast node (none when the dtype matches). */
static const tj_tir_expr_t *fold_cast(tj_pctx_t *c, tj_dtype_t dt, const tj_tir_expr_t *e) {
  if (tj_dtype_eq(e->dtype, dt)) return e;
  if (e->kind == TJ_TIR_INT_IMM) {
    tj_val_t v = tj_val_make(V_INT, (tj_src_pos_t){0, 0, 0});
    v.i = e->int_imm;
    return make_const(c, dt, &v);
  }
  if (e->kind == TJ_TIR_FLOAT_IMM) {
    tj_val_t v = tj_val_make(V_FLOAT, (tj_src_pos_t){0, 0, 0});
    v.f = e->float_imm;
    return make_const(c, dt, &v);
  }
  return TJ_CHK(c, tj_tir_cast(c->arena, dt, e));
}

/* BinaryOpMatchTypes (src/tir/op/op.cc). */
static void match_types(tj_pctx_t *c, tj_src_pos_t pos, const tj_tir_expr_t **a, const tj_tir_expr_t **b) {
  tj_dtype_t l = (*a)->dtype, r = (*b)->dtype;
  if (tj_dtype_eq(l, r)) return;
  if (l.lanes != r.lanes) tj_parse_fail(c->src, pos, "operands have different vector lanes");
  bool lf = tj_dtype_is_floating(l), rf = tj_dtype_is_floating(r);
  bool li = tj_dtype_is_int(l) || l.code == TJ_DT_BOOL, ri = tj_dtype_is_int(r) || r.code == TJ_DT_BOOL;
  if (lf && rf) {
    if (l.bits < r.bits) *a = fold_cast(c, r, *a);
    else *b = fold_cast(c, l, *b);
  } else if (!lf && rf) {
    *a = fold_cast(c, r, *a);
  } else if (lf && !rf) {
    *b = fold_cast(c, l, *b);
  } else if (li && ri) {
    if (l.bits < r.bits || (l.bits == r.bits && l.code != TJ_DT_UINT && r.code == TJ_DT_UINT)) *a = fold_cast(c, r, *a);
    else *b = fold_cast(c, l, *b);
  } else {
    tj_parse_fail(c->src, pos, "cannot combine operands of these data types");
  }
}

static bool const_int(const tj_tir_expr_t *e, int64_t *v) {
  if (e->kind != TJ_TIR_INT_IMM) return false;
  *v = e->int_imm;
  return true;
}
static bool const_num(const tj_tir_expr_t *e, double *v) {
  if (e->kind == TJ_TIR_INT_IMM) *v = (double)e->int_imm;
  else if (e->kind == TJ_TIR_FLOAT_IMM) *v = e->float_imm;
  else return false;
  return true;
}

static int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t floormod_i(int64_t a, int64_t b) { return a - floordiv_i(a, b) * b; }

/* Both operands constant: the folded value, or NULL when TVM would not fold. */
static const tj_tir_expr_t *fold_consts(tj_pctx_t *c, tj_tir_expr_kind_t k, const tj_tir_expr_t *a,
                                        const tj_tir_expr_t *b) {
  int64_t x = 0, y = 0;
  double fx = 0, fy = 0;
  bool ints = const_int(a, &x) && const_int(b, &y);
  if (!ints && !(a->kind == TJ_TIR_FLOAT_IMM && b->kind == TJ_TIR_FLOAT_IMM)) return NULL;
  const_num(a, &fx);
  const_num(b, &fy);
  tj_dtype_t dt = a->dtype;
  if (tj_tir_kind_is_compare(k)) {
    bool r = k == TJ_TIR_EQ ? fx == fy : k == TJ_TIR_NE ? fx != fy : k == TJ_TIR_LT ? fx < fy
           : k == TJ_TIR_LE ? fx <= fy : k == TJ_TIR_GT ? fx > fy : fx >= fy;
    if (ints) r = k == TJ_TIR_EQ ? x == y : k == TJ_TIR_NE ? x != y : k == TJ_TIR_LT ? x < y
                : k == TJ_TIR_LE ? x <= y : k == TJ_TIR_GT ? x > y : x >= y;
    return TJ_CHK(c, tj_tir_bool(c->arena, r));
  }
  if (ints) {
    int64_t r;
    switch (k) {
      case TJ_TIR_ADD: r = x + y; break;
      case TJ_TIR_SUB: r = x - y; break;
      case TJ_TIR_MUL: r = x * y; break;
      case TJ_TIR_DIV: if (!y) return NULL; r = x / y; break;
      case TJ_TIR_MOD: if (!y) return NULL; r = x % y; break;
      case TJ_TIR_FLOOR_DIV: if (!y) return NULL; r = floordiv_i(x, y); break;
      case TJ_TIR_FLOOR_MOD: if (!y) return NULL; r = floormod_i(x, y); break;
      case TJ_TIR_MIN: r = x < y ? x : y; break;
      case TJ_TIR_MAX: r = x > y ? x : y; break;
      default: return NULL;
    }
    return TJ_CHK(c, tj_tir_int(c->arena, dt, r));
  }
  double r;
  /* const_fold.h folds float arithmetic only for 32 and 64 bits (float16 stays a node) */
  bool arith_ok = dt.bits == 32 || dt.bits == 64;
  if (dt.bits == 32) fx = (float)fx, fy = (float)fy;
  switch (k) {
    case TJ_TIR_ADD: if (!arith_ok) return NULL; r = fx + fy; break;
    case TJ_TIR_SUB: if (!arith_ok) return NULL; r = fx - fy; break;
    case TJ_TIR_MUL: if (!arith_ok) return NULL; r = fx * fy; break;
    case TJ_TIR_DIV: if (!arith_ok || fy == 0) return NULL; r = fx / fy; break;
    case TJ_TIR_MIN: r = fx < fy ? fx : fy; break;
    case TJ_TIR_MAX: r = fx > fy ? fx : fy; break;
    default: return NULL;
  }
  if (dt.bits == 32) r = (float)r;
  return TJ_CHK(c, tj_tir_float(c->arena, dt, r));
}

static bool is_const_value(const tj_tir_expr_t *e, double v) {
  double x;
  return const_num(e, &x) && x == v;
}

/* arith::TryConstFold's identities (x + 0, x * 1, ...). */
static const tj_tir_expr_t *fold_identity(tj_pctx_t *c, tj_tir_expr_kind_t k, const tj_tir_expr_t *a,
                                          const tj_tir_expr_t *b) {
  switch (k) {
    case TJ_TIR_ADD:
      if (is_const_value(a, 0)) return b;
      if (is_const_value(b, 0)) return a;
      return NULL;
    case TJ_TIR_SUB: return is_const_value(b, 0) ? a : NULL;
    case TJ_TIR_MUL:
      if (is_const_value(a, 1)) return b;
      if (is_const_value(b, 1)) return a;
      if (is_const_value(a, 0)) return a;
      if (is_const_value(b, 0)) return b;
      return NULL;
    case TJ_TIR_DIV: case TJ_TIR_FLOOR_DIV:
      if (is_const_value(a, 0)) return a;
      return is_const_value(b, 1) ? a : NULL;
    case TJ_TIR_MOD: case TJ_TIR_FLOOR_MOD:
      if (is_const_value(a, 0)) return a;
      return is_const_value(b, 1) ? TJ_CHK(c, tj_tir_int(c->arena, a->dtype, 0)) : NULL;
    default: return NULL;
  }
}

/* Python-literal arithmetic (shapes such as `n * 2` on plain ints stay plain ints). */
static bool literal_binop(tj_pctx_t *c, tj_src_pos_t pos, const char *op, const tj_val_t *a, const tj_val_t *b,
                          tj_val_t *out) {
  if (!is_literal(a) || !is_literal(b)) return false;
  bool fl = a->kind == V_FLOAT || b->kind == V_FLOAT;
  double x = a->kind == V_FLOAT ? a->f : (double)a->i, y = b->kind == V_FLOAT ? b->f : (double)b->i;
  int64_t i = a->i, j = b->i;
  *out = tj_val_make(fl ? V_FLOAT : V_INT, pos);
  /* Python's integers do not overflow; TVM's int64 constants do: say so instead. */
  bool overflow = false;
  if (!strcmp(op, "+")) fl ? (out->f = x + y) : (overflow = __builtin_add_overflow(i, j, &out->i));
  else if (!strcmp(op, "-")) fl ? (out->f = x - y) : (overflow = __builtin_sub_overflow(i, j, &out->i));
  else if (!strcmp(op, "*")) fl ? (out->f = x * y) : (overflow = __builtin_mul_overflow(i, j, &out->i));
  else if (!strcmp(op, "/")) {
    if (y == 0) tj_parse_fail(c->src, pos, "division by zero");
    out->kind = V_FLOAT;
    out->f = x / y;
  } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
    if (y == 0) tj_parse_fail(c->src, pos, "division by zero");
    if (fl) out->f = !strcmp(op, "//") ? floor(x / y) : x - floor(x / y) * y;
    else if (i == INT64_MIN && j == -1) overflow = true;
    else out->i = !strcmp(op, "//") ? floordiv_i(i, j) : floormod_i(i, j);
  } else if (!strcmp(op, "**")) {
    out->kind = fl || j < 0 ? V_FLOAT : V_INT;
    if (out->kind == V_FLOAT) out->f = pow(x, y);
    else {
      /* |i| >= 2 overflows within 63 steps; 0, 1 and -1 have closed forms. */
      if (i == 0 || i == 1) out->i = j == 0 ? 1 : i;
      else if (i == -1) out->i = j % 2 ? -1 : 1;
      else
        for (out->i = 1; j-- > 0 && !overflow;) overflow = __builtin_mul_overflow(out->i, i, &out->i);
    }
  } else {
    return false;
  }
  if (overflow)
    tj_parse_fail(c->src, pos, "integer arithmetic '%s' on literals overflows int64: use smaller values", op);
  return true;
}

static const tj_tir_expr_t *broadcast_literal(tj_pctx_t *c, const tj_val_t *lit, const tj_val_t *other);

const tj_tir_expr_t *tj_tir_binop(tj_pctx_t *c, tj_src_pos_t pos, tj_tir_expr_kind_t kind, tj_val_t va,
                                  tj_val_t vb) {
  /* a Python literal takes the other operand's dtype (x_f16 * 2.0 stays float16) */
  const tj_tir_expr_t *a = broadcast_literal(c, &va, &vb), *b = broadcast_literal(c, &vb, &va);
  if (a->dtype.code == TJ_DT_HANDLE || b->dtype.code == TJ_DT_HANDLE)
    tj_parse_fail(c->src, pos, "arithmetic on a handle");
  if ((kind == TJ_TIR_FLOOR_DIV || kind == TJ_TIR_FLOOR_MOD) && (!tj_dtype_is_int(a->dtype) || !tj_dtype_is_int(b->dtype)))
    tj_parse_fail(c->src, pos, "floor division and modulo need integer operands");
  match_types(c, pos, &a, &b);
  const tj_tir_expr_t *r = fold_consts(c, kind, a, b);
  if (!r) r = fold_identity(c, kind, a, b);
  return r ? r : TJ_CHK(c, tj_tir_binary(c->arena, kind, a, b));
}

/* Comparisons and and/or in TVMScript: a literal takes the other side's dtype, then the
 * node is built directly (no folding), as python/tvm/script/parser/tir/operation.py. */
static const tj_tir_expr_t *broadcast_literal(tj_pctx_t *c, const tj_val_t *lit, const tj_val_t *other) {
  if (!is_literal(lit) || is_literal(other)) return tj_tir_as_expr(c, lit);
  const tj_tir_expr_t *o = tj_tir_as_expr(c, other);
  tj_dtype_t dt = tj_dtype_element(o->dtype);
  if (lit->kind == V_FLOAT && !tj_dtype_is_floating(dt)) dt = TJ_F32;
  return make_const(c, dt, lit);
}

static const tj_tir_expr_t *compare(tj_pctx_t *c, tj_src_pos_t pos, tj_tir_expr_kind_t k, const tj_val_t *a,
                                    const tj_val_t *b) {
  const tj_tir_expr_t *x = broadcast_literal(c, a, b), *y = broadcast_literal(c, b, a);
  if (!tj_dtype_eq(x->dtype, y->dtype)) match_types(c, pos, &x, &y);
  return TJ_CHK(c, tj_tir_binary(c->arena, k, x, y));
}

static const tj_tir_expr_t *as_bool(tj_pctx_t *c, const tj_val_t *v) {
  const tj_tir_expr_t *e = tj_tir_as_expr(c, v);
  if (e->dtype.code != TJ_DT_BOOL) tj_parse_fail(c->src, v->pos, "expected a boolean expression");
  return e;
}

static tj_val_t eval_binop(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t a = tj_tir_eval(c, e->a), b = tj_tir_eval(c, e->b);
  tj_val_t lit;
  if (literal_binop(c, e->pos, e->s, &a, &b, &lit)) return lit;
  static const struct { const char *op; tj_tir_expr_kind_t k; } ops[] = {
      {"+", TJ_TIR_ADD}, {"-", TJ_TIR_SUB}, {"*", TJ_TIR_MUL}, {"/", TJ_TIR_DIV},
      {"//", TJ_TIR_FLOOR_DIV}, {"%", TJ_TIR_FLOOR_MOD}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (strcmp(e->s, ops[i].op)) continue;
    if (ops[i].k == TJ_TIR_DIV) {
      const tj_tir_expr_t *x = tj_tir_as_expr(c, &a), *y = tj_tir_as_expr(c, &b);
      if (tj_dtype_is_int(x->dtype) && tj_dtype_is_int(y->dtype))
        tj_parse_fail(c->src, e->pos, "'/' on integers is ambiguous in TIR: use '//' (floor division) or T.truncdiv");
    }
    return make_prim(e->pos, tj_tir_binop(c, e->pos, ops[i].k, a, b));
  }
  tj_parse_fail(c->src, e->pos, "operator '%s' is not supported in TIR", e->s);
}

static tj_val_t eval_unary(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t a = tj_tir_eval(c, e->a);
  if (!strcmp(e->s, "not")) {
    if (is_literal(&a)) {
      tj_val_t r = tj_val_make(V_BOOL, e->pos);
      r.i = a.kind == V_FLOAT ? a.f == 0 : a.i == 0;
      return r;
    }
    return make_prim(e->pos, TJ_CHK(c, tj_tir_not(c->arena, as_bool(c, &a))));
  }
  if (!strcmp(e->s, "+")) return a;
  if (strcmp(e->s, "-")) tj_parse_fail(c->src, e->pos, "operator '%s' is not supported in TIR", e->s);
  if (a.kind == V_INT || a.kind == V_BOOL) {
    a.kind = V_INT;
    a.i = -a.i;
    return a;
  }
  if (a.kind == V_FLOAT) {
    a.f = -a.f;
    return a;
  }
  const tj_tir_expr_t *x = tj_tir_as_expr(c, &a);
  if (x->kind == TJ_TIR_INT_IMM) return make_prim(e->pos, TJ_CHK(c, tj_tir_int(c->arena, x->dtype, -x->int_imm)));
  if (x->kind == TJ_TIR_FLOAT_IMM) return make_prim(e->pos, TJ_CHK(c, tj_tir_float(c->arena, x->dtype, -x->float_imm)));
  /* ExprOp.__neg__: x * const(-1, x.dtype) */
  tj_val_t m1 = tj_val_make(V_INT, e->pos);
  m1.i = -1;
  return make_prim(e->pos, tj_tir_binop(c, e->pos, TJ_TIR_MUL, a, make_prim(e->pos, make_const(c, x->dtype, &m1))));
}

static tj_val_t eval_compare(tj_pctx_t *c, const tj_py_t *e) {
  static const struct { const char *op; tj_tir_expr_kind_t k; } ops[] = {
      {"==", TJ_TIR_EQ}, {"!=", TJ_TIR_NE}, {"<", TJ_TIR_LT}, {"<=", TJ_TIR_LE}, {">", TJ_TIR_GT}, {">=", TJ_TIR_GE}};
  /* a < b < c is (a < b) and (b < c): pairs of literals fold to a constant (a false one
   * makes the whole chain False), the others are and-ed. */
  const tj_tir_expr_t *acc = NULL;
  bool literal_pairs_true = true;
  tj_val_t left = tj_tir_eval(c, e->items[0]);
  for (int i = 1; i < e->n; i++) {
    tj_val_t right = tj_tir_eval(c, e->items[i]);
    tj_tir_expr_kind_t k = TJ_TIR_EQ;
    bool found = false;
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++)
      if (!strcmp(e->kw[i - 1], ops[j].op)) k = ops[j].k, found = true;
    if (!found) tj_parse_fail(c->src, e->pos, "comparison '%s' is not supported in TIR", e->kw[i - 1]);
    if (is_literal(&left) && is_literal(&right)) {
      tj_val_t l2 = left, r2 = right;
      l2.kind = r2.kind = V_FLOAT;
      l2.f = left.kind == V_FLOAT ? left.f : (double)left.i;
      r2.f = right.kind == V_FLOAT ? right.f : (double)right.i;
      const tj_tir_expr_t *f = fold_consts(c, k, make_const(c, TJ_F64, &l2), make_const(c, TJ_F64, &r2));
      literal_pairs_true = literal_pairs_true && f->int_imm;
      left = right;
      continue;
    }
    const tj_tir_expr_t *cmp = compare(c, e->pos, k, &left, &right);
    acc = acc ? TJ_CHK(c, tj_tir_binary(c->arena, TJ_TIR_AND, acc, cmp)) : cmp;
    left = right;
  }
  if (acc && literal_pairs_true) return make_prim(e->pos, acc);
  tj_val_t b = tj_val_make(V_BOOL, e->pos);
  b.i = literal_pairs_true;
  return b;
}

static tj_val_t eval_boolop(tj_pctx_t *c, const tj_py_t *e) {
  bool is_and = !strcmp(e->s, "and");
  tj_val_t acc = tj_tir_eval(c, e->items[0]);
  for (int i = 1; i < e->n; i++) {
    tj_val_t b = tj_tir_eval(c, e->items[i]);
    if (acc.kind == V_BOOL && b.kind == V_BOOL) {
      acc.i = is_and ? (acc.i && b.i) : (acc.i || b.i);
      continue;
    }
    const tj_tir_expr_t *x = as_bool(c, &acc), *y = as_bool(c, &b);
    acc = make_prim(e->pos, TJ_CHK(c, tj_tir_binary(c->arena, is_and ? TJ_TIR_AND : TJ_TIR_OR, x, y)));
  }
  return acc;
}

/* ---- buffer loads and sequences ---- */

static tj_val_t eval_subscript(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t base = tj_tir_eval(c, e->a);
  if (base.kind == V_SEQ) {
    if (e->n != 1) tj_parse_fail(c->src, e->pos, "a tuple takes one index");
    tj_val_t idx = tj_tir_eval(c, e->items[0]);
    if (idx.kind != V_INT) tj_parse_fail(c->src, idx.pos, "expected a constant integer index");
    int64_t i = idx.i < 0 ? idx.i + base.n : idx.i;
    if (i < 0 || i >= base.n) tj_parse_fail(c->src, idx.pos, "index %lld out of range (size %d)", (long long)idx.i, base.n);
    return base.items[i];
  }
  if (base.kind != V_BUFFER) tj_parse_fail(c->src, e->pos, "only buffers and tuples can be indexed here");
  const tj_buffer_t *buf = base.buf;
  if (e->n != buf->ndim)
    tj_parse_fail(c->src, e->pos, "buffer '%s' has %d dimensions but %d indices are given", buf->name, buf->ndim, e->n);
  bool sliced = false;
  for (int i = 0; i < e->n; i++) sliced |= e->items[i]->kind == PY_SLICE;
  const tj_tir_expr_t **idx = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(e->n + 1)));
  tj_range_t *ranges = sliced ? TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_range_t) * (size_t)(e->n + 1))) : NULL;
  for (int i = 0; i < e->n; i++) {
    const tj_py_t *it = e->items[i];
    if (it->kind == PY_SLICE) {
      if (it->c) tj_parse_fail(c->src, it->pos, "slices with a step are not supported");
      tj_val_t lo = it->a ? tj_tir_eval(c, it->a) : tj_val_make(V_INT, it->pos);
      tj_val_t hi = it->b ? tj_tir_eval(c, it->b) : make_prim(it->pos, buf->shape[i]);
      tj_val_t ext;
      if (!literal_binop(c, it->pos, "-", &hi, &lo, &ext)) ext = make_prim(it->pos, tj_tir_binop(c, it->pos, TJ_TIR_SUB, hi, lo));
      ranges[i].min = tj_tir_as_expr(c, &lo);
      ranges[i].extent = tj_tir_as_expr(c, &ext);
    } else {
      tj_val_t v = tj_tir_eval(c, it);
      idx[i] = tj_tir_as_expr(c, &v);
      if (sliced) {
        ranges[i].min = idx[i];
        ranges[i].extent = TJ_CHK(c, tj_tir_int(c->arena, idx[i]->dtype, 1));
      }
    }
  }
  if (sliced) {
    tj_buffer_region_t *r = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *r));
    r->buffer = buf;
    r->ndim = e->n;
    r->ranges = ranges;
    tj_val_t v = tj_val_make(V_REGION, e->pos);
    v.region = r;
    return v;
  }
  return make_prim(e->pos, TJ_CHK(c, tj_tir_load(c->arena, buf, e->n, idx)));
}

/* math.inf, math.nan, math.pi, math.e: the Python module's float constants. */
static tj_val_t math_constant(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t f = tj_val_make(V_FLOAT, e->pos);
  if (!strcmp(e->s, "inf")) f.f = INFINITY;
  else if (!strcmp(e->s, "nan")) f.f = NAN;
  else if (!strcmp(e->s, "pi")) f.f = 3.14159265358979323846;
  else if (!strcmp(e->s, "e")) f.f = 2.71828182845904523536;
  else tj_parse_fail(c->src, e->pos, "math.%s is not supported (math.inf, math.nan, math.pi and math.e are)", e->s);
  return f;
}

static tj_val_t eval_attr(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t base = tj_tir_eval(c, e->a);
  if (base.kind == V_FUNC && !strcmp(base.s, "math")) return math_constant(c, e);
  if (base.kind == V_FUNC) {
    tj_val_t f = tj_val_make(V_FUNC, e->pos);
    f.s = TJ_CHK(c, tj_arena_printf(c->src->scratch, "%s.%s", base.s, e->s));
    return f;
  }
  if (base.kind == V_BUFFER) {
    const tj_buffer_t *b = base.buf;
    if (!strcmp(e->s, "shape")) {
      tj_val_t *items = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)(b->ndim + 1)));
      for (int i = 0; i < b->ndim; i++) items[i] = make_prim(e->pos, b->shape[i]);
      tj_val_t v = tj_val_make(V_SEQ, e->pos);
      v.n = b->ndim;
      v.items = items;
      v.is_tuple = true;
      return v;
    }
    if (!strcmp(e->s, "data")) return make_prim(e->pos, b->data);
    if (!strcmp(e->s, "dtype")) {
      char buf[TJ_DTYPE_BUFSIZE];
      tj_val_t v = tj_val_make(V_STR, e->pos);
      v.s = TJ_CHK(c, tj_arena_strdup(c->src->scratch, tj_dtype_str(b->dtype, buf)));
      return v;
    }
    if (!strcmp(e->s, "ndim")) {
      tj_val_t v = tj_val_make(V_INT, e->pos);
      v.i = b->ndim;
      return v;
    }
    tj_parse_fail(c->src, e->pos, "buffer has no attribute '%s' (expected shape, dtype, data or ndim)", e->s);
  }
  if (base.kind == V_MODULE) {
    tj_pfunc_t *f = tj_pctx_find_func(c, e->s);
    if (!f) tj_parse_fail(c->src, e->pos, "module '%s' has no function '%s'", c->class_name ? c->class_name : "?", e->s);
    tj_val_t v = tj_val_make(V_RX, e->pos);
    v.rx = TJ_CHK(c, tj_rx_global_var(c->arena, f->name));
    return v;
  }
  tj_parse_fail(c->src, e->pos, "'%s' has no attribute '%s'", tj_val_kind_name(base.kind), e->s);
}

/* ---- T.* calls ---- */

typedef struct callargs {
  int n;
  tj_val_t *v;
} callargs_t;

/* Positional arguments, with *seq expanded (T.grid(*A.shape)). */
static callargs_t eval_args(tj_pctx_t *c, const tj_py_t *call) {
  tj_ptrvec_t vals = {0};
  for (int i = 0; i < call->n; i++) {
    const tj_py_t *a = call->items[i];
    if (a->kind == PY_STARRED) {
      tj_val_t s = tj_tir_eval(c, a->a);
      if (s.kind != V_SEQ) tj_parse_fail(c->src, a->pos, "only a tuple or list can be unpacked with '*'");
      for (int k = 0; k < s.n; k++) {
        tj_val_t *p = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t)));
        *p = s.items[k];
        tj_ptrvec_push(c->src, &vals, p);
      }
    } else {
      tj_val_t *p = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t)));
      *p = tj_tir_eval(c, a);
      tj_ptrvec_push(c->src, &vals, p);
    }
  }
  callargs_t r = {vals.n, TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)(vals.n + 1)))};
  for (int i = 0; i < vals.n; i++) r.v[i] = *(const tj_val_t *)vals.items[i];
  return r;
}

static void want_args(tj_pctx_t *c, const tj_py_t *call, const char *name, const callargs_t *a, int lo, int hi) {
  if (a->n < lo || a->n > hi) {
    if (lo == hi) tj_parse_fail(c->src, call->pos, "%s expects %d argument%s, got %d", name, lo, lo == 1 ? "" : "s", a->n);
    tj_parse_fail(c->src, call->pos, "%s expects %d to %d arguments, got %d", name, lo, hi, a->n);
  }
}

static const char *const unary_math[] = {"exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
                                         "tanh", "sigmoid", "sin", "cos", "tan", "sinh", "cosh", "asin", "acos",
                                         "atan", "erf", "floor", "ceil", "round", "trunc", "fabs", "nearbyint",
                                         "isnan", "isinf", "isfinite", "popcount", "asinh", "acosh", "atanh",
                                         "bitwise_not", NULL};

static tj_val_t call_math(tj_pctx_t *c, const tj_py_t *call, const char *name, callargs_t *a) {
  want_args(c, call, name, a, 1, 1);
  const tj_tir_expr_t *x = tj_tir_as_expr(c, &a->v[0]);
  tj_dtype_t dt = x->dtype;
  if (!strncmp(name + 2, "is", 2)) dt = TJ_BOOL;
  const char *op = TJ_CHK(c, tj_arena_printf(c->src->scratch, "tir.%s", name + 2));
  return make_prim(call->pos, TJ_CHK(c, tj_tir_call(c->arena, dt, op, 1, &x)));
}

bool tj_parse_special_float(const char *s, double *out) {
  if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "infinity")) *out = INFINITY;
  else if (!strcmp(s, "-inf") || !strcmp(s, "-infinity")) *out = -INFINITY;
  else if (!strcmp(s, "nan")) *out = NAN;
  else return false;
  return true;
}

static tj_val_t call_typed_literal(tj_pctx_t *c, const tj_py_t *call, tj_dtype_t dt, callargs_t *a) {
  if (a->n == 0) { /* T.int64(): a fresh symbolic variable, named by the assignment */
    return make_prim(call->pos, TJ_CHK(c, tj_tir_var(c->arena, "v", dt)));
  }
  want_args(c, call, "a typed literal", a, 1, 1);
  tj_val_t *v = &a->v[0];
  if (v->kind == V_STR) {
    tj_val_t f = tj_val_make(V_FLOAT, v->pos);
    if (!tj_parse_special_float(v->s, &f.f)) tj_parse_fail(c->src, v->pos, "expected a number");
    return make_prim(call->pos, make_const(c, dt, &f));
  }
  if (is_literal(v)) return make_prim(call->pos, make_const(c, dt, v));
  return make_prim(call->pos, fold_cast(c, dt, tj_tir_as_expr(c, v)));
}

/* float("inf"), float("-inf"), float("nan") or float(number), as Python. */
static tj_val_t call_float(tj_pctx_t *c, const tj_py_t *call, callargs_t *a) {
  want_args(c, call, "float", a, 1, 1);
  tj_val_t *v = &a->v[0], f = tj_val_make(V_FLOAT, call->pos);
  if (v->kind == V_FLOAT) f.f = v->f;
  else if (v->kind == V_INT || v->kind == V_BOOL) f.f = (double)v->i;
  else if (v->kind == V_STR && tj_parse_special_float(v->s, &f.f)) return f;
  else tj_parse_fail(c->src, v->pos, "float() takes a number or \"inf\", \"-inf\", \"nan\"");
  return f;
}

static tj_val_t call_if_then_else(tj_pctx_t *c, const tj_py_t *call, callargs_t *a) {
  want_args(c, call, "T.if_then_else", a, 3, 3);
  const tj_tir_expr_t *cond = as_bool(c, &a->v[0]);
  const tj_tir_expr_t *t = broadcast_literal(c, &a->v[1], &a->v[2]);
  const tj_tir_expr_t *f = broadcast_literal(c, &a->v[2], &a->v[1]);
  match_types(c, call->pos, &t, &f);
  if (cond->kind == TJ_TIR_INT_IMM) return make_prim(call->pos, cond->int_imm ? t : f);
  const tj_tir_expr_t *args[3] = {cond, t, f};
  return make_prim(call->pos, TJ_CHK(c, tj_tir_call(c->arena, t->dtype, "tir.if_then_else", 3, args)));
}

static tj_val_t call_binary_fn(tj_pctx_t *c, const tj_py_t *call, const char *name, tj_tir_expr_kind_t k,
                               callargs_t *a) {
  want_args(c, call, name, a, 2, 2);
  return make_prim(call->pos, tj_tir_binop(c, call->pos, k, a->v[0], a->v[1]));
}

static tj_val_t call_cast(tj_pctx_t *c, const tj_py_t *call, const char *name, callargs_t *a) {
  want_args(c, call, name, a, 2, 2);
  bool node = !strcmp(name, "T.Cast"); /* T.Cast(dtype, x) builds the node; T.cast(x, dtype) folds */
  tj_dtype_t dt = tj_val_dtype(c, &a->v[node ? 0 : 1]);
  const tj_tir_expr_t *x = tj_tir_as_expr(c, &a->v[node ? 1 : 0]);
  return make_prim(call->pos, node ? TJ_CHK(c, tj_tir_cast(c->arena, dt, x)) : fold_cast(c, dt, x));
}

/* Intrinsics that become a TIR call node with a dtype given by `dtype=` (default int32). */
static tj_val_t call_generic_intrin(tj_pctx_t *c, const tj_py_t *call, const char *op, callargs_t *a) {
  tj_dtype_t dt = TJ_I32;
  const tj_py_t *kw = tj_py_kwarg(call, "dtype");
  if (kw) {
    tj_val_t d = tj_tir_eval(c, kw);
    dt = tj_val_dtype(c, &d);
  }
  const tj_tir_expr_t **args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(a->n + 1)));
  for (int i = 0; i < a->n; i++) args[i] = tj_tir_as_expr(c, &a->v[i]);
  return make_prim(call->pos, TJ_CHK(c, tj_tir_call(c->arena, dt, op, a->n, args)));
}

static tj_val_t eval_call(tj_pctx_t *c, const tj_py_t *call) {
  tj_val_t f = tj_tir_eval(c, call->a);
  if (f.kind != V_FUNC) tj_parse_fail(c->src, call->pos, "%s is not callable here", tj_val_kind_name(f.kind));
  const char *name = f.s;
  callargs_t a = eval_args(c, call);
  tj_dtype_t dt;
  if (!strncmp(name, "T.", 2) && strcmp(name, "T.handle") && tj_dtype_parse(name + 2, &dt)) {
    static const char *const kw_none[] = {NULL};
    tj_py_check_kwargs(c, call, kw_none);
    return call_typed_literal(c, call, dt, &a);
  }
  for (int i = 0; unary_math[i]; i++)
    if (!strncmp(name, "T.", 2) && !strcmp(name + 2, unary_math[i])) return call_math(c, call, name, &a);
  if (!strcmp(name, "T.if_then_else")) return call_if_then_else(c, call, &a);
  if (!strcmp(name, "T.Select")) {
    want_args(c, call, name, &a, 3, 3);
    const tj_tir_expr_t *t = broadcast_literal(c, &a.v[1], &a.v[2]), *fv = broadcast_literal(c, &a.v[2], &a.v[1]);
    match_types(c, call->pos, &t, &fv);
    return make_prim(call->pos, TJ_CHK(c, tj_tir_select(c->arena, as_bool(c, &a.v[0]), t, fv)));
  }
  if (!strcmp(name, "T.Cast") || !strcmp(name, "T.cast")) return call_cast(c, call, name, &a);
  static const struct { const char *name; tj_tir_expr_kind_t k; } nodes[] = {
      {"T.Add", TJ_TIR_ADD}, {"T.Sub", TJ_TIR_SUB}, {"T.Mul", TJ_TIR_MUL}, {"T.Div", TJ_TIR_DIV},
      {"T.Mod", TJ_TIR_MOD}, {"T.FloorDiv", TJ_TIR_FLOOR_DIV}, {"T.FloorMod", TJ_TIR_FLOOR_MOD},
      {"T.Min", TJ_TIR_MIN}, {"T.Max", TJ_TIR_MAX}, {"T.EQ", TJ_TIR_EQ}, {"T.NE", TJ_TIR_NE},
      {"T.LT", TJ_TIR_LT}, {"T.LE", TJ_TIR_LE}, {"T.GT", TJ_TIR_GT}, {"T.GE", TJ_TIR_GE},
      {"T.And", TJ_TIR_AND}, {"T.Or", TJ_TIR_OR}};
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
    if (strcmp(name, nodes[i].name)) continue;
    /* the node constructors: no folding (the printer uses them for constant operands) */
    want_args(c, call, name, &a, 2, 2);
    const tj_tir_expr_t *x = broadcast_literal(c, &a.v[0], &a.v[1]), *y = broadcast_literal(c, &a.v[1], &a.v[0]);
    if (!tj_dtype_eq(x->dtype, y->dtype)) tj_parse_fail(c->src, call->pos, "%s needs operands of the same dtype", name);
    return make_prim(call->pos, TJ_CHK(c, tj_tir_binary(c->arena, nodes[i].k, x, y)));
  }
  if (!strcmp(name, "T.Not")) {
    want_args(c, call, name, &a, 1, 1);
    return make_prim(call->pos, TJ_CHK(c, tj_tir_not(c->arena, as_bool(c, &a.v[0]))));
  }
  if (!strcmp(name, "T.max")) return call_binary_fn(c, call, name, TJ_TIR_MAX, &a);
  if (!strcmp(name, "T.min")) return call_binary_fn(c, call, name, TJ_TIR_MIN, &a);
  if (!strcmp(name, "T.floordiv")) return call_binary_fn(c, call, name, TJ_TIR_FLOOR_DIV, &a);
  if (!strcmp(name, "T.floormod")) return call_binary_fn(c, call, name, TJ_TIR_FLOOR_MOD, &a);
  if (!strcmp(name, "T.truncdiv")) return call_binary_fn(c, call, name, TJ_TIR_DIV, &a);
  if (!strcmp(name, "T.truncmod")) return call_binary_fn(c, call, name, TJ_TIR_MOD, &a);
  static const char *const binary_intrinsics[] = {"T.pow", "T.fmod", "T.atan2", "T.hypot", "T.bitwise_and",
                                                  "T.bitwise_or", "T.bitwise_xor", "T.shift_left", "T.shift_right"};
  bool is_binary_intrinsic = false;
  for (size_t i = 0; i < sizeof binary_intrinsics / sizeof binary_intrinsics[0]; i++)
    is_binary_intrinsic |= !strcmp(name, binary_intrinsics[i]);
  if (is_binary_intrinsic) {
    want_args(c, call, name, &a, 2, 2);
    const tj_tir_expr_t *x = tj_tir_as_expr(c, &a.v[0]), *y = tj_tir_as_expr(c, &a.v[1]);
    match_types(c, call->pos, &x, &y);
    const tj_tir_expr_t *args[2] = {x, y};
    const char *op = TJ_CHK(c, tj_arena_printf(c->src->scratch, "tir.%s", name + 2));
    return make_prim(call->pos, TJ_CHK(c, tj_tir_call(c->arena, x->dtype, op, 2, args)));
  }
  if (!strcmp(name, "T.target")) { /* kept as a dict: {"kind": "llvm"} or the given config */
    want_args(c, call, name, &a, 1, 2);
    if (a.v[0].kind == V_DICT) return a.v[0];
    if (a.v[0].kind != V_STR) tj_parse_fail(c->src, a.v[0].pos, "T.target expects a target string or dict");
    tj_val_t *items = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * 2));
    items[0] = tj_val_make(V_STR, call->pos);
    items[0].s = "kind";
    items[1] = a.v[0];
    tj_val_t d = tj_val_make(V_DICT, call->pos);
    d.n = 1;
    d.items = items;
    return d;
  }
  if (!strcmp(name, "T.meta_var")) {
    want_args(c, call, name, &a, 1, 1);
    return a.v[0];
  }
  if (!strcmp(name, "T.tvm_struct_get")) return call_generic_intrin(c, call, "tir.tvm_struct_get", &a);
  if (!strcmp(name, "T.call_packed") || !strcmp(name, "T.tvm_call_packed")) {
    for (int i = 0; i < a.n; i++)
      if (a.v[i].kind == V_STR) a.v[i] = make_prim(a.v[i].pos, TJ_CHK(c, tj_tir_string(c->arena, a.v[i].s)));
    return call_generic_intrin(c, call, "tir.tvm_call_packed", &a);
  }
  if (!strcmp(name, "T.call_extern") || !strcmp(name, "T.call_pure_extern")) {
    if (a.n < 2) tj_parse_fail(c->src, call->pos, "%s expects a dtype and a function name", name);
    tj_dtype_t rdt = tj_val_dtype(c, &a.v[0]);
    const tj_tir_expr_t **args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)a.n));
    for (int i = 1; i < a.n; i++) args[i - 1] = tj_tir_as_expr(c, &a.v[i]);
    return make_prim(call->pos, TJ_CHK(c, tj_tir_call(c->arena, rdt, !strcmp(name, "T.call_extern") ? "tir.call_extern" : "tir.call_pure_extern", a.n - 1, args)));
  }
  if (!strcmp(name, "float")) return call_float(c, call, &a);
  if (!strcmp(name, "T.FloatImm") || !strcmp(name, "T.IntImm")) { /* the node constructors: (dtype, value) */
    want_args(c, call, name, &a, 2, 2);
    tj_dtype_t d = tj_val_dtype(c, &a.v[0]);
    bool is_float = name[2] == 'F';
    if (is_float != tj_dtype_is_floating(d))
      tj_parse_fail(c->src, a.v[0].pos, "%s needs a%s dtype", name, is_float ? " float" : "n integer or bool");
    if (a.v[1].kind != V_INT && a.v[1].kind != V_FLOAT && a.v[1].kind != V_BOOL)
      tj_parse_fail(c->src, a.v[1].pos, "%s needs a literal value", name);
    if (!is_float && a.v[1].kind == V_FLOAT) tj_parse_fail(c->src, a.v[1].pos, "T.IntImm needs an integer value");
    return make_prim(call->pos, make_const(c, d, &a.v[1]));
  }
  if (!strcmp(name, "tvm.tir.const")) { /* the Python helper TVM's tests write: (value, dtype=None) */
    const tj_py_t *kw = tj_py_kwarg(call, "dtype");
    want_args(c, call, name, &a, 1, kw ? 1 : 2);
    if (a.v[0].kind != V_INT && a.v[0].kind != V_FLOAT && a.v[0].kind != V_BOOL)
      tj_parse_fail(c->src, a.v[0].pos, "tvm.tir.const needs a literal value");
    if (a.n < 2 && !kw) return make_prim(call->pos, tj_tir_as_expr(c, &a.v[0]));
    tj_val_t dv = a.n == 2 ? a.v[1] : tj_tir_eval(c, kw);
    return make_prim(call->pos, make_const(c, tj_val_dtype(c, &dv), &a.v[0]));
  }
  if (!strcmp(name, "T.max_value") || !strcmp(name, "T.min_value")) {
    want_args(c, call, name, &a, 1, 1);
    tj_dtype_t d = tj_val_dtype(c, &a.v[0]);
    bool mx = name[2] == 'm' && name[3] == 'a';
    tj_val_t v = tj_val_make(V_FLOAT, call->pos);
    if (tj_dtype_is_floating(d)) v.f = tj_dtype_float_max(d);
    else {
      v.kind = V_INT;
      v.i = d.code == TJ_DT_UINT ? (d.bits >= 63 ? INT64_MAX : ((int64_t)1 << d.bits) - 1)
                                 : (d.bits >= 64 ? INT64_MAX : ((int64_t)1 << (d.bits - 1)) - 1);
      if (!mx) v.i = d.code == TJ_DT_UINT ? 0 : -v.i - 1;
    }
    if (v.kind == V_FLOAT && !mx) v.f = -v.f;
    return make_prim(call->pos, make_const(c, d, &v));
  }
  if (!strcmp(name, "range") || !strncmp(name, "T.", 2) || !strncmp(name, "R.", 2) || !strncmp(name, "I.", 2))
    tj_parse_fail(c->src, call->pos, "unknown or unsupported function '%s' in a TIR expression", name);
  tj_parse_fail(c->src, call->pos, "'%s' cannot be called here", name);
}

static tj_val_t eval_seq(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t v = tj_val_make(V_SEQ, e->pos);
  callargs_t a = eval_args(c, e);
  v.n = a.n;
  v.items = a.v;
  v.is_tuple = e->kind == PY_TUPLE;
  return v;
}

static tj_val_t eval_dict(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t *items = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)(2 * e->n + 1)));
  for (int i = 0; i < e->n; i++) {
    items[2 * i] = tj_tir_eval(c, e->items[i]);
    items[2 * i + 1] = tj_tir_eval(c, e->items2[i]);
  }
  tj_val_t v = tj_val_make(V_DICT, e->pos);
  v.n = e->n;
  v.items = items;
  return v;
}

static tj_val_t eval_name(tj_pctx_t *c, const tj_py_t *e) {
  const tj_val_t *v = tj_pctx_lookup(c, e->s);
  if (v) {
    tj_val_t r = *v;
    r.pos = e->pos;
    return r;
  }
  if (!strcmp(e->s, "T") || !strcmp(e->s, "R") || !strcmp(e->s, "I") || !strcmp(e->s, "tvm") ||
      !strcmp(e->s, "range") || !strcmp(e->s, "math") || !strcmp(e->s, "float")) {
    tj_val_t f = tj_val_make(V_FUNC, e->pos);
    f.s = e->s;
    return f;
  }
  if (c->class_name && !strcmp(e->s, c->class_name)) return tj_val_make(V_MODULE, e->pos);
  const tj_pfunc_t *f = c->class_name ? tj_pctx_find_func(c, e->s) : NULL;
  if (f) { /* inside a module class, function names are its GlobalVars */
    tj_val_t g = tj_val_make(V_RX, e->pos);
    g.rx = TJ_CHK(c, tj_rx_global_var(c->arena, f->name));
    return g;
  }
  tj_parse_fail(c->src, e->pos, "name '%s' is not defined", e->s);
}

tj_val_t tj_tir_eval(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t v;
  tj_pctx_enter(c, e->pos);
  switch (e->kind) {
    case PY_INT:
      if (e->big) tj_parse_fail(c->src, e->pos, "integer literal too large");
      v = tj_val_make(V_INT, e->pos);
      v.i = e->i;
      break;
    case PY_FLOAT:
      v = tj_val_make(V_FLOAT, e->pos);
      v.f = e->f;
      break;
    case PY_STR:
      v = tj_val_make(V_STR, e->pos);
      v.s = e->s;
      break;
    case PY_CONST:
      if (!strcmp(e->s, "None")) v = tj_val_make(V_NONE, e->pos);
      else if (!strcmp(e->s, "...")) tj_parse_fail(c->src, e->pos, "'...' is not supported");
      else {
        v = tj_val_make(V_BOOL, e->pos);
        v.i = !strcmp(e->s, "True");
      }
      break;
    case PY_NAME: v = eval_name(c, e); break;
    case PY_ATTR: v = eval_attr(c, e); break;
    case PY_CALL: v = eval_call(c, e); break;
    case PY_SUBSCRIPT: v = eval_subscript(c, e); break;
    case PY_TUPLE: case PY_LIST: v = eval_seq(c, e); break;
    case PY_DICT: v = eval_dict(c, e); break;
    case PY_BINOP: v = eval_binop(c, e); break;
    case PY_UNARY: v = eval_unary(c, e); break;
    case PY_COMPARE: v = eval_compare(c, e); break;
    case PY_BOOLOP: v = eval_boolop(c, e); break;
    default: tj_parse_fail(c->src, e->pos, "%s is not supported in a TIR expression", tj_py_kind_name(e->kind));
  }
  tj_pctx_leave(c);
  return v;
}
