/* DeadCodeElimination (docs/semantics.md §5.2 step 9): keeps the externally
 * visible functions (those with a global_symbol) and every function they reach
 * through GlobalVar references; drops unused bindings whose value has no side
 * effect (every binding of a dataflow block, and non-call values or call_tir in
 * ordinary blocks); then drops the functions nothing reaches any more. */
#include <stdint.h>
#include <string.h>

#include "ir/visit.h"
#include "support/map.h"
#include "support/vec.h"
#include "transforms/transforms.h"

#define OOM() tj_status_new(TJ_ERR_OUT_OF_MEMORY, "DeadCodeElimination: out of memory")

typedef struct reach_ctx {
  const tj_module_t *m;
  bool *reached;
  int *queue;
  int n_queue;
} reach_ctx_t;

static void mark(reach_ctx_t *rc, const char *name) {
  for (int i = 0; i < rc->m->n_funcs; i++)
    if (!rc->reached[i] && strcmp(rc->m->funcs[i].name, name) == 0) {
      rc->reached[i] = true;
      rc->queue[rc->n_queue++] = i;
    }
}

static bool reach_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  if (!def && e->kind == TJ_RX_GLOBAL_VAR) mark(v->ctx, e->var.name);
  return true;
}

static tj_status_t *remove_unreachable(tj_arena_t *a, const tj_module_t *m, const tj_module_t **out) {
  reach_ctx_t rc = {m, TJ_ARENA_ARRAY(a, bool, m->n_funcs + 1), TJ_ARENA_ARRAY(a, int, m->n_funcs + 1), 0};
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, m->n_funcs + 1);
  if (!rc.reached || !rc.queue || !funcs) return OOM();
  for (int i = 0; i < m->n_funcs; i++)
    if (tj_func_is_public(&m->funcs[i]) && !rc.reached[i]) {
      rc.reached[i] = true;
      rc.queue[rc.n_queue++] = i;
    }
  tj_rx_visitor_t v = {.expr = reach_expr, .ctx = &rc};
  for (int q = 0; q < rc.n_queue; q++) {
    const tj_func_entry_t *e = &m->funcs[rc.queue[q]];
    if (!e->is_prim) tj_rx_visit_func(&v, e->relax);
  }
  int n = 0;
  for (int i = 0; i < m->n_funcs; i++)
    if (rc.reached[i]) funcs[n++] = m->funcs[i];
  if (n == m->n_funcs) {
    *out = m;
    return NULL;
  }
  tj_module_t *nm = tj_module_new(a, n, funcs, m->attrs);
  if (!nm) return OOM();
  nm->global_infos = m->global_infos;
  *out = nm;
  return NULL;
}

/* ---- unused bindings ---- */

typedef struct use_ctx {
  tj_arena_t *a;
  tj_map_t uses; /* var -> count */
  bool failed;
} use_ctx_t;

static bool count_use(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  use_ctx_t *u = v->ctx;
  if (def || !tj_rx_is_var(e)) return true;
  intptr_t n = (intptr_t)tj_map_get(&u->uses, e);
  if (!tj_map_put(&u->uses, e, (void *)(n + 1))) u->failed = true;
  return true;
}

/* TVM's RemoveUnusedVars visits VarBindings only: a MatchCast stays even when its var is
 * unused, since it checks the value and may define symbolic vars used later (`n` of
 * R.match_cast(y, R.Tensor((n,))) in a returned R.shape([n * 2])). */
static bool removable(const tj_rx_binding_t *b, bool dataflow) {
  if (b->match_cast) return false;
  if (dataflow) return true;
  const tj_rx_expr_t *v = b->value;
  tj_call_tir_view_t view;
  return v->kind != TJ_RX_CALL || tj_rx_as_call_tir(v, &view);
}

/* One sweep; *out_changed tells whether a binding was dropped. */
static tj_status_t *sweep(tj_arena_t *a, const tj_rx_func_t *f, const tj_rx_func_t **out, bool *out_changed) {
  use_ctx_t u = {.a = a, .uses = TJ_PTR_MAP(a)};
  tj_rx_visitor_t v = {.expr = count_use, .ctx = &u};
  tj_rx_visit_func(&v, f);
  if (u.failed) return OOM();
  const tj_rx_expr_t *body = f->body;
  tj_rx_block_t *blocks = TJ_ARENA_ARRAY(a, tj_rx_block_t, body->seq.n_blocks + 1);
  if (!blocks) return OOM();
  bool changed = false;
  int n_blocks = 0;
  for (int bi = 0; bi < body->seq.n_blocks; bi++) {
    const tj_rx_block_t *blk = &body->seq.blocks[bi];
    tj_rx_binding_t *kept = TJ_ARENA_ARRAY(a, tj_rx_binding_t, blk->n_bindings + 1);
    if (!kept) return OOM();
    int n = 0;
    for (int i = 0; i < blk->n_bindings; i++) {
      const tj_rx_binding_t *b = &blk->bindings[i];
      if (!tj_map_get(&u.uses, b->var) && removable(b, blk->is_dataflow))
        changed = true;
      else
        kept[n++] = *b;
    }
    /* a block left empty goes, as TVM's ExprMutator drops empty blocks */
    if (n) blocks[n_blocks++] = (tj_rx_block_t){blk->is_dataflow, n, kept};
  }
  *out_changed = changed;
  *out = f;
  if (!changed) return NULL;
  tj_rx_expr_t *seq = tj_rx_expr_copy(a, body);
  tj_rx_func_t *nf = TJ_ARENA_NEW(a, tj_rx_func_t);
  if (!seq || !nf) return OOM();
  seq->seq.blocks = blocks;
  seq->seq.n_blocks = n_blocks;
  *nf = *f;
  nf->body = seq;
  *out = nf;
  return NULL;
}

static tj_status_t *remove_unused_bindings(tj_arena_t *a, const tj_rx_func_t *f, const tj_rx_func_t **out) {
  *out = f;
  if (!f->body || f->body->kind != TJ_RX_SEQ) return NULL;
  bool changed = true;
  while (changed) TJ_RETURN_IF_ERROR(sweep(a, *out, out, &changed));
  return NULL;
}

tj_status_t *tj_dead_code_elimination(const tj_pass_context_t *ctx, const tj_module_t *in,
                                      const tj_module_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_module_t *m;
  TJ_RETURN_IF_ERROR(remove_unreachable(a, in, &m));
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, m->n_funcs + 1);
  if (!funcs) return OOM();
  for (int i = 0; i < m->n_funcs; i++) {
    funcs[i] = m->funcs[i];
    if (!funcs[i].is_prim) TJ_RETURN_IF_ERROR(remove_unused_bindings(a, m->funcs[i].relax, &funcs[i].relax));
  }
  tj_module_t *nm = tj_module_new(a, m->n_funcs, funcs, m->attrs);
  if (!nm) return OOM();
  nm->global_infos = m->global_infos;
  return remove_unreachable(a, nm, out);
}
