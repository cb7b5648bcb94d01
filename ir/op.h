/* The Relax operator registry: one entry per op with attribute normalisation (defaults
 * filled so that `R.nn.conv2d(x, w)` and the spelled-out form are structurally
 * equal), struct-info inference and the mixed-precision policy. Legalizers live with
 * LegalizeOps in transforms/. Also struct-info inference for every Relax expression. */
#ifndef TJ_IR_OP_H
#define TJ_IR_OP_H

#include "ir/module.h"
#include "support/status.h"

typedef enum tj_mp_policy {
  TJ_MP_ALWAYS = 0,
  TJ_MP_FOLLOW = 1,
  TJ_MP_NEVER = 2,
} tj_mp_policy_t;

typedef struct tj_op_def tj_op_def_t;

/* Looks up the struct info of a module function by GlobalVar name (for calls). */
typedef const tj_sinfo_t *(*tj_global_sinfo_fn)(void *ctx, const char *name);

typedef struct tj_infer_ctx {
  tj_arena_t *arena;
  tj_global_sinfo_fn global_sinfo; /* may be NULL */
  void *global_ctx;
} tj_infer_ctx_t;

struct tj_op_def {
  const char *name;           /* "relax.nn.conv2d" */
  const char *script_name;    /* "R.nn.conv2d" */
  int min_args, max_args;
  tj_mp_policy_t mp_policy;
  /* Fills default attrs and checks their types; keyword arguments as parsed come in
   * `given`. NULL: the op takes no attrs. */
  tj_status_t *(*normalize_attrs)(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out_attrs);
  /* Struct info of a call to this op; args already carry sinfo. */
  tj_status_t *(*infer)(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out_sinfo);
};

const tj_op_def_t *tj_op_lookup(const char *name);          /* by "relax.add" */
const tj_op_def_t *tj_op_lookup_script(const char *name);   /* by "R.add" / "R.nn.conv2d" */

/* Struct info of any Relax expression whose sub-expressions already carry sinfo:
 * vars (their own), tuples, get-item, calls to ops (via the registry), to GlobalVars
 * (the callee's return sinfo), call_tir (out_sinfo), constants, shape and prim values. */
tj_status_t *tj_rx_infer_sinfo(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out_sinfo);

/* Function struct info from a Relax function's params and return annotation. */
const tj_sinfo_t *tj_rx_func_sinfo(tj_arena_t *arena, const tj_rx_func_t *f);

#endif
