/* Schedule rule for reductions to one element (schedule.h): a nest whose loops are all
 * reduce loops (or unit spatial loops, keepdims), e.g. R.sum(x) over (2, 3, 4, 5):
 *   for k0, k1, k2, k3: block { init: out[] = 0;  out[] = out[] + f(x[k0, k1, k2, k3]) }
 * where every buffer f reads is indexed by exactly the reduce vars over its whole shape
 * (so the element at flat position i of the reduction is element i of the buffer).
 * It becomes P parallel chunks of V-lane partial results, combined at the end:
 *   partial = alloc(P * V)
 *   for p in T.parallel(P):
 *     for l in T.vectorized(V): partial[p*V + l] = init
 *     for j in range(Q):                      (Q vectors per chunk)
 *       for l in T.vectorized(V): partial[p*V + l] = partial[p*V + l] + f(x_flat[(p*Q + j)*V + l])
 *   out[] = init
 *   for i in range(P * V): out[] = out[] + partial[i]
 *   for t in range(N - P*Q*V): out[] = out[] + f(x_flat[P*Q*V + t])     (the tail)
 * x_flat is a 1-D view of x (same storage). Unlike the other rules this changes the
 * order of the terms: integer sums and products (wrapping) and max/min are exact,
 * float sums and products round differently, usually closer to the exact value (P*V
 * independent partial sums instead of one long chain). */
#include <string.h>

#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

/* Below this many elements the serial loop is as fast. */
#define FULL_REDUCTION_MIN_ELEMS 4096
/* Each chunk gets at least this many vectors; at most MAX_CHUNKS chunks. */
#define FULL_REDUCTION_CHUNK_VECTORS 256
#define FULL_REDUCTION_MAX_CHUNKS 64

typedef struct full_plan {
  const tj_block_t *block;
  const tj_tir_stmt_t *init, *update; /* single stores */
  const tj_buffer_t *out;
  tj_tir_expr_kind_t combine;
  const tj_tir_expr_t *term; /* f(...) in the update */
  int n_out_idx;
  const tj_tir_expr_t *out_idx[TJ_SCHED_MAX_NEST]; /* out's element: all zeros */
  int loads, var_hits; /* loads in the term, and uses of the block's vars there */
  int n_reduce;
  const tj_tir_expr_t *reduce_vars[TJ_SCHED_MAX_NEST]; /* in loop order */
  int64_t extent[TJ_SCHED_MAX_NEST];
  int64_t n_elems;
} full_plan_t;

typedef struct loads_ctx {
  full_plan_t *plan;
  bool ok;
} loads_ctx_t;

/* Every load in the term reads a buffer over its whole static shape at exactly the
 * reduce vars, in loop order; no other var of the block appears. */
static bool check_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  loads_ctx_t *c = v->ctx;
  if (!c->ok) return false;
  full_plan_t *p = c->plan;
  if (e->kind == TJ_TIR_VAR)
    for (int k = 0; k < p->block->n_iter_vars; k++)
      if (p->block->iter_vars[k].var == e) p->var_hits++;
  if (e->kind == TJ_TIR_CALL && strncmp(e->call.op, "tir.", 4) != 0) c->ok = false;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return c->ok;
  const tj_buffer_t *b = e->load.buffer;
  p->loads++;
  if (b == p->out || b->strides || b->elem_offset || b->ndim != p->n_reduce || e->load.n_indices != p->n_reduce ||
      e->dtype.lanes != 1)
    return c->ok = false;
  for (int d = 0; d < b->ndim; d++) {
    int64_t ext;
    if (e->load.indices[d] != p->reduce_vars[d] || !tj_tir_is_const_int(b->shape[d], &ext) || ext != p->extent[d])
      return c->ok = false;
  }
  return true;
}

/* The store's indices are 0 or unit spatial vars (keepdims): out_idx gets zeros. */
static bool zero_index(tj_arena_t *a, const tj_sched_nest_t *nest, const tj_tir_stmt_t *s, full_plan_t *p) {
  const tj_block_t *b = nest->block;
  p->n_out_idx = s->store.n_indices;
  for (int i = 0; i < s->store.n_indices; i++) {
    const tj_tir_expr_t *e = s->store.indices[i];
    int64_t v;
    bool ok = tj_tir_is_const_int(e, &v) && v == 0;
    for (int k = 0; !ok && k < b->n_iter_vars; k++)
      if (b->iter_vars[k].var == e && b->iter_vars[k].kind == TJ_ITER_SPATIAL &&
          nest->extent[nest->loop_of_iter[k]] == 1)
        ok = true;
    if (!ok) return false;
    if (!(p->out_idx[i] = tj_tir_int(a, e->dtype, 0))) return false;
  }
  return true;
}

static bool plan_full(tj_arena_t *a, const tj_sched_nest_t *nest, full_plan_t *p) {
  memset(p, 0, sizeof *p);
  const tj_block_t *b = nest->block;
  p->block = b;
  if (!b->init || b->init->kind != TJ_TIR_BUFFER_STORE || b->body->kind != TJ_TIR_BUFFER_STORE) return false;
  p->init = b->init;
  p->update = b->body;
  p->out = p->update->store.buffer;
  if (p->init->store.buffer != p->out || !zero_index(a, nest, p->init, p) || !zero_index(a, nest, p->update, p))
    return false;
  const tj_tir_expr_t *iv = p->init->store.value; /* a literal start value (0, 1, lowest, highest) */
  if (iv->kind != TJ_TIR_INT_IMM && iv->kind != TJ_TIR_FLOAT_IMM) return false;
  p->n_elems = 1;
  for (int l = 0; l < nest->n; l++) {
    const tj_iter_var_t *iv = &b->iter_vars[nest->iter_of_loop[l]];
    if (iv->kind != TJ_ITER_REDUCE) {
      if (nest->extent[l] != 1) return false; /* keepdims: unit spatial loops only */
      continue;
    }
    p->reduce_vars[p->n_reduce] = iv->var;
    p->extent[p->n_reduce++] = nest->extent[l];
    p->n_elems *= nest->extent[l];
  }
  if (p->n_reduce == 0 || p->n_elems < FULL_REDUCTION_MIN_ELEMS) return false;
  /* out[] = combine(out[], term) with the accumulator first, as TOPI writes it */
  const tj_tir_expr_t *v = p->update->store.value;
  if (v->kind != TJ_TIR_ADD && v->kind != TJ_TIR_MUL && v->kind != TJ_TIR_MAX && v->kind != TJ_TIR_MIN) return false;
  const tj_tir_expr_t *acc = v->binary.a;
  if (acc->kind != TJ_TIR_BUFFER_LOAD || acc->load.buffer != p->out) return false;
  p->combine = v->kind;
  p->term = v->binary.b;
  if (p->out->dtype.code == TJ_DT_BOOL || v->dtype.lanes != 1) return false;
  loads_ctx_t lc = {p, true};
  tj_tir_visitor_t vis = {.expr = check_load, .ctx = &lc};
  tj_tir_visit_expr(&vis, p->term);
  /* the block's vars appear only as the load indices (which become the flat index) */
  return lc.ok && p->var_hits == p->loads * p->n_reduce;
}

/* A 1-D view of `b` over the same storage (same data var). */
static const tj_buffer_t *flat_view(tj_sched_ctx_t *c, const tj_buffer_t *b, int64_t n) {
  tj_buffer_t *v = TJ_ARENA_NEW(c->arena, tj_buffer_t);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(c->arena, const tj_tir_expr_t *, 1);
  if (!v || !shape || !(shape[0] = tj_tir_i64(c->arena, n))) return (void)(c->oom = true), NULL;
  *v = *b;
  v->ndim = 1;
  v->shape = shape;
  v->n_axis_separators = 0;
  v->axis_separators = NULL;
  return v;
}

typedef struct flatten_ctx {
  tj_sched_ctx_t *sched;
  const tj_tir_expr_t *flat_index;
  const tj_buffer_t *from[TJ_SCHED_MAX_NEST * 2];
  const tj_buffer_t *to[TJ_SCHED_MAX_NEST * 2];
  int n;
} flatten_ctx_t;

static const tj_tir_expr_t *flatten_load(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  flatten_ctx_t *f = m->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return NULL;
  const tj_buffer_t *view = NULL;
  for (int i = 0; i < f->n; i++)
    if (f->from[i] == e->load.buffer) view = f->to[i];
  if (!view) {
    if (f->n == (int)(sizeof f->from / sizeof f->from[0])) return m->failed = true, NULL;
    int64_t n = 1;
    for (int d = 0; d < e->load.buffer->ndim; d++) {
      int64_t ext = 0;
      tj_tir_is_const_int(e->load.buffer->shape[d], &ext);
      n *= ext;
    }
    view = flat_view(f->sched, e->load.buffer, n);
    if (!view) return m->failed = true, NULL;
    f->from[f->n] = e->load.buffer;
    f->to[f->n++] = view;
  }
  const tj_tir_expr_t *idx[1] = {f->flat_index};
  const tj_tir_expr_t *r = tj_tir_load(m->arena, view, 1, idx);
  if (!r) m->failed = true;
  return r;
}

/* The term with every load reading its flat view at `flat_index`. */
static const tj_tir_expr_t *term_at(tj_sched_ctx_t *c, const full_plan_t *p, flatten_ctx_t *f,
                                    const tj_tir_expr_t *flat_index) {
  if (!flat_index) return NULL;
  f->flat_index = flat_index;
  tj_tir_mutator_t m = {.arena = c->arena, .expr = flatten_load, .ctx = f};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, p->term);
  if (m.failed || !r) return (void)(c->oom = true), NULL;
  return r;
}

static const tj_tir_expr_t *combine(tj_sched_ctx_t *c, tj_tir_expr_kind_t k, const tj_tir_expr_t *acc,
                                    const tj_tir_expr_t *x) {
  const tj_tir_expr_t *r = acc && x ? tj_tir_binary(c->arena, k, acc, x) : NULL;
  if (!r) c->oom = true;
  return r;
}

static const tj_tir_stmt_t *store1(tj_sched_ctx_t *c, const tj_buffer_t *b, const tj_tir_expr_t *idx,
                                   const tj_tir_expr_t *value) {
  const tj_tir_expr_t *ix[1] = {idx};
  const tj_tir_stmt_t *s = idx && value ? tj_tir_store(c->arena, b, 1, ix, value) : NULL;
  if (!s) c->oom = true;
  return s;
}

static const tj_tir_expr_t *load1(tj_sched_ctx_t *c, const tj_buffer_t *b, const tj_tir_expr_t *idx) {
  const tj_tir_expr_t *ix[1] = {idx};
  const tj_tir_expr_t *e = idx ? tj_tir_load(c->arena, b, 1, ix) : NULL;
  if (!e) c->oom = true;
  return e;
}

/* out's element as the nest writes it (indices all 0) */
static const tj_tir_stmt_t *out_store(tj_sched_ctx_t *c, const full_plan_t *p, const tj_tir_expr_t *value) {
  const tj_tir_stmt_t *s = value ? tj_tir_store(c->arena, p->out, p->n_out_idx, p->out_idx, value) : NULL;
  if (!s) c->oom = true;
  return s;
}

static const tj_tir_expr_t *out_load(tj_sched_ctx_t *c, const full_plan_t *p) {
  const tj_tir_expr_t *e = tj_tir_load(c->arena, p->out, p->n_out_idx, p->out_idx);
  if (!e) c->oom = true;
  return e;
}

int tj_sched_rule_full_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out) {
  tj_sched_nest_t nest;
  full_plan_t p;
  if (!tj_sched_collect_nest(c->stmts[i], &nest) || !nest.n_reduce || !plan_full(c->arena, &nest, &p)) return 0;
  tj_arena_t *a = c->arena;
  int64_t V = tj_sched_lanes(c, p.out->dtype);
  int64_t vectors = p.n_elems / V;
  int64_t P = vectors / FULL_REDUCTION_CHUNK_VECTORS;
  if (P > FULL_REDUCTION_MAX_CHUNKS) P = FULL_REDUCTION_MAX_CHUNKS;
  if (P < 1) P = 1;
  int64_t Q = vectors / P, main_elems = P * Q * V;
  /* The init value with the block's vars bound (it uses none of them). */
  const tj_tir_expr_t *init_value = p.init->store.value;
  const tj_buffer_t *partial = tj_buffer_new(a, "partial", p.out->dtype, 1, (const tj_tir_expr_t *[]){tj_tir_i64(a, P * V)}, NULL);
  const tj_tir_expr_t *pv = tj_sched_var(c, "chunk"), *jv = tj_sched_var(c, "j"), *lv = tj_sched_var(c, "lane");
  if (!partial || c->oom) return c->oom = true, 1;
  flatten_ctx_t f = {.sched = c};
  /* partial[p*V + l] */
  const tj_tir_expr_t *slot = tj_sched_add(c, tj_sched_mul(c, pv, V), lv);
  const tj_tir_stmt_t *fill = tj_sched_loop(c, lv, V, TJ_FOR_VECTORIZED, store1(c, partial, slot, init_value));
  const tj_tir_expr_t *flat = tj_sched_add(c, tj_sched_mul(c, tj_sched_add(c, tj_sched_mul(c, pv, Q), jv), V), lv);
  const tj_tir_stmt_t *acc = store1(c, partial, slot, combine(c, p.combine, load1(c, partial, slot), term_at(c, &p, &f, flat)));
  const tj_tir_stmt_t *inner = tj_sched_loop(c, jv, Q, TJ_FOR_SERIAL, tj_sched_loop(c, lv, V, TJ_FOR_VECTORIZED, acc));
  const tj_tir_stmt_t *chunk_body[2] = {fill, inner};
  const tj_tir_stmt_t *chunk = fill && inner ? tj_tir_seq(a, 2, chunk_body) : NULL;
  bool parallel = P > 1 && p.n_elems >= TJ_SCHED_PARALLEL_MIN_WORK;
  const tj_tir_stmt_t *chunks = tj_sched_loop(c, pv, P, parallel ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL, chunk);
  /* combine the partial results, then the tail, in order */
  const tj_tir_expr_t *iv = tj_sched_var(c, "i"), *tv = tj_sched_var(c, "t");
  const tj_tir_stmt_t *parts[4];
  int n = 0;
  parts[n++] = chunks;
  parts[n++] = out_store(c, &p, init_value);
  parts[n++] = tj_sched_loop(c, iv, P * V, TJ_FOR_SERIAL,
                             out_store(c, &p, combine(c, p.combine, out_load(c, &p), load1(c, partial, iv))));
  if (p.n_elems > main_elems) {
    const tj_tir_expr_t *tail_index = tj_sched_add(c, tj_tir_i64(a, main_elems), tv);
    parts[n++] = tj_sched_loop(c, tv, p.n_elems - main_elems, TJ_FOR_SERIAL,
                               out_store(c, &p, combine(c, p.combine, out_load(c, &p), term_at(c, &p, &f, tail_index))));
  }
  for (int k = 0; k < n; k++)
    if (!parts[k]) return c->oom = true, 1;
  const tj_tir_stmt_t *seq = tj_tir_seq(a, n, parts);
  const tj_tir_stmt_t *r = seq ? tj_tir_allocate(a, partial, seq) : NULL;
  if (!r) return c->oom = true, 1;
  c->stats.reduction++;
  *out = r;
  return 1;
}
