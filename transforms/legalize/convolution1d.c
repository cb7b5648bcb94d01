/* R.nn.conv1d → topi.nn.conv1d (`conv1d`): blocks `pad_temp` (always present, a plain
 * copy without padding) and `conv1d_<layout>` / `group_conv1d_<layout>`, as conv2d
 * (convolution.c) with the one spatial dim W. Iterators: nn, ff, yy in data-layout
 * order, then rc and ry in the order C and W appear in the data layout (NCW: rc, ry;
 * NWC: ry, rc). The accumulation runs in out_dtype (casts of both operands). */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct conv1d_params {
  int n, c, w;  /* positions in the data layout */
  int o, i, kw; /* positions in the kernel layout */
  int64_t stride, dilation, pad[2], groups;
  tj_dtype_t out_dtype;
  const char *data_layout;
} conv1d_params_t;

static int pos(const char *s, char ch) {
  const char *p = strchr(s, ch);
  return p ? (int)(p - s) : -1;
}

static bool read_params(const tj_rx_expr_t *call, tj_dtype_t data_dtype, conv1d_params_t *p) {
  const tj_attrs_t *at = call->call.attrs;
  p->data_layout = tj_attrs_get_str(at, "data_layout", "NCW");
  const char *kl = tj_attrs_get_str(at, "kernel_layout", "OIW");
  const char *ol = tj_attrs_get_str(at, "out_layout", p->data_layout);
  if (!ol[0]) ol = p->data_layout;
  if (strcmp(ol, p->data_layout) != 0 || strlen(p->data_layout) != 3 || strlen(kl) != 3) return false;
  p->n = pos(p->data_layout, 'N'), p->c = pos(p->data_layout, 'C'), p->w = pos(p->data_layout, 'W');
  p->o = pos(kl, 'O'), p->i = pos(kl, 'I'), p->kw = pos(kl, 'W');
  if (p->n < 0 || p->c < 0 || p->w < 0 || p->o < 0 || p->i < 0 || p->kw < 0) return false;
  int64_t v[2] = {0, 0};
  p->stride = tj_lg_attr_ints(at, "strides", v, 1) >= 1 ? v[0] : 1;
  p->dilation = tj_lg_attr_ints(at, "dilation", v, 1) >= 1 ? v[0] : 1;
  int n = tj_lg_attr_ints(at, "padding", v, 2);
  p->pad[0] = n >= 1 ? v[0] : 0;
  p->pad[1] = n == 2 ? v[1] : p->pad[0];
  p->groups = tj_attrs_get_int(at, "groups", 1);
  p->out_dtype = tj_lg_attr_dtype(at, "out_dtype");
  if (tj_dtype_is_void(p->out_dtype)) p->out_dtype = data_dtype;
  return p->groups >= 1 && p->stride >= 1 && p->dilation >= 1;
}

/* pad_temp: W padded by (left, right); the guard is written as TVM's simplifier
 * leaves it (`left <= v` when left > 0, `v < W + left` when right > 0). */
static const tj_buffer_t *emit_pad(tj_lg_te_t *te, const tj_buffer_t *data, const conv1d_params_t *p) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *shape[3] = {data->shape[0], data->shape[1], data->shape[2]};
  shape[p->w] = tj_lg_add(a, tj_lg_add(a, data->shape[p->w], tj_tir_i64(a, p->pad[0])), tj_tir_i64(a, p->pad[1]));
  const tj_buffer_t *pad = tj_lg_alloc(te, "pad_temp", data->dtype, 3, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(te, &st, "pad_temp", 3, shape, "i");
  if (te->failed || !pad) return NULL;
  const tj_tir_expr_t *idx[3] = {st.iv[0], st.iv[1], st.iv[2]}, *guard = NULL, *v = st.iv[p->w];
  if (p->pad[0] || p->pad[1]) idx[p->w] = tj_lg_sub(a, v, tj_tir_i64(a, p->pad[0]));
  if (p->pad[0] > 0) guard = tj_tir_binary(a, TJ_TIR_LE, tj_tir_i64(a, p->pad[0]), v);
  if (p->pad[1] > 0) {
    const tj_tir_expr_t *t = tj_tir_binary(a, TJ_TIR_LT, v, tj_lg_add(a, data->shape[p->w], tj_tir_i64(a, p->pad[0])));
    guard = guard ? tj_tir_binary(a, TJ_TIR_AND, guard, t) : t;
  }
  const tj_tir_expr_t *value = tj_lg_load(a, data, 3, idx);
  if (guard && value) {
    const tj_tir_expr_t *args[3] = {guard, value, tj_lg_zero(a, data->dtype)};
    value = tj_tir_call(a, data->dtype, "tir.if_then_else", 3, args);
  }
  tj_lg_stage_end(te, &st, NULL, tj_lg_store(a, pad, 3, st.iv, value));
  return pad;
}

/* Output struct info: the call's, except that a symbolic width with stride 1 and
 * dilation 1 is written as TVM's simplifier prints it (`w + 1 - kw`). */
static const tj_sinfo_t *out_sinfo(tj_arena_t *a, const tj_rx_expr_t *call, const conv1d_params_t *p) {
  const tj_sinfo_t *s = call->sinfo;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  const tj_tir_expr_t *in = ds->tensor.shape[p->w], *k = ws->tensor.shape[p->kw];
  if (p->stride != 1 || p->dilation != 1 || (tj_tir_is_const_int(in, NULL) && tj_tir_is_const_int(k, NULL))) return s;
  int64_t pads = p->pad[0] + p->pad[1], iv, kv;
  const tj_tir_expr_t *w;
  if (tj_tir_is_const_int(k, &kv)) {
    int64_t c = pads + 1 - kv;
    w = c > 0   ? tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, c))
        : c < 0 ? tj_tir_binary(a, TJ_TIR_SUB, in, tj_tir_i64(a, -c))
                : in;
  } else {
    const tj_tir_expr_t *head = tj_tir_is_const_int(in, &iv)
                                    ? tj_tir_i64(a, iv + pads + 1)
                                    : tj_tir_binary(a, TJ_TIR_ADD, in, tj_tir_i64(a, pads + 1));
    w = tj_tir_binary(a, TJ_TIR_SUB, head, k);
  }
  const tj_tir_expr_t *dims[3] = {s->tensor.shape[0], s->tensor.shape[1], s->tensor.shape[2]};
  dims[p->w] = w;
  return tj_sinfo_tensor(a, s->tensor.dtype, 3, dims);
}

/* The reduction block, accumulating pad_temp · weight into out. */
static void emit_reduce(tj_lg_te_t *te, const conv1d_params_t *p, const tj_buffer_t *pad, const tj_buffer_t *weight,
                        const tj_buffer_t *out, int64_t c_static, int64_t o_static) {
  tj_arena_t *a = te->arena;
  bool grouped = p->groups > 1;
  const tj_tir_expr_t *ext[5];
  tj_iter_kind_t kinds[5] = {TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_SPATIAL, TJ_ITER_REDUCE, TJ_ITER_REDUCE};
  const char *names[5];
  const char *sp[3];
  sp[p->n] = "nn", sp[p->c] = "ff", sp[p->w] = "yy";
  for (int d = 0; d < 3; d++) ext[d] = out->shape[d], names[d] = sp[d];
  int rc_slot = p->c < p->w ? 3 : 4, ry_slot = 7 - rc_slot;
  ext[rc_slot] = grouped ? tj_tir_i64(a, c_static / p->groups) : pad->shape[p->c];
  ext[ry_slot] = weight->shape[p->kw];
  names[rc_slot] = "rc", names[ry_slot] = "ry";
  tj_lg_stage_t st;
  tj_lg_stage_begin(te, &st, out->name, 5, ext, kinds, names);
  if (te->failed) return;
  const tj_tir_expr_t *ff = st.iv[p->c], *rc = st.iv[rc_slot], *ry = st.iv[ry_slot], *chan = rc;
  if (grouped)
    chan = tj_lg_add(a,
                     tj_lg_mul(a, tj_lg_floordiv(a, ff, tj_tir_i64(a, o_static / p->groups)),
                               tj_tir_i64(a, c_static / p->groups)),
                     rc);
  const tj_tir_expr_t *pidx[3], *widx[3], *oidx[3] = {st.iv[0], st.iv[1], st.iv[2]};
  pidx[p->n] = st.iv[p->n];
  pidx[p->c] = chan;
  pidx[p->w] =
      tj_lg_add(a, tj_lg_mul(a, st.iv[p->w], tj_tir_i64(a, p->stride)), tj_lg_mul(a, ry, tj_tir_i64(a, p->dilation)));
  widx[p->o] = ff, widx[p->i] = rc, widx[p->kw] = ry;
  const tj_tir_expr_t *prod = tj_lg_mul(a, tj_lg_cast(a, p->out_dtype, tj_lg_load(a, pad, 3, pidx)),
                                        tj_lg_cast(a, p->out_dtype, tj_lg_load(a, weight, 3, widx)));
  const tj_tir_expr_t *acc = tj_lg_load(a, out, 3, oidx);
  tj_lg_stage_end(te, &st, tj_lg_store(a, out, 3, oidx, tj_lg_zero(a, p->out_dtype)),
                  tj_lg_store(a, out, 3, oidx, acc && prod ? tj_tir_binary(a, TJ_TIR_ADD, acc, prod) : NULL));
}

tj_status_t *tj_legalize_conv1d(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *ds = tj_lg_arg_sinfo(a, call->call.args[0]), *ws = tj_lg_arg_sinfo(a, call->call.args[1]);
  if (!tj_lg_tensor_known(ds) || !tj_lg_tensor_known(ws) || ds->tensor.ndim != 3 || ws->tensor.ndim != 3 ||
      !tj_lg_tensor_known(call->sinfo))
    return NULL;
  conv1d_params_t p;
  if (!read_params(call, ds->tensor.dtype, &p)) return NULL;
  int64_t c_static = 0, o_static = 0;
  bool static_channels = tj_tir_is_const_int(ds->tensor.shape[p.c], &c_static) &&
                         tj_tir_is_const_int(ws->tensor.shape[p.o], &o_static);
  /* TVM declines grouped convolutions whose channels are symbolic */
  if (p.groups > 1 && (!static_channels || c_static % p.groups || o_static % p.groups)) return NULL;
  const tj_sinfo_t *os = out_sinfo(a, call, &p);
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *data = tj_lg_placeholder(&te, call->call.args[0]);
  const tj_buffer_t *weight = tj_lg_placeholder(&te, call->call.args[1]);
  if (!data || !weight) return tj_lg_te_finish(&te, "conv1d", NULL, out_expr);
  const tj_buffer_t *pad = emit_pad(&te, data, &p);
  const tj_tir_expr_t *oshape[3];
  for (int d = 0; d < 3; d++) oshape[d] = tj_lg_shape_expr(&te, os->tensor.shape[d]);
  char lower[4];
  for (int i = 0; i < 3; i++) lower[i] = (char)(p.data_layout[i] + ('a' - 'A'));
  lower[3] = '\0';
  const char *name = tj_arena_printf(a, "%sconv1d_%s", p.groups > 1 ? "group_" : "", lower);
  const tj_buffer_t *out = tj_lg_output(&te, name, p.out_dtype, 3, oshape);
  if (!pad || !out) return tj_lg_te_finish(&te, "conv1d", NULL, out_expr);
  emit_reduce(&te, &p, pad, weight, out, c_static, o_static);
  return tj_lg_te_finish(&te, "conv1d", te.failed ? NULL : os, out_expr);
}
