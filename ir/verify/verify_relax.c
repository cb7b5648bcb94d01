/* Relax structure (docs/semantics.md §6.1): definition before use, a single
 * definition per var, dataflow scoping, A-normal form, no If in dataflow blocks,
 * struct info present and binding annotations compatible with the value (at TVM's
 * level L0: kind, dtype and ndim; shapes may disagree, as TVM's parser allowed), and
 * a returned tensor agrees with a declared tensor return in dtype. */
#include <string.h>

#include "ir/sinfo.h"
#include "ir/verify/verify_internal.h"
#include "ir/visit.h"
#include "support/alloc.h"
#include "support/vec.h"

enum var_state { ABSENT = 0, IN_SCOPE, DATAFLOW_CLOSED, OUT_OF_SCOPE };

typedef struct rx_ctx {
  tj_verify_report_t *r;
  tj_verify_ptrset_t state;     /* var -> var_state */
  tj_verify_ptrset_t all_defs;  /* every var defined anywhere in the function */
  tj_verify_ptrset_t *all_params;
  TJ_VEC(const tj_rx_expr_t *) defined; /* definition stack, for closing scopes */
  tj_verify_site_t site;
  const char *binding_name;     /* names nested functions */
  bool in_dataflow;
  bool failed;
} rx_ctx_t;

static const char *var_name(const tj_rx_expr_t *v) { return (v && v->var.name) ? v->var.name : "?"; }

#define PROBLEM(c, fmt, ...) \
  tj_verify_problem((c)->r, "%s: %s: " fmt, (c)->site.func, (c)->site.where, __VA_ARGS__)

static void push_defined(rx_ctx_t *c, const tj_rx_expr_t *v) {
  if (!tj_vec_push(&c->defined, v)) c->failed = true;
}

/* Ends the visibility of everything defined since `mark`: dataflow vars only (end of
 * a dataflow block, R.output vars stay visible), or all (end of a branch/function). */
static void close_scope(rx_ctx_t *c, int mark, bool dataflow_only) {
  for (int i = mark; i < c->defined.n; i++) {
    const tj_rx_expr_t *v = c->defined.items[i];
    int st = tj_verify_ptrset_get(&c->state, v, ABSENT);
    if (dataflow_only) {
      if (v->kind == TJ_RX_DATAFLOW_VAR && st == IN_SCOPE) tj_verify_ptrset_put(&c->state, v, DATAFLOW_CLOSED);
    } else if (st == IN_SCOPE) {
      tj_verify_ptrset_put(&c->state, v, OUT_OF_SCOPE);
    }
  }
  if (!dataflow_only) c->defined.n = mark;
}

static void define_var(rx_ctx_t *c, const tj_rx_expr_t *v) {
  if (!tj_rx_is_var(v)) {
    PROBLEM(c, "the bound name is a %s, not a variable", v ? tj_rx_expr_kind_name(v->kind) : "missing expression");
    return;
  }
  if (v->kind == TJ_RX_DATAFLOW_VAR && !c->in_dataflow)
    PROBLEM(c, "dataflow var '%s' is defined outside a dataflow block", var_name(v));
  if (tj_verify_ptrset_get(&c->state, v, ABSENT) != ABSENT)
    PROBLEM(c, "var '%s' is defined more than once", var_name(v));
  if (!v->sinfo) PROBLEM(c, "var '%s' has no struct info", var_name(v));
  tj_verify_ptrset_put(&c->state, v, IN_SCOPE);
  push_defined(c, v);
}

static void use_var(rx_ctx_t *c, const tj_rx_expr_t *v) {
  switch (tj_verify_ptrset_get(&c->state, v, ABSENT)) {
    case IN_SCOPE:
      return;
    case DATAFLOW_CLOSED:
      PROBLEM(c, "dataflow var '%s' is used outside its dataflow block", var_name(v));
      return;
    case OUT_OF_SCOPE:
      PROBLEM(c, "var '%s' is used outside the scope that defines it", var_name(v));
      return;
    default:
      if (tj_verify_ptrset_get(&c->all_defs, v, 0))
        PROBLEM(c, "var '%s' is used before it is defined", var_name(v));
      else
        PROBLEM(c, "var '%s' is not defined", var_name(v));
  }
}

static bool is_leaf(const tj_rx_expr_t *e) {
  switch (e->kind) {
    case TJ_RX_VAR: case TJ_RX_DATAFLOW_VAR: case TJ_RX_GLOBAL_VAR: case TJ_RX_CONSTANT:
    case TJ_RX_SHAPE_EXPR: case TJ_RX_PRIM_VALUE: case TJ_RX_STRING_IMM: case TJ_RX_DATA_TYPE_IMM:
    case TJ_RX_EXTERN_FUNC: case TJ_RX_OP:
      return true;
    default:
      return false;
  }
}

static void check_expr(rx_ctx_t *c, const tj_rx_expr_t *e);
static void check_func(rx_ctx_t *c, const char *name, const tj_rx_func_t *f);

static void check_operand(rx_ctx_t *c, const tj_rx_expr_t *e, const char *what, int index) {
  if (!e) {
    PROBLEM(c, "%s %d is missing", what, index);
    return;
  }
  /* A tuple reports its own non-leaf fields. */
  if (e->kind != TJ_RX_TUPLE && !is_leaf(e))
    PROBLEM(c, "%s %d is a %s, not a variable or constant (not in A-normal form)", what, index,
            tj_rx_expr_kind_name(e->kind));
  check_expr(c, e);
}

static void check_call(rx_ctx_t *c, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *callee = e->call.callee;
  if (!callee) {
    PROBLEM(c, "%s", "call without a callee");
    return;
  }
  check_expr(c, callee);
  bool is_call_tir = callee->kind == TJ_RX_OP && callee->op.name && strcmp(callee->op.name, "relax.call_tir") == 0;
  for (int i = 0; i < e->call.n_args; i++) {
    const tj_rx_expr_t *a = e->call.args[i];
    /* call_tir's callee is checked with the call, with a more precise message. */
    if (is_call_tir && i == 0 && a && a->kind == TJ_RX_GLOBAL_VAR) continue;
    check_operand(c, a, "call argument", i);
  }
  if (is_call_tir)
    tj_verify_call_tir(c->r, &c->site, e);
  else if (callee->kind == TJ_RX_GLOBAL_VAR)
    tj_verify_call_global(c->r, &c->site, e);
}

/* An If branch is its own scope: what it defines is not visible after the If. */
static void check_branch(rx_ctx_t *c, const tj_rx_expr_t *branch);

static void check_expr(rx_ctx_t *c, const tj_rx_expr_t *e) {
  if (!e) return;
  switch (e->kind) {
    case TJ_RX_VAR: case TJ_RX_DATAFLOW_VAR:
      use_var(c, e);
      break;
    case TJ_RX_GLOBAL_VAR:
      if (!e->var.name || !tj_verify_find_func(c->r->module, e->var.name))
        PROBLEM(c, "global var '%s' is not a function of the module", var_name(e));
      break;
    case TJ_RX_TUPLE:
      for (int i = 0; i < e->tuple.n; i++) check_operand(c, e->tuple.fields[i], "tuple field", i);
      break;
    case TJ_RX_TUPLE_GET_ITEM:
      check_operand(c, e->get_item.tuple, "tuple get-item operand", 0);
      break;
    case TJ_RX_CALL:
      check_call(c, e);
      break;
    case TJ_RX_IF:
      if (c->in_dataflow) PROBLEM(c, "%s", "If inside a dataflow block");
      check_operand(c, e->if_.cond, "If condition", 0);
      check_branch(c, e->if_.then_branch);
      check_branch(c, e->if_.else_branch);
      break;
    case TJ_RX_SEQ:
      PROBLEM(c, "%s", "a SeqExpr appears where only a function or If body may have one");
      break;
    case TJ_RX_FUNCTION: {
      const char *outer = c->site.func;
      const char *name = tj_arena_printf(c->r->scratch, "%s.%s", outer, c->binding_name ? c->binding_name : "<lambda>");
      check_func(c, name ? name : outer, e->function);
      break;
    }
    default:
      break;
  }
}

/* What the annotation is checked against: an op call's struct info as inference gives it
 * (the reader stores a contradicting annotation on the call, as TVM's Emit does, so the
 * call's own struct info proves nothing), unless the options trust call annotations;
 * anything else's own struct info. */
static const tj_sinfo_t *checked_value_sinfo(rx_ctx_t *c, const tj_rx_expr_t *value, tj_status_t **out_error) {
  bool op_call = value->kind == TJ_RX_CALL && value->call.callee && value->call.callee->kind == TJ_RX_OP;
  if (!op_call || c->r->trust_call_annotations) return tj_verify_sinfo_of(c->r, value, out_error);
  const tj_sinfo_t *s = NULL;
  *out_error = tj_rx_infer_sinfo(&c->r->infer, value, &s);
  return *out_error ? NULL : s;
}

static void check_annotation(rx_ctx_t *c, const tj_rx_binding_t *b) {
  if (!tj_rx_is_var(b->var) || !b->value || b->value->kind == TJ_RX_FUNCTION) return;
  tj_status_t *err = NULL;
  const tj_sinfo_t *value = checked_value_sinfo(c, b->value, &err);
  if (err) {
    /* An operator the registry does not know cannot be checked here; anything else
     * (get-item out of range, calling a tensor) is a real problem. */
    if (tj_status_code(err) != TJ_ERR_UNSUPPORTED) PROBLEM(c, "%s", tj_status_message(err));
    tj_status_free(err);
    return;
  }
  if (b->match_cast || !b->var->sinfo || !value) return;
  if (tj_sinfo_base_check(b->var->sinfo, value) == TJ_SINFO_FAIL_L0)
    PROBLEM(c, "annotated struct info %s is not compatible with the value's %s", tj_verify_fmt_sinfo(c->r, b->var->sinfo),
            tj_verify_fmt_sinfo(c->r, value));
}

static void check_binding(rx_ctx_t *c, const tj_rx_binding_t *b) {
  const char *name = tj_rx_is_var(b->var) ? var_name(b->var) : "?";
  c->site.where = tj_arena_printf(c->r->scratch, "binding '%s'", name);
  if (!c->site.where) c->site.where = "binding";
  c->binding_name = name;
  if (!b->value) {
    PROBLEM(c, "%s", "the binding has no value");
  } else {
    check_expr(c, b->value);
    check_annotation(c, b);
  }
  c->binding_name = NULL;
  if (b->var) define_var(c, b->var);
  else PROBLEM(c, "%s", "the binding has no variable");
}

/* `body_where` names the SeqExpr's result in messages (NULL: the enclosing site). */
static void check_seq(rx_ctx_t *c, const tj_rx_expr_t *seq, const char *body_where) {
  bool outer_dataflow = c->in_dataflow;
  const char *outer_where = c->site.where;
  for (int bi = 0; bi < seq->seq.n_blocks; bi++) {
    const tj_rx_block_t *blk = &seq->seq.blocks[bi];
    int mark = c->defined.n;
    c->in_dataflow = blk->is_dataflow;
    for (int i = 0; i < blk->n_bindings; i++) check_binding(c, &blk->bindings[i]);
    if (blk->is_dataflow) close_scope(c, mark, true);
  }
  c->in_dataflow = outer_dataflow;
  c->site.where = body_where ? body_where : outer_where;
  if (!seq->seq.body) {
    PROBLEM(c, "%s", "the SeqExpr has no body");
    return;
  }
  check_expr(c, seq->seq.body);
}

static void check_branch(rx_ctx_t *c, const tj_rx_expr_t *branch) {
  if (!branch) {
    PROBLEM(c, "%s", "an If branch is missing");
    return;
  }
  int mark = c->defined.n;
  bool outer_dataflow = c->in_dataflow;
  c->in_dataflow = false;
  if (branch->kind == TJ_RX_SEQ) check_seq(c, branch, NULL);
  else check_expr(c, branch);
  c->in_dataflow = outer_dataflow;
  close_scope(c, mark, false);
}

static void check_params(rx_ctx_t *c, const tj_rx_func_t *f) {
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *p = f->params ? f->params[i] : NULL;
    c->site.where = tj_arena_printf(c->r->scratch, "parameter %d '%s'", i, tj_rx_is_var(p) ? var_name(p) : "?");
    if (!c->site.where) c->site.where = "parameter";
    if (!tj_rx_is_var(p)) {
      PROBLEM(c, "%s", "the parameter is not a variable");
      continue;
    }
    if (p->kind == TJ_RX_DATAFLOW_VAR) PROBLEM(c, "%s", "a function parameter cannot be a dataflow var");
    if (tj_verify_ptrset_get(c->all_params, p, 0))
      PROBLEM(c, "var '%s' is also a parameter of another function", var_name(p));
    tj_verify_ptrset_put(c->all_params, p, 1);
    bool outer_dataflow = c->in_dataflow;
    c->in_dataflow = false;
    define_var(c, p);
    c->in_dataflow = outer_dataflow;
  }
}

static void check_return(rx_ctx_t *c, const tj_rx_func_t *f) {
  c->site.where = "return value";
  if (!f->ret_sinfo || !f->body) return;
  const tj_sinfo_t *body = tj_verify_sinfo_of(c->r, f->body, NULL);
  /* TVM never compares the two statically (a `-> None` function may return a tensor);
   * its VM checks the returned value's shape at run time (VMShapeLower), and its own
   * parser tests declare `-> R.Tensor((10,))` for a (2, 4) result. A known dtype that
   * differs is the float16/float32 mix-up tvmjit exists to catch, so that stays a problem. */
  tj_dtype_t want = tj_sinfo_is_tensor(f->ret_sinfo) ? f->ret_sinfo->tensor.dtype : TJ_VOID;
  tj_dtype_t got = tj_sinfo_is_tensor(body) ? body->tensor.dtype : TJ_VOID;
  if (!tj_dtype_is_void(want) && !tj_dtype_is_void(got) && !tj_dtype_eq(want, got))
    PROBLEM(c, "struct info %s is not compatible with the declared return type %s", tj_verify_fmt_sinfo(c->r, body),
            tj_verify_fmt_sinfo(c->r, f->ret_sinfo));
}

static void check_func(rx_ctx_t *c, const char *name, const tj_rx_func_t *f) {
  tj_verify_site_t outer_site = c->site;
  bool outer_dataflow = c->in_dataflow;
  c->site.func = name;
  c->in_dataflow = false;
  int mark = c->defined.n;
  check_params(c, f);
  c->site.where = "return value";
  if (!f->body) PROBLEM(c, "%s", "the function has no body");
  else if (f->body->kind == TJ_RX_SEQ) check_seq(c, f->body, "return value");
  else check_expr(c, f->body);
  check_return(c, f);
  close_scope(c, mark, false);
  c->site = outer_site;
  c->in_dataflow = outer_dataflow;
}

static bool collect_def(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  if (def && e) tj_verify_ptrset_put(v->ctx, e, 1);
  return true;
}

void tj_verify_relax_func(tj_verify_report_t *r, const char *name, const tj_rx_func_t *f, tj_verify_ptrset_t *all_params) {
  rx_ctx_t c = {.r = r, .all_params = all_params, .site = {.func = name, .where = "body"}};
  tj_verify_ptrset_init(&c.state);
  tj_verify_ptrset_init(&c.all_defs);
  tj_rx_visitor_t pre = {.expr = collect_def, .ctx = &c.all_defs};
  tj_rx_visit_func(&pre, f);
  check_func(&c, name, f);
  if (c.failed || c.state.failed || c.all_defs.failed) r->out_of_memory = true;
  tj_vec_free(&c.defined);
  tj_verify_ptrset_free(&c.state);
  tj_verify_ptrset_free(&c.all_defs);
}
