/* ParallelSymbolic (lower.h): nests with a symbolic extent, which the schedule rules
 * leave alone (they size tiles and vectors from constant extents), after
 * ScheduleReductions has put their reductions in a vectorizable order:
 *
 *   for i0 (1), i1 (12), i2 (n), i3 (n):  block
 * becomes the same nest with the first loop that is not of extent 1 a T.parallel loop,
 * when its block iter is spatial (each iteration writes its own outputs, so any order is
 * exact). The chunks are computed at run time from the extent; the inner loops stay for
 * LLVM to vectorize. The row-independent kernels, the heavy ones of a model with a
 * symbolic batch or sequence length, do not get here: they run as static chunks
 * (row_split.h). This is the correct, still parallel, floor for the others. */
#include "ir/visit.h"
#include "transforms/tir/lower.h"

enum { MAX_NEST = 16 };

typedef struct sym_nest {
  int n;
  const tj_tir_stmt_t *loops[MAX_NEST];
  const tj_tir_stmt_t *realize;
  bool symbolic;
} sym_nest_t;

static bool collect(const tj_tir_stmt_t *s, sym_nest_t *out) {
  out->n = 0;
  out->symbolic = false;
  while (s->kind == TJ_TIR_FOR) {
    int64_t mn, ext;
    if (out->n == MAX_NEST || s->loop.kind != TJ_FOR_SERIAL || s->loop.annotations ||
        !tj_tir_is_const_int(s->loop.min, &mn) || mn != 0)
      return false;
    if (!tj_tir_is_const_int(s->loop.extent, &ext)) out->symbolic = true;
    out->loops[out->n++] = s;
    s = s->loop.body;
  }
  out->realize = s;
  return out->n > 0 && s->kind == TJ_TIR_BLOCK_REALIZE && out->symbolic;
}

/* The block iter bound to loop l's var, or NULL. */
static const tj_iter_var_t *iter_of(const sym_nest_t *nest, int l) {
  const tj_tir_stmt_t *r = nest->realize;
  const tj_block_t *b = r->realize.block;
  for (int i = 0; i < b->n_iter_vars && i < r->realize.n_iter_values; i++)
    if (r->realize.iter_values[i] == nest->loops[l]->loop.var) return &b->iter_vars[i];
  return NULL;
}

typedef struct store_ctx {
  const tj_tir_expr_t *var;
  bool ok;
} store_ctx_t;

static bool store_uses(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  store_ctx_t *c = v->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE) return c->ok;
  bool found = false;
  for (int i = 0; i < s->store.n_indices; i++) found |= s->store.indices[i] == c->var;
  c->ok &= found;
  return c->ok;
}

/* Every store of the block indexes one dim by the iter itself: distinct iterations of
 * its loop write distinct elements. */
static bool stores_use(const tj_block_t *b, const tj_tir_expr_t *iter) {
  store_ctx_t c = {iter, true};
  tj_tir_visitor_t v = {.stmt = store_uses, .ctx = &c};
  tj_tir_visit_stmt(&v, b->init);
  tj_tir_visit_stmt(&v, b->body);
  return c.ok;
}

static const tj_tir_stmt_t *parallel_nest(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR) return NULL; /* the root block and sequences: look inside */
  sym_nest_t nest;
  if (!collect(s, &nest)) return s; /* not inside loops: a parallel loop there would run per iteration */
  int par = 0;
  int64_t ext;
  while (par < nest.n && tj_tir_is_const_int(nest.loops[par]->loop.extent, &ext) && ext == 1) par++;
  const tj_iter_var_t *iv = par < nest.n ? iter_of(&nest, par) : NULL;
  if (!iv || iv->kind != TJ_ITER_SPATIAL || !stores_use(nest.realize->realize.block, iv->var)) return s;
  /* The loop var must not appear in the block otherwise than as that iter's value. */
  for (int k = 0; k < nest.realize->realize.n_iter_values; k++) {
    const tj_tir_expr_t *v = nest.realize->realize.iter_values[k];
    if (v != nest.loops[par]->loop.var && tj_tir_expr_uses_var(v, nest.loops[par]->loop.var)) return s;
  }
  if (tj_tir_expr_uses_var(nest.realize->realize.predicate, nest.loops[par]->loop.var)) return s;
  const tj_tir_stmt_t *body = nest.realize;
  for (int l = nest.n - 1; l >= 0 && body; l--) {
    const tj_tir_stmt_t *lp = nest.loops[l];
    body = tj_tir_for(m->arena, lp->loop.var, lp->loop.min, lp->loop.extent, l == par ? TJ_FOR_PARALLEL : TJ_FOR_SERIAL,
                      body);
  }
  if (!body) m->failed = true;
  return body;
}

tj_status_t *tj_tir_parallel_symbolic(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                      const tj_prim_func_t **out) {
  tj_tir_mutator_t m = {.arena = arena, .stmt = parallel_nest};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "ParallelSymbolic", name, out);
}
