/* R.nn.conv2d_transpose → topi.nn.group_conv2d_transpose_nchw (`conv2d_transpose`).
 * TVM legalizes only NCHW data, IOHW kernels and dilation 1 (it keeps the call
 * otherwise, and so do we). Four blocks:
 *   data_dilate       data spread by the strides: read at i // s where i % s == 0, else 0
 *                     (a dim with stride 1 is read directly);
 *   data_pad          padded by K − 1 − pad before and K − 1 − pad + output_padding
 *                     after, with topi.nn.pad's guard;
 *   kernel_transform  [o, i, h, w] = weight[i, o, K−1−h, K−1−w] (loops i, o, … when
 *                     grouped, where the buffer is (O/g, I, KH, KW));
 *   compute           Σ_{dc, dh, dw} data_pad[b, g·C/g + dc, h + dh, w + dw] ·
 *                     kernel_transform[c % (O/g), g·C/g + dc, dh, dw], g = c // (O/g),
 *                     accumulated in the call's dtype (casts of both operands). */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct convt_params {
  int64_t stride[2], pad[4], opad[2], groups;
  tj_dtype_t out_dtype;
} convt_params_t;

static bool read_params(const tj_rx_expr_t *call, convt_params_t *p) {
  const tj_attrs_t *at = call->call.attrs;
  const char *dl = tj_attrs_get_str(at, "data_layout", "NCHW"), *kl = tj_attrs_get_str(at, "kernel_layout", "IOHW");
  const char *ol = tj_attrs_get_str(at, "out_layout", dl);
  if (strcmp(dl, "NCHW") != 0 || strcmp(kl, "IOHW") != 0 || (ol[0] && strcmp(ol, "NCHW") != 0)) return false;
  int64_t v[4] = {1, 1, 1, 1};
  if (tj_lg_attr_ints(at, "dilation", v, 2) == 2 && (v[0] != 1 || v[1] != 1)) return false;
  v[0] = v[1] = 1;
  tj_lg_attr_ints(at, "strides", v, 2);
  memcpy(p->stride, v, sizeof p->stride);
  int64_t pd[4] = {0, 0, 0, 0}, op[2] = {0, 0};
  tj_lg_attr_ints(at, "padding", pd, 4);
  tj_lg_attr_ints(at, "output_padding", op, 2);
  memcpy(p->pad, pd, sizeof p->pad);
  memcpy(p->opad, op, sizeof p->opad);
  p->groups = tj_attrs_get_int(at, "groups", 1);
  p->out_dtype = call->sinfo->tensor.dtype;
  return p->groups >= 1 && p->stride[0] >= 1 && p->stride[1] >= 1;
}

static const tj_tir_expr_t *conjoin(tj_arena_t *a, const tj_tir_expr_t *g, const tj_tir_expr_t *t) {
  return g ? tj_tir_binary(a, TJ_TIR_AND, g, t) : t;
}

static const tj_tir_expr_t *guarded(tj_arena_t *a, const tj_tir_expr_t *guard, const tj_tir_expr_t *v, tj_dtype_t dt) {
  if (!guard || !v) return v;
  const tj_tir_expr_t *args[3] = {guard, v, tj_lg_zero(a, dt)};
  return tj_tir_call(a, dt, "tir.if_then_else", 3, args);
}

static const tj_buffer_t *emit_dilate(tj_lg_te_t *te, const tj_buffer_t *x, const convt_params_t *p) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *shape[4] = {x->shape[0], x->shape[1], NULL, NULL};
  for (int d = 2; d < 4; d++)
    /* topi.nn.dilate simplifies its shape: (h - 1) * s + 1 is h * s - (s - 1) */
    shape[d] = tj_lg_simplify(
        a, tj_lg_add(a, tj_lg_mul(a, tj_lg_sub(a, x->shape[d], tj_tir_i64(a, 1)), tj_tir_i64(a, p->stride[d - 2])),
                     tj_tir_i64(a, 1)));
  const tj_buffer_t *out = tj_lg_alloc(te, "data_dilate", x->dtype, 4, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "data_dilate", 4, shape, "i");
  if (te->failed || !out) return NULL;
  const tj_tir_expr_t *idx[4] = {st.iv[0], st.iv[1], st.iv[2], st.iv[3]}, *guard = NULL;
  for (int d = 2; d < 4; d++) {
    int64_t s = p->stride[d - 2];
    if (s == 1) continue;
    const tj_tir_expr_t *sv = tj_tir_i64(a, s);
    guard = conjoin(a, guard, tj_tir_binary(a, TJ_TIR_EQ, tj_lg_floormod(a, st.iv[d], sv), tj_tir_i64(a, 0)));
    idx[d] = tj_lg_floordiv(a, st.iv[d], sv);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, out, 4, st.iv, guarded(a, guard, tj_lg_load(a, x, 4, idx), x->dtype)));
  return out;
}

static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *x, const tj_buffer_t *w,
                                   const convt_params_t *p) {
  tj_arena_t *a = te->arena;
  if (!x) return NULL;
  const tj_tir_expr_t *shape[4] = {x->shape[0], x->shape[1], NULL, NULL}, *before[4] = {0}, *after[4] = {0};
  for (int d = 2; d < 4; d++) {
    const tj_tir_expr_t *k1 = tj_lg_sub(a, w->shape[d], tj_tir_i64(a, 1));
    before[d] = tj_lg_sub(a, k1, tj_tir_i64(a, p->pad[d - 2]));
    after[d] = tj_lg_add(a, tj_lg_sub(a, k1, tj_tir_i64(a, p->pad[d])), tj_tir_i64(a, p->opad[d - 2]));
    shape[d] = tj_lg_simplify(a, tj_lg_add(a, tj_lg_add(a, x->shape[d], before[d]), after[d])); /* topi.nn.pad's */
  }
  const tj_buffer_t *out = tj_lg_alloc(te, "data_pad", x->dtype, 4, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "data_pad", 4, shape, "i");
  if (te->failed || !out) return NULL;
  const tj_tir_expr_t *idx[4] = {st.iv[0], st.iv[1], st.iv[2], st.iv[3]}, *guard = NULL;
  for (int d = 2; d < 4; d++) {
    int64_t b, e;
    bool b_zero = tj_tir_is_const_int(before[d], &b) && b == 0, a_zero = tj_tir_is_const_int(after[d], &e) && e == 0;
    if (b_zero && a_zero) continue;
    idx[d] = tj_lg_sub(a, st.iv[d], before[d]);
    if (!b_zero) guard = conjoin(a, guard, tj_tir_binary(a, TJ_TIR_LE, before[d], st.iv[d]));
    if (!a_zero) guard = conjoin(a, guard, tj_tir_binary(a, TJ_TIR_LT, st.iv[d], tj_lg_add(a, x->shape[d], before[d])));
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, out, 4, st.iv, guarded(a, guard, tj_lg_load(a, x, 4, idx), x->dtype)));
  return out;
}

/* K − 1 − v, folded to a literal when K is static. */
static const tj_tir_expr_t *flipped(tj_arena_t *a, const tj_tir_expr_t *k, const tj_tir_expr_t *v) {
  int64_t kv;
  if (tj_tir_is_const_int(k, &kv)) return tj_lg_sub(a, tj_tir_i64(a, kv - 1), v);
  return tj_lg_sub(a, tj_lg_sub(a, k, v), tj_tir_i64(a, 1));
}

/* kernel_transform is (out_c, in_c, kh, kw) with in_c read off the data (topi's
 * conv2d_transpose_nchw_preprocess), which differs from the weight's dim 0 only
 * in name when the shapes are symbolic. */
static const tj_buffer_t *emit_kernel(tj_lg_te_t *te, const tj_buffer_t *w, const tj_buffer_t *x, bool grouped) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *shape[4] = {w->shape[1], grouped ? w->shape[0] : x->shape[1], w->shape[2], w->shape[3]};
  const tj_buffer_t *out = tj_lg_alloc(te, "kernel_transform", w->dtype, 4, shape);
  const char *names[4] = {grouped ? "i" : "o", grouped ? "o" : "i", "h", "w"};
  tj_iter_kind_t kinds[4] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL};
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, "kernel_transform", 4, shape, kinds, names);
  if (te->failed || !out) return NULL;
  const tj_tir_expr_t *idx[4] = {st.iv[1], st.iv[0], flipped(a, w->shape[2], st.iv[2]),
                                 flipped(a, w->shape[3], st.iv[3])};
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, out, 4, st.iv, tj_lg_load(a, w, 4, idx)));
  return out;
}

static void emit_compute(tj_lg_te_t *te, const tj_buffer_t *pad, const tj_buffer_t *kt, const tj_buffer_t *out,
                         const convt_params_t *p, int64_t cg, int64_t og) {
  tj_arena_t *a = te->arena;
  bool grouped = p->groups > 1;
  const tj_tir_expr_t *ext[7] = {
      out->shape[0], out->shape[1], out->shape[2], out->shape[3], grouped ? tj_tir_i64(a, cg) : pad->shape[1],
      kt->shape[2],  kt->shape[3]};
  tj_iter_kind_t kinds[7] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL,
                             TJ_ITER_REDUCE,  TJ_ITER_REDUCE,  TJ_ITER_REDUCE};
  const char *names[7] = {"b", "c", "h", "w", "dc", "dh", "dw"};
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, "compute", 7, ext, kinds, names);
  if (te->failed) return;
  const tj_tir_expr_t *c = st.iv[1], *dc = st.iv[4], *chan = dc, *kc = c;
  if (grouped) {
    chan = tj_lg_add(a, tj_lg_mul(a, tj_lg_floordiv(a, c, tj_tir_i64(a, og)), tj_tir_i64(a, cg)), dc);
    kc = tj_lg_floormod(a, c, tj_tir_i64(a, og));
  }
  const tj_tir_expr_t *pidx[4] = {st.iv[0], chan, tj_lg_add(a, st.iv[2], st.iv[5]), tj_lg_add(a, st.iv[3], st.iv[6])};
  const tj_tir_expr_t *kidx[4] = {kc, chan, st.iv[5], st.iv[6]};
  const tj_tir_expr_t *prod = tj_lg_mul(a, tj_lg_cast(a, p->out_dtype, tj_lg_load(a, pad, 4, pidx)),
                                        tj_lg_cast(a, p->out_dtype, tj_lg_load(a, kt, 4, kidx)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 4, st.iv);
  tj_lg_stage_end(te, &st, tj_lg_store(a, out, 4, st.iv, tj_lg_zero(a, p->out_dtype)),
                  tj_lg_store(a, out, 4, st.iv, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL));
}

tj_status_t *tj_legalize_conv2d_transpose(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2 || !tj_lg_tensor_known(call->sinfo)) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(ws) || ds->tensor.ndim != 4 || ws->tensor.ndim != 4) return NULL;
  convt_params_t p;
  if (!read_params(call, &p)) return NULL;
  int64_t c_static = 0, og = 0;
  bool static_channels = tj_tir_is_const_int(ws->tensor.shape[0], &c_static) &&
                         tj_tir_is_const_int(ws->tensor.shape[1], &og);
  if (p.groups > 1 && (!static_channels || c_static % p.groups)) return NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *w = tj_lg_placeholder(&te, call->call.args[1]);
  if (!x || !w) return tj_lg_te_finish(&te, "conv2d_transpose", NULL, out_expr);
  const tj_tir_expr_t *oshape[4];
  for (int d = 0; d < 4; d++) oshape[d] = tj_lg_shape_expr(&te, call->sinfo->tensor.shape[d]);
  const tj_buffer_t *out = tj_lg_output(&te, "compute", p.out_dtype, 4, oshape);
  const tj_buffer_t *pad = emit_pad(&te, emit_dilate(&te, x, &p), w, &p);
  const tj_buffer_t *kt = emit_kernel(&te, w, x, p.groups > 1);
  if (!out || !pad || !kt) return tj_lg_te_finish(&te, "conv2d_transpose", NULL, out_expr);
  emit_compute(&te, pad, kt, out, &p, c_static / p.groups, og);
  return tj_lg_te_finish(&te, "conv2d_transpose", te.failed ? NULL : call->sinfo, out_expr);
}

/* ---------------- conv1d_transpose ----------------
 * topi.nn.conv1d_transpose_ncw (`conv1d_transpose`), which TVM uses only for NCW/IOW,
 * dilation 1 and groups 1 (declined otherwise): data_dilate by the stride, data_pad
 * by K − 1 − left before and K − 1 − right + output_padding after, `kernel`
 * [o, i, w] = weight[i, o, K − 1 − w], and `compute` = Σ_{dc, dw}
 * data_pad[b, dc, w + dw] · kernel[c, dc, dw] in the call's dtype. */
static const tj_buffer_t *emit_dilate_pad_1d(tj_lg_te_t *te, const tj_buffer_t *x, const tj_buffer_t *w, int64_t s,
                                             const int64_t *pad, int64_t opad) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *dshape[3] = {
      x->shape[0], x->shape[1],
      tj_lg_simplify(a, tj_lg_add(a, tj_lg_mul(a, tj_lg_sub(a, x->shape[2], tj_tir_i64(a, 1)), tj_tir_i64(a, s)),
                                  tj_tir_i64(a, 1)))};
  const tj_buffer_t *dil = tj_lg_alloc(te, "data_dilate", x->dtype, 3, dshape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "data_dilate", 3, dshape, "i");
  if (te->failed || !dil) return NULL;
  const tj_tir_expr_t *idx[3] = {st.iv[0], st.iv[1], st.iv[2]}, *guard = NULL;
  if (s > 1) {
    guard = tj_tir_binary(a, TJ_TIR_EQ, tj_lg_floormod(a, st.iv[2], tj_tir_i64(a, s)), tj_tir_i64(a, 0));
    idx[2] = tj_lg_floordiv(a, st.iv[2], tj_tir_i64(a, s));
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, dil, 3, st.iv, guarded(a, guard, tj_lg_load(a, x, 3, idx), x->dtype)));
  const tj_tir_expr_t *k1 = tj_lg_sub(a, w->shape[2], tj_tir_i64(a, 1));
  const tj_tir_expr_t *before = tj_lg_sub(a, k1, tj_tir_i64(a, pad[0]));
  const tj_tir_expr_t *after = tj_lg_add(a, tj_lg_sub(a, k1, tj_tir_i64(a, pad[1])), tj_tir_i64(a, opad));
  const tj_tir_expr_t *pshape[3] = {x->shape[0], x->shape[1],
                                    tj_lg_simplify(a, tj_lg_add(a, tj_lg_add(a, dshape[2], before), after))};
  const tj_buffer_t *out = tj_lg_alloc(te, "data_pad", x->dtype, 3, pshape);
  tj_lg_stage_spatial(te, &st, "data_pad", 3, pshape, "i");
  if (te->failed || !out) return NULL;
  const tj_tir_expr_t *pidx[3] = {st.iv[0], st.iv[1], tj_lg_sub(a, st.iv[2], before)};
  const tj_tir_expr_t *g = tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_LE, before, st.iv[2]),
                                         tj_tir_binary(a, TJ_TIR_LT, st.iv[2], tj_lg_add(a, dshape[2], before)));
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, out, 3, st.iv, guarded(a, g, tj_lg_load(a, dil, 3, pidx), x->dtype)));
  return out;
}

tj_status_t *tj_legalize_conv1d_transpose(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  if (call->call.n_args != 2 || !tj_lg_tensor_known(call->sinfo)) return NULL;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(ws) || ds->tensor.ndim != 3 || ws->tensor.ndim != 3) return NULL;
  const tj_attrs_t *at = call->call.attrs;
  if (strcmp(tj_attrs_get_str(at, "data_layout", "NCW"), "NCW") != 0 ||
      strcmp(tj_attrs_get_str(at, "kernel_layout", "IOW"), "IOW") != 0 ||
      strcmp(tj_attrs_get_str(at, "out_layout", "NCW"), "NCW") != 0 || tj_attrs_get_int(at, "groups", 1) != 1)
    return NULL;
  int64_t s = 1, d = 1, opad = 0, pad[2] = {0, 0};
  tj_lg_attr_ints(at, "strides", &s, 1);
  tj_lg_attr_ints(at, "dilation", &d, 1);
  tj_lg_attr_ints(at, "output_padding", &opad, 1);
  if (tj_lg_attr_ints(at, "padding", pad, 2) == 1) pad[1] = pad[0];
  if (d != 1 || s < 1) return NULL;
  tj_dtype_t odt = call->sinfo->tensor.dtype;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *w = tj_lg_placeholder(&te, call->call.args[1]);
  if (!x || !w) return tj_lg_te_finish(&te, "conv1d_transpose", NULL, out_expr);
  const tj_tir_expr_t *oshape[3];
  for (int i = 0; i < 3; i++) oshape[i] = tj_lg_shape_expr(&te, call->sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, "compute", odt, 3, oshape);
  const tj_buffer_t *pad_buf = emit_dilate_pad_1d(&te, x, w, s, pad, opad);
  const tj_tir_expr_t *kshape[3] = {w->shape[1], w->shape[0], w->shape[2]};
  const tj_buffer_t *kt = tj_lg_alloc(&te, "kernel", w->dtype, 3, kshape);
  if (!out || !pad_buf || !kt) return tj_lg_te_finish(&te, "conv1d_transpose", NULL, out_expr);
  tj_lg_stage_t st;
  tj_iter_kind_t kinds[5] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_REDUCE, TJ_ITER_REDUCE};
  const char *knames[3] = {"o", "i", "w"};
  tj_lg_stage_begin(&te, &st, "kernel", 3, kshape, kinds, knames);
  if (te.failed) return tj_lg_te_finish(&te, "conv1d_transpose", NULL, out_expr);
  const tj_tir_expr_t *kidx[3] = {st.iv[1], st.iv[0], flipped(a, w->shape[2], st.iv[2])};
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, kt, 3, st.iv, tj_lg_load(a, w, 3, kidx)));
  const tj_tir_expr_t *ext[5] = {oshape[0], oshape[1], oshape[2], x->shape[1], w->shape[2]};
  const char *names[5] = {"b", "c", "w", "dc", "dw"};
  tj_lg_stage_begin(&te, &st, "compute", 5, ext, kinds, names);
  if (te.failed) return tj_lg_te_finish(&te, "conv1d_transpose", NULL, out_expr);
  const tj_tir_expr_t *pidx[3] = {st.iv[0], st.iv[3], tj_lg_add(a, st.iv[2], st.iv[4])};
  const tj_tir_expr_t *widx[3] = {st.iv[1], st.iv[3], st.iv[4]};
  const tj_tir_expr_t *prod =
      tj_lg_mul(a, tj_lg_cast(a, odt, tj_lg_load(a, pad_buf, 3, pidx)), tj_lg_cast(a, odt, tj_lg_load(a, kt, 3, widx)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 3, st.iv);
  tj_lg_stage_end(&te, &st, tj_lg_store(a, out, 3, st.iv, tj_lg_zero(a, odt)),
                  tj_lg_store(a, out, 3, st.iv, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL));
  return tj_lg_te_finish(&te, "conv1d_transpose", te.failed ? NULL : call->sinfo, out_expr);
}
