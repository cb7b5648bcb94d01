/* The generic walk and the generic rewrite of TIR, and the walk of Relax.
 *
 * Passes override only the node kinds they care about: a hook returns NULL (mutator)
 * or true (visitor) to get the default behaviour for that node. The default mutator
 * rebuilds a node only when a child changed, so unchanged subtrees stay shared. */
#ifndef TJ_IR_VISIT_H
#define TJ_IR_VISIT_H

#include <stdbool.h>

#include "ir/relax.h"
#include "ir/tir.h"
#include "support/status.h"

/* ---------- TIR visitor ---------- */
typedef struct tj_tir_visitor tj_tir_visitor_t;
struct tj_tir_visitor {
  /* Return false to skip the node's children. Either hook may be NULL. */
  bool (*expr)(tj_tir_visitor_t *v, const tj_tir_expr_t *e);
  bool (*stmt)(tj_tir_visitor_t *v, const tj_tir_stmt_t *s);
  /* Called for each block before its contents (reads/writes regions, init, body). */
  bool (*block)(tj_tir_visitor_t *v, const tj_block_t *b);
  void *ctx;
};
void tj_tir_visit_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e);
void tj_tir_visit_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s);

/* ---------- TIR mutator ---------- */
typedef struct tj_tir_mutator tj_tir_mutator_t;
struct tj_tir_mutator {
  tj_arena_t *arena;
  /* Return a replacement, or NULL for the default (rebuild from mutated children). */
  const tj_tir_expr_t *(*expr)(tj_tir_mutator_t *m, const tj_tir_expr_t *e);
  const tj_tir_stmt_t *(*stmt)(tj_tir_mutator_t *m, const tj_tir_stmt_t *s);
  /* Maps every buffer reference (loads, stores, regions, allocs, match buffers);
   * NULL hook or NULL result = keep. */
  const tj_buffer_t *(*buffer)(tj_tir_mutator_t *m, const tj_buffer_t *b);
  /* Maps every variable use and definition; NULL hook or NULL result = keep. */
  const tj_tir_expr_t *(*var)(tj_tir_mutator_t *m, const tj_tir_expr_t *var);
  void *ctx;
  bool failed; /* set when an allocation failed; results are then unusable */
};
const tj_tir_expr_t *tj_tir_mutate_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e);
const tj_tir_stmt_t *tj_tir_mutate_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s);
/* The defaults, for hooks that want to post-process: mutate children, rebuild if changed. */
const tj_tir_expr_t *tj_tir_mutate_expr_children(tj_tir_mutator_t *m, const tj_tir_expr_t *e);
const tj_tir_stmt_t *tj_tir_mutate_stmt_children(tj_tir_mutator_t *m, const tj_tir_stmt_t *s);
const tj_block_t *tj_tir_mutate_block(tj_tir_mutator_t *m, const tj_block_t *b);
const tj_buffer_t *tj_tir_mutate_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b);

/* Runs m over f's body, for passes that rewrite one PrimFunc: *out is f when nothing
 * changed, else a copy with the new body. An error a hook left in *hook_error (may be
 * NULL) wins; a failed mutation is "<pass>: '<func_name>': out of memory". */
tj_status_t *tj_tir_mutate_prim_func_body(tj_tir_mutator_t *m, const tj_prim_func_t *f, tj_status_t *const *hook_error,
                                          const char *pass, const char *func_name, const tj_prim_func_t **out);

/* Whether a statement holds a block (T.block) outside of expressions. */
bool tj_tir_stmt_contains_block(const tj_tir_stmt_t *s);
/* True when `var` (a TIR var node) occurs in e. */
bool tj_tir_expr_uses_var(const tj_tir_expr_t *e, const tj_tir_expr_t *var);

/* Substitute variables: every use of vars[i] becomes values[i]. */
const tj_tir_expr_t *tj_tir_substitute_expr(tj_arena_t *a, const tj_tir_expr_t *e, int n,
                                            const tj_tir_expr_t *const *vars, const tj_tir_expr_t *const *values);
const tj_tir_stmt_t *tj_tir_substitute_stmt(tj_arena_t *a, const tj_tir_stmt_t *s, int n,
                                            const tj_tir_expr_t *const *vars, const tj_tir_expr_t *const *values);

/* ---------- Relax visitor ---------- */
typedef struct tj_rx_visitor tj_rx_visitor_t;
struct tj_rx_visitor {
  /* Return false to skip children. Called for every expression, including binding
   * vars at their definition (def = true) and at each use (def = false). */
  bool (*expr)(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def);
  void (*binding)(tj_rx_visitor_t *v, const tj_rx_binding_t *b, bool dataflow);
  void *ctx;
};
void tj_rx_visit_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e);
void tj_rx_visit_func(tj_rx_visitor_t *v, const tj_rx_func_t *f);

#endif
