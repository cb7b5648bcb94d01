/* Internal to the TVMScript reader: the source/error context, the tokenizer and the
 * Python-subset syntax tree (ir/parse_lex.c, ir/parse_ast.c). The reader works in two
 * steps, like TVM's own: Python text -> syntax tree -> IR (ir/parse_tir.c,
 * ir/parse_relax.c, ir/parse.c). Not a public interface.
 *
 * Errors unwind with longjmp to tj_parse_module: every allocation of the reader is
 * arena-owned (the syntax tree in a scratch arena freed at the end, IR nodes in the
 * caller's arena), so unwinding leaks nothing and the builders need no error plumbing. */
#ifndef TJ_IR_PARSE_AST_H
#define TJ_IR_PARSE_AST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/vec.h"
#include "support/arena.h"
#include "support/status.h"

enum { TJ_PARSE_MAX_DEPTH = 200 };

typedef struct tj_src_pos {
  int line, col; /* 1-based; col counts bytes */
  size_t off;
} tj_src_pos_t;

typedef struct tj_parse_src {
  const char *filename;
  const char *text;
  size_t len;
  tj_arena_t *scratch; /* syntax tree and temporaries */
  jmp_buf *on_error;
  tj_status_t *error;  /* set before the longjmp */
} tj_parse_src_t;

/* Records a TJ_ERR_PARSE status "file:line:col: message" + source line + caret, then
 * unwinds to the reader's entry point. */
_Noreturn void tj_parse_fail(tj_parse_src_t *src, tj_src_pos_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with another status code (TJ_ERR_UNSUPPORTED: valid TVMScript that tvmjit
 * does not handle, such as an operator it lacks). */
_Noreturn void tj_parse_fail_code(tj_parse_src_t *src, tj_code_t code, tj_src_pos_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Unwinds with "out of memory" when p is NULL; returns p otherwise. */
void *tj_parse_check(tj_parse_src_t *src, const void *p);

/* ---- tokens ---- */
typedef enum tj_tok_kind {
  TJ_TK_EOF,
  TJ_TK_NEWLINE,
  TJ_TK_INDENT,
  TJ_TK_DEDENT,
  TJ_TK_NAME,
  TJ_TK_INT,
  TJ_TK_FLOAT,
  TJ_TK_STRING,
  TJ_TK_OP,
} tj_tok_kind_t;

typedef struct tj_tok {
  tj_tok_kind_t kind;
  tj_src_pos_t pos;
  const char *text; /* NAME/OP spelling, STRING decoded value (scratch arena) */
  int64_t ival;
  double fval;
  bool int_too_big; /* INT literal beyond int64 */
} tj_tok_t;

/* Tokenizes the whole source (Python layout: NEWLINE, INDENT, DEDENT; newlines inside
 * brackets and after a backslash are joined; comments dropped). Ends with EOF. */
void tj_lex(tj_parse_src_t *src, tj_tok_t **out_toks, int *out_n);

/* ---- syntax tree ---- */
typedef enum tj_py_kind {
  /* expressions */
  PY_NAME, PY_INT, PY_FLOAT, PY_STR, PY_CONST, /* CONST: s = "True" | "False" | "None" */
  PY_ATTR, PY_CALL, PY_SUBSCRIPT, PY_SLICE, PY_TUPLE, PY_LIST, PY_DICT,
  PY_BINOP, PY_UNARY, PY_COMPARE, PY_BOOLOP, PY_STARRED, PY_IFEXP,
  /* statements */
  PY_EXPR_STMT, PY_ASSIGN, PY_ANNASSIGN, PY_AUGASSIGN, PY_FOR, PY_WITH, PY_IF, PY_WHILE,
  PY_RETURN, PY_PASS, PY_DEF, PY_CLASS, PY_IMPORT, PY_ASSERT, PY_PARAM,
} tj_py_kind_t;

typedef struct tj_py tj_py_t;
/* One node shape for every kind; the fields used per kind:
 *  NAME s | INT i (big: too large) | FLOAT f | STR s | CONST s | ATTR a.s
 *  CALL a(args items[n], kw values items2[n2] named kw[n2]) | SUBSCRIPT a[items]
 *  SLICE a:b:c (each may be NULL) | TUPLE/LIST items | DICT keys items, values items2
 *  BINOP a s b | UNARY s a | COMPARE items[n] with ops kw[n-1] | BOOLOP s items
 *  STARRED *a | IFEXP b if a else c
 *  EXPR_STMT a | ASSIGN items(targets) = a | ANNASSIGN a: b [= c] | AUGASSIGN a s= b
 *  FOR a in b: items | WITH a [as b]: items | IF a: items else items2 | WHILE a: items
 *  RETURN [a] | DEF s(params[np]) -> b: items, decorators decos[nd]
 *  CLASS s: items, decorators decos[nd] | PARAM s: a = b | ASSERT a, b */
struct tj_py {
  tj_py_kind_t kind;
  tj_src_pos_t pos;
  const char *s;
  int64_t i;
  double f;
  bool big;
  const tj_py_t *a, *b, *c;
  int n, n2, np, nd;
  const tj_py_t *const *items;
  const tj_py_t *const *items2;
  const char *const *kw;
  const tj_py_t *const *params;
  const tj_py_t *const *decos;
};

/* Parses the token stream into a module body (list of statements). */
void tj_py_parse(tj_parse_src_t *src, const tj_tok_t *toks, int n_toks, const tj_py_t *const **out_stmts,
                 int *out_n);

/* Dotted name of a NAME/ATTR chain ("T.axis.remap") in scratch memory, or NULL. */
const char *tj_py_dotted(tj_parse_src_t *src, const tj_py_t *e);
const char *tj_py_kind_name(tj_py_kind_t kind);

/* The parser's pointer arrays are support/vec.h vectors in the scratch arena; this
 * push turns an allocation failure into the parser's out-of-memory exit. */
typedef tj_ptr_vec_t tj_ptrvec_t;
void tj_ptrvec_push(tj_parse_src_t *src, tj_ptrvec_t *v, const void *p);

#endif
