/* FuseTIR (docs/semantics.md §5): every Relax function with {"Primitive": 1}
 * (made by FuseOps) becomes one PrimFunc of the same name that runs the bodies of
 * its call_tir callees in order, with intermediates allocated in a root block; the
 * callers then call it through call_tir; DeadCodeElimination finishes.
 *
 * One deliberate difference from TVM: buffers are matched per (call, parameter), not
 * per Relax variable, so a tensor passed twice (`add(A, A)`, TVM #17075) or read by
 * two kernels is fine; a real dtype, rank, shape or layout disagreement is reported
 * as a TJ_ERR_VERIFY status naming the fused function, binding, callee and parameter.
 * Tuple parameters are expanded per field and unused parameters dropped, which is
 * what TVM's ExpandTupleArguments and RemoveUnusedParameters do first. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/rx_mutator.h"
#include "ir/visit.h"
#include "support/strbuf.h"
#include "support/map.h"
#include "support/vec.h"
#include "transforms/transforms.h"

#define OOM() tj_status_new(TJ_ERR_OUT_OF_MEMORY, "FuseTIR: out of memory")

/* ---------------- the fused function's parameter plan ---------------- */

/* One parameter of the fused PrimFunc: a tensor Relax param, or one field of a tuple
 * param ("<name>_<field>"). */
typedef struct plan_entry {
  int param;  /* Relax param index */
  int field;  /* -1: the param itself */
  const char *name;
  const tj_sinfo_t *sinfo;
} plan_entry_t;

typedef struct plan {
  int n;
  plan_entry_t *entries;
} plan_t;

typedef struct usage_ctx {
  const tj_rx_func_t *f;
  bool *whole;     /* per param: used as a whole */
  uint64_t *fields; /* per param: bit k = field k read through get-item */
} usage_ctx_t;

static int param_index(const tj_rx_func_t *f, const tj_rx_expr_t *e) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i] == e) return i;
  return -1;
}

static bool usage_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  usage_ctx_t *u = v->ctx;
  if (def) return true;
  if (e->kind == TJ_RX_TUPLE_GET_ITEM) {
    int p = param_index(u->f, e->get_item.tuple);
    if (p >= 0 && e->get_item.index >= 0 && e->get_item.index < 64) {
      u->fields[p] |= (uint64_t)1 << e->get_item.index;
      return false;
    }
    return true;
  }
  int p = param_index(u->f, e);
  if (p >= 0) u->whole[p] = true;
  return true;
}

static tj_status_t *make_plan(tj_arena_t *a, const char *fname, const tj_rx_func_t *f, plan_t *out) {
  bool *whole = TJ_ARENA_ARRAY(a, bool, f->n_params + 1);
  uint64_t *fields = TJ_ARENA_ARRAY(a, uint64_t, f->n_params + 1);
  int cap = 0;
  if (!whole || !fields) return OOM();
  usage_ctx_t u = {f, whole, fields};
  tj_rx_visitor_t v = {.expr = usage_expr, .ctx = &u};
  tj_rx_visit_expr(&v, f->body);
  for (int i = 0; i < f->n_params; i++) {
    const tj_sinfo_t *s = f->params[i]->sinfo;
    cap += (s && s->kind == TJ_SINFO_TUPLE) ? s->tuple.n : 1;
  }
  out->entries = TJ_ARENA_ARRAY(a, plan_entry_t, cap + 1);
  out->n = 0;
  if (!out->entries) return OOM();
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *p = f->params[i];
    const tj_sinfo_t *s = p->sinfo;
    if (s && s->kind == TJ_SINFO_TUPLE) {
      for (int k = 0; k < s->tuple.n; k++) {
        if (!whole[i] && !(k < 64 && (fields[i] >> k) & 1)) continue; /* RemoveUnusedParameters */
        if (!tj_sinfo_is_tensor(s->tuple.fields[k]))
          return tj_status_new(TJ_ERR_UNSUPPORTED,
                               "FuseTIR: fused function '%s': field %d of tuple parameter '%s' is not a tensor; "
                               "only tuples of tensors can be expanded",
                               fname, k, p->var.name);
        const char *name = tj_arena_printf(a, "%s_%d", p->var.name, k);
        if (!name) return OOM();
        out->entries[out->n++] = (plan_entry_t){i, k, name, s->tuple.fields[k]};
      }
    } else if (tj_sinfo_is_tensor(s)) {
      if (!whole[i]) continue;
      out->entries[out->n++] = (plan_entry_t){i, -1, p->var.name, s};
    } else if (whole[i] || fields[i]) {
      return tj_status_new(TJ_ERR_UNSUPPORTED,
                           "FuseTIR: fused function '%s': parameter '%s' is not a tensor or a tuple of tensors; "
                           "scalar and shape parameters of fused functions are not supported",
                           fname, p->var.name);
    }
  }
  return NULL;
}

/* ---------------- values of Relax vars inside the fused function ---------------- */

typedef struct rvalue rvalue_t;
struct rvalue {
  bool is_tuple;
  int entry;               /* plan entry whose buffer this is, or -1 */
  const tj_buffer_t *buf;  /* NULL for a param not yet used */
  int n;
  rvalue_t **fields;
};

typedef struct fuser {
  tj_arena_t *a;
  const tj_module_t *mod;
  const char *fname;          /* the fused function's name */
  const tj_rx_func_t *f;
  plan_t plan;
  const tj_buffer_t **param_bufs; /* per plan entry */
  tj_map_t values;        /* Relax var -> rvalue_t */
  tj_ptr_vec_t allocs;        /* const tj_buffer_t * */
  tj_ptr_vec_t bodies;        /* const tj_tir_stmt_t * */
  const char *binding_name;   /* for messages */
  bool wrote_in_place;        /* some call_tir_inplace was inlined */
} fuser_t;

static rvalue_t *new_value(fuser_t *fu, const tj_buffer_t *buf, int entry) {
  rvalue_t *v = TJ_ARENA_NEW(fu->a, rvalue_t);
  if (v) {
    v->buf = buf;
    v->entry = entry;
  }
  return v;
}

static rvalue_t *new_tuple_value(fuser_t *fu, int n) {
  rvalue_t *v = TJ_ARENA_NEW(fu->a, rvalue_t);
  if (!v) return NULL;
  v->is_tuple = true;
  v->entry = -1;
  v->n = n;
  v->fields = TJ_ARENA_ARRAY(fu->a, rvalue_t *, n + 1);
  return v->fields ? v : NULL;
}

static tj_status_t *init_param_values(fuser_t *fu) {
  for (int i = 0; i < fu->f->n_params; i++) {
    const tj_rx_expr_t *p = fu->f->params[i];
    const tj_sinfo_t *s = p->sinfo;
    rvalue_t *v = NULL;
    if (s && s->kind == TJ_SINFO_TUPLE) {
      v = new_tuple_value(fu, s->tuple.n);
      for (int k = 0; v && k < s->tuple.n; k++) {
        int entry = -1;
        for (int e = 0; e < fu->plan.n; e++)
          if (fu->plan.entries[e].param == i && fu->plan.entries[e].field == k) entry = e;
        if (!(v->fields[k] = new_value(fu, NULL, entry))) return OOM();
      }
    } else {
      int entry = -1;
      for (int e = 0; e < fu->plan.n; e++)
        if (fu->plan.entries[e].param == i) entry = e;
      v = new_value(fu, NULL, entry);
    }
    if (!v || !tj_map_put(&fu->values, p, v)) return OOM();
  }
  return NULL;
}

/* ---------------- messages ---------------- */

static void describe_expr(tj_strbuf_t *sb, const tj_tir_expr_t *e) {
  int64_t v;
  if (tj_tir_is_const_int(e, &v))
    tj_strbuf_printf(sb, "%lld", (long long)v);
  else if (e->kind == TJ_TIR_VAR)
    tj_strbuf_append(sb, e->var.name);
  else
    tj_strbuf_append(sb, "?");
}

static void describe_buffer(tj_strbuf_t *sb, const tj_buffer_t *b) {
  char dt[TJ_DTYPE_BUFSIZE];
  tj_strbuf_printf(sb, "%s[", tj_dtype_str(b->dtype, dt));
  for (int i = 0; i < b->ndim; i++) {
    if (i) tj_strbuf_append(sb, ", ");
    describe_expr(sb, b->shape[i]);
  }
  tj_strbuf_append(sb, "]");
}

/* "fused function 'f': binding 'lv': argument 1 ('x': float32[16]) does not match
 * parameter 1 'A' of 'add' (float16[16]): <why>" */
static tj_status_t *mismatch(const fuser_t *fu, const char *callee, const char *role, int k, const char *arg_name,
                             const tj_buffer_t *have, const tj_buffer_t *param, const char *why) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "FuseTIR: fused function '%s': binding '%s': %s %d ('%s': ", fu->fname, fu->binding_name,
                   role, k, arg_name);
  describe_buffer(&sb, have);
  tj_strbuf_printf(&sb, ") does not match parameter '%s' of '%s' (", param->name, callee);
  describe_buffer(&sb, param);
  tj_strbuf_printf(&sb, "): %s", why);
  tj_status_t *st = sb.failed ? OOM() : tj_status_new(TJ_ERR_VERIFY, "%s", sb.data);
  tj_strbuf_free(&sb);
  return st;
}

/* ---------------- symbolic shape matching ---------------- */

typedef struct subst_map {
  tj_ptr_vec_t vars;   /* callee symbolic vars */
  tj_ptr_vec_t values; /* what they stand for in the fused function */
} subst_map_t;

static const tj_tir_expr_t *subst_lookup(const subst_map_t *s, const tj_tir_expr_t *var) {
  int i = tj_ptr_vec_find(&s->vars, var);
  return i < 0 ? NULL : s->values.items[i];
}

static bool fold_binary(tj_tir_expr_kind_t k, int64_t x, int64_t y, int64_t *out) {
  switch (k) {
    case TJ_TIR_ADD: *out = x + y; return true;
    case TJ_TIR_SUB: *out = x - y; return true;
    case TJ_TIR_MUL: *out = x * y; return true;
    case TJ_TIR_MIN: *out = x < y ? x : y; return true;
    case TJ_TIR_MAX: *out = x > y ? x : y; return true;
    case TJ_TIR_FLOOR_DIV:
      if (y == 0) return false;
      *out = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
      return true;
    case TJ_TIR_FLOOR_MOD:
      if (y == 0) return false;
      *out = x - y * (x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
      return true;
    default:
      return false;
  }
}

/* Integer arithmetic on two literals (left after substituting shape vars) folds. */
static const tj_tir_expr_t *fold(tj_arena_t *a, const tj_tir_expr_t *e) {
  int64_t x, y, r;
  if (!e || !tj_tir_kind_is_binary(e->kind) || !tj_dtype_is_int(e->dtype)) return e;
  if (!tj_tir_is_const_int(e->binary.a, &x) || !tj_tir_is_const_int(e->binary.b, &y)) return e;
  if (!fold_binary(e->kind, x, y, &r)) return e;
  return tj_tir_int(a, e->dtype, r);
}

typedef struct renew_ctx {
  fuser_t *fu;
  const subst_map_t *subst;
  tj_map_t vars;    /* callee var -> fresh var */
  tj_map_t buffers; /* callee buffer -> fused buffer */
} renew_ctx_t;

static const tj_tir_expr_t *renew_var(tj_tir_mutator_t *m, const tj_tir_expr_t *var) {
  renew_ctx_t *rc = m->ctx;
  const tj_tir_expr_t *v = subst_lookup(rc->subst, var);
  if (v) return v;
  v = tj_map_get(&rc->vars, var);
  if (v) return v;
  v = tj_tir_var(m->arena, var->var.name, var->dtype);
  if (!v || !tj_map_put(&rc->vars, var, (void *)v)) {
    m->failed = true;
    return NULL;
  }
  return v;
}

static const tj_tir_expr_t *renew_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  if (!tj_tir_kind_is_binary(e->kind)) return NULL;
  const tj_tir_expr_t *r = fold(m->arena, tj_tir_mutate_expr_children(m, e));
  if (!r) m->failed = true;
  return r;
}

/* A buffer of the callee that is not a parameter (root or block allocation, match
 * buffer): a fresh copy, its shape rewritten like the code. */
static const tj_buffer_t *renew_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  renew_ctx_t *rc = m->ctx;
  const tj_buffer_t *r = tj_map_get(&rc->buffers, b);
  if (r) return r;
  tj_buffer_t *nb = (tj_buffer_t *)tj_buffer_copy(m->arena, b);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, b->ndim + 1);
  if (!nb || !shape) {
    m->failed = true;
    return NULL;
  }
  for (int i = 0; i < b->ndim; i++) shape[i] = tj_tir_mutate_expr(m, b->shape[i]);
  nb->shape = shape;
  if (b->strides) {
    const tj_tir_expr_t **strides = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, b->ndim + 1);
    if (!strides) return m->failed = true, NULL;
    for (int i = 0; i < b->ndim; i++) strides[i] = tj_tir_mutate_expr(m, b->strides[i]);
    nb->strides = strides;
  }
  if (b->elem_offset) nb->elem_offset = tj_tir_mutate_expr(m, b->elem_offset);
  if (m->failed || !tj_map_put(&rc->buffers, b, nb)) {
    m->failed = true;
    return NULL;
  }
  return nb;
}

static bool provably_different(const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  int64_t a, b;
  return tj_tir_is_const_int(x, &a) && tj_tir_is_const_int(y, &b) && a != b;
}

/* A bare symbolic var in a callee shape takes the value the call gives it. */
static bool bind_shape_vars(tj_arena_t *a, subst_map_t *s, const tj_buffer_t *param, int ndim,
                            const tj_tir_expr_t *const *dims) {
  for (int i = 0; i < param->ndim && i < ndim; i++) {
    const tj_tir_expr_t *d = param->shape[i];
    if (d->kind != TJ_TIR_VAR || subst_lookup(s, d)) continue;
    if (!tj_vec_push(&s->vars, d) || !tj_vec_push(&s->values, dims[i])) return false;
  }
  return true;
}

static const tj_tir_expr_t *subst_dim(tj_arena_t *a, const subst_map_t *s, const tj_tir_expr_t *d) {
  const tj_tir_expr_t *r = tj_tir_substitute_expr(a, d, s->vars.n, (const tj_tir_expr_t *const *)s->vars.items,
                                                  (const tj_tir_expr_t *const *)s->values.items);
  if (!r) return NULL;
  /* fold bottom-up: substitution leaves literal arithmetic such as 16 * 32 */
  if (tj_tir_kind_is_binary(r->kind)) {
    const tj_tir_expr_t *x = subst_dim(a, s, r->binary.a), *y = subst_dim(a, s, r->binary.b);
    if (!x || !y) return NULL;
    if (x != r->binary.a || y != r->binary.b) r = tj_tir_binary(a, r->kind, x, y);
    r = fold(a, r);
  }
  return r;
}

static bool same_axis_separators(const tj_buffer_t *x, const tj_buffer_t *y) {
  if (x->n_axis_separators != y->n_axis_separators) return false;
  for (int i = 0; i < x->n_axis_separators; i++)
    if (x->axis_separators[i] != y->axis_separators[i]) return false;
  return true;
}

static const char *scope_of(const tj_buffer_t *b) { return b->scope ? b->scope : "global"; }

/* ---------------- one call_tir ---------------- */

typedef struct call_plan {
  const tj_prim_func_t *callee;
  const char *callee_name;
  int n_in, n_out;              /* n_out: outputs the callee writes into a buffer param of its own */
  int n_results;                /* the call's results; call_tir_inplace results alias an input */
  const int *inplace;           /* per result: the input it aliases, or -1 (NULL: call_tir) */
  const tj_buffer_t **params;   /* the callee's buffer params, inputs then outputs */
  const tj_buffer_t **targets;  /* what each one becomes */
  const char **arg_names;
  subst_map_t subst;
} call_plan_t;

/* The buffer a fused param gets the first time a callee reads it: dtype and shape
 * from Relax, scope and axis separators from that callee's buffer (TVM #17075). */
static tj_status_t *param_buffer(fuser_t *fu, rvalue_t *v, const tj_buffer_t *callee_buf) {
  if (v->buf) return NULL;
  const plan_entry_t *pe = &fu->plan.entries[v->entry];
  const tj_sinfo_t *s = pe->sinfo;
  if (!s->tensor.shape || s->tensor.ndim < 0 || tj_dtype_is_void(s->tensor.dtype))
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': parameter '%s' needs a known dtype and shape",
                         fu->fname, pe->name);
  tj_buffer_t *b = (tj_buffer_t *)tj_buffer_new(fu->a, pe->name, s->tensor.dtype, s->tensor.ndim,
                                                s->tensor.shape, NULL);
  if (!b) return OOM();
  if (callee_buf) {
    b->scope = callee_buf->scope;
    b->n_axis_separators = callee_buf->n_axis_separators;
    b->axis_separators = callee_buf->axis_separators;
  }
  v->buf = b;
  fu->param_bufs[v->entry] = b;
  return NULL;
}

static tj_status_t *resolve_arg(fuser_t *fu, const tj_rx_expr_t *arg, const tj_buffer_t *callee_buf,
                                const tj_buffer_t **out) {
  rvalue_t *v = tj_map_get(&fu->values, arg);
  if (!v || v->is_tuple || (!v->buf && v->entry < 0))
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': argument '%s' is not a tensor made inside "
                         "the function or passed to it",
                         fu->fname, fu->binding_name, tj_rx_is_var(arg) ? arg->var.name : tj_rx_expr_kind_name(arg->kind));
  TJ_RETURN_IF_ERROR(param_buffer(fu, v, callee_buf));
  *out = v->buf;
  return NULL;
}

static tj_status_t *check_layout(const fuser_t *fu, const call_plan_t *cp, int k, const tj_buffer_t *have,
                                 const tj_buffer_t *param) {
  if (!same_axis_separators(have, param) || strcmp(scope_of(have), scope_of(param)) != 0) {
    char why[256];
    snprintf(why, sizeof why, "Inconsistent buffers %s and %s mapped to the same relax var: %s (the storage scope "
             "or axis_separators differ)", have->name, param->name, cp->arg_names[k]);
    return mismatch(fu, cp->callee_name, k < cp->n_in ? "argument" : "output", k < cp->n_in ? k : k - cp->n_in,
                    cp->arg_names[k], have, param, why);
  }
  return NULL;
}

static tj_status_t *check_call_buffers(fuser_t *fu, call_plan_t *cp) {
  int n = cp->n_in + cp->n_out;
  for (int k = 0; k < n; k++) {
    const tj_buffer_t *have = cp->targets[k], *param = cp->params[k];
    const char *role = k < cp->n_in ? "argument" : "output";
    int idx = k < cp->n_in ? k : k - cp->n_in;
    if (!tj_dtype_eq(have->dtype, param->dtype))
      return mismatch(fu, cp->callee_name, role, idx, cp->arg_names[k], have, param, "the dtypes differ");
    if (have->ndim != param->ndim)
      return mismatch(fu, cp->callee_name, role, idx, cp->arg_names[k], have, param, "the ranks differ");
    if (k < cp->n_in) TJ_RETURN_IF_ERROR(check_layout(fu, cp, k, have, param));
    for (int d = 0; d < param->ndim; d++) {
      const tj_tir_expr_t *want = subst_dim(fu->a, &cp->subst, param->shape[d]);
      if (!want) return OOM();
      if (provably_different(want, have->shape[d])) {
        char why[64];
        snprintf(why, sizeof why, "dimension %d differs", d);
        return mismatch(fu, cp->callee_name, role, idx, cp->arg_names[k], have, param, why);
      }
    }
  }
  return NULL;
}

/* `<name>_intermediate`, then TVM's collision rule: `_1`, then `_1_2`, ... */
static const char *intermediate_name(fuser_t *fu, const char *callee_buf_name) {
  const char *name = tj_arena_printf(fu->a, "%s_intermediate", callee_buf_name);
  for (int suffix = 1; name; suffix++) {
    bool taken = false;
    for (int i = 0; i < fu->allocs.n && !taken; i++)
      taken = strcmp(((const tj_buffer_t *)fu->allocs.items[i])->name, name) == 0;
    if (!taken) return name;
    name = tj_arena_printf(fu->a, "%s_%d", name, suffix);
  }
  return NULL;
}

static tj_status_t *output_buffer(fuser_t *fu, call_plan_t *cp, int j, const tj_sinfo_t *out_sinfo,
                                  const tj_buffer_t **out) {
  const tj_buffer_t *param = cp->params[cp->n_in + j];
  if (!tj_sinfo_is_tensor(out_sinfo) || !out_sinfo->tensor.shape)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': output %d of '%s' needs a known shape in out_sinfo",
                         fu->fname, fu->binding_name, j, cp->callee_name);
  if (!tj_dtype_is_void(out_sinfo->tensor.dtype) && !tj_dtype_eq(out_sinfo->tensor.dtype, param->dtype)) {
    char a[TJ_DTYPE_BUFSIZE], b[TJ_DTYPE_BUFSIZE];
    return tj_status_new(TJ_ERR_VERIFY,
                         "FuseTIR: fused function '%s': binding '%s': out_sinfo %d says %s but output parameter '%s' "
                         "of '%s' is %s",
                         fu->fname, fu->binding_name, j, tj_dtype_str(out_sinfo->tensor.dtype, a), param->name,
                         cp->callee_name, tj_dtype_str(param->dtype, b));
  }
  const char *name = intermediate_name(fu, param->name);
  tj_buffer_t *b = name ? (tj_buffer_t *)tj_buffer_new(fu->a, name, param->dtype, out_sinfo->tensor.ndim,
                                                       out_sinfo->tensor.shape, NULL)
                        : NULL;
  if (!b) return OOM();
  b->scope = param->scope;
  b->n_axis_separators = param->n_axis_separators;
  b->axis_separators = param->axis_separators;
  *out = b;
  return NULL;
}

static int count_outputs(const tj_sinfo_t *s) { return (s && s->kind == TJ_SINFO_TUPLE) ? s->tuple.n : 1; }

static const tj_sinfo_t *output_sinfo(const tj_sinfo_t *s, int j) {
  return (s && s->kind == TJ_SINFO_TUPLE) ? s->tuple.fields[j] : s;
}

static tj_status_t *plan_call(fuser_t *fu, const tj_call_tir_view_t *view, call_plan_t *cp) {
  const tj_prim_func_t *callee = cp->callee;
  int n_buf = 0;
  for (int i = 0; i < callee->n_params; i++)
    if (callee->buffer_map && callee->buffer_map[i]) n_buf++;
  cp->n_in = view->n_args;
  cp->n_results = count_outputs(view->out_sinfo);
  cp->n_out = cp->n_results;
  if (view->inplace_indices) {
    if (view->inplace_indices->list.n != cp->n_results)
      return tj_status_new(TJ_ERR_VERIFY, "FuseTIR: fused function '%s': binding '%s': %d inplace_indices for %d "
                           "results", fu->fname, fu->binding_name, view->inplace_indices->list.n, cp->n_results);
    int *inplace = TJ_ARENA_ARRAY(fu->a, int, cp->n_results + 1);
    if (!inplace) return OOM();
    for (int j = 0; j < cp->n_results; j++) {
      inplace[j] = (int)view->inplace_indices->list.items[j].i;
      if (inplace[j] >= cp->n_in) return tj_status_new(TJ_ERR_VERIFY, "FuseTIR: binding '%s': in-place index %d "
                                                       "out of range", fu->binding_name, inplace[j]);
      if (inplace[j] >= 0) cp->n_out--;
    }
    cp->inplace = inplace;
  }
  if (n_buf != cp->n_in + cp->n_out)
    return tj_status_new(TJ_ERR_VERIFY,
                         "FuseTIR: fused function '%s': binding '%s': '%s' takes %d buffers but the call passes %d "
                         "arguments and %d outputs",
                         fu->fname, fu->binding_name, cp->callee_name, n_buf, cp->n_in, cp->n_out);
  int n = n_buf;
  cp->params = TJ_ARENA_ARRAY(fu->a, const tj_buffer_t *, n + 1);
  cp->targets = TJ_ARENA_ARRAY(fu->a, const tj_buffer_t *, n + 1);
  cp->arg_names = TJ_ARENA_ARRAY(fu->a, const char *, n + 1);
  if (!cp->params || !cp->targets || !cp->arg_names) return OOM();
  int k = 0, n_scalar = 0;
  for (int i = 0; i < callee->n_params; i++) {
    if (callee->buffer_map && callee->buffer_map[i]) {
      cp->params[k++] = callee->buffer_map[i];
      continue;
    }
    /* scalar params take the values of the trailing tir_vars shape */
    const tj_rx_expr_t *tv = view->tir_vars;
    if (!tv || tv->kind != TJ_RX_SHAPE_EXPR || n_scalar >= tv->shape_expr.n)
      return tj_status_new(TJ_ERR_VERIFY,
                           "FuseTIR: fused function '%s': binding '%s': scalar parameter '%s' of '%s' has no value "
                           "in the call's tir_vars",
                           fu->fname, fu->binding_name, callee->params[i]->var.name, cp->callee_name);
    if (!tj_vec_push(&cp->subst.vars, callee->params[i]) ||
        !tj_vec_push(&cp->subst.values, tv->shape_expr.values[n_scalar++]))
      return OOM();
  }
  for (int i = 0; i < cp->n_in; i++) {
    const tj_rx_expr_t *arg = view->args[i];
    cp->arg_names[i] = tj_rx_is_var(arg) ? arg->var.name : tj_rx_expr_kind_name(arg->kind);
    TJ_RETURN_IF_ERROR(resolve_arg(fu, arg, cp->params[i], &cp->targets[i]));
    if (!bind_shape_vars(fu->a, &cp->subst, cp->params[i], cp->targets[i]->ndim, cp->targets[i]->shape)) return OOM();
  }
  for (int j = 0, fresh = 0; j < cp->n_results; j++) {
    if (cp->inplace && cp->inplace[j] >= 0) continue;
    const tj_sinfo_t *s = output_sinfo(view->out_sinfo, j);
    int k = cp->n_in + fresh++;
    cp->arg_names[k] = fu->binding_name;
    if (tj_sinfo_is_tensor(s) && s->tensor.shape &&
        !bind_shape_vars(fu->a, &cp->subst, cp->params[k], s->tensor.ndim, s->tensor.shape))
      return OOM();
  }
  return NULL;
}


/* Appends a callee's body to the fused body, splicing a sequence into its statements:
 * TVM's FuseTIR flattens nested sequences (SeqStmt::Flatten), so the fused root holds one
 * flat sequence and compares structurally with TVM's output. */
static bool push_flattened(tj_ptr_vec_t *bodies, const tj_tir_stmt_t *body) {
  if (body->kind != TJ_TIR_SEQ) return tj_vec_push(bodies, body);
  for (int i = 0; i < body->seq.n; i++)
    if (!push_flattened(bodies, body->seq.stmts[i])) return false;
  return true;
}

static tj_status_t *inline_call(fuser_t *fu, const tj_rx_binding_t *b, const tj_call_tir_view_t *view) {
  call_plan_t cp = {.subst = {.vars = {.arena = fu->a}, .values = {.arena = fu->a}}};
  const tj_rx_expr_t *callee_ref = view->callee;
  cp.callee_name = callee_ref->kind == TJ_RX_GLOBAL_VAR ? callee_ref->var.name : callee_ref->string_imm;
  cp.callee = callee_ref->kind == TJ_RX_GLOBAL_VAR ? tj_module_find_prim(fu->mod, cp.callee_name) : NULL;
  if (!cp.callee)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': callee '%s' is not a PrimFunc of the module",
                         fu->fname, fu->binding_name, cp.callee_name);
  const tj_block_t *root = tj_prim_func_root_block(cp.callee);
  if (!root)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': callee '%s' has no root block (its body is "
                         "not made of T.block statements), so it cannot be fused; only schedulable PrimFuncs "
                         "can be fused (TVM #17341)",
                         fu->fname, fu->binding_name, cp.callee_name);
  TJ_RETURN_IF_ERROR(plan_call(fu, view, &cp));
  if (cp.inplace) fu->wrote_in_place = true;
  /* Root allocations first, then this call's intermediates (TVM's order). */
  renew_ctx_t rc = {.fu = fu, .subst = &cp.subst, .vars = TJ_PTR_MAP(fu->a), .buffers = TJ_PTR_MAP(fu->a)};
  tj_tir_mutator_t m = {
      .arena = fu->a, .expr = renew_expr, .buffer = renew_buffer, .var = renew_var, .ctx = &rc};
  for (int i = 0; i < cp.n_in; i++)
    if (!tj_map_put(&rc.buffers, cp.params[i], (void *)cp.targets[i])) return OOM();
  for (int i = 0; i < root->n_alloc_buffers; i++) {
    const tj_buffer_t *nb = renew_buffer(&m, root->alloc_buffers[i]);
    if (!nb || !tj_vec_push(&fu->allocs, nb)) return OOM();
  }
  rvalue_t *result = cp.n_results > 1 || (view->out_sinfo && view->out_sinfo->kind == TJ_SINFO_TUPLE)
                         ? new_tuple_value(fu, cp.n_results)
                         : NULL;
  for (int j = 0, fresh = 0; j < cp.n_results; j++) {
    rvalue_t *v;
    if (cp.inplace && cp.inplace[j] >= 0) {
      /* written in place: the result is the input's own tensor (a param stays a param) */
      v = tj_map_get(&fu->values, view->args[cp.inplace[j]]);
    } else {
      const tj_buffer_t *out = NULL;
      int k = cp.n_in + fresh;
      TJ_RETURN_IF_ERROR(output_buffer(fu, &cp, fresh++, output_sinfo(view->out_sinfo, j), &out));
      cp.targets[k] = out;
      if (!tj_vec_push(&fu->allocs, out) || !tj_map_put(&rc.buffers, cp.params[k], (void *)out)) return OOM();
      v = new_value(fu, out, -1);
    }
    if (!v) return OOM();
    if (result)
      result->fields[j] = v;
    else
      result = v;
  }
  TJ_RETURN_IF_ERROR(check_call_buffers(fu, &cp));
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(&m, root->body);
  if (m.failed || !body || !push_flattened(&fu->bodies, body)) return OOM();
  if (!result || !tj_map_put(&fu->values, b->var, result)) return OOM();
  return NULL;
}

/* ---------------- bindings ---------------- */

static tj_status_t *fuse_binding(fuser_t *fu, const tj_rx_binding_t *b) {
  fu->binding_name = b->var->var.name;
  const tj_rx_expr_t *value = b->value;
  tj_call_tir_view_t view;
  rvalue_t *v = NULL;
  if (b->match_cast)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "FuseTIR: fused function '%s': binding '%s': match_cast cannot be fused",
                         fu->fname, fu->binding_name);
  if (tj_rx_as_call_tir_or_inplace(value, &view)) return inline_call(fu, b, &view);
  if (tj_rx_is_var(value)) {
    v = tj_map_get(&fu->values, value);
  } else if (value->kind == TJ_RX_TUPLE_GET_ITEM) {
    rvalue_t *t = tj_map_get(&fu->values, value->get_item.tuple);
    if (t && t->is_tuple && value->get_item.index >= 0 && value->get_item.index < t->n)
      v = t->fields[value->get_item.index];
  } else if (value->kind == TJ_RX_TUPLE) {
    v = new_tuple_value(fu, value->tuple.n);
    if (!v) return OOM();
    for (int i = 0; i < value->tuple.n; i++)
      if (!(v->fields[i] = tj_map_get(&fu->values, value->tuple.fields[i]))) v = NULL;
  } else {
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': a %s cannot be fused; only call_tir, tuples "
                         "and tuple get-items can",
                         fu->fname, fu->binding_name,
                         value->kind == TJ_RX_CALL ? "call of something other than a PrimFunc"
                                                   : tj_rx_expr_kind_name(value->kind));
  }
  if (!v)
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "FuseTIR: fused function '%s': binding '%s': its value does not refer to a tensor of the "
                         "function",
                         fu->fname, fu->binding_name);
  return tj_map_put(&fu->values, b->var, v) ? NULL : OOM();
}

/* ---------------- building the PrimFunc ---------------- */

typedef struct name_count {
  tj_ptr_vec_t names;  /* const char * */
  tj_ptr_vec_t counts; /* (intptr_t) */
} name_count_t;

typedef struct finish_ctx {
  name_count_t names;
  bool failed;
} finish_ctx_t;

static int name_find(const name_count_t *nc, const char *name) {
  for (int i = 0; i < nc->names.n; i++)
    if (strcmp(nc->names.items[i], name) == 0) return i;
  return -1;
}

/* TVM's block-name deduplication: a repeated name gets `_1`, `_2`, ... */
static const char *unique_block_name(tj_arena_t *a, name_count_t *nc, const char *name) {
  const char *unique = name;
  int base = name_find(nc, name);
  while (unique && name_find(nc, unique) >= 0) {
    intptr_t c = (intptr_t)nc->counts.items[base] + 1;
    nc->counts.items[base] = (const void *)c;
    unique = tj_arena_printf(a, "%s_%ld", name, (long)c);
  }
  if (!unique || !tj_vec_push(&nc->names, unique) || !tj_vec_push(&nc->counts, (const void *)0))
    return NULL;
  return unique;
}

/* Regions of one buffer are merged keeping the first, as TVM does since #14603 (the
 * region list is an annotation; keeping one region per buffer is what TVM prints). */
static const tj_buffer_region_t *dedup_regions(tj_arena_t *a, int n, const tj_buffer_region_t *in, int *out_n) {
  tj_buffer_region_t *out = TJ_ARENA_ARRAY(a, tj_buffer_region_t, n + 1);
  if (!out) return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    bool seen = false;
    for (int j = 0; j < k && !seen; j++) seen = out[j].buffer == in[i].buffer;
    if (!seen) out[k++] = in[i];
  }
  *out_n = k;
  return out;
}

static const tj_tir_stmt_t *finish_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_BLOCK_REALIZE) return NULL;
  finish_ctx_t *fc = m->ctx;
  const tj_tir_stmt_t *r = tj_tir_mutate_stmt_children(m, s); /* post-order, as TVM */
  if (!r) return m->failed = true, NULL;
  tj_block_t *blk = TJ_ARENA_NEW(m->arena, tj_block_t);
  if (!blk) return m->failed = true, NULL;
  *blk = *r->realize.block;
  blk->name = unique_block_name(m->arena, &fc->names, blk->name);
  blk->reads = dedup_regions(m->arena, blk->n_reads, blk->reads, &blk->n_reads);
  blk->writes = dedup_regions(m->arena, blk->n_writes, blk->writes, &blk->n_writes);
  if (!blk->name || !blk->reads || !blk->writes) return m->failed = true, NULL;
  const tj_tir_stmt_t *nr = tj_tir_realize(m->arena, r->realize.n_iter_values, r->realize.iter_values,
                                           r->realize.predicate, blk);
  if (!nr) m->failed = true;
  return nr;
}

static void remove_alloc(tj_ptr_vec_t *allocs, const void *buf) {
  int at = tj_ptr_vec_find(allocs, buf);
  if (at < 0) return;
  memmove(&allocs->items[at], &allocs->items[at + 1], sizeof(allocs->items[0]) * (size_t)(allocs->n - at - 1));
  allocs->n--;
}

/* The fused PrimFunc's output params (`outs`), and per result of the function the plan
 * entry (= argument of the new call) it was computed in place of, or -1 (`inplace`,
 * NULL when no result is in place: the call stays a call_tir). */
static tj_status_t *output_buffers(fuser_t *fu, const tj_rx_expr_t *result, tj_ptr_vec_t *outs, int **inplace,
                                   int *n_results) {
  rvalue_t *v = tj_map_get(&fu->values, result);
  if (!v && result->kind == TJ_RX_TUPLE) {
    v = new_tuple_value(fu, result->tuple.n);
    if (!v) return OOM();
    for (int i = 0; i < result->tuple.n; i++)
      if (!(v->fields[i] = tj_map_get(&fu->values, result->tuple.fields[i]))) v = NULL;
  }
  int n = v ? (v->is_tuple ? v->n : 1) : 0;
  int *idx = TJ_ARENA_ARRAY(fu->a, int, n + 1);
  if (!idx) return OOM();
  *n_results = n;
  *inplace = NULL;
  for (int i = 0; v && i < n; i++) {
    rvalue_t *f = v->is_tuple ? v->fields[i] : v;
    int at = f && !f->is_tuple && f->buf ? tj_ptr_vec_find(&fu->allocs, f->buf) : -1;
    idx[i] = -1;
    if (at < 0 && f && !f->is_tuple && f->entry >= 0 && f->buf && fu->wrote_in_place) {
      idx[i] = f->entry; /* a parameter written in place */
      *inplace = idx;
      continue;
    }
    if (at < 0)
      return tj_status_new(TJ_ERR_UNSUPPORTED,
                           "FuseTIR: fused function '%s': result %d is not a tensor computed by one of its calls "
                           "(returning a parameter or the same tensor twice is not supported)",
                           fu->fname, i);
    remove_alloc(&fu->allocs, f->buf); /* an output is a param, not an allocation */
    if (!tj_vec_push(outs, f->buf)) return OOM();
  }
  if (!v) return tj_status_new(TJ_ERR_UNSUPPORTED, "FuseTIR: fused function '%s': its result is not a tensor or a "
                               "tuple of tensors made inside it", fu->fname);
  return NULL;
}

static tj_status_t *build_prim_func(fuser_t *fu, const tj_ptr_vec_t *outs, const tj_prim_func_t **out) {
  tj_arena_t *a = fu->a;
  int n_params = fu->plan.n + outs->n;
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, n_params + 1);
  const tj_buffer_t **bufmap = TJ_ARENA_ARRAY(a, const tj_buffer_t *, n_params + 1);
  if (!params || !bufmap) return OOM();
  for (int i = 0; i < fu->plan.n; i++) {
    if (!fu->param_bufs[i]) { /* used only as a whole tuple, never read by a kernel */
      rvalue_t tmp = {.entry = i};
      TJ_RETURN_IF_ERROR(param_buffer(fu, &tmp, NULL));
    }
    bufmap[i] = fu->param_bufs[i];
    params[i] = tj_tir_var(a, tj_arena_printf(a, "p_%s", fu->plan.entries[i].name), TJ_HANDLE);
  }
  for (int j = 0; j < outs->n; j++) {
    bufmap[fu->plan.n + j] = outs->items[j];
    params[fu->plan.n + j] = tj_tir_var(a, tj_arena_printf(a, "p_output%d", j), TJ_HANDLE);
  }
  for (int i = 0; i < n_params; i++)
    if (!params[i]) return OOM();
  finish_ctx_t fc = {.names = {.names = {.arena = a}, .counts = {.arena = a}}};
  tj_tir_mutator_t m = {.arena = a, .stmt = finish_stmt, .ctx = &fc};
  const tj_tir_stmt_t *seq = tj_tir_seq(a, fu->bodies.n, (const tj_tir_stmt_t *const *)fu->bodies.items);
  const tj_tir_stmt_t *body = seq ? tj_tir_mutate_stmt(&m, seq) : NULL;
  tj_block_t *root = tj_block_new(a, "root");
  if (!body || m.failed || !root) return OOM();
  root->n_alloc_buffers = fu->allocs.n;
  root->alloc_buffers = (const tj_buffer_t *const *)fu->allocs.items;
  root->body = body;
  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  if (!f) return OOM();
  f->n_params = n_params;
  f->params = params;
  f->buffer_map = bufmap;
  f->attrs = tj_attrs_set(a, NULL, "tir.noalias", tj_attr_bool(true));
  f->body = tj_tir_realize(a, 0, NULL, NULL, root);
  if (!f->attrs || !f->body) return OOM();
  *out = f;
  return NULL;
}

static tj_status_t *fuse_function(tj_arena_t *a, const tj_module_t *mod, const char *name, const tj_rx_func_t *f,
                                  plan_t *out_plan, int **out_inplace, int *out_n_results,
                                  const tj_prim_func_t **out) {
  fuser_t fu = {.a = a, .mod = mod, .fname = name, .f = f, .values = TJ_PTR_MAP(a), .allocs = {.arena = a},
                .bodies = {.arena = a}};
  TJ_RETURN_IF_ERROR(make_plan(a, name, f, &fu.plan));
  fu.param_bufs = TJ_ARENA_ARRAY(a, const tj_buffer_t *, fu.plan.n + 1);
  if (!fu.param_bufs) return OOM();
  TJ_RETURN_IF_ERROR(init_param_values(&fu));
  const tj_rx_expr_t *body = f->body;
  if (!body || body->kind != TJ_RX_SEQ)
    return tj_status_new(TJ_ERR_UNSUPPORTED, "FuseTIR: fused function '%s' has no body of bindings", name);
  for (int bi = 0; bi < body->seq.n_blocks; bi++)
    for (int i = 0; i < body->seq.blocks[bi].n_bindings; i++)
      TJ_RETURN_IF_ERROR(fuse_binding(&fu, &body->seq.blocks[bi].bindings[i]));
  tj_ptr_vec_t outs = {.arena = a};
  TJ_RETURN_IF_ERROR(output_buffers(&fu, body->seq.body, &outs, out_inplace, out_n_results));
  *out_plan = fu.plan;
  return build_prim_func(&fu, &outs, out);
}

/* ---------------- rewriting the callers ---------------- */

typedef struct fused_info {
  const char *name;
  plan_t plan;
  int *inplace;  /* per result: the argument it is written into, or -1; NULL = none */
  int n_results;
  const tj_rx_func_t *relax;
} fused_info_t;

typedef struct caller_ctx {
  tj_arena_t *a;
  int n_fused;
  const fused_info_t *fused;
} caller_ctx_t;

static const fused_info_t *find_fused(const caller_ctx_t *cc, const tj_rx_expr_t *value) {
  if (value->kind != TJ_RX_CALL || value->call.callee->kind != TJ_RX_GLOBAL_VAR) return NULL;
  for (int i = 0; i < cc->n_fused; i++)
    if (strcmp(cc->fused[i].name, value->call.callee->var.name) == 0) return &cc->fused[i];
  return NULL;
}

/* A fused function that writes some results into its arguments is called as TVM's
 * FuseTIR does: R.call_tir_inplace with those argument positions. */
static const tj_rx_expr_t *call_tir_inplace(tj_arena_t *a, const fused_info_t *fi, const tj_rx_expr_t *callee,
                                            const tj_rx_expr_t *const *args, const tj_sinfo_t *out_sinfo) {
  tj_attr_value_t *items = TJ_ARENA_ARRAY(a, tj_attr_value_t, fi->n_results + 1);
  const tj_rx_expr_t *call_args[2] = {callee, tj_rx_tuple(a, fi->plan.n, args)};
  if (!items || !call_args[1]) return NULL;
  for (int i = 0; i < fi->n_results; i++) items[i] = tj_attr_int(fi->inplace[i]);
  tj_attr_value_t list = {.kind = TJ_ATTR_LIST};
  list.list.n = fi->n_results;
  list.list.items = items;
  const tj_attrs_t *attrs = tj_attrs_set(a, NULL, "inplace_indices", list);
  const tj_rx_expr_t *op = tj_rx_op(a, "relax.call_tir_inplace");
  if (!attrs || !op) return NULL;
  const tj_rx_expr_t *call = tj_rx_call(a, op, 2, call_args, attrs, 1, &out_sinfo);
  return call ? tj_rx_with_sinfo(a, call, out_sinfo) : NULL;
}

/* `lv = fused(args)` becomes `lv = R.call_tir(fused, (tensor args), out_sinfo)`, with
 * tuple arguments split into get-item bindings and unused arguments dropped. */
static tj_status_t *rewrite_call(tj_rx_mutator_t *m, const fused_info_t *fi, const tj_rx_binding_t *b) {
  tj_arena_t *a = m->arena;
  const tj_rx_expr_t *call = b->value;
  const tj_rx_expr_t **args = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, fi->plan.n + 1);
  if (!args) return OOM();
  for (int i = 0; i < fi->plan.n; i++) {
    const plan_entry_t *pe = &fi->plan.entries[i];
    if (pe->param >= call->call.n_args)
      return tj_status_new(TJ_ERR_VERIFY, "FuseTIR: binding '%s': the call of '%s' passes %d arguments, fewer than "
                           "its %d parameters", b->var->var.name, fi->name, call->call.n_args, fi->relax->n_params);
    const tj_rx_expr_t *arg = call->call.args[pe->param];
    if (pe->field < 0) {
      args[i] = arg;
    } else if (arg->kind == TJ_RX_TUPLE && pe->field < arg->tuple.n) {
      args[i] = arg->tuple.fields[pe->field];
    } else {
      const tj_rx_expr_t *item = tj_rx_with_sinfo(a, tj_rx_get_item(a, arg, pe->field), pe->sinfo);
      if (!(args[i] = tj_rx_emit_named(m, "lv", item))) return NULL;
    }
  }
  const tj_sinfo_t *out_sinfo = call->sinfo ? call->sinfo : b->var->sinfo ? b->var->sinfo : fi->relax->ret_sinfo;
  const tj_rx_expr_t *new_call = fi->inplace ? call_tir_inplace(a, fi, call->call.callee, args, out_sinfo)
                                              : tj_rx_make_call_tir(a, call->call.callee, fi->plan.n, args, out_sinfo, NULL);
  if (!new_call) return OOM();
  tj_rx_emit(m, b->var, new_call, b->match_cast);
  return NULL;
}

static void caller_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  const fused_info_t *fi = find_fused(m->ctx, b->value);
  if (!fi) return tj_rx_mutator_default_binding(m, b);
  tj_status_t *st = rewrite_call(m, fi, b);
  if (st) tj_rx_mutator_fail(m, st);
}

static bool is_primitive(const tj_func_entry_t *e) {
  return !e->is_prim && tj_attrs_get_int(e->relax->attrs, "Primitive", 0) != 0;
}

tj_status_t *tj_fuse_tir(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  tj_arena_t *a = ctx->arena;
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, in->n_funcs + 1);
  fused_info_t *fused = TJ_ARENA_ARRAY(a, fused_info_t, in->n_funcs + 1);
  if (!funcs || !fused) return OOM();
  int n_fused = 0;
  for (int i = 0; i < in->n_funcs; i++) {
    funcs[i] = in->funcs[i];
    if (!is_primitive(&in->funcs[i])) continue;
    fused_info_t *fi = &fused[n_fused++];
    fi->name = in->funcs[i].name;
    fi->relax = in->funcs[i].relax;
    const tj_prim_func_t *pf = NULL;
    TJ_RETURN_IF_ERROR(fuse_function(a, in, fi->name, fi->relax, &fi->plan, &fi->inplace, &fi->n_results, &pf));
    funcs[i] = (tj_func_entry_t){.name = fi->name, .is_prim = true, .prim = pf};
  }
  caller_ctx_t cc = {a, n_fused, fused};
  for (int i = 0; i < in->n_funcs && n_fused; i++) {
    if (funcs[i].is_prim) continue;
    tj_rx_mutator_t rw;
    tj_rx_mutator_init(&rw, a, "FuseTIR");
    rw.binding = caller_binding;
    rw.ctx = &cc;
    const tj_rx_func_t *nf = tj_rx_mutate_func(&rw, funcs[i].relax);
    if (rw.error) return tj_status_annotate(rw.error, "FuseTIR: in function '%s'", funcs[i].name);
    funcs[i].relax = nf;
  }
  tj_module_t *m = tj_module_new(a, in->n_funcs, funcs, in->attrs);
  if (!m) return OOM();
  m->global_infos = in->global_infos;
  return tj_dead_code_elimination(ctx, m, out);
}
