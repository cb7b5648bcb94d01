/* TVM's arith::Analyzer::Simplify as create_prim_func applies it to loop extents and
 * compute bodies, for the integer index expressions legalized TOPI computes produce.
 *
 * The model is canonical_simplify.cc's: an index expression is a sum of "split"
 * terms plus a constant base, each term being ((index % upper) // lower) * scale
 * (floor division; upper = none, lower = 1 for a plain atom). Terms keep their order
 * of first appearance, merge when their index and factors agree, and print sorted by
 * descending scale (then lower, upper factor): positive terms with `+`, then a
 * positive base, then negative terms and a negative base with `-`. So
 * `(h - 1) * 3 + 1` prints `h * 3 - 2` and `ax1 - (b0 + b1)` prints `ax1 - b0 - b1`.
 * Products of two non-literal factors, symbolic divisors, min/max and casts are
 * atoms (their operands are simplified). Comparisons follow rewrite_simplify.cc:
 * `a >= b` is `b <= a`, `a <= b` is `!(b < a)`, and `x < y` moves constant offsets
 * to one side (merge_constants), e.g. `kh - 1 <= v` becomes `kh <= v + 1`.
 *
 * Variables are unbounded here, as in create_prim_func (its analyzer knows no loop
 * ranges), so no rule needs a bound proof. Float arithmetic is left as written. */
#include <stdint.h>
#include <string.h>

#include "ir/struct_equal.h"
#include "transforms/legalize/legalize.h"

#define MAX_TERMS 24
#define NO_UPPER 0 /* upper factor +inf */

typedef struct term {
  const tj_tir_expr_t *index;
  int64_t lower, upper, scale;
} term_t;

/* What a sub-expression became: a literal, one split term, a sum, or an atom kept as
 * is (TVM distinguishes these: x // c of a sum separates the divisible part, of a
 * split folds factors). */
typedef enum canon_kind { K_CONST, K_SPLIT, K_SUM, K_ATOM } canon_kind_t;

typedef struct canon {
  canon_kind_t kind;
  int n;
  term_t t[MAX_TERMS];
  int64_t base;
} canon_t;

typedef struct simp {
  tj_arena_t *a;
  tj_dtype_t dt;
  bool failed;
} simp_t;

static const tj_tir_expr_t *simplify(simp_t *s, const tj_tir_expr_t *e);
static void to_canon(simp_t *s, const tj_tir_expr_t *e, canon_t *out);

static bool is_index_type(tj_dtype_t d) { return d.code == TJ_DT_INT && d.lanes <= 1 && d.bits >= 8; }

static int64_t floordiv64(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
static int64_t floormod64(int64_t x, int64_t y) { return x - floordiv64(x, y) * y; }

static void set_const(canon_t *c, int64_t v) {
  memset(c, 0, sizeof *c);
  c->kind = K_CONST;
  c->base = v;
}

static void set_atom(canon_t *c, const tj_tir_expr_t *e) {
  memset(c, 0, sizeof *c);
  c->kind = K_ATOM;
  c->n = 1;
  c->t[0] = (term_t){e, 1, NO_UPPER, 1};
}

static bool index_equal(const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  return x == y || tj_struct_equal_tir_expr_ex(x, y, TJ_SEQ_INT_VALUES);
}

/* SumExprNode::AddToSelf(SplitExpr): merge into the same index and factors, else
 * insert within the index's segment (descending lower factor) or append. */
static void add_term(simp_t *s, canon_t *c, term_t t, int64_t scale) {
  int start = 0;
  while (start < c->n && !index_equal(c->t[start].index, t.index)) start++;
  int j = start;
  for (; j < c->n; j++) {
    term_t *o = &c->t[j];
    if (!index_equal(o->index, t.index) || t.lower > o->lower) break;
    if (t.lower == o->lower && t.upper == o->upper) {
      o->scale += t.scale * scale;
      return;
    }
  }
  if (c->n == MAX_TERMS) {
    s->failed = true;
    return;
  }
  memmove(&c->t[j + 1], &c->t[j], (size_t)(c->n - j) * sizeof(term_t));
  t.scale *= scale;
  c->t[j] = t;
  c->n++;
}

static void add_canon(simp_t *s, canon_t *c, const canon_t *o, int64_t scale) {
  for (int i = 0; i < o->n; i++) add_term(s, c, o->t[i], scale);
  c->base += o->base * scale;
  c->kind = K_SUM;
}

/* ((index % upper) // lower) * scale as a TIR expression. */
static const tj_tir_expr_t *term_expr(simp_t *s, const term_t *t, int64_t sign) {
  tj_arena_t *a = s->a;
  const tj_tir_expr_t *r = t->index;
  if (t->scale == 0) return tj_tir_int(a, s->dt, 0);
  if (t->upper != NO_UPPER) r = tj_tir_binary(a, TJ_TIR_FLOOR_MOD, r, tj_tir_int(a, s->dt, t->upper));
  if (t->lower != 1) r = tj_tir_binary(a, TJ_TIR_FLOOR_DIV, r, tj_tir_int(a, s->dt, t->lower));
  int64_t k = t->scale * sign;
  return k == 1 ? r : tj_tir_binary(a, TJ_TIR_MUL, r, tj_tir_int(a, s->dt, k));
}

/* SimplifySplitExprs' ordering: descending scale, then lower, then upper factor
 * (upper +inf counts as largest); stable, so ties keep first-appearance order. */
static bool term_before(const term_t *x, const term_t *y) {
  if (x->scale != y->scale) return x->scale > y->scale;
  if (x->lower != y->lower) return x->lower > y->lower;
  uint64_t ux = x->upper == NO_UPPER ? UINT64_MAX : (uint64_t)x->upper;
  uint64_t uy = y->upper == NO_UPPER ? UINT64_MAX : (uint64_t)y->upper;
  return ux > uy;
}

static void sort_terms(canon_t *c) {
  for (int i = 1; i < c->n; i++) {
    term_t t = c->t[i];
    int j = i;
    while (j > 0 && term_before(&t, &c->t[j - 1])) {
      c->t[j] = c->t[j - 1];
      j--;
    }
    c->t[j] = t;
  }
}

/* SumExprNode::Normalize: positive terms, positive base, negative terms, negative base. */
static const tj_tir_expr_t *normalize(simp_t *s, const canon_t *in) {
  tj_arena_t *a = s->a;
  if (in->kind == K_CONST) return tj_tir_int(a, s->dt, in->base);
  /* SplitExprNode::Normalize: a lone term is index * scale whatever its sign, so the
   * divisor of dynamic_strided_slice's ceildiv(b - e, -s) stays `s * -1`, not `0 - s`. */
  if (in->kind == K_SPLIT && in->n == 1 && in->base == 0 && in->t[0].scale != 0) return term_expr(s, &in->t[0], 1);
  canon_t c = *in;
  int m = 0;
  for (int i = 0; i < c.n; i++)
    if (c.t[i].scale != 0) c.t[m++] = c.t[i];
  c.n = m;
  if (c.n == 0) return tj_tir_int(a, s->dt, c.base);
  sort_terms(&c);
  const tj_tir_expr_t *r = NULL;
  for (int i = 0; i < c.n; i++)
    if (c.t[i].scale > 0) r = r ? tj_tir_binary(a, TJ_TIR_ADD, r, term_expr(s, &c.t[i], 1)) : term_expr(s, &c.t[i], 1);
  if (c.base > 0) r = r ? tj_tir_binary(a, TJ_TIR_ADD, r, tj_tir_int(a, s->dt, c.base)) : tj_tir_int(a, s->dt, c.base);
  if (!r) r = tj_tir_int(a, s->dt, 0);
  for (int i = 0; i < c.n; i++)
    if (c.t[i].scale < 0) r = tj_tir_binary(a, TJ_TIR_SUB, r, term_expr(s, &c.t[i], -1));
  if (c.base < 0) r = tj_tir_binary(a, TJ_TIR_SUB, r, tj_tir_int(a, s->dt, -c.base));
  return r;
}

/* ToSplitExpr: a sum that is one term is that term; anything else becomes the index
 * of a fresh term. */
static term_t to_term(simp_t *s, const canon_t *c) {
  if (c->kind != K_CONST && c->n == 1 && c->base == 0) return c->t[0];
  return (term_t){normalize(s, c), 1, NO_UPPER, 1};
}

static void set_term(canon_t *c, term_t t) {
  memset(c, 0, sizeof *c);
  c->kind = K_SPLIT;
  c->n = 1;
  c->t[0] = t;
}

/* SplitDivConst: term // cval. */
static term_t term_div(simp_t *s, term_t t, int64_t cval) {
  if (t.scale % cval == 0) {
    t.scale /= cval;
    return t;
  }
  if (t.scale > 0 && cval % t.scale == 0) {
    int64_t scaled = cval / t.scale;
    if (t.upper == NO_UPPER || t.upper % (t.lower * scaled) == 0) {
      t.scale = 1;
      t.lower *= scaled;
      return t;
    }
    if (t.upper <= t.lower * scaled) return (term_t){tj_tir_int(s->a, s->dt, 0), 1, NO_UPPER, 0};
    t.index = tj_tir_binary(s->a, TJ_TIR_FLOOR_MOD, t.index, tj_tir_int(s->a, s->dt, t.upper));
    t.upper = NO_UPPER;
    t.scale = 1;
    t.lower *= scaled;
    return t;
  }
  canon_t one;
  set_term(&one, t);
  term_t r = {normalize(s, &one), cval, NO_UPPER, 1};
  return r;
}

/* SplitModConst: term % cval. */
static term_t term_mod(simp_t *s, term_t t, int64_t cval) {
  if (t.scale % cval == 0) {
    t.scale = 0;
    return t;
  }
  if (t.scale > 0 && cval % t.scale == 0) {
    int64_t new_upper = t.lower * (cval / t.scale);
    if (t.upper == NO_UPPER || t.upper % new_upper == 0) {
      t.upper = new_upper; /* (x % c1) % c2 with c1 % c2 == 0 is x % c2 */
      return t;
    }
    if (new_upper % t.upper == 0) return t; /* (x % 2) % 4 is x % 2 */
  }
  canon_t one;
  set_term(&one, t);
  return (term_t){normalize(s, &one), 1, cval, 1};
}

/* Splits a sum into the terms (and base) divisible by c and the rest. */
static void separate(const canon_t *c, int64_t k, canon_t *div, canon_t *rest) {
  memset(div, 0, sizeof *div);
  memset(rest, 0, sizeof *rest);
  div->kind = rest->kind = K_SUM;
  if (c->base % k == 0) div->base = c->base;
  else rest->base = c->base;
  for (int i = 0; i < c->n; i++) {
    canon_t *dst = c->t[i].scale % k == 0 ? div : rest;
    dst->t[dst->n++] = c->t[i];
  }
}

/* (divisible + rest) // c = divisible / c + rest // c, rest normalised first. */
static void floordiv_const(simp_t *s, canon_t *x, int64_t cval, canon_t *out) {
  if (cval == 1) {
    *out = *x;
    return;
  }
  if (x->kind != K_SUM) {
    set_term(out, term_div(s, to_term(s, x), cval));
    return;
  }
  canon_t div, rest;
  separate(x, cval, &div, &rest);
  for (int i = 0; i < div.n; i++) div.t[i].scale /= cval;
  div.base /= cval;
  if (rest.n == 0) {
    div.base += floordiv64(rest.base, cval);
  } else {
    /* the remainder as one term: a lone split keeps its factors, so that
     * (x // 2) // 2 is x // 4 as rewrite_simplify's floordiv(floordiv(x, c1), c2)
     * rule makes it; a longer sum becomes a fresh index */
    add_term(s, &div, term_div(s, to_term(s, &rest), cval), 1);
  }
  *out = div;
}

static void floormod_const(simp_t *s, canon_t *x, int64_t cval, canon_t *out) {
  if (x->kind == K_SUM) {
    canon_t div, rest;
    separate(x, cval, &div, &rest);
    if (rest.n == 0) {
      set_const(out, floormod64(rest.base, cval));
      return;
    }
    rest.base = floormod64(rest.base, cval);
    set_term(out, term_mod(s, to_term(s, &rest), cval));
    return;
  }
  set_term(out, term_mod(s, to_term(s, x), cval));
}

static void mul_canon(simp_t *s, canon_t *x, int64_t k, canon_t *out) {
  *out = *x;
  if (out->kind == K_ATOM) out->kind = K_SPLIT;
  for (int i = 0; i < out->n; i++) out->t[i].scale *= k;
  out->base *= k;
  if (k == 0) set_const(out, 0);
  (void)s;
}

/* MulAndNormalize (product_normal_form.h): the factors of both Mul chains left to
 * right, literals gathered into one trailing scale: v * (c * 4) is v * c * 4. */
static void collect_factors(simp_t *s, const tj_tir_expr_t *e, const tj_tir_expr_t **prod, int64_t *scale) {
  if (e->kind == TJ_TIR_MUL) {
    collect_factors(s, e->binary.a, prod, scale);
    collect_factors(s, e->binary.b, prod, scale);
  } else if (e->kind == TJ_TIR_INT_IMM) {
    *scale *= e->int_imm;
  } else {
    *prod = *prod ? tj_tir_binary(s->a, TJ_TIR_MUL, *prod, e) : e;
  }
}

static const tj_tir_expr_t *mul_and_normalize(simp_t *s, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  const tj_tir_expr_t *prod = NULL;
  int64_t scale = 1;
  collect_factors(s, x, &prod, &scale);
  collect_factors(s, y, &prod, &scale);
  if (!prod) return tj_tir_int(s->a, s->dt, scale);
  return scale == 1 ? prod : tj_tir_binary(s->a, TJ_TIR_MUL, prod, tj_tir_int(s->a, s->dt, scale));
}

/* Add, Sub, Mul, FloorDiv, FloorMod of index type. */
static void canon_binary(simp_t *s, const tj_tir_expr_t *e, canon_t *out) {
  canon_t x, y;
  to_canon(s, e->binary.a, &x);
  to_canon(s, e->binary.b, &y);
  switch (e->kind) {
  case TJ_TIR_ADD:
  case TJ_TIR_SUB:
    if (x.kind == K_CONST && y.kind == K_CONST) {
      set_const(out, e->kind == TJ_TIR_ADD ? x.base + y.base : x.base - y.base);
      return;
    }
    *out = x;
    out->kind = K_SUM;
    add_canon(s, out, &y, e->kind == TJ_TIR_ADD ? 1 : -1);
    return;
  case TJ_TIR_MUL:
    if (y.kind == K_CONST) return mul_canon(s, &x, y.base, out);
    if (x.kind == K_CONST) return mul_canon(s, &y, x.base, out);
    set_atom(out, mul_and_normalize(s, normalize(s, &x), normalize(s, &y)));
    return;
  case TJ_TIR_FLOOR_DIV:
  case TJ_TIR_FLOOR_MOD:
    if (y.kind == K_CONST && y.base > 0) {
      if (x.kind == K_CONST) {
        set_const(out, e->kind == TJ_TIR_FLOOR_DIV ? floordiv64(x.base, y.base) : floormod64(x.base, y.base));
        return;
      }
      if (e->kind == TJ_TIR_FLOOR_DIV) floordiv_const(s, &x, y.base, out);
      else floormod_const(s, &x, y.base, out);
      return;
    }
    set_atom(out, tj_tir_binary(s->a, e->kind, normalize(s, &x), normalize(s, &y)));
    return;
  default:
    set_atom(out, simplify(s, e));
  }
}

static void to_canon(simp_t *s, const tj_tir_expr_t *e, canon_t *out) {
  switch (e->kind) {
  case TJ_TIR_INT_IMM: set_const(out, e->int_imm); return;
  case TJ_TIR_ADD:
  case TJ_TIR_SUB:
  case TJ_TIR_MUL:
  case TJ_TIR_FLOOR_DIV:
  case TJ_TIR_FLOOR_MOD:
    if (tj_dtype_eq(e->dtype, s->dt)) {
      canon_binary(s, e, out);
      return;
    }
    break;
  default: break;
  }
  set_atom(out, e->kind == TJ_TIR_VAR ? e : simplify(s, e));
}

/* ---------------- comparisons (rewrite_simplify.cc) ---------------- */

/* ExtractConstantOffset: x + c -> (x, c), x - c -> (x, -c). */
static const tj_tir_expr_t *const_offset(const tj_tir_expr_t *e, int64_t *off) {
  *off = 0;
  if ((e->kind == TJ_TIR_ADD || e->kind == TJ_TIR_SUB) && e->binary.b->kind == TJ_TIR_INT_IMM) {
    *off = e->kind == TJ_TIR_ADD ? e->binary.b->int_imm : -e->binary.b->int_imm;
    return e->binary.a;
  }
  return e;
}

static const tj_tir_expr_t *plus_const(simp_t *s, const tj_tir_expr_t *x, int64_t c) {
  canon_t cx, cc;
  to_canon(s, x, &cx);
  set_const(&cc, c);
  if (cx.kind == K_CONST) {
    set_const(&cx, cx.base + c);
    return normalize(s, &cx);
  }
  cx.kind = K_SUM;
  add_canon(s, &cx, &cc, 1);
  return normalize(s, &cx);
}

/* x < y over canonical operands: literal folding, then the constant offsets merged
 * onto the side that keeps both constants non-negative (TVM's merge_constants). */
static const tj_tir_expr_t *rewrite_lt(simp_t *s, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  tj_arena_t *a = s->a;
  if (x->kind == TJ_TIR_INT_IMM && y->kind == TJ_TIR_INT_IMM) return tj_tir_bool(a, x->int_imm < y->int_imm);
  int64_t lo, ro;
  const tj_tir_expr_t *lx = const_offset(x, &lo), *ry = const_offset(y, &ro);
  if (y->kind == TJ_TIR_INT_IMM && lo != 0) /* x - c2 < c1 -> x < c1 + c2 */
    return rewrite_lt(s, lx, tj_tir_int(a, s->dt, y->int_imm - lo));
  if (x->kind == TJ_TIR_INT_IMM && ro != 0) /* c1 < x + c2 -> c1 - c2 < x */
    return rewrite_lt(s, tj_tir_int(a, s->dt, x->int_imm - ro), ry);
  if (lo == 0 && ro == 0) return tj_tir_binary(a, TJ_TIR_LT, x, y);
  int64_t diff = ro - lo;
  if (diff == 0) return tj_tir_binary(a, TJ_TIR_LT, lx, ry);
  if (diff == 1) return tj_tir_binary(a, TJ_TIR_LE, lx, ry);
  if (diff < 0 && ro != 0) return tj_tir_binary(a, TJ_TIR_LT, plus_const(s, lx, -diff), ry);
  if (diff > 0 && lo != 0) return tj_tir_binary(a, TJ_TIR_LT, lx, plus_const(s, ry, diff));
  return tj_tir_binary(a, TJ_TIR_LT, x, y);
}

/* !(x < y) is y <= x, !(x <= y) is y < x. */
static const tj_tir_expr_t *negate(simp_t *s, const tj_tir_expr_t *c) {
  if (c->kind == TJ_TIR_INT_IMM) return tj_tir_bool(s->a, c->int_imm == 0);
  if (c->kind == TJ_TIR_LT) return tj_tir_binary(s->a, TJ_TIR_LE, c->binary.b, c->binary.a);
  if (c->kind == TJ_TIR_LE) return tj_tir_binary(s->a, TJ_TIR_LT, c->binary.b, c->binary.a);
  return tj_tir_not(s->a, c);
}

static const tj_tir_expr_t *simplify_compare(simp_t *s, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *x = simplify(s, e->binary.a), *y = simplify(s, e->binary.b);
  if (!x || !y) return NULL;
  if (!is_index_type(x->dtype)) return tj_tir_binary(s->a, e->kind, x, y);
  tj_dtype_t saved = s->dt;
  s->dt = x->dtype;
  const tj_tir_expr_t *r;
  switch (e->kind) {
  case TJ_TIR_LT: r = rewrite_lt(s, x, y); break;
  case TJ_TIR_GT: r = rewrite_lt(s, y, x); break;
  case TJ_TIR_LE: r = negate(s, rewrite_lt(s, y, x)); break;
  case TJ_TIR_GE: r = negate(s, rewrite_lt(s, x, y)); break;
  default: r = tj_tir_binary(s->a, e->kind, x, y); break;
  }
  s->dt = saved;
  return r;
}

/* ---------------- the walk ---------------- */

static const tj_tir_expr_t *simplify_index(simp_t *s, const tj_tir_expr_t *e) {
  tj_dtype_t saved = s->dt;
  s->dt = e->dtype;
  canon_t c;
  to_canon(s, e, &c);
  const tj_tir_expr_t *r = c.kind == K_ATOM ? c.t[0].index : normalize(s, &c);
  s->dt = saved;
  return r;
}

static const tj_tir_expr_t *simplify_children(simp_t *s, const tj_tir_expr_t *e) {
  tj_arena_t *a = s->a;
  switch (e->kind) {
  case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MOD:
  case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: case TJ_TIR_MIN: case TJ_TIR_MAX:
  case TJ_TIR_EQ: case TJ_TIR_NE: case TJ_TIR_AND: case TJ_TIR_OR: {
    const tj_tir_expr_t *x = simplify(s, e->binary.a), *y = simplify(s, e->binary.b);
    if (x == e->binary.a && y == e->binary.b) return e;
    return x && y ? tj_tir_binary(a, e->kind, x, y) : NULL;
  }
  case TJ_TIR_NOT: {
    const tj_tir_expr_t *x = simplify(s, e->unary.operand);
    return x == e->unary.operand ? e : x ? negate(s, x) : NULL;
  }
  case TJ_TIR_CAST: {
    const tj_tir_expr_t *x = simplify(s, e->unary.operand);
    return x == e->unary.operand ? e : x ? tj_tir_cast(a, e->dtype, x) : NULL;
  }
  case TJ_TIR_SELECT: {
    const tj_tir_expr_t *c = simplify(s, e->select.cond), *t = simplify(s, e->select.true_value),
                        *f = simplify(s, e->select.false_value);
    return c && t && f ? tj_tir_select(a, c, t, f) : NULL;
  }
  case TJ_TIR_BUFFER_LOAD: {
    int n = e->load.n_indices;
    const tj_tir_expr_t **idx = tj_arena_alloc(a, sizeof *idx * (size_t)(n > 0 ? n : 1));
    if (!idx) return NULL;
    for (int i = 0; i < n; i++)
      if (!(idx[i] = simplify(s, e->load.indices[i]))) return NULL;
    return tj_tir_load(a, e->load.buffer, n, idx);
  }
  case TJ_TIR_CALL: {
    int n = e->call.n_args;
    const tj_tir_expr_t **args = tj_arena_alloc(a, sizeof *args * (size_t)(n > 0 ? n : 1));
    if (!args) return NULL;
    for (int i = 0; i < n; i++)
      if (!(args[i] = simplify(s, e->call.args[i]))) return NULL;
    return tj_tir_call(a, e->dtype, e->call.op, n, args);
  }
  default: return e;
  }
}

static const tj_tir_expr_t *simplify(simp_t *s, const tj_tir_expr_t *e) {
  if (!e || s->failed) return NULL;
  switch (e->kind) {
  case TJ_TIR_LT: case TJ_TIR_LE: case TJ_TIR_GT: case TJ_TIR_GE: return simplify_compare(s, e);
  case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD:
    if (is_index_type(e->dtype)) return simplify_index(s, e);
    return simplify_children(s, e);
  default: return simplify_children(s, e);
  }
}

const tj_tir_expr_t *tj_lg_simplify(tj_arena_t *a, const tj_tir_expr_t *e) {
  simp_t s = {.a = a, .dt = TJ_I64};
  const tj_tir_expr_t *r = simplify(&s, e);
  return s.failed ? e : r;
}
