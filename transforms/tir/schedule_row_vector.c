/* One row's reduction with its terms in V-lane partial results (schedule_rules.h), for
 * the default float mode (reorder_reductions): a serial row sum is one dependent add per
 * element (4 cycles each), 16 times slower than a vector of partial sums; softmax's row
 * max and sum and layer_norm's two statistics were all latency-bound scalar chains.
 *
 *   init;  for r in range(K): body          (body: out_k[row] = out_k[row] (+) term_k(r))
 * becomes
 *   acc_k_u[0:V] = init_k                    (U vectors per accumulator, independent chains)
 *   for ro in range(K / (U*V)):  for u < U:  for l in T.vectorized(V):
 *       body with r = (ro*U + u)*V + l, out_k[row] read and written as acc_k_u[l]
 *   for j: for l in T.vectorized(V): ...    (remaining whole vectors, into acc_k_0)
 *   acc_k_0 = acc_k_0 (+) acc_k_u  (u >= 1);  then halves: V -> V/2 -> ... -> 1 lanes
 *   init;  out_k[row] = out_k[row] (+) acc_k[0]
 *   for t in range(K % V): body with r = K - K % V + t      (the tail, in order)
 * (+) is the body's own combine (add, mul, max, min), so only the order of the terms
 * changes: float sums round differently (usually closer: shorter chains), max/min differ
 * only in which NaN or signed zero wins. Each halving step writes a new buffer, because a
 * vectorized loop may not read a buffer it writes at another index. */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

#define MAX_ACCS 4
#define MAX_LETS 16
#define UNROLL 4 /* independent vector chains per accumulator: an add's latency / its issue interval */

typedef struct row_acc {
  const tj_buffer_t *out;
  const tj_tir_stmt_t *store;     /* in the body */
  const tj_tir_expr_t *init;      /* its init value */
  const tj_tir_expr_t *value_var; /* the let var the store writes, or NULL */
  tj_tir_expr_kind_t combine;
  const tj_buffer_t *acc[UNROLL];
} row_acc_t;

typedef struct row_plan {
  int n;
  row_acc_t accs[MAX_ACCS];
  int n_lets;
  const tj_tir_expr_t *let_var[MAX_LETS], *let_value[MAX_LETS];
} row_plan_t;

static bool same_indices(const tj_tir_stmt_t *st, const tj_tir_expr_t *load) {
  if (load->kind != TJ_TIR_BUFFER_LOAD || load->load.buffer != st->store.buffer ||
      load->load.n_indices != st->store.n_indices)
    return false;
  for (int i = 0; i < st->store.n_indices; i++)
    if (!tj_struct_equal_tir_expr(st->store.indices[i], load->load.indices[i])) return false;
  return true;
}

static bool reassociable(tj_dtype_t d) {
  if (d.lanes != 1) return false;
  if (d.code == TJ_DT_FLOAT) return d.bits == 32 || d.bits == 64;
  return d.code == TJ_DT_INT || d.code == TJ_DT_UINT;
}

/* One accumulator store: out[row] = out[row] (+) term, directly or through a let var. */
static bool add_store(row_plan_t *p, const tj_tir_stmt_t *st) {
  if (p->n == MAX_ACCS || !reassociable(st->store.buffer->dtype)) return false;
  row_acc_t *a = &p->accs[p->n];
  memset(a, 0, sizeof *a);
  const tj_tir_expr_t *v = st->store.value;
  if (v->kind == TJ_TIR_VAR) {
    a->value_var = v;
    v = NULL;
    for (int i = 0; i < p->n_lets; i++)
      if (p->let_var[i] == a->value_var) v = p->let_value[i];
    if (!v) return false;
  }
  if (v->kind != TJ_TIR_ADD && v->kind != TJ_TIR_MUL && v->kind != TJ_TIR_MAX && v->kind != TJ_TIR_MIN) return false;
  if (!same_indices(st, v->binary.a)) return false;
  for (int k = 0; k < p->n; k++)
    if (p->accs[k].out == st->store.buffer) return false;
  a->out = st->store.buffer;
  a->store = st;
  a->combine = v->kind;
  p->n++;
  return true;
}

static bool collect_body(row_plan_t *p, const tj_tir_stmt_t *s) {
  switch (s->kind) {
    case TJ_TIR_LET_STMT:
      if (p->n_lets == MAX_LETS) return false;
      p->let_var[p->n_lets] = s->let.var;
      p->let_value[p->n_lets++] = s->let.value;
      return collect_body(p, s->let.body);
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (!collect_body(p, s->seq.stmts[i])) return false;
      return true;
    case TJ_TIR_BUFFER_STORE: return add_store(p, s);
    default: return false;
  }
}

static bool collect_init(row_plan_t *p, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_SEQ) {
    for (int i = 0; i < s->seq.n; i++)
      if (!collect_init(p, s->seq.stmts[i])) return false;
    return true;
  }
  if (s->kind != TJ_TIR_BUFFER_STORE) return false;
  for (int k = 0; k < p->n; k++)
    if (p->accs[k].out == s->store.buffer && !p->accs[k].init) return (p->accs[k].init = s->store.value), true;
  return false;
}

typedef struct var_count {
  const tj_tir_expr_t *var;
  int n;
} var_count_t;

static bool count_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  var_count_t *c = v->ctx;
  if (e == c->var) c->n++;
  return true;
}

/* Each accumulator is read once (its own combine) and its let var used once (its store):
 * no term sees a running value, so the terms may be taken in any order. */
static bool terms_independent(const row_plan_t *p, const tj_tir_stmt_t *body) {
  for (int k = 0; k < p->n; k++) {
    if (tj_sched_count_uses(body, p->accs[k].out) != 2 || !p->accs[k].init) return false;
    if (!p->accs[k].value_var) continue;
    var_count_t vc = {p->accs[k].value_var, 0};
    tj_tir_visitor_t v = {.expr = count_var, .ctx = &vc};
    tj_tir_visit_stmt(&v, body);
    if (vc.n != 2) return false; /* its let binding and its store */
  }
  return true;
}

/* ---- building ---- */

typedef struct retarget {
  const row_plan_t *plan;
  int u;                     /* which of the U partial vectors */
  const tj_tir_expr_t *lane; /* index into it */
} retarget_t;

static const tj_buffer_t *acc_of(const retarget_t *r, const tj_buffer_t *out) {
  for (int k = 0; k < r->plan->n; k++)
    if (r->plan->accs[k].out == out) return r->plan->accs[k].acc[r->u];
  return NULL;
}

static const tj_tir_expr_t *retarget_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  retarget_t *r = m->ctx;
  const tj_buffer_t *acc = e->kind == TJ_TIR_BUFFER_LOAD ? acc_of(r, e->load.buffer) : NULL;
  if (!acc) return NULL;
  const tj_tir_expr_t *e2 = tj_tir_load(m->arena, acc, 1, &r->lane);
  if (!e2) m->failed = true;
  return e2;
}

static const tj_tir_stmt_t *retarget_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  retarget_t *r = m->ctx;
  const tj_buffer_t *acc = s->kind == TJ_TIR_BUFFER_STORE ? acc_of(r, s->store.buffer) : NULL;
  if (!acc) return NULL;
  const tj_tir_expr_t *v = tj_tir_mutate_expr(m, s->store.value);
  const tj_tir_stmt_t *s2 = v ? tj_tir_store(m->arena, acc, 1, &r->lane, v) : NULL;
  if (!s2) m->failed = true;
  return s2;
}

/* body at reduce index `at`, with every out_k[row] read and written as acc_k_u[lane]
 * (lane NULL: the body itself, on out_k). */
static const tj_tir_stmt_t *body_at(tj_sched_ctx_t *c, const row_plan_t *p, const tj_tir_stmt_t *body,
                                    const tj_tir_expr_t *r, const tj_tir_expr_t *at, int u, const tj_tir_expr_t *lane) {
  at = tj_sched_cast_like(c, r, at);
  const tj_tir_stmt_t *s = at ? tj_tir_substitute_stmt(c->arena, body, 1, &r, &at) : NULL;
  if (s && lane) {
    retarget_t rt = {p, u, lane};
    tj_tir_mutator_t m = {.arena = c->arena, .expr = retarget_expr, .stmt = retarget_stmt, .ctx = &rt};
    s = tj_tir_mutate_stmt(&m, s);
    if (m.failed) s = NULL;
  }
  if (!s) c->oom = true;
  return s;
}

/* Local buffers of the row, each allocated around the result (tj_tir_allocate). */
typedef struct alloc_list {
  int n;
  const tj_buffer_t *b[MAX_ACCS * (UNROLL + 8)];
} alloc_list_t;

static const tj_buffer_t *local(tj_sched_ctx_t *c, alloc_list_t *al, const char *name, tj_dtype_t dt, int64_t n) {
  const tj_tir_expr_t *shape[1] = {tj_tir_i64(c->arena, n)};
  const tj_buffer_t *b = shape[0] ? tj_buffer_new(c->arena, name, dt, 1, shape, NULL) : NULL;
  if (!b || al->n == (int)(sizeof al->b / sizeof al->b[0])) c->oom = true;
  else al->b[al->n++] = b;
  return b;
}

static const tj_tir_expr_t *ld(tj_sched_ctx_t *c, const tj_buffer_t *b, const tj_tir_expr_t *i) {
  const tj_tir_expr_t *e = b && i ? tj_tir_load(c->arena, b, 1, &i) : NULL;
  if (!e) c->oom = true;
  return e;
}

static const tj_tir_stmt_t *st(tj_sched_ctx_t *c, const tj_buffer_t *b, const tj_tir_expr_t *i,
                               const tj_tir_expr_t *v) {
  const tj_tir_stmt_t *s = b && i && v ? tj_tir_store(c->arena, b, 1, &i, v) : NULL;
  if (!s) c->oom = true;
  return s;
}

static const tj_tir_expr_t *comb(tj_sched_ctx_t *c, tj_tir_expr_kind_t k, const tj_tir_expr_t *x,
                                 const tj_tir_expr_t *y) {
  const tj_tir_expr_t *e = x && y ? tj_tir_binary(c->arena, k, x, y) : NULL;
  if (!e) c->oom = true;
  return e;
}

/* for l in T.vectorized(n) (a plain statement at l = 0 when n == 1) */
static const tj_tir_stmt_t *lanes_loop(tj_sched_ctx_t *c, const tj_tir_expr_t *l, int64_t n, const tj_tir_stmt_t *s) {
  if (n > 1) return tj_sched_loop(c, l, n, TJ_FOR_VECTORIZED, s);
  const tj_tir_expr_t *zero = tj_tir_i64(c->arena, 0);
  const tj_tir_stmt_t *r = s && zero ? tj_tir_substitute_stmt(c->arena, s, 1, &l, &zero) : NULL;
  if (!r) c->oom = true;
  return r;
}

typedef struct stmts {
  int n;
  const tj_tir_stmt_t *s[64];
} stmts_t;

static void push(tj_sched_ctx_t *c, stmts_t *l, const tj_tir_stmt_t *s) {
  if (!s || l->n == 64) c->oom = true;
  else l->s[l->n++] = s;
}

static const tj_tir_stmt_t *seq(tj_sched_ctx_t *c, const stmts_t *l) {
  const tj_tir_stmt_t *s = l->n ? tj_tir_seq(c->arena, l->n, l->s) : NULL;
  if (!s) c->oom = true;
  return s;
}

/* The partial vectors of accumulator a combined into one element: returns the buffer
 * whose element 0 holds it. */
static const tj_buffer_t *fold_lanes(tj_sched_ctx_t *c, alloc_list_t *al, stmts_t *out, const row_acc_t *a, int U,
                                     int64_t V) {
  tj_dtype_t dt = a->out->dtype;
  const tj_tir_expr_t *l = tj_sched_var(c, "l");
  for (int u = 1; u < U; u++)
    push(c, out, lanes_loop(c, l, V, st(c, a->acc[0], l, comb(c, a->combine, ld(c, a->acc[0], l), ld(c, a->acc[u], l)))));
  const tj_buffer_t *prev = a->acc[0];
  for (int64_t h = V / 2; h >= 1 && !c->oom; h /= 2) {
    const tj_buffer_t *half = local(c, al, "acc_half", dt, h);
    l = tj_sched_var(c, "l");
    const tj_tir_expr_t *hi = tj_sched_add(c, l, tj_tir_i64(c->arena, h));
    push(c, out, lanes_loop(c, l, h, st(c, half, l, comb(c, a->combine, ld(c, prev, l), ld(c, prev, hi)))));
    prev = half;
  }
  return prev;
}

const tj_tir_stmt_t *tj_sched_row_reduce_vector(tj_sched_ctx_t *c, const tj_tir_stmt_t *init,
                                                const tj_tir_stmt_t *body, const tj_tir_expr_t *r, int64_t K) {
  row_plan_t p = {0};
  if (!c->opts->reorder_reductions || !collect_body(&p, body) || p.n == 0 || !collect_init(&p, init) ||
      !terms_independent(&p, body))
    return NULL;
  int64_t V = tj_sched_lanes(c, p.accs[0].out->dtype);
  for (int k = 1; k < p.n; k++)
    if (tj_sched_lanes(c, p.accs[k].out->dtype) != V) return NULL;
  if (V < 2 || K < 2 * V) return NULL;
  int U = UNROLL;
  while (U > 1 && K < U * V) U /= 2;
  int64_t main_iters = K / (U * V), rest = (K - main_iters * U * V) / V, tail = K % V;
  alloc_list_t al = {0};
  stmts_t out = {0};
  /* the partial vectors start at the init values */
  for (int k = 0; k < p.n; k++)
    for (int u = 0; u < U; u++) {
      const tj_buffer_t *acc = local(c, &al, "acc", p.accs[k].out->dtype, V);
      p.accs[k].acc[u] = acc;
      const tj_tir_expr_t *l = tj_sched_var(c, "l");
      push(c, &out, lanes_loop(c, l, V, st(c, acc, l, p.accs[k].init)));
    }
  /* U independent vector chains */
  const tj_tir_expr_t *ro = tj_sched_var(c, "ro");
  stmts_t chains = {0};
  for (int u = 0; u < U; u++) {
    const tj_tir_expr_t *l = tj_sched_var(c, "l");
    const tj_tir_expr_t *at = tj_sched_add(c, tj_sched_mul(c, tj_sched_add(c, tj_sched_mul(c, ro, U), tj_tir_i64(c->arena, u)), V), l);
    push(c, &chains, lanes_loop(c, l, V, body_at(c, &p, body, r, at, u, l)));
  }
  push(c, &out, tj_sched_loop(c, ro, main_iters, TJ_FOR_SERIAL, seq(c, &chains)));
  if (rest) {
    const tj_tir_expr_t *j = tj_sched_var(c, "rj"), *l = tj_sched_var(c, "l");
    const tj_tir_expr_t *at = tj_sched_add(c, tj_tir_i64(c->arena, main_iters * U * V), tj_sched_add(c, tj_sched_mul(c, j, V), l));
    push(c, &out, tj_sched_loop(c, j, rest, TJ_FOR_SERIAL, lanes_loop(c, l, V, body_at(c, &p, body, r, at, 0, l))));
  }
  /* the lanes folded, then into the row's element after its init */
  const tj_buffer_t *folded[MAX_ACCS];
  for (int k = 0; k < p.n && !c->oom; k++) folded[k] = fold_lanes(c, &al, &out, &p.accs[k], U, V);
  push(c, &out, init);
  for (int k = 0; k < p.n && !c->oom; k++) {
    const tj_tir_stmt_t *s = p.accs[k].store;
    const tj_tir_expr_t *cur = tj_tir_load(c->arena, s->store.buffer, s->store.n_indices, s->store.indices);
    const tj_tir_expr_t *v = comb(c, p.accs[k].combine, cur, ld(c, folded[k], tj_tir_i64(c->arena, 0)));
    push(c, &out, v ? tj_tir_store(c->arena, s->store.buffer, s->store.n_indices, s->store.indices, v) : NULL);
  }
  if (tail) {
    const tj_tir_expr_t *t = tj_sched_var(c, "t");
    const tj_tir_expr_t *at = tj_sched_add(c, tj_tir_i64(c->arena, K - tail), t);
    push(c, &out, tj_sched_loop(c, t, tail, TJ_FOR_SERIAL, body_at(c, &p, body, r, at, 0, NULL)));
  }
  const tj_tir_stmt_t *res = seq(c, &out);
  for (int i = al.n - 1; i >= 0 && res; i--) res = tj_tir_allocate(c->arena, al.b[i], res);
  if (!res) c->oom = true;
  return c->oom ? NULL : res;
}
