#include "ir/tir.h"

#include <stdint.h>
#include <string.h>

static tj_tir_expr_t *new_expr(tj_arena_t *a, tj_tir_expr_kind_t kind, tj_dtype_t dtype) {
  tj_tir_expr_t *e = TJ_ARENA_NEW(a, tj_tir_expr_t);
  if (e) {
    e->kind = kind;
    e->dtype = dtype;
  }
  return e;
}

static const tj_tir_expr_t *const *copy_exprs(tj_arena_t *a, int n, const tj_tir_expr_t *const *src) {
  if (n <= 0 || !src) return NULL;
  return tj_arena_memdup(a, src, sizeof(*src) * (size_t)n);
}

const tj_tir_expr_t *tj_tir_int(tj_arena_t *a, tj_dtype_t dtype, int64_t value) {
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_INT_IMM, dtype);
  if (e) e->int_imm = value;
  return e;
}

const tj_tir_expr_t *tj_tir_i64(tj_arena_t *a, int64_t value) { return tj_tir_int(a, TJ_I64, value); }

const tj_tir_expr_t *tj_tir_bool(tj_arena_t *a, bool value) { return tj_tir_int(a, TJ_BOOL, value); }

const tj_tir_expr_t *tj_tir_float(tj_arena_t *a, tj_dtype_t dtype, double value) {
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_FLOAT_IMM, dtype);
  if (e) e->float_imm = value;
  return e;
}

const tj_tir_expr_t *tj_tir_string(tj_arena_t *a, const char *s) {
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_STRING_IMM, TJ_HANDLE);
  if (e) e->string_imm = tj_arena_strdup(a, s);
  return e;
}

const tj_tir_expr_t *tj_tir_var(tj_arena_t *a, const char *name, tj_dtype_t dtype) {
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_VAR, dtype);
  if (e) e->var.name = tj_arena_strdup(a, name ? name : "v");
  return e;
}

bool tj_tir_kind_is_compare(tj_tir_expr_kind_t k) { return k >= TJ_TIR_EQ && k <= TJ_TIR_GE; }

bool tj_tir_kind_is_binary(tj_tir_expr_kind_t k) {
  return (k >= TJ_TIR_ADD && k <= TJ_TIR_GE) || k == TJ_TIR_AND || k == TJ_TIR_OR;
}

const tj_tir_expr_t *tj_tir_binary(tj_arena_t *a, tj_tir_expr_kind_t kind, const tj_tir_expr_t *x,
                                   const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  tj_dtype_t dt = x->dtype;
  if (tj_tir_kind_is_compare(kind) || kind == TJ_TIR_AND || kind == TJ_TIR_OR)
    dt = tj_dtype_with_lanes(TJ_BOOL, x->dtype.lanes);
  tj_tir_expr_t *e = new_expr(a, kind, dt);
  if (e) {
    e->binary.a = x;
    e->binary.b = y;
  }
  return e;
}

const tj_tir_expr_t *tj_tir_not(tj_arena_t *a, const tj_tir_expr_t *x) {
  if (!x) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_NOT, x->dtype);
  if (e) e->unary.operand = x;
  return e;
}

const tj_tir_expr_t *tj_tir_cast(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *x) {
  if (!x) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_CAST, dtype);
  if (e) e->unary.operand = x;
  return e;
}

const tj_tir_expr_t *tj_tir_select(tj_arena_t *a, const tj_tir_expr_t *c, const tj_tir_expr_t *t,
                                   const tj_tir_expr_t *f) {
  if (!c || !t || !f) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_SELECT, t->dtype);
  if (e) {
    e->select.cond = c;
    e->select.true_value = t;
    e->select.false_value = f;
  }
  return e;
}

const tj_tir_expr_t *tj_tir_load(tj_arena_t *a, const tj_buffer_t *buffer, int n,
                                 const tj_tir_expr_t *const *indices) {
  if (!buffer) return NULL;
  tj_dtype_t dt = buffer->dtype;
  /* A vector index (ramp) loads a vector. */
  for (int i = 0; i < n; i++)
    if (indices[i] && indices[i]->dtype.lanes > 1) dt = tj_dtype_with_lanes(dt, indices[i]->dtype.lanes);
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_BUFFER_LOAD, dt);
  if (!e) return NULL;
  e->load.buffer = buffer;
  e->load.n_indices = n;
  e->load.indices = copy_exprs(a, n, indices);
  return (n > 0 && !e->load.indices) ? NULL : e;
}

const tj_tir_expr_t *tj_tir_let(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *value,
                                const tj_tir_expr_t *body) {
  if (!var || !value || !body) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_LET, body->dtype);
  if (e) {
    e->let.var = var;
    e->let.value = value;
    e->let.body = body;
  }
  return e;
}

const tj_tir_expr_t *tj_tir_call(tj_arena_t *a, tj_dtype_t dtype, const char *op, int n,
                                 const tj_tir_expr_t *const *args) {
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_CALL, dtype);
  if (!e) return NULL;
  e->call.op = tj_arena_strdup(a, op);
  e->call.n_args = n;
  e->call.args = copy_exprs(a, n, args);
  return (!e->call.op || (n > 0 && !e->call.args)) ? NULL : e;
}

const tj_tir_expr_t *tj_tir_ramp(tj_arena_t *a, const tj_tir_expr_t *base, const tj_tir_expr_t *stride,
                                 int lanes) {
  if (!base || !stride) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_RAMP, tj_dtype_with_lanes(base->dtype, lanes));
  if (e) {
    e->ramp.base = base;
    e->ramp.stride = stride;
  }
  return e;
}

const tj_tir_expr_t *tj_tir_broadcast(tj_arena_t *a, const tj_tir_expr_t *value, int lanes) {
  if (!value) return NULL;
  tj_tir_expr_t *e = new_expr(a, TJ_TIR_BROADCAST, tj_dtype_with_lanes(value->dtype, lanes));
  if (e) e->broadcast.value = value;
  return e;
}

const tj_buffer_t *tj_buffer_new(tj_arena_t *a, const char *name, tj_dtype_t dtype, int ndim,
                                 const tj_tir_expr_t *const *shape, const tj_tir_expr_t *const *strides) {
  tj_buffer_t *b = TJ_ARENA_NEW(a, tj_buffer_t);
  if (!b) return NULL;
  b->name = tj_arena_strdup(a, name);
  b->dtype = dtype;
  b->ndim = ndim;
  b->shape = copy_exprs(a, ndim, shape);
  b->strides = copy_exprs(a, ndim, strides);
  b->scope = "global";
  b->data = tj_tir_var(a, name, TJ_HANDLE);
  if (!b->name || !b->data || (ndim > 0 && !b->shape)) return NULL;
  return b;
}

const tj_buffer_t *tj_buffer_copy(tj_arena_t *a, const tj_buffer_t *src) {
  tj_buffer_t *b = TJ_ARENA_NEW(a, tj_buffer_t);
  if (!b) return NULL;
  *b = *src;
  b->data = tj_tir_var(a, src->name, TJ_HANDLE);
  return b->data ? b : NULL;
}

static tj_tir_stmt_t *new_stmt(tj_arena_t *a, tj_tir_stmt_kind_t kind) {
  tj_tir_stmt_t *s = TJ_ARENA_NEW(a, tj_tir_stmt_t);
  if (s) s->kind = kind;
  return s;
}

const tj_tir_stmt_t *tj_tir_for(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *min,
                                const tj_tir_expr_t *extent, tj_for_kind_t kind, const tj_tir_stmt_t *body) {
  if (!var || !min || !extent || !body) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_FOR);
  if (s) {
    s->loop.var = var;
    s->loop.min = min;
    s->loop.extent = extent;
    s->loop.kind = kind;
    s->loop.body = body;
  }
  return s;
}

const tj_tir_stmt_t *tj_tir_realize(tj_arena_t *a, int n, const tj_tir_expr_t *const *iter_values,
                                    const tj_tir_expr_t *predicate, const tj_block_t *block) {
  if (!block) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_BLOCK_REALIZE);
  if (!s) return NULL;
  s->realize.n_iter_values = n;
  s->realize.iter_values = copy_exprs(a, n, iter_values);
  s->realize.predicate = predicate ? predicate : tj_tir_bool(a, true);
  s->realize.block = block;
  return (!s->realize.predicate || (n > 0 && !s->realize.iter_values)) ? NULL : s;
}

const tj_tir_stmt_t *tj_tir_store(tj_arena_t *a, const tj_buffer_t *buffer, int n,
                                  const tj_tir_expr_t *const *indices, const tj_tir_expr_t *value) {
  if (!buffer || !value) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_BUFFER_STORE);
  if (!s) return NULL;
  s->store.buffer = buffer;
  s->store.n_indices = n;
  s->store.indices = copy_exprs(a, n, indices);
  s->store.value = value;
  return (n > 0 && !s->store.indices) ? NULL : s;
}

const tj_tir_stmt_t *tj_tir_let_stmt(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *value,
                                     const tj_tir_stmt_t *body) {
  if (!var || !value || !body) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_LET_STMT);
  if (s) {
    s->let.var = var;
    s->let.value = value;
    s->let.body = body;
  }
  return s;
}

const tj_tir_stmt_t *tj_tir_if(tj_arena_t *a, const tj_tir_expr_t *cond, const tj_tir_stmt_t *then_stmt,
                               const tj_tir_stmt_t *else_stmt) {
  if (!cond || !then_stmt) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_IF);
  if (s) {
    s->if_.cond = cond;
    s->if_.then_stmt = then_stmt;
    s->if_.else_stmt = else_stmt;
  }
  return s;
}

const tj_tir_stmt_t *tj_tir_seq(tj_arena_t *a, int n, const tj_tir_stmt_t *const *stmts) {
  if (n == 1) return stmts[0];
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_SEQ);
  if (!s) return NULL;
  s->seq.n = n;
  s->seq.stmts = n > 0 ? tj_arena_memdup(a, stmts, sizeof(*stmts) * (size_t)n) : NULL;
  return (n > 0 && !s->seq.stmts) ? NULL : s;
}

const tj_tir_stmt_t *tj_tir_evaluate(tj_arena_t *a, const tj_tir_expr_t *value) {
  if (!value) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_EVALUATE);
  if (s) s->evaluate.value = value;
  return s;
}

const tj_tir_stmt_t *tj_tir_allocate(tj_arena_t *a, const tj_buffer_t *buffer, const tj_tir_stmt_t *body) {
  if (!buffer || !body) return NULL;
  tj_tir_stmt_t *s = new_stmt(a, TJ_TIR_ALLOCATE);
  if (s) {
    s->allocate.buffer = buffer;
    s->allocate.body = body;
  }
  return s;
}

tj_block_t *tj_block_new(tj_arena_t *a, const char *name) {
  tj_block_t *b = TJ_ARENA_NEW(a, tj_block_t);
  if (b) b->name = tj_arena_strdup(a, name ? name : "");
  return (b && b->name) ? b : NULL;
}

bool tj_tir_is_const_int(const tj_tir_expr_t *e, int64_t *out_value) {
  if (!e || e->kind != TJ_TIR_INT_IMM) return false;
  if (out_value) *out_value = e->int_imm;
  return true;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static bool eval_binary(tj_tir_expr_kind_t k, int64_t a, int64_t b, int64_t *out) {
  bool by_zero = b == 0 || (b == -1 && a == INT64_MIN);
  switch (k) {
    case TJ_TIR_ADD: return !__builtin_add_overflow(a, b, out);
    case TJ_TIR_SUB: return !__builtin_sub_overflow(a, b, out);
    case TJ_TIR_MUL: return !__builtin_mul_overflow(a, b, out);
    case TJ_TIR_DIV: return !by_zero && (*out = a / b, true);
    case TJ_TIR_MOD: return !by_zero && (*out = a % b, true);
    case TJ_TIR_FLOOR_DIV: return !by_zero && (*out = floor_div(a, b), true);
    case TJ_TIR_FLOOR_MOD: return !by_zero && (*out = a - floor_div(a, b) * b, true);
    case TJ_TIR_MIN: return *out = a < b ? a : b, true;
    case TJ_TIR_MAX: return *out = a > b ? a : b, true;
    default: return false;
  }
}

bool tj_tir_eval_int_bound(const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *vars, const int64_t *values,
                           int64_t *out_value) {
  int64_t a, b;
  if (!e || !tj_dtype_is_int(e->dtype)) return false;
  switch (e->kind) {
    case TJ_TIR_INT_IMM: return *out_value = e->int_imm, true;
    case TJ_TIR_VAR:
      for (int i = 0; i < n; i++)
        if (vars[i] == e) return *out_value = values[i], true;
      return false;
    case TJ_TIR_CAST: return tj_tir_eval_int_bound(e->unary.operand, n, vars, values, out_value);
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MOD:
    case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: case TJ_TIR_MIN: case TJ_TIR_MAX:
      return tj_tir_eval_int_bound(e->binary.a, n, vars, values, &a) &&
             tj_tir_eval_int_bound(e->binary.b, n, vars, values, &b) && eval_binary(e->kind, a, b, out_value);
    default: return false;
  }
}

bool tj_tir_eval_int(const tj_tir_expr_t *e, int64_t *out_value) { return tj_tir_eval_int_bound(e, 0, NULL, NULL, out_value); }

const char *tj_tir_expr_kind_name(tj_tir_expr_kind_t kind) {
  static const char *names[TJ_TIR_EXPR_KIND_COUNT] = {
      "IntImm", "FloatImm", "StringImm", "Var", "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv",
      "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Cast",
      "Select", "BufferLoad", "Let", "Call", "Ramp", "Broadcast"};
  return (kind >= 0 && kind < TJ_TIR_EXPR_KIND_COUNT) ? names[kind] : "?";
}

bool tj_buffer_static_size(const tj_buffer_t *b, int64_t *out_elems) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) {
    int64_t d;
    if (!tj_tir_is_const_int(b->shape[i], &d)) return false;
    n *= d;
  }
  *out_elems = n;
  return true;
}

const tj_block_t *tj_prim_func_root_block(const tj_prim_func_t *f) {
  const tj_tir_stmt_t *s = f->body;
  if (!s || s->kind != TJ_TIR_BLOCK_REALIZE) return NULL;
  return s->realize.block;
}
