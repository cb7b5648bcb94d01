/* R.nn.pad → topi.nn.pad (`pad`): one block `PadInput`.
 *
 * constant (TVM's only legalized mode): a dim with padding reads data[i − before]
 * under the guard `before <= i` (when before > 0) and `i < before + dim` (when after
 * > 0), conjoined left to right, else pad_value; a dim without padding indexes
 * directly. No padding at all is a plain copy.
 *
 * edge and reflect: TVM's LegalizeOps ignores pad_mode at the corpus commit and
 * pads with the constant whatever the mode (tvm-ops.md, R.nn.pad row), which gives
 * wrong numbers. We compute what the mode says instead (numpy's "edge" and
 * "reflect"): the index is clamped, or mirrored about the edge without repeating it,
 * so no guard is needed. A reflect pad must be smaller than the dim (numpy also
 * repeats the reflection for larger pads; we decline those). */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT } pad_mode_t;

static const tj_tir_expr_t *select_expr(tj_arena_t *a, const tj_tir_expr_t *c, const tj_tir_expr_t *t,
                                        const tj_tir_expr_t *f) {
  return c && t && f ? tj_tir_select(a, c, t, f) : NULL;
}

/* The data index for output index v on a padded dim in edge/reflect mode. */
static const tj_tir_expr_t *mirrored_index(tj_arena_t *a, pad_mode_t mode, const tj_tir_expr_t *v, int64_t before,
                                           const tj_tir_expr_t *dim) {
  const tj_tir_expr_t *zero = tj_tir_i64(a, 0), *last = tj_lg_sub(a, dim, tj_tir_i64(a, 1));
  const tj_tir_expr_t *j = tj_lg_sub(a, v, tj_tir_i64(a, before));
  if (mode == PAD_EDGE) {
    const tj_tir_expr_t *lo = tj_tir_binary(a, TJ_TIR_MAX, j, zero);
    return tj_tir_binary(a, TJ_TIR_MIN, lo, last);
  }
  /* reflect: j < 0 → −j; j > last → 2·last − j */
  const tj_tir_expr_t *neg = tj_lg_sub(a, zero, j);
  const tj_tir_expr_t *low = select_expr(a, tj_tir_binary(a, TJ_TIR_LT, j, zero), neg, j);
  const tj_tir_expr_t *high = tj_lg_sub(a, tj_lg_mul(a, tj_tir_i64(a, 2), last), j);
  return select_expr(a, tj_tir_binary(a, TJ_TIR_LT, last, j), high, low);
}

static bool read_mode(const tj_attrs_t *attrs, pad_mode_t *out) {
  const tj_attr_value_t *m = tj_attrs_get(attrs, "pad_mode");
  const char *s = m && m->kind == TJ_ATTR_STR ? m->s : "constant";
  if (strcmp(s, "constant") == 0) *out = PAD_CONSTANT;
  else if (strcmp(s, "edge") == 0) *out = PAD_EDGE;
  else if (strcmp(s, "reflect") == 0) *out = PAD_REFLECT;
  else return false;
  return true;
}

/* Reflect needs pad < dim on both sides; unknown dims are not checked (the
 * out-of-range read is then the input's fault, as for any symbolic shape). */
static bool reflect_fits(const tj_buffer_t *x, const int64_t *width) {
  for (int d = 0; d < x->ndim; d++) {
    int64_t e;
    if (tj_tir_is_const_int(x->shape[d], &e) && (width[2 * d] >= e || width[2 * d + 1] >= e)) return false;
  }
  return true;
}

/* The value PadInput stores: the (guarded) read of x. */
static const tj_tir_expr_t *padded_value(tj_arena_t *a, const tj_buffer_t *x, const int64_t *width, pad_mode_t mode,
                                         double value, const tj_tir_expr_t *const *iv) {
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS], *guard = NULL;
  for (int d = 0; d < x->ndim; d++) {
    int64_t before = width[2 * d], after = width[2 * d + 1];
    const tj_tir_expr_t *v = iv[d];
    if (before == 0 && after == 0) {
      idx[d] = v;
      continue;
    }
    if (mode != PAD_CONSTANT) {
      idx[d] = mirrored_index(a, mode, v, before, x->shape[d]);
      continue;
    }
    idx[d] = tj_lg_sub(a, v, tj_tir_i64(a, before));
    if (before > 0) {
      const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LE, tj_tir_i64(a, before), v);
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
    if (after > 0) {
      const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LT, v, tj_lg_add(a, x->shape[d], tj_tir_i64(a, before)));
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
  }
  const tj_tir_expr_t *val = tj_lg_load(a, x, x->ndim, idx);
  if (!guard || !val) return val;
  const tj_tir_expr_t *args[3] = {guard, val, tj_lg_const(a, x->dtype, value)};
  return tj_tir_call(a, x->dtype, "tir.if_then_else", 3, args);
}

tj_status_t *tj_legalize_pad(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 1) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim > TJ_LG_MAX_ITERS) return NULL;
  int64_t width[2 * TJ_LG_MAX_ITERS];
  int n = tj_lg_attr_ints(call->call.attrs, "pad_width", width, 2 * TJ_LG_MAX_ITERS);
  pad_mode_t mode;
  if (n != 2 * xs->tensor.ndim || !read_mode(call->call.attrs, &mode)) return NULL;
  const tj_attr_value_t *pv = tj_attrs_get(call->call.attrs, "pad_value");
  double value = pv && pv->kind == TJ_ATTR_FLOAT ? pv->f : 0.0;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "pad", NULL, out_expr);
  if (mode == PAD_REFLECT && !reflect_fits(x, width)) return NULL;
  int nd = x->ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int d = 0; d < nd; d++)
    shape[d] = tj_lg_add(a, tj_lg_add(a, x->shape[d], tj_tir_i64(a, width[2 * d])), tj_tir_i64(a, width[2 * d + 1]));
  const tj_buffer_t *out = tj_lg_output(&te, "PadInput", x->dtype, nd, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "PadInput", nd, shape, "i");
  if (te.failed || !out) return tj_lg_te_finish(&te, "pad", NULL, out_expr);
  const tj_tir_expr_t *val = padded_value(a, x, width, mode, value, st.iv);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, nd, st.iv, val));
  return tj_lg_te_finish(&te, "pad", te.failed ? NULL : tj_lg_call_sinfo(call, xs), out_expr);
}
