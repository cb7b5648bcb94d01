/* LegalizeOps internals: the legalizer table keyed by op name (built from
 * ir/op/table.def), and the small "call_te" builder every legalizer uses to write
 * the PrimFunc that TVM's `bb.call_te(topi.<op>, ...)` would create
 * (docs/semantics.md §2).
 *
 * A legalizer receives one Relax op call whose arguments are already legalized and
 * returns its replacement (usually `R.call_tir(gv, args, out_sinfo)`), or sets
 * *out_expr to NULL to keep the call (unknown shapes, unsupported attrs: TVM keeps
 * the call then, and so do we, silently).
 *
 * The builder mirrors TE → create_prim_func(index_dtype="int64"):
 *   - one placeholder buffer per tensor argument, named after the Relax var
 *     (else A, B, C, ...), with int64 shapes; symbolic dims get fresh TIR vars
 *     private to the PrimFunc;
 *   - one block per compute stage, named after the stage, over loops named
 *     `<prefix><i>` with iter vars `v_<loop>`, spatial loops first, then reduce;
 *   - reads/writes filled in the way TVM's block completion does (first-use order,
 *     point regions, a reduction's own output not counted as read);
 *   - intermediate stages become root `T.alloc_buffer`s; attrs {"tir.noalias": True};
 *     private (no global_symbol).
 * The function is then added to the module through tj_lg_add_function, which
 * deduplicates structurally equal PrimFuncs and makes names unique (conv2d,
 * conv2d1, ...) as BlockBuilder.AddFunction does. */
#ifndef TJ_TRANSFORMS_LEGALIZE_LEGALIZE_H
#define TJ_TRANSFORMS_LEGALIZE_LEGALIZE_H

#include <stdbool.h>

#include "ir/module.h"
#include "support/status.h"

#define TJ_LG_MAX_PARAMS 16
#define TJ_LG_MAX_ITERS 12
#define TJ_LG_MAX_SYMS 32
#define TJ_LG_MAX_STMTS 32

/* State of the pass that legalizers may use: the arena and the module being built. */
typedef struct tj_lg_pass tj_lg_pass_t;

struct tj_rx_mutator;

typedef struct tj_lg_pass_view {
  tj_arena_t *arena;
  tj_lg_pass_t *pass;
  /* The block builder: a legalization that needs bindings before its result (TVM's
   * bb.emit / bb.match_cast, as dynamic_strided_slice's shape function) emits them here.
   * NULL where nothing may be emitted. */
  struct tj_rx_mutator *builder;
} tj_lg_ctx_t;

/* A legalizer: *out_expr = replacement, or NULL to keep the call unchanged. */
typedef tj_status_t *(*tj_legalize_fn)(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);

typedef struct tj_legalizer {
  const char *op_name; /* "relax.nn.conv2d" */
  tj_legalize_fn fn;
} tj_legalizer_t;

/* The default table (LegalizeOps' FLegalize registrations); NULL when the op has none. */
tj_legalize_fn tj_legalizer_lookup(const char *op_name);

/* LegalizeOps with TVM's `customize_legalize_map` (entries override the table; an
 * entry with fn == NULL removes the op's legalization) and `skip_ops`. */
typedef struct tj_legalize_options {
  int n_custom;
  const tj_legalizer_t *custom;
  int n_skip;
  const char *const *skip_ops;
  bool only_custom; /* legalize only the `custom` ops (DispatchSortScan reuses the pass) */
} tj_legalize_options_t;

struct tj_pass_context;
tj_status_t *tj_legalize_ops_with(const struct tj_pass_context *ctx, const tj_module_t *in,
                                  const tj_legalize_options_t *options, const tj_module_t **out);

/* Adds a PrimFunc to the module under construction: returns the GlobalVar of a
 * structurally equal function already there, or adds it under a unique name. */
tj_status_t *tj_lg_add_function(tj_lg_ctx_t *ctx, const char *name_hint, const tj_prim_func_t *f,
                                const tj_rx_expr_t **out_gvar);

/* Emits `value` as a binding ahead of the call being legalized (TVM's bb.emit in a
 * legalization; with match_cast non-NULL, bb.match_cast to that struct info, whose
 * symbolic vars the binding defines). *out_var is the bound var. */
tj_status_t *tj_lg_emit(tj_lg_ctx_t *ctx, const tj_rx_expr_t *value, const tj_sinfo_t *match_cast,
                        const tj_rx_expr_t **out_var);

/* ---------------- the call_te builder ---------------- */

typedef struct tj_lg_te {
  tj_lg_ctx_t *ctx;
  tj_arena_t *arena;
  int n_inputs;
  const tj_tir_expr_t *in_params[TJ_LG_MAX_PARAMS];
  const tj_buffer_t *in_buffers[TJ_LG_MAX_PARAMS]; /* NULL for a scalar param */
  const tj_rx_expr_t *call_args[TJ_LG_MAX_PARAMS];
  int n_placeholders; /* tensor placeholders made so far (for A, B, C names) */
  int n_outputs;
  const tj_buffer_t *outputs[TJ_LG_MAX_PARAMS];
  int n_allocs;
  const tj_buffer_t *allocs[TJ_LG_MAX_STMTS];
  int n_stmts;
  const tj_tir_stmt_t *stmts[TJ_LG_MAX_STMTS];
  /* symbolic Relax shape vars -> PrimFunc-private vars */
  int n_syms;
  const tj_tir_expr_t *sym_from[TJ_LG_MAX_SYMS];
  const tj_tir_expr_t *sym_to[TJ_LG_MAX_SYMS];
  bool failed; /* out of memory or too many items: tj_lg_te_finish reports it */
  const char *root_name; /* an extern's block is the root block itself (NULL: "root") */
} tj_lg_te_t;

void tj_lg_te_init(tj_lg_te_t *te, tj_lg_ctx_t *ctx);
/* Placeholder for a tensor argument (must have a known shape and dtype). */
const tj_buffer_t *tj_lg_placeholder(tj_lg_te_t *te, const tj_rx_expr_t *arg);
/* Scalar PrimFunc parameter for an R.Prim argument without a known value. */
const tj_tir_expr_t *tj_lg_prim_param(tj_lg_te_t *te, const tj_rx_expr_t *arg);
/* Maps a Relax shape expression to the PrimFunc's vars (constants pass through). */
const tj_tir_expr_t *tj_lg_shape_expr(tj_lg_te_t *te, const tj_tir_expr_t *e);
/* Output buffer (a parameter after the inputs) and intermediate (root alloc). */
const tj_buffer_t *tj_lg_output(tj_lg_te_t *te, const char *name, tj_dtype_t dtype, int ndim,
                                const tj_tir_expr_t *const *shape);
const tj_buffer_t *tj_lg_alloc(tj_lg_te_t *te, const char *name, tj_dtype_t dtype, int ndim,
                               const tj_tir_expr_t *const *shape);

/* One compute stage = one block in its loop nest. */
typedef struct tj_lg_stage {
  const char *name;
  int n_iters;
  const tj_tir_expr_t *extent[TJ_LG_MAX_ITERS];
  tj_iter_kind_t kind[TJ_LG_MAX_ITERS];
  const tj_tir_expr_t *loop[TJ_LG_MAX_ITERS]; /* loop vars */
  const tj_tir_expr_t *iv[TJ_LG_MAX_ITERS];   /* block iter vars: use these in the body */
  const tj_attrs_t *annotations;              /* T.block_attr, NULL = none */
  /* A 0-d stage's placeholder iterator `vi` has an int64 extent (C++ TOPI computes over
   * an empty shape) instead of the int32 one of Python TE; set after begin. */
  bool int64_scalar_dom;
} tj_lg_stage_t;

/* Declares the stage's iterators, in loop order: `n` extents, their kinds and loop
 * names (the iter var of loop `x` is `v_x`). */
void tj_lg_stage_begin(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n,
                       const tj_tir_expr_t *const *extents, const tj_iter_kind_t *kinds,
                       const char *const *loop_names);
/* Same with loops `<prefix>0, <prefix>1, ...` all spatial. */
void tj_lg_stage_spatial(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n,
                         const tj_tir_expr_t *const *extents, const char *prefix);
/* Emits the block (init may be NULL) wrapped in its loops. */
void tj_lg_stage_end(tj_lg_te_t *te, tj_lg_stage_t *st, const tj_tir_stmt_t *init, const tj_tir_stmt_t *body);

/* Builds the PrimFunc, adds it to the module and returns the call_tir. */
tj_status_t *tj_lg_te_finish(tj_lg_te_t *te, const char *name_hint, const tj_sinfo_t *out_sinfo,
                             const tj_rx_expr_t **out_call);

/* ---------------- te.extern / ir_builder ops (extern.c) ---------------- */
/* Input of an extern: a handle parameter matched to a buffer with offset_factor=1. */
const tj_buffer_t *tj_lg_extern_input(tj_lg_te_t *te, const tj_rx_expr_t *arg);
/* The extern's statements, as the root block named `name` (create_prim_func makes a
 * lone extern block the function's root: no iter vars, no reads/writes listed). */
void tj_lg_extern_block(tj_lg_te_t *te, const char *name, const tj_tir_stmt_t *body);
/* ir_builder's flat index into a buffer of any rank (unravelled as TOPI does). */
const tj_tir_expr_t *tj_lg_flat_load(tj_arena_t *a, const tj_buffer_t *b, const tj_tir_expr_t *idx);
const tj_tir_stmt_t *tj_lg_flat_store(tj_arena_t *a, const tj_buffer_t *b, const tj_tir_expr_t *idx,
                                      const tj_tir_expr_t *value);

/* ---------------- TIR arithmetic with TVM's constant folding ----------------
 * tvm::add/sub/mul/div/cast fold constants as arith::TryConstFold does (int64 and
 * 32/64-bit floats; float16 products are left unfolded) and insert the dtype
 * promotion casts of BinaryOpMatchTypes. These reproduce TOPI's expression shapes. */
const tj_tir_expr_t *tj_lg_add(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_sub(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_mul(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_div(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_floordiv(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_floormod(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
/* Cast that folds literals and is the identity when the dtype already matches. */
const tj_tir_expr_t *tj_lg_cast(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *x);
/* Unfolded binary node (TOPI elementwise bodies, which TVM leaves as written). */
const tj_tir_expr_t *tj_lg_bin(tj_arena_t *a, tj_tir_expr_kind_t kind, const tj_tir_expr_t *x,
                               const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_lg_call1(tj_arena_t *a, const char *op, const tj_tir_expr_t *x);
const tj_tir_expr_t *tj_lg_load(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx);
const tj_tir_stmt_t *tj_lg_store(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx,
                                 const tj_tir_expr_t *value);
/* TVM's Analyzer::Simplify as create_prim_func applies it (canonical_simplify.c):
 * index arithmetic in canonical sum form (`(h - 1) * 3 + 1` is `h * 3 - 2`),
 * comparisons with merged constant offsets; float arithmetic is kept as written.
 * Returns e itself when nothing changes or the expression is too large. */
const tj_tir_expr_t *tj_lg_simplify(tj_arena_t *a, const tj_tir_expr_t *e);
/* topi.reshape's read index: the output index `iv` ravelled over out_shape and
 * unravelled over in_shape into out_idx (unsimplified; the stage simplifies it). */
void tj_lg_reshape_index(tj_arena_t *a, int n_out, const tj_tir_expr_t *const *iv, const tj_tir_expr_t *const *out_shape,
                         int n_in, const tj_tir_expr_t *const *in_shape, const tj_tir_expr_t **out_idx);
/* Zero of a dtype as a literal. */
const tj_tir_expr_t *tj_lg_zero(tj_arena_t *a, tj_dtype_t dtype);
/* T.max_value (highest) or T.min_value of the dtype: where max / min reductions start. */
const tj_tir_expr_t *tj_lg_limit_value(tj_arena_t *a, tj_dtype_t d, bool highest);
const tj_tir_expr_t *tj_lg_const(tj_arena_t *a, tj_dtype_t dtype, double value);

/* ---------------- argument helpers ---------------- */
/* Struct info of an argument (vars, constants, calls, prim values). */
const tj_sinfo_t *tj_lg_arg_sinfo(tj_arena_t *a, const tj_rx_expr_t *arg);
/* True when the arg is a tensor with known dtype and fully known shape. */
bool tj_lg_tensor_known(const tj_sinfo_t *s);
/* A 0-d Relax constant as a TIR literal of its dtype, or NULL. */
const tj_tir_expr_t *tj_lg_scalar_const(tj_arena_t *a, const tj_rx_expr_t *arg);
/* Output struct info of the call: its inferred sinfo when it has one, else `fallback`. */
const tj_sinfo_t *tj_lg_call_sinfo(const tj_rx_expr_t *call, const tj_sinfo_t *fallback);
/* Normalises a possibly negative axis; false when out of range. */
bool tj_lg_axis(int64_t axis, int ndim, int *out_axis);
/* Reads an int list attr (INT or LIST of INT) into out (max n); returns the count or -1. */
int tj_lg_attr_ints(const tj_attrs_t *attrs, const char *key, int64_t *out, int max_n);
/* Reads a dtype attr given as DTYPE or STR; void when unset or "". */
tj_dtype_t tj_lg_attr_dtype(const tj_attrs_t *attrs, const char *key);

/* ---------------- unary elementwise computes ---------------- */
/* The body of a unary compute: out[i] = body(x[i]); out_dtype is the output dtype. */
typedef const tj_tir_expr_t *(*tj_lg_unary_body_fn)(tj_arena_t *a, const tj_tir_expr_t *x, tj_dtype_t out_dtype);
/* TOPI's `te.compute(x.shape, lambda *i: body(x(*i)))`: the PrimFunc `name_hint` with
 * one block `compute` over loops i0, i1, ... writing the output buffer `compute`.
 * Declines (NULL *out_expr) when x's shape or dtype is unknown. */
tj_status_t *tj_lg_unary(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint, tj_dtype_t out_dtype,
                         tj_lg_unary_body_fn body, const tj_rx_expr_t **out_expr);
/* The same with the block (and output buffer) named `block` and loops `<loop_prefix>0,
 * ...`: TOPI's C++ computes are `T_<op>` over ax0, ax1, ... . A NULL body value (an
 * expression TVM cannot build for this dtype) is reported by tj_lg_te_finish as out of
 * memory, so callers check dtypes first. */
tj_status_t *tj_lg_elemwise(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint, const char *block,
                            const char *loop_prefix, tj_dtype_t out_dtype, tj_lg_unary_body_fn body,
                            const tj_rx_expr_t **out_expr);

/* DispatchSortScan's lowerings (scan.c): topi.cumsum / topi.cumprod. */
tj_status_t *tj_dispatch_cumsum(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);
tj_status_t *tj_dispatch_cumprod(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);
/* ... and sort / argsort / topk (sorting.c): tvmjit's TIR where TVM calls tvm.contrib.sort. */
tj_status_t *tj_dispatch_sort(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);
tj_status_t *tj_dispatch_argsort(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);
tj_status_t *tj_dispatch_topk(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);

/* ---------------- the legalizers ----------------
 * `tj_legalize_<ident>` for every LEGALIZE row of ir/op/table.def, defined in
 * transforms/legalize/<family>.c. */
#define TJ_LG_DECLARE_LEGALIZE(ident) \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr);
#define TJ_LG_DECLARE_KEEP(ident)
#define TJ_OP(ident, family, legalize) TJ_LG_DECLARE_##legalize(ident)
#include "ir/op/table.def"
#undef TJ_OP
#undef TJ_LG_DECLARE_LEGALIZE
#undef TJ_LG_DECLARE_KEEP

#endif
