/* R.image.resize2d → topi.image.resize2d (`resize2d`, one block `resize`).
 * The source coordinate of output index y (topi's get_inx, in float32 with
 * scale = in / out):
 *   asymmetric          y · scale
 *   half_pixel          (y + 0.5) · scale − 0.5
 *   pytorch_half_pixel  as half_pixel when out > 1, else 0
 *   align_corners       y · (in − 1) / (out − 1)
 * nearest_neighbor rounds it (rounding_method; "" means floor, or round for
 * align_corners) to int64, except for asymmetric with an integer upscale of static
 * extents, where topi divides the index: Div(y, out / in). linear reads the four
 * neighbours floor(c) and floor(c) + 1 (as float32) and interpolates
 * A·(1 − t) + B·t. Every read index is clamped to [0, in − 1]. The output dtype is
 * the data's (TVM does not forward out_dtype to topi). */
#include <string.h>

#include "transforms/legalize/legalize.h"

static bool resize_layout(const char *layout, int *out_ndim, int *out_h, int *out_w) {
  int nd = 0, h = -1, w = -1;
  for (const char *p = layout; *p; p++) {
    if (*p >= '0' && *p <= '9') continue;
    if (*p == 'H') h = h < 0 ? nd : -2;
    if (*p == 'W') w = w < 0 ? nd : -2;
    nd++;
  }
  if (h < 0 || w < 0 || nd > TJ_LG_MAX_ITERS) return false;
  *out_ndim = nd, *out_h = h, *out_w = w;
  return true;
}

typedef struct resize_cfg {
  bool linear;
  const char *mode, *rounding;
} resize_cfg_t;

static const tj_tir_expr_t *f32(tj_arena_t *a, const tj_tir_expr_t *e) { return tj_lg_cast(a, TJ_F32, e); }
static const tj_tir_expr_t *fc(tj_arena_t *a, double v) { return tj_tir_float(a, TJ_F32, v); }

/* The float32 source coordinate of output index y along a dim of in → out. */
static const tj_tir_expr_t *source_coord(tj_arena_t *a, const resize_cfg_t *c, const tj_tir_expr_t *y,
                                         const tj_tir_expr_t *in, const tj_tir_expr_t *out) {
  const tj_tir_expr_t *yf = f32(a, y);
  if (strcmp(c->mode, "align_corners") == 0) {
    const tj_tir_expr_t *num = f32(a, tj_lg_sub(a, in, tj_tir_i64(a, 1)));
    const tj_tir_expr_t *den = f32(a, tj_lg_sub(a, out, tj_tir_i64(a, 1)));
    int64_t o;
    if (tj_tir_is_const_int(out, &o) && o == 1) return fc(a, 0);
    return tj_lg_bin(a, TJ_TIR_MUL, yf, tj_lg_bin(a, TJ_TIR_DIV, num, den));
  }
  const tj_tir_expr_t *scale = tj_lg_bin(a, TJ_TIR_DIV, f32(a, in), f32(a, out));
  if (strcmp(c->mode, "asymmetric") == 0) return tj_lg_bin(a, TJ_TIR_MUL, scale, yf);
  const tj_tir_expr_t *hp =
      tj_lg_bin(a, TJ_TIR_SUB, tj_lg_bin(a, TJ_TIR_MUL, tj_lg_bin(a, TJ_TIR_ADD, yf, fc(a, 0.5)), scale), fc(a, 0.5));
  if (strcmp(c->mode, "pytorch_half_pixel") == 0)
    return tj_tir_select(a, tj_tir_binary(a, TJ_TIR_LT, tj_tir_i64(a, 1), out), hp, fc(a, 0));
  return hp;
}

static const tj_tir_expr_t *clamp_index(tj_arena_t *a, const tj_tir_expr_t *i, const tj_tir_expr_t *in) {
  const tj_tir_expr_t *hi = tj_tir_binary(a, TJ_TIR_MIN, i, tj_lg_sub(a, in, tj_tir_i64(a, 1)));
  return hi ? tj_tir_binary(a, TJ_TIR_MAX, hi, tj_tir_i64(a, 0)) : NULL;
}

/* Nearest source index (before clamping). */
static const tj_tir_expr_t *nearest_index(tj_arena_t *a, const resize_cfg_t *c, const tj_tir_expr_t *y,
                                          const tj_tir_expr_t *in, const tj_tir_expr_t *out) {
  int64_t iv, ov;
  if (strcmp(c->mode, "asymmetric") == 0 && tj_tir_is_const_int(in, &iv) && tj_tir_is_const_int(out, &ov) && iv > 0 &&
      ov % iv == 0)
    return tj_tir_binary(a, TJ_TIR_DIV, y, tj_tir_i64(a, ov / iv));
  const char *r = c->rounding;
  if (!r[0]) r = strcmp(c->mode, "align_corners") == 0 ? "round" : "floor";
  const tj_tir_expr_t *x = source_coord(a, c, y, in, out), *v;
  if (strcmp(r, "round_prefer_floor") == 0) v = tj_lg_call1(a, "tir.ceil", tj_lg_bin(a, TJ_TIR_SUB, x, fc(a, 0.5)));
  else if (strcmp(r, "round_prefer_ceil") == 0)
    v = tj_lg_call1(a, "tir.floor", tj_lg_bin(a, TJ_TIR_ADD, x, fc(a, 0.5)));
  else v = tj_lg_call1(a, strcmp(r, "round") == 0 ? "tir.round" : strcmp(r, "ceil") == 0 ? "tir.ceil" : "tir.floor", x);
  return v ? tj_tir_cast(a, TJ_I64, v) : NULL;
}

/* A·(1 − t) + B·t. */
static const tj_tir_expr_t *lerp(tj_arena_t *a, const tj_tir_expr_t *A, const tj_tir_expr_t *B,
                                 const tj_tir_expr_t *t) {
  return tj_lg_bin(a, TJ_TIR_ADD, tj_lg_bin(a, TJ_TIR_MUL, A, tj_lg_bin(a, TJ_TIR_SUB, fc(a, 1), t)),
                   tj_lg_bin(a, TJ_TIR_MUL, B, t));
}

static const tj_tir_expr_t *linear_value(tj_arena_t *a, const resize_cfg_t *c, const tj_buffer_t *x, int h, int w,
                                         const tj_tir_expr_t *const *iv, const tj_buffer_t *out) {
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS], *lo[2], *hi[2], *t[2];
  int dims[2] = {h, w};
  for (int k = 0; k < 2; k++) {
    int d = dims[k];
    const tj_tir_expr_t *s = source_coord(a, c, iv[d], x->shape[d], out->shape[d]);
    const tj_tir_expr_t *fl = tj_lg_call1(a, "tir.floor", s);
    const tj_tir_expr_t *i0 = fl ? tj_tir_cast(a, TJ_I64, fl) : NULL;
    t[k] = tj_lg_bin(a, TJ_TIR_SUB, s, fl);
    lo[k] = clamp_index(a, i0, x->shape[d]);
    hi[k] = clamp_index(a, tj_lg_add(a, i0, tj_tir_i64(a, 1)), x->shape[d]);
  }
  const tj_tir_expr_t *p[4];
  for (int q = 0; q < 4; q++) {
    for (int d = 0; d < x->ndim; d++) idx[d] = iv[d];
    idx[h] = q & 2 ? hi[0] : lo[0];
    idx[w] = q & 1 ? hi[1] : lo[1];
    p[q] = f32(a, tj_lg_load(a, x, x->ndim, idx));
  }
  const tj_tir_expr_t *v = lerp(a, lerp(a, p[0], p[1], t[1]), lerp(a, p[2], p[3], t[1]), t[0]);
  return tj_lg_cast(a, x->dtype, v);
}

tj_status_t *tj_legalize_resize2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]);
  if (call->call.n_args != 2 || !tj_lg_tensor_known(xs) || !tj_lg_tensor_known(call->sinfo)) return NULL;
  const tj_attrs_t *at = call->call.attrs;
  resize_cfg_t c = {.linear = strcmp(tj_attrs_get_str(at, "method", "linear"), "linear") == 0,
                    .mode = tj_attrs_get_str(at, "coordinate_transformation_mode", "half_pixel"),
                    .rounding = tj_attrs_get_str(at, "rounding_method", "round")};
  int nd, h, w;
  if (!resize_layout(tj_attrs_get_str(at, "layout", "NCHW"), &nd, &h, &w) || nd != xs->tensor.ndim) return NULL;
  if (c.linear && !tj_dtype_is_floating(xs->tensor.dtype)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, "resize2d", NULL, out_expr);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int d = 0; d < nd; d++) oshape[d] = tj_lg_shape_expr(&te, call->sinfo->tensor.shape[d]);
  const tj_buffer_t *out = tj_lg_output(&te, "resize", x->dtype, nd, oshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, "resize", nd, oshape, "i");
  if (te.failed || !out) return tj_lg_te_finish(&te, "resize2d", NULL, out_expr);
  const tj_tir_expr_t *v;
  if (c.linear) {
    v = linear_value(a, &c, x, h, w, st.iv, out);
  } else {
    const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
    for (int d = 0; d < nd; d++) idx[d] = st.iv[d];
    idx[h] = clamp_index(a, nearest_index(a, &c, st.iv[h], x->shape[h], out->shape[h]), x->shape[h]);
    idx[w] = clamp_index(a, nearest_index(a, &c, st.iv[w], x->shape[w], out->shape[w]), x->shape[w]);
    v = tj_lg_load(a, x, nd, idx);
  }
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, nd, st.iv, v));
  const tj_sinfo_t *os = tj_sinfo_tensor(a, x->dtype, nd, call->sinfo->tensor.shape);
  return tj_lg_te_finish(&te, "resize2d", te.failed ? NULL : os, out_expr);
}
