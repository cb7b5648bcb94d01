/* VectorizeLoop: a T.vectorized loop with a constant extent L becomes its body with the
 * loop var replaced by Ramp(min, 1, L) (lower.h). TVM's meaning (src/tir/transforms/
 * vectorize_loop.cc): every expression that depends on the var is widened to L lanes,
 * its scalar operands broadcast; expressions that do not depend on it stay scalar (a
 * load at a var-independent index is one scalar load, broadcast where it meets a
 * vector). Lanes are computed with the same operations in the same order as the serial
 * loop computes each iteration, so results are bit-identical.
 *
 * Kept scalar: `if` statements and `tir.if_then_else` whose condition does not depend on
 * the var (a branch with vector arms, e.g. the padding pattern); inner loops whose bounds
 * do not depend on it (a loop with a vector body).
 *
 * The loop stays a serial loop (TVM's scalarize fallback) when vectorizing is not valid
 * or not supported:
 *   - a store whose index does not depend on the var (a cross-lane reduction, or a
 *     write every lane repeats), is not a ramp with a constant non-zero stride (lanes
 *     might write one element), or depends on the var of a loop inside the vectorized
 *     one (lane i at iteration k might write what lane j writes at iteration k');
 *   - a buffer written in the loop and accessed there at an index that differs from the
 *     written one (lanes would see each other's writes in a different order);
 *   - a condition that depends on the var (`if`, or `tir.if_then_else` unless both
 *     sides are safe to evaluate, then it becomes a Select, or the guarded side is one
 *     load at a ramp of stride 1-4, then it stays a vector if_then_else that codegen
 *     reads with a masked load);
 *   - an Allocate, a parallel loop, or a loop bound that depends on the var, inside;
 *   - an expression that is already a vector and depends on the var (nested vectorized
 *     loops: the inner one is vectorized first, the outer then stays serial);
 *   - a call this pass does not know to be elementwise;
 *   - a non-constant extent or more than TJ_TIR_MAX_VECTOR_LANES lanes. */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "support/vec.h"
#include "transforms/tir/lower.h"

typedef struct let_map {
  const tj_tir_expr_t *from, *to;
} let_map_t;

typedef struct vec {
  tj_arena_t *a;
  const tj_tir_expr_t *var;  /* the loop var */
  const tj_tir_expr_t *ramp; /* Ramp(min, 1, lanes) */
  int lanes;
  bool fail;  /* not vectorizable: keep the loop serial */
  bool oom;
  TJ_VEC(let_map_t) lets; /* let vars rebound to vector vars, innermost last */
  /* Vars of loops inside the vectorized one, and lets bound inside those loops. */
  TJ_VEC(const tj_tir_expr_t *) inner;
} vec_t;

static const tj_tir_expr_t *give_up(vec_t *v) {
  v->fail = true;
  return NULL;
}

static const void *check(vec_t *v, const void *p) {
  if (!p) v->oom = v->fail = true;
  return p;
}

static bool is_vec(vec_t *v, const tj_tir_expr_t *e) { return e->dtype.lanes == v->lanes && v->lanes > 1; }

static const tj_tir_expr_t *bcast(vec_t *v, const tj_tir_expr_t *e) {
  if (!e || is_vec(v, e)) return e;
  return check(v, tj_tir_broadcast(v->a, e, v->lanes));
}

static bool push_let(vec_t *v, const tj_tir_expr_t *from, const tj_tir_expr_t *to) {
  if (tj_vec_push(&v->lets, ((let_map_t){from, to}))) return true;
  return v->oom = v->fail = true, false;
}

static bool push_inner(vec_t *v, const tj_tir_expr_t *var) {
  if (tj_vec_push(&v->inner, var)) return true;
  return v->oom = v->fail = true, false;
}

typedef struct uses_ctx {
  const tj_tir_expr_t *const *vars;
  int n;
  bool found;
} uses_ctx_t;

static bool uses_expr(tj_tir_visitor_t *vis, const tj_tir_expr_t *e) {
  uses_ctx_t *c = vis->ctx;
  if (e->kind == TJ_TIR_VAR)
    for (int i = 0; i < c->n; i++) c->found |= c->vars[i] == e;
  return !c->found;
}

static bool uses_inner(const vec_t *v, const tj_tir_expr_t *e) {
  uses_ctx_t c = {v->inner.items, v->inner.n, false};
  tj_tir_visitor_t vis = {.expr = uses_expr, .ctx = &c};
  if (v->inner.n) tj_tir_visit_expr(&vis, e);
  return c.found;
}

static const tj_tir_expr_t *vexpr(vec_t *v, const tj_tir_expr_t *e);

/* ---- integer index arithmetic on ramps (TVM's Ramp/Broadcast folding), so that
 * `base_expr + c` with c vectorized stays one contiguous ramp (one vector load). ---- */

static bool as_ramp(const tj_tir_expr_t *e, const tj_tir_expr_t **base, const tj_tir_expr_t **stride) {
  if (e->kind != TJ_TIR_RAMP) return false;
  *base = e->ramp.base;
  *stride = e->ramp.stride;
  return true;
}

static const tj_tir_expr_t *scalar_of(const tj_tir_expr_t *e) {
  return e->kind == TJ_TIR_BROADCAST ? e->broadcast.value : e->dtype.lanes == 1 ? e : NULL;
}

static const tj_tir_expr_t *bin(vec_t *v, tj_tir_expr_kind_t k, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  int64_t c;
  /* x + 0, x - 0, x * 1 (a zero loop min, a unit stride): keep the index readable. */
  if (tj_tir_is_const_int(y, &c) && ((c == 0 && (k == TJ_TIR_ADD || k == TJ_TIR_SUB)) || (c == 1 && k == TJ_TIR_MUL)))
    return x;
  if (tj_tir_is_const_int(x, &c) && ((c == 0 && k == TJ_TIR_ADD) || (c == 1 && k == TJ_TIR_MUL))) return y;
  return check(v, tj_tir_binary(v->a, k, x, y));
}

static const tj_tir_expr_t *ramp(vec_t *v, const tj_tir_expr_t *base, const tj_tir_expr_t *stride) {
  if (!base || !stride) return NULL;
  return check(v, tj_tir_ramp(v->a, base, stride, v->lanes));
}

/* x op y for integer add/sub/mul where one side is a ramp and the other a ramp or a
 * scalar; NULL when no folding applies. Lane i of the result is computed as
 * (b1 op b2) + i*(s1 op s2): equal to the per-lane value in wrapping integer arithmetic. */
static const tj_tir_expr_t *fold_ramp(vec_t *v, tj_tir_expr_kind_t k, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  const tj_tir_expr_t *b1, *s1, *b2, *s2, *sx, *sy;
  if (!tj_dtype_is_int(x->dtype)) return NULL;
  bool rx = as_ramp(x, &b1, &s1), ry = as_ramp(y, &b2, &s2);
  if (!rx && !ry) return NULL;
  if (k == TJ_TIR_ADD || k == TJ_TIR_SUB) {
    if (rx && ry) return ramp(v, bin(v, k, b1, b2), bin(v, k, s1, s2));
    if (rx && (sy = scalar_of(y))) return ramp(v, bin(v, k, b1, sy), s1);
    if (ry && (sx = scalar_of(x))) {
      if (k == TJ_TIR_ADD) return ramp(v, bin(v, k, sx, b2), s2);
      const tj_tir_expr_t *zero = check(v, tj_tir_int(v->a, s2->dtype, 0));
      return ramp(v, bin(v, k, sx, b2), bin(v, TJ_TIR_SUB, zero, s2));
    }
    return NULL;
  }
  if (k == TJ_TIR_MUL) {
    if (rx && (sy = scalar_of(y))) return ramp(v, bin(v, k, b1, sy), bin(v, k, s1, sy));
    if (ry && (sx = scalar_of(x))) return ramp(v, bin(v, k, sx, b2), bin(v, k, sx, s2));
  }
  return NULL;
}

/* ---- expressions ---- */

/* Widens operands: when any of them changed, every scalar one is broadcast. Returns
 * false when nothing depends on the var (the caller keeps e). */
static bool widen_all(vec_t *v, const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *in,
                      const tj_tir_expr_t **out) {
  bool changed = false;
  for (int i = 0; i < n; i++) {
    out[i] = vexpr(v, in[i]);
    if (v->fail) return false;
    changed |= out[i] != in[i];
  }
  if (!changed) return false;
  if (e->dtype.lanes > 1) return give_up(v), false; /* already a vector */
  for (int i = 0; i < n; i++)
    if (!(out[i] = bcast(v, out[i]))) return false;
  return true;
}

static const tj_tir_expr_t *vbinary(vec_t *v, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *in[2] = {e->binary.a, e->binary.b}, *out[2];
  for (int i = 0; i < 2; i++)
    if (!(out[i] = vexpr(v, in[i]))) return NULL;
  if (out[0] == in[0] && out[1] == in[1]) return e;
  if (in[0]->dtype.lanes > 1 || in[1]->dtype.lanes > 1) return give_up(v);
  const tj_tir_expr_t *folded = fold_ramp(v, e->kind, out[0], out[1]);
  if (folded || v->fail) return folded;
  return bin(v, e->kind, bcast(v, out[0]), bcast(v, out[1]));
}

/* Safe to evaluate when its condition says not to: no memory access, no integer
 * division (a zero divisor), only pure elementwise calls. */
static bool speculatable(const tj_tir_expr_t *e) {
  switch (e->kind) {
    case TJ_TIR_BUFFER_LOAD: return false;
    case TJ_TIR_DIV: case TJ_TIR_MOD: case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: {
      /* integers: only by a positive constant (a fused loop's unfuse, `fo % 72`; not -1: INT_MIN / -1 traps) */
      int64_t d;
      if (!tj_dtype_is_floating(e->dtype) && (!tj_tir_is_const_int(e->binary.b, &d) || d <= 0)) return false;
      break;
    }
    case TJ_TIR_CALL:
      if (strcmp(e->call.op, "tir.if_then_else") == 0) return false;
      for (int i = 0; i < e->call.n_args; i++)
        if (!speculatable(e->call.args[i])) return false;
      return true;
    default: break;
  }
  if (tj_tir_kind_is_binary(e->kind)) return speculatable(e->binary.a) && speculatable(e->binary.b);
  switch (e->kind) {
    case TJ_TIR_NOT: case TJ_TIR_CAST: return speculatable(e->unary.operand);
    case TJ_TIR_SELECT:
      return speculatable(e->select.cond) && speculatable(e->select.true_value) && speculatable(e->select.false_value);
    case TJ_TIR_LET: return speculatable(e->let.value) && speculatable(e->let.body);
    case TJ_TIR_RAMP: return speculatable(e->ramp.base) && speculatable(e->ramp.stride);
    case TJ_TIR_BROADCAST: return speculatable(e->broadcast.value);
    default: return true; /* literals, vars */
  }
}

/* A padding fill vectorized along the padded dim, if_then_else(lane-dependent cond,
 * load, b): the load (its index speculatable) at a ramp with a constant stride of 1-4
 * is read by codegen as a masked load, lanes whose condition is false not touched. */
#define MAX_MASKED_STRIDE 4

static bool maskable_load(const tj_tir_expr_t *scalar, const tj_tir_expr_t *vector) {
  int64_t s;
  if (scalar->kind != TJ_TIR_BUFFER_LOAD || scalar->load.n_indices != 1 || !speculatable(scalar->load.indices[0]) ||
      scalar->load.buffer->dtype.code == TJ_DT_BOOL || vector->kind != TJ_TIR_BUFFER_LOAD)
    return false;
  const tj_tir_expr_t *idx = vector->load.indices[0];
  return idx->kind == TJ_TIR_RAMP && tj_tir_is_const_int(idx->ramp.stride, &s) && s >= 1 && s <= MAX_MASKED_STRIDE;
}

static const tj_tir_expr_t *vif_then_else(vec_t *v, const tj_tir_expr_t *e) {
  if (e->call.n_args != 3) return give_up(v);
  const tj_tir_expr_t *out[3];
  const tj_tir_expr_t *cond = out[0] = vexpr(v, e->call.args[0]);
  if (!cond) return NULL;
  for (int i = 1; i < 3; i++)
    if (!(out[i] = vexpr(v, e->call.args[i]))) return NULL;
  if (out[0] == e->call.args[0] && out[1] == e->call.args[1] && out[2] == e->call.args[2]) return e;
  if (e->dtype.lanes > 1) return give_up(v);
  if (is_vec(v, cond)) {
    /* Both sides would run for every lane: only when that is harmless, or when the
     * guarded side is one load at a ramp codegen reads with a mask (masked_load). */
    if (!speculatable(e->call.args[2])) return give_up(v);
    if (speculatable(e->call.args[1])) return check(v, tj_tir_select(v->a, cond, bcast(v, out[1]), bcast(v, out[2])));
    if (!maskable_load(e->call.args[1], out[1])) return give_up(v);
    const tj_tir_expr_t *args[3] = {cond, out[1], bcast(v, out[2])};
    if (!args[2]) return NULL;
    return check(v, tj_tir_call(v->a, tj_dtype_with_lanes(e->dtype, v->lanes), e->call.op, 3, args));
  }
  out[1] = bcast(v, out[1]);
  out[2] = bcast(v, out[2]);
  if (!out[1] || !out[2]) return NULL;
  return check(v, tj_tir_call(v->a, tj_dtype_with_lanes(e->dtype, v->lanes), e->call.op, 3, out));
}

/* Calls that act lane by lane (codegen has a vector form of each). */
static bool elementwise_call(const char *op) {
  static const char *const ops[] = {
      "tir.exp", "tir.exp2", "tir.exp10", "tir.log", "tir.log2", "tir.log10", "tir.sqrt", "tir.rsqrt",
      "tir.sin", "tir.cos", "tir.tan", "tir.fabs", "tir.floor", "tir.ceil", "tir.trunc", "tir.round",
      "tir.nearbyint", "tir.pow", "tir.copysign", "tir.tanh", "tir.erf", "tir.log1p", "tir.expm1",
      "tir.atan", "tir.asin", "tir.acos", "tir.sinh", "tir.cosh", "tir.atan2", "tir.fmod", "tir.hypot",
      "tir.asinh", "tir.acosh", "tir.atanh",
      "tir.sigmoid", "tir.isnan", "tir.isinf", "tir.isfinite", "tir.likely", "tir.bitwise_and",
      "tir.bitwise_or", "tir.bitwise_xor", "tir.bitwise_not", "tir.shift_left", "tir.shift_right",
      "tir.tvmjit.bf16_dot2"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

static const tj_tir_expr_t *vcall(vec_t *v, const tj_tir_expr_t *e) {
  if (strcmp(e->call.op, "tir.if_then_else") == 0) return vif_then_else(v, e);
  enum { MAX_ARGS = 8 };
  const tj_tir_expr_t *out[MAX_ARGS];
  if (e->call.n_args > MAX_ARGS) {
    for (int i = 0; i < e->call.n_args; i++)
      if (vexpr(v, e->call.args[i]) != e->call.args[i]) return v->fail ? NULL : give_up(v);
    return e;
  }
  if (!widen_all(v, e, e->call.n_args, e->call.args, out)) return v->fail ? NULL : e;
  if (!elementwise_call(e->call.op)) return give_up(v);
  return check(v, tj_tir_call(v->a, tj_dtype_with_lanes(e->dtype, v->lanes), e->call.op, e->call.n_args, out));
}

static const tj_tir_expr_t *vlet(vec_t *v, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *val = vexpr(v, e->let.value);
  if (!val) return NULL;
  const tj_tir_expr_t *var = e->let.var;
  int saved = v->lets.n;
  int saved_inner = v->inner.n;
  if (v->inner.n && !push_inner(v, e->let.var)) return NULL;
  if (val != e->let.value) {
    if (e->let.var->dtype.lanes > 1) return give_up(v);
    var = check(v, tj_tir_var(v->a, e->let.var->var.name, val->dtype));
    if (!var || !push_let(v, e->let.var, var)) return NULL;
  }
  const tj_tir_expr_t *body = vexpr(v, e->let.body);
  v->lets.n = saved;
  v->inner.n = saved_inner;
  if (!body) return NULL;
  if (var == e->let.var && body == e->let.body) return e;
  return check(v, tj_tir_let(v->a, var, val, body));
}

static const tj_tir_expr_t *vexpr(vec_t *v, const tj_tir_expr_t *e) {
  if (v->fail) return NULL;
  switch (e->kind) {
    case TJ_TIR_VAR:
      if (e == v->var) return v->ramp;
      for (int i = v->lets.n - 1; i >= 0; i--)
        if (v->lets.items[i].from == e) return v->lets.items[i].to;
      return e;
    case TJ_TIR_NOT: case TJ_TIR_CAST: {
      const tj_tir_expr_t *x = vexpr(v, e->unary.operand);
      if (!x || x == e->unary.operand) return x ? e : NULL;
      if (e->dtype.lanes > 1) return give_up(v);
      if (e->kind == TJ_TIR_NOT) return check(v, tj_tir_not(v->a, x));
      return check(v, tj_tir_cast(v->a, tj_dtype_with_lanes(e->dtype, v->lanes), x));
    }
    case TJ_TIR_SELECT: {
      const tj_tir_expr_t *in[3] = {e->select.cond, e->select.true_value, e->select.false_value}, *out[3];
      for (int i = 0; i < 3; i++)
        if (!(out[i] = vexpr(v, in[i]))) return NULL;
      if (out[0] == in[0] && out[1] == in[1] && out[2] == in[2]) return e;
      if (e->dtype.lanes > 1 || in[0]->dtype.lanes > 1) return give_up(v);
      /* A scalar condition stays scalar (select of two vectors by one i1). */
      const tj_tir_expr_t *t = bcast(v, out[1]), *f = bcast(v, out[2]);
      return t && f ? check(v, tj_tir_select(v->a, out[0], t, f)) : NULL;
    }
    case TJ_TIR_BUFFER_LOAD: {
      if (e->load.n_indices != 1) return give_up(v);
      const tj_tir_expr_t *idx = vexpr(v, e->load.indices[0]);
      if (!idx || idx == e->load.indices[0]) return idx ? e : NULL;
      if (e->dtype.lanes > 1) return give_up(v);
      return check(v, tj_tir_load(v->a, e->load.buffer, 1, &idx));
    }
    case TJ_TIR_LET: return vlet(v, e);
    case TJ_TIR_CALL: return vcall(v, e);
    case TJ_TIR_RAMP: case TJ_TIR_BROADCAST: {
      /* Already a vector: fine unless it depends on the var. */
      const tj_tir_expr_t *x = vexpr(v, e->kind == TJ_TIR_RAMP ? e->ramp.base : e->broadcast.value);
      const tj_tir_expr_t *y = x && e->kind == TJ_TIR_RAMP ? vexpr(v, e->ramp.stride) : x;
      if (!y) return NULL;
      bool same = e->kind == TJ_TIR_RAMP ? (x == e->ramp.base && y == e->ramp.stride) : x == e->broadcast.value;
      return same ? e : give_up(v);
    }
    case TJ_TIR_INT_IMM: case TJ_TIR_FLOAT_IMM: case TJ_TIR_STRING_IMM: return e;
    default:
      if (tj_tir_kind_is_binary(e->kind)) return vbinary(v, e);
      return give_up(v);
  }
}

/* ---- statements ---- */

static const tj_tir_stmt_t *vstmt(vec_t *v, const tj_tir_stmt_t *s);

static const tj_tir_stmt_t *vstore(vec_t *v, const tj_tir_stmt_t *s) {
  if (s->store.n_indices != 1) return give_up(v), NULL;
  const tj_tir_expr_t *idx = vexpr(v, s->store.indices[0]);
  const tj_tir_expr_t *val = idx ? vexpr(v, s->store.value) : NULL;
  if (!val) return NULL;
  /* Every lane would write the same element: a reduction across lanes, or a write the
   * serial loop repeats; keep the loop serial. */
  if (idx == s->store.indices[0]) return give_up(v), NULL;
  if (s->store.value->dtype.lanes > 1 || s->store.indices[0]->dtype.lanes > 1) return give_up(v), NULL;
  /* Lanes must write distinct elements (a ramp with a constant non-zero stride), and
   * no element twice across the iterations of an inner loop: an index that depends on
   * an inner loop's var could meet another lane's index at another iteration, which
   * the serial loop orders differently. */
  int64_t stride;
  if (idx->kind != TJ_TIR_RAMP || !tj_tir_is_const_int(idx->ramp.stride, &stride) || stride == 0 ||
      uses_inner(v, s->store.indices[0]))
    return give_up(v), NULL;
  if (!(val = bcast(v, val))) return NULL;
  return check(v, tj_tir_store(v->a, s->store.buffer, 1, &idx, val));
}

static const tj_tir_stmt_t *vlet_stmt(vec_t *v, const tj_tir_stmt_t *s) {
  const tj_tir_expr_t *val = vexpr(v, s->let.value);
  if (!val) return NULL;
  const tj_tir_expr_t *var = s->let.var;
  int saved = v->lets.n;
  int saved_inner = v->inner.n;
  if (v->inner.n && !push_inner(v, s->let.var)) return NULL;
  if (val != s->let.value) {
    if (s->let.var->dtype.lanes > 1) return give_up(v), NULL;
    var = check(v, tj_tir_var(v->a, s->let.var->var.name, val->dtype));
    if (!var || !push_let(v, s->let.var, var)) return NULL;
  }
  const tj_tir_stmt_t *body = vstmt(v, s->let.body);
  v->lets.n = saved;
  v->inner.n = saved_inner;
  if (!body) return NULL;
  if (var == s->let.var && body == s->let.body) return s;
  return check(v, tj_tir_let_stmt(v->a, var, val, body));
}

static const tj_tir_stmt_t *vstmt(vec_t *v, const tj_tir_stmt_t *s) {
  if (v->fail || !s) return NULL;
  switch (s->kind) {
    case TJ_TIR_BUFFER_STORE: return vstore(v, s);
    case TJ_TIR_LET_STMT: return vlet_stmt(v, s);
    case TJ_TIR_IF: {
      const tj_tir_expr_t *cond = vexpr(v, s->if_.cond);
      if (!cond) return NULL;
      if (cond != s->if_.cond) return give_up(v), NULL; /* a per-lane condition */
      const tj_tir_stmt_t *t = vstmt(v, s->if_.then_stmt);
      const tj_tir_stmt_t *f = s->if_.else_stmt ? vstmt(v, s->if_.else_stmt) : NULL;
      if (!t || (s->if_.else_stmt && !f)) return NULL;
      if (t == s->if_.then_stmt && f == s->if_.else_stmt) return s;
      return check(v, tj_tir_if(v->a, cond, t, f));
    }
    case TJ_TIR_SEQ: {
      const tj_tir_stmt_t **out = TJ_ARENA_ARRAY(v->a, const tj_tir_stmt_t *, s->seq.n);
      if (!check(v, out)) return NULL;
      bool changed = false;
      for (int i = 0; i < s->seq.n; i++) {
        if (!(out[i] = vstmt(v, s->seq.stmts[i]))) return NULL;
        changed |= out[i] != s->seq.stmts[i];
      }
      return changed ? check(v, tj_tir_seq(v->a, s->seq.n, out)) : s;
    }
    case TJ_TIR_FOR: {
      if (s->loop.kind == TJ_FOR_PARALLEL || s->loop.kind == TJ_FOR_THREAD_BINDING) return give_up(v), NULL;
      const tj_tir_expr_t *min = vexpr(v, s->loop.min);
      const tj_tir_expr_t *ext = min ? vexpr(v, s->loop.extent) : NULL;
      if (!ext) return NULL;
      if (min != s->loop.min || ext != s->loop.extent) return give_up(v), NULL;
      int saved_inner = v->inner.n;
      if (!push_inner(v, s->loop.var)) return NULL;
      const tj_tir_stmt_t *body = vstmt(v, s->loop.body);
      v->inner.n = saved_inner;
      if (!body) return NULL;
      if (body == s->loop.body) return s;
      tj_tir_stmt_t *r = (tj_tir_stmt_t *)check(v, tj_tir_for(v->a, s->loop.var, min, ext, s->loop.kind, body));
      if (r) r->loop.annotations = s->loop.annotations;
      return r;
    }
    case TJ_TIR_EVALUATE: {
      const tj_tir_expr_t *x = vexpr(v, s->evaluate.value);
      if (!x) return NULL;
      return x == s->evaluate.value ? s : (give_up(v), NULL);
    }
    default: return give_up(v), NULL; /* Allocate, blocks */
  }
}

/* ---- the access check: a buffer written in the loop is accessed at one index ---- */

typedef struct access {
  const tj_tir_expr_t *data;  /* the buffer's storage var */
  const tj_tir_expr_t *index;
  bool write;
} access_t;

typedef struct access_ctx {
  TJ_VEC(access_t) accesses; /* in the pass arena */
  bool oom;
} access_ctx_t;

static void add_access(access_ctx_t *c, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx, bool write) {
  if (c->oom || n != 1) return;
  if (!tj_vec_push(&c->accesses, ((access_t){b->data, idx[0], write}))) c->oom = true;
}

static bool access_expr(tj_tir_visitor_t *vis, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_BUFFER_LOAD) add_access(vis->ctx, e->load.buffer, e->load.n_indices, e->load.indices, false);
  return true;
}

static bool access_stmt(tj_tir_visitor_t *vis, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_BUFFER_STORE)
    add_access(vis->ctx, s->store.buffer, s->store.n_indices, s->store.indices, true);
  return true;
}

/* False when lanes could observe each other's writes: a written buffer is accessed at
 * two different indices (or a multi-dimensional access we cannot compare). */
static bool accesses_lane_private(tj_arena_t *a, const tj_tir_stmt_t *body, bool *oom) {
  access_ctx_t c = {.accesses = {.arena = a}};
  tj_tir_visitor_t vis = {.expr = access_expr, .stmt = access_stmt, .ctx = &c};
  tj_tir_visit_stmt(&vis, body);
  if (c.oom) return *oom = true, false;
  const access_t *acc = c.accesses.items;
  for (int i = 0; i < c.accesses.n; i++) {
    if (!acc[i].write) continue;
    for (int j = 0; j < c.accesses.n; j++)
      if (acc[j].data == acc[i].data && !tj_struct_equal_tir_expr(acc[i].index, acc[j].index))
        return false;
  }
  return true;
}

/* ---- the pass ---- */


static const tj_tir_stmt_t *serial(tj_arena_t *a, const tj_tir_stmt_t *loop, const tj_tir_stmt_t *body) {
  tj_tir_stmt_t *r = (tj_tir_stmt_t *)tj_tir_for(a, loop->loop.var, loop->loop.min, loop->loop.extent, TJ_FOR_SERIAL, body);
  if (r) r->loop.annotations = loop->loop.annotations;
  return r;
}

/* The vectorized body, or NULL with *oom false when the loop stays serial. */
static const tj_tir_stmt_t *vectorize(tj_arena_t *a, const tj_tir_stmt_t *loop, const tj_tir_stmt_t *body, bool *oom) {
  int64_t lanes;
  if (!tj_tir_is_const_int(loop->loop.extent, &lanes) || lanes < 1 || lanes > TJ_TIR_MAX_VECTOR_LANES) return NULL;
  const tj_tir_expr_t *var = loop->loop.var;
  if (var->dtype.lanes != 1 || !tj_dtype_is_int(var->dtype)) return NULL;
  const tj_tir_expr_t *min = loop->loop.min;
  if (!tj_dtype_eq(min->dtype, var->dtype)) min = tj_tir_cast(a, var->dtype, min);
  if (!min) return *oom = true, NULL;
  if (lanes == 1) {
    const tj_tir_stmt_t *r = tj_tir_substitute_stmt(a, body, 1, &var, &min);
    if (!r) *oom = true;
    return r;
  }
  if (!accesses_lane_private(a, body, oom)) return NULL;
  vec_t v = {.a = a, .var = var, .lanes = (int)lanes, .lets = {.arena = a}, .inner = {.arena = a}};
  v.ramp = tj_tir_ramp(a, min, tj_tir_int(a, var->dtype, 1), (int)lanes);
  if (!v.ramp) return *oom = true, NULL;
  const tj_tir_stmt_t *r = vstmt(&v, body);
  if (v.oom) *oom = true;
  return v.fail ? NULL : r;
}

static const tj_tir_stmt_t *vectorize_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR || s->loop.kind != TJ_FOR_VECTORIZED) return NULL;
  /* Inner loops first: an inner vectorized loop takes the lanes. */
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->loop.body);
  if (!body) return NULL;
  bool oom = false;
  const tj_tir_stmt_t *r = vectorize(m->arena, s, body, &oom);
  if (!r && !oom) r = serial(m->arena, s, body);
  if (!r) m->failed = true; /* reported as out of memory by tj_tir_mutate_prim_func_body */
  return r;
}

tj_status_t *tj_tir_vectorize_loops(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out) {
  tj_tir_mutator_t m = {.arena = arena, .stmt = vectorize_stmt};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "VectorizeLoop", name, out);
}
