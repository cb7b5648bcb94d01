/* Shape arithmetic for struct-info inference: int64 extents are brought into a linear
 * form (sum of coefficient x atom + constant) so that `h + 0 + 0 - 1*(kh - 1) - 1`
 * becomes `h - kh` and two extents can be compared without a full arithmetic
 * analyzer. Anything non-linear (products of symbols, division that does not divide
 * evenly) stays an opaque atom, compared structurally. */
#include <stdlib.h>

#include "ir/op/common.h"
#include "ir/struct_equal.h"

#define LIN_MAX_TERMS 16

typedef struct lin_term {
  const tj_tir_expr_t *atom;
  int64_t coef;
} lin_term_t;

typedef struct lin {
  int n;
  lin_term_t terms[LIN_MAX_TERMS];
  int64_t c;
  bool ok; /* false when the form overflowed its term table */
} lin_t;

/* Structural equality of atoms: vars by identity, the rest by shape and values. */
static bool atom_equal(const tj_tir_expr_t *a, const tj_tir_expr_t *b) { return tj_struct_equal_tir_expr(a, b); }

static void lin_add_atom(lin_t *l, const tj_tir_expr_t *atom, int64_t coef) {
  for (int i = 0; i < l->n; i++)
    if (atom_equal(l->terms[i].atom, atom)) {
      l->terms[i].coef += coef;
      return;
    }
  if (l->n == LIN_MAX_TERMS) {
    l->ok = false;
    return;
  }
  l->terms[l->n].atom = atom;
  l->terms[l->n++].coef = coef;
}

static void lin_of(tj_arena_t *arena, const tj_tir_expr_t *e, int64_t scale, lin_t *l);

static const tj_tir_expr_t *lin_build(tj_arena_t *arena, const lin_t *l, tj_dtype_t dtype);

static void lin_of_floordiv(tj_arena_t *arena, const tj_tir_expr_t *e, int64_t scale, lin_t *l) {
  int64_t d;
  if (!arena || !tj_tir_is_const_int(e->binary.b, &d) || d <= 0) {
    lin_add_atom(l, e, scale);
    return;
  }
  lin_t inner = {.ok = true};
  lin_of(arena, e->binary.a, 1, &inner);
  bool divides = inner.ok && inner.c % d == 0;
  for (int i = 0; divides && i < inner.n; i++) divides = inner.terms[i].coef % d == 0;
  if (divides) {
    for (int i = 0; i < inner.n; i++) lin_add_atom(l, inner.terms[i].atom, scale * (inner.terms[i].coef / d));
    l->c += scale * (inner.c / d);
    return;
  }
  const tj_tir_expr_t *num = inner.ok ? lin_build(arena, &inner, e->dtype) : e->binary.a;
  const tj_tir_expr_t *atom = d == 1 ? num : tj_tir_binary(arena, TJ_TIR_FLOOR_DIV, num, e->binary.b);
  if (!atom) {
    l->ok = false;
    return;
  }
  if (d == 1) lin_of(arena, atom, scale, l);
  else lin_add_atom(l, atom, scale);
}

static void lin_of(tj_arena_t *arena, const tj_tir_expr_t *e, int64_t scale, lin_t *l) {
  int64_t v;
  switch (e->kind) {
    case TJ_TIR_INT_IMM: l->c += scale * e->int_imm; return;
    case TJ_TIR_ADD:
      lin_of(arena, e->binary.a, scale, l);
      lin_of(arena, e->binary.b, scale, l);
      return;
    case TJ_TIR_SUB:
      lin_of(arena, e->binary.a, scale, l);
      lin_of(arena, e->binary.b, -scale, l);
      return;
    case TJ_TIR_MUL:
      if (tj_tir_is_const_int(e->binary.a, &v)) lin_of(arena, e->binary.b, scale * v, l);
      else if (tj_tir_is_const_int(e->binary.b, &v)) lin_of(arena, e->binary.a, scale * v, l);
      else lin_add_atom(l, e, scale);
      return;
    case TJ_TIR_FLOOR_DIV: lin_of_floordiv(arena, e, scale, l); return;
    default: lin_add_atom(l, e, scale); return;
  }
}

static const tj_tir_expr_t *scaled(tj_arena_t *arena, const tj_tir_expr_t *atom, int64_t coef, tj_dtype_t dtype) {
  if (coef == 1) return atom;
  return tj_tir_binary(arena, TJ_TIR_MUL, atom, tj_tir_int(arena, dtype, coef));
}

static const tj_tir_expr_t *lin_build(tj_arena_t *arena, const lin_t *l, tj_dtype_t dtype) {
  const tj_tir_expr_t *acc = NULL;
  for (int i = 0; i < l->n; i++) {
    int64_t coef = l->terms[i].coef;
    if (coef == 0) continue;
    if (!acc) acc = scaled(arena, l->terms[i].atom, coef, dtype);
    else if (coef > 0) acc = tj_tir_binary(arena, TJ_TIR_ADD, acc, scaled(arena, l->terms[i].atom, coef, dtype));
    else acc = tj_tir_binary(arena, TJ_TIR_SUB, acc, scaled(arena, l->terms[i].atom, -coef, dtype));
    if (!acc) return NULL;
  }
  if (!acc) return tj_tir_int(arena, dtype, l->c);
  if (l->c > 0) return tj_tir_binary(arena, TJ_TIR_ADD, acc, tj_tir_int(arena, dtype, l->c));
  if (l->c < 0) return tj_tir_binary(arena, TJ_TIR_SUB, acc, tj_tir_int(arena, dtype, -l->c));
  return acc;
}

const tj_tir_expr_t *tj_op_simplify_dim(tj_arena_t *arena, const tj_tir_expr_t *e) {
  if (!e || !tj_dtype_is_int(e->dtype) || e->kind == TJ_TIR_INT_IMM || e->kind == TJ_TIR_VAR) return e;
  lin_t l = {.ok = true};
  lin_of(arena, e, 1, &l);
  if (!l.ok) return e;
  const tj_tir_expr_t *out = lin_build(arena, &l, e->dtype);
  return out ? out : e;
}

tj_dim_cmp_t tj_op_compare_dims(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (a == b) return TJ_DIM_EQUAL;
  lin_t l = {.ok = true};
  /* No arena: non-dividing floordivs stay whole atoms, which is enough to compare. */
  lin_of(NULL, a, 1, &l);
  lin_of(NULL, b, -1, &l);
  if (!l.ok) return TJ_DIM_UNKNOWN;
  for (int i = 0; i < l.n; i++)
    if (l.terms[i].coef != 0) return TJ_DIM_UNKNOWN;
  return l.c == 0 ? TJ_DIM_EQUAL : TJ_DIM_DIFFERENT;
}
