/* Calls against their callee's signature (docs/semantics.md §6.2.1), the check
 * whose absence let the seed bug through: every call_tir argument and out_sinfo entry
 * against the callee PrimFunc's buffers, in dtype, ndim and each dim, with the
 * callee's size vars bound by their first use and checked at every later use. Also
 * calls of module Relax functions, and the FuseTIR invariant of Primitive functions. */
#include <stdint.h>
#include <string.h>

#include "ir/sinfo.h"
#include "ir/verify/verify_internal.h"
#include "support/vec.h"

static const char *plural(int n) { return n == 1 ? "" : "s"; }

/* ---------- callee size vars bound to caller values ---------- */

typedef struct binder {
  const tj_tir_expr_t **vars;
  const tj_tir_expr_t **values;
  int n, cap;
} binder_t;

static const tj_tir_expr_t *lookup(const binder_t *bd, const tj_tir_expr_t *var) {
  for (int i = 0; bd && i < bd->n; i++)
    if (bd->vars[i] == var) return bd->values[i];
  return NULL;
}

static void bind(binder_t *bd, const tj_tir_expr_t *var, const tj_tir_expr_t *value) {
  if (!var || var->kind != TJ_TIR_VAR || !value || lookup(bd, var) || bd->n == bd->cap) return;
  bd->vars[bd->n] = var;
  bd->values[bd->n] = value;
  bd->n++;
}

/* Caller vars given trial values, to compare two symbolic caller expressions. */
#define MAX_SAMPLE_VARS 8
typedef struct sample {
  const tj_tir_expr_t *vars[MAX_SAMPLE_VARS];
  int64_t values[MAX_SAMPLE_VARS];
  int n;
} sample_t;

static bool sample_value(const sample_t *smp, const tj_tir_expr_t *var, int64_t *out) {
  for (int i = 0; smp && i < smp->n; i++)
    if (smp->vars[i] == var) return *out = smp->values[i], true;
  return false;
}

/* Value of an index expression: callee vars read through the binder, caller vars from
 * the sample (NULL: none, so only constants evaluate). */
static bool eval_const(const tj_tir_expr_t *e, const binder_t *bd, const sample_t *smp, int depth, int64_t *out) {
  if (!e || depth > 64) return false;
  int64_t a, b;
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
      *out = e->int_imm;
      return true;
    case TJ_TIR_VAR: {
      const tj_tir_expr_t *v = lookup(bd, e);
      if (v) return eval_const(v, NULL, smp, depth + 1, out); /* bound values are caller expressions */
      return sample_value(smp, e, out);
    }
    case TJ_TIR_CAST:
      return tj_dtype_is_int(e->dtype) && eval_const(e->unary.operand, bd, smp, depth + 1, out);
    default:
      break;
  }
  if (!tj_tir_kind_is_binary(e->kind) || tj_tir_kind_is_compare(e->kind)) return false;
  if (!eval_const(e->binary.a, bd, smp, depth + 1, &a) || !eval_const(e->binary.b, bd, smp, depth + 1, &b))
    return false;
  if (b == -1 && a == INT64_MIN) return false; /* the one overflowing division */
  switch (e->kind) {
    case TJ_TIR_ADD: return !__builtin_add_overflow(a, b, out);
    case TJ_TIR_SUB: return !__builtin_sub_overflow(a, b, out);
    case TJ_TIR_MUL: return !__builtin_mul_overflow(a, b, out);
    case TJ_TIR_MIN: *out = a < b ? a : b; return true;
    case TJ_TIR_MAX: *out = a > b ? a : b; return true;
    case TJ_TIR_DIV: case TJ_TIR_FLOOR_DIV:
      if (b == 0) return false;
      *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)) && e->kind == TJ_TIR_FLOOR_DIV ? 1 : 0);
      return true;
    case TJ_TIR_MOD: case TJ_TIR_FLOOR_MOD:
      if (b == 0) return false;
      *out = a % b;
      if (e->kind == TJ_TIR_FLOOR_MOD && *out != 0 && ((*out < 0) != (b < 0))) *out += b;
      return true;
    default:
      return false;
  }
}

/* Callee expression p (vars through the binder) structurally equal to caller a. */
static bool equal_through(const tj_tir_expr_t *p, const tj_tir_expr_t *a, const binder_t *bd, int depth) {
  if (!p || !a || depth > 64) return false;
  if (p->kind == TJ_TIR_VAR) {
    const tj_tir_expr_t *v = lookup(bd, p);
    return v ? tj_sinfo_prim_expr_equal(v, a) : p == a;
  }
  int64_t x, y;
  if (tj_tir_is_const_int(p, &x) && tj_tir_is_const_int(a, &y)) return x == y;
  if (p->kind == TJ_TIR_CAST) return equal_through(p->unary.operand, a, bd, depth + 1);
  if (a->kind == TJ_TIR_CAST) return equal_through(p, a->unary.operand, bd, depth + 1);
  if (p->kind != a->kind || !tj_tir_kind_is_binary(p->kind)) return false;
  return equal_through(p->binary.a, a->binary.a, bd, depth + 1) && equal_through(p->binary.b, a->binary.b, bd, depth + 1);
}

/* Gathers the caller vars of e into smp; callee vars (callee_side) must be bound, as
 * their caller values are what is compared. False when one is not, or too many vars. */
static bool collect_vars(const tj_tir_expr_t *e, const binder_t *bd, bool callee_side, sample_t *smp, int depth) {
  if (!e || depth > 64) return false;
  int64_t ignored;
  if (e->kind == TJ_TIR_VAR) {
    const tj_tir_expr_t *v = callee_side ? lookup(bd, e) : NULL;
    if (v) return collect_vars(v, NULL, false, smp, depth + 1);
    if (callee_side) return false;
    if (sample_value(smp, e, &ignored)) return true;
    if (smp->n == MAX_SAMPLE_VARS || !tj_dtype_is_int(e->dtype)) return false;
    smp->vars[smp->n++] = e;
    return true;
  }
  if (e->kind == TJ_TIR_INT_IMM) return true;
  if (e->kind == TJ_TIR_CAST) return collect_vars(e->unary.operand, bd, callee_side, smp, depth + 1);
  if (!tj_tir_kind_is_binary(e->kind)) return false;
  return collect_vars(e->binary.a, bd, callee_side, smp, depth + 1) &&
         collect_vars(e->binary.b, bd, callee_side, smp, depth + 1);
}

/* Whether a callee dim, its vars replaced by their caller values (from the arguments'
 * shapes and the tir_vars), differs from the caller's dim for some values of the caller's
 * vars: `n * 2` against `n * 3` does, `n * 2` against `2 * n` does not. Tried at a few
 * assignments of distinct primes; a dim the callee reads through an unbound var stays
 * undecided (false). */
static bool differs_for_some_values(const tj_tir_expr_t *p, const tj_tir_expr_t *a, const binder_t *bd) {
  static const int64_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83};
  sample_t smp = {.n = 0};
  if (!collect_vars(p, bd, true, &smp, 0) || !collect_vars(a, NULL, false, &smp, 0)) return false;
  for (int k = 0; k < 3; k++) {
    for (int j = 0; j < smp.n; j++) smp.values[j] = primes[(k * 7 + j) % (int)(sizeof primes / sizeof primes[0])];
    int64_t x, y;
    if (eval_const(p, bd, &smp, 0, &x) && eval_const(a, NULL, &smp, 0, &y) && x != y) return true;
  }
  return false;
}

/* A callee dim against a caller dim: false when they provably differ, when a callee var
 * already bound to one symbolic value meets a different symbolic value, or when the
 * callee's dim with its vars substituted differs from the caller's for some values. */
static bool dim_agrees(const tj_tir_expr_t *p, const tj_tir_expr_t *a, const binder_t *bd) {
  int64_t pv, av;
  bool pk = eval_const(p, bd, NULL, 0, &pv), ak = eval_const(a, NULL, NULL, 0, &av);
  if (pk && ak) return pv == av;
  if (equal_through(p, a, bd, 0)) return true;
  if (p && p->kind == TJ_TIR_VAR && lookup(bd, p) && !pk && !ak) return false;
  return !differs_for_some_values(p, a, bd); /* otherwise a runtime check would decide */
}

static void bind_dims(binder_t *bd, const tj_sinfo_t *s, const tj_buffer_t *b) {
  if (!tj_sinfo_is_tensor(s) || !b || !s->tensor.shape || s->tensor.ndim != b->ndim) return;
  for (int i = 0; i < b->ndim; i++)
    if (b->shape && b->shape[i] && b->shape[i]->kind == TJ_TIR_VAR) bind(bd, b->shape[i], s->tensor.shape[i]);
}

/* Tensor sinfo against a buffer; unknown dtype, ndim or shape are tolerated. */
static bool matches_buffer(const tj_sinfo_t *s, const tj_buffer_t *b, const binder_t *bd) {
  if (!tj_sinfo_is_tensor(s) || !b) return false;
  if (!tj_dtype_is_void(s->tensor.dtype) && !tj_dtype_eq(s->tensor.dtype, b->dtype)) return false;
  if (s->tensor.ndim < 0) return true;
  if (s->tensor.ndim != b->ndim) return false;
  if (!s->tensor.shape || !b->shape) return true;
  for (int i = 0; i < b->ndim; i++)
    if (!dim_agrees(b->shape[i], s->tensor.shape[i], bd)) return false;
  return true;
}

/* ---------- call_tir ---------- */

typedef struct call_tir_check {
  tj_verify_report_t *r;
  const tj_verify_site_t *site;
  const char *callee;
  const tj_prim_func_t *f;
  tj_call_tir_view_t v;
  int n_out, n_tir;
  const tj_tir_expr_t *const *tir_values; /* n_tir values, or NULL when unknown */
  binder_t bd;
} call_tir_check_t;

static const char *param_name(const tj_prim_func_t *f, int i) {
  const tj_tir_expr_t *p = f->params ? f->params[i] : NULL;
  if (p && p->kind == TJ_TIR_VAR && p->var.name) return p->var.name;
  const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
  return (b && b->name) ? b->name : "?";
}

static const tj_buffer_t *param_buffer(const tj_prim_func_t *f, int i) {
  return f->buffer_map ? f->buffer_map[i] : NULL;
}

/* "float16[16, 32]" for a buffer param, its dtype ("int64") for a scalar. */
static const char *param_type(call_tir_check_t *k, int i) {
  const tj_buffer_t *b = param_buffer(k->f, i);
  if (b) return tj_verify_fmt_buffer(k->r, b);
  const tj_tir_expr_t *p = k->f->params ? k->f->params[i] : NULL;
  return p ? tj_verify_fmt_dtype(k->r, p->dtype) : "?";
}

static const tj_sinfo_t *out_entry(const call_tir_check_t *k, int j) {
  const tj_sinfo_t *o = k->v.out_sinfo;
  return (o && o->kind == TJ_SINFO_TUPLE) ? o->tuple.fields[j] : o;
}

static const char *arg_label(tj_verify_report_t *r, const tj_rx_expr_t *a) {
  if (tj_rx_is_var(a)) return a->var.name ? a->var.name : "?";
  return a ? tj_arena_printf(r->scratch, "<%s>", tj_rx_expr_kind_name(a->kind)) : "?";
}

static bool setup_tir_vars(call_tir_check_t *k) {
  const tj_rx_expr_t *t = k->v.tir_vars;
  if (!t) return true;
  if (t->kind == TJ_RX_SHAPE_EXPR) {
    k->n_tir = t->shape_expr.n;
    k->tir_values = t->shape_expr.values;
    return true;
  }
  const tj_sinfo_t *s = tj_verify_sinfo_of(k->r, t, NULL);
  if (s && s->kind == TJ_SINFO_SHAPE && s->shape.ndim >= 0) {
    k->n_tir = s->shape.ndim;
    k->tir_values = s->shape.values;
    return true;
  }
  tj_verify_problem(k->r, "%s: %s: call_tir tir_vars is a %s whose length is unknown", k->site->func, k->site->where,
                    tj_rx_expr_kind_name(t->kind));
  return false;
}

static bool check_out_sinfo_kind(call_tir_check_t *k) {
  const tj_sinfo_t *o = k->v.out_sinfo;
  bool ok = tj_sinfo_is_tensor(o);
  if (o && o->kind == TJ_SINFO_TUPLE) {
    ok = true;
    for (int j = 0; j < o->tuple.n; j++) ok = ok && tj_sinfo_is_tensor(o->tuple.fields[j]);
  }
  if (!ok)
    tj_verify_problem(k->r, "%s: %s: call_tir out_sinfo %s is not a tensor or a tuple of tensors", k->site->func,
                      k->site->where, tj_verify_fmt_sinfo(k->r, o));
  k->n_out = (o && o->kind == TJ_SINFO_TUPLE) ? o->tuple.n : 1;
  return ok;
}

static void bind_all(call_tir_check_t *k) {
  for (int i = 0; i < k->v.n_args; i++)
    bind_dims(&k->bd, tj_verify_sinfo_of(k->r, k->v.args[i], NULL), param_buffer(k->f, i));
  for (int t = 0; t < k->n_tir && k->tir_values; t++) {
    int p = k->v.n_args + k->n_out + t;
    if (!param_buffer(k->f, p) && k->f->params) bind(&k->bd, k->f->params[p], k->tir_values[t]);
  }
  for (int j = 0; j < k->n_out; j++) bind_dims(&k->bd, out_entry(k, j), param_buffer(k->f, k->v.n_args + j));
}

/* A bare T.handle parameter (no buffer) takes any tensor: it is read as a DLTensor. */
static bool is_raw_handle(const call_tir_check_t *k, int i) {
  const tj_tir_expr_t *p = k->f->params ? k->f->params[i] : NULL;
  return !param_buffer(k->f, i) && p && p->dtype.code == TJ_DT_HANDLE;
}

/* A scalar parameter takes a PrimValue of its dtype (TVM legalizes `R.add(x, R.prim_value(...))` so). */
static bool matches_scalar(const call_tir_check_t *k, int i, const tj_sinfo_t *s) {
  const tj_tir_expr_t *p = k->f->params ? k->f->params[i] : NULL;
  if (!p || param_buffer(k->f, i) || !s || s->kind != TJ_SINFO_PRIM) return false;
  return tj_dtype_is_void(s->prim.dtype) || tj_dtype_eq(s->prim.dtype, p->dtype);
}

static void check_args(call_tir_check_t *k) {
  for (int i = 0; i < k->v.n_args; i++) {
    const tj_rx_expr_t *a = k->v.args[i];
    const tj_sinfo_t *s = tj_verify_sinfo_of(k->r, a, NULL);
    if (!s) continue; /* reported where the var is defined */
    if (matches_scalar(k, i, s)) continue;
    if (is_raw_handle(k, i) ? tj_sinfo_is_tensor(s) : matches_buffer(s, param_buffer(k->f, i), &k->bd)) continue;
    tj_verify_problem(k->r, "%s: %s: call_tir argument %d ('%s': %s) does not match parameter %d '%s' of '%s' (%s)",
                      k->site->func, k->site->where, i, arg_label(k->r, a), tj_verify_fmt_sinfo(k->r, s), i,
                      param_name(k->f, i), k->callee, param_type(k, i));
  }
}

static void check_outputs(call_tir_check_t *k) {
  for (int j = 0; j < k->n_out; j++) {
    int p = k->v.n_args + j;
    const tj_sinfo_t *s = out_entry(k, j);
    if (is_raw_handle(k, p) ? tj_sinfo_is_tensor(s) : matches_buffer(s, param_buffer(k->f, p), &k->bd)) continue;
    tj_verify_problem(k->r, "%s: %s: call_tir out_sinfo %s does not match output parameter %d '%s' of '%s' (%s)",
                      k->site->func, k->site->where, tj_verify_fmt_sinfo(k->r, s), p, param_name(k->f, p), k->callee,
                      param_type(k, p));
  }
}

static void check_tir_vars(call_tir_check_t *k) {
  for (int t = 0; t < k->n_tir; t++) {
    int p = k->v.n_args + k->n_out + t;
    const tj_tir_expr_t *param = k->f->params ? k->f->params[p] : NULL;
    const tj_tir_expr_t *value = k->tir_values ? k->tir_values[t] : NULL;
    bool ok = !param_buffer(k->f, p) && param && tj_dtype_is_int(param->dtype) && param->dtype.lanes == 1;
    if (ok && value) ok = dim_agrees(param, value, &k->bd);
    if (ok) continue;
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_sinfo_format_dim(&sb, value);
    tj_verify_problem(k->r, "%s: %s: call_tir tir_vars value %d (%s) does not match parameter %d '%s' of '%s' (%s)",
                      k->site->func, k->site->where, t, sb.data ? sb.data : "?", p, param_name(k->f, p), k->callee,
                      param_type(k, p));
    tj_strbuf_free(&sb);
  }
}

/* Resolves the callee to a PrimFunc; reports and returns NULL otherwise (an
 * ExternFunc returns NULL silently: its signature is unknown). */
static const tj_prim_func_t *resolve_callee(tj_verify_report_t *r, const tj_verify_site_t *site,
                                            const tj_rx_expr_t *callee) {
  if (!callee) {
    tj_verify_problem(r, "%s: %s: call_tir without a callee", site->func, site->where);
    return NULL;
  }
  if (callee->kind == TJ_RX_EXTERN_FUNC) return NULL;
  if (callee->kind != TJ_RX_GLOBAL_VAR) {
    tj_verify_problem(r, "%s: %s: call_tir callee is a %s, not a GlobalVar or an extern function", site->func,
                      site->where, tj_rx_expr_kind_name(callee->kind));
    return NULL;
  }
  const char *name = callee->var.name ? callee->var.name : "?";
  const tj_func_entry_t *e = tj_verify_find_func(r->module, name);
  if (!e) {
    tj_verify_problem(r, "%s: %s: call_tir callee '%s' is not a function of the module", site->func, site->where, name);
    return NULL;
  }
  if (!e->is_prim || !e->prim) {
    tj_verify_problem(r, "%s: %s: call_tir callee '%s' is a Relax function, not a PrimFunc", site->func, site->where,
                      name);
    return NULL;
  }
  return e->prim;
}

void tj_verify_call_tir(tj_verify_report_t *r, const tj_verify_site_t *site, const tj_rx_expr_t *call) {
  call_tir_check_t k = {.r = r, .site = site};
  if (!tj_rx_as_call_tir(call, &k.v)) {
    tj_verify_problem(r, "%s: %s: call_tir must have a callee, an in-line argument tuple and one out_sinfo",
                      site->func, site->where);
    return;
  }
  if (!(k.f = resolve_callee(r, site, k.v.callee))) return;
  k.callee = k.v.callee->var.name;
  bool out_ok = check_out_sinfo_kind(&k);
  if (!setup_tir_vars(&k) || !out_ok) return;
  int needed = k.v.n_args + k.n_out + k.n_tir;
  if (needed != k.f->n_params) {
    tj_verify_problem(r, "%s: %s: call_tir passes %d argument%s, %d output%s and %d tir_var%s but '%s' has %d parameter%s",
                      site->func, site->where, k.v.n_args, plural(k.v.n_args), k.n_out, plural(k.n_out), k.n_tir,
                      plural(k.n_tir), k.callee, k.f->n_params, plural(k.f->n_params));
    return;
  }
  int cap = k.f->n_params;
  for (int i = 0; i < k.f->n_params; i++)
    if (param_buffer(k.f, i)) cap += param_buffer(k.f, i)->ndim;
  k.bd.cap = cap;
  k.bd.vars = TJ_ARENA_ARRAY(r->scratch, const tj_tir_expr_t *, cap > 0 ? cap : 1);
  k.bd.values = TJ_ARENA_ARRAY(r->scratch, const tj_tir_expr_t *, cap > 0 ? cap : 1);
  if (!k.bd.vars || !k.bd.values) {
    r->out_of_memory = true;
    return;
  }
  bind_all(&k);
  check_args(&k);
  check_outputs(&k);
  check_tir_vars(&k);
}

/* ---------- calls of module Relax functions ---------- */

void tj_verify_call_global(tj_verify_report_t *r, const tj_verify_site_t *site, const tj_rx_expr_t *call) {
  const char *name = call->call.callee->var.name;
  const tj_func_entry_t *fe = tj_verify_find_func(r->module, name);
  const tj_rx_func_t *f = (fe && !fe->is_prim) ? fe->relax : NULL;
  if (!f) return; /* PrimFuncs take tensors directly; unknown names are reported elsewhere */
  if (call->call.n_args != f->n_params) {
    tj_verify_problem(r, "%s: %s: call to '%s' passes %d argument%s but it has %d parameter%s", site->func, site->where,
                      name, call->call.n_args, plural(call->call.n_args), f->n_params, plural(f->n_params));
    return;
  }
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *p = f->params[i];
    const tj_sinfo_t *s = tj_verify_sinfo_of(r, call->call.args[i], NULL);
    if (!p || !p->sinfo || !s || tj_sinfo_base_check(p->sinfo, s) != TJ_SINFO_FAIL_L0) continue;
    tj_verify_problem(r, "%s: %s: call to '%s': argument %d ('%s': %s) does not match parameter %d '%s' (%s)",
                      site->func, site->where, name, i, arg_label(r, call->call.args[i]), tj_verify_fmt_sinfo(r, s), i,
                      p->var.name ? p->var.name : "?", tj_verify_fmt_sinfo(r, p->sinfo));
  }
}

/* ---------- Primitive functions: the FuseTIR invariant ---------- */

typedef struct buffer_use {
  const tj_buffer_t *buffer;
  const char *callee;
} buffer_use_t;

typedef struct prim_ctx {
  tj_verify_report_t *r;
  const char *func;
  const char *where;
  tj_verify_ptrset_t var_use;   /* var -> 1 + index into uses */
  tj_verify_ptrset_t tuple_src; /* tuple-valued var -> 1 + index into calls */
  TJ_VEC(buffer_use_t) uses;                 /* in the report's scratch arena */
  TJ_VEC(const tj_rx_expr_t *) calls;        /* call_tir calls producing tuples */
} prim_ctx_t;

static bool same_buffer_type(const tj_buffer_t *a, const tj_buffer_t *b) {
  if (!tj_dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim && a->shape && b->shape; i++) {
    int64_t x, y;
    if (tj_tir_is_const_int(a->shape[i], &x) && tj_tir_is_const_int(b->shape[i], &y) && x != y) return false;
  }
  return true;
}

static void record_use(prim_ctx_t *c, const tj_rx_expr_t *var, const tj_buffer_t *b, const char *callee) {
  if (!tj_rx_is_var(var) || !b) return;
  int idx = tj_verify_ptrset_get(&c->var_use, var, 0);
  if (idx) {
    const buffer_use_t *u = &c->uses.items[idx - 1];
    if (!same_buffer_type(u->buffer, b))
      tj_verify_problem(c->r, "%s: %s: var '%s' maps to buffer '%s' (%s) of '%s' and to buffer '%s' (%s) of '%s'",
                        c->func, c->where, var->var.name ? var->var.name : "?", u->buffer->name ? u->buffer->name : "?",
                        tj_verify_fmt_buffer(c->r, u->buffer), u->callee, b->name ? b->name : "?",
                        tj_verify_fmt_buffer(c->r, b), callee);
    return;
  }
  if (!tj_vec_push(&c->uses, ((buffer_use_t){b, callee}))) {
    c->r->out_of_memory = true;
    return;
  }
  tj_verify_ptrset_put(&c->var_use, var, c->uses.n);
}

static void remember_tuple_call(prim_ctx_t *c, const tj_rx_expr_t *var, const tj_rx_expr_t *call) {
  if (!tj_vec_push(&c->calls, call)) {
    c->r->out_of_memory = true;
    return;
  }
  tj_verify_ptrset_put(&c->tuple_src, var, c->calls.n);
}

/* The PrimFunc a well-formed call_tir calls, or NULL (problems are reported by
 * tj_verify_call_tir). */
static const tj_prim_func_t *callee_of(prim_ctx_t *c, const tj_rx_expr_t *call, tj_call_tir_view_t *v, int *out_n_out) {
  if (!tj_rx_as_call_tir(call, v) || !v->callee || v->callee->kind != TJ_RX_GLOBAL_VAR || !v->callee->var.name)
    return NULL;
  const tj_func_entry_t *fe = tj_verify_find_func(c->r->module, v->callee->var.name);
  const tj_prim_func_t *f = (fe && fe->is_prim) ? fe->prim : NULL;
  const tj_sinfo_t *o = v->out_sinfo;
  int n_out = (o && o->kind == TJ_SINFO_TUPLE) ? o->tuple.n : 1;
  if (!f || !f->buffer_map || f->n_params < v->n_args + n_out) return NULL;
  *out_n_out = n_out;
  return f;
}

static void prim_binding(prim_ctx_t *c, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *val = b->value;
  tj_call_tir_view_t v;
  int n_out = 0;
  if (val && tj_rx_is_op_call(val, "relax.call_tir")) {
    const tj_prim_func_t *f = callee_of(c, val, &v, &n_out);
    if (!f) return;
    for (int i = 0; i < v.n_args; i++) record_use(c, v.args[i], f->buffer_map[i], v.callee->var.name);
    if (v.out_sinfo && v.out_sinfo->kind == TJ_SINFO_TUPLE) remember_tuple_call(c, b->var, val);
    else record_use(c, b->var, f->buffer_map[v.n_args], v.callee->var.name);
    return;
  }
  if (val && val->kind == TJ_RX_TUPLE_GET_ITEM) {
    int idx = tj_verify_ptrset_get(&c->tuple_src, val->get_item.tuple, 0);
    if (!idx) return;
    const tj_prim_func_t *f = callee_of(c, c->calls.items[idx - 1], &v, &n_out);
    int k = val->get_item.index;
    if (f && k >= 0 && k < n_out) record_use(c, b->var, f->buffer_map[v.n_args + k], v.callee->var.name);
    return;
  }
  if (val && val->kind == TJ_RX_TUPLE) return;
  /* Calls outside the module's PrimFuncs: FuseTIR leaves them alone, as TVM's does. */
  if (val && (tj_rx_is_op_call(val, "relax.call_dps_packed") || tj_rx_is_op_call(val, "relax.call_tir_inplace") ||
              tj_rx_is_op_call(val, "relax.call_pure_packed") ||
              (val->kind == TJ_RX_CALL && val->call.callee->kind == TJ_RX_EXTERN_FUNC)))
    return;
  const char *what = val ? tj_rx_expr_kind_name(val->kind) : "nothing";
  if (val && val->kind == TJ_RX_CALL && val->call.callee) {
    const tj_rx_expr_t *callee = val->call.callee;
    const char *cn = callee->kind == TJ_RX_OP ? callee->op.name
                     : (tj_rx_is_var(callee) || callee->kind == TJ_RX_GLOBAL_VAR) ? callee->var.name
                                                                                  : NULL;
    what = tj_arena_printf(c->r->scratch, "a call to '%s'", cn ? cn : tj_rx_expr_kind_name(callee->kind));
  }
  tj_verify_problem(c->r, "%s: %s: a Primitive function may only bind call_tir, tuples and tuple items (found %s)",
                    c->func, c->where, what ? what : "?");
}

void tj_verify_primitive_func(tj_verify_report_t *r, const char *name, const tj_rx_func_t *f) {
  if (!f->body || f->body->kind != TJ_RX_SEQ) return;
  prim_ctx_t c = {.r = r, .func = name, .uses = {.arena = r->scratch}, .calls = {.arena = r->scratch}};
  tj_verify_ptrset_init(&c.var_use);
  tj_verify_ptrset_init(&c.tuple_src);
  const tj_rx_expr_t *seq = f->body;
  for (int bi = 0; bi < seq->seq.n_blocks; bi++) {
    const tj_rx_block_t *blk = &seq->seq.blocks[bi];
    for (int i = 0; i < blk->n_bindings; i++) {
      const tj_rx_binding_t *b = &blk->bindings[i];
      const char *vn = (tj_rx_is_var(b->var) && b->var->var.name) ? b->var->var.name : "?";
      c.where = tj_arena_printf(r->scratch, "binding '%s'", vn);
      if (!c.where) c.where = "binding";
      prim_binding(&c, b);
    }
  }
  if (c.var_use.failed || c.tuple_src.failed) r->out_of_memory = true;
  tj_verify_ptrset_free(&c.var_use);
  tj_verify_ptrset_free(&c.tuple_src);
}
