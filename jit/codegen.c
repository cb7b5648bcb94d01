/* Lowered TIR -> LLVM IR through the LLVM-C API.
 *
 * Numerics follow the IR exactly: float16 values are LLVM `half` and every half
 * operation is a half operation (LLVM computes it in f32 with F16C and rounds the
 * result to half, which is the correctly rounded half result); no fast-math flags and
 * no FP contraction, so results match a per-op reference bit for bit.
 * `tir.if_then_else` is a branch plus a phi: only the chosen side runs (padding reads
 * out of bounds on the other side). Integer floor div/mod have floor semantics. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jit/codegen.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "support/intmath.h"
#include "transforms/tir/lower.h"

__attribute__((format(printf, 3, 4))) static LLVMValueRef cg_fail(cg_t *c, tj_code_t code, const char *fmt, ...) {
  if (!c->err) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->err = tj_status_new(code, "codegen '%s': %s", c->name, msg);
  }
  return NULL;
}

static bool bind(cg_t *c, const tj_tir_expr_t *var, LLVMValueRef v) {
  if (c->n_vars == c->cap_vars) {
    int cap = c->cap_vars ? c->cap_vars * 2 : 64;
    var_binding_t *p = tj_realloc(c->vars, sizeof(*p) * (size_t)cap);
    if (!p) return cg_fail(c, TJ_ERR_OUT_OF_MEMORY, "out of memory"), false;
    c->vars = p;
    c->cap_vars = cap;
  }
  c->vars[c->n_vars++] = (var_binding_t){var, v};
  return true;
}

static LLVMValueRef lookup(cg_t *c, const tj_tir_expr_t *var) {
  for (int i = c->n_vars - 1; i >= 0; i--)
    if (c->vars[i].var == var) return c->vars[i].value;
  return cg_fail(c, TJ_ERR_UNSUPPORTED, "variable '%s' is not bound (symbolic shapes are not supported yet)",
                 var->var.name);
}

/* ---------------- types ---------------- */

static LLVMTypeRef scalar_type(cg_t *c, tj_dtype_t d) {
  switch ((tj_dtype_code_t)d.code) {
    case TJ_DT_FLOAT:
      if (d.bits == 16) return LLVMHalfTypeInContext(c->ctx);
      if (d.bits == 32) return LLVMFloatTypeInContext(c->ctx);
      if (d.bits == 64) return LLVMDoubleTypeInContext(c->ctx);
      return NULL;
    case TJ_DT_INT: case TJ_DT_UINT: return LLVMIntTypeInContext(c->ctx, d.bits);
    case TJ_DT_BFLOAT: return LLVMInt16TypeInContext(c->ctx); /* its bits: jit/codegen_bf16.c */
    case TJ_DT_BOOL: return c->t_i1;
    case TJ_DT_HANDLE: return c->t_ptr;
    default: return NULL;
  }
}

static LLVMTypeRef value_type(cg_t *c, tj_dtype_t d) {
  LLVMTypeRef t = scalar_type(c, d);
  if (!t) {
    char buf[TJ_DTYPE_BUFSIZE];
    return (LLVMTypeRef)cg_fail(c, TJ_ERR_UNSUPPORTED, "dtype %s", tj_dtype_str(d, buf));
  }
  return d.lanes > 1 ? LLVMVectorType(t, d.lanes) : t;
}

/* In memory a bool is one byte. */
static LLVMTypeRef storage_type(cg_t *c, tj_dtype_t d) {
  return d.code == TJ_DT_BOOL ? c->t_i8 : value_type(c, tj_dtype_element(d));
}

static bool is_signed(tj_dtype_t d) { return d.code == TJ_DT_INT; }

static LLVMValueRef const_int(cg_t *c, tj_dtype_t d, int64_t v) {
  LLVMValueRef s = LLVMConstInt(scalar_type(c, d), (unsigned long long)v, 1);
  if (d.lanes <= 1) return s;
  LLVMValueRef elems[64];
  if (d.lanes > 64) return cg_fail(c, TJ_ERR_UNSUPPORTED, "vectors wider than 64 lanes");
  for (int i = 0; i < d.lanes; i++) elems[i] = s;
  return LLVMConstVector(elems, d.lanes);
}

/* ---------------- expressions ---------------- */

static LLVMValueRef gen_expr(cg_t *c, const tj_tir_expr_t *e);

/* float16 vectors: without AVX512-FP16, LLVM 19 scalarises vector half compares and
 * most half intrinsics (sqrt, floor, ...: one vucomiss / libcall per lane). Doing them
 * on float lanes gives the same bits: fpext is exact, a compare of extended values is
 * the same compare, and float (24 bits) holds a half op's exact result well enough
 * that rounding it to half is the correctly rounded half result (p >= 2q + 2), which
 * is also how LLVM computes a scalar half op. llvm.arithmetic.fence emits no code. */
static bool is_half_vector(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMHalfTypeKind;
}

static LLVMValueRef call_intrinsic(cg_t *c, const char *name, LLVMTypeRef overload, LLVMValueRef *args, int n);

/* The fence keeps InstCombine from folding `op(fpext x)` back into the half op. */
static LLVMValueRef half_vector_to_float(cg_t *c, LLVMValueRef v) {
  LLVMTypeRef t = LLVMVectorType(LLVMFloatTypeInContext(c->ctx), LLVMGetVectorSize(LLVMTypeOf(v)));
  LLVMValueRef w = LLVMBuildFPExt(c->b, v, t, "");
  return LLVMIsConstant(w) ? w : call_intrinsic(c, "llvm.arithmetic.fence", t, &w, 1);
}

static LLVMValueRef fcmp(cg_t *c, LLVMRealPredicate pred, LLVMValueRef x, LLVMValueRef y) {
  if (is_half_vector(LLVMTypeOf(x))) x = half_vector_to_float(c, x), y = half_vector_to_float(c, y);
  return LLVMBuildFCmp(c->b, pred, x, y, "");
}


static tj_dtype_t f32_lanes(tj_dtype_t d) { return tj_dtype_make(TJ_DT_FLOAT, 32, d.lanes); }

static LLVMValueRef gen_cast(cg_t *c, tj_dtype_t from, tj_dtype_t to, LLVMValueRef v);

/* bfloat16 casts go through float32, as the interpreter's: widen exactly, or convert to
 * float32 and round that to nearest even (float64 -> bfloat16 rounds twice, as TVM). */
static LLVMValueRef gen_bf16_cast(cg_t *c, tj_dtype_t from, tj_dtype_t to, LLVMValueRef v) {
  if (from.code == TJ_DT_BFLOAT) return gen_cast(c, f32_lanes(from), to, tj_cg_bf16_widen(c, v));
  LLVMValueRef f = gen_cast(c, from, f32_lanes(to), v);
  return f ? tj_cg_bf16_narrow(c, f) : NULL;
}

static LLVMValueRef gen_cast(cg_t *c, tj_dtype_t from, tj_dtype_t to, LLVMValueRef v) {
  LLVMTypeRef t = value_type(c, to);
  if (!t || !v) return NULL;
  if (tj_dtype_eq(from, to)) return v;
  if (from.code == TJ_DT_BFLOAT || to.code == TJ_DT_BFLOAT) return gen_bf16_cast(c, from, to, v);
  LLVMBuilderRef b = c->b;
  if (to.code == TJ_DT_BOOL) {
    if (from.code == TJ_DT_FLOAT) return fcmp(c, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)));
    return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  }
  if (from.code == TJ_DT_BOOL) {
    if (to.code == TJ_DT_FLOAT) return LLVMBuildUIToFP(b, v, t, "");
    return LLVMBuildZExt(b, v, t, "");
  }
  bool from_f = from.code == TJ_DT_FLOAT, to_f = to.code == TJ_DT_FLOAT;
  if (from_f && to_f) return to.bits > from.bits ? LLVMBuildFPExt(b, v, t, "") : LLVMBuildFPTrunc(b, v, t, "");
  if (from_f) return is_signed(to) ? LLVMBuildFPToSI(b, v, t, "") : LLVMBuildFPToUI(b, v, t, "");
  if (to_f) return is_signed(from) ? LLVMBuildSIToFP(b, v, t, "") : LLVMBuildUIToFP(b, v, t, "");
  if (to.bits == from.bits) return v;
  if (to.bits < from.bits) return LLVMBuildTrunc(b, v, t, "");
  return is_signed(from) ? LLVMBuildSExt(b, v, t, "") : LLVMBuildZExt(b, v, t, "");
}

/* Integer division and modulo never trap (docs/numerics.md): x / 0 and x % 0 are 0, as
 * numpy gives, and INT_MIN / -1 wraps to INT_MIN (its remainder is 0). LLVM's sdiv/srem
 * are undefined there (x86 raises SIGFPE), so the divisor is replaced by 1 in those
 * lanes and a zero divisor's result is selected to 0. A constant divisor other than 0
 * and -1 (all index arithmetic) needs no guard and gets none. */
typedef struct safe_divisor {
  LLVMValueRef y;       /* the divisor to use */
  LLVMValueRef is_zero; /* i1 (vector): the original divisor was 0; NULL = never */
} safe_divisor_t;

static bool is_safe_constant(LLVMValueRef y) {
  if (!LLVMIsAConstantInt(y)) return false;
  long long v = LLVMConstIntGetSExtValue(y);
  return v != 0 && v != -1;
}

/* The integer constant v in every lane of t (a scalar or vector integer type). */
static LLVMValueRef int_splat(LLVMTypeRef t, unsigned long long v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  LLVMValueRef lanes[64], s = LLVMConstInt(LLVMGetElementType(t), v, 0);
  unsigned n = LLVMGetVectorSize(t);
  for (unsigned i = 0; i < n && i < 64; i++) lanes[i] = s;
  return LLVMConstVector(lanes, n < 64 ? n : 64);
}

static unsigned int_bits(LLVMTypeRef t) {
  return LLVMGetIntTypeWidth(LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t);
}

static safe_divisor_t safe_divisor(cg_t *c, bool is_signed_div, LLVMValueRef x, LLVMValueRef y) {
  if (is_safe_constant(y)) return (safe_divisor_t){y, NULL};
  LLVMBuilderRef b = c->b;
  LLVMTypeRef t = LLVMTypeOf(y);
  LLVMValueRef is_zero = LLVMBuildICmp(b, LLVMIntEQ, y, LLVMConstNull(t), "");
  LLVMValueRef replace = is_zero;
  if (is_signed_div) {
    LLVMValueRef int_min = int_splat(t, 1ULL << (int_bits(t) - 1));
    LLVMValueRef overflow = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, y, LLVMConstAllOnes(t), ""),
                                         LLVMBuildICmp(b, LLVMIntEQ, x, int_min, ""), "");
    replace = LLVMBuildOr(b, replace, overflow, "");
  }
  return (safe_divisor_t){LLVMBuildSelect(b, replace, int_splat(t, 1), y, ""), is_zero};
}

/* r, or 0 where the divisor was 0. */
static LLVMValueRef zero_if_divisor_zero(cg_t *c, safe_divisor_t sd, LLVMValueRef r) {
  if (!sd.is_zero) return r;
  return LLVMBuildSelect(c->b, sd.is_zero, LLVMConstNull(LLVMTypeOf(r)), r, "");
}

/* Truncating integer division (TIR Div) and remainder (TIR Mod, truncmod). */
static LLVMValueRef gen_trunc_int(cg_t *c, bool want_div, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = c->b;
  bool s = is_signed(d);
  safe_divisor_t sd = safe_divisor(c, s, x, y);
  LLVMValueRef r = want_div ? (s ? LLVMBuildSDiv(b, x, sd.y, "") : LLVMBuildUDiv(b, x, sd.y, ""))
                            : (s ? LLVMBuildSRem(b, x, sd.y, "") : LLVMBuildURem(b, x, sd.y, ""));
  return zero_if_divisor_zero(c, sd, r);
}

/* Integer floor division / modulo from truncating ones: adjust when the remainder is
 * non-zero and its sign differs from the divisor's. */
static LLVMValueRef gen_floor_int_unguarded(cg_t *c, bool want_div, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y);

static LLVMValueRef gen_floor_int(cg_t *c, bool want_div, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  safe_divisor_t sd = safe_divisor(c, is_signed(d), x, y);
  return zero_if_divisor_zero(c, sd, gen_floor_int_unguarded(c, want_div, d, x, sd.y));
}

static LLVMValueRef gen_floor_int_unguarded(cg_t *c, bool want_div, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = c->b;
  if (!is_signed(d)) return want_div ? LLVMBuildUDiv(b, x, y, "") : LLVMBuildURem(b, x, y, "");
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
  LLVMValueRef r = LLVMBuildSRem(b, x, y, "");
  LLVMValueRef nonzero = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
  LLVMValueRef sign_differs = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, y, ""), zero, "");
  LLVMValueRef adjust = LLVMBuildAnd(b, nonzero, sign_differs, "");
  if (!want_div) return LLVMBuildAdd(b, r, LLVMBuildSelect(b, adjust, y, zero, ""), "");
  LLVMValueRef q = LLVMBuildSDiv(b, x, y, "");
  return LLVMBuildSub(b, q, LLVMBuildZExt(b, adjust, LLVMTypeOf(x), ""), "");
}

static LLVMValueRef call_intrinsic(cg_t *c, const char *name, LLVMTypeRef overload, LLVMValueRef *args, int n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) return NULL;
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, &overload, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, &overload, 1);
  return LLVMBuildCall2(c->b, fty, fn, args, (unsigned)n, "");
}

/* A floating-point intrinsic (sqrt, floor, exp, ...); NULL when LLVM has no such one. */
static LLVMValueRef float_intrinsic(cg_t *c, const char *name, LLVMTypeRef t, LLVMValueRef *args, int n) {
  if (!is_half_vector(t)) return call_intrinsic(c, name, t, args, n);
  LLVMValueRef wide[2];
  for (int i = 0; i < n && i < 2; i++) wide[i] = half_vector_to_float(c, args[i]);
  LLVMValueRef r = call_intrinsic(c, name, LLVMTypeOf(wide[0]), wide, n);
  return r ? LLVMBuildFPTrunc(c->b, r, t, "") : NULL;
}

static LLVMValueRef gen_floor_float(cg_t *c, bool want_div, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef q = LLVMBuildFDiv(c->b, x, y, "");
  LLVMValueRef fq = float_intrinsic(c, "llvm.floor", LLVMTypeOf(q), &q, 1);
  if (want_div) return fq;
  return LLVMBuildFSub(c->b, x, LLVMBuildFMul(c->b, fq, y, ""), "");
}

static LLVMValueRef gen_compare(cg_t *c, tj_tir_expr_kind_t k, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealONE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
  static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  int i = (int)k - (int)TJ_TIR_EQ;
  if (d.code == TJ_DT_FLOAT) return fcmp(c, fp[i], x, y);
  return LLVMBuildICmp(c->b, is_signed(d) ? sp[i] : up[i], x, y, "");
}

/* Opt-in contraction (TVM's LLVM target allows it by default): only float32/float64 add,
 * sub and mul get the flag, so float16 arithmetic (rounded after every op) never fuses. */
static LLVMValueRef allow_contract(cg_t *c, tj_dtype_t d, LLVMValueRef v) {
  if (c->fp_contract && v && d.code == TJ_DT_FLOAT && d.bits >= 32 && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
  return v;
}

/* Default float mode: a float32/float64 division may become a multiply by the divisor's
 * reciprocal (LLVM does it where one divisor serves several divisions: softmax's row sum
 * divides a row of exps; a vector divide costs as much as ~10 multiplies). Within 1.5 ulp
 * of the division; strict mode keeps the division. */
static LLVMValueRef allow_reciprocal(cg_t *c, tj_dtype_t d, LLVMValueRef v) {
  if (c->fp_contract && v && d.code == TJ_DT_FLOAT && d.bits >= 32 && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowReciprocal);
  return v;
}

static LLVMValueRef gen_binary_values(cg_t *c, tj_tir_expr_kind_t kind, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y);

/* A bfloat16 op is the float32 op on the widened operands, rounded once (min and max
 * pick an operand, so they keep its bits). */
static LLVMValueRef gen_bf16_binary(cg_t *c, tj_tir_expr_kind_t kind, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef wx = tj_cg_bf16_widen(c, x), wy = tj_cg_bf16_widen(c, y);
  if (tj_tir_kind_is_compare(kind) || kind == TJ_TIR_MIN || kind == TJ_TIR_MAX) {
    tj_tir_expr_kind_t k = kind == TJ_TIR_MIN ? TJ_TIR_LT : kind == TJ_TIR_MAX ? TJ_TIR_GT : kind;
    LLVMValueRef cmp = gen_binary_values(c, k, f32_lanes(d), wx, wy);
    return kind == k ? cmp : LLVMBuildSelect(c->b, cmp, x, y, "");
  }
  LLVMValueRef r = gen_binary_values(c, kind, f32_lanes(d), wx, wy);
  return r ? tj_cg_bf16_narrow(c, r) : NULL;
}

static LLVMValueRef gen_binary(cg_t *c, const tj_tir_expr_t *e) {
  LLVMValueRef x = gen_expr(c, e->binary.a);
  LLVMValueRef y = x ? gen_expr(c, e->binary.b) : NULL;
  if (!y) return NULL;
  tj_dtype_t d = e->binary.a->dtype;
  if (!tj_dtype_eq(d, e->binary.b->dtype)) {
    char b1[TJ_DTYPE_BUFSIZE], b2[TJ_DTYPE_BUFSIZE];
    return cg_fail(c, TJ_ERR_VERIFY, "%s of %s and %s: operands must have the same dtype",
                   tj_tir_expr_kind_name(e->kind), tj_dtype_str(d, b1), tj_dtype_str(e->binary.b->dtype, b2));
  }
  if (d.code == TJ_DT_BFLOAT) return gen_bf16_binary(c, e->kind, d, x, y);
  return gen_binary_values(c, e->kind, d, x, y);
}

static LLVMValueRef gen_binary_values(cg_t *c, tj_tir_expr_kind_t kind, tj_dtype_t d, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = c->b;
  bool f = d.code == TJ_DT_FLOAT, s = is_signed(d);
  if (tj_tir_kind_is_compare(kind)) return gen_compare(c, kind, d, x, y);
  switch (kind) {
    case TJ_TIR_ADD: return f ? allow_contract(c, d, LLVMBuildFAdd(b, x, y, "")) : s ? LLVMBuildNSWAdd(b, x, y, "") : LLVMBuildAdd(b, x, y, "");
    case TJ_TIR_SUB: return f ? allow_contract(c, d, LLVMBuildFSub(b, x, y, "")) : s ? LLVMBuildNSWSub(b, x, y, "") : LLVMBuildSub(b, x, y, "");
    case TJ_TIR_MUL: return f ? allow_contract(c, d, LLVMBuildFMul(b, x, y, "")) : s ? LLVMBuildNSWMul(b, x, y, "") : LLVMBuildMul(b, x, y, "");
    case TJ_TIR_DIV: return f ? allow_reciprocal(c, d, LLVMBuildFDiv(b, x, y, "")) : gen_trunc_int(c, true, d, x, y);
    case TJ_TIR_MOD: return f ? LLVMBuildFRem(b, x, y, "") : gen_trunc_int(c, false, d, x, y);
    case TJ_TIR_FLOOR_DIV: return f ? gen_floor_float(c, true, x, y) : gen_floor_int(c, true, d, x, y);
    case TJ_TIR_FLOOR_MOD: return f ? gen_floor_float(c, false, x, y) : gen_floor_int(c, false, d, x, y);
    /* TVM: min(a, b) = a < b ? a : b, max(a, b) = a > b ? a : b. */
    case TJ_TIR_MIN: return LLVMBuildSelect(b, gen_compare(c, TJ_TIR_LT, d, x, y), x, y, "");
    case TJ_TIR_MAX: return LLVMBuildSelect(b, gen_compare(c, TJ_TIR_GT, d, x, y), x, y, "");
    case TJ_TIR_AND: return LLVMBuildAnd(b, x, y, "");
    case TJ_TIR_OR: return LLVMBuildOr(b, x, y, "");
    default: return cg_fail(c, TJ_ERR_INTERNAL, "unknown binary kind %d", (int)kind);
  }
}

static LLVMValueRef buffer_base(cg_t *c, const tj_buffer_t *buf) { return lookup(c, buf->data); }

static LLVMValueRef element_ptr(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildInBoundsGEP2(c->b, storage_type(c, buf->dtype), base, &index, 1, "");
}

static bool is_contiguous_ramp(const tj_tir_expr_t *idx) {
  int64_t s;
  return idx->kind == TJ_TIR_RAMP && tj_tir_is_const_int(idx->ramp.stride, &s) && s == 1;
}

static LLVMValueRef load_scalar(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, LLVMValueRef index) {
  LLVMValueRef v = LLVMBuildLoad2(c->b, storage_type(c, buf->dtype), element_ptr(c, buf, base, index), "");
  LLVMSetAlignment(v, (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
  if (buf->dtype.code == TJ_DT_BOOL) v = LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstNull(c->t_i8), "");
  return v;
}

/* A ramp with a small constant stride s >= 2 (a stride-2 depthwise conv vectorized along
 * x reads every other input) is one contiguous load of the s * (L - 1) + 1 elements it
 * spans and a shuffle that keeps every s-th: a few vector loads and a permute, where
 * lane-by-lane loads cost L scalar loads and inserts. Only elements between the first
 * and the last lane's are read, so no access leaves the span the lanes already touch. */
#define MAX_SHUFFLE_STRIDE 4

static bool is_short_stride_ramp(const tj_tir_expr_t *idx, int64_t *stride) {
  return idx->kind == TJ_TIR_RAMP && tj_tir_is_const_int(idx->ramp.stride, stride) && *stride >= 2 &&
         *stride <= MAX_SHUFFLE_STRIDE && idx->dtype.lanes <= 64;
}

/* The span as ceil(span / L) loads of L elements each, the last one ending at the span's
 * last element (overlapping the one before), joined by one shuffle per pair: an odd
 * span (31 floats for 16 lanes at stride 2) loaded as one <31 x float> was legalized
 * into 16 + 8 + 4 + 2 + 1 element pieces, inserts and stack spills (MobileNetV2's 3x3/2
 * depthwise conv over 96 channels at 112x112 spent 4.8 us per channel plane on it, Ice
 * Lake). Every load stays within the span. Up to SPAN_CHUNKS_MAX chunks, for a
 * power-of-two lane count only: 7 lanes (576 channels at 14x14, stride 2) as two
 * <7 x float> loads (each 4 + 2 + 1 pieces) took 0.071-0.075 ms in MobileNetV2 against
 * 0.059-0.063 as one <13 x float> (8 + 4 + 1). */
#define SPAN_CHUNKS_MAX 4

static LLVMValueRef load_span_chunks(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, LLVMValueRef i, int lanes,
                                     int64_t stride, int span) {
  int n = (span + lanes - 1) / lanes;
  LLVMTypeRef vt = LLVMVectorType(storage_type(c, buf->dtype), (unsigned)lanes);
  LLVMValueRef chunk[SPAN_CHUNKS_MAX], sel[128];
  for (int j = 0; j < SPAN_CHUNKS_MAX; j++) {
    int off = j * lanes < span - lanes ? j * lanes : span - lanes;
    if (j >= n) {
      chunk[j] = LLVMGetUndef(vt);
      continue;
    }
    LLVMValueRef at = LLVMBuildAdd(c->b, i, LLVMConstInt(LLVMTypeOf(i), (unsigned long long)off, 0), "");
    chunk[j] = LLVMBuildLoad2(c->b, vt, element_ptr(c, buf, base, at), "");
    LLVMSetAlignment(chunk[j], (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
  }
  /* element e of the span: chunk min(e / L, n - 1), at e minus that chunk's offset */
  for (int l = 0; l < lanes; l++) {
    int e = (int)(l * stride), j = e / lanes < n - 1 ? e / lanes : n - 1;
    int off = j * lanes < span - lanes ? j * lanes : span - lanes;
    sel[l] = LLVMConstInt(c->t_i32, (unsigned long long)(j * lanes + e - off), 0);
  }
  if (n <= 2) return LLVMBuildShuffleVector(c->b, chunk[0], chunk[1], LLVMConstVector(sel, (unsigned)lanes), "");
  LLVMValueRef cat[128];
  for (int k = 0; k < 2 * lanes; k++) cat[k] = LLVMConstInt(c->t_i32, (unsigned long long)k, 0);
  LLVMValueRef lo = LLVMBuildShuffleVector(c->b, chunk[0], chunk[1], LLVMConstVector(cat, (unsigned)(2 * lanes)), "");
  LLVMValueRef hi = LLVMBuildShuffleVector(c->b, chunk[2], chunk[3], LLVMConstVector(cat, (unsigned)(2 * lanes)), "");
  return LLVMBuildShuffleVector(c->b, lo, hi, LLVMConstVector(sel, (unsigned)lanes), "");
}

/* e mod m for every value e can take, when the expression's form says so (constants,
 * sums, products, min / max of equal residues, widening casts): min(xo * 16, 40) * 2 is
 * 0 mod 16 (xo * 16 and 40 both 0 mod 8); false when unknown. */
static bool residue_mod(const tj_tir_expr_t *e, int64_t m, int64_t *r) {
  int64_t k, ra, rb;
  if (m == 1) return *r = 0, true;
  if (tj_tir_is_const_int(e, &k)) return *r = ((k % m) + m) % m, true;
  switch (e->kind) {
    case TJ_TIR_CAST:
      if (e->dtype.code != TJ_DT_INT || e->unary.operand->dtype.code != TJ_DT_INT ||
          e->dtype.bits < e->unary.operand->dtype.bits)
        return false;
      return residue_mod(e->unary.operand, m, r);
    case TJ_TIR_ADD:
    case TJ_TIR_SUB:
    case TJ_TIR_MIN:
    case TJ_TIR_MAX:
      if (!residue_mod(e->binary.a, m, &ra) || !residue_mod(e->binary.b, m, &rb)) return false;
      if (e->kind == TJ_TIR_ADD) return *r = (ra + rb) % m, true;
      if (e->kind == TJ_TIR_SUB) return *r = (ra - rb + m) % m, true;
      return *r = ra, ra == rb;
    case TJ_TIR_MUL:
      /* a * k with k constant: a = q (m / g) + ra, g = gcd(k, m), so a * k = ra * k mod m */
      for (int side = 0; side < 2; side++) {
        const tj_tir_expr_t *a = side ? e->binary.b : e->binary.a, *b = side ? e->binary.a : e->binary.b;
        if (!tj_tir_is_const_int(b, &k)) continue;
        int64_t g = tj_gcd64(k < 0 ? -k : k, m);
        if (!residue_mod(a, m / g, &ra)) return false;
        return *r = ((ra * (k % m)) % m + m) % m, true;
      }
      if (!residue_mod(e->binary.a, m, &ra) || !residue_mod(e->binary.b, m, &rb)) return false;
      return *r = ra * rb % m, true;
    default: return false;
  }
}

/* A stack buffer (aligned to 64 bytes, its size a multiple of L elements) read at a
 * ramp base whose residue mod L is known (p): the span is loaded as the aligned L-element
 * vectors that hold it, from base - p to the next multiple of L. None leaves the
 * buffer (base >= p; the span's end rounded up to L stays within a size that is a
 * multiple of L), and none splits across cache lines. A stride-2 3x3 depthwise conv
 * reads a window row at base - 1, base and base + 1 for its three taps: as spans those
 * were 6 vector loads per row and vector, 4 of them split over two lines; aligned they
 * are the same 3 vectors for all three taps, loaded once (the same values, so the same
 * bits). Returns NULL when it does not apply (c->failed untouched). */
static LLVMValueRef load_aligned_span(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, const tj_tir_expr_t *idx,
                                      LLVMValueRef i, int lanes, int64_t stride, int span) {
  int64_t n_elems, p, bytes = (int64_t)lanes * (int64_t)tj_dtype_bytes(buf->dtype);
  if (!tj_tir_alloc_on_stack(buf) || buf->elem_offset || !tj_buffer_static_size(buf, &n_elems) || n_elems % lanes ||
      bytes > 64 || 64 % bytes || !residue_mod(idx->ramp.base, lanes, &p))
    return NULL;
  int n = (int)((p + span + lanes - 1) / lanes);
  if (n > SPAN_CHUNKS_MAX) return NULL;
  LLVMTypeRef vt = LLVMVectorType(storage_type(c, buf->dtype), (unsigned)lanes);
  LLVMValueRef chunk[SPAN_CHUNKS_MAX], sel[128], cat[128];
  for (int j = 0; j < SPAN_CHUNKS_MAX; j++) {
    if (j >= n) {
      chunk[j] = LLVMGetUndef(vt);
      continue;
    }
    LLVMValueRef at = LLVMBuildAdd(c->b, i, LLVMConstInt(LLVMTypeOf(i), (unsigned long long)(j * lanes - p), 1), "");
    chunk[j] = LLVMBuildLoad2(c->b, vt, element_ptr(c, buf, base, at), "");
    LLVMSetAlignment(chunk[j], (unsigned)bytes);
  }
  for (int l = 0; l < lanes; l++) sel[l] = LLVMConstInt(c->t_i32, (unsigned long long)(p + l * stride), 0);
  if (n <= 2) return LLVMBuildShuffleVector(c->b, chunk[0], chunk[1], LLVMConstVector(sel, (unsigned)lanes), "");
  for (int k = 0; k < 2 * lanes; k++) cat[k] = LLVMConstInt(c->t_i32, (unsigned long long)k, 0);
  LLVMValueRef lo = LLVMBuildShuffleVector(c->b, chunk[0], chunk[1], LLVMConstVector(cat, (unsigned)(2 * lanes)), "");
  LLVMValueRef hi = LLVMBuildShuffleVector(c->b, chunk[2], chunk[3], LLVMConstVector(cat, (unsigned)(2 * lanes)), "");
  return LLVMBuildShuffleVector(c->b, lo, hi, LLVMConstVector(sel, (unsigned)lanes), "");
}

static LLVMValueRef load_short_stride(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, const tj_tir_expr_t *idx,
                                      int64_t stride) {
  LLVMValueRef i = gen_expr(c, idx->ramp.base);
  if (!i) return NULL;
  int lanes = idx->dtype.lanes, span = (int)(stride * (lanes - 1) + 1);
  if (lanes >= 4 && lanes <= 64 && (lanes & (lanes - 1)) == 0) {
    LLVMValueRef v = load_aligned_span(c, buf, base, idx, i, lanes, stride, span);
    if (v) return v;
  }
  if (lanes >= 4 && lanes <= 64 && (lanes & (lanes - 1)) == 0 && span <= SPAN_CHUNKS_MAX * lanes)
    return load_span_chunks(c, buf, base, i, lanes, stride, span);
  LLVMTypeRef wide = LLVMVectorType(storage_type(c, buf->dtype), (unsigned)span);
  LLVMValueRef v = LLVMBuildLoad2(c->b, wide, element_ptr(c, buf, base, i), "");
  LLVMSetAlignment(v, (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
  LLVMValueRef mask[64];
  for (int l = 0; l < lanes; l++) mask[l] = LLVMConstInt(c->t_i32, (unsigned long long)(l * stride), 0);
  return LLVMBuildShuffleVector(c->b, v, LLVMGetUndef(wide), LLVMConstVector(mask, (unsigned)lanes), "");
}

/* A ramp of L lanes at stride L (L a power of two, 4 to 16) whose base is p mod L for a
 * known p: lane l reads element p of row l of an L x L tile (the statistics of a block of
 * short rows with the rows as lanes: transforms/tir/schedule_row_lanes.c). The tile is
 * read as its L row vectors and transposed in registers, L shuffles a stage over log2 L
 * stages (the off-diagonal blocks of side h swapped, h = L/2 ... 1); the result is column
 * p. The L loads of one term (p = 0 .. L-1 over an unrolled loop) are the same loads and
 * shuffles, so LLVM's CSE leaves one transpose per tile: 4 shuffles a row for L = 16,
 * where lane-by-lane loads cost L loads and inserts a term (and LLVM's own vectorization
 * of the scalar rows used two 8-lane gathers). Reads the tile from base - p to base - p +
 * L*L - 1: in bounds when the buffer's static size is a multiple of L (the last lane's
 * element is in it and its row ends at a multiple of L). */
static bool is_transposable(const tj_buffer_t *buf, const tj_tir_expr_t *idx, int64_t *p) {
  int64_t stride, n_elems;
  int L = idx->dtype.lanes;
  return idx->kind == TJ_TIR_RAMP && tj_tir_is_const_int(idx->ramp.stride, &stride) && stride == L && L >= 4 &&
         L <= 16 && !(L & (L - 1)) && !buf->elem_offset && buf->dtype.code != TJ_DT_BOOL &&
         tj_buffer_static_size(buf, &n_elems) && n_elems % L == 0 && residue_mod(idx->ramp.base, L, p);
}

static LLVMValueRef load_transposed(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, const tj_tir_expr_t *idx,
                                    int64_t p) {
  int L = idx->dtype.lanes;
  LLVMValueRef i = gen_expr(c, idx->ramp.base);
  if (!i) return NULL;
  LLVMValueRef start = LLVMBuildSub(c->b, i, LLVMConstInt(LLVMTypeOf(i), (unsigned long long)p, 0), "");
  LLVMTypeRef vt = LLVMVectorType(storage_type(c, buf->dtype), (unsigned)L);
  LLVMValueRef v[16], nv[16], lo[16], hi[16];
  for (int j = 0; j < L; j++) {
    LLVMValueRef at = LLVMBuildAdd(c->b, start, LLVMConstInt(LLVMTypeOf(i), (unsigned long long)(j * L), 0), "");
    v[j] = LLVMBuildLoad2(c->b, vt, element_ptr(c, buf, base, at), "");
    LLVMSetAlignment(v[j], (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
  }
  for (int h = L / 2; h >= 1; h /= 2) {
    /* row j (j & h == 0) keeps its lanes k & h == 0 and takes row j+h's lanes k-h in the
     * others; row j+h takes row j's lanes k+h and keeps its own */
    for (int k = 0; k < L; k++) {
      lo[k] = LLVMConstInt(c->t_i32, (unsigned long long)((k & h) ? L + k - h : k), 0);
      hi[k] = LLVMConstInt(c->t_i32, (unsigned long long)((k & h) ? L + k : k + h), 0);
    }
    LLVMValueRef mlo = LLVMConstVector(lo, (unsigned)L), mhi = LLVMConstVector(hi, (unsigned)L);
    for (int j = 0; j < L; j++) {
      if (j & h) continue;
      nv[j] = LLVMBuildShuffleVector(c->b, v[j], v[j + h], mlo, "");
      nv[j + h] = LLVMBuildShuffleVector(c->b, v[j], v[j + h], mhi, "");
    }
    for (int j = 0; j < L; j++) v[j] = nv[j];
  }
  return v[p];
}

static LLVMValueRef gen_load(cg_t *c, const tj_tir_expr_t *e) {
  const tj_buffer_t *buf = e->load.buffer;
  LLVMValueRef base = buffer_base(c, buf);
  if (!base) return NULL;
  const tj_tir_expr_t *idx = e->load.indices[0];
  if (e->dtype.lanes <= 1) {
    LLVMValueRef i = gen_expr(c, idx);
    return i ? load_scalar(c, buf, base, i) : NULL;
  }
  if (is_contiguous_ramp(idx) && buf->dtype.code != TJ_DT_BOOL) {
    LLVMValueRef i = gen_expr(c, idx->ramp.base);
    if (!i) return NULL;
    LLVMValueRef v = LLVMBuildLoad2(c->b, value_type(c, e->dtype), element_ptr(c, buf, base, i), "");
    LLVMSetAlignment(v, (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
    return v;
  }
  int64_t stride;
  if (is_short_stride_ramp(idx, &stride) && idx->dtype.lanes == e->dtype.lanes && buf->dtype.code != TJ_DT_BOOL)
    return load_short_stride(c, buf, base, idx, stride);
  int64_t p;
  if (idx->dtype.lanes == e->dtype.lanes && is_transposable(buf, idx, &p)) return load_transposed(c, buf, base, idx, p);
  LLVMValueRef iv = gen_expr(c, idx);
  if (!iv) return NULL;
  LLVMValueRef v = LLVMGetUndef(value_type(c, e->dtype));
  for (int l = 0; l < e->dtype.lanes; l++) {
    LLVMValueRef lane = LLVMConstInt(c->t_i32, (unsigned)l, 0);
    LLVMValueRef x = load_scalar(c, buf, base, LLVMBuildExtractElement(c->b, iv, lane, ""));
    v = LLVMBuildInsertElement(c->b, v, x, lane, "");
  }
  return v;
}

/* llvm.masked.load of `n` elements at ptr: lanes whose mask is false are not read (no
 * fault past a buffer's end), they take `passthru`. */
static LLVMValueRef masked_load(cg_t *c, LLVMTypeRef vt, LLVMValueRef ptr, unsigned align, LLVMValueRef mask,
                                LLVMValueRef passthru) {
  static const char name[] = "llvm.masked.load";
  unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
  if (!id) return cg_fail(c, TJ_ERR_INTERNAL, "LLVM has no %s", name);
  LLVMTypeRef over[2] = {vt, LLVMTypeOf(ptr)};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, over, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, over, 2);
  LLVMValueRef args[4] = {ptr, LLVMConstInt(c->t_i32, align, 0), mask, passthru};
  return LLVMBuildCall2(c->b, fty, fn, args, 4, "");
}

/* if_then_else(vector cond, load at a ramp of stride 1-4, b), as VectorizeLoop makes of
 * a padding fill vectorized along the padded dim: a masked load, so a lane whose
 * condition is false reads nothing (its index may be out of bounds), then a select. A
 * strided ramp loads its span with the mask spread to every s-th element. */
static LLVMValueRef gen_masked_if_then_else(cg_t *c, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *ld = e->call.args[1];
  const tj_tir_expr_t *idx = ld->kind == TJ_TIR_BUFFER_LOAD && ld->load.n_indices == 1 ? ld->load.indices[0] : NULL;
  int64_t stride = 0;
  int lanes = e->dtype.lanes;
  if (!idx || idx->kind != TJ_TIR_RAMP || !tj_tir_is_const_int(idx->ramp.stride, &stride) || stride < 1 ||
      stride > MAX_SHUFFLE_STRIDE || idx->dtype.lanes != lanes || lanes > 64 || ld->load.buffer->dtype.code == TJ_DT_BOOL)
    return cg_fail(c, TJ_ERR_UNSUPPORTED, "tir.if_then_else with a vector condition");
  const tj_buffer_t *buf = ld->load.buffer;
  LLVMValueRef cond = gen_expr(c, e->call.args[0]), other = cond ? gen_expr(c, e->call.args[2]) : NULL;
  LLVMValueRef base = other ? buffer_base(c, buf) : NULL, i = base ? gen_expr(c, idx->ramp.base) : NULL;
  if (!i) return NULL;
  int span = (int)(stride * (lanes - 1) + 1);
  LLVMTypeRef vt = LLVMVectorType(storage_type(c, buf->dtype), (unsigned)span);
  LLVMValueRef mask = cond;
  if (stride > 1) { /* element k of the span is lane k / s when k % s == 0, else off */
    LLVMValueRef sel[64 * MAX_SHUFFLE_STRIDE];
    for (int k = 0; k < span; k++)
      sel[k] = LLVMConstInt(c->t_i32, (unsigned long long)(k % stride ? lanes : k / stride), 0);
    mask = LLVMBuildShuffleVector(c->b, cond, LLVMConstNull(LLVMTypeOf(cond)), LLVMConstVector(sel, (unsigned)span), "");
  }
  LLVMValueRef v = masked_load(c, vt, element_ptr(c, buf, base, i), (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)),
                               mask, LLVMGetUndef(vt));
  if (!v) return NULL;
  if (stride > 1) {
    LLVMValueRef sel[64];
    for (int l = 0; l < lanes; l++) sel[l] = LLVMConstInt(c->t_i32, (unsigned long long)(l * stride), 0);
    v = LLVMBuildShuffleVector(c->b, v, LLVMGetUndef(vt), LLVMConstVector(sel, (unsigned)lanes), "");
  }
  return LLVMBuildSelect(c->b, cond, v, other, "");
}

/* cond ? a : b evaluating only the chosen side: branch + phi. */
static LLVMValueRef gen_if_then_else(cg_t *c, const tj_tir_expr_t *e) {
  if (e->call.n_args != 3) return cg_fail(c, TJ_ERR_VERIFY, "tir.if_then_else takes 3 arguments, got %d", e->call.n_args);
  if (e->call.args[0]->dtype.lanes > 1) return gen_masked_if_then_else(c, e);
  LLVMValueRef cond = gen_expr(c, e->call.args[0]);
  if (!cond) return NULL;
  LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ite.then");
  LLVMBasicBlockRef else_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ite.else");
  LLVMBasicBlockRef merge_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ite.end");
  LLVMBuildCondBr(c->b, cond, then_bb, else_bb);
  LLVMPositionBuilderAtEnd(c->b, then_bb);
  LLVMValueRef tv = gen_expr(c, e->call.args[1]);
  if (!tv) return NULL;
  LLVMBasicBlockRef then_end = LLVMGetInsertBlock(c->b);
  LLVMBuildBr(c->b, merge_bb);
  LLVMPositionBuilderAtEnd(c->b, else_bb);
  LLVMValueRef fv = gen_expr(c, e->call.args[2]);
  if (!fv) return NULL;
  LLVMBasicBlockRef else_end = LLVMGetInsertBlock(c->b);
  LLVMBuildBr(c->b, merge_bb);
  LLVMPositionBuilderAtEnd(c->b, merge_bb);
  LLVMValueRef phi = LLVMBuildPhi(c->b, LLVMTypeOf(tv), "");
  LLVMValueRef vals[2] = {tv, fv};
  LLVMBasicBlockRef bbs[2] = {then_end, else_end};
  LLVMAddIncoming(phi, vals, bbs, 2);
  return phi;
}

/* A libm function on float16/32 (the f suffix, half promoted) or float64. */
static LLVMValueRef call_libm(cg_t *c, const char *base, tj_dtype_t d, LLVMValueRef *args, int n) {
  if (d.lanes > 1) { /* lane by lane: libm has no vector entry points */
    LLVMValueRef v = LLVMGetUndef(value_type(c, d));
    for (int l = 0; l < d.lanes && v; l++) {
      LLVMValueRef lane = LLVMConstInt(c->t_i32, (unsigned)l, 0), largs[2];
      for (int i = 0; i < n; i++) largs[i] = LLVMBuildExtractElement(c->b, args[i], lane, "");
      LLVMValueRef r = call_libm(c, base, tj_dtype_element(d), largs, n);
      v = r ? LLVMBuildInsertElement(c->b, v, r, lane, "") : NULL;
    }
    return v;
  }
  bool dbl = d.bits == 64;
  LLVMTypeRef t = dbl ? LLVMDoubleTypeInContext(c->ctx) : LLVMFloatTypeInContext(c->ctx);
  char name[64];
  snprintf(name, sizeof name, "%s%s", base, dbl ? "" : "f");
  LLVMTypeRef params[2] = {t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
  if (!fn) fn = LLVMAddFunction(c->mod, name, fty);
  LLVMValueRef cargs[2];
  for (int i = 0; i < n; i++) cargs[i] = d.bits == 16 ? LLVMBuildFPExt(c->b, args[i], t, "") : args[i];
  LLVMValueRef r = LLVMBuildCall2(c->b, fty, fn, cargs, (unsigned)n, "");
  return d.bits == 16 ? LLVMBuildFPTrunc(c->b, r, scalar_type(c, d), "") : r;
}

typedef struct math_op {
  const char *tir, *llvm, *libm;
  int n_args;
} math_op_t;

static const math_op_t math_ops[] = {
    {"tir.exp", "llvm.exp", "exp", 1},         {"tir.exp2", "llvm.exp2", "exp2", 1},
    {"tir.exp10", "llvm.exp10", "exp10", 1},   {"tir.log", "llvm.log", "log", 1},
    {"tir.log2", "llvm.log2", "log2", 1},      {"tir.log10", "llvm.log10", "log10", 1},
    {"tir.sqrt", "llvm.sqrt", "sqrt", 1},      {"tir.sin", "llvm.sin", "sin", 1},
    {"tir.cos", "llvm.cos", "cos", 1},         {"tir.tan", NULL, "tan", 1},
    {"tir.fabs", "llvm.fabs", "fabs", 1},      {"tir.floor", "llvm.floor", "floor", 1},
    {"tir.ceil", "llvm.ceil", "ceil", 1},      {"tir.trunc", "llvm.trunc", "trunc", 1},
    /* TVM lowers tir.round to llvm.round: halves away from zero (numpy rounds them to even). */
    {"tir.round", "llvm.round", "round", 1},   {"tir.nearbyint", "llvm.nearbyint", "nearbyint", 1},
    {"tir.pow", "llvm.pow", "pow", 2},         {"tir.copysign", "llvm.copysign", "copysign", 2},
    {"tir.tanh", NULL, "tanh", 1},             {"tir.erf", NULL, "erf", 1},
    {"tir.log1p", NULL, "log1p", 1},           {"tir.expm1", NULL, "expm1", 1},
    {"tir.atan", NULL, "atan", 1},             {"tir.asin", NULL, "asin", 1},
    {"tir.acos", NULL, "acos", 1},             {"tir.sinh", NULL, "sinh", 1},
    {"tir.cosh", NULL, "cosh", 1},             {"tir.atan2", NULL, "atan2", 2},
    {"tir.fmod", NULL, "fmod", 2},             {"tir.hypot", NULL, "hypot", 2},
    {"tir.asinh", NULL, "asinh", 1},           {"tir.acosh", NULL, "acosh", 1},
    {"tir.atanh", NULL, "atanh", 1},
};

/* erf of float32 values as a rational function on x clamped to [-4, 4] (beyond, erf is
 * +-1 in float32): x * P(x^2) / Q(x^2), the approximation of TVM's topi fast_erf and of
 * XLA/Eigen. Within 4.2e-7 relative of the exact erf (about 3.5 ulp), and vectorizable,
 * where libm's erff is a scalar call per lane: a BERT-sized gelu (128 x 3072) went from
 * 2.8 ms to 0.28 ms (Intel Xeon, 1 thread). NaN propagates through the clamp's compares. */
static LLVMValueRef fast_erf_f32(cg_t *c, LLVMValueRef x) {
  static const double num[] = {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02};
  static const double den[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02};
  LLVMBuilderRef b = c->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef hi = LLVMConstReal(t, 4.0), lo = LLVMConstReal(t, -4.0);
  x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, hi, ""), hi, x, "");
  x = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, lo, ""), lo, x, "");
  LLVMValueRef x2 = LLVMBuildFMul(b, x, x, "");
  LLVMValueRef p = LLVMConstReal(t, num[0]), q = LLVMConstReal(t, den[0]);
  for (size_t i = 1; i < sizeof num / sizeof num[0]; i++)
    p = LLVMBuildFAdd(b, LLVMBuildFMul(b, p, x2, ""), LLVMConstReal(t, num[i]), "");
  for (size_t i = 1; i < sizeof den / sizeof den[0]; i++)
    q = LLVMBuildFAdd(b, LLVMBuildFMul(b, q, x2, ""), LLVMConstReal(t, den[i]), "");
  return LLVMBuildFDiv(b, LLVMBuildFMul(b, x, p, ""), q, "");
}

/* erf: float16 and float32 through fast_erf_f32 (float16 widened and rounded back),
 * float64 through libm. */
static LLVMValueRef gen_erf(cg_t *c, tj_dtype_t d, LLVMValueRef x) {
  if (d.bits == 64) return call_libm(c, "erf", d, &x, 1);
  if (d.bits == 32) return fast_erf_f32(c, x);
  tj_dtype_t f32 = {TJ_DT_FLOAT, 32, d.lanes};
  LLVMValueRef r = fast_erf_f32(c, LLVMBuildFPExt(c->b, x, value_type(c, f32), ""));
  return LLVMBuildFPTrunc(c->b, r, value_type(c, d), "");
}

/* float32 exp in the default float mode: tj_cg_fast_exp_f32 (strict mode keeps libm's
 * expf, bit for bit what the interpreter computes). */
static bool use_fast_exp(const cg_t *c, tj_dtype_t d) { return c->fp_contract && d.code == TJ_DT_FLOAT && d.bits == 32; }

static LLVMValueRef math_values(cg_t *c, const math_op_t *op, tj_dtype_t d, LLVMValueRef *args) {
  if (strcmp(op->tir, "tir.erf") == 0) return gen_erf(c, d, args[0]);
  if (strcmp(op->tir, "tir.exp") == 0 && use_fast_exp(c, d)) return tj_cg_fast_exp_f32(c, args[0]);
  if (op->llvm) {
    LLVMValueRef r = float_intrinsic(c, op->llvm, value_type(c, d), args, op->n_args);
    if (r) return r;
  }
  return call_libm(c, op->libm, d, args, op->n_args);
}

static LLVMValueRef gen_math(cg_t *c, const tj_tir_expr_t *e, const math_op_t *op) {
  if (e->call.n_args != op->n_args)
    return cg_fail(c, TJ_ERR_VERIFY, "%s takes %d argument(s), got %d", op->tir, op->n_args, e->call.n_args);
  bool bf16 = e->dtype.code == TJ_DT_BFLOAT;
  if (e->dtype.code != TJ_DT_FLOAT && !bf16) return cg_fail(c, TJ_ERR_UNSUPPORTED, "%s on a non-float dtype", op->tir);
  LLVMValueRef args[2];
  for (int i = 0; i < op->n_args; i++) {
    if (!(args[i] = gen_expr(c, e->call.args[i]))) return NULL;
    if (bf16) args[i] = tj_cg_bf16_widen(c, args[i]);
  }
  if (!bf16) return math_values(c, op, e->dtype, args);
  LLVMValueRef r = math_values(c, op, f32_lanes(e->dtype), args); /* float32's function, rounded once */
  return r ? tj_cg_bf16_narrow(c, r) : NULL;
}

static LLVMValueRef gen_unary_arg(cg_t *c, const tj_tir_expr_t *e) {
  if (e->call.n_args != 1) return cg_fail(c, TJ_ERR_VERIFY, "%s takes 1 argument, got %d", e->call.op, e->call.n_args);
  return gen_expr(c, e->call.args[0]);
}

static LLVMValueRef gen_float_special(cg_t *c, const tj_tir_expr_t *e) {
  const char *op = e->call.op;
  LLVMValueRef x = gen_unary_arg(c, e);
  if (!x) return NULL;
  tj_dtype_t d = e->call.args[0]->dtype;
  bool bf16 = d.code == TJ_DT_BFLOAT; /* computed in float32: rsqrt and sigmoid round once */
  if (bf16) x = tj_cg_bf16_widen(c, x), d = f32_lanes(d);
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMBuilderRef b = c->b;
  if (strcmp(op, "tir.rsqrt") == 0) { /* TVM: 1 / sqrt(x), two rounded ops */
    LLVMValueRef r = LLVMBuildFDiv(b, LLVMConstReal(t, 1.0), float_intrinsic(c, "llvm.sqrt", t, &x, 1), "");
    return bf16 ? tj_cg_bf16_narrow(c, r) : r;
  }
  if (strcmp(op, "tir.sigmoid") == 0) {
    LLVMValueRef nx = LLVMBuildFNeg(b, x, "");
    LLVMValueRef ex = use_fast_exp(c, d) ? tj_cg_fast_exp_f32(c, nx) : float_intrinsic(c, "llvm.exp", t, &nx, 1);
    LLVMValueRef r = LLVMBuildFDiv(b, LLVMConstReal(t, 1.0), LLVMBuildFAdd(b, LLVMConstReal(t, 1.0), ex, ""), "");
    return bf16 ? tj_cg_bf16_narrow(c, r) : r;
  }
  if (d.code != TJ_DT_FLOAT) return cg_fail(c, TJ_ERR_UNSUPPORTED, "%s on a non-float dtype", op);
  if (strcmp(op, "tir.isnan") == 0) return fcmp(c, LLVMRealUNO, x, x);
  LLVMValueRef ax = call_intrinsic(c, "llvm.fabs", t, &x, 1);
  LLVMValueRef inf = LLVMConstReal(t, 1.0 / 0.0);
  if (strcmp(op, "tir.isinf") == 0) return fcmp(c, LLVMRealOEQ, ax, inf);
  return fcmp(c, LLVMRealOLT, ax, inf); /* tir.isfinite */
}

/* Shifts as numpy defines them: an amount outside [0, bits) (LLVM: poison) shifts
 * everything out, giving 0, or -1 for an arithmetic right shift of a negative value. */
static LLVMValueRef gen_shift(cg_t *c, bool left, bool arithmetic, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = c->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  unsigned bits = int_bits(t);
  LLVMValueRef in_range = LLVMBuildICmp(b, LLVMIntULT, y, int_splat(t, bits), ""); /* negative: huge unsigned */
  LLVMValueRef zero = LLVMConstNull(t);
  if (left) return LLVMBuildSelect(b, in_range, LLVMBuildShl(b, x, LLVMBuildSelect(b, in_range, y, zero, ""), ""), zero, "");
  if (!arithmetic)
    return LLVMBuildSelect(b, in_range, LLVMBuildLShr(b, x, LLVMBuildSelect(b, in_range, y, zero, ""), ""), zero, "");
  return LLVMBuildAShr(b, x, LLVMBuildSelect(b, in_range, y, int_splat(t, bits - 1), ""), "");
}

static LLVMValueRef gen_bitwise(cg_t *c, const tj_tir_expr_t *e) {
  const char *op = e->call.op;
  if (strcmp(op, "tir.bitwise_not") == 0) {
    LLVMValueRef x = gen_unary_arg(c, e);
    return x ? LLVMBuildNot(c->b, x, "") : NULL;
  }
  if (e->call.n_args != 2) return cg_fail(c, TJ_ERR_VERIFY, "%s takes 2 arguments, got %d", op, e->call.n_args);
  LLVMValueRef x = gen_expr(c, e->call.args[0]);
  LLVMValueRef y = x ? gen_expr(c, e->call.args[1]) : NULL;
  if (!y) return NULL;
  if (strcmp(op, "tir.bitwise_and") == 0) return LLVMBuildAnd(c->b, x, y, "");
  if (strcmp(op, "tir.bitwise_or") == 0) return LLVMBuildOr(c->b, x, y, "");
  if (strcmp(op, "tir.bitwise_xor") == 0) return LLVMBuildXor(c->b, x, y, "");
  return gen_shift(c, strcmp(op, "tir.shift_left") == 0, is_signed(e->dtype), x, y);
}

/* tir.prefetch(tir.address_of(buf[i]), rw, locality, cache_type) as TVM lowers it:
 * llvm.prefetch, a hint that never faults (the schedule's GEMM tile fetches the next
 * weight panel into the caches while it computes the current one). */
static LLVMValueRef gen_prefetch(cg_t *c, const tj_tir_expr_t *e) {
  const tj_tir_expr_t *addr = e->call.n_args == 4 ? e->call.args[0] : NULL;
  const tj_tir_expr_t *at = addr && addr->kind == TJ_TIR_CALL && !strcmp(addr->call.op, "tir.address_of") &&
                                    addr->call.n_args == 1
                                ? addr->call.args[0]
                                : NULL;
  if (!at || at->kind != TJ_TIR_BUFFER_LOAD || at->load.n_indices != 1 || at->dtype.lanes != 1)
    return cg_fail(c, TJ_ERR_UNSUPPORTED, "tir.prefetch wants tir.address_of(buffer[index]) and 3 integers");
  int64_t flags[3];
  for (int i = 0; i < 3; i++)
    if (!tj_tir_is_const_int(e->call.args[1 + i], &flags[i]) || flags[i] < 0 || flags[i] > 3)
      return cg_fail(c, TJ_ERR_UNSUPPORTED, "tir.prefetch: argument %d is not a constant 0..3", i + 2);
  LLVMValueRef base = buffer_base(c, at->load.buffer);
  LLVMValueRef i = base ? gen_expr(c, at->load.indices[0]) : NULL;
  if (!i) return NULL;
  static const char name[] = "llvm.prefetch";
  unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
  if (!id) return cg_fail(c, TJ_ERR_INTERNAL, "LLVM has no %s", name);
  LLVMValueRef ptr = element_ptr(c, at->load.buffer, base, i);
  LLVMTypeRef over[1] = {LLVMTypeOf(ptr)};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, over, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, over, 1);
  LLVMValueRef args[4] = {ptr, LLVMConstInt(c->t_i32, (unsigned long long)flags[0], 0),
                          LLVMConstInt(c->t_i32, (unsigned long long)flags[1], 0),
                          LLVMConstInt(c->t_i32, (unsigned long long)flags[2], 0)};
  return LLVMBuildCall2(c->b, fty, fn, args, 4, "");
}

static LLVMValueRef gen_call(cg_t *c, const tj_tir_expr_t *e) {
  const char *op = e->call.op;
  if (!strcmp(op, "tir.prefetch")) return gen_prefetch(c, e);
  if (!strcmp(op, "tir.tvmjit.bf16_dot2")) return tj_cg_bf16_dot2(c, e);
  if (strcmp(op, "tir.if_then_else") == 0) return gen_if_then_else(c, e);
  for (size_t i = 0; i < sizeof math_ops / sizeof math_ops[0]; i++)
    if (strcmp(op, math_ops[i].tir) == 0) return gen_math(c, e, &math_ops[i]);
  if (!strcmp(op, "tir.rsqrt") || !strcmp(op, "tir.sigmoid") || !strcmp(op, "tir.isnan") ||
      !strcmp(op, "tir.isinf") || !strcmp(op, "tir.isfinite"))
    return gen_float_special(c, e);
  if (!strcmp(op, "tir.likely")) return gen_unary_arg(c, e);
  if (!strcmp(op, "tir.reinterpret")) {
    LLVMValueRef x = gen_unary_arg(c, e);
    return x ? LLVMBuildBitCast(c->b, x, value_type(c, e->dtype), "") : NULL;
  }
  if (!strncmp(op, "tir.bitwise_", 12) || !strcmp(op, "tir.shift_left") || !strcmp(op, "tir.shift_right"))
    return gen_bitwise(c, e);
  return cg_fail(c, TJ_ERR_UNSUPPORTED, "intrinsic '%s' is not supported by the JIT", op);
}

static LLVMValueRef gen_broadcast(cg_t *c, LLVMValueRef s, int lanes) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), (unsigned)lanes);
  LLVMValueRef v = LLVMBuildInsertElement(c->b, LLVMGetUndef(vt), s, LLVMConstInt(c->t_i32, 0, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(c->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(c->b, v, LLVMGetUndef(vt), mask, "");
}

static LLVMValueRef gen_ramp(cg_t *c, const tj_tir_expr_t *e) {
  LLVMValueRef base = gen_expr(c, e->ramp.base);
  LLVMValueRef stride = base ? gen_expr(c, e->ramp.stride) : NULL;
  if (!stride) return NULL;
  int lanes = e->dtype.lanes;
  if (lanes > 64) return cg_fail(c, TJ_ERR_UNSUPPORTED, "vectors wider than 64 lanes");
  LLVMValueRef steps[64];
  for (int i = 0; i < lanes; i++) steps[i] = LLVMConstInt(LLVMTypeOf(base), (unsigned long long)i, 0);
  LLVMValueRef offs = LLVMBuildMul(c->b, gen_broadcast(c, stride, lanes), LLVMConstVector(steps, (unsigned)lanes), "");
  return LLVMBuildAdd(c->b, gen_broadcast(c, base, lanes), offs, "");
}

static LLVMValueRef gen_expr(cg_t *c, const tj_tir_expr_t *e) {
  if (c->err) return NULL;
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
      if (e->dtype.code == TJ_DT_FLOAT) return LLVMConstReal(value_type(c, e->dtype), (double)e->int_imm);
      if (e->dtype.code == TJ_DT_BFLOAT) return const_int(c, e->dtype, tj_float_to_bfloat((float)e->int_imm));
      return const_int(c, e->dtype, e->dtype.code == TJ_DT_BOOL ? e->int_imm != 0 : e->int_imm);
    case TJ_TIR_FLOAT_IMM: {
      if (e->dtype.code == TJ_DT_BFLOAT) return const_int(c, e->dtype, tj_float_to_bfloat((float)e->float_imm));
      LLVMTypeRef t = value_type(c, e->dtype);
      return t ? LLVMConstReal(t, e->float_imm) : NULL;
    }
    case TJ_TIR_STRING_IMM: return cg_fail(c, TJ_ERR_UNSUPPORTED, "string literal \"%s\" in a kernel", e->string_imm);
    case TJ_TIR_VAR: return lookup(c, e);
    case TJ_TIR_NOT: {
      LLVMValueRef x = gen_expr(c, e->unary.operand);
      return x ? LLVMBuildNot(c->b, x, "") : NULL;
    }
    case TJ_TIR_CAST: return gen_cast(c, e->unary.operand->dtype, e->dtype, gen_expr(c, e->unary.operand));
    case TJ_TIR_SELECT: {
      LLVMValueRef cond = gen_expr(c, e->select.cond);
      LLVMValueRef t = cond ? gen_expr(c, e->select.true_value) : NULL;
      LLVMValueRef f = t ? gen_expr(c, e->select.false_value) : NULL;
      return f ? LLVMBuildSelect(c->b, cond, t, f, "") : NULL;
    }
    case TJ_TIR_BUFFER_LOAD: return gen_load(c, e);
    case TJ_TIR_LET: {
      LLVMValueRef v = gen_expr(c, e->let.value);
      if (!v || !bind(c, e->let.var, v)) return NULL;
      return gen_expr(c, e->let.body);
    }
    case TJ_TIR_CALL: return gen_call(c, e);
    case TJ_TIR_RAMP: return gen_ramp(c, e);
    case TJ_TIR_BROADCAST: {
      LLVMValueRef s = gen_expr(c, e->broadcast.value);
      return s ? gen_broadcast(c, s, e->dtype.lanes) : NULL;
    }
    default: return gen_binary(c, e);
  }
}

/* ---------------- statements ---------------- */

static bool gen_stmt(cg_t *c, const tj_tir_stmt_t *s);

static void store_scalar(cg_t *c, const tj_buffer_t *buf, LLVMValueRef base, LLVMValueRef index, LLVMValueRef v) {
  if (buf->dtype.code == TJ_DT_BOOL) v = LLVMBuildZExt(c->b, v, c->t_i8, "");
  LLVMValueRef st = LLVMBuildStore(c->b, v, element_ptr(c, buf, base, index));
  LLVMSetAlignment(st, (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
}

static bool gen_store(cg_t *c, const tj_tir_stmt_t *s) {
  const tj_buffer_t *buf = s->store.buffer;
  const tj_tir_expr_t *idx = s->store.indices[0];
  LLVMValueRef base = buffer_base(c, buf);
  LLVMValueRef v = base ? gen_expr(c, s->store.value) : NULL;
  if (!v) return false;
  if (!tj_dtype_eq(tj_dtype_element(s->store.value->dtype), tj_dtype_element(buf->dtype))) {
    char b1[TJ_DTYPE_BUFSIZE], b2[TJ_DTYPE_BUFSIZE];
    return cg_fail(c, TJ_ERR_VERIFY, "store of %s into %s buffer '%s'", tj_dtype_str(s->store.value->dtype, b1),
                   tj_dtype_str(buf->dtype, b2), buf->name), false;
  }
  int lanes = s->store.value->dtype.lanes;
  if (lanes <= 1) {
    LLVMValueRef i = gen_expr(c, idx);
    if (!i) return false;
    store_scalar(c, buf, base, i, v);
    return true;
  }
  if (is_contiguous_ramp(idx) && buf->dtype.code != TJ_DT_BOOL) {
    LLVMValueRef i = gen_expr(c, idx->ramp.base);
    if (!i) return false;
    LLVMValueRef st = LLVMBuildStore(c->b, v, element_ptr(c, buf, base, i));
    LLVMSetAlignment(st, (unsigned)tj_dtype_bytes(tj_dtype_element(buf->dtype)));
    return true;
  }
  LLVMValueRef iv = gen_expr(c, idx);
  if (!iv) return false;
  for (int l = 0; l < lanes; l++) {
    LLVMValueRef lane = LLVMConstInt(c->t_i32, (unsigned)l, 0);
    store_scalar(c, buf, base, LLVMBuildExtractElement(c->b, iv, lane, ""), LLVMBuildExtractElement(c->b, v, lane, ""));
  }
  return true;
}

/* for (v = min; v < min + extent; ++v) body. The outermost parallel loop is outlined
 * (codegen_parallel.c); vectorized/unrolled kinds run serially for now. */
static bool gen_for(cg_t *c, const tj_tir_stmt_t *s) {
  if (s->loop.kind == TJ_FOR_PARALLEL && !c->in_parallel) return tj_cg_parallel_for(c, s);
  tj_dtype_t vt = s->loop.var->dtype;
  LLVMValueRef min = gen_cast(c, s->loop.min->dtype, vt, gen_expr(c, s->loop.min));
  LLVMValueRef ext = min ? gen_cast(c, s->loop.extent->dtype, vt, gen_expr(c, s->loop.extent)) : NULL;
  if (!ext) return false;
  bool sgn = is_signed(vt);
  LLVMValueRef end = sgn ? LLVMBuildNSWAdd(c->b, min, ext, "") : LLVMBuildAdd(c->b, min, ext, "");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
  LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "for.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "for.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "for.end");
  LLVMBuildBr(c->b, header);
  LLVMPositionBuilderAtEnd(c->b, header);
  LLVMValueRef iv = LLVMBuildPhi(c->b, LLVMTypeOf(min), s->loop.var->var.name);
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, sgn ? LLVMIntSLT : LLVMIntULT, iv, end, ""), body, exit);
  LLVMPositionBuilderAtEnd(c->b, body);
  if (!bind(c, s->loop.var, iv) || !gen_stmt(c, s->loop.body)) return false;
  LLVMValueRef one = LLVMConstInt(LLVMTypeOf(iv), 1, 0);
  LLVMValueRef next = sgn ? LLVMBuildNSWAdd(c->b, iv, one, "") : LLVMBuildAdd(c->b, iv, one, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
  LLVMBuildBr(c->b, header);
  LLVMValueRef vals[2] = {min, next};
  LLVMBasicBlockRef bbs[2] = {pre, latch};
  LLVMAddIncoming(iv, vals, bbs, 2);
  LLVMPositionBuilderAtEnd(c->b, exit);
  return true;
}

static bool gen_if(cg_t *c, const tj_tir_stmt_t *s) {
  LLVMValueRef cond = gen_expr(c, s->if_.cond);
  if (!cond) return false;
  LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "if.then");
  LLVMBasicBlockRef else_bb = s->if_.else_stmt ? LLVMAppendBasicBlockInContext(c->ctx, c->fn, "if.else") : NULL;
  LLVMBasicBlockRef end_bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "if.end");
  LLVMBuildCondBr(c->b, cond, then_bb, else_bb ? else_bb : end_bb);
  LLVMPositionBuilderAtEnd(c->b, then_bb);
  if (!gen_stmt(c, s->if_.then_stmt)) return false;
  LLVMBuildBr(c->b, end_bb);
  if (else_bb) {
    LLVMPositionBuilderAtEnd(c->b, else_bb);
    if (!gen_stmt(c, s->if_.else_stmt)) return false;
    LLVMBuildBr(c->b, end_bb);
  }
  LLVMPositionBuilderAtEnd(c->b, end_bb);
  return true;
}

static LLVMValueRef helper_fn(cg_t *c, const char *name, LLVMTypeRef *out_ty) {
  bool is_alloc = strcmp(name, TJ_KERNEL_HELPER_ALLOC) == 0;
  LLVMTypeRef param = is_alloc ? c->t_i64 : c->t_ptr;
  *out_ty = LLVMFunctionType(is_alloc ? c->t_ptr : c->t_void, &param, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
  return fn ? fn : LLVMAddFunction(c->mod, name, *out_ty);
}

/* Small static buffers: an alloca in the entry block. Others: the heap helper, freed
 * when the body ends; when the allocation fails the body is skipped (the helper
 * records the failure for tj_kernel_take_alloc_failures). */
static bool gen_allocate(cg_t *c, const tj_tir_stmt_t *s) {
  const tj_buffer_t *buf = s->allocate.buffer;
  LLVMTypeRef et = storage_type(c, buf->dtype);
  if (!et) return false;
  if (tj_tir_alloc_on_stack(buf)) {
    int64_t n = 0;
    tj_buffer_static_size(buf, &n);
    LLVMValueRef a = LLVMBuildAlloca(c->alloca_b, LLVMArrayType2(et, (uint64_t)(n > 0 ? n : 1)), buf->name);
    LLVMSetAlignment(a, 64);
    return bind(c, buf->data, a) && gen_stmt(c, s->allocate.body);
  }
  LLVMValueRef n = gen_cast(c, buf->shape[0]->dtype, TJ_I64, gen_expr(c, buf->shape[0]));
  if (!n) return false;
  LLVMValueRef bytes = LLVMBuildMul(c->b, n, LLVMConstInt(c->t_i64, tj_dtype_bytes(buf->dtype), 0), "");
  LLVMTypeRef alloc_ty, free_ty;
  LLVMValueRef alloc_fn = helper_fn(c, TJ_KERNEL_HELPER_ALLOC, &alloc_ty);
  LLVMValueRef free_fn = helper_fn(c, TJ_KERNEL_HELPER_FREE, &free_ty);
  LLVMValueRef p = LLVMBuildCall2(c->b, alloc_ty, alloc_fn, &bytes, 1, buf->name);
  LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "alloc.ok");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "alloc.end");
  LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, p, ""), done, run);
  LLVMPositionBuilderAtEnd(c->b, run);
  if (!bind(c, buf->data, p) || !gen_stmt(c, s->allocate.body)) return false;
  LLVMBuildCall2(c->b, free_ty, free_fn, &p, 1, "");
  LLVMBuildBr(c->b, done);
  LLVMPositionBuilderAtEnd(c->b, done);
  return true;
}

static bool gen_stmt(cg_t *c, const tj_tir_stmt_t *s) {
  if (c->err) return false;
  switch (s->kind) {
    case TJ_TIR_FOR: return gen_for(c, s);
    case TJ_TIR_BUFFER_STORE: return gen_store(c, s);
    case TJ_TIR_LET_STMT: {
      LLVMValueRef v = gen_expr(c, s->let.value);
      return v && bind(c, s->let.var, v) && gen_stmt(c, s->let.body);
    }
    case TJ_TIR_IF: return gen_if(c, s);
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (!gen_stmt(c, s->seq.stmts[i])) return false;
      return true;
    case TJ_TIR_EVALUATE: return gen_expr(c, s->evaluate.value) != NULL;
    case TJ_TIR_ALLOCATE: return gen_allocate(c, s);
    case TJ_TIR_BLOCK_REALIZE:
      return cg_fail(c, TJ_ERR_INTERNAL, "block '%s' reached codegen: lower the function first (tj_tir_lower)",
                     s->realize.block->name), false;
    default: return cg_fail(c, TJ_ERR_INTERNAL, "unknown statement kind %d", (int)s->kind), false;
  }
}

/* ---------------- the function ---------------- */

static void add_enum_attr(cg_t *c, LLVMValueRef fn, unsigned index, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

/* Binds params: buffers to pointer args (in param order), scalars to trailing i64s. */
static bool bind_params(cg_t *c, const tj_prim_func_t *f, int n_buffers) {
  int next_buf = 0, next_scalar = n_buffers;
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *buf = f->buffer_map ? f->buffer_map[i] : NULL;
    const tj_tir_expr_t *p = f->params[i];
    if (buf) {
      LLVMValueRef arg = LLVMGetParam(c->fn, (unsigned)next_buf++);
      if (!bind(c, p, arg) || !bind(c, buf->data, arg)) return false;
      continue;
    }
    tj_dtype_t d = p->dtype;
    if (d.lanes != 1 || (d.code != TJ_DT_INT && d.code != TJ_DT_UINT && d.code != TJ_DT_BOOL))
      return cg_fail(c, TJ_ERR_UNSUPPORTED, "scalar parameter '%s': only integer scalars are passed (as int64)",
                     p->var.name), false;
    LLVMValueRef arg = LLVMGetParam(c->fn, (unsigned)next_scalar++);
    if (!bind(c, p, gen_cast(c, TJ_I64, d, arg))) return false;
  }
  return true;
}

tj_status_t *tj_codegen_kernel(LLVMModuleRef mod, const tj_prim_func_t *f, const char *symbol, int *out_n_buffers,
                               int *out_n_scalars) {
  cg_t c = {.mod = mod, .ctx = LLVMGetModuleContext(mod), .name = symbol,
            .fp_contract = tj_attrs_get_int(f->attrs, TJ_ATTR_FP_CONTRACT, 0) != 0};
  c.t_i1 = LLVMInt1TypeInContext(c.ctx);
  c.t_i8 = LLVMInt8TypeInContext(c.ctx);
  c.t_i32 = LLVMInt32TypeInContext(c.ctx);
  c.t_i64 = LLVMInt64TypeInContext(c.ctx);
  c.t_ptr = LLVMPointerTypeInContext(c.ctx, 0);
  c.t_void = LLVMVoidTypeInContext(c.ctx);
  int n_buffers = 0, n_scalars = 0;
  for (int i = 0; i < f->n_params; i++) (f->buffer_map && f->buffer_map[i]) ? n_buffers++ : n_scalars++;
  LLVMTypeRef *params = tj_malloc(sizeof(LLVMTypeRef) * (size_t)(f->n_params > 0 ? f->n_params : 1));
  if (!params) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "codegen '%s': out of memory", symbol);
  for (int i = 0; i < f->n_params; i++) params[i] = i < n_buffers ? c.t_ptr : c.t_i64;
  c.fn = LLVMAddFunction(mod, symbol, LLVMFunctionType(c.t_void, params, (unsigned)f->n_params, 0));
  tj_free(params);
  add_enum_attr(&c, c.fn, LLVMAttributeFunctionIndex, "nounwind");
  /* call_tir is destination-passing: outputs are fresh, so no pointer aliases a
   * written one (two read-only params may share storage, which noalias allows). */
  for (int i = 0; i < n_buffers; i++) add_enum_attr(&c, c.fn, (unsigned)i + 1, "noalias");
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c.ctx, c.fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c.ctx, c.fn, "start");
  c.b = LLVMCreateBuilderInContext(c.ctx);
  c.alloca_b = LLVMCreateBuilderInContext(c.ctx);
  LLVMPositionBuilderAtEnd(c.b, entry);
  LLVMValueRef br = LLVMBuildBr(c.b, start);
  LLVMPositionBuilderBefore(c.alloca_b, br);
  LLVMPositionBuilderAtEnd(c.b, start);
  if (bind_params(&c, f, n_buffers) && gen_stmt(&c, f->body)) LLVMBuildRetVoid(c.b);
  LLVMDisposeBuilder(c.b);
  LLVMDisposeBuilder(c.alloca_b);
  tj_free(c.vars);
  if (c.err) return c.err;
  *out_n_buffers = n_buffers;
  *out_n_scalars = n_scalars;
  return NULL;
}

/* ---------------- for the other codegen files (codegen.h) ---------------- */

bool tj_cg_stmt(cg_t *c, const tj_tir_stmt_t *s) { return gen_stmt(c, s); }
LLVMValueRef tj_cg_expr(cg_t *c, const tj_tir_expr_t *e) { return gen_expr(c, e); }
LLVMValueRef tj_cg_cast(cg_t *c, tj_dtype_t from, tj_dtype_t to, LLVMValueRef v) { return gen_cast(c, from, to, v); }
bool tj_cg_bind(cg_t *c, const tj_tir_expr_t *var, LLVMValueRef v) { return bind(c, var, v); }
LLVMValueRef tj_cg_lookup(cg_t *c, const tj_tir_expr_t *var) { return lookup(c, var); }
