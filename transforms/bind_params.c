/* BindParams(func_name, params), TVM's pass: the parameters of one Relax function that
 * `params` names become constants of its body and leave its signature, so that later
 * passes (FoldConstant) see the weights. Parameters are matched by name hint; a bound
 * tensor must have the parameter's dtype and static shape. Binding symbolic dims from
 * the tensors' shapes (which TVM also does) is not supported: such a parameter is an
 * error naming it. */
#include <stdio.h>
#include <string.h>

#include "ir/rx_mutator.h"
#include "transforms/transforms.h"

#define OOM() tj_status_new(TJ_ERR_OUT_OF_MEMORY, "BindParams: out of memory")

static const tj_bound_param_t *find_bound(const tj_pass_context_t *ctx, const char *name) {
  for (int i = 0; i < ctx->n_bound_params; i++)
    if (strcmp(ctx->bound_params[i].name, name) == 0) return &ctx->bound_params[i];
  return NULL;
}

static int find_param(const tj_rx_func_t *f, const char *name) {
  for (int i = 0; i < f->n_params; i++)
    if (strcmp(f->params[i]->var.name, name) == 0) return i;
  return -1;
}

static void shape_text(char *buf, size_t len, int ndim, const int64_t *dims) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < ndim && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

/* The constant for parameter `param`, after checking that `b` fits its struct info. */
static tj_status_t *make_constant(tj_arena_t *a, const char *fname, const tj_rx_expr_t *param,
                                  const tj_bound_param_t *b, const tj_rx_expr_t **out) {
  int ndim;
  int64_t dims[8];
  if (!tj_sinfo_static_shape(param->sinfo, &ndim, dims))
    return tj_status_new(TJ_ERR_UNSUPPORTED,
                         "BindParams: parameter '%s' of '%s' is not a tensor of static shape; bind only "
                         "static-shape tensor parameters (or leave '%s' unbound)",
                         param->var.name, fname, param->var.name);
  char want[160], got[160], wd[TJ_DTYPE_BUFSIZE], gd[TJ_DTYPE_BUFSIZE];
  shape_text(want, sizeof want, ndim, dims);
  shape_text(got, sizeof got, b->ndim, b->shape);
  tj_dtype_t pd = param->sinfo->tensor.dtype;
  if (b->ndim != ndim || memcmp(b->shape, dims, sizeof dims[0] * (size_t)ndim) != 0 || !tj_dtype_eq(pd, b->dtype))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "BindParams: parameter '%s' of '%s' is %s%s but the tensor given for it is %s%s; give a "
                         "tensor of the parameter's type",
                         param->var.name, fname, tj_dtype_str(pd, wd), want, tj_dtype_str(b->dtype, gd), got);
  size_t need = tj_dtype_bytes(b->dtype);
  for (int i = 0; i < ndim; i++) need *= (size_t)dims[i];
  if (b->nbytes != need)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "BindParams: tensor for '%s' has %zu bytes, its type needs %zu",
                         param->var.name, b->nbytes, need);
  /* Borrowed, not copied: a model's weights are most of its memory (the caller keeps
   * them alive as long as the module, transforms.h). */
  tj_rx_expr_t *c = (tj_rx_expr_t *)tj_rx_constant(a, b->dtype, ndim, dims, NULL, 0);
  if (!c) return OOM();
  c->constant.data = b->data;
  c->constant.nbytes = b->nbytes;
  c->sinfo = param->sinfo;
  *out = c;
  return NULL;
}

/* Every bound name must be a parameter unless the caller asked to skip the others. */
static tj_status_t *check_names(const tj_pass_context_t *ctx, const char *fname, const tj_rx_func_t *f) {
  if (ctx->bind_skip_unknown) return NULL;
  for (int i = 0; i < ctx->n_bound_params; i++)
    if (find_param(f, ctx->bound_params[i].name) < 0)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                           "BindParams: '%s' has no parameter '%s'; bind only the function's parameters", fname,
                           ctx->bound_params[i].name);
  return NULL;
}

static tj_status_t *bind_func(const tj_pass_context_t *ctx, const char *fname, const tj_rx_func_t *f,
                              const tj_rx_func_t **out) {
  TJ_RETURN_IF_ERROR(check_names(ctx, fname, f));
  tj_rx_mutator_t rw;
  tj_rx_mutator_init(&rw, ctx->arena, "BindParams");
  const tj_rx_expr_t **kept = TJ_ARENA_ARRAY(ctx->arena, const tj_rx_expr_t *, f->n_params + 1);
  if (!kept) return OOM();
  int n_kept = 0;
  for (int i = 0; i < f->n_params; i++) {
    const tj_bound_param_t *b = find_bound(ctx, f->params[i]->var.name);
    if (!b) {
      kept[n_kept++] = f->params[i];
      continue;
    }
    const tj_rx_expr_t *c = NULL;
    TJ_RETURN_IF_ERROR(make_constant(ctx->arena, fname, f->params[i], b, &c));
    if (!tj_rx_mutator_remap(&rw, f->params[i], c)) return OOM();
  }
  if (n_kept == f->n_params) return *out = f, NULL;
  const tj_rx_func_t *body = tj_rx_mutate_func(&rw, f);
  if (rw.error) return rw.error;
  tj_rx_func_t *nf = TJ_ARENA_NEW(ctx->arena, tj_rx_func_t);
  if (!nf) return OOM();
  *nf = *body;
  nf->n_params = n_kept;
  nf->params = kept;
  *out = nf;
  return NULL;
}

tj_status_t *tj_bind_params(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  const char *fname = ctx->bind_function ? ctx->bind_function : "main";
  if (ctx->n_bound_params == 0) return *out = in, NULL;
  for (int i = 0; i < in->n_funcs; i++) {
    const tj_func_entry_t *e = &in->funcs[i];
    if (e->is_prim || strcmp(e->name, fname) != 0) continue;
    const tj_rx_func_t *nf = NULL;
    TJ_RETURN_IF_ERROR(bind_func(ctx, fname, e->relax, &nf));
    if (nf == e->relax) return *out = in, NULL;
    tj_func_entry_t ne = *e;
    ne.relax = nf;
    return (*out = tj_module_with_func(ctx->arena, in, ne)) ? NULL : OOM();
  }
  return tj_status_new(TJ_ERR_NOT_FOUND, "BindParams: the module has no Relax function '%s'; name the function to bind",
                       fname);
}
