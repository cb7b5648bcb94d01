/* Recursive-descent parser for the Python subset TVMScript is written in. It knows no
 * TVM names: it only builds the syntax tree (ir/parse_ast.h). */
#include <stdio.h>
#include <string.h>

#include "ir/text/parse_ast.h"

typedef struct pyparser {
  tj_parse_src_t *src;
  const tj_tok_t *toks;
  int n, i;
  int depth;
} pyparser_t;

static const char *const keywords[] = {"and", "as", "assert", "break", "class", "continue", "def", "del",
                                       "elif", "else", "except", "finally", "for", "from", "global", "if",
                                       "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
                                       "raise", "return", "try", "while", "with", "yield", "True", "False",
                                       "None", "async", "await", NULL};

static bool is_keyword(const char *s) {
  for (int k = 0; keywords[k]; k++)
    if (strcmp(s, keywords[k]) == 0) return true;
  return false;
}

static const tj_tok_t *cur(const pyparser_t *p) { return &p->toks[p->i < p->n ? p->i : p->n - 1]; }
static void advance(pyparser_t *p) {
  if (p->i < p->n - 1) p->i++;
}

static bool is_op(const pyparser_t *p, const char *op) {
  return cur(p)->kind == TJ_TK_OP && strcmp(cur(p)->text, op) == 0;
}
static bool is_kw(const pyparser_t *p, const char *kw) {
  return cur(p)->kind == TJ_TK_NAME && strcmp(cur(p)->text, kw) == 0;
}
static bool accept_op(pyparser_t *p, const char *op) {
  if (!is_op(p, op)) return false;
  advance(p);
  return true;
}
static bool accept_kw(pyparser_t *p, const char *kw) {
  if (!is_kw(p, kw)) return false;
  advance(p);
  return true;
}

static const char *describe(const tj_tok_t *t) {
  switch (t->kind) {
    case TJ_TK_EOF: return "end of file";
    case TJ_TK_NEWLINE: return "end of line";
    case TJ_TK_INDENT: return "an indented block";
    case TJ_TK_DEDENT: return "the end of the indented block";
    case TJ_TK_INT: case TJ_TK_FLOAT: return "a number";
    case TJ_TK_STRING: return "a string";
    default: return NULL;
  }
}

_Noreturn static void fail_expected(pyparser_t *p, const char *what) {
  const tj_tok_t *t = cur(p);
  const char *d = describe(t);
  if (d) tj_parse_fail(p->src, t->pos, "expected %s, found %s", what, d);
  tj_parse_fail(p->src, t->pos, "expected %s, found '%s'", what, t->text);
}

static void expect_op(pyparser_t *p, const char *op) {
  if (accept_op(p, op)) return;
  char what[16];
  snprintf(what, sizeof what, "'%s'", op);
  fail_expected(p, what);
}

/* Closing bracket with a message naming where it was opened. */
static void expect_close(pyparser_t *p, const char *close, const tj_tok_t *open) {
  if (accept_op(p, close)) return;
  const tj_tok_t *t = cur(p);
  const char *d = describe(t);
  tj_parse_fail(p->src, t->pos, "expected '%s' to close '%s' at %d:%d, found %s%s%s", close, open->text,
                open->pos.line, open->pos.col, d ? "" : "'", d ? d : t->text, d ? "" : "'");
}

static const char *expect_name(pyparser_t *p, const char *what) {
  const tj_tok_t *t = cur(p);
  if (t->kind != TJ_TK_NAME || is_keyword(t->text)) fail_expected(p, what);
  advance(p);
  return t->text;
}

static tj_py_t *node(pyparser_t *p, tj_py_kind_t kind, tj_src_pos_t pos) {
  tj_py_t *e = tj_parse_check(p->src, tj_arena_alloc(p->src->scratch, sizeof(tj_py_t)));
  e->kind = kind;
  e->pos = pos;
  return e;
}

static const tj_py_t *const *vec_items(const tj_ptrvec_t *v) { return (const tj_py_t *const *)v->items; }

static void enter(pyparser_t *p) {
  if (++p->depth > TJ_PARSE_MAX_DEPTH) tj_parse_fail(p->src, cur(p)->pos, "expression or block nested too deeply (more than %d levels); split it with intermediate variables",
                                                    TJ_PARSE_MAX_DEPTH);
}
static void leave(pyparser_t *p) { p->depth--; }

/* ---- expressions ---- */

static const tj_py_t *parse_test(pyparser_t *p);
static const tj_py_t *parse_or(pyparser_t *p);

static bool starts_expr(const pyparser_t *p) {
  const tj_tok_t *t = cur(p);
  if (t->kind == TJ_TK_NAME) return !is_keyword(t->text) || !strcmp(t->text, "not") || !strcmp(t->text, "True") ||
                                    !strcmp(t->text, "False") || !strcmp(t->text, "None") || !strcmp(t->text, "lambda");
  if (t->kind == TJ_TK_INT || t->kind == TJ_TK_FLOAT || t->kind == TJ_TK_STRING) return true;
  return t->kind == TJ_TK_OP && (strchr("([{-+~*", t->text[0]) != NULL || !strcmp(t->text, "..."));
}

/* Comma-separated items up to `close`; sets *trailing when a comma ended the list. */
static bool at_line_end(const pyparser_t *p) {
  tj_tok_kind_t k = cur(p)->kind;
  return k == TJ_TK_EOF || k == TJ_TK_NEWLINE || k == TJ_TK_DEDENT || k == TJ_TK_INDENT;
}

static void parse_items(pyparser_t *p, const char *close, const tj_tok_t *open, tj_ptrvec_t *v, bool *trailing) {
  *trailing = false;
  while (!is_op(p, close)) {
    if (at_line_end(p)) expect_close(p, close, open);
    if (is_op(p, "*")) {
      tj_py_t *s = node(p, PY_STARRED, cur(p)->pos);
      advance(p);
      s->a = parse_or(p);
      tj_ptrvec_push(p->src, v, s);
    } else {
      tj_ptrvec_push(p->src, v, parse_test(p));
    }
    *trailing = false;
    if (!accept_op(p, ",")) break;
    *trailing = true;
  }
  expect_close(p, close, open);
}

static const tj_py_t *parse_dict(pyparser_t *p, const tj_tok_t *open) {
  tj_py_t *d = node(p, PY_DICT, open->pos);
  tj_ptrvec_t keys = {0}, vals = {0};
  while (!is_op(p, "}")) {
    if (at_line_end(p)) expect_close(p, "}", open);
    tj_ptrvec_push(p->src, &keys, parse_test(p));
    expect_op(p, ":");
    tj_ptrvec_push(p->src, &vals, parse_test(p));
    if (!accept_op(p, ",")) break;
  }
  expect_close(p, "}", open);
  d->n = d->n2 = keys.n;
  d->items = vec_items(&keys);
  d->items2 = vec_items(&vals);
  return d;
}

static const tj_py_t *parse_atom(pyparser_t *p) {
  const tj_tok_t *t = cur(p);
  tj_py_t *e;
  switch (t->kind) {
    case TJ_TK_INT:
      e = node(p, PY_INT, t->pos);
      e->i = t->ival;
      e->f = t->fval;
      e->big = t->int_too_big;
      e->s = t->text;
      advance(p);
      return e;
    case TJ_TK_FLOAT:
      e = node(p, PY_FLOAT, t->pos);
      e->f = t->fval;
      e->s = t->text;
      advance(p);
      return e;
    case TJ_TK_STRING: {
      e = node(p, PY_STR, t->pos);
      e->s = t->text;
      advance(p);
      while (cur(p)->kind == TJ_TK_STRING) { /* implicit concatenation */
        e->s = tj_parse_check(p->src, tj_arena_printf(p->src->scratch, "%s%s", e->s, cur(p)->text));
        advance(p);
      }
      return e;
    }
    case TJ_TK_NAME:
      if (!strcmp(t->text, "True") || !strcmp(t->text, "False") || !strcmp(t->text, "None")) {
        e = node(p, PY_CONST, t->pos);
        e->s = t->text;
        advance(p);
        return e;
      }
      if (is_keyword(t->text)) fail_expected(p, "an expression");
      e = node(p, PY_NAME, t->pos);
      e->s = t->text;
      advance(p);
      return e;
    case TJ_TK_OP:
      if (!strcmp(t->text, "(") || !strcmp(t->text, "[")) {
        bool paren = t->text[0] == '(';
        advance(p);
        tj_ptrvec_t v = {0};
        bool trailing;
        parse_items(p, paren ? ")" : "]", t, &v, &trailing);
        if (paren && v.n == 1 && !trailing && ((const tj_py_t *)v.items[0])->kind != PY_STARRED)
          return v.items[0]; /* parenthesised expression */
        e = node(p, paren ? PY_TUPLE : PY_LIST, t->pos);
        e->n = v.n;
        e->items = vec_items(&v);
        return e;
      }
      if (!strcmp(t->text, "{")) {
        advance(p);
        return parse_dict(p, t);
      }
      if (!strcmp(t->text, "...")) {
        e = node(p, PY_CONST, t->pos);
        e->s = "...";
        advance(p);
        return e;
      }
      break;
    default:
      break;
  }
  fail_expected(p, "an expression");
}

static void parse_call_args(pyparser_t *p, tj_py_t *call, const tj_tok_t *open) {
  tj_ptrvec_t args = {0}, kwv = {0}, kwn = {0};
  while (!is_op(p, ")")) {
    if (at_line_end(p)) expect_close(p, ")", open);
    if (is_op(p, "*") || is_op(p, "**")) {
      if (is_op(p, "**")) tj_parse_fail(p->src, cur(p)->pos, "'**' arguments are not supported in TVMScript");
      tj_py_t *s = node(p, PY_STARRED, cur(p)->pos);
      advance(p);
      s->a = parse_test(p);
      tj_ptrvec_push(p->src, &args, s);
    } else if (cur(p)->kind == TJ_TK_NAME && p->i + 1 < p->n && p->toks[p->i + 1].kind == TJ_TK_OP &&
               !strcmp(p->toks[p->i + 1].text, "=")) {
      const tj_tok_t *name = cur(p);
      for (int k = 0; k < kwn.n; k++)
        if (!strcmp(kwn.items[k], name->text))
          tj_parse_fail(p->src, name->pos, "keyword argument '%s' repeated", name->text);
      tj_ptrvec_push(p->src, &kwn, expect_name(p, "a keyword name"));
      advance(p);
      tj_ptrvec_push(p->src, &kwv, parse_test(p));
    } else {
      if (kwv.n) tj_parse_fail(p->src, cur(p)->pos, "positional argument follows keyword argument");
      tj_ptrvec_push(p->src, &args, parse_test(p));
    }
    if (!accept_op(p, ",")) break;
  }
  expect_close(p, ")", open);
  call->n = args.n;
  call->items = vec_items(&args);
  call->n2 = kwv.n;
  call->items2 = vec_items(&kwv);
  call->kw = (const char *const *)kwn.items;
}

static const tj_py_t *parse_subscript_item(pyparser_t *p) {
  tj_src_pos_t pos = cur(p)->pos;
  const tj_py_t *lo = NULL;
  if (!is_op(p, ":")) lo = parse_test(p);
  if (!is_op(p, ":")) return lo;
  advance(p);
  tj_py_t *s = node(p, PY_SLICE, pos);
  s->a = lo;
  if (!is_op(p, ":") && !is_op(p, ",") && !is_op(p, "]")) s->b = parse_test(p);
  if (accept_op(p, ":") && !is_op(p, ",") && !is_op(p, "]")) s->c = parse_test(p);
  return s;
}

static const tj_py_t *parse_trailers(pyparser_t *p, const tj_py_t *e) {
  int chain = 0;
  for (;;) {
    if (++chain > TJ_PARSE_MAX_DEPTH * 8) tj_parse_fail(p->src, cur(p)->pos, "expression too long");
    const tj_tok_t *t = cur(p);
    if (accept_op(p, "(")) {
      tj_py_t *c = node(p, PY_CALL, e->pos);
      c->a = e;
      parse_call_args(p, c, t);
      e = c;
    } else if (accept_op(p, "[")) {
      tj_py_t *s = node(p, PY_SUBSCRIPT, e->pos);
      s->a = e;
      tj_ptrvec_t v = {0};
      while (!is_op(p, "]")) {
        if (at_line_end(p)) expect_close(p, "]", t);
        tj_ptrvec_push(p->src, &v, parse_subscript_item(p));
        if (!accept_op(p, ",")) break;
      }
      expect_close(p, "]", t);
      if (v.n == 0) tj_parse_fail(p->src, t->pos, "empty subscript");
      s->n = v.n;
      s->items = vec_items(&v);
      if (v.n == 1 && ((const tj_py_t *)v.items[0])->kind == PY_TUPLE) { /* A[()] and A[(i, j)] */
        s->n = ((const tj_py_t *)v.items[0])->n;
        s->items = ((const tj_py_t *)v.items[0])->items;
      }
      e = s;
    } else if (accept_op(p, ".")) {
      tj_py_t *a = node(p, PY_ATTR, e->pos);
      a->a = e;
      a->s = expect_name(p, "an attribute name after '.'");
      e = a;
    } else {
      return e;
    }
  }
}

static const tj_py_t *parse_factor(pyparser_t *p);

static const tj_py_t *parse_power(pyparser_t *p) {
  const tj_py_t *e = parse_trailers(p, parse_atom(p));
  if (is_op(p, "**")) {
    tj_py_t *b = node(p, PY_BINOP, cur(p)->pos);
    advance(p);
    b->s = "**";
    b->a = e;
    b->b = parse_factor(p);
    return b;
  }
  return e;
}

static const tj_py_t *parse_factor(pyparser_t *p) {
  if (is_op(p, "-") || is_op(p, "+") || is_op(p, "~")) {
    tj_py_t *u = node(p, PY_UNARY, cur(p)->pos);
    u->s = cur(p)->text;
    advance(p);
    enter(p);
    u->a = parse_factor(p);
    leave(p);
    return u;
  }
  enter(p);
  const tj_py_t *e = parse_power(p);
  leave(p);
  return e;
}

typedef const tj_py_t *(*parse_fn)(pyparser_t *p);

/* Left-associative binary level over the listed operators. */
static const tj_py_t *parse_binary(pyparser_t *p, parse_fn next, const char *const *ops) {
  const tj_py_t *e = next(p);
  for (;;) {
    const char *op = NULL;
    for (int k = 0; ops[k]; k++)
      if (is_op(p, ops[k])) op = ops[k];
    if (!op) return e;
    tj_py_t *b = node(p, PY_BINOP, cur(p)->pos);
    advance(p);
    b->s = op;
    b->a = e;
    b->b = next(p);
    e = b;
  }
}

static const tj_py_t *parse_term(pyparser_t *p) {
  static const char *const ops[] = {"*", "/", "//", "%", "@", NULL};
  return parse_binary(p, parse_factor, ops);
}
static const tj_py_t *parse_arith(pyparser_t *p) {
  static const char *const ops[] = {"+", "-", NULL};
  return parse_binary(p, parse_term, ops);
}
static const tj_py_t *parse_shift(pyparser_t *p) {
  static const char *const ops[] = {"<<", ">>", NULL};
  return parse_binary(p, parse_arith, ops);
}
static const tj_py_t *parse_bitand(pyparser_t *p) {
  static const char *const ops[] = {"&", NULL};
  return parse_binary(p, parse_shift, ops);
}
static const tj_py_t *parse_bitxor(pyparser_t *p) {
  static const char *const ops[] = {"^", NULL};
  return parse_binary(p, parse_bitand, ops);
}
static const tj_py_t *parse_bitor(pyparser_t *p) {
  static const char *const ops[] = {"|", NULL};
  return parse_binary(p, parse_bitxor, ops);
}

static const char *compare_op(pyparser_t *p) {
  static const char *const ops[] = {"<", ">", "==", ">=", "<=", "!=", NULL};
  for (int k = 0; ops[k]; k++)
    if (is_op(p, ops[k])) {
      advance(p);
      return ops[k];
    }
  if (accept_kw(p, "in")) return "in";
  if (is_kw(p, "not") && p->i + 1 < p->n && p->toks[p->i + 1].kind == TJ_TK_NAME &&
      !strcmp(p->toks[p->i + 1].text, "in")) {
    advance(p);
    advance(p);
    return "not in";
  }
  if (accept_kw(p, "is")) return accept_kw(p, "not") ? "is not" : "is";
  return NULL;
}

static const tj_py_t *parse_comparison(pyparser_t *p) {
  const tj_py_t *first = parse_bitor(p);
  tj_src_pos_t pos = cur(p)->pos;
  const char *op = compare_op(p);
  if (!op) return first;
  tj_py_t *c = node(p, PY_COMPARE, pos);
  tj_ptrvec_t operands = {0}, ops = {0};
  tj_ptrvec_push(p->src, &operands, first);
  while (op) {
    tj_ptrvec_push(p->src, &ops, op);
    tj_ptrvec_push(p->src, &operands, parse_bitor(p));
    op = compare_op(p);
  }
  c->n = operands.n;
  c->items = vec_items(&operands);
  c->kw = (const char *const *)ops.items;
  return c;
}

static const tj_py_t *parse_not(pyparser_t *p) {
  if (is_kw(p, "not")) {
    tj_py_t *u = node(p, PY_UNARY, cur(p)->pos);
    advance(p);
    u->s = "not";
    enter(p);
    u->a = parse_not(p);
    leave(p);
    return u;
  }
  return parse_comparison(p);
}

static const tj_py_t *parse_boolop(pyparser_t *p, const char *kw, parse_fn next) {
  const tj_py_t *first = next(p);
  if (!is_kw(p, kw)) return first;
  tj_py_t *b = node(p, PY_BOOLOP, cur(p)->pos);
  b->s = kw;
  tj_ptrvec_t v = {0};
  tj_ptrvec_push(p->src, &v, first);
  while (accept_kw(p, kw)) tj_ptrvec_push(p->src, &v, next(p));
  b->n = v.n;
  b->items = vec_items(&v);
  return b;
}

static const tj_py_t *parse_and(pyparser_t *p) { return parse_boolop(p, "and", parse_not); }
static const tj_py_t *parse_or(pyparser_t *p) { return parse_boolop(p, "or", parse_and); }

static const tj_py_t *parse_test(pyparser_t *p) {
  if (is_kw(p, "lambda")) tj_parse_fail(p->src, cur(p)->pos, "lambda is not supported in TVMScript");
  enter(p);
  const tj_py_t *e = parse_or(p);
  if (is_kw(p, "if")) {
    tj_py_t *c = node(p, PY_IFEXP, cur(p)->pos);
    advance(p);
    c->b = e;
    c->a = parse_or(p);
    if (!accept_kw(p, "else")) fail_expected(p, "'else' of the conditional expression");
    c->c = parse_test(p);
    e = c;
  }
  leave(p);
  return e;
}

/* `a, b` without brackets (an implicit tuple), or a single expression. */
static const tj_py_t *parse_testlist(pyparser_t *p) {
  tj_src_pos_t pos = cur(p)->pos;
  const tj_py_t *first;
  if (is_op(p, "*")) {
    tj_py_t *s = node(p, PY_STARRED, pos);
    advance(p);
    s->a = parse_or(p);
    first = s;
  } else {
    first = parse_test(p);
  }
  if (!is_op(p, ",")) return first;
  tj_ptrvec_t v = {0};
  tj_ptrvec_push(p->src, &v, first);
  while (accept_op(p, ",")) {
    if (!starts_expr(p)) break;
    tj_ptrvec_push(p->src, &v, parse_test(p));
  }
  tj_py_t *t = node(p, PY_TUPLE, pos);
  t->n = v.n;
  t->items = vec_items(&v);
  return t;
}

/* `for` targets: names or tuples of names, parsed below comparisons so that `in`
 * ends them. */
static const tj_py_t *parse_target_list(pyparser_t *p) {
  tj_src_pos_t pos = cur(p)->pos;
  const tj_py_t *first = parse_bitor(p);
  if (!is_op(p, ",")) return first;
  tj_ptrvec_t v = {0};
  tj_ptrvec_push(p->src, &v, first);
  while (accept_op(p, ",")) {
    if (is_kw(p, "in")) break;
    tj_ptrvec_push(p->src, &v, parse_bitor(p));
  }
  tj_py_t *t = node(p, PY_TUPLE, pos);
  t->n = v.n;
  t->items = vec_items(&v);
  return t;
}

/* ---- statements ---- */

static const tj_py_t *parse_stmt_list(pyparser_t *p, tj_ptrvec_t *out);

static void expect_newline(pyparser_t *p) {
  if (cur(p)->kind == TJ_TK_NEWLINE) {
    advance(p);
    return;
  }
  if (cur(p)->kind == TJ_TK_EOF || cur(p)->kind == TJ_TK_DEDENT) return;
  fail_expected(p, "end of line");
}

/* `:` then either a simple statement on the same line or an indented block. */
static void parse_suite(pyparser_t *p, const char *what, int *out_n, const tj_py_t *const **out_items) {
  expect_op(p, ":");
  tj_ptrvec_t body = {0};
  if (cur(p)->kind != TJ_TK_NEWLINE) {
    parse_stmt_list(p, &body);
  } else {
    advance(p);
    if (cur(p)->kind != TJ_TK_INDENT) {
      char msg[64];
      snprintf(msg, sizeof msg, "an indented block after %s", what);
      fail_expected(p, msg);
    }
    advance(p);
    enter(p);
    while (cur(p)->kind != TJ_TK_DEDENT && cur(p)->kind != TJ_TK_EOF) parse_stmt_list(p, &body);
    leave(p);
    if (cur(p)->kind == TJ_TK_DEDENT) advance(p);
  }
  *out_n = body.n;
  *out_items = vec_items(&body);
}

static void skip_import(pyparser_t *p) {
  while (cur(p)->kind != TJ_TK_NEWLINE && cur(p)->kind != TJ_TK_EOF && !is_op(p, ";")) advance(p);
}

static const tj_py_t *parse_small_stmt(pyparser_t *p) {
  const tj_tok_t *t = cur(p);
  if (accept_kw(p, "pass")) return node(p, PY_PASS, t->pos);
  if (is_kw(p, "import") || is_kw(p, "from")) {
    skip_import(p);
    return node(p, PY_IMPORT, t->pos);
  }
  if (accept_kw(p, "return")) {
    tj_py_t *r = node(p, PY_RETURN, t->pos);
    if (starts_expr(p)) r->a = parse_testlist(p);
    return r;
  }
  if (accept_kw(p, "assert")) {
    tj_py_t *r = node(p, PY_ASSERT, t->pos);
    r->a = parse_test(p);
    if (accept_op(p, ",")) r->b = parse_test(p);
    return r;
  }
  if (t->kind == TJ_TK_NAME && is_keyword(t->text) && !starts_expr(p))
    tj_parse_fail(p->src, t->pos, "'%s' is not supported in TVMScript here", t->text);
  const tj_py_t *first = parse_testlist(p);
  if (accept_op(p, ":")) {
    tj_py_t *a = node(p, PY_ANNASSIGN, first->pos);
    a->a = first;
    a->b = parse_test(p);
    if (accept_op(p, "=")) a->c = parse_testlist(p);
    return a;
  }
  static const char *const aug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", NULL};
  for (int k = 0; aug[k]; k++)
    if (is_op(p, aug[k])) {
      tj_py_t *a = node(p, PY_AUGASSIGN, first->pos);
      advance(p);
      a->s = aug[k];
      a->a = first;
      a->b = parse_testlist(p);
      return a;
    }
  if (!is_op(p, "=")) {
    tj_py_t *e = node(p, PY_EXPR_STMT, first->pos);
    e->a = first;
    return e;
  }
  tj_ptrvec_t targets = {0};
  const tj_py_t *value = first;
  while (accept_op(p, "=")) {
    tj_ptrvec_push(p->src, &targets, value);
    value = parse_testlist(p);
  }
  tj_py_t *a = node(p, PY_ASSIGN, first->pos);
  a->n = targets.n;
  a->items = vec_items(&targets);
  a->a = value;
  return a;
}

static const tj_py_t *parse_params(pyparser_t *p, tj_py_t *def) {
  const tj_tok_t *open = cur(p);
  expect_op(p, "(");
  tj_ptrvec_t v = {0};
  while (!is_op(p, ")")) {
    if (at_line_end(p)) expect_close(p, ")", open);
    if (is_op(p, "*") || is_op(p, "**") || is_op(p, "/"))
      tj_parse_fail(p->src, cur(p)->pos, "'*', '**' and '/' parameters are not supported in TVMScript");
    tj_py_t *param = node(p, PY_PARAM, cur(p)->pos);
    param->s = expect_name(p, "a parameter name");
    if (accept_op(p, ":")) param->a = parse_test(p);
    if (accept_op(p, "=")) param->b = parse_test(p);
    for (int k = 0; k < v.n; k++)
      if (!strcmp(((const tj_py_t *)v.items[k])->s, param->s))
        tj_parse_fail(p->src, param->pos, "duplicate parameter '%s'", param->s);
    tj_ptrvec_push(p->src, &v, param);
    if (!accept_op(p, ",")) break;
  }
  expect_close(p, ")", open);
  def->np = v.n;
  def->params = vec_items(&v);
  return def;
}

static const tj_py_t *parse_decorated(pyparser_t *p) {
  tj_ptrvec_t decos = {0};
  while (is_op(p, "@")) {
    advance(p);
    tj_ptrvec_push(p->src, &decos, parse_test(p));
    if (cur(p)->kind != TJ_TK_NEWLINE) fail_expected(p, "end of line after the decorator");
    advance(p);
  }
  const tj_tok_t *t = cur(p);
  tj_py_t *d;
  if (accept_kw(p, "def")) {
    d = node(p, PY_DEF, t->pos);
    d->s = expect_name(p, "a function name");
    parse_params(p, d);
    if (accept_op(p, "->")) d->b = parse_test(p);
    parse_suite(p, "the function definition", &d->n, &d->items);
  } else if (accept_kw(p, "class")) {
    d = node(p, PY_CLASS, t->pos);
    d->s = expect_name(p, "a class name");
    if (accept_op(p, "(")) {
      while (!is_op(p, ")") && cur(p)->kind != TJ_TK_EOF) advance(p);
      expect_op(p, ")");
    }
    parse_suite(p, "the class definition", &d->n, &d->items);
  } else {
    fail_expected(p, decos.n ? "'def' or 'class' after the decorator" : "'def' or 'class'");
  }
  d->nd = decos.n;
  d->decos = vec_items(&decos);
  return d;
}

static const tj_py_t *parse_if(pyparser_t *p) {
  tj_py_t *s = node(p, PY_IF, cur(p)->pos);
  advance(p); /* if / elif */
  s->a = parse_test(p);
  parse_suite(p, "'if'", &s->n, &s->items);
  if (is_kw(p, "elif")) {
    enter(p);
    const tj_py_t *nested = parse_if(p);
    leave(p);
    s->n2 = 1;
    const tj_py_t **one = tj_parse_check(p->src, tj_arena_alloc(p->src->scratch, sizeof(void *)));
    one[0] = nested;
    s->items2 = one;
  } else if (accept_kw(p, "else")) {
    parse_suite(p, "'else'", &s->n2, &s->items2);
  }
  return s;
}

static const tj_py_t *parse_compound(pyparser_t *p) {
  const tj_tok_t *t = cur(p);
  if (is_op(p, "@") || is_kw(p, "def") || is_kw(p, "class")) return parse_decorated(p);
  if (is_kw(p, "if")) return parse_if(p);
  if (accept_kw(p, "for")) {
    tj_py_t *s = node(p, PY_FOR, t->pos);
    s->a = parse_target_list(p);
    if (!accept_kw(p, "in")) fail_expected(p, "'in'");
    s->b = parse_testlist(p);
    parse_suite(p, "'for'", &s->n, &s->items);
    return s;
  }
  if (accept_kw(p, "while")) {
    tj_py_t *s = node(p, PY_WHILE, t->pos);
    s->a = parse_test(p);
    parse_suite(p, "'while'", &s->n, &s->items);
    return s;
  }
  if (accept_kw(p, "with")) {
    tj_py_t *s = node(p, PY_WITH, t->pos);
    s->a = parse_test(p);
    if (accept_kw(p, "as")) s->b = parse_testlist(p);
    if (is_op(p, ",")) tj_parse_fail(p->src, cur(p)->pos, "only one context manager per 'with' is supported");
    parse_suite(p, "'with'", &s->n, &s->items);
    return s;
  }
  return NULL;
}

/* One logical line (simple statements separated by ';') or one compound statement,
 * appended to `out`. */
static const tj_py_t *parse_stmt_list(pyparser_t *p, tj_ptrvec_t *out) {
  const tj_tok_t *t = cur(p);
  if (t->kind == TJ_TK_INDENT) tj_parse_fail(p->src, t->pos, "unexpected indentation");
  if (t->kind == TJ_TK_NEWLINE) {
    advance(p);
    return NULL;
  }
  const tj_py_t *c = parse_compound(p);
  if (c) {
    tj_ptrvec_push(p->src, out, c);
    return c;
  }
  for (;;) {
    tj_ptrvec_push(p->src, out, parse_small_stmt(p));
    if (!accept_op(p, ";")) break;
    if (cur(p)->kind == TJ_TK_NEWLINE) break;
  }
  expect_newline(p);
  return NULL;
}

void tj_py_parse(tj_parse_src_t *src, const tj_tok_t *toks, int n_toks, const tj_py_t *const **out_stmts,
                 int *out_n) {
  pyparser_t p = {src, toks, n_toks, 0, 0};
  tj_ptrvec_t body = {0};
  while (cur(&p)->kind != TJ_TK_EOF) {
    if (cur(&p)->kind == TJ_TK_DEDENT) tj_parse_fail(src, cur(&p)->pos, "unexpected dedent");
    parse_stmt_list(&p, &body);
  }
  *out_stmts = vec_items(&body);
  *out_n = body.n;
}

const char *tj_py_dotted(tj_parse_src_t *src, const tj_py_t *e) {
  if (!e) return NULL;
  if (e->kind == PY_NAME) return e->s;
  if (e->kind != PY_ATTR) return NULL;
  const char *base = tj_py_dotted(src, e->a);
  if (!base) return NULL;
  return tj_parse_check(src, tj_arena_printf(src->scratch, "%s.%s", base, e->s));
}

const char *tj_py_kind_name(tj_py_kind_t kind) {
  static const char *const names[] = {
      "name", "integer", "float", "string", "constant", "attribute", "call", "subscript", "slice", "tuple",
      "list", "dict", "binary operation", "unary operation", "comparison", "boolean operation",
      "starred expression", "conditional expression", "expression statement", "assignment",
      "annotated assignment", "augmented assignment", "for loop", "with statement", "if statement",
      "while loop", "return", "pass", "function definition", "class definition", "import", "assert",
      "parameter"};
  return (int)kind >= 0 && (size_t)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}
