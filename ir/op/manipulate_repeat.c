/* Copies with repeated or reversed indices (TVM's src/relax/op/tensor/manipulate.cc):
 * relax.tile, relax.repeat, relax.flip. All three are kNever (TVM registers no
 * mixed-precision policy for them) and keep the data dtype. */
#include "ir/op/common.h"

static const char *const data_args[] = {"data"};

/* dim · k, folded (k = 1 keeps the dim itself, as TVM's shape arithmetic does). */
static const tj_tir_expr_t *scaled_dim(tj_arena_t *a, const tj_tir_expr_t *dim, int64_t k) {
  if (k == 1) return dim;
  return tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_MUL, dim, tj_tir_i64(a, k)));
}

/* ---------------- tile ----------------
 * Canonical attrs: repeats [int64 ...]. The shorter of data's shape and repeats is
 * padded with leading 1s (numpy.tile); each output dim is dim · repeat. */
static const char *const tile_attrs[] = {"repeats", NULL};

static tj_status_t *normalize_tile(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("tile", given, tile_attrs));
  if (!tj_attrs_get(given, "repeats")) return tj_op_error("tile: needs 'repeats', e.g. R.tile(x, (2, 1))");
  int64_t reps[TJ_OP_MAX_NDIM];
  int n;
  TJ_RETURN_IF_ERROR(tj_op_read_ints("tile", given, "repeats", TJ_OP_MAX_NDIM, reps, &n));
  for (int i = 0; i < n; i++)
    if (reps[i] <= 0)
      return tj_op_error("tile: repeats[%d] is %lld; every repeat must be positive", i, (long long)reps[i]);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "repeats", tj_op_int_list(arena, n, reps, TJ_I64));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_tile(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("tile", call, 0, "data", &x));
  int64_t reps[TJ_OP_MAX_NDIM];
  int nr = tj_op_attr_ints(call->call.attrs, "repeats", reps, TJ_OP_MAX_NDIM);
  int nd = x->tensor.ndim;
  if (nd < 0) return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, -1, NULL, x->tensor.vdevice), NULL;
  int no = nd > nr ? nd : nr;
  if (no > TJ_OP_MAX_NDIM)
    return tj_op_error("tile: the result would have %d dims; at most %d are supported", no, TJ_OP_MAX_NDIM);
  if (!x->tensor.shape)
    return *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, no, NULL, x->tensor.vdevice), NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  for (int i = 0; i < no; i++) {
    int di = i - (no - nd), ri = i - (no - nr);
    int64_t r = ri >= 0 ? reps[ri] : 1;
    shape[i] = di >= 0 ? scaled_dim(ctx->arena, x->tensor.shape[di], r) : tj_tir_i64(ctx->arena, r);
  }
  *out = tj_op_tensor_sinfo(ctx->arena, x->tensor.dtype, no, shape, x->tensor.vdevice);
  return NULL;
}

const tj_op_def_t tj_op_tile = {
    .name = "relax.tile",
    .script_name = "R.tile",
    .min_args = 1,
    .max_args = 1,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_tile,
    .infer = infer_tile,
    .arg_names = data_args,
    .positional_attrs = tile_attrs,
};

/* ---------------- repeat ----------------
 * Canonical attrs: repeats int64, axis int64 or None. With axis None the data is
 * flattened first and the result is 1-D (numpy.repeat). */
static const char *const repeat_attrs[] = {"repeats", "axis", NULL};

static tj_status_t *normalize_repeat(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("repeat", given, repeat_attrs));
  if (!tj_attrs_get(given, "repeats")) return tj_op_error("repeat: needs 'repeats', e.g. R.repeat(x, 2, axis=0)");
  int64_t reps;
  TJ_RETURN_IF_ERROR(tj_op_read_int("repeat", given, "repeats", 1, &reps));
  if (reps <= 0) return tj_op_error("repeat: repeats is %lld; it must be positive", (long long)reps);
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "repeats", tj_attr_int(reps));
  TJ_RETURN_IF_ERROR(tj_op_add_optional_axes(arena, &b, "repeat", given, "axis", false, TJ_I32));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_repeat(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("repeat", call, 0, "data", &x));
  int64_t reps = tj_attrs_get_int(call->call.attrs, "repeats", 1);
  const tj_attr_value_t *av = tj_attrs_get(call->call.attrs, "axis");
  bool flat = !av || av->kind == TJ_ATTR_NONE;
  int nd = x->tensor.ndim;
  if (flat) {
    if (nd < 0 || !x->tensor.shape)
      return *out = tj_op_tensor_sinfo(a, x->tensor.dtype, 1, NULL, x->tensor.vdevice), NULL;
    const tj_tir_expr_t *n = tj_tir_i64(a, 1);
    for (int d = 0; d < nd; d++) n = tj_op_simplify_dim(a, tj_tir_binary(a, TJ_TIR_MUL, n, x->tensor.shape[d]));
    const tj_tir_expr_t *shape[1] = {scaled_dim(a, n, reps)};
    return *out = tj_op_tensor_sinfo(a, x->tensor.dtype, 1, shape, x->tensor.vdevice), NULL;
  }
  if (nd < 0) return *out = x, NULL;
  int axis;
  TJ_RETURN_IF_ERROR(tj_op_axis("repeat", tj_attrs_get_int(call->call.attrs, "axis", 0), nd, &axis));
  if (!x->tensor.shape) return *out = x, NULL;
  const tj_tir_expr_t *shape[TJ_OP_MAX_NDIM];
  for (int d = 0; d < nd; d++) shape[d] = d == axis ? scaled_dim(a, x->tensor.shape[d], reps) : x->tensor.shape[d];
  *out = tj_op_tensor_sinfo(a, x->tensor.dtype, nd, shape, x->tensor.vdevice);
  return NULL;
}

const tj_op_def_t tj_op_repeat = {
    .name = "relax.repeat",
    .script_name = "R.repeat",
    .min_args = 1,
    .max_args = 1,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_repeat,
    .infer = infer_repeat,
    .arg_names = data_args,
    .positional_attrs = repeat_attrs,
};

/* ---------------- flip ----------------
 * Canonical attrs: axis int64 (required). The result has data's struct info. */
static const char *const flip_attrs[] = {"axis", NULL};

static tj_status_t *normalize_flip(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names("flip", given, flip_attrs));
  if (!tj_attrs_get(given, "axis")) return tj_op_error("flip: needs 'axis', e.g. R.flip(x, axis=0)");
  int64_t axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int("flip", given, "axis", 0, &axis));
  tj_attr_builder_t b = {0};
  tj_attr_builder_add(&b, "axis", tj_attr_int(axis));
  return tj_attr_builder_finish(arena, &b, out);
}

static tj_status_t *infer_flip(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  (void)ctx;
  const tj_sinfo_t *x = NULL;
  TJ_RETURN_IF_ERROR(tj_op_tensor_arg("flip", call, 0, "data", &x));
  int axis;
  if (x->tensor.ndim >= 0)
    TJ_RETURN_IF_ERROR(tj_op_axis("flip", tj_attrs_get_int(call->call.attrs, "axis", 0), x->tensor.ndim, &axis));
  *out = x;
  return NULL;
}

const tj_op_def_t tj_op_flip = {
    .name = "relax.flip",
    .script_name = "R.flip",
    .min_args = 1,
    .max_args = 1,
    .mp_policy = TJ_MP_NEVER,
    .normalize_attrs = normalize_flip,
    .infer = infer_flip,
    .arg_names = data_args,
    .positional_attrs = flip_attrs,
};
