/* Relax: struct info, expressions, bindings, blocks and functions.
 *
 * As in TVM, R.call_tir(gv, (a, b), out_sinfo=S) is a TJ_RX_CALL whose callee is the
 * op "relax.call_tir", args = [GlobalVar gv, Tuple(a, b)] (+ a ShapeExpr for tir_vars)
 * and sinfo_args = [S]. Vars have identity (pointer); GlobalVars compare by name.
 * Every expression carries its struct info once normalised (`sinfo`, NULL before). */
#ifndef TJ_IR_RELAX_H
#define TJ_IR_RELAX_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/attrs.h"
#include "ir/tir.h"

typedef struct tj_sinfo tj_sinfo_t;
typedef struct tj_rx_expr tj_rx_expr_t;
typedef struct tj_rx_binding tj_rx_binding_t;
typedef struct tj_rx_block tj_rx_block_t;
typedef struct tj_rx_func tj_rx_func_t;

typedef enum tj_sinfo_kind {
  TJ_SINFO_OBJECT,
  TJ_SINFO_PRIM,
  TJ_SINFO_SHAPE,
  TJ_SINFO_TENSOR,
  TJ_SINFO_TUPLE,
  TJ_SINFO_FUNC,
} tj_sinfo_kind_t;

struct tj_sinfo {
  tj_sinfo_kind_t kind;
  union {
    struct {
      tj_dtype_t dtype;                  /* void = unknown */
      int ndim;                          /* -1 = unknown */
      const tj_tir_expr_t *const *shape; /* NULL = unknown; else ndim int64 exprs */
      const char *vdevice;               /* NULL = none */
    } tensor;
    struct {
      int ndim;                           /* -1 = unknown */
      const tj_tir_expr_t *const *values; /* NULL = unknown */
    } shape;
    struct {
      tj_dtype_t dtype;
      const tj_tir_expr_t *value; /* NULL = unknown */
    } prim;
    struct {
      int n;
      const tj_sinfo_t *const *fields;
    } tuple;
    struct {
      int n_params;                       /* -1 = opaque (unknown params) */
      const tj_sinfo_t *const *params;
      const tj_sinfo_t *ret;
      bool pure;
    } func;
  };
};

typedef enum tj_rx_expr_kind {
  TJ_RX_VAR,
  TJ_RX_DATAFLOW_VAR,
  TJ_RX_GLOBAL_VAR,
  TJ_RX_CONSTANT,
  TJ_RX_TUPLE,
  TJ_RX_TUPLE_GET_ITEM,
  TJ_RX_CALL,
  TJ_RX_OP,           /* an operator reference, e.g. "relax.nn.conv2d" */
  TJ_RX_SHAPE_EXPR,
  TJ_RX_PRIM_VALUE,
  TJ_RX_STRING_IMM,
  TJ_RX_DATA_TYPE_IMM,
  TJ_RX_EXTERN_FUNC,  /* R.call_tir("extern_name", ...) callee */
  TJ_RX_IF,
  TJ_RX_SEQ,
  TJ_RX_FUNCTION,     /* a local (nested) function */
  TJ_RX_EXPR_KIND_COUNT
} tj_rx_expr_kind_t;

struct tj_rx_binding {
  const tj_rx_expr_t *var;     /* VAR or DATAFLOW_VAR */
  const tj_rx_expr_t *value;
  const tj_sinfo_t *match_cast; /* non-NULL for R.match_cast bindings */
};

struct tj_rx_block {
  bool is_dataflow;
  int n_bindings;
  const tj_rx_binding_t *bindings;
};

struct tj_rx_expr {
  tj_rx_expr_kind_t kind;
  const tj_sinfo_t *sinfo;
  union {
    struct {
      const char *name; /* name hint; identity is the pointer. GLOBAL_VAR: the function name */
    } var;
    struct {
      tj_dtype_t dtype;
      int ndim;
      const int64_t *shape;
      const void *data; /* ndim-dim row-major array; NULL when the value was not given */
      size_t nbytes;
    } constant;
    struct {
      int n;
      const tj_rx_expr_t *const *fields;
    } tuple;
    struct {
      const tj_rx_expr_t *tuple;
      int index;
    } get_item;
    struct {
      const tj_rx_expr_t *callee; /* OP, GLOBAL_VAR, VAR, EXTERN_FUNC */
      int n_args;
      const tj_rx_expr_t *const *args;
      const tj_attrs_t *attrs;    /* operator attrs, normalised by the op registry; NULL = none */
      int n_sinfo_args;
      const tj_sinfo_t *const *sinfo_args;
    } call;
    struct {
      const char *name; /* "relax.call_tir", "relax.nn.conv2d", ... */
    } op;
    struct {
      int n;
      const tj_tir_expr_t *const *values;
    } shape_expr;
    struct {
      const tj_tir_expr_t *value;
    } prim_value;
    const char *string_imm;     /* STRING_IMM and EXTERN_FUNC (the global symbol) */
    tj_dtype_t dtype_imm;
    struct {
      const tj_rx_expr_t *cond;
      const tj_rx_expr_t *then_branch, *else_branch; /* SEQ expressions */
    } if_;
    struct {
      int n_blocks;
      const tj_rx_block_t *blocks;
      const tj_rx_expr_t *body;
    } seq;
    const tj_rx_func_t *function;
  };
};

struct tj_rx_func {
  int n_params;
  const tj_rx_expr_t *const *params; /* VARs with sinfo */
  const tj_sinfo_t *ret_sinfo;       /* NULL = deduced from the body */
  const tj_rx_expr_t *body;          /* SEQ */
  const tj_attrs_t *attrs;           /* NULL = none; global_symbol present iff public */
  bool is_pure;                      /* false for @R.function(pure=False) */
};

/* ---- struct info constructors ---- */
const tj_sinfo_t *tj_sinfo_object(tj_arena_t *a);
const tj_sinfo_t *tj_sinfo_prim(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *value);
const tj_sinfo_t *tj_sinfo_shape(tj_arena_t *a, int ndim, const tj_tir_expr_t *const *values);
/* shape may be NULL (unknown) with ndim >= -1; dtype void = unknown. */
const tj_sinfo_t *tj_sinfo_tensor(tj_arena_t *a, tj_dtype_t dtype, int ndim, const tj_tir_expr_t *const *shape);
/* Static shape from int64 values. */
const tj_sinfo_t *tj_sinfo_tensor_static(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *dims);
const tj_sinfo_t *tj_sinfo_tuple(tj_arena_t *a, int n, const tj_sinfo_t *const *fields);
const tj_sinfo_t *tj_sinfo_func(tj_arena_t *a, int n_params, const tj_sinfo_t *const *params,
                                const tj_sinfo_t *ret, bool pure);

/* ---- expression constructors (sinfo left NULL unless stated) ---- */
const tj_rx_expr_t *tj_rx_var(tj_arena_t *a, const char *name, const tj_sinfo_t *sinfo);
const tj_rx_expr_t *tj_rx_dataflow_var(tj_arena_t *a, const char *name, const tj_sinfo_t *sinfo);
const tj_rx_expr_t *tj_rx_global_var(tj_arena_t *a, const char *name);
const tj_rx_expr_t *tj_rx_op(tj_arena_t *a, const char *name);
const tj_rx_expr_t *tj_rx_tuple(tj_arena_t *a, int n, const tj_rx_expr_t *const *fields);
const tj_rx_expr_t *tj_rx_get_item(tj_arena_t *a, const tj_rx_expr_t *tuple, int index);
const tj_rx_expr_t *tj_rx_call(tj_arena_t *a, const tj_rx_expr_t *callee, int n_args,
                               const tj_rx_expr_t *const *args, const tj_attrs_t *attrs, int n_sinfo_args,
                               const tj_sinfo_t *const *sinfo_args);
const tj_rx_expr_t *tj_rx_shape_expr(tj_arena_t *a, int n, const tj_tir_expr_t *const *values);
const tj_rx_expr_t *tj_rx_prim_value(tj_arena_t *a, const tj_tir_expr_t *value);
const tj_rx_expr_t *tj_rx_string_imm(tj_arena_t *a, const char *s);
const tj_rx_expr_t *tj_rx_dtype_imm(tj_arena_t *a, tj_dtype_t dtype);
const tj_rx_expr_t *tj_rx_extern_func(tj_arena_t *a, const char *name);
const tj_rx_expr_t *tj_rx_constant(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *shape,
                                   const void *data, size_t nbytes);
/* Same, but the constant takes `data` (from tj_malloc/tj_calloc, nbytes long) instead of
 * copying it: the arena frees it with the IR. On failure (NULL) data is freed. */
const tj_rx_expr_t *tj_rx_constant_take(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *shape, void *data,
                                        size_t nbytes);
const tj_rx_expr_t *tj_rx_if(tj_arena_t *a, const tj_rx_expr_t *cond, const tj_rx_expr_t *then_branch,
                             const tj_rx_expr_t *else_branch);
const tj_rx_expr_t *tj_rx_seq(tj_arena_t *a, int n_blocks, const tj_rx_block_t *blocks,
                              const tj_rx_expr_t *body);
const tj_rx_expr_t *tj_rx_function_expr(tj_arena_t *a, const tj_rx_func_t *f);
/* Same node with struct info set (a shallow copy: vars keep their identity only
 * through tj_rx_var_with_sinfo, which must be called before the var is used). */
tj_rx_expr_t *tj_rx_expr_copy(tj_arena_t *a, const tj_rx_expr_t *e);
const tj_rx_expr_t *tj_rx_with_sinfo(tj_arena_t *a, const tj_rx_expr_t *e, const tj_sinfo_t *sinfo);

/* The integers of a ShapeExpr, or of a tuple of integer PrimValues (how TVM passes
 * axes/begin/end lists), into out[max]; returns their count, or -1 when e is neither,
 * holds more than max, or a value is not a constant. */
int tj_rx_const_int_values(const tj_rx_expr_t *e, int64_t *out, int max);

/* call_tir helpers. */
bool tj_rx_is_op_call(const tj_rx_expr_t *e, const char *op_name);
/* For R.call_tir: the callee GlobalVar, the argument tuple fields and the out sinfo. */
typedef struct tj_call_tir_view {
  const tj_rx_expr_t *callee;            /* GLOBAL_VAR or EXTERN_FUNC */
  int n_args;
  const tj_rx_expr_t *const *args;
  const tj_sinfo_t *out_sinfo;           /* tensor or tuple of tensors */
  const tj_rx_expr_t *tir_vars;          /* SHAPE_EXPR or NULL */
  const tj_attr_value_t *inplace_indices; /* call_tir_inplace: list of ints; NULL for call_tir */
} tj_call_tir_view_t;
bool tj_rx_as_call_tir(const tj_rx_expr_t *e, tj_call_tir_view_t *out_view);
/* Also R.call_tir_inplace (view.inplace_indices set): for passes that treat both as a
 * call of a module PrimFunc (FuseOps' graph, as TVM's). */
bool tj_rx_as_call_tir_or_inplace(const tj_rx_expr_t *e, tj_call_tir_view_t *out_view);
const tj_rx_expr_t *tj_rx_make_call_tir(tj_arena_t *a, const tj_rx_expr_t *callee, int n_args,
                                        const tj_rx_expr_t *const *args, const tj_sinfo_t *out_sinfo,
                                        const tj_rx_expr_t *tir_vars);

/* ---- helpers ---- */
bool tj_rx_is_var(const tj_rx_expr_t *e); /* VAR or DATAFLOW_VAR */
bool tj_sinfo_is_tensor(const tj_sinfo_t *s);
/* Static dims of a tensor sinfo; false if unknown or symbolic. */
bool tj_sinfo_static_shape(const tj_sinfo_t *s, int *out_ndim, int64_t *out_dims /* >= 8 */);
const char *tj_rx_expr_kind_name(tj_rx_expr_kind_t kind);

#endif
