/* Attention (TVM's src/relax/op/nn/attention.cc): relax.nn.attention. Inputs are laid
 * out (batch, sequence, heads, head dim), the optional bias (batch, heads, queries,
 * keys). TVM registers the 4-argument form as a second op, relax.nn.attention_bias,
 * with the same attrs and inference; tvmjit keeps one op with an optional fourth
 * argument (TVMScript writes both as R.nn.attention) and LegalizeOps names the
 * PrimFunc `attention_bias` when the bias is there, as TVM does. kAlways. */
#include <string.h>

#include "ir/op/common.h"

/* Canonical attrs (TVM's print order): scale FloatImm or NONE, causal_mask STR or
 * NONE ("TopLeft", "BottomRight"), window_size int or NONE. */
static const char *const attention_attrs[] = {"scale", "causal_mask", "window_size", NULL};

static tj_status_t *normalize_attention(tj_arena_t *arena, const tj_attrs_t *given, const tj_attrs_t **out) {
  const char *op = "attention";
  TJ_RETURN_IF_ERROR(tj_op_check_attr_names(op, given, attention_attrs));
  tj_attr_builder_t b = {0};
  tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
  const tj_attr_value_t *v = tj_attrs_get(given, "scale");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_builder_add(&b, "scale", none);
  } else {
    double scale;
    TJ_RETURN_IF_ERROR(tj_op_read_float(op, given, "scale", 0, &scale));
    tj_attr_value_t f = {.kind = TJ_ATTR_FLOAT, .dtype = v->kind == TJ_ATTR_FLOAT ? v->dtype : TJ_F32, .f = scale};
    if (f.dtype.code != TJ_DT_FLOAT) f.dtype = TJ_F32;
    tj_attr_builder_add(&b, "scale", f);
  }
  v = tj_attrs_get(given, "causal_mask");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_builder_add(&b, "causal_mask", none);
  } else {
    const char *mask;
    TJ_RETURN_IF_ERROR(tj_op_read_str(op, given, "causal_mask", "", &mask));
    if (strcmp(mask, "TopLeft") != 0 && strcmp(mask, "BottomRight") != 0)
      return tj_op_error("%s: 'causal_mask' must be \"TopLeft\", \"BottomRight\" or None, got \"%s\"", op, mask);
    tj_attr_builder_add(&b, "causal_mask", tj_attr_str(tj_arena_strdup(arena, mask)));
  }
  v = tj_attrs_get(given, "window_size");
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_builder_add(&b, "window_size", none);
  } else {
    int64_t w;
    TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, "window_size", 0, &w));
    tj_attr_builder_add(&b, "window_size", tj_attr_int(w));
  }
  return tj_attr_builder_finish(arena, &b, out);
}

/* "attention: the query batch size and the key batch size should be the same, got 4 and 2" */
static tj_status_t *dims_error(const char *m1, const char *m2, const char *dim, const char *relation,
                               const tj_tir_expr_t *v1, const tj_tir_expr_t *v2) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "attention: the %s %s should be %s the %s %s, got ", m1, dim, relation, m2, dim);
  tj_op_format_dim(&sb, v1);
  tj_strbuf_append(&sb, " and ");
  tj_op_format_dim(&sb, v2);
  tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : "attention: shape mismatch");
  tj_strbuf_free(&sb);
  return s;
}

static bool provably_not_multiple(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  int64_t x, y;
  return tj_tir_is_const_int(a, &x) && tj_tir_is_const_int(b, &y) && y != 0 && x % y != 0;
}

static bool is_one(const tj_tir_expr_t *d) {
  int64_t v;
  return tj_tir_is_const_int(d, &v) && v == 1;
}

static tj_status_t *check_bias(const tj_sinfo_t *bias, const tj_tir_expr_t *const *q, const tj_tir_expr_t *keys) {
  if (bias->tensor.ndim != 4) return tj_op_error("attention: the bias must be 4-D, got %d-D", bias->tensor.ndim);
  if (!bias->tensor.shape) return tj_op_error("attention: the bias needs a known shape");
  const tj_tir_expr_t *const *bs = bias->tensor.shape;
  const tj_tir_expr_t *want[3] = {q[0], q[2], q[1]};
  static const char *const what[3] = {"batch size", "number of heads", "sequence length"};
  for (int i = 0; i < 3; i++)
    if (tj_op_compare_dims(want[i], bs[i]) == TJ_DIM_DIFFERENT && !is_one(bs[i]))
      return dims_error("query", "bias", what[i], "the same as or broadcastable to", want[i], bs[i]);
  if (tj_op_compare_dims(keys, bs[3]) == TJ_DIM_DIFFERENT)
    return dims_error("key", "bias", "sequence length", "the same as", keys, bs[3]);
  return NULL;
}

static tj_status_t *infer_attention(const tj_infer_ctx_t *ctx, const tj_rx_expr_t *call, const tj_sinfo_t **out) {
  const char *op = "attention";
  static const char *const names[4] = {"query", "key", "value", "bias"};
  const tj_sinfo_t *s[4] = {NULL};
  for (int i = 0; i < call->call.n_args; i++) TJ_RETURN_IF_ERROR(tj_op_tensor_arg(op, call, i, names[i], &s[i]));
  for (int i = 0; i < 3; i++) {
    if (s[i]->tensor.ndim != 4)
      return tj_op_error("attention: the %s must be 4-D [batch, sequence, heads, head dim], got %d-D", names[i],
                         s[i]->tensor.ndim);
    /* TVM reads the shapes unconditionally */
    if (!s[i]->tensor.shape) return tj_op_error("attention: the %s needs a known shape", names[i]);
  }
  const tj_tir_expr_t *const *q = s[0]->tensor.shape, *const *k = s[1]->tensor.shape, *const *v = s[2]->tensor.shape;
  if (tj_op_compare_dims(q[0], k[0]) == TJ_DIM_DIFFERENT)
    return dims_error("query", "key", "batch size", "the same as", q[0], k[0]);
  if (tj_op_compare_dims(q[0], v[0]) == TJ_DIM_DIFFERENT)
    return dims_error("query", "value", "batch size", "the same as", q[0], v[0]);
  if (provably_not_multiple(q[2], k[2])) return dims_error("query", "key", "number of heads", "a multiple of", q[2], k[2]);
  if (provably_not_multiple(q[2], v[2]))
    return dims_error("query", "value", "number of heads", "a multiple of", q[2], v[2]);
  if (tj_op_compare_dims(k[1], v[1]) == TJ_DIM_DIFFERENT)
    return dims_error("key", "value", "sequence length", "the same as", k[1], v[1]);
  if (tj_op_compare_dims(q[3], k[3]) == TJ_DIM_DIFFERENT)
    return dims_error("query", "key", "dimension of heads", "the same as", q[3], k[3]);
  if (s[3]) TJ_RETURN_IF_ERROR(check_bias(s[3], q, k[1]));
  const tj_tir_expr_t *shape[4] = {q[0], q[1], q[2], v[3]};
  *out = tj_op_tensor_sinfo(ctx->arena, s[0]->tensor.dtype, 4, shape, s[0]->tensor.vdevice);
  return *out ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

static const char *const attention_args[] = {"query", "key", "value", "bias"};

const tj_op_def_t tj_op_attention = {
    .name = "relax.nn.attention", .script_name = "R.nn.attention", .min_args = 3, .max_args = 4,
    .mp_policy = TJ_MP_ALWAYS, .normalize_attrs = normalize_attention, .infer = infer_attention,
    .arg_names = attention_args, .positional_attrs = attention_attrs, .dtypes = "float",
    .notes = "BSNH layout; softmax(q k^T * scale + bias) v, scale defaults to 1/sqrt(head dim); causal masks "
             "zero the masked scores (as TVM); window_size is not legalized (as TVM)",
};
