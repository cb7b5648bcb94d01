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
#include <string.h>

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

/* ---- tir.tvmjit.bf16_dot2(acc, a0, a1, b0, b1): acc + a0 * b0 + a1 * b1 ----
 * The bfloat16 pair dot product the conv schedule makes (schedule_conv.c, "bfloat16
 * pairs"). With AVX512-BF16 and 16 lanes it is one vdpbf16ps: lane i of its bfloat16
 * operands holds the pair (x0[i], x1[i]) in elements 2i, 2i + 1. Its order of sums and
 * its flushing of denormals are the instruction's (docs/numerics.md); elsewhere the
 * same order in plain float32 (products exact, the odd term first, as the Intel SDM's
 * pseudo-code adds them). */

static LLVMValueRef dot2_fail(cg_t *c, tj_code_t code, const char *msg) {
  if (!c->err) c->err = tj_status_new(code, "codegen '%s': %s", c->name, msg);
  return NULL;
}

static LLVMValueRef call_intrinsic(cg_t *c, const char *name, LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) return dot2_fail(c, TJ_ERR_INTERNAL, "LLVM has no llvm.x86.avx512bf16.dpbf16ps.512");
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, NULL, 0);
  return LLVMBuildCall2(c->b, fty, fn, args, n, "");
}

/* <32 x bfloat> with (x0[i], x1[i]) at 2i, 2i + 1. Two broadcasts (a scalar pair read
 * once per k step for every lane) become one 32-bit broadcast; vectors interleave. */
static LLVMValueRef pair_operand(cg_t *c, const tj_tir_expr_t *x0, const tj_tir_expr_t *x1) {
  LLVMBuilderRef b = c->b;
  LLVMTypeRef i16 = LLVMInt16TypeInContext(c->ctx), v32 = LLVMVectorType(LLVMBFloatTypeInContext(c->ctx), 32);
  if (x0->kind == TJ_TIR_BROADCAST && x1->kind == TJ_TIR_BROADCAST) {
    LLVMValueRef s0 = tj_cg_expr(c, x0->broadcast.value);
    LLVMValueRef s1 = s0 ? tj_cg_expr(c, x1->broadcast.value) : NULL;
    if (!s1) return NULL;
    LLVMValueRef two = LLVMGetUndef(LLVMVectorType(i16, 2));
    two = LLVMBuildInsertElement(b, two, s0, LLVMConstInt(c->t_i32, 0, 0), "");
    two = LLVMBuildInsertElement(b, two, s1, LLVMConstInt(c->t_i32, 1, 0), "");
    LLVMValueRef word = LLVMBuildBitCast(b, two, c->t_i32, "");
    LLVMValueRef v =
        LLVMBuildInsertElement(b, LLVMGetUndef(LLVMVectorType(c->t_i32, 16)), word, LLVMConstInt(c->t_i32, 0, 0), "");
    v = LLVMBuildShuffleVector(b, v, v, LLVMConstNull(LLVMVectorType(c->t_i32, 16)), "");
    return LLVMBuildBitCast(b, v, v32, "");
  }
  LLVMValueRef v0 = tj_cg_expr(c, x0);
  LLVMValueRef v1 = v0 ? tj_cg_expr(c, x1) : NULL;
  if (!v1) return NULL;
  LLVMValueRef mask[32];
  for (unsigned i = 0; i < 32; i++) mask[i] = LLVMConstInt(c->t_i32, (i % 2) * 16 + i / 2, 0);
  return LLVMBuildBitCast(b, LLVMBuildShuffleVector(b, v0, v1, LLVMConstVector(mask, 32), ""), v32, "");
}

LLVMValueRef tj_cg_bf16_dot2(cg_t *c, const tj_tir_expr_t *e) {
  if (e->call.n_args != 5 || e->dtype.code != TJ_DT_FLOAT || e->dtype.bits != 32)
    return dot2_fail(c, TJ_ERR_VERIFY, "tir.tvmjit.bf16_dot2 takes a float32 accumulator and 4 bfloat16 values");
  for (int i = 1; i < 5; i++)
    if (e->call.args[i]->dtype.code != TJ_DT_BFLOAT || e->call.args[i]->dtype.lanes != e->dtype.lanes)
      return dot2_fail(c, TJ_ERR_VERIFY, "tir.tvmjit.bf16_dot2: an argument is not bfloat16 with the result's lanes");
  const tj_tir_expr_t *const *x = e->call.args;
  LLVMValueRef acc = tj_cg_expr(c, x[0]);
  if (!acc) return NULL;
  if (e->dtype.lanes == 16 && tj_jit_host_bf16()) {
    LLVMValueRef a = pair_operand(c, x[1], x[2]);
    LLVMValueRef w = a ? pair_operand(c, x[3], x[4]) : NULL;
    if (!w) return NULL;
    /* the products commute exactly; vdpbf16ps's last operand may be a memory operand,
     * so a broadcast pair goes there to be folded ({1to16}) */
    LLVMValueRef args[3] = {acc, w, a};
    return call_intrinsic(c, "llvm.x86.avx512bf16.dpbf16ps.512", args, 3);
  }
  LLVMValueRef v[4];
  for (int i = 0; i < 4; i++)
    if (!(v[i] = tj_cg_expr(c, x[i + 1]))) return NULL;
  LLVMValueRef odd = LLVMBuildFMul(c->b, tj_cg_bf16_widen(c, v[1]), tj_cg_bf16_widen(c, v[3]), "");
  LLVMValueRef even = LLVMBuildFMul(c->b, tj_cg_bf16_widen(c, v[0]), tj_cg_bf16_widen(c, v[2]), "");
  return LLVMBuildFAdd(c->b, LLVMBuildFAdd(c->b, acc, odd, ""), even, "");
}
