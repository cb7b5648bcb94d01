/* R.nn.conv1d / R.nn.conv2d / R.nn.conv3d → topi.nn.conv1d / topi.nn.conv (`conv1d` /
 * `conv2d` / `conv3d`), docs/semantics.md §2.2; topi.nn.conv1d forwards to the generic
 * `conv`, which is one compute over the spatial rank, and so is this file.
 *
 * Two blocks: `pad_temp` (always present, a plain copy when there is no padding)
 * and `conv<k>d_<layout>` / `group_conv<k>d_<layout>`. Any data layout made of N, C
 * and the spatial letters and any kernel layout made of O, I and the spatial letters
 * are handled the way topi's generic `conv` does: the spatial dims are taken in the
 * order they appear in the layout; iterators follow the data layout (nn, ff, then
 * yy, xx, zz for the spatial dims in layout order), reductions rc, ry, rx, rz are
 * ordered as C and the spatial dims appear in the data layout (NCHW: rc, ry, rx;
 * NHWC: ry, rx, rc). The pad guard is written in the form TVM's
 * simplifier leaves it: `before <= v` only when before > 0, `v < extent + before`
 * only when after > 0, conjunction left to right over the padded dims. */
#include <string.h>

#include "transforms/legalize/legalize.h"

#define MAX_SP 3

typedef struct conv_layout {
  int nsp;                 /* spatial dims: 1, 2 or 3 */
  int n, c, sp[MAX_SP];    /* positions of N, C and the spatial dims in the data layout */
  int o, i, ksp[MAX_SP];   /* positions of O, I and the spatial dims in the kernel layout */
} conv_layout_t;

static int find_char(const char *s, char ch) {
  const char *p = strchr(s, ch);
  return p ? (int)(p - s) : -1;
}

/* Positions of the spatial letters: the letters other than `a` and `b`, in order. */
static bool spatial_positions(const char *layout, int nsp, char a, char b, int *pos) {
  int k = 0;
  for (int i = 0; layout[i]; i++) {
    if (layout[i] == a || layout[i] == b) continue;
    if (k == nsp) return false;
    pos[k++] = i;
  }
  return k == nsp;
}

static bool parse_layouts(const char *data, const char *kernel, int nsp, conv_layout_t *out) {
  if ((int)strlen(data) != nsp + 2 || (int)strlen(kernel) != nsp + 2) return false;
  out->nsp = nsp;
  out->n = find_char(data, 'N');
  out->c = find_char(data, 'C');
  out->o = find_char(kernel, 'O');
  out->i = find_char(kernel, 'I');
  if (out->n < 0 || out->c < 0 || out->o < 0 || out->i < 0) return false;
  return spatial_positions(data, nsp, 'N', 'C', out->sp) && spatial_positions(kernel, nsp, 'O', 'I', out->ksp);
}

typedef struct conv_params {
  int64_t stride[MAX_SP], dilation[MAX_SP], pad[2 * MAX_SP]; /* pad: the befores, then the afters */
  int64_t groups;
  tj_dtype_t out_dtype;
  conv_layout_t lay;
  const char *data_layout;
} conv_params_t;

/* n values of an int list attr: none gives `dflt`, one is repeated. */
static bool read_sizes(const tj_attrs_t *at, const char *key, int n, int64_t dflt, int64_t *out) {
  int64_t v[2 * MAX_SP];
  int got = tj_lg_attr_ints(at, key, v, n);
  if (got != 0 && got != 1 && got != n) return false;
  for (int i = 0; i < n; i++) out[i] = got == 0 ? dflt : got == 1 ? v[0] : v[i];
  return true;
}

static bool read_params(const tj_rx_expr_t *call, tj_dtype_t data_dtype, int nsp, conv_params_t *p) {
  static const char *const dflt_data[] = {"", "NCW", "NCHW", "NCDHW"}, *const dflt_kernel[] = {"", "OIW", "OIHW", "OIDHW"},
                           *const dflt_last[] = {"", "WIO", "HWIO", "DHWIO"};
  const tj_attrs_t *at = call->call.attrs;
  p->data_layout = tj_attrs_get_str(at, "data_layout", dflt_data[nsp]);
  const char *kernel_layout = tj_attrs_get_str(at, "kernel_layout", dflt_kernel[nsp]);
  const char *out_layout = tj_attrs_get_str(at, "out_layout", p->data_layout);
  if (!out_layout[0]) out_layout = p->data_layout;
  /* TVM keeps the op when out_layout differs from data_layout. */
  if (strcmp(out_layout, p->data_layout) != 0) return false;
  if (!kernel_layout[0]) kernel_layout = find_char(p->data_layout, 'C') < 2 ? dflt_kernel[nsp] : dflt_last[nsp];
  if (!parse_layouts(p->data_layout, kernel_layout, nsp, &p->lay)) return false;
  if (!read_sizes(at, "strides", nsp, 1, p->stride) || !read_sizes(at, "dilation", nsp, 1, p->dilation)) return false;
  int64_t v[2 * MAX_SP];
  int n = tj_lg_attr_ints(at, "padding", v, 2 * nsp);
  for (int i = 0; i < 2 * nsp; i++) {
    if (n == 0 || n == 1) p->pad[i] = n ? v[0] : 0;
    else if (n == nsp) p->pad[i] = v[i % nsp];
    else if (n == 2 * nsp) p->pad[i] = v[i];
    else return false;
  }
  p->groups = tj_attrs_get_int(at, "groups", 1);
  if (p->groups < 1) return false;
  p->out_dtype = tj_lg_attr_dtype(at, "out_dtype");
  if (tj_dtype_is_void(p->out_dtype)) p->out_dtype = data_dtype;
  return true;
}

/* pad_temp: data padded by (before, after) on the spatial dims. */
static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *data, const conv_params_t *p) {
  tj_arena_t *a = te->arena;
  int nd = data->ndim, nsp = p->lay.nsp;
  int64_t before[MAX_SP + 2] = {0}, after[MAX_SP + 2] = {0};
  for (int s = 0; s < nsp; s++) {
    before[p->lay.sp[s]] = p->pad[s];
    after[p->lay.sp[s]] = p->pad[nsp + s];
  }
  const tj_tir_expr_t *shape[MAX_SP + 2];
  for (int d = 0; d < nd; d++)
    shape[d] = tj_lg_add(a, tj_lg_add(a, data->shape[d], tj_tir_i64(a, before[d])), tj_tir_i64(a, after[d]));
  const tj_buffer_t *pad = tj_lg_alloc(te, "pad_temp", data->dtype, nd, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "pad_temp", nd, shape, "i");
  const tj_tir_expr_t *idx[MAX_SP + 2];
  const tj_tir_expr_t *guard = NULL;
  for (int d = 0; d < nd; d++) {
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
  const tj_tir_expr_t *value = tj_lg_load(a, data, nd, idx);
  if (guard && value) {
    const tj_tir_expr_t *args[3] = {guard, value, tj_lg_zero(a, data->dtype)};
    value = tj_tir_call(a, data->dtype, "tir.if_then_else", 3, args);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, pad, nd, st.iv, value));
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
  const conv_layout_t *L = &p->lay;
  int nd = L->nsp + 2;
  const tj_sinfo_t *s = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, p->out_dtype, nd, fallback));
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  const tj_tir_expr_t *dims[MAX_SP + 2];
  bool changed = false;
  for (int d = 0; d < nd; d++) dims[d] = s->tensor.shape[d];
  for (int sp = 0; sp < L->nsp; sp++) {
    int d = L->sp[sp];
    const tj_tir_expr_t *in = ds->tensor.shape[d], *k = ws->tensor.shape[L->ksp[sp]];
    if (p->stride[sp] != 1 || p->dilation[sp] != 1 || (tj_tir_is_const_int(in, NULL) && tj_tir_is_const_int(k, NULL)))
      continue;
    dims[d] = canonical_extent(a, in, k, p->pad[sp] + p->pad[sp + L->nsp]);
    changed = true;
  }
  return changed ? tj_sinfo_tensor(a, s->tensor.dtype, nd, dims) : s;
}

/* The conv block's iterators: the output dims in data-layout order (nn, ff, yy, xx,
 * zz), then rc and the kernel dims (ry, rx, rz) ordered as C and the spatial dims
 * appear in the data layout. slot_of[j] is the iterator of reduction j (rc first). */
static void conv_iters(const conv_layout_t *L, const tj_tir_expr_t *const *oshape,
                       const tj_tir_expr_t *const *red_ext, const tj_tir_expr_t **ext, tj_iter_kind_t *kinds,
                       const char **names, int *slot_of) {
  static const char *const sp_name[MAX_SP] = {"yy", "xx", "zz"}, *const red_name[MAX_SP + 1] = {"rc", "ry", "rx", "rz"};
  int nd = L->nsp + 2, nred = L->nsp + 1;
  names[L->n] = "nn";
  names[L->c] = "ff";
  for (int s = 0; s < L->nsp; s++) names[L->sp[s]] = sp_name[s];
  for (int d = 0; d < nd; d++) {
    ext[d] = oshape[d];
    kinds[d] = TJ_ITER_SPATIAL;
  }
  int red_pos[MAX_SP + 1];
  red_pos[0] = L->c;
  for (int s = 0; s < L->nsp; s++) red_pos[1 + s] = L->sp[s];
  for (int k = 0; k < nred; k++) {
    int rank = 0;
    for (int j = 0; j < nred; j++)
      if (red_pos[j] < red_pos[k]) rank++;
    slot_of[k] = nd + rank;
    ext[nd + rank] = red_ext[k];
    kinds[nd + rank] = TJ_ITER_REDUCE;
    names[nd + rank] = red_name[k];
  }
}

static tj_status_t *emit_conv(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const conv_params_t *p,
                              const tj_rx_expr_t **out_expr) {
  tj_arena_t *a = ctx->arena;
  const conv_layout_t *L = &p->lay;
  int nsp = L->nsp, nd = nsp + 2;
  const char *fname = nsp == 3 ? "conv3d" : nsp == 2 ? "conv2d" : "conv1d";
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *data = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *weight = tj_lg_placeholder(&te, call->call.args[1]);
  if (!data || !weight || data->ndim != nd || weight->ndim != nd) return NULL;
  const tj_tir_expr_t *C = data->shape[L->c], *O = weight->shape[L->o];
  int64_t c_static = 0, o_static = 0;
  bool static_channels = tj_tir_is_const_int(C, &c_static) && tj_tir_is_const_int(O, &o_static);
  if (p->groups > 1 && (!static_channels || c_static % p->groups || o_static % p->groups)) return NULL;

  const tj_buffer_t *pad = emit_pad(&te, data, p);
  if (!pad) return tj_lg_te_finish(&te, fname, NULL, out_expr);
  /* output shape in the data layout */
  const tj_tir_expr_t *oshape[MAX_SP + 2];
  oshape[L->n] = data->shape[L->n];
  oshape[L->c] = O;
  for (int s = 0; s < nsp; s++)
    oshape[L->sp[s]] = out_extent(a, data->shape[L->sp[s]], weight->shape[L->ksp[s]], p->pad[s], p->pad[nsp + s],
                                  p->dilation[s], p->stride[s]);
  const tj_sinfo_t *out_sinfo = conv_out_sinfo(a, call, p, oshape);
  for (int d = 0; d < nd; d++) oshape[d] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[d]);

  bool grouped = p->groups > 1;
  char lower[MAX_SP + 3];
  for (int i = 0; i < nd; i++)
    lower[i] = (char)(p->data_layout[i] >= 'A' && p->data_layout[i] <= 'Z' ? p->data_layout[i] + 32 : p->data_layout[i]);
  lower[nd] = '\0';
  const char *name = tj_arena_printf(a, "%sconv%dd_%s", grouped ? "group_" : "", nsp, lower);
  const tj_buffer_t *out = tj_lg_output(&te, name, p->out_dtype, nd, oshape);

  const tj_tir_expr_t *ext[2 * MAX_SP + 3], *red_ext[MAX_SP + 1];
  tj_iter_kind_t kinds[2 * MAX_SP + 3];
  const char *names[2 * MAX_SP + 3];
  int slot_of[MAX_SP + 1];
  red_ext[0] = grouped ? tj_tir_i64(a, c_static / p->groups) : C;
  for (int s = 0; s < nsp; s++) red_ext[1 + s] = weight->shape[L->ksp[s]];
  conv_iters(L, oshape, red_ext, ext, kinds, names, slot_of);
  tj_lg_stage_t st;
  tj_lg_stage_begin(&te, &st, name, nd + nsp + 1, ext, kinds, names);
  const tj_tir_expr_t *ff = st.iv[L->c], *rc = st.iv[slot_of[0]];
  const tj_tir_expr_t *chan = rc;
  if (grouped)
    chan = tj_lg_add(a, tj_lg_mul(a, tj_lg_floordiv(a, ff, tj_tir_i64(a, o_static / p->groups)),
                                  tj_tir_i64(a, c_static / p->groups)),
                     rc);
  const tj_tir_expr_t *pidx[MAX_SP + 2], *widx[MAX_SP + 2], *oidx[MAX_SP + 2];
  pidx[L->n] = st.iv[L->n];
  pidx[L->c] = chan;
  widx[L->o] = ff;
  widx[L->i] = rc;
  for (int s = 0; s < nsp; s++) {
    const tj_tir_expr_t *r = st.iv[slot_of[1 + s]];
    pidx[L->sp[s]] = tj_lg_add(a, tj_lg_mul(a, st.iv[L->sp[s]], tj_tir_i64(a, p->stride[s])),
                               tj_lg_mul(a, r, tj_tir_i64(a, p->dilation[s])));
    widx[L->ksp[s]] = r;
  }
  for (int d = 0; d < nd; d++) oidx[d] = st.iv[d];
  const tj_tir_expr_t *prod = tj_lg_mul(a, tj_lg_cast(a, p->out_dtype, tj_lg_load(a, pad, nd, pidx)),
                                        tj_lg_cast(a, p->out_dtype, tj_lg_load(a, weight, nd, widx)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, nd, oidx);
  const tj_tir_stmt_t *init = tj_lg_store(a, out, nd, oidx, tj_lg_zero(a, p->out_dtype));
  const tj_tir_stmt_t *body = tj_lg_store(a, out, nd, oidx, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL);
  tj_lg_stage_end(&te, &st, init, body);
  return tj_lg_te_finish(&te, fname, out_sinfo, out_expr);
}

static tj_status_t *legalize_conv(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, int nsp, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  const tj_sinfo_t *ws = tj_lg_arg_sinfo(ctx->arena, call->call.args[1]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(ws) || ds->tensor.ndim != nsp + 2 || ws->tensor.ndim != nsp + 2)
    return NULL;
  conv_params_t p;
  if (!read_params(call, ds->tensor.dtype, nsp, &p)) return NULL;
  return emit_conv(ctx, call, &p, out_expr);
}

tj_status_t *tj_legalize_conv1d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_conv(ctx, call, 1, out_expr);
}

tj_status_t *tj_legalize_conv2d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_conv(ctx, call, 2, out_expr);
}

tj_status_t *tj_legalize_conv3d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return legalize_conv(ctx, call, 3, out_expr);
}
