/* exp of float32 values (scalars or vectors) as straight-line LLVM IR, for the default
 * float mode (codegen.h). llvm.exp on a <16 x float> becomes 16 calls of libm's expf,
 * one lane at a time: softmax spent 60 % of its time there. This vectorizes.
 *
 * The method (Cephes expf, Cody-Waite reduction, with FMA):
 *   x clamped to [-104, 89] (beyond, expf is 0 or +inf; the clamp keeps n in [-150, 128])
 *   n = rint(x * log2(e)),  r = x - n * ln2  (ln2 split in two: n * LN2_HI is exact)
 *   e^r = 1 + r + r^2 * P(r) on [-ln2/2, ln2/2], P of degree 5
 *   e^x = e^r * 2^(n/2) * 2^(n - n/2)
 * The scale is two powers of two, each a normal float, so 2^128 (x near 88.72) and
 * results down to the smallest denormal come out of one rounding of the last multiply.
 * NaN in gives NaN out (selected at the end; the clamp maps it to a bound first, so no
 * lane converts a NaN to an integer). Max error 1.01 ulp against the exact exp over
 * every float32 in (-110, 90) (libm's expf: 0.50 ulp); +-inf give +inf and 0. */
#include <string.h>

#include "jit/codegen.h"

static const double LOG2E = 1.44269504088896341;
static const double LN2_HI = 0.693359375; /* 9 significant bits: n * LN2_HI is exact for |n| <= 150 */
static const double LN2_LO = -2.12194440e-4;
static const double EXP_HI = 89.0, EXP_LO = -104.0;
/* P(r), highest degree first */
static const double POLY[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                              4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1};

/* The constant v in every lane of t (a float or integer scalar or vector type). */
static LLVMValueRef splat(LLVMTypeRef t, double v, bool is_int) {
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef et = vec ? LLVMGetElementType(t) : t;
  LLVMValueRef s = is_int ? LLVMConstInt(et, (unsigned long long)(long long)v, 1) : LLVMConstReal(et, v);
  if (!vec) return s;
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef lanes[64];
  for (unsigned i = 0; i < n && i < 64; i++) lanes[i] = s;
  return LLVMConstVector(lanes, n < 64 ? n : 64);
}

static LLVMValueRef intrinsic(cg_t *c, const char *name, LLVMTypeRef t, LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, &t, 1);
  return LLVMBuildCall2(c->b, LLVMIntrinsicGetType(c->ctx, id, &t, 1), fn, args, n, "");
}

/* a * b + c, one FMA where the target has one */
static LLVMValueRef mul_add(cg_t *c, LLVMValueRef a, LLVMValueRef b, LLVMValueRef add) {
  LLVMValueRef args[3] = {a, b, add};
  return intrinsic(c, "llvm.fmuladd", LLVMTypeOf(a), args, 3);
}

/* 2^k as a float, for integer k in [-126, 127] */
static LLVMValueRef pow2(cg_t *c, LLVMValueRef k, LLVMTypeRef ft) {
  LLVMTypeRef it = LLVMTypeOf(k);
  LLVMValueRef biased = LLVMBuildAdd(c->b, k, splat(it, 127, true), "");
  return LLVMBuildBitCast(c->b, LLVMBuildShl(c->b, biased, splat(it, 23, true), ""), ft, "");
}

LLVMValueRef tj_cg_fast_exp_f32(cg_t *c, LLVMValueRef x) {
  LLVMBuilderRef b = c->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef it = vec ? LLVMVectorType(c->t_i32, LLVMGetVectorSize(t)) : c->t_i32;
  /* x < HI ? x : HI maps NaN to HI (one vminps), likewise for LO */
  LLVMValueRef hi = splat(t, EXP_HI, false), lo = splat(t, EXP_LO, false);
  LLVMValueRef xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, hi, ""), x, hi, "");
  xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, xc, lo, ""), xc, lo, "");
  LLVMValueRef scaled = LLVMBuildFMul(b, xc, splat(t, LOG2E, false), "");
  LLVMValueRef n = intrinsic(c, "llvm.rint", t, &scaled, 1);
  LLVMValueRef r = mul_add(c, n, splat(t, -LN2_HI, false), xc);
  r = mul_add(c, n, splat(t, -LN2_LO, false), r);
  LLVMValueRef p = splat(t, POLY[0], false);
  for (size_t i = 1; i < sizeof POLY / sizeof POLY[0]; i++) p = mul_add(c, p, r, splat(t, POLY[i], false));
  LLVMValueRef r2 = LLVMBuildFMul(b, r, r, "");
  p = LLVMBuildFAdd(b, mul_add(c, p, r2, r), splat(t, 1.0, false), "");
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, it, "");
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, splat(it, 1, true), "");
  LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef e = LLVMBuildFMul(b, LLVMBuildFMul(b, p, pow2(c, n1, t), ""), pow2(c, n2, t), "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, e, "");
}
