/* Reading Relax call arguments and operator attrs for the legalizers. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "transforms/legalize/legalize.h"

const tj_sinfo_t *tj_lg_arg_sinfo(tj_arena_t *a, const tj_rx_expr_t *arg) {
  if (!arg) return NULL;
  if (arg->sinfo) return arg->sinfo;
  if (arg->kind == TJ_RX_CONSTANT)
    return tj_sinfo_tensor_static(a, arg->constant.dtype, arg->constant.ndim, arg->constant.shape);
  if (arg->kind == TJ_RX_PRIM_VALUE) return tj_sinfo_prim(a, arg->prim_value.value->dtype, arg->prim_value.value);
  return NULL;
}

bool tj_lg_tensor_known(const tj_sinfo_t *s) {
  return tj_sinfo_is_tensor(s) && !tj_dtype_is_void(s->tensor.dtype) && s->tensor.ndim >= 0 &&
         (s->tensor.ndim == 0 || s->tensor.shape != NULL);
}

/* Reads element 0 of constant data as a double / int64. */
static bool read_scalar(const tj_rx_expr_t *c, double *out_f, int64_t *out_i) {
  const void *p = c->constant.data;
  tj_dtype_t d = c->constant.dtype;
  if (!p || c->constant.nbytes < tj_dtype_bytes(d)) return false;
  if (d.code == TJ_DT_BFLOAT) {
    uint16_t b;
    memcpy(&b, p, 2);
    *out_f = tj_bfloat_to_float(b);
    return true;
  }
  if (d.code == TJ_DT_FLOAT) {
    if (d.bits == 16) {
      uint16_t h;
      memcpy(&h, p, 2);
      *out_f = tj_half_to_float(h);
    } else if (d.bits == 32) {
      float f;
      memcpy(&f, p, 4);
      *out_f = f;
    } else if (d.bits == 64) {
      memcpy(out_f, p, 8);
    } else {
      return false;
    }
    return true;
  }
  if (d.code == TJ_DT_INT || d.code == TJ_DT_UINT || d.code == TJ_DT_BOOL) {
    bool u = d.code != TJ_DT_INT;
    int bytes = d.code == TJ_DT_BOOL ? 1 : d.bits / 8;
    int64_t v = 0;
    if (bytes == 1) v = u ? (int64_t)*(const uint8_t *)p : (int64_t)*(const int8_t *)p;
    else if (bytes == 2) { int16_t s; uint16_t w; memcpy(&s, p, 2); memcpy(&w, p, 2); v = u ? w : s; }
    else if (bytes == 4) { int32_t s; uint32_t w; memcpy(&s, p, 4); memcpy(&w, p, 4); v = u ? (int64_t)w : s; }
    else if (bytes == 8) memcpy(&v, p, 8);
    else return false;
    *out_i = v;
    return true;
  }
  return false;
}

const tj_tir_expr_t *tj_lg_scalar_const(tj_arena_t *a, const tj_rx_expr_t *arg) {
  if (!arg || arg->kind != TJ_RX_CONSTANT || arg->constant.ndim != 0) return NULL;
  double f = 0;
  int64_t i = 0;
  if (!read_scalar(arg, &f, &i)) return NULL;
  tj_dtype_t d = arg->constant.dtype;
  return tj_dtype_is_floating(d) ? tj_tir_float(a, d, f) : tj_tir_int(a, d, i);
}

const tj_sinfo_t *tj_lg_call_sinfo(const tj_rx_expr_t *call, const tj_sinfo_t *fallback) {
  const tj_sinfo_t *s = call->sinfo;
  if (tj_lg_tensor_known(s) && fallback && tj_sinfo_is_tensor(fallback) && s->tensor.ndim == fallback->tensor.ndim &&
      tj_dtype_eq(s->tensor.dtype, fallback->tensor.dtype))
    return s;
  return fallback;
}

bool tj_lg_axis(int64_t axis, int ndim, int *out_axis) {
  if (axis < 0) axis += ndim;
  if (axis < 0 || axis >= ndim) return false;
  *out_axis = (int)axis;
  return true;
}

int tj_lg_attr_ints(const tj_attrs_t *attrs, const char *key, int64_t *out, int max_n) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  if (!v) return -1;
  if (v->kind == TJ_ATTR_INT) {
    if (max_n < 1) return -1;
    out[0] = v->i;
    return 1;
  }
  if (v->kind != TJ_ATTR_LIST || v->list.n > max_n) return -1;
  for (int i = 0; i < v->list.n; i++) {
    if (v->list.items[i].kind != TJ_ATTR_INT) return -1;
    out[i] = v->list.items[i].i;
  }
  return v->list.n;
}

tj_dtype_t tj_lg_attr_dtype(const tj_attrs_t *attrs, const char *key) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  tj_dtype_t d = TJ_VOID;
  if (!v) return d;
  if (v->kind == TJ_ATTR_DTYPE) return v->dtype;
  if (v->kind == TJ_ATTR_STR && v->s[0] && !tj_dtype_parse(v->s, &d)) return TJ_VOID;
  return d;
}

const tj_tir_expr_t *tj_lg_limit_value(tj_arena_t *a, tj_dtype_t d, bool highest) {
  if (tj_dtype_is_floating(d)) {
    double m = tj_dtype_float_max(d);
    return tj_tir_float(a, d, highest ? m : -m);
  }
  if (d.code == TJ_DT_UINT) {
    uint64_t top = d.bits >= 63 ? (uint64_t)INT64_MAX : ((uint64_t)1 << d.bits) - 1;
    return tj_tir_int(a, d, highest ? (int64_t)top : 0);
  }
  int64_t top = d.bits >= 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (d.bits - 1)) - 1);
  return tj_tir_int(a, d, highest ? top : -top - 1);
}
