/* Losses (TVM's src/relax/op/nn/nn.cc): relax.nn.cross_entropy_with_logits and
 * relax.nn.nll_loss. Neither has a mixed-precision policy in TVM (ToMixedPrecision
 * treats them as kNever). */
#include <string.h>

#include "ir/op/common.h"

/* A known 0-d shape (NULL would mean "unknown"). */
static const tj_tir_expr_t *const scalar_shape[1] = {NULL};

/* ---------------- cross_entropy_with_logits ---------------- */

/* A 0-d tensor of the common dtype; predictions and labels must have the same ndim
 * and no provably different dim. */
static tj_status_t *infer_cross_entropy(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const char *op = "cross_entropy_with_logits";
  const tj_sinfo_t *x = NULL, *y = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "predictions", &x));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 1, "labels", &y));
  tj_dtype_t dtype;
  TJ_RETURN_IF_ERROR(tj_op_common_dtype(op, x->tensor.dtype, y->tensor.dtype, &dtype));
  if (x->tensor.ndim >= 0 && y->tensor.ndim >= 0 && x->tensor.ndim != y->tensor.ndim)
    return tj_op_error("%s: predictions and labels must have the same ndim, got %d and %d", op, x->tensor.ndim,
                       y->tensor.ndim);
  if (x->tensor.shape && y->tensor.shape)
    for (int i = 0; i < x->tensor.ndim; i++)
      if (tj_op_compare_dims(x->tensor.shape[i], y->tensor.shape[i]) == TJ_DIM_DIFFERENT) {
        tj_strbuf_t sb;
        tj_strbuf_init(&sb);
        tj_strbuf_printf(&sb, "%s: predictions and labels must have the same shape, but dim %d is ", op, i);
        tj_op_format_dim(&sb, x->tensor.shape[i]);
        tj_strbuf_append(&sb, " in predictions and ");
        tj_op_format_dim(&sb, y->tensor.shape[i]);
        tj_strbuf_append(&sb, " in labels");
        tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "cross_entropy_with_logits: shape mismatch");
        tj_strbuf_free(&sb);
        return s;
      }
  *out = tj_op_tensor_sinfo(ctx->arena, dtype, 0, scalar_shape, tj_op_vdevice(x, y));
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static const char *const cross_entropy_args[] = {"predictions", "labels"};

const tj_op_def_t tj_op_cross_entropy_with_logits = {
    .name = "relax.nn.cross_entropy_with_logits", .script_name = "R.nn.cross_entropy_with_logits",
    .min_args = 2, .max_args = 2, .mp_policy = TJ_MP_NEVER, .infer = infer_cross_entropy,
    .arg_names = cross_entropy_args, .dtypes = "float",
    .notes = "-sum(predictions * labels) / N: expects log-probabilities (no softmax inside)",
};

/* ---------------- nll_loss ---------------- */

/* Canonical attrs: reduction STR ("mean"; "none", "sum" or "mean"), ignore_index int
 * (-100). */
static const char *const nll_attrs[] = {"reduction", "ignore_index", NULL};

tj_status_t *tj_op_normalize_nll_attrs(const char *op, tj_arena_t *arena, const tj_attrs_t *given,
                                       const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, nll_attrs));
  const char *reduction;
  int64_t ignore_index;
  TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "reduction", "mean", &reduction));
  if (strcmp(reduction, "none") != 0 && strcmp(reduction, "sum") != 0 && strcmp(reduction, "mean") != 0)
    return tj_op_error("%s: 'reduction' must be \"none\", \"mean\" or \"sum\", got \"%s\"", op, reduction);
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "ignore_index", -100, &ignore_index));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "reduction", tj_attr_str(tj_arena_strdup(arena, reduction)));
  tj_attr_builder_add(&b, "ignore_index", tj_attr_int(ignore_index));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *normalize_nll(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  return tj_op_normalize_nll_attrs("nll_loss", arena, given, out);
}

static tj_status_t *dim_mismatch(const char *what, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "nll_loss: %s differ: ", what);
  tj_op_format_dim(&sb, a);
  tj_strbuf_append(&sb, " vs ");
  tj_op_format_dim(&sb, b);
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "nll_loss: shape mismatch");
  tj_strbuf_free(&sb);
  return s;
}

/* TVM's checks on the ndims: predictions >= 1-D, the K extra dims of predictions
 * (ndim - 2) and targets (ndim - 1) agree, weights 1-D. */
static tj_status_t *nll_check_ndims(const tj_sinfo_t *p, const tj_sinfo_t *t, const tj_sinfo_t *w) {
  int k = -1;
  if (p->tensor.ndim >= 0) {
    if (p->tensor.ndim < 1) return tj_op_error("nll_loss: predictions must be at least 1-D, got 0-D");
    k = p->tensor.ndim <= 2 ? 0 : p->tensor.ndim - 2;
  }
  if (t->tensor.ndim >= 0) {
    int kt = t->tensor.ndim <= 1 ? 0 : t->tensor.ndim - 1;
    if (k >= 0 && k != kt)
      return tj_op_error("nll_loss: predictions (%d-D) and targets (%d-D) disagree on the extra dims: %d vs %d",
                         p->tensor.ndim, t->tensor.ndim, k, kt);
  }
  if (w && w->tensor.ndim >= 0 && w->tensor.ndim != 1)
    return tj_op_error("nll_loss: weights must be 1-D, got %d-D", w->tensor.ndim);
  return NULL;
}

/* Shapes: predictions (C,) with targets (), or (N, C, d1..dk) with targets (N, d1..dk);
 * weights (C,). */
static tj_status_t *nll_check_shapes(const tj_sinfo_t *p, const tj_sinfo_t *t, const tj_sinfo_t *w) {
  const tj_tir_expr_t *n = NULL, *c = NULL;
  if (p->tensor.shape) {
    if (p->tensor.ndim == 1) c = p->tensor.shape[0];
    else n = p->tensor.shape[0], c = p->tensor.shape[1];
  }
  if (t->tensor.shape && p->tensor.shape) {
    if (t->tensor.ndim == 0 && n) return tj_op_error("nll_loss: predictions are (N, C, ...) but targets are 0-D");
    if (t->tensor.ndim > 0 && !n) return tj_op_error("nll_loss: predictions are (C,) but targets are not 0-D");
    if (n && tj_op_compare_dims(n, t->tensor.shape[0]) == TJ_DIM_DIFFERENT)
      return dim_mismatch("the batch sizes of predictions and targets", n, t->tensor.shape[0]);
    for (int i = 1; n && i < t->tensor.ndim; i++)
      if (tj_op_compare_dims(p->tensor.shape[i + 1], t->tensor.shape[i]) == TJ_DIM_DIFFERENT)
        return dim_mismatch("the extra dims of predictions and targets", p->tensor.shape[i + 1], t->tensor.shape[i]);
  }
  if (w && w->tensor.shape && c && tj_op_compare_dims(c, w->tensor.shape[0]) == TJ_DIM_DIFFERENT)
    return dim_mismatch("the classes of predictions and weights", c, w->tensor.shape[0]);
  return NULL;
}

static tj_status_t *infer_nll(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const char *op = "nll_loss";
  const tj_sinfo_t *p = NULL, *t = NULL, *w = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 0, "predictions", &p));
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 1, "targets", &t));
  if (call->call.n_args == 3) TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, 2, "weights", &w));
  tj_dtype_t dtype = p->tensor.dtype;
  if (w) TJ_RETURN_IF_ERROR(tj_op_common_dtype(op, p->tensor.dtype, w->tensor.dtype, &dtype));
  if (!tj_dtype_is_void(t->tensor.dtype) && !tj_dtype_is_int(t->tensor.dtype)) {
    char buf[32];
    return tj_op_error("nll_loss: targets must have an int or uint dtype, got %s", tj_dtype_str(t->tensor.dtype, buf));
  }
  TJ_RETURN_IF_ERROR(nll_check_ndims(p, t, w));
  TJ_RETURN_IF_ERROR(nll_check_shapes(p, t, w));
  const char *vdev = w ? tj_op_vdevice(p, w) : p->tensor.vdevice;
  const char *reduction = tj_attrs_get_str(call->call.attrs, "reduction", "mean");
  if (strcmp(reduction, "none") != 0) {
    *out = tj_op_tensor_sinfo(ctx->arena, dtype, 0, scalar_shape, vdev);
  } else if (p->tensor.shape) {
    /* (N, d1, ..., dk), or () for (C,) predictions */
    const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
    int nd = p->tensor.ndim == 1 ? 0 : p->tensor.ndim - 1;
    for (int i = 0; i < nd; i++) shape[i] = p->tensor.shape[i == 0 ? 0 : i + 1];
    *out = tj_op_tensor_sinfo(ctx->arena, dtype, nd, shape, vdev);
  } else if (t->tensor.shape) {
    *out = tj_op_tensor_sinfo(ctx->arena, dtype, t->tensor.ndim, t->tensor.shape, vdev);
  } else {
    int nd = p->tensor.ndim >= 0 ? (p->tensor.ndim == 1 ? 0 : p->tensor.ndim - 1) : t->tensor.ndim;
    *out = tj_op_tensor_sinfo(ctx->arena, dtype, nd, NULL, vdev);
  }
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static const char *const nll_args[] = {"predictions", "targets", "weights"};

const tj_op_def_t tj_op_nll_loss = {
    .name = "relax.nn.nll_loss",
    .script_name = "R.nn.nll_loss",
    .min_args = 2,
    .max_args = 3,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_nll,
    .infer = infer_nll,
    .arg_names = nll_args,
    .positional_attrs = nll_attrs,
    .dtypes = "float, int targets",
    .notes =
        "mean = sum(loss) / sum(weights of the kept targets): 0/0 when every target is ignored; class "
        "indices are not bounds-checked (as TVM)",
    /* TVM's test_nll_loss annotates a call whose weights have 4 classes for 3-class
     * predictions; the TIR indexes weights only by class (data: clamped when lowered)
     * and the legalization checks that predictions and targets agree. */
};
