/* Per-row values of a block of short rows computed across the rows (schedule_rules.h).
 * A nest over a block of rows, one vector a row (layer_norm's normalize over the seed's
 * 16 channels, scheduled inside a row-fused block: schedule_row_fusion.c),
 *   for i in range(E):  for v in T.vectorized(L):  out[.., i, v] = f(x[.., i, v], g(s[i]))
 * computes g (1 / sqrt(var + eps)) once per row in scalar code: a vsqrtss and a vdivss a
 * row, each several cycles of the one divider. Taking g out of the loop,
 *   for io in range(E / V):  for il in T.vectorized(V):  h[io*V + il] = g(s[io*V + il])
 *   for i in range(E):  for v in T.vectorized(L):  out[.., i, v] = f(x[.., i, v], h[i])
 * computes it V rows per vector instruction. The same operations on the same values:
 * exact (also under --strict-float). Hoisted: the largest subexpressions that do not
 * use v, use i, and hold a call or a division (a load or a multiply is as cheap in
 * place as a load of h). */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

#define MAX_HOISTED 4

typedef struct hoist {
  tj_sched_ctx_t *c;
  const tj_tir_expr_t *i, *v;
  const tj_buffer_t *stored;
  int64_t extent;
  int n;
  const tj_tir_expr_t *expr[MAX_HOISTED];
  const tj_buffer_t *buf[MAX_HOISTED];
} hoist_t;

typedef struct scan {
  const tj_buffer_t *stored;
  bool costly, bad;
} scan_t;

static bool scan_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  scan_t *s = v->ctx;
  if (e->kind == TJ_TIR_CALL || e->kind == TJ_TIR_DIV) s->costly = true;
  /* a let binds a var of its own; a load of what the loop stores is not per row */
  if (e->kind == TJ_TIR_LET || e->kind == TJ_TIR_RAMP || e->kind == TJ_TIR_BROADCAST ||
      (e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == s->stored))
    s->bad = true;
  return !s->bad;
}

static bool hoistable(const hoist_t *h, const tj_tir_expr_t *e) {
  if (e->dtype.lanes != 1 || e->dtype.code != TJ_DT_FLOAT || tj_tir_expr_uses_var(e, h->v) ||
      !tj_tir_expr_uses_var(e, h->i))
    return false;
  scan_t s = {h->stored, false, false};
  tj_tir_visitor_t v = {.expr = scan_expr, .ctx = &s};
  tj_tir_visit_expr(&v, e);
  return s.costly && !s.bad;
}

static const tj_tir_expr_t *hoist_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  hoist_t *h = m->ctx;
  if (h->n == MAX_HOISTED || !hoistable(h, e)) return NULL;
  const tj_tir_expr_t *shape = tj_tir_i64(m->arena, h->extent);
  const tj_buffer_t *b = shape ? tj_buffer_new(m->arena, "row_value", e->dtype, 1, &shape, NULL) : NULL;
  const tj_tir_expr_t *r = b ? tj_tir_load(m->arena, b, 1, &h->i) : NULL;
  if (!r) return (void)(m->failed = true), NULL;
  h->expr[h->n] = e;
  h->buf[h->n++] = b;
  return r;
}

/* h[i] = e for every i of the block, V rows per vector. */
static const tj_tir_stmt_t *fill(hoist_t *h, int k, int64_t V) {
  tj_sched_ctx_t *c = h->c;
  const tj_tir_expr_t *io = tj_sched_var(c, "io"), *il = tj_sched_var(c, "il");
  const tj_tir_expr_t *at = tj_sched_cast_like(c, h->i, tj_sched_add(c, tj_sched_mul(c, io, V), il));
  const tj_tir_expr_t *e = at ? tj_tir_substitute_expr(c->arena, h->expr[k], 1, &h->i, &at) : NULL;
  const tj_tir_expr_t *idx = tj_sched_add(c, tj_sched_mul(c, io, V), il);
  const tj_tir_stmt_t *st = e && idx ? tj_tir_store(c->arena, h->buf[k], 1, &idx, e) : NULL;
  const tj_tir_stmt_t *s = tj_sched_loop(c, il, V, TJ_FOR_VECTORIZED, st);
  s = tj_sched_loop(c, io, h->extent / V, TJ_FOR_SERIAL, s);
  if (!s) c->oom = true;
  return s;
}

const tj_tir_stmt_t *tj_sched_hoist_row_values(tj_sched_ctx_t *c, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR || s->loop.kind != TJ_FOR_SERIAL) return s;
  const tj_tir_stmt_t *in = s->loop.body;
  int64_t E, L;
  if (!tj_tir_is_const_int(s->loop.extent, &E) || !tj_tir_is_const_int(s->loop.min, &L) || L != 0 ||
      in->kind != TJ_TIR_FOR || in->loop.kind != TJ_FOR_VECTORIZED || in->loop.body->kind != TJ_TIR_BUFFER_STORE)
    return s;
  const tj_tir_stmt_t *st = in->loop.body;
  hoist_t h = {c, s->loop.var, in->loop.var, st->store.buffer, E, 0, {0}, {0}};
  int64_t V = tj_sched_lanes(c, TJ_F32);
  if (E < V || E % V) return s;
  tj_tir_mutator_t m = {.arena = c->arena, .expr = hoist_expr, .ctx = &h};
  const tj_tir_expr_t *value = tj_tir_mutate_expr(&m, st->store.value);
  if (m.failed || !value) return (void)(c->oom = true), NULL;
  if (!h.n) return s;
  for (int k = 0; k < h.n; k++)
    if (tj_sched_lanes(c, h.expr[k]->dtype) != V) return s;
  const tj_tir_stmt_t *store = tj_tir_store(c->arena, st->store.buffer, st->store.n_indices, st->store.indices, value);
  const tj_tir_stmt_t *inner =
      store ? tj_tir_for(c->arena, in->loop.var, in->loop.min, in->loop.extent, in->loop.kind, store) : NULL;
  const tj_tir_stmt_t *outer =
      inner ? tj_tir_for(c->arena, s->loop.var, s->loop.min, s->loop.extent, s->loop.kind, inner) : NULL;
  const tj_tir_stmt_t *list[MAX_HOISTED + 1];
  for (int k = 0; k < h.n; k++) list[k] = fill(&h, k, V);
  list[h.n] = outer;
  for (int k = 0; k <= h.n; k++)
    if (!list[k]) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *r = tj_tir_seq(c->arena, h.n + 1, list);
  for (int k = h.n - 1; k >= 0 && r; k--) r = tj_tir_allocate(c->arena, h.buf[k], r);
  if (!r) c->oom = true;
  return r;
}
