/* Symbolic signatures (specialize.h): describing them and binding their vars. */
#include "api/specialize.h"

#include <string.h>

#include "ir/sinfo.h"
#include "support/strbuf.h"

static bool dim_is_static(const tj_tir_expr_t *e) { return tj_tir_is_const_int(e, NULL); }

static bool tensor_is_symbolic(const tj_sinfo_t *s) {
  if (!tj_sinfo_is_tensor(s)) return false;
  if (!s->tensor.shape || s->tensor.ndim < 0) return true;
  for (int d = 0; d < s->tensor.ndim; d++)
    if (!dim_is_static(s->tensor.shape[d])) return true;
  return false;
}

bool tj_signature_is_symbolic(const tj_rx_func_t *f) {
  for (int i = 0; i < f->n_params; i++)
    if (tensor_is_symbolic(f->params[i]->sinfo)) return true;
  return false;
}

static void describe_one(const char *name, const tj_sinfo_t *s, tj_value_desc_t *d) {
  memset(d, 0, sizeof *d);
  d->name = name;
  d->dtype = s->tensor.dtype;
  d->ndim = s->tensor.ndim > 0 && s->tensor.ndim <= TJ_MAX_NDIM ? s->tensor.ndim : 0;
  for (int k = 0; k < d->ndim; k++) {
    int64_t v;
    d->shape[k] = s->tensor.shape && tj_tir_is_const_int(s->tensor.shape[k], &v) ? v : -1;
  }
}

tj_status_t *tj_signature_describe(tj_arena_t *arena, const tj_rx_func_t *f, bool results, int *out_n,
                                   tj_value_desc_t **out_descs) {
  const tj_sinfo_t *ret = f->ret_sinfo ? f->ret_sinfo : f->body->sinfo;
  int n = results ? (ret && ret->kind == TJ_SINFO_TUPLE ? ret->tuple.n : 1) : f->n_params;
  tj_value_desc_t *d = TJ_ARENA_ARRAY(arena, tj_value_desc_t, n > 0 ? n : 1);
  if (!d) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n; i++) {
    const tj_sinfo_t *s = results ? (ret && ret->kind == TJ_SINFO_TUPLE ? ret->tuple.fields[i] : ret)
                                  : f->params[i]->sinfo;
    if (!tj_sinfo_is_tensor(s))
      return tj_status_new(TJ_ERR_UNSUPPORTED, "%s %d of a symbolic function is not a tensor", results ? "result" : "parameter", i);
    describe_one(results ? "output" : f->params[i]->var.name, s, &d[i]);
  }
  *out_n = n;
  *out_descs = d;
  return NULL;
}

/* ---- binding ---- */

typedef struct binder {
  const tj_rx_func_t *f;
  const tj_tensor_t *const *inputs;
  tj_shape_binding_t *b;
  int source_param[TJ_MAX_SYMBOLIC_VARS], source_dim[TJ_MAX_SYMBOLIC_VARS];
} binder_t;

static const char *param_name(const binder_t *bd, int i) { return bd->f->params[i]->var.name; }

static int find_var(const tj_shape_binding_t *b, const tj_tir_expr_t *v) {
  for (int i = 0; i < b->n; i++)
    if (b->vars[i] == v) return i;
  return -1;
}

static tj_status_t *check_rank_and_dtype(const binder_t *bd, int i) {
  const tj_sinfo_t *s = bd->f->params[i]->sinfo;
  const tj_tensor_t *t = bd->inputs[i];
  char want[TJ_DTYPE_BUFSIZE], got[TJ_DTYPE_BUFSIZE];
  if (s->tensor.dtype.code != TJ_DT_VOID && !tj_dtype_eq(s->tensor.dtype, t->dtype))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s' is %s, but the function takes %s", param_name(bd, i),
                         tj_dtype_str(t->dtype, got), tj_dtype_str(s->tensor.dtype, want));
  if (s->tensor.ndim >= 0 && s->tensor.ndim != t->ndim)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s' has %d dims, but the function takes %d", param_name(bd, i),
                         t->ndim, s->tensor.ndim);
  return NULL;
}

/* First pass: a dim that is a plain var not yet bound binds it. */
static tj_status_t *bind_plain_vars(binder_t *bd, int i) {
  const tj_sinfo_t *s = bd->f->params[i]->sinfo;
  for (int d = 0; s->tensor.shape && d < s->tensor.ndim; d++) {
    const tj_tir_expr_t *e = s->tensor.shape[d];
    if (e->kind != TJ_TIR_VAR || find_var(bd->b, e) >= 0) continue;
    if (bd->b->n == TJ_MAX_SYMBOLIC_VARS)
      return tj_status_new(TJ_ERR_UNSUPPORTED, "the function has more than %d symbolic vars", TJ_MAX_SYMBOLIC_VARS);
    int k = bd->b->n++;
    bd->b->vars[k] = e;
    bd->b->values[k] = bd->inputs[i]->shape[d];
    bd->source_param[k] = i;
    bd->source_dim[k] = d;
  }
  return NULL;
}

static tj_status_t *dim_mismatch(const binder_t *bd, int i, int d, const tj_tir_expr_t *e, int64_t want) {
  int64_t got = bd->inputs[i]->shape[d];
  int k = find_var(bd->b, e);
  if (k >= 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s': dim %d is %lld, but %s = %lld from dim %d of input '%s'",
                         param_name(bd, i), d, (long long)got, e->var.name, (long long)want, bd->source_dim[k],
                         param_name(bd, bd->source_param[k]));
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_sinfo_format_dim(&sb, e);
  tj_status_t *st = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s': dim %d is %lld, but the function takes %s = %lld",
                                  param_name(bd, i), d, (long long)got, sb.data && !sb.failed ? sb.data : "?",
                                  (long long)want);
  tj_strbuf_free(&sb);
  return st;
}

/* Second pass: every dim, with the vars bound, must equal the input's. */
static tj_status_t *check_dims(const binder_t *bd, int i) {
  const tj_sinfo_t *s = bd->f->params[i]->sinfo;
  for (int d = 0; s->tensor.shape && d < s->tensor.ndim; d++) {
    const tj_tir_expr_t *e = s->tensor.shape[d];
    int64_t want;
    if (!tj_tir_eval_int_bound(e, bd->b->n, bd->b->vars, bd->b->values, &want))
      return tj_status_new(TJ_ERR_UNSUPPORTED,
                           "input '%s': dim %d is an expression of vars that no input dim names alone; "
                           "give the function a parameter whose dim is each var",
                           param_name(bd, i), d);
    if (want != bd->inputs[i]->shape[d]) return dim_mismatch(bd, i, d, e, want);
  }
  return NULL;
}

tj_status_t *tj_signature_bind(const tj_rx_func_t *f, int n_inputs, const tj_tensor_t *const *inputs,
                               tj_shape_binding_t *out_binding) {
  if (n_inputs != f->n_params)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "the function takes %d input(s), but %d were given", f->n_params,
                         n_inputs);
  tj_shape_binding_t b = {0};
  binder_t bd = {.f = f, .inputs = inputs, .b = &b};
  for (int i = 0; i < n_inputs; i++) {
    if (!tj_sinfo_is_tensor(f->params[i]->sinfo))
      return tj_status_new(TJ_ERR_UNSUPPORTED, "parameter '%s' is not a tensor; the JIT only passes tensors",
                           param_name(&bd, i));
    TJ_RETURN_IF_ERROR(check_rank_and_dtype(&bd, i));
    TJ_RETURN_IF_ERROR(bind_plain_vars(&bd, i));
  }
  tj_status_t *st = NULL;
  for (int i = 0; i < n_inputs && !st; i++) st = check_dims(&bd, i);
  if (!st) *out_binding = b;
  return st;
}
