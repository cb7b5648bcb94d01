/* The TVMScript reader: entry points, module level (classes, decorators, function
 * declarations before definitions, module attrs) and helpers shared by the TIR and
 * Relax halves. */
#include "ir/text/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/op.h"
#include "ir/text/parse_ir.h"
#include "support/alloc.h"

/* ---- shared helpers ---- */

tj_val_t tj_val_make(tj_val_kind_t kind, tj_src_pos_t pos) {
  tj_val_t v;
  memset(&v, 0, sizeof v);
  v.kind = kind;
  v.pos = pos;
  return v;
}

const char *tj_val_kind_name(tj_val_kind_t kind) {
  static const char *const names[] = {"None", "an integer", "a float", "a bool", "a string", "a TIR expression",
                                      "a buffer", "a tuple or list", "a dict", "a Relax expression",
                                      "a struct info", "the module", "a buffer region", "a function"};
  return (size_t)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

const char *tj_pctx_str(tj_pctx_t *c, const char *s) { return TJ_CHK(c, tj_arena_strdup(c->arena, s)); }

void tj_pctx_bind(tj_pctx_t *c, const char *name, tj_val_t v) {
  tj_sym_t *s = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *s));
  s->name = name;
  s->val = v;
  tj_ptrvec_push(c->src, &c->syms, s);
}

const tj_val_t *tj_pctx_lookup(tj_pctx_t *c, const char *name) {
  for (int i = c->syms.n - 1; i >= 0; i--) {
    const tj_sym_t *s = c->syms.items[i];
    if (!strcmp(s->name, name)) return &s->val;
  }
  return NULL;
}

int tj_pctx_scope_open(tj_pctx_t *c) { return c->syms.n; }
void tj_pctx_scope_close(tj_pctx_t *c, int mark) { c->syms.n = mark; }

tj_pfunc_t *tj_pctx_find_func(tj_pctx_t *c, const char *name) {
  for (int i = 0; i < c->n_funcs; i++)
    if (!strcmp(c->funcs[i].name, name)) return &c->funcs[i];
  return NULL;
}

void tj_pctx_enter(tj_pctx_t *c, tj_src_pos_t pos) {
  if (++c->depth > TJ_PARSE_MAX_DEPTH * 2) tj_parse_fail(c->src, pos, "nested too deeply (more than %d levels); split the expression with intermediate variables",
                  TJ_PARSE_MAX_DEPTH * 2);
}
void tj_pctx_leave(tj_pctx_t *c) { c->depth--; }

const tj_py_t *tj_py_kwarg(const tj_py_t *call, const char *name) {
  for (int i = 0; i < call->n2; i++)
    if (!strcmp(call->kw[i], name)) return call->items2[i];
  return NULL;
}

void tj_py_check_kwargs(tj_pctx_t *c, const tj_py_t *call, const char *const *allowed) {
  for (int i = 0; i < call->n2; i++) {
    bool ok = false;
    for (int k = 0; allowed[k]; k++) ok |= !strcmp(call->kw[i], allowed[k]);
    if (!ok) {
      const char *fn = tj_py_dotted(c->src, call->a);
      tj_parse_fail(c->src, call->items2[i]->pos, "unexpected keyword argument '%s' for %s", call->kw[i], fn ? fn : "this call");
    }
  }
}

void tj_py_check_nargs(tj_pctx_t *c, const tj_py_t *call, const char *fname, int lo, int hi) {
  if (call->n >= lo && call->n <= hi) return;
  if (lo == hi) tj_parse_fail(c->src, call->pos, "%s expects %d positional argument%s, got %d", fname, lo, lo == 1 ? "" : "s", call->n);
  tj_parse_fail(c->src, call->pos, "%s expects %d to %d positional arguments, got %d", fname, lo, hi, call->n);
}

tj_attr_value_t tj_val_to_attr(tj_pctx_t *c, const tj_val_t *v) {
  tj_attr_value_t a;
  memset(&a, 0, sizeof a);
  switch (v->kind) {
    case V_NONE: a.kind = TJ_ATTR_NONE; return a;
    case V_INT: return tj_attr_int(v->i);
    case V_BOOL: return tj_attr_bool(v->i != 0);
    case V_FLOAT: a.kind = TJ_ATTR_FLOAT; a.dtype = TJ_F32; a.f = v->f; return a;
    case V_STR: return tj_attr_str(tj_pctx_str(c, v->s));
    case V_PRIM:
      if (v->prim->kind == TJ_TIR_INT_IMM) {
        a.kind = TJ_ATTR_INT;
        a.dtype = v->prim->dtype;
        a.i = v->prim->int_imm;
        return a;
      }
      if (v->prim->kind == TJ_TIR_FLOAT_IMM) {
        a.kind = TJ_ATTR_FLOAT;
        a.dtype = v->prim->dtype;
        a.f = v->prim->float_imm;
        return a;
      }
      break;
    case V_SEQ: {
      tj_attr_value_t *items = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attr_value_t) * (size_t)(v->n + 1)));
      for (int i = 0; i < v->n; i++) items[i] = tj_val_to_attr(c, &v->items[i]);
      a.kind = TJ_ATTR_LIST;
      a.list.n = v->n;
      a.list.items = items;
      return a;
    }
    case V_DICT:
      a.kind = TJ_ATTR_DICT;
      a.dict = tj_val_to_attrs(c, v);
      return a;
    case V_BUFFER: /* T.block_attr({"layout_free_placeholders": [B]}) */
      a.kind = TJ_ATTR_BUFFER;
      a.buffer = v->buf;
      return a;
    default: break;
  }
  tj_parse_fail(c->src, v->pos, "%s cannot be an attribute value", tj_val_kind_name(v->kind));
}

const tj_attrs_t *tj_val_to_attrs(tj_pctx_t *c, const tj_val_t *dict) {
  tj_attrs_t *attrs = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *attrs));
  const char **keys = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(char *) * (size_t)(dict->n + 1)));
  tj_attr_value_t *vals = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attr_value_t) * (size_t)(dict->n + 1)));
  for (int i = 0; i < dict->n; i++) {
    const tj_val_t *k = &dict->items[2 * i];
    if (k->kind != V_STR) tj_parse_fail(c->src, k->pos, "attribute keys must be strings");
    for (int j = 0; j < i; j++)
      if (!strcmp(keys[j], k->s)) tj_parse_fail(c->src, k->pos, "attribute '%s' given twice", k->s);
    keys[i] = tj_pctx_str(c, k->s);
    vals[i] = tj_val_to_attr(c, &dict->items[2 * i + 1]);
  }
  attrs->n = dict->n;
  attrs->keys = keys;
  attrs->values = vals;
  return attrs;
}

/* ---- decorators ---- */

static bool bool_kwarg(tj_pctx_t *c, const tj_py_t *call, const char *name, bool dflt) {
  const tj_py_t *k = tj_py_kwarg(call, name);
  if (!k) return dflt;
  if (k->kind != PY_CONST || !strcmp(k->s, "None")) tj_parse_fail(c->src, k->pos, "%s= expects True or False", name);
  return !strcmp(k->s, "True");
}

bool tj_parse_decorator(tj_pctx_t *c, const tj_py_t *node, tj_deco_t *out) {
  const tj_py_t *callee = node->kind == PY_CALL ? node->a : node;
  const char *name = tj_py_dotted(c->src, callee);
  if (!name) return false;
  static const struct { const char *spelling, *kind; } known[] = {
      {"I.ir_module", "I.ir_module"}, {"tvm.script.ir_module", "I.ir_module"}, {"ir_module", "I.ir_module"},
      {"R.function", "R.function"}, {"relax.function", "R.function"},
      {"T.prim_func", "T.prim_func"}, {"tir.prim_func", "T.prim_func"}};
  out->kind = NULL;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(name, known[i].spelling)) out->kind = known[i].kind;
  if (!out->kind) return false;
  out->is_private = false;
  out->is_pure = true;
  if (node->kind == PY_CALL) {
    static const char *const kws[] = {"private", "pure", "check_well_formed", "s_tir", NULL};
    tj_py_check_kwargs(c, node, kws);
    if (node->n) tj_parse_fail(c->src, node->items[0]->pos, "%s takes keyword arguments only", name);
    out->is_private = bool_kwarg(c, node, "private", false);
    out->is_pure = bool_kwarg(c, node, "pure", true);
  }
  return true;
}

/* ---- module ---- */

/* Global infos (I.vdevice(...), ...) kept opaque: calls become {"__call__": name, "args": [...]}. */
static tj_attr_value_t py_to_opaque_attr(tj_pctx_t *c, const tj_py_t *e) {
  tj_attr_value_t a;
  memset(&a, 0, sizeof a);
  tj_pctx_enter(c, e->pos);
  if (e->kind == PY_LIST || e->kind == PY_TUPLE) {
    tj_attr_value_t *items = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attr_value_t) * (size_t)(e->n + 1)));
    for (int i = 0; i < e->n; i++) items[i] = py_to_opaque_attr(c, e->items[i]);
    a.kind = TJ_ATTR_LIST;
    a.list.n = e->n;
    a.list.items = items;
  } else if (e->kind == PY_DICT) {
    const tj_attrs_t *d = NULL;
    for (int i = 0; i < e->n; i++) {
      if (e->items[i]->kind != PY_STR) tj_parse_fail(c->src, e->items[i]->pos, "expected a string key");
      d = TJ_CHK(c, tj_attrs_set(c->arena, d, tj_pctx_str(c, e->items[i]->s), py_to_opaque_attr(c, e->items2[i])));
    }
    a.kind = TJ_ATTR_DICT;
    a.dict = d ? d : TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attrs_t)));
  } else if (e->kind == PY_CALL) {
    const char *fn = tj_py_dotted(c->src, e->a);
    if (!fn) tj_parse_fail(c->src, e->pos, "expected a call such as I.vdevice(...)");
    tj_attr_value_t *args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attr_value_t) * (size_t)(e->n + 1)));
    for (int i = 0; i < e->n; i++) args[i] = py_to_opaque_attr(c, e->items[i]);
    tj_attr_value_t list = {.kind = TJ_ATTR_LIST};
    list.list.n = e->n;
    list.list.items = args;
    const tj_attrs_t *d = TJ_CHK(c, tj_attrs_set(c->arena, NULL, "__call__", tj_attr_str(tj_pctx_str(c, fn))));
    d = TJ_CHK(c, tj_attrs_set(c->arena, d, "args", list));
    for (int i = 0; i < e->n2; i++)
      d = TJ_CHK(c, tj_attrs_set(c->arena, d, tj_pctx_str(c, e->kw[i]), py_to_opaque_attr(c, e->items2[i])));
    a.kind = TJ_ATTR_DICT;
    a.dict = d;
  } else {
    tj_val_t v = tj_tir_eval(c, e);
    a = tj_val_to_attr(c, &v);
  }
  tj_pctx_leave(c);
  return a;
}

typedef struct modinfo {
  const tj_attrs_t *attrs;
  const tj_attrs_t *global_infos;
} modinfo_t;

static void parse_class_call(tj_pctx_t *c, const tj_py_t *call, modinfo_t *mi) {
  const char *fn = tj_py_dotted(c->src, call->a);
  if (fn && !strcmp(fn, "I.module_attrs")) {
    tj_py_check_nargs(c, call, fn, 1, 1);
    tj_val_t v = tj_tir_eval(c, call->items[0]);
    if (v.kind != V_DICT) tj_parse_fail(c->src, v.pos, "I.module_attrs expects a dict");
    mi->attrs = tj_val_to_attrs(c, &v);
    return;
  }
  if (fn && !strcmp(fn, "I.module_global_infos")) {
    tj_py_check_nargs(c, call, fn, 1, 1);
    tj_attr_value_t a = py_to_opaque_attr(c, call->items[0]);
    if (a.kind != TJ_ATTR_DICT) tj_parse_fail(c->src, call->items[0]->pos, "I.module_global_infos expects a dict");
    mi->global_infos = a.dict;
    return;
  }
  tj_parse_fail(c->src, call->pos, "expected a function definition, I.module_attrs(...) or I.module_global_infos(...) in the module class");
}

typedef struct fdef {
  const tj_py_t *def;
  tj_deco_t deco;
} fdef_t;

static void collect_function(tj_pctx_t *c, const tj_py_t *def, tj_ptrvec_t *defs) {
  if (def->nd != 1) tj_parse_fail(c->src, def->pos, "function '%s' needs exactly one decorator: @R.function or @T.prim_func", def->s);
  fdef_t *f = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *f));
  f->def = def;
  if (!tj_parse_decorator(c, def->decos[0], &f->deco) || !strcmp(f->deco.kind, "I.ir_module"))
    tj_parse_fail(c->src, def->decos[0]->pos, "expected @R.function or @T.prim_func");
  for (int i = 0; i < defs->n; i++)
    if (!strcmp(((const fdef_t *)defs->items[i])->def->s, def->s))
      tj_parse_fail(c->src, def->pos, "function '%s' is defined twice", def->s);
  tj_ptrvec_push(c->src, defs, f);
}

static void parse_class_body(tj_pctx_t *c, const tj_py_t *cls, tj_ptrvec_t *defs, modinfo_t *mi) {
  for (int i = 0; i < cls->n; i++) {
    const tj_py_t *s = cls->items[i];
    if (s->kind == PY_DEF) collect_function(c, s, defs);
    else if (s->kind == PY_PASS || s->kind == PY_IMPORT) continue;
    else if (s->kind == PY_EXPR_STMT && s->a->kind == PY_STR) continue;
    else if (s->kind == PY_EXPR_STMT && s->a->kind == PY_CALL) parse_class_call(c, s->a, mi);
    else if (s->kind == PY_ASSIGN && s->a->kind == PY_CALL && tj_py_dotted(c->src, s->a->a) &&
             !strcmp(tj_py_dotted(c->src, s->a->a), "R.ExternFunc"))
      continue; /* module-level extern function objects are not kept */
    else tj_parse_fail(c->src, s->pos, "unexpected %s in the module class", tj_py_kind_name(s->kind));
  }
}

static tj_module_t *build_module(tj_pctx_t *c, const tj_ptrvec_t *defs, const modinfo_t *mi) {
  c->n_funcs = defs->n;
  c->funcs = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_pfunc_t) * (size_t)(defs->n + 1)));
  for (int i = 0; i < defs->n; i++) {
    const fdef_t *d = defs->items[i];
    c->funcs[i].name = d->def->s;
    c->funcs[i].def = d->def;
    c->funcs[i].is_prim = !strcmp(d->deco.kind, "T.prim_func");
  }
  for (int i = 0; i < defs->n; i++) /* signatures first: bodies may call later functions */
    if (!c->funcs[i].is_prim) c->funcs[i].decl_sinfo = tj_parse_relax_decl(c, c->funcs[i].def);
  tj_func_entry_t *entries = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_func_entry_t) * (size_t)(defs->n + 1)));
  for (int i = 0; i < defs->n; i++) {
    const fdef_t *d = defs->items[i];
    tj_pfunc_t *f = &c->funcs[i];
    entries[i].name = tj_pctx_str(c, f->name);
    entries[i].is_prim = f->is_prim;
    if (f->is_prim) entries[i].prim = f->prim = tj_parse_prim_func(c, d->def, d->deco.is_private);
    else entries[i].relax = f->relax = tj_parse_relax_func(c, d->def, d->deco.is_private, d->deco.is_pure);
  }
  tj_module_t *m = TJ_CHK(c, tj_module_new(c->arena, defs->n, entries, mi->attrs));
  m->global_infos = mi->global_infos;
  return m;
}

static tj_module_t *parse_top(tj_pctx_t *c, const tj_py_t *const *stmts, int n) {
  tj_ptrvec_t defs = {0};
  modinfo_t mi = {0};
  int n_classes = 0;
  for (int i = 0; i < n; i++) {
    const tj_py_t *s = stmts[i];
    if (s->kind == PY_IMPORT || s->kind == PY_PASS || (s->kind == PY_EXPR_STMT && s->a->kind == PY_STR)) continue;
    if (s->kind == PY_CLASS) {
      tj_deco_t deco;
      if (s->nd != 1 || !tj_parse_decorator(c, s->decos[0], &deco) || strcmp(deco.kind, "I.ir_module"))
        tj_parse_fail(c->src, s->pos, "a module class needs the decorator @I.ir_module");
      if (++n_classes > 1 || defs.n) tj_parse_fail(c->src, s->pos, "only one module per file");
      c->class_name = s->s;
      parse_class_body(c, s, &defs, &mi);
    } else if (s->kind == PY_DEF) {
      if (n_classes) tj_parse_fail(c->src, s->pos, "only one module per file");
      collect_function(c, s, &defs);
    } else {
      tj_parse_fail(c->src, s->pos, "expected an @I.ir_module class or an @R.function / @T.prim_func definition, found %s",
                    tj_py_kind_name(s->kind));
    }
  }
  if (!n_classes && !defs.n) {
    tj_src_pos_t p = {1, 1, 0};
    tj_parse_fail(c->src, p, "no module: expected an @I.ir_module class or an @R.function / @T.prim_func definition%s",
                  c->src->len == 0 ? " (the file is empty)" : "");
  }
  tj_module_t *m = build_module(c, &defs, &mi);
  m->standalone = !n_classes && defs.n == 1;
  return m;
}

tj_status_t *tj_parse_module(tj_arena_t *arena, const char *filename, const char *text, size_t len,
                             tj_module_t **out_module) {
  if (!arena || !out_module || (!text && len))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "tj_parse_module: arena, text and out_module are required");
  if (!filename) filename = "<input>";
  tj_arena_t *scratch = tj_arena_create();
  if (!scratch) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", filename);
  jmp_buf on_error;
  tj_parse_src_t src = {filename, text ? text : "", len, scratch, &on_error, NULL};
  if (setjmp(on_error)) {
    tj_arena_free(scratch);
    return src.error;
  }
  tj_tok_t *toks;
  int n_toks;
  tj_lex(&src, &toks, &n_toks);
  const tj_py_t *const *stmts;
  int n;
  tj_py_parse(&src, toks, n_toks, &stmts, &n);
  tj_pctx_t *ctx = tj_parse_check(&src, tj_arena_alloc(scratch, sizeof *ctx));
  ctx->src = &src;
  ctx->arena = arena;
  tj_module_t *m = parse_top(ctx, stmts, n);
  tj_arena_free(scratch);
  *out_module = m;
  return NULL;
}

tj_status_t *tj_parse_file(tj_arena_t *arena, const char *path, tj_module_t **out_module) {
  FILE *f = fopen(path, "rb");
  if (!f) return tj_status_new(TJ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return tj_status_new(TJ_ERR_IO, "%s: is a directory; give the model file (.rx) itself", path);
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = tj_malloc(cap);
  while (buf) {
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len < cap) break;
    char *grown = tj_realloc(buf, cap * 2);
    if (!grown) {
      tj_free(buf);
      buf = NULL;
      break;
    }
    buf = grown;
    cap *= 2;
  }
  bool read_error = ferror(f) != 0;
  fclose(f);
  if (!buf) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory while reading", path);
  if (read_error) {
    tj_free(buf);
    return tj_status_new(TJ_ERR_IO, "%s: cannot read the file", path);
  }
  tj_status_t *s = tj_parse_module(arena, path, buf, len, out_module);
  tj_free(buf);
  return s;
}
