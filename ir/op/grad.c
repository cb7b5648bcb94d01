/* Gradient operators (TVM's src/relax/op/tensor/grad.cc): relax.grad.nll_loss_backward,
 * relax.grad.max_pool2d_backward, relax.grad.avg_pool2d_backward and
 * relax.grad.take_backward. Each returns a gradient shaped like one of its inputs, and
 * TVM's inference is exactly that: the struct info of that input (predictions, data,
 * x), with no check of the other arguments. tvmjit does the same, so that the same
 * modules parse; the legalizers (transforms/legalize/grad.c) decline what they cannot
 * lower. None has a mixed-precision policy in TVM (kNever). */
#include "ir/op/common.h"

/* TVM's InferStructInfo<Op>Backward: GetStructInfo(call->args[i]). */
static tj_status_t *same_as_arg(const tj_rx_expr_t *call, int i, const char *what, const tj_sinfo_t **out) {
  const char *op = call->call.callee->op.name;
  if (call->call.n_args <= i || !call->call.args[i]->sinfo)
    return tj_op_error("%s: the %s argument has no struct info", op, what);
  *out = call->call.args[i]->sinfo;
  return NULL;
}

/* ---------------- nll_loss_backward ---------------- */

static const char *const nll_backward_attrs[] = {"reduction", "ignore_index", NULL};

static tj_status_t *normalize_nll_backward(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_nll_attrs("nll_loss_backward", arena, given, out);
}

static tj_status_t *infer_like_predictions(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call,
                                           const tj_sinfo_t **out) {
  (void)ctx;
  return same_as_arg(call, 1, "predictions", out);
}

static const char *const nll_backward_args[] = {"output_grad", "predictions", "targets", "weights"};

const tj_op_def_t tj_op_grad_nll_loss_backward = {
    .name = "relax.grad.nll_loss_backward", .script_name = "R.grad.nll_loss_backward", .min_args = 3,
    .max_args = 4, .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_nll_backward,
    .infer = infer_like_predictions, .arg_names = nll_backward_args, .positional_attrs = nll_backward_attrs,
    .dtypes = "float, int targets",
    .notes = "gradient of nll_loss w.r.t. predictions; ignore_index is not masked out (as TVM); class indices are "
             "not bounds-checked (out-of-range reads are clamped)",
};

/* ---------------- max_pool2d_backward / avg_pool2d_backward ---------------- */

/* The Python constructor's positional order (padding before dilation, unlike the
 * attrs' print order). */
static const char *const pool_backward_attrs[] = {"pool_size", "strides", "padding", "dilation", "ceil_mode",
                                                  "count_include_pad", "layout", "out_layout", NULL};

static tj_status_t *normalize_max_pool_backward(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_pool2d_attrs("max_pool2d_backward", arena, given, out);
}

static tj_status_t *normalize_avg_pool_backward(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_pool2d_attrs("avg_pool2d_backward", arena, given, out);
}

static tj_status_t *infer_like_arg1(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  return same_as_arg(call, 1, "second", out);
}

static const char *const pool_backward_args[] = {"output_grad", "data"};

const tj_op_def_t tj_op_grad_max_pool2d_backward = {
    .name = "relax.grad.max_pool2d_backward", .script_name = "R.grad.max_pool2d_backward", .min_args = 2,
    .max_args = 2, .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_max_pool_backward,
    .infer = infer_like_arg1, .arg_names = pool_backward_args, .positional_attrs = pool_backward_attrs,
    .dtypes = "float",
    .notes = "not legalized: TVM's TIR reads its argmax buffer out of bounds (see transforms/legalize/grad.c)",
};

const tj_op_def_t tj_op_grad_avg_pool2d_backward = {
    .name = "relax.grad.avg_pool2d_backward", .script_name = "R.grad.avg_pool2d_backward", .min_args = 2,
    .max_args = 2, .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_avg_pool_backward,
    .infer = infer_like_arg1, .arg_names = pool_backward_args, .positional_attrs = pool_backward_attrs,
    .dtypes = "float", .notes = "dilation other than 1 is not legalized (as TVM)",
};

/* ---------------- take_backward ---------------- */

static const char *const take_backward_attrs[] = {"axis", NULL};

/* TakeAttrs: axis, an optional int (None: indices into the flattened x). */
static tj_status_t *normalize_take_backward(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("take_backward", given, take_backward_attrs));
  tj_attr_builder_t b = {0};
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, "take_backward", given, "axis", false, TJ_I32));
  return tj_attr_builder_finish(arena, &b, out);
}

static const char *const take_backward_args[] = {"output_grad", "x", "indices"};

const tj_op_def_t tj_op_grad_take_backward = {
    .name = "relax.grad.take_backward", .script_name = "R.grad.take_backward", .min_args = 3, .max_args = 3,
    .mp_policy = TJ_MP_NEVER, .normalize_attrs = normalize_take_backward, .infer = infer_like_arg1,
    .arg_names = take_backward_args, .positional_attrs = take_backward_attrs, .dtypes = "float, int indices",
    .notes = "scatter-adds output_grad into zeros shaped like x; out-of-range indices are skipped",
};
