/* Relax functions of the TVMScript reader: struct-info annotations (with symbolic
 * shapes), bindings and blocks (dataflow outputs become Vars), calls to ops through the
 * operator registry, call_tir, module and local function calls, if/else, and the
 * parse-time checks TVM's parser makes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/op.h"
#include "ir/text/parse_ir.h"
#include "ir/sinfo.h"
#include "support/alloc.h"
#include "support/strbuf.h"

typedef struct tj_rxfn {
  tj_infer_ctx_t ictx;
  tj_ptrvec_t blocks;   /* tj_rx_block_t* */
  tj_ptrvec_t bindings; /* tj_rx_binding_t* of the open block */
  bool in_dataflow;
  bool after_output;
  tj_ptrvec_t outputs;  /* names declared by R.output, with the index of their last binding */
  int stmt_index;       /* index of the statement being read in the dataflow body */
  int n_fresh;
  const tj_py_t *annotated_value; /* the op call of the binding being read, when annotated */
} rxfn_t;

typedef struct dfout {
  const char *name;
  int last_stmt;
} dfout_t;

static tj_val_t eval(tj_pctx_t *c, const tj_py_t *e);
static const tj_sinfo_t *parse_sinfo(tj_pctx_t *c, const tj_py_t *e, bool in_params);
static const tj_rx_func_t *parse_function(tj_pctx_t *c, const tj_py_t *def, bool is_private, bool is_pure);

static tj_val_t rx_val(tj_src_pos_t pos, const tj_rx_expr_t *e) {
  tj_val_t v = tj_val_make(V_RX, pos);
  v.rx = e;
  return v;
}

/* Fails with a status message turned into a parse error at pos. */
static void check_status(tj_pctx_t *c, tj_src_pos_t pos, tj_status_t *s) {
  if (!s) return;
  char msg[900];
  snprintf(msg, sizeof msg, "%s", tj_status_text(s));
  tj_status_free(s);
  tj_parse_fail(c->src, pos, "%s", msg);
}

static const tj_sinfo_t *infer(tj_pctx_t *c, tj_src_pos_t pos, const tj_rx_expr_t *e) {
  const tj_sinfo_t *s = NULL;
  if (e->sinfo && e->kind != TJ_RX_GLOBAL_VAR) return e->sinfo;
  check_status(c, pos, tj_rx_infer_sinfo(&c->rxfn->ictx, e, &s));
  return s;
}

static const tj_rx_expr_t *with_sinfo(tj_pctx_t *c, tj_src_pos_t pos, const tj_rx_expr_t *e) {
  if (e->sinfo) return e;
  return TJ_CHK(c, tj_rx_with_sinfo(c->arena, e, infer(c, pos, e)));
}

/* ---- struct info annotations ---- */

static const char *call_name(tj_pctx_t *c, const tj_py_t *e) {
  if (!e) return NULL;
  return tj_py_dotted(c->src, e->kind == PY_CALL ? e->a : e);
}

static bool is_plain_name(const char *s) {
  if (!*s || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (const char *p = s; *p; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) return false;
  return true;
}

/* Evaluates a dimension written as a string ("n", "n * 2") in TIR, reporting errors
 * at the string literal. */
static tj_val_t eval_string_dim(tj_pctx_t *c, const tj_py_t *str) {
  tj_parse_src_t *outer = c->src;
  jmp_buf jb;
  tj_parse_src_t sub = {outer->filename, str->s, strlen(str->s), outer->scratch, &jb, NULL};
  volatile int saved_depth = c->depth;
  if (setjmp(jb)) {
    c->src = outer;
    c->depth = saved_depth;
    const char *text = tj_status_message(sub.error);
    size_t fl = strlen(outer->filename);
    const char *msg = strncmp(text, outer->filename, fl) == 0 ? strstr(text + fl, ": ") : NULL;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", msg ? msg + 2 : text);
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    tj_status_free(sub.error);
    tj_parse_fail(outer, str->pos, "in the shape string \"%s\": %s", str->s, buf);
  }
  c->src = &sub;
  tj_tok_t *toks;
  int n_toks;
  tj_lex(&sub, &toks, &n_toks);
  const tj_py_t *const *stmts;
  int n;
  tj_py_parse(&sub, toks, n_toks, &stmts, &n);
  if (n != 1 || stmts[0]->kind != PY_EXPR_STMT) tj_parse_fail(&sub, (tj_src_pos_t){1, 1, 0}, "expected one expression");
  tj_val_t v = tj_tir_eval(c, stmts[0]->a);
  c->src = outer;
  v.pos = str->pos;
  return v;
}

static const tj_tir_expr_t *shape_dim(tj_pctx_t *c, const tj_py_t *d) {
  tj_val_t v = d->kind == PY_STR ? eval_string_dim(c, d) : tj_tir_eval(c, d);
  const tj_tir_expr_t *e = tj_tir_as_typed(c, &v, TJ_I64);
  if (!tj_dtype_is_int(e->dtype)) tj_parse_fail(c->src, d->pos, "a shape dimension must be an integer expression");
  /* TVM's ShapeExpr casts integer constants to int64 and rejects other dtypes. */
  int64_t k;
  if (!tj_dtype_eq(e->dtype, TJ_I64) && tj_tir_is_const_int(e, &k)) e = TJ_CHK(c, tj_tir_int(c->arena, TJ_I64, k));
  if (!tj_dtype_eq(e->dtype, TJ_I64))
    tj_parse_fail(c->src, d->pos, "a shape dimension must be an int64 expression; declare the variable with T.int64()");
  return e;
}

static void define_int64_var(tj_pctx_t *c, const char *name, tj_src_pos_t pos) {
  const tj_val_t *old = tj_pctx_lookup(c, name);
  if (old && old->kind == V_PRIM && old->prim->kind == TJ_TIR_VAR) return;
  if (old && old->kind == V_FUNC) return; /* T, R, ... */
  tj_val_t v = tj_val_make(V_PRIM, pos);
  v.prim = TJ_CHK(c, tj_tir_var(c->arena, name, TJ_I64));
  tj_pctx_bind(c, name, v);
}

/* The free names of an expression string ("n * 2", "T.max(c, h)"): identifiers not
 * after a '.' and not called, i.e. the variables. TVM's printer writes a function's
 * deduced return struct info this way before the body declares the variables. */
static void define_names_in_string(tj_pctx_t *c, const tj_py_t *e) {
  const char *p = e->s;
  while (*p) {
    bool start = (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
    if (!start) {
      p++;
      continue;
    }
    const char *q = p;
    while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) q++;
    bool after_dot = p > e->s && p[-1] == '.', is_module = *q == '.', called = *q == '(';
    if (!after_dot && !is_module && !called && q - p < 64) {
      char name[64];
      memcpy(name, p, (size_t)(q - p));
      name[q - p] = '\0';
      define_int64_var(c, tj_pctx_str(c, name), e->pos);
    }
    p = q;
  }
}

/* Defines the symbolic variables named by strings in shapes: plain names ("n") always;
 * the free names of expressions ("n * 2") only in a return annotation, where TVM's
 * printer writes a deduced struct info whose variables the body declares later (in
 * parameters TVM rejects an undefined name). */
static void define_symbolic_in(tj_pctx_t *c, const tj_py_t *e, bool expression_names) {
  if (!e) return;
  tj_pctx_enter(c, e->pos);
  if (e->kind == PY_STR && is_plain_name(e->s)) define_int64_var(c, e->s, e->pos);
  else if (e->kind == PY_STR && expression_names) define_names_in_string(c, e);
  if (e->kind == PY_CALL || e->kind == PY_TUPLE || e->kind == PY_LIST) {
    for (int i = 0; i < e->n; i++) define_symbolic_in(c, e->items[i], expression_names);
    if (e->kind == PY_CALL)
      for (int i = 0; i < e->n2; i++) define_symbolic_in(c, e->items2[i], expression_names);
  }
  tj_pctx_leave(c);
}

static void define_symbolic(tj_pctx_t *c, const tj_py_t *e) { define_symbolic_in(c, e, false); }

static const tj_py_t *arg_or_kw(const tj_py_t *call, int i, const char *kw) {
  if (call->kind != PY_CALL) return NULL;
  const tj_py_t *k = tj_py_kwarg(call, kw);
  if (k) return k;
  return i < call->n ? call->items[i] : NULL;
}

static const tj_sinfo_t *parse_tensor_sinfo(tj_pctx_t *c, const tj_py_t *e) {
  if (e->kind != PY_CALL) return TJ_CHK(c, tj_sinfo_tensor(c->arena, TJ_VOID, -1, NULL));
  static const char *const kws[] = {"shape", "dtype", "vdevice", "ndim", NULL};
  tj_py_check_kwargs(c, e, kws);
  tj_py_check_nargs(c, e, "R.Tensor", 0, 4);
  const tj_py_t *shape = arg_or_kw(e, 0, "shape"), *dtype = arg_or_kw(e, 1, "dtype");
  const tj_py_t *vdev = arg_or_kw(e, 2, "vdevice"), *ndim_e = arg_or_kw(e, 3, "ndim");
  if (shape && shape->kind == PY_STR && !tj_py_kwarg(e, "dtype") && e->n == 1) { /* R.Tensor("float32") */
    dtype = shape;
    shape = NULL;
  }
  tj_dtype_t dt = TJ_VOID;
  if (dtype && !(dtype->kind == PY_CONST && !strcmp(dtype->s, "None"))) {
    tj_val_t d = tj_tir_eval(c, dtype);
    if (d.kind != V_STR) tj_parse_fail(c->src, dtype->pos, "dtype must be a string such as \"float32\"");
    if (d.s[0] && strcmp(d.s, "void")) dt = tj_val_dtype(c, &d);
  }
  int ndim = -1;
  if (ndim_e) {
    tj_val_t n = tj_tir_eval(c, ndim_e);
    if (n.kind != V_INT) tj_parse_fail(c->src, ndim_e->pos, "ndim must be an integer");
    if (n.i < -1 || n.i > 64) tj_parse_fail(c->src, ndim_e->pos, "ndim must be a non-negative integer, or -1 for unknown");
    ndim = (int)n.i;
  }
  const tj_tir_expr_t **dims = NULL;
  int n_dims = -1;
  const tj_val_t *shape_var = shape && shape->kind == PY_NAME ? tj_pctx_lookup(c, shape->s) : NULL;
  if (shape_var && shape_var->kind == V_RX && shape_var->rx->sinfo && shape_var->rx->sinfo->kind == TJ_SINFO_SHAPE) {
    /* R.Tensor(sh, ...) with a Relax shape var: TVM keeps the var as the shape; tvmjit's
     * tensor struct info holds dims, so it takes what the var's struct info knows (its
     * values, else its ndim): a looser but sound annotation. */
    const tj_sinfo_t *ss = shape_var->rx->sinfo;
    if (ndim != -1 && ss->shape.ndim != -1 && ndim != ss->shape.ndim)
      tj_parse_fail(c->src, e->pos, "the shape has %d dimensions but ndim=%d", ss->shape.ndim, ndim);
    if (ss->shape.ndim != -1) ndim = ss->shape.ndim;
    dims = (const tj_tir_expr_t **)ss->shape.values;
    shape = NULL;
  }
  if (shape && !(shape->kind == PY_CONST && !strcmp(shape->s, "None"))) {
    if (shape->kind != PY_TUPLE && shape->kind != PY_LIST)
      tj_parse_fail(c->src, shape->pos, "a tensor shape must be a tuple or list of dimensions");
    n_dims = shape->n;
    dims = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n_dims + 1)));
    for (int i = 0; i < n_dims; i++) dims[i] = shape_dim(c, shape->items[i]);
    if (ndim != -1 && ndim != n_dims)
      tj_parse_fail(c->src, e->pos, "the shape has %d dimensions but ndim=%d", n_dims, ndim);
    ndim = n_dims;
  }
  tj_sinfo_t *s = (tj_sinfo_t *)TJ_CHK(c, tj_sinfo_tensor(c->arena, dt, ndim, dims));
  if (dims && ndim == 0) s->tensor.shape = dims;
  if (vdev && !(vdev->kind == PY_CONST && !strcmp(vdev->s, "None"))) {
    tj_val_t v = tj_tir_eval(c, vdev);
    if (v.kind != V_STR) tj_parse_fail(c->src, vdev->pos, "vdevice must be a string");
    s->tensor.vdevice = tj_pctx_str(c, v.s);
  }
  return s;
}

static const tj_sinfo_t *parse_shape_sinfo(tj_pctx_t *c, const tj_py_t *e) {
  if (e->kind != PY_CALL) return TJ_CHK(c, tj_sinfo_shape(c->arena, -1, NULL));
  static const char *const kws[] = {"values", "ndim", NULL};
  tj_py_check_kwargs(c, e, kws);
  const tj_py_t *vals = arg_or_kw(e, 0, "values"), *nd = arg_or_kw(e, 1, "ndim");
  int ndim = -1;
  if (nd) {
    tj_val_t n = tj_tir_eval(c, nd);
    if (n.kind != V_INT || n.i < -1) tj_parse_fail(c->src, nd->pos, "ndim must be an integer >= -1");
    ndim = (int)n.i;
  }
  if (vals && !(vals->kind == PY_CONST && !strcmp(vals->s, "None"))) {
    if (vals->kind != PY_TUPLE && vals->kind != PY_LIST) tj_parse_fail(c->src, vals->pos, "expected a list of values");
    const tj_tir_expr_t **d = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(vals->n + 1)));
    for (int i = 0; i < vals->n; i++) d[i] = shape_dim(c, vals->items[i]);
    if (ndim != -1 && ndim != vals->n) tj_parse_fail(c->src, e->pos, "the shape has %d values but ndim=%d", vals->n, ndim);
    tj_sinfo_t *s = (tj_sinfo_t *)TJ_CHK(c, tj_sinfo_shape(c->arena, vals->n, d));
    if (vals->n == 0) s->shape.values = d;
    return s;
  }
  return TJ_CHK(c, tj_sinfo_shape(c->arena, ndim, NULL));
}

static const tj_sinfo_t *parse_prim_sinfo(tj_pctx_t *c, const tj_py_t *e) {
  if (e->kind != PY_CALL) tj_parse_fail(c->src, e->pos, "R.Prim needs a dtype, e.g. R.Prim(\"int64\")");
  static const char *const kws[] = {"dtype", "value", NULL};
  tj_py_check_kwargs(c, e, kws);
  const tj_py_t *d = arg_or_kw(e, 0, "dtype"), *v = tj_py_kwarg(e, "value");
  tj_dtype_t dt = TJ_VOID;
  const tj_tir_expr_t *value = NULL;
  if (v) { /* a symbolic "n" is an int64 dimension; other values keep their own dtype */
    if (v->kind == PY_STR) {
      value = shape_dim(c, v);
    } else {
      tj_val_t pv = tj_tir_eval(c, v);
      value = pv.kind == V_INT ? tj_tir_as_typed(c, &pv, TJ_I64) : tj_tir_as_expr(c, &pv);
    }
    dt = value->dtype;
  }
  if (d) {
    tj_val_t dv = tj_tir_eval(c, d);
    dt = tj_val_dtype(c, &dv);
  }
  if (!d && !v) tj_parse_fail(c->src, e->pos, "R.Prim needs a dtype or a value");
  return TJ_CHK(c, tj_sinfo_prim(c->arena, dt, value));
}

/* `R.Callable`, `R.Callable(ret=..., purity=...)`: a function whose parameters are
 * unknown (an opaque FuncStructInfo, e.g. an R.ExternFunc's). */
static bool is_opaque_callable(const tj_py_t *e) {
  return e->kind != PY_CALL || (e->n == 0 && !tj_py_kwarg(e, "params"));
}

static const tj_sinfo_t *parse_opaque_callable(tj_pctx_t *c, const tj_py_t *e, bool in_params) {
  const tj_sinfo_t *ret = NULL;
  bool pure = false; /* TVM's opaque default: an unknown function may have effects */
  if (e->kind == PY_CALL) {
    static const char *const kws[] = {"ret", "purity", NULL};
    tj_py_check_kwargs(c, e, kws);
    const tj_py_t *r = tj_py_kwarg(e, "ret"), *p = tj_py_kwarg(e, "purity");
    if (r) ret = parse_sinfo(c, r, in_params);
    if (p) pure = p->kind == PY_CONST && !strcmp(p->s, "True");
  }
  if (!ret) ret = TJ_CHK(c, tj_sinfo_object(c->arena));
  return TJ_CHK(c, tj_sinfo_func(c->arena, -1, NULL, ret, pure));
}

static const tj_sinfo_t *parse_sinfo(tj_pctx_t *c, const tj_py_t *e, bool in_params) {
  tj_pctx_enter(c, e->pos);
  const char *name = call_name(c, e);
  const tj_sinfo_t *s = NULL;
  if (!name) tj_parse_fail(c->src, e->pos, "expected a struct info annotation such as R.Tensor(...)");
  if (!strcmp(name, "R.Tensor")) s = parse_tensor_sinfo(c, e);
  else if (!strcmp(name, "R.Shape")) s = parse_shape_sinfo(c, e);
  else if (!strcmp(name, "R.Object")) s = TJ_CHK(c, tj_sinfo_object(c->arena));
  else if (!strcmp(name, "R.Prim")) s = parse_prim_sinfo(c, e);
  else if (!strcmp(name, "R.Tuple")) {
    int n = e->kind == PY_CALL ? e->n : 0;
    const tj_py_t *const *items = e->kind == PY_CALL ? e->items : NULL;
    if (n == 1 && (items[0]->kind == PY_LIST || items[0]->kind == PY_TUPLE)) {
      n = items[0]->n;
      items = items[0]->items;
    }
    const tj_sinfo_t **f = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n + 1)));
    for (int i = 0; i < n; i++) f[i] = parse_sinfo(c, items[i], in_params);
    s = TJ_CHK(c, tj_sinfo_tuple(c->arena, n, f));
  } else if (!strcmp(name, "R.Callable") && is_opaque_callable(e)) {
    s = parse_opaque_callable(c, e, in_params);
  } else if (!strcmp(name, "R.Callable")) {
    if (e->kind != PY_CALL || e->n < 2) tj_parse_fail(c->src, e->pos, "R.Callable needs (params, ret)");
    static const char *const kws[] = {"purity", NULL};
    tj_py_check_kwargs(c, e, kws);
    const tj_py_t *ps = e->items[0];
    if (ps->kind != PY_TUPLE && ps->kind != PY_LIST) tj_parse_fail(c->src, ps->pos, "R.Callable parameters must be a tuple");
    const tj_sinfo_t **p = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(ps->n + 1)));
    for (int i = 0; i < ps->n; i++) p[i] = parse_sinfo(c, ps->items[i], in_params);
    bool pure = true;
    const tj_py_t *pk = e->n > 2 ? e->items[2] : tj_py_kwarg(e, "purity");
    if (pk) pure = pk->kind == PY_CONST && !strcmp(pk->s, "True");
    s = TJ_CHK(c, tj_sinfo_func(c->arena, ps->n, p, parse_sinfo(c, e->items[1], in_params), pure));
  } else {
    tj_parse_fail(c->src, e->pos, "unknown struct info '%s' (expected R.Tensor, R.Tuple, R.Shape, R.Prim, R.Object or R.Callable)", name);
  }
  tj_pctx_leave(c);
  return s;
}

static bool is_sinfo_name(const char *name) {
  return name && (!strcmp(name, "R.Tensor") || !strcmp(name, "R.Shape") || !strcmp(name, "R.Object") ||
                  !strcmp(name, "R.Prim") || !strcmp(name, "R.Tuple") || !strcmp(name, "R.Callable"));
}

/* ---- bindings ---- */

static void flush_block(tj_pctx_t *c, bool dataflow) {
  rxfn_t *f = c->rxfn;
  if (f->bindings.n == 0) return;
  tj_rx_block_t *b = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *b));
  tj_rx_binding_t *bs = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_rx_binding_t) * (size_t)f->bindings.n));
  for (int i = 0; i < f->bindings.n; i++) bs[i] = *(const tj_rx_binding_t *)f->bindings.items[i];
  b->is_dataflow = dataflow;
  b->n_bindings = f->bindings.n;
  b->bindings = bs;
  tj_ptrvec_push(c->src, &f->blocks, b);
  f->bindings.n = 0;
  f->bindings.items = NULL;
  f->bindings.cap = 0;
}

static bool is_output_binding(tj_pctx_t *c, const char *name) {
  rxfn_t *f = c->rxfn;
  for (int i = 0; i < f->outputs.n; i++) {
    const dfout_t *o = f->outputs.items[i];
    if (!strcmp(o->name, name) && o->last_stmt == f->stmt_index) return true;
  }
  return false;
}

/* Appends a binding of a new var (a DataflowVar inside a dataflow block unless it is an
 * output) with struct info `s`; binds the name when asked; returns the var. */
static const tj_rx_expr_t *push_binding(tj_pctx_t *c, tj_src_pos_t pos, const char *name, const tj_sinfo_t *s,
                                        const tj_rx_expr_t *value, const tj_sinfo_t *match_cast, bool bind_name) {
  rxfn_t *f = c->rxfn;
  bool dataflow_var = f->in_dataflow && !(bind_name && is_output_binding(c, name));
  const tj_rx_expr_t *var = dataflow_var ? tj_rx_dataflow_var(c->arena, name, s) : tj_rx_var(c->arena, name, s);
  TJ_CHK(c, var);
  tj_rx_binding_t *b = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *b));
  b->var = var;
  b->value = value->sinfo ? value : TJ_CHK(c, tj_rx_with_sinfo(c->arena, value, infer(c, pos, value)));
  b->match_cast = match_cast;
  tj_ptrvec_push(c->src, &f->bindings, b);
  if (bind_name) tj_pctx_bind(c, name, rx_val(pos, var));
  return var;
}

/* TVM's parser gives an annotated call its annotation as struct info and never runs
 * the op's inference (ir_builder's Emit: UpdateStructInfo when the value has none, and
 * the normalizer infers only calls without struct info), so `gv: R.Tensor((), ...) =
 * R.nn.nll_loss(p, t, w)` parses even where the inference would reject the weights'
 * length. tvmjit infers as usual and, when the inference rejects the arguments
 * (INVALID_ARGUMENT), takes the annotation instead, as TVM does. Such a module parses
 * but does not verify: the verifier re-infers every annotated op call (later TVM's
 * rule), and the driver verifies every parsed module before any pass, so an
 * ill-shaped call is never legalized or run; only `tvmjit conformance` trusts the
 * annotation, as TVM at the corpus commit did. Other failures, and annotations of
 * another kind or R.Object, stay errors. Returns the call carrying its inferred struct
 * info or the annotation, or NULL when not an uninferred annotated call. */
static const tj_rx_expr_t *annotated_call(tj_pctx_t *c, tj_src_pos_t pos, const tj_rx_expr_t *value,
                                          const tj_sinfo_t *ann) {
  if (!ann || ann->kind != TJ_SINFO_TENSOR || value->kind != TJ_RX_CALL || value->sinfo) return NULL;
  const tj_sinfo_t *s = NULL;
  tj_status_t *st = tj_rx_infer_sinfo(&c->rxfn->ictx, value, &s);
  if (!st) return TJ_CHK(c, tj_rx_with_sinfo(c->arena, value, s));
  if (tj_status_code(st) != TJ_ERR_INVALID_ARGUMENT) check_status(c, pos, st);
  tj_status_free(st);
  return TJ_CHK(c, tj_rx_with_sinfo(c->arena, value, ann));
}

/* Emits `name = value` in the open block and binds the name; returns the var. */
static const tj_rx_expr_t *emit(tj_pctx_t *c, tj_src_pos_t pos, const char *name, const tj_rx_expr_t *value,
                                const tj_sinfo_t *ann, bool bind_name) {
  const tj_rx_expr_t *checked = annotated_call(c, pos, value, ann);
  if (checked && checked->sinfo == ann) return push_binding(c, pos, name, ann, checked, NULL, bind_name);
  if (checked) value = checked;
  const tj_sinfo_t *s = infer(c, pos, value);
  if (ann) {
    /* Only a different kind (Tensor annotated as Shape, ...) is a parse error: dtype and
     * ndim disagreements parse and are left to the verifier, as TVM's parser does. */
    if (ann->kind != TJ_SINFO_OBJECT && ann->kind != s->kind && tj_sinfo_base_check(ann, s) == TJ_SINFO_FAIL_L0) {
      tj_strbuf_t a, b;
      tj_strbuf_init(&a);
      tj_strbuf_init(&b);
      tj_sinfo_format_short(&a, ann);
      tj_sinfo_format_short(&b, s);
      char msg[512];
      snprintf(msg, sizeof msg, "cannot annotate '%s' as %s: the value is %s", name, a.data ? a.data : "?",
               b.data ? b.data : "?");
      tj_strbuf_free(&a);
      tj_strbuf_free(&b);
      tj_parse_fail(c->src, pos, "%s", msg);
    }
    /* TVM's Emit gives a call that has no struct info yet (every call the script
     * builds) the annotation as its struct info, unchecked: `lv: R.Shape([3]) =
     * R.tensor_to_shape(x)` is a one-value shape although inference says ndim 3, and
     * DecomposeOpsForInference reads it from the call. Where the two agree the inferred
     * struct info stays on the call: it is the more precise one. */
    if (value->kind == TJ_RX_CALL && tj_sinfo_base_check(ann, s) == TJ_SINFO_FAIL_L0)
      value = TJ_CHK(c, tj_rx_with_sinfo(c->arena, value, ann));
    s = ann;
  }
  return push_binding(c, pos, name, s, value, NULL, bind_name);
}

static bool is_leaf(const tj_rx_expr_t *e) {
  return e->kind != TJ_RX_CALL && e->kind != TJ_RX_IF && e->kind != TJ_RX_SEQ && e->kind != TJ_RX_FUNCTION &&
         e->kind != TJ_RX_TUPLE_GET_ITEM;
}

/* ANF: a non-leaf argument is bound to a fresh var first (BlockBuilder::NormalizeArgument). */
static const tj_rx_expr_t *leaf(tj_pctx_t *c, tj_src_pos_t pos, const tj_rx_expr_t *e) {
  if (e->kind == TJ_RX_TUPLE) {
    bool changed = false;
    const tj_rx_expr_t **f = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(e->tuple.n + 1)));
    for (int i = 0; i < e->tuple.n; i++) {
      f[i] = leaf(c, pos, e->tuple.fields[i]);
      changed |= f[i] != e->tuple.fields[i];
    }
    if (changed) e = TJ_CHK(c, tj_rx_tuple(c->arena, e->tuple.n, f));
    return with_sinfo(c, pos, e);
  }
  if (is_leaf(e)) return with_sinfo(c, pos, e);
  const char *name = TJ_CHK(c, tj_arena_printf(c->arena, "%s%d", c->rxfn->in_dataflow ? "lv" : "gv", c->rxfn->n_fresh++));
  return emit(c, pos, name, e, NULL, false);
}

/* ---- expressions ---- */

static const tj_rx_expr_t *as_rx(tj_pctx_t *c, const tj_val_t *v);

static const tj_rx_expr_t *shape_expr_of(tj_pctx_t *c, const tj_val_t *v) {
  const tj_tir_expr_t **d = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(v->n + 1)));
  for (int i = 0; i < v->n; i++) d[i] = tj_tir_as_typed(c, &v->items[i], TJ_I64);
  return TJ_CHK(c, tj_rx_shape_expr(c->arena, v->n, d));
}

static bool all_prim(const tj_val_t *v) {
  for (int i = 0; i < v->n; i++)
    if (v->items[i].kind != V_INT && v->items[i].kind != V_PRIM) return false;
  return true;
}

static const tj_rx_expr_t *as_rx(tj_pctx_t *c, const tj_val_t *v) {
  switch (v->kind) {
    case V_RX: return v->rx;
    case V_SEQ: {
      const tj_rx_expr_t **f = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(v->n + 1)));
      for (int i = 0; i < v->n; i++) f[i] = as_rx(c, &v->items[i]);
      return TJ_CHK(c, tj_rx_tuple(c->arena, v->n, f));
    }
    case V_INT: {
      const tj_tir_expr_t *i = tj_tir_as_typed(c, v, TJ_I64);
      return TJ_CHK(c, tj_rx_prim_value(c->arena, i));
    }
    case V_FLOAT: case V_BOOL: case V_PRIM:
      return TJ_CHK(c, tj_rx_prim_value(c->arena, tj_tir_as_expr(c, v)));
    case V_STR: return TJ_CHK(c, tj_rx_string_imm(c->arena, v->s));
    default: tj_parse_fail(c->src, v->pos, "expected a Relax expression, found %s", tj_val_kind_name(v->kind));
  }
}

static tj_dtype_t const_dtype(tj_pctx_t *c, const tj_val_t *v) {
  double special;
  if (v->kind == V_SEQ) return v->n ? const_dtype(c, &v->items[0]) : TJ_F32;
  if (v->kind == V_FLOAT || (v->kind == V_STR && tj_parse_special_float(v->s, &special))) return TJ_F32;
  if (v->kind == V_BOOL) return TJ_BOOL;
  if (v->kind == V_INT) return TJ_I32;
  tj_parse_fail(c->src, v->pos, "R.const expects a number or a nested list of numbers");
}

static void const_shape(tj_pctx_t *c, const tj_val_t *v, int depth, int64_t *shape, int *ndim) {
  if (depth >= 16) tj_parse_fail(c->src, v->pos, "constant nested too deeply");
  if (v->kind != V_SEQ) {
    *ndim = depth;
    return;
  }
  shape[depth] = v->n;
  if (v->n == 0) {
    *ndim = depth + 1;
    return;
  }
  const_shape(c, &v->items[0], depth + 1, shape, ndim);
}

static void const_fill(tj_pctx_t *c, const tj_val_t *v, int depth, int ndim, const int64_t *shape, tj_dtype_t dt,
                       unsigned char *data, size_t *idx) {
  if (depth < ndim) {
    if (v->kind != V_SEQ || v->n != shape[depth]) tj_parse_fail(c->src, v->pos, "constant is not rectangular");
    for (int i = 0; i < v->n; i++) const_fill(c, &v->items[i], depth + 1, ndim, shape, dt, data, idx);
    return;
  }
  double x = v->kind == V_FLOAT ? v->f : (double)v->i;
  bool special = v->kind == V_STR && tj_parse_special_float(v->s, &x); /* "inf", as TVM prints it */
  if (v->kind != V_INT && v->kind != V_FLOAT && v->kind != V_BOOL && !special)
    tj_parse_fail(c->src, v->pos, "expected a number (or \"inf\", \"-inf\", \"nan\")");
  if (special && !tj_dtype_is_float(dt)) tj_parse_fail(c->src, v->pos, "%s is not a value of an integer dtype", v->s);
  size_t sz = tj_dtype_bytes(dt);
  unsigned char *p = data + (*idx)++ * sz;
  if (dt.code == TJ_DT_FLOAT && dt.bits == 16) {
    uint16_t h = tj_float_to_half((float)x);
    memcpy(p, &h, 2);
  } else if (dt.code == TJ_DT_FLOAT && dt.bits == 32) {
    float f = (float)x;
    memcpy(p, &f, 4);
  } else if (dt.code == TJ_DT_FLOAT && dt.bits == 64) {
    memcpy(p, &x, 8);
  } else if (dt.code == TJ_DT_BOOL) {
    *p = x != 0;
  } else if (tj_dtype_is_int(dt)) {
    int64_t i = v->kind == V_FLOAT ? (int64_t)x : v->i;
    memcpy(p, &i, sz < 8 ? sz : 8); /* little-endian truncation */
  } else {
    tj_parse_fail(c->src, v->pos, "unsupported constant dtype");
  }
}

static tj_val_t call_const(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"value", "dtype", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.const", 0, 2);
  const tj_py_t *ve = arg_or_kw(call, 0, "value"), *de = arg_or_kw(call, 1, "dtype");
  if (!ve) tj_parse_fail(c->src, call->pos, "R.const needs a value");
  tj_val_t v = tj_tir_eval(c, ve);
  tj_dtype_t dt = const_dtype(c, &v);
  if (de) {
    tj_val_t d = tj_tir_eval(c, de);
    dt = tj_val_dtype(c, &d);
  }
  int64_t shape[16];
  int ndim = 0;
  const_shape(c, &v, 0, shape, &ndim);
  size_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] > (1 << 24) || count * (size_t)shape[i] > ((size_t)1 << 26)) tj_parse_fail(c->src, ve->pos, "constant too large");
    count *= (size_t)shape[i];
  }
  size_t nbytes = count * tj_dtype_bytes(dt);
  unsigned char *data = TJ_CHK(c, tj_arena_alloc(c->arena, nbytes ? nbytes : 1));
  size_t idx = 0;
  const_fill(c, &v, 0, ndim, shape, dt, data, &idx);
  const tj_rx_expr_t *k = TJ_CHK(c, tj_rx_constant(c->arena, dt, ndim, shape, data, nbytes));
  return rx_val(call->pos, with_sinfo(c, call->pos, k));
}

/* ---- calls with their own syntax: call_tir & co., packed calls, print, assert ---- */

static bool is_none_value(const tj_py_t *e) { return !e || (e->kind == PY_CONST && !strcmp(e->s, "None")); }

/* A struct info given as a value (`R.Tensor(...)`, `R.Object`, `x.struct_info`). */
static const tj_sinfo_t *sinfo_value(tj_pctx_t *c, const tj_val_t *v) {
  if (v->kind != V_SINFO)
    tj_parse_fail(c->src, v->pos, "expected a struct info such as R.Tensor((2, 3), \"float32\"), found %s",
                  tj_val_kind_name(v->kind));
  return v->sinfo;
}

/* sinfo_args= of a packed call: one struct info or a list/tuple of them (TVM makes a
 * single one a list of one). */
static const tj_sinfo_t *const *sinfo_args_of(tj_pctx_t *c, const tj_py_t *e, int *out_n) {
  tj_val_t v = eval(c, e);
  int n = v.kind == V_SEQ ? v.n : 1;
  const tj_sinfo_t **out = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n + 1)));
  for (int i = 0; i < n; i++) out[i] = sinfo_value(c, v.kind == V_SEQ ? &v.items[i] : &v);
  *out_n = n;
  return out;
}

/* out_sinfo= of call_tir-like calls: a tensor, or a list of tensors for several outputs
 * (a list of one is that one tensor, as TVM's constructor makes it). */
static const tj_sinfo_t *out_sinfo_of(tj_pctx_t *c, const tj_py_t *e) {
  int n = 0;
  const tj_sinfo_t *const *list = sinfo_args_of(c, e, &n);
  if (n == 1) return list[0];
  return TJ_CHK(c, tj_sinfo_tuple(c->arena, n, list));
}

/* The argument tuple of call_tir-like calls: a tuple/list literal, a tuple-valued
 * expression, or a single argument (TVM's _wrap_inline_arg_tuple). */
static const tj_rx_expr_t *call_args_tuple(tj_pctx_t *c, const tj_py_t *ae) {
  tj_val_t av = eval(c, ae);
  int n;
  const tj_rx_expr_t **args;
  if (av.kind == V_SEQ) {
    n = av.n;
    args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n + 1)));
    for (int i = 0; i < n; i++) args[i] = leaf(c, av.items[i].pos, as_rx(c, &av.items[i]));
  } else {
    const tj_rx_expr_t *a = as_rx(c, &av);
    if (a->kind == TJ_RX_TUPLE) return leaf(c, av.pos, a);
    n = 1;
    args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *)));
    args[0] = leaf(c, av.pos, a);
  }
  return with_sinfo(c, ae->pos, TJ_CHK(c, tj_rx_tuple(c->arena, n, args)));
}

/* The callee of call_tir / call_dps_packed: a module PrimFunc, an extern name, or a var
 * bound to R.ExternFunc. */
static const tj_rx_expr_t *dps_callee(tj_pctx_t *c, const tj_py_t *fe, const char *fname) {
  if (fe->kind == PY_STR) return with_sinfo(c, fe->pos, TJ_CHK(c, tj_rx_extern_func(c->arena, fe->s)));
  tj_val_t f = eval(c, fe);
  if (f.kind != V_RX || (f.rx->kind != TJ_RX_GLOBAL_VAR && f.rx->kind != TJ_RX_EXTERN_FUNC && !tj_rx_is_var(f.rx)))
    tj_parse_fail(c->src, fe->pos, "%s expects a function of the module (cls.name), an extern name (\"name\") or "
                  "an R.ExternFunc", fname);
  return f.rx;
}

static const tj_rx_expr_t *tir_vars_of(tj_pctx_t *c, const tj_py_t *te) {
  if (is_none_value(te)) return NULL;
  tj_val_t tv = eval(c, te);
  const tj_rx_expr_t *tir_vars = NULL;
  if (tv.kind == V_SEQ) tir_vars = shape_expr_of(c, &tv);
  else if (tv.kind == V_RX && tv.rx->kind == TJ_RX_SHAPE_EXPR) tir_vars = tv.rx;
  else tj_parse_fail(c->src, te->pos, "tir_vars must be R.shape([...])");
  return with_sinfo(c, te->pos, tir_vars);
}

/* Builds op(args) with sinfo_args and infers its struct info through the registry,
 * which reports TVM's errors (a bad inplace index, a non-bool assert condition). */
static tj_val_t special_call(tj_pctx_t *c, tj_src_pos_t pos, const char *op, int n, const tj_rx_expr_t *const *args,
                             const tj_attrs_t *attrs, int n_sinfo, const tj_sinfo_t *const *sinfo_args) {
  const tj_rx_expr_t *callee = TJ_CHK(c, tj_rx_op(c->arena, op));
  const tj_rx_expr_t *e = TJ_CHK(c, tj_rx_call(c->arena, callee, n, args, attrs, n_sinfo, sinfo_args));
  return rx_val(pos, with_sinfo(c, pos, e));
}

static tj_val_t call_call_tir(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"out_sinfo", "tir_vars", "args", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.call_tir", 1, 4);
  const tj_py_t *ae = arg_or_kw(call, 1, "args"), *oe = arg_or_kw(call, 2, "out_sinfo");
  if (!ae || !oe) tj_parse_fail(c->src, call->pos, "R.call_tir needs (func, args, out_sinfo)");
  const tj_rx_expr_t *callee = dps_callee(c, call->items[0], "R.call_tir");
  const tj_rx_expr_t *tuple = call_args_tuple(c, ae);
  const tj_sinfo_t *out = out_sinfo_of(c, oe);
  const tj_rx_expr_t *tir_vars = tir_vars_of(c, arg_or_kw(call, 3, "tir_vars"));
  return rx_val(call->pos, TJ_CHK(c, tj_rx_make_call_tir(c->arena, callee, tuple->tuple.n, tuple->tuple.fields, out,
                                                         tir_vars)));
}

/* inplace_indices: an int or a list of ints, kept as TVM's Array<Integer> (int32). */
static tj_attr_value_t inplace_indices_of(tj_pctx_t *c, const tj_py_t *ie) {
  tj_val_t v = eval(c, ie);
  int n = v.kind == V_SEQ ? v.n : 1;
  tj_attr_value_t *items = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_attr_value_t) * (size_t)(n + 1)));
  for (int i = 0; i < n; i++) {
    const tj_val_t *x = v.kind == V_SEQ ? &v.items[i] : &v;
    if (x->kind != V_INT) tj_parse_fail(c->src, x->pos, "inplace_indices must be integers (an argument index, or -1)");
    items[i] = tj_attr_int(x->i);
  }
  tj_attr_value_t list = {.kind = TJ_ATTR_LIST};
  list.list.n = n;
  list.list.items = items;
  return list;
}

static tj_val_t call_call_tir_inplace(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"args", "inplace_indices", "out_sinfo", "tir_vars", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.call_tir_inplace", 1, 5);
  const tj_py_t *ae = arg_or_kw(call, 1, "args"), *ie = arg_or_kw(call, 2, "inplace_indices");
  const tj_py_t *oe = arg_or_kw(call, 3, "out_sinfo");
  if (!ae || !ie || !oe) tj_parse_fail(c->src, call->pos, "R.call_tir_inplace needs (func, args, inplace_indices, out_sinfo)");
  const tj_rx_expr_t *args[3] = {dps_callee(c, call->items[0], "R.call_tir_inplace"), call_args_tuple(c, ae), NULL};
  const tj_attrs_t *attrs = TJ_CHK(c, tj_attrs_set(c->arena, NULL, "inplace_indices", inplace_indices_of(c, ie)));
  const tj_sinfo_t *out = out_sinfo_of(c, oe);
  args[2] = tir_vars_of(c, arg_or_kw(call, 4, "tir_vars"));
  return special_call(c, call->pos, "relax.call_tir_inplace", args[2] ? 3 : 2, args, attrs, 1, &out);
}

/* R.call_tir_with_grad(func, args, out_sinfo, te_grad_name=..., te_grad_kwargs={...}):
 * an empty te_grad_kwargs is left out, as TVM's printer leaves it out. */
static tj_val_t call_call_tir_with_grad(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"args", "out_sinfo", "te_grad_name", "te_grad_kwargs", "tir_vars", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.call_tir_with_grad", 1, 3);
  const tj_py_t *ae = arg_or_kw(call, 1, "args"), *oe = arg_or_kw(call, 2, "out_sinfo");
  const tj_py_t *ne = tj_py_kwarg(call, "te_grad_name"), *ke = tj_py_kwarg(call, "te_grad_kwargs");
  if (!ae || !oe || !ne)
    tj_parse_fail(c->src, call->pos, "R.call_tir_with_grad needs (func, args, out_sinfo, te_grad_name=\"...\")");
  const tj_rx_expr_t *args[3] = {dps_callee(c, call->items[0], "R.call_tir_with_grad"), call_args_tuple(c, ae), NULL};
  const tj_sinfo_t *out = out_sinfo_of(c, oe);
  tj_val_t name = eval(c, ne);
  if (name.kind != V_STR) tj_parse_fail(c->src, ne->pos, "te_grad_name must be a string");
  const tj_attrs_t *attrs = TJ_CHK(c, tj_attrs_set(c->arena, NULL, "te_grad_name", tj_attr_str(tj_pctx_str(c, name.s))));
  if (!is_none_value(ke)) {
    tj_val_t kw = tj_tir_eval(c, ke);
    if (kw.kind != V_DICT) tj_parse_fail(c->src, ke->pos, "te_grad_kwargs must be a dict");
    const tj_attrs_t *d = tj_val_to_attrs(c, &kw);
    if (d && d->n > 0) {
      tj_attr_value_t dv = {.kind = TJ_ATTR_DICT};
      dv.dict = d;
      attrs = TJ_CHK(c, tj_attrs_set(c->arena, attrs, "te_grad_kwargs", dv));
    }
  }
  args[2] = tir_vars_of(c, tj_py_kwarg(call, "tir_vars"));
  return special_call(c, call->pos, "relax.call_tir_with_grad", args[2] ? 3 : 2, args, attrs, 1, &out);
}

static tj_val_t call_call_dps_packed(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"args", "out_sinfo", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.call_dps_packed", 1, 3);
  const tj_py_t *ae = arg_or_kw(call, 1, "args"), *oe = arg_or_kw(call, 2, "out_sinfo");
  if (!ae || !oe) tj_parse_fail(c->src, call->pos, "R.call_dps_packed needs (func, args, out_sinfo)");
  const tj_rx_expr_t *args[2] = {dps_callee(c, call->items[0], "R.call_dps_packed"), call_args_tuple(c, ae)};
  const tj_sinfo_t *out = out_sinfo_of(c, oe);
  return special_call(c, call->pos, "relax.call_dps_packed", 2, args, NULL, 1, &out);
}

/* Positional Relax arguments from index `from` on, each normalised to a leaf. */
static const tj_rx_expr_t **leaf_args(tj_pctx_t *c, const tj_py_t *call, int from, int extra_front, int *out_n) {
  int n = call->n > from ? call->n - from : 0;
  const tj_rx_expr_t **args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n + extra_front + 1)));
  for (int i = 0; i < n; i++) {
    const tj_py_t *a = call->items[from + i];
    if (a->kind == PY_STARRED) tj_parse_fail(c->src, a->pos, "'*' arguments are not supported here");
    tj_val_t v = eval(c, a);
    args[extra_front + i] = leaf(c, v.pos, as_rx(c, &v));
  }
  *out_n = n + extra_front;
  return args;
}

/* R.call_packed("f", *args, sinfo_args=...) is a call whose callee is ExternFunc("f");
 * R.call_pure_packed is the op relax.call_pure_packed with the ExternFunc first. */
static tj_val_t call_packed(tj_pctx_t *c, const tj_py_t *call, bool pure) {
  const char *fname = pure ? "R.call_pure_packed" : "R.call_packed";
  static const char *const kws[] = {"sinfo_args", NULL};
  tj_py_check_kwargs(c, call, kws);
  const tj_py_t *se = tj_py_kwarg(call, "sinfo_args");
  if (call->n < 1) tj_parse_fail(c->src, call->pos, "%s needs the function name first: %s(\"name\", *args, sinfo_args=...)", fname, fname);
  /* TVM lets R.call_packed omit the result's struct info (it is then an Object);
   * R.call_pure_packed must give it. */
  if (!se && pure) tj_parse_fail(c->src, call->pos, "%s needs sinfo_args=, the struct info of its result", fname);
  const tj_py_t *fe = call->items[0];
  tj_val_t fv = eval(c, fe);
  const char *symbol = fv.kind == V_STR ? fv.s : (fv.kind == V_RX && fv.rx->kind == TJ_RX_EXTERN_FUNC) ? fv.rx->string_imm : NULL;
  if (!symbol) tj_parse_fail(c->src, fe->pos, "%s expects the packed function's name as a string", fname);
  const tj_rx_expr_t *ext = with_sinfo(c, fe->pos, TJ_CHK(c, tj_rx_extern_func(c->arena, tj_pctx_str(c, symbol))));
  int n = 0, n_sinfo = 0;
  const tj_rx_expr_t **args = leaf_args(c, call, 1, pure ? 1 : 0, &n);
  const tj_sinfo_t *const *sinfo_args = se ? sinfo_args_of(c, se, &n_sinfo) : NULL;
  if (pure) {
    args[0] = ext;
    return special_call(c, call->pos, "relax.call_pure_packed", n, args, NULL, n_sinfo, sinfo_args);
  }
  const tj_rx_expr_t *e = TJ_CHK(c, tj_rx_call(c->arena, ext, n, args, NULL, n_sinfo, sinfo_args));
  return rx_val(call->pos, with_sinfo(c, call->pos, e));
}

/* A format string: a Python string or R.str(...). */
static const tj_rx_expr_t *format_of(tj_pctx_t *c, const tj_py_t *fe) {
  if (!fe) return with_sinfo(c, (tj_src_pos_t){0}, TJ_CHK(c, tj_rx_string_imm(c->arena, "")));
  tj_val_t v = eval(c, fe);
  if (v.kind == V_RX && v.rx->kind == TJ_RX_STRING_IMM) return v.rx;
  if (v.kind != V_STR) tj_parse_fail(c->src, fe->pos, "format must be a string");
  return with_sinfo(c, fe->pos, TJ_CHK(c, tj_rx_string_imm(c->arena, v.s)));
}

/* R.print(*values, format="") is relax.print(format, *values). */
static tj_val_t call_print(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"format", NULL};
  tj_py_check_kwargs(c, call, kws);
  int n = 0;
  const tj_rx_expr_t **args = leaf_args(c, call, 0, 1, &n);
  args[0] = format_of(c, tj_py_kwarg(call, "format"));
  return special_call(c, call->pos, "relax.print", n, args, NULL, 0, NULL);
}

/* R.assert_op(condition, format_args=None, format="") is
 * relax.assert_op(condition, format, *format_args); a Python bool condition becomes a
 * PrimValue, as in TVM. */
static tj_val_t call_assert_op(tj_pctx_t *c, const tj_py_t *call) {
  static const char *const kws[] = {"condition", "format_args", "format", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "R.assert_op", 0, 3);
  const tj_py_t *ce = arg_or_kw(call, 0, "condition"), *ae = arg_or_kw(call, 1, "format_args");
  const tj_py_t *fe = arg_or_kw(call, 2, "format");
  if (!ce) tj_parse_fail(c->src, call->pos, "R.assert_op needs a condition");
  tj_val_t cv = eval(c, ce);
  int n_fmt = 0;
  tj_val_t av = tj_val_make(V_NONE, call->pos);
  if (!is_none_value(ae)) {
    av = eval(c, ae);
    n_fmt = av.kind == V_SEQ ? av.n : 1;
  }
  const tj_rx_expr_t **args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(n_fmt + 2)));
  args[0] = leaf(c, cv.pos, as_rx(c, &cv));
  args[1] = format_of(c, fe);
  for (int i = 0; i < n_fmt; i++) {
    const tj_val_t *x = av.kind == V_SEQ ? &av.items[i] : &av;
    args[2 + i] = leaf(c, x->pos, as_rx(c, x));
  }
  return special_call(c, call->pos, "relax.assert_op", n_fmt + 2, args, NULL, 0, NULL);
}

static tj_val_t call_op(tj_pctx_t *c, const tj_py_t *call, const char *name) {
  const tj_op_def_t *def = tj_op_lookup_script(name);
  bool annotated = c->rxfn->annotated_value == call, nested = false;
  c->rxfn->annotated_value = NULL;
  const tj_rx_expr_t *args[16] = {0};
  int n_args = 0;
  const tj_attrs_t *attrs = NULL;
  int max_args = def ? def->max_args : 16;
  for (int i = 0; i < call->n; i++) {
    if (call->items[i]->kind == PY_STARRED) tj_parse_fail(c->src, call->items[i]->pos, "'*' arguments are not supported here");
    tj_val_t v = eval(c, call->items[i]);
    if (i < max_args) {
      if (n_args >= 16) tj_parse_fail(c->src, call->items[i]->pos, "too many arguments");
      const tj_rx_expr_t *a = (v.kind == V_SEQ && v.n && all_prim(&v)) ? shape_expr_of(c, &v) : as_rx(c, &v);
      nested |= a->kind != TJ_RX_TUPLE && !is_leaf(a);
      args[n_args++] = leaf(c, v.pos, a);
      continue;
    }
    const char *attr = NULL;
    if (def && def->positional_attrs)
      for (int k = 0; def->positional_attrs[k]; k++)
        if (k == i - max_args) attr = def->positional_attrs[k];
    if (!attr) tj_parse_fail(c->src, call->items[i]->pos, "%s takes at most %d positional arguments", name, max_args);
    attrs = TJ_CHK(c, tj_attrs_set(c->arena, attrs, attr, tj_val_to_attr(c, &v)));
  }
  for (int i = 0; i < call->n2; i++) {
    int arg_index = -1;
    if (def && def->arg_names)
      for (int k = 0; k < def->max_args; k++)
        if (def->arg_names[k] && !strcmp(def->arg_names[k], call->kw[i])) arg_index = k;
    tj_val_t v = eval(c, call->items2[i]);
    if (arg_index >= 0) {
      /* Keywords fill their slot in any order (Python's binding); a gap is an error unless
       * the op fills it (complete_args: TVM's defaults). */
      if (arg_index < n_args && args[arg_index])
        tj_parse_fail(c->src, call->items2[i]->pos, "argument '%s' is given twice", call->kw[i]);
      if (arg_index > n_args && !def->complete_args)
        tj_parse_fail(c->src, call->items2[i]->pos, "argument '%s' given out of order", call->kw[i]);
      const tj_rx_expr_t *a = (v.kind == V_SEQ && v.n && all_prim(&v)) ? shape_expr_of(c, &v) : as_rx(c, &v);
      while (n_args < arg_index) args[n_args++] = NULL;
      nested |= a->kind != TJ_RX_TUPLE && !is_leaf(a);
      args[arg_index] = leaf(c, v.pos, a);
      if (arg_index == n_args) n_args++;
      continue;
    }
    attrs = TJ_CHK(c, tj_attrs_set(c->arena, attrs, tj_pctx_str(c, call->kw[i]), tj_val_to_attr(c, &v)));
  }
  if (def) {
    const tj_rx_expr_t *out = NULL;
    /* An annotated binding's call is inferred by emit (annotated_call), unless an
     * argument was a nested call, which TVM's normalizer rebuilds and infers. */
    if (annotated && !nested) {
      check_status(c, call->pos, tj_op_build_call(&c->rxfn->ictx, def, n_args, args, attrs, &out));
      return rx_val(call->pos, out);
    }
    check_status(c, call->pos, tj_op_make_call(&c->rxfn->ictx, def, n_args, args, attrs, &out));
    return rx_val(call->pos, out);
  }
  /* An op without a registry entry: valid TVMScript that tvmjit can neither infer nor run. */
  const char *near = tj_op_suggest(name);
  char hint[160] = "";
  if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
  tj_parse_fail_code(c->src, TJ_ERR_UNSUPPORTED, call->pos,
                     "unknown or unsupported operator '%s'%s; `tvmjit ops` lists the supported operators", name, hint);
}

static tj_val_t call_function(tj_pctx_t *c, const tj_py_t *call, const tj_rx_expr_t *callee) {
  if (call->n2) tj_parse_fail(c->src, call->items2[0]->pos, "keyword arguments are not supported in a function call");
  const tj_rx_expr_t **args = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(call->n + 1)));
  for (int i = 0; i < call->n; i++) {
    tj_val_t v = eval(c, call->items[i]);
    args[i] = leaf(c, v.pos, as_rx(c, &v));
  }
  const tj_rx_expr_t *e = TJ_CHK(c, tj_rx_call(c->arena, callee, call->n, args, NULL, 0, NULL));
  return rx_val(call->pos, with_sinfo(c, call->pos, e));
}

static tj_val_t call_r(tj_pctx_t *c, const tj_py_t *call, const char *name) {
  if (!strcmp(name, "R.call_tir")) return call_call_tir(c, call);
  if (!strcmp(name, "R.call_tir_inplace")) return call_call_tir_inplace(c, call);
  if (!strcmp(name, "R.call_tir_with_grad")) return call_call_tir_with_grad(c, call);
  if (!strcmp(name, "R.call_dps_packed")) return call_call_dps_packed(c, call);
  if (!strcmp(name, "R.call_packed")) return call_packed(c, call, false);
  if (!strcmp(name, "R.call_pure_packed")) return call_packed(c, call, true);
  if (!strcmp(name, "R.print")) return call_print(c, call);
  if (!strcmp(name, "R.assert_op")) return call_assert_op(c, call);
  if (!strcmp(name, "R.const")) return call_const(c, call);
  if (is_sinfo_name(name)) {
    tj_val_t v = tj_val_make(V_SINFO, call->pos);
    v.sinfo = parse_sinfo(c, call, false);
    return v;
  }
  if (!strcmp(name, "R.output") || !strcmp(name, "R.func_attr") || !strcmp(name, "R.dataflow"))
    tj_parse_fail(c->src, call->pos, "%s cannot be used as a value", name);
  if (!strcmp(name, "R.prim_value") || !strcmp(name, "R.str") || !strcmp(name, "R.dtype") ||
      !strcmp(name, "R.ExternFunc") || !strcmp(name, "R.shape") || !strcmp(name, "R.ShapeExpr") ||
      !strcmp(name, "R.TupleGetItem")) {
    tj_py_check_nargs(c, call, name, !strcmp(name, "R.TupleGetItem") ? 2 : 1, !strcmp(name, "R.TupleGetItem") ? 2 : 1);
    tj_val_t v = eval(c, call->items[0]);
    const tj_rx_expr_t *e;
    if (!strcmp(name, "R.prim_value")) {
      const tj_tir_expr_t *p = v.kind == V_INT ? tj_tir_as_typed(c, &v, TJ_I64) : v.kind == V_FLOAT ? tj_tir_as_typed(c, &v, TJ_F64) : tj_tir_as_expr(c, &v);
      e = TJ_CHK(c, tj_rx_prim_value(c->arena, p));
    } else if (!strcmp(name, "R.shape") || !strcmp(name, "R.ShapeExpr")) { /* R.ShapeExpr: the node constructor */
      if (v.kind != V_SEQ) tj_parse_fail(c->src, v.pos, "%s expects a list of dimensions", name);
      e = shape_expr_of(c, &v);
    } else if (!strcmp(name, "R.TupleGetItem")) {
      tj_val_t i = eval(c, call->items[1]);
      if (i.kind != V_INT) tj_parse_fail(c->src, i.pos, "expected a constant index");
      e = TJ_CHK(c, tj_rx_get_item(c->arena, leaf(c, v.pos, as_rx(c, &v)), (int)i.i));
    } else {
      if (v.kind != V_STR) tj_parse_fail(c->src, v.pos, "%s expects a string", name);
      if (!strcmp(name, "R.str")) e = TJ_CHK(c, tj_rx_string_imm(c->arena, v.s));
      else if (!strcmp(name, "R.ExternFunc")) e = TJ_CHK(c, tj_rx_extern_func(c->arena, v.s));
      else e = TJ_CHK(c, tj_rx_dtype_imm(c->arena, tj_val_dtype(c, &v)));
    }
    return rx_val(call->pos, with_sinfo(c, call->pos, e));
  }
  if (!strcmp(name, "R.tuple")) {
    const tj_rx_expr_t **f = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(call->n + 1)));
    for (int i = 0; i < call->n; i++) {
      tj_val_t v = eval(c, call->items[i]);
      f[i] = leaf(c, v.pos, as_rx(c, &v));
    }
    return rx_val(call->pos, with_sinfo(c, call->pos, TJ_CHK(c, tj_rx_tuple(c->arena, call->n, f))));
  }
  if (!strcmp(name, "R.match_cast"))
    tj_parse_fail(c->src, call->pos, "R.match_cast must be the whole value of a binding: x = R.match_cast(value, "
                  "R.Tensor(...))");
  return call_op(c, call, name);
}

/* `x.astype("float16")` on a Relax value is TVM's ExprWithOp.astype, i.e. R.astype(x, ...).
 * Returns false when `e` is not such a method call. The receiver is evaluated once (its
 * nested calls emit bindings). */
static bool eval_method_call(tj_pctx_t *c, const tj_py_t *e, tj_val_t *out) {
  if (!e->a || e->a->kind != PY_ATTR || strcmp(e->a->s, "astype") != 0) return false;
  tj_val_t receiver = eval(c, e->a->a);
  if (receiver.kind != V_RX) return false;
  if (e->n + e->n2 != 1 || (e->n2 && strcmp(e->kw[0], "dtype") != 0))
    tj_parse_fail(c->src, e->pos, "astype takes one argument, the dtype: x.astype(\"float16\")");
  tj_val_t dtype = eval(c, e->n ? e->items[0] : e->items2[0]);
  const tj_attrs_t *attrs = TJ_CHK(c, tj_attrs_set(c->arena, NULL, "dtype", tj_val_to_attr(c, &dtype)));
  const tj_rx_expr_t *arg = leaf(c, receiver.pos, receiver.rx), *call = NULL;
  check_status(c, e->pos, tj_op_make_call(&c->rxfn->ictx, tj_op_lookup_script("R.astype"), 1, &arg, attrs, &call));
  *out = rx_val(e->pos, call);
  return true;
}

static tj_val_t eval_call(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t method;
  if (eval_method_call(c, e, &method)) return method;
  const char *name = tj_py_dotted(c->src, e->a);
  if (name && (!strncmp(name, "T.", 2))) return tj_tir_eval(c, e);
  if (is_sinfo_name(name)) {
    tj_val_t v = tj_val_make(V_SINFO, e->pos);
    v.sinfo = parse_sinfo(c, e, false);
    return v;
  }
  tj_val_t f = eval(c, e->a);
  if (f.kind == V_FUNC) {
    if (!strncmp(f.s, "R.", 2)) return call_r(c, e, f.s);
    if (!strncmp(f.s, "T.", 2)) return tj_tir_eval(c, e);
    tj_parse_fail(c->src, e->pos, "unknown function '%s'", f.s);
  }
  if (f.kind == V_RX && (f.rx->kind == TJ_RX_GLOBAL_VAR || tj_rx_is_var(f.rx))) return call_function(c, e, f.rx);
  tj_parse_fail(c->src, e->pos, "%s is not callable", tj_val_kind_name(f.kind));
}

static tj_val_t eval_subscript(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t base = eval(c, e->a);
  if (base.kind != V_RX) return tj_tir_eval(c, e);
  if (e->n != 1 || e->items[0]->kind == PY_SLICE) tj_parse_fail(c->src, e->pos, "a tuple item takes one constant index");
  tj_val_t i = eval(c, e->items[0]);
  if (i.kind != V_INT) tj_parse_fail(c->src, i.pos, "expected a constant integer index");
  const tj_rx_expr_t *t = leaf(c, base.pos, base.rx);
  const tj_sinfo_t *ts = infer(c, e->pos, t);
  if (ts->kind == TJ_SINFO_TUPLE && (i.i < 0 || i.i >= ts->tuple.n))
    tj_parse_fail(c->src, i.pos, "index %lld out of range for a tuple of %d fields", (long long)i.i, ts->tuple.n);
  return rx_val(e->pos, with_sinfo(c, e->pos, TJ_CHK(c, tj_rx_get_item(c->arena, t, (int)i.i))));
}

/* A Relax call of the operator with script name `rop` on Relax values (TVM's
 * ExprWithOp operator overloads). */
static tj_val_t rx_op_call(tj_pctx_t *c, tj_src_pos_t pos, const char *rop, int n, const tj_val_t *vals) {
  const tj_op_def_t *def = tj_op_lookup_script(rop);
  if (!def) tj_parse_fail(c->src, pos, "operator %s is not available", rop);
  const tj_rx_expr_t *args[2];
  for (int i = 0; i < n; i++) args[i] = leaf(c, vals[i].pos, as_rx(c, &vals[i]));
  const tj_rx_expr_t *out = NULL;
  check_status(c, pos, tj_op_make_call(&c->rxfn->ictx, def, n, args, NULL, &out));
  return rx_val(pos, out);
}

static tj_val_t eval_binop(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t v[2] = {eval(c, e->a), eval(c, e->b)};
  if (v[0].kind != V_RX && v[1].kind != V_RX) return tj_tir_eval(c, e); /* symbolic shape arithmetic */
  static const struct { const char *op, *rop; } ops[] = {
      {"+", "R.add"},           {"-", "R.subtract"}, {"*", "R.multiply"}, {"/", "R.divide"},
      {"//", "R.floor_divide"}, {"**", "R.power"},   {"@", "R.matmul"}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(e->s, ops[i].op)) return rx_op_call(c, e->pos, ops[i].rop, 2, v);
  tj_parse_fail(c->src, e->pos, "operator '%s' is not supported on Relax values", e->s);
}

/* `-x` and `x < y` on Relax values; `==` and `!=` stay Python's identity tests in TVM,
 * so they are not operators here either. */
static tj_val_t eval_unary(tj_pctx_t *c, const tj_py_t *e) {
  tj_val_t a = eval(c, e->a);
  if (a.kind != V_RX) return tj_tir_eval(c, e);
  if (!strcmp(e->s, "-")) return rx_op_call(c, e->pos, "R.negative", 1, &a);
  tj_parse_fail(c->src, e->pos, "operator '%s' is not supported on Relax values", e->s);
}

static tj_val_t eval_compare(tj_pctx_t *c, const tj_py_t *e) {
  if (e->n != 2) return tj_tir_eval(c, e);
  tj_val_t v[2] = {eval(c, e->items[0]), eval(c, e->items[1])};
  if (v[0].kind != V_RX && v[1].kind != V_RX) return tj_tir_eval(c, e);
  static const struct { const char *op, *rop; } ops[] = {
      {"<", "R.less"}, {"<=", "R.less_equal"}, {">", "R.greater"}, {">=", "R.greater_equal"}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(e->kw[0], ops[i].op)) return rx_op_call(c, e->pos, ops[i].rop, 2, v);
  tj_parse_fail(c->src, e->pos, "comparison '%s' is not supported on Relax values", e->kw[0]);
}

static tj_val_t eval(tj_pctx_t *c, const tj_py_t *e) {
  tj_pctx_enter(c, e->pos);
  tj_val_t v;
  switch (e->kind) {
    case PY_CALL: v = eval_call(c, e); break;
    case PY_SUBSCRIPT: v = eval_subscript(c, e); break;
    case PY_BINOP: v = eval_binop(c, e); break;
    case PY_UNARY: v = eval_unary(c, e); break;
    case PY_COMPARE: v = eval_compare(c, e); break;
    case PY_TUPLE: case PY_LIST: {
      v = tj_val_make(V_SEQ, e->pos);
      tj_val_t *items = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)(e->n + 1)));
      for (int i = 0; i < e->n; i++) {
        if (e->items[i]->kind == PY_STARRED) tj_parse_fail(c->src, e->items[i]->pos, "'*' is not supported here");
        items[i] = eval(c, e->items[i]);
      }
      v.n = e->n;
      v.items = items;
      v.is_tuple = e->kind == PY_TUPLE;
      break;
    }
    case PY_ATTR: {
      const char *dotted = tj_py_dotted(c->src, e);
      if (is_sinfo_name(dotted)) {
        v = tj_val_make(V_SINFO, e->pos);
        v.sinfo = parse_sinfo(c, e, false);
        break;
      }
      if (!strcmp(e->s, "struct_info")) { /* x.struct_info: the struct info of a Relax value */
        tj_val_t base = eval(c, e->a);
        if (base.kind == V_RX) {
          v = tj_val_make(V_SINFO, e->pos);
          v.sinfo = infer(c, e->pos, base.rx);
          break;
        }
      }
      v = tj_tir_eval(c, e);
      if (v.kind == V_RX && v.rx->kind == TJ_RX_GLOBAL_VAR) v.rx = with_sinfo(c, e->pos, v.rx);
      break;
    }
    default: v = tj_tir_eval(c, e);
  }
  tj_pctx_leave(c);
  return v;
}

/* ---- statements ---- */

static void parse_stmts(tj_pctx_t *c, const tj_py_t *const *items, int n, const tj_rx_expr_t **out_ret,
                        bool top_level);
static const tj_rx_expr_t *emit_void_stmt(tj_pctx_t *c, const tj_py_t *s);

static const char *single_target(tj_pctx_t *c, const tj_py_t *s) {
  if (s->kind == PY_ASSIGN && s->n != 1)
    tj_parse_fail(c->src, s->items[1]->pos, "chained assignment (a = b = c) is not allowed in Relax");
  const tj_py_t *t = s->kind == PY_ASSIGN ? s->items[0] : s->a;
  if (t->kind != PY_NAME) tj_parse_fail(c->src, t->pos, "a Relax binding assigns one name");
  return t->s;
}

/* `n = T.Var("n", "int64")`, the node constructor TVM's tests also write: the dtype, or
 * false when `value` is not that form. The name must be the target's, as TVM requires. */
static bool tir_var_constructor(tj_pctx_t *c, const char *name, const tj_py_t *value, const char *fn,
                                tj_dtype_t *out_dtype) {
  if (strcmp(fn, "T.Var") || value->n != 2 || value->n2 != 0) return false;
  const tj_py_t *vn = value->items[0], *vd = value->items[1];
  if (vn->kind != PY_STR || vd->kind != PY_STR) return false;
  if (strcmp(vn->s, name))
    tj_parse_fail(c->src, vn->pos, "T.Var named '%s' is assigned to '%s': a TIR variable keeps the name it is bound to",
                  vn->s, name);
  if (!tj_dtype_parse(vd->s, out_dtype) || !tj_dtype_is_int(*out_dtype))
    tj_parse_fail(c->src, vd->pos, "a symbolic variable needs an integer dtype such as \"int64\"");
  return true;
}

/* `n = T.int64()` declares a symbolic variable (a name, not a binding); false when
 * `value` is something else. Redeclaring with the same dtype keeps the variable. */
static bool declare_tir_var(tj_pctx_t *c, const char *name, const tj_py_t *value) {
  const char *fn = value->kind == PY_CALL ? tj_py_dotted(c->src, value->a) : NULL;
  tj_dtype_t dt;
  if (!fn || strncmp(fn, "T.", 2)) return false;
  if (!tir_var_constructor(c, name, value, fn, &dt) &&
      (value->n != 0 || value->n2 != 0 || !tj_dtype_parse(fn + 2, &dt)))
    return false;
  const tj_val_t *old = tj_pctx_lookup(c, name);
  if (old && old->kind == V_PRIM && old->prim->kind == TJ_TIR_VAR && tj_dtype_eq(old->prim->dtype, dt)) return true;
  tj_val_t v = tj_val_make(V_PRIM, value->pos);
  v.prim = TJ_CHK(c, tj_tir_var(c->arena, name, dt));
  tj_pctx_bind(c, name, v);
  return true;
}

/* `m, n = T.int64(), T.int64()`: several declarations at once. Relax bindings never
 * unpack a tuple, so any other tuple target is an error. */
static bool declare_tir_vars(tj_pctx_t *c, const tj_py_t *s) {
  if (s->kind != PY_ASSIGN || s->n != 1 || s->items[0]->kind != PY_TUPLE) return false;
  const tj_py_t *t = s->items[0], *v = s->a;
  if (v->kind != PY_TUPLE || v->n != t->n)
    tj_parse_fail(c->src, t->pos, "a Relax binding assigns one name (tuple unpacking is only allowed to declare "
                  "symbolic variables: m, n = T.int64(), T.int64())");
  for (int i = 0; i < t->n; i++) {
    if (t->items[i]->kind != PY_NAME || !declare_tir_var(c, t->items[i]->s, v->items[i]))
      tj_parse_fail(c->src, v->items[i]->pos, "tuple unpacking is only allowed to declare symbolic variables "
                    "(m, n = T.int64(), T.int64())");
  }
  return true;
}

/* `x = R.match_cast(value, sinfo)`: a MatchCast binding; the new var has the given struct
 * info, whose symbolic variables the cast defines (checked when the function runs). */
static void parse_match_cast(tj_pctx_t *c, const tj_py_t *s, const char *name, const tj_py_t *call,
                             const tj_sinfo_t *ann) {
  tj_py_check_nargs(c, call, "R.match_cast", 2, 2);
  if (call->n2) tj_parse_fail(c->src, call->items2[0]->pos, "R.match_cast takes (value, struct_info)");
  tj_val_t v = eval(c, call->items[0]);
  const tj_rx_expr_t *value = as_rx(c, &v);
  if (value->kind == TJ_RX_TUPLE) value = leaf(c, v.pos, value);
  value = with_sinfo(c, v.pos, value);
  define_symbolic(c, call->items[1]);
  const tj_sinfo_t *target = parse_sinfo(c, call->items[1], false);
  if (tj_sinfo_base_check(target, value->sinfo) == TJ_SINFO_FAIL_L0 && target->kind != TJ_SINFO_OBJECT) {
    tj_strbuf_t a, b;
    tj_strbuf_init(&a);
    tj_strbuf_init(&b);
    tj_sinfo_format_short(&a, target);
    tj_sinfo_format_short(&b, value->sinfo);
    char msg[512];
    snprintf(msg, sizeof msg, "R.match_cast can never succeed: the value is %s, the cast wants %s",
             b.data ? b.data : "?", a.data ? a.data : "?");
    tj_strbuf_free(&a);
    tj_strbuf_free(&b);
    tj_parse_fail(c->src, call->pos, "%s", msg);
  }
  if (ann && tj_sinfo_base_check(ann, target) == TJ_SINFO_FAIL_L0 && ann->kind != TJ_SINFO_OBJECT)
    tj_parse_fail(c->src, s->pos, "the annotation of '%s' contradicts its R.match_cast struct info", name);
  push_binding(c, s->pos, name, target, value, target, true);
}

static void parse_binding(tj_pctx_t *c, const tj_py_t *s) {
  if (c->rxfn->after_output) tj_parse_fail(c->src, s->pos, "no binding may follow R.output(...) in a dataflow block");
  if (declare_tir_vars(c, s)) return;
  const char *name = single_target(c, s);
  const tj_py_t *value = s->kind == PY_ASSIGN ? s->a : s->c;
  if (!value) tj_parse_fail(c->src, s->pos, "a binding needs a value");
  /* `cls = Module` and `n = T.int64()` declare names, not bindings */
  if (value->kind == PY_NAME && c->class_name && !strcmp(value->s, c->class_name) && s->kind == PY_ASSIGN) {
    tj_pctx_bind(c, name, tj_val_make(V_MODULE, s->pos));
    return;
  }
  if (declare_tir_var(c, name, value)) return;
  const tj_sinfo_t *ann = s->kind == PY_ANNASSIGN ? parse_sinfo(c, s->b, false) : NULL;
  const char *fn = value->kind == PY_CALL ? tj_py_dotted(c->src, value->a) : NULL;
  if (fn && !strcmp(fn, "R.match_cast")) {
    parse_match_cast(c, s, name, value, ann);
    return;
  }
  c->rxfn->annotated_value = ann && ann->kind == TJ_SINFO_TENSOR && value->kind == PY_CALL ? value : NULL;
  tj_val_t v = eval(c, value);
  c->rxfn->annotated_value = NULL;
  if (v.kind == V_SINFO) tj_parse_fail(c->src, value->pos, "a struct info is not a value");
  if (v.kind == V_MODULE) tj_parse_fail(c->src, value->pos, "the module is not a value");
  if (v.kind == V_PRIM) { /* a TIR expression is no Relax expr: TVM's bind_assign_value names it, emits nothing */
    tj_pctx_bind(c, name, v);
    return;
  }
  const tj_rx_expr_t *e = as_rx(c, &v);
  if (e->kind == TJ_RX_TUPLE) e = leaf(c, v.pos, e);
  emit(c, s->pos, name, e, ann, true);
}

/* Names of R.output(...) in a dataflow body, with the statement index of their last
 * binding (that binding makes a Var instead of a DataflowVar). */
static void scan_outputs(tj_pctx_t *c, const tj_py_t *with, tj_ptrvec_t *outs) {
  const tj_py_t *output = NULL;
  for (int i = 0; i < with->n; i++) {
    const tj_py_t *s = with->items[i];
    if (s->kind != PY_EXPR_STMT || s->a->kind != PY_CALL) continue;
    const char *fn = tj_py_dotted(c->src, s->a->a);
    if (!fn || strcmp(fn, "R.output")) continue;
    if (output) tj_parse_fail(c->src, s->pos, "R.output(...) may appear only once per dataflow block");
    output = s->a;
  }
  if (!output) return;
  if (output->n2) tj_parse_fail(c->src, output->pos, "R.output takes variable names");
  for (int k = 0; k < output->n; k++) {
    const tj_py_t *nm = output->items[k];
    if (nm->kind != PY_NAME) tj_parse_fail(c->src, nm->pos, "R.output takes variable names");
    int last = -1;
    for (int i = 0; i < with->n; i++) {
      const tj_py_t *s = with->items[i];
      const tj_py_t *t = s->kind == PY_ASSIGN && s->n >= 1 ? s->items[0] : s->kind == PY_ANNASSIGN ? s->a : NULL;
      if (t && t->kind == PY_NAME && !strcmp(t->s, nm->s)) last = i;
    }
    if (last < 0) tj_parse_fail(c->src, nm->pos, "R.output: '%s' is not bound in this dataflow block", nm->s);
    dfout_t *o = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *o));
    o->name = nm->s;
    o->last_stmt = last;
    tj_ptrvec_push(c->src, outs, o);
  }
}

static void parse_dataflow(tj_pctx_t *c, const tj_py_t *s) {
  rxfn_t *f = c->rxfn;
  if (f->in_dataflow) tj_parse_fail(c->src, s->pos, "dataflow blocks cannot be nested");
  if (s->b) tj_parse_fail(c->src, s->b->pos, "'with R.dataflow() as x' is not supported");
  for (int i = 0; i < s->n; i++)
    if (s->items[i]->kind == PY_IF) tj_parse_fail(c->src, s->items[i]->pos, "'if' is not allowed inside a dataflow block");
  flush_block(c, false);
  f->in_dataflow = true;
  f->after_output = false;
  f->outputs = (tj_ptrvec_t){0};
  scan_outputs(c, s, &f->outputs);
  int mark = tj_pctx_scope_open(c);
  for (int i = 0; i < s->n; i++) {
    const tj_py_t *st = s->items[i];
    f->stmt_index = i;
    if (st->kind == PY_EXPR_STMT && st->a->kind == PY_CALL) {
      const char *fn = tj_py_dotted(c->src, st->a->a);
      if (fn && !strcmp(fn, "R.output")) {
        f->after_output = true;
        continue;
      }
    }
    if (st->kind == PY_ASSIGN || st->kind == PY_ANNASSIGN) parse_binding(c, st);
    else if (st->kind == PY_IF) tj_parse_fail(c->src, st->pos, "'if' is not allowed inside a dataflow block");
    else if (st->kind == PY_RETURN) tj_parse_fail(c->src, st->pos, "'return' is not allowed inside a dataflow block");
    else if (st->kind == PY_PASS || (st->kind == PY_EXPR_STMT && st->a->kind == PY_STR)) continue;
    else if (st->kind == PY_EXPR_STMT) tj_parse_fail(c->src, st->pos, "the result of this call must be bound to a name");
    else tj_parse_fail(c->src, st->pos, "%s is not allowed inside a dataflow block", tj_py_kind_name(st->kind));
  }
  tj_pctx_scope_close(c, mark);
  /* only the outputs stay visible, as ordinary vars */
  for (int i = 0; i < f->bindings.n; i++) {
    const tj_rx_binding_t *b = f->bindings.items[i];
    if (b->var->kind == TJ_RX_VAR) tj_pctx_bind(c, b->var->var.name, rx_val(s->pos, b->var));
  }
  flush_block(c, true);
  f->in_dataflow = false;
  f->after_output = false;
  f->outputs = (tj_ptrvec_t){0};
}

/* A branch ending in a statement such as R.print(...) binds "_" (TVM names it so). */
static const char *last_binding_name(tj_pctx_t *c, const tj_py_t *const *items, int n, tj_src_pos_t pos) {
  if (n == 0) tj_parse_fail(c->src, pos, "an empty branch");
  const tj_py_t *last = items[n - 1];
  if (last->kind == PY_EXPR_STMT && last->a->kind == PY_CALL) return "_";
  if (last->kind != PY_ASSIGN && last->kind != PY_ANNASSIGN)
    tj_parse_fail(c->src, last->pos, "each branch of a Relax 'if' must end with a binding of the result");
  return single_target(c, last);
}

/* The value of a branch's last statement, normalised to a leaf: a binding's value (a
 * match_cast binds and yields its var) or a void statement's. */
static const tj_rx_expr_t *branch_result(tj_pctx_t *c, const tj_py_t *last) {
  if (last->kind == PY_EXPR_STMT) {
    const tj_rx_expr_t *var = emit_void_stmt(c, last);
    return var;
  }
  const tj_py_t *value = last->kind == PY_ASSIGN ? last->a : last->c;
  if (!value) tj_parse_fail(c->src, last->pos, "a branch must bind its result");
  const char *fn = value->kind == PY_CALL ? tj_py_dotted(c->src, value->a) : NULL;
  if (fn && !strcmp(fn, "R.match_cast")) {
    parse_binding(c, last);
    const tj_rx_binding_t *b = c->rxfn->bindings.items[c->rxfn->bindings.n - 1];
    return b->var;
  }
  if (last->kind == PY_ANNASSIGN) (void)parse_sinfo(c, last->b, false);
  tj_val_t v = eval(c, value);
  return leaf(c, v.pos, as_rx(c, &v));
}

/* One branch of an if, as TVM's GetSeqExprForBranch: the statements before the last
 * are bindings in the branch's own scope; the value of the last binding is the body,
 * normalised to a leaf (a non-leaf value is bound to a fresh var first). */
static const tj_rx_expr_t *parse_branch(tj_pctx_t *c, const tj_py_t *const *items, int n) {
  rxfn_t *f = c->rxfn;
  tj_ptrvec_t saved_blocks = f->blocks, saved_bindings = f->bindings;
  f->blocks = (tj_ptrvec_t){0};
  f->bindings = (tj_ptrvec_t){0};
  int mark = tj_pctx_scope_open(c);
  parse_stmts(c, items, n - 1, NULL, false);
  const tj_py_t *last = items[n - 1];
  const tj_rx_expr_t *body = branch_result(c, last);
  flush_block(c, false);
  tj_pctx_scope_close(c, mark);
  int nb = f->blocks.n;
  tj_rx_block_t *blocks = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_rx_block_t) * (size_t)(nb + 1)));
  for (int i = 0; i < nb; i++) blocks[i] = *(const tj_rx_block_t *)f->blocks.items[i];
  f->blocks = saved_blocks;
  f->bindings = saved_bindings;
  return TJ_CHK(c, tj_rx_seq(c->arena, nb, blocks, body));
}

static void parse_if(tj_pctx_t *c, const tj_py_t *s) {
  if (c->rxfn->in_dataflow) tj_parse_fail(c->src, s->pos, "'if' is not allowed inside a dataflow block");
  if (!s->n2) tj_parse_fail(c->src, s->pos, "a Relax 'if' needs an 'else' branch");
  const char *tn = last_binding_name(c, s->items, s->n, s->pos);
  const char *en = last_binding_name(c, s->items2, s->n2, s->pos);
  if (strcmp(tn, en))
    tj_parse_fail(c->src, s->items2[s->n2 - 1]->pos, "both branches must bind the same name: '%s' vs '%s'", tn, en);
  tj_val_t cv = eval(c, s->a);
  const tj_rx_expr_t *cond = leaf(c, cv.pos, as_rx(c, &cv));
  const tj_rx_expr_t *then_b = parse_branch(c, s->items, s->n);
  const tj_rx_expr_t *else_b = parse_branch(c, s->items2, s->n2);
  const tj_rx_expr_t *e = TJ_CHK(c, tj_rx_if(c->arena, cond, then_b, else_b));
  emit(c, s->pos, tn, e, NULL, true);
}

static void parse_local_function(tj_pctx_t *c, const tj_py_t *s) {
  tj_deco_t deco;
  if (s->nd != 1 || !tj_parse_decorator(c, s->decos[0], &deco) || strcmp(deco.kind, "R.function"))
    tj_parse_fail(c->src, s->pos, "a local function needs the decorator @R.function");
  rxfn_t *saved = c->rxfn;
  const tj_rx_func_t *fn = parse_function(c, s, true, deco.is_pure);
  c->rxfn = saved;
  const tj_rx_expr_t *e = TJ_CHK(c, tj_rx_function_expr(c->arena, fn));
  emit(c, s->pos, s->s, with_sinfo(c, s->pos, e), NULL, true);
}

/* An expression statement (`R.print(x)`) is bound to a var named "_", as TVM's parser
 * does; only a void value (an empty tuple) may be dropped that way. */
static const tj_rx_expr_t *emit_void_stmt(tj_pctx_t *c, const tj_py_t *s) {
  tj_val_t v = eval(c, s->a);
  if (v.kind != V_RX) tj_parse_fail(c->src, s->pos, "this expression statement has no effect; remove it");
  const tj_sinfo_t *si = infer(c, s->pos, v.rx);
  if (si->kind != TJ_SINFO_TUPLE || si->tuple.n != 0)
    tj_parse_fail(c->src, s->pos, "the result of this expression must be bound to a name (x = ...): only a call "
                  "returning nothing (R.print, R.assert_op) may stand alone");
  return emit(c, s->pos, "_", v.rx, NULL, false);
}

static void parse_expr_stmt(tj_pctx_t *c, const tj_py_t *s, bool top_level) {
  if (s->a->kind == PY_STR) return;
  const char *fn = s->a->kind == PY_CALL ? tj_py_dotted(c->src, s->a->a) : NULL;
  if (fn && !strcmp(fn, "R.output")) tj_parse_fail(c->src, s->pos, "R.output(...) is only allowed at the end of a dataflow block");
  if (fn && !strcmp(fn, "R.func_attr")) {
    if (!top_level) tj_parse_fail(c->src, s->pos, "R.func_attr is only allowed at the function level");
    return; /* read by parse_function */
  }
  emit_void_stmt(c, s);
}

static void parse_stmts(tj_pctx_t *c, const tj_py_t *const *items, int n, const tj_rx_expr_t **out_ret,
                        bool top_level) {
  for (int i = 0; i < n; i++) {
    const tj_py_t *s = items[i];
    tj_pctx_enter(c, s->pos);
    switch (s->kind) {
      case PY_ASSIGN: case PY_ANNASSIGN: parse_binding(c, s); break;
      case PY_WITH: {
        const char *fn = s->a->kind == PY_CALL ? tj_py_dotted(c->src, s->a->a) : NULL;
        if (!fn || strcmp(fn, "R.dataflow")) tj_parse_fail(c->src, s->a->pos, "expected R.dataflow() after 'with'");
        parse_dataflow(c, s);
        break;
      }
      case PY_IF: parse_if(c, s); break;
      case PY_DEF: parse_local_function(c, s); break;
      case PY_EXPR_STMT: parse_expr_stmt(c, s, top_level); break;
      case PY_PASS: break;
      case PY_RETURN: {
        if (!out_ret) tj_parse_fail(c->src, s->pos, "'return' is only allowed at the end of the function body");
        if (i != n - 1) tj_parse_fail(c->src, items[i + 1]->pos, "nothing may follow 'return' in a function body");
        if (!s->a) tj_parse_fail(c->src, s->pos, "a Relax function must return a value");
        tj_val_t v = eval(c, s->a);
        const tj_rx_expr_t *r = as_rx(c, &v);
        if (r->kind == TJ_RX_TUPLE) r = leaf(c, v.pos, r);
        *out_ret = with_sinfo(c, s->pos, r);
        break;
      }
      default: tj_parse_fail(c->src, s->pos, "%s is not supported in a Relax function", tj_py_kind_name(s->kind));
    }
    tj_pctx_leave(c);
  }
}

/* ---- functions ---- */

static bool is_none(const tj_py_t *e) { return e->kind == PY_CONST && !strcmp(e->s, "None"); }

static const tj_rx_expr_t *const *parse_params(tj_pctx_t *c, const tj_py_t *def) {
  for (int i = 0; i < def->np; i++) define_symbolic(c, def->params[i]->a);
  const tj_rx_expr_t **params = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(def->np + 1)));
  for (int i = 0; i < def->np; i++) {
    const tj_py_t *p = def->params[i];
    if (!p->a) tj_parse_fail(c->src, p->pos, "parameter '%s' needs a struct info annotation, e.g. R.Tensor((n,), \"float32\")", p->s);
    if (p->b) tj_parse_fail(c->src, p->b->pos, "Relax parameters cannot have default values");
    params[i] = TJ_CHK(c, tj_rx_var(c->arena, p->s, parse_sinfo(c, p->a, true)));
    tj_pctx_bind(c, p->s, rx_val(p->pos, params[i]));
  }
  return params;
}

const tj_sinfo_t *tj_parse_relax_decl(tj_pctx_t *c, const tj_py_t *def) {
  int mark = tj_pctx_scope_open(c);
  const tj_rx_expr_t *const *params = parse_params(c, def);
  const tj_sinfo_t **ps = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(def->np + 1)));
  for (int i = 0; i < def->np; i++) ps[i] = params[i]->sinfo;
  if (def->b) define_symbolic_in(c, def->b, true);
  const tj_sinfo_t *ret = def->b && !is_none(def->b) ? parse_sinfo(c, def->b, false) : TJ_CHK(c, tj_sinfo_object(c->arena));
  tj_deco_t deco = {0};
  bool pure = def->nd == 1 && tj_parse_decorator(c, def->decos[0], &deco) ? deco.is_pure : true;
  tj_pctx_scope_close(c, mark);
  return TJ_CHK(c, tj_sinfo_func(c->arena, def->np, ps, ret, pure));
}

static const tj_attrs_t *function_attrs(tj_pctx_t *c, const tj_py_t *def) {
  const tj_attrs_t *attrs = NULL;
  bool seen = false;
  for (int i = 0; i < def->n; i++) {
    const tj_py_t *s = def->items[i];
    if (s->kind != PY_EXPR_STMT || s->a->kind != PY_CALL) continue;
    const char *fn = tj_py_dotted(c->src, s->a->a);
    if (!fn || strcmp(fn, "R.func_attr")) continue;
    if (seen) tj_parse_fail(c->src, s->pos, "R.func_attr given twice");
    seen = true;
    tj_py_check_nargs(c, s->a, fn, 1, 1);
    tj_val_t v = tj_tir_eval(c, s->a->items[0]);
    if (v.kind != V_DICT) tj_parse_fail(c->src, v.pos, "R.func_attr expects a dict");
    attrs = tj_val_to_attrs(c, &v);
  }
  return attrs;
}

static const tj_sinfo_t *global_sinfo_cb(void *ctx, const char *name);

static const tj_rx_func_t *parse_function(tj_pctx_t *c, const tj_py_t *def, bool is_private, bool is_pure) {
  rxfn_t *f = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *f));
  f->ictx.arena = c->arena;
  f->ictx.global_sinfo = global_sinfo_cb;
  f->ictx.global_ctx = c;
  c->rxfn = f;
  int mark = tj_pctx_scope_open(c);
  tj_rx_func_t *fn = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *fn));
  fn->n_params = def->np;
  fn->params = parse_params(c, def);
  fn->is_pure = is_pure;
  if (def->b) define_symbolic_in(c, def->b, true); /* R.Callable signatures may name their own dims */
  /* `-> None` is no annotation: the return struct info is deduced from the body */
  const tj_sinfo_t *ret_ann = def->b && !is_none(def->b) ? parse_sinfo(c, def->b, false) : NULL;
  fn->attrs = function_attrs(c, def);
  if (!is_private && !tj_attrs_get(fn->attrs, "global_symbol"))
    fn->attrs = TJ_CHK(c, tj_attrs_set(c->arena, fn->attrs, "global_symbol", tj_attr_str(tj_pctx_str(c, def->s))));
  const tj_rx_expr_t *ret = NULL;
  parse_stmts(c, def->items, def->n, &ret, true);
  if (!ret) tj_parse_fail(c->src, def->pos, "function '%s' must end with a 'return'", def->s);
  flush_block(c, false);
  tj_rx_block_t *blocks = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_rx_block_t) * (size_t)(f->blocks.n + 1)));
  for (int i = 0; i < f->blocks.n; i++) blocks[i] = *(const tj_rx_block_t *)f->blocks.items[i];
  fn->body = TJ_CHK(c, tj_rx_seq(c->arena, f->blocks.n, blocks, ret));
  const tj_sinfo_t *body_sinfo = infer(c, def->pos, ret);
  /* TVM's Function constructor takes the body's struct info when the annotation is its
   * base; here only when they are equal (`h - kh + 1` is written, `h + 1 - kh` is the
   * body's form). A looser annotation stays, so that a printed module parses back to the
   * same module even when a callee's signature is only known on the second reading. */
  fn->ret_sinfo = ret_ann && !(tj_sinfo_is_base_of(ret_ann, body_sinfo) && tj_sinfo_is_base_of(body_sinfo, ret_ann))
                      ? ret_ann
                      : body_sinfo;
  tj_pctx_scope_close(c, mark);
  c->rxfn = NULL;
  return fn;
}

static const tj_sinfo_t *global_sinfo_cb(void *ctx, const char *name) {
  tj_pctx_t *c = ctx;
  tj_pfunc_t *f = tj_pctx_find_func(c, name);
  if (!f) return NULL;
  if (f->is_prim) return tj_sinfo_func(c->arena, -1, NULL, tj_sinfo_object(c->arena), true);
  if (f->relax) {
    const tj_sinfo_t *s = tj_rx_func_sinfo(c->arena, f->relax);
    if (s) return s;
  }
  return f->decl_sinfo;
}

const tj_rx_func_t *tj_parse_relax_func(tj_pctx_t *c, const tj_py_t *def, bool is_private, bool is_pure) {
  return parse_function(c, def, is_private, is_pure);
}
