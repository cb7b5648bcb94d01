/* The verifier's entry point: module-level checks (names, global symbols), the
 * problem report, and small shared helpers. Relax structure is in verify_relax.c,
 * call checks in verify_calls.c, PrimFuncs in verify_tir.c.
 *
 * Every problem is one line "<function>: <where>: <what>", in program order, where
 * <where> is "binding 'x'", "parameter 0 'x'", "return value" (Relax) or
 * "block 'b'" (TIR, omitted outside blocks). Types print as "float16[16, 32]"
 * (ir/sinfo.h). The call_tir lines, which tests and `tvmjit check` users rely on:
 *   main: binding 'lv11': call_tir argument 0 ('lv10': float32[16, 32, 32, 16]) does not
 *     match parameter 0 'lv' of 'relu' (float16[16, 32, 32, 16])
 *   main: binding 'lv': call_tir out_sinfo float32[16, 32] does not match output
 *     parameter 1 'compute' of 'relu' (float16[16, 32])
 *   main: binding 'y': call_tir tir_vars value 0 (9) does not match parameter 2 'M' of 'k' (int64)
 *   main: binding 'a': call_tir passes 2 arguments, 1 output and 0 tir_vars but 'relu' has 2 parameters
 *   main: binding 'b': call_tir callee 'f' is not a function of the module | is a Relax function, not a PrimFunc
 * (each on one line). */
#include "ir/verify/verify.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/sinfo.h"
#include "ir/verify/verify_internal.h"
#include "support/alloc.h"

/* More lines than this are summarised: a broken pass can produce thousands. */
#define MAX_PROBLEMS 200

/* ---------- pointer map ---------- */

void tj_verify_ptrset_init(tj_verify_ptrset_t *s) { *s = (tj_verify_ptrset_t){.map = TJ_PTR_MAP(NULL)}; }

void tj_verify_ptrset_free(tj_verify_ptrset_t *s) { tj_map_free(&s->map); }

void tj_verify_ptrset_put(tj_verify_ptrset_t *s, const void *key, int value) {
  if (key && !tj_map_put(&s->map, key, (void *)(intptr_t)value)) s->failed = true;
}

int tj_verify_ptrset_get(const tj_verify_ptrset_t *s, const void *key, int dflt) {
  void *v;
  return tj_map_find(&s->map, key, &v) ? (int)(intptr_t)v : dflt;
}

const tj_func_entry_t *tj_verify_find_func(const tj_module_t *m, const char *name) {
  for (int i = 0; name && m->funcs && i < m->n_funcs; i++)
    if (m->funcs[i].name && strcmp(m->funcs[i].name, name) == 0) return &m->funcs[i];
  return NULL;
}

/* ---------- report ---------- */

static bool already_reported(const tj_verify_report_t *r, const char *line, size_t len) {
  const char *text = r->lines.data;
  if (!text) return false;
  for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
    if ((p == text || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0')) return true;
  return false;
}

void tj_verify_problem(tj_verify_report_t *r, const char *fmt, ...) {
  char *line;
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    line = small;
  } else {
    va_start(ap, fmt);
    line = tj_arena_alloc(r->scratch, (size_t)n + 1);
    if (line) vsnprintf(line, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (!line) {
      r->out_of_memory = true;
      return;
    }
  }
  if (already_reported(r, line, (size_t)n)) return;
  r->n_problems++;
  if (r->n_problems > MAX_PROBLEMS) return;
  if (r->lines.len) tj_strbuf_append(&r->lines, "\n");
  tj_strbuf_append(&r->lines, line);
}

const char *tj_verify_fmt_sinfo(tj_verify_report_t *r, const tj_sinfo_t *s) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_sinfo_format_short(&sb, s);
  const char *out = sb.data ? tj_arena_strdup(r->scratch, sb.data) : NULL;
  tj_strbuf_free(&sb);
  return out ? out : "?";
}

const char *tj_verify_fmt_buffer(tj_verify_report_t *r, const tj_buffer_t *b) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_sinfo_format_buffer(&sb, b);
  const char *out = sb.data ? tj_arena_strdup(r->scratch, sb.data) : NULL;
  tj_strbuf_free(&sb);
  return out ? out : "?";
}

const char *tj_verify_fmt_dtype(tj_verify_report_t *r, tj_dtype_t dt) {
  char buf[TJ_DTYPE_BUFSIZE];
  const char *out = tj_arena_strdup(r->scratch, tj_dtype_is_void(dt) ? "?" : tj_dtype_str(dt, buf));
  return out ? out : "?";
}

const tj_sinfo_t *tj_verify_sinfo_of(tj_verify_report_t *r, const tj_rx_expr_t *e, tj_status_t **out_error) {
  if (out_error) *out_error = NULL;
  if (!e) return NULL;
  if (e->sinfo) return e->sinfo;
  const tj_sinfo_t *s = NULL;
  tj_status_t *st = tj_rx_infer_sinfo(&r->infer, e, &s);
  if (st) {
    if (out_error) *out_error = st;
    else tj_status_free(st);
    return NULL;
  }
  return s;
}

/* Function signatures for inference: Relax functions by their params and return,
 * PrimFuncs as opaque (they take tensors and scalars directly, as in TVM). */
static const tj_sinfo_t *module_sinfo(void *ctx, const char *name) {
  tj_verify_report_t *r = ctx;
  const tj_func_entry_t *f = tj_verify_find_func(r->module, name);
  if (!f) return NULL;
  if (f->is_prim || !f->relax) return tj_sinfo_func(r->scratch, -1, NULL, tj_sinfo_object(r->scratch), false);
  return tj_rx_func_sinfo(r->scratch, f->relax);
}

/* ---------- module-level checks ---------- */

static void check_names(tj_verify_report_t *r) {
  const tj_module_t *m = r->module;
  for (int i = 0; i < m->n_funcs; i++) {
    const tj_func_entry_t *f = &m->funcs[i];
    if (!f->name || !*f->name) {
      tj_verify_problem(r, "module: function %d has no name", i);
      continue;
    }
    for (int j = 0; j < i; j++)
      if (m->funcs[j].name && strcmp(m->funcs[j].name, f->name) == 0) {
        tj_verify_problem(r, "module: function name '%s' is defined more than once", f->name);
        break;
      }
    if ((f->is_prim && !f->prim) || (!f->is_prim && !f->relax)) {
      tj_verify_problem(r, "%s: the function has no body", f->name);
      continue;
    }
    /* Relax functions only, as TVM's checker: PrimFuncs in TVM's own tests carry
     * global symbols that differ from their names. */
    if (f->is_prim) continue;
    const tj_attr_value_t *gs = tj_attrs_get(f->relax->attrs, "global_symbol");
    if (gs && gs->kind != TJ_ATTR_STR)
      tj_verify_problem(r, "%s: global_symbol is not a string", f->name);
    /* A bare function has no GlobalVar its symbol could disagree with (TVM checks the
     * symbol against the name only inside an IRModule). */
    else if (gs && !m->standalone && strcmp(gs->s, f->name) != 0)
      tj_verify_problem(r, "%s: global_symbol '%s' differs from the function name", f->name, gs->s);
  }
}

static bool is_primitive(const tj_rx_func_t *f) {
  const tj_attr_value_t *v = tj_attrs_get(f->attrs, "Primitive");
  return v && (v->kind != TJ_ATTR_INT || v->i != 0);
}

tj_status_t *tj_verify_module(const tj_module_t *m) { return tj_verify_module_with(m, NULL); }

tj_status_t *tj_verify_module_with(const tj_module_t *m, const tj_verify_options_t *options) {
  if (!m) return tj_status_new(TJ_ERR_VERIFY, "module: no module to verify");
  tj_verify_report_t r = {.module = m, .scratch = tj_arena_create()};
  r.trust_call_annotations = options && options->trust_call_annotations;
  if (!r.scratch) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while verifying the module");
  r.infer = (tj_infer_ctx_t){.arena = r.scratch, .global_sinfo = module_sinfo, .global_ctx = &r};
  tj_strbuf_init(&r.lines);
  tj_verify_ptrset_t all_params;
  tj_verify_ptrset_init(&all_params);

  check_names(&r);
  for (int i = 0; i < m->n_funcs; i++) {
    const tj_func_entry_t *f = &m->funcs[i];
    const char *name = f->name ? f->name : "?";
    if (f->is_prim && f->prim) tj_verify_prim_func(&r, name, f->prim);
    if (!f->is_prim && f->relax) {
      tj_verify_relax_func(&r, name, f->relax, &all_params);
      if (is_primitive(f->relax)) tj_verify_primitive_func(&r, name, f->relax);
    }
  }

  tj_status_t *st = NULL;
  if (r.out_of_memory || r.lines.failed || all_params.failed || tj_arena_failed(r.scratch)) {
    st = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while verifying the module");
  } else if (r.n_problems) {
    if (r.n_problems > MAX_PROBLEMS)
      tj_strbuf_printf(&r.lines, "\n... and %d more problems", r.n_problems - MAX_PROBLEMS);
    st = tj_status_new(TJ_ERR_VERIFY, "%s", r.lines.data ? r.lines.data : "ill-formed module");
  }
  tj_verify_ptrset_free(&all_params);
  tj_strbuf_free(&r.lines);
  tj_arena_free(r.scratch);
  return st;
}
