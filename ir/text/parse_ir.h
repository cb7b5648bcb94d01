/* Internal to the TVMScript reader: evaluation of the syntax tree into TIR and Relax IR
 * (ir/parse.c module level, ir/parse_tir.c, ir/parse_relax.c). Not a public interface.
 *
 * As in TVM's parser, every expression evaluates to a value that may still be a plain
 * Python literal (an untyped int or float that takes its dtype from the other operand),
 * a TIR expression, a buffer, a Relax expression, a struct info, or a sequence. */
#ifndef TJ_IR_PARSE_IR_H
#define TJ_IR_PARSE_IR_H

#include "ir/module.h"
#include "ir/text/parse_ast.h"

typedef enum tj_val_kind {
  V_NONE,
  V_INT,    /* Python int literal (i) */
  V_FLOAT,  /* Python float literal (f) */
  V_BOOL,   /* Python bool literal (i) */
  V_STR,    /* s */
  V_PRIM,   /* TIR expression (prim) */
  V_BUFFER, /* buf */
  V_SEQ,    /* tuple (is_tuple) or list of values */
  V_DICT,   /* keys items[2k], values items[2k+1] */
  V_RX,     /* Relax expression (rx) */
  V_SINFO,  /* struct info (sinfo) */
  V_MODULE, /* the module class (`cls`, `Module`) */
  V_REGION, /* buffer region (region) from a sliced subscript */
  V_FUNC,   /* a T.* / R.* / I.* name to be called (s = dotted name) */
} tj_val_kind_t;

typedef struct tj_val tj_val_t;
struct tj_val {
  tj_val_kind_t kind;
  tj_src_pos_t pos;
  int64_t i;
  double f;
  const char *s;
  const tj_tir_expr_t *prim;
  const tj_buffer_t *buf;
  const tj_buffer_region_t *region;
  int n;
  const tj_val_t *items;
  bool is_tuple;
  const tj_rx_expr_t *rx;
  const tj_sinfo_t *sinfo;
};

/* A module function as declared before any body is read. */
typedef struct tj_pfunc {
  const char *name;
  const tj_py_t *def;
  bool is_prim;
  const tj_sinfo_t *decl_sinfo;   /* Relax: params + declared return (Object when absent) */
  const tj_rx_func_t *relax;      /* set once parsed */
  const tj_prim_func_t *prim;     /* set once parsed */
} tj_pfunc_t;

typedef struct tj_sym {
  const char *name;
  tj_val_t val;
} tj_sym_t;

/* An open T.block (or the function level for root allocations). */
typedef struct tj_tblock {
  tj_ptrvec_t allocs;  /* const tj_buffer_t* */
  tj_ptrvec_t iter_vars;  /* tj_iter_var_t* */
  tj_ptrvec_t iter_values;
  bool has_reads, has_writes;
  tj_ptrvec_t reads, writes; /* tj_buffer_region_t* */
  const tj_tir_expr_t *predicate;
  const tj_attrs_t *annotations;
  const tj_tir_stmt_t *init;
  tj_ptrvec_t match_buffers;
  struct tj_tblock *parent;
} tj_tblock_t;

/* An open For loop (T.axis.remap looks up the domain of its loop vars). */
typedef struct tj_tloop {
  const tj_tir_expr_t *var, *min, *extent;
  struct tj_tloop *parent;
} tj_tloop_t;

typedef struct tj_pctx {
  tj_parse_src_t *src;
  tj_arena_t *arena; /* IR nodes */
  const char *class_name;
  int n_funcs;
  tj_pfunc_t *funcs;
  tj_ptrvec_t syms; /* tj_sym_t*, innermost last */
  /* TIR function state */
  tj_tblock_t *block;
  tj_tloop_t *loop;
  bool in_prim_func;
  int depth;
  /* The last block written directly at the function level with no iterators: when it
   * turns out to be the whole body it is the root, whose regions TVM never infers. */
  const tj_tir_stmt_t *root_candidate;
  bool root_candidate_detected_reads, root_candidate_detected_writes;
  /* Relax function state */
  struct tj_rxfn *rxfn;
} tj_pctx_t;

/* ---- shared helpers (ir/parse.c) ---- */
void tj_pctx_bind(tj_pctx_t *c, const char *name, tj_val_t v);
const tj_val_t *tj_pctx_lookup(tj_pctx_t *c, const char *name);
int tj_pctx_scope_open(tj_pctx_t *c);
void tj_pctx_scope_close(tj_pctx_t *c, int mark);
tj_pfunc_t *tj_pctx_find_func(tj_pctx_t *c, const char *name);
void tj_pctx_enter(tj_pctx_t *c, tj_src_pos_t pos);
void tj_pctx_leave(tj_pctx_t *c);
tj_val_t tj_val_make(tj_val_kind_t kind, tj_src_pos_t pos);
const char *tj_val_kind_name(tj_val_kind_t kind);
/* IR-arena string / unwinding allocation helpers. */
const char *tj_pctx_str(tj_pctx_t *c, const char *s);
#define TJ_CHK(c, expr) ((__typeof__(expr))tj_parse_check((c)->src, (expr)))

/* Keyword argument of a call node, or NULL. */
const tj_py_t *tj_py_kwarg(const tj_py_t *call, const char *name);
/* Fails when the call has keyword arguments other than those listed (NULL-terminated). */
void tj_py_check_kwargs(tj_pctx_t *c, const tj_py_t *call, const char *const *allowed);
/* Fails unless the call has between lo and hi positional arguments. */
void tj_py_check_nargs(tj_pctx_t *c, const tj_py_t *call, const char *fname, int lo, int hi);

/* Attribute value of an evaluated value (dict/list/int/str...). */
tj_attr_value_t tj_val_to_attr(tj_pctx_t *c, const tj_val_t *v);
const tj_attrs_t *tj_val_to_attrs(tj_pctx_t *c, const tj_val_t *dict);

/* ---- TIR (ir/parse_tir.c) ---- */
/* Evaluates an expression in TIR context (also used for symbolic shapes in Relax). */
tj_val_t tj_tir_eval(tj_pctx_t *c, const tj_py_t *e);
/* Converts a value to a TIR expression (literals get their default dtype). */
const tj_tir_expr_t *tj_tir_as_expr(tj_pctx_t *c, const tj_val_t *v);
/* Converts a literal to `dtype` (TVM's const), keeps an expression as is. */
const tj_tir_expr_t *tj_tir_as_typed(tj_pctx_t *c, const tj_val_t *v, tj_dtype_t dtype);
/* A dtype from a string value or a T.<dtype> reference. */
tj_dtype_t tj_val_dtype(tj_pctx_t *c, const tj_val_t *v);
/* "inf", "-inf", "nan" (how TVM prints non-finite floats) as a double; false otherwise. */
bool tj_parse_special_float(const char *s, double *out);
/* Binary operator with TVM's type matching and constant folding. */
const tj_tir_expr_t *tj_tir_binop(tj_pctx_t *c, tj_src_pos_t pos, tj_tir_expr_kind_t kind, tj_val_t a, tj_val_t b);
/* Parses one @T.prim_func definition. */
const tj_prim_func_t *tj_parse_prim_func(tj_pctx_t *c, const tj_py_t *def, bool is_private);

/* ---- Relax (ir/parse_relax.c) ---- */
/* Declares a Relax function's signature (params and return struct info). */
const tj_sinfo_t *tj_parse_relax_decl(tj_pctx_t *c, const tj_py_t *def);
const tj_rx_func_t *tj_parse_relax_func(tj_pctx_t *c, const tj_py_t *def, bool is_private, bool is_pure);

/* Decorator facts: kind ("R.function"/"T.prim_func"/"I.ir_module"), private=, pure=. */
typedef struct tj_deco {
  const char *kind;
  bool is_private;
  bool is_pure;
} tj_deco_t;
bool tj_parse_decorator(tj_pctx_t *c, const tj_py_t *node, tj_deco_t *out);

#endif
