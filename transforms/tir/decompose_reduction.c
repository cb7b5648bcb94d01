/* ScheduleReductions: the first CPU schedule step, TVM's decompose_reduction + reorder.
 *
 * A reduction block in a perfect loop nest (one loop per iter var, as LegalizeOps
 * writes them), e.g. conv2d's
 *     for n, y, x, f, ry, rx, rc:  block { init: C[n,y,x,f] = 0;  C[n,y,x,f] += P[..] * W[..] }
 * becomes
 *     for n, y, x, f:              C[n,y,x,f] = 0
 *     for n, y, x, ry, rx, rc, f:  C[n,y,x,f] += P[..] * W[..]
 * The spatial loop that indexes C's last (contiguous) dimension moves innermost, so
 * LLVM vectorizes across outputs without reassociating anything: every output still
 * accumulates its terms in the original order (ry, rx, rc), so results are bit-exact.
 *
 * Applied only when that is provably so: the block writes one buffer C at indices of
 * spatial iter vars only, reads C only at those same indices, the init writes the same
 * element from spatial vars only, and each loop's extent is its iter's (a constant, or the
 * same symbolic var: the order argument does not depend on it). Anything else is left
 * as is. */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/tir/lower.h"

#define MAX_NEST 16

typedef struct nest {
  int n;
  const tj_tir_stmt_t *loops[MAX_NEST];
  const tj_tir_stmt_t *realize;
  int iter_of_loop[MAX_NEST]; /* iter var index bound to loop i */
} nest_t;

static bool collect_nest(const tj_tir_stmt_t *s, nest_t *out) {
  out->n = 0;
  while (s->kind == TJ_TIR_FOR) {
    int64_t min;
    if (out->n == MAX_NEST || s->loop.kind != TJ_FOR_SERIAL || s->loop.annotations ||
        !tj_tir_is_const_int(s->loop.min, &min) || min != 0)
      return false;
    out->loops[out->n++] = s;
    s = s->loop.body;
  }
  if (s->kind != TJ_TIR_BLOCK_REALIZE || out->n == 0) return false;
  out->realize = s;
  return true;
}

/* Each loop binds exactly one iter var with the same domain [0, extent). */
static bool match_bindings(nest_t *nest) {
  const tj_tir_stmt_t *r = nest->realize;
  const tj_block_t *b = r->realize.block;
  int64_t pred;
  if (b->n_iter_vars != nest->n || r->realize.n_iter_values != nest->n) return false;
  if (!tj_tir_is_const_int(r->realize.predicate, &pred) || pred == 0) return false;
  bool used[MAX_NEST] = {false};
  for (int l = 0; l < nest->n; l++) {
    nest->iter_of_loop[l] = -1;
    for (int i = 0; i < b->n_iter_vars; i++)
      if (r->realize.iter_values[i] == nest->loops[l]->loop.var && !used[i]) {
        int64_t mn, ext, lext;
        const tj_tir_expr_t *de = b->iter_vars[i].dom.extent, *le = nest->loops[l]->loop.extent;
        /* a symbolic extent (a kernel for every n) is the same var in loop and domain */
        bool same = de == le || (tj_tir_is_const_int(de, &ext) && tj_tir_is_const_int(le, &lext) && ext == lext);
        if (!tj_tir_is_const_int(b->iter_vars[i].dom.min, &mn) || mn != 0 || !same) return false;
        used[i] = true;
        nest->iter_of_loop[l] = i;
      }
    if (nest->iter_of_loop[l] < 0) return false;
  }
  return true;
}

/* ---- "uses only these vars" / "reads C only at these indices" checks ---- */
typedef struct use_check {
  const tj_block_t *block;
  bool allow_reduce;
  const tj_buffer_t *target;
  const tj_tir_stmt_t *store; /* C's store: loads of C must use its indices */
  bool ok;
} use_check_t;

static bool same_indices(int n, const tj_tir_expr_t *const *a, const tj_tir_expr_t *const *b) {
  for (int i = 0; i < n; i++)
    if (!tj_struct_equal_tir_expr(a[i], b[i])) return false;
  return true;
}

static bool check_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  use_check_t *c = v->ctx;
  if (!c->ok) return false;
  if (e->kind == TJ_TIR_VAR && !c->allow_reduce)
    for (int i = 0; i < c->block->n_iter_vars; i++)
      if (c->block->iter_vars[i].var == e && c->block->iter_vars[i].kind != TJ_ITER_SPATIAL) c->ok = false;
  if (e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == c->target &&
      (!c->store || e->load.n_indices != c->store->store.n_indices ||
       !same_indices(e->load.n_indices, e->load.indices, c->store->store.indices)))
    c->ok = false;
  if (e->kind == TJ_TIR_CALL && strcmp(e->call.op, "tir.if_then_else") != 0 && strncmp(e->call.op, "tir.", 4) != 0)
    c->ok = false; /* unknown calls may have effects */
  return c->ok;
}

static bool expr_ok(const tj_block_t *b, const tj_tir_expr_t *e, bool allow_reduce, const tj_buffer_t *target,
                    const tj_tir_stmt_t *store) {
  use_check_t c = {b, allow_reduce, target, store, true};
  tj_tir_visitor_t v = {.expr = check_expr, .ctx = &c};
  tj_tir_visit_expr(&v, e);
  return c.ok;
}

/* The index of the spatial iter var that is C's last index, or -1. */
static int contiguous_iter(const tj_block_t *b, const tj_tir_stmt_t *store) {
  if (store->store.n_indices == 0) return -1;
  const tj_tir_expr_t *last = store->store.indices[store->store.n_indices - 1];
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].var == last && b->iter_vars[i].kind == TJ_ITER_SPATIAL) return i;
  return -1;
}

static bool block_is_schedulable(const tj_block_t *b) {
  if (!b->init || b->n_alloc_buffers || b->n_match_buffers) return false;
  const tj_tir_stmt_t *st = b->body, *in = b->init;
  if (st->kind != TJ_TIR_BUFFER_STORE || in->kind != TJ_TIR_BUFFER_STORE) return false;
  if (in->store.buffer != st->store.buffer || in->store.n_indices != st->store.n_indices) return false;
  if (!same_indices(st->store.n_indices, st->store.indices, in->store.indices)) return false;
  bool any_reduce = false;
  for (int i = 0; i < b->n_iter_vars; i++) any_reduce |= b->iter_vars[i].kind == TJ_ITER_REDUCE;
  if (!any_reduce) return false;
  for (int i = 0; i < st->store.n_indices; i++)
    if (!expr_ok(b, st->store.indices[i], false, st->store.buffer, NULL)) return false;
  return expr_ok(b, st->store.value, true, st->store.buffer, st) && expr_ok(b, in->store.value, false, st->store.buffer, NULL);
}

/* ---- rebuilding ---- */

static const tj_tir_stmt_t *wrap_loops(tj_arena_t *a, const tj_tir_stmt_t *body, int n, const tj_tir_stmt_t *const *loops,
                                       const tj_tir_expr_t *const *vars) {
  for (int i = n - 1; i >= 0 && body; i--)
    body = tj_tir_for(a, vars[i], loops[i]->loop.min, loops[i]->loop.extent, TJ_FOR_SERIAL, body);
  return body;
}

static const tj_tir_stmt_t *schedule_nest(tj_arena_t *a, const nest_t *nest, int inner_loop) {
  const tj_block_t *b = nest->realize->realize.block;
  /* Init nest: the spatial loops (fresh vars), a block without reduce iter vars. */
  const tj_tir_stmt_t *init_loops[MAX_NEST];
  const tj_tir_expr_t *init_vars[MAX_NEST], *init_values[MAX_NEST];
  tj_iter_var_t init_ivs[MAX_NEST];
  int ni = 0;
  for (int l = 0; l < nest->n; l++) {
    const tj_iter_var_t *iv = &b->iter_vars[nest->iter_of_loop[l]];
    if (iv->kind != TJ_ITER_SPATIAL) continue;
    const tj_tir_expr_t *lv = nest->loops[l]->loop.var;
    init_loops[ni] = nest->loops[l];
    init_vars[ni] = tj_tir_var(a, tj_arena_printf(a, "%s_init", lv->var.name), lv->dtype);
    init_values[ni] = init_vars[ni];
    init_ivs[ni] = *iv;
    if (!init_vars[ni]) return NULL;
    ni++;
  }
  tj_block_t *ib = tj_block_new(a, tj_arena_printf(a, "%s_init", b->name));
  tj_block_t *ub = tj_block_new(a, b->name);
  if (!ib || !ub) return NULL;
  ib->n_iter_vars = ni;
  ib->iter_vars = tj_arena_memdup(a, init_ivs, sizeof(init_ivs[0]) * (size_t)ni);
  ib->n_writes = b->n_writes;
  ib->writes = b->writes;
  ib->body = b->init;
  ib->annotations = b->annotations;
  const tj_tir_stmt_t *init_nest =
      wrap_loops(a, tj_tir_realize(a, ni, init_values, NULL, ib), ni, init_loops, init_vars);
  /* Update nest: the same block without init, loops reordered. */
  *ub = *b;
  ub->init = NULL;
  const tj_tir_stmt_t *order[MAX_NEST];
  const tj_tir_expr_t *vars[MAX_NEST];
  int k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int l = 0; l < nest->n; l++) {
      bool spatial = b->iter_vars[nest->iter_of_loop[l]].kind == TJ_ITER_SPATIAL;
      if (l != inner_loop && spatial == (pass == 0)) order[k++] = nest->loops[l];
    }
  order[k++] = nest->loops[inner_loop];
  for (int i = 0; i < k; i++) vars[i] = order[i]->loop.var;
  const tj_tir_stmt_t *r = nest->realize;
  const tj_tir_stmt_t *update_nest = wrap_loops(
      a, tj_tir_realize(a, r->realize.n_iter_values, r->realize.iter_values, r->realize.predicate, ub), k, order, vars);
  if (!init_nest || !update_nest) return NULL;
  const tj_tir_stmt_t *pair[2] = {init_nest, update_nest};
  return tj_tir_seq(a, 2, pair);
}

typedef struct sched_ctx {
  bool oom;
} sched_ctx_t;

static const tj_tir_stmt_t *schedule_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR) return NULL;
  nest_t nest;
  if (!collect_nest(s, &nest) || !match_bindings(&nest)) return NULL;
  const tj_block_t *b = nest.realize->realize.block;
  if (!block_is_schedulable(b)) return NULL;
  int inner_iter = contiguous_iter(b, b->body);
  if (inner_iter < 0) return NULL;
  int inner_loop = -1;
  for (int l = 0; l < nest.n; l++)
    if (nest.iter_of_loop[l] == inner_iter) inner_loop = l;
  const tj_tir_stmt_t *r = schedule_nest(m->arena, &nest, inner_loop);
  if (!r) {
    ((sched_ctx_t *)m->ctx)->oom = true;
    m->failed = true;
  }
  return r;
}

tj_status_t *tj_tir_schedule_reductions(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                        const tj_prim_func_t **out) {
  sched_ctx_t c = {false};
  tj_tir_mutator_t m = {.arena = arena, .stmt = schedule_stmt, .ctx = &c};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "ScheduleReductions", name, out);
}
