/* Struct-info relations and short formatting (see ir/sinfo.h). The base check follows
 * TVM's StructInfoBaseChecker; where TVM asks its arithmetic analyzer to prove two
 * symbolic dims equal, the linear form of ir/op/shape_arith.c stands in for it
 * (`h - kh + 1` equals `h + 1 - kh`): an unprovable symbolic dim is FAIL_L2, as in TVM. */
#include "ir/sinfo.h"

#include <inttypes.h>
#include <string.h>

#include "ir/op.h"
#include "ir/struct_equal.h"

static tj_sinfo_check_t worst(tj_sinfo_check_t a, tj_sinfo_check_t b) { return a > b ? a : b; }

/* ---------- TIR value equality ---------- */

bool tj_sinfo_prim_expr_equal(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  return tj_struct_equal_tir_expr_ex(a, b, TJ_SEQ_INT_VALUES);
}

/* TVM's PrimValueMatchCheck: equal constants pass, different constants fail L1,
 * anything unproven needs a runtime check. */
static tj_sinfo_check_t value_check(const tj_tir_expr_t *base, const tj_tir_expr_t *derived) {
  if (tj_sinfo_prim_expr_equal(base, derived)) return TJ_SINFO_PASS;
  if (tj_dtype_is_int(base->dtype) && tj_dtype_is_int(derived->dtype) &&
      tj_op_compare_dims(base, derived) == TJ_DIM_EQUAL)
    return TJ_SINFO_PASS;
  int64_t x, y;
  if (tj_tir_is_const_int(base, &x) && tj_tir_is_const_int(derived, &y)) return TJ_SINFO_FAIL_L1;
  return TJ_SINFO_FAIL_L2;
}

static tj_sinfo_check_t dims_check(int ndim, const tj_tir_expr_t *const *base, const tj_tir_expr_t *const *derived) {
  if (!base) return TJ_SINFO_PASS;
  if (!derived) return TJ_SINFO_FAIL_L2;
  tj_sinfo_check_t r = TJ_SINFO_PASS;
  for (int i = 0; i < ndim; i++) r = worst(r, value_check(base[i], derived[i]));
  return r;
}

static tj_sinfo_check_t ndim_check(int base, int derived) {
  if (base < 0 || base == derived) return TJ_SINFO_PASS;
  return derived < 0 ? TJ_SINFO_FAIL_L1 : TJ_SINFO_FAIL_L0;
}

static tj_sinfo_check_t dtype_check(tj_dtype_t base, tj_dtype_t derived) {
  if (tj_dtype_is_void(base) || tj_dtype_eq(base, derived)) return TJ_SINFO_PASS;
  return tj_dtype_is_void(derived) ? TJ_SINFO_FAIL_L1 : TJ_SINFO_FAIL_L0;
}

static tj_sinfo_check_t tensor_check(const tj_sinfo_t *b, const tj_sinfo_t *d) {
  tj_sinfo_check_t r = worst(dtype_check(b->tensor.dtype, d->tensor.dtype), ndim_check(b->tensor.ndim, d->tensor.ndim));
  if (r == TJ_SINFO_FAIL_L0) return r;
  if (b->tensor.vdevice && (!d->tensor.vdevice || strcmp(b->tensor.vdevice, d->tensor.vdevice) != 0))
    r = worst(r, d->tensor.vdevice ? TJ_SINFO_FAIL_L0 : TJ_SINFO_FAIL_L1);
  if (b->tensor.ndim >= 0 && b->tensor.ndim == d->tensor.ndim)
    r = worst(r, dims_check(b->tensor.ndim, b->tensor.shape, d->tensor.shape));
  else if (b->tensor.shape)
    r = worst(r, TJ_SINFO_FAIL_L1);
  return r;
}

static tj_sinfo_check_t shape_check(const tj_sinfo_t *b, const tj_sinfo_t *d) {
  tj_sinfo_check_t r = ndim_check(b->shape.ndim, d->shape.ndim);
  if (r == TJ_SINFO_FAIL_L0) return r;
  if (b->shape.ndim >= 0 && b->shape.ndim == d->shape.ndim)
    r = worst(r, dims_check(b->shape.ndim, b->shape.values, d->shape.values));
  else if (b->shape.values)
    r = worst(r, TJ_SINFO_FAIL_L1);
  return r;
}

static tj_sinfo_check_t prim_check(const tj_sinfo_t *b, const tj_sinfo_t *d) {
  tj_sinfo_check_t r = dtype_check(b->prim.dtype, d->prim.dtype);
  if (r == TJ_SINFO_FAIL_L0 || !b->prim.value) return r;
  if (!d->prim.value) return worst(r, TJ_SINFO_FAIL_L2);
  return worst(r, value_check(b->prim.value, d->prim.value));
}

static tj_sinfo_check_t func_check(const tj_sinfo_t *b, const tj_sinfo_t *d) {
  /* A pure callee can't be replaced by an impure one. */
  tj_sinfo_check_t r = (b->func.pure && !d->func.pure) ? TJ_SINFO_FAIL_L0 : TJ_SINFO_PASS;
  if (b->func.n_params < 0) return worst(r, tj_sinfo_base_check(b->func.ret, d->func.ret));
  if (d->func.n_params < 0) return worst(r, TJ_SINFO_FAIL_L1);
  if (b->func.n_params != d->func.n_params) return TJ_SINFO_FAIL_L0;
  /* Parameters are contravariant. */
  for (int i = 0; i < b->func.n_params && r != TJ_SINFO_FAIL_L0; i++)
    r = worst(r, tj_sinfo_base_check(d->func.params[i], b->func.params[i]));
  return worst(r, tj_sinfo_base_check(b->func.ret, d->func.ret));
}

tj_sinfo_check_t tj_sinfo_base_check(const tj_sinfo_t *base, const tj_sinfo_t *derived) {
  if (!base || base->kind == TJ_SINFO_OBJECT) return TJ_SINFO_PASS;
  if (!derived || derived->kind == TJ_SINFO_OBJECT) return TJ_SINFO_FAIL_L1;
  if (base->kind != derived->kind) return TJ_SINFO_FAIL_L0;
  switch (base->kind) {
    case TJ_SINFO_PRIM:
      return prim_check(base, derived);
    case TJ_SINFO_SHAPE:
      return shape_check(base, derived);
    case TJ_SINFO_TENSOR:
      return tensor_check(base, derived);
    case TJ_SINFO_TUPLE: {
      if (base->tuple.n != derived->tuple.n) return TJ_SINFO_FAIL_L0;
      tj_sinfo_check_t r = TJ_SINFO_PASS;
      for (int i = 0; i < base->tuple.n; i++)
        r = worst(r, tj_sinfo_base_check(base->tuple.fields[i], derived->tuple.fields[i]));
      return r;
    }
    case TJ_SINFO_FUNC:
      return func_check(base, derived);
    default:
      return TJ_SINFO_PASS;
  }
}

bool tj_sinfo_is_base_of(const tj_sinfo_t *base, const tj_sinfo_t *derived) {
  return tj_sinfo_base_check(base, derived) == TJ_SINFO_PASS;
}

/* ---------- equality ---------- */

static bool dims_equal(int ndim, const tj_tir_expr_t *const *a, const tj_tir_expr_t *const *b) {
  if (!a || !b) return a == b;
  for (int i = 0; i < ndim; i++)
    if (!tj_sinfo_prim_expr_equal(a[i], b[i])) return false;
  return true;
}

static bool str_eq_null(const char *a, const char *b) { return (!a || !b) ? a == b : strcmp(a, b) == 0; }

bool tj_sinfo_equal_static(const tj_sinfo_t *a, const tj_sinfo_t *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case TJ_SINFO_OBJECT:
      return true;
    case TJ_SINFO_PRIM:
      return tj_dtype_eq(a->prim.dtype, b->prim.dtype) &&
             ((!a->prim.value && !b->prim.value) ||
              (a->prim.value && b->prim.value && tj_sinfo_prim_expr_equal(a->prim.value, b->prim.value)));
    case TJ_SINFO_SHAPE:
      return a->shape.ndim == b->shape.ndim && dims_equal(a->shape.ndim, a->shape.values, b->shape.values);
    case TJ_SINFO_TENSOR:
      return tj_dtype_eq(a->tensor.dtype, b->tensor.dtype) && a->tensor.ndim == b->tensor.ndim &&
             dims_equal(a->tensor.ndim, a->tensor.shape, b->tensor.shape) &&
             str_eq_null(a->tensor.vdevice, b->tensor.vdevice);
    case TJ_SINFO_TUPLE:
      if (a->tuple.n != b->tuple.n) return false;
      for (int i = 0; i < a->tuple.n; i++)
        if (!tj_sinfo_equal_static(a->tuple.fields[i], b->tuple.fields[i])) return false;
      return true;
    case TJ_SINFO_FUNC:
      if (a->func.n_params != b->func.n_params || a->func.pure != b->func.pure) return false;
      for (int i = 0; i < a->func.n_params; i++)
        if (!tj_sinfo_equal_static(a->func.params[i], b->func.params[i])) return false;
      return tj_sinfo_equal_static(a->func.ret, b->func.ret);
  }
  return false;
}

/* ---------- least upper bound ---------- */

static const tj_sinfo_t *lub_tensor(tj_arena_t *arena, const tj_sinfo_t *a, const tj_sinfo_t *b) {
  tj_dtype_t dt = tj_dtype_eq(a->tensor.dtype, b->tensor.dtype) ? a->tensor.dtype : TJ_VOID;
  int ndim = a->tensor.ndim == b->tensor.ndim ? a->tensor.ndim : -1;
  bool same_shape = ndim >= 0 && a->tensor.shape && b->tensor.shape &&
                    dims_equal(ndim, a->tensor.shape, b->tensor.shape);
  tj_sinfo_t *r = (tj_sinfo_t *)tj_sinfo_tensor(arena, dt, ndim, same_shape ? a->tensor.shape : NULL);
  if (r && str_eq_null(a->tensor.vdevice, b->tensor.vdevice)) r->tensor.vdevice = a->tensor.vdevice;
  return r;
}

static const tj_sinfo_t *lub_func(tj_arena_t *arena, const tj_sinfo_t *a, const tj_sinfo_t *b) {
  const tj_sinfo_t *ret = tj_sinfo_lub(arena, a->func.ret, b->func.ret);
  if (!ret) return NULL;
  bool pure = a->func.pure && b->func.pure;
  bool same_params = a->func.n_params == b->func.n_params;
  for (int i = 0; same_params && i < a->func.n_params; i++)
    same_params = tj_sinfo_equal_static(a->func.params[i], b->func.params[i]);
  if (!same_params) return tj_sinfo_func(arena, -1, NULL, ret, pure);
  return tj_sinfo_func(arena, a->func.n_params, a->func.params, ret, pure);
}

const tj_sinfo_t *tj_sinfo_lub(tj_arena_t *arena, const tj_sinfo_t *a, const tj_sinfo_t *b) {
  if (!a || !b || a->kind != b->kind) return tj_sinfo_object(arena);
  if (tj_sinfo_equal_static(a, b)) return a;
  switch (a->kind) {
    case TJ_SINFO_PRIM:
      if (!tj_dtype_eq(a->prim.dtype, b->prim.dtype)) return tj_sinfo_object(arena);
      return tj_sinfo_prim(arena, a->prim.dtype, NULL);
    case TJ_SINFO_SHAPE:
      return tj_sinfo_shape(arena, a->shape.ndim == b->shape.ndim ? a->shape.ndim : -1, NULL);
    case TJ_SINFO_TENSOR:
      return lub_tensor(arena, a, b);
    case TJ_SINFO_TUPLE: {
      if (a->tuple.n != b->tuple.n) return tj_sinfo_object(arena);
      const tj_sinfo_t **fields = TJ_ARENA_ARRAY(arena, const tj_sinfo_t *, a->tuple.n);
      if (!fields) return NULL;
      for (int i = 0; i < a->tuple.n; i++)
        if (!(fields[i] = tj_sinfo_lub(arena, a->tuple.fields[i], b->tuple.fields[i]))) return NULL;
      return tj_sinfo_tuple(arena, a->tuple.n, fields);
    }
    case TJ_SINFO_FUNC:
      return lub_func(arena, a, b);
    default:
      return tj_sinfo_object(arena);
  }
}

/* ---------- formatting ---------- */

static int binary_precedence(tj_tir_expr_kind_t k) {
  switch (k) {
    case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MOD: case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD:
      return 2;
    case TJ_TIR_ADD: case TJ_TIR_SUB:
      return 1;
    default:
      return 0;
  }
}

static const char *binary_symbol(tj_tir_expr_kind_t k) {
  switch (k) {
    case TJ_TIR_ADD: return " + ";
    case TJ_TIR_SUB: return " - ";
    case TJ_TIR_MUL: return " * ";
    case TJ_TIR_DIV: return " / ";
    case TJ_TIR_MOD: return " % ";
    case TJ_TIR_FLOOR_DIV: return " // ";
    case TJ_TIR_FLOOR_MOD: return " % ";
    default: return NULL;
  }
}

static void format_dim_prec(tj_strbuf_t *sb, const tj_tir_expr_t *e, int outer) {
  if (!e) {
    tj_strbuf_append(sb, "?");
    return;
  }
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
      tj_strbuf_printf(sb, "%" PRId64, e->int_imm);
      return;
    case TJ_TIR_VAR:
      tj_strbuf_append(sb, e->var.name ? e->var.name : "?");
      return;
    case TJ_TIR_CAST:
      format_dim_prec(sb, e->unary.operand, outer);
      return;
    case TJ_TIR_MIN: case TJ_TIR_MAX:
      tj_strbuf_append(sb, e->kind == TJ_TIR_MIN ? "T.min(" : "T.max(");
      format_dim_prec(sb, e->binary.a, 0);
      tj_strbuf_append(sb, ", ");
      format_dim_prec(sb, e->binary.b, 0);
      tj_strbuf_append(sb, ")");
      return;
    default:
      break;
  }
  const char *sym = binary_symbol(e->kind);
  if (!sym) {
    tj_strbuf_printf(sb, "<%s>", tj_tir_expr_kind_name(e->kind));
    return;
  }
  int prec = binary_precedence(e->kind);
  if (prec < outer) tj_strbuf_append(sb, "(");
  format_dim_prec(sb, e->binary.a, prec);
  tj_strbuf_append(sb, sym);
  format_dim_prec(sb, e->binary.b, prec + 1);
  if (prec < outer) tj_strbuf_append(sb, ")");
}

void tj_sinfo_format_dim(tj_strbuf_t *sb, const tj_tir_expr_t *e) { format_dim_prec(sb, e, 0); }

static void format_dims(tj_strbuf_t *sb, int ndim, const tj_tir_expr_t *const *dims) {
  tj_strbuf_append(sb, "[");
  if (ndim < 0) {
    tj_strbuf_append(sb, "...");
  } else {
    for (int i = 0; i < ndim; i++) {
      if (i) tj_strbuf_append(sb, ", ");
      if (dims) tj_sinfo_format_dim(sb, dims[i]);
      else tj_strbuf_append(sb, "?");
    }
  }
  tj_strbuf_append(sb, "]");
}

static void format_dtype(tj_strbuf_t *sb, tj_dtype_t dt) {
  char buf[TJ_DTYPE_BUFSIZE];
  tj_strbuf_append(sb, tj_dtype_is_void(dt) ? "?" : tj_dtype_str(dt, buf));
}

void tj_sinfo_format_short(tj_strbuf_t *sb, const tj_sinfo_t *s) {
  if (!s) {
    tj_strbuf_append(sb, "<no struct info>");
    return;
  }
  switch (s->kind) {
    case TJ_SINFO_OBJECT:
      tj_strbuf_append(sb, "Object");
      return;
    case TJ_SINFO_PRIM:
      tj_strbuf_append(sb, "Prim(");
      format_dtype(sb, s->prim.dtype);
      tj_strbuf_append(sb, ")");
      return;
    case TJ_SINFO_SHAPE:
      tj_strbuf_append(sb, "Shape");
      format_dims(sb, s->shape.ndim, s->shape.values);
      return;
    case TJ_SINFO_TENSOR:
      format_dtype(sb, s->tensor.dtype);
      format_dims(sb, s->tensor.ndim, s->tensor.shape);
      return;
    case TJ_SINFO_TUPLE:
      tj_strbuf_append(sb, "(");
      for (int i = 0; i < s->tuple.n; i++) {
        if (i) tj_strbuf_append(sb, ", ");
        tj_sinfo_format_short(sb, s->tuple.fields[i]);
      }
      tj_strbuf_append(sb, s->tuple.n == 1 ? ",)" : ")");
      return;
    case TJ_SINFO_FUNC:
      tj_strbuf_append(sb, "Callable");
      return;
  }
}

void tj_sinfo_format_buffer(tj_strbuf_t *sb, const tj_buffer_t *b) {
  if (!b) {
    tj_strbuf_append(sb, "<no buffer>");
    return;
  }
  format_dtype(sb, b->dtype);
  format_dims(sb, b->ndim, b->shape);
}
