/* bfloat16 in kernels: a bfloat16 value is its 16 bits in an i16 (lanes: <N x i16>), so
 * loads, stores, selects, masked loads and shuffles are the integer ones unchanged.
 * Arithmetic widens to float32 (shift left 16: exact), runs there, and narrows back
 * rounding to nearest even, as TVM's BF16 legalization does (one float32 op, then one
 * rounding), and as tj_float_to_bfloat / the interpreter do bit for bit.
 *
 * Why integers and not LLVM's `bfloat` type: LLVM 19 on x86 without AVX512-BF16 lowers
 * `fptrunc float to bfloat` to a call of __truncsfbf2 per element (compiler-rt; GCC 12's
 * libgcc has no such symbol), so it neither vectorizes nor links in ORC everywhere. The
 * integer sequence below is add, shift, compare, select: it vectorizes on every x86 host. */
#include "jit/codegen.h"

static LLVMTypeRef with_lanes(LLVMValueRef like, LLVMTypeRef elem) {
  LLVMTypeRef t = LLVMTypeOf(like);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMVectorType(elem, LLVMGetVectorSize(t)) : elem;
}

static LLVMValueRef splat_int(LLVMTypeRef t, unsigned long long v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  LLVMValueRef s = LLVMConstInt(LLVMGetElementType(t), v, 0), elems[64];
  unsigned n = LLVMGetVectorSize(t);
  for (unsigned i = 0; i < n && i < 64; i++) elems[i] = s;
  return LLVMConstVector(elems, n);
}

/* i16 bits -> float32, exact. */
LLVMValueRef tj_cg_bf16_widen(cg_t *c, LLVMValueRef bits) {
  LLVMTypeRef i32 = with_lanes(bits, c->t_i32);
  LLVMValueRef w = LLVMBuildShl(c->b, LLVMBuildZExt(c->b, bits, i32, ""), splat_int(i32, 16), "");
  return LLVMBuildBitCast(c->b, w, with_lanes(bits, LLVMFloatTypeInContext(c->ctx)), "");
}

/* float32 -> i16 bits, round to nearest even: (x + 0x7fff + bit16(x)) >> 16. A NaN keeps
 * its sign and top payload bits and is made quiet (| 0x40), so it can never round to
 * infinity; infinities and overflow to infinity come out of the same addition. */
LLVMValueRef tj_cg_bf16_narrow(cg_t *c, LLVMValueRef f) {
  LLVMBuilderRef b = c->b;
  LLVMTypeRef i32 = with_lanes(f, c->t_i32), i16 = with_lanes(f, LLVMInt16TypeInContext(c->ctx));
  LLVMValueRef x = LLVMBuildBitCast(b, f, i32, "");
  LLVMValueRef hi = LLVMBuildLShr(b, x, splat_int(i32, 16), "");
  LLVMValueRef odd = LLVMBuildAnd(b, hi, splat_int(i32, 1), "");
  LLVMValueRef sum = LLVMBuildAdd(b, x, LLVMBuildAdd(b, odd, splat_int(i32, 0x7fff), ""), "");
  LLVMValueRef rounded = LLVMBuildLShr(b, sum, splat_int(i32, 16), "");
  LLVMValueRef quiet_nan = LLVMBuildOr(b, hi, splat_int(i32, 0x40), "");
  LLVMValueRef is_nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  return LLVMBuildTrunc(b, LLVMBuildSelect(b, is_nan, quiet_nan, rounded, ""), i16, "");
}
