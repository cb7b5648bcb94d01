/* The pass manager: pipeline text <-> list of passes, and running the list with
 * instruments (IR printing, timing, verify-each). */
#include "transforms/pass_manager.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/print.h"
#include "ir/verify.h"
#include "support/alloc.h"
#include "support/strbuf.h"

static const tj_pass_t known_passes[] = {
    {.kind = TJ_PASS_TO_MIXED_PRECISION, .name = "ToMixedPrecision", .out_dtype = "float32", .fuse_opt_level = -1},
    {.kind = TJ_PASS_LEGALIZE_OPS, .name = "LegalizeOps", .fuse_opt_level = -1},
    {.kind = TJ_PASS_ANNOTATE_TIR_OP_PATTERN, .name = "AnnotateTIROpPattern", .fuse_opt_level = -1},
    {.kind = TJ_PASS_FUSE_OPS, .name = "FuseOps", .fuse_opt_level = -1},
    {.kind = TJ_PASS_FUSE_TIR, .name = "FuseTIR", .fuse_opt_level = -1},
    {.kind = TJ_PASS_DEAD_CODE_ELIMINATION, .name = "DeadCodeElimination", .fuse_opt_level = -1},
};
#define N_KNOWN ((int)(sizeof known_passes / sizeof known_passes[0]))

static const char *const default_pipeline[] = {"LegalizeOps", "AnnotateTIROpPattern", "FuseOps", "FuseTIR"};

const tj_pass_t *tj_pass_default(const char *name) {
  for (int i = 0; i < N_KNOWN; i++)
    if (strcmp(known_passes[i].name, name) == 0) return &known_passes[i];
  return NULL;
}

const char *tj_pass_valid_names(void) {
  return "ToMixedPrecision, LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, DeadCodeElimination";
}

/* Option names per pass, in TVM's positional order. */
static const char *const *pass_options(tj_pass_kind_t kind) {
  static const char *const tmp[] = {"out_dtype", "fp16_input_names", NULL};
  static const char *const fuse[] = {"fuse_opt_level", NULL};
  static const char *const none[] = {NULL};
  if (kind == TJ_PASS_TO_MIXED_PRECISION) return tmp;
  if (kind == TJ_PASS_FUSE_OPS) return fuse;
  return none;
}

/* ---------------- parsing ---------------- */

typedef struct cursor {
  const char *p, *end;
  const char *item; /* the pipeline item being parsed, for messages */
  tj_arena_t *arena;
} cursor_t;

static void skip_ws(cursor_t *c) {
  while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
}

static tj_status_t *syntax(const cursor_t *c, const char *what) {
  return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline item '%s': %s", c->item, what);
}

static bool ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

static const char *read_ident(cursor_t *c) {
  const char *s = c->p;
  while (c->p < c->end && ident_char(*c->p)) c->p++;
  return c->p > s ? tj_arena_strndup(c->arena, s, (size_t)(c->p - s)) : NULL;
}

static tj_status_t *read_string(cursor_t *c, const char **out) {
  char q = *c->p++;
  const char *s = c->p;
  while (c->p < c->end && *c->p != q) c->p++;
  if (c->p >= c->end) return syntax(c, "unterminated string");
  *out = tj_arena_strndup(c->arena, s, (size_t)(c->p - s));
  c->p++;
  return NULL;
}

typedef enum { VAL_STR, VAL_INT, VAL_NONE, VAL_STR_LIST } val_kind_t;

typedef struct value {
  val_kind_t kind;
  const char *s;
  long i;
  int n;
  const char **list;
} value_t;

static tj_status_t *read_value(cursor_t *c, value_t *v) {
  skip_ws(c);
  if (c->p >= c->end) return syntax(c, "missing option value");
  char ch = *c->p;
  if (ch == '"' || ch == '\'') {
    v->kind = VAL_STR;
    return read_string(c, &v->s);
  }
  if (ch == '-' || isdigit((unsigned char)ch)) {
    char *endp;
    v->kind = VAL_INT;
    v->i = strtol(c->p, &endp, 10);
    if (endp == c->p || endp > c->end) return syntax(c, "bad integer");
    c->p = endp;
    return NULL;
  }
  if (ch == '[' || ch == '(') {
    char close = ch == '[' ? ']' : ')';
    c->p++;
    v->kind = VAL_STR_LIST;
    v->n = 0;
    v->list = TJ_ARENA_ARRAY(c->arena, const char *, (size_t)(c->end - c->p) + 1);
    for (;;) {
      skip_ws(c);
      if (c->p < c->end && *c->p == close) break;
      if (c->p >= c->end || (*c->p != '"' && *c->p != '\'')) return syntax(c, "a list of option values must hold quoted strings");
      TJ_RETURN_IF_ERROR(read_string(c, &v->list[v->n]));
      v->n++;
      skip_ws(c);
      if (c->p < c->end && *c->p == ',') c->p++;
    }
    c->p++;
    return NULL;
  }
  const char *word = read_ident(c);
  if (word && strcmp(word, "None") == 0) {
    v->kind = VAL_NONE;
    return NULL;
  }
  return syntax(c, "option values are quoted strings, integers, lists of strings or None");
}

static tj_status_t *set_option(cursor_t *c, tj_pass_t *pass, const char *key, const value_t *v) {
  if (strcmp(key, "out_dtype") == 0) {
    if (v->kind != VAL_STR || (strcmp(v->s, "float32") != 0 && strcmp(v->s, "float16") != 0))
      return syntax(c, "out_dtype must be \"float32\" or \"float16\"");
    pass->out_dtype = v->s;
  } else if (strcmp(key, "fp16_input_names") == 0) {
    if (v->kind == VAL_NONE) {
      pass->n_fp16_input_names = 0;
      pass->fp16_input_names = NULL;
    } else if (v->kind == VAL_STR_LIST) {
      pass->n_fp16_input_names = v->n;
      pass->fp16_input_names = v->list;
    } else {
      return syntax(c, "fp16_input_names must be a list of strings, e.g. [\"x\", \"w\"], or None");
    }
  } else if (strcmp(key, "fuse_opt_level") == 0) {
    if (v->kind != VAL_INT || v->i < -1 || v->i > 4) return syntax(c, "fuse_opt_level must be an integer from -1 to 4");
    pass->fuse_opt_level = (int)v->i;
  }
  return NULL;
}

static tj_status_t *unknown_option(const cursor_t *c, const tj_pass_t *pass, const char *key) {
  const char *const *opts = pass_options(pass->kind);
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; opts[i]; i++) tj_strbuf_printf(&sb, "%s%s", i ? ", " : "", opts[i]);
  tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline item '%s': %s has no option '%s' (valid: %s)",
                                 c->item, pass->name, key, sb.data ? sb.data : "none");
  tj_strbuf_free(&sb);
  return s;
}

static tj_status_t *parse_options(cursor_t *c, tj_pass_t *pass) {
  const char *const *opts = pass_options(pass->kind);
  int positional = 0;
  c->p++; /* '(' */
  for (;;) {
    skip_ws(c);
    if (c->p >= c->end) return syntax(c, "missing ')'");
    if (*c->p == ')') {
      c->p++;
      return NULL;
    }
    const char *save = c->p;
    const char *key = read_ident(c);
    skip_ws(c);
    if (key && c->p < c->end && *c->p == '=') {
      c->p++;
    } else {
      c->p = save;
      key = NULL;
      for (int i = 0; opts[i] && !key; i++)
        if (i == positional) key = opts[i];
      if (!key) return syntax(c, "too many option values");
      positional++;
    }
    bool known = false;
    for (int i = 0; opts[i]; i++) known |= strcmp(opts[i], key) == 0;
    if (!known) return unknown_option(c, pass, key);
    value_t v = {0};
    TJ_RETURN_IF_ERROR(read_value(c, &v));
    TJ_RETURN_IF_ERROR(set_option(c, pass, key, &v));
    skip_ws(c);
    if (c->p < c->end && *c->p == ',') c->p++;
    else if (c->p < c->end && *c->p != ')') return syntax(c, "expected ',' or ')' between options");
  }
}

/* Splits at ',' or '->' outside parentheses, brackets and quotes. */
static const char *item_end(const char *p, const char *end) {
  int depth = 0;
  char quote = 0;
  for (; p < end; p++) {
    if (quote) {
      if (*p == quote) quote = 0;
    } else if (*p == '"' || *p == '\'') {
      quote = *p;
    } else if (*p == '(' || *p == '[') {
      depth++;
    } else if (*p == ')' || *p == ']') {
      depth--;
    } else if (depth == 0 && (*p == ',' || (*p == '-' && p + 1 < end && p[1] == '>'))) {
      return p;
    }
  }
  return end;
}

static tj_status_t *parse_item(tj_arena_t *arena, const char *s, const char *e, tj_pass_t *out, int *out_n) {
  while (s < e && isspace((unsigned char)*s)) s++;
  while (e > s && isspace((unsigned char)e[-1])) e--;
  cursor_t c = {s, e, tj_arena_strndup(arena, s, (size_t)(e - s)), arena};
  if (s == e) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline: empty item (valid passes: %s)", tj_pass_valid_names());
  const char *name = read_ident(&c);
  if (!name) return syntax(&c, "expected a pass name");
  if (strcmp(name, "none") == 0 && c.p == e) return *out_n = 0, NULL;
  if (strcmp(name, "default") == 0 && c.p == e) {
    for (int i = 0; i < 4; i++) out[i] = *tj_pass_default(default_pipeline[i]);
    *out_n = 4;
    return NULL;
  }
  const tj_pass_t *def = tj_pass_default(name);
  if (!def)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "unknown pass '%s' (valid: %s; or 'default', 'none')", name,
                         tj_pass_valid_names());
  *out = *def;
  skip_ws(&c);
  if (c.p < e && *c.p == '(') TJ_RETURN_IF_ERROR(parse_options(&c, out));
  skip_ws(&c);
  if (c.p != e) return syntax(&c, "unexpected text after the pass");
  *out_n = 1;
  return NULL;
}

tj_status_t *tj_pipeline_parse(tj_arena_t *arena, const char *text, tj_pipeline_t *out_pipeline) {
  const char *p = text ? text : "", *end = p + strlen(p);
  /* Upper bound: every item is at most `default` (4 passes), one per separator. */
  size_t cap = 4;
  for (const char *q = p; q < end; q++) cap += (*q == ',' || *q == '>') ? 4 : 0;
  tj_pass_t *passes = TJ_ARENA_ARRAY(arena, tj_pass_t, cap);
  if (!passes) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory parsing a pass pipeline");
  int n = 0;
  const char *s = p;
  while (*s && strspn(s, " \t\n") < strlen(s)) {
    const char *e = item_end(s, end);
    int got = 0;
    TJ_RETURN_IF_ERROR(parse_item(arena, s, e, &passes[n], &got));
    n += got;
    if (e == end) break;
    s = e + (*e == ',' ? 1 : 2);
    if (!*s || strspn(s, " \t\n") == strlen(s))
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline '%s' ends with a separator", text);
  }
  out_pipeline->n = n;
  out_pipeline->passes = passes;
  return NULL;
}

tj_status_t *tj_pipeline_append(tj_arena_t *arena, const tj_pipeline_t *p, const tj_pass_t *pass,
                                tj_pipeline_t *out_pipeline) {
  tj_pass_t *passes = TJ_ARENA_ARRAY(arena, tj_pass_t, p->n + 1);
  if (!passes) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory extending a pass pipeline");
  for (int i = 0; i < p->n; i++) passes[i] = p->passes[i];
  passes[p->n] = *pass;
  out_pipeline->n = p->n + 1;
  out_pipeline->passes = passes;
  return NULL;
}

/* ---------------- text ---------------- */

static void append_pass(tj_strbuf_t *sb, const tj_pass_t *pass) {
  tj_strbuf_append(sb, pass->name);
  if (pass->kind == TJ_PASS_TO_MIXED_PRECISION) {
    bool dtype = pass->out_dtype && strcmp(pass->out_dtype, "float32") != 0;
    if (!dtype && pass->n_fp16_input_names == 0) return;
    tj_strbuf_append(sb, "(");
    if (dtype) tj_strbuf_printf(sb, "out_dtype=\"%s\"", pass->out_dtype);
    if (pass->n_fp16_input_names > 0) {
      tj_strbuf_printf(sb, "%sfp16_input_names=[", dtype ? ", " : "");
      for (int i = 0; i < pass->n_fp16_input_names; i++)
        tj_strbuf_printf(sb, "%s\"%s\"", i ? ", " : "", pass->fp16_input_names[i]);
      tj_strbuf_append(sb, "]");
    }
    tj_strbuf_append(sb, ")");
  } else if (pass->kind == TJ_PASS_FUSE_OPS && pass->fuse_opt_level != -1) {
    tj_strbuf_printf(sb, "(fuse_opt_level=%d)", pass->fuse_opt_level);
  }
}

static const char *take(tj_arena_t *arena, tj_strbuf_t *sb) {
  const char *s = sb->data ? tj_arena_strdup(arena, sb->data) : tj_arena_strdup(arena, "");
  tj_strbuf_free(sb);
  return s;
}

const char *tj_pass_text(tj_arena_t *arena, const tj_pass_t *pass) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  append_pass(&sb, pass);
  return take(arena, &sb);
}

const char *tj_pipeline_text(tj_arena_t *arena, const tj_pipeline_t *p) {
  if (p->n == 0) return tj_arena_strdup(arena, "none");
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; i < p->n; i++) {
    if (i) tj_strbuf_append(&sb, ", ");
    append_pass(&sb, &p->passes[i]);
  }
  return take(arena, &sb);
}

/* ---------------- running ---------------- */

tj_status_t *tj_pass_run(const tj_pass_context_t *ctx, const tj_pass_t *pass, const tj_module_t *in,
                         const tj_module_t **out) {
  switch (pass->kind) {
    case TJ_PASS_TO_MIXED_PRECISION:
      return tj_to_mixed_precision(ctx, in, pass->out_dtype ? pass->out_dtype : "float32", pass->n_fp16_input_names,
                                   pass->fp16_input_names, out);
    case TJ_PASS_LEGALIZE_OPS: return tj_legalize_ops(ctx, in, out);
    case TJ_PASS_ANNOTATE_TIR_OP_PATTERN: return tj_annotate_tir_op_pattern(ctx, in, out);
    case TJ_PASS_FUSE_OPS: return tj_fuse_ops(ctx, in, pass->fuse_opt_level, out);
    case TJ_PASS_FUSE_TIR: return tj_fuse_tir(ctx, in, out);
    case TJ_PASS_DEAD_CODE_ELIMINATION: return tj_dead_code_elimination(ctx, in, out);
    case TJ_PASS_CUSTOM:
      if (!pass->fn) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "custom pass '%s' has no function", pass->name);
      return pass->fn(ctx, in, pass->user, out);
  }
  return tj_status_new(TJ_ERR_INTERNAL, "unknown pass kind %d", (int)pass->kind);
}

static bool selects(const char *which, const tj_pass_t *pass) {
  return which && (strcmp(which, "*") == 0 || strcmp(which, "all") == 0 || strcmp(which, pass->name) == 0);
}

static tj_status_t *print_ir(const tj_pass_instruments_t *ins, const tj_pass_t *pass, const char *when,
                             const tj_module_t *m) {
  if (!ins->print_fn && !ins->print_file) return NULL;
  char *text = tj_print_module(m);
  if (!text) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory printing IR %s pass '%s'", when, pass->name);
  if (ins->print_fn) {
    ins->print_fn(ins->print_user, pass->name, when, text);
  } else {
    fprintf(ins->print_file, "# IR %s pass '%s'\n%s", when, pass->name, text);
    size_t len = strlen(text);
    if (len == 0 || text[len - 1] != '\n') fputc('\n', ins->print_file);
  }
  tj_free(text);
  return NULL;
}

/* A print instrument that names no pass of the pipeline would print nothing, silently:
 * a typo ("FuseTir") is an error that lists the passes. */
static tj_status_t *check_print_selector(const tj_pipeline_t *p, const char *which, const char *option) {
  if (!which) return NULL;
  for (int i = 0; i < p->n; i++)
    if (selects(which, &p->passes[i])) return NULL;
  if (strcmp(which, "*") == 0 || strcmp(which, "all") == 0) return NULL; /* an empty pipeline */
  tj_strbuf_t names;
  tj_strbuf_init(&names);
  for (int i = 0; i < p->n; i++) tj_strbuf_printf(&names, "%s%s", i ? ", " : "", p->passes[i].name);
  char *list = tj_strbuf_take(&names);
  tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s '%s' names no pass of the pipeline (%s)", option, which,
                                 list && *list ? list : "no passes");
  tj_free(list);
  return s;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

tj_status_t *tj_pipeline_run(const tj_pass_context_t *ctx, const tj_pipeline_t *p,
                             const tj_pass_instruments_t *instruments, const tj_module_t *in,
                             const tj_module_t **out, tj_pass_report_t *out_report) {
  static const tj_pass_instruments_t no_instruments = {0};
  const tj_pass_instruments_t *ins = instruments ? instruments : &no_instruments;
  TJ_RETURN_IF_ERROR(check_print_selector(p, ins->print_before, "print-ir-before"));
  TJ_RETURN_IF_ERROR(check_print_selector(p, ins->print_after, "print-ir-after"));
  tj_pass_timing_t *timings = TJ_ARENA_ARRAY(ctx->arena, tj_pass_timing_t, p->n + 1);
  if (!timings) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory running passes");
  double total = 0;
  const tj_module_t *cur = in;
  for (int i = 0; i < p->n; i++) {
    const tj_pass_t *pass = &p->passes[i];
    if (selects(ins->print_before, pass)) TJ_RETURN_IF_ERROR(print_ir(ins, pass, "before", cur));
    const tj_module_t *next = NULL;
    double t0 = now_ms();
    tj_status_t *s = tj_pass_run(ctx, pass, cur, &next);
    double ms = now_ms() - t0;
    if (s) return tj_status_annotate(s, "in pass '%s'", pass->name);
    if (!next) return tj_status_new(TJ_ERR_INTERNAL, "pass '%s' returned no module", pass->name);
    timings[i].name = tj_pass_text(ctx->arena, pass);
    timings[i].ms = ms;
    total += ms;
    if (selects(ins->print_after, pass)) TJ_RETURN_IF_ERROR(print_ir(ins, pass, "after", next));
    if (ins->verify_each) {
      tj_status_t *v = tj_verify_module(next);
      if (v) {
        tj_status_t *r = tj_status_new(TJ_ERR_VERIFY, "after pass '%s': %s", pass->name, tj_status_text(v));
        tj_status_free(v);
        return r;
      }
    }
    cur = next;
  }
  if (out_report) {
    out_report->n = ins->time_passes ? p->n : 0;
    out_report->timings = timings;
    out_report->total_ms = ins->time_passes ? total : 0;
  }
  *out = cur;
  return NULL;
}

const char *tj_pass_report_text(tj_arena_t *arena, const tj_pass_report_t *r) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_append(&sb, "      ms  pass\n");
  for (int i = 0; i < r->n; i++) tj_strbuf_printf(&sb, "%8.3f  %s\n", r->timings[i].ms, r->timings[i].name);
  tj_strbuf_printf(&sb, "%8.3f  total\n", r->total_ms);
  return take(arena, &sb);
}
