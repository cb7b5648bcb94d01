/* Tokenizer of the TVMScript reader (Python layout rules) and its error reports. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse_ast.h"
#include "support/alloc.h"
#include "support/strbuf.h"

/* ---- errors ---- */

/* Appends the source line holding `pos` and a caret under the column. Non-printable
 * bytes are shown as '?', so a binary file still gives a readable one-line excerpt. */
static void append_excerpt(tj_strbuf_t *sb, const tj_parse_src_t *src, tj_src_pos_t pos) {
  size_t start = pos.off <= src->len ? pos.off : src->len;
  while (start > 0 && src->text[start - 1] != '\n') start--;
  size_t end = start;
  while (end < src->len && src->text[end] != '\n' && end - start < 200) end++;
  tj_strbuf_append(sb, "\n    ");
  for (size_t i = start; i < end; i++) {
    unsigned char c = (unsigned char)src->text[i];
    char ch = (c == '\t' || (c >= 32 && c < 127) || c >= 128) ? (char)c : '?';
    if (c == '\r') continue;
    tj_strbuf_append_n(sb, &ch, 1);
  }
  tj_strbuf_append(sb, "\n    ");
  for (size_t i = start; i < pos.off && i < end; i++) tj_strbuf_append(sb, src->text[i] == '\t' ? "\t" : " ");
  tj_strbuf_append(sb, "^");
}

static _Noreturn void parse_fail_v(tj_parse_src_t *src, tj_code_t code, tj_src_pos_t pos, const char *fmt,
                                    va_list ap) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s:%d:%d: ", src->filename, pos.line, pos.col);
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  tj_strbuf_append(&sb, msg);
  append_excerpt(&sb, src, pos);
  char *text = tj_strbuf_take(&sb);
  src->error = text ? tj_status_new(code, "%s", text) : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_strbuf_free(&sb);
  tj_free(text);
  longjmp(*src->on_error, 1);
}

void tj_parse_fail(tj_parse_src_t *src, tj_src_pos_t pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  parse_fail_v(src, TJ_ERR_PARSE, pos, fmt, ap);
}

void tj_parse_fail_code(tj_parse_src_t *src, tj_code_t code, tj_src_pos_t pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  parse_fail_v(src, code, pos, fmt, ap);
}

void *tj_parse_check(tj_parse_src_t *src, const void *p) {
  if (!p) {
    src->error = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory while parsing", src->filename);
    longjmp(*src->on_error, 1);
  }
  return (void *)p;
}

void tj_ptrvec_push(tj_parse_src_t *src, tj_ptrvec_t *v, const void *p) {
  v->arena = src->scratch;
  tj_parse_check(src, tj_vec_push(v, p) ? v->items : NULL);
}

/* ---- tokenizer ---- */

typedef struct lexer {
  tj_parse_src_t *src;
  size_t off;
  int line;
  size_t line_start;
  int depth;            /* open brackets */
  char brackets[TJ_PARSE_MAX_DEPTH];
  tj_src_pos_t bracket_pos[TJ_PARSE_MAX_DEPTH];
  int indents[TJ_PARSE_MAX_DEPTH];
  int n_indents;
  TJ_VEC(tj_tok_t) toks; /* in the scratch arena */
} lexer_t;

static tj_src_pos_t here(const lexer_t *lx) {
  tj_src_pos_t p = {lx->line, (int)(lx->off - lx->line_start) + 1, lx->off};
  return p;
}

static int peekc(const lexer_t *lx, size_t k) {
  return lx->off + k < lx->src->len ? (unsigned char)lx->src->text[lx->off + k] : -1;
}

static tj_tok_t *push(lexer_t *lx, tj_tok_kind_t kind, tj_src_pos_t pos) {
  lx->toks.arena = lx->src->scratch;
  tj_parse_check(lx->src, tj_vec_reserve(&lx->toks, 1) ? lx->toks.items : NULL);
  tj_tok_t *t = &lx->toks.items[lx->toks.n++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->pos = pos;
  return t;
}

static void newline(lexer_t *lx) {
  lx->off++;
  lx->line++;
  lx->line_start = lx->off;
}

/* Measures the indentation of the line starting at lx->off; returns -1 for a blank or
 * comment-only line (which Python ignores for layout). */
static int measure_indent(lexer_t *lx, size_t *out_end) {
  int width = 0;
  size_t i = lx->off;
  while (i < lx->src->len) {
    char c = lx->src->text[i];
    if (c == ' ') width++;
    else if (c == '\t') width = (width / 8 + 1) * 8;
    else if (c == '\f') width = 0;
    else break;
    i++;
  }
  *out_end = i;
  if (i >= lx->src->len) return -1;
  char c = lx->src->text[i];
  if (c == '#' || c == '\n' || (c == '\r' && (i + 1 >= lx->src->len || lx->src->text[i + 1] == '\n'))) return -1;
  if (c == '\\' && i + 1 < lx->src->len && lx->src->text[i + 1] == '\n') return -1;
  return width;
}

static void handle_indent(lexer_t *lx) {
  size_t end;
  int width = measure_indent(lx, &end);
  if (width < 0) return;
  lx->off = end;
  tj_src_pos_t pos = here(lx);
  int top = lx->indents[lx->n_indents - 1];
  if (width > top) {
    if (lx->n_indents >= TJ_PARSE_MAX_DEPTH) tj_parse_fail(lx->src, pos, "indentation nested too deeply (more than %d levels)",
                                                     TJ_PARSE_MAX_DEPTH - 1);
    lx->indents[lx->n_indents++] = width;
    push(lx, TJ_TK_INDENT, pos);
    return;
  }
  while (width < lx->indents[lx->n_indents - 1]) {
    lx->n_indents--;
    push(lx, TJ_TK_DEDENT, pos);
  }
  if (width != lx->indents[lx->n_indents - 1])
    tj_parse_fail(lx->src, pos, "unindent does not match any outer indentation level; indent this line as the block it belongs to");
}

static void lex_number(lexer_t *lx) {
  tj_src_pos_t pos = here(lx);
  const char *s = lx->src->text;
  size_t i = lx->off, len = lx->src->len;
  char buf[128];
  size_t n = 0;
  bool is_float = false, hex = false;
  if (s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    hex = true;
    buf[n++] = '0', buf[n++] = 'x';
    i += 2;
    while (i < len && (isxdigit((unsigned char)s[i]) || s[i] == '_')) {
      if (s[i] != '_' && n < sizeof buf - 1) buf[n++] = s[i];
      i++;
    }
  } else {
    while (i < len && (isdigit((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == 'e' ||
                       s[i] == 'E' ||
                       ((s[i] == '+' || s[i] == '-') && n > 0 && (buf[n - 1] == 'e' || buf[n - 1] == 'E')))) {
      if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') is_float = true;
      if (s[i] != '_' && n < sizeof buf - 1) buf[n++] = s[i];
      i++;
    }
  }
  buf[n] = '\0';
  if (i < len && (isalpha((unsigned char)s[i]) || s[i] == '_'))
    tj_parse_fail(lx->src, pos, "invalid number literal");
  if (n >= sizeof buf - 1) tj_parse_fail(lx->src, pos, "number literal too long");
  char *endp = NULL;
  tj_tok_t *t;
  if (is_float) {
    double v = strtod(buf, &endp);
    if (*endp) tj_parse_fail(lx->src, pos, "invalid float literal '%s'", buf);
    t = push(lx, TJ_TK_FLOAT, pos);
    t->fval = v;
  } else {
    errno = 0;
    unsigned long long v = strtoull(buf, &endp, hex ? 16 : 10);
    if (*endp) tj_parse_fail(lx->src, pos, "invalid integer literal '%s'", buf);
    t = push(lx, TJ_TK_INT, pos);
    t->int_too_big = errno == ERANGE || v > (unsigned long long)INT64_MAX;
    t->ival = t->int_too_big ? INT64_MAX : (int64_t)v;
    t->fval = (double)v;
  }
  t->text = tj_parse_check(lx->src, tj_arena_strdup(lx->src->scratch, buf));
  lx->off = i;
}

static void lex_string(lexer_t *lx) {
  tj_src_pos_t pos = here(lx);
  const char *s = lx->src->text;
  size_t len = lx->src->len;
  char q = s[lx->off];
  bool triple = lx->off + 2 < len && s[lx->off + 1] == q && s[lx->off + 2] == q;
  lx->off += triple ? 3 : 1;
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, "");
  for (;;) {
    if (lx->off >= len) {
      tj_strbuf_free(&sb);
      tj_parse_fail(lx->src, pos, "unterminated string literal");
    }
    char c = s[lx->off];
    if (c == q && (!triple || (lx->off + 2 < len && s[lx->off + 1] == q && s[lx->off + 2] == q))) {
      lx->off += triple ? 3 : 1;
      break;
    }
    if (c == '\n') {
      if (!triple) {
        tj_strbuf_free(&sb);
        tj_parse_fail(lx->src, pos, "unterminated string literal");
      }
      tj_strbuf_append(&sb, "\n");
      newline(lx);
      continue;
    }
    if (c == '\\' && lx->off + 1 < len) {
      char e = s[lx->off + 1];
      const char *rep = e == 'n' ? "\n" : e == 't' ? "\t" : e == '\\' ? "\\" : e == '\'' ? "'" : e == '"' ? "\"" : NULL;
      if (e == '\n') {
        lx->off++;
        newline(lx);
        continue;
      }
      if (rep) {
        tj_strbuf_append(&sb, rep);
        lx->off += 2;
        continue;
      }
    }
    if (c == '\0') {
      tj_strbuf_free(&sb);
      tj_parse_fail(lx->src, here(lx), "NUL byte inside a string literal");
    }
    tj_strbuf_append_n(&sb, &c, 1);
    lx->off++;
  }
  /* Free the buffer before anything that can fail: a failure longjmps out of here. */
  char *text = sb.failed ? NULL : tj_arena_strdup(lx->src->scratch, sb.data ? sb.data : "");
  tj_strbuf_free(&sb);
  tj_parse_check(lx->src, text);
  push(lx, TJ_TK_STRING, pos)->text = text;
}

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"**", "//", "->", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=",
                                   "&=", "|=", "^=", "<<", ">>", ":=", NULL};
static const char ops1[] = "()[]{},:.;@=+-*/%<>~&|^";

static void lex_bracket(lexer_t *lx, char c, tj_src_pos_t pos) {
  if (c == '(' || c == '[' || c == '{') {
    if (lx->depth >= TJ_PARSE_MAX_DEPTH) tj_parse_fail(lx->src, pos, "brackets nested too deeply (more than %d levels); split the expression with intermediate variables",
                    TJ_PARSE_MAX_DEPTH);
    lx->brackets[lx->depth] = c;
    lx->bracket_pos[lx->depth++] = pos;
  } else if (c == ')' || c == ']' || c == '}') {
    char open = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (lx->depth == 0) tj_parse_fail(lx->src, pos, "unmatched '%c'", c);
    if (lx->brackets[lx->depth - 1] != open) {
      tj_src_pos_t o = lx->bracket_pos[lx->depth - 1];
      tj_parse_fail(lx->src, pos, "closing '%c' does not match '%c' opened at %d:%d", c, lx->brackets[lx->depth - 1],
                    o.line, o.col);
    }
    lx->depth--;
  }
}

static void lex_op(lexer_t *lx) {
  tj_src_pos_t pos = here(lx);
  const char *s = lx->src->text + lx->off;
  size_t rest = lx->src->len - lx->off;
  for (int k = 0; ops3[k]; k++)
    if (rest >= 3 && memcmp(s, ops3[k], 3) == 0) {
      push(lx, TJ_TK_OP, pos)->text = ops3[k];
      lx->off += 3;
      return;
    }
  for (int k = 0; ops2[k]; k++)
    if (rest >= 2 && memcmp(s, ops2[k], 2) == 0) {
      push(lx, TJ_TK_OP, pos)->text = ops2[k];
      lx->off += 2;
      return;
    }
  const char *p = *s ? strchr(ops1, *s) : NULL;
  if (!p) {
    unsigned char c = (unsigned char)*s;
    if (c >= 32 && c < 127) tj_parse_fail(lx->src, pos, "unexpected character '%c'", c);
    tj_parse_fail(lx->src, pos, "unexpected byte 0x%02x (not TVMScript text)", c);
  }
  lex_bracket(lx, *s, pos);
  char *text = tj_parse_check(lx->src, tj_arena_strndup(lx->src->scratch, s, 1));
  push(lx, TJ_TK_OP, pos)->text = text;
  lx->off += 1;
}

static void lex_name(lexer_t *lx) {
  tj_src_pos_t pos = here(lx);
  size_t i = lx->off;
  const char *s = lx->src->text;
  while (i < lx->src->len && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
  tj_tok_t *t = push(lx, TJ_TK_NAME, pos);
  t->text = tj_parse_check(lx->src, tj_arena_strndup(lx->src->scratch, s + lx->off, i - lx->off));
  lx->off = i;
}

static bool last_is_line_end(const lexer_t *lx) {
  return lx->toks.n == 0 || lx->toks.items[lx->toks.n - 1].kind == TJ_TK_NEWLINE || lx->toks.items[lx->toks.n - 1].kind == TJ_TK_INDENT ||
         lx->toks.items[lx->toks.n - 1].kind == TJ_TK_DEDENT;
}

/* One step of the main loop: consumes whitespace, a comment, a newline or a token. */
static void lex_step(lexer_t *lx, bool *at_line_start) {
  if (*at_line_start) {
    *at_line_start = false;
    if (lx->depth == 0) handle_indent(lx); /* inside brackets lines are joined */
    if (lx->off >= lx->src->len) return;
  }
  int c = peekc(lx, 0);
  if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
    lx->off++;
  } else if (c == '#') {
    while (lx->off < lx->src->len && lx->src->text[lx->off] != '\n') lx->off++;
  } else if (c == '\\' && peekc(lx, 1) == '\n') {
    lx->off++;
    newline(lx);
  } else if (c == '\\' && peekc(lx, 1) == '\r' && peekc(lx, 2) == '\n') {
    lx->off += 2;
    newline(lx);
  } else if (c == '\n') {
    if (lx->depth == 0 && !last_is_line_end(lx)) push(lx, TJ_TK_NEWLINE, here(lx));
    newline(lx);
    *at_line_start = true;
  } else if (isdigit(c) || (c == '.' && isdigit(peekc(lx, 1)))) {
    lex_number(lx);
  } else if (c == '"' || c == '\'') {
    lex_string(lx);
  } else if ((c == 'r' || c == 'b' || c == 'f') && (peekc(lx, 1) == '"' || peekc(lx, 1) == '\'')) {
    tj_parse_fail(lx->src, here(lx), "string prefixes (r\"\", b\"\", f\"\") are not supported in TVMScript");
  } else if (isalpha(c) || c == '_') {
    lex_name(lx);
  } else {
    lex_op(lx);
  }
}

void tj_lex(tj_parse_src_t *src, tj_tok_t **out_toks, int *out_n) {
  lexer_t *lx = tj_parse_check(src, tj_arena_alloc(src->scratch, sizeof(lexer_t)));
  lx->src = src;
  lx->line = 1;
  lx->indents[0] = 0;
  lx->n_indents = 1;
  bool at_line_start = true;
  while (lx->off < src->len) lex_step(lx, &at_line_start);
  tj_src_pos_t end = here(lx);
  /* An unclosed bracket is left to the parser, which names the bracket it expected
   * at the first token that cannot continue the bracketed expression. */
  if (!last_is_line_end(lx) && lx->depth == 0) push(lx, TJ_TK_NEWLINE, end);
  while (lx->n_indents > 1 && lx->depth == 0) {
    lx->n_indents--;
    push(lx, TJ_TK_DEDENT, end);
  }
  push(lx, TJ_TK_EOF, end);
  *out_toks = lx->toks.items;
  *out_n = lx->toks.n;
}
