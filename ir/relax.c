#include "ir/relax.h"

#include <string.h>

#include "support/alloc.h"

static tj_sinfo_t *new_sinfo(tj_arena_t *a, tj_sinfo_kind_t kind) {
  tj_sinfo_t *s = TJ_ARENA_NEW(a, tj_sinfo_t);
  if (s) s->kind = kind;
  return s;
}

static const void *copy_array(tj_arena_t *a, const void *src, int n, size_t elem) {
  if (n <= 0 || !src) return NULL;
  return tj_arena_memdup(a, src, elem * (size_t)n);
}

const tj_sinfo_t *tj_sinfo_object(tj_arena_t *a) { return new_sinfo(a, TJ_SINFO_OBJECT); }

const tj_sinfo_t *tj_sinfo_prim(tj_arena_t *a, tj_dtype_t dtype, const tj_tir_expr_t *value) {
  tj_sinfo_t *s = new_sinfo(a, TJ_SINFO_PRIM);
  if (s) {
    s->prim.dtype = dtype;
    s->prim.value = value;
  }
  return s;
}

const tj_sinfo_t *tj_sinfo_shape(tj_arena_t *a, int ndim, const tj_tir_expr_t *const *values) {
  tj_sinfo_t *s = new_sinfo(a, TJ_SINFO_SHAPE);
  if (!s) return NULL;
  s->shape.ndim = ndim;
  s->shape.values = copy_array(a, values, ndim, sizeof(*values));
  if (values && ndim > 0 && !s->shape.values) return NULL;
  if (values && ndim == 0) s->shape.values = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 1); /* known, empty */
  return s;
}

const tj_sinfo_t *tj_sinfo_tensor(tj_arena_t *a, tj_dtype_t dtype, int ndim, const tj_tir_expr_t *const *shape) {
  tj_sinfo_t *s = new_sinfo(a, TJ_SINFO_TENSOR);
  if (!s) return NULL;
  s->tensor.dtype = dtype;
  s->tensor.ndim = ndim;
  s->tensor.shape = copy_array(a, shape, ndim, sizeof(*shape));
  if (shape && ndim > 0 && !s->tensor.shape) return NULL;
  /* A known 0-d shape keeps a non-NULL (empty) array so that "known" survives. */
  if (shape && ndim == 0) s->tensor.shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 1);
  return s;
}

const tj_sinfo_t *tj_sinfo_tensor_static(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *dims) {
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, ndim > 0 ? ndim : 1);
  if (!shape) return NULL;
  for (int i = 0; i < ndim; i++)
    if (!(shape[i] = tj_tir_i64(a, dims[i]))) return NULL;
  return tj_sinfo_tensor(a, dtype, ndim, shape);
}

const tj_sinfo_t *tj_sinfo_tuple(tj_arena_t *a, int n, const tj_sinfo_t *const *fields) {
  tj_sinfo_t *s = new_sinfo(a, TJ_SINFO_TUPLE);
  if (!s) return NULL;
  s->tuple.n = n;
  s->tuple.fields = copy_array(a, fields, n, sizeof(*fields));
  return (n > 0 && !s->tuple.fields) ? NULL : s;
}

const tj_sinfo_t *tj_sinfo_func(tj_arena_t *a, int n_params, const tj_sinfo_t *const *params,
                                const tj_sinfo_t *ret, bool pure) {
  tj_sinfo_t *s = new_sinfo(a, TJ_SINFO_FUNC);
  if (!s) return NULL;
  s->func.n_params = n_params;
  s->func.params = copy_array(a, params, n_params, sizeof(*params));
  s->func.ret = ret;
  s->func.pure = pure;
  return (n_params > 0 && !s->func.params) ? NULL : s;
}

static tj_rx_expr_t *new_expr(tj_arena_t *a, tj_rx_expr_kind_t kind) {
  tj_rx_expr_t *e = TJ_ARENA_NEW(a, tj_rx_expr_t);
  if (e) e->kind = kind;
  return e;
}

static const tj_rx_expr_t *named(tj_arena_t *a, tj_rx_expr_kind_t kind, const char *name, const tj_sinfo_t *sinfo) {
  tj_rx_expr_t *e = new_expr(a, kind);
  if (!e) return NULL;
  e->var.name = tj_arena_strdup(a, name);
  e->sinfo = sinfo;
  return e->var.name ? e : NULL;
}

const tj_rx_expr_t *tj_rx_var(tj_arena_t *a, const char *name, const tj_sinfo_t *sinfo) {
  return named(a, TJ_RX_VAR, name, sinfo);
}

const tj_rx_expr_t *tj_rx_dataflow_var(tj_arena_t *a, const char *name, const tj_sinfo_t *sinfo) {
  return named(a, TJ_RX_DATAFLOW_VAR, name, sinfo);
}

const tj_rx_expr_t *tj_rx_global_var(tj_arena_t *a, const char *name) {
  return named(a, TJ_RX_GLOBAL_VAR, name, NULL);
}

const tj_rx_expr_t *tj_rx_op(tj_arena_t *a, const char *name) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_OP);
  if (!e) return NULL;
  e->op.name = tj_arena_strdup(a, name);
  return e->op.name ? e : NULL;
}

const tj_rx_expr_t *tj_rx_tuple(tj_arena_t *a, int n, const tj_rx_expr_t *const *fields) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_TUPLE);
  if (!e) return NULL;
  e->tuple.n = n;
  e->tuple.fields = copy_array(a, fields, n, sizeof(*fields));
  return (n > 0 && !e->tuple.fields) ? NULL : e;
}

const tj_rx_expr_t *tj_rx_get_item(tj_arena_t *a, const tj_rx_expr_t *tuple, int index) {
  if (!tuple) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_TUPLE_GET_ITEM);
  if (e) {
    e->get_item.tuple = tuple;
    e->get_item.index = index;
  }
  return e;
}

const tj_rx_expr_t *tj_rx_call(tj_arena_t *a, const tj_rx_expr_t *callee, int n_args,
                               const tj_rx_expr_t *const *args, const tj_attrs_t *attrs, int n_sinfo_args,
                               const tj_sinfo_t *const *sinfo_args) {
  if (!callee) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_CALL);
  if (!e) return NULL;
  e->call.callee = callee;
  e->call.n_args = n_args;
  e->call.args = copy_array(a, args, n_args, sizeof(*args));
  e->call.attrs = attrs;
  e->call.n_sinfo_args = n_sinfo_args;
  e->call.sinfo_args = copy_array(a, sinfo_args, n_sinfo_args, sizeof(*sinfo_args));
  if ((n_args > 0 && !e->call.args) || (n_sinfo_args > 0 && !e->call.sinfo_args)) return NULL;
  return e;
}

const tj_rx_expr_t *tj_rx_shape_expr(tj_arena_t *a, int n, const tj_tir_expr_t *const *values) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_SHAPE_EXPR);
  if (!e) return NULL;
  e->shape_expr.n = n;
  e->shape_expr.values = copy_array(a, values, n, sizeof(*values));
  return (n > 0 && !e->shape_expr.values) ? NULL : e;
}

const tj_rx_expr_t *tj_rx_prim_value(tj_arena_t *a, const tj_tir_expr_t *value) {
  if (!value) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_PRIM_VALUE);
  if (e) e->prim_value.value = value;
  return e;
}

const tj_rx_expr_t *tj_rx_string_imm(tj_arena_t *a, const char *s) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_STRING_IMM);
  if (!e) return NULL;
  e->string_imm = tj_arena_strdup(a, s);
  return e->string_imm ? e : NULL;
}

const tj_rx_expr_t *tj_rx_dtype_imm(tj_arena_t *a, tj_dtype_t dtype) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_DATA_TYPE_IMM);
  if (e) e->dtype_imm = dtype;
  return e;
}

const tj_rx_expr_t *tj_rx_extern_func(tj_arena_t *a, const char *name) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_EXTERN_FUNC);
  if (!e) return NULL;
  e->string_imm = tj_arena_strdup(a, name);
  return e->string_imm ? e : NULL;
}

const tj_rx_expr_t *tj_rx_constant(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *shape,
                                   const void *data, size_t nbytes) {
  tj_rx_expr_t *e = new_expr(a, TJ_RX_CONSTANT);
  if (!e) return NULL;
  e->constant.dtype = dtype;
  e->constant.ndim = ndim;
  e->constant.shape = copy_array(a, shape, ndim, sizeof(*shape));
  e->constant.data = data && nbytes ? tj_arena_memdup(a, data, nbytes) : NULL;
  e->constant.nbytes = nbytes;
  if ((ndim > 0 && !e->constant.shape) || (data && nbytes && !e->constant.data)) return NULL;
  return e;
}

/* FoldConstant's results: copying each into the arena was 14% of BERT's cached start
 * (perf), and the copy's fresh pages doubled the faults of the folded weights. */
const tj_rx_expr_t *tj_rx_constant_take(tj_arena_t *a, tj_dtype_t dtype, int ndim, const int64_t *shape, void *data,
                                        size_t nbytes) {
  tj_rx_expr_t *e = (tj_rx_expr_t *)tj_rx_constant(a, dtype, ndim, shape, NULL, 0);
  if (!e || !nbytes || !tj_arena_adopt(a, data)) {
    tj_free(data);
    return nbytes ? NULL : e; /* no bytes: no data, as tj_rx_constant */
  }
  e->constant.data = data;
  e->constant.nbytes = nbytes;
  return e;
}

const tj_rx_expr_t *tj_rx_if(tj_arena_t *a, const tj_rx_expr_t *cond, const tj_rx_expr_t *then_branch,
                             const tj_rx_expr_t *else_branch) {
  if (!cond || !then_branch || !else_branch) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_IF);
  if (e) {
    e->if_.cond = cond;
    e->if_.then_branch = then_branch;
    e->if_.else_branch = else_branch;
  }
  return e;
}

const tj_rx_expr_t *tj_rx_seq(tj_arena_t *a, int n_blocks, const tj_rx_block_t *blocks, const tj_rx_expr_t *body) {
  if (!body) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_SEQ);
  if (!e) return NULL;
  e->seq.n_blocks = n_blocks;
  e->seq.blocks = copy_array(a, blocks, n_blocks, sizeof(*blocks));
  e->seq.body = body;
  e->sinfo = body->sinfo;
  return (n_blocks > 0 && !e->seq.blocks) ? NULL : e;
}

const tj_rx_expr_t *tj_rx_function_expr(tj_arena_t *a, const tj_rx_func_t *f) {
  if (!f) return NULL;
  tj_rx_expr_t *e = new_expr(a, TJ_RX_FUNCTION);
  if (e) e->function = f;
  return e;
}

tj_rx_expr_t *tj_rx_expr_copy(tj_arena_t *a, const tj_rx_expr_t *e) {
  tj_rx_expr_t *c = TJ_ARENA_NEW(a, tj_rx_expr_t);
  if (c) *c = *e;
  return c;
}

const tj_rx_expr_t *tj_rx_with_sinfo(tj_arena_t *a, const tj_rx_expr_t *e, const tj_sinfo_t *sinfo) {
  if (!e) return NULL;
  if (e->sinfo == sinfo) return e;
  tj_rx_expr_t *c = tj_rx_expr_copy(a, e);
  if (c) c->sinfo = sinfo;
  return c;
}

bool tj_rx_is_op_call(const tj_rx_expr_t *e, const char *op_name) {
  return e && e->kind == TJ_RX_CALL && e->call.callee->kind == TJ_RX_OP &&
         strcmp(e->call.callee->op.name, op_name) == 0;
}

static bool view_of_dps_call(const tj_rx_expr_t *e, tj_call_tir_view_t *out_view) {
  if (e->call.n_args < 2 || e->call.n_sinfo_args != 1) return false;
  const tj_rx_expr_t *tuple = e->call.args[1];
  if (tuple->kind != TJ_RX_TUPLE) return false;
  out_view->callee = e->call.args[0];
  out_view->n_args = tuple->tuple.n;
  out_view->args = tuple->tuple.fields;
  out_view->out_sinfo = e->call.sinfo_args[0];
  out_view->tir_vars = e->call.n_args > 2 ? e->call.args[2] : NULL;
  out_view->inplace_indices = NULL;
  return true;
}

bool tj_rx_as_call_tir(const tj_rx_expr_t *e, tj_call_tir_view_t *out_view) {
  return tj_rx_is_op_call(e, "relax.call_tir") && view_of_dps_call(e, out_view);
}

bool tj_rx_as_call_tir_or_inplace(const tj_rx_expr_t *e, tj_call_tir_view_t *out_view) {
  if (tj_rx_as_call_tir(e, out_view)) return true;
  if (!tj_rx_is_op_call(e, "relax.call_tir_inplace") || !view_of_dps_call(e, out_view)) return false;
  const tj_attr_value_t *idx = tj_attrs_get(e->call.attrs, "inplace_indices");
  if (!idx || idx->kind != TJ_ATTR_LIST) return false;
  out_view->inplace_indices = idx;
  return true;
}

const tj_rx_expr_t *tj_rx_make_call_tir(tj_arena_t *a, const tj_rx_expr_t *callee, int n_args,
                                        const tj_rx_expr_t *const *args, const tj_sinfo_t *out_sinfo,
                                        const tj_rx_expr_t *tir_vars) {
  const tj_rx_expr_t *call_args[3] = {callee, tj_rx_tuple(a, n_args, args), tir_vars};
  if (!call_args[1]) return NULL;
  const tj_rx_expr_t *call = tj_rx_call(a, tj_rx_op(a, "relax.call_tir"), tir_vars ? 3 : 2, call_args, NULL,
                                        1, &out_sinfo);
  return tj_rx_with_sinfo(a, call, out_sinfo);
}

bool tj_rx_is_var(const tj_rx_expr_t *e) { return e && (e->kind == TJ_RX_VAR || e->kind == TJ_RX_DATAFLOW_VAR); }

bool tj_sinfo_is_tensor(const tj_sinfo_t *s) { return s && s->kind == TJ_SINFO_TENSOR; }

bool tj_sinfo_static_shape(const tj_sinfo_t *s, int *out_ndim, int64_t *out_dims) {
  if (!tj_sinfo_is_tensor(s) || !s->tensor.shape || s->tensor.ndim < 0 || s->tensor.ndim > 8) return false;
  for (int i = 0; i < s->tensor.ndim; i++)
    if (!tj_tir_is_const_int(s->tensor.shape[i], &out_dims[i])) return false;
  *out_ndim = s->tensor.ndim;
  return true;
}

const char *tj_rx_expr_kind_name(tj_rx_expr_kind_t kind) {
  static const char *names[TJ_RX_EXPR_KIND_COUNT] = {
      "Var", "DataflowVar", "GlobalVar", "Constant", "Tuple", "TupleGetItem", "Call", "Op",
      "ShapeExpr", "PrimValue", "StringImm", "DataTypeImm", "ExternFunc", "If", "SeqExpr", "Function"};
  return (kind >= 0 && kind < TJ_RX_EXPR_KIND_COUNT) ? names[kind] : "?";
}

int tj_rx_const_int_values(const tj_rx_expr_t *e, int64_t *out, int max) {
  if (e->kind == TJ_RX_SHAPE_EXPR) {
    if (e->shape_expr.n > max) return -1;
    for (int i = 0; i < e->shape_expr.n; i++)
      if (!tj_tir_is_const_int(e->shape_expr.values[i], &out[i])) return -1;
    return e->shape_expr.n;
  }
  if (e->kind == TJ_RX_TUPLE) {
    if (e->tuple.n > max) return -1;
    for (int i = 0; i < e->tuple.n; i++) {
      const tj_rx_expr_t *f = e->tuple.fields[i];
      if (f->kind != TJ_RX_PRIM_VALUE || !tj_tir_is_const_int(f->prim_value.value, &out[i])) return -1;
    }
    return e->tuple.n;
  }
  return -1;
}
