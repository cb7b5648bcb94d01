/* The TVMScript printer: writes what TVM's printer (src/script/printer, at the commit
 * the conformance corpus comes from) writes for the supported subset, so that a tvmjit
 * dump can be held against TVM's and read back by tj_parse_module.
 *
 * The printer walks the IR once, writing into a string buffer. Names come from name
 * hints, made unique among the names live in the current scope by TVM's rule
 * (`x`, `x_1`, `x_2`, ...). Declarations that TVM inserts at function level when a
 * symbolic variable is first met (`n = T.int64()`) or when the first GlobalVar is used
 * (`cls = Module`) are collected while the body is printed and placed where TVM puts
 * them: before the function-level statement that needed them (TIR), or after the
 * function attributes (Relax). */
#include "ir/text/print.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/sinfo.h"
#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "support/alloc.h"
#include "support/map.h"
#include "support/vec.h"

/* ------------------------------------------------------------------------------------ */
/* Printer state                                                                         */

#define INDENT "    "

typedef struct live_name {
  const char *name;
  int level;        /* scope depth that defined it */
  const void *node; /* what it names (NULL: a reserved name) */
} live_name_t;

typedef struct pr {
  tj_strbuf_t *sb; /* where text goes now */
  tj_arena_t *arena;
  bool failed;
  bool standalone; /* printing a fragment: undefined vars print their name hints */

  int level; /* scope depth */
  TJ_VEC(live_name_t) names;
  tj_map_t docs; /* var/buffer/relax var -> its name (or "A.data" for buffer data vars) */

  const tj_module_t *mod;
  const char *module_name;
  bool used_tir, used_relax;

  /* TIR function */
  int fn_level;            /* scope of the current function */
  tj_strbuf_t *tir_decls;  /* pending `n = T.int64()` lines, flushed before the next function-level stmt */
  int fn_indent;
  TJ_VEC(const tj_tir_stmt_t *) loops; /* enclosing loops, for T.axis.remap */

  /* Relax */
  bool relax_ctx;         /* PrimExprs print with Relax's literal style (plain int64) */
  tj_strbuf_t *rx_decls;  /* declarations of the outermost Relax function */
  int rx_fn_level;
  int rx_fn_indent;
  bool cls_printed;
  bool collect_func_vars; /* printing the signature: symbolic dims print as strings */
  tj_map_t func_vars;
  tj_map_t used_vars;       /* Relax vars used after their definition (TVM names void ones only then) */
} pr_t;

static void pr_init(pr_t *p, tj_strbuf_t *sb) {
  memset(p, 0, sizeof *p);
  p->sb = sb;
  p->arena = tj_arena_create();
  if (!p->arena) p->failed = true;
  p->module_name = "Module";
}

static void pr_done(pr_t *p) {
  tj_map_free(&p->docs);
  tj_map_free(&p->func_vars);
  tj_map_free(&p->used_vars);
  tj_vec_free(&p->names);
  tj_vec_free(&p->loops);
  if (p->arena) tj_arena_free(p->arena);
}

static void out(pr_t *p, const char *s) { tj_strbuf_append(p->sb, s); }

static void outf(pr_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(pr_t *p, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof buf) {
    out(p, buf);
    return;
  }
  char *big = tj_malloc((size_t)n + 1);
  if (!big) {
    p->failed = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  out(p, big);
  tj_free(big);
}

static void indent(pr_t *p, int n) {
  for (int i = 0; i < n; i++) out(p, INDENT);
}

static void out_str_literal(pr_t *p, const char *s) {
  out(p, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') outf(p, "\\%c", c);
    else if (c == '\n') out(p, "\\n");
    else if (c == '\t') out(p, "\\t");
    else if (c < 0x20) outf(p, "\\x%02x", c);
    else tj_strbuf_append_n(p->sb, (const char *)s, 1);
  }
  out(p, "\"");
}

/* TVM prints floats with 17 significant digits (C++ stream precision 17). */
static void out_double(pr_t *p, double v) {
  if (isnan(v)) out(p, "\"nan\"");
  else if (isinf(v)) out(p, v > 0 ? "\"inf\"" : "\"-inf\"");
  else outf(p, "%.17g", v);
}

/* A Python float literal: an integral value keeps its ".0" so that it reads back as a
 * float, not an int. */
static void out_float_literal(pr_t *p, double v) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", v);
  out_double(p, v);
  if (isfinite(v) && !strpbrk(buf, ".eE")) out(p, ".0");
}

static const char *dtype_name(tj_dtype_t d, char *buf) { return tj_dtype_str(d, buf); }

/* ---- names ---------------------------------------------------------------------------- */

static bool name_live(const pr_t *p, const char *name) {
  for (int i = 0; i < p->names.n; i++)
    if (strcmp(p->names.items[i].name, name) == 0) return true;
  return false;
}

static int scope_push(pr_t *p) { return ++p->level; }

/* Leaving a scope forgets its names and what they named: a var shared by two functions
 * (a prim_func's `n` that LegalizeOps took from main's signature) is declared again in
 * the next function that meets it, as TVM's printer does per function frame. */
static void scope_pop(pr_t *p, int level) {
  int j = 0;
  for (int i = 0; i < p->names.n; i++) {
    live_name_t *ln = &p->names.items[i];
    if (ln->level < level) p->names.items[j++] = *ln;
    else if (ln->node && tj_map_get(&p->docs, ln->node) == ln->name) tj_map_remove(&p->docs, ln->node);
  }
  p->names.n = j;
  p->level = level - 1;
}

/* TVM's GenerateUniqueName: non-identifier characters become '_', then `_1`, `_2`... */
static const char *unique_name(pr_t *p, const char *hint, const char *dflt) {
  if (!hint || !*hint) hint = dflt;
  char *base = tj_arena_strdup(p->arena, hint);
  if (!base) {
    p->failed = true;
    return dflt;
  }
  for (char *c = base; *c; c++)
    if (*c != '_' && !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) *c = '_';
  const char *name = base;
  for (int i = 1; name_live(p, name); i++) {
    name = tj_arena_printf(p->arena, "%s_%d", base, i);
    if (!name) {
      p->failed = true;
      return base;
    }
  }
  return name;
}

/* Defines node under a fresh unique name in the scope `level`; returns the name. */
static const char *define_at(pr_t *p, const void *node, const char *hint, const char *dflt, int level) {
  const char *name = unique_name(p, hint, dflt);
  if (!tj_vec_push(&p->names, ((live_name_t){name, level, node}))) {
    p->failed = true;
    return name;
  }
  if (node && !tj_map_put(&p->docs, node, (void *)name)) p->failed = true;
  return name;
}

static const char *define(pr_t *p, const void *node, const char *hint, const char *dflt) {
  return define_at(p, node, hint, dflt, p->level);
}

static const char *doc_of(const pr_t *p, const void *node) { return tj_map_get(&p->docs, node); }

/* ------------------------------------------------------------------------------------ */
/* TIR expressions                                                                       */

enum {
  PREC_OR = 3,
  PREC_AND = 4,
  PREC_NOT = 5,
  PREC_CMP = 6,
  PREC_ADD = 11,
  PREC_MUL = 12,
  PREC_ATOM = 15,
};

static void tir_expr(pr_t *p, const tj_tir_expr_t *e);
static void tir_var(pr_t *p, const tj_tir_expr_t *v);
static void buffer_ref(pr_t *p, const tj_buffer_t *b);

static bool is_int_imm(const tj_tir_expr_t *e, int64_t v) {
  return e && e->kind == TJ_TIR_INT_IMM && e->int_imm == v;
}

static bool is_float_imm(const tj_tir_expr_t *e, double v) {
  return e && e->kind == TJ_TIR_FLOAT_IMM && e->float_imm == v;
}

static bool is_const(const tj_tir_expr_t *e) { return e && (e->kind == TJ_TIR_INT_IMM || e->kind == TJ_TIR_FLOAT_IMM); }

static bool is_zero(const tj_tir_expr_t *e) { return is_int_imm(e, 0) || is_float_imm(e, 0); }
static bool is_one(const tj_tir_expr_t *e) { return is_int_imm(e, 1) || is_float_imm(e, 1); }

/* TVM prints `a + b` only when building a + b with the Python operator would give the
 * same node back; where arith's constant folding would fold it away, it prints the
 * explicit `T.Add(a, b)` instead, so that the text reads back to the same tree. */
static bool binary_would_fold(tj_tir_expr_kind_t k, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (is_const(a) && is_const(b) && a->kind == b->kind) return true;
  switch (k) {
    case TJ_TIR_ADD: return is_zero(a) || is_zero(b);
    case TJ_TIR_SUB: return is_zero(b);
    case TJ_TIR_MUL: return is_zero(a) || is_zero(b) || is_one(a) || is_one(b);
    case TJ_TIR_DIV:
    case TJ_TIR_FLOOR_DIV: return is_zero(a) || is_one(b);
    case TJ_TIR_FLOOR_MOD: return is_int_imm(a, 0) || is_int_imm(b, 1);
    case TJ_TIR_AND:
    case TJ_TIR_OR: return (a->kind == TJ_TIR_INT_IMM) || (b->kind == TJ_TIR_INT_IMM);
    default: return false;
  }
}

static const char *binary_op_str(tj_tir_expr_kind_t k) {
  switch (k) {
    case TJ_TIR_ADD: return "+";
    case TJ_TIR_SUB: return "-";
    case TJ_TIR_MUL: return "*";
    case TJ_TIR_DIV: return "/";
    case TJ_TIR_FLOOR_DIV: return "//";
    case TJ_TIR_FLOOR_MOD: return "%";
    case TJ_TIR_EQ: return "==";
    case TJ_TIR_NE: return "!=";
    case TJ_TIR_LT: return "<";
    case TJ_TIR_LE: return "<=";
    case TJ_TIR_GT: return ">";
    case TJ_TIR_GE: return ">=";
    case TJ_TIR_AND: return "and";
    case TJ_TIR_OR: return "or";
    default: return NULL;
  }
}

static const char *binary_func_name(tj_tir_expr_kind_t k) {
  switch (k) {
    case TJ_TIR_ADD: return "T.Add";
    case TJ_TIR_SUB: return "T.Sub";
    case TJ_TIR_MUL: return "T.Mul";
    case TJ_TIR_DIV: return "T.Div";
    case TJ_TIR_MOD: return "T.truncmod";
    case TJ_TIR_FLOOR_DIV: return "T.FloorDiv";
    case TJ_TIR_FLOOR_MOD: return "T.FloorMod";
    case TJ_TIR_MIN: return "T.min";
    case TJ_TIR_MAX: return "T.max";
    case TJ_TIR_EQ: return "T.EQ";
    case TJ_TIR_NE: return "T.NE";
    case TJ_TIR_LT: return "T.LT";
    case TJ_TIR_LE: return "T.LE";
    case TJ_TIR_GT: return "T.GT";
    case TJ_TIR_GE: return "T.GE";
    case TJ_TIR_AND: return "T.And";
    case TJ_TIR_OR: return "T.Or";
    default: return "T.?";
  }
}

/* Infix operator for this node, or NULL when it prints as a call. */
static const char *binary_infix(const tj_tir_expr_t *e) {
  const char *op = binary_op_str(e->kind);
  if (!op || binary_would_fold(e->kind, e->binary.a, e->binary.b)) return NULL;
  /* Integer true division has no Python operator meaning; TVM spells it T.Div. */
  if (e->kind == TJ_TIR_DIV && !tj_dtype_is_float(e->binary.a->dtype)) return NULL;
  return op;
}

static int binary_prec(tj_tir_expr_kind_t k) {
  switch (k) {
    case TJ_TIR_ADD:
    case TJ_TIR_SUB: return PREC_ADD;
    case TJ_TIR_MUL:
    case TJ_TIR_DIV:
    case TJ_TIR_FLOOR_DIV:
    case TJ_TIR_FLOOR_MOD: return PREC_MUL;
    case TJ_TIR_AND: return PREC_AND;
    case TJ_TIR_OR: return PREC_OR;
    default: return PREC_CMP;
  }
}

static int tir_prec(const tj_tir_expr_t *e) {
  if (tj_tir_kind_is_binary(e->kind) && binary_infix(e)) return binary_prec(e->kind);
  if (e->kind == TJ_TIR_NOT && e->unary.operand->kind != TJ_TIR_INT_IMM) return PREC_NOT;
  return PREC_ATOM;
}

static void tir_child(pr_t *p, const tj_tir_expr_t *e, int parent, bool paren_if_equal) {
  int prec = tir_prec(e);
  bool paren = prec < parent || (paren_if_equal && prec == parent);
  if (paren) out(p, "(");
  tir_expr(p, e);
  if (paren) out(p, ")");
}

static void tir_int_literal(pr_t *p, tj_dtype_t dt, int64_t v) {
  char buf[TJ_DTYPE_BUFSIZE];
  if ((!p->relax_ctx && tj_dtype_eq(dt, TJ_I32)) || (p->relax_ctx && tj_dtype_eq(dt, TJ_I64))) {
    outf(p, "%lld", (long long)v);
    return;
  }
  p->used_tir = true;
  if (dt.code == TJ_DT_BOOL && dt.lanes == 1) out(p, v ? "T.bool(True)" : "T.bool(False)");
  else outf(p, "T.%s(%lld)", dtype_name(dt, buf), (long long)v);
}

static void tir_args(pr_t *p, int n, const tj_tir_expr_t *const *args) {
  for (int i = 0; i < n; i++) {
    if (i) out(p, ", ");
    tir_expr(p, args[i]);
  }
}

static void tir_indices(pr_t *p, int n, const tj_tir_expr_t *const *idx) {
  out(p, "[");
  if (n == 0) out(p, "()");
  tir_args(p, n, idx);
  out(p, "]");
}

/* Where TVM prints a call's result dtype as an argument (TScriptDtypePrintLocation):
 * first for the extern-call family and reinterpret, last for tvm_struct_get. */
static int call_dtype_position(const char *op) {
  static const char *const first[] = {"call_extern", "call_pure_extern", "call_llvm_intrin", "call_llvm_pure_intrin",
                                      "reinterpret"};
  for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
    if (strcmp(op, first[i]) == 0) return -1;
  return strcmp(op, "tvm_struct_get") == 0 ? 1 : 0;
}

static void tir_call(pr_t *p, const tj_tir_expr_t *e) {
  char buf[TJ_DTYPE_BUFSIZE];
  const char *op = e->call.op ? e->call.op : "?";
  if (strncmp(op, "tir.", 4) == 0) op += 4;
  if (strcmp(op, "tvm_call_packed") == 0) op = "call_packed"; /* its TVMScript name */
  int dtype_pos = call_dtype_position(op);
  p->used_tir = true;
  outf(p, "T.%s(", op);
  if (dtype_pos < 0) outf(p, "\"%s\"%s", dtype_name(e->dtype, buf), e->call.n_args ? ", " : "");
  tir_args(p, e->call.n_args, e->call.args);
  /* TVM prints the trailing dtype positionally; the keyword form reads back in TVM and here. */
  if (dtype_pos > 0) outf(p, "%sdtype=\"%s\"", e->call.n_args ? ", " : "", dtype_name(e->dtype, buf));
  out(p, ")");
}

static void tir_binary(pr_t *p, const tj_tir_expr_t *e) {
  const char *op = binary_infix(e);
  if (!op) {
    p->used_tir = true;
    outf(p, "%s(", binary_func_name(e->kind));
    tir_expr(p, e->binary.a);
    out(p, ", ");
    tir_expr(p, e->binary.b);
    out(p, ")");
    return;
  }
  int prec = binary_prec(e->kind);
  /* Comparisons chain in Python, so a comparison operand of a comparison needs parens. */
  tir_child(p, e->binary.a, prec, prec == PREC_CMP);
  outf(p, " %s ", op);
  tir_child(p, e->binary.b, prec, true);
}

static void tir_expr(pr_t *p, const tj_tir_expr_t *e) {
  char buf[TJ_DTYPE_BUFSIZE];
  if (!e) {
    out(p, "None");
    return;
  }
  switch (e->kind) {
    case TJ_TIR_INT_IMM: tir_int_literal(p, e->dtype, e->int_imm); return;
    case TJ_TIR_FLOAT_IMM:
      p->used_tir = true;
      outf(p, "T.%s(", dtype_name(e->dtype, buf));
      out_double(p, e->float_imm);
      out(p, ")");
      return;
    case TJ_TIR_STRING_IMM: out_str_literal(p, e->string_imm); return;
    case TJ_TIR_VAR: tir_var(p, e); return;
    case TJ_TIR_NOT:
      if (e->unary.operand->kind == TJ_TIR_INT_IMM) {
        out(p, "T.Not(");
        tir_expr(p, e->unary.operand);
        out(p, ")");
      } else {
        out(p, "not ");
        tir_child(p, e->unary.operand, PREC_NOT, false);
      }
      return;
    case TJ_TIR_CAST:
      p->used_tir = true;
      outf(p, "T.Cast(\"%s\", ", dtype_name(e->dtype, buf));
      tir_expr(p, e->unary.operand);
      out(p, ")");
      return;
    case TJ_TIR_SELECT:
      p->used_tir = true;
      out(p, "T.Select(");
      tir_expr(p, e->select.cond);
      out(p, ", ");
      tir_expr(p, e->select.true_value);
      out(p, ", ");
      tir_expr(p, e->select.false_value);
      out(p, ")");
      return;
    case TJ_TIR_BUFFER_LOAD:
      buffer_ref(p, e->load.buffer);
      tir_indices(p, e->load.n_indices, e->load.indices);
      return;
    case TJ_TIR_LET:
      /* T.Let(body, where={v: value}); the var is declared where TVM declares free vars. */
      p->used_tir = true;
      out(p, "T.Let(");
      tir_expr(p, e->let.body);
      out(p, ", where={");
      tir_var(p, e->let.var);
      out(p, ": ");
      tir_expr(p, e->let.value);
      out(p, "})");
      return;
    case TJ_TIR_CALL: tir_call(p, e); return;
    case TJ_TIR_RAMP:
      p->used_tir = true;
      out(p, "T.Ramp(");
      tir_expr(p, e->ramp.base);
      out(p, ", ");
      tir_expr(p, e->ramp.stride);
      outf(p, ", %u)", (unsigned)e->dtype.lanes);
      return;
    case TJ_TIR_BROADCAST:
      p->used_tir = true;
      out(p, "T.Broadcast(");
      tir_expr(p, e->broadcast.value);
      outf(p, ", %u)", (unsigned)e->dtype.lanes);
      return;
    default:
      if (tj_tir_kind_is_binary(e->kind) || e->kind == TJ_TIR_MOD || e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX) {
        tir_binary(p, e);
        return;
      }
      outf(p, "<%s>", tj_tir_expr_kind_name(e->kind));
  }
}

/* `min + extent` the way TVM builds it (constant folded when both are literals). */
static void tir_end(pr_t *p, const tj_tir_expr_t *min, const tj_tir_expr_t *extent) {
  if (min->kind == TJ_TIR_INT_IMM && extent->kind == TJ_TIR_INT_IMM) {
    tir_int_literal(p, extent->dtype, min->int_imm + extent->int_imm);
  } else if (is_zero(min)) {
    tir_expr(p, extent);
  } else if (is_zero(extent)) {
    tir_expr(p, min);
  } else {
    tir_child(p, min, PREC_ADD, false);
    out(p, " + ");
    tir_child(p, extent, PREC_ADD, true);
  }
}

/* ---- var declarations ------------------------------------------------------------------ */

static void var_creation(pr_t *p, tj_strbuf_t *sb, const char *name, tj_dtype_t dt) {
  char buf[TJ_DTYPE_BUFSIZE];
  p->used_tir = true;
  tj_strbuf_printf(sb, "%s = T.%s()\n", name, dtype_name(dt, buf));
}

/* A TIR var met before its definition: TVM declares it (`n = T.int64()`) in the
 * function frame. In a Relax signature the declaration goes to the outermost Relax
 * function and the var prints as a string inside the signature. */
static const char *declare_free_var(pr_t *p, const tj_tir_expr_t *v) {
  if (p->relax_ctx && p->rx_decls) {
    const char *name = define_at(p, v, v->var.name, "v", p->rx_fn_level);
    tj_strbuf_t *sb = p->rx_decls;
    for (int i = 0; i < p->rx_fn_indent; i++) tj_strbuf_append(sb, INDENT);
    var_creation(p, sb, name, v->dtype);
    if (p->collect_func_vars && !tj_map_put(&p->func_vars, v, (void *)v)) p->failed = true;
    return name;
  }
  if (p->tir_decls) {
    const char *name = define_at(p, v, v->var.name, "v", p->fn_level);
    for (int i = 0; i < p->fn_indent; i++) tj_strbuf_append(p->tir_decls, INDENT);
    var_creation(p, p->tir_decls, name, v->dtype);
    return name;
  }
  return v->var.name;
}

static void tir_var(pr_t *p, const tj_tir_expr_t *v) {
  const char *name = doc_of(p, v);
  if (!name) name = p->standalone ? v->var.name : declare_free_var(p, v);
  out(p, name ? name : "v");
}

/* ------------------------------------------------------------------------------------ */
/* Buffers                                                                               */

static bool buffer_is_simple(const tj_buffer_t *b);
static void buffer_decl_args(pr_t *p, const tj_buffer_t *b, bool always_dtype);

static void buffer_ref(pr_t *p, const tj_buffer_t *b) {
  const char *name = doc_of(p, b);
  if (!name && !p->standalone && p->tir_decls) {
    /* A buffer used without a definition: TVM declares it as `A = T.Buffer(...)`. */
    name = define_at(p, b, b->name, "buf", p->fn_level);
    tj_strbuf_t *saved = p->sb;
    tj_strbuf_t line;
    tj_strbuf_init(&line);
    p->sb = &line;
    indent(p, p->fn_indent);
    outf(p, "%s = T.Buffer(", name);
    buffer_decl_args(p, b, true);
    out(p, ")\n");
    p->sb = saved;
    if (line.data) tj_strbuf_append(p->tir_decls, line.data);
    if (line.failed) p->failed = true;
    tj_strbuf_free(&line);
  }
  out(p, name ? name : b->name);
}

static const char *define_buffer(pr_t *p, const tj_buffer_t *b) {
  const char *name = define(p, b, b->name, "buf");
  if (b->data) {
    const char *data = tj_arena_printf(p->arena, "%s.data", name);
    if (!data || !tj_map_put(&p->docs, b->data, (void *)data)) p->failed = true;
  }
  return name;
}

static void shape_tuple(pr_t *p, int n, const tj_tir_expr_t *const *dims) {
  out(p, "(");
  for (int i = 0; i < n; i++) {
    if (i) out(p, ", ");
    tir_expr(p, dims[i]);
  }
  out(p, n == 1 ? ",)" : ")");
}

/* The arguments of T.Buffer / T.alloc_buffer / T.match_buffer after the source:
 * shape, dtype (omitted when float32 unless always_dtype), then keyword attributes. */
static void buffer_decl_args(pr_t *p, const tj_buffer_t *b, bool always_dtype) {
  char buf[TJ_DTYPE_BUFSIZE];
  shape_tuple(p, b->ndim, b->shape);
  if (always_dtype || !tj_dtype_eq(b->dtype, TJ_F32)) outf(p, ", \"%s\"", dtype_name(b->dtype, buf));
  if (b->strides) {
    out(p, ", strides=");
    shape_tuple(p, b->ndim, b->strides);
  }
  if (b->elem_offset && !is_int_imm(b->elem_offset, 0)) {
    out(p, ", elem_offset=");
    tir_expr(p, b->elem_offset);
  }
  if (b->scope && *b->scope && strcmp(b->scope, "global") != 0) {
    out(p, ", scope=");
    out_str_literal(p, b->scope);
  }
  if (b->n_axis_separators > 0) {
    out(p, ", axis_separators=[");
    for (int i = 0; i < b->n_axis_separators; i++) outf(p, "%s%lld", i ? ", " : "", (long long)b->axis_separators[i]);
    out(p, "]");
  }
}

static bool expr_has_var(const tj_tir_expr_t *e);

static bool exprs_have_var(int n, const tj_tir_expr_t *const *v) {
  for (int i = 0; v && i < n; i++)
    if (expr_has_var(v[i])) return true;
  return false;
}

static bool expr_has_var(const tj_tir_expr_t *e) {
  if (!e) return false;
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
    case TJ_TIR_FLOAT_IMM:
    case TJ_TIR_STRING_IMM: return false;
    case TJ_TIR_NOT:
    case TJ_TIR_CAST: return expr_has_var(e->unary.operand);
    case TJ_TIR_CALL: return exprs_have_var(e->call.n_args, e->call.args);
    default:
      if (tj_tir_kind_is_binary(e->kind) || e->kind == TJ_TIR_MOD || e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX)
        return expr_has_var(e->binary.a) || expr_has_var(e->binary.b);
      return true; /* vars, loads, lets...: not a static shape */
  }
}

/* TVM's IsSimpleBuffer: what a `T.Buffer(...)` parameter annotation can express. */
static bool buffer_is_simple(const tj_buffer_t *b) {
  if (b->strides) return false;
  if (exprs_have_var(b->ndim, b->shape)) return false;
  if (b->elem_offset && !is_int_imm(b->elem_offset, 0)) return false;
  if (b->scope && *b->scope && strcmp(b->scope, "global") != 0) return false;
  return b->n_axis_separators == 0;
}

/* ------------------------------------------------------------------------------------ */
/* Attribute dictionaries                                                                */

static void attr_value(pr_t *p, const tj_attr_value_t *v, bool tir_style);

static int cmp_keys(const void *x, const void *y) {
  const char *const *a = x, *const *b = y;
  return strcmp(*a, *b);
}

/* `{"key": value, ...}` sorted by key, as TVM prints a Map<String, ...>. */
static void attr_dict(pr_t *p, const tj_attrs_t *d, bool tir_style) {
  int n = d ? d->n : 0;
  const char **keys = n ? tj_malloc(sizeof *keys * (size_t)n) : NULL;
  if (n && !keys) {
    p->failed = true;
    return;
  }
  for (int i = 0; i < n; i++) keys[i] = d->keys[i];
  if (n > 1) qsort(keys, (size_t)n, sizeof *keys, cmp_keys); /* qsort(NULL, 0) is UB */
  out(p, "{");
  for (int i = 0; i < n; i++) {
    if (i) out(p, ", ");
    out_str_literal(p, keys[i]);
    out(p, ": ");
    attr_value(p, tj_attrs_get(d, keys[i]), tir_style);
  }
  out(p, "}");
  tj_free(keys);
}

/* tir_style: an attribute value in a function attr dict, where TVM prints IntImm and
 * FloatImm with their dtype (`T.bool(True)`, `T.int64(4)`, `T.float32(0.5)`); int32
 * prints bare. Otherwise (operator attrs) numbers print as Python literals. */
static void attr_value(pr_t *p, const tj_attr_value_t *v, bool tir_style) {
  char buf[TJ_DTYPE_BUFSIZE];
  if (!v) {
    out(p, "None");
    return;
  }
  switch (v->kind) {
    case TJ_ATTR_NONE: out(p, "None"); return;
    case TJ_ATTR_INT:
      if (v->dtype.code == TJ_DT_BOOL) {
        if (tir_style) {
          p->used_tir = true;
          out(p, v->i ? "T.bool(True)" : "T.bool(False)");
        } else {
          out(p, v->i ? "True" : "False");
        }
      } else if (!tir_style || tj_dtype_eq(v->dtype, TJ_I32) || tj_dtype_is_void(v->dtype)) {
        outf(p, "%lld", (long long)v->i);
      } else {
        p->used_tir = true;
        outf(p, "T.%s(%lld)", dtype_name(v->dtype, buf), (long long)v->i);
      }
      return;
    case TJ_ATTR_FLOAT:
      if (tir_style) {
        p->used_tir = true;
        outf(p, "T.%s(", tj_dtype_eq(v->dtype, TJ_F64) ? "float64" : "float32");
        out_double(p, v->f);
        out(p, ")");
      } else {
        out_float_literal(p, v->f);
      }
      return;
    case TJ_ATTR_STR: out_str_literal(p, v->s); return;
    case TJ_ATTR_DTYPE: outf(p, "\"%s\"", dtype_name(v->dtype, buf)); return;
    case TJ_ATTR_DICT: attr_dict(p, v->dict, tir_style); return;
    case TJ_ATTR_BUFFER:
      if (v->buffer) buffer_ref(p, v->buffer);
      else out(p, "None");
      return;
    case TJ_ATTR_LIST:
      out(p, "[");
      for (int i = 0; i < v->list.n; i++) {
        if (i) out(p, ", ");
        attr_value(p, &v->list.items[i], tir_style);
      }
      out(p, "]");
      return;
  }
}

/* ------------------------------------------------------------------------------------ */
/* TIR statements                                                                        */

static void tir_stmt(pr_t *p, const tj_tir_stmt_t *s, int ind, bool concise);

/* A body: a SeqStmt's elements one after another (only the last may scope concisely). */
static void tir_body(pr_t *p, const tj_tir_stmt_t *s, int ind) {
  if (!s) {
    indent(p, ind);
    out(p, "T.evaluate(0)\n");
    return;
  }
  if (s->kind == TJ_TIR_SEQ) {
    if (s->seq.n == 0) {
      indent(p, ind);
      out(p, "T.evaluate(0)\n");
    }
    for (int i = 0; i < s->seq.n; i++) tir_stmt(p, s->seq.stmts[i], ind, i == s->seq.n - 1);
    return;
  }
  tir_stmt(p, s, ind, true);
}

static void loops_push(pr_t *p, const tj_tir_stmt_t *loop) {
  if (!tj_vec_push(&p->loops, loop)) p->failed = true;
}

static bool uses_any_var(const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *vars);

static bool uses_any_var(const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *vars) {
  if (!e) return false;
  switch (e->kind) {
    case TJ_TIR_VAR:
      for (int i = 0; i < n; i++)
        if (vars[i] == e) return true;
      return false;
    case TJ_TIR_INT_IMM:
    case TJ_TIR_FLOAT_IMM:
    case TJ_TIR_STRING_IMM: return false;
    case TJ_TIR_NOT:
    case TJ_TIR_CAST: return uses_any_var(e->unary.operand, n, vars);
    case TJ_TIR_SELECT:
      return uses_any_var(e->select.cond, n, vars) || uses_any_var(e->select.true_value, n, vars) ||
             uses_any_var(e->select.false_value, n, vars);
    case TJ_TIR_BUFFER_LOAD:
      for (int i = 0; i < e->load.n_indices; i++)
        if (uses_any_var(e->load.indices[i], n, vars)) return true;
      return false;
    case TJ_TIR_LET:
      return uses_any_var(e->let.value, n, vars) || uses_any_var(e->let.body, n, vars);
    case TJ_TIR_CALL:
      for (int i = 0; i < e->call.n_args; i++)
        if (uses_any_var(e->call.args[i], n, vars)) return true;
      return false;
    case TJ_TIR_RAMP: return uses_any_var(e->ramp.base, n, vars) || uses_any_var(e->ramp.stride, n, vars);
    case TJ_TIR_BROADCAST: return uses_any_var(e->broadcast.value, n, vars);
    default: return uses_any_var(e->binary.a, n, vars) || uses_any_var(e->binary.b, n, vars);
  }
}

static const char *for_kind_func(tj_for_kind_t k) {
  switch (k) {
    case TJ_FOR_PARALLEL: return "T.parallel";
    case TJ_FOR_VECTORIZED: return "T.vectorized";
    case TJ_FOR_UNROLLED: return "T.unroll";
    case TJ_FOR_THREAD_BINDING: return "T.thread_binding";
    default: return "T.serial";
  }
}

static bool grid_eligible(const tj_tir_stmt_t *l, int n, const tj_tir_expr_t *const *vars) {
  return l->loop.kind == TJ_FOR_SERIAL && is_int_imm(l->loop.min, 0) &&
         !(l->loop.annotations && l->loop.annotations->n) && !uses_any_var(l->loop.extent, n, vars);
}

/* `for i0, i1 in T.grid(...)` for a perfect nest of plain serial loops from 0, else
 * one loop: `range(...)`, `T.parallel(...)`, ... */
static void tir_for(pr_t *p, const tj_tir_stmt_t *s, int ind) {
  const tj_tir_stmt_t *grid[64];
  const tj_tir_expr_t *vars[64];
  int n = 0;
  for (const tj_tir_stmt_t *l = s; l && l->kind == TJ_TIR_FOR && n < 64; l = l->loop.body) {
    if (!grid_eligible(l, n, vars)) break;
    grid[n] = l;
    vars[n++] = l->loop.var;
  }
  int lvl = scope_push(p);
  int saved_loops = p->loops.n;
  indent(p, ind);
  if (n > 1) {
    out(p, "for ");
    for (int i = 0; i < n; i++) {
      loops_push(p, grid[i]);
      outf(p, "%s%s", i ? ", " : "", define(p, grid[i]->loop.var, grid[i]->loop.var->var.name, "v"));
    }
    p->used_tir = true;
    out(p, " in T.grid(");
    for (int i = 0; i < n; i++) {
      if (i) out(p, ", ");
      tir_expr(p, grid[i]->loop.extent);
    }
    out(p, "):\n");
    tir_body(p, grid[n - 1]->loop.body, ind + 1);
  } else {
    loops_push(p, s);
    bool annotated = s->loop.annotations && s->loop.annotations->n;
    outf(p, "for %s in ", define(p, s->loop.var, s->loop.var->var.name, "v"));
    if (s->loop.kind == TJ_FOR_SERIAL && !annotated) {
      out(p, "range(");
    } else {
      p->used_tir = true;
      outf(p, "%s(", for_kind_func(s->loop.kind));
    }
    if (!is_zero(s->loop.min)) {
      tir_expr(p, s->loop.min);
      out(p, ", ");
      tir_end(p, s->loop.min, s->loop.extent);
    } else {
      tir_expr(p, s->loop.extent);
    }
    if (annotated) {
      out(p, ", annotations=");
      attr_dict(p, s->loop.annotations, true);
    }
    out(p, "):\n");
    tir_body(p, s->loop.body, ind + 1);
  }
  p->loops.n = saved_loops;
  scope_pop(p, lvl);
}

static void tir_region(pr_t *p, const tj_buffer_region_t *r) {
  buffer_ref(p, r->buffer);
  out(p, "[");
  if (r->ndim == 0) out(p, "()");
  for (int i = 0; i < r->ndim; i++) {
    if (i) out(p, ", ");
    const tj_range_t *rg = &r->ranges[i];
    if (is_int_imm(rg->extent, 1)) {
      tir_expr(p, rg->min);
    } else {
      tir_expr(p, rg->min);
      out(p, ":");
      tir_end(p, rg->min, rg->extent);
    }
  }
  out(p, "]");
}

/* Index of the enclosing loop over `v` whose range equals the iter var's domain. */
static bool remappable(pr_t *p, const tj_iter_var_t *iv, const tj_tir_expr_t *value) {
  if (!value || value->kind != TJ_TIR_VAR) return false;
  for (int i = p->loops.n - 1; i >= 0; i--) {
    const tj_tir_stmt_t *l = p->loops.items[i];
    if (l->loop.var != value) continue;
    return tj_struct_equal_tir_expr(l->loop.min, iv->dom.min) && tj_struct_equal_tir_expr(l->loop.extent, iv->dom.extent);
  }
  return false;
}

static void iter_var_single(pr_t *p, const tj_iter_var_t *iv, const tj_tir_expr_t *value, int ind) {
  /* The binding is printed before the iter var is defined (it refers to outer vars). */
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  p->used_tir = true;
  outf(p, "T.axis.%s(", iv->kind == TJ_ITER_REDUCE ? "reduce" : "spatial");
  if (is_zero(iv->dom.min)) {
    tir_expr(p, iv->dom.extent);
  } else {
    out(p, "(");
    tir_expr(p, iv->dom.min);
    out(p, ", ");
    tir_end(p, iv->dom.min, iv->dom.extent);
    out(p, ")");
  }
  if (value) {
    out(p, ", ");
    tir_expr(p, value);
  }
  out(p, ")");
  p->sb = saved;
  indent(p, ind);
  outf(p, "%s = %s\n", define(p, iv->var, iv->var->var.name, "v"), rhs.data ? rhs.data : "");
  if (rhs.failed) p->failed = true;
  tj_strbuf_free(&rhs);
}

static void iter_vars_remap(pr_t *p, const tj_block_t *b, const tj_tir_stmt_t *realize, const int *idx, int m,
                            int ind) {
  if (m == 0) return;
  if (m == 1) {
    iter_var_single(p, &b->iter_vars[idx[0]], realize->realize.iter_values[idx[0]], ind);
    return;
  }
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  out(p, "T.axis.remap(\"");
  for (int i = 0; i < m; i++) out(p, b->iter_vars[idx[i]].kind == TJ_ITER_REDUCE ? "R" : "S");
  out(p, "\", [");
  for (int i = 0; i < m; i++) {
    if (i) out(p, ", ");
    tir_expr(p, realize->realize.iter_values[idx[i]]);
  }
  out(p, "])");
  p->sb = saved;
  indent(p, ind);
  for (int i = 0; i < m; i++) {
    const tj_tir_expr_t *v = b->iter_vars[idx[i]].var;
    outf(p, "%s%s", i ? ", " : "", define(p, v, v->var.name, "v"));
  }
  p->used_tir = true;
  outf(p, " = %s\n", rhs.data ? rhs.data : "");
  if (rhs.failed) p->failed = true;
  tj_strbuf_free(&rhs);
}

/* Iter vars bound to an enclosing loop with the same range group into T.axis.remap;
 * a run is flushed whenever another kind of binding comes between. */
static void block_iter_vars(pr_t *p, const tj_block_t *b, const tj_tir_stmt_t *realize, int ind) {
  int *idx = b->n_iter_vars ? tj_malloc(sizeof(int) * (size_t)b->n_iter_vars) : NULL;
  if (b->n_iter_vars && !idx) {
    p->failed = true;
    return;
  }
  int m = 0;
  for (int i = 0; i < b->n_iter_vars; i++) {
    const tj_tir_expr_t *value = realize && i < realize->realize.n_iter_values ? realize->realize.iter_values[i] : NULL;
    if (realize && remappable(p, &b->iter_vars[i], value)) {
      idx[m++] = i;
      continue;
    }
    iter_vars_remap(p, b, realize, idx, m, ind);
    m = 0;
    iter_var_single(p, &b->iter_vars[i], value, ind);
  }
  iter_vars_remap(p, b, realize, idx, m, ind);
  tj_free(idx);
}

static void alloc_buffer_line(pr_t *p, const tj_buffer_t *b, int ind) {
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  p->used_tir = true;
  out(p, "T.alloc_buffer(");
  buffer_decl_args(p, b, false);
  out(p, ")");
  p->sb = saved;
  indent(p, ind);
  outf(p, "%s = %s\n", define_buffer(p, b), rhs.data ? rhs.data : "");
  if (rhs.failed) p->failed = true;
  tj_strbuf_free(&rhs);
}

static void regions_line(pr_t *p, const char *what, int n, const tj_buffer_region_t *r, int ind) {
  indent(p, ind);
  outf(p, "T.%s(", what);
  for (int i = 0; i < n; i++) {
    if (i) out(p, ", ");
    tir_region(p, &r[i]);
  }
  out(p, ")\n");
}

static void block_contents(pr_t *p, const tj_block_t *b, const tj_tir_stmt_t *realize, int ind) {
  block_iter_vars(p, b, realize, ind);
  if (realize && !is_int_imm(realize->realize.predicate, 1)) {
    indent(p, ind);
    out(p, "T.where(");
    tir_expr(p, realize->realize.predicate);
    out(p, ")\n");
  }
  regions_line(p, "reads", b->n_reads, b->reads, ind);
  regions_line(p, "writes", b->n_writes, b->writes, ind);
  if (b->annotations && b->annotations->n) {
    indent(p, ind);
    out(p, "T.block_attr(");
    attr_dict(p, b->annotations, true);
    out(p, ")\n");
  }
  for (int i = 0; i < b->n_alloc_buffers; i++) alloc_buffer_line(p, b->alloc_buffers[i], ind);
  for (int i = 0; i < b->n_match_buffers; i++) {
    const tj_match_buffer_t *mb = &b->match_buffers[i];
    tj_strbuf_t *saved = p->sb;
    tj_strbuf_t rhs;
    tj_strbuf_init(&rhs);
    p->sb = &rhs;
    out(p, "T.match_buffer(");
    tir_region(p, &mb->source);
    out(p, ", ");
    buffer_decl_args(p, mb->buffer, false);
    out(p, ")");
    p->sb = saved;
    indent(p, ind);
    outf(p, "%s = %s\n", define_buffer(p, mb->buffer), rhs.data ? rhs.data : "");
    tj_strbuf_free(&rhs);
  }
  if (b->init) {
    int lvl = scope_push(p);
    indent(p, ind);
    out(p, "with T.init():\n");
    tir_body(p, b->init, ind + 1);
    scope_pop(p, lvl);
  }
  tir_body(p, b->body, ind);
}

static void tir_block(pr_t *p, const tj_tir_stmt_t *realize, int ind) {
  const tj_block_t *b = realize->realize.block;
  int lvl = scope_push(p);
  indent(p, ind);
  p->used_tir = true;
  out(p, "with T.block(");
  out_str_literal(p, b->name);
  out(p, "):\n");
  block_contents(p, b, realize, ind + 1);
  scope_pop(p, lvl);
}

static void type_annotation(pr_t *p, tj_dtype_t dt) {
  char buf[TJ_DTYPE_BUFSIZE];
  p->used_tir = true;
  outf(p, "T.%s", dtype_name(dt, buf));
}

/* `v: T.float32 = value` + the body at the same level when the let is the last
 * statement of its body (TVM's concise scoping), else `with T.LetStmt(value) as v:`. */
static void tir_let_stmt(pr_t *p, const tj_tir_stmt_t *s, int ind, bool concise) {
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  tir_expr(p, s->let.value);
  p->sb = saved;
  const char *value = rhs.data ? rhs.data : "";
  const char *existing = doc_of(p, s->let.var);
  int lvl = scope_push(p);
  indent(p, ind);
  if (existing) {
    outf(p, "with T.LetStmt(%s, var=%s):\n", value, existing);
    tir_body(p, s->let.body, ind + 1);
  } else if (concise) {
    outf(p, "%s: ", define(p, s->let.var, s->let.var->var.name, "v"));
    type_annotation(p, s->let.var->dtype);
    outf(p, " = %s\n", value);
    tir_body(p, s->let.body, ind);
  } else {
    outf(p, "with T.LetStmt(%s) as %s:\n", value, define(p, s->let.var, s->let.var->var.name, "v"));
    tir_body(p, s->let.body, ind + 1);
  }
  scope_pop(p, lvl);
  if (rhs.failed) p->failed = true;
  tj_strbuf_free(&rhs);
}

static void tir_allocate(pr_t *p, const tj_tir_stmt_t *s, int ind, bool concise) {
  const tj_buffer_t *b = s->allocate.buffer;
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  p->used_tir = true;
  out(p, "T.decl_buffer(");
  buffer_decl_args(p, b, true);
  out(p, ")");
  p->sb = saved;
  int lvl = scope_push(p);
  indent(p, ind);
  if (concise) {
    outf(p, "%s = %s\n", define_buffer(p, b), rhs.data ? rhs.data : "");
    tir_body(p, s->allocate.body, ind);
  } else {
    outf(p, "with %s as %s:\n", rhs.data ? rhs.data : "", define_buffer(p, b));
    tir_body(p, s->allocate.body, ind + 1);
  }
  scope_pop(p, lvl);
  tj_strbuf_free(&rhs);
}

static void tir_stmt(pr_t *p, const tj_tir_stmt_t *s, int ind, bool concise) {
  switch (s->kind) {
    case TJ_TIR_FOR: tir_for(p, s, ind); return;
    case TJ_TIR_BLOCK_REALIZE: tir_block(p, s, ind); return;
    case TJ_TIR_BUFFER_STORE:
      indent(p, ind);
      buffer_ref(p, s->store.buffer);
      tir_indices(p, s->store.n_indices, s->store.indices);
      out(p, " = ");
      tir_expr(p, s->store.value);
      out(p, "\n");
      return;
    case TJ_TIR_LET_STMT: tir_let_stmt(p, s, ind, concise); return;
    case TJ_TIR_IF: {
      indent(p, ind);
      out(p, "if ");
      tir_expr(p, s->if_.cond);
      out(p, ":\n");
      int lvl = scope_push(p);
      tir_body(p, s->if_.then_stmt, ind + 1);
      scope_pop(p, lvl);
      if (s->if_.else_stmt) {
        indent(p, ind);
        out(p, "else:\n");
        lvl = scope_push(p);
        tir_body(p, s->if_.else_stmt, ind + 1);
        scope_pop(p, lvl);
      }
      return;
    }
    case TJ_TIR_SEQ: tir_body(p, s, ind); return;
    case TJ_TIR_EVALUATE:
      indent(p, ind);
      if (s->evaluate.value && s->evaluate.value->kind == TJ_TIR_CALL && s->evaluate.value->call.n_args == 1 &&
          strcmp(s->evaluate.value->call.op, "tir.ret") == 0) {
        out(p, "return ");
        tir_expr(p, s->evaluate.value->call.args[0]);
      } else if (s->evaluate.value && s->evaluate.value->kind == TJ_TIR_CALL) {
        tir_expr(p, s->evaluate.value);
      } else {
        p->used_tir = true;
        out(p, "T.evaluate(");
        tir_expr(p, s->evaluate.value);
        out(p, ")");
      }
      out(p, "\n");
      return;
    case TJ_TIR_ALLOCATE: tir_allocate(p, s, ind, concise); return;
    default: indent(p, ind); outf(p, "# <unknown statement %d>\n", (int)s->kind); return;
  }
}

/* ------------------------------------------------------------------------------------ */
/* PrimFunc                                                                              */

/* TVM's implicit root block: printed as a comment, its allocations at function level. */
static const tj_block_t *implicit_root(const tj_prim_func_t *f);


static const tj_block_t *implicit_root(const tj_prim_func_t *f) {
  const tj_tir_stmt_t *r = f->body;
  if (!r || r->kind != TJ_TIR_BLOCK_REALIZE || r->realize.n_iter_values || !is_int_imm(r->realize.predicate, 1))
    return NULL;
  const tj_block_t *b = r->realize.block;
  if ((b->annotations && b->annotations->n) || b->n_match_buffers || b->n_reads || b->n_writes || b->init ||
      b->n_iter_vars)
    return NULL;
  const tj_tir_stmt_t *body = b->body;
  bool inner_realize = body && body->kind == TJ_TIR_BLOCK_REALIZE;
  if (b->n_alloc_buffers || (inner_realize && body->realize.block->n_iter_vars) ||
      (!inner_realize && tj_tir_stmt_contains_block(body)))
    return b;
  return NULL;
}

/* Appends the pending declarations, then the statement text, to the function output. */
static void flush_fn_stmt(pr_t *p, tj_strbuf_t *dst, tj_strbuf_t *stmt) {
  if (p->tir_decls->data) tj_strbuf_append(dst, p->tir_decls->data);
  p->tir_decls->len = 0;
  if (p->tir_decls->data) p->tir_decls->data[0] = '\0';
  if (stmt->data) tj_strbuf_append(dst, stmt->data);
  stmt->len = 0;
  if (stmt->data) stmt->data[0] = '\0';
}

static bool buffer_data_shared(const tj_prim_func_t *f, int i) {
  for (int j = 0; j < f->n_params; j++)
    if (j != i && f->buffer_map[j] && f->buffer_map[j]->data == f->buffer_map[i]->data) return true;
  return false;
}

static void prim_func_signature(pr_t *p, const char *name, const tj_prim_func_t *f, bool *inlined) {
  bool priv = !tj_attrs_get(f->attrs, "global_symbol");
  p->used_tir = true;
  outf(p, "@T.prim_func%s\n", priv ? "(private=True)" : "");
  indent(p, p->fn_indent - 1);
  outf(p, "def %s(", name);
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    if (i) out(p, ", ");
    inlined[i] = b && buffer_is_simple(b) && !buffer_data_shared(f, i);
    if (inlined[i]) {
      outf(p, "%s: T.Buffer(", define_buffer(p, b));
      buffer_decl_args(p, b, true);
      out(p, ")");
    } else {
      const tj_tir_expr_t *v = f->params[i];
      outf(p, "%s: ", define(p, v, v->var.name, "v"));
      type_annotation(p, v->dtype);
    }
  }
  out(p, "):\n");
}

/* The func attrs without global_symbol when it equals the function name. */
static const tj_attrs_t *attrs_to_print(pr_t *p, const tj_attrs_t *attrs, const char *name) {
  const char *gs = tj_attrs_get_str(attrs, "global_symbol", NULL);
  if (gs && strcmp(gs, name) == 0) return tj_attrs_remove(p->arena, attrs, "global_symbol");
  return attrs;
}

static void prim_func_body(pr_t *p, const char *name, const tj_prim_func_t *f, const bool *inlined,
                           tj_strbuf_t *dst) {
  tj_strbuf_t stmt;
  tj_strbuf_init(&stmt);
  tj_strbuf_t *saved = p->sb;
  p->sb = &stmt;
  int ind = p->fn_indent;
  const tj_attrs_t *attrs = attrs_to_print(p, f->attrs, name);
  if (attrs && attrs->n) {
    indent(p, ind);
    out(p, "T.func_attr(");
    attr_dict(p, attrs, true);
    out(p, ")\n");
    flush_fn_stmt(p, dst, &stmt);
  }
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    if (!b || inlined[i]) continue;
    tj_strbuf_t rhs;
    tj_strbuf_init(&rhs);
    p->sb = &rhs;
    outf(p, "T.match_buffer(%s, ", doc_of(p, f->params[i]));
    buffer_decl_args(p, b, false);
    out(p, ")");
    p->sb = &stmt;
    indent(p, ind);
    outf(p, "%s = %s\n", define_buffer(p, b), rhs.data ? rhs.data : "");
    tj_strbuf_free(&rhs);
    flush_fn_stmt(p, dst, &stmt);
  }
  const tj_block_t *root = implicit_root(f);
  const tj_tir_stmt_t *body = root ? root->body : f->body;
  if (root) {
    indent(p, ind);
    out(p, "# with T.block(\"root\"):\n");
    flush_fn_stmt(p, dst, &stmt);
    for (int i = 0; i < root->n_alloc_buffers; i++) {
      alloc_buffer_line(p, root->alloc_buffers[i], ind);
      flush_fn_stmt(p, dst, &stmt);
    }
  }
  if (body && body->kind == TJ_TIR_SEQ) {
    for (int i = 0; i < body->seq.n; i++) {
      tir_stmt(p, body->seq.stmts[i], ind, i == body->seq.n - 1);
      flush_fn_stmt(p, dst, &stmt);
    }
  } else {
    tir_body(p, body, ind);
    flush_fn_stmt(p, dst, &stmt);
  }
  if (stmt.failed) p->failed = true;
  tj_strbuf_free(&stmt);
  p->sb = saved;
}

static void print_prim_func(pr_t *p, const char *name, const tj_prim_func_t *f, int ind) {
  int lvl = scope_push(p);
  tj_strbuf_t decls;
  tj_strbuf_init(&decls);
  tj_strbuf_t *saved_decls = p->tir_decls;
  int saved_fn_level = p->fn_level, saved_fn_indent = p->fn_indent;
  bool saved_relax = p->relax_ctx;
  p->relax_ctx = false;
  p->tir_decls = &decls;
  p->fn_level = lvl;
  p->fn_indent = ind + 1;
  bool small[16];
  bool *inlined = f->n_params <= 16 ? small : tj_calloc((size_t)f->n_params, sizeof(bool));
  if (!inlined) {
    p->failed = true;
  } else {
    indent(p, ind);
    prim_func_signature(p, name, f, inlined);
    prim_func_body(p, name, f, inlined, p->sb);
    if (inlined != small) tj_free(inlined);
  }
  if (decls.failed) p->failed = true;
  tj_strbuf_free(&decls);
  p->tir_decls = saved_decls;
  p->fn_level = saved_fn_level;
  p->fn_indent = saved_fn_indent;
  p->relax_ctx = saved_relax;
  scope_pop(p, lvl);
}

/* ------------------------------------------------------------------------------------ */
/* Relax struct info                                                                     */

static void rx_prim_expr(pr_t *p, const tj_tir_expr_t *e);

static bool uses_func_var(const pr_t *p, const tj_tir_expr_t *e);

static bool uses_func_var(const pr_t *p, const tj_tir_expr_t *e) {
  if (!e) return false;
  switch (e->kind) {
    case TJ_TIR_VAR: return tj_map_get(&p->func_vars, e) != NULL;
    case TJ_TIR_INT_IMM:
    case TJ_TIR_FLOAT_IMM:
    case TJ_TIR_STRING_IMM: return false;
    case TJ_TIR_NOT:
    case TJ_TIR_CAST: return uses_func_var(p, e->unary.operand);
    case TJ_TIR_CALL:
      for (int i = 0; i < e->call.n_args; i++)
        if (uses_func_var(p, e->call.args[i])) return true;
      return false;
    case TJ_TIR_SELECT:
      return uses_func_var(p, e->select.cond) || uses_func_var(p, e->select.true_value) ||
             uses_func_var(p, e->select.false_value);
    default:
      if (tj_tir_kind_is_binary(e->kind) || e->kind == TJ_TIR_MOD || e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX)
        return uses_func_var(p, e->binary.a) || uses_func_var(p, e->binary.b);
      return false;
  }
}

/* A dim in a signature: printed normally, then wrapped in quotes when it uses a
 * symbolic var of the signature (TVM's PrintShapeVar): `("n", "m * 2")`. */
static void shape_dim(pr_t *p, const tj_tir_expr_t *e) {
  if (!p->collect_func_vars) {
    rx_prim_expr(p, e);
    return;
  }
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t text;
  tj_strbuf_init(&text);
  p->sb = &text;
  rx_prim_expr(p, e);
  p->sb = saved;
  if (uses_func_var(p, e)) out_str_literal(p, text.data ? text.data : "");
  else out(p, text.data ? text.data : "");
  if (text.failed) p->failed = true;
  tj_strbuf_free(&text);
}

static void sinfo(pr_t *p, const tj_sinfo_t *s) {
  char buf[TJ_DTYPE_BUFSIZE];
  p->used_relax = true;
  if (!s) {
    out(p, "R.Object");
    return;
  }
  switch (s->kind) {
    case TJ_SINFO_OBJECT: out(p, "R.Object"); return;
    case TJ_SINFO_PRIM:
      if (s->prim.value) {
        out(p, "R.Prim(value=");
        shape_dim(p, s->prim.value);
        out(p, ")");
      } else {
        outf(p, "R.Prim(\"%s\")", dtype_name(s->prim.dtype, buf));
      }
      return;
    case TJ_SINFO_SHAPE:
      if (s->shape.values) {
        out(p, "R.Shape([");
        for (int i = 0; i < s->shape.ndim; i++) {
          if (i) out(p, ", ");
          shape_dim(p, s->shape.values[i]);
        }
        out(p, "])");
      } else {
        outf(p, "R.Shape(ndim=%d)", s->shape.ndim);
      }
      return;
    case TJ_SINFO_TENSOR: {
      bool known_dtype = !tj_dtype_is_void(s->tensor.dtype);
      bool has_shape = s->tensor.shape != NULL && s->tensor.ndim >= 0;
      bool has_ndim = !has_shape && s->tensor.ndim >= 0;
      if (!has_shape && !known_dtype && !has_ndim && !s->tensor.vdevice) {
        out(p, "R.Tensor");
        return;
      }
      out(p, "R.Tensor(");
      const char *sep = "";
      if (has_shape) {
        out(p, "(");
        for (int i = 0; i < s->tensor.ndim; i++) {
          if (i) out(p, ", ");
          shape_dim(p, s->tensor.shape[i]);
        }
        out(p, s->tensor.ndim == 1 ? ",)" : ")");
        sep = ", ";
      }
      if (known_dtype) {
        outf(p, "%sdtype=\"%s\"", sep, dtype_name(s->tensor.dtype, buf));
        sep = ", ";
      }
      if (has_ndim) {
        outf(p, "%sndim=%d", sep, s->tensor.ndim);
        sep = ", ";
      }
      if (s->tensor.vdevice) {
        outf(p, "%svdevice=", sep);
        out_str_literal(p, s->tensor.vdevice);
      }
      out(p, ")");
      return;
    }
    case TJ_SINFO_TUPLE:
      if (s->tuple.n == 0) {
        out(p, "R.Tuple");
        return;
      }
      out(p, "R.Tuple(");
      for (int i = 0; i < s->tuple.n; i++) {
        if (i) out(p, ", ");
        sinfo(p, s->tuple.fields[i]);
      }
      out(p, ")");
      return;
    case TJ_SINFO_FUNC:
      if (s->func.n_params < 0) {
        out(p, "R.Callable(ret=");
        sinfo(p, s->func.ret);
        outf(p, ", purity=%s)", s->func.pure ? "True" : "False");
        return;
      }
      out(p, "R.Callable((");
      for (int i = 0; i < s->func.n_params; i++) {
        if (i) out(p, ", ");
        sinfo(p, s->func.params[i]);
      }
      out(p, s->func.n_params == 1 ? ",), " : "), ");
      sinfo(p, s->func.ret);
      outf(p, ", %s)", s->func.pure ? "True" : "False");
      return;
  }
}

/* ------------------------------------------------------------------------------------ */
/* Relax expressions                                                                     */

static void rx_expr(pr_t *p, const tj_rx_expr_t *e);
static void rx_func(pr_t *p, const char *name, const tj_rx_func_t *f, int ind, bool top_level);

static void rx_prim_expr(pr_t *p, const tj_tir_expr_t *e) {
  bool saved = p->relax_ctx;
  p->relax_ctx = true;
  tir_expr(p, e);
  p->relax_ctx = saved;
}

static void module_alias(pr_t *p) {
  if (!p->cls_printed && p->rx_decls) {
    for (int i = 0; i < p->rx_fn_indent; i++) tj_strbuf_append(p->rx_decls, INDENT);
    tj_strbuf_printf(p->rx_decls, "cls = %s\n", p->module_name);
    p->cls_printed = true;
  }
}

static void global_var(pr_t *p, const char *name) {
  if (p->mod && tj_module_find(p->mod, name) && p->rx_decls) {
    module_alias(p);
    outf(p, "cls.%s", name);
  } else {
    out(p, name);
  }
}

static void rx_args(pr_t *p, int n, const tj_rx_expr_t *const *args) {
  for (int i = 0; i < n; i++) {
    if (i) out(p, ", ");
    rx_expr(p, args[i]);
  }
}

static void rx_tuple_fields(pr_t *p, const tj_rx_expr_t *t) {
  if (t->kind != TJ_RX_TUPLE) {
    rx_expr(p, t);
    return;
  }
  out(p, "(");
  rx_args(p, t->tuple.n, t->tuple.fields);
  out(p, t->tuple.n == 1 ? ",)" : ")");
}

static void inplace_indices(pr_t *p, const tj_attrs_t *attrs) {
  const tj_attr_value_t *idx = tj_attrs_get(attrs, "inplace_indices");
  out(p, ", inplace_indices=[");
  for (int i = 0; idx && idx->kind == TJ_ATTR_LIST && i < idx->list.n; i++)
    outf(p, "%s%lld", i ? ", " : "", (long long)idx->list.items[i].i);
  out(p, "]");
}

static void grad_attrs(pr_t *p, const tj_attrs_t *attrs) {
  const tj_attr_value_t *name = tj_attrs_get(attrs, "te_grad_name"), *kw = tj_attrs_get(attrs, "te_grad_kwargs");
  if (name) {
    out(p, ", te_grad_name=");
    attr_value(p, name, false);
  }
  if (kw && kw->kind == TJ_ATTR_DICT && kw->dict && kw->dict->n > 0) {
    out(p, ", te_grad_kwargs=");
    attr_value(p, kw, false);
  }
}

/* call_tir, call_tir_inplace, call_tir_with_grad and call_dps_packed, in TVM's keyword form. */
static void rx_call_tir(pr_t *p, const tj_rx_expr_t *e) {
  const char *op = e->call.callee->op.name + strlen("relax.");
  bool dps_packed = strcmp(op, "call_dps_packed") == 0;
  outf(p, "R.%s(", op);
  const tj_rx_expr_t *callee = e->call.args[0];
  if (callee->kind == TJ_RX_EXTERN_FUNC) out_str_literal(p, callee->string_imm);
  else rx_expr(p, callee);
  out(p, ", ");
  if (e->call.n_args > 1) rx_tuple_fields(p, e->call.args[1]);
  out(p, ", out_sinfo=");
  const tj_sinfo_t *o = e->call.n_sinfo_args ? e->call.sinfo_args[0] : NULL;
  if (o && o->kind == TJ_SINFO_TUPLE) {
    out(p, "[");
    for (int i = 0; i < o->tuple.n; i++) {
      if (i) out(p, ", ");
      sinfo(p, o->tuple.fields[i]);
    }
    out(p, "]");
  } else {
    sinfo(p, o);
  }
  if (strcmp(op, "call_tir_inplace") == 0) inplace_indices(p, e->call.attrs);
  if (strcmp(op, "call_tir_with_grad") == 0) grad_attrs(p, e->call.attrs);
  if (!dps_packed && e->call.n_args > 2) {
    out(p, ", tir_vars=");
    rx_expr(p, e->call.args[2]);
  }
  out(p, ")");
}

/* A format string argument as a keyword (print and assert_op take it by keyword so that
 * it is not read back as one more value). */
static void format_kwarg(pr_t *p, const tj_rx_expr_t *fmt) {
  out(p, "format=");
  if (fmt->kind == TJ_RX_STRING_IMM) out_str_literal(p, fmt->string_imm);
  else rx_expr(p, fmt);
}

/* relax.print(format, *values) prints as R.print(*values, format=...). */
static void rx_call_print(pr_t *p, const tj_rx_expr_t *e) {
  out(p, "R.print(");
  for (int i = 1; i < e->call.n_args; i++) {
    rx_expr(p, e->call.args[i]);
    out(p, ", ");
  }
  format_kwarg(p, e->call.args[0]);
  out(p, ")");
}

/* relax.assert_op(cond, format, *format_args) prints as R.assert_op(cond, format_args,
 * format=...); several format args print as a list, which R.assert_op reads back as such. */
static void rx_call_assert(pr_t *p, const tj_rx_expr_t *e) {
  out(p, "R.assert_op(");
  rx_expr(p, e->call.args[0]);
  int n_fmt = e->call.n_args - 2;
  if (n_fmt == 1) {
    out(p, ", ");
    rx_expr(p, e->call.args[2]);
  } else if (n_fmt > 1) {
    out(p, ", [");
    rx_args(p, n_fmt, e->call.args + 2);
    out(p, "]");
  }
  out(p, ", ");
  format_kwarg(p, e->call.args[1]);
  out(p, ")");
}

static bool is_dps_style(const char *op) {
  return strcmp(op, "relax.call_tir") == 0 || strcmp(op, "relax.call_dps_packed") == 0 ||
         strcmp(op, "relax.call_tir_inplace") == 0 || strcmp(op, "relax.call_tir_with_grad") == 0;
}

static void rx_call(pr_t *p, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *callee = e->call.callee;
  p->used_relax = true;
  if (callee->kind == TJ_RX_OP && is_dps_style(callee->op.name) && e->call.n_args >= 2 && e->call.n_sinfo_args == 1) {
    rx_call_tir(p, e);
    return;
  }
  if (tj_rx_is_op_call(e, "relax.print") && e->call.n_args >= 1) {
    rx_call_print(p, e);
    return;
  }
  if (tj_rx_is_op_call(e, "relax.assert_op") && e->call.n_args >= 2) {
    rx_call_assert(p, e);
    return;
  }
  bool any = false;
  if (callee->kind == TJ_RX_EXTERN_FUNC) {
    out(p, "R.call_packed(");
    out_str_literal(p, callee->string_imm);
    any = true;
  } else if (callee->kind == TJ_RX_OP) {
    const char *name = callee->op.name;
    if (strncmp(name, "relax.", 6) == 0) outf(p, "R.%s(", name + 6);
    else outf(p, "%s(", name);
  } else {
    rx_expr(p, callee);
    out(p, "(");
  }
  for (int i = 0; i < e->call.n_args; i++) {
    if (any) out(p, ", ");
    const tj_rx_expr_t *a = e->call.args[i];
    if (i == 0 && a->kind == TJ_RX_EXTERN_FUNC) out_str_literal(p, a->string_imm);
    else rx_expr(p, a);
    any = true;
  }
  const tj_attrs_t *attrs = e->call.attrs;
  for (int i = 0; attrs && i < attrs->n; i++) {
    outf(p, "%s%s=", any ? ", " : "", attrs->keys[i]);
    attr_value(p, &attrs->values[i], false);
    any = true;
  }
  if (e->call.n_sinfo_args > 0) {
    outf(p, "%ssinfo_args=(", any ? ", " : "");
    for (int i = 0; i < e->call.n_sinfo_args; i++) {
      if (i) out(p, ", ");
      sinfo(p, e->call.sinfo_args[i]);
    }
    out(p, e->call.n_sinfo_args == 1 ? ",))" : "))");
    return;
  }
  out(p, ")");
}

/* One element of a constant as a Python literal. */
static void const_element(pr_t *p, tj_dtype_t dt, const unsigned char *data, size_t i) {
  switch (dt.code) {
    case TJ_DT_BOOL: out(p, data[i] ? "True" : "False"); return;
    case TJ_DT_BFLOAT: {
      uint16_t b;
      memcpy(&b, data + i * 2, 2);
      out_double(p, tj_bfloat_to_float(b));
      return;
    }
    case TJ_DT_FLOAT: {
      double v = 0;
      if (dt.bits == 16) {
        uint16_t h;
        memcpy(&h, data + i * 2, 2);
        v = tj_half_to_float(h);
      } else if (dt.bits == 32) {
        float f;
        memcpy(&f, data + i * 4, 4);
        v = f;
      } else {
        memcpy(&v, data + i * 8, 8);
      }
      out_double(p, v);
      return;
    }
    case TJ_DT_INT:
    case TJ_DT_UINT: {
      int64_t v = 0;
      const unsigned char *q = data + i * (dt.bits / 8);
      bool u = dt.code == TJ_DT_UINT;
      switch (dt.bits) {
        case 8: v = u ? (int64_t)*(const uint8_t *)q : (int64_t)*(const int8_t *)q; break;
        case 16: { uint16_t x; memcpy(&x, q, 2); v = u ? (int64_t)x : (int64_t)(int16_t)x; break; }
        case 32: { uint32_t x; memcpy(&x, q, 4); v = u ? (int64_t)x : (int64_t)(int32_t)x; break; }
        default: { uint64_t x; memcpy(&x, q, 8); v = (int64_t)x; break; }
      }
      if (u && dt.bits == 64) outf(p, "%llu", (unsigned long long)v);
      else outf(p, "%lld", (long long)v);
      return;
    }
    default: out(p, "0");
  }
}

static void const_nested(pr_t *p, const tj_rx_expr_t *e, int dim, size_t *flat) {
  if (dim == e->constant.ndim) {
    if (e->constant.data) const_element(p, e->constant.dtype, e->constant.data, (*flat)++);
    else out(p, "0");
    return;
  }
  out(p, "[");
  for (int64_t i = 0; i < e->constant.shape[dim]; i++) {
    if (i) out(p, ", ");
    const_nested(p, e, dim + 1, flat);
  }
  out(p, "]");
}

/* Scalars print as TVM prints them (`R.const(1, "float32")`). Larger constants, which
 * TVM keeps in a metadata section, print their values as a nested list, a form
 * R.const also accepts, so the text stays self-contained. */
static void rx_constant(pr_t *p, const tj_rx_expr_t *e) {
  char buf[TJ_DTYPE_BUFSIZE];
  size_t flat = 0;
  size_t elem = tj_dtype_bytes(e->constant.dtype);
  size_t count = 1;
  for (int i = 0; i < e->constant.ndim; i++) count *= (size_t)(e->constant.shape[i] > 0 ? e->constant.shape[i] : 0);
  out(p, "R.const(");
  if (e->constant.data && e->constant.nbytes < count * elem) {
    out(p, "0"); /* malformed: not enough bytes */
  } else {
    const_nested(p, e, 0, &flat);
  }
  outf(p, ", \"%s\")", dtype_name(e->constant.dtype, buf));
}

static void rx_expr(pr_t *p, const tj_rx_expr_t *e) {
  char buf[TJ_DTYPE_BUFSIZE];
  if (!e) {
    out(p, "None");
    return;
  }
  p->used_relax = true;
  switch (e->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: {
      const char *name = doc_of(p, e);
      out(p, name ? name : e->var.name);
      return;
    }
    case TJ_RX_GLOBAL_VAR: global_var(p, e->var.name); return;
    case TJ_RX_CONSTANT: rx_constant(p, e); return;
    case TJ_RX_TUPLE:
      if (e->tuple.n == 0) {
        out(p, "R.tuple()");
        return;
      }
      rx_tuple_fields(p, e);
      return;
    case TJ_RX_TUPLE_GET_ITEM:
      rx_expr(p, e->get_item.tuple);
      outf(p, "[%d]", e->get_item.index);
      return;
    case TJ_RX_CALL: rx_call(p, e); return;
    case TJ_RX_OP:
      if (strncmp(e->op.name, "relax.", 6) == 0) outf(p, "R.%s", e->op.name + 6);
      else out(p, e->op.name);
      return;
    case TJ_RX_SHAPE_EXPR:
      out(p, "R.shape([");
      for (int i = 0; i < e->shape_expr.n; i++) {
        if (i) out(p, ", ");
        rx_prim_expr(p, e->shape_expr.values[i]);
      }
      out(p, "])");
      return;
    case TJ_RX_PRIM_VALUE:
      out(p, "R.prim_value(");
      rx_prim_expr(p, e->prim_value.value);
      out(p, ")");
      return;
    case TJ_RX_STRING_IMM:
      out(p, "R.str(");
      out_str_literal(p, e->string_imm);
      out(p, ")");
      return;
    case TJ_RX_DATA_TYPE_IMM: outf(p, "R.dtype(\"%s\")", dtype_name(e->dtype_imm, buf)); return;
    case TJ_RX_EXTERN_FUNC:
      out(p, "R.ExternFunc(");
      out_str_literal(p, e->string_imm);
      out(p, ")");
      return;
    default: outf(p, "<%s>", tj_rx_expr_kind_name(e->kind)); return;
  }
}

/* ------------------------------------------------------------------------------------ */
/* Relax bindings and functions                                                          */

static void rx_seq_stmts(pr_t *p, const tj_rx_expr_t *seq, int ind, const char *ret_lhs, const tj_sinfo_t *ret_ann,
                         bool use_return);

static bool is_void_sinfo(const tj_sinfo_t *s) { return s && s->kind == TJ_SINFO_TUPLE && s->tuple.n == 0; }

/* TVM prints every binding's struct info except where it is exactly what the call
 * gives anyway: call_tir / call_dps_packed (their out_sinfo). */
static bool hide_annotation(const tj_rx_binding_t *b) {
  const tj_rx_expr_t *v = b->value;
  if (!tj_rx_is_op_call(v, "relax.call_tir") && !tj_rx_is_op_call(v, "relax.call_dps_packed")) return false;
  if (v->call.n_sinfo_args != 1) return false;
  return tj_struct_equal_sinfo(v->call.sinfo_args[0], b->var->sinfo);
}

static void rx_binding(pr_t *p, const tj_rx_binding_t *b, int ind) {
  const tj_rx_expr_t *v = b->value;
  if (v->kind == TJ_RX_IF && !b->match_cast) {
    /* The branch bodies end by assigning the if's var. */
    const char *lhs = define(p, b->var, b->var->var.name, "v");
    indent(p, ind);
    out(p, "if ");
    rx_expr(p, v->if_.cond);
    out(p, ":\n");
    rx_seq_stmts(p, v->if_.then_branch, ind + 1, lhs, b->var->sinfo, false);
    indent(p, ind);
    out(p, "else:\n");
    rx_seq_stmts(p, v->if_.else_branch, ind + 1, lhs, b->var->sinfo, false);
    return;
  }
  if (v->kind == TJ_RX_FUNCTION && !b->match_cast) {
    const char *lhs = define(p, b->var, b->var->var.name, "v");
    rx_func(p, lhs, v->function, ind, false);
    return;
  }
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t rhs;
  tj_strbuf_init(&rhs);
  p->sb = &rhs;
  if (b->match_cast) {
    out(p, "R.match_cast(");
    rx_expr(p, v);
    out(p, ", ");
    sinfo(p, b->match_cast);
    out(p, ")");
  } else {
    rx_expr(p, v);
  }
  bool void_stmt = !b->match_cast && is_void_sinfo(b->var->sinfo) && is_void_sinfo(v->sinfo) &&
                   !tj_map_get(&p->used_vars, b->var);
  tj_strbuf_t ann;
  tj_strbuf_init(&ann);
  if (!void_stmt && b->var->sinfo && (b->match_cast || !hide_annotation(b))) {
    p->sb = &ann;
    sinfo(p, b->var->sinfo);
  }
  p->sb = saved;
  indent(p, ind);
  if (!void_stmt) {
    out(p, define(p, b->var, b->var->var.name, "v"));
    if (ann.data) outf(p, ": %s", ann.data);
    out(p, " = ");
  }
  out(p, rhs.data ? rhs.data : "");
  out(p, "\n");
  if (rhs.failed || ann.failed) p->failed = true;
  tj_strbuf_free(&rhs);
  tj_strbuf_free(&ann);
}

static void rx_block(pr_t *p, const tj_rx_block_t *blk, int ind) {
  if (!blk->is_dataflow) {
    for (int i = 0; i < blk->n_bindings; i++) rx_binding(p, &blk->bindings[i], ind);
    return;
  }
  indent(p, ind);
  out(p, "with R.dataflow():\n");
  for (int i = 0; i < blk->n_bindings; i++) rx_binding(p, &blk->bindings[i], ind + 1);
  indent(p, ind + 1);
  out(p, "R.output(");
  bool first = true;
  for (int i = 0; i < blk->n_bindings; i++) {
    const tj_rx_expr_t *var = blk->bindings[i].var;
    if (var->kind == TJ_RX_DATAFLOW_VAR) continue;
    const char *name = doc_of(p, var);
    outf(p, "%s%s", first ? "" : ", ", name ? name : var->var.name);
    first = false;
  }
  out(p, ")\n");
}

/* A SeqExpr's bindings in a new scope, then `return x`, `lhs: ann = x` (if branches)
 * or the bare result. */
static void rx_seq_stmts(pr_t *p, const tj_rx_expr_t *seq, int ind, const char *ret_lhs, const tj_sinfo_t *ret_ann,
                         bool use_return) {
  int lvl = scope_push(p);
  const tj_rx_expr_t *body = seq;
  if (seq && seq->kind == TJ_RX_SEQ) {
    for (int i = 0; i < seq->seq.n_blocks; i++) rx_block(p, &seq->seq.blocks[i], ind);
    body = seq->seq.body;
  }
  indent(p, ind);
  if (use_return) {
    out(p, "return ");
  } else if (ret_lhs) {
    out(p, ret_lhs);
    if (ret_ann) {
      out(p, ": ");
      sinfo(p, ret_ann);
    }
    out(p, " = ");
  }
  rx_expr(p, body);
  out(p, "\n");
  scope_pop(p, lvl);
}

static const tj_sinfo_t *rx_ret_sinfo(const tj_rx_func_t *f) {
  if (f->ret_sinfo) return f->ret_sinfo;
  return f->body ? f->body->sinfo : NULL;
}

static void rx_decorator(pr_t *p, const tj_rx_func_t *f, bool top_level) {
  bool priv = top_level && !tj_attrs_get(f->attrs, "global_symbol");
  p->used_relax = true;
  out(p, "@R.function");
  if (!f->is_pure && priv) out(p, "(pure=False, private=True)");
  else if (!f->is_pure) out(p, "(pure=False)");
  else if (priv) out(p, "(private=True)");
  out(p, "\n");
}

/* Signature pieces printed first (return type, then params) so that symbolic vars are
 * declared in the order TVM meets them. */
static void rx_signature(pr_t *p, const char *name, const tj_rx_func_t *f, tj_strbuf_t *sig) {
  tj_strbuf_t *saved = p->sb;
  tj_strbuf_t ret;
  tj_strbuf_init(&ret);
  const tj_sinfo_t *rs = rx_ret_sinfo(f);
  if (rs) {
    p->sb = &ret;
    sinfo(p, rs);
  }
  p->sb = sig;
  outf(p, "def %s(", name);
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *v = f->params[i];
    if (i) out(p, ", ");
    out(p, define(p, v, v->var.name, "v"));
    if (v->sinfo) {
      out(p, ": ");
      sinfo(p, v->sinfo);
    }
  }
  out(p, ")");
  if (ret.data) outf(p, " -> %s", ret.data);
  out(p, ":\n");
  p->sb = saved;
  if (ret.failed) p->failed = true;
  tj_strbuf_free(&ret);
}

static bool note_use(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  pr_t *p = v->ctx;
  if (!def && tj_rx_is_var(e) && !tj_map_put(&p->used_vars, e, (void *)e)) p->failed = true;
  return true;
}

static void rx_func(pr_t *p, const char *name, const tj_rx_func_t *f, int ind, bool top_level) {
  tj_rx_visitor_t uses = {.expr = note_use, .ctx = p};
  tj_rx_visit_func(&uses, f);
  bool outermost = p->rx_decls == NULL;
  tj_strbuf_t decls, sig, body;
  tj_strbuf_init(&decls);
  tj_strbuf_init(&sig);
  tj_strbuf_init(&body);
  int lvl = scope_push(p);
  bool saved_cls = p->cls_printed;
  if (outermost) {
    p->rx_decls = &decls;
    p->rx_fn_level = lvl;
    p->rx_fn_indent = ind + 1;
    p->cls_printed = false;
    p->collect_func_vars = true;
  }
  /* TVM defines the function's own name in its frame: a param may not shadow it. */
  define(p, NULL, name, "main");
  rx_signature(p, name, f, &sig);
  p->collect_func_vars = false;
  tj_strbuf_t *saved = p->sb;
  indent(p, ind);
  rx_decorator(p, f, top_level);
  indent(p, ind);
  out(p, sig.data ? sig.data : "");
  /* Declarations made by the signature, then the attrs, then those made by the body. */
  if (outermost && decls.data) {
    out(p, decls.data);
    decls.len = 0;
    decls.data[0] = '\0';
  }
  const tj_attrs_t *attrs = top_level ? attrs_to_print(p, f->attrs, name) : f->attrs;
  if (attrs && attrs->n) {
    indent(p, ind + 1);
    out(p, "R.func_attr(");
    attr_dict(p, attrs, false);
    out(p, ")\n");
  }
  p->sb = &body;
  rx_seq_stmts(p, f->body, ind + 1, NULL, NULL, true);
  p->sb = saved;
  if (outermost && decls.data) out(p, decls.data);
  out(p, body.data ? body.data : "");
  if (decls.failed || sig.failed || body.failed) p->failed = true;
  tj_strbuf_free(&decls);
  tj_strbuf_free(&sig);
  tj_strbuf_free(&body);
  if (outermost) {
    p->rx_decls = NULL;
    p->cls_printed = saved_cls;
    tj_map_free(&p->func_vars);
  }
  scope_pop(p, lvl);
}

/* ------------------------------------------------------------------------------------ */
/* Module                                                                                */

static int func_priority(const tj_func_entry_t *f) {
  if (strcmp(f->name, "main") == 0) return 1000;
  return f->is_prim ? 1 : 3;
}

/* TVM's order: PrimFuncs, then Relax functions, each by name; `main` last. */
static int cmp_funcs(const void *x, const void *y) {
  const tj_func_entry_t *const *a = x, *const *b = y;
  int pa = func_priority(*a), pb = func_priority(*b);
  if (pa != pb) return pa < pb ? -1 : 1;
  return strcmp((*a)->name, (*b)->name);
}

static void module_body(pr_t *p, const tj_module_t *m) {
  const tj_func_entry_t **order = m->n_funcs ? tj_malloc(sizeof *order * (size_t)m->n_funcs) : NULL;
  if (m->n_funcs && !order) {
    p->failed = true;
    return;
  }
  for (int i = 0; i < m->n_funcs; i++) order[i] = &m->funcs[i];
  if (m->n_funcs > 1) qsort(order, (size_t)m->n_funcs, sizeof *order, cmp_funcs);
  outf(p, "@I.ir_module\nclass %s:\n", p->module_name);
  if (m->attrs && m->attrs->n) {
    indent(p, 1);
    out(p, "I.module_attrs(");
    attr_dict(p, m->attrs, false);
    out(p, ")\n");
  }
  for (int i = 0; i < m->n_funcs; i++) {
    if (i) out(p, "\n");
    if (order[i]->is_prim) print_prim_func(p, order[i]->name, order[i]->prim, 1);
    else rx_func(p, order[i]->name, order[i]->relax, 1, true);
  }
  if (m->n_funcs == 0) {
    indent(p, 1);
    out(p, "pass\n");
  }
  tj_free(order);
}

char *tj_print_module(const tj_module_t *m) {
  tj_strbuf_t body;
  tj_strbuf_init(&body);
  pr_t p;
  pr_init(&p, &body);
  p.mod = m;
  if (!p.failed) module_body(&p, m);
  bool failed = p.failed || body.failed;
  tj_strbuf_t whole;
  tj_strbuf_init(&whole);
  tj_strbuf_append(&whole, "# from tvm.script import ir as I\n");
  if (p.used_tir) tj_strbuf_append(&whole, "# from tvm.script import tir as T\n");
  if (p.used_relax) tj_strbuf_append(&whole, "# from tvm.script import relax as R\n");
  tj_strbuf_append(&whole, "\n");
  if (body.data) tj_strbuf_append(&whole, body.data);
  pr_done(&p);
  tj_strbuf_free(&body);
  if (failed) {
    tj_strbuf_free(&whole);
    return NULL;
  }
  return tj_strbuf_take(&whole);
}

/* ---- fragments ------------------------------------------------------------------------ */

void tj_print_prim_func(tj_strbuf_t *sb, const char *name, const tj_prim_func_t *f) {
  pr_t p;
  pr_init(&p, sb);
  if (!p.failed) print_prim_func(&p, name, f, 0);
  if (p.failed) sb->failed = true;
  pr_done(&p);
}

void tj_print_tir_expr(tj_strbuf_t *sb, const tj_tir_expr_t *e) {
  pr_t p;
  pr_init(&p, sb);
  p.standalone = true;
  if (!p.failed) tir_expr(&p, e);
  if (p.failed) sb->failed = true;
  pr_done(&p);
}

void tj_print_tir_stmt(tj_strbuf_t *sb, const tj_tir_stmt_t *s, int ind) {
  pr_t p;
  pr_init(&p, sb);
  p.standalone = true;
  if (!p.failed) tir_stmt(&p, s, ind, true);
  if (p.failed) sb->failed = true;
  pr_done(&p);
}

void tj_print_sinfo(tj_strbuf_t *sb, const tj_sinfo_t *s) {
  pr_t p;
  pr_init(&p, sb);
  p.standalone = true;
  if (!p.failed) sinfo(&p, s);
  if (p.failed) sb->failed = true;
  pr_done(&p);
}

void tj_print_rx_expr(tj_strbuf_t *sb, const tj_rx_expr_t *e) {
  pr_t p;
  pr_init(&p, sb);
  p.standalone = true;
  if (!p.failed) rx_expr(&p, e);
  if (p.failed) sb->failed = true;
  pr_done(&p);
}

void tj_print_sinfo_short(tj_strbuf_t *sb, const tj_sinfo_t *s) { tj_sinfo_format_short(sb, s); }
