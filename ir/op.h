/* The Relax operator registry: one entry per op with attribute normalisation (defaults
 * filled so that `R.nn.conv2d(x, w)` and the spelled-out form are structurally
 * equal), struct-info inference and the mixed-precision policy. Also struct-info
 * inference for every Relax expression.
 *
 * Where an operator lives (an operator is one row and two files):
 *   ir/op/table.def                   one row per op: TJ_OP(ident, family, legalize)
 *   ir/op/<family>.c                  its tj_op_def_t `tj_op_<ident>` (this header)
 *   transforms/legalize/<family>.c    its TIR, `tj_legalize_<ident>` (legalize.h)
 * Families follow TVM's src/relax/op files: call, unary, binary, datatype,
 * linear_algebra, manipulate, nn, convolution. ir/op/common.h has the helpers the
 * families share (attr readers, broadcasting, messages).
 *
 * Arguments vs attrs (as in TVM's IR; a call carries `args` (Relax exprs) and `attrs`):
 * script positional arguments beyond the expr args map, in order, onto
 * `positional_attrs` (e.g. `R.astype(x, "float16")` sets dtype); keywords naming an
 * expr arg (`arg_names`) fill that arg, any other keyword is an attr.
 *
 * normalize_attrs produces canonical attr VALUE types (TVM's, whatever the script
 * spelled, so that the sugar and the printed form are structurally equal) with keys in
 * TVM's print order; each op documents its own at its definition. Unknown attr names
 * and values of the wrong kind are TJ_ERR_INVALID_ARGUMENT naming the op and the
 * valid names.
 *
 * Mixed-precision policy (docs/semantics.md §1.2): each def's mp_policy; an op
 * without an entry, or an unknown op, is kNever. */
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
  /* Rewrites the expr args (n_args of them, count already checked, leaves carrying
   * sinfo) before inference, as TVM's op constructor does; NULL: args as given.
   * reshape: the new shape becomes a ShapeExpr with -1 resolved. */
  tj_status_t *(*canonicalize_args)(const tj_infer_ctx_t *ctx, int n_args, const tj_rx_expr_t **args);
  /* Fills the expr args the script left out and converts script values to TVM's arg
   * kinds, as TVM's Python constructor does (alloc_tensor: storage_scope defaults to
   * "global", a dtype string becomes a DataTypeImm). `args` has max_args slots; a NULL
   * slot below *n_args was not given. NULL: every arg must be given, as written. */
  tj_status_t *(*complete_args)(const tj_infer_ctx_t *ctx, int *n_args, const tj_rx_expr_t **args);
  /* For `tvmjit ops` and the README table: the dtypes the op accepts ("float", "int",
   * "any -> bool", ...) and a note on semantics users should know; NULL = not stated. */
  const char *dtypes;
  const char *notes;
};

/* Every op of ir/op/table.def: `tj_op_<ident>` (tj_op_astype, tj_op_conv2d, ...). */
#define TJ_OP(ident, family, legalize) extern const tj_op_def_t tj_op_##ident;
#include "ir/op/table.def"
#undef TJ_OP

const tj_op_def_t *tj_op_lookup(const char *name);          /* by "relax.add" */
const tj_op_def_t *tj_op_lookup_script(const char *name);   /* by "R.add" / "R.nn.conv2d" */
/* Every registered op, for listings; *out_n receives the count. */
const tj_op_def_t *const *tj_op_all(int *out_n);
/* The registered script name closest to `script_name` ("R.nn.rleu" -> "R.nn.relu"),
 * for "did you mean"; NULL when none is close (edit distance above a third of the name). */
const char *tj_op_suggest(const char *script_name);
/* The op's family in ir/op/table.def ("nn", "binary", ...); NULL when not registered. */
const char *tj_op_family(const tj_op_def_t *def);

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
/* The same call without its struct info (TVM's op constructors; the normalizer infers
 * later): for a call whose binding is annotated, which TVM's parser never infers. */
tj_status_t *tj_op_build_call(const tj_infer_ctx_t *ctx, const tj_op_def_t *def, int n_args,
                              const tj_rx_expr_t *const *args, const tj_attrs_t *given, const tj_rx_expr_t **out_call);

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
