/* The call operators (TVM's src/relax/op/op.cc): relax.call_tir, call_tir_inplace,
 * call_dps_packed, call_pure_packed, print and assert_op. None has a legalization:
 * they call code outside the Relax graph (a PrimFunc, a packed function) or have an
 * effect, so every pass leaves them as they are. */
#include <limits.h>
#include <string.h>

#include "ir/op/common.h"
#include "ir/sinfo.h"

/* Variadic ops take any number of arguments. */
#define VARIADIC INT_MAX

/* ---------------- call_tir, call_dps_packed ---------------- */

static tj_status_t *infer_call_tir(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  if (call->call.n_sinfo_args != 1 || !call->call.sinfo_args[0])
    return tj_op_error("call_tir: needs exactly one out_sinfo (a tensor or a list of tensors)");
  *out = call->call.sinfo_args[0];
  return NULL;
}

static const char *const call_tir_args[] = {"gvar", "args", "tir_vars"};

/* The callee is opaque to the pass: it must see exactly the dtypes it was given. */
const tj_op_def_t tj_op_call_tir = {
    .name = "relax.call_tir", .script_name = "R.call_tir", .min_args = 2, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_tir, .arg_names = call_tir_args,
};

static const char *const call_dps_packed_args[] = {"func", "args"};

const tj_op_def_t tj_op_call_dps_packed = {
    .name = "relax.call_dps_packed", .script_name = "R.call_dps_packed", .min_args = 2, .max_args = 2,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_tir, .arg_names = call_dps_packed_args,
};

/* call_tir whose attrs name the TE gradient function (te_grad_name, te_grad_kwargs)
 * that the Gradient pass uses; it runs as a call_tir. */
const tj_op_def_t tj_op_call_tir_with_grad = {
    .name = "relax.call_tir_with_grad", .script_name = "R.call_tir_with_grad", .min_args = 2, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_tir, .arg_names = call_tir_args,
};

/* ---------------- call_tir_inplace ---------------- */

static const tj_sinfo_t *output_sinfo(const tj_sinfo_t *out, int i) {
  return out->kind == TJ_SINFO_TUPLE ? out->tuple.fields[i] : out;
}

/* Output i aliases input `input`: TVM requires the same dtype and a provably equal shape. */
static tj_status_t *check_inplace_pair(const tj_sinfo_t *o, const tj_rx_expr_t *arg, int i, int input) {
  if (!o || o->kind != TJ_SINFO_TENSOR || !o->tensor.shape || o->tensor.dtype.code == TJ_DT_VOID)
    return tj_op_error("call_tir_inplace: output %d must be a tensor with a known shape and dtype to be computed "
                       "in place", i);
  const tj_sinfo_t *s = arg ? arg->sinfo : NULL;
  bool same = s && s->kind == TJ_SINFO_TENSOR && s->tensor.shape && tj_dtype_eq(s->tensor.dtype, o->tensor.dtype) &&
              s->tensor.ndim == o->tensor.ndim;
  for (int d = 0; same && d < o->tensor.ndim; d++)
    same = tj_op_compare_dims(s->tensor.shape[d], o->tensor.shape[d]) == TJ_DIM_EQUAL;
  if (same) return NULL;
  tj_strbuf_t a, b;
  tj_strbuf_init(&a);
  tj_strbuf_init(&b);
  tj_sinfo_format_short(&a, o);
  tj_sinfo_format_short(&b, s);
  tj_status_t *st = tj_op_error("call_tir_inplace: output %d (%s) is computed in place of argument %d (%s); "
                                "both must have the same shape and dtype", i, a.data ? a.data : "?", input,
                                b.data ? b.data : "?");
  tj_strbuf_free(&a);
  tj_strbuf_free(&b);
  return st;
}

/* TVM's NormalizeCallTIRInPlace: one index per output, each -1 or a distinct argument
 * index, at least one not -1, and every aliased pair of the same shape and dtype. */
static tj_status_t *infer_call_tir_inplace(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                           const tj_sinfo_t **out) {
  TJ_RETURN_IF_ERROR(infer_call_tir(ctx, call, out));
  const tj_rx_expr_t *tuple = call->call.args[1];
  if (tuple->kind != TJ_RX_TUPLE) return tj_op_error("call_tir_inplace: the arguments must be a tuple");
  const tj_attr_value_t *idx = tj_attrs_get(call->call.attrs, "inplace_indices");
  if (!idx || idx->kind != TJ_ATTR_LIST) return tj_op_error("call_tir_inplace: needs inplace_indices, a list of ints");
  int n_out = (*out)->kind == TJ_SINFO_TUPLE ? (*out)->tuple.n : 1;
  if (idx->list.n != n_out)
    return tj_op_error("call_tir_inplace: %d inplace_indices for %d outputs; give one index per output",
                       idx->list.n, n_out);
  bool any = false;
  for (int i = 0; i < n_out; i++) {
    int64_t k = idx->list.items[i].i;
    if (k < -1 || k >= tuple->tuple.n)
      return tj_op_error("call_tir_inplace: in-place index %d is %lld, outside -1..%d", i, (long long)k,
                         tuple->tuple.n - 1);
    if (k == -1) continue;
    for (int j = 0; j < i; j++)
      if (idx->list.items[j].i == k)
        return tj_op_error("call_tir_inplace: argument %lld is named by two in-place indices", (long long)k);
    any = true;
    TJ_RETURN_IF_ERROR(check_inplace_pair(output_sinfo(*out, i), tuple->tuple.fields[k], i, (int)k));
  }
  if (!any) return tj_op_error("call_tir_inplace: every in-place index is -1; use R.call_tir instead");
  return NULL;
}

static const char *const call_tir_inplace_args[] = {"gvar", "args", "tir_vars"};

const tj_op_def_t tj_op_call_tir_inplace = {
    .name = "relax.call_tir_inplace", .script_name = "R.call_tir_inplace", .min_args = 2, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_tir_inplace, .arg_names = call_tir_inplace_args,
};

/* ---------------- call_pure_packed ---------------- */

/* As a call of the ExternFunc itself: the sinfo_args, one as is, several as a tuple. */
static tj_status_t *infer_call_pure_packed(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                           const tj_sinfo_t **out) {
  if (call->call.n_args < 1 || call->call.args[0]->kind != TJ_RX_EXTERN_FUNC)
    return tj_op_error("call_pure_packed: the first argument must be the packed function (an ExternFunc)");
  const tj_sinfo_t *s;
  if (call->call.n_sinfo_args == 0) s = tj_sinfo_object(ctx->arena);
  else if (call->call.n_sinfo_args == 1) s = call->call.sinfo_args[0];
  else s = tj_sinfo_tuple(ctx->arena, call->call.n_sinfo_args, call->call.sinfo_args);
  if (!s) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  *out = s;
  return NULL;
}

const tj_op_def_t tj_op_call_pure_packed = {
    .name = "relax.call_pure_packed", .script_name = "R.call_pure_packed", .min_args = 1, .max_args = VARIADIC,
    .mp_policy = TJ_MP_NEVER, .infer = infer_call_pure_packed,
};

/* ---------------- print, assert_op ---------------- */

static tj_status_t *void_result(const tj_infer_ctx_t *ctx, const tj_sinfo_t **out) {
  const tj_sinfo_t *s = tj_sinfo_tuple(ctx->arena, 0, NULL);
  if (!s) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  *out = s;
  return NULL;
}

static tj_status_t *infer_print(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  if (call->call.n_args < 1 || call->call.args[0]->kind != TJ_RX_STRING_IMM)
    return tj_op_error("print: the first argument must be the format string");
  return void_result(ctx, out);
}

const tj_op_def_t tj_op_print = {
    .name = "relax.print", .script_name = "R.print", .min_args = 1, .max_args = VARIADIC,
    .mp_policy = TJ_MP_NEVER, .infer = infer_print,
};

/* TVM's IsBoolStructInfo: a bool scalar tensor or PrimValue; unknown dtype/shape pass
 * (checked when it runs). */
static bool may_be_bool_scalar(const tj_sinfo_t *s) {
  if (!s) return false;
  if (s->kind == TJ_SINFO_PRIM) return s->prim.dtype.code == TJ_DT_BOOL;
  if (s->kind != TJ_SINFO_TENSOR) return false;
  bool dtype_ok = s->tensor.dtype.code == TJ_DT_VOID || s->tensor.dtype.code == TJ_DT_BOOL;
  return dtype_ok && (s->tensor.ndim == -1 || s->tensor.ndim == 0);
}

static tj_status_t *infer_assert_op(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  if (call->call.n_args < 2) return tj_op_error("assert_op: needs a condition and a format string");
  if (!may_be_bool_scalar(call->call.args[0]->sinfo)) {
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_sinfo_format_short(&sb, call->call.args[0]->sinfo);
    tj_status_t *st = tj_op_error("assert_op: the condition must be a bool scalar, got %s", sb.data ? sb.data : "?");
    tj_strbuf_free(&sb);
    return st;
  }
  return void_result(ctx, out);
}

const tj_op_def_t tj_op_assert_op = {
    .name = "relax.assert_op", .script_name = "R.assert_op", .min_args = 2, .max_args = VARIADIC,
    .mp_policy = TJ_MP_NEVER, .infer = infer_assert_op,
};

/* ---------------- tensor_to_shape, shape_to_tensor ---------------- */

/* TVM's ReturnTensorToShapeStructInfo: a 1-d tensor of n (a constant) values is a shape of
 * n dimensions. DecomposeOpsForInference turns it into vm.builtin.tensor_to_shape. */
static tj_status_t *infer_tensor_to_shape(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                          const tj_sinfo_t **out) {
  const tj_sinfo_t *t;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("tensor_to_shape", call, 0, "input", &t));
  int64_t n;
  if (t->tensor.ndim != 1 || !t->tensor.shape || !tj_tir_is_const_int(t->tensor.shape[0], &n) || n < 0)
    return tj_op_error("tensor_to_shape: the input must be a 1-d tensor of a constant length (the number of "
                       "dimensions of the shape)");
  if (n > INT_MAX) return tj_op_error("tensor_to_shape: %lld dimensions are too many", (long long)n);
  return (*out = tj_sinfo_shape(ctx->arena, (int)n, NULL)) ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

static const char *const shape_conversion_args[] = {"input"};

const tj_op_def_t tj_op_tensor_to_shape = {
    .name = "relax.tensor_to_shape", .script_name = "R.tensor_to_shape", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_tensor_to_shape, .arg_names = shape_conversion_args,
    .dtypes = "int64", .notes = "parses and verifies; not run",
};

/* TVM's ReturnShapeToTensorStructInfo: a shape of ndim n is an int64 tensor of shape (n,). */
static tj_status_t *infer_shape_to_tensor(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                          const tj_sinfo_t **out) {
  const tj_sinfo_t *s = call->call.args[0]->sinfo;
  if (!s || s->kind != TJ_SINFO_SHAPE) return tj_op_error("shape_to_tensor: the input must be a shape");
  const tj_tir_expr_t *n = tj_tir_int(ctx->arena, TJ_I64, s->shape.ndim);
  const tj_sinfo_t *r = n ? tj_sinfo_tensor(ctx->arena, TJ_I64, 1, &n) : NULL;
  return (*out = r) ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

const tj_op_def_t tj_op_shape_to_tensor = {
    .name = "relax.shape_to_tensor", .script_name = "R.shape_to_tensor", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_shape_to_tensor, .arg_names = shape_conversion_args,
    .notes = "parses and verifies; not run",
};

/* ---------------- shape_of ---------------- */

/* TVM's InferStructInfoShapeOf: the tensor's shape values when known, else its ndim.
 * VMShapeLower computes it; LegalizeOps leaves it. */
static tj_status_t *infer_shape_of(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *t;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("shape_of", call, 0, "input", &t));
  const tj_sinfo_t *r = tj_sinfo_shape(ctx->arena, t->tensor.ndim, t->tensor.shape);
  return (*out = r) ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
}

static const char *const shape_of_args[] = {"expr"};

const tj_op_def_t tj_op_shape_of = {
    .name = "relax.shape_of", .script_name = "R.shape_of", .min_args = 1, .max_args = 1,
    .mp_policy = TJ_MP_NEVER, .infer = infer_shape_of, .arg_names = shape_of_args,
    .notes = "parses and verifies; not run",
};
