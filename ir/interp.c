/* The reference TIR interpreter (see ir/interp.h for the semantics).
 *
 * State: one hash table from node pointers (variables, buffer data vars, buffer nodes) to
 * entries that hold a variable's current value, a data var's memory, or a buffer node's
 * cached view (shape, strides, base address). Entries never move once made (they live in
 * chunks), so a loop can hold its variable's entry while its body runs.
 *
 * Errors: the first failure is recorded in `err`; every evaluator returns early once it
 * is set, so there is no longjmp and every allocation is released on the normal path. */
#include "ir/interp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "support/alloc.h"
#include "support/map.h"

#define INTERP_MAX_DIMS 16
#define INTERP_MAX_ITER_VARS 64
#define INTERP_MAX_ALLOC_BYTES ((size_t)1 << 36)
#define INTERP_CHUNK 256

typedef union ival {
  int64_t i; /* ints and bools (uint64 as its bit pattern) */
  double f;  /* floats, already rounded to their dtype */
} ival_t;

typedef struct buf_view {
  char *base;      /* data + elem_offset */
  uint64_t serial; /* binding of the data var this view was computed for */
  int ndim;
  int64_t shape[INTERP_MAX_DIMS];
  int64_t strides[INTERP_MAX_DIMS]; /* in elements */
  size_t elem;
} buf_view_t;

typedef struct entry {
  const void *key;
  bool bound;
  ival_t val;       /* a variable's value */
  char *mem;        /* a data var's memory */
  uint64_t serial;  /* a data var's binding number */
  buf_view_t *view; /* a buffer node's view */
  struct entry *data; /* a buffer node's data var entry, once looked up */
} entry_t;

typedef struct chunk {
  struct chunk *next;
  int used;
  entry_t entries[INTERP_CHUNK];
} chunk_t;

typedef struct interp {
  const char *func;
  const char *block; /* innermost block being run, NULL outside blocks */
  tj_status_t *err;
  tj_map_t table; /* key -> entry_t * (heap) */
  chunk_t *chunks;
  uint64_t serial;
} interp_t;

typedef struct saved {
  bool bound;
  ival_t val;
  char *mem;
  uint64_t serial;
} saved_t;

/* ---- errors ---- */

static void interp_fail(interp_t *ip, tj_code_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void interp_fail(interp_t *ip, tj_code_t code, const char *fmt, ...) {
  if (ip->err) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ip->block) ip->err = tj_status_new(code, "%s: block '%s': %s", ip->func, ip->block, msg);
  else ip->err = tj_status_new(code, "%s: %s", ip->func, msg);
}

static void interp_oom(interp_t *ip) { interp_fail(ip, TJ_ERR_OUT_OF_MEMORY, "out of memory"); }

/* ---- the pointer table ---- */

static entry_t *interp_find(const interp_t *ip, const void *key) { return tj_map_get(&ip->table, key); }

static entry_t *interp_entry(interp_t *ip, const void *key) {
  entry_t *e = interp_find(ip, key);
  if (e) return e;
  if (!ip->chunks || ip->chunks->used == INTERP_CHUNK) {
    chunk_t *c = tj_calloc(1, sizeof *c);
    if (!c) return interp_oom(ip), NULL;
    c->next = ip->chunks;
    ip->chunks = c;
  }
  e = &ip->chunks->entries[ip->chunks->used];
  if (!tj_map_put(&ip->table, key, e)) return interp_oom(ip), NULL;
  ip->chunks->used++;
  e->key = key;
  return e;
}

static void interp_free_state(interp_t *ip) {
  while (ip->chunks) {
    chunk_t *c = ip->chunks;
    ip->chunks = c->next;
    for (int i = 0; i < c->used; i++) tj_free(c->entries[i].view);
    tj_free(c);
  }
  tj_map_free(&ip->table);
}

static saved_t interp_save(const entry_t *e) { return (saved_t){e->bound, e->val, e->mem, e->serial}; }

static void interp_restore(entry_t *e, saved_t s) {
  e->bound = s.bound;
  e->val = s.val;
  e->mem = s.mem;
  e->serial = s.serial;
}

/* ---- scalar semantics per dtype ---- */

/* float16/32/64 and bfloat16: values held as doubles, rounded to their dtype. */
static bool interp_is_fp(tj_dtype_t dt) { return dt.code == TJ_DT_FLOAT || dt.code == TJ_DT_BFLOAT; }

/* bfloat16 arithmetic runs in float32 and is rounded once to bfloat16 (jit/codegen_bf16.c). */
static tj_dtype_t interp_compute_dtype(tj_dtype_t dt) { return dt.code == TJ_DT_BFLOAT ? TJ_F32 : dt; }

static double interp_round(tj_dtype_t dt, double x) {
  if (dt.code == TJ_DT_BFLOAT) return tj_bfloat_to_float(tj_float_to_bfloat((float)x));
  if (dt.bits == 16) return tj_half_to_float(tj_float_to_half((float)x));
  if (dt.bits == 32) return (double)(float)x;
  return x;
}

/* Wraps an integer to the dtype's width (sign- or zero-extended back to 64 bits). */
static int64_t interp_wrap(tj_dtype_t dt, int64_t x) {
  if (dt.code == TJ_DT_BOOL) return x != 0;
  if (dt.code == TJ_DT_UINT) {
    switch (dt.bits) {
      case 8: return (uint8_t)x;
      case 16: return (uint16_t)x;
      case 32: return (uint32_t)x;
      default: return x;
    }
  }
  switch (dt.bits) {
    case 8: return (int8_t)x;
    case 16: return (int16_t)x;
    case 32: return (int32_t)x;
    default: return x;
  }
}

static double interp_to_double(tj_dtype_t dt, ival_t v) {
  if (interp_is_fp(dt)) return v.f;
  if (dt.code == TJ_DT_UINT) return (double)(uint64_t)v.i;
  return (double)v.i;
}

/* Float to integer: truncate toward zero, saturate at the target's range, NaN -> 0. */
static int64_t interp_float_to_int(tj_dtype_t to, double x) {
  if (x != x) return 0;
  x = trunc(x);
  if (to.code == TJ_DT_UINT) {
    double hi = to.bits >= 64 ? 18446744073709551615.0 : ldexp(1.0, to.bits) - 1;
    if (x <= 0) return 0;
    if (x >= hi) return to.bits >= 64 ? (int64_t)UINT64_MAX : (int64_t)hi;
    return (int64_t)(uint64_t)x;
  }
  double lo = -ldexp(1.0, to.bits - 1), hi = ldexp(1.0, to.bits - 1) - 1;
  if (x <= lo) return to.bits >= 64 ? INT64_MIN : (int64_t)lo;
  if (x >= hi) return to.bits >= 64 ? INT64_MAX : (int64_t)hi;
  return (int64_t)x;
}

static ival_t interp_cast(tj_dtype_t from, tj_dtype_t to, ival_t v) {
  ival_t r;
  if (to.code == TJ_DT_BOOL) r.i = interp_is_fp(from) ? v.f != 0 : v.i != 0;
  else if (interp_is_fp(to)) r.f = interp_round(to, interp_to_double(from, v));
  else if (interp_is_fp(from)) r.i = interp_wrap(to, interp_float_to_int(to, v.f));
  else r.i = interp_wrap(to, v.i);
  return r;
}

static ival_t interp_load_scalar(tj_dtype_t dt, const char *p) {
  ival_t v;
  switch ((tj_dtype_code_t)dt.code) {
    case TJ_DT_BFLOAT: {
      uint16_t b;
      memcpy(&b, p, 2);
      v.f = tj_bfloat_to_float(b);
      return v;
    }
    case TJ_DT_FLOAT:
      if (dt.bits == 16) {
        uint16_t h;
        memcpy(&h, p, 2);
        v.f = tj_half_to_float(h);
      } else if (dt.bits == 32) {
        float f;
        memcpy(&f, p, 4);
        v.f = f;
      } else {
        memcpy(&v.f, p, 8);
      }
      return v;
    case TJ_DT_BOOL: v.i = *(const unsigned char *)p != 0; return v;
    default: {
      uint64_t raw = 0;
      memcpy(&raw, p, (size_t)(dt.bits / 8)); /* little-endian host */
      v.i = interp_wrap(dt, (int64_t)raw);
      return v;
    }
  }
}

static void interp_store_scalar(tj_dtype_t dt, char *p, ival_t v) {
  switch ((tj_dtype_code_t)dt.code) {
    case TJ_DT_BFLOAT: {
      uint16_t b = tj_float_to_bfloat((float)v.f);
      memcpy(p, &b, 2);
      return;
    }
    case TJ_DT_FLOAT:
      if (dt.bits == 16) {
        uint16_t h = tj_float_to_half((float)v.f);
        memcpy(p, &h, 2);
      } else if (dt.bits == 32) {
        float f = (float)v.f;
        memcpy(p, &f, 4);
      } else {
        memcpy(p, &v.f, 8);
      }
      return;
    case TJ_DT_BOOL: *(unsigned char *)p = v.i != 0; return;
    default: {
      uint64_t raw = (uint64_t)v.i;
      memcpy(p, &raw, (size_t)(dt.bits / 8));
      return;
    }
  }
}

static bool interp_supported_scalar(tj_dtype_t dt) {
  if (dt.lanes != 1) return false;
  switch ((tj_dtype_code_t)dt.code) {
    case TJ_DT_FLOAT: return dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
    case TJ_DT_BFLOAT: return dt.bits == 16;
    case TJ_DT_INT:
    case TJ_DT_UINT: return dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
    case TJ_DT_BOOL: return true;
    default: return false;
  }
}

/* ---- arithmetic ---- */

static ival_t interp_float_arith(tj_tir_expr_kind_t k, tj_dtype_t dt, double x, double y) {
  ival_t r;
  if (dt.code == TJ_DT_BFLOAT) {
    r = interp_float_arith(k, TJ_F32, x, y);
    r.f = interp_round(dt, r.f);
    return r;
  }
  double q;
  switch (k) {
    case TJ_TIR_ADD: r.f = x + y; break;
    case TJ_TIR_SUB: r.f = x - y; break;
    case TJ_TIR_MUL: r.f = x * y; break;
    case TJ_TIR_DIV: r.f = x / y; break;
    case TJ_TIR_MOD: r.f = fmod(x, y); break;
    case TJ_TIR_FLOOR_DIV: r.f = floor(interp_round(dt, x / y)); break;
    case TJ_TIR_FLOOR_MOD:
      q = floor(interp_round(dt, x / y));
      r.f = x - interp_round(dt, q * y);
      break;
    case TJ_TIR_MIN: r.f = x < y ? x : y; break;
    case TJ_TIR_MAX: r.f = x > y ? x : y; break;
    default: r.f = 0; break;
  }
  r.f = interp_round(dt, r.f);
  return r;
}

static ival_t interp_int_arith(interp_t *ip, tj_tir_expr_kind_t k, tj_dtype_t dt, int64_t x, int64_t y) {
  ival_t r = {0};
  bool is_unsigned = dt.code == TJ_DT_UINT;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  (void)ip;
  /* As compiled kernels (jit/codegen.c, docs/numerics.md): x / 0 and x % 0 are 0. */
  if ((k == TJ_TIR_DIV || k == TJ_TIR_MOD || k == TJ_TIR_FLOOR_DIV || k == TJ_TIR_FLOOR_MOD) && y == 0) return r;
  bool overflow_div = !is_unsigned && x == INT64_MIN && y == -1; /* the one case C leaves undefined */
  switch (k) {
    case TJ_TIR_ADD: r.i = (int64_t)(ux + uy); break;
    case TJ_TIR_SUB: r.i = (int64_t)(ux - uy); break;
    case TJ_TIR_MUL: r.i = (int64_t)(ux * uy); break;
    case TJ_TIR_DIV:
      r.i = is_unsigned ? (int64_t)(ux / uy) : overflow_div ? x : x / y;
      break;
    case TJ_TIR_MOD:
      r.i = is_unsigned ? (int64_t)(ux % uy) : overflow_div ? 0 : x % y;
      break;
    case TJ_TIR_FLOOR_DIV:
      if (is_unsigned) r.i = (int64_t)(ux / uy);
      else if (overflow_div) r.i = x;
      else r.i = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
      break;
    case TJ_TIR_FLOOR_MOD:
      if (is_unsigned) r.i = (int64_t)(ux % uy);
      else if (overflow_div) r.i = 0;
      else {
        int64_t m = x % y;
        r.i = (m != 0 && ((m < 0) != (y < 0))) ? m + y : m;
      }
      break;
    case TJ_TIR_MIN: r.i = (is_unsigned ? ux < uy : x < y) ? x : y; break;
    case TJ_TIR_MAX: r.i = (is_unsigned ? ux > uy : x > y) ? x : y; break;
    default: break;
  }
  r.i = interp_wrap(dt, r.i);
  return r;
}

static bool interp_compare(tj_tir_expr_kind_t k, tj_dtype_t dt, ival_t a, ival_t b) {
  if (interp_is_fp(dt)) {
    switch (k) {
      case TJ_TIR_EQ: return a.f == b.f;
      case TJ_TIR_NE: return a.f != b.f;
      case TJ_TIR_LT: return a.f < b.f;
      case TJ_TIR_LE: return a.f <= b.f;
      case TJ_TIR_GT: return a.f > b.f;
      default: return a.f >= b.f;
    }
  }
  if (dt.code == TJ_DT_UINT) {
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    switch (k) {
      case TJ_TIR_EQ: return x == y;
      case TJ_TIR_NE: return x != y;
      case TJ_TIR_LT: return x < y;
      case TJ_TIR_LE: return x <= y;
      case TJ_TIR_GT: return x > y;
      default: return x >= y;
    }
  }
  switch (k) {
    case TJ_TIR_EQ: return a.i == b.i;
    case TJ_TIR_NE: return a.i != b.i;
    case TJ_TIR_LT: return a.i < b.i;
    case TJ_TIR_LE: return a.i <= b.i;
    case TJ_TIR_GT: return a.i > b.i;
    default: return a.i >= b.i;
  }
}

/* ---- expressions ---- */

static ival_t interp_eval(interp_t *ip, const tj_tir_expr_t *e);
static char *interp_buffer_addr(interp_t *ip, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *indices);

static int64_t interp_eval_int(interp_t *ip, const tj_tir_expr_t *e, const char *what) {
  if (e && e->kind == TJ_TIR_INT_IMM && e->dtype.lanes == 1 && !interp_is_fp(e->dtype))
    return interp_wrap(e->dtype, e->int_imm);
  if (!e) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "missing %s", what);
    return 0;
  }
  ival_t v = interp_eval(ip, e);
  if (interp_is_fp(e->dtype)) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "%s must be an integer, not a float", what);
    return 0;
  }
  return v.i;
}

static double interp_unary_math(const char *op, double x, bool *known) {
  *known = true;
  if (!strcmp(op, "exp")) return exp(x);
  if (!strcmp(op, "exp2")) return exp2(x);
  if (!strcmp(op, "exp10")) return pow(10.0, x);
  if (!strcmp(op, "log")) return log(x);
  if (!strcmp(op, "log2")) return log2(x);
  if (!strcmp(op, "log10")) return log10(x);
  if (!strcmp(op, "log1p")) return log1p(x);
  if (!strcmp(op, "sqrt")) return sqrt(x);
  if (!strcmp(op, "tanh")) return tanh(x);
  if (!strcmp(op, "sigmoid")) return 1.0 / (1.0 + exp(-x));
  if (!strcmp(op, "sin")) return sin(x);
  if (!strcmp(op, "cos")) return cos(x);
  if (!strcmp(op, "tan")) return tan(x);
  if (!strcmp(op, "erf")) return erf(x);
  if (!strcmp(op, "fabs") || !strcmp(op, "abs")) return fabs(x);
  if (!strcmp(op, "floor")) return floor(x);
  if (!strcmp(op, "ceil")) return ceil(x);
  if (!strcmp(op, "trunc")) return trunc(x);
  if (!strcmp(op, "nearbyint")) return nearbyint(x);
  if (!strcmp(op, "round")) return round(x); /* TVM lowers tir.round to llvm.round: halves away from zero */
  if (!strcmp(op, "asin")) return asin(x);
  if (!strcmp(op, "acos")) return acos(x);
  if (!strcmp(op, "atan")) return atan(x);
  if (!strcmp(op, "sinh")) return sinh(x);
  if (!strcmp(op, "cosh")) return cosh(x);
  if (!strcmp(op, "asinh")) return asinh(x);
  if (!strcmp(op, "acosh")) return acosh(x);
  if (!strcmp(op, "atanh")) return atanh(x);
  *known = false;
  return 0;
}

static bool interp_check_args(interp_t *ip, const tj_tir_expr_t *e, int want) {
  if (e->call.n_args == want) return true;
  interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "intrinsic '%s' takes %d argument%s, got %d", e->call.op, want,
              want == 1 ? "" : "s", e->call.n_args);
  return false;
}

/* tir.bitwise_* and tir.shift_*, with the shift semantics of compiled kernels
 * (jit/codegen.c): an amount outside [0, bits) shifts every bit out. */
static ival_t interp_bitwise(interp_t *ip, const char *op, const tj_tir_expr_t *e) {
  ival_t r = {0};
  bool is_not = !strcmp(op, "bitwise_not");
  if (!interp_check_args(ip, e, is_not ? 1 : 2)) return r;
  int64_t x = interp_eval(ip, e->call.args[0]).i, y = is_not ? 0 : interp_eval(ip, e->call.args[1]).i;
  tj_dtype_t d = e->dtype;
  int bits = d.code == TJ_DT_BOOL ? 1 : d.bits;
  bool in_range = y >= 0 && y < bits;
  uint64_t ux = d.code == TJ_DT_UINT || d.code == TJ_DT_BOOL ? (uint64_t)x & (bits == 64 ? ~0ull : (1ull << bits) - 1) : (uint64_t)x;
  if (is_not) r.i = ~x;
  else if (!strcmp(op, "bitwise_and")) r.i = x & y;
  else if (!strcmp(op, "bitwise_or")) r.i = x | y;
  else if (!strcmp(op, "bitwise_xor")) r.i = x ^ y;
  else if (!strcmp(op, "shift_left")) r.i = in_range ? (int64_t)(ux << y) : 0;
  else if (d.code == TJ_DT_INT) r.i = in_range ? x >> y : (x < 0 ? -1 : 0); /* arithmetic */
  else r.i = in_range ? (int64_t)(ux >> y) : 0;
  r.i = interp_wrap(d, r.i);
  return r;
}

static ival_t interp_call(interp_t *ip, const tj_tir_expr_t *e) {
  ival_t r = {0};
  const char *op = e->call.op ? e->call.op : "";
  if (!strncmp(op, "tir.", 4)) op += 4;
  const tj_tir_expr_t *const *args = e->call.args;
  if (!strcmp(op, "if_then_else")) {
    if (!interp_check_args(ip, e, 3)) return r;
    ival_t c = interp_eval(ip, args[0]);
    if (ip->err) return r;
    const tj_tir_expr_t *chosen = c.i ? args[1] : args[2]; /* only the chosen branch runs */
    r = interp_eval(ip, chosen);
    return tj_dtype_eq(chosen->dtype, e->dtype) ? r : interp_cast(chosen->dtype, e->dtype, r);
  }
  if (!strcmp(op, "likely")) {
    if (!interp_check_args(ip, e, 1)) return r;
    return interp_eval(ip, args[0]);
  }
  if (!strcmp(op, "prefetch")) return r; /* a cache hint: its load is not performed, its value is 0 */
  if (!strcmp(op, "pow") || !strcmp(op, "fmod")) {
    if (!interp_check_args(ip, e, 2)) return r;
    double x = interp_to_double(args[0]->dtype, interp_eval(ip, args[0]));
    double y = interp_to_double(args[1]->dtype, interp_eval(ip, args[1]));
    double v = op[0] == 'p' ? pow(x, y) : fmod(x, y);
    return interp_cast(TJ_F64, e->dtype, (ival_t){.f = v});
  }
  if (!strcmp(op, "isnan") || !strcmp(op, "isinf") || !strcmp(op, "isfinite")) {
    if (!interp_check_args(ip, e, 1)) return r;
    double x = interp_to_double(args[0]->dtype, interp_eval(ip, args[0]));
    r.i = op[2] == 'n' ? isnan(x) != 0 : op[2] == 'i' ? isinf(x) != 0 : isfinite(x) != 0;
    return r;
  }
  if (!strcmp(op, "rsqrt")) {
    /* 1 / sqrt(x), each step rounded to the dtype, as the lowering emits it. */
    if (!interp_check_args(ip, e, 1)) return r;
    double x = interp_to_double(args[0]->dtype, interp_eval(ip, args[0]));
    double s = interp_round(interp_compute_dtype(e->dtype), sqrt(x));
    return interp_cast(TJ_F64, e->dtype, (ival_t){.f = 1.0 / s});
  }
  if ((!strcmp(op, "abs") || !strcmp(op, "fabs")) && !interp_is_fp(e->dtype)) {
    if (!interp_check_args(ip, e, 1)) return r;
    ival_t v = interp_eval(ip, args[0]);
    r.i = interp_wrap(e->dtype, e->dtype.code == TJ_DT_UINT || v.i >= 0 ? v.i : (int64_t)(0 - (uint64_t)v.i));
    return r;
  }
  if (!strncmp(op, "bitwise_", 8) || !strcmp(op, "shift_left") || !strcmp(op, "shift_right"))
    return interp_bitwise(ip, op, e);
  bool known;
  interp_unary_math(op, 0.0, &known);
  if (known) {
    if (!interp_check_args(ip, e, 1)) return r;
    double x = interp_to_double(args[0]->dtype, interp_eval(ip, args[0]));
    double v = interp_unary_math(op, x, &known);
    return interp_cast(TJ_F64, e->dtype, (ival_t){.f = v});
  }
  interp_fail(ip, TJ_ERR_UNSUPPORTED, "unknown intrinsic '%s'; the interpreter knows if_then_else, likely, exp, log, "
              "sqrt, rsqrt, tanh, sigmoid, pow, erf, fabs, floor, ceil, trunc, isnan and a few more", e->call.op);
  return r;
}

static ival_t interp_eval(interp_t *ip, const tj_tir_expr_t *e) {
  ival_t r = {0};
  if (ip->err) return r;
  if (!e) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "missing expression");
    return r;
  }
  if (e->dtype.lanes != 1) {
    char buf[TJ_DTYPE_BUFSIZE];
    interp_fail(ip, TJ_ERR_UNSUPPORTED, "vector expression %s of type %s: the interpreter runs scalar TIR only",
                tj_tir_expr_kind_name(e->kind), tj_dtype_str(e->dtype, buf));
    return r;
  }
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
      if (interp_is_fp(e->dtype)) r.f = interp_round(e->dtype, (double)e->int_imm);
      else r.i = interp_wrap(e->dtype, e->int_imm);
      return r;
    case TJ_TIR_FLOAT_IMM:
      if (interp_is_fp(e->dtype)) r.f = interp_round(e->dtype, e->float_imm);
      else r.i = interp_wrap(e->dtype, interp_float_to_int(e->dtype, e->float_imm));
      return r;
    case TJ_TIR_VAR: {
      const entry_t *v = interp_find(ip, e);
      if (!v || !v->bound) {
        interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "variable '%s' is used where it has no value (unbound)",
                    e->var.name ? e->var.name : "?");
        return r;
      }
      return v->val;
    }
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MOD:
    case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: case TJ_TIR_MIN: case TJ_TIR_MAX: {
      ival_t a = interp_eval(ip, e->binary.a), b = interp_eval(ip, e->binary.b);
      if (ip->err) return r;
      tj_dtype_t dt = e->dtype;
      if (interp_is_fp(dt))
        return interp_float_arith(e->kind, dt, interp_to_double(e->binary.a->dtype, a),
                                  interp_to_double(e->binary.b->dtype, b));
      return interp_int_arith(ip, e->kind, dt, a.i, b.i);
    }
    case TJ_TIR_EQ: case TJ_TIR_NE: case TJ_TIR_LT: case TJ_TIR_LE: case TJ_TIR_GT: case TJ_TIR_GE: {
      ival_t a = interp_eval(ip, e->binary.a), b = interp_eval(ip, e->binary.b);
      tj_dtype_t da = e->binary.a->dtype, db = e->binary.b->dtype;
      if (da.code != db.code || da.bits != db.bits) { /* mixed types: compare as double */
        a.f = interp_to_double(da, a);
        b.f = interp_to_double(db, b);
        da = TJ_F64;
      }
      r.i = interp_compare(e->kind, da, a, b);
      return r;
    }
    case TJ_TIR_AND: case TJ_TIR_OR: {
      /* Both sides are evaluated, as the generated code does (no short circuit). */
      ival_t a = interp_eval(ip, e->binary.a), b = interp_eval(ip, e->binary.b);
      r.i = e->kind == TJ_TIR_AND ? (a.i && b.i) : (a.i || b.i);
      return r;
    }
    case TJ_TIR_NOT: r.i = !interp_eval(ip, e->unary.operand).i; return r;
    case TJ_TIR_CAST: {
      ival_t v = interp_eval(ip, e->unary.operand);
      return interp_cast(e->unary.operand->dtype, e->dtype, v);
    }
    case TJ_TIR_SELECT: {
      ival_t c = interp_eval(ip, e->select.cond);
      ival_t t = interp_eval(ip, e->select.true_value), f = interp_eval(ip, e->select.false_value);
      return c.i ? t : f;
    }
    case TJ_TIR_BUFFER_LOAD: {
      char *p = interp_buffer_addr(ip, e->load.buffer, e->load.n_indices, e->load.indices);
      if (!p) return r;
      r = interp_load_scalar(e->load.buffer->dtype, p);
      return tj_dtype_eq(e->load.buffer->dtype, e->dtype) ? r : interp_cast(e->load.buffer->dtype, e->dtype, r);
    }
    case TJ_TIR_LET: {
      ival_t v = interp_eval(ip, e->let.value);
      entry_t *var = ip->err ? NULL : interp_entry(ip, e->let.var);
      if (!var) return r;
      saved_t old = interp_save(var);
      var->bound = true;
      var->val = v;
      r = interp_eval(ip, e->let.body);
      interp_restore(var, old);
      return r;
    }
    case TJ_TIR_CALL: return interp_call(ip, e);
    default:
      interp_fail(ip, TJ_ERR_UNSUPPORTED, "expression %s cannot be evaluated by the interpreter",
                  tj_tir_expr_kind_name(e->kind));
      return r;
  }
}

/* ---- buffers ---- */

static bool interp_fill_view(interp_t *ip, const tj_buffer_t *b, buf_view_t *v) {
  char buf[TJ_DTYPE_BUFSIZE];
  if (!interp_supported_scalar(b->dtype)) {
    interp_fail(ip, TJ_ERR_UNSUPPORTED, "buffer '%s' has element type %s, which the interpreter does not run", b->name,
                tj_dtype_str(b->dtype, buf));
    return false;
  }
  if (b->ndim < 0 || b->ndim > INTERP_MAX_DIMS) {
    interp_fail(ip, TJ_ERR_UNSUPPORTED, "buffer '%s' has %d dimensions (at most %d)", b->name, b->ndim, INTERP_MAX_DIMS);
    return false;
  }
  v->ndim = b->ndim;
  v->elem = tj_dtype_bytes(b->dtype);
  for (int d = 0; d < b->ndim; d++) {
    v->shape[d] = interp_eval_int(ip, b->shape[d], "a buffer dimension");
    if (!ip->err && v->shape[d] < 0)
      interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "buffer '%s' has a negative dimension %d", b->name, d);
  }
  if (b->strides) {
    for (int d = 0; d < b->ndim; d++) v->strides[d] = interp_eval_int(ip, b->strides[d], "a buffer stride");
  } else {
    int64_t stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
      v->strides[d] = stride;
      stride *= v->shape[d];
    }
  }
  return !ip->err;
}

/* The current view of buffer `b`: recomputed whenever its data var was bound anew. */
static buf_view_t *interp_view(interp_t *ip, const tj_buffer_t *b) {
  entry_t *be = interp_entry(ip, b);
  if (!be) return NULL;
  entry_t *data = be->data ? be->data : interp_find(ip, b->data);
  if (!data || !data->bound) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "buffer '%s' is used outside the scope that allocates it", b->name);
    return NULL;
  }
  be->data = data; /* entries never move, so the pointer stays good */
  if (be->view && be->view->serial == data->serial) return be->view;
  if (!be->view && !(be->view = tj_calloc(1, sizeof *be->view))) return interp_oom(ip), NULL;
  buf_view_t *v = be->view;
  if (!interp_fill_view(ip, b, v)) return NULL;
  int64_t offset = b->elem_offset ? interp_eval_int(ip, b->elem_offset, "a buffer elem_offset") : 0;
  if (ip->err) return NULL;
  v->base = data->mem + offset * (int64_t)v->elem;
  v->serial = data->serial;
  return v;
}

static char *interp_buffer_addr(interp_t *ip, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *indices) {
  if (ip->err) return NULL;
  buf_view_t *v = interp_view(ip, b);
  if (!v) return NULL;
  if (n != v->ndim) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "buffer '%s' has %d dimension%s but is indexed with %d", b->name, v->ndim,
                v->ndim == 1 ? "" : "s", n);
    return NULL;
  }
  int64_t offset = 0;
  for (int d = 0; d < n; d++) {
    int64_t idx = interp_eval_int(ip, indices[d], "a buffer index");
    if (ip->err) return NULL;
    if (idx < 0 || idx >= v->shape[d]) {
      interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "index %lld is out of bounds for dimension %d of buffer '%s' (extent %lld)",
                  (long long)idx, d, b->name, (long long)v->shape[d]);
      return NULL;
    }
    offset += idx * v->strides[d];
  }
  return v->base + offset * (int64_t)v->elem;
}

/* Allocates zeroed storage for `b` and binds its data var; *out_saved restores it. */
static bool interp_alloc(interp_t *ip, const tj_buffer_t *b, saved_t *out_saved, char **out_mem) {
  buf_view_t tmp;
  if (!interp_fill_view(ip, b, &tmp)) return false;
  size_t bytes = tmp.elem;
  for (int d = 0; d < tmp.ndim; d++) {
    if (tmp.shape[d] != 0 && bytes > INTERP_MAX_ALLOC_BYTES / (uint64_t)tmp.shape[d]) {
      interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "buffer '%s' is too large to allocate", b->name);
      return false;
    }
    bytes *= (size_t)tmp.shape[d];
  }
  char *mem = tj_aligned_alloc(bytes);
  entry_t *data = mem ? interp_entry(ip, b->data) : NULL;
  if (!data) {
    tj_aligned_free(mem);
    interp_oom(ip);
    return false;
  }
  memset(mem, 0, bytes);
  *out_saved = interp_save(data);
  data->bound = true;
  data->mem = mem;
  data->serial = ++ip->serial;
  *out_mem = mem;
  return true;
}

static void interp_release(interp_t *ip, const tj_buffer_t *b, saved_t saved, char *mem) {
  entry_t *data = interp_find(ip, b->data);
  if (data) interp_restore(data, saved);
  tj_aligned_free(mem);
}

/* ---- statements ---- */

static void interp_exec(interp_t *ip, const tj_tir_stmt_t *s);

static void interp_exec_for(interp_t *ip, const tj_tir_stmt_t *s) {
  int64_t min = interp_eval_int(ip, s->loop.min, "a loop minimum");
  int64_t extent = interp_eval_int(ip, s->loop.extent, "a loop extent");
  entry_t *var = ip->err ? NULL : interp_entry(ip, s->loop.var);
  if (!var) return;
  saved_t old = interp_save(var);
  var->bound = true;
  tj_dtype_t dt = s->loop.var->dtype;
  for (int64_t i = 0; i < extent && !ip->err; i++) {
    var->val.i = interp_wrap(dt, min + i);
    interp_exec(ip, s->loop.body);
  }
  interp_restore(var, old);
}

/* match_buffer: the buffer views the region's first element with the source's strides. */
static bool interp_match(interp_t *ip, const tj_match_buffer_t *m, saved_t *out_saved) {
  const tj_buffer_region_t *src = &m->source;
  tj_tir_expr_t const *starts[INTERP_MAX_DIMS];
  if (src->ndim > INTERP_MAX_DIMS) {
    interp_fail(ip, TJ_ERR_UNSUPPORTED, "match_buffer region with %d dimensions", src->ndim);
    return false;
  }
  for (int d = 0; d < src->ndim; d++) starts[d] = src->ranges[d].min;
  char *p = interp_buffer_addr(ip, src->buffer, src->ndim, starts);
  buf_view_t *sv = p ? interp_view(ip, src->buffer) : NULL;
  entry_t *data = sv ? interp_entry(ip, m->buffer->data) : NULL;
  entry_t *be = data ? interp_entry(ip, m->buffer) : NULL;
  if (!be) return false;
  if (!be->view && !(be->view = tj_calloc(1, sizeof *be->view))) return interp_oom(ip), false;
  if (m->buffer->ndim > src->ndim) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "match_buffer '%s' has more dimensions than its region", m->buffer->name);
    return false;
  }
  buf_view_t *v = be->view;
  if (!interp_fill_view(ip, m->buffer, v)) return false;
  for (int d = 0; d < v->ndim; d++) v->strides[d] = sv->strides[src->ndim - v->ndim + d];
  *out_saved = interp_save(data);
  data->bound = true;
  data->mem = p;
  data->serial = ++ip->serial;
  v->base = p;
  v->serial = data->serial;
  return true;
}

static bool interp_is_first_reduce_iteration(interp_t *ip, const tj_block_t *b, const ival_t *vals) {
  for (int i = 0; i < b->n_iter_vars; i++) {
    if (b->iter_vars[i].kind != TJ_ITER_REDUCE) continue;
    if (vals[i].i != interp_eval_int(ip, b->iter_vars[i].dom.min, "an iter var domain")) return false;
  }
  return true;
}

/* Binds the iter vars, allocates, matches, runs init (first reduce iteration) and body. */
static void interp_run_block(interp_t *ip, const tj_block_t *b, const ival_t *vals) {
  saved_t iter_saved[INTERP_MAX_ITER_VARS];
  entry_t *iter_entries[INTERP_MAX_ITER_VARS];
  int n_bound = 0;
  for (; n_bound < b->n_iter_vars && !ip->err; n_bound++) {
    entry_t *var = interp_entry(ip, b->iter_vars[n_bound].var);
    if (!var) break;
    iter_saved[n_bound] = interp_save(var);
    iter_entries[n_bound] = var;
    var->bound = true;
    var->val = vals[n_bound];
  }
  int n_alloc = 0, n_match = 0;
  /* Most blocks allocate nothing: keep their bookkeeping on the stack. */
  saved_t saved_local[4];
  char *mems_local[4];
  bool small = b->n_alloc_buffers + b->n_match_buffers <= 4;
  saved_t *saved = small ? saved_local : tj_calloc((size_t)(b->n_alloc_buffers + b->n_match_buffers), sizeof *saved);
  char **mems = small ? mems_local : tj_calloc((size_t)b->n_alloc_buffers + 1, sizeof *mems);
  if (!saved || !mems) interp_oom(ip);
  for (; !ip->err && n_alloc < b->n_alloc_buffers; n_alloc++)
    if (!interp_alloc(ip, b->alloc_buffers[n_alloc], &saved[n_alloc], &mems[n_alloc])) break;
  for (; !ip->err && n_match < b->n_match_buffers; n_match++)
    if (!interp_match(ip, &b->match_buffers[n_match], &saved[b->n_alloc_buffers + n_match])) break;
  if (!ip->err && b->init && interp_is_first_reduce_iteration(ip, b, vals)) interp_exec(ip, b->init);
  if (!ip->err) interp_exec(ip, b->body);
  for (int i = n_match - 1; i >= 0; i--) {
    entry_t *data = interp_find(ip, b->match_buffers[i].buffer->data);
    if (data) interp_restore(data, saved[b->n_alloc_buffers + i]);
  }
  for (int i = n_alloc - 1; i >= 0; i--) interp_release(ip, b->alloc_buffers[i], saved[i], mems[i]);
  if (!small) {
    tj_free(saved);
    tj_free(mems);
  }
  for (int i = n_bound - 1; i >= 0; i--) interp_restore(iter_entries[i], iter_saved[i]);
}

static void interp_exec_realize(interp_t *ip, const tj_tir_stmt_t *s) {
  const tj_block_t *b = s->realize.block;
  const char *outer = ip->block;
  ip->block = b->name && b->name[0] ? b->name : "(anonymous)";
  ival_t vals[INTERP_MAX_ITER_VARS];
  if (b->n_iter_vars > INTERP_MAX_ITER_VARS) {
    interp_fail(ip, TJ_ERR_UNSUPPORTED, "%d iter vars (at most %d)", b->n_iter_vars, INTERP_MAX_ITER_VARS);
  } else if (s->realize.n_iter_values != b->n_iter_vars) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "%d iter values bind %d iter vars", s->realize.n_iter_values,
                b->n_iter_vars);
  }
  for (int i = 0; !ip->err && i < b->n_iter_vars; i++) {
    const tj_iter_var_t *iv = &b->iter_vars[i];
    vals[i] = interp_eval(ip, s->realize.iter_values[i]);
    vals[i].i = interp_wrap(iv->var->dtype, vals[i].i);
    int64_t lo = interp_eval_int(ip, iv->dom.min, "an iter var domain");
    int64_t ext = interp_eval_int(ip, iv->dom.extent, "an iter var domain");
    if (!ip->err && (vals[i].i < lo || vals[i].i >= lo + ext))
      interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "iter var '%s' = %lld is outside its domain [%lld, %lld)",
                  iv->var->var.name, (long long)vals[i].i, (long long)lo, (long long)(lo + ext));
  }
  bool run = !ip->err && (!s->realize.predicate || interp_eval(ip, s->realize.predicate).i);
  if (run && !ip->err) interp_run_block(ip, b, vals);
  if (!ip->err) ip->block = outer; /* on error keep the innermost block for the message */
}

static void interp_exec_store(interp_t *ip, const tj_tir_stmt_t *s) {
  const tj_buffer_t *b = s->store.buffer;
  ival_t v = interp_eval(ip, s->store.value);
  char *p = interp_buffer_addr(ip, b, s->store.n_indices, s->store.indices);
  if (!p) return;
  if (!tj_dtype_eq(s->store.value->dtype, b->dtype)) v = interp_cast(s->store.value->dtype, b->dtype, v);
  interp_store_scalar(b->dtype, p, v);
}

static void interp_exec(interp_t *ip, const tj_tir_stmt_t *s) {
  if (ip->err) return;
  if (!s) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "missing statement");
    return;
  }
  switch (s->kind) {
    case TJ_TIR_FOR: interp_exec_for(ip, s); return;
    case TJ_TIR_BLOCK_REALIZE: interp_exec_realize(ip, s); return;
    case TJ_TIR_BUFFER_STORE: interp_exec_store(ip, s); return;
    case TJ_TIR_LET_STMT: {
      ival_t v = interp_eval(ip, s->let.value);
      entry_t *var = ip->err ? NULL : interp_entry(ip, s->let.var);
      if (!var) return;
      saved_t old = interp_save(var);
      var->bound = true;
      var->val = v;
      interp_exec(ip, s->let.body);
      interp_restore(var, old);
      return;
    }
    case TJ_TIR_IF: {
      ival_t c = interp_eval(ip, s->if_.cond);
      if (ip->err) return;
      if (c.i) interp_exec(ip, s->if_.then_stmt);
      else if (s->if_.else_stmt) interp_exec(ip, s->if_.else_stmt);
      return;
    }
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n && !ip->err; i++) interp_exec(ip, s->seq.stmts[i]);
      return;
    case TJ_TIR_EVALUATE: interp_eval(ip, s->evaluate.value); return;
    case TJ_TIR_ALLOCATE: {
      saved_t saved;
      char *mem;
      if (!interp_alloc(ip, s->allocate.buffer, &saved, &mem)) return;
      interp_exec(ip, s->allocate.body);
      interp_release(ip, s->allocate.buffer, saved, mem);
      return;
    }
    default: interp_fail(ip, TJ_ERR_UNSUPPORTED, "statement kind %d cannot be run", (int)s->kind); return;
  }
}

/* ---- entry points ---- */

static void interp_bind_params(interp_t *ip, const tj_prim_func_t *f, int n_args, void *const *buffers,
                               const int64_t *scalars) {
  int n_buf = 0, n_scalar = 0;
  for (int i = 0; i < f->n_params; i++) {
    if (f->buffer_map && f->buffer_map[i]) n_buf++;
    else n_scalar++;
  }
  if (n_args != f->n_params) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "takes %d arguments (%d buffers, %d scalars), got %d", f->n_params, n_buf,
                n_scalar, n_args);
    return;
  }
  if ((n_buf && !buffers) || (n_scalar && !scalars)) {
    interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "%s array is NULL", n_buf && !buffers ? "buffer" : "scalar");
    return;
  }
  int kb = 0, ks = 0;
  for (int i = 0; i < f->n_params && !ip->err; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    entry_t *param = interp_entry(ip, f->params[i]);
    if (!param) return;
    param->bound = true;
    if (!b) {
      param->val = interp_cast(TJ_I64, f->params[i]->dtype, (ival_t){.i = scalars[ks++]});
      continue;
    }
    char *mem = buffers[kb++];
    if (!mem) {
      interp_fail(ip, TJ_ERR_INVALID_ARGUMENT, "the data of buffer '%s' is NULL", b->name);
      return;
    }
    param->val.i = (int64_t)(intptr_t)mem;
    entry_t *data = interp_entry(ip, b->data);
    if (!data) return;
    data->bound = true;
    data->mem = mem;
    data->serial = ++ip->serial;
  }
}

tj_status_t *tj_interp_run_named(const char *name, const tj_prim_func_t *f, int n_args, void *const *buffers,
                                 const int64_t *scalars) {
  interp_t ip = {0};
  ip.func = name ? name : "prim_func";
  interp_bind_params(&ip, f, n_args, buffers, scalars);
  if (!ip.err) interp_exec(&ip, f->body);
  interp_free_state(&ip);
  return ip.err;
}

tj_status_t *tj_interp_run_prim_func(const tj_prim_func_t *f, int n_args, void *const *buffers,
                                     const int64_t *scalars) {
  return tj_interp_run_named(tj_attrs_get_str(f->attrs, "global_symbol", "prim_func"), f, n_args, buffers, scalars);
}
