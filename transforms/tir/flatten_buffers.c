/* FlattenBuffers: every buffer becomes 1-D and every index one int64 offset (lower.h).
 * The flat buffer keeps the original's data var, so codegen can find a buffer's
 * storage from its data var whether it is a parameter or an allocation. */
#include <string.h>

#include "ir/visit.h"
#include "support/vec.h"
#include "transforms/tir/lower.h"

typedef struct flat_pair {
  const tj_buffer_t *from, *to;
  bool param; /* in the PrimFunc's buffer_map */
} flat_pair_t;

typedef struct flatten_ctx {
  const char *func_name;
  tj_status_t *error;
  TJ_VEC(flat_pair_t) pairs; /* in the pass arena */
} flatten_ctx_t;

/* The first error is the one reported; a later one (an "out of memory" for the NULL
 * the first left behind) is dropped. */
static void *fail(tj_tir_mutator_t *m, tj_status_t *status) {
  flatten_ctx_t *c = m->ctx;
  if (!c->error) c->error = status;
  else tj_status_free(status);
  m->failed = true;
  return NULL;
}

static void *oom(tj_tir_mutator_t *m) { return fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "FlattenBuffers: out of memory")); }

static const tj_tir_expr_t *as_i64(tj_arena_t *a, const tj_tir_expr_t *e) {
  if (!e) return NULL;
  if (e->dtype.code == TJ_DT_INT && e->dtype.bits == 64) return e;
  int64_t v;
  if (tj_tir_is_const_int(e, &v)) return tj_tir_i64(a, v);
  return tj_tir_cast(a, tj_dtype_with_lanes(TJ_I64, e->dtype.lanes), e);
}

/* A constant extent or offset past int64 (a fuzzed shape like 2^62 x 3): an error that
 * names the function, where folding would overflow. */
static void *too_large(tj_tir_mutator_t *m, const char *op, int64_t x, int64_t y) {
  flatten_ctx_t *c = m->ctx;
  return fail(m, tj_status_new(TJ_ERR_VERIFY,
                               "FlattenBuffers: '%s': a buffer's extent or offset overflows int64 (%lld %s %lld); "
                               "its shape is too large to address",
                               c->func_name, (long long)x, op, (long long)y));
}

/* x * y and x + y with the trivial cases folded, so simple kernels stay readable. */
static const tj_tir_expr_t *mul_i64(tj_tir_mutator_t *m, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  int64_t vx, vy, v;
  if (!x || !y) return NULL;
  bool cx = tj_tir_is_const_int(x, &vx), cy = tj_tir_is_const_int(y, &vy);
  if (cx && cy) return __builtin_mul_overflow(vx, vy, &v) ? too_large(m, "*", vx, vy) : tj_tir_i64(m->arena, v);
  if ((cx && vx == 0) || (cy && vy == 1)) return x;
  if ((cy && vy == 0) || (cx && vx == 1)) return y;
  return tj_tir_binary(m->arena, TJ_TIR_MUL, x, y);
}

static const tj_tir_expr_t *add_i64(tj_tir_mutator_t *m, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  int64_t vx, vy, v;
  if (!x || !y) return NULL;
  bool cx = tj_tir_is_const_int(x, &vx), cy = tj_tir_is_const_int(y, &vy);
  if (cx && cy) return __builtin_add_overflow(vx, vy, &v) ? too_large(m, "+", vx, vy) : tj_tir_i64(m->arena, v);
  if (cx && vx == 0) return y;
  if (cy && vy == 0) return x;
  return tj_tir_binary(m->arena, TJ_TIR_ADD, x, y);
}

static const tj_buffer_t *make_flat(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  tj_arena_t *a = m->arena;
  tj_buffer_t *nb = TJ_ARENA_NEW(a, tj_buffer_t);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 1);
  if (!nb || !shape) return oom(m);
  *nb = *b;
  /* Extent of the flat view: the product of the dims (row-major), or for a strided
   * buffer the offset of the last element + 1. */
  const tj_tir_expr_t *n = tj_tir_i64(a, 1);
  if (b->strides) {
    n = tj_tir_i64(a, 1);
    for (int i = 0; i < b->ndim; i++)
      n = add_i64(m, n, mul_i64(m, add_i64(m, as_i64(a, b->shape[i]), tj_tir_i64(a, -1)), as_i64(a, b->strides[i])));
  } else {
    for (int i = 0; i < b->ndim; i++) n = mul_i64(m, n, as_i64(a, b->shape[i]));
  }
  if (!n) return oom(m);
  shape[0] = n;
  nb->ndim = 1;
  nb->shape = shape;
  nb->strides = NULL;
  nb->elem_offset = NULL;
  nb->n_axis_separators = 0;
  nb->axis_separators = NULL;
  return nb;
}

static const tj_buffer_t *flat_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  flatten_ctx_t *c = m->ctx;
  for (int i = 0; i < c->pairs.n; i++)
    if (c->pairs.items[i].from == b || c->pairs.items[i].to == b) return c->pairs.items[i].to;
  if (b->n_axis_separators > 0)
    return fail(m, tj_status_new(TJ_ERR_UNSUPPORTED,
                                 "FlattenBuffers: '%s': buffer '%s' has axis_separators (multi-dimensional "
                                 "physical storage), which the CPU JIT does not support",
                                 c->func_name, b->name));
  c->pairs.arena = m->arena;
  if (!tj_vec_reserve(&c->pairs, 1)) return oom(m);
  const tj_buffer_t *nb = make_flat(m, b);
  if (!nb) return NULL;
  c->pairs.items[c->pairs.n++] = (flat_pair_t){b, nb};
  return nb;
}

/* A parameter's elem_offset var (TVMScript's `offset_factor=1`, which TOPI's extern
 * ops print) is the offset of the tensor's first element from its data pointer: tvmjit
 * always passes the first element's address, so the var is 0 there. */
static bool param_offset_var(const flatten_ctx_t *c, const tj_buffer_t *b) {
  if (b->elem_offset->kind != TJ_TIR_VAR) return false;
  for (int i = 0; i < c->pairs.n; i++)
    if (c->pairs.items[i].from == b) return c->pairs.items[i].param;
  return false;
}

/* The one int64 offset for `indices` into `b` (row-major unless b has strides). A
 * vector (ramp) index is allowed in the last dimension only. */
static bool find_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  bool *found = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD) *found = true;
  return !*found;
}

/* An index read from a tensor (take, gather, scatter): its value is data, not a loop
 * position the schedule proved in bounds. */
static bool data_dependent(const tj_tir_expr_t *e) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = find_load, .ctx = &found};
  tj_tir_visit_expr(&v, e);
  return found;
}

/* Memory safety for data-dependent indices (TVM leaves them unchecked: an index out of
 * range reads or writes out of bounds). A load clamps such an index into [0, extent)
 * per dimension (numpy's mode="clip"); a store adds `0 <= i < extent` to *guard, and
 * the caller skips the store when it is false. In-bounds indices are unchanged. */
static const tj_tir_expr_t *guard_index(tj_tir_mutator_t *m, const tj_tir_expr_t *idx, const tj_tir_expr_t *extent,
                                        const tj_tir_expr_t **guard) {
  tj_arena_t *a = m->arena;
  const tj_tir_expr_t *zero = tj_tir_i64(a, 0);
  if (!guard) {
    const tj_tir_expr_t *last = add_i64(m, extent, tj_tir_i64(a, -1));
    return tj_tir_binary(a, TJ_TIR_MAX, tj_tir_binary(a, TJ_TIR_MIN, idx, last), zero);
  }
  const tj_tir_expr_t *ok =
      tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_LE, zero, idx), tj_tir_binary(a, TJ_TIR_LT, idx, extent));
  *guard = *guard ? tj_tir_binary(a, TJ_TIR_AND, *guard, ok) : ok;
  return idx;
}

static const tj_tir_expr_t *linear_index(tj_tir_mutator_t *m, const tj_buffer_t *b, int n,
                                         const tj_tir_expr_t *const *indices, const tj_tir_expr_t **guard) {
  flatten_ctx_t *c = m->ctx;
  tj_arena_t *a = m->arena;
  if (n != b->ndim)
    return fail(m, tj_status_new(TJ_ERR_VERIFY, "FlattenBuffers: '%s': buffer '%s' has %d dims but is indexed with %d",
                                 c->func_name, b->name, b->ndim, n));
  const tj_tir_expr_t *scalar = tj_tir_i64(a, 0);
  const tj_tir_expr_t *ramp = NULL;
  for (int i = 0; i < n; i++) {
    const tj_tir_expr_t *idx = tj_tir_mutate_expr(m, indices[i]);
    if (!idx) return NULL;
    const tj_tir_expr_t *stride = b->strides ? as_i64(a, b->strides[i]) : NULL;
    if (!b->strides) scalar = mul_i64(m, scalar, as_i64(a, b->shape[i]));
    if (idx->dtype.lanes > 1) {
      if (idx->kind != TJ_TIR_RAMP || i != n - 1)
        return fail(m, tj_status_new(TJ_ERR_UNSUPPORTED,
                                     "FlattenBuffers: '%s': vector index into '%s' must be a ramp in the last "
                                     "dimension",
                                     c->func_name, b->name));
      ramp = idx;
      continue;
    }
    if (data_dependent(indices[i])) idx = guard_index(m, as_i64(a, idx), as_i64(a, b->shape[i]), guard);
    scalar = add_i64(m, scalar, stride ? mul_i64(m, as_i64(a, idx), stride) : as_i64(a, idx));
  }
  if (b->elem_offset && !param_offset_var(c, b)) scalar = add_i64(m, scalar, as_i64(a, b->elem_offset));
  if (ramp) {
    const tj_tir_expr_t *s = as_i64(a, ramp->ramp.stride);
    if (b->strides) s = mul_i64(m, s, as_i64(a, b->strides[n - 1]));
    scalar = tj_tir_ramp(a, add_i64(m, scalar, as_i64(a, ramp->ramp.base)), s, ramp->dtype.lanes);
  }
  return scalar ? scalar : oom(m);
}

static const tj_tir_expr_t *flatten_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  if (e->kind != TJ_TIR_BUFFER_LOAD) return NULL;
  const tj_buffer_t *fb = flat_buffer(m, e->load.buffer);
  if (!fb) return NULL;
  const tj_tir_expr_t *idx = linear_index(m, e->load.buffer, e->load.n_indices, e->load.indices, NULL);
  if (!idx) return NULL;
  const tj_tir_expr_t *r = tj_tir_load(m->arena, fb, 1, &idx);
  return r ? r : oom(m);
}

static const tj_tir_stmt_t *flatten_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_BUFFER_STORE) return NULL;
  const tj_buffer_t *fb = flat_buffer(m, s->store.buffer);
  if (!fb) return NULL;
  const tj_tir_expr_t *guard = NULL;
  const tj_tir_expr_t *idx = linear_index(m, s->store.buffer, s->store.n_indices, s->store.indices, &guard);
  const tj_tir_expr_t *val = idx ? tj_tir_mutate_expr(m, s->store.value) : NULL;
  if (!val) return m->failed ? NULL : oom(m);
  const tj_tir_stmt_t *r = tj_tir_store(m->arena, fb, 1, &idx, val);
  if (r && guard) r = tj_tir_if(m->arena, guard, r, NULL);
  return r ? r : oom(m);
}

tj_status_t *tj_tir_flatten_buffers(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out) {
  flatten_ctx_t c = {.func_name = name ? name : "?"};
  tj_tir_mutator_t m = {.arena = arena, .expr = flatten_expr, .stmt = flatten_stmt, .buffer = flat_buffer, .ctx = &c};
  tj_prim_func_t *nf = TJ_ARENA_NEW(arena, tj_prim_func_t);
  const tj_buffer_t **map = TJ_ARENA_ARRAY(arena, const tj_buffer_t *, f->n_params > 0 ? f->n_params : 1);
  if (!nf || !map) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "FlattenBuffers: out of memory");
  for (int i = 0; i < f->n_params && !m.failed; i++)
  {
    map[i] = f->buffer_map && f->buffer_map[i] ? flat_buffer(&m, f->buffer_map[i]) : NULL;
    if (map[i]) c.pairs.items[c.pairs.n - 1].param = true;
  }
  const tj_tir_stmt_t *body = m.failed ? NULL : tj_tir_mutate_stmt(&m, f->body);
  if (c.error) return c.error;
  if (m.failed || !body) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "FlattenBuffers: out of memory");
  *nf = *f;
  nf->buffer_map = map;
  nf->body = body;
  *out = nf;
  return NULL;
}
