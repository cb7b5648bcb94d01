/* The one Relax rewriter: TVM's ExprMutator and BlockBuilder in one object.
 *
 * tj_rx_mutate_expr walks an expression post-order and rebuilds a node only when a
 * child changed (unchanged subtrees stay shared). Var uses go through the remap table
 * (or the `var` hook); every rebuilt node gets struct info: tuples from their fields,
 * other nodes by inference when `infer` is set, else the old node's. The `post` hook
 * then sees every (possibly rebuilt) node and may replace it, e.g. LegalizeOps turns
 * an op call into a call_tir there.
 *
 * A SeqExpr is rebuilt block by block through the block builder: the `block` hook
 * (default: every binding through the `binding` hook) emits bindings with tj_rx_emit*;
 * the default binding hook mutates the value and re-emits it with tj_rx_reemit, which
 * re-creates the var when the value's struct info changed and remaps its later uses
 * (TVM's ReEmitBinding). tj_rx_normalize lifts nested calls out of call arguments into
 * fresh bindings lv, lv1, ... (TVM's Normalize).
 *
 * Errors: hooks call tj_rx_mutator_fail; after the first error every call returns
 * NULL quickly and `error` holds the status (the caller owns it). */
#ifndef TJ_IR_RX_MUTATOR_H
#define TJ_IR_RX_MUTATOR_H

#include <stdbool.h>

#include "ir/module.h"
#include "ir/op.h"
#include "ir/relax.h"
#include "support/map.h"
#include "support/status.h"
#include "support/vec.h"

typedef struct tj_rx_mutator tj_rx_mutator_t;
typedef TJ_VEC(tj_rx_binding_t) tj_rx_binding_vec_t;

struct tj_rx_mutator {
  tj_arena_t *arena;
  const char *pass_name;        /* prefixes "out of memory" messages */
  const tj_infer_ctx_t *infer;  /* NULL: rebuilt nodes keep the old struct info */
  /* Every node after its children; return the node to use (NULL = error). */
  const tj_rx_expr_t *(*post)(tj_rx_mutator_t *m, const tj_rx_expr_t *e);
  /* A var use; return its replacement (NULL = error). Default: tj_rx_mutator_lookup. */
  const tj_rx_expr_t *(*var)(tj_rx_mutator_t *m, const tj_rx_expr_t *var);
  /* One binding of a block being rebuilt: emit what replaces it. */
  void (*binding)(tj_rx_mutator_t *m, const tj_rx_binding_t *b);
  /* One block: emit its bindings. Default: each through `binding`. */
  void (*block)(tj_rx_mutator_t *m, const tj_rx_block_t *blk);
  void *ctx;
  tj_status_t *error;
  /* State: var remap and the block under construction. */
  tj_map_t remap;
  tj_rx_binding_vec_t out;
  bool dataflow;
  int n_fresh;
};

void tj_rx_mutator_init(tj_rx_mutator_t *m, tj_arena_t *arena, const char *pass_name);
/* Records the first error (later ones are freed); returns NULL for `return fail(...)`. */
void *tj_rx_mutator_fail(tj_rx_mutator_t *m, tj_status_t *status);
void *tj_rx_mutator_oom(tj_rx_mutator_t *m);

const tj_rx_expr_t *tj_rx_mutate_expr(tj_rx_mutator_t *m, const tj_rx_expr_t *e);
/* The default rebuild of e from its mutated children, without the `post` hook. */
const tj_rx_expr_t *tj_rx_mutate_children(tj_rx_mutator_t *m, const tj_rx_expr_t *e);
/* Rewrites the body (params stay unless remapped); f itself when nothing changed. */
const tj_rx_func_t *tj_rx_mutate_func(tj_rx_mutator_t *m, const tj_rx_func_t *f);

/* A pass over every Relax function of a module: for each, a fresh mutator named
 * `pass_name` is given to `setup` (which sets its hooks and resets per-function state
 * in `ctx`), the function is rewritten and, if it changed, replaced in the module.
 * Errors say which function; *out is `in` itself when nothing changed. */
tj_status_t *tj_rx_mutate_module(tj_arena_t *arena, const char *pass_name, const tj_module_t *in,
                                 void (*setup)(tj_rx_mutator_t *m, void *ctx), void *ctx, const tj_module_t **out);

/* ---- var remapping ---- */
bool tj_rx_mutator_remap(tj_rx_mutator_t *m, const tj_rx_expr_t *from, const tj_rx_expr_t *to);
const tj_rx_expr_t *tj_rx_mutator_lookup(const tj_rx_mutator_t *m, const tj_rx_expr_t *var);
/* A var of the current block's kind (dataflow or not) named `name`. */
const tj_rx_expr_t *tj_rx_new_var(tj_rx_mutator_t *m, const char *name, const tj_sinfo_t *sinfo);

/* ---- block builder ---- */
bool tj_rx_emit(tj_rx_mutator_t *m, const tj_rx_expr_t *var, const tj_rx_expr_t *value, const tj_sinfo_t *match_cast);
/* `name = value` with a new var carrying value's struct info; the var, or NULL. */
const tj_rx_expr_t *tj_rx_emit_named(tj_rx_mutator_t *m, const char *name, const tj_rx_expr_t *value);
/* The same with the builder's fresh names lv, lv1, lv2, ... */
const tj_rx_expr_t *tj_rx_emit_fresh(tj_rx_mutator_t *m, const tj_rx_expr_t *value);
/* Emits b's var bound to `value`; the var is re-created (and remapped) when value's
 * struct info differs from the var's, unless b is a match_cast. */
void tj_rx_reemit(tj_rx_mutator_t *m, const tj_rx_binding_t *b, const tj_rx_expr_t *value);
/* Gives e struct info (inferring it if missing) and lifts call and get-item arguments
 * of calls, tuples and get-items into fresh bindings. */
const tj_rx_expr_t *tj_rx_normalize(tj_rx_mutator_t *m, const tj_rx_expr_t *e);
/* e with struct info: its own, else inferred (needs `infer`). */
const tj_rx_expr_t *tj_rx_with_inferred(tj_rx_mutator_t *m, const tj_rx_expr_t *e);
/* The default binding hook: mutate the value, re-emit. */
void tj_rx_mutator_default_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b);
/* Builds one block from `blk` through the `block` hook; NULL on error. */
const tj_rx_block_t *tj_rx_mutate_block(tj_rx_mutator_t *m, const tj_rx_block_t *blk);

#endif
