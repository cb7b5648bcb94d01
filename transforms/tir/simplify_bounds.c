/* SimplifyBounds: integer index arithmetic simplified with the loop bounds (lower.h).
 *
 * Legalized reshapes index their input through the flattened position, e.g. BERT's
 * head split [1, 128, 768] -> [1, 128, 12, 64]:
 *   lv2[0, ((h*64 + d) // 768 + s) % 128, (h*64 + d) % 768]
 * With h < 12 and d < 64, h*64 + d < 768, so this is lv2[0, s, h*64 + d]. Left as it is,
 * the vectorizer sees a floordiv/floormod of the lane var and gathers lane by lane (the
 * scheduled reshape+transpose took 0.16 ms against 0.02 unscheduled). TVM's
 * arith::Analyzer does this with the loop bounds; this is the part of it the legalized
 * ops need: constant integer ranges of loop vars (For with constant min and extent) and
 * of let-bound values, propagated through +, -, * and // and % by positive constants;
 * then x // c and x % c whose x stays within one multiple of c fold, and +0, -0, *1 go.
 * Every rewrite is exact on integers, so results do not change. */
#include "ir/visit.h"
#include "transforms/tir/lower.h"

/* Bounds beyond this are treated as unknown: no rewrite ever depends on an overflow. */
#define RANGE_LIMIT ((int64_t)1 << 60)
#define MAX_SCOPES 256

typedef struct range {
  bool known;
  int64_t lo, hi;
} range_t;

typedef struct bound {
  const tj_tir_expr_t *var;
  range_t r;
} bound_t;

typedef struct simplify_ctx {
  bound_t scopes[MAX_SCOPES];
  int n;
} simplify_ctx_t;

static bool is_scalar_int(const tj_tir_expr_t *e) {
  return (e->dtype.code == TJ_DT_INT || e->dtype.code == TJ_DT_UINT) && e->dtype.lanes == 1;
}

static range_t make(int64_t lo, int64_t hi) {
  bool ok = lo <= hi && lo > -RANGE_LIMIT && hi < RANGE_LIMIT;
  return (range_t){ok, lo, hi};
}

static int64_t floor_div(int64_t a, int64_t c) { return a / c - (a % c != 0 && a < 0); }

static const range_t UNKNOWN = {false, 0, 0};

static range_t range_of(const simplify_ctx_t *c, const tj_tir_expr_t *e);

static bool positive_const(const tj_tir_expr_t *e, int64_t *v) { return tj_tir_is_const_int(e, v) && *v > 0; }

static range_t mul_range(range_t a, int64_t k) {
  if (!a.known || k <= -RANGE_LIMIT || k >= RANGE_LIMIT) return UNKNOWN;
  int64_t x, y;
  if (__builtin_mul_overflow(a.lo, k, &x) || __builtin_mul_overflow(a.hi, k, &y)) return UNKNOWN;
  return k >= 0 ? make(x, y) : make(y, x);
}

static range_t binary_range(const simplify_ctx_t *c, const tj_tir_expr_t *e) {
  switch (e->kind) {
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD:
    case TJ_TIR_MIN: case TJ_TIR_MAX: break;
    default: return UNKNOWN;
  }
  range_t a = range_of(c, e->binary.a), b = range_of(c, e->binary.b);
  int64_t k;
  switch (e->kind) {
    case TJ_TIR_ADD: return a.known && b.known ? make(a.lo + b.lo, a.hi + b.hi) : UNKNOWN;
    case TJ_TIR_SUB: return a.known && b.known ? make(a.lo - b.hi, a.hi - b.lo) : UNKNOWN;
    case TJ_TIR_MUL:
      if (tj_tir_is_const_int(e->binary.b, &k)) return mul_range(a, k);
      if (tj_tir_is_const_int(e->binary.a, &k)) return mul_range(b, k);
      return UNKNOWN;
    case TJ_TIR_FLOOR_DIV:
      if (!positive_const(e->binary.b, &k) || !a.known) return UNKNOWN;
      return make(floor_div(a.lo, k), floor_div(a.hi, k));
    case TJ_TIR_FLOOR_MOD:
      if (!positive_const(e->binary.b, &k)) return UNKNOWN;
      if (a.known && floor_div(a.lo, k) == floor_div(a.hi, k)) {
        int64_t q = floor_div(a.lo, k) * k;
        return make(a.lo - q, a.hi - q);
      }
      return make(0, k - 1);
    case TJ_TIR_MIN: return a.known && b.known ? make(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi) : UNKNOWN;
    case TJ_TIR_MAX: return a.known && b.known ? make(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi) : UNKNOWN;
    default: return UNKNOWN;
  }
}

static range_t range_in_dtype(const simplify_ctx_t *c, const tj_tir_expr_t *e);

/* The range of an integer expression over the enclosing loops, or unknown; a range its
 * dtype cannot hold (the value would wrap) is unknown. */
static range_t range_of(const simplify_ctx_t *c, const tj_tir_expr_t *e) {
  if (!is_scalar_int(e)) return UNKNOWN;
  range_t r = range_in_dtype(c, e);
  int bits = e->dtype.bits;
  if (!r.known || bits >= 64) return r;
  int64_t lo = e->dtype.code == TJ_DT_UINT ? 0 : -((int64_t)1 << (bits - 1));
  int64_t hi = e->dtype.code == TJ_DT_UINT ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
  return r.lo >= lo && r.hi <= hi ? r : UNKNOWN;
}

static range_t range_in_dtype(const simplify_ctx_t *c, const tj_tir_expr_t *e) {
  int64_t v;
  if (tj_tir_is_const_int(e, &v)) return make(v, v);
  if (e->kind == TJ_TIR_VAR) {
    for (int i = c->n - 1; i >= 0; i--)
      if (c->scopes[i].var == e) return c->scopes[i].r;
    return UNKNOWN;
  }
  if (e->kind == TJ_TIR_CAST) {
    /* int -> wider or equal int keeps the value */
    const tj_tir_expr_t *x = e->unary.operand;
    if (!is_scalar_int(x) || x->dtype.code != e->dtype.code || x->dtype.bits > e->dtype.bits) return UNKNOWN;
    return range_of(c, x);
  }
  return binary_range(c, e);
}

static const tj_tir_expr_t *constant(tj_tir_mutator_t *m, const tj_tir_expr_t *like, int64_t v) {
  const tj_tir_expr_t *r = tj_tir_int(m->arena, like->dtype, v);
  if (!r) m->failed = true;
  return r;
}

/* e's children are already simplified. */
static const tj_tir_expr_t *rewrite(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  const simplify_ctx_t *c = m->ctx;
  if (!is_scalar_int(e)) return e;
  range_t r = range_of(c, e);
  /* vars stay: a loop var's own node is visited where it is defined */
  if (r.known && r.lo == r.hi && e->kind != TJ_TIR_INT_IMM && e->kind != TJ_TIR_VAR) return constant(m, e, r.lo);
  if (e->kind != TJ_TIR_ADD && e->kind != TJ_TIR_SUB && e->kind != TJ_TIR_MUL && e->kind != TJ_TIR_FLOOR_MOD) return e;
  const tj_tir_expr_t *a = e->binary.a, *b = e->binary.b;
  int64_t k;
  switch (e->kind) {
    case TJ_TIR_ADD:
      if (tj_tir_is_const_int(b, &k) && k == 0) return a;
      if (tj_tir_is_const_int(a, &k) && k == 0) return b;
      return e;
    case TJ_TIR_SUB: return tj_tir_is_const_int(b, &k) && k == 0 ? a : e;
    case TJ_TIR_MUL:
      if (tj_tir_is_const_int(b, &k) && k == 1) return a;
      if (tj_tir_is_const_int(a, &k) && k == 1) return b;
      return e;
    case TJ_TIR_FLOOR_MOD: {
      range_t ra = range_of(c, a);
      if (!positive_const(b, &k) || !ra.known || floor_div(ra.lo, k) != floor_div(ra.hi, k)) return e;
      int64_t q = floor_div(ra.lo, k) * k;
      if (q == 0) return a;
      const tj_tir_expr_t *off = constant(m, e, q);
      const tj_tir_expr_t *s = off ? tj_tir_binary(m->arena, TJ_TIR_SUB, a, off) : NULL;
      if (!s) m->failed = true;
      return s;
    }
    default: return e; /* a floordiv within one multiple folded to its constant above */
  }
}

static const tj_tir_expr_t *simplify_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *x = tj_tir_mutate_expr_children(m, e);
  if (!x || m->failed) return x;
  return rewrite(m, x);
}

static bool push(simplify_ctx_t *c, const tj_tir_expr_t *var, range_t r) {
  if (c->n == MAX_SCOPES) return false;
  c->scopes[c->n++] = (bound_t){var, r};
  return true;
}

/* Loops and lets bind their var's range for the body. */
static const tj_tir_stmt_t *simplify_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  simplify_ctx_t *c = m->ctx;
  range_t r;
  const tj_tir_expr_t *var;
  if (s->kind == TJ_TIR_FOR) {
    int64_t lo, ext;
    var = s->loop.var;
    r = tj_tir_is_const_int(s->loop.min, &lo) && tj_tir_is_const_int(s->loop.extent, &ext) && ext > 0
            ? make(lo, lo + ext - 1)
            : UNKNOWN;
  } else if (s->kind == TJ_TIR_LET_STMT) {
    var = s->let.var;
    r = range_of(c, s->let.value);
  } else {
    return NULL;
  }
  if (!push(c, var, r)) return NULL; /* too deep: the rest keeps its expressions */
  const tj_tir_stmt_t *out = tj_tir_mutate_stmt_children(m, s);
  c->n--;
  return out;
}

tj_status_t *tj_tir_simplify_bounds(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out) {
  simplify_ctx_t c = {.n = 0};
  tj_tir_mutator_t m = {.arena = arena, .expr = simplify_expr, .stmt = simplify_stmt, .ctx = &c};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "SimplifyBounds", name, out);
}
