/* TIR: expressions, statements, buffers and PrimFuncs (docs/semantics.md §7).
 *
 * Nodes are immutable once built and live in the arena of the compile context that
 * made them. Variables (TJ_TIR_VAR) and buffers have identity: two uses of the same
 * variable point to the same node; structural equality maps bound variables by
 * position, not by name. Build nodes only through the tj_tir_* constructors, which
 * copy arrays into the arena and return NULL when the arena is out of memory. */
#ifndef TJ_IR_TIR_H
#define TJ_IR_TIR_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/attrs.h"
#include "support/arena.h"
#include "support/dtype.h"

typedef struct tj_tir_expr tj_tir_expr_t;
typedef struct tj_tir_stmt tj_tir_stmt_t;
typedef struct tj_buffer tj_buffer_t;
typedef struct tj_block tj_block_t;
typedef struct tj_prim_func tj_prim_func_t;

typedef enum tj_tir_expr_kind {
  TJ_TIR_INT_IMM,    /* int and bool literals (value in int_imm) */
  TJ_TIR_FLOAT_IMM,
  TJ_TIR_STRING_IMM,
  TJ_TIR_VAR,        /* also size vars of symbolic shapes and handle params */
  /* binary arithmetic: operands a, b of the same dtype */
  TJ_TIR_ADD, TJ_TIR_SUB, TJ_TIR_MUL, TJ_TIR_DIV, TJ_TIR_MOD,
  TJ_TIR_FLOOR_DIV, TJ_TIR_FLOOR_MOD, TJ_TIR_MIN, TJ_TIR_MAX,
  /* comparisons (dtype bool) */
  TJ_TIR_EQ, TJ_TIR_NE, TJ_TIR_LT, TJ_TIR_LE, TJ_TIR_GT, TJ_TIR_GE,
  /* logic (dtype bool) */
  TJ_TIR_AND, TJ_TIR_OR, TJ_TIR_NOT,
  TJ_TIR_CAST,        /* unary.operand converted to dtype */
  TJ_TIR_SELECT,      /* evaluates both branches */
  TJ_TIR_BUFFER_LOAD,
  TJ_TIR_LET,         /* let var = value in body */
  TJ_TIR_CALL,        /* intrinsic: "tir.if_then_else", "tir.exp", "tir.sqrt", "tir.rsqrt", ... */
  TJ_TIR_RAMP,        /* vector: base, base+stride, ... (lanes in dtype) */
  TJ_TIR_BROADCAST,   /* vector: value repeated (lanes in dtype) */
  TJ_TIR_EXPR_KIND_COUNT
} tj_tir_expr_kind_t;

struct tj_tir_expr {
  tj_tir_expr_kind_t kind;
  tj_dtype_t dtype;
  union {
    int64_t int_imm;
    double float_imm;
    const char *string_imm;
    struct {
      const char *name;  /* name hint only: identity is the node pointer */
    } var;
    struct {
      const tj_tir_expr_t *a, *b;
    } binary;
    struct {
      const tj_tir_expr_t *operand;  /* NOT, CAST */
    } unary;
    struct {
      const tj_tir_expr_t *cond, *true_value, *false_value;
    } select;
    struct {
      const tj_buffer_t *buffer;
      int n_indices;
      const tj_tir_expr_t *const *indices;
    } load;
    struct {
      const tj_tir_expr_t *var, *value, *body;
    } let;
    struct {
      const char *op;  /* full name, "tir.exp" */
      int n_args;
      const tj_tir_expr_t *const *args;
    } call;
    struct {
      const tj_tir_expr_t *base, *stride;
    } ramp;
    struct {
      const tj_tir_expr_t *value;
    } broadcast;
  };
};

/* A buffer: typed multi-dimensional view of memory. Identity matters (loads and stores
 * point at the buffer node). `strides` is NULL for a dense row-major buffer. */
struct tj_buffer {
  const char *name;
  tj_dtype_t dtype;
  int ndim;
  const tj_tir_expr_t *const *shape;
  const tj_tir_expr_t *const *strides;   /* NULL or ndim entries */
  const tj_tir_expr_t *elem_offset;      /* NULL = 0 */
  const char *scope;                     /* "global" unless stated */
  int n_axis_separators;
  const int64_t *axis_separators;
  const tj_tir_expr_t *data;             /* the handle var; created by the constructor */
};

typedef struct tj_range {
  const tj_tir_expr_t *min, *extent;
} tj_range_t;

typedef struct tj_buffer_region {
  const tj_buffer_t *buffer;
  int ndim;
  const tj_range_t *ranges;  /* a point index i is {i, 1} */
} tj_buffer_region_t;

typedef enum tj_iter_kind { TJ_ITER_SPATIAL = 0, TJ_ITER_REDUCE = 1 } tj_iter_kind_t;

typedef struct tj_iter_var {
  const tj_tir_expr_t *var;
  tj_range_t dom;
  tj_iter_kind_t kind;
} tj_iter_var_t;

typedef struct tj_match_buffer {
  const tj_buffer_t *buffer;
  tj_buffer_region_t source;
} tj_match_buffer_t;

struct tj_block {
  const char *name;  /* "" for an anonymous T.block() */
  int n_iter_vars;
  const tj_iter_var_t *iter_vars;
  int n_reads, n_writes;
  const tj_buffer_region_t *reads, *writes;
  int n_alloc_buffers;
  const tj_buffer_t *const *alloc_buffers;
  int n_match_buffers;
  const tj_match_buffer_t *match_buffers;
  const tj_tir_stmt_t *init;  /* NULL when there is no T.init() */
  const tj_tir_stmt_t *body;
  const tj_attrs_t *annotations;  /* T.block_attr; NULL = none */
};

typedef enum tj_for_kind {
  TJ_FOR_SERIAL = 0,
  TJ_FOR_PARALLEL,
  TJ_FOR_VECTORIZED,
  TJ_FOR_UNROLLED,
  TJ_FOR_THREAD_BINDING,
} tj_for_kind_t;

typedef enum tj_tir_stmt_kind {
  TJ_TIR_FOR,
  TJ_TIR_BLOCK_REALIZE,
  TJ_TIR_BUFFER_STORE,
  TJ_TIR_LET_STMT,   /* typed let: var bound for the rest of the enclosing list (body) */
  TJ_TIR_IF,
  TJ_TIR_SEQ,
  TJ_TIR_EVALUATE,
  TJ_TIR_ALLOCATE,   /* lowered form: buffer allocated for body (made by lowering, not parsed) */
  TJ_TIR_STMT_KIND_COUNT
} tj_tir_stmt_kind_t;

struct tj_tir_stmt {
  tj_tir_stmt_kind_t kind;
  union {
    struct {
      const tj_tir_expr_t *var;
      const tj_tir_expr_t *min, *extent;
      tj_for_kind_t kind;
      const tj_tir_stmt_t *body;
      const tj_attrs_t *annotations;  /* NULL = none */
    } loop;
    struct {
      int n_iter_values;
      const tj_tir_expr_t *const *iter_values;  /* one per block iter var */
      const tj_tir_expr_t *predicate;           /* T.bool(True) unless T.where */
      const tj_block_t *block;
    } realize;
    struct {
      const tj_buffer_t *buffer;
      int n_indices;
      const tj_tir_expr_t *const *indices;
      const tj_tir_expr_t *value;
    } store;
    struct {
      const tj_tir_expr_t *var, *value;
      const tj_tir_stmt_t *body;
    } let;
    struct {
      const tj_tir_expr_t *cond;
      const tj_tir_stmt_t *then_stmt, *else_stmt;  /* else may be NULL */
    } if_;
    struct {
      int n;
      const tj_tir_stmt_t *const *stmts;
    } seq;
    struct {
      const tj_tir_expr_t *value;
    } evaluate;
    struct {
      const tj_buffer_t *buffer;
      const tj_tir_stmt_t *body;
    } allocate;
  };
};

struct tj_prim_func {
  int n_params;
  const tj_tir_expr_t *const *params;     /* vars: handle for buffers, else scalar */
  const tj_buffer_t *const *buffer_map;   /* parallel to params; NULL for scalars */
  const tj_attrs_t *attrs;                /* NULL = none; global_symbol present iff public */
  const tj_tir_stmt_t *body;
};

/* ---- constructors (arena-allocated; NULL on out of memory) ---- */
const tj_tir_expr_t *tj_tir_int(tj_arena_t *a, tj_dtype_t dtype, int64_t value);
const tj_tir_expr_t *tj_tir_i64(tj_arena_t *a, int64_t value);
const tj_tir_expr_t *tj_tir_bool(tj_arena_t *a, bool value);
const tj_tir_expr_t *tj_tir_float(tj_arena_t *a, tj_dtype_t dtype, double value);
const tj_tir_expr_t *tj_tir_string(tj_arena_t *a, const char *s);
const tj_tir_expr_t *tj_tir_var(tj_arena_t *a, const char *name, tj_dtype_t dtype);
/* Binary nodes: for comparisons and logic the result dtype is bool, otherwise a's dtype. */
const tj_tir_expr_t *tj_tir_binary(tj_arena_t *a, tj_tir_expr_kind_t kind, const tj_tir_expr_t *x,
                                   const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_tir_not(tj_arena_t *a, const tj_tir_expr_t *x);
const tj_tir_expr_t *tj_tir_cast(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *x);
const tj_tir_expr_t *tj_tir_select(tj_arena_t *a, const tj_tir_expr_t *c, const tj_tir_expr_t *t,
                                   const tj_tir_expr_t *f);
const tj_tir_expr_t *tj_tir_load(tj_arena_t *a, const tj_buffer_t *buffer, int n,
                                 const tj_tir_expr_t *const *indices);
const tj_tir_expr_t *tj_tir_let(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *value,
                                const tj_tir_expr_t *body);
const tj_tir_expr_t *tj_tir_call(tj_arena_t *a, tj_dtype_t dtype, const char *op, int n,
                                 const tj_tir_expr_t *const *args);
const tj_tir_expr_t *tj_tir_ramp(tj_arena_t *a, const tj_tir_expr_t *base, const tj_tir_expr_t *stride,
                                 int lanes);
const tj_tir_expr_t *tj_tir_broadcast(tj_arena_t *a, const tj_tir_expr_t *value, int lanes);

/* Buffer with a fresh data var named after it; shape copied; strides may be NULL. */
const tj_buffer_t *tj_buffer_new(tj_arena_t *a, const char *name, tj_dtype_t dtype, int ndim,
                                 const tj_tir_expr_t *const *shape, const tj_tir_expr_t *const *strides);
/* Copy of `b` with some fields replaced (pass the old value to keep one); new identity. */
const tj_buffer_t *tj_buffer_copy(tj_arena_t *a, const tj_buffer_t *b);

const tj_tir_stmt_t *tj_tir_for(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *min,
                                const tj_tir_expr_t *extent, tj_for_kind_t kind, const tj_tir_stmt_t *body);
const tj_tir_stmt_t *tj_tir_realize(tj_arena_t *a, int n, const tj_tir_expr_t *const *iter_values,
                                    const tj_tir_expr_t *predicate, const tj_block_t *block);
const tj_tir_stmt_t *tj_tir_store(tj_arena_t *a, const tj_buffer_t *buffer, int n,
                                  const tj_tir_expr_t *const *indices, const tj_tir_expr_t *value);
const tj_tir_stmt_t *tj_tir_let_stmt(tj_arena_t *a, const tj_tir_expr_t *var, const tj_tir_expr_t *value,
                                     const tj_tir_stmt_t *body);
const tj_tir_stmt_t *tj_tir_if(tj_arena_t *a, const tj_tir_expr_t *cond, const tj_tir_stmt_t *then_stmt,
                               const tj_tir_stmt_t *else_stmt);
/* A sequence; n == 1 returns the single statement itself. */
const tj_tir_stmt_t *tj_tir_seq(tj_arena_t *a, int n, const tj_tir_stmt_t *const *stmts);
const tj_tir_stmt_t *tj_tir_evaluate(tj_arena_t *a, const tj_tir_expr_t *value);
const tj_tir_stmt_t *tj_tir_allocate(tj_arena_t *a, const tj_buffer_t *buffer, const tj_tir_stmt_t *body);
/* Block: copies every array. */
tj_block_t *tj_block_new(tj_arena_t *a, const char *name);

/* ---- small helpers ---- */
bool tj_tir_is_const_int(const tj_tir_expr_t *e, int64_t *out_value);
/* The value of an integer expression of literals (+ - * / % // min max, casts between
 * ints); false when it holds a var or anything else, divides by zero or overflows. */
bool tj_tir_eval_int(const tj_tir_expr_t *e, int64_t *out_value);
/* The same with vars[i] taking values[i] (n of them); false on any other var. */
bool tj_tir_eval_int_bound(const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *vars, const int64_t *values,
                           int64_t *out_value);
bool tj_tir_kind_is_binary(tj_tir_expr_kind_t kind);    /* ADD..GE, AND, OR */
bool tj_tir_kind_is_compare(tj_tir_expr_kind_t kind);
const char *tj_tir_expr_kind_name(tj_tir_expr_kind_t kind);
/* Product of a buffer's static extents, false if any is symbolic. */
bool tj_buffer_static_size(const tj_buffer_t *b, int64_t *out_elems);
/* The root block of a function body (T.block("root") realize at the top), or NULL. */
const tj_block_t *tj_prim_func_root_block(const tj_prim_func_t *f);

#endif
