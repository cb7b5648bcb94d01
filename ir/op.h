/* The Relax operator registry: one entry per op with attribute normalisation (defaults
 * filled so that `R.nn.conv2d(x, w)` and the spelled-out form are structurally
 * equal), struct-info inference and the mixed-precision policy. Legalizers live with
 * LegalizeOps in transforms/. Also struct-info inference for every Relax expression.
 *
 * Arguments vs attrs (as in TVM's IR; a call carries `args` (Relax exprs) and `attrs`):
 *
 *   op (script name)      expr args (arg_names)        attrs, in TVM's print order
 *   R.call_tir            func, args[, tir_vars]       none (out_sinfo = sinfo_args[0])
 *   R.nn.conv2d           data, weight                 strides, padding, dilation, groups,
 *                                                      data_layout, kernel_layout,
 *                                                      out_layout, out_dtype
 *   R.nn.relu             data                         none
 *   R.nn.layer_norm       data, gamma, beta            axes, epsilon, center, scale
 *   R.nn.softmax          data                         axis
 *   R.astype              x                            dtype
 *   R.add/subtract/       x1, x2                       none
 *     multiply/divide
 *   R.matmul              x1, x2                       out_dtype
 *   R.permute_dims        x                            axes
 *   R.reshape             x, shape                     none (shape is a ShapeExpr ARG)
 *
 * Script positional arguments beyond the expr args map, in order, onto
 * `positional_attrs` (e.g. `R.astype(x, "float16")` sets dtype); keywords naming an
 * expr arg (`arg_names`) fill that arg, any other keyword is an attr.
 *
 * Canonical attr VALUE types (what normalize_attrs produces, whatever the script
 * spelled; TVM's types, so the sugar and the printed form are structurally equal):
 *   conv2d   strides [int64 x2], padding [int64 x4: top, left, bottom, right],
 *            dilation [int64 x2], groups int32, data_layout/kernel_layout/out_layout
 *            STR, out_dtype DTYPE (void = infer from the inputs).
 *   layer_norm axes [int32 ...], epsilon FLOAT (float64), center/scale bool.
 *   softmax  axis int32.     astype dtype DTYPE.     matmul out_dtype DTYPE.
 *   permute_dims axes [int32 ...] or NONE (= reverse).
 * Attr dictionaries list keys in TVM's print order. Unknown attr names and values of
 * the wrong kind are TJ_ERR_INVALID_ARGUMENT naming the op and the valid names.
 *
 * Mixed-precision policy (docs/tvm-semantics.md §1.2): kAlways conv2d, matmul;
 * kFollow relu, layer_norm, astype, add, subtract, multiply, divide, permute_dims,
 * reshape; kNever call_tir, softmax (and any op without an entry). */
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
  /* Struct info of a call to this op; args already carry sinfo. Messages are phrased
   * "<short op name>: ..." (e.g. "conv2d: data has ..."); callers prefix the binding. */
  tj_status_t *(*infer)(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out_sinfo);
  /* Script keyword names of the expr args, max_args entries ({"data", "weight"}). */
  const char *const *arg_names;
  /* Attr names filled by script positional arguments after the expr args, NULL-ended
   * (NULL pointer = none). astype: {"dtype"}. */
  const char *const *positional_attrs;
  /* kAlways ops: the same call computing with accumulator/output dtype `out_dtype`
   * (TVM's FInferMixedPrecision); the result has no sinfo yet. NULL otherwise. */
  const tj_rx_expr_t *(*mixed_precision_call)(tj_arena_t *arena, const tj_rx_expr_t *call, tj_dtype_t out_dtype);
};

const tj_op_def_t *tj_op_lookup(const char *name);          /* by "relax.add" */
const tj_op_def_t *tj_op_lookup_script(const char *name);   /* by "R.add" / "R.nn.conv2d" */
/* Every registered op, for listings; *out_n receives the count. */
const tj_op_def_t *const *tj_op_all(int *out_n);

/* Mixed-precision policy of a call's callee: -1 when the callee is not an op (no
 * policy applies), kNever for an op without a registered policy. */
int tj_op_call_mp_policy(const tj_rx_expr_t *call);

/* Builds a normalised call of op `def`: attrs normalised from `given` (may be NULL),
 * args canonicalised (reshape: a tuple of int PrimValues becomes a ShapeExpr and -1
 * is replaced by the inferred extent, as TVM's constructor does), argument count
 * checked, and struct info inferred and set. Args must carry sinfo. The helper the
 * parser uses for `R.<op>(...)`; call_tir is built with tj_rx_make_call_tir. */
tj_status_t *tj_op_make_call(const tj_infer_ctx_t *ctx, const tj_op_def_t *def, int n_args,
                             const tj_rx_expr_t *const *args, const tj_attrs_t *given,
                             const tj_rx_expr_t **out_call);

/* Struct info of a call to an op (through the registry; call_tir gives out_sinfo). */
tj_status_t *tj_op_infer_call(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out_sinfo);

/* Struct info of any Relax expression whose sub-expressions already carry sinfo:
 * vars (their own), tuples, get-item, calls to ops (via the registry), to GlobalVars
 * (the callee's return sinfo), call_tir (out_sinfo), constants, shape and prim values. */
tj_status_t *tj_rx_infer_sinfo(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *e, const tj_sinfo_t **out_sinfo);

/* Function struct info from a Relax function's params and return annotation. */
const tj_sinfo_t *tj_rx_func_sinfo(tj_arena_t *arena, const tj_rx_func_t *f);

/* Shape arithmetic used by inference (int64 TIR exprs): a light canonical simplifier
 * for sums of terms with constant coefficients (h + 2 - 3 + 1 -> h; x * 1 -> x;
 * (2*h) // 2 -> h), and a three-way comparison of two extents. */
const tj_tir_expr_t *tj_op_simplify_dim(tj_arena_t *arena, const tj_tir_expr_t *e);
typedef enum tj_dim_cmp { TJ_DIM_EQUAL, TJ_DIM_DIFFERENT, TJ_DIM_UNKNOWN } tj_dim_cmp_t;
tj_dim_cmp_t tj_op_compare_dims(const tj_tir_expr_t *a, const tj_tir_expr_t *b);

#endif
