/* The pass manager: the pass table, pipeline text <-> list of passes, and running
 * the list with instruments (IR printing, timing, verify-each).
 *
 * Registering a pass is one row of k_passes: its TVM name, its entry point and, if it
 * takes options, their names (each option is one row of k_options, which parses and
 * prints it). Nothing else here names a pass. */
#include "transforms/pass_manager.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/text/print.h"
#include "ir/verify/verify.h"
#include "support/alloc.h"
#include "support/strbuf.h"

/* Adapters for the passes with options: the option fields to the entry point. */
static tj_status_t *run_to_mixed_precision(const tj_pass_context_t *ctx, const tj_pass_t *pass,
                                           const tj_module_t *in, const tj_module_t **out) {
  return tj_to_mixed_precision(ctx, in, pass->out_dtype ? pass->out_dtype : "float32", pass->storage_dtype,
                               pass->n_fp16_input_names, pass->fp16_input_names, out);
}

static tj_status_t *run_fuse_ops(const tj_pass_context_t *ctx, const tj_pass_t *pass, const tj_module_t *in,
                                 const tj_module_t **out) {
  return tj_fuse_ops(ctx, in, pass->fuse_opt_level, out);
}

/* Every option starts at its default; a row sets the rest. */
#define PASS(...) {.kind = TJ_PASS_BUILTIN, .out_dtype = "float32", .fuse_opt_level = -1, __VA_ARGS__}
#define OPTIONS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The passes, by TVM name. `default` is the in_default rows, in table order. */
static const tj_pass_t k_passes[] = {
    PASS(.name = "ToMixedPrecision", .run_with_options = run_to_mixed_precision,
         .options = OPTIONS("out_dtype", "fp16_input_names", "storage_dtype")),
    PASS(.name = "DispatchSortScan", .run = tj_dispatch_sort_scan, .in_default = true),
    PASS(.name = "LegalizeOps", .run = tj_legalize_ops, .in_default = true),
    PASS(.name = "AnnotateTIROpPattern", .run = tj_annotate_tir_op_pattern, .in_default = true),
    PASS(.name = "FuseOps", .run_with_options = run_fuse_ops, .options = OPTIONS("fuse_opt_level"), .in_default = true),
    PASS(.name = "FuseTIR", .run = tj_fuse_tir, .in_default = true),
    PASS(.name = "DeadCodeElimination", .run = tj_dead_code_elimination),
    PASS(.name = "DecomposeOpsForInference", .run = tj_decompose_ops_for_inference),
    PASS(.name = "BindParams", .run = tj_bind_params),
    PASS(.name = "FoldConstant", .run = tj_fold_constant),
    PASS(.name = "CanonicalizeBindings", .run = tj_canonicalize_bindings),
};
#define N_PASSES ((int)(sizeof k_passes / sizeof k_passes[0]))

const tj_pass_t *tj_pass_default(const char *name) {
  for (int i = 0; i < N_PASSES; i++)
    if (strcmp(k_passes[i].name, name) == 0) return &k_passes[i];
  return NULL;
}

static const char *take(tj_arena_t *arena, tj_strbuf_t *sb);

const char *tj_pass_valid_names(tj_arena_t *arena) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; i < N_PASSES; i++) tj_strbuf_printf(&sb, "%s%s", i ? ", " : "", k_passes[i].name);
  return take(arena, &sb);
}

static const char *const no_options[] = {NULL};

static const char *const *pass_options(const tj_pass_t *pass) { return pass->options ? pass->options : no_options; }

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

/* ---------------- options: one row each ---------------- */

static tj_status_t *set_out_dtype(const cursor_t *c, tj_pass_t *pass, const value_t *v) {
  if (v->kind != VAL_STR || (strcmp(v->s, "float32") != 0 && strcmp(v->s, "float16") != 0))
    return syntax(c, "out_dtype must be \"float32\" or \"float16\"");
  pass->out_dtype = v->s;
  return NULL;
}

static bool print_out_dtype(tj_strbuf_t *sb, const tj_pass_t *pass) {
  if (!pass->out_dtype || strcmp(pass->out_dtype, "float32") == 0) return false;
  tj_strbuf_printf(sb, "out_dtype=\"%s\"", pass->out_dtype);
  return true;
}

static tj_status_t *set_storage_dtype(const cursor_t *c, tj_pass_t *pass, const value_t *v) {
  if (v->kind != VAL_STR || (strcmp(v->s, "float16") != 0 && strcmp(v->s, "bfloat16") != 0))
    return syntax(c, "storage_dtype must be \"float16\" or \"bfloat16\"");
  pass->storage_dtype = v->s;
  return NULL;
}

static bool print_storage_dtype(tj_strbuf_t *sb, const tj_pass_t *pass) {
  if (!pass->storage_dtype || strcmp(pass->storage_dtype, "float16") == 0) return false;
  tj_strbuf_printf(sb, "storage_dtype=\"%s\"", pass->storage_dtype);
  return true;
}

static tj_status_t *set_fp16_input_names(const cursor_t *c, tj_pass_t *pass, const value_t *v) {
  if (v->kind == VAL_NONE) {
    pass->n_fp16_input_names = 0;
    pass->fp16_input_names = NULL;
  } else if (v->kind == VAL_STR_LIST) {
    pass->n_fp16_input_names = v->n;
    pass->fp16_input_names = v->list;
  } else {
    return syntax(c, "fp16_input_names must be a list of strings, e.g. [\"x\", \"w\"], or None");
  }
  return NULL;
}

static bool print_fp16_input_names(tj_strbuf_t *sb, const tj_pass_t *pass) {
  if (pass->n_fp16_input_names <= 0) return false;
  tj_strbuf_append(sb, "fp16_input_names=[");
  for (int i = 0; i < pass->n_fp16_input_names; i++)
    tj_strbuf_printf(sb, "%s\"%s\"", i ? ", " : "", pass->fp16_input_names[i]);
  tj_strbuf_append(sb, "]");
  return true;
}

static tj_status_t *set_fuse_opt_level(const cursor_t *c, tj_pass_t *pass, const value_t *v) {
  if (v->kind != VAL_INT || v->i < -1 || v->i > 4) return syntax(c, "fuse_opt_level must be an integer from -1 to 4");
  pass->fuse_opt_level = (int)v->i;
  return NULL;
}

static bool print_fuse_opt_level(tj_strbuf_t *sb, const tj_pass_t *pass) {
  if (pass->fuse_opt_level == -1) return false;
  tj_strbuf_printf(sb, "fuse_opt_level=%d", pass->fuse_opt_level);
  return true;
}

/* An option: parses a value into its tj_pass_t field; prints `name=value` when the
 * field differs from the default (false: nothing printed). */
typedef struct pass_option {
  const char *name;
  tj_status_t *(*set)(const cursor_t *c, tj_pass_t *pass, const value_t *v);
  bool (*print)(tj_strbuf_t *sb, const tj_pass_t *pass);
} pass_option_t;

static const pass_option_t k_options[] = {
    {"out_dtype", set_out_dtype, print_out_dtype},
    {"fp16_input_names", set_fp16_input_names, print_fp16_input_names},
    {"storage_dtype", set_storage_dtype, print_storage_dtype},
    {"fuse_opt_level", set_fuse_opt_level, print_fuse_opt_level},
};

static const pass_option_t *find_option(const char *name) {
  for (size_t i = 0; i < sizeof k_options / sizeof k_options[0]; i++)
    if (strcmp(k_options[i].name, name) == 0) return &k_options[i];
  return NULL;
}

static tj_status_t *set_option(cursor_t *c, tj_pass_t *pass, const char *key, const value_t *v) {
  const pass_option_t *opt = find_option(key);
  if (!opt) return tj_status_new(TJ_ERR_INTERNAL, "pass '%s' lists option '%s', which has no k_options row", pass->name, key);
  return opt->set(c, pass, v);
}

static tj_status_t *unknown_option(const cursor_t *c, const tj_pass_t *pass, const char *key) {
  const char *const *opts = pass_options(pass);
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; opts[i]; i++) tj_strbuf_printf(&sb, "%s%s", i ? ", " : "", opts[i]);
  tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline item '%s': %s has no option '%s' (valid: %s)",
                                 c->item, pass->name, key, sb.data ? sb.data : "none");
  tj_strbuf_free(&sb);
  return s;
}

static tj_status_t *parse_options(cursor_t *c, tj_pass_t *pass) {
  const char *const *opts = pass_options(pass);
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
  if (s == e)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass pipeline: empty item (valid passes: %s)",
                         tj_pass_valid_names(arena));
  const char *name = read_ident(&c);
  if (!name) return syntax(&c, "expected a pass name");
  if (strcmp(name, "none") == 0 && c.p == e) return *out_n = 0, NULL;
  if (strcmp(name, "default") == 0 && c.p == e) {
    int n = 0;
    for (int i = 0; i < N_PASSES; i++)
      if (k_passes[i].in_default) out[n++] = k_passes[i];
    *out_n = n;
    return NULL;
  }
  const tj_pass_t *def = tj_pass_default(name);
  if (!def)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "unknown pass '%s' (valid: %s; or 'default', 'none')", name,
                         tj_pass_valid_names(arena));
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
  /* Upper bound: every item is at most `default` (at most every pass), one per separator. */
  size_t cap = N_PASSES;
  for (const char *q = p; q < end; q++) cap += (*q == ',' || *q == '>') ? N_PASSES : 0;
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

/* `Name` or `Name(opt=value, ...)` with the options that differ from their defaults. */
static void append_pass(tj_strbuf_t *sb, const tj_pass_t *pass) {
  tj_strbuf_append(sb, pass->name);
  if (pass->kind != TJ_PASS_BUILTIN) return;
  int printed = 0;
  const char *const *opts = pass_options(pass);
  for (int i = 0; opts[i]; i++) {
    const pass_option_t *opt = find_option(opts[i]);
    tj_strbuf_t one;
    tj_strbuf_init(&one);
    if (opt && opt->print(&one, pass) && one.data) tj_strbuf_printf(sb, "%s%s", printed++ ? ", " : "(", one.data);
    tj_strbuf_free(&one);
  }
  if (printed) tj_strbuf_append(sb, ")");
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
  if (pass->kind == TJ_PASS_CUSTOM) {
    if (!pass->fn) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "custom pass '%s' has no function", pass->name);
    return pass->fn(ctx, in, pass->user, out);
  }
  if (pass->run_with_options) return pass->run_with_options(ctx, pass, in, out);
  if (pass->run) return pass->run(ctx, in, out);
  return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "pass '%s' has no entry point", pass->name ? pass->name : "?");
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
