/* The lowering pipeline and the check of its result (lower.h). */
#include "transforms/tir/lower.h"

#include "ir/visit.h"

tj_status_t *tj_tir_lower(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                          const tj_prim_func_t **out_lowered) {
  return tj_tir_lower_scheduled(arena, f, name, NULL, out_lowered);
}

static tj_status_t *mark_fp_contract(tj_arena_t *arena, const char *name, const tj_prim_func_t **f) {
  tj_prim_func_t *copy = tj_arena_alloc(arena, sizeof *copy);
  const tj_attrs_t *attrs = copy ? tj_attrs_set(arena, (*f)->attrs, TJ_ATTR_FP_CONTRACT, tj_attr_bool(true)) : NULL;
  if (!attrs) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "lowering '%s': out of memory", name ? name : "?");
  *copy = **f;
  copy->attrs = attrs;
  *f = copy;
  return NULL;
}

tj_status_t *tj_tir_lower_scheduled(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_tir_schedule_options_t *schedule, const tj_prim_func_t **out_lowered) {
  const tj_prim_func_t *cur = f;
  TJ_RETURN_IF_ERROR(tj_tir_guard_loads(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_schedule(arena, cur, name, schedule, &cur, NULL));
  TJ_RETURN_IF_ERROR(tj_tir_schedule_reductions(arena, cur, name, &cur));
  if (schedule && schedule->enabled) TJ_RETURN_IF_ERROR(tj_tir_parallel_symbolic(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_lower_blocks(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_simplify_bounds(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_flatten_buffers(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_vectorize_loops(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_unroll_loops(arena, cur, name, &cur));
  TJ_RETURN_IF_ERROR(tj_tir_check_lowered(cur, name));
  if (schedule && schedule->fp_contract) TJ_RETURN_IF_ERROR(mark_fp_contract(arena, name, &cur));
  *out_lowered = cur;
  return NULL;
}

bool tj_tir_alloc_on_stack(const tj_buffer_t *buffer) {
  int64_t elems;
  if (!tj_buffer_static_size(buffer, &elems)) return false;
  return elems >= 0 && (uint64_t)elems * tj_dtype_bytes(buffer->dtype) <= TJ_TIR_STACK_ALLOC_LIMIT;
}

typedef struct check_ctx {
  const char *func_name;
  tj_status_t *error;
} check_ctx_t;

static bool check_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  check_ctx_t *c = v->ctx;
  if (c->error) return false;
  if (e->kind == TJ_TIR_BUFFER_LOAD && (e->load.n_indices != 1 || e->load.buffer->ndim != 1))
    c->error = tj_status_new(TJ_ERR_INTERNAL, "lowered '%s': load from '%s' is not flat (%d indices)", c->func_name,
                             e->load.buffer->name, e->load.n_indices);
  return !c->error;
}

static bool check_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  check_ctx_t *c = v->ctx;
  if (c->error) return false;
  if (s->kind == TJ_TIR_BLOCK_REALIZE)
    c->error = tj_status_new(TJ_ERR_INTERNAL, "lowered '%s': block '%s' remains after LowerBlocks", c->func_name,
                             s->realize.block->name);
  else if (s->kind == TJ_TIR_BUFFER_STORE && (s->store.n_indices != 1 || s->store.buffer->ndim != 1))
    c->error = tj_status_new(TJ_ERR_INTERNAL, "lowered '%s': store to '%s' is not flat (%d indices)", c->func_name,
                             s->store.buffer->name, s->store.n_indices);
  return !c->error;
}

tj_status_t *tj_tir_check_lowered(const tj_prim_func_t *f, const char *name) {
  check_ctx_t c = {name ? name : "?", NULL};
  tj_tir_visitor_t v = {.expr = check_expr, .stmt = check_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, f->body);
  return c.error;
}
