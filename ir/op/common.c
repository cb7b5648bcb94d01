/* Helpers the op families share: attr reading and building, struct-info checks,
 * dimension formatting for messages, broadcasting and axis normalisation. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/op/common.h"

tj_status_t *tj_op_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tj_status_t *s = tj_status_newv(TJ_ERR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return s;
}

void tj_attr_builder_add(tj_attr_builder_t *b, const char *key, tj_attr_value_t value) {
  if (b->n == TJ_OP_MAX_ATTRS) return;
  b->keys[b->n] = key;
  b->values[b->n++] = value;
}

tj_status_t *tj_attr_builder_finish(tj_arena_t *arena, const tj_attr_builder_t *b, const tj_attrs_t **out) {
  tj_attrs_t *d = TJ_ARENA_NEW(arena, tj_attrs_t);
  const char **keys = TJ_ARENA_ARRAY(arena, const char *, b->n + 1);
  tj_attr_value_t *values = TJ_ARENA_ARRAY(arena, tj_attr_value_t, b->n + 1);
  if (!d || !keys || !values) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory building attrs");
  for (int i = 0; i < b->n; i++) {
    keys[i] = b->keys[i];
    values[i] = b->values[i];
  }
  d->n = b->n;
  d->keys = keys;
  d->values = values;
  *out = d;
  return NULL;
}

tj_status_t *tj_op_check_attr_names(const char *op, const tj_attrs_t *given, const char *const *valid) {
  if (!given) return NULL;
  for (int i = 0; i < given->n; i++) {
    bool ok = false;
    for (int j = 0; valid[j] && !ok; j++) ok = strcmp(given->keys[i], valid[j]) == 0;
    if (ok) continue;
    char list[256] = "";
    for (int j = 0; valid[j]; j++) {
      if (j) strncat(list, ", ", sizeof list - strlen(list) - 1);
      strncat(list, valid[j], sizeof list - strlen(list) - 1);
    }
    return tj_op_error("%s: unknown attribute '%s' (valid: %s)", op, given->keys[i], list[0] ? list : "none");
  }
  return NULL;
}

static const char *attr_kind_name(tj_attr_kind_t k) {
  switch (k) {
    case TJ_ATTR_NONE: return "None";
    case TJ_ATTR_INT: return "an integer";
    case TJ_ATTR_FLOAT: return "a float";
    case TJ_ATTR_STR: return "a string";
    case TJ_ATTR_LIST: return "a list";
    case TJ_ATTR_DICT: return "a dict";
    case TJ_ATTR_DTYPE: return "a dtype";
    case TJ_ATTR_BUFFER: return "a buffer";
  }
  return "?";
}

tj_status_t *tj_op_read_ints(const char *op, const tj_attrs_t *given, const char *key, int max, int64_t *out,
                             int *out_n) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  *out_n = 0;
  if (!v || v->kind == TJ_ATTR_NONE) return NULL;
  if (v->kind == TJ_ATTR_INT && v->dtype.code != TJ_DT_BOOL) {
    out[0] = v->i;
    *out_n = 1;
    return NULL;
  }
  if (v->kind != TJ_ATTR_LIST) return tj_op_error("%s: '%s' must be a list of integers, got %s", op, key, attr_kind_name(v->kind));
  if (v->list.n > max) return tj_op_error("%s: '%s' has %d values, at most %d allowed", op, key, v->list.n, max);
  for (int i = 0; i < v->list.n; i++) {
    if (v->list.items[i].kind != TJ_ATTR_INT)
      return tj_op_error("%s: '%s' must be a list of integers, item %d is %s", op, key, i,
                         attr_kind_name(v->list.items[i].kind));
    out[i] = v->list.items[i].i;
  }
  *out_n = v->list.n;
  return NULL;
}

tj_status_t *tj_op_read_int(const char *op, const tj_attrs_t *given, const char *key, int64_t dflt, int64_t *out) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) return *out = dflt, NULL;
  if (v->kind != TJ_ATTR_INT) return tj_op_error("%s: '%s' must be an integer, got %s", op, key, attr_kind_name(v->kind));
  *out = v->i;
  return NULL;
}

tj_status_t *tj_op_read_bool(const char *op, const tj_attrs_t *given, const char *key, bool dflt, bool *out) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) return *out = dflt, NULL;
  if (v->kind != TJ_ATTR_INT) return tj_op_error("%s: '%s' must be True or False, got %s", op, key, attr_kind_name(v->kind));
  *out = v->i != 0;
  return NULL;
}

tj_status_t *tj_op_read_float(const char *op, const tj_attrs_t *given, const char *key, double dflt, double *out) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) return *out = dflt, NULL;
  if (v->kind == TJ_ATTR_FLOAT) return *out = v->f, NULL;
  if (v->kind == TJ_ATTR_INT) return *out = (double)v->i, NULL;
  return tj_op_error("%s: '%s' must be a number, got %s", op, key, attr_kind_name(v->kind));
}

tj_status_t *tj_op_read_str(const char *op, const tj_attrs_t *given, const char *key, const char *dflt,
                            const char **out) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) return *out = dflt, NULL;
  if (v->kind != TJ_ATTR_STR) return tj_op_error("%s: '%s' must be a string, got %s", op, key, attr_kind_name(v->kind));
  *out = v->s;
  return NULL;
}

tj_status_t *tj_op_read_dtype(const char *op, const tj_attrs_t *given, const char *key, tj_dtype_t *out) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) return *out = TJ_VOID, NULL;
  if (v->kind == TJ_ATTR_DTYPE) return *out = v->dtype, NULL;
  if (v->kind != TJ_ATTR_STR) return tj_op_error("%s: '%s' must be a dtype string, got %s", op, key, attr_kind_name(v->kind));
  if (v->s[0] == '\0' || strcmp(v->s, "void") == 0) return *out = TJ_VOID, NULL;
  if (!tj_dtype_parse(v->s, out)) return tj_op_error("%s: '%s' is not a data type: \"%s\"", op, key, v->s);
  return NULL;
}

tj_attr_value_t tj_op_int_list(tj_arena_t *arena, int n, const int64_t *values, tj_dtype_t item_dtype) {
  tj_attr_value_t *items = TJ_ARENA_ARRAY(arena, tj_attr_value_t, n > 0 ? n : 1);
  tj_attr_value_t v = {.kind = TJ_ATTR_LIST};
  if (!items) return v; /* the arena records the failure */
  for (int i = 0; i < n; i++) {
    items[i].kind = TJ_ATTR_INT;
    items[i].dtype = item_dtype;
    items[i].i = values[i];
  }
  v.list.n = n;
  v.list.items = items;
  return v;
}

tj_attr_value_t tj_op_dtype_attr(tj_dtype_t dtype) {
  tj_attr_value_t v = {.kind = TJ_ATTR_DTYPE, .dtype = dtype};
  return v;
}

int tj_op_attr_ints(const tj_attrs_t *attrs, const char *key, int64_t *out, int max) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  if (!v || v->kind != TJ_ATTR_LIST) return 0;
  int n = v->list.n < max ? v->list.n : max;
  for (int i = 0; i < n; i++) out[i] = v->list.items[i].i;
  return n;
}

tj_dtype_t tj_op_attr_dtype(const tj_attrs_t *attrs, const char *key) {
  const tj_attr_value_t *v = tj_attrs_get(attrs, key);
  return (v && v->kind == TJ_ATTR_DTYPE) ? v->dtype : TJ_VOID;
}

static const char *sinfo_kind_name(const tj_sinfo_t *s) {
  if (!s) return "nothing";
  switch (s->kind) {
    case TJ_SINFO_OBJECT: return "an Object";
    case TJ_SINFO_PRIM: return "a PrimValue";
    case TJ_SINFO_SHAPE: return "a Shape";
    case TJ_SINFO_TENSOR: return "a Tensor";
    case TJ_SINFO_TUPLE: return "a Tuple";
    case TJ_SINFO_FUNC: return "a function";
  }
  return "?";
}

tj_status_t *tj_op_tensor_arg(const char *op, const tj_rx_expr_t *call, int i, const char *what,
                              const tj_sinfo_t **out) {
  const tj_sinfo_t *s = call->call.args[i]->sinfo;
  if (!tj_sinfo_is_tensor(s)) return tj_op_error("%s: %s must be a tensor, got %s", op, what, sinfo_kind_name(s));
  *out = s;
  return NULL;
}

void tj_op_format_dim(tj_strbuf_t *sb, const tj_tir_expr_t *d) {
  int64_t v;
  if (tj_tir_is_const_int(d, &v)) {
    tj_strbuf_printf(sb, "%lld", (long long)v);
    return;
  }
  switch (d->kind) {
    case TJ_TIR_VAR: tj_strbuf_append(sb, d->var.name); return;
    case TJ_TIR_ADD:
    case TJ_TIR_SUB:
    case TJ_TIR_MUL:
    case TJ_TIR_FLOOR_DIV: {
      const char *op = d->kind == TJ_TIR_ADD ? " + " : d->kind == TJ_TIR_SUB ? " - " : d->kind == TJ_TIR_MUL ? " * " : " // ";
      tj_strbuf_append(sb, "(");
      tj_op_format_dim(sb, d->binary.a);
      tj_strbuf_append(sb, op);
      tj_op_format_dim(sb, d->binary.b);
      tj_strbuf_append(sb, ")");
      return;
    }
    default: tj_strbuf_append(sb, "?"); return;
  }
}

void tj_op_format_shape(tj_strbuf_t *sb, int ndim, const tj_tir_expr_t *const *shape) {
  if (!shape) {
    tj_strbuf_printf(sb, "<%d-d, unknown shape>", ndim);
    return;
  }
  if (ndim == 0) tj_strbuf_append(sb, "scalar");
  for (int i = 0; i < ndim; i++) {
    if (i) tj_strbuf_append(sb, "x");
    tj_op_format_dim(sb, shape[i]);
  }
}

tj_status_t *tj_op_common_dtype(const char *op, tj_dtype_t a, tj_dtype_t b, tj_dtype_t *out) {
  if (tj_dtype_is_void(a) || tj_dtype_is_void(b)) return *out = TJ_VOID, NULL;
  if (!tj_dtype_eq(a, b)) {
    char ba[TJ_DTYPE_BUFSIZE], bb[TJ_DTYPE_BUFSIZE];
    return tj_op_error("%s: operands have different dtypes (%s and %s); insert R.astype to make them equal", op,
                       tj_dtype_str(a, ba), tj_dtype_str(b, bb));
  }
  *out = a;
  return NULL;
}

const char *tj_op_vdevice(const tj_sinfo_t *a, const tj_sinfo_t *b) {
  if (tj_sinfo_is_tensor(a) && a->tensor.vdevice) return a->tensor.vdevice;
  if (tj_sinfo_is_tensor(b) && b->tensor.vdevice) return b->tensor.vdevice;
  return NULL;
}

const tj_sinfo_t *tj_op_tensor_sinfo(tj_arena_t *arena, tj_dtype_t dtype, int ndim, const tj_tir_expr_t *const *shape,
                                     const char *vdevice) {
  const tj_sinfo_t *s = tj_sinfo_tensor(arena, dtype, ndim, shape);
  if (!s || !vdevice) return s;
  tj_sinfo_t *c = TJ_ARENA_NEW(arena, tj_sinfo_t);
  if (!c) return NULL;
  *c = *s;
  c->tensor.vdevice = vdevice;
  return c;
}

static bool is_one(const tj_tir_expr_t *d) {
  int64_t v;
  return tj_tir_is_const_int(d, &v) && v == 1;
}

tj_status_t *tj_op_broadcast(const char *op, tj_arena_t *arena, int n0, const tj_tir_expr_t *const *s0, int n1,
                             const tj_tir_expr_t *const *s1, const tj_tir_expr_t **out_shape, bool *out_known) {
  int n = n0 > n1 ? n0 : n1;
  *out_known = true;
  for (int i = 0; i < n; i++) {
    int i0 = n0 - n + i, i1 = n1 - n + i;
    const tj_tir_expr_t *d0 = i0 >= 0 ? s0[i0] : NULL, *d1 = i1 >= 0 ? s1[i1] : NULL;
    if (!d0 || is_one(d0)) out_shape[i] = d1 ? d1 : d0;
    else if (!d1 || is_one(d1)) out_shape[i] = d0;
    else {
      tj_dim_cmp_t c = tj_op_compare_dims(d0, d1);
      if (c == TJ_DIM_EQUAL) out_shape[i] = d0;
      else if (c == TJ_DIM_UNKNOWN) *out_known = false;
      else {
        tj_strbuf_t sb;
        tj_strbuf_init(&sb);
        tj_strbuf_printf(&sb, "%s: shapes ", op);
        tj_op_format_shape(&sb, n0, s0);
        tj_strbuf_append(&sb, " and ");
        tj_op_format_shape(&sb, n1, s1);
        tj_strbuf_append(&sb, " do not broadcast: ");
        tj_op_format_dim(&sb, d0);
        tj_strbuf_append(&sb, " vs ");
        tj_op_format_dim(&sb, d1);
        tj_strbuf_printf(&sb, " at dim %d of the result (numpy rules: equal, or one of them 1)", i);
        tj_status_t *s = tj_op_error("%s", sb.data ? sb.data : op);
        tj_strbuf_free(&sb);
        return s;
      }
    }
  }
  return NULL;
}

tj_status_t *tj_op_axis(const char *op, int64_t axis, int ndim, int *out) {
  if (axis < -ndim || axis >= ndim)
    return tj_op_error("%s: axis %lld is out of range for a %d-d tensor (valid: %d..%d)", op, (long long)axis, ndim,
                       -ndim, ndim - 1);
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return NULL;
}

const tj_rx_expr_t *tj_op_mixed_set_out_dtype(tj_arena_t *arena, const tj_rx_expr_t *call, tj_dtype_t out_dtype) {
  const tj_attrs_t *attrs = tj_attrs_set(arena, call->call.attrs, "out_dtype", tj_op_dtype_attr(out_dtype));
  return attrs ? tj_rx_call(arena, call->call.callee, call->call.n_args, call->call.args, attrs, 0, NULL) : NULL;
}

tj_status_t *tj_op_add_optional_axes(tj_arena_t *arena, tj_attr_builder_t *b, const char *op, const tj_attrs_t *given,
                                     const char *key, bool list, tj_dtype_t dtype) {
  const tj_attr_value_t *v = tj_attrs_get(given, key);
  if (!v || v->kind == TJ_ATTR_NONE) {
    tj_attr_value_t none = {.kind = TJ_ATTR_NONE};
    tj_attr_builder_add(b, key, none);
    return NULL;
  }
  if (list) {
    int64_t axes[TJ_OP_MAX_NDIM];
    int n;
    TJ_RETURN_IF_ERROR(tj_op_read_ints(op, given, key, TJ_OP_MAX_NDIM, axes, &n));
    tj_attr_builder_add(b, key, tj_op_int_list(arena, n, axes, dtype));
    return NULL;
  }
  int64_t axis;
  TJ_RETURN_IF_ERROR(tj_op_read_int(op, given, key, 0, &axis));
  tj_attr_value_t a = {.kind = TJ_ATTR_INT, .dtype = dtype, .i = axis};
  tj_attr_builder_add(b, key, a);
  return NULL;
}

bool tj_op_layout_is(const char *layout, const char *letters) {
  size_t n = strlen(letters);
  if (strlen(layout) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (!strchr(layout, letters[i])) return false;
  return true;
}

int tj_op_layout_pos(const char *layout, char letter) { return (int)(strchr(layout, letter) - layout); }
