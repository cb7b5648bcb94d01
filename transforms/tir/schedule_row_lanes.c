/* The statistics of a block of short rows with the rows as vector lanes (schedule_rules.h).
 * A row reduction over a block of E rows of K elements (layer_norm's sums over the seed's
 * 16 channels, scheduled inside a row-fused block: schedule_row_fusion.c),
 *   for i in range(E):  init(i);  for r in range(K):  update(i, r)
 * runs each row's chain in scalar code (LLVM's loop vectorizer made the rows lanes, but
 * loaded each term by gathers: the larger half of the kernel on Zen 4). Here
 *   for io in range(E / K):
 *     for il in T.vectorized(K):  init(io*K + il)
 *     for r in T.unroll(K):  for il in T.vectorized(K):  update(io*K + il, r)
 * takes K rows a vector: lane il is row io*K + il and takes its terms in the same order
 * r = 0, 1, ... from the same init, so every row's result has the same bits (also under
 * --strict-float, and for the float16 seed). The term x[.., io*K + il, r] is a load at
 * stride K over K lanes: codegen reads it from the K row vectors of the block through an
 * in-register K x K transpose (jit/codegen.c, load_transposed), shared by the K unrolled
 * terms. Taken when K is a power of two from 4 to the float32 lanes and divides E, every
 * store of the nest is to element [i] of a one-dim buffer, and the stored buffers are read
 * only at [i] (rows independent). */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct check {
  const tj_tir_expr_t *i;
  const tj_buffer_t *stored[8];
  int n_stored;
  bool bad;
} check_t;

static bool check_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  check_t *k = v->ctx;
  if (s->kind == TJ_TIR_FOR || s->kind == TJ_TIR_BLOCK_REALIZE || s->kind == TJ_TIR_ALLOCATE) k->bad = true;
  if (s->kind == TJ_TIR_BUFFER_STORE) {
    if (s->store.n_indices != 1 || s->store.indices[0] != k->i || s->store.value->dtype.lanes != 1) k->bad = true;
    int j = 0;
    while (j < k->n_stored && k->stored[j] != s->store.buffer) j++;
    if (j == k->n_stored) {
      if (j == 8) k->bad = true;
      else k->stored[k->n_stored++] = s->store.buffer;
    }
  }
  return !k->bad;
}

static bool read_at_row(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  check_t *k = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD)
    for (int j = 0; j < k->n_stored; j++)
      if (e->load.buffer == k->stored[j] && (e->load.n_indices != 1 || e->load.indices[0] != k->i)) k->bad = true;
  if (e->kind == TJ_TIR_RAMP || e->kind == TJ_TIR_BROADCAST || e->dtype.lanes != 1) k->bad = true;
  return !k->bad;
}

/* Rows independent: stores at [i] only, no loops inside, the stored buffers read at [i]. */
static bool rows_independent(const tj_tir_expr_t *i, const tj_tir_stmt_t *init, const tj_tir_stmt_t *update) {
  check_t k = {.i = i};
  tj_tir_visitor_t v = {.stmt = check_stmt, .ctx = &k};
  tj_tir_visit_stmt(&v, init);
  tj_tir_visit_stmt(&v, update);
  if (k.bad || !k.n_stored) return false;
  tj_tir_visitor_t r = {.expr = read_at_row, .ctx = &k};
  tj_tir_visit_stmt(&r, init);
  tj_tir_visit_stmt(&r, update);
  return !k.bad;
}

/* for il in T.vectorized(K): s with i = io*K + il. */
static const tj_tir_stmt_t *lanes_of(tj_sched_ctx_t *c, const tj_tir_expr_t *i, const tj_tir_expr_t *io, int64_t K,
                                     const tj_tir_stmt_t *s) {
  const tj_tir_expr_t *il = tj_sched_var(c, "il");
  const tj_tir_expr_t *at = il ? tj_sched_cast_like(c, i, tj_sched_add(c, tj_sched_mul(c, io, K), il)) : NULL;
  const tj_tir_stmt_t *b = at ? tj_tir_substitute_stmt(c->arena, s, 1, &i, &at) : NULL;
  return b ? tj_sched_loop(c, il, K, TJ_FOR_VECTORIZED, b) : NULL;
}

const tj_tir_stmt_t *tj_sched_row_lanes(tj_sched_ctx_t *c, const tj_tir_stmt_t *s) {
  int64_t E, K, m;
  if (s->kind != TJ_TIR_FOR || s->loop.kind != TJ_FOR_SERIAL || !tj_tir_is_const_int(s->loop.extent, &E) ||
      !tj_tir_is_const_int(s->loop.min, &m) || m != 0 || s->loop.body->kind != TJ_TIR_SEQ)
    return s;
  const tj_tir_stmt_t *body = s->loop.body, *red = body->seq.stmts[body->seq.n - 1];
  if (body->seq.n < 2 || red->kind != TJ_TIR_FOR || red->loop.kind != TJ_FOR_SERIAL ||
      !tj_tir_is_const_int(red->loop.extent, &K) || !tj_tir_is_const_int(red->loop.min, &m) || m != 0)
    return s;
  int64_t V = tj_sched_lanes(c, TJ_F32);
  if (K < 4 || K > V || (K & (K - 1)) || E % K) return s;
  const tj_tir_stmt_t *init = body->seq.n == 2 ? body->seq.stmts[0]
                                               : tj_tir_seq(c->arena, body->seq.n - 1, body->seq.stmts);
  if (!init) return (void)(c->oom = true), NULL;
  if (!rows_independent(s->loop.var, init, red->loop.body)) return s;
  const tj_tir_expr_t *io = tj_sched_var(c, "io"), *r = tj_sched_var(c, "r");
  const tj_tir_expr_t *rv = r ? tj_sched_cast_like(c, red->loop.var, r) : NULL;
  const tj_tir_stmt_t *upd = rv ? tj_tir_substitute_stmt(c->arena, red->loop.body, 1, &red->loop.var, &rv) : NULL;
  const tj_tir_stmt_t *pair[2] = {io ? lanes_of(c, s->loop.var, io, K, init) : NULL,
                                  upd && io ? lanes_of(c, s->loop.var, io, K, upd) : NULL};
  if (pair[1]) pair[1] = tj_sched_loop(c, r, K, TJ_FOR_UNROLLED, pair[1]);
  const tj_tir_stmt_t *out = pair[0] && pair[1] ? tj_tir_seq(c->arena, 2, pair) : NULL;
  if (out) out = tj_sched_loop(c, io, E / K, TJ_FOR_SERIAL, out);
  if (!out) c->oom = true;
  return out;
}
