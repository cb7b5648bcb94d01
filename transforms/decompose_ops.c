/* DecomposeOpsForInference (TVM's src/relax/transform/decompose_ops.cc): every
 * R.nn.batch_norm becomes its inference form in plain Relax ops, before LegalizeOps
 * (which legalizes batch_norm in its training form, with batch statistics):
 *
 *   out = (x - expand(moving_mean)) / sqrt(expand(moving_var) + eps)
 *   out = out * expand(gamma)   when scale;   out = out + expand(beta)   when center
 *   batch_norm(...)  ->  (out, moving_mean, moving_var)
 *
 * expand(p) is R.expand_dims(p, axis=[every axis but `axis`]), and eps an R.const of the
 * data's dtype, as TVM builds them; the intermediate calls are bound to fresh vars lv,
 * lv1, ... as TVM's BlockBuilder normalises them.
 *
 * Every R.tensor_to_shape becomes vm.builtin.tensor_to_shape, a match_cast to fresh
 * shape vars and an R.shape of those vars (see decompose_tensor_to_shape). */
#include <string.h>

#include "ir/op.h"
#include "ir/op/common.h"
#include "ir/rx_mutator.h"
#include "transforms/tensor_to_shape.h"
#include "transforms/transforms.h"

/* A call of op `name`, bound to a fresh var (NULL on error, recorded in m). */
static const tj_rx_expr_t *emit_op(tj_rx_mutator_t *m, const char *name, int n, const tj_rx_expr_t *const *args,
                                   const tj_attrs_t *attrs) {
  const tj_op_def_t *def = tj_op_lookup(name);
  if (!def) return tj_rx_mutator_fail(m, tj_status_new(TJ_ERR_INTERNAL, "DecomposeOpsForInference: %s is not registered", name));
  const tj_rx_expr_t *call = NULL;
  tj_status_t *s = tj_op_make_call(m->infer, def, n, args, attrs, &call);
  if (s) return tj_rx_mutator_fail(m, tj_status_annotate(s, "DecomposeOpsForInference"));
  return tj_rx_emit_fresh(m, call);
}

static const tj_rx_expr_t *emit2(tj_rx_mutator_t *m, const char *name, const tj_rx_expr_t *a, const tj_rx_expr_t *b) {
  const tj_rx_expr_t *args[2] = {a, b};
  return emit_op(m, name, 2, args, NULL);
}

/* p (1-D, along `axis`) with unit axes inserted so that it broadcasts against data of
 * rank ndim (TVM's ExpandToMatchInput). */
static const tj_rx_expr_t *expand_to_input(tj_rx_mutator_t *m, const tj_rx_expr_t *p, int ndim, int axis) {
  int64_t axes[TJ_OP_MAX_NDIM];
  int n = 0;
  for (int i = 0; i < ndim; i++)
    if (i != axis) axes[n++] = i;
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_op_int_list(m->arena, n, axes, TJ_I64));
  const tj_attrs_t *attrs = NULL;
  tj_status_t *s = tj_attr_builder_finish(m->arena, &b, &attrs);
  if (s) return tj_rx_mutator_fail(m, s);
  return emit_op(m, "relax.expand_dims", 1, &p, attrs);
}

/* A 0-d constant of dtype (float16, float32 or float64) holding v. */
static const tj_rx_expr_t *scalar_const(tj_rx_mutator_t *m, double v, tj_dtype_t dtype) {
  unsigned char bytes[8];
  size_t n = (size_t)dtype.bits / 8;
  if (dtype.bits == 16) {
    uint16_t h = tj_float_to_half((float)v);
    memcpy(bytes, &h, 2);
  } else if (dtype.bits == 32) {
    float f = (float)v;
    memcpy(bytes, &f, 4);
  } else {
    memcpy(bytes, &v, 8);
  }
  const tj_rx_expr_t *c = tj_rx_constant(m->arena, dtype, 0, NULL, bytes, n);
  return c ? tj_rx_with_inferred(m, c) : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *decompose_batch_norm(tj_rx_mutator_t *m, const tj_rx_expr_t *call) {
  const tj_rx_expr_t *const *a = call->call.args;
  const tj_sinfo_t *x = a[0]->sinfo;
  if (!tj_sinfo_is_tensor(x) || x->tensor.ndim < 0 || !tj_dtype_is_floating(x->tensor.dtype))
    return call; /* inference has rejected these already; leave anything unknown alone */
  int ndim = x->tensor.ndim;
  int axis = (int)tj_attrs_get_int(call->call.attrs, "axis", 1);
  if (axis < 0) axis += ndim;
  const tj_attr_value_t *eps = tj_attrs_get(call->call.attrs, "epsilon");
  const tj_rx_expr_t *epsilon = scalar_const(m, eps && eps->kind == TJ_ATTR_FLOAT ? eps->f : 1e-5, x->tensor.dtype);
  if (!epsilon) return NULL;
  /* Emitted in the order TVM's BlockBuilder normalises the nested expression
   * divide(subtract(x, mean), sqrt(add(var, eps))): post-order, left to right. */
  const tj_rx_expr_t *mean = expand_to_input(m, a[3], ndim, axis);
  const tj_rx_expr_t *centered = mean ? emit2(m, "relax.subtract", a[0], mean) : NULL;
  const tj_rx_expr_t *var = centered ? expand_to_input(m, a[4], ndim, axis) : NULL;
  const tj_rx_expr_t *sqrt_arg = var ? emit2(m, "relax.add", var, epsilon) : NULL;
  const tj_rx_expr_t *sqrt_var = sqrt_arg ? emit_op(m, "relax.sqrt", 1, &sqrt_arg, NULL) : NULL;
  const tj_rx_expr_t *out = sqrt_var ? emit2(m, "relax.divide", centered, sqrt_var) : NULL;
  if (out && tj_attrs_get_int(call->call.attrs, "scale", 1)) {
    const tj_rx_expr_t *gamma = expand_to_input(m, a[1], ndim, axis);
    out = gamma ? emit2(m, "relax.multiply", out, gamma) : NULL;
  }
  if (out && tj_attrs_get_int(call->call.attrs, "center", 1)) {
    const tj_rx_expr_t *beta = expand_to_input(m, a[2], ndim, axis);
    out = beta ? emit2(m, "relax.add", out, beta) : NULL;
  }
  if (!out) return NULL;
  const tj_rx_expr_t *fields[3] = {out, a[3], a[4]};
  const tj_rx_expr_t *tuple = tj_rx_tuple(m->arena, 3, fields);
  return tuple ? tj_rx_with_inferred(m, tuple) : tj_rx_mutator_oom(m);
}

/* R.tensor_to_shape(t) becomes vm.builtin.tensor_to_shape with the call's struct info,
 * matched to fresh vars x, x, ... and the call is replaced by R.shape([x, x, ...]): reshape
 * and the like need the shape as expressions (TVM's TensorToShape). */
static const tj_rx_expr_t *decompose_tensor_to_shape(tj_rx_mutator_t *m, const tj_rx_expr_t *call) {
  const tj_sinfo_t *s = call->sinfo;
  if (!s || s->kind != TJ_SINFO_SHAPE || s->shape.ndim < 0) return call;
  const tj_tir_expr_t *const *vars = NULL;
  if (!tj_emit_tensor_to_shape(m, call->call.args[0], s, "x", &vars)) return NULL;
  const tj_rx_expr_t *shape = tj_rx_shape_expr(m->arena, s->shape.ndim, vars);
  return shape ? tj_rx_with_inferred(m, shape) : tj_rx_mutator_oom(m);
}

static const tj_rx_expr_t *decompose_post(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  if (e->kind != TJ_RX_CALL || e->call.callee->kind != TJ_RX_OP) return e;
  if (strcmp(e->call.callee->op.name, "relax.nn.batch_norm") == 0) return decompose_batch_norm(m, e);
  if (strcmp(e->call.callee->op.name, "relax.tensor_to_shape") == 0) return decompose_tensor_to_shape(m, e);
  return e;
}

typedef struct decompose_state {
  const tj_module_t *module;
  tj_arena_t *arena;
} decompose_state_t;

static const tj_sinfo_t *module_func_sinfo(void *ctx, const char *name) {
  decompose_state_t *st = ctx;
  const tj_rx_func_t *f = tj_module_find_relax(st->module, name);
  return f ? tj_rx_func_sinfo(st->arena, f) : NULL;
}

static void decompose_setup(tj_rx_mutator_t *rw, void *ctx) {
  rw->infer = ctx;
  rw->post = decompose_post;
}

tj_status_t *tj_decompose_ops_for_inference(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  decompose_state_t st = {in, ctx->arena};
  tj_infer_ctx_t ictx = {.arena = ctx->arena, .global_sinfo = module_func_sinfo, .global_ctx = &st};
  return tj_rx_mutate_module(ctx->arena, "DecomposeOpsForInference", in, decompose_setup, &ictx, out);
}
