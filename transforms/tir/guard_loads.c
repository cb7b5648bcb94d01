/* Memory safety for kernels that decide by data whether to read, and read out of
 * bounds by design. TOPI's max pool gradient (R.grad.max_pool2d_backward, TVM's exact
 * TIR) sums, for each input cell, the windows o = (x + pad) / stride - r that might
 * cover it; it tests `argmax[o] == x` inside an if_then_else condition before reading
 * out_grad[o], and o runs below 0 and past the output's extent: both buffers are read
 * out of bounds (TVM's LLVM codegen evaluates the whole condition).
 *
 * In a PrimFunc with a buffer load inside an if_then_else condition, every load whose
 * index an interval analysis cannot prove in bounds (loop and block iter var ranges,
 * narrowed by the constant comparisons of enclosing if_then_else conditions) becomes
 * if_then_else(in bounds, load, 0). For the max pool gradient that is exactly TVM's
 * result: an out-of-range window reads argmax 0 and out_grad 0, so it adds 0 even when
 * 0 happens to equal x. Loads with data-dependent indices are left to FlattenBuffers,
 * which clamps them. Kernels without loads in conditions are not touched, and provably
 * in-bounds loads never change. */
#include <string.h>

#include "ir/visit.h"
#include "transforms/tir/lower.h"

#define MAX_RANGES 256

typedef struct interval {
  bool known;
  int64_t lo, hi;
} interval_t;

typedef struct guard_ctx {
  int n;
  const tj_tir_expr_t *vars[MAX_RANGES];
  interval_t ranges[MAX_RANGES];
  bool load_in_condition;
} guard_ctx_t;

static interval_t unknown(void) { return (interval_t){false, 0, 0}; }
static interval_t exactly(int64_t v) { return (interval_t){true, v, v}; }

static interval_t *lookup(guard_ctx_t *c, const tj_tir_expr_t *var) {
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == var) return &c->ranges[i];
  return NULL;
}

static void add_range(guard_ctx_t *c, const tj_tir_expr_t *var, const tj_tir_expr_t *min, const tj_tir_expr_t *extent) {
  int64_t lo, ext;
  if (c->n == MAX_RANGES || lookup(c, var)) return; /* unknown: loads on it get guarded */
  bool known = min && extent && tj_tir_is_const_int(min, &lo) && tj_tir_is_const_int(extent, &ext) && ext > 0;
  c->vars[c->n] = var;
  c->ranges[c->n++] = known ? (interval_t){true, lo, lo + ext - 1} : unknown();
}

static bool is_if_then_else(const tj_tir_expr_t *e) {
  return e->kind == TJ_TIR_CALL && strcmp(e->call.op, "tir.if_then_else") == 0 && e->call.n_args == 3;
}

static bool find_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  bool *found = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD) *found = true;
  return !*found;
}

static bool has_load(const tj_tir_expr_t *e) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = find_load, .ctx = &found};
  tj_tir_visit_expr(&v, e);
  return found;
}

/* Collects loop and iter var ranges, and whether some if_then_else condition loads. */
static bool collect_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  guard_ctx_t *c = v->ctx;
  if (is_if_then_else(e) && has_load(e->call.args[0])) c->load_in_condition = true;
  return true;
}

static bool collect_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_FOR) add_range(v->ctx, s->loop.var, s->loop.min, s->loop.extent);
  return true;
}

static bool collect_block(tj_tir_visitor_t *v, const tj_block_t *b) {
  for (int i = 0; i < b->n_iter_vars; i++)
    add_range(v->ctx, b->iter_vars[i].var, b->iter_vars[i].dom.min, b->iter_vars[i].dom.extent);
  return true;
}

/* ---------------- intervals ---------------- */

static interval_t eval(guard_ctx_t *c, const tj_tir_expr_t *e);

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

/* Products and quotients stay far from overflow for tensor extents; larger bounds are
 * treated as unknown. */
static bool small(interval_t x) { return x.lo > -((int64_t)1 << 30) && x.hi < ((int64_t)1 << 30); }

static interval_t mul(interval_t x, interval_t y) {
  if (!small(x) || !small(y)) return unknown();
  int64_t p[4] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
  return (interval_t){true, min2(min2(p[0], p[1]), min2(p[2], p[3])), max2(max2(p[0], p[1]), max2(p[2], p[3]))};
}

static int64_t floordiv64(int64_t x, int64_t d) { return x / d - (x % d != 0 && x < 0); }

/* x / d and x // d for a positive constant d: both are monotonic in x. */
static interval_t divide(interval_t x, interval_t d, bool floor) {
  if (!d.known || d.lo != d.hi || d.lo <= 0) return unknown();
  if (floor) return (interval_t){true, floordiv64(x.lo, d.lo), floordiv64(x.hi, d.lo)};
  return (interval_t){true, x.lo / d.lo, x.hi / d.lo};
}

static interval_t modulo(interval_t x, interval_t d, bool floor) {
  if (!d.known || d.lo != d.hi || d.lo <= 0) return unknown();
  if (x.lo >= 0 && x.hi < d.lo) return x;
  if (floor || x.lo >= 0) return (interval_t){true, 0, d.lo - 1};
  return (interval_t){true, -(d.lo - 1), d.lo - 1};
}

static interval_t join(interval_t x, interval_t y) {
  if (!x.known || !y.known) return unknown();
  return (interval_t){true, min2(x.lo, y.lo), max2(x.hi, y.hi)};
}

static interval_t eval_binary(guard_ctx_t *c, const tj_tir_expr_t *e) {
  interval_t x = eval(c, e->binary.a), y = eval(c, e->binary.b);
  if (!x.known || !y.known) return unknown();
  switch (e->kind) {
    case TJ_TIR_ADD: return small(x) && small(y) ? (interval_t){true, x.lo + y.lo, x.hi + y.hi} : unknown();
    case TJ_TIR_SUB: return small(x) && small(y) ? (interval_t){true, x.lo - y.hi, x.hi - y.lo} : unknown();
    case TJ_TIR_MUL: return mul(x, y);
    case TJ_TIR_DIV: return divide(x, y, false);
    case TJ_TIR_FLOOR_DIV: return divide(x, y, true);
    case TJ_TIR_MOD: return modulo(x, y, false);
    case TJ_TIR_FLOOR_MOD: return modulo(x, y, true);
    case TJ_TIR_MIN: return (interval_t){true, min2(x.lo, y.lo), min2(x.hi, y.hi)};
    case TJ_TIR_MAX: return (interval_t){true, max2(x.lo, y.lo), max2(x.hi, y.hi)};
    default: return unknown();
  }
}

static interval_t eval(guard_ctx_t *c, const tj_tir_expr_t *e) {
  if (!tj_dtype_is_int(e->dtype) || e->dtype.lanes > 1) return unknown();
  switch (e->kind) {
    case TJ_TIR_INT_IMM: return exactly(e->int_imm);
    case TJ_TIR_VAR: {
      interval_t *r = lookup(c, e);
      return r ? *r : unknown();
    }
    case TJ_TIR_CAST: return tj_dtype_is_int(e->unary.operand->dtype) ? eval(c, e->unary.operand) : unknown();
    case TJ_TIR_SELECT: return join(eval(c, e->select.true_value), eval(c, e->select.false_value));
    case TJ_TIR_CALL: return is_if_then_else(e) ? join(eval(c, e->call.args[1]), eval(c, e->call.args[2])) : unknown();
    default: return e->kind >= TJ_TIR_ADD && e->kind <= TJ_TIR_MAX ? eval_binary(c, e) : unknown();
  }
}

/* ---------------- the rewrite ---------------- */

static bool in_bounds(guard_ctx_t *c, const tj_tir_expr_t *idx, const tj_tir_expr_t *extent) {
  int64_t ext;
  interval_t r = eval(c, idx);
  return r.known && tj_tir_is_const_int(extent, &ext) && r.lo >= 0 && r.hi < ext;
}

/* if_then_else(0 <= i < extent for each doubtful dim, load, 0). */
static const tj_tir_expr_t *guarded_load(tj_tir_mutator_t *m, const tj_tir_expr_t *load) {
  guard_ctx_t *c = m->ctx;
  tj_arena_t *a = m->arena;
  const tj_buffer_t *b = load->load.buffer;
  const tj_tir_expr_t *cond = NULL;
  for (int i = 0; i < load->load.n_indices && i < b->ndim; i++) {
    const tj_tir_expr_t *idx = load->load.indices[i];
    if (has_load(idx) || in_bounds(c, idx, b->shape[i])) continue; /* data-dependent: FlattenBuffers clamps */
    const tj_tir_expr_t *zero = tj_tir_int(a, idx->dtype, 0);
    const tj_tir_expr_t *ext = b->shape[i]->dtype.bits == idx->dtype.bits ? b->shape[i]
                                                                          : tj_tir_cast(a, idx->dtype, b->shape[i]);
    const tj_tir_expr_t *ok =
        tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_LE, zero, idx), tj_tir_binary(a, TJ_TIR_LT, idx, ext));
    cond = cond ? tj_tir_binary(a, TJ_TIR_AND, cond, ok) : ok;
  }
  if (!cond) return load;
  const tj_tir_expr_t *zero = tj_dtype_is_floating(load->dtype) ? tj_tir_float(a, load->dtype, 0)
                                                             : tj_tir_int(a, load->dtype, 0);
  const tj_tir_expr_t *args[3] = {cond, load, zero};
  const tj_tir_expr_t *r = zero ? tj_tir_call(a, load->dtype, "tir.if_then_else", 3, args) : NULL;
  if (!r) m->failed = true;
  return r;
}

/* The constant comparisons `var < c`, `c <= var`, ... of a conjunction narrow var's
 * range in the then-branch; `saved` records what to restore. */
typedef struct narrowing {
  int n;
  interval_t *where[8];
  interval_t old[8];
} narrowing_t;

static void narrow(guard_ctx_t *c, const tj_tir_expr_t *cond, narrowing_t *saved) {
  if (cond->kind == TJ_TIR_AND) {
    narrow(c, cond->binary.a, saved);
    narrow(c, cond->binary.b, saved);
    return;
  }
  if (cond->kind < TJ_TIR_LT || cond->kind > TJ_TIR_GE || saved->n == 8) return;
  const tj_tir_expr_t *x = cond->binary.a, *y = cond->binary.b;
  bool var_left = x->kind == TJ_TIR_VAR && y->kind == TJ_TIR_INT_IMM;
  if (!var_left && !(y->kind == TJ_TIR_VAR && x->kind == TJ_TIR_INT_IMM)) return;
  interval_t *r = lookup(c, var_left ? x : y);
  if (!r || !r->known) return;
  int64_t k = var_left ? y->int_imm : x->int_imm;
  tj_tir_expr_kind_t op = cond->kind;
  if (!var_left)
    op = op == TJ_TIR_LT ? TJ_TIR_GT : op == TJ_TIR_LE ? TJ_TIR_GE : op == TJ_TIR_GT ? TJ_TIR_LT : TJ_TIR_LE;
  saved->where[saved->n] = r;
  saved->old[saved->n++] = *r;
  if (op == TJ_TIR_LT) r->hi = min2(r->hi, k - 1);
  else if (op == TJ_TIR_LE) r->hi = min2(r->hi, k);
  else if (op == TJ_TIR_GT) r->lo = max2(r->lo, k + 1);
  else r->lo = max2(r->lo, k);
}

static const tj_tir_expr_t *guard_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  guard_ctx_t *c = m->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD) {
    const tj_tir_expr_t *inner = tj_tir_mutate_expr_children(m, e);
    return inner ? guarded_load(m, inner) : NULL;
  }
  if (!is_if_then_else(e)) return NULL;
  const tj_tir_expr_t *args[3];
  args[0] = tj_tir_mutate_expr(m, e->call.args[0]);
  narrowing_t saved = {0};
  narrow(c, e->call.args[0], &saved);
  args[1] = tj_tir_mutate_expr(m, e->call.args[1]);
  for (int i = saved.n - 1; i >= 0; i--) *saved.where[i] = saved.old[i];
  args[2] = tj_tir_mutate_expr(m, e->call.args[2]);
  if (!args[0] || !args[1] || !args[2]) return NULL;
  if (args[0] == e->call.args[0] && args[1] == e->call.args[1] && args[2] == e->call.args[2]) return e;
  const tj_tir_expr_t *r = tj_tir_call(m->arena, e->dtype, e->call.op, 3, args);
  if (!r) m->failed = true;
  return r;
}

tj_status_t *tj_tir_guard_loads(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                const tj_prim_func_t **out) {
  guard_ctx_t *c = TJ_ARENA_NEW(arena, guard_ctx_t);
  if (!c) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "GuardLoads: out of memory");
  memset(c, 0, sizeof *c);
  tj_tir_visitor_t v = {.expr = collect_expr, .stmt = collect_stmt, .block = collect_block, .ctx = c};
  tj_tir_visit_stmt(&v, f->body);
  if (!c->load_in_condition) return *out = f, NULL;
  tj_tir_mutator_t m = {.arena = arena, .expr = guard_expr, .ctx = c};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "GuardLoads", name ? name : "?", out);
}
