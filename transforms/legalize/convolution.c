/* R.nn.conv2d → topi.nn.conv (`conv2d`), docs/semantics.md §2.2.
 *
 * Two blocks: `pad_temp` (always present, a plain copy when there is no padding)
 * and `conv2d_<layout>` / `group_conv2d_<layout>`. Any 4-letter data layout made
 * of N, C, H, W and any kernel layout made of O, I, H, W are handled the way topi's
 * generic `conv` does: iterators follow the data layout (nn, ff, yy, xx in layout
 * order), reductions rc, ry, rx are ordered as C, H, W appear in the data layout
 * (NCHW: rc, ry, rx; NHWC: ry, rx, rc). The pad guard is written in the form TVM's
 * simplifier leaves it: `before <= v` only when before > 0, `v < extent + before`
 * only when after > 0, conjunction left to right over the padded dims. */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct conv_layout {
  int n, c, h, w; /* positions of N, C, H, W in the data layout */
  int o, i, kh, kw; /* positions of O, I, H, W in the kernel layout */
} conv_layout_t;

static int find_char(const char *s, char ch) {
  const char *p = strchr(s, ch);
  return p ? (int)(p - s) : -1;
}

/* Positions of the two spatial letters: the first non-`a`/`b` letters, in order. */
static bool spatial_positions(const char *layout, char a, char b, int *first, int *second) {
  int k = 0;
  for (int i = 0; i < 4; i++) {
    if (layout[i] == a || layout[i] == b) continue;
    if (k == 0) *first = i;
    else *second = i;
    k++;
  }
  return k == 2;
}

static bool parse_layouts(const char *data, const char *kernel, conv_layout_t *out) {
  if (strlen(data) != 4 || strlen(kernel) != 4) return false;
  out->n = find_char(data, 'N');
  out->c = find_char(data, 'C');
  out->o = find_char(kernel, 'O');
  out->i = find_char(kernel, 'I');
  if (out->n < 0 || out->c < 0 || out->o < 0 || out->i < 0) return false;
  return spatial_positions(data, 'N', 'C', &out->h, &out->w) && spatial_positions(kernel, 'O', 'I', &out->kh, &out->kw);
}

typedef struct conv_params {
  int64_t stride[2], dilation[2], pad[4]; /* pad: top, left, bottom, right */
  int64_t groups;
  tj_dtype_t out_dtype;
  conv_layout_t lay;
  const char *data_layout;
} conv_params_t;

static bool read_params(const tj_rx_expr_t *call, tj_dtype_t data_dtype, conv_params_t *p) {
  const tj_attrs_t *at = call->call.attrs;
  p->data_layout = tj_attrs_get_str(at, "data_layout", "NCHW");
  const char *kernel_layout = tj_attrs_get_str(at, "kernel_layout", "OIHW");
  const char *out_layout = tj_attrs_get_str(at, "out_layout", p->data_layout);
  if (!out_layout[0]) out_layout = p->data_layout;
  /* TVM keeps the op when out_layout differs from data_layout. */
  if (strcmp(out_layout, p->data_layout) != 0) return false;
  if (!kernel_layout[0]) kernel_layout = find_char(p->data_layout, 'C') < 2 ? "OIHW" : "HWIO";
  if (!parse_layouts(p->data_layout, kernel_layout, &p->lay)) return false;
  int64_t v[4];
  int n = tj_lg_attr_ints(at, "strides", v, 2);
  p->stride[0] = n >= 1 ? v[0] : 1;
  p->stride[1] = n == 2 ? v[1] : p->stride[0];
  n = tj_lg_attr_ints(at, "dilation", v, 2);
  p->dilation[0] = n >= 1 ? v[0] : 1;
  p->dilation[1] = n == 2 ? v[1] : p->dilation[0];
  n = tj_lg_attr_ints(at, "padding", v, 4);
  if (n <= 0) {
    v[0] = 0;
    n = 1;
  }
  if (n == 1) v[1] = v[2] = v[3] = v[0];
  if (n == 2) v[2] = v[0], v[3] = v[1];
  if (n == 3) return false;
  memcpy(p->pad, v, sizeof p->pad);
  p->groups = tj_attrs_get_int(at, "groups", 1);
  if (p->groups < 1) return false;
  p->out_dtype = tj_lg_attr_dtype(at, "out_dtype");
  if (tj_dtype_is_void(p->out_dtype)) p->out_dtype = data_dtype;
  return true;
}

/* pad_temp: data padded by (before, after) on the two spatial dims. */
static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *data, const conv_params_t *p) {
  tj_arena_t *a = te->arena;
  int64_t before[4] = {0, 0, 0, 0}, after[4] = {0, 0, 0, 0};
  before[p->lay.h] = p->pad[0];
  before[p->lay.w] = p->pad[1];
  after[p->lay.h] = p->pad[2];
  after[p->lay.w] = p->pad[3];
  const tj_tir_expr_t *shape[4];
  for (int d = 0; d < 4; d++)
    shape[d] = tj_lg_add(a, tj_lg_add(a, data->shape[d], tj_tir_i64(a, before[d])), tj_tir_i64(a, after[d]));
  const tj_buffer_t *pad = tj_lg_alloc(te, "pad_temp", data->dtype, 4, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "pad_temp", 4, shape, "i");
  const tj_tir_expr_t *idx[4];
  const tj_tir_expr_t *guard = NULL;
  for (int d = 0; d < 4; d++) {
    const tj_tir_expr_t *v = st.iv[d];
    if (before[d] == 0 && after[d] == 0) {
      idx[d] = v;
      continue;
    }
    idx[d] = tj_lg_sub(a, v, tj_tir_i64(a, before[d]));
    if (before[d] > 0) {
      const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LE, tj_tir_i64(a, before[d]), v);
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
    if (after[d] > 0) {
      const tj_tir_expr_t *t =
          tj_tir_binary(a, TJ_TIR_LT, v, tj_lg_add(a, data->shape[d], tj_tir_i64(a, before[d])));
      guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
    }
  }
  const tj_tir_expr_t *value = tj_lg_load(a, data, 4, idx);
  if (guard && value) {
    const tj_tir_expr_t *args[3] = {guard, value, tj_lg_zero(a, data->dtype)};
    value = tj_tir_call(a, data->dtype, "tir.if_then_else", 3, args);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, pad, 4, st.iv, value));
  return pad;
}

/* Output spatial extent: (in + before + after - (k - 1) * dil - 1) // stride + 1. */
static const tj_tir_expr_t *out_extent(tj_arena_t *a, const tj_tir_expr_t *in, const tj_tir_expr_t *k, int64_t before,
                                       int64_t after, int64_t dil, int64_t stride) {
  const tj_tir_expr_t *dk = tj_lg_mul(a, tj_lg_sub(a, k, tj_tir_i64(a, 1)), tj_tir_i64(a, dil));
  const tj_tir_expr_t *num = tj_lg_add(a, tj_lg_sub(a, tj_lg_sub(a, in, dk), tj_tir_i64(a, 1)), tj_tir_i64(a, before + after));
  return tj_lg_add(a, tj_lg_floordiv(a, num, tj_tir_i64(a, stride)), tj_tir_i64(a, 1));
}

/* With stride 1 and dilation 1 and a symbolic extent, the output extent in the
 * canonical form TVM's simplifier prints: `h + 1 - kh`, `h - 2`, `30 - kh`. */
static const tj_tir_expr_t *canonical_extent(tj_arena_t *a, const tj_tir_expr_t *in, const tj_tir_expr_t *k, int64_t pads) {
  int64_t iv, kv;
  bool in_c = tj_tir_is_const_int(in, &iv), k_c = tj_tir_is_const_int(k, &kv);
  if (in_c && k_c) return tj_tir_i64(a, iv + pads + 1 - kv);
  if (k_c) {
    int64_t c = pads + 1 - kv;
    return c > 0 ? tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, c))
                 : c < 0 ? tj_tir_binary(a, TJ_TIR_SUB, in, tj_tir_i64(a, -c)) : in;
  }
  const tj_tir_expr_t *head = in_c ? tj_tir_i64(a, iv + pads + 1)
                                   : (pads + 1 != 0 ? tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, pads + 1)) : in);
  return tj_tir_binary(a, TJ_TIR_SUB, head, k);
}

/* Output struct info: the call's, with symbolic spatial extents in canonical form. */
static const tj_sinfo_t *conv_out_sinfo(tj_arena_t *a, const tj_rx_expr_t *call, const conv_params_t *p,
                                        const tj_tir_expr_t *const *fallback) {
  const tj_sinfo_t *s = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, p->out_dtype, 4, fallback));
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  const conv_layout_t *L = &p->lay;
  const tj_tir_expr_t *dims[4];
  bool changed = false;
  for (int d = 0; d < 4; d++) dims[d] = s->tensor.shape[d];
  for (int sp = 0; sp < 2; sp++) {
    int d = sp == 0 ? L->h : L->w;
    const tj_tir_expr_t *in = ds->tensor.shape[d], *k = ws->tensor.shape[sp == 0 ? L->kh : L->kw];
    if (p->stride[sp] != 1 || p->dilation[sp] != 1 || (tj_tir_is_const_int(in, NULL) && tj_tir_is_const_int(k, NULL)))
      continue;
    dims[d] = canonical_extent(a, in, k, p->pad[sp] + p->pad[sp + 2]);
    changed = true;
  }
  return changed ? tj_sinfo_tensor(a, s->tensor.dtype, 4, dims) : s;
}

static tj_status_t *emit_conv(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const conv_params_t *p,
                              const tj_rx_expr_t **out_expr) {
  tj_arena_t *a = ctx->arena;
  const conv_layout_t *L = &p->lay;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *data = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *weight = tj_lg_placeholder(&te, call->call.args[1]);
  if (!data || !weight || data->ndim != 4 || weight->ndim != 4) return NULL;
  const tj_tir_expr_t *C = data->shape[L->c], *O = weight->shape[L->o];
  int64_t c_static = 0, o_static = 0;
  bool static_channels = tj_tir_is_const_int(C, &c_static) && tj_tir_is_const_int(O, &o_static);
  if (p->groups > 1 && (!static_channels || c_static % p->groups || o_static % p->groups)) return NULL;

  const tj_buffer_t *pad = emit_pad(&te, data, p);
  if (!pad) return tj_lg_te_finish(&te, "conv2d", NULL, out_expr);
  /* output shape in the data layout */
  const tj_tir_expr_t *oshape[4];
  oshape[L->n] = data->shape[L->n];
  oshape[L->c] = O;
  oshape[L->h] = out_extent(a, data->shape[L->h], weight->shape[L->kh], p->pad[0], p->pad[2], p->dilation[0], p->stride[0]);
  oshape[L->w] = out_extent(a, data->shape[L->w], weight->shape[L->kw], p->pad[1], p->pad[3], p->dilation[1], p->stride[1]);
  const tj_sinfo_t *out_sinfo = conv_out_sinfo(a, call, p, oshape);
  for (int d = 0; d < 4; d++) oshape[d] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[d]);

  bool grouped = p->groups > 1;
  char lower[5];
  for (int i = 0; i < 4; i++) lower[i] = (char)(p->data_layout[i] >= 'A' && p->data_layout[i] <= 'Z' ? p->data_layout[i] + 32 : p->data_layout[i]);
  lower[4] = '\0';
  const char *name = tj_arena_printf(a, "%sconv2d_%s", grouped ? "group_" : "", lower);
  const tj_buffer_t *out = tj_lg_output(&te, name, p->out_dtype, 4, oshape);

  /* iterators: spatial in data-layout order, then rc/ry/rx in the order C, H, W appear */
  const tj_tir_expr_t *ext[7];
  tj_iter_kind_t kinds[7] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL,
                             TJ_ITER_REDUCE, TJ_ITER_REDUCE, TJ_ITER_REDUCE};
  const char *names[7];
  const char *spatial_name[4];
  spatial_name[L->n] = "nn";
  spatial_name[L->c] = "ff";
  spatial_name[L->h] = "yy";
  spatial_name[L->w] = "xx";
  for (int d = 0; d < 4; d++) {
    ext[d] = oshape[d];
    names[d] = spatial_name[d];
  }
  const tj_tir_expr_t *rc_ext = grouped ? tj_tir_i64(a, c_static / p->groups) : C;
  int red_pos[3] = {L->c, L->h, L->w}; /* rc, ry, rx keyed by data-layout position */
  const char *red_name[3] = {"rc", "ry", "rx"};
  const tj_tir_expr_t *red_ext[3] = {rc_ext, weight->shape[L->kh], weight->shape[L->kw]};
  int slot_of[3]; /* reduce k (rc/ry/rx) -> iterator slot 4..6 */
  for (int k = 0; k < 3; k++) {
    int rank = 0;
    for (int j = 0; j < 3; j++)
      if (red_pos[j] < red_pos[k]) rank++;
    slot_of[k] = 4 + rank;
    ext[4 + rank] = red_ext[k];
    names[4 + rank] = red_name[k];
  }
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, name, 7, ext, kinds, names);
  const tj_tir_expr_t *nn = st.iv[L->n], *ff = st.iv[L->c], *yy = st.iv[L->h], *xx = st.iv[L->w];
  const tj_tir_expr_t *rc = st.iv[slot_of[0]], *ry = st.iv[slot_of[1]], *rx = st.iv[slot_of[2]];
  const tj_tir_expr_t *chan = rc;
  if (grouped)
    chan = tj_lg_add(a, tj_lg_mul(a, tj_lg_floordiv(a, ff, tj_tir_i64(a, o_static / p->groups)),
                                  tj_tir_i64(a, c_static / p->groups)),
                     rc);
  const tj_tir_expr_t *pidx[4], *widx[4];
  pidx[L->n] = nn;
  pidx[L->c] = chan;
  pidx[L->h] = tj_lg_add(a, tj_lg_mul(a, yy, tj_tir_i64(a, p->stride[0])), tj_lg_mul(a, ry, tj_tir_i64(a, p->dilation[0])));
  pidx[L->w] = tj_lg_add(a, tj_lg_mul(a, xx, tj_tir_i64(a, p->stride[1])), tj_lg_mul(a, rx, tj_tir_i64(a, p->dilation[1])));
  widx[L->o] = ff;
  widx[L->i] = rc;
  widx[L->kh] = ry;
  widx[L->kw] = rx;
  const tj_tir_expr_t *oidx[4] = {st.iv[0], st.iv[1], st.iv[2], st.iv[3]};
  const tj_tir_expr_t *prod = tj_lg_mul(a, tj_lg_cast(a, p->out_dtype, tj_lg_load(a, pad, 4, pidx)),
                                        tj_lg_cast(a, p->out_dtype, tj_lg_load(a, weight, 4, widx)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 4, oidx);
  const tj_tir_stmt_t *init = tj_lg_store(a, out, 4, oidx, tj_lg_zero(a, p->out_dtype));
  const tj_tir_stmt_t *body = tj_lg_store(a, out, 4, oidx, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL);
  tj_lg_stage_end(&te, &st, init, body);
  return tj_lg_te_finish(&te, "conv2d", out_sinfo, out_expr);
}

tj_status_t *tj_legalize_conv2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  const tj_sinfo_t *ws = tj_lg_arg_sinfo(ctx->arena, call->call.args[1]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(ws) || ds->tensor.ndim != 4 || ws->tensor.ndim != 4) return NULL;
  conv_params_t p;
  if (!read_params(call, ds->tensor.dtype, &p)) return NULL;
  return emit_conv(ctx, call, &p, out_expr);
}
