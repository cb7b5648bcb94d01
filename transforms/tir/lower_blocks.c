/* LowerBlocks: BlockRealize -> plain statements (see lower.h). */
#include <string.h>

#include "ir/visit.h"
#include "transforms/tir/lower.h"

typedef struct lower_blocks_ctx {
  const char *func_name;
  tj_status_t *error;
} lower_blocks_ctx_t;

static bool is_const_true(const tj_tir_expr_t *e) {
  int64_t v;
  return !e || (tj_tir_is_const_int(e, &v) && v != 0);
}

static const tj_tir_stmt_t *fail(tj_tir_mutator_t *m, tj_status_t *status) {
  lower_blocks_ctx_t *c = m->ctx;
  if (!c->error) c->error = status;
  m->failed = true;
  return NULL;
}

/* `r0 == min0 && r1 == min1 && ...` over the reduce iter vars; NULL when there are none
 * (the init then runs on every iteration, as in TVM). */
static const tj_tir_expr_t *init_condition(tj_arena_t *a, const tj_block_t *b, bool *oom) {
  const tj_tir_expr_t *cond = NULL;
  for (int i = 0; i < b->n_iter_vars; i++) {
    const tj_iter_var_t *iv = &b->iter_vars[i];
    if (iv->kind != TJ_ITER_REDUCE) continue;
    const tj_tir_expr_t *min = iv->dom.min;
    if (!tj_dtype_eq(min->dtype, iv->var->dtype)) min = tj_tir_cast(a, iv->var->dtype, min);
    const tj_tir_expr_t *eq = tj_tir_binary(a, TJ_TIR_EQ, iv->var, min);
    cond = cond ? tj_tir_binary(a, TJ_TIR_AND, cond, eq) : eq;
    if (!cond) *oom = true;
  }
  return cond;
}

/* The block's statement in terms of its own iter vars: guarded init, then body. */
static const tj_tir_stmt_t *block_statement(tj_tir_mutator_t *m, const tj_block_t *b) {
  tj_arena_t *a = m->arena;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, b->body);
  if (m->failed) return NULL;
  if (!b->init) return body;
  const tj_tir_stmt_t *init = tj_tir_mutate_stmt(m, b->init);
  if (m->failed) return NULL;
  bool oom = false;
  const tj_tir_expr_t *cond = init_condition(a, b, &oom);
  if (oom) return NULL;
  const tj_tir_stmt_t *guarded = cond ? tj_tir_if(a, cond, init, NULL) : init;
  if (!guarded) return NULL;
  const tj_tir_stmt_t *pair[2] = {guarded, body};
  return tj_tir_seq(a, 2, pair);
}

static const tj_tir_stmt_t *lower_realize(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  lower_blocks_ctx_t *c = m->ctx;
  tj_arena_t *a = m->arena;
  const tj_block_t *b = s->realize.block;
  if (b->n_match_buffers > 0)
    return fail(m, tj_status_new(TJ_ERR_UNSUPPORTED,
                                 "LowerBlocks: '%s': block '%s' uses T.match_buffer, which the JIT "
                                 "does not lower yet",
                                 c->func_name, b->name));
  if (s->realize.n_iter_values != b->n_iter_vars)
    return fail(m, tj_status_new(TJ_ERR_VERIFY,
                                 "LowerBlocks: '%s': block '%s' binds %d values to %d iter vars",
                                 c->func_name, b->name, s->realize.n_iter_values, b->n_iter_vars));
  const tj_tir_stmt_t *stmt = block_statement(m, b);
  if (!stmt) return m->failed ? NULL : fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LowerBlocks: out of memory"));
  if (b->n_iter_vars > 0) {
    const tj_tir_expr_t **vars = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, b->n_iter_vars);
    const tj_tir_expr_t **values = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, b->n_iter_vars);
    if (!vars || !values) return fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LowerBlocks: out of memory"));
    for (int i = 0; i < b->n_iter_vars; i++) {
      vars[i] = b->iter_vars[i].var;
      values[i] = tj_tir_mutate_expr(m, s->realize.iter_values[i]);
      /* A block var's dtype may differ from its binding (int32 loop, int64 iter var). */
      if (values[i] && !tj_dtype_eq(values[i]->dtype, vars[i]->dtype))
        values[i] = tj_tir_cast(a, vars[i]->dtype, values[i]);
      if (!values[i]) return fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LowerBlocks: out of memory"));
    }
    stmt = tj_tir_substitute_stmt(a, stmt, b->n_iter_vars, vars, values);
  }
  for (int i = b->n_alloc_buffers - 1; i >= 0 && stmt; i--) stmt = tj_tir_allocate(a, b->alloc_buffers[i], stmt);
  if (stmt && !is_const_true(s->realize.predicate)) {
    const tj_tir_expr_t *pred = tj_tir_mutate_expr(m, s->realize.predicate);
    stmt = pred ? tj_tir_if(a, pred, stmt, NULL) : NULL;
  }
  if (!stmt) return fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LowerBlocks: out of memory"));
  return stmt;
}

static const tj_tir_stmt_t *lower_blocks_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  return s->kind == TJ_TIR_BLOCK_REALIZE ? lower_realize(m, s) : NULL;
}

tj_status_t *tj_tir_lower_blocks(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                 const tj_prim_func_t **out) {
  lower_blocks_ctx_t c = {name ? name : "?", NULL};
  tj_tir_mutator_t m = {.arena = arena, .stmt = lower_blocks_stmt, .ctx = &c};
  return tj_tir_mutate_prim_func_body(&m, f, &c.error, "LowerBlocks", c.func_name, out);
}
